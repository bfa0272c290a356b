#!/usr/bin/env bash
# tests/export/test_html.sh: the HTML report in headless Chromium (Debian's
# chromium driven by npm playwright-core, tests/js/html_check.js), for
#  - a real recorded run: bwdemo (a bandwidth phase and a compute phase) under
#    memwatch record, with a threshold low enough that intervals get flagged
#    on any machine;
#  - a job of three processes on two hosts (mwr_fixture's file with its META
#    rewritten);
#  - tests/region/phases (three marked regions on two threads) and "phases
#    bad" (thousands of region names, notes about bad region input).
# The page must load without console errors or requests outside the file,
# fit a 1400 px window, list in its legend only what the timeline draws, and
# its timeline must have the whole-run lane first, then a lane per rank or
# command; its verdict, tables and per-rank/per-host rows (in any order: the
# most flagged first) must carry the numbers of the report's JSON summary,
# as must the region table (every region, its time, threads, spans, calls,
# bound share, samples) and each region's top line, object and kernels; the
# timeline's region bands must name only the run's regions, a band row per
# thread with regions (and for the phases run every region, named on its band);
# the hover readout and the icicle's zoom must work. The screenshots are kept
# in $MW_BUILD_DIR/test-artifacts/.
set -u
[ -n "${MW_SAN_PRELOAD:-}" ] && export LD_PRELOAD=$MW_SAN_PRELOAD
B=${MW_BUILD_DIR:?}
S=${MW_SOURCE_DIR:?}
mw=$B/memwatch
JS=$S/tests/js
command -v node >/dev/null || { echo "SKIP: node is not installed (bash .ci/install-deps)"; exit 77; }
[ -d "$JS/node_modules/playwright-core" ] || { echo "SKIP: tests/js/node_modules missing (bash .ci/install-deps)"; exit 77; }
CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
[ -x "$CHROMIUM" ] || { echo "SKIP: Debian's chromium is not installed (bash .ci/install-deps)"; exit 77; }
export CHROMIUM
[ -x "$B/mwr_fixture" ] || { echo "SKIP: mwr_fixture not built"; exit 77; }
tmp=$(mktemp -d /tmp/mw_html.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
art=$B/test-artifacts
mkdir -p "$art"
fail=0
check() { if [ "$2" = 1 ]; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }

# check_page NAME DIR: report --html, browse, compare with the JSON summary
check_page() {
  local name=$1 dir=$2
  "$mw" report "$dir" --db "$tmp/$name.db" --json --html "$tmp/$name.html" >"$tmp/$name.json" 2>"$tmp/$name.err" ||
    { echo "FAILED: $name: memwatch report --html"; cat "$tmp/$name.err"; fail=1; return; }
  timeout 180 node "$JS/html_check.js" "$tmp/$name.html" "$art/html_$name.png" >"$tmp/$name.page.json" 2>"$tmp/$name.node.err" ||
    { echo "FAILED: $name: headless chromium"; cat "$tmp/$name.node.err"; fail=1; return; }
  python3 - "$tmp/$name.json" "$tmp/$name.page.json" "$name" "$tmp/$name.db" <<'PY' || fail=1
import json, sqlite3, sys
s = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2])); name = sys.argv[3]
db = sqlite3.connect(sys.argv[4])
bad = 0
def check(what, ok, detail=""):
    global bad
    print(("ok: " if ok else "FAILED: ") + name + ": " + what + (" (" + detail + ")" if detail else ""))
    bad |= not ok
def loc(l):
    return "%s:%d" % (l["file"].split("/")[-1], l["line"]) if l.get("file") else "(no line info)"
check("no console error or page error", p["errors"] == [], "; ".join(p["errors"]))
check("nothing requested outside the file", p["foreign_requests"] == [], " ".join(p["foreign_requests"]))
share = "%.1f%%" % (100 * s["bandwidth"]["share"])
check("verdict carries the bound share " + share, share in (p["verdict"] or ""), p["verdict"] or "")
check("verdict counts the flagged intervals",
      "%d of %d intervals" % (s["bandwidth"]["flagged_intervals"], s["bandwidth"]["measured_intervals"]) in p["verdict"])
