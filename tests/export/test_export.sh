#!/usr/bin/env bash
# tests/export/test_export.sh: `memwatch export` on raw files written by the
# report tests' builder (mwr_fixture: 4 intervals, 2 flagged, timer samples in
# fixture_hot/fixture_cold, page faults), as one process and as a job of
# three (ranks 0-2 on two hosts, made by rewriting the META of copies).
# Every format is read back by an independent reader and compared with the
# report database: pprof by npm pprof-format (tests/js), the trace JSON by a
# trace-event format check, folded stacks and CSV by sums and row counts;
# folded stacks have no stack twice, the trace's counters no point at 0,
# pprof a period type.
# Regions (mwr_fixture ... regions): the csv region table, the trace's
# region slices, pprof's region labels and folded --region-root against the
# JSON summary, the database and the fixture's own figures.
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
check "pprof sample types cpu_samples,flagged_cpu_samples,fault_samples" \
  $([ "$(J "$tmp/p.json" '",".join(t["type"] for t in d["sample_types"])')" = "cpu_samples,flagged_cpu_samples,fault_samples" ] && echo 1 || echo 0)
check "pprof default sample type flagged_cpu_samples" \
  $([ "$(J "$tmp/p.json" 'd["default_sample_type"]')" = flagged_cpu_samples ] && echo 1 || echo 0)
eq "pprof cpu total = report's timer samples" "$(J "$tmp/p.json" 'd["totals"][0]')" "$(q "$db" "SELECT COUNT(*) FROM samples WHERE source='timer'")"
eq "pprof flagged total = timer samples in flagged intervals" "$(J "$tmp/p.json" 'd["totals"][1]')" "$(q "$db" "SELECT SUM(in_flagged) FROM samples WHERE source='timer'")"
eq "pprof fault total = report's fault samples, apart" "$(J "$tmp/p.json" 'd["totals"][2]')" "$(q "$db" "SELECT COUNT(*) FROM samples WHERE source='fault'")"
check "  the fixture has fault samples" $([ "$(q "$db" "SELECT COUNT(*) FROM samples WHERE source='fault'")" -gt 0 ] && echo 1 || echo 0)
top=$("$mw" report "$tmp/one" --db "$tmp/s.db" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); l=d["flagged"]["lines"][0]; print(l["file"].split("/")[-1]+":"+str(l["line"])+" "+l["function"])')
check "pprof top flagged line is the report's ($top)" \
  $([ "$(J "$tmp/p.json" 'd["top"][1][0]')" = "$top" ] && echo 1 || echo 0)
check "pprof labels of a process run alone: pid, host, source (no MPI rank)" \
  $([ "$(J "$tmp/p.json" 'sorted(d["labels"])')" = "['host', 'pid', 'source']" ] && echo 1 || echo 0)
"$mw" export "$tmp/job" --format pprof -o "$tmp/pj.pb.gz" && node "$JS/pprof_decode.js" "$tmp/pj.pb.gz" >"$tmp/pj.json"
check "pprof labels of a job: ranks 0-2 and both hosts" \
  $([ "$(J "$tmp/pj.json" 'd["labels"]["rank"], d["labels"]["host"]')" = "[0, 1, 2] ['fixturB', 'fixture']" ] && echo 1 || echo 0)
