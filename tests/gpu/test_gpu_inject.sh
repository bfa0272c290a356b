#!/usr/bin/env bash
# tests/gpu/test_gpu_inject.sh (gpu): two CUDA programs that know nothing of
# memwatch run with libmemwatch_cuda.so injected (through LD_PRELOAD of
# libmemwatch.so when it is built, else CUDA_INJECTION64_PATH directly). The
# bandwidth-bound one's kernels must all be flagged, the compute-bound one's
# none. Uses the GPU profile when one exists (memwatch calibrate --gpu), else
# the uncalibrated default, and says which. Skips without a GPU.
set -u
B=${MW_BUILD_DIR:?MW_BUILD_DIR not set}
out=$("$B/memwatch-gpu" devices 2>&1)
if [ $? -ne 0 ]; then
  echo "SKIP: ${out}"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
run() { # name app args...
  local name=$1; shift
  local f=$tmp/$name.mwr
  if [ -f "$B/libmemwatch.so" ] && [ -z "${MW_GPU_TEST_DIRECT:-}" ]; then
    # The real path: libmemwatch.so sets CUDA_INJECTION64_PATH itself and its
    # raw file (in MEMWATCH_DIR) holds our records.
    mkdir -p "$tmp/$name"
    env -u CUDA_INJECTION64_PATH MEMWATCH_DIR="$tmp/$name" LD_PRELOAD="${MW_SAN_PRELOAD:+$MW_SAN_PRELOAD:}$B/libmemwatch.so" "$@" || return 1
    f=$(ls -t "$tmp/$name"/*.mwr 2>/dev/null | head -1)
    echo "(through LD_PRELOAD=libmemwatch.so)" >&2
  else
    MEMWATCH_GPU_OUT=$f CUDA_INJECTION64_PATH=$B/libmemwatch_cuda.so "$@" || return 1
    echo "(through CUDA_INJECTION64_PATH: libmemwatch.so not built here)" >&2
  fi
  echo "$f"
}
bw_out=$(run bw "$B/bw_app" 60) || { echo "FAILED: bw_app did not run"; exit 1; }
bw_file=$(echo "$bw_out" | tail -1)
echo "$bw_out" | head -n -1
"$B/mwr_gpu_dump" "$bw_file" stream_triad > "$tmp/bw.txt"
grep -E '^meta gpu\.(threshold|sampling)' "$tmp/bw.txt" | sort -u
head -3 "$tmp/bw.txt" | grep '^kernel' ; tail -1 "$tmp/bw.txt"
eval "$(tail -1 "$tmp/bw.txt" | tr ' ' '\n' | sed 's/^/bw_/')"
if [ "${bw_kernels:-0}" -lt 60 ]; then echo "FAILED: bw_app: $bw_kernels kernel records, expected >= 60"; fail=1; fi
if [ "${bw_flagged:-0}" -ne "${bw_kernels:-x}" ]; then echo "FAILED: bw_app: only $bw_flagged of $bw_kernels kernels flagged"; fail=1; fi
# Source lines of the flagged kernel (PC sampling + SASS-to-source, -lineinfo),
# when PC sampling was asked for (MEMWATCH_GPU_PC=1).
if ! grep -q '^meta gpu.pc_sampling=' "$tmp/bw.txt"; then
  echo "note: PC sampling not asked for (MEMWATCH_GPU_PC=1 turns it on)"
elif grep -q '^meta gpu.pc_sampling=unavailable' "$tmp/bw.txt"; then
  echo "note: PC sampling unavailable: $(grep -m1 '^meta gpu.pc_sampling=' "$tmp/bw.txt")"
else
  grep '^pc ' "$tmp/bw.txt" | sort -t= -k2 -n -r | head -3
  if ! grep -q '^pc .*bw_app.cu:[0-9]' "$tmp/bw.txt"; then
    echo "FAILED: bw_app: no source line of bw_app.cu named for the flagged kernel"; fail=1
  fi
fi

c_out=$(run compute "$B/compute_app" 40) || { echo "FAILED: compute_app did not run"; exit 1; }
c_file=$(echo "$c_out" | tail -1)
echo "$c_out" | head -n -1
"$B/mwr_gpu_dump" "$c_file" fma_chain > "$tmp/c.txt"
head -3 "$tmp/c.txt" | grep '^kernel'; tail -1 "$tmp/c.txt"
eval "$(tail -1 "$tmp/c.txt" | tr ' ' '\n' | sed 's/^/c_/')"
if [ "${c_kernels:-0}" -lt 40 ]; then echo "FAILED: compute_app: $c_kernels kernel records, expected >= 40"; fail=1; fi
if [ "${c_flagged:-1}" -ne 0 ]; then echo "FAILED: compute_app: $c_flagged kernels flagged"; fail=1; fi
if [ "${bw_uncalibrated:-0}" -gt 0 ]; then
  echo "note: threshold uncalibrated (no GPU profile): half the computed peak"
else
  echo "note: threshold from the GPU profile"
fi
[ $fail -eq 0 ] && echo "test_gpu_inject: passed"
exit $fail
