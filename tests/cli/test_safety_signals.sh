#!/usr/bin/env bash
# tests/cli/test_safety_signals.sh: SIGTERM, SIGHUP and SIGINT sent to
# `memwatch record` stop the program it runs, instead of leaving it behind
# (docs/man/memwatch-record.1, SIGNALS). For each signal, through timeout(1)
# (which sends it to record and again to record's process group) and, for
# SIGTERM and SIGHUP, sent straight to record's pid:
#   - no process of the program is left (pgrep on a marker argument only
#     this run has);
#   - record exits with 128 + the signal, as a shell reports the program,
#     and says the program was killed by it;
#   - no .memwatch-status-* file is left in the run directory;
#   - memwatch report reads the run: every process ended by the signal
#     (exit_status = minus the signal), and the text says "killed by SIGxxx".
# record runs with no terminal on its standard descriptors (as under a batch
# system), where the program leads a process group of its own; the terminal
# case is described in docs/man/memwatch-record.1.
# Each case waits for the program to run (the marker process appears)
# before the signal is sent, so that no case depends on timing.
set -u
B=${MW_BUILD_DIR:?}
for f in memwatch libmemwatch.so; do
  [ -e "$B/$f" ] || { echo "SKIP: $B/$f not built"; exit 77; }
done
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 command is not installed"; exit 77; }
command -v pgrep >/dev/null || { echo "SKIP: pgrep is not installed"; exit 77; }
command -v timeout >/dev/null || { echo "SKIP: timeout is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/mw_safety_signals.XXXXXX)
markers=()
cleanup() {
  for m in "${markers[@]}"; do
    for p in $(pgrep -f "$m"); do kill -KILL "$p" 2>/dev/null; done
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp" || exit 1
fail=0
bad() { echo "FAILED: $*"; fail=1; }
ok() { echo "ok: $*"; }
declare -A num=([TERM]=15 [HUP]=1 [INT]=2)

# waits (up to about a minute) for a process whose command line holds $1
wait_for() {
  for _ in $(seq 600); do
    pgrep -f "$1" >/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# case NAME SIG HOW: HOW is timeout (the signal to timeout, which passes it
# on as when its time is up) or direct (to record's pid)
run_case() {
  local name=$1 sig=$2 how=$3 n=${num[$2]}
  # a number no other process has on its command line: sleep's argument
  local mark="7${RANDOM}${$}${n}.25"
  markers+=("$mark")
  local dir=$tmp/$name
  if [ $how = timeout ]; then
    timeout -s "$sig" 600 "$B/memwatch" record -o "$dir" -- sh -c 'sleep "$0"; echo not stopped' "$mark" \
      </dev/null >"$name.out" 2>"$name.err" &
  else
    "$B/memwatch" record -o "$dir" -- sh -c 'sleep "$0"; echo not stopped' "$mark" \
      </dev/null >"$name.out" 2>"$name.err" &
  fi
  local pid=$!
  if ! wait_for "sleep $mark"; then
    bad "$name: the program never started"
    kill -KILL $pid 2>/dev/null
    return
  fi
  kill -s "$sig" $pid
  wait $pid
  local rc=$?
  local left
  left=$(pgrep -f "$mark")
  [ -z "$left" ] && ok "$name: no process left" ||
    bad "$name: processes left: $(ps -o pid,pgid,args -p "$(echo $left | tr ' ' ,)")"
  [ $rc = $((128 + n)) ] && ok "$name: exit status $rc" || bad "$name: exit status $rc, want $((128 + n))"
  grep -q "was killed by SIG$sig" "$name.err" && ok "$name: record says the program was killed by SIG$sig" ||
    bad "$name: record's stderr: $(cat "$name.err")"
  grep -q "not stopped" "$name.out" && bad "$name: the shell went on after sleep"
  local st
  st=$(ls -A "$dir" | grep -c '^\.memwatch-status-')
  [ "$st" = 0 ] && ok "$name: no status file left" || bad "$name: $st status file(s) left: $(ls -A "$dir")"
  "$B/memwatch" report "$dir" >"$name.report" 2>"$name.report.err"
  local rrc=$?
  [ $rrc = 0 ] || bad "$name: memwatch report exit $rrc: $(cat "$name.report.err")"
  local rows
  rows=$(sqlite3 "$dir/memwatch.db" "SELECT count(*), sum(exit_status = -$n) FROM processes" 2>&1)
  # the shell and sleep (the shell does not exec sleep: a command follows it)
  [ "$rows" = "2|2" ] && ok "$name: the raw files say both processes ended by SIG$sig" ||
    bad "$name: processes (count, ended by signal $n): '$rows'"
  [ "$(grep -c "killed by SIG$sig" "$name.report")" = 2 ] &&
    ok "$name: the report says both were killed by SIG$sig" ||
    bad "$name: the report: $(grep -A3 '^Processes' "$name.report")"
}

run_case term_timeout TERM timeout
run_case hup_timeout HUP timeout
run_case int_timeout INT timeout
run_case term_direct TERM direct
run_case hup_direct HUP direct

[ $fail = 0 ] && echo PASS
exit $fail
