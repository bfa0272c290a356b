#!/usr/bin/env bash
# tests/region/test_region.sh: regions end to end (docs/regions.md).
# REGION_CASE=phases: tests/region/phases.c with its three marked phases runs
#   alone, unmarked (-DMW_REGIONS_OFF) and under `memwatch record`: the same
#   output every time; only weak references to memwatch in the marked build,
#   none in the unmarked one; the report has one row per phase with the
#   phase's threads, spans and calls, its time, and its own function as its
#   top code; the unmarked build's report has no regions. With
#   REGION_EXPECT_BOUND=1 (a machine whose cores saturate memory, e.g. 16
#   threads on the GPU machine) the triad region is mostly bandwidth-bound
#   and the others are not. Knobs: REGION_THREADS (2), REGION_MIB (16).
# REGION_CASE=bad: "phases bad" (unbalanced regions, 10,000 names, control
#   characters, a 1 MB name, ends without begins, regions across fork and
#   exec) runs to its end under memwatch; the report reads its three files
#   and notes each kind of bad input (text and JSON); the recording's META
#   notes them too; nothing else is lost (files whole, no record dropped, the
#   program's intervals and samples there, no region event lost).
# REGION_CASE=python: tests/region/regions.py (python/memwatch.py: a context
#   manager around a copy loop, a decorator on a compute loop) prints the same
#   with and without memwatch; memwatch.enabled() says whether it records; the
#   report has both regions, twice each, the copy region's top code in libc's
#   memmove/memcpy and the compute region's elsewhere.
set -u
[ -n "${MW_SAN_PRELOAD:-}" ] && export LD_PRELOAD=$MW_SAN_PRELOAD
B=${MW_BUILD_DIR:?}
S=${MW_SOURCE_DIR:?}
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/mw_region.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if [ "$2" = 1 ]; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }
P=$B/tests/region/phases
U=$B/tests/region/phases_unmarked
[ -x "$P" ] || P=$(find "$B" -name phases -type f -perm -u+x | head -1)
[ -x "$U" ] || U=$(find "$B" -name phases_unmarked -type f -perm -u+x | head -1)

case ${REGION_CASE:-phases} in
phases)
    thr=${REGION_THREADS:-2}
    mib=${REGION_MIB:-16}
    args="$thr 2 $mib 200"
    "$P" $args >"$tmp/alone.txt"; check "marked build runs without libmemwatch.so" $(( $? == 0 ))
    "$U" $args >"$tmp/unmarked.txt"; check "unmarked build runs" $(( $? == 0 ))
    cmp -s "$tmp/alone.txt" "$tmp/unmarked.txt"; check "marked and unmarked builds print the same" $(( $? == 0 ))
    if command -v nm >/dev/null; then
        nm -D "$P" | grep memwatch >"$tmp/nm.txt"
        awk '$1 != "w" { bad = 1 } END { exit bad || NR != 2 }' "$tmp/nm.txt"
        check "marked build: only weak references to memwatch ($(tr '\n' ' ' <"$tmp/nm.txt"))" $(( $? == 0 ))
        ! nm -D "$U" | grep -q memwatch; check "unmarked build: no memwatch symbol" $(( $? == 0 ))
    fi
    "$B/memwatch" record -q -o "$tmp/raw" -- "$P" $args >"$tmp/rec.txt"
    check "marked build under memwatch record" $(( $? == 0 ))
    cmp -s "$tmp/alone.txt" "$tmp/rec.txt"; check "same output under memwatch" $(( $? == 0 ))
    "$B/memwatch" report "$tmp/raw" -o "$tmp/db" >"$tmp/sum.txt" 2>"$tmp/err.txt" ||
        { echo "FAILED: memwatch report"; cat "$tmp/err.txt"; exit 1; }
    grep -q "^Regions (3;" "$tmp/sum.txt"; check "text report has the region table" $(( $? == 0 ))
    "$B/memwatch" report "$tmp/raw" -o "$tmp/db2" --json >"$tmp/sum.json" 2>/dev/null
    THR=$thr EXPECT_BOUND=${REGION_EXPECT_BOUND:-0} python3 - "$tmp/sum.json" <<'EOF'
import json, os, sys
d = json.load(open(sys.argv[1]))
thr = int(os.environ["THR"])
regs = {r["region"]: r for r in d.get("regions", [])}
bad = 0
def check(what, ok):
    global bad
    print(("ok: " if ok else "FAILED: ") + what)
    bad |= not ok
check("regions triad, compute, chase reported (%s)" % sorted(regs), sorted(regs) == ["chase", "compute", "triad"])
for name, r in regs.items():
    check("%s: %d threads, %d spans, %d calls" % (name, r["threads"], r["spans"], r["calls"]),
          r["threads"] == thr and r["spans"] == 2 * thr and r["calls"] == 2 * thr)
    want = thr * 2 * 0.2e9
    check("%s: time %.3f s, expected about %.3f s" % (name, r["time_ns"] / 1e9, want / 1e9),
          0.8 * want < r["time_ns"] < 4 * want)
    top = r["lines"][0]["function"] if r.get("lines") else None
    check("%s: top code is phase_%s (%s; %d samples)" % (name, name, top, r.get("samples", 0)),
          top == "phase_" + name)
    check("%s: measured time and bound time present" % name,
          "measured_ns" in r and "bound_ns" in r)
