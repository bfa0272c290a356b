#!/usr/bin/env bash
# bench/gpu_device.sh: the GPU part's acceptance run on a GPU machine. Builds
# gpu/ on its own (only the CUDA toolkit needed), runs `memwatch-gpu
# calibrate`, the gpu-labelled tests and bench/gpu_overhead.sh; logs, the GPU
# profile and the plots (plots.tar) go to OUTDIR, six files at most. Usage: bench/gpu_device.sh OUTDIR [steps]
# steps: any of build,calibrate,tests,overhead (default all).
set -uo pipefail
O=${1:?usage: gpu_device.sh OUTDIR [steps]}
steps=${2:-build,calibrate,tests,overhead}
mkdir -p "$O"
B=${MW_GPU_BUILD:-/tmp/build-gpu}
export PATH=/usr/local/cuda/bin:$PATH
has() { [[ ",$steps," == *",$1,"* ]]; }
if has build; then
  { nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem,driver_version --format=csv
    cmake --version | head -1; nvcc --version | tail -1; } 2>&1 | tee "$O/build.log"
  cmake -S gpu -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo >> "$O/build.log" 2>&1 &&
    cmake --build "$B" -j16 >> "$O/build.log" 2>&1 || { tail -30 "$O/build.log"; exit 1; }
  echo "build ok"
fi
if has calibrate; then
  ( time "$B/memwatch-gpu" calibrate --out "$O/gpu-profile.json" --svg-dir /tmp/mw-svg ) > "$O/calibrate.txt" 2>&1
  cat "$O/calibrate.txt"
  tar -C /tmp/mw-svg -cf "$O/plots.tar" . 2>/dev/null
  mkdir -p ~/.local/share/memwatch && cp "$O/gpu-profile.json" ~/.local/share/memwatch/ 2>/dev/null
fi
if has tests; then
  # the tests are hermetic: the profile calibrated above reaches them explicitly
  [ -f "$O/gpu-profile.json" ] && cmake -S gpu -B "$B" -DMW_TEST_GPU_PROFILE="$O/gpu-profile.json" >/dev/null
  (cd "$B" && ctest -L gpu -V --timeout 600) > "$O/ctest.txt" 2>&1
  grep -E 'Test #|FAILED|passed|SKIP' "$O/ctest.txt"
fi
if has overhead; then
  bash bench/gpu_overhead.sh "$B" 7 2>&1 | tee "$O/overhead.txt"
fi
