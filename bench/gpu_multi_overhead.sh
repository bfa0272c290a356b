#!/usr/bin/env bash
# bench/gpu_multi_overhead.sh: what memwatch costs a program that drives two
# GPUs at once. tests/gpu's multi_app streams on device 0 and computes on
# device 1 for SECONDS seconds; each configuration runs once per round, the
# order reversed every other round (interleaved). Prints, per device, the
# median over rounds of the time per launch under memwatch against the
# program alone: `memwatch record` (CPU sampling, the probe and the GPU
# part: CUPTI activity records and PM sampling on both devices) and the GPU
# part alone (CUDA_INJECTION64_PATH=libmemwatch_cuda.so).
# Usage: bench/gpu_multi_overhead.sh BUILD_DIR [ROUNDS [SECONDS]]
set -euo pipefail
B=${1:?usage: gpu_multi_overhead.sh BUILD_DIR [ROUNDS [SECONDS]]}
R=${2:-5}
S=${3:-3}
export NCCL_NVLS_ENABLE=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$B/multi_app" 0 >/dev/null || { echo "gpu_multi_overhead: multi_app cannot run here (two GPUs needed)"; exit 77; }
# per-launch time of each device, microseconds: "stream_us compute_us"
per_launch() {
  awk '/^stream /{for(i=1;i<=NF;i++){split($i,a,"=");v[a[1]]=a[2]}; s=v["loop_s"]/v["launches"]*1e6}
       /^compute /{for(i=1;i<=NF;i++){split($i,a,"=");w[a[1]]=a[2]}; c=w["loop_s"]/w["launches"]*1e6}
       END {printf "%.3f %.3f\n", s, c}'
}
run_cfg() {
  case $1 in
  alone) "$B/multi_app" "$S" 0 1 ;;
  record) rm -rf "$tmp/rec"; "$B/memwatch" record -q -o "$tmp/rec" -- "$B/multi_app" "$S" 0 1 ;;
  gpu) MEMWATCH_GPU_OUT=$tmp/g.mwr CUDA_INJECTION64_PATH=$B/libmemwatch_cuda.so "$B/multi_app" "$S" 0 1 ;;
  esac | per_launch
}
cfgs=(alone record gpu)
for r in $(seq "$R"); do
  order=("${cfgs[@]}")
  [ $((r % 2)) -eq 0 ] && order=(gpu record alone)
  for c in "${order[@]}"; do
    echo "$r $c $(run_cfg "$c")" >> "$tmp/t"
  done
done
python3 - "$tmp/t" "$S" "$R" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
by = {}
for r, c, s, k in rows:
    by.setdefault(int(r), {})[c] = (float(s), float(k))
print("multi_app, %s s per run, %s interleaved rounds: time per launch against the program alone (median over rounds, [min..max])" % (sys.argv[2], sys.argv[3]))
for c in ("record", "gpu"):
    for i, dev in ((0, "device 0 stream_triad"), (1, "device 1 fma_chain")):
        q = [by[r][c][i] / by[r]["alone"][i] for r in sorted(by)]
        print("  %-28s %-22s %.4f [%.4f..%.4f]" % ("memwatch record" if c == "record" else "GPU part alone (injection)",
              dev, st.median(q), min(q), max(q)))
alone = [by[r]["alone"] for r in sorted(by)]
print("  alone: %.1f us per stream_triad launch, %.1f us per fma_chain launch (medians)" %
      (st.median(a[0] for a in alone), st.median(a[1] for a in alone)))
PY
