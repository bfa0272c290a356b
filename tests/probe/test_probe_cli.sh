#!/usr/bin/env bash
# tests/probe/test_probe_cli.sh: `memwatch probe` end to end.
#  - real `memwatch probe --json` output, and the output on every sysfs/procfs
#    fixture, validate against docs/probe.schema.json (python3-jsonschema);
#  - documents that break the schema are rejected (the check can fail);
#  - on a machine without hardware PMU the text's first line says so plainly
#    and the PMU list matches /sys/bus/event_source/devices;
#  - bad command lines give usage and exit 2.
set -u
MW=${MW_BUILD_DIR:?}/memwatch
SRC=${MW_SOURCE_DIR:?}
FIX=${MW_FIXTURES:?}
SCHEMA=$SRC/docs/probe.schema.json
# An interpreter that has jsonschema: Debian's python3-jsonschema serves
# /usr/bin/python3, which another python3 earlier on PATH may not see.
PY=python3
for _py in python3 /usr/bin/python3; do
  if "$_py" -c 'import jsonschema' 2>/dev/null; then PY=$_py; break; fi
done
VALIDATE="$PY $SRC/tests/probe/validate_probe.py"
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAILED: $*" >&2; fails=$((fails + 1)); }
check() { if eval "$1"; then ok; else bad "$2"; fi; }

