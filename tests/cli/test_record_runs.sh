#!/usr/bin/env bash
# tests/cli/test_record_runs.sh: runs are kept apart.
#   - without -o, each record makes its own memwatch-YYYYMMDD-HHMMSS[-N]
#     directory (five records in a row: five directories, one file each);
#   - five records into one directory (-o): each summary counts one file,
#     its own (the raw files carry the run's name, META run_id);
#   - report of that directory lists the five runs and reports the newest;
#     --run picks one, --all-runs merges them, an unknown --run exits 2;
#   - raw files and run directories are the owner's only (0600, 0700);
#     --group-readable makes them 0640.
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
[ -x "$mw" ] && [ -f "$B/libmemwatch.so" ] || { echo "SKIP: memwatch or libmemwatch.so not built"; exit 77; }
tmp=$(mktemp -d /tmp/mw_record_runs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0
bad() { echo "FAILED: $*"; fail=1; }

for k in 1 2 3 4 5; do
  "$mw" record -- /bin/true 2>"err$k" || bad "record $k: $(cat "err$k")"
  grep -q "1 raw file in $tmp/memwatch-[0-9]\{8\}-[0-9]\{6\}" "err$k" || bad "record $k: $(cat "err$k")"
done
n=$(ls -d memwatch-*/ | wc -l)
[ "$n" = 5 ] && echo "ok: five records, five run directories" || bad "$n run directories: $(ls)"
for d in memwatch-*/; do
  [ "$(ls "$d" | wc -l)" = 1 ] || bad "$d holds $(ls "$d")"
  [ "$(stat -c %a "$d")" = 700 ] || bad "$d mode $(stat -c %a "$d")"
  for f in "$d"*.mwr; do
    [ "$(stat -c %a "$f")" = 600 ] || bad "$f mode $(stat -c %a "$f")"
  done
done
ls -A memwatch-*/ | grep -q "^\.memwatch-status" && bad "a status file was left behind"

for k in 1 2 3 4 5; do
  "$mw" record -o same -- /bin/sh -c 'exit 0' 2>"s$k"
  grep -q "memwatch: 1 raw file in $tmp/same" "s$k" && echo "ok: record $k into one directory counts its one file" ||
    bad "record $k into one directory: $(cat "s$k")"
done
[ "$(ls same/*.mwr | wc -l)" = 5 ] || bad "same/ holds $(ls same)"
out=$("$mw" report same 2>&1 >/dev/null)
grep -q "the inputs hold 5 runs" <<<"$out" && grep -q "reporting the newest" <<<"$out" &&
  grep -q "1 file(s)" <<<"$out" && echo "ok: report lists the runs and takes the newest" || bad "report same: $out"
newest=$(grep -o 'reporting the newest, [^ ]*' <<<"$out" | awk '{print $4}' | tr -d ,)
run=$(grep -ao 'run_id=[^[:space:]]*' same/*.mwr | head -1 | cut -d= -f2)
[ -n "$run" ] || bad "no run_id in the raw files"
"$mw" report same --run "$run" 2>&1 >/dev/null | grep -q "1 file(s)" && echo "ok: --run $run" || bad "--run $run"
"$mw" report same --all-runs 2>&1 >/dev/null | grep -q "5 file(s)" && echo "ok: --all-runs" || bad "--all-runs"
"$mw" report same --run nosuchrun >/dev/null 2>&1; rc=$?
[ $rc = 2 ] && echo "ok: unknown --run exits 2" || bad "unknown --run -> $rc"
[ -n "$newest" ] && [ "$newest" != "$run" ] || [ "$(ls same/*.mwr | wc -l)" = 1 ] || echo "note: newest $newest"

"$mw" record -q --group-readable -o grp -- /bin/true
m=$(stat -c %a grp/*.mwr)
[ "$m" = 640 ] && echo "ok: --group-readable: 640" || bad "--group-readable: $m"
exit $fail
