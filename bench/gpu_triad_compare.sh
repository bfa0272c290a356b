#!/usr/bin/env bash
# bench/gpu_triad_compare.sh: builds bench/gpu_triad_compare.cu against a
# build's GPU probe library and runs it: memwatch's GPU triad against a
# BabelStream-style CUDA stream triad of several kernel shapes, same array
# size, interleaved, best of runs; prints the ratio (goal >= 1.00).
# Usage: bench/gpu_triad_compare.sh BUILD_DIR [rounds] [runs]
#   BUILD_DIR: a memwatch build (BUILD/gpu/libmw_gpu_probes.a) or a
#   stand-alone GPU build (cmake -S gpu -B BUILD: BUILD/libmw_gpu_probes.a).
set -euo pipefail
build=${1:?usage: bench/gpu_triad_compare.sh BUILD_DIR [rounds] [runs]}
here=$(cd "$(dirname "$0")/.." && pwd)
lib=$build/gpu/libmw_gpu_probes.a
[ -f "$lib" ] || lib=$build/libmw_gpu_probes.a
[ -f "$lib" ] || { echo "gpu_triad_compare: no libmw_gpu_probes.a in $build or $build/gpu" >&2; exit 2; }
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
exe=$build/gpu_triad_compare
"$nvcc" -O3 -arch=sm_90 -I"$here/include" -o "$exe" "$here/bench/gpu_triad_compare.cu" "$lib" \
    "$(dirname "$lib")/libmw_gpu_profile.a"
"$exe" "${2:-5}" "${3:-20}"