# the whole run first, then (several processes) a lane per MPI rank or command,
# every process in one of them
lanes = p["lanes"]
nproc = len(s["job"]["processes"])
has_iv = db.execute("SELECT COUNT(*) FROM intervals").fetchone()[0] > 0
if has_iv:
    check("the first lane is the whole run, of every process", bool(lanes) and lanes[0]["name"].startswith("whole run")
          and lanes[0]["n"] == nproc, lanes[0]["name"] if lanes else "no lane")
    check("a lane per rank or command after it, every process in one" if nproc > 1 else "one lane",
          (len(lanes) == 1) if nproc == 1 else (2 <= len(lanes) <= 13 and sum(l["n"] for l in lanes[1:]) == nproc),
          str([(l["name"], l["n"]) for l in lanes]))
    ranks = sorted({r["rank"] for r in s["job"]["processes"] if "rank" in r})
    if nproc > 1 and 0 < len(ranks) <= 12:
        check("one lane per rank, named", all(sum(l["name"].startswith("rank %d @" % r) for l in lanes) == 1 for r in ranks),
              str(p["timeline_lanes"]))
all_drawn = nproc == 1 or all(l["n"] == 1 for l in lanes[1:])
# a latency line and a threshold line wherever an interval has a latency reading
has_rd = db.execute("SELECT COUNT(*) FROM intervals WHERE flags & 2 AND latency_ns IS NOT NULL"
                    " AND threshold_ns > 0").fetchone()[0] > 0
check("the timeline draws latency and threshold" if has_rd else "no interval with a reading: no latency line",
      p["timeline_paths"] >= 2 and all(c in p["lane_draw"][0]["classes"] for c in ("lat", "thr")) if has_rd
      else not any("lat" in d["classes"] for d in p["lane_draw"]), str(p["timeline_paths"]))
check("no horizontal scroll in a 1400 px window", p["scroll_width_1400"] <= 1400, "scrollWidth %d" % p["scroll_width_1400"])
cls = {"fl": "fl", "lat": "lat", "thr": "thr", "bw": "bw", "gpu": "gpustrip", "nord": "nord", "none": "none", "rgn": "rgn",
       "lvl": "lvl", "band": "inband"}
drawn = {k for k, c in cls.items() if any(c in d["classes"] for d in p["lane_draw"])}
check("the legend lists what the timeline draws and nothing else", set(p["legend"]) == drawn,
      "legend %s, drawn %s" % (sorted(p["legend"]), sorted(drawn)))
check("title is the root command", p["title"].startswith("memwatch: ") and p["h1"] == p["title"], p["title"])
for key, rows in (("flagged", p["flagged_lines"]), ("overall", p["overall_lines"])):
    want = s[key]["lines"]
    if want:
        check("top %s line %s" % (key, loc(want[0])), bool(rows) and rows[0][2] == loc(want[0]),
              rows[0][2] if rows else "none")
        check("its share", bool(rows) and rows[0][0] == "%.1f%%" % (100 * want[0]["samples"] / s[key]["samples"]))
job = s["job"]["processes"]
if len(job) > 1:
    # every process has its row (the most flagged time first, then flagged samples, time)
    check("one rank row per process", len(p["rank_rows"]) == len(job))
    left = list(p["rank_rows"])
    for r in job:
        want = ["%s" % (r["rank"] if "rank" in r else "-"), "%d" % r["pid"], "%.1f%%" % (100 * r["share"]), "%d" % r["samples"]]
        row = next((x for x in left if [x[0], x[2], x[5], x[6]] == want), None)
        check("rank %s pid %d row: share and samples" % (r.get("rank"), r["pid"]), row is not None, " ".join(want))
        if row:
            left.remove(row)
    keys, used = [], set()
    for x in p["rank_rows"]:
        i = next((i for i, r in enumerate(job) if i not in used and [x[0], x[2], x[5], x[6]] ==
                  ["%s" % (r["rank"] if "rank" in r else "-"), "%d" % r["pid"], "%.1f%%" % (100 * r["share"]), "%d" % r["samples"]]), None)
        if i is not None:
            used.add(i)
            keys.append((-job[i]["flagged_ns"], -job[i].get("in_flagged", 0), -job[i]["time_ns"]))
    check("rank rows: the most flagged time first, then flagged samples, time", keys == sorted(keys), str(keys[:6]))
    if len(s["job"]["hosts"]) > 1:
        check("one host row per host", len(p["host_rows"]) == len(s["job"]["hosts"]))
