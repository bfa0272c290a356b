#!/usr/bin/env bash
# tests/gpu/test_gpu_multi.sh (gpu): memwatch on a node with two GPUs.
# 1. multi_app, one process, streams on device 0 while it computes on
#    device 1, under `memwatch record`: every stream_triad launch (device 0)
#    is flagged bandwidth-bound, no fma_chain launch (device 1); the report
#    has a row per device with its own launches, and the HTML timeline a
#    strip per device.
# 2. Two ranks (nccl_app, one GPU each: rank r drives device r) alternate
#    streaming phases with an NCCL all-reduce; both recorded in one run and
#    merged in one report: each rank's stream_triad launches flagged on its
#    own device, a row per rank and device. The ranks are started by mpirun
#    where it is installed, else by this script with the variables a PMI
#    launcher sets (PMI_RANK, PMI_SIZE). NVLink multicast stays off
#    (NCCL_NVLS_ENABLE=0, docs/gpu.md).
# Skips with fewer than two CUDA devices. MW_MULTI_KEEP=DIR keeps the raw
# files, databases and HTML pages there.
set -u
B=${MW_BUILD_DIR:?MW_BUILD_DIR not set}
out=$("$B/memwatch-gpu" devices 2>&1) || { echo "SKIP: ${out}"; exit 77; }
[ -f "$B/libmemwatch.so" ] || { echo "SKIP: libmemwatch.so not built"; exit 77; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
tmp=${MW_MULTI_KEEP:-$(mktemp -d)}
mkdir -p "$tmp"
[ -n "${MW_MULTI_KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
"$B/multi_app" 0 >"$tmp/probe.txt" 2>&1
if [ $? -eq 77 ]; then
  echo "$(cat "$tmp/probe.txt")"
  exit 77
fi
fail=0

# 1. one process, two devices
"$B/memwatch" record -q -o "$tmp/multi" -- "$B/multi_app" 3 0 1 >"$tmp/multi.out" 2>&1 ||
  { echo "FAILED: multi_app under memwatch"; cat "$tmp/multi.out"; exit 1; }
cat "$tmp/multi.out"
"$B/memwatch" report "$tmp/multi" --db "$tmp/multi.db" --html "$tmp/multi.html" >"$tmp/multi.txt" 2>&1 ||
  { echo "FAILED: memwatch report"; cat "$tmp/multi.txt"; exit 1; }
"$B/memwatch" report "$tmp/multi" --db "$tmp/multi.db" --json >"$tmp/multi.json" 2>/dev/null
sed -n '/^GPU devices/,/^Per rank/p' "$tmp/multi.txt"
python3 - "$tmp/multi.json" "$tmp/multi.html" <<'PY' || fail=1
import json, re, sys
d = json.load(open(sys.argv[1])); html = open(sys.argv[2]).read()
bad = 0
def check(what, ok):
    global bad
    print(("ok: " if ok else "FAILED: ") + what)
    bad |= not ok
dev = {r["device"]: r for r in d.get("gpu_devices", [])}
check("a row per device (%s)" % sorted(dev), sorted(dev) == [0, 1])
k = {(r["device"], r["name"]): r for r in d.get("gpu_kernels", [])}
s = [r for (dv, n), r in k.items() if dv == 0 and "stream_triad" in n]
c = [r for (dv, n), r in k.items() if dv == 1 and "fma_chain" in n]
check("device 0 ran stream_triad only, device 1 fma_chain only (%s)" % sorted(k),
      len(s) == 1 and len(c) == 1 and len(k) == 2)
if s and c:
    s, c = s[0], c[0]
    check("device 0: %d of %d stream_triad launches flagged (all)" % (s["bw_bound"], s["launches"]),
          s["launches"] >= 40 and s["bw_bound"] == s["launches"])
    check("device 1: %d of %d fma_chain launches flagged (none)" % (c["bw_bound"], c["launches"]),
          c["launches"] >= 5 and c["bw_bound"] == 0)
if 0 in dev and 1 in dev:
    check("device rows: device 0 %d/%d flagged, device 1 %d/%d" % (dev[0]["bw_bound"], dev[0]["launches"],
          dev[1]["bw_bound"], dev[1]["launches"]),
          dev[0]["bw_bound"] == dev[0]["launches"] and dev[1]["bw_bound"] == 0)
strips = re.findall(r'class=gpustrip data-device="(\d+)" data-launches="(\d+)" data-flagged="(\d+)"', html)
check("the timeline draws a strip per device (%s)" % strips,
      sorted(int(x[0]) for x in strips) == [0, 1] and
      all(int(f) == (int(n) if x == "0" else 0) for x, n, f in strips))
sys.exit(bad)
PY

# 2. two ranks, one GPU each, NCCL all-reduce between streaming phases
if [ ! -x "$B/nccl_app" ]; then
  echo "note: nccl_app not built (no NCCL where memwatch was built): the two-rank job is not run"
else
  rm -f "$tmp/nccl.id"
  if command -v mpirun >/dev/null 2>&1; then
    launch=(mpirun --allow-run-as-root --oversubscribe -np 2 -x NCCL_NVLS_ENABLE "$B/nccl_app" "$tmp/nccl.id" 3 0.5)
  else
    launch=(bash -c 'PMI_SIZE=2 PMI_RANK=0 "$0" "$1" 3 0.5 & PMI_SIZE=2 PMI_RANK=1 "$0" "$1" 3 0.5; r1=$?; wait $!; r0=$?; exit $((r0 | r1))' "$B/nccl_app" "$tmp/nccl.id")
    echo "(no mpirun here: the two ranks are started with PMI_RANK and PMI_SIZE set)"
  fi
  "$B/memwatch" record -q -o "$tmp/nccl" -- "${launch[@]}" >"$tmp/nccl.out" 2>&1 ||
    { echo "FAILED: the two-rank job under memwatch"; cat "$tmp/nccl.out"; exit 1; }
  grep '^rank=' "$tmp/nccl.out"
  "$B/memwatch" report "$tmp/nccl" --db "$tmp/nccl.db" --html "$tmp/nccl.html" >"$tmp/nccl.txt" 2>&1 ||
    { echo "FAILED: memwatch report of the job"; cat "$tmp/nccl.txt"; exit 1; }
  "$B/memwatch" report "$tmp/nccl" --db "$tmp/nccl.db" --json >"$tmp/nccl.json" 2>/dev/null
  sed -n '/^GPU devices/,/^GPU kernels/p' "$tmp/nccl.txt"
  python3 - "$tmp/nccl.json" "$tmp/nccl.out" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1])); out = open(sys.argv[2]).read()
