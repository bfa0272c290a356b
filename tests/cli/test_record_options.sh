#!/usr/bin/env bash
# tests/cli/test_record_options.sh: `memwatch record` checks every option,
# MEMWATCH_* variable and the output directory before it starts the program:
# a bad one exits 2 with one line and the program never runs (a marker file
# it would create stays absent). A program that is not executable exits 126,
# one that does not exist 127. The library, given the same bad variable
# without record, falls back to the default and says so once per process
# tree; the table holds the command's and the library's rules to one list.
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
lib=$B/libmemwatch.so
[ -x "$mw" ] && [ -f "$lib" ] || { echo "SKIP: memwatch or libmemwatch.so not built"; exit 77; }
tmp=$(mktemp -d /tmp/mw_record_options.XXXXXX)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0
bad() { echo "FAILED: $*"; fail=1; }
mkdir ro
ro_ok=1
if [ "$(id -u)" = 0 ]; then
  # root writes into a mode 0555 directory: a read-only mount is needed
  mount -t tmpfs -o ro,size=64k tmpfs ro 2>/dev/null || ro_ok=0
  trap 'umount "$tmp/ro" 2>/dev/null; rm -rf "$tmp"' EXIT
else
  chmod 0555 ro
fi
echo '{"not": "a profile"}' >notprofile.json
printf '#!/bin/sh\necho hi\n' >noexec.sh
chmod 0644 noexec.sh
# options | expected exit | text on stderr
while IFS='|' read -r args want text; do
  args=$(echo $args)
  want=$(echo $want)
  text=$(echo "$text" | sed 's/^ *//; s/ *$//')
  rm -f marker
  # shellcheck disable=SC2086
  out=$("$mw" record -o "$tmp/out" $args -- touch "$tmp/marker" 2>&1)
  rc=$?
  lines=$(grep -c . <<<"$out")
  if [ "$rc" != "$want" ] || [ -e marker ] || ! grep -qF -- "$text" <<<"$out" || [ "$lines" != 1 ]; then
    bad "record $args -> $rc (want $want, text '$text', one line, program not run): $out"
  else
    echo "ok: record $args -> $rc: $out"
  fi
done <<'TABLE'
-i 0                      | 2 | -i '0' is invalid: expected a duration from 1ms to 60s
-i 10parsecs              | 2 | -i '10parsecs' is invalid
-F abc                    | 2 | -F 'abc' is invalid
-F 2000000                | 2 | -F '2000000' is invalid
-m bogus                  | 2 | -m 'bogus' is invalid: expected auto, probe_lat
-a lots                   | 2 | -a 'lots' is invalid
--threshold-ns -5         | 2 | --threshold-ns '-5' is invalid
--profile /nonexistent.json | 2 | machine profile /nonexistent.json
--profile notprofile.json | 2 | machine profile notprofile.json
--bogus                   | 2 | unknown option '--bogus'
TABLE
outs=(/etc/passwd "$tmp/passwd/sub")
[ $ro_ok = 1 ] && outs+=("$tmp/ro/sub" "$tmp/ro") || echo "note: no read-only directory here (root without mount): that case is not run"
cp /etc/passwd "$tmp/passwd"
out=$("$mw" record -o "" -- touch "$tmp/marker" 2>&1); rc=$?
[ $rc = 2 ] && [ ! -e marker ] && echo "ok: -o '' -> 2" || bad "-o '' -> $rc: $out"
out=$("$mw" record -o "$tmp/out" -- 2>&1); rc=$?
[ $rc = 2 ] && [ "$(grep -c . <<<"$out")" = 1 ] && echo "ok: no program -> 2, one line" || bad "no program -> $rc: $out"
for o in "${outs[@]}"; do
  rm -f marker
  out=$("$mw" record -o "$o" -- touch "$tmp/marker" 2>&1)
  rc=$?
  [ $rc = 2 ] && [ ! -e marker ] && [ "$(grep -c . <<<"$out")" = 1 ] && echo "ok: -o $o -> 2: $out" ||
    bad "-o $o -> $rc: $out"
