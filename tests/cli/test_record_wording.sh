#!/usr/bin/env bash
# tests/cli/test_record_wording.sh: what record and report say is true.
#   - a process killed by SIGSEGV is "killed by SIGSEGV" (record's line, the
#     report's text; JSON: signal 11, signal_name SIGSEGV), not "ended
#     normally (exit -11)";
#   - lines that do not apply are left out: no precise-sample threshold where
#     no precise sample was taken, no "0 threads";
#   - a machine profile whose calibration could not saturate memory: nothing
#     is called bandwidth-bound (record's summary, the report's text, JSON
#     and HTML: the memory load instead, and why); one that did saturate
#     gives the bandwidth-bound share without that caveat;
#   - an argument holding terminal escape codes prints escaped (no ESC byte
#     reaches the terminal), and non-UTF-8 arguments give valid UTF-8 JSON.
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
[ -x "$mw" ] && [ -f "$B/libmemwatch.so" ] || { echo "SKIP: memwatch or libmemwatch.so not built"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 (to check JSON) not installed"; exit 77; }
tmp=$(mktemp -d /tmp/mw_record_wording.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0
bad() { echo "FAILED: $*"; fail=1; }
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# SIGSEGV
"$mw" record -o segv -- /bin/sh -c 'kill -SEGV $$' 2>segv.err
rc=$?
[ $rc = 139 ] || bad "exit status $rc for SIGSEGV (want 139)"
grep -q "was killed by SIGSEGV (signal 11)" segv.err && echo "ok: record names SIGSEGV" || bad "record: $(cat segv.err)"
"$mw" report segv >segv.txt 2>/dev/null || bad "report segv"
"$mw" report segv --json >segv.json 2>/dev/null || bad "report segv --json"
grep -q "killed by SIGSEGV" segv.txt && echo "ok: report text names SIGSEGV" || bad "report text: $(grep -A3 '^Processes' segv.txt)"
grep -q "ended normally\|exit -11" segv.txt && bad "report text still says ended normally / exit -11"
s=$(jget segv.json "[(p.get('signal'), p.get('signal_name')) for p in d['processes']]")
[ "$s" = "[(11, 'SIGSEGV')]" ] && echo "ok: JSON signal 11 SIGSEGV" || bad "JSON processes: $s"

# lines that do not apply
np=$(jget segv.json "d['precise_samples']")
if [ "$np" = 0 ]; then
  grep -q "precise-sample latency threshold" segv.txt && bad "precise threshold printed without precise samples" ||
    echo "ok: no precise-sample line without precise samples"
else
  grep -q "precise-sample latency threshold" segv.txt || bad "no precise threshold line with $np precise samples"
fi
grep -q " 0 threads" segv.txt && bad "'0 threads' printed"

# nothing called bandwidth-bound: a profile whose validation saw no saturation
for sat in false true; do
  printf '%s\n' '{"schema": "memwatch-profile", "version": 1, "identity": "mw-test-machine",' \
    '"created": "2026-01-01T00:00:00Z", "tsc_hz": 2e9, "peak_bw": 5e10,' \
    '"idle_latency_ns": 100, "lat_method": "probe_lat", "lat_threshold_ns": 100000,' \
    '"bw_method": "", "bw_factor": 1, "methods": [{"name": "probe_lat", "verdict": "accurate",' \
    "\"reason\": \"test\", \"threshold_ns\": 100000, \"saturated\": $sat}]}" >prof.json
  MEMWATCH_MACHINE=mw-test-machine "$mw" record -o "sat$sat" --profile "$tmp/prof.json" -- \
    /bin/sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done' 2>"sat$sat.rec" || bad "record with profile ($sat)"
  if [ $sat = false ]; then
    grep -q "^  memory load .*nothing is called bandwidth-bound" "sat$sat.rec" &&
      ! grep -q "bandwidth-bound [0-9]" "sat$sat.rec" && echo "ok: record's summary: nothing called bandwidth-bound" ||
      bad "record's summary: $(grep -E 'bandwidth-bound|memory load' "sat$sat.rec")"
  else
    grep -q "^  bandwidth-bound [0-9.]* % of the measured time" "sat$sat.rec" &&
      ! grep -q "nothing is called" "sat$sat.rec" && echo "ok: record's summary: the bound share" ||
      bad "record's summary with a saturated profile: $(grep -E 'bandwidth-bound|memory load' "sat$sat.rec")"
  fi
  "$mw" report "sat$sat" >"sat$sat.txt" 2>/dev/null
  "$mw" report "sat$sat" --json >"sat$sat.json" 2>/dev/null
  d=$(jget "sat$sat.json" "(d['bandwidth'].get('detectable'), d['bandwidth'].get('saturable'))")
  if [ $sat = false ]; then
    grep -q "^Memory load.*nothing is called bandwidth-bound" "sat$sat.txt" &&
      ! grep -q "^Bandwidth-bound" "sat$sat.txt" && [ "$d" = "(False, False)" ] &&
      echo "ok: unsaturated profile: nothing called bandwidth-bound" ||
      bad "unsaturated profile: detectable, saturable=$d: $(grep -E -A1 '^(Bandwidth|Memory)' "sat$sat.txt")"
  else
    grep -q "^Bandwidth-bound: " "sat$sat.txt" && ! grep -q "nothing is called" "sat$sat.txt" &&
      [ "$d" = "(True, True)" ] && echo "ok: saturated profile: no caveat" ||
      bad "saturated profile: detectable, saturable=$d"
  fi
  "$mw" report "sat$sat" --db "sat$sat.db" --html "sat$sat.html" >/dev/null 2>&1 || bad "report --html ($sat)"
  if [ $sat = false ]; then
    grep -q "id=detectable>Nothing is called bandwidth-bound here" "sat$sat.html" &&
      ! grep -q "id=verdict>Bandwidth-bound" "sat$sat.html" && echo "ok: HTML: nothing called bandwidth-bound" ||
      bad "HTML report without the caveat"
    if [ "$np" = 0 ]; then
      ! grep -q "precise-sample threshold" "sat$sat.html" && echo "ok: HTML: no precise-sample line without precise samples" ||
        bad "HTML: precise-sample threshold shown without precise samples"
    fi
  else
    ! grep -q "Nothing is called bandwidth-bound" "sat$sat.html" && echo "ok: HTML: no caveat with a saturated profile" ||
      bad "HTML report: caveat with a saturated profile"
  fi
done

# escape codes and non-UTF-8 bytes in arguments
esc=$'\e[31mRED\e[0m'
"$mw" record -o esc -- /bin/sh -c 'exit 0' "$esc" $'\xff\xfe-not-utf8' 2>esc.err >/dev/null
"$mw" report esc >esc.txt 2>&1
"$mw" report esc --json >esc.json 2>/dev/null
if grep -q $'\e' esc.txt esc.err; then bad "an ESC byte reached the terminal: $(grep -a $'\e' esc.txt | cat -v)"; fi
grep -qF '\x1b[31mRED' esc.txt && echo "ok: escape codes printed escaped" || bad "escaped argument not shown: $(grep -A2 '^Processes' esc.txt)"
python3 -c "import json,sys; json.loads(open(sys.argv[1],'rb').read().decode('utf-8', 'strict'))" esc.json &&
  echo "ok: JSON valid UTF-8" || bad "JSON not valid UTF-8"
exit $fail
