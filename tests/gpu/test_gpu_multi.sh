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
S=$(cd "$(dirname "$0")" && pwd)
out=$("$B/memwatch-gpu" devices 2>&1) || { echo "SKIP: ${out}"; exit 77; }
[ -f "$B/libmemwatch.so" ] || { echo "SKIP: libmemwatch.so not built"; exit 77; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
tmp=${MW_MULTI_KEEP:-$(mktemp -d)}
mkdir -p "$tmp"
[ -n "${MW_MULTI_KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
"$B/multi_app" 0 >"$tmp/probe.txt" 2>&1
if [ $? -eq 77 ]; then
  cat "$tmp/probe.txt"
  exit 77
fi
fail=0
# record_report NAME CMD...: CMD under memwatch record into $tmp/NAME, then
# its report as text (NAME.txt), HTML (NAME.html) and JSON (NAME.json)
record_report() {
  local name=$1
  shift
  "$B/memwatch" record -q -o "$tmp/$name" -- "$@" >"$tmp/$name.out" 2>&1 ||
    { echo "FAILED: $name under memwatch"; cat "$tmp/$name.out"; exit 1; }
  "$B/memwatch" report "$tmp/$name" --db "$tmp/$name.db" --html "$tmp/$name.html" >"$tmp/$name.txt" 2>&1 ||
    { echo "FAILED: memwatch report of $name"; cat "$tmp/$name.txt"; exit 1; }
  "$B/memwatch" report "$tmp/$name" --db "$tmp/$name.db" --json >"$tmp/$name.json" 2>/dev/null
  sed -n '/^GPU devices/,/^GPU kernels/p' "$tmp/$name.txt"
}

# 1. one process, two devices
record_report multi "$B/multi_app" 3 0 1
cat "$tmp/multi.out"
python3 "$S/multi_check.py" multi "$tmp/multi.json" "$tmp/multi.html" || fail=1

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
  record_report nccl "${launch[@]}"
  grep '^rank=' "$tmp/nccl.out"
  python3 "$S/multi_check.py" nccl "$tmp/nccl.json" "$tmp/nccl.out" || fail=1
fi
[ $fail -eq 0 ] && echo "test_gpu_multi: passed"
exit $fail
