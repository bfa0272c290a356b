#!/usr/bin/env bash
# tests/report/test_summary_many.sh: the text summary of many short
# processes is bounded by --top in every table and groups the processes by
# command; the job view (ranks, imbalance) appears for MPI ranks only, and
# only when something was bound (docs/report.md, "What the summary says").
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
[ -f "$B/libmemwatch.so" ] || { echo "SKIP: libmemwatch.so not built"; exit 77; }
T=$(mktemp -d /tmp/mw_summary_many.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAILED: $*"; fail=1; }

# 50 processes of 3 commands (true, echo, ls), under one shell
"$mw" record -q -o "$T/many" -- sh -c \
    'for i in $(seq 17); do /bin/true; /bin/echo x; /bin/ls /; done >/dev/null' ||
    bad "memwatch record of the shell loop"
"$mw" report -q --db "$T/many.db" "$T/many" 2>/dev/null || bad "report -q"
n=$(sqlite3 "$T/many.db" "SELECT COUNT(*) FROM processes")
echo "processes recorded: $n"
[ "${n:-0}" -ge 50 ] || bad "$n processes recorded, want at least 50"
for top in 2 3 5; do
    "$mw" report --db "$T/many.db" --top "$top" "$T/many" >"$T/rep$top" 2>/dev/null ||
        bad "report --top $top"
    lines=$(wc -l <"$T/rep$top")
    pids=$(grep -c '^  pid ' "$T/rep$top")
    cmds=$(sed -n '/^Processes (.*by command/,/^Busiest/p' "$T/rep$top" | grep -c '×')
    echo "--top $top: $lines lines, $pids process rows, $cmds command rows"
    [ "$pids" -le "$top" ] || bad "--top $top shows $pids processes"
    [ "$cmds" -le "$top" ] || bad "--top $top shows $cmds commands"
    [ "$lines" -le 60 ] || bad "--top $top: $lines lines for $n processes"
    grep -q "^Per rank/process" "$T/rep$top" && bad "--top $top: a job view for processes that are no MPI ranks"
    grep -q "imbalance:" "$T/rep$top" && bad "--top $top: an imbalance line without MPI ranks"
done
# every command once, its count the database's
sed -n '/^Processes (.*by command/,/^Busiest/p' "$T/rep5" >"$T/cmds"
cat "$T/cmds"
grep -q "^Processes ($n, [0-9]* commands; by command" "$T/cmds" || bad "no command table header for $n processes"
for c in true echo ls; do
    want=$(sqlite3 "$T/many.db" "SELECT COUNT(*) FROM processes WHERE exe LIKE '%/$c'")
    got=$(grep -E "^  $c +×" "$T/cmds" | awk '{ print $2 }' | tr -d '×,')
    [ "$want" -ge 17 ] || bad "$c: $want processes in the database, want 17"
    [ "$got" = "$want" ] || bad "$c: ×$got in the table, $want in the database"
done
# with --top 2 of 4 or more commands: the rest in one line, counts adding up
more=$(grep '^  \.\.\. and [0-9]* more command' "$T/rep2") || bad "--top 2: no line for the other commands"
echo "$more"
shown=$(sed -n '/^Processes (.*by command/,/^Busiest/p' "$T/rep2" | grep '×' | awk '{ print $2 }' | tr -d '×,' | awk '{ s += $1 } END { print s + 0 }')
rest=$(echo "$more" | sed -n 's/.*(\([0-9]*\) processes).*/\1/p')
[ $((shown + rest)) = "$n" ] || bad "--top 2: $shown shown + $rest summed up != $n processes"

# MPI ranks: two processes with a launcher's rank (PMI_RANK); the job view
# only when something is bound (--threshold-ns 1 flags every measured interval)
for r in 0 1 2; do
    if [ "$r" -lt 2 ]; then
        PMI_RANK=$r "$mw" record -q -o "$T/mpi_free" -- "$B/summary_threads" 150 20 >/dev/null ||
            bad "record rank $r"
    fi
    PMI_RANK=$r "$mw" record -q --threshold-ns 1 -o "$T/mpi_bound" -- "$B/summary_threads" 150 20 \
        >/dev/null || bad "record bound rank $r"
done
"$mw" report --all-runs --db "$T/free.db" "$T/mpi_free" >"$T/free" 2>/dev/null || bad "report of unbound ranks"
"$mw" report --all-runs --db "$T/bound.db" "$T/mpi_bound" >"$T/bound" 2>/dev/null || bad "report of bound ranks"
fl=$(sqlite3 "$T/free.db" "SELECT COUNT(*) FROM intervals WHERE bw_bound = 1")
nr=$(sqlite3 "$T/bound.db" "SELECT COUNT(DISTINCT process_id) FROM meta WHERE key = 'rank_from'")
fb=$(sqlite3 "$T/bound.db" "SELECT COUNT(*) FROM intervals WHERE bw_bound = 1")
echo "unbound run: $fl flagged intervals; bound run: $nr ranks, $fb flagged intervals"
[ "$nr" = 3 ] || bad "$nr MPI ranks recorded with PMI_RANK, want 3"
if [ "$fl" = 0 ]; then
    grep -q "^Per rank/process\|imbalance:" "$T/free" && bad "a job view where nothing is bound: $(grep -A4 '^Per rank' "$T/free")"
fi
if [ "$fb" -gt 0 ]; then
    grep -q "^Per rank/process" "$T/bound" || bad "no job view for 3 bound ranks"
    grep -q "imbalance: rank" "$T/bound" || bad "no imbalance line among the ranks"
    grep -A4 "^Per rank/process" "$T/bound"
else
    bad "--threshold-ns 1 flagged no interval"
fi
"$mw" report --all-runs --db "$T/bound.db" --top 2 "$T/mpi_bound" >"$T/bound2" 2>/dev/null
sed -n '/^Per rank/,$p' "$T/bound2"
grep -q "^  \.\.\. 1 more process " "$T/bound2" || bad "--top 2 of 3 ranks: no line for the other rank"
rows=$(sed -n '/^Per rank/,/imbalance/p' "$T/bound2" | grep -cE '^ +[0-9]+ +[^ ]+ +[0-9]+ ')
[ "$rows" = 2 ] || bad "--top 2: $rows rank rows, want 2"
[ "$fail" = 0 ] && echo PASS
exit $fail