bad = 0
def check(what, ok):
    global bad
    print(("ok: " if ok else "FAILED: ") + what)
    bad |= not ok
check("both ranks' all-reduces gave the right sums", out.count("allreduce_ok=1") == 2)
ranks = sorted(p.get("rank") for p in d["job"]["processes"] if p.get("rank") is not None)
check("the merged report has both ranks (%s)" % ranks, ranks == [0, 1])
rows = {(r.get("rank"), r["device"]): r for r in d.get("gpu_ranks", [])}
check("a row per rank and device: rank 0 on device 0, rank 1 on device 1 (%s)" % sorted(rows),
      sorted(rows) == [(0, 0), (1, 1)])
for dev in (0, 1):
    st = [r for r in d.get("gpu_kernels", []) if r["device"] == dev and "stream_triad" in r["name"]]
    if not st:
        check("rank %d: stream_triad on device %d" % (dev, dev), False)
        continue
    s = st[0]
    check("rank %d, device %d: %d of %d stream_triad launches flagged (all)" % (dev, dev, s["bw_bound"], s["launches"]),
          s["launches"] >= 20 and s["bw_bound"] == s["launches"])
nccl = [r for r in d.get("gpu_kernels", []) if "ncclDevKernel" in r["name"] or "nccl" in r["name"].lower()]
print("NCCL kernels: " + "; ".join("device %d %s: %d launches, %d flagged" % (r["device"], r["name"][:40], r["launches"], r["bw_bound"]) for r in nccl))
sys.exit(bad)
PY
fi
[ $fail -eq 0 ] && echo "test_gpu_multi: passed"
exit $fail
