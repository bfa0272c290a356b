#!/usr/bin/env bash
# tests/cli/test_safety_modes.sh: every file and directory memwatch creates
# is its owner's only (files 0600, directories 0700) under a umask of 022,
# and its group's to read too (0640, 0750) with --group-readable (or
# MEMWATCH_GROUP_READABLE=1 for record) even under a umask of 077
# (docs/report.md, "File modes"). Checked with stat -c %a:
#   - record -o DIR (each directory it creates on the way), the auto-named
#     memwatch-YYYYMMDD-HHMMSS directory, the raw files, DIR/.build-id/,
#     its subdirectory and the copy of libmemwatch.so;
#   - report: DIR/memwatch.db, --db FILE, --html FILE;
#   - export: pprof, perfetto, folded, csv, html (and the database export
#     makes for a directory of raw files);
#   - calibrate: --json, --plot DIR and its SVGs, --html, the machine profile
#     and the directories made for it.
set -u
B=${MW_BUILD_DIR:?}
for f in memwatch libmemwatch.so mwr_fixture; do
  [ -e "$B/$f" ] || { echo "SKIP: $B/$f not built"; exit 77; }
done
mw=$B/memwatch
tmp=$(mktemp -d /tmp/mw_safety_modes.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0
bad() { echo "FAILED: $*"; fail=1; }
# want MODE PATH...: each path has that mode
want() {
  local m=$1 p got
  shift
  for p in "$@"; do
    if [ ! -e "$p" ]; then
      bad "$p was not created"
      continue
    fi
    got=$(stat -c %a "$p")
    [ "$got" = "$m" ] && echo "ok: $got $p" || bad "$p has mode $got, want $m"
  done
}
# the .build-id tree of a run directory: directories, then the library copy
buildid() {
  local d=$1 dm=$2 fm=$3 sub lib
  sub=$(find "$d/.build-id" -mindepth 1 -maxdepth 1 -type d | head -1)
  lib=$(find "$d/.build-id" -name '*.debug' -type f | head -1)
  want "$dm" "$d/.build-id" "${sub:-$d/.build-id/??}"
  want "$fm" "${lib:-$d/.build-id/??/*.debug}"
}

# ---- owner only, umask 022 ----
umask 022
"$mw" record -q -o out/a/b -- sh -c 'exit 0' || bad "record -o out/a/b"
want 700 out out/a out/a/b
want 600 out/a/b/*.mwr
buildid out/a/b 700 600
mkdir auto && (cd auto && "$mw" record -q -- sh -c 'exit 0') || bad "record (auto-named directory)"
want 700 auto/memwatch-*
"$mw" report -q out/a/b || bad "report out/a/b"
want 600 out/a/b/memwatch.db

mkdir -p fx
"$B/mwr_fixture" fx/p1.mwr || { echo "FAILED: fixture"; exit 1; }
"$mw" export fx --format folded -o ex.folded || bad "export folded (with the database it makes)"
want 600 fx/memwatch.db ex.folded
for f in pprof perfetto csv html; do
  "$mw" export fx --format $f -o ex.$f || bad "export $f"
  want 600 ex.$f
done
"$mw" report -q fx --db own.db --html own.html || bad "report --db --html"
want 600 own.db own.html

"$mw" calibrate --bench mlp,ladder --quick --mlp-chains 8 --ladder-max 8M --json cal.json \
  --plot plots --html cal.html --profile prof/sub/profile.json >cal.out 2>&1 ||
  { bad "calibrate"; tail -5 cal.out; }
want 600 cal.json cal.html plots/*.svg prof/sub/profile.json
want 700 plots prof prof/sub

# ---- group-readable ----
"$mw" record -q --group-readable -o g22 -- sh -c 'exit 0' || bad "record --group-readable, umask 022"
want 750 g22
want 640 g22/*.mwr
buildid g22 750 640
# umask 077: the modes do not depend on the umask, the raw files that
# libmemwatch.so writes included
umask 077
"$mw" record -q --group-readable -o gout/a -- sh -c 'exit 0' || bad "record --group-readable"
want 750 gout gout/a
want 640 gout/a/*.mwr
buildid gout/a 750 640
mkdir gauto && (cd gauto && MEMWATCH_GROUP_READABLE=1 "$mw" record -q -- sh -c 'exit 0') ||
  bad "MEMWATCH_GROUP_READABLE=1 record"
want 750 gauto/memwatch-*
"$mw" report -q --group-readable gout/a --html g.html || bad "report --group-readable"
want 640 gout/a/memwatch.db g.html
mkdir -p gfx && cp fx/p1.mwr gfx/
"$mw" export gfx --group-readable --format csv -o g.csv || bad "export --group-readable"
want 640 gfx/memwatch.db g.csv
# without the switch, under umask 077 too: the owner's only
"$mw" export fx --format pprof -o o77.pprof || bad "export pprof, umask 077"
want 600 o77.pprof

[ $fail = 0 ] && echo PASS
exit $fail
