#!/usr/bin/env bash
# tests/gpu/test_gpu_launches.sh (gpu): launch_app (streaming kernels of about
# 0.1, 1 and 10 ms per launch, back to back, with idle gaps and between
# compute launches; a compute-bound kernel) runs with libmemwatch_cuda.so
# injected. At least 98 % of each streaming kernel's launches must be flagged,
# no compute launch, and the DRAM bytes of at least 98 % of the streaming
# launches must lie within 3 % of the known volume. Prints the table
# (tests/gpu/launch_table.py). Skips without a GPU.
# Environment: LAUNCH_APP_ARGS (device, repeat factor), and any MEMWATCH_GPU_*.
set -u
B=${MW_BUILD_DIR:?MW_BUILD_DIR not set}
S=$(cd "$(dirname "$0")" && pwd)
out=$("$B/memwatch-gpu" devices 2>&1)
if [ $? -ne 0 ]; then
  echo "SKIP: ${out}"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
app=$B/tests-gpu/launch_app
[ -x "$app" ] || app=$B/launch_app
MEMWATCH_GPU_OUT=$tmp/l.mwr CUDA_INJECTION64_PATH=$B/libmemwatch_cuda.so \
  "$app" ${LAUNCH_APP_ARGS:-} > "$tmp/app.txt" || { echo "FAILED: launch_app did not run"; exit 1; }
dump=$B/tests-gpu/mwr_gpu_dump
[ -x "$dump" ] || dump=$B/mwr_gpu_dump
"$dump" "$tmp/l.mwr" > "$tmp/dump.txt"
grep -E '^meta gpu\.(threshold_bw|threshold_source|sampling|summary|device_summary)' "$tmp/dump.txt" | sort -u
python3 "$S/launch_table.py" "$tmp/dump.txt" "$tmp/app.txt" | tee "$tmp/table.txt"
fail=0
while read -r name dev n f nov known med lo hi in3 _; do
  [ "$name" = kernel ] && continue
  case $name in
  stream_dot_*)
    if [ $((f * 100)) -lt $((n * 98)) ]; then echo "FAILED: $name: $f of $n launches flagged (< 98 %)"; fail=1; fi
    if awk -v p="${in3%\%}" 'BEGIN { exit !(p < 98) }'; then echo "FAILED: $name: bytes within 3 % for only $in3 of launches"; fail=1; fi ;;
  compute_fma*)
    if [ "$f" -ne 0 ]; then echo "FAILED: $name: $f compute launches flagged"; fail=1; fi ;;
  esac
done < "$tmp/table.txt"
grep -q '^stream_dot_10ms' "$tmp/table.txt" || { echo "FAILED: no stream_dot_10ms launches recorded"; fail=1; }
[ $fail -eq 0 ] && echo "test_gpu_launches: passed"
exit $fail