done
# 126 and 127, as a shell
out=$("$mw" record -o "$tmp/out" -- ./noexec.sh 2>&1); rc=$?
[ $rc = 126 ] && grep -q "permission denied" <<<"$out" && echo "ok: not executable -> 126" || bad "not executable -> $rc: $out"
out=$("$mw" record -o "$tmp/out" -- "$tmp" 2>&1); rc=$?
[ $rc = 126 ] && echo "ok: a directory -> 126" || bad "a directory -> $rc: $out"
out=$("$mw" record -o "$tmp/out" -- no-such-program-xyz 2>&1); rc=$?
[ $rc = 127 ] && grep -q "command not found" <<<"$out" && echo "ok: not found -> 127" || bad "not found -> $rc: $out"
[ -e "$tmp/out" ] && ls "$tmp/out" | grep -q mwr && bad "a refused record left raw files"

# MEMWATCH_* set by hand: the command refuses what the library would replace
# variable | value | valid (1) or not (0)
while IFS='|' read -r var val valid; do
  var=$(echo $var); val=$(echo $val); valid=$(echo $valid)
  rm -f marker
  out=$(env "$var=$val" "$mw" record -q -o "$tmp/out" -- touch "$tmp/marker" 2>&1); rc=$?
  lo=$(env "$var=$val" LD_PRELOAD="$lib" MEMWATCH_DIR="$tmp/out" /bin/true 2>&1 | grep -c "$var")
  if [ "$valid" = 1 ]; then
    [ $rc = 0 ] && [ -e marker ] && [ "$lo" = 0 ] && echo "ok: $var=$val accepted by both" ||
      bad "$var=$val (valid): record rc $rc, library warned $lo time(s): $out"
  else
    [ $rc = 2 ] && [ ! -e marker ] && grep -q "$var='" <<<"$out" && [ "$lo" = 1 ] &&
      echo "ok: $var=$val refused by record, replaced with one line by the library" ||
      bad "$var=$val (invalid): record rc $rc, library warned $lo time(s): $out"
  fi
done <<'TABLE'
MEMWATCH_INTERVAL | 0 | 0
MEMWATCH_INTERVAL | 5ms | 1
MEMWATCH_INTERVAL | 61s | 0
MEMWATCH_RATE | 1khz | 1
MEMWATCH_RATE | fast | 0
MEMWATCH_METHOD | probe_lat | 1
MEMWATCH_METHOD | bogus | 0
MEMWATCH_ALLOC_THRESHOLD | off | 1
MEMWATCH_ALLOC_THRESHOLD | 1Q | 0
MEMWATCH_STACK_DEPTH | 0 | 0
MEMWATCH_STACK_DEPTH | 32 | 1
MEMWATCH_RING_PAGES | 6 | 0
MEMWATCH_RING_PAGES | 16 | 1
MEMWATCH_VERBOSE | 9 | 0
MEMWATCH_FOLLOW | maybe | 0
MEMWATCH_THRESHOLD_NS | 0 | 0
MEMWATCH_THRESHOLD_FACTOR | 1 | 0
MEMWATCH_PRECISE | on | 0
MEMWATCH_LDLAT | 2 | 0
MEMWATCH_LDLAT | 100 | 1
MEMWATCH_GROUP_READABLE | 2 | 0
MEMWATCH_RUN_ID | a b | 0
MEMWATCH_RUN_ID | nightly-3 | 1
TABLE

# once per tree: a bad variable, a program that starts three more processes
n=$(MEMWATCH_INTERVAL=0 LD_PRELOAD="$lib" MEMWATCH_DIR="$tmp/tree" \
    /bin/sh -c '/bin/true; /bin/true; /bin/sh -c "/bin/true; /bin/true"' 2>&1 | grep -c MEMWATCH_INTERVAL)
[ "$n" = 1 ] && echo "ok: the library says it once for the tree" || bad "the library said it $n times in one tree"
# calibrate checks where it will write before its benchmarks (minutes) run
for args in "--json /nonexistent/x.json" "--plot /etc/passwd" "--profile /etc/passwd/p.json" "--json $tmp"; do
  s=$(date +%s)
  # shellcheck disable=SC2086
  out=$(timeout 60 "$mw" calibrate --quick $args 2>&1); rc=$?
  [ $rc = 2 ] && [ $(($(date +%s) - s)) -le 2 ] && [ "$(grep -c . <<<"$out")" = 1 ] &&
    echo "ok: calibrate $args -> 2 at once: $out" || bad "calibrate $args -> $rc: $out"
done
exit $fail
