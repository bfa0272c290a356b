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
--bogus @/run                      | 2 | unknown option '--bogus' ('memwatch report --help' lists them)
-o                                 | 2 | -o needs a value
--db                               | 2 | --db needs a value
@/run --top -3                     | 2 | --top '-3' is invalid
@/run --top abc                    | 2 | --top 'abc' is invalid
@/run --top 2.5                    | 2 | --top '2.5' is invalid
@/run --threshold 0                | 2 | --threshold '0' is invalid
@/run --threshold 1e999            | 2 | --threshold '1e999' is invalid
@/run --precise-threshold 0        | 2 | --precise-threshold '0' is invalid
@/run --json --precise-threshold 500 | 0 | "threshold_source":	"option"
@/run --json --threshold 500       | 0 | "threshold_source":	"option"
@/run --profile @/nonexistent.json | 2 | No such file or directory
@/run --db                         | 2 | --db needs a value
@/run --db @/nonexistent/x.db      | 2 | nonexistent: No such file or directory
@/run --top 0                      | 2 | --top '0' is invalid
@/nonexistent                      | 2 | No such file or directory
@/empty                            | 2 | holds no .mwr files
@/run                              | 0 | Bandwidth-bound: 50.0%
@/run --json --top 3               | 0 | "flagged_intervals":
@/run --top 1                      | 0 | [20 of 20, 95% CI 83.9-100.0%]
@/run --by thread --top 1          | 0 | By thread (bound:
@/run --by process                 | 0 | 77 fixture run
@/run --db @/other.db -q           | 0 |
@/bad/cut.mwr --db @/cut.db        | 0 | damaged or unreadable
@/bad/junk.mwr --db @/junk.db      | 2 | not a memwatch raw file
@/bad                              | 0 | junk.mwr: not a memwatch raw file (it does not start with MEMWATCH); left out
@/run/p1.mwr @/bad/cut.mwr --db @/two.db | 0 | file(s) damaged
TABLE
[ -f "$tmp/run/memwatch.db" ] || { echo "FAILED: default database next to the inputs"; fail=1; }
[ -f "$tmp/other.db" ] || { echo "FAILED: --db database"; fail=1; }
n=$(sqlite3 "$tmp/two.db" "SELECT COUNT(*) FROM processes" 2>/dev/null)
[ "$n" = 2 ] || { echo "FAILED: two processes in two.db ($n)"; fail=1; }
exit $fail