if p["timeline_lanes"]:
    check("hover readout names time and latency", bool(p.get("hover")) and "latency" in p["hover"], repr(p.get("hover")))
else:  # no interval recorded: no lane
    check("no lane drawn, and no interval recorded", not has_iv)
z = p.get("zoom")  # none when every frame fills the width (one stack)
if p["flame_frames"] > 1 and (z or name == "bwdemo"):
    check("clicking a frame zooms it to the full width", bool(z) and z["after"] > z["before"] and abs(z["after"] - 1100) < 1, str(z or "no frame narrower than the root"))
# GPU: a strip per process and device in the timeline, whose launches and
# flagged launches add up to the device rows of the summary; a device row and
# a rank-and-device row per pair
gd = s.get("gpu_devices", [])
if gd:
    strips = p["gpu_strips"]
    for d in gd:
        mine = [g for g in strips if g["device"] == d["device"]]
        check("device %d: its strips add up to its launches and flagged ones (%d, %d)" % (d["device"], d["launches"], d["bw_bound"]),
              sum(g["launches"] for g in mine) == d["launches"] and sum(g["flagged"] for g in mine) == d["bw_bound"]
              and all(g["label"] == "GPU %d" % d["device"] for g in mine),
              str(mine))
    check("one device row per host and device", len(p["gpu_devices"]) == len(gd), str(p["gpu_devices"]))
    for d, row in zip(gd, p["gpu_devices"]):
        check("device %d row: launches and flagged" % d["device"],
              row[1] == "%d" % d["device"] and row[4] == "%d" % d["launches"] and row[5] == "%d" % d["bw_bound"], " ".join(row))
    gr = s.get("gpu_ranks", [])
    if len(gr) > 1:
        check("one row per rank and device", len(p["gpu_ranks"]) == len(gr), str(p["gpu_ranks"]))
        for r, row in zip(gr, p["gpu_ranks"]):
            check("rank %s device %d row" % (r.get("rank"), r["device"]),
                  row[3] == "%d" % r["device"] and row[4] == "%d" % r["launches"] and row[5] == "%d" % r["bw_bound"], " ".join(row))
# regions: the page's table, cards, notes and timeline bands against the JSON summary
regs = s.get("regions", [])
check("one region row per region of the summary", len(p["region_rows"]) == len(regs),
      "%d rows, %d regions" % (len(p["region_rows"]), len(regs)))
for r, row in zip(regs, p["region_rows"]):
    c = row["cells"]
    bound = "%.1f%%" % (100 * r["bound_share"]) if "bound_share" in r else "-"
    want = [r["region"], "%d" % r["threads"], "%d" % r["spans"], "%d" % r["calls"], bound, "%d" % r["samples"]]
    got = [c[0], c[2], c[3], c[4], c[5], c[6]]
    check("region %.40s: time, threads, spans, calls, bound, samples" % r["region"],
          row["id"] == r["id"] and row["time_ns"] == r["time_ns"] and got == want,
          "page %s %s, summary %s %s" % (row["time_ns"], got, r["time_ns"], want))
cards = {c["region"]: c for c in p["region_cards"]}
for r in regs:
    if not (r["lines"] or r["objects"] or r["gpu_kernels"]):
        continue
    c = cards.get(r["region"])
    check("region %.40s has its card" % r["region"], c is not None)
    if not c:
        continue
    if r["lines"]:
        l = r["lines"][0]
        want = ["%.1f%%" % (100 * l["samples"] / r["samples"]), "%d" % l["samples"], loc(l), l["function"]]
        check("region %.40s: top line %s" % (r["region"], loc(l)), c["lines"] and c["lines"][0] == want,
              "page %s, summary %s" % (c["lines"][:1], want))
    if r["objects"]:
        o = r["objects"][0]
        check("region %.40s: top object %s" % (r["region"], o["name"]),
              c["objects"] and c["objects"][0][:3] == ["%d" % o["samples"], o["kind"], o["name"]], str(c["objects"][:1]))
    check("region %.40s: its GPU kernels" % r["region"],
          [k[:2] for k in c["kernels"]] == [[k["name"], "%d" % k["launches"]] for k in r["gpu_kernels"][:8]])
