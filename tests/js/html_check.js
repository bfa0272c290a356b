// tests/js/html_check.js PAGE.html SHOT.png: opens memwatch's HTML report in
// headless Chromium (Debian's chromium, driven by playwright-core), records
// console errors, page errors and every request, checks the inline script
// works (hover readout on the timeline, click-to-zoom on the icicle, the
// processes table's "show all"), measures the page in a 1400 px wide window
// (scrollWidth, height), keeps a full-page screenshot (and SHOT-top.png: the
// first screen at 1400 px), and prints what the page shows as JSON for the
// test to compare with the report database.
'use strict';
const { chromium } = require('playwright-core');

(async () => {
  const [page_path, shot] = process.argv.slice(2);
  const exe = process.env.CHROMIUM || '/usr/bin/chromium';
  const browser = await chromium.launch({ executablePath: exe, args: ['--headless', '--no-sandbox',
    '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [], requests = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') errors.push(m.type() + ': ' + m.text()); });
  page.on('pageerror', (e) => errors.push('pageerror: ' + e.message));
  page.on('request', (r) => requests.push(r.url()));
  await page.goto('file://' + page_path, { waitUntil: 'load' });
  const out = await page.evaluate(() => {
    const txt = (sel) => { const e = document.querySelector(sel); return e ? e.textContent.trim() : null; };
    const rows = (sel) => [...document.querySelectorAll(sel + ' tr')].slice(1)
      .map((tr) => [...tr.children].map((td) => td.textContent.trim()));
    const tl = document.querySelector('svg#tl');
    return {
      title: document.title,
      verdict: txt('#verdict'),
      h1: txt('h1'),
      timeline_lanes: window.MW_TL ? window.MW_TL.lanes.map((l) => l.name) : [],
      // per lane: its processes, its box, and the columns' flagged shares (-1: no reading)
      lanes: window.MW_TL ? window.MW_TL.lanes.map((l) => ({ name: l.name, n: l.n, fl: l.fl })) : [],
      tl_geom: window.MW_TL ? { x0: window.MW_TL.x0, pw: window.MW_TL.pw, bins: window.MW_TL.bins } : null,
      // what each lane draws: its class names, and the x ranges of flagged and no-reading shades
      lane_draw: tl ? [...tl.querySelectorAll('g.lane')].map((g) => ({
        classes: [...new Set([...g.querySelectorAll('[class]')].map((e) => e.getAttribute('class')))],
        fl: [...g.querySelectorAll('rect.fl')].map((r) => [+r.getAttribute('x'), +r.getAttribute('x') + +r.getAttribute('width')]),
        nord: [...g.querySelectorAll('rect.nord')].map((r) => [+r.getAttribute('x'), +r.getAttribute('x') + +r.getAttribute('width')]) })) : [],
      legend: [...document.querySelectorAll('#tl-legend span[data-k]')].map((e) => e.dataset.k),
      rank_rows_shown: [...document.querySelectorAll('#rank-table tr')].filter((tr) => tr.getClientRects().length > 0).length - 1,
      timeline_paths: tl ? tl.querySelectorAll('path').length : 0,
      timeline_texts: tl ? [...tl.querySelectorAll('text')].map((t) => t.textContent) : [],
      flagged_lines: rows('#flagged + p + table'),
      overall_lines: rows('#overall + p + table'),
      rank_rows: rows('#rank-table'),
      host_rows: rows('#host-table'),
      region_rows: [...document.querySelectorAll('#region-table tr')].slice(1).map((tr) => ({
        id: +tr.dataset.regionId, time_ns: +tr.dataset.timeNs,
        cells: [...tr.children].map((td) => td.textContent.trim()) })),
      region_cards: [...document.querySelectorAll('div.region')].map((d) => ({
        region: d.dataset.region,
        lines: [...d.querySelectorAll('table.rlines tr')].slice(1).map((tr) => [...tr.children].map((td) => td.textContent.trim())),
        objects: [...d.querySelectorAll('table.robjects tr')].slice(1).map((tr) => [...tr.children].map((td) => td.textContent.trim())),
        kernels: [...d.querySelectorAll('table.rkernels tr')].slice(1).map((tr) => [...tr.children].map((td) => td.textContent.trim())) })),
      region_bands: tl ? [...tl.querySelectorAll('g.rgn')].map((g) => ({
        region: g.dataset.region, tid: +g.dataset.tid, level: +g.dataset.level,
        width: +g.querySelector('rect').getAttribute('width'),
        label: g.querySelector('text') ? g.querySelector('text').textContent : null })) : [],
      brief_note: [...document.querySelectorAll('p.muted')].map((e) => e.textContent).find((t) => t.includes('brief process')) || null,
      region_notes: [...document.querySelectorAll('#region-notes li')].map((li) => li.textContent.trim()),
      gpu_strips: tl ? [...tl.querySelectorAll('g.gpustrip')].map((g) => ({
        device: +g.dataset.device, launches: +g.dataset.launches, flagged: +g.dataset.flagged,
        label: g.querySelector('text').textContent })) : [],
      gpu_devices: rows('#gpu_devices'),
      gpu_ranks: rows('#gpu_ranks'),
      flame_frames: document.querySelectorAll('#flame g.f').length,
      svgs: document.querySelectorAll('svg').length,
      profile_points: document.querySelectorAll('#profile ~ .card circle').length,
      methods: rows('#profile ~ table.methods'),
      sections: [...document.querySelectorAll('h2')].map((h) => h.textContent),
      bytes: document.documentElement.outerHTML.length,
    };
  });
  // hover: the readout names time and latency
  const box = (await page.locator('svg#tl').count()) ? await page.locator('svg#tl').boundingBox() : null;
  if (box) {
    await page.mouse.move(box.x + box.width * 0.4, box.y + 40);
    out.hover = await page.evaluate(() => {
      const t = document.getElementById('tip');
      return t.style.display === 'block' ? t.textContent : null;
    });
  }
  // click the widest frame narrower than the widest (whole stacks share
  // their outer frames, __clone3, start_thread...: those may fill the width
  // already): it fills the width afterwards
  const fr = page.locator('#flame g.f');
  const widths = await fr.evaluateAll((gs) => gs.map((g) => +g.firstChild.getAttribute('width')));
  const full = Math.max(0, ...widths);
  let k = -1;
  widths.forEach((w, i) => { if (w < full - 0.5 && (k < 0 || w > widths[k])) k = i; });
  if (k >= 0) {
    const before = widths[k];
    await fr.nth(k).click();
    out.zoom = { before, after: await fr.nth(k).evaluate((g) => +g.firstChild.getAttribute('width')) };
  }
  if (await page.locator('#flame-reset').count()) await page.click('#flame-reset');
  // "show all" shows every row of the processes table, and hides them again
  if (await page.locator('#procs-all').count()) {
    const vis = () => page.evaluate(() => [...document.querySelectorAll('#rank-table tr')].filter((tr) => tr.getClientRects().length > 0).length - 1);
    await page.click('#procs-all');
    const all = await vis();
    await page.click('#procs-all');
    out.show_all = { all, after: await vis() };
  }
  // in a 1400 px wide window: no horizontal scroll
  await page.setViewportSize({ width: 1400, height: 900 });
  await page.mouse.move(0, 0);
  await page.evaluate(() => window.scrollTo(0, 0));
  Object.assign(out, await page.evaluate(() => ({
    scroll_width_1400: document.documentElement.scrollWidth,
    height_1400: document.documentElement.scrollHeight })));
  await page.screenshot({ path: shot.replace(/\.png$/, '') + '-top.png' });
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.mouse.move(0, 0);
  await page.screenshot({ path: shot, fullPage: true });
  out.errors = errors;
  out.foreign_requests = requests.filter((u) => !u.startsWith('file://') && !u.startsWith('data:'));
  await browser.close();
  console.log(JSON.stringify(out, null, 1));
})().catch((e) => { console.error(e); process.exit(1); });
