#!/usr/bin/env bash
# tests/report/test_summary_threads.sh: a program with a main thread and two
# helper threads (summary_threads): the summary lists every thread with its
# own CPU time, the main one included, and counts only the program's threads
# (not memwatch's own); --by thread gives the main thread its CPU time; code
# shares from fewer than 1000 samples carry their count and 95 % interval.
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
app=$B/summary_threads
[ -f "$B/libmemwatch.so" ] && [ -x "$app" ] || { echo "SKIP: libmemwatch.so or summary_threads not built"; exit 77; }
T=$(mktemp -d /tmp/mw_summary_threads.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAILED: $*"; fail=1; }

"$mw" record -q -o "$T/run" -- "$app" 400 100 >/dev/null || bad "memwatch record summary_threads"
"$mw" report --db "$T/db" "$T/run" >"$T/rep" 2>"$T/err" || bad "report: $(cat "$T/err")"
sed -n '/^Processes/,/samples:/p' "$T/rep"
pid=$(sqlite3 "$T/db" "SELECT pid FROM processes LIMIT 1")
grep -q "^  pid $pid .* 3 threads," "$T/rep" || bad "the process is not said to have 3 threads"
main=$(grep "^    thread .* tid $pid .*main thread" "$T/rep") || bad "the main thread (tid $pid) is not listed"
for h in helper-a helper-b; do
    grep -q "^    thread $h " "$T/rep" || bad "$h is not listed"
done
[ "$(grep -c '^    thread ' "$T/rep")" = 3 ] || bad "not 3 thread rows"
grep -q "^    thread memwatch " "$T/rep" && bad "memwatch's own thread listed as the program's"
# the main thread worked 400 ms of CPU time, each helper 100 ms
mcpu=$(echo "$main" | sed -n 's/.*CPU user \([0-9.]*\) s, system \([0-9.]*\) s.*/\1 \2/p' | awk '{ print $1 + $2 }')
echo "main thread CPU: ${mcpu:-none} s"
awk -v c="${mcpu:-0}" 'BEGIN { exit !(c >= 0.35) }' || bad "main thread CPU ${mcpu:-none} s, want >= 0.35 s"
# the threads table has the main thread's own row with CPU time
sqlite3 "$T/db" "SELECT tid, name, user_ns, system_ns FROM threads"

# --by thread: the main thread's time is its CPU time, not 0
"$mw" report --db "$T/db" --by thread "$T/run" >"$T/by" 2>/dev/null || bad "--by thread"
sed -n '/^By thread/,$p' "$T/by"
row=$(grep "^  $pid summary_threads" "$T/by")
t=$(echo "$row" | awk '{ for (i = 1; i < NF; i++) if ($(i + 1) == "s") { print $i; exit } }')
echo "--by thread main: ${t:-none} s"
awk -v c="${t:-0}" 'BEGIN { exit !(c >= 0.35) }' || bad "--by thread gives the main thread ${t:-none} s"

# a main thread without its own CPU record (helper-b ends the process while
# the main thread waits): its CPU time is derived and said to be
"$mw" record -q -o "$T/hx" -- "$app" 400 100 exit >/dev/null || bad "record of the helper's exit"
"$mw" report --db "$T/hx.db" "$T/hx" >"$T/hrep" 2>/dev/null || bad "report of the helper's exit"
hpid=$(sqlite3 "$T/hx.db" "SELECT pid FROM processes LIMIT 1")
nocpu=$(sqlite3 "$T/hx.db" "SELECT COUNT(*) FROM threads WHERE tid = $hpid AND user_ns IS NULL")
hmain=$(grep "^    thread .* tid $hpid .*main thread" "$T/hrep") || bad "helper's exit: the main thread is not listed"
echo "$hmain"
if [ "$nocpu" = 1 ]; then
    echo "$hmain" | grep -q "CPU time derived: the process's less its other threads'" ||
        bad "the main thread's CPU time is not said to be derived"
    d=$(echo "$hmain" | sed -n 's/.*CPU user \([0-9.]*\) s, system \([0-9.]*\) s.*/\1 \2/p' | awk '{ print $1 + $2 }')
    awk -v c="${d:-0}" 'BEGIN { exit !(c >= 0.35 && c < 0.6) }' || bad "derived main CPU ${d:-none} s, want 0.4 s"
else
    echo "the main thread has its own CPU record here: nothing to derive"
fi
"$mw" report --db "$T/hx.db" --by thread "$T/hx" >"$T/hby" 2>/dev/null
t=$(grep "^  $hpid summary_threads" "$T/hby" | awk '{ for (i = 1; i < NF; i++) if ($(i + 1) == "s") { print $i; exit } }')
awk -v c="${t:-0}" 'BEGIN { exit !(c >= 0.35) }' || bad "--by thread gives the main thread ${t:-none} s after the helper's exit"

# confidence: the code shares of fewer than 1000 samples carry "k of n, 95% CI"
tot=$(sed -n 's/^Top code overall (timer samples: \([0-9]*\))/\1/p' "$T/rep")
echo "overall timer samples: $tot"
if [ "${tot:-0}" -gt 0 ] && [ "$tot" -lt 1000 ]; then
    row=$(grep -A2 "^Top code overall" "$T/rep" | tail -1)
    echo "$row"
    echo "$row" | grep -qE "\[[0-9]+ of $tot, 95% CI [0-9.]+-[0-9.]+%" || bad "no count and interval: $row"
    # the interval is Wilson's: check it against a computation here
    k=$(echo "$row" | sed -n 's/.*\[\([0-9]*\) of.*/\1/p')
    lo=$(echo "$row" | sed -n 's/.*CI \([0-9.]*\)-.*/\1/p')
    hi=$(echo "$row" | sed -n 's/.*CI [0-9.]*-\([0-9.]*\)%.*/\1/p')
    awk -v k="$k" -v n="$tot" -v lo="$lo" -v hi="$hi" 'BEGIN {
        z = 1.959964; p = k / n; d = 1 + z * z / n; c = (p + z * z / (2 * n)) / d
        h = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
        el = 100 * (c - h); eh = 100 * (c + h); if (el < 0) el = 0; if (eh > 100) eh = 100
        exit !((el - lo) ^ 2 < 0.01 && (eh - hi) ^ 2 < 0.01) }' ||
        bad "interval $lo-$hi% for $k of $tot is not the Wilson score interval"
fi
# too few: a run of a few samples is marked
"$mw" record -q -o "$T/few" -- "$app" 40 1 >/dev/null || bad "record of a short run"
"$mw" report --db "$T/few.db" "$T/few" >"$T/frep" 2>/dev/null || bad "report of a short run"
ft=$(sed -n 's/^Top code overall (timer samples: \([0-9]*\))/\1/p' "$T/frep")
echo "short run: ${ft:-?} timer samples"
if [ "${ft:-0}" -gt 0 ] && [ "$ft" -lt 20 ]; then
    grep -A1 "^Top code overall" "$T/frep" | grep -q "too few samples ($ft, fewer than 20)" ||
        bad "no 'too few samples' mark for $ft samples: $(grep -A3 '^Top code overall' "$T/frep")"
    grep -A3 "^Top code overall" "$T/frep" | grep -q ", too few samples\]" || bad "rows not marked too few"
fi
[ "$fail" = 0 ] && echo PASS
exit $fail