check("every region note listed", len(p["region_notes"]) == len(s.get("region_notes", [])),
      "%d on the page, %d in the summary" % (len(p["region_notes"]), len(s.get("region_notes", []))))
spans = db.execute("SELECT r.name, sp.tid FROM region_spans sp JOIN regions r ON r.id = sp.region_id"
                   " WHERE sp.depth < 3").fetchall() if regs else []
band_names = {b["region"] for b in p["region_bands"]}
check("the timeline's bands name regions of the run", band_names <= {n for n, _ in spans}, str(sorted(band_names))[:200])
tids = {t for _, t in spans}
if 0 < len(tids) <= 16 and all_drawn:
    check("a band row per thread with regions", {b["tid"] for b in p["region_bands"]} == tids,
          "bands %s, spans %s" % (sorted({b["tid"] for b in p["region_bands"]}), sorted(tids)))
if name == "regions":
    check("every region drawn on the timeline", band_names == {r["region"] for r in regs}, str(sorted(band_names)))
    for r in regs:
        wide = [b for b in p["region_bands"] if b["region"] == r["region"] and b["width"] > 60]
        check("region %s: named on its band" % r["region"], any(b["label"] == r["region"] for b in wide))
check("page under 5 MB", p["bytes"] < 5e6, "%d bytes" % p["bytes"])
sys.exit(bad)
PY
  [ -s "$art/html_$name.png" ]; check "$name: screenshot kept ($art/html_$name.png)" $(( $? == 0 ))
}

# a machine profile where the report looks for one (the recording named
# none): its probe curve, threshold and verdicts are drawn
export XDG_DATA_HOME=$tmp/xdg
mkdir -p "$XDG_DATA_HOME/memwatch"
python3 - "$XDG_DATA_HOME/memwatch/profile.json" <<'PY'
import json, sys
pts = [{"threads": t, "delay": d, "bw": bw * 1e9, "direct_ns": 0, "ns": [ns - 3, ns, ns + 4]}
       for t, d, bw, ns in [(1, 4096, 2, 110), (2, 1024, 8, 118), (4, 256, 16, 135), (8, 64, 24, 170), (8, 0, 28, 240)]]
json.dump({"schema": "memwatch-profile", "version": 1, "identity": "test", "peak_bw": 30e9,
           "idle_latency_ns": 108, "lat_method": "probe_lat", "lat_threshold_ns": 160, "bw_method": "",
           "bw_factor": 1, "evidence": {"probe_lat": {"points": pts}},
           "methods": [{"name": "probe_lat", "verdict": "accurate", "reason": "separates idle from saturated",
                        "quantity": "latency", "available": True},
                       {"name": "imc_cas", "verdict": "unavailable", "reason": "no IMC PMU",
                        "quantity": "dram_bytes", "available": False}]}, open(sys.argv[1], "w"))
PY

# a job: three processes, two hosts
mkdir -p "$tmp/job"
"$B/mwr_fixture" "$tmp/job/r0.mwr" || { echo "FAILED: fixture"; exit 1; }
LC_ALL=C sed 's/pid=77/pid=78/; s/rank=0/rank=1/' "$tmp/job/r0.mwr" >"$tmp/job/r1.mwr"
LC_ALL=C sed 's/pid=77/pid=79/; s/rank=0/rank=2/; s/host=fixture/host=fixturB/' "$tmp/job/r0.mwr" >"$tmp/job/r2.mwr"
check_page job "$tmp/job"
J() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
check "job: the profile's 5 grid points drawn" $([ "$(J "$tmp/job.page.json" 'd["profile_points"]')" = 5 ] && echo 1 || echo 0)
check "job: the method verdicts listed" $([ "$(J "$tmp/job.page.json" '[r[2] for r in d["methods"]]')" = "['accurate', 'unavailable']" ] && echo 1 || echo 0)
unset XDG_DATA_HOME

