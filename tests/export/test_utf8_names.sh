#!/usr/bin/env bash
# tests/export/test_utf8_names.sh: a real program whose names are not UTF-8,
# recorded under libmemwatch.so, in every output. tests/export/utf8_app,
# copied to a file named "u\xff\xfe" and run with the argument
# "arg\xc3(\xe2", has the source file "/src/utf8\xff\xfe/app\xc3(.c", the
# functions "stream\xff\xfe" and "sum\xe2\x82", the region "phase\xff\xc3("
# (stored as "phase??(": the report keeps region names UTF-8 with '?') and
# the thread "w\xfe\xff". The database keeps the other names' bytes
# (checked, so that the test tests something); every output must decode as
# strict UTF-8, each byte that is not part of valid UTF-8 written as U+FFFD:
#  - report --json (json.loads of the strictly decoded text): exe, command
#    line, the functions and files of the top lines, the region;
#  - the text summary;
#  - the HTML report;
#  - the trace (trace_check.py, which decodes strictly): process, thread and
#    region names;
#  - CSV: intervals, lines (file, function), regions;
#  - folded stacks (and --region-root): the function and region names;
#  - pprof: every string of the string table read raw from the protobuf, and
#    the names as pprof-format (tests/js) decodes them.
# Also, on this real recording: folded stacks have no stack twice and sum to
# the samples; pprof's period type is cpu nanoseconds with 1e9 / META
# sample_rate; the last interval of the process carries the threshold in
# force (in the raw file libmemwatch.so wrote, in the database and in the
# CSV), and the trace's counters never fall to 0.
set -u
[ -n "${MW_SAN_PRELOAD:-}" ] && export LD_PRELOAD=$MW_SAN_PRELOAD
B=${MW_BUILD_DIR:?}
S=${MW_SOURCE_DIR:?}
mw=$B/memwatch
app=$B/utf8_app
[ -x "$app" ] || { echo "SKIP: $app not built"; exit 77; }
[ -f "$B/libmemwatch.so" ] || { echo "SKIP: libmemwatch.so not built"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 command is not installed"; exit 77; }
JS=$S/tests/js
if ! command -v node >/dev/null || [ ! -d "$JS/node_modules/pprof-format" ]; then
  echo "SKIP: node or tests/js/node_modules missing (bash .ci/install-deps installs them)"
  exit 77
fi
tmp=$(mktemp -d /tmp/mw_utf8.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if [ "$2" = 1 ]; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }

exe=$tmp/$(printf 'u\xff\xfe')
cp "$app" "$exe"
"$mw" record -q -o "$tmp/run" --threshold-ns 1 -- "$exe" 0.4 "$(printf 'arg\xc3(\xe2')" >"$tmp/rec.out" 2>&1
check "memwatch record of the program named u\\xff\\xfe" $(( $? == 0 )) || cat "$tmp/rec.out"
"$mw" report "$tmp/run" --json >"$tmp/s.json" 2>"$tmp/s.err"; check "report --json" $(( $? == 0 )) || cat "$tmp/s.err"
"$mw" report "$tmp/run" >"$tmp/s.txt" 2>>"$tmp/s.err"; check "report (text)" $(( $? == 0 ))
"$mw" report "$tmp/run" -q --html "$tmp/r.html" 2>>"$tmp/s.err"; check "report --html" $(( $? == 0 ))
db=$tmp/run/memwatch.db
hx() { sqlite3 "$db" "$1"; }
# the bytes reached the database as they were
check "database: exe ends in FFFE" $(hx "SELECT COUNT(*) FROM processes WHERE hex(exe) LIKE '%2F75FFFE'" | grep -qx 1 && echo 1 || echo 0)
check "database: function stream\\xff\\xfe" $(hx "SELECT COUNT(*) > 0 FROM pcs WHERE hex(function) = hex(CAST(X'73747265616DFFFE' AS TEXT))" | grep -qx 1 && echo 1 || echo 0)
# region names are stored with '?' for bytes that are not UTF-8 (report/ingest_region.c)
check "database: region phase??(" $(hx "SELECT COUNT(*) FROM regions WHERE name = 'phase??('" | grep -qx 1 && echo 1 || echo 0)
for a in "perfetto t.json" "csv i.csv" "folded f.txt" "pprof p.pb.gz"; do
  set -- $a
  "$mw" export "$tmp/run" --format "$1" -o "$tmp/$2"; check "export $1" $(( $? == 0 ))
done
"$mw" export "$tmp/run" --format folded --region-root -o "$tmp/fr.txt"; check "export folded --region-root" $(( $? == 0 ))
"$mw" export "$tmp/run" --format folded --flagged -o "$tmp/ff.txt"; check "export folded --flagged" $(( $? == 0 ))
"$mw" export "$tmp/run" --format csv --table lines -o "$tmp/l.csv"; check "export csv --table lines" $(( $? == 0 ))
"$mw" export "$tmp/run" --format csv --table regions -o "$tmp/rg.csv"; check "export csv --table regions" $(( $? == 0 ))
python3 "$S/tests/export/trace_check.py" "$tmp/t.json" >"$tmp/tc.json"
check "trace passes the trace-event format check (strict UTF-8)" $(( $? == 0 ))
# the folded stacks hold the CPU (timer) samples
sqlite3 -separator ' ' "$db" "SELECT COUNT(*), (SELECT SUM(in_flagged) FROM samples WHERE source = 'timer'), (SELECT sample_rate FROM (SELECT CAST(value AS INTEGER) AS sample_rate FROM meta WHERE key='sample_rate') LIMIT 1) FROM samples WHERE source = 'timer'" >"$tmp/n.txt"
sqlite3 -separator ' ' "$db" "SELECT p.pid, i.threshold_ns, COALESCE(i.latency_ns, 'NULL') FROM intervals i JOIN processes p ON p.id = i.process_id WHERE i.id = (SELECT MAX(id) FROM intervals j WHERE j.process_id = i.process_id)" >"$tmp/last.txt"
sqlite3 "$db" "SELECT MAX(threshold_ns) FROM intervals" >"$tmp/thr.txt"
NODE_PATH=$JS/node_modules node -e '
const { Profile } = require("pprof-format");
const p = Profile.decode(require("zlib").gunzipSync(require("fs").readFileSync(process.argv[1])));
const str = (i) => p.stringTable.strings[Number(i)];
console.log(JSON.stringify({
  period_type: p.periodType ? [str(p.periodType.type), str(p.periodType.unit)] : null,
  period: Number(p.period),
  functions: p.function.map((f) => str(f.name)),
  files: p.function.map((f) => str(f.filename)),
  mappings: p.mapping.map((m) => str(m.filename)),
  regions: [...new Set(p.sample.flatMap((s) => s.label.filter((l) => str(l.key) === "region").map((l) => str(l.str))))],
}));' "$tmp/p.pb.gz" >"$tmp/pp.json" 2>"$tmp/pp.err"
check "pprof decoded by pprof-format" $(( $? == 0 )) || cat "$tmp/pp.err"

python3 - "$tmp" <<'PY' || fail=1
import csv, gzip, io, json, sys
t = sys.argv[1]
bad = 0
def check(what, ok, detail=""):
    global bad
    d = str(detail)
    print(("ok: " if ok else "FAILED: ") + what + (" (" + (d if len(d) < 400 else d[:400] + "...") + ")" if detail != "" else ""))
    bad |= not ok
R = "\ufffd"
EXE, ARG = "u" + R * 2, "arg" + R + "(" + R
STREAM, SUM = "stream" + R * 2, "sum" + R * 2
FILE, REGION, THREAD = "/src/utf8" + R * 2 + "/app" + R + "(.c", "phase??(", "w" + R * 2
def strict(name):
    b = open(t + "/" + name, "rb").read()
    try:
        s = b.decode("utf-8")
        check(name + ": valid UTF-8 (%d bytes)" % len(b), True)
        return s
    except UnicodeDecodeError as e:
        check(name + ": valid UTF-8", False, e)
        return b.decode("utf-8", "replace")
# report --json
s = json.loads(strict("s.json"))
p = s["processes"][0]
check("json: exe ends in u + two U+FFFD", p.get("exe", "").endswith("/" + EXE), p.get("exe"))
check("json: command line holds arg U+FFFD ( U+FFFD", ARG in p.get("cmdline", ""), p.get("cmdline"))
fn = {l.get("function") for k in ("flagged", "overall") for l in s.get(k, {}).get("lines", [])}
check("json: the lines' functions " + STREAM + ", " + SUM, {STREAM, SUM} <= fn, fn)
files = {l.get("file") for k in ("flagged", "overall") for l in s.get(k, {}).get("lines", [])}
check("json: the lines' file " + FILE, FILE in files, files)
check("json: the region", REGION in {r.get("region") for r in s.get("regions", [])}, s.get("regions"))
# text summary
txt = strict("s.txt")
check("text: the function names with U+FFFD", STREAM in txt and SUM in txt)
check("text: the program's name with U+FFFD", EXE in txt)
# HTML
h = strict("r.html")
check("html: the program's name and a function with U+FFFD", EXE in h and STREAM in h)
# trace
tc = json.load(open(t + "/tc.json"))["processes"]
names = " ".join(str(x["name"]) for x in tc.values())
threads = [n for x in tc.values() for n in x["threads"]]
regs = {r["name"] for x in tc.values() for r in x["regions"]}
check("trace: the process named " + EXE, EXE in names, names)
check("trace: the thread named " + THREAD, THREAD in threads, threads)
check("trace: the region slice " + REGION, REGION in regs, regs)
strict("t.json")
# the last interval of the process: the threshold in force; counters never 0
last = [l.split() for l in open(t + "/last.txt").read().splitlines()]
thr = float(open(t + "/thr.txt").read())
check("the last interval carries the threshold in force (%g)" % thr,
      last and all(float(x[1]) == thr and thr > 0 for x in last), last)
zero = [(k, q) for x in tc.values() for k, v in x["points"].items() for q in v if q[1] == 0]
check("trace: no counter point is 0", not zero, zero[:5])
ends = [v[-1][1] for x in tc.values() for k, v in x["points"].items() if k == "latency ns/threshold"]
check("trace: every threshold series ends at the threshold (%g)" % thr, ends and all(e == thr for e in ends), ends)
# the raw file itself (include/memwatch/mwr.h): its last MWR_INTERVAL (type
# 4: t_start, t_end, flags, nthreads, latency_ns, threshold_ns) carries the
# threshold in force as libmemwatch.so wrote it
import glob, struct
for path in glob.glob(t + "/run/**/*.mwr", recursive=True):
    b = open(path, "rb").read()
    off, ivs = struct.unpack_from("<I", b, 12)[0], []
    while off + 8 <= len(b):
        typ, size = struct.unpack_from("<II", b, off)
        if size < 8:
            break
        if typ == 4 and off + 8 + 40 <= len(b):
            ivs.append(struct.unpack_from("<QQIIdd", b, off + 8))
        off += size
    check("raw file: the last interval, written at the process's end, has threshold %g" % thr,
          ivs and ivs[-1][5] == thr, ivs[-1:])
# CSV
rows = list(csv.DictReader(io.StringIO(strict("i.csv"))))
check("csv intervals: the last row's threshold_ns is the threshold", rows and rows[-1]["threshold_ns"] != "" and float(rows[-1]["threshold_ns"]) == thr, rows[-1:])
lines = list(csv.DictReader(io.StringIO(strict("l.csv"))))
check("csv lines: file and functions with U+FFFD", FILE in {r["file"] for r in lines} and {STREAM, SUM} <= {r["function"] for r in lines},
      [(r["file"], r["function"]) for r in lines])
rg = list(csv.DictReader(io.StringIO(strict("rg.csv"))))
check("csv regions: the region with U+FFFD", REGION in {r["region"] for r in rg}, [r["region"] for r in rg])
# folded
n, nfl, rate = (int(x) for x in open(t + "/n.txt").read().split())
for name, total in (("f.txt", n), ("fr.txt", n), ("ff.txt", nfl)):
    fl = [l.rsplit(" ", 1) for l in strict(name).splitlines()]
    st = [a for a, _ in fl]
    dup = sorted({a for a in st if st.count(a) > 1})
    check(name + ": no stack twice (%d lines)" % len(st), not dup, dup)
    check(name + ": counts sum to the samples (%d)" % total, sum(int(c) for _, c in fl) == total, sum(int(c) for _, c in fl))
f = strict("f.txt")
check("folded: the frames " + STREAM + " and " + SUM, ";" + STREAM + " " in f and ";" + SUM + " " in f)
check("folded --region-root: the frame region:" + REGION, "region:" + REGION + ";" in strict("fr.txt"))
# pprof: raw string table, then pprof-format's view
def varint(b, i):
    v = sh = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << sh; sh += 7
        if c < 0x80:
            return v, i
def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i)
        fno, w = k >> 3, k & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 2:
            ln, i = varint(b, i); v = b[i:i + ln]; i += ln
        elif w == 1:
            v = b[i:i + 8]; i += 8
        elif w == 5:
            v = b[i:i + 4]; i += 4
        else:
            raise ValueError("wire type %d" % w)
        yield fno, v
raw = gzip.decompress(open(t + "/p.pb.gz", "rb").read())
st = [v for fno, v in fields(raw) if fno == 6]
badst = []
for x in st:
    try:
        x.decode("utf-8")
    except UnicodeDecodeError:
        badst.append(x)
check("pprof: every string of the string table is UTF-8 (%d strings)" % len(st), st and not badst, badst)
check("pprof: the string table holds U+FFFD (names replaced, not dropped)", any(R.encode() in x for x in st))
pp = json.load(open(t + "/pp.json"))
check("pprof: functions " + STREAM + ", " + SUM, {STREAM, SUM} <= set(pp["functions"]), pp["functions"])
check("pprof: file " + FILE, FILE in pp["files"])
check("pprof: the program's mapping " + EXE, any(m.endswith("/" + EXE) for m in pp["mappings"]), pp["mappings"])
check("pprof: region label " + REGION, REGION in pp["regions"], pp["regions"])
check("pprof: period_type cpu nanoseconds", pp["period_type"] == ["cpu", "nanoseconds"], pp["period_type"])
check("pprof: period = 1e9 / sample_rate %d" % rate, rate > 0 and pp["period"] == 10**9 // rate, pp["period"])
sys.exit(bad)
PY
exit $fail
