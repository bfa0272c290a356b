// tests/names/jsloop.js: a JavaScript array loop (sumArray) for the perf map
// test: node --perf-basic-prof writes /tmp/perf-PID.map naming it.
function sumArray(a) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * 1.000001;
  return s;
}
const secs = Number(process.argv[2] || 1);
const a = new Float64Array(1 << 20).fill(1);
const end = Date.now() + 1000 * secs;
let t = 0;
while (Date.now() < end) t += sumArray(a);
console.log(t > 0 ? "done" : "?");