# two ranks, each driving two GPUs: a streaming kernel on device 0 (every
# launch flagged), a compute kernel on device 1 (none)
mkdir -p "$tmp/gpu"
"$B/mwr_fixture" "$tmp/gpu/r0.mwr" gpu || { echo "FAILED: fixture gpu"; exit 1; }
LC_ALL=C sed 's/pid=77/pid=78/; s/rank=0/rank=1/' "$tmp/gpu/r0.mwr" >"$tmp/gpu/r1.mwr"
check_page gpu "$tmp/gpu"
check "gpu: two strips per lane, GPU 0 all flagged, GPU 1 none" \
  $([ "$(J "$tmp/gpu.page.json" '[(g["device"], g["launches"], g["flagged"]) for g in d["gpu_strips"]]')" = \
      "[(0, 8, 8), (1, 8, 0), (0, 8, 8), (1, 8, 0)]" ] && echo 1 || echo 0)

# memwatch calibrate --html: a calibration on its own (two quick benchmarks)
"$mw" calibrate --bench mlp,ladder --quick --mlp-chains 8 --ladder-max 8M --no-json --no-validate \
  --html "$tmp/cal.html" >"$tmp/cal.out" 2>&1
check "calibrate --html" $(( $? == 0 )) || tail -5 "$tmp/cal.out"
timeout 180 node "$JS/html_check.js" "$tmp/cal.html" "$art/html_calibrate.png" >"$tmp/cal.page.json" 2>"$tmp/cal.err"
check "calibration page loads" $(( $? == 0 )) || cat "$tmp/cal.err"
check "  without console errors, both plots inline" \
  $([ "$(J "$tmp/cal.page.json" 'd["errors"] == [] and d["svgs"] == 2')" = True ] && echo 1 || echo 0)

# a real two-phase run
if [ -f "$B/libmemwatch.so" ] && [ -x "$B/bwdemo" ] && [ -z "${MW_SAN_PRELOAD:-}" ]; then
  "$mw" record -q -o "$tmp/bw" --threshold-ns 1 -- "$B/bwdemo" 0.4 2 32 2 >"$tmp/bw.out" 2>&1 ||
    { echo "FAILED: memwatch record bwdemo"; cat "$tmp/bw.out"; fail=1; }
  check_page bwdemo "$tmp/bw"
else
  echo "note: libmemwatch.so or bwdemo not built (or a sanitized build): the recorded-run page is not checked"
fi
# a run with regions (tests/region/phases: triad, compute, chase on two
# threads) and one with bad region input (thousands of names, notes)
P=$B/tests/region/phases
[ -x "$P" ] || P=$(find "$B" -name phases -type f -perm -u+x | head -1)
if [ -f "$B/libmemwatch.so" ] && [ -n "$P" ] && [ -z "${MW_SAN_PRELOAD:-}" ]; then
  "$mw" record -q -o "$tmp/rg" -- "$P" 2 1 8 150 >"$tmp/rg.out" 2>&1 ||
    { echo "FAILED: memwatch record phases"; cat "$tmp/rg.out"; fail=1; }
  check_page regions "$tmp/rg"
  "$mw" record -q -o "$tmp/rgbad" -- "$P" bad >"$tmp/rgbad.out" 2>&1 ||
    { echo "FAILED: memwatch record phases bad"; cat "$tmp/rgbad.out"; fail=1; }
  check_page regions_bad "$tmp/rgbad"
  check "regions_bad: the region notes are on the page" \
    $([ "$(J "$tmp/regions_bad.page.json" 'len(d["region_notes"]) >= 5')" = True ] && echo 1 || echo 0)
else
  echo "note: libmemwatch.so or tests/region/phases not built (or a sanitized build): the region pages are not checked"
fi
exit $fail
