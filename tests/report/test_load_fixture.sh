#!/usr/bin/env bash
# tests/report/test_load_fixture.sh: memwatch record's load file (.mwl,
# include/memwatch/mwr_load.h) beside a fixture raw file (mwr_fixture: host
# "fixture", intervals 0-40 ms, flagged 0-10 and 20-30 ms), written here
# slot by slot, through memwatch report: the line "Likely source: other
# processes on this machine" with the top neighbour in the text, the JSON and
# the HTML where the rule holds (docs/saturation.md, "Whose load is it"),
# nothing where the recorded program was busy, where no slot covers the
# flagged time, where the load file is another host's, or where there is
# none; a neighbour's name with control characters escaped in the text; a
# load file cut short read up to the cut; the load tables in the database.
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
fix=$B/mwr_fixture
[ -x "$fix" ] || { echo "SKIP: $fix not built"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 command is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
T=$(mktemp -d /tmp/mw_load_fixture.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAILED: $*"; fail=1; }
ok() { echo "ok: $*"; }

# mwl OUT HOST 'SLOTS': a load file; SLOTS is a Python list of
# (t0_ms, t1_ms, busy, tree, run, own, [(pid, ppid, cpus, flags, comm), ...][, tree_wait])
mwl() {
  python3 - "$1" "$2" "$3" <<'EOF'
import os, struct, sys
out, host, slots = sys.argv[1], sys.argv[2], eval(sys.argv[3])
def rec(typ, payload):
    payload += b'\0' * (-len(payload) % 8)
    return struct.pack('<II', typ, 8 + len(payload)) + payload
meta = ('format=1.1\nwriter=memwatch record\ncontent=load\nload_version=1\nhost=%s\n'
        'record_pid=500\nprogram_pid=77\nperiod_ns=250000000\nncpus=4\n' % host).encode()
b = b'MEMWATCH' + struct.pack('<HHI16x', 1, 1, 32) + rec(1, meta)
for s in slots:
    t0, t1, busy, tree, run, own, top = s[:7]
    wait = s[7] if len(s) > 7 else 0
    p = struct.pack('<QQIIIIIIIIIHH', int(t0 * 1e6), int(t1 * 1e6), int(busy * 1000), 0,
                    int(tree * 1000), int(run * 1000), int(own * 1000), 12, 80, len(top),
                    int(wait * 1000), 56, 32)
    for pid, ppid, cpus, flags, comm in top:
        p += struct.pack('<IIII16s', pid, ppid, int(cpus * 1000), flags, comm.encode())
    b += rec(16, p)
if os.environ.get('NOEND') != '1':  # memwatch record's closing META
    b += rec(1, b'end_monotonic_ns=40000000\nslots=%d\nsampler_cpu_ns=1234567\n' % len(slots))
open(out, 'wb').write(b)
EOF
}

# case NAME: a run directory with the fixture raw file
case_dir() { mkdir -p "$T/$1" && "$fix" "$T/$1/p.mwr" || { echo "FAILED: fixture"; exit 1; }; }
report() { "$mw" report "$T/$1" --db "$T/$1.db" "${@:2}" 2>"$T/$1.err"; }

NB='[(4242, 1, 2.5, 0, "stress-ng"), (999, 1, 0.3, 1, "other")]'

# 1. a neighbour while the program idles: named in text, JSON and HTML
case_dir nb
mwl "$T/nb/memwatch-fixture--load-500.mwl" fixture "[(0, 20, 3.0, 0.1, 0, 0, $NB), (20, 40, 3.0, 0.1, 0, 0, $NB)]"
report nb --html "$T/nb.html" >"$T/nb.txt" || bad "report nb: $(cat "$T/nb.err")"
want="  Likely source: other processes on this machine: 100 % of the flagged time the recorded program used 0.10 CPUs while PID 4242 stress-ng used 2.5 CPUs (top neighbour; 2.9 CPUs outside the recording in all)"
grep -qxF "$want" "$T/nb.txt" && ok "the text names the neighbour" ||
  bad "text: $(grep -i 'likely' "$T/nb.txt" || echo none)"
report nb --json >"$T/nb.json" || bad "report nb --json"
python3 - "$T/nb.json" "${want#  }" <<'EOF' && ok "the JSON names it" || bad "JSON bandwidth.load"
import json, sys
l = json.load(open(sys.argv[1]))['bandwidth']['load']
assert l['likely_source'] == sys.argv[2], l
assert l['neighbours'][0]['pid'] == 4242 and l['neighbours'][0]['comm'] == 'stress-ng', l
assert l['neighbours'][1]['recorded_by_memwatch'] is True, l
assert abs(l['share'] - 1) < 1e-9 and l['flagged_ns'] == 20e6 and l['slots'] == 2, l
assert l['coverage'] == 1, l
EOF
grep -q '<p class=verdict id=likely-source>Likely source: other processes on this machine: 100 % of the flagged time the recorded program used 0.10 CPUs while PID 4242 stress-ng used 2.5 CPUs' "$T/nb.html" &&
  ok "the HTML names it" || bad "HTML: $(grep -o 'id=likely-source[^<]*' "$T/nb.html" || echo none)"
r=$(sqlite3 "$T/nb.db" "SELECT (SELECT COUNT(*) FROM load_slots), (SELECT COUNT(*) FROM load_procs),
  (SELECT host || ' ' || status || ' ' || sampler_cpu_ns || ' ' || program_pid FROM load_sources),
  (SELECT COUNT(*) FROM processes), (SELECT ROUND(outside_cpus, 3) FROM load_slots LIMIT 1)")
[ "$r" = "2|4|fixture ok 1234567 77|1|2.9" ] && ok "the load tables: $r" || bad "load tables: $r"
grep -q "2 file(s) from" "$T/nb.txt" || bad "the load file is not among the report's inputs"
report nb >"$T/nb2.txt" && grep -q "already holds these 2 file(s), unchanged" "$T/nb.err" &&
  grep -qxF "$want" "$T/nb2.txt" && ok "a second report reads the database as it is" ||
  bad "second report: $(cat "$T/nb.err")"

# 2. the program busy (1.5 CPUs beside 1.5 outside): no line, the figures in the JSON
case_dir busy
mwl "$T/busy/memwatch-fixture--load-500.mwl" fixture "[(0, 20, 3.0, 1.5, 0, 0, $NB), (20, 40, 3.0, 1.5, 0, 0, $NB)]"
report busy >"$T/busy.txt" || bad "report busy"
grep -qi "likely source" "$T/busy.txt" && bad "a busy program got the line: $(grep -i likely "$T/busy.txt")" ||
  ok "a busy program: no line"
report busy --json | python3 -c "
import json, sys
l = json.load(sys.stdin)['bandwidth']['load']
assert 'likely_source' not in l and l['share'] == 0 and abs(l['flagged_recorded_cpus'] - 1.5) < 1e-9, l" &&
  ok "busy: the JSON has the figures, no likely_source" || bad "busy JSON"

# 2b. the program little on the CPU because others keep it off (it waited for
# a CPU): the others' load all the same, the wait said
case_dir starved
mwl "$T/starved/memwatch-fixture--load-500.mwl" fixture "[(0, 40, 3.0, 0.2, 0, 0, $NB, 0.8)]"
report starved >"$T/starved.txt" || bad "report starved"
grep -q "the recorded program used 0.20 CPUs (0.80 more waiting for a CPU) while PID 4242 stress-ng used 2.5 CPUs" "$T/starved.txt" &&
  ok "a program kept off the CPUs: the line says it waited" ||
  bad "starved: $(grep -i likely "$T/starved.txt" || echo none)"
# ... a wait under 0.05 CPUs is not said
case_dir waitlittle
mwl "$T/waitlittle/memwatch-fixture--load-500.mwl" fixture "[(0, 40, 3.0, 0.1, 0, 0, $NB, 0.04)]"
report waitlittle >"$T/waitlittle.txt" || bad "report waitlittle"
grep -q "the recorded program used 0.10 CPUs while PID 4242 stress-ng used 2.5 CPUs" "$T/waitlittle.txt" &&
  ok "a little waiting: not said" || bad "waitlittle: $(grep -i likely "$T/waitlittle.txt" || echo none)"

# 3. half of the flagged time loaded: the rule's share holds at 50 %
case_dir half
mwl "$T/half/memwatch-fixture--load-500.mwl" fixture "[(0, 20, 3.0, 0.1, 0, 0, $NB), (20, 40, 3.0, 1.5, 0, 0, $NB)]"
report half >"$T/half.txt" || bad "report half"
grep -q "Likely source: other processes on this machine: 50 % of the flagged time the recorded program used 0.10 CPUs while PID 4242 stress-ng used 2.5 CPUs" "$T/half.txt" &&
  ok "half the flagged time: the line, 50 %" || bad "half: $(grep -i likely "$T/half.txt" || echo none)"

# 4. slots that miss the flagged time, another host's load file, none: silent
case_dir late
mwl "$T/late/memwatch-fixture--load-500.mwl" fixture "[(100, 350, 3.0, 0.1, 0, 0, $NB)]"
case_dir other
mwl "$T/other/memwatch-elsewhere--load-500.mwl" elsewhere "[(0, 20, 3.0, 0.1, 0, 0, $NB), (20, 40, 3.0, 0.1, 0, 0, $NB)]"
case_dir none
for c in late other none; do
  report $c >"$T/$c.txt" || bad "report $c"
  report $c --json >"$T/$c.json" 2>/dev/null
  if grep -qi "likely source" "$T/$c.txt" || grep -q '"load"' "$T/$c.json"; then
    bad "$c: a verdict without evidence"
  else
    ok "$c: silent"
  fi
done

# 5. a neighbour's name holding an escape sequence: escaped in the text
case_dir esc
mwl "$T/esc/memwatch-fixture--load-500.mwl" fixture '[(0, 40, 3.0, 0.1, 0, 0, [(4243, 1, 2.8, 0, "a\x1b[31mred")])]'
report esc >"$T/esc.txt" || bad "report esc"
grep -q 'PID 4243 a\\x1b\[31mred used 2.8 CPUs' "$T/esc.txt" && ! grep -q $'\x1b' "$T/esc.txt" &&
  ok "a name's escape sequence is escaped" || bad "escape: $(grep -a -i likely "$T/esc.txt" | od -c | head -5)"

# 6. a load file cut short: read up to the cut, said in load_sources.status
case_dir cut
mwl "$T/cut.mwl" fixture "[(0, 20, 3.0, 0.1, 0, 0, $NB), (20, 40, 3.0, 0.1, 0, 0, $NB)]"
head -c $(( $(stat -c %s "$T/cut.mwl") - 100 )) "$T/cut.mwl" >"$T/cut/memwatch-fixture--load-500.mwl"
report cut >"$T/cut.txt" || bad "report cut: $(cat "$T/cut.err")"
r=$(sqlite3 "$T/cut.db" "SELECT slots, status FROM load_sources")
case "$r" in 1\|truncated\ at\ byte*) ok "cut short: $r" ;; *) bad "cut short: $r" ;; esac
# its one whole slot (0-20 ms) covers half of the flagged time (0-10 of 0-10, 20-30 ms)
grep -q "Likely source: other processes on this machine: 100 % of the flagged time the recorded program .*outside the recording in all; the load was sampled in 50 % of the flagged time)$" "$T/cut.txt" &&
  ok "cut short: its whole slots judged, the coverage said" || bad "cut: $(grep -i likely "$T/cut.txt" || echo none)"

# ... and one without memwatch record's closing META (record killed): its slots, said so
case_dir noend
NOEND=1 mwl "$T/noend/memwatch-fixture--load-500.mwl" fixture "[(0, 20, 3.0, 0.1, 0, 0, $NB), (20, 40, 3.0, 0.1, 0, 0, $NB)]"
report noend >"$T/noend.txt" || bad "report noend"
r=$(sqlite3 "$T/noend.db" "SELECT slots, status FROM load_sources")
case "$r" in 2\|no\ closing\ META*) ok "no closing META: $r" ;; *) bad "no closing META: $r" ;; esac
grep -qxF "$want" "$T/noend.txt" && ok "no closing META: judged alike" || bad "noend: $(grep -i likely "$T/noend.txt")"

[ $fail = 0 ] && echo "PASS" || echo "FAIL"
exit $fail
