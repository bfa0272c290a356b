#!/usr/bin/env bash
# tests/monitor/test_monitor_hostile.sh: memwatch monitor under bad input
# (tests/monitor/mon_flood.c is the client):
#  - malformed requests (no version, bad methods, NUL bytes, 70 kB lines and
#    headers, bad lengths, binary, HTTP/2 preface ...): each gets an error
#    status or a close, never a crash;
#  - 10,000 connections, as many open at once as the file limit allows
#    (up to all 10,000), from one address and then spread over 32: the agent
#    refuses what is over its limits and counts it;
#  - slowloris clients (headers a byte a second) from one address fill its
#    per-address limit; a scrape from another address is still answered
#    while they hang on;
# and afterwards the agent is alive, its interval counter advanced through
# it all, and its resident memory grew by less than 16 MiB (printed).
set -u
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || { echo "SKIP: curl not found"; exit 77; }
FLOOD=$B/mon_flood
[ -x "$FLOOD" ] || { echo "FAILED: $FLOOD not built"; exit 1; }
tmp=$(mktemp -d /tmp/mw_mon_hostile.XXXXXX)
trap 'mon_stop; rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAILED: $*"; fail=1; }
ok() { echo "ok: $*"; }
alive() { kill -0 "$MON_PID" 2>/dev/null || { bad "the agent died: $(tail -5 "$tmp/agent.log")"; exit 1; }; }
ulimit -n "$(ulimit -Hn)" 2>/dev/null
conc=$(($(ulimit -n) - 100))
[ $conc -gt 10000 ] && conc=10000

mon_start "$tmp/agent.log" --interval 100ms --http-timeout 3
sleep 1
mon_scrape >"$tmp/m0"
rss0=$(mon_rss "$MON_PID")
iv0=$(mon_value memwatch_intervals_total <"$tmp/m0")
t0=$(date +%s.%N)

# malformed requests
"$FLOOD" malformed 127.0.0.1 "$MON_PORT" >"$tmp/mal.out" 2>&1 || bad "malformed client: $(cat "$tmp/mal.out")"
cat "$tmp/mal.out"
alive
grep -q "200 OK" <(grep -E "DELETE|POST|other path|binary|bad version|70 kB" "$tmp/mal.out") &&
  bad "a malformed request was answered 200"
ok "malformed requests: no crash, none answered 200 where it must not be"

# 10,000 connections from one address, then from 32
for src in 127.0.0.1 spread; do
  out=$("$FLOOD" flood 127.0.0.1 "$MON_PORT" 10000 "$conc" "$src" 2>&1) || bad "flood client ($src): $out"
  echo "$out ($src)"
  alive
done
mon_scrape >"$tmp/m1" || bad "no scrape after the flood"
rl=$(mon_value 'memwatch_http_rejected_connections_total{reason="limit"' <"$tmp/m1")
ri=$(mon_value 'memwatch_http_rejected_connections_total{reason="per_ip"' <"$tmp/m1")
awk -v a="$rl" -v b="$ri" 'BEGIN { exit !(a > 1000 && b > 1000) }' &&
  ok "the flood was refused and counted: $rl over the connection limit, $ri over the per-address limit" ||
  bad "rejections: limit $rl, per_ip $ri"

# slowloris from 127.0.0.2 (its 8 slots and more), a scrape from 127.0.0.1 meanwhile
"$FLOOD" slowloris 127.0.0.1 "$MON_PORT" 40 8 127.0.0.2 >"$tmp/slow.out" 2>&1 &
slow=$!
sleep 2
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$MON_PORT/metrics")
[ "$code" = 200 ] && ok "a scrape from another address is answered while slowloris clients hang on" ||
  bad "scrape during slowloris: $code"
o=$(mon_scrape | mon_value memwatch_http_open_connections)
echo "open connections during slowloris: $o"
wait $slow
cat "$tmp/slow.out"
grep -q "slowloris: 40 of 40 connections opened, [1-9][0-9]* closed by the server" "$tmp/slow.out" &&
  ok "slowloris: the server closed the connections over the limit" || bad "slowloris: $(cat "$tmp/slow.out")"
alive

sleep 4 # connections that were idle time out
mon_scrape >"$tmp/m2" || bad "no scrape at the end"
t1=$(date +%s.%N)
iv1=$(mon_value memwatch_intervals_total <"$tmp/m2")
rss1=$(mon_rss "$MON_PID")
open=$(mon_value memwatch_http_open_connections <"$tmp/m2")
exp=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", (b - a) / 0.1 }')
echo "intervals: $iv0 -> $iv1 over $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s ($exp expected at 100 ms)"
awk -v a="$iv0" -v b="$iv1" -v e="$exp" 'BEGIN { exit !(b - a >= 0.7 * e) }' &&
  ok "the agent kept measuring through it all" || bad "intervals advanced only $iv0 -> $iv1 (expected about $exp more)"
echo "resident memory: $rss0 kB before, $rss1 kB after ($((rss1 - rss0)) kB more)"
[ $((rss1 - rss0)) -lt 16384 ] && ok "memory bounded" || bad "resident memory grew by $((rss1 - rss0)) kB"
[ "$open" = 1 ] && ok "every other connection is closed (open: this scrape's own)" || bad "$open connections still open"
mon_stop || bad "the agent did not stop cleanly"
exit $fail
