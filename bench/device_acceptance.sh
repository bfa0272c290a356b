#!/usr/bin/env bash
# bench/device_acceptance.sh: the GPU machine's acceptance lines of issues
# 37, 39, 40 and 41 in one run, from a device pack (bench/device_pack BUILD
# FOLDER /usr/bin/stress-ng, packed as a .tar.xz: the machine is bare and has
# no network). Logs go to OUTDIR, one per step; each step's verdict is
# printed. Steps (default all):
#   gpumon  memwatch monitor beside tests/gpu's bw_app (a streaming kernel):
#           memwatch_gpu_memory_busy_ratio before, during and after it
#   cal     memwatch calibrate --quick (the profile the next steps use)
#   static  bench/attach_static_flagged.sh on 16 threads (issue 40)
#   monload bench/monitor_loads.sh, 20 s per phase (issue 41)
#   names   tests/names/test_names.sh NAMES_CASE=pyperf with python3 (3.12
#           there), and stress-ng recorded, its names checked against the
#           symbol tables by tests/names/check_names.py (issue 37)
#   cost    what recording costs (issue 39, docs/overhead.md): the /bin/true
#           loop (bench/short_procs: floor, memwatch, and the pack's base/
#           build where it has one), and bench/long_cost's 16-thread stream
#           and the long programs the machine has (xz, python3, sqlite3),
#           each against base/ too
# Usage: bench/device_acceptance.sh PACK.tar.xz OUTDIR [steps]
set -uo pipefail
pack=${1:?usage: device_acceptance.sh PACK.tar.xz OUTDIR [steps]}
O=${2:?usage: device_acceptance.sh PACK.tar.xz OUTDIR [steps]}
steps=${3:-gpumon,cal,static,monload,names,cost}
S=$(cd "$(dirname "$0")/.." && pwd)
P=$(mktemp -d /tmp/mw-pack-XXXXXX)
tar -C "$P" -xJf "$pack" || { echo "device_acceptance: cannot unpack $pack"; exit 1; }
export LD_LIBRARY_PATH=$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PATH=$P/bin:$PATH
B=$P/bin
mkdir -p "$O"
has() { [[ ",$steps," == *",$1,"* ]]; }
echo "device_acceptance: $(nproc) CPUs; $(nvidia-smi -L 2>/dev/null | head -1)"
if has gpumon; then
  (
    "$B/memwatch" monitor --listen 127.0.0.1:19191 --profile none >"$O/gpumon-agent.log" 2>&1 &
    mp=$!
    sleep 3
    scrape() { curl -s http://127.0.0.1:19191/metrics 2>/dev/null | awk -v t="$1" '/^memwatch_gpu_memory_busy_ratio\{/ { print t, $NF }'; }
    for i in 1 2 3; do scrape idle; sleep 1; done
    "$B/bw_app" 60000 >"$O/gpumon-bw_app.txt" 2>&1 &
    bp=$!
    sleep 2
    while kill -0 $bp 2>/dev/null; do scrape streaming; sleep 1; done
    sleep 3
    for i in 1 2 3; do scrape after; sleep 1; done
    kill $mp; wait $mp
    grep -i "gpu" "$O/gpumon-agent.log"
  ) >"$O/gpumon.txt" 2>&1
  cat "$O/gpumon.txt"
  awk '{ n[$1]++; s[$1] += $2 } END { for (k in n) printf "gpumon: %s mean memory busy %.2f over %d scrapes\n", k, s[k] / n[k], n[k] }' "$O/gpumon.txt"
fi
if has cal; then
  "$B/memwatch" calibrate --quick >"$O/cal.txt" 2>&1
  echo "cal: exit $?"; grep -iE "threshold|saturab|peak" "$O/cal.txt" | head -8
fi
if has static; then
  bash "$S/bench/attach_static_flagged.sh" "$B" 16 >"$O/static.txt" 2>&1
  echo "static: exit $?"; tail -12 "$O/static.txt"
fi
if has monload; then
  bash "$S/bench/monitor_loads.sh" "$B" 20 >"$O/monload.txt" 2>&1
  echo "monload: exit $?"; tail -12 "$O/monload.txt"
fi
if has cost; then
  other=()
  [ -x "$P/base/memwatch" ] && other=("lib:$P/base/libmemwatch.so")
  MW_BENCH_CONFIGS="floor memwatch ${other[*]}" bash "$S/bench/short_procs" 10 "$B" >"$O/cost-true.txt" 2>&1
  echo "cost true: exit $?"; tail -8 "$O/cost-true.txt"
  wl=stream
  for w in xz python3 sqlite3; do command -v $w >/dev/null && wl="$wl ${w%3}"; done
  MW_BENCH_WORKLOADS=$wl MW_BENCH_CONFIGS="record ${other[*]}" bash "$S/bench/long_cost" 5 "$B" >"$O/cost-long.txt" 2>&1
  echo "cost long: exit $?"; grep -v " round " "$O/cost-long.txt"
fi
if has names; then
  MW_BUILD_DIR=$B MW_SOURCE_DIR=$S NAMES_CASE=pyperf NAMES_PYTHON=python3 bash "$S/tests/names/test_names.sh" >"$O/names-pyperf.txt" 2>&1
  echo "names pyperf: exit $?"; tail -8 "$O/names-pyperf.txt"
  t=$(mktemp -d)
  "$B/memwatch" record -q -o "$t/raw" -- "$B/stress-ng" --cpu 4 --vm 2 --vm-bytes 256m --timeout 5 >"$O/names-stress.txt" 2>&1
  "$B/memwatch" report "$t/raw" --db "$t/db" --json --top 1000 >"$t/sum.json" 2>>"$O/names-stress.txt"
  "$B/memwatch" report "$t/raw" --db "$t/db" --sort function --json --top 1000 >"$t/fn.json" 2>>"$O/names-stress.txt"
  "$B/memwatch" report "$t/raw" --db "$t/db" >"$t/sum.txt" 2>>"$O/names-stress.txt"
  python3 "$S/tests/names/check_names.py" "$t/db" "$t/sum.json" "$t/fn.json" >>"$O/names-stress.txt" 2>&1
  echo "names stress-ng: check_names exit $?, ?:0 lines $(grep -c '?:0' "$t/sum.txt")"
  tail -5 "$O/names-stress.txt"; sed -n '/^Code/,/^$/p' "$t/sum.txt" | head -12
fi
