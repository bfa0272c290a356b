#!/usr/bin/env bash
# tests/export/test_html_runs.sh: the HTML report of runs of many processes
# and of a Python run stays small and readable (docs/html.md), looked at in
# headless Chromium (tests/js/html_check.js):
#  - loop: a shell script that runs 40 short processes of 3 commands (md5sum,
#    gzip, cksum), recorded with a threshold low enough that every interval
#    with a reading is flagged: the title is the root command (the script
#    with a 320-character argument, not one of its children) and wraps; the
#    first timeline lane is the whole run; then a
#    lane per command whose processes add up to the run's; the processes
#    table shows the first --top rows and "show all" shows every one, the most
#    flagged time first;
#  - loop-noreading: the same database with the intervals of the run's last
#    40 % turned into intervals without a reading that are still marked
#    flagged: no flagged shade may fall there, the page hatches them instead;
#  - python: python3 with a few busy and recursive functions: the page stays
#    under 1 MB and the icicle draws no frame under 0.5 % of the samples
#    (folded into [other]).
# Every page: at most 2 MB, no horizontal scroll in a 1400 px window
# (scrollWidth), a legend entry for each thing the timeline draws and none
# for anything it does not, no flagged shade on a column that the database
# says has no interval with a reading, no console error, nothing requested.
# Screenshots: $MW_BUILD_DIR/test-artifacts/html_runs_*.png.
set -u
[ -n "${MW_SAN_PRELOAD:-}" ] && { echo "SKIP: a sanitized build (records live runs)"; exit 77; }
B=${MW_BUILD_DIR:?}
S=${MW_SOURCE_DIR:?}
mw=$B/memwatch
JS=$S/tests/js
command -v node >/dev/null || { echo "SKIP: node is not installed (bash .ci/install-deps)"; exit 77; }
[ -d "$JS/node_modules/playwright-core" ] || { echo "SKIP: tests/js/node_modules missing (bash .ci/install-deps)"; exit 77; }
CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
[ -x "$CHROMIUM" ] || { echo "SKIP: Debian's chromium is not installed (bash .ci/install-deps)"; exit 77; }
export CHROMIUM
[ -f "$B/libmemwatch.so" ] || { echo "SKIP: libmemwatch.so not built"; exit 77; }
PY=$(command -v /usr/bin/python3 || command -v python3)
tmp=$(mktemp -d /tmp/mw_html_runs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
art=$B/test-artifacts
mkdir -p "$art"
fail=0
check() { if [ "$2" = 1 ]; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }

# page NAME DB MAXBYTES WANT_TITLE: the page of DB, browsed, checked
page() {
  local name=$1 db=$2 max=$3 want=$4
  "$mw" export "$db" --format html -o "$tmp/$name.html" >"$tmp/$name.err" 2>&1 ||
    { echo "FAILED: $name: memwatch export --format html"; cat "$tmp/$name.err"; fail=1; return; }
  timeout 180 node "$JS/html_check.js" "$tmp/$name.html" "$art/html_runs_$name.png" >"$tmp/$name.page.json" 2>"$tmp/$name.node.err" ||
    { echo "FAILED: $name: headless chromium"; cat "$tmp/$name.node.err"; fail=1; return; }
  python3 - "$name" "$tmp/$name.html" "$tmp/$name.page.json" "$db" "$max" "$want" <<'PY' || fail=1
import json, math, os, sqlite3, sys
name, html, pj, dbp, maxb, want = sys.argv[1:7]
p = json.load(open(pj)); db = sqlite3.connect(dbp)
bad = 0
def check(what, ok, detail=""):
    global bad
    print(("ok: " if ok else "FAILED: ") + name + ": " + what + (" (" + str(detail) + ")" if detail != "" else ""))
    bad |= not ok
size = os.path.getsize(html)
check("page at most %d bytes" % int(maxb), size <= int(maxb), "%d bytes" % size)
check("no console error or page error", p["errors"] == [], "; ".join(p["errors"]))
check("nothing requested outside the file", p["foreign_requests"] == [], " ".join(p["foreign_requests"]))
check("title and heading are the root command", p["title"] == "memwatch: " + want and p["h1"] == p["title"],
      "%r, want %r" % (p["title"], "memwatch: " + want))
check("no horizontal scroll in a 1400 px window", p["scroll_width_1400"] <= 1400, "scrollWidth %d" % p["scroll_width_1400"])
nproc = db.execute("SELECT COUNT(*) FROM processes").fetchone()[0]
lanes = p["lanes"]
check("the first lane is the whole run", bool(lanes) and lanes[0]["name"].startswith("whole run") and lanes[0]["n"] == nproc,
      lanes[0]["name"] if lanes else "no lane")
if nproc > 1:
    check("at most 13 lanes, the others' processes add up to the run's", 2 <= len(lanes) <= 13 and
          sum(l["n"] for l in lanes[1:]) == nproc, "%d lanes: %s" % (len(lanes), [(l["name"], l["n"]) for l in lanes]))
# the legend names exactly what the lanes draw
cls = {"fl": "fl", "lat": "lat", "thr": "thr", "bw": "bw", "gpu": "gpustrip", "nord": "nord", "none": "none", "rgn": "rgn",
       "lvl": "lvl", "band": "inband"}
drawn = {k for k, c in cls.items() if any(c in d["classes"] for d in p["lane_draw"])}
check("the legend lists what is drawn and nothing else", set(p["legend"]) == drawn and len(p["legend"]) == len(set(p["legend"])),
      "legend %s, drawn %s" % (sorted(p["legend"]), sorted(drawn)))
has_rd = db.execute("SELECT COUNT(*) FROM intervals WHERE flags & 2 AND latency_ns IS NOT NULL"
                    " AND threshold_ns > 0").fetchone()[0] > 0
check("the whole-run lane draws the loaded latency and the threshold" if has_rd else
      "no interval with a reading: no latency line", bool(p["lane_draw"]) and
      (("lat" in p["lane_draw"][0]["classes"] and "thr" in p["lane_draw"][0]["classes"]) == has_rd),
      str([d["classes"] for d in p["lane_draw"]]))
# no flagged shade on a column without an interval with a reading: the
# columns from the database (whole run: every process), on the job clock
g = p["tl_geom"]; bins = g["bins"]; bw = g["pw"] / bins
off = -db.execute("SELECT MIN(COALESCE(t_start, 0)) FROM processes").fetchone()[0]
T = db.execute("SELECT MAX(t_end) FROM intervals").fetchone()[0] + off
w = T / bins
rd = [0.0] * bins; fl = [0.0] * bins
for a, b, flags, lat, byt, bb in db.execute("SELECT t_start, t_end, flags, latency_ns, bytes, bw_bound FROM intervals"):
    a += off; b += off
    if not (flags & 6) or (lat is None and byt is None):
        continue
    for k in range(max(0, int(a / w)), bins):
        if k * w >= b:
            break
        ov = min(b, (k + 1) * w) - max(a, k * w)
        if ov > 0:
            rd[k] += ov
            fl[k] += ov if bb else 0
def cols(x0, x1):  # the columns a shade covers
    return range(int(round((x0 - g["x0"]) / bw)), int(round((x1 - g["x0"]) / bw)))
shaded = [k for x0, x1 in p["lane_draw"][0]["fl"] for k in cols(x0, x1)]
wrong = [k for k in shaded if rd[k] <= 0 or fl[k] <= 0]
check("whole run: flagged shades only on columns with a flagged reading (%d shaded)" % len(shaded), not wrong,
      "columns %s" % wrong[:10])
for i, d in enumerate(p["lane_draw"]):
    lf = lanes[i]["fl"]
    wrong = [k for x0, x1 in d["fl"] for k in cols(x0, x1) if not lf[k] > 0]
    check("lane %d: no flagged shade on a column without a reading" % i, not wrong, "columns %s" % wrong[:10])
if nproc > 1:
    job = db.execute("SELECT COUNT(*) FROM processes").fetchone()[0]
    sa = p.get("show_all")
    if job > 20:
        check("processes table: the first rows shown, show all shows every process and hides them again",
              p["rank_rows_shown"] <= 20 and bool(sa) and sa["all"] == job and sa["after"] == p["rank_rows_shown"],
              "%s shown, %s" % (p["rank_rows_shown"], sa))
out = {"bytes": size, "lanes": [l["name"] for l in lanes], "legend": p["legend"], "height": p["height_1400"]}
json.dump(out, open(pj + ".sum", "w"))
sys.exit(bad)
PY
  [ -s "$art/html_runs_$name.png" ]; check "$name: screenshot kept ($art/html_runs_$name.png)" $(( $? == 0 ))
}

# loop: 40 short processes of 3 commands, every interval with a reading flagged
cat >"$tmp/loop.sh" <<EOF
i=0
while [ \$i -lt 40 ]; do
  case \$((i % 3)) in
    0) md5sum "$mw" >/dev/null ;;
    1) gzip -1 -c "$mw" >/dev/null ;;
    2) cksum "$mw" >/dev/null ;;
  esac
  i=\$((i + 1))
