#!/usr/bin/env bash
# tests/report/test_summary_fixture.sh: on a written raw file
# (summary_fixture): memwatch's own thread is not counted as the program's,
# the main thread is listed with its CPU time derived as the process's less
# its other threads', the data object with samples inside flagged intervals
# comes first, and shares of fewer than 20 samples are marked too few.
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
fix=$B/summary_fixture
[ -x "$fix" ] || { echo "SKIP: $fix not built"; exit 77; }
T=$(mktemp -d /tmp/mw_summary_fixture.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAILED: $*"; fail=1; }
mkdir "$T/run"
"$fix" "$T/run/p.mwr" || { echo "FAILED: fixture"; exit 1; }
"$mw" report --db "$T/db" "$T/run" >"$T/rep" 2>"$T/err" || bad "report: $(cat "$T/err")"
cat "$T/rep"
sqlite3 "$T/db" "SELECT tid, name, user_ns, system_ns FROM threads ORDER BY tid"
grep -q "^  pid 77 .* 2 threads," "$T/rep" || bad "not 2 threads (main and worker; memwatch's own left out)"
grep -q "^    thread memwatch" "$T/rep" && bad "memwatch's own thread listed"
[ "$(grep -c '^    thread ' "$T/rep")" = 2 ] || bad "not 2 thread rows"
# main (30 timer samples and 16 page faults): 1.00 + 0.10 s of the process less the worker's 0.30 s and memwatch's 0.05 s
grep -qE "^    thread threaded +tid 77 +46 samples, CPU user 0\.65 s, system 0\.10 s, 20 samples in flagged intervals, main thread \(CPU time derived: the process's less its other threads'\)" "$T/rep" ||
    bad "main thread row: $(grep 'tid 77 ' "$T/rep")"
grep -qE "^    thread worker +tid 78 +10 samples, CPU user 0\.30 s, system 0\.00 s, 4 samples in flagged intervals$" "$T/rep" ||
    bad "worker row: $(grep 'tid 78 ' "$T/rep")"
# --by thread: the main thread's derived CPU time, memwatch's thread absent
"$mw" report --db "$T/db" --by thread "$T/run" >"$T/by" 2>/dev/null || bad "--by thread"
sed -n '/^By thread/,$p' "$T/by"
grep -qE "^  77 threaded \(tid 77\) +0\.750 s" "$T/by" || bad "--by thread main row: $(grep 'tid 77)' "$T/by")"
sed -n '/^By thread/,$p' "$T/by" | grep -q "memwatch" && bad "--by thread lists memwatch's own thread"
# objects: A (12 fault samples, none in flagged intervals) and B (4, all
# inside) come from one allocation site: one row, the sizes' range and both;
# fault samples name data where it was first touched, counted apart
objs=$(sed -n '/^Top data objects/,/^$/p' "$T/rep")
first=$(echo "$objs" | grep -m1 'malloc(')
echo "$first" | grep -q "malloc(4194304..8388608) .*, 2 allocations, first touched: 16 fault samples, 4 in flagged intervals" || bad "the site's row: $objs"
[ "$(echo "$objs" | grep -c 'malloc(')" = 1 ] || bad "one site, more than one row: $objs"
echo "$objs" | grep -q "^Top data objects (0 samples with a data address" || bad "fault samples counted as data addresses: $objs"
echo "$objs" | grep -q "too few samples (16, fewer than 20)" || bad "16 fault samples not marked too few"
echo "$first" | grep -q "\[16 of 16, 95% CI 80.6-100.0%, too few samples\]" || bad "object row's interval: $first"
# code inside flagged intervals: 20 samples, each share with its count and interval
grep -A3 "^Top code inside flagged intervals (timer samples: 20)" "$T/rep" | grep -q "fixture_main_work  \[16 of 20, 95% CI 58.4-91.9%\]" ||
    bad "flagged code shares: $(grep -A4 '^Top code inside' "$T/rep")"
# JSON keeps every thread with the derived mark, and the commands
"$mw" report --db "$T/db" --json "$T/run" >"$T/json" 2>/dev/null || bad "--json"
python3 - "$T/json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
th = {t["tid"]: t for t in d["threads"]}
ok = set(th) == {77, 78} and th[77].get("cpu_derived") is True and th[77]["main"] == 1
ok = ok and d["processes"][0]["threads"] == 2
ok = ok and [c["command"] for c in d["commands"]] == ["threaded"] and d["commands"][0]["processes"] == 1
print("ok: JSON threads and commands" if ok else "FAILED: JSON %s %s" % (d["threads"], d.get("commands")))
sys.exit(0 if ok else 1)
PY
[ "$fail" = 0 ] && echo PASS
exit $fail
