#!/usr/bin/env bash
# tests/gpu/test_gpu_nvtx.sh (gpu): nvtx_app (NVTX ranges "stream" around a
# streaming kernel and "compute" around a compute kernel, unaware of memwatch)
# under `memwatch record`: both ranges are regions of the report (gpu/nvtx.c),
# each with its own kernel; the streaming kernel's launches are flagged
# bandwidth-bound (over a quarter of them: 43 % on the H200 without a GPU
# profile), the compute kernel's under a tenth (none on the H200). Skips
# without a GPU.
set -u
B=${MW_BUILD_DIR:?MW_BUILD_DIR not set}
out=$("$B/memwatch-gpu" devices 2>&1) || { echo "SKIP: ${out}"; exit 77; }
[ -f "$B/libmemwatch.so" ] || { echo "SKIP: libmemwatch.so not built"; exit 77; }
app=${NVTX_APP:-$B/nvtx_app}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$B/memwatch" record -q -o "$tmp/raw" -- "$app" 0.5 2 || { echo "FAILED: nvtx_app under memwatch"; exit 1; }
"$B/memwatch" report "$tmp/raw" --db "$tmp/db" >"$tmp/sum.txt" 2>&1
"$B/memwatch" report "$tmp/raw" --db "$tmp/db2" --json >"$tmp/sum.json" 2>/dev/null ||
    { echo "FAILED: memwatch report"; cat "$tmp/sum.txt"; exit 1; }
sed -n '/^Regions/,$p' "$tmp/sum.txt"
python3 - "$tmp/sum.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
regs = {r["region"]: r for r in d.get("regions", [])}
bad = 0
def check(what, ok):
    global bad
    print(("ok: " if ok else "FAILED: ") + what)
    bad |= not ok
check("NVTX ranges stream and compute are regions (%s)" % sorted(regs),
      "stream" in regs and "compute" in regs)
for name, kern, bound in (("stream", "stream_kernel", True), ("compute", "compute_kernel", False)):
    ks = regs.get(name, {}).get("gpu_kernels", [])
    names = [k["name"] for k in ks]
    check("%s: its kernel is %s (%s)" % (name, kern, names), len(ks) >= 1 and kern in ks[0]["name"])
    if ks:
        k = ks[0]
        share = k.get("bw_bound", 0) / max(k["launches"], 1)
        check("%s: %d of %d launches bandwidth-bound (%s)" % (name, k.get("bw_bound", 0), k["launches"],
              "over a quarter" if bound else "under a tenth"), share > 0.25 if bound else share < 0.1)
sys.exit(bad)
PY
