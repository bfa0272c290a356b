# tests/monitor/lib.sh: what memwatch monitor's tests share (sourced).
# mon_start LOG ARGS...: starts the agent on a free loopback port; sets
#   MON_PID and MON_PORT, or exits 77 where this build has no HTTP server
#   and 1 where it did not start.
# mon_scrape [CURL ARGS...]: /metrics as OpenMetrics on stdout.
# mon_value NAME[{LABELS}] < TEXT: the first sample whose name and labels
#   start so (labels as written, without host/numa), its value.
# mon_rss PID: resident memory in kB.
# mon_stop: SIGTERM, waits, checks the clean exit.
B=${MW_BUILD_DIR:?}
S=${MW_SOURCE_DIR:?}
MW=$B/memwatch
MON_PID=""
mon_start() {
  local log=$1
  shift
  "$MW" monitor --listen 127.0.0.1:0 "$@" >"$log" 2>&1 &
  MON_PID=$!
  local i
  for ((i = 0; i < 100; i++)); do
    grep -q "listening on" "$log" && break
    if ! kill -0 "$MON_PID" 2>/dev/null; then
      if grep -q "not available" "$log"; then
        echo "SKIP: $(cat "$log")"
        exit 77
      fi
      echo "FAILED: the agent did not start:"; cat "$log"; exit 1
    fi
    sleep 0.1
  done
  MON_PORT=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$log" | head -1)
  [ -n "$MON_PORT" ] || { echo "FAILED: no port in:"; cat "$log"; exit 1; }
}
mon_scrape() {
  curl -sS --max-time 10 "$@" "http://127.0.0.1:$MON_PORT/metrics"
}
mon_value() {
  local want=$1
  awk -v w="$want" '
    /^#/ { next }
    { name = $1; sub(/\{.*/, "", name)
      lab = $1; if (lab ~ /\{/) { sub(/^[^{]*\{/, "", lab); sub(/\}.*/, "", lab) } else lab = ""
      gsub(/host="[^"]*",?/, "", lab); gsub(/numa="[^"]*",?/, "", lab); sub(/,$/, "", lab)
      key = lab == "" ? name : name "{" lab "}"
      if (index(key, w) == 1) { print $NF; exit } }'
}
mon_rss() {
  awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}
mon_stop() {
  [ -n "$MON_PID" ] || return 0
  kill -TERM "$MON_PID" 2>/dev/null
  local rc=0
  wait "$MON_PID" || rc=$?
  MON_PID=""
  return $rc
}
