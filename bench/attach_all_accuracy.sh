#!/usr/bin/env bash
# bench/attach_all_accuracy.sh: how many samples `memwatch record --all`
# per CPU gives a program of known CPU time where CPUs are shared
# (cli/attach.c, docs/attach.md, "--all"). Beside two busy loops (mwd_data
# compute), RUNS times: --all starts, and once it says it samples, a
# program of 2.0 s of CPU time (mwd_data compute 2000: it measures its own
# thread's CPU time) runs to its end; its samples are counted (memwatch
# report) and divided by 2.0 s x the rate META sample_rate gives; then the
# same program with events of its own threads (memwatch record --external:
# per-thread events, as -p), the same way. Prints each run's ratios and,
# per mode, their mean, standard deviation, lowest and highest. A CPU's
# timer samples whatever runs when it fires, so the per-CPU ratio is
# statistical (about 1 +- 1/sqrt(samples) where the program had half a
# CPU); a thread's own timer runs with its CPU time.
# Needs root (or CAP_PERFMON, or perf_event_paranoid <= 0) and sqlite3.
# Usage: bench/attach_all_accuracy.sh BUILD_DIR [RUNS]
set -euo pipefail
B=${1:?usage: attach_all_accuracy.sh BUILD_DIR [RUNS]}
N=${2:-10}
D=$(find "$B" -name mwd_data -type f -perm -u+x | head -1)
[ -x "$B/memwatch" ] && [ -n "$D" ] || { echo "attach_all_accuracy: memwatch or mwd_data is not built in $B"; exit 1; }
command -v sqlite3 >/dev/null || { echo "attach_all_accuracy: sqlite3 is not installed"; exit 1; }
tmp=$(mktemp -d)
bg=()
trap 'kill "${bg[@]}" 2>/dev/null; rm -rf "$tmp"' EXIT
"$D" compute 100000000 >/dev/null & bg+=($!)
"$D" compute 100000000 >/dev/null & bg+=($!)
for ((r = 1; r <= N; r++)); do
    o=$tmp/r$r
    "$B/memwatch" record -o "$o" --all 2>"$o.err" >/dev/null &
    m=$!
    for ((i = 0; i < 2400; i++)); do
        grep -qs "sampling every process per CPU\|sampling your processes" "$o.err" && break
        kill -0 $m 2>/dev/null || { echo "attach_all_accuracy: --all did not sample per CPU: $(cat "$o.err")"; exit 1; }
        sleep 0.02
    done
    "$D" compute 2000 >/dev/null &
    p=$!
    wait $p
    kill -INT $m
    wait $m
    "$B/memwatch" report -q --db "$o.db" "$o" >/dev/null 2>&1
    q="select count(*), (select value from meta m where m.process_id = p.id and
        m.key = 'sample_rate') from samples s join processes p on p.id = s.process_id
        where p.exe like '%/mwd_data'"
    echo "per-CPU $(sqlite3 "$o.db" "$q and p.pid = $p group by p.id" | tr '|' ' ')"
    "$B/memwatch" record -q -o "$o.x" --external -- "$D" compute 2000 >/dev/null 2>&1
    "$B/memwatch" report -q --db "$o.x.db" "$o.x" >/dev/null 2>&1
    echo "per-thread $(sqlite3 "$o.x.db" "$q group by p.id" | tr '|' ' ')"
done | awk '{ x = $2 / (2.0 * $3); printf "run %d %-10s %d samples at %d/s, %.3f of 2.0 s x rate\n", int((NR + 1) / 2), $1, $2, $3, x
              k = $1; n[k]++; s[k] += x; ss[k] += x * x
              if (n[k] == 1 || x < lo[k]) lo[k] = x; if (n[k] == 1 || x > hi[k]) hi[k] = x }
            END { for (k in n) { m = s[k] / n[k]
                  printf "%-10s %d runs: mean %.3f, sd %.3f, lowest %.3f, highest %.3f\n", k, n[k], m, sqrt(ss[k] / n[k] - m * m), lo[k], hi[k] } }'