"$PY" -c 'import jsonschema' 2>/dev/null || { echo "SKIP: python3-jsonschema is not installed (.ci/install-deps installs it)"; exit 77; }
[ -x "$MW" ] || { echo "FAILED: $MW not built" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# 1. The real machine.
"$MW" probe --json >"$T/real.json" 2>"$T/real.err"
check '[ $? -eq 0 ]' "memwatch probe --json exits 0 ($(cat "$T/real.err"))"
check "$VALIDATE $SCHEMA $T/real.json >$T/v.out" "real probe JSON is invalid: $(cat "$T/v.out" 2>/dev/null)"

# 2. Every fixture.
for f in skx spr skl zen4 vm emr_vm icx zen3 adl; do
  "$MW" probe --json --sysfs-root "$FIX/sysfs/$f" --proc-root "$FIX/proc/$f" --dev-root "$T/nodev" >"$T/$f.json"
  check '[ $? -eq 0 ]' "probe on fixture $f exits 0"
  check "$VALIDATE $SCHEMA $T/$f.json >$T/v.out" "fixture $f JSON is invalid: $(cat "$T/v.out")"
done
# Facts the JSON must carry (the methods themselves are checked in test_probe_fixtures).
check "$PY - $T <<'PY'
import json, sys
t = sys.argv[1]
vm = json.load(open(t + '/vm.json'))
assert vm['hardware_events'] is False, vm['hardware_events']
assert vm['summary'] == 'the kernel exposes no hardware PMU: only breakpoint, msr, software, tracepoint, uprobe', vm['summary']
assert [p['name'] for p in vm['pmus']] == ['breakpoint', 'msr', 'software', 'tracepoint', 'uprobe']
assert {m['name']: m['available'] for m in vm['methods']}['probe_lat'] is True
skx = json.load(open(t + '/skx.json'))
imc = [p for p in skx['pmus'] if p['name'].startswith('uncore_imc_')]
assert len(imc) == 6, len(imc)
ev = {e['name']: e for e in imc[0]['events']}
assert ev['cas_count_read']['terms'] == 'event=0x04,umask=0x03'
assert ev['cas_count_read']['scale'] * 2**20 == 64.0
assert ev['cas_count_read']['unit'] == 'MiB'
assert imc[0]['cpus'] == [0, 28]
z = json.load(open(t + '/zen4.json'))
df = [p for p in z['pmus'] if p['name'] == 'amd_df'][0]
assert df['formats']['event'] == 'config:0-7,32-37', df['formats']
assert [p for p in z['pmus'] if p['name'] == 'ibs_op'][0]['caps'] == {'zen4_ibs_extensions': '1'}
spr = json.load(open(t + '/spr.json'))
m = {m['name']: m for m in spr['methods']}
assert m['imc_cas']['available'] is False and m['imc_cas']['error'] == 'paranoid'
assert 'perf_event_paranoid <= 0 or CAP_PERFMON' in m['imc_cas']['reason']
assert spr['perf_event_paranoid'] == 2 and spr['privileges']['root'] is False
assert spr['prefetch_msr']['msr'] == '0x1a4' and spr['prefetch_msr']['reachable'] is False
emr = json.load(open(t + '/emr_vm.json'))
assert emr['hardware_events'] is False and 'power' in [p['name'] for p in emr['pmus']]
assert emr['summary'].endswith('only breakpoint, kprobe, msr, power, software, tracepoint, uprobe')
assert [m['name'] for m in emr['methods'] if m['available']] == ['probe_lat']
PY" "fixture JSON facts"

# 3. The schema rejects broken documents.
"$PY" - "$T" <<'PY'
import copy, json, sys
t = sys.argv[1]
doc = json.load(open(t + '/skx.json'))
def dump(name, d):
    json.dump(d, open(f'{t}/bad_{name}.json', 'w'))
d = copy.deepcopy(doc); del d['methods']; dump('nomethods', d)
d = copy.deepcopy(doc); d['methods'][0]['available'] = 'yes'; dump('availstr', d)
d = copy.deepcopy(doc); d['methods'][0]['name'] = 'magic'; dump('method', d)
d = copy.deepcopy(doc); d['methods'][0]['available'] = True; d['methods'][0]['error'] = 'no_pmu'; dump('availerr', d)
d = copy.deepcopy(doc); d['pmus'][0]['formats'] = {'event': 'config:0-7junk'}; dump('format', d)
d = copy.deepcopy(doc); d['schema'] = 'memwatch-probe/2'; dump('version', d)
d = copy.deepcopy(doc); d['extra'] = 1; dump('extra', d)
PY
check "$VALIDATE --expect-invalid $SCHEMA $T/bad_*.json >$T/v.out" "the schema accepted a broken document: $(cat "$T/v.out")"

# 4. The text form on this machine.
"$MW" probe >"$T/real.txt"
check '[ $? -eq 0 ]' "memwatch probe exits 0"
if python3 -c "import json,sys; sys.exit(0 if json.load(open('$T/real.json'))['hardware_events'] else 1)"; then
  check 'head -1 "$T/real.txt" | grep -q "^hardware PMUs: "' "first line names the hardware PMUs"
else
  check 'head -1 "$T/real.txt" | grep -q "^No hardware performance events here: the kernel exposes no hardware PMU: only "' \
    "first line says plainly there are no hardware events: $(head -1 "$T/real.txt")"
fi
for p in $(ls /sys/bus/event_source/devices 2>/dev/null); do
  check 'grep -Eq "^  $p +type $(cat /sys/bus/event_source/devices/$p/type) " "$T/real.txt"' "PMU $p listed with its type"
done
check 'grep -q "^Methods for " "$T/real.txt" && grep -q "probe_lat" "$T/real.txt"' "methods listed"
check 'grep -q "^Prefetcher MSR" "$T/real.txt"' "prefetcher MSR line"

# 5. Bad command lines: usage and exit 2.
for args in "--bogus" "-x" "--sysfs-root" "--json=1" "extra"; do
  "$MW" probe $args >"$T/o" 2>"$T/e"
  rc=$?
  check "[ $rc -eq 2 ] && grep -q '^usage: memwatch probe' $T/e && [ ! -s $T/o ]" "probe $args: exit $rc, stderr: $(head -1 "$T/e")"
done
"$MW" probe --bogus 2>&1 | grep -q "unknown option '--bogus'" && ok || bad "unknown option named"
"$MW" probe --sysfs-root 2>&1 | grep -q "option '--sysfs-root' needs an argument" && ok || bad "missing argument named"
"$MW" probe --help | grep -q "^usage: memwatch probe" && ok || bad "--help prints usage"
# A sysfs root that does not exist: exit 0, a plain reason, still valid JSON.
"$MW" probe --json --sysfs-root /nonexistent/memwatch >"$T/none.json"
check '[ $? -eq 0 ]' "probe with a missing sysfs root exits 0"
check "$VALIDATE $SCHEMA $T/none.json >$T/v.out" "missing-root JSON is invalid: $(cat "$T/v.out")"
check "grep -q 'cannot read /nonexistent/memwatch/bus/event_source/devices' $T/none.json" "missing root reason"

echo "test_probe_cli: $pass passed, $fails failed"
[ "$fails" -eq 0 ]
