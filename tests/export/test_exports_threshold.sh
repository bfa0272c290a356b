#!/usr/bin/env bash
# tests/export/test_exports_threshold.sh: the threshold of a process's last,
# partial interval, and names that are not UTF-8, on a raw file from
# mwr_exit_fixture (written as recorders that left the threshold of the last
# interval out wrote it: threshold 0 there; host "node\xff\xfe", command
# line "exit\xe2\x82 run", exe "/bin/exit\xc3(").
#  - the database: the last interval carries the threshold in force (150),
#    the intervals without a reading have no latency (NULL);
#  - the trace: per process, the latency counter has a point per reading
#    only (300, then 100), the threshold series is 150 at every point, and
#    no counter point is 0 (the counters do not fall to 0 at the process's
#    end);
#  - CSV: the last row's threshold_ns is 150, latency_ns empty where no
#    reading; the host cell is "node" and two U+FFFD;
#  - every output decodes as strict UTF-8 with each byte that is not UTF-8
#    as U+FFFD (JSON summary, trace, CSV, folded, pprof's string table, HTML,
#    the text summary);
#  - pprof's period: cpu nanoseconds, 1e9 / META sample_rate (500: 2000000);
#    --source fault: page_faults, META fault_period (16);
#  - folded: no stack twice, counts summing to the samples.
set -u
B=${MW_BUILD_DIR:?}
S=${MW_SOURCE_DIR:?}
mw=$B/memwatch
fix=$B/mwr_exit_fixture
[ -x "$fix" ] || { echo "SKIP: $fix not built"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 command is not installed"; exit 77; }
JS=$S/tests/js
if ! command -v node >/dev/null || [ ! -d "$JS/node_modules/pprof-format" ]; then
  echo "SKIP: node or tests/js/node_modules missing (bash .ci/install-deps installs them)"
  exit 77
fi
tmp=$(mktemp -d /tmp/mw_exports_thr.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if [ "$2" = 1 ]; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }

mkdir -p "$tmp/run"
"$fix" "$tmp/run/p.mwr" || { echo "FAILED: fixture"; exit 1; }
"$mw" report "$tmp/run" --json >"$tmp/s.json" 2>"$tmp/s.err" || { echo "FAILED: report"; cat "$tmp/s.err"; exit 1; }
"$mw" report "$tmp/run" >"$tmp/s.txt" 2>>"$tmp/s.err" || { echo "FAILED: text report"; exit 1; }
"$mw" report "$tmp/run" -q --html "$tmp/r.html" 2>>"$tmp/s.err" || { echo "FAILED: report --html"; exit 1; }
db=$tmp/run/memwatch.db
for a in "perfetto t.json" "csv i.csv" "folded f.txt" "pprof p.pb.gz"; do
  set -- $a
  "$mw" export "$tmp/run" --format "$1" -o "$tmp/$2"; check "export $1" $(( $? == 0 ))
done
"$mw" export "$tmp/run" --format pprof --source fault -o "$tmp/pf.pb.gz"; check "export pprof --source fault" $(( $? == 0 ))
"$mw" export "$tmp/run" --format csv --table lines -o "$tmp/l.csv"; check "export csv --table lines" $(( $? == 0 ))
python3 "$S/tests/export/trace_check.py" "$tmp/t.json" >"$tmp/tc.json"
check "trace passes the trace-event format check (strict UTF-8)" $(( $? == 0 ))
sqlite3 -separator ' ' "$db" "SELECT t_start, COALESCE(latency_ns, 'NULL'), threshold_ns FROM intervals ORDER BY t_start" >"$tmp/iv.txt"
# pprof-format (tests/js) decodes the profile; its strings are checked raw below
NODE_PATH=$JS/node_modules node -e '
const { Profile } = require("pprof-format");
const zlib = require("zlib"), fs = require("fs");
const out = {};
for (const [k, f] of [["all", process.argv[1]], ["fault", process.argv[2]]]) {
  const p = Profile.decode(zlib.gunzipSync(fs.readFileSync(f)));
  const str = (i) => p.stringTable.strings[Number(i)];
  out[k] = { period_type: p.periodType ? [str(p.periodType.type), str(p.periodType.unit)] : null,
             period: Number(p.period),
             hosts: p.sample.flatMap((s) => s.label.filter((l) => str(l.key) === "host").map((l) => str(l.str))) };
}
console.log(JSON.stringify(out));' "$tmp/p.pb.gz" "$tmp/pf.pb.gz" >"$tmp/pp.json" 2>"$tmp/pp.err"
check "pprof decoded by pprof-format" $(( $? == 0 )) || cat "$tmp/pp.err"

python3 - "$tmp" <<'PY' || fail=1
import csv, gzip, io, json, sys
t = sys.argv[1]
bad = 0
def check(what, ok, detail=""):
    global bad
    print(("ok: " if ok else "FAILED: ") + what + (" (" + str(detail) + ")" if detail else ""))
    bad |= not ok
R = "\ufffd"
def strict(name):
    b = open(t + "/" + name, "rb").read()
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError as e:
        check(name + " is valid UTF-8", False, e)
        return b.decode("utf-8", "replace")
# the database: the last interval carries the threshold in force
iv = [l.split() for l in open(t + "/iv.txt").read().splitlines()]
check("4 intervals", len(iv) == 4, iv)
check("the last interval's threshold is the one in force (150)", iv and float(iv[-1][2]) == 150, iv[-1:])
check("every interval's threshold is 150", all(float(r[2]) == 150 for r in iv), iv)
check("intervals without a reading have no latency (NULL)", [r[1] for r in iv] == ["300.0", "100.0", "NULL", "NULL"], iv)
# the trace
tc = json.load(open(t + "/tc.json"))["processes"]
pr = [p for p in tc.values() if "latency ns/latency" in p["points"]]
check("one process with latency points", len(pr) == 1, list(tc))
if pr:
    pts = pr[0]["points"]
    lat = [v for _, v in pts["latency ns/latency"]]
    thr = [v for _, v in pts.get("latency ns/threshold", [])]
    check("latency points: one per reading (300, 100)", lat == [300, 100], lat)
    check("threshold points: 150 each, one per latency point", thr == [150, 150], thr)
    zero = [(k, p) for k, v in pts.items() for p in v if p[1] == 0]
    check("no counter point is 0 (no fall to 0 at the process's end)", not zero, zero)
    check("the latency track ends at its last reading (100), not 0", lat[-1:] == [100], lat[-1:])
    check("process name: host as 'node' and two U+FFFD", "node" + R * 2 in (pr[0]["name"] or ""), pr[0]["name"])
strict("t.json")
# CSV
rows = list(csv.DictReader(io.StringIO(strict("i.csv"))))
check("csv: 4 rows", len(rows) == 4, len(rows))
check("csv: the last row's threshold_ns is 150", rows and float(rows[-1]["threshold_ns"]) == 150, rows[-1:])
check("csv: latency_ns empty where no reading", [r["latency_ns"] for r in rows][2:] == ["", ""], [r["latency_ns"] for r in rows])
check("csv: host 'node' and two U+FFFD", {r["host"] for r in rows} == {"node" + R * 2}, {r["host"] for r in rows})
strict("l.csv")
# the JSON summary
s = json.loads(strict("s.json"))
p = s["processes"][0]
check("json: exe '/bin/exit' U+FFFD '('", p.get("exe") == "/bin/exit" + R + "(", p.get("exe"))
check("json: cmdline 'exit' U+FFFD U+FFFD ' run' (one per byte)", p.get("cmdline") == "exit" + R * 2 + " run", p.get("cmdline"))
check("json: host", p.get("hostname") == "node" + R * 2, p.get("hostname"))
jp = s.get("job", {}).get("processes", [])
check("json: the job view's exe too", all(x.get("exe", "/bin/exit" + R + "(") == "/bin/exit" + R + "(" for x in jp), jp)
# the text summary: valid UTF-8, U+FFFD as in the files
txt = strict("s.txt")
check("text: the command line 'exit' U+FFFD U+FFFD ' run'", "exit" + R * 2 + " run" in txt, [l for l in txt.splitlines() if "exit" in l][:2])
check("text: the host 'node' U+FFFD U+FFFD", "node" + R * 2 in txt)
# HTML
h = strict("r.html")
check("html: the host with U+FFFD", "node" + R * 2 in h)
# folded
fl = [l.rsplit(" ", 1) for l in strict("f.txt").splitlines()]
stacks = [a for a, _ in fl]
check("folded: no stack twice", len(stacks) == len(set(stacks)), stacks)
check("folded: counts sum to the 34 samples", sum(int(c) for _, c in fl) == 34, fl)
# pprof: the string table, raw, strict UTF-8
def varint(b, i):
    v = s_ = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s_; s_ += 7
        if c < 0x80:
            return v, i
def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i)
        f, w = k >> 3, k & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 2:
            n, i = varint(b, i); v = b[i:i + n]; i += n
        elif w == 1:
            v = b[i:i + 8]; i += 8
        elif w == 5:
            v = b[i:i + 4]; i += 4
        else:
            raise ValueError("wire type %d" % w)
        yield f, v
for name in ("p.pb.gz", "pf.pb.gz"):
    raw = gzip.decompress(open(t + "/" + name, "rb").read())
    st = [v for f, v in fields(raw) if f == 6]
    badst = []
    for x in st:
        try:
            x.decode("utf-8")
        except UnicodeDecodeError:
            badst.append(x)
    check("pprof %s: every string of the string table is UTF-8 (%d strings)" % (name, len(st)), st and not badst, badst)
pp = json.load(open(t + "/pp.json"))
check("pprof: period_type cpu nanoseconds", pp["all"]["period_type"] == ["cpu", "nanoseconds"], pp["all"]["period_type"])
check("pprof: period 1e9 / sample_rate 500 = 2000000", pp["all"]["period"] == 2000000, pp["all"]["period"])
check("pprof --source fault: period_type page_faults count, period fault_period 16",
      pp["fault"]["period_type"] == ["page_faults", "count"] and pp["fault"]["period"] == 16, pp["fault"])
check("pprof: host label 'node' and two U+FFFD", set(pp["all"]["hosts"]) == {"node" + R * 2}, set(pp["all"]["hosts"]))
sys.exit(bad)
PY
exit $fail
