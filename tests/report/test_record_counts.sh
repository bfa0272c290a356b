#!/usr/bin/env bash
# tests/report/test_record_counts.sh: `memwatch record`'s summary and
# `memwatch report` count the same things: intervals, intervals with a
# latency reading (the measured time), flagged intervals and samples (the
# samples of threads that end between two intervals included), for a program
# of 4 threads that each run and end and for a fork and exec tree. And the
# kernel's CPU time accounting: the threads' and the processes' user and
# system time in the database; a program that takes page faults has a summary
# that gives its system share and says its samples do not cover it.
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch app=$B/mwp_app
[ -x "$app" ] || { echo "SKIP: mwp_app not built"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 not installed"; exit 77; }
[ -n "${MW_SAN_PRELOAD:-}" ] && export LD_PRELOAD=$MW_SAN_PRELOAD
T=$(mktemp -d /tmp/mw_counts.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# compare NAME CMD...: record CMD, report it, compare the counts
compare() {
    local name=$1
    shift
    rm -rf "$T/o" && mkdir -p "$T/o"
    "$mw" record -o "$T/o" -- "$@" >/dev/null 2>"$T/rec" || fail "$name: memwatch record failed: $(cat "$T/rec")"
    "$mw" report --db "$T/db" "$T/o" >"$T/rep" 2>&1 || fail "$name: memwatch report failed: $(cat "$T/rep")"
    local r_iv r_meas r_flag r_smp q_iv q_meas q_flag q_smp
    r_iv=$(sed -n 's/.*duration .* s, \([0-9]*\) intervals.*/\1/p' "$T/rec")
    r_flag=$(sed -n 's/.*bandwidth-bound .*(\([0-9]*\) of [0-9]* intervals).*/\1/p' "$T/rec")
    r_meas=$(sed -n 's/.*bandwidth-bound .*([0-9]* of \([0-9]*\) intervals).*/\1/p' "$T/rec")
    r_smp=$(sed -n 's/.*samples  *\([0-9]*\), .*/\1/p' "$T/rec")
    q_iv=$(sqlite3 "$T/db" "SELECT COUNT(*) FROM intervals")
    q_meas=$(sqlite3 "$T/db" "SELECT COUNT(*) FROM intervals WHERE flags & 2")
    q_flag=$(sqlite3 "$T/db" "SELECT COUNT(*) FROM intervals WHERE bw_bound = 1")
    q_smp=$(sqlite3 "$T/db" "SELECT COUNT(*) FROM samples")
    echo "$name: record says $r_iv intervals, $r_flag of $r_meas measured flagged, $r_smp samples;" \
        "report $q_iv, $q_flag of $q_meas, $q_smp"
    [ -n "$r_iv" ] && [ -n "$r_smp" ] || fail "$name: summary lines missing: $(cat "$T/rec")"
    [ "$r_iv" = "$q_iv" ] || fail "$name: intervals differ: record $r_iv, report $q_iv"
    [ "${r_meas:-0}" = "$q_meas" ] || fail "$name: measured intervals differ: record $r_meas, report $q_meas"
    [ "${r_flag:-0}" = "$q_flag" ] || fail "$name: flagged intervals differ: record $r_flag, report $q_flag"
    [ "$r_smp" = "$q_smp" ] || fail "$name: samples differ: record $r_smp, report $q_smp"
    grep -q "(${q_flag} of ${q_meas} intervals flagged)" "$T/rep" ||
        fail "$name: the report's bandwidth line counts other intervals: $(grep Bandwidth-bound "$T/rep")"
}

compare threads env MEMWATCH_RATE=1000 "$app" busythreads 150
# the threads' own CPU time, from the kernel, when each ended
n=$(sqlite3 "$T/db" "SELECT COUNT(*) FROM threads WHERE user_ns IS NOT NULL AND user_ns + system_ns >= 100000000")
[ "$n" -ge 4 ] || fail "$n of the 4 busy threads have their CPU time (>= 0.1 s each): $(sqlite3 "$T/db" "SELECT tid, user_ns, system_ns FROM threads")"
pu=$(sqlite3 "$T/db" "SELECT MAX(user_ns + system_ns) FROM processes")
[ "${pu:-0}" -ge 600000000 ] || fail "the process's CPU time ${pu:-none} ns is below its threads' 4 x 150 ms"
compare tree "$app" forkexec

# many short processes: the summary shows --top of them and sums up the
# rest by command, each command once (three commands in turn: any name kept
# by reference into a reused buffer would be overwritten by another's)
"$mw" record -q -o "$T/many" -- sh -c 'for i in $(seq 10); do /bin/true; /bin/echo x; /bin/ls /; done >/dev/null' ||
    fail "memwatch record of 31 processes failed"
"$mw" report --db "$T/many.db" --top 2 "$T/many" >"$T/rep" 2>&1 || fail "report of 31 processes: $(cat "$T/rep")"
more=$(grep "more processes:" "$T/rep") || fail "no line sums up the processes past --top: $(cat "$T/rep")"
echo "$more"
names=$(echo "$more" | grep -o ' [0-9]* of [^ ]* ' | awk '{ print $3 }')
[ "$(echo "$names" | sort | uniq -d)" = "" ] || fail "a command is named twice: $more"
total=$(echo "$more" | sed -n 's/.*\.\.\. \([0-9]*\) more processes:.*/\1/p')
sum=$(echo "$more" | grep -o ' [0-9]* of ' | awk '{ s += $1 } END { print s }')
[ "$total" = "$sum" ] || fail "the commands' counts ($sum) are not the $total processes: $more"
# no command has more processes in the line than in the database
for pair in $(echo "$more" | grep -o ' [0-9]* of [^ ]* ' | awk '{ print $1 ":" $3 }'); do
    n=${pair%%:*} c=${pair#*:}
    dbn=$(sqlite3 "$T/many.db" "SELECT COUNT(*) FROM processes WHERE exe LIKE '%/$c'")
    [ "$n" -le "$dbn" ] || fail "$n processes of $c summed up, $dbn recorded: $more"
done

# a program whose CPU time goes to page faults: fresh memory, touched once
cat >"$T/faults.c" <<'C'
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
int main(void)
{
    for (int i = 0; i < 4; i++) {
        size_t n = 16u << 20;
        char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return 1;
        for (size_t k = 0; k < n; k += 4096)
            p[k] = 1;
        munmap(p, n);
    }
    return 0;
}
C
cc -O1 -o "$T/faults" "$T/faults.c" || fail "cc"
compare faults "$T/faults"
us=$(sqlite3 "$T/db" "SELECT user_ns || ' ' || system_ns || ' ' || minflt FROM processes ORDER BY system_ns DESC LIMIT 1")
read -r u s f <<<"$us"
echo "faults: user $u ns, system $s ns, $f minor faults"
[ "${s:-0}" -gt 0 ] || fail "no system time for page faults ($us)"
[ "${f:-0}" -ge 16000 ] || fail "$f minor faults for 64 MiB of fresh pages"
grep -q "of the CPU time in the kernel" "$T/rep" || fail "the summary gives no system share: $(grep -A2 'CPU time' "$T/rep")"
grep -q "memwatch samples user space only" "$T/rep" || fail "the summary does not say the samples miss the kernel time"
grep -A2 "^CPU time" "$T/rep"

# a second report of the same files reads the database it has; another
# option, or a new file, builds it again
"$mw" report --db "$T/db" "$T/o" >/dev/null 2>"$T/e" || fail "second report failed"
grep -q "not ingested again" "$T/e" || fail "the second report of unchanged files ingested again: $(cat "$T/e")"
"$mw" report --db "$T/db" --no-symbols "$T/o" >/dev/null 2>"$T/e" || fail "report --no-symbols failed"
grep -q "not ingested again" "$T/e" && fail "a report with other options reused the database"
"$mw" report --db "$T/db" --no-symbols "$T/o" >/dev/null 2>"$T/e"
grep -q "not ingested again" "$T/e" || fail "the same options twice: ingested again"
# --sort comm needs no stacks: from no database it ingests without the
# offline unwinding and prints the same table as from a database with whole
# stacks, which it reuses; a full report does not reuse a database of leaves
"$mw" report --db "$T/db" "$T/o" >/dev/null 2>"$T/e" || fail "full report failed"
grep -q "stacks unwound from DWARF" "$T/e" || fail "the full report unwound no stack: $(cat "$T/e")"
"$mw" report --db "$T/db" --sort comm "$T/o" >"$T/c_full" 2>"$T/e" || fail "--sort comm failed"
grep -q "not ingested again" "$T/e" || fail "--sort comm did not reuse the database with whole stacks: $(cat "$T/e")"
"$mw" report --db "$T/db2" --sort comm "$T/o" >"$T/c_leaf" 2>"$T/e" || fail "--sort comm without a database failed"
grep -q "stacks unwound" "$T/e" && fail "--sort comm unwound stacks: $(cat "$T/e")"
cmp -s "$T/c_full" "$T/c_leaf" || fail "--sort comm differs with and without stacks: $(diff "$T/c_full" "$T/c_leaf")"
"$mw" report --db "$T/db2" "$T/o" >/dev/null 2>"$T/e" || fail "full report after --sort comm failed"
grep -q "not ingested again" "$T/e" && fail "a full report reused a database without stacks"
grep -q "stacks unwound from DWARF" "$T/e" || fail "the full report after --sort comm unwound no stack"
head -4 "$T/c_leaf"
MEMWATCH_VERBOSE=2 MEMWATCH_DIR=$T/o LD_PRELOAD="${MW_SAN_PRELOAD:+$MW_SAN_PRELOAD:}$B/libmemwatch.so" "$app" work 20 >/dev/null 2>"$T/e0" || fail "mwp_app under memwatch: $(cat "$T/e0")"
"$mw" report --db "$T/db" --no-symbols "$T/o" >/dev/null 2>"$T/e"
grep -q "not ingested again" "$T/e" && fail "a new raw file was not ingested"
new=$(ls -t "$T/o"/*.mwr | head -1)
sqlite3 "$T/db" "SELECT file FROM processes" | grep -qF "${new##*/}" || fail "the new file ${new##*/} is not in the database"
echo "PASS"