done
EOF
# a long word in the root command: the title must wrap, not widen the page
long=$(printf 'wide%.0s' $(seq 1 80))
"$mw" record -q -o "$tmp/loop" --threshold-ns 1 -- sh "$tmp/loop.sh" "$long" >"$tmp/loop.out" 2>&1 ||
  { echo "FAILED: memwatch record of the loop"; cat "$tmp/loop.out"; exit 1; }
"$mw" report "$tmp/loop" --db "$tmp/loop.db" --json >"$tmp/loop.json" 2>"$tmp/loop.rep.err" ||
  { echo "FAILED: memwatch report of the loop"; cat "$tmp/loop.rep.err"; exit 1; }
np=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT COUNT(*) FROM processes').fetchone()[0])" "$tmp/loop.db")
check "loop: at least 41 processes recorded ($np)" $(( np >= 41 ))
page loop "$tmp/loop.db" 2000000 "sh $tmp/loop.sh $long"
python3 - "$tmp/loop.page.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
names = [l["name"].split(":")[0] for l in p["lanes"][1:]]
ok = {"md5sum", "gzip", "cksum"} <= set(names)
print(("ok: " if ok else "FAILED: ") + "loop: a lane per command (%s)" % names)
sys.exit(not ok)
PY
check "loop: a lane per command" $(( $? == 0 ))
# the rows' order: flagged time, then flagged samples, then time measured
# (a pid can hold two processes: the image before an exec and after it)
python3 - "$tmp/loop.json" "$tmp/loop.page.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2]))
job = s["job"]["processes"]
keys = {}
for q in job:
    keys.setdefault(q["pid"], []).append((-q["flagged_ns"], -q.get("in_flagged", 0), -q["time_ns"]))