if os.environ["EXPECT_BOUND"] == "1":
    for name, r in regs.items():
        share = r.get("bound_share", -1)
        want = share > 0.5 if name == "triad" else 0 <= share < 0.2
        check("%s: bound share %.2f (%s)" % (name, share, "> 0.5" if name == "triad" else "< 0.2"), want)
else:
    print("note: bound shares " + ", ".join("%s %.2f" % (n, r.get("bound_share", -1)) for n, r in regs.items())
          + " (REGION_EXPECT_BOUND=1 checks them where the triad saturates memory)")
sys.exit(bad)
EOF
    check "per-region JSON" $(( $? == 0 ))
    # the views of --by
    for v in region thread process; do
        "$B/memwatch" report "$tmp/raw" --db "$tmp/db_$v" --by $v --top 100 >"$tmp/by_$v.txt" 2>/dev/null
        check "--by $v runs" $(( $? == 0 ))
    done
    for r in triad compute chase; do
        grep -Eq "^  $r .* phase_$r " "$tmp/by_region.txt"
        check "--by region: $r with its top function phase_$r" $(( $? == 0 ))
    done
    n=$(grep -c "(tid [0-9]*)" "$tmp/by_thread.txt")
    check "--by thread: a row per thread ($n, at least $thr workers)" $(( n >= thr ))
    grep -Eq "phase_(triad|compute|chase)" "$tmp/by_thread.txt"
    check "--by thread: workers' top functions are phases" $(( $? == 0 ))
    grep -Eq "^  [0-9]+ .*phases" "$tmp/by_process.txt"; check "--by process: the process" $(( $? == 0 ))
    "$B/memwatch" report "$tmp/raw" --db "$tmp/db_x" --by nothing >/dev/null 2>&1
    check "--by nothing refused (exit 2)" $(( $? == 2 ))
    "$B/memwatch" record -q -o "$tmp/rawu" -- "$U" $args >"$tmp/recu.txt"
    cmp -s "$tmp/alone.txt" "$tmp/recu.txt"; check "unmarked build under memwatch: same output" $(( $? == 0 ))
    "$B/memwatch" report "$tmp/rawu" -o "$tmp/dbu" --json >"$tmp/sumu.json" 2>/dev/null
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(len(d.get("regions", [])) != 0)' "$tmp/sumu.json"
    check "unmarked build: no regions in the report" $(( $? == 0 ))
    ;;
