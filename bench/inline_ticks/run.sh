#!/usr/bin/env bash
# bench/inline_ticks/run.sh: the ticks of inline intervals on a loaded
# machine (preload/lazy.c, "the inline tick"; docs/overhead.md, "Inline
# intervals on a loaded machine"), side by side in one run:
#  1. the two clocks alone (ticks.c): a 10 ms CPU-time timer and a 10 ms
#     perf task-clock event of a spinning thread, ROUNDS times each, idle
#     and beside stress-ng --cpu (cores + 1);
#  2. memwatch on tests/preload's mwp_app cpuwork 600 (single-threaded: its
#     intervals are inline) at MEMWATCH_RATE=1000, beside the same load,
#     ROUNDS runs per build, alternated: intervals with a latency reading
#     (about 60 expected) and samples lost (rings the ticks drain too late).
#     Each run waits until its recording began (MWP_WAIT_BEGUN), so that a
#     late lazy start does not count;
#  3. the lazy start where the timer does not come (preload/lazy.c,
#     lazy_retry): the timer alone on a thread that reads its CPU clock
#     every 1-2 us (ticks.c LOOP 1000), 200 ms of CPU time, loaded: runs
#     without a single tick (from none to a third, one batch to the next);
#     then memwatch on that thread (ticks none; and with MEMWATCH_LAZY=tick,
#     which the other build may ignore) and on tests/preload's
#     mwp_nofp (a loop that reads its CPU clock, then memset, recursion, a
#     signal handler), loaded, ROUNDS runs per build: runs whose recording
#     never began (a file of a short process).
# Usage: bench/inline_ticks/run.sh BUILD_DIR [ROUNDS [OTHER_BUILD_DIR]]
# With OTHER_BUILD_DIR (a build of another commit) both are run and their
# medians compared. Needs stress-ng and a C compiler.
set -euo pipefail
B=$(cd "${1:?usage: run.sh BUILD_DIR [ROUNDS [OTHER_BUILD_DIR]]}" && pwd)
R=${2:-10}
O=${3:+$(cd "$3" && pwd)}
here=$(cd "$(dirname "$0")" && pwd)
command -v stress-ng >/dev/null || { echo "inline_ticks: stress-ng is not installed"; exit 1; }
tmp=$(mktemp -d)
stress=""
trap '[ -n "$stress" ] && kill $stress 2>/dev/null; rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/ticks" "$here/ticks.c"
med() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
clocks() {
    for i in $(seq "$R"); do
        for s in timer perf; do "$tmp/ticks" $s 10 1000 >>"$tmp/$1.$s"; done
    done
    for s in timer perf; do
        t=$(awk '{print $2}' "$tmp/$1.$s" | med); g=$(sed 's/.*largest gap \([0-9.]*\).*/\1/' "$tmp/$1.$s" | sort -n | tail -1)
        echo "  $1 $s: median $t ticks per CPU second of 100, largest gap $g ms"
    done
}
echo "inline_ticks: the clocks alone, $R runs each"
clocks idle
stress-ng --cpu $(( $(nproc) + 1 )) --timeout 3600 >/dev/null 2>&1 &
stress=$!
sleep 1
clocks loaded
# runs of the timer alone on a clock-reading thread with no tick at all
silent() {
    local n=0
    for i in $(seq "$R"); do
        "$tmp/ticks" timer 10 200 1000 | grep -q 'first after -1' && n=$((n + 1))
    done
    echo "$n"
}
echo "inline_ticks: memwatch on mwp_app cpuwork 600 beside stress-ng --cpu $(( $(nproc) + 1 )), $R runs per build"
one() {
    local b=$1 out=$tmp/out
    rm -rf "$out"; mkdir -p "$out"
    env -i PATH="$PATH" HOME="$tmp" MWP_WAIT_BEGUN=1 MEMWATCH_RATE=1000 MEMWATCH_DIR="$out" \
        LD_PRELOAD="$b/libmemwatch.so" "$b/mwp_app" cpuwork 600 >/dev/null 2>&1 || true
    "$b/mwp_check" "$out" | head -1 | tr ' ' '\n' | awk -F= '$1=="lat"{l=$2} $1=="lost"{x=$2} END {print l+0, x+0}'
}
for i in $(seq "$R"); do
    one "$B" >>"$tmp/this"
    [ -n "$O" ] && one "$O" >>"$tmp/other"
done
report() {
    echo "  $1: intervals with latency median $(awk '{print $1}' "$2" | med) (min $(awk '{print $1}' "$2" | sort -n | head -1)), samples lost median $(awk '{print $2}' "$2" | med) (max $(awk '{print $2}' "$2" | sort -n | tail -1))"
}
report "$B" "$tmp/this"
echo "inline_ticks: the timer on a thread that reads its CPU clock every 1-2 us, 200 ms of CPU time, $R runs"
echo "  loaded: $(silent) of $R runs without a single tick"
# never B PROGRAM ARGS...: 1 where the program's recording never began
never() {
    local b=$1 out=$tmp/out
    shift
    rm -rf "$out"; mkdir -p "$out"
    env -i PATH="$PATH" HOME="$tmp" MEMWATCH_DIR="$out" ${NEVER_ENV:-} LD_PRELOAD="$b/libmemwatch.so" "$@" >/dev/null 2>&1 || true
    "$b/mwp_check" "$out" | head -1 | grep -c -- '-short\.mwr' || true
}
for i in $(seq "$R"); do
    for b in "$B" ${O:+"$O"}; do
        echo "$b $(never "$b" "$tmp/ticks" none 10 200 1000) $(never "$b" "$b/mwp_nofp" 0.5)" \
            "$(NEVER_ENV=MEMWATCH_LAZY=tick never "$b" "$tmp/ticks" none 10 200 1000)" >>"$tmp/never"
    done
done
for b in "$B" ${O:+"$O"}; do
    awk -v b="$b" -v r="$R" '$1 == b {t += $2; n += $3; k += $4} END {
        printf "  %s: never began in %d of %d runs of the clock-reading thread (%d with MEMWATCH_LAZY=tick), %d of %d of mwp_nofp\n", b, t, r, k, n, r }' "$tmp/never"
done
if [ -n "$O" ]; then
    report "$O" "$tmp/other"
    a=$(awk '{s+=$2} END {print s}' "$tmp/this"); b=$(awk '{s+=$2} END {print s}' "$tmp/other")
    la=$(awk '{s+=$1} END {print s}' "$tmp/this"); lb=$(awk '{s+=$1} END {print s}' "$tmp/other")
    echo "  intervals with latency, this / other: $la / $lb = $(awk -v a="$la" -v b="$lb" 'BEGIN {printf "%.2f", b ? a / b : 0}')"
    echo "  samples lost, this / other: $a / $b"
fi
