#!/usr/bin/env bash
# bench/monitor_loads.sh: does memwatch monitor's bound counter rise under a
# streaming load and stay flat under a compute load (issue 41's acceptance on
# a machine whose memory can saturate)? Starts the agent, then runs, each
# for SECONDS (default 20) with a pause of 5 s between: nothing, a streaming
# load (mon_load stream, THREADS threads, default every CPU), a compute load
# (mon_load compute, same threads); prints per phase, side by side, the
# seconds per level, the median latency and the top process in bound
# intervals, and a verdict line.
#
# The profile: PROFILE=PATH (or the default one that 'memwatch calibrate'
# wrote, where it exists): the machine's calibrated threshold, the real test.
# PROFILE=measure, or no profile at all: a threshold placed between this run's
# idle readings and its streaming readings (p90 idle, p10 streaming), as
# tests/monitor/test_monitor_prometheus.sh does: then only the compute phase
# is a real check (the streaming phase is above by construction).
# usage: bench/monitor_loads.sh BUILD_DIR [SECONDS]
#   BUILD_DIR holds memwatch and mon_load (cmake --build BUILD_DIR --target memwatch mon_load)
set -uo pipefail
b=$(cd "${1:?usage: bench/monitor_loads.sh BUILD_DIR [SECONDS]}" && pwd)
secs=${2:-20}
threads=${THREADS:-$(nproc)}
[ -x "$b/mon_load" ] || { echo "build mon_load first: cmake --build $b --target mon_load" >&2; exit 1; }
tmp=$(mktemp -d /tmp/mw-monitor-loads-XXXXXX)
pid=""
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
prof=${PROFILE:-}
if [ -z "$prof" ]; then
  def=${XDG_DATA_HOME:-$HOME/.local/share}/memwatch/profile.json
  [ -f "$def" ] && prof=$def || prof=measure
fi
start_agent() { # PROFILE
  : >"$tmp/agent.log"
  "$b/memwatch" monitor --listen 127.0.0.1:0 --profile "$1" -v 2>"$tmp/agent.log" &
  pid=$!
  for ((i = 0; i < 50; i++)); do grep -q "listening on" "$tmp/agent.log" && break; sleep 0.1; done
  port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$tmp/agent.log")
  [ -n "$port" ] || { cat "$tmp/agent.log"; exit 1; }
}
scrape() { curl -s "http://127.0.0.1:$port/metrics" >"$tmp/$1.om"; }
lines() { wc -l <"$tmp/agent.log"; }
lats() { tail -n +"$1" "$tmp/agent.log" | head -n "$2" | sed -n 's/.* latency \([0-9.]*\) ns .*/\1/p' | sort -g; }
pct() { awk -v p="$1" '{ v[NR] = $1 } END { if (!NR) { print "-"; exit } print v[int(p * (NR - 1) + 0.5) + 1] }'; }

if [ "$prof" = measure ]; then
  echo "profile: measured here (no calibrated profile; PROFILE=PATH names one)"
  start_agent none
  sleep 2; l0=$(lines); sleep 5; l1=$(lines)
  "$b/mon_load" stream 6 "$threads" >/dev/null & lp=$!
  sleep 2; l2=$(lines); wait $lp; l3=$(lines)
  i90=$(lats "$l0" $((l1 - l0)) | pct 0.9); i50=$(lats "$l0" $((l1 - l0)) | pct 0.5)
  s10=$(lats "$l2" $((l3 - l2 - 2)) | pct 0.1)
  thr=$(awk -v i="$i90" -v s="$s10" 'BEGIN { printf "%.1f", (i + s) / 2 }')
  echo "idle p50 $i50 p90 $i90 ns, streaming p10 $s10 ns: threshold $thr ns"
  kill $pid; wait $pid 2>/dev/null
  export MEMWATCH_MACHINE=mw-monitor-bench
  printf '{"schema": "memwatch-profile", "version": 1, "identity": "mw-monitor-bench", "peak_bw": 1e11,
  "idle_latency_ns": %s, "lat_method": "probe_lat", "lat_threshold_ns": %s, "bw_method": "", "bw_factor": 1,
  "saturable": true}\n' "$i50" "$thr" >"$tmp/profile.json"
  prof=$tmp/profile.json
else
  echo "profile: $prof"
fi
start_agent "$prof"
sleep 2
grep -m1 "listening" "$tmp/agent.log"
phases=(idle stream compute)
declare -A lat
for ph in "${phases[@]}"; do
  scrape "$ph-0"; l0=$(lines)
  case $ph in
  idle) sleep "$secs" ;;
  *) "$b/mon_load" "$ph" "$secs" "$threads" >"$tmp/$ph.out" ;;
  esac
  sleep 1 # the probe's window (8 intervals) drains
  scrape "$ph-1"; l1=$(lines)
  lat[$ph]=$(lats "$l0" $((l1 - l0)) | pct 0.5)
  sleep 4
done
printf '%-28s %12s %12s %12s\n' "" idle "stream x$threads" "compute x$threads"
for lv in bound high medium low unknown; do
  row=""
  for ph in "${phases[@]}"; do
    a=$(awk -v l="$lv" '!/^#/ && $1 ~ "level=\"" l "\"" { print $NF }' "$tmp/$ph-0.om")
    z=$(awk -v l="$lv" '!/^#/ && $1 ~ "level=\"" l "\"" { print $NF }' "$tmp/$ph-1.om")
    row+=$(printf ' %12.2f' "$(awk -v a="$a" -v z="$z" 'BEGIN { print z - a }')")
  done
  echo "$(printf '%-28s' "$lv seconds")$row"
done
row=""
for ph in "${phases[@]}"; do row+=$(printf ' %12s' "${lat[$ph]:-?}"); done
echo "$(printf '%-28s' "median latency (ns)")$row"
printf '%-28s %12s\n' "threshold (ns)" "$(awk '!/^#/ && /^memwatch_threshold_seconds/ { printf "%.1f", $NF * 1e9 }' "$tmp/compute-1.om")"
for ph in stream compute; do echo "$ph: $(tail -1 "$tmp/$ph.out")"; done
echo "top processes by CPU time in bound intervals (since the start):"
grep '^memwatch_process_bound_cpu_seconds_total' "$tmp/compute-1.om" | head -3 | sed 's/{host="[^"]*",/{/; s/^memwatch_process_bound_cpu_seconds_total/  /'
bs=$(awk '!/^#/ && $1 ~ /level="bound"/ { print $NF }' "$tmp/stream-0.om" "$tmp/stream-1.om" | awk 'NR == 1 { a = $1 } NR == 2 { print $1 - a }')
bc=$(awk '!/^#/ && $1 ~ /level="bound"/ { print $NF }' "$tmp/compute-0.om" "$tmp/compute-1.om" | awk 'NR == 1 { a = $1 } NR == 2 { print $1 - a }')
awk -v s="$bs" -v c="$bc" -v t="$secs" 'BEGIN {
  v = (s >= 0.5 * t && c <= 0.1 * t) ? "PASS" : "FAIL"
  printf "%s: bound %.1f s of %d s under streaming, %.1f s under compute (pass: >= 50 %% and <= 10 %%)\n", v, s, t, c
  exit v != "PASS" }'