# period_type and period (the fixture's META has no sample_rate: one sample each)
pper=$(NODE_PATH=$JS/node_modules node -e '
const p = require("pprof-format").Profile.decode(require("zlib").gunzipSync(require("fs").readFileSync(process.argv[1])));
const str = (i) => p.stringTable.strings[Number(i)];
console.log(p.periodType ? str(p.periodType.type) + " " + str(p.periodType.unit) + " " + Number(p.period) : "none");' "$tmp/p.pb.gz")
check "pprof period: samples count 1 without a sample_rate ($pper)" $([ "$pper" = "samples count 1" ] && echo 1 || echo 0)
"$mw" export "$tmp/one" --format pprof --source timer -o "$tmp/pt.pb.gz" &&
  node "$JS/pprof_decode.js" "$tmp/pt.pb.gz" >"$tmp/pt.json"
eq "pprof --source timer total" "$(J "$tmp/pt.json" 'd["totals"][0]')" "$(q "$db" "SELECT COUNT(*) FROM samples WHERE source='timer'")"

# ---- folded ----
"$mw" export "$tmp/one" --format folded -o "$tmp/f.txt"; check "folded export" $(( $? == 0 ))
eq "folded stacks sum to the report's timer (CPU) samples" "$(awk '{s+=$NF} END {print s+0}' "$tmp/f.txt")" "$(q "$db" "SELECT COUNT(*) FROM samples WHERE source='timer'")"
"$mw" export "$tmp/one" --format folded --flagged -o "$tmp/ff.txt"
eq "folded --flagged sums to the flagged timer samples" "$(awk '{s+=$NF} END {print s+0}' "$tmp/ff.txt")" "$(q "$db" "SELECT SUM(in_flagged) FROM samples WHERE source='timer'")"
"$mw" export "$tmp/one" --format folded --source fault -o "$tmp/fflt.txt"
eq "folded --source fault sums to the fault samples" "$(awk '{s+=$NF} END {print s+0}' "$tmp/fflt.txt")" "$(q "$db" "SELECT COUNT(*) FROM samples WHERE source='fault'")"
check "folded lines are 'frames COUNT'" $(grep -cvE '^[^ ].* [0-9]+$' "$tmp/f.txt" | grep -qx 0 && echo 1 || echo 0)
nodup() { [ -s "$1" ] && [ -z "$(sed 's/ [0-9]*$//' "$1" | sort | uniq -d)" ] && echo 1 || echo 0; }
check "folded: no stack twice" $(nodup "$tmp/f.txt")
check "folded --flagged: no stack twice" $(nodup "$tmp/ff.txt")

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
check "no counter point is 0 (the counters do not fall to 0 where a process ends)" \
  $(T 'sum(1 for p in d.values() for v in p["points"].values() for q in v if q[1] == 0)' | grep -qx 0 && echo 1 || echo 0)
check "each process's threshold series ends at the fixture's threshold (150)" \
  $(T 'all(p["points"]["latency ns/threshold"][-1][1] == 150 for p in d.values() if "latency ns/threshold" in p["points"])' | grep -qx True && echo 1 || echo 0)
check "ranks and hosts named" $(T '"rank 2 @ fixturB" in " ".join(str(p["name"]) for p in d.values())' | grep -qx True && echo 1 || echo 0)

# ---- csv ----
"$mw" export "$tmp/job" --format csv -o "$tmp/i.csv"; check "csv intervals export" $(( $? == 0 ))
eq "csv: one row per interval" "$(python3 -c 'import csv,sys; print(len(list(csv.DictReader(open(sys.argv[1])))))' "$tmp/i.csv")" "$(q "$jdb" 'SELECT COUNT(*) FROM intervals')"
eq "csv: flagged rows" "$(python3 -c 'import csv,sys; print(sum(r["flagged"]=="1" for r in csv.DictReader(open(sys.argv[1]))))' "$tmp/i.csv")" "$(q "$jdb" 'SELECT COUNT(*) FROM intervals WHERE bw_bound=1')"
"$mw" export "$tmp/one" --format csv --table lines --top 1 -o "$tmp/l.csv"
check "csv lines: the top line first" $(sed -n 2p "$tmp/l.csv" | grep -q 'fixture_hot' && echo 1 || echo 0)

# ---- regions (mwr_fixture ... regions: load 0.5-19.5 ms with inner 2.5-7.5 ms, store 20.5-38.5 ms) ----
mkdir -p "$tmp/rg"
"$fix" "$tmp/rg/p.mwr" regions || { echo "FAILED: fixture with regions"; exit 1; }
"$mw" report "$tmp/rg" --json >"$tmp/rg.json" 2>"$tmp/rg.err" || { echo "FAILED: report of regions"; cat "$tmp/rg.err"; exit 1; }
rdb=$tmp/rg/memwatch.db
# the same regions packed (REGION_PACKED, as libmemwatch.so writes them), then a malformed record
mkdir -p "$tmp/rgp"
"$fix" "$tmp/rgp/p.mwr" regions-packed || { echo "FAILED: fixture with packed regions"; exit 1; }
"$mw" report "$tmp/rgp" --json >"$tmp/rgp.json" 2>"$tmp/rgp.err"; check "report of packed regions" $(( $? == 0 ))
grep -q "record of type 14 at byte [0-9]* is malformed, skipped" "$tmp/rgp.err"
check "  the malformed packed record is named and skipped" $(( $? == 0 ))
python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["regions"]; b=json.load(open(sys.argv[2]))["regions"]; sys.exit(a != b)' "$tmp/rg.json" "$tmp/rgp.json"
check "  the packed regions report as the unpacked ones" $(( $? == 0 ))
"$mw" export "$tmp/rg" --format csv --table regions -o "$tmp/rg.csv"; check "csv regions export" $(( $? == 0 ))
"$mw" export "$tmp/rg" --format perfetto -o "$tmp/rg.trace.json"; check "perfetto export with regions" $(( $? == 0 ))
python3 "$S/tests/export/trace_check.py" "$tmp/rg.trace.json" >"$tmp/rg.tc.json"
check "  passes the trace-event format check (slices nest per track)" $(( $? == 0 ))
"$mw" export "$tmp/rg" --format pprof -o "$tmp/rg.pb.gz" && node "$JS/pprof_decode.js" "$tmp/rg.pb.gz" >"$tmp/rg.pprof.json"
check "pprof export with regions, decoded" $(( $? == 0 ))
"$mw" export "$tmp/rg" --format folded --region-root -o "$tmp/rg.folded"; check "folded --region-root" $(( $? == 0 ))
"$mw" export "$tmp/rg" --format folded -o "$tmp/rg.plain.folded"
sqlite3 -separator ' ' "$rdb" "SELECT r.name, COUNT(*) FROM sample_regions sr JOIN regions r ON r.id = sr.region_id JOIN samples s ON s.id = sr.sample_id WHERE s.source = 'timer' GROUP BY r.name" >"$tmp/rg.counts"
python3 - "$tmp/rg.json" "$tmp/rg.csv" "$tmp/rg.tc.json" "$tmp/rg.pprof.json" "$tmp/rg.folded" "$tmp/rg.plain.folded" "$tmp/rg.counts" <<'PY' || fail=1
import csv, json, sys
s = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
tc = json.load(open(sys.argv[3]))
pp = json.load(open(sys.argv[4]))
folded = [l.rsplit(" ", 1) for l in open(sys.argv[5]).read().splitlines()]
plain = [l.rsplit(" ", 1) for l in open(sys.argv[6]).read().splitlines()]
counts = {n: int(c) for n, c in (l.split(" ") for l in open(sys.argv[7]).read().splitlines())}
bad = 0
def check(what, ok, detail=""):
    global bad
    print(("ok: " if ok else "FAILED: ") + what + (" (" + str(detail) + ")" if detail else ""))
    bad |= not ok
regs = {r["region"]: r for r in s["regions"]}
# the fixture's truth, independent of memwatch's code
want = {"load": (19e6, 19), "inner": (5e6, 5), "store": (18e6, 18)}
check("summary: load, inner, store with their times and timer samples",
      {n: (r["time_ns"], r["samples"]) for n, r in regs.items()} == want,
      {n: (r["time_ns"], r["samples"]) for n, r in regs.items()})
check("summary: load half bound (0.5-10 ms of 0.5-19.5 ms flagged)", abs(regs["load"].get("bound_share", -1) - 9.5 / 19) < 1e-9)
# csv --table regions = the summary's table
check("csv: a row per region", sorted(r["region"] for r in rows) == sorted(regs), [r["region"] for r in rows])
for r in rows:
    j = regs.get(r["region"], {})
    got = [int(r[k]) for k in ("threads", "spans", "calls", "time_ns", "measured_ns", "bound_ns", "samples")]
    exp = [j.get(k) for k in ("threads", "spans", "calls", "time_ns", "measured_ns", "bound_ns", "samples")]
    check("csv %s: threads, spans, calls, time, measured, bound, samples as the summary" % r["region"], got == exp, "%s %s" % (got, exp))
    check("csv %s: bound share" % r["region"], abs(float(r["bound_share"]) - j.get("bound_share", -9)) < 1e-4)
# perfetto: a slice per span on the thread's track, the summary's time
sl = [x for p in tc["processes"].values() for x in p["regions"]]
check("perfetto: a region slice per span", len(sl) == sum(r["spans"] for r in regs.values()), len(sl))
check("perfetto: on the thread's track (tid 77)", {x["tid"] for x in sl} == {77})
for n, r in regs.items():
    t = sum(x["dur"] for x in sl if x["name"] == n)
    check("perfetto %s: slices' time = the summary's (%.3f us)" % (n, t), abs(t - r["time_ns"] / 1e3) < 0.01)
inner = [x for x in sl if x["name"] == "inner"][0]; load = [x for x in sl if x["name"] == "load"][0]
check("perfetto: inner nested in load", load["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= load["ts"] + load["dur"])
check("perfetto: the bandwidth-bound slices are still there",
      sum(p["slice_intervals"] for p in tc["processes"].values()) == 2)
# pprof: a region label per region, each with the samples taken in it
lt = pp.get("label_totals", {})
check("pprof: region labels load, inner, store", pp["labels"].get("region") == ["inner", "load", "store"], pp["labels"].get("region"))
for n in regs:
    check("pprof region=%s: its samples (%s)" % (n, counts.get(n)), lt.get("region=" + n) == counts.get(n), lt.get("region=" + n))
# folded --region-root: the same total, each stack under its regions, outermost first
tot = sum(int(c) for _, c in plain)
check("folded --region-root: the same total as without", sum(int(c) for _, c in folded) == tot, tot)
for name, fl in (("folded --region-root", folded), ("folded", plain)):
    st = [a for a, _ in fl]
    check(name + ": no stack twice", len(st) == len(set(st)), sorted({a for a in st if st.count(a) > 1}))
def under(prefix):
    return sum(int(c) for st, c in folded if (st + ";").startswith(prefix))
check("folded: samples under region:load", under("region:load;") == counts["load"], under("region:load;"))
check("folded: region:inner under region:load", under("region:load;region:inner;") == counts["inner"] and under("region:inner;") == 0)
check("folded: samples under region:store", under("region:store;") == counts["store"])
check("folded: outside every region, the stacks as without the option",
      sum(int(c) for st, c in folded if not st.startswith("region:")) == tot - counts["load"] - counts["store"])
sys.exit(bad)
PY

# ---- narrowing ----
"$mw" export "$tmp/job" --format folded --rank 1 -o "$tmp/r1.txt"
eq "--rank 1 covers one process's samples" "$(awk '{s+=$NF} END {print s+0}' "$tmp/r1.txt")" "$(q "$jdb" "SELECT COUNT(*) FROM samples s JOIN processes p ON p.id=s.process_id WHERE p.rank=1 AND s.source='timer'")"
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
eq "  covering what was readable" "$(awk '{s+=$NF} END {print s+0}' "$tmp/bad.txt")" "$(q "$bdb" "SELECT COUNT(*) FROM samples WHERE source='timer'")"
check "  and the status names the damage" $(q "$bdb" "SELECT status FROM processes WHERE file LIKE '%cut.mwr'" | grep -qv '^ok$' && echo 1 || echo 0)
exit $fail
