#!/usr/bin/env bash
# tests/export/test_export.sh: `memwatch export` on raw files written by the
# report tests' builder (mwr_fixture: 4 intervals, 2 flagged, timer samples in
# fixture_hot/fixture_cold, page faults), as one process and as a job of
# three (ranks 0-2 on two hosts, made by rewriting the META of copies).
# Every format is read back by an independent reader and compared with the
# report database: pprof by npm pprof-format (tests/js), the trace JSON by a
# trace-event format check, folded stacks and CSV by sums and row counts.
# Bad input: unknown format, unwritable path, empty directory, damaged files;
# a failed export leaves the destination as it was and no temporary file.
set -u
B=${MW_BUILD_DIR:?}
S=${MW_SOURCE_DIR:?}
mw=$B/memwatch
fix=$B/mwr_fixture
[ -x "$fix" ] || { echo "SKIP: $fix not built"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 command is not installed"; exit 77; }
JS=$S/tests/js
if ! command -v node >/dev/null || [ ! -d "$JS/node_modules/pprof-format" ]; then
  echo "SKIP: node or tests/js/node_modules missing (bash .ci/install-deps installs them)"
  exit 77
fi
tmp=$(mktemp -d /tmp/mw_export.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if [ "$2" = 1 ]; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }
eq() { check "$1 ($2 = $3)" $(( $2 == $3 )); }

mkdir -p "$tmp/one" "$tmp/job" "$tmp/empty" "$tmp/bad"
"$fix" "$tmp/one/p1.mwr" || { echo "FAILED: fixture"; exit 1; }
# a job: ranks 0..2, rank 2 on a second host (same-length META edits)
cp "$tmp/one/p1.mwr" "$tmp/job/r0.mwr"
LC_ALL=C sed 's/pid=77/pid=78/; s/rank=0/rank=1/' "$tmp/one/p1.mwr" >"$tmp/job/r1.mwr"
LC_ALL=C sed 's/pid=77/pid=79/; s/rank=0/rank=2/; s/host=fixture/host=fixturB/' \
  "$tmp/one/p1.mwr" >"$tmp/job/r2.mwr"
"$mw" report -q "$tmp/one" || { echo "FAILED: report"; exit 1; }
db=$tmp/one/memwatch.db
q() { sqlite3 "$1" "$2"; }

# ---- pprof ----
"$mw" export "$tmp/one" --format pprof -o "$tmp/p.pb.gz"; check "pprof export" $(( $? == 0 ))
node "$JS/pprof_decode.js" "$tmp/p.pb.gz" >"$tmp/p.json" 2>"$tmp/p.err"
check "pprof decoded by pprof-format" $(( $? == 0 )) || cat "$tmp/p.err"
J() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
check "pprof sample types samples,flagged_samples" \
  $([ "$(J "$tmp/p.json" '",".join(t["type"] for t in d["sample_types"])')" = "samples,flagged_samples" ] && echo 1 || echo 0)
eq "pprof samples total = report's samples" "$(J "$tmp/p.json" 'd["totals"][0]')" "$(q "$db" 'SELECT COUNT(*) FROM samples')"
eq "pprof flagged total = samples in flagged intervals" "$(J "$tmp/p.json" 'd["totals"][1]')" "$(q "$db" 'SELECT SUM(in_flagged) FROM samples')"
top=$("$mw" report "$tmp/one" --db "$tmp/s.db" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); l=d["flagged"]["lines"][0]; print(l["file"].split("/")[-1]+":"+str(l["line"])+" "+l["function"])')
check "pprof top flagged line is the report's ($top)" \
  $([ "$(J "$tmp/p.json" 'd["top"][1][0]')" = "$top" ] && echo 1 || echo 0)
check "pprof labels of a process run alone: pid, host, source (no MPI rank)" \
  $([ "$(J "$tmp/p.json" 'sorted(d["labels"])')" = "['host', 'pid', 'source']" ] && echo 1 || echo 0)
"$mw" export "$tmp/job" --format pprof -o "$tmp/pj.pb.gz" && node "$JS/pprof_decode.js" "$tmp/pj.pb.gz" >"$tmp/pj.json"
check "pprof labels of a job: ranks 0-2 and both hosts" \
  $([ "$(J "$tmp/pj.json" 'd["labels"]["rank"], d["labels"]["host"]')" = "[0, 1, 2] ['fixturB', 'fixture']" ] && echo 1 || echo 0)
"$mw" export "$tmp/one" --format pprof --source timer -o "$tmp/pt.pb.gz" &&
  node "$JS/pprof_decode.js" "$tmp/pt.pb.gz" >"$tmp/pt.json"
eq "pprof --source timer total" "$(J "$tmp/pt.json" 'd["totals"][0]')" "$(q "$db" "SELECT COUNT(*) FROM samples WHERE source='timer'")"

# ---- folded ----
"$mw" export "$tmp/one" --format folded -o "$tmp/f.txt"; check "folded export" $(( $? == 0 ))
eq "folded stacks sum to the report's samples" "$(awk '{s+=$NF} END {print s+0}' "$tmp/f.txt")" "$(q "$db" 'SELECT COUNT(*) FROM samples')"
"$mw" export "$tmp/one" --format folded --flagged -o "$tmp/ff.txt"
eq "folded --flagged sums to the flagged samples" "$(awk '{s+=$NF} END {print s+0}' "$tmp/ff.txt")" "$(q "$db" 'SELECT SUM(in_flagged) FROM samples')"
check "folded lines are 'frames COUNT'" $(grep -cvE '^[^ ].* [0-9]+$' "$tmp/f.txt" | grep -qx 0 && echo 1 || echo 0)

# ---- trace JSON ----
"$mw" export "$tmp/job" --format perfetto -o "$tmp/t.json"; check "perfetto export of the job" $(( $? == 0 ))
jdb=$tmp/job/memwatch.db
python3 "$S/tests/export/trace_check.py" "$tmp/t.json" >"$tmp/tc.json"
check "trace JSON passes the trace-event format check" $(( $? == 0 ))
T() { python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['processes']; print($1)" "$tmp/tc.json"; }
eq "one named track group per process" "$(T 'sum(1 for p in d.values() if p["name"])')" "$(q "$jdb" 'SELECT COUNT(*) FROM processes')"
eq "bandwidth-bound slices cover the flagged intervals" "$(T 'sum(p["slice_intervals"] for p in d.values())')" "$(q "$jdb" 'SELECT COUNT(*) FROM intervals WHERE bw_bound=1')"
eq "slice time = flagged time (us)" "$(T 'int(round(sum(p["slice_us"] for p in d.values())))')" "$(q "$jdb" 'SELECT SUM(t_end-t_start)/1000 FROM intervals WHERE bw_bound=1')"
eq "latency and threshold counter tracks per process" "$(T 'sum(1 for p in d.values() if "latency ns/latency" in p["counters"] and "latency ns/threshold" in p["counters"])')" 3
check "ranks and hosts named" $(T '"rank 2 @ fixturB" in " ".join(str(p["name"]) for p in d.values())' | grep -qx True && echo 1 || echo 0)

# ---- csv ----
"$mw" export "$tmp/job" --format csv -o "$tmp/i.csv"; check "csv intervals export" $(( $? == 0 ))
eq "csv: one row per interval" "$(python3 -c 'import csv,sys; print(len(list(csv.DictReader(open(sys.argv[1])))))' "$tmp/i.csv")" "$(q "$jdb" 'SELECT COUNT(*) FROM intervals')"
eq "csv: flagged rows" "$(python3 -c 'import csv,sys; print(sum(r["flagged"]=="1" for r in csv.DictReader(open(sys.argv[1]))))' "$tmp/i.csv")" "$(q "$jdb" 'SELECT COUNT(*) FROM intervals WHERE bw_bound=1')"
"$mw" export "$tmp/one" --format csv --table lines --top 1 -o "$tmp/l.csv"
check "csv lines: the top line first" $(sed -n 2p "$tmp/l.csv" | grep -q 'fixture_hot' && echo 1 || echo 0)

# ---- narrowing ----
"$mw" export "$tmp/job" --format folded --rank 1 -o "$tmp/r1.txt"
eq "--rank 1 covers one process's samples" "$(awk '{s+=$NF} END {print s+0}' "$tmp/r1.txt")" "$(q "$jdb" 'SELECT COUNT(*) FROM samples s JOIN processes p ON p.id=s.process_id WHERE p.rank=1')"
"$mw" export "$tmp/job" --format csv --host fixturB -o "$tmp/h.csv"
check "--host keeps that host's intervals only" $(cut -d, -f5 "$tmp/h.csv" | tail -n +2 | sort -u | grep -qx fixturB && echo 1 || echo 0)
out=$("$mw" export "$tmp/job" --format csv --pid 4242 -o "$tmp/none.csv" 2>&1); rc=$?
check "--pid of no process: error ($rc: $out)" $(( rc != 0 )) 
check "  and no file" $([ ! -e "$tmp/none.csv" ] && echo 1 || echo 0)

# ---- bad input ----
echo old >"$tmp/keep.txt"
out=$("$mw" export "$tmp/one" --format svg -o "$tmp/keep.txt" 2>&1); rc=$?
check "unknown format: exit 2 and says so ($out)" $(( rc == 2 )) && grep -q "unknown format 'svg'" <<<"$out" || { echo "FAILED: message"; fail=1; }
out=$("$mw" export "$tmp/one" --format folded -o "$tmp/no/such/dir/f.txt" 2>&1); rc=$?
check "unwritable output path: error naming it ($out)" $(( rc != 0 ))
grep -q "cannot write $tmp/no/such/dir/f.txt" <<<"$out" || { echo "FAILED: message names the path"; fail=1; }
out=$("$mw" export "$tmp/empty" --format folded -o "$tmp/keep.txt" 2>&1); rc=$?
check "empty directory: error ($out)" $(( rc != 0 ))
grep -q "holds no .mwr files" <<<"$out" || { echo "FAILED: empty directory message"; fail=1; }
check "failed exports left the old file" $([ "$(cat "$tmp/keep.txt")" = old ] && echo 1 || echo 0)
check "no temporary file left" $(ls "$tmp" | grep -c '\.tmp\.' | grep -qx 0 && echo 1 || echo 0)
out=$("$mw" export "$tmp/one/memwatch.db" --format pprof 2>&1); rc=$?
check "missing -o: usage error" $(( rc == 2 ))
# damaged raw files: the readable part is exported, the damage reported
cp "$tmp/one/p1.mwr" "$tmp/bad/good.mwr"
head -c 900 "$tmp/one/p1.mwr" >"$tmp/bad/cut.mwr"
out=$("$mw" export "$tmp/bad" --format folded -o "$tmp/bad.txt" 2>&1); rc=$?
check "damaged file: export succeeds ($rc)" $(( rc == 0 ))
grep -q "damaged" <<<"$out"; check "  and says a file was damaged" $(( $? == 0 ))
bdb=$tmp/bad/memwatch.db
eq "  covering what was readable" "$(awk '{s+=$NF} END {print s+0}' "$tmp/bad.txt")" "$(q "$bdb" 'SELECT COUNT(*) FROM samples')"
check "  and the status names the damage" $(q "$bdb" "SELECT status FROM processes WHERE file LIKE '%cut.mwr'" | grep -qv '^ok$' && echo 1 || echo 0)
exit $fail
