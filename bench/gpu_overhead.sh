#!/usr/bin/env bash
# bench/gpu_overhead.sh: what libmemwatch_cuda.so costs a CUDA program.
# Runs tests/gpu's bw_app (kernels of several hundred microseconds, well over
# 100 us) and compute_app (about a millisecond each) alternately with and
# without the injected library, REPEATS times each, and prints the ratio of the
# median kernel-loop times (injected / plain). Goal: <= 1.05.
# Settings for the injected runs follow as NAME=VALUE (MEMWATCH_GPU_PC=1, ...);
# MW_GPU_LIB names another library than BUILD_DIR's; MW_OVERHEAD_ITERS the
# kernels per run (default 200).
# Usage: bench/gpu_overhead.sh BUILD_DIR [REPEATS [NAME=VALUE ...]]
set -euo pipefail
B=${1:?usage: gpu_overhead.sh BUILD_DIR [REPEATS [NAME=VALUE ...]]}
R=${2:-7}
shift $(( $# > 2 ? 2 : $# ))
settings=("$@")
lib=${MW_GPU_LIB:-$B/libmemwatch_cuda.so}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
for app in "bw_app ${MW_OVERHEAD_ITERS:-200}" "compute_app ${MW_OVERHEAD_ITERS:-200}"; do
  set -- $app
  name=$1 iters=$2
  : > "$tmp/plain" ; : > "$tmp/inj"
  for r in $(seq "$R"); do
    "$B/$name" "$iters" | sed -n 's/.*loop_s=\([0-9.]*\).*/\1/p' >> "$tmp/plain"
    env "${settings[@]}" MEMWATCH_GPU_OUT=$tmp/o.mwr CUDA_INJECTION64_PATH=$lib "$B/$name" "$iters" |
      sed -n 's/.*loop_s=\([0-9.]*\).*/\1/p' >> "$tmp/inj"
  done
  p=$(median < "$tmp/plain") i=$(median < "$tmp/inj")
  echo "$name: $iters kernels, median loop plain ${p}s, injected ${i}s, ratio $(awk -v a="$i" -v b="$p" 'BEGIN{printf "%.4f", a/b}') (repeats $R, interleaved${settings[*]:+, ${settings[*]}})"
done