prev, ok = None, len(p["rank_rows"]) == len(job)
for r in p["rank_rows"]:
    c = sorted(k for k in keys.get(int(r[2]), []) if prev is None or k >= prev)
    if not c:
        ok = False
        break
    prev = c[0]
print(("ok: " if ok else "FAILED: ") + "loop: processes table in order of flagged time, flagged samples, time (%d rows, %d processes)" % (len(p["rank_rows"]), len(job)))
sys.exit(not ok)
PY
check "loop: processes table order" $(( $? == 0 ))

# loop-noreading: the last 40 % of the run without a reading, still marked flagged
cp "$tmp/loop.db" "$tmp/noread.db"
python3 - "$tmp/noread.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
t0, t1 = db.execute("SELECT MIN(COALESCE(t_start, 0)), (SELECT MAX(t_end) FROM intervals) FROM processes").fetchone()
cut = t0 + 0.6 * (t1 - t0)
n = db.execute("UPDATE intervals SET flags = flags & ~6, latency_ns = NULL, bytes = NULL, bw_bound = 1"
               " WHERE t_end > ?", (cut,)).rowcount
db.commit()
print("note: %d intervals after %.0f%% of the run made readingless (still marked flagged)" % (n, 60))
PY
page noreading "$tmp/noread.db" 2000000 "sh $tmp/loop.sh $long"
python3 - "$tmp/noreading.page.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
g = p["tl_geom"]; x_cut = g["x0"] + 0.6 * g["pw"] + g["pw"] / g["bins"]
late = [r for d in p["lane_draw"] for r in d["fl"] if r[1] > x_cut]
hatched = [r for r in p["lane_draw"][0]["nord"] if r[1] > x_cut]
ok = not late and bool(hatched) and "nord" in p["legend"]
print(("ok: " if ok else "FAILED: ") + "noreading: no flagged shade after the cut, hatched instead (%d shades after, %d hatches)" % (len(late), len(hatched)))
sys.exit(not ok)
PY
check "noreading: no flagged band on intervals without a reading" $(( $? == 0 ))

# python: a few busy functions, some recursive
cat >"$tmp/busy.py" <<'EOF'
import time
def churn(n):
    d = {}
    for i in range(n):
        d[i % 4096] = [i] * 8
    return len(d)
def sumsq(n):
    return sum(i * i for i in range(n))
def strings(n):
    return len("".join(str(i) for i in range(n)))
def deep(k, n):
    return sumsq(n) if k == 0 else deep(k - 1, n) + (strings(200) if k % 3 == 0 else 0)
t0 = time.time()
i = 0
while time.time() - t0 < 1.5:
    churn(20000); sumsq(50000); strings(20000); deep(i % 40, 3000)
    i += 1
EOF
"$mw" record -q -o "$tmp/py" -- "$PY" "$tmp/busy.py" >"$tmp/py.out" 2>&1 ||
  { echo "FAILED: memwatch record of python"; cat "$tmp/py.out"; exit 1; }
"$mw" report "$tmp/py" --db "$tmp/py.db" >/dev/null 2>"$tmp/py.rep.err" ||
  { echo "FAILED: memwatch report of python"; cat "$tmp/py.rep.err"; exit 1; }
page python "$tmp/py.db" 1000000 "$PY $tmp/busy.py"
python3 - "$tmp/python.html" <<'PY'
import math, re, sys, html
s = open(sys.argv[1]).read()
m = re.search(r": (\d+) samples, outermost", s)
total = int(m.group(1)) if m else 0
frames = re.findall(r'<g class=f data-x="[^"]*" data-w="[^"]*" data-n="([^"]*)" data-s="(\d+) samples', s)
minn = math.ceil(0.005 * total)
small = [(html.unescape(n), int(c)) for n, c in frames if int(c) < minn and html.unescape(n) != "[other]"]
ok = total > 0 and frames and not small
print(("ok: " if ok else "FAILED: ") + "python: %d samples, %d frames drawn, none under 0.5 %% (%d samples) but [other] %s"
      % (total, len(frames), minn, small[:5]))
sys.exit(not ok)
PY
check "python: icicle folds small frames" $(( $? == 0 ))
for n in loop noreading python; do
  [ -f "$tmp/$n.page.json.sum" ] && echo "note: $n: $(cat "$tmp/$n.page.json.sum")"
done
exit $fail
