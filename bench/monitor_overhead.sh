#!/usr/bin/env bash
# bench/monitor_overhead.sh: what memwatch monitor costs at its default
# interval (docs/monitor.md, "Overhead"): starts the agent, lets it settle
# 2 s, then reads its CPU time over
# SECONDS (default 20) of wall time (the sum over its threads of
# /proc/PID/task/TID/schedstat's time on a CPU, in ns: utime + stime of
# /proc/PID/stat count 10 ms ticks, too coarse here), with Prometheus-like scrapes (one a
# second, SCRAPE=0: none), and prints the ratio to one core, the probe's
# share of it and the resident memory.
# usage: bench/monitor_overhead.sh BUILD_DIR [SECONDS] [extra monitor options]
set -euo pipefail
b=$(cd "${1:?usage: bench/monitor_overhead.sh BUILD_DIR [SECONDS] [options]}" && pwd)
secs=${2:-20}
shift $(($# >= 2 ? 2 : 1))
log=$(mktemp /tmp/mw-monitor-overhead-XXXXXX)
"$b/memwatch" monitor --listen 127.0.0.1:0 "$@" 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$log"' EXIT
for ((i = 0; i < 50; i++)); do grep -q "listening on" "$log" && break; sleep 0.1; done
port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$log")
[ -n "$port" ] || { cat "$log"; exit 1; }
ticks() { cat /proc/$pid/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f", s }'; }
probe() { curl -s "http://127.0.0.1:$port/metrics" | awk '/^memwatch_probe_seconds_total/ { print $NF }'; }
sleep 2
c0=$(ticks); p0=$(probe); t0=$(date +%s.%N)
end=$(($(date +%s) + secs))
while [ "$(date +%s)" -lt $end ]; do
  [ "${SCRAPE:-1}" = 0 ] || curl -s -o /dev/null "http://127.0.0.1:$port/metrics"
  sleep 1
done
c1=$(ticks); p1=$(probe); t1=$(date +%s.%N)
rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
awk -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" -v p0="$p0" -v p1="$p1" -v rss="$rss" \
    -v opts="$(head -1 "$log" | sed 's/.*metrics, //')" 'BEGIN {
  cpu = (c1 - c0) / 1e9; wall = t1 - t0
  printf "memwatch monitor (%s): %.4f s CPU in %.1f s = %.4f of one core (%.3f %%); the probe %.3f s (%.3f %%); RSS %d kB\n",
         opts, cpu, wall, cpu / wall, 100 * cpu / wall, p1 - p0, 100 * (p1 - p0) / wall, rss }'
