// tests/js/pprof_decode.js FILE: decodes a gzipped profile.proto with the
// independent pprof-format package and prints what the tests compare, as JSON:
// sample types, the total of each, the top leaf line of each, labels seen and
// the samples of each label's value.
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const { Profile } = require('pprof-format');

const buf = zlib.gunzipSync(fs.readFileSync(process.argv[2]));
const p = Profile.decode(buf);
const str = (i) => p.stringTable.strings[Number(i)];
const types = p.sampleType.map((t) => ({ type: str(t.type), unit: str(t.unit) }));
const locs = new Map(p.location.map((l) => [String(l.id), l]));
const funcs = new Map(p.function.map((f) => [String(f.id), f]));
const totals = types.map(() => 0);
const leaf = types.map(() => new Map());
const labels = {};
const labelTotals = {}; // "key=value": the first sample type's total of the samples with that label
let maxDepth = 0;
for (const s of p.sample) {
  if (s.locationId.length > maxDepth) maxDepth = s.locationId.length;
  const l = locs.get(String(s.locationId[0]));
  if (!l) throw new Error('sample names location ' + s.locationId[0] + ' that is not in the profile');
  const line = l.line[0];
  const f = line ? funcs.get(String(line.functionId)) : undefined;
  if (line && !f) throw new Error('location ' + l.id + ' names a missing function');
  const key = f ? `${str(f.filename).split('/').pop()}:${Number(line.line)} ${str(f.name)}` : '?';
  s.value.forEach((v, i) => {
    totals[i] += Number(v);
    leaf[i].set(key, (leaf[i].get(key) || 0) + Number(v));
  });
  for (const lb of s.label) {
    const k = str(lb.key);
    const v = Number(lb.str) ? str(lb.str) : Number(lb.num);
    (labels[k] = labels[k] || new Set()).add(v);
    labelTotals[k + '=' + v] = (labelTotals[k + '=' + v] || 0) + Number(s.value[0]);
  }
}
const top = leaf.map((m) => [...m.entries()].sort((a, b) => b[1] - a[1])[0] || null);
console.log(JSON.stringify({
  sample_types: types,
  default_sample_type: str(p.defaultSampleType),
  samples: p.sample.length,
  locations: p.location.length,
  functions: p.function.length,
  mappings: p.mapping.map((m) => str(m.filename)),
  totals,
  top,
  max_depth: maxDepth,
  label_totals: labelTotals,
  labels: Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, [...v].sort()])),
}, null, 1));