bad)
    "$B/memwatch" record -q -o "$tmp/raw" -- "$P" bad >"$tmp/rec.txt" 2>"$tmp/rec.err"
    rc=$?
    check "bad region input: the program runs to its end (rc $rc)" $(( rc == 0 ))
    grep -q "exec'ed image done" "$tmp/rec.txt"; check "the exec'ed image ran" $(( $? == 0 ))
    n=$(ls "$tmp"/raw/*.mwr 2>/dev/null | wc -l)
    check "three raw files (program, fork child, exec'ed image): $n" $(( n == 3 ))
    "$B/memwatch" report "$tmp/raw" -o "$tmp/db" >"$tmp/sum.txt" 2>"$tmp/err.txt"
    check "memwatch report reads them" $(( $? == 0 ))
    grep -q "^Regions" "$tmp/sum.txt"; check "text report has regions" $(( $? == 0 ))
    for what in "without an open region" "never ended" "exec'ed" "control characters" \
                "longer than 255 bytes" "more than 4095 distinct" "region events lost"; do
        if [ "$what" = "region events lost" ]; then
            ! grep -q "$what" "$tmp/sum.txt"; check "text report: no note '$what'" $(( $? == 0 ))
        else
            grep -q "^    pid [0-9]* (report): .*$what" "$tmp/sum.txt"
            check "text report notes: $what" $(( $? == 0 ))
        fi
    done
    "$B/memwatch" report "$tmp/raw" -o "$tmp/db2" --json >"$tmp/sum.json" 2>/dev/null
    python3 - "$tmp/sum.json" "$tmp/db2" <<'EOF'
import json, sqlite3, sys
d = json.loads(open(sys.argv[1], encoding="utf-8").read())
db = sqlite3.connect(sys.argv[2])
bad = 0
def check(what, ok):
    global bad
    print(("ok: " if ok else "FAILED: ") + what)
    bad |= not ok
notes = [n["note"] for n in d.get("region_notes", []) if n["source"] == "report"]
for what in ["without an open region of that name", "never ended", "exec'ed",
             "enclosing region ended", "longer than 255 bytes", "control characters",
             "more than 4095 distinct region names", "open when this process was forked"]:
    check("report note: " + what, any(what in n for n in notes))
meta = [v for (v,) in db.execute("SELECT value FROM meta WHERE key='region_notes'")]
for what in ["ends without an open region", "names longer than 255 bytes",
             "control characters", "beyond the first 4095", "open at fork"]:
    check("META region_notes: " + what, any(what in v for v in meta))
names = {n for (n,) in db.execute("SELECT name FROM regions")}
check("4095 named regions and (other regions): %d" % len(names),
      len(names) == 4096 and "(other regions)" in names)
check("control characters shown as '?'", "tab?here?newline?" in names)
check("the 1 MB name cut to 255 bytes", "x" * 255 in names)
spans = dict(db.execute("SELECT r.name || ':' || (s.flags & 1), COUNT(*) FROM region_spans s"
                        " JOIN regions r ON r.id = s.region_id GROUP BY 1"))
check("across-fork: a span in the parent and one from the fork in the child (%s, %s)"
      % (spans.get("across-fork:0"), spans.get("across-fork:1")),
      spans.get("across-fork:0") == 1 and spans.get("across-fork:1") == 1)
check("inner ended with outer", db.execute("SELECT s.flags & 2 FROM region_spans s JOIN regions r"
      " ON r.id = s.region_id WHERE r.name='inner'").fetchone() == (2,))
check("deep: 100 nested spans", spans.get("deep:0") == 100)
# nothing else lost: every file read to its trailer, no record dropped, the
# program's intervals and samples recorded, no region event lost
procs = db.execute("SELECT pid, status, clean_exit, COALESCE(trailer_dropped, 0),"
                   " (SELECT COUNT(*) FROM intervals i WHERE i.process_id = p.id),"
                   " (SELECT COUNT(*) FROM samples s WHERE s.process_id = p.id)"
                   " FROM processes p ORDER BY t_start").fetchall()
check("every file whole, ended cleanly, nothing dropped (%s)" % [p[:4] for p in procs],
      len(procs) == 3 and all(p[1] == "ok" and p[2] == 1 and p[3] == 0 for p in procs))
check("the program's intervals and samples recorded (%d intervals, %d samples)" % procs[0][4:],
      procs[0][4] > 0 and procs[0][5] > 0)
check("no region event lost", not any("events lost" in v for v in meta))
sys.exit(bad)
EOF
    check "bad input reported" $(( $? == 0 ))
    ;;
python)
    export PYTHONPATH=$S/python
    python3 -c 'import memwatch, sys; sys.exit(memwatch.enabled())'
    check "without libmemwatch.so memwatch.enabled() is False" $(( $? == 0 ))
    "$B/memwatch" record -q -o "$tmp/raw0" -- python3 -c 'import memwatch, sys; sys.exit(not memwatch.enabled())'
    check "under memwatch record memwatch.enabled() is True" $(( $? == 0 ))
    python3 "$S/tests/region/regions.py" 0.3 >"$tmp/alone.txt"
    check "regions.py runs without memwatch" $(( $? == 0 ))
    "$B/memwatch" record -q -o "$tmp/raw" -- python3 "$S/tests/region/regions.py" 0.3 >"$tmp/rec.txt"
    check "regions.py under memwatch record" $(( $? == 0 ))
    cmp -s "$tmp/alone.txt" "$tmp/rec.txt"; check "same output" $(( $? == 0 ))
    "$B/memwatch" report "$tmp/raw" -o "$tmp/db" --json >"$tmp/sum.json" 2>"$tmp/err.txt" ||
        { echo "FAILED: memwatch report"; cat "$tmp/err.txt"; exit 1; }
    python3 - "$tmp/sum.json" "$tmp/db" <<'EOF'
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
regs = {r["region"]: r for r in d.get("regions", [])}
bad = 0
def check(what, ok):
    global bad
    print(("ok: " if ok else "FAILED: ") + what)
    bad |= not ok
check("regions stream and compute (%s)" % sorted(regs), sorted(regs) == ["compute", "stream"])
for name, r in regs.items():
    check("%s: 1 thread, 2 spans (%d, %d)" % (name, r["threads"], r["spans"]),
          r["threads"] == 1 and r["spans"] == 2)
def top(name):
    ln = regs.get(name, {}).get("lines") or [{}]
    return ln[0].get("function") or ""
# the copy runs in libc (memmove, or where libc has no symbols for it, a
# function named after its nearest symbol): its top module is libc
mod = db.execute("SELECT m.path, COUNT(*) AS n FROM sample_regions sr JOIN regions r ON r.id ="
                 " sr.region_id JOIN samples s ON s.id = sr.sample_id JOIN pcs p ON p.id = s.pc_id"
                 " JOIN modules m ON m.id = p.module_id WHERE r.name = 'stream' AND"
                 " s.source = 'timer' GROUP BY m.path ORDER BY n DESC LIMIT 1").fetchone()
check("stream: top code copies memory in libc (%s in %s)" % (top("stream"), mod and mod[0]),
      mod is not None and "libc.so" in mod[0])
check("compute: top code does not (%s)" % top("compute"),
      top("compute") != "" and "memmove" not in top("compute") and "memcpy" not in top("compute"))
sys.exit(bad)
EOF
    check "Python regions reported" $(( $? == 0 ))
    ;;
esac
exit $fail
