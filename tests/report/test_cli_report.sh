#!/usr/bin/env bash
# tests/report/test_cli_report.sh: `memwatch report` argument handling as data
# (arguments | expected exit status | text expected in the output), on a raw
# file written by test_report_ingest's builder (mwr_fixture) and on broken
# inputs: a truncated file, a non-raw file, an empty directory.
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
fix=$B/mwr_fixture
[ -x "$fix" ] || { echo "SKIP: $fix not built"; exit 77; }
tmp=$(mktemp -d /tmp/mw_cli_report.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/run" "$tmp/empty" "$tmp/bad"
"$fix" "$tmp/run/p1.mwr" || { echo "FAILED: fixture"; exit 1; }
head -c 700 "$tmp/run/p1.mwr" >"$tmp/bad/cut.mwr"
echo "not a raw file" >"$tmp/bad/junk.mwr"
fail=0
while IFS='|' read -r args want_rc want_text; do
  trim() { local v=$1; v=${v#"${v%%[![:space:]]*}"}; printf '%s' "${v%"${v##*[![:space:]]}"}"; }
  args=$(trim "${args//@/$tmp}")
  want_rc=$(trim "$want_rc")
  want_text=$(trim "$want_text")
  # shellcheck disable=SC2086
  out=$("$mw" report $args 2>&1)
  rc=$?
  if [ "$rc" != "$want_rc" ] || ! grep -qF -- "$want_text" <<<"$out"; then
    echo "FAILED: memwatch report $args -> $rc (want $want_rc, text '$want_text')"
    echo "$out" | head -20
    fail=1
  else
    echo "ok: memwatch report $args -> $rc"
  fi
done <<'TABLE'
                                   | 2 | usage: memwatch report
--help                             | 0 | --json
--bogus @/run                      | 2 | unknown or incomplete option
-o                                 | 2 | unknown or incomplete option
@/nonexistent                      | 2 | No such file or directory
@/empty                            | 2 | holds no .mwr files
@/run                              | 0 | Bandwidth-bound: 50.0%
@/run --json --top 3               | 0 | "flagged_intervals":
@/run -o @/other.db -q             | 0 |
@/bad/cut.mwr -o @/cut.db          | 0 | damaged or unreadable
@/bad/junk.mwr -o @/junk.db        | 1 | nothing to measure or report
@/run/p1.mwr @/bad/cut.mwr -o @/two.db | 0 | file(s) damaged
TABLE
[ -f "$tmp/run/memwatch.db" ] || { echo "FAILED: default database next to the inputs"; fail=1; }
[ -f "$tmp/other.db" ] || { echo "FAILED: -o database"; fail=1; }
n=$(sqlite3 "$tmp/two.db" "SELECT COUNT(*) FROM processes" 2>/dev/null)
[ "$n" = 2 ] || { echo "FAILED: two processes in two.db ($n)"; fail=1; }
exit $fail
