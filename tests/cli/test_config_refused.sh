#!/usr/bin/env bash
# tests/cli/test_config_refused.sh: every MEMWATCH_* variable docs/config.md
# documents, set to a bad value, makes `memwatch record` exit 2 with one line
# naming it before the program runs (a marker file it would create stays
# absent). The variables are read from the documentation's table, so a
# variable documented without a bad value (or an exemption with its reason)
# here fails this test.
set -u
B=${MW_BUILD_DIR:?}
S=${MW_SOURCE_DIR:?}
mw=$B/memwatch
[ -x "$mw" ] || { echo "SKIP: memwatch not built"; exit 77; }
tmp=$(mktemp -d /tmp/mw_config_refused.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAILED: $*"; fail=1; }
# variable | a bad value (or "exempt: why")
declare -A value
while IFS='|' read -r var val; do
  var=$(echo $var); val=$(echo "$val" | sed 's/^ *//; s/ *$//')
  [ -n "$var" ] && value[$var]=$val
done <<'TABLE'
MEMWATCH_ENABLE | maybe
MEMWATCH_DIR | exempt: memwatch record sets it to its own run directory (-o)
MEMWATCH_INTERVAL | 0
MEMWATCH_METHOD | bogus
MEMWATCH_RATE | fast
MEMWATCH_STACK_DEPTH | 0
MEMWATCH_UNWIND | sideways
MEMWATCH_UNWIND_STACK | 100
MEMWATCH_FAULT_PERIOD | -1
MEMWATCH_INHERIT | maybe
MEMWATCH_RING_PAGES | 6
MEMWATCH_ALLOC_THRESHOLD | 1Q
MEMWATCH_ALLOC_FRAMES | 65
MEMWATCH_FOLLOW | maybe
MEMWATCH_VERBOSE | 9
MEMWATCH_PROFILE | /nonexistent/profile.json
MEMWATCH_PROFILE_SNAPSHOT | exempt: memwatch record sets it to a file of its own; one that cannot be used is read as absent (the profile itself is read)
MEMWATCH_THRESHOLD_NS | 0
MEMWATCH_THRESHOLD_FACTOR | 1
MEMWATCH_MIX | reads10
MEMWATCH_BASELINE_NS | 0
MEMWATCH_MACHINE | exempt: any identity string names a machine (tests match fixture profiles with it)
MEMWATCH_TSC | 1
MEMWATCH_HANDED | exempt: any host name; another host's makes the values handed down with it forgotten
MEMWATCH_PROBE_BURSTS | 0
MEMWATCH_INLINE | 5
MEMWATCH_LAZY | ticks
MEMWATCH_PROBE_SHARE | relative/dir
MEMWATCH_PROBE_LINES | 1
MEMWATCH_PROBE_WINDOW | 10001
MEMWATCH_PROBE_LAYOUT | big
MEMWATCH_PRECISE | on
MEMWATCH_LDLAT | 2
MEMWATCH_SYSFS | /nonexistent/sys
MEMWATCH_PROC | /nonexistent/proc
MEMWATCH_RUN_ID | a b
MEMWATCH_GROUP_READABLE | 2
MEMWATCH_STATUS | exempt: memwatch record sets it to a file of its own
MEMWATCH_GPU | maybe
TABLE
vars=$(sed -n 's/^| `\(MEMWATCH_[A-Z0-9_]*\)` |.*/\1/p' "$S/docs/config.md")
[ "$(echo "$vars" | grep -c .)" -ge 30 ] || bad "docs/config.md's table lists only: $vars"
n=0
for var in $vars; do
  val=${value[$var]-}
  if [ -z "$val" ]; then
    bad "$var is documented but has no bad value here (nor an exemption)"
    continue
  fi
  case $val in exempt:*) echo "exempt: $var (${val#exempt: })"; continue ;; esac
  rm -f "$tmp/marker"
  out=$(env "$var=$val" "$mw" record -q -o "$tmp/out" -- touch "$tmp/marker" 2>&1); rc=$?
  if [ $rc = 2 ] && [ ! -e "$tmp/marker" ] && [ "$(grep -c . <<<"$out")" = 1 ] && grep -qF "$var" <<<"$out"; then
    echo "ok: $var='$val' -> 2: $out"
    n=$((n + 1))
  else
    bad "$var='$val': record rc $rc, program $([ -e "$tmp/marker" ] && echo ran || echo "did not run"): $out"
  fi
done
for var in "${!value[@]}"; do
  grep -qx "$var" <<<"$vars" || bad "$var has a bad value here but docs/config.md's table does not list it"
done
echo "$n documented variables refused with a bad value"

# A MEMWATCH_* name nobody reads (a typo) is named with the closest known
# one, and the program runs; a documented one, set to a good value, gets no
# such warning
rm -f "$tmp/marker"
out=$(MEMWATCH_OUT="$tmp" "$mw" record -q -o "$tmp/out2" -- touch "$tmp/marker" 2>&1); rc=$?
if [ $rc = 0 ] && [ -e "$tmp/marker" ] &&
   grep -q "warning: MEMWATCH_OUT is not a memwatch variable and is ignored; did you mean MEMWATCH_DIR?" <<<"$out"; then
  echo "ok: MEMWATCH_OUT: $out"
else
  bad "MEMWATCH_OUT: rc $rc: $out"
fi
out=$(MEMWATCH_RATE=100 MEMWATCH_GPU_PM=0 "$mw" record -q -o "$tmp/out3" -- true 2>&1)
grep -q "not a memwatch variable" <<<"$out" && bad "documented variables called unknown: $out"
# every MEMWATCH_* name memwatch's sources read is documented (the list
# record knows is made from the docs)
src=${MW_SOURCE_DIR:?}
for name in $(grep -rhoE '"MEMWATCH_[A-Z0-9_]+[A-Z0-9]"' --include=*.c --include=*.h --include=*.cu \
              "$src/preload" "$src/counters" "$src/cli" "$src/gpu" "$src/calibrate" "$src/report" \
              "$src/sampling" | tr -d '"' | sort -u); do
  out=$(env "$name=1" "$mw" record -q -o "$tmp/out4" -- true 2>&1)
  grep -q "$name is not a memwatch variable" <<<"$out" && bad "$name is read by memwatch but not documented"
done
exit $fail
