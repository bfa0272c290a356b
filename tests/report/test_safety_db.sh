#!/usr/bin/env bash
# tests/report/test_safety_db.sh: `memwatch report --db FILE` replaces only a
# database memwatch wrote (docs/report.md, "Which database --db replaces"):
#   - a user's own SQLite database (--db, and as DIR/memwatch.db) is refused:
#     exit 2, one line on stderr, the file byte for byte as it was;
#   - a database with some of memwatch's table names but not its schema, and
#     a memwatch database to which someone added a table of their own, are
#     refused the same way;
#   - a database memwatch writes carries the marker table memwatch (format
#     'memwatch report', the schema version) and is replaced;
#   - one of the earlier format (no marker: its schema table and its tables)
#     is replaced, and gets the marker;
#   - an empty file is replaced.
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
fix=$B/mwr_fixture
[ -x "$fix" ] || { echo "SKIP: $fix not built"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 command is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/mw_safety_db.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAILED: $*"; fail=1; }
ok() { echo "ok: $*"; }

mkdir -p "$tmp/run"
"$fix" "$tmp/run/p1.mwr" || { echo "FAILED: fixture"; exit 1; }

# refused FILE WHAT: report --db FILE exits 2 with one stderr line naming
# the file, and FILE is unchanged
refused() {
  local f=$1 what=$2 before after rc lines
  before=$(md5sum <"$f")
  "$mw" report "$tmp/run" --db "$f" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  after=$(md5sum <"$f")
  lines=$(wc -l <"$tmp/err")
  if [ $rc = 2 ] && [ "$before" = "$after" ] && [ "$lines" = 1 ] &&
     grep -q "not replaced" "$tmp/err" && [ ! -s "$tmp/out" ]; then
    ok "$what refused: $(cat "$tmp/err")"
  else
    bad "$what: rc $rc (want 2), checksum ${before%% *} -> ${after%% *}, $lines stderr line(s): $(cat "$tmp/err")"
  fi
}

# 1. a user's own database
sqlite3 "$tmp/user.db" "CREATE TABLE accounts(id INTEGER, name TEXT);
                        INSERT INTO accounts VALUES(1, 'precious');" || exit 1
refused "$tmp/user.db" "a user's own database"
[ "$(sqlite3 "$tmp/user.db" 'SELECT name FROM accounts')" = precious ] ||
  bad "the user's rows are gone"

# 2. the same, where the default database would go (DIR/memwatch.db)
mkdir -p "$tmp/run2"
cp "$tmp/run/p1.mwr" "$tmp/run2/"
cp "$tmp/user.db" "$tmp/run2/memwatch.db"
before=$(md5sum <"$tmp/run2/memwatch.db")
"$mw" report "$tmp/run2" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 2 ] && [ "$(md5sum <"$tmp/run2/memwatch.db")" = "$before" ] &&
  [ "$(wc -l <"$tmp/err")" = 1 ] && ok "DIR/memwatch.db of a user refused" ||
  bad "DIR/memwatch.db of a user: rc $rc, $(cat "$tmp/err")"

# 3. memwatch's table names without its schema table
sqlite3 "$tmp/lookalike.db" "CREATE TABLE runs(x); CREATE TABLE processes(x);
                             CREATE TABLE samples(x); INSERT INTO samples VALUES(42);" || exit 1
refused "$tmp/lookalike.db" "a database with some of memwatch's table names"

# 4. a database memwatch writes: the marker, and it is replaced
"$mw" report "$tmp/run" -q --db "$tmp/mw.db" || bad "report --db mw.db (new file)"
# the schema version report/schema.h defines
ver=$(sed -n 's/^#define MW_REPORT_SCHEMA_VERSION \([0-9]*\).*/\1/p' "${MW_SOURCE_DIR:?}/report/schema.h")
marker=$(sqlite3 "$tmp/mw.db" "SELECT format || ' ' || version FROM memwatch")
[ -n "$ver" ] && [ "$marker" = "memwatch report $ver" ] && ok "marker table: $marker" ||
  bad "marker table: '$marker' (schema version '$ver')"
"$mw" report "$tmp/run" -q --db "$tmp/mw.db" --no-symbols
rc=$?
[ $rc = 0 ] && ok "a database memwatch wrote is replaced" || bad "replacing mw.db: rc $rc"

# 5. a memwatch database with a table of someone's own
cp "$tmp/mw.db" "$tmp/added.db"
sqlite3 "$tmp/added.db" "CREATE TABLE my_notes(t TEXT); INSERT INTO my_notes VALUES('mine');" || exit 1
refused "$tmp/added.db" "a memwatch database with a user's table"
[ "$(sqlite3 "$tmp/added.db" 'SELECT t FROM my_notes')" = mine ] || bad "the user's table is gone"

# 6. the earlier format: no marker, schema version 1 and its tables
cp "$tmp/mw.db" "$tmp/v1.db"
sqlite3 "$tmp/v1.db" "DROP TABLE memwatch; UPDATE schema SET version = 1" || exit 1
[ -z "$(sqlite3 "$tmp/v1.db" "SELECT name FROM sqlite_master WHERE name = 'memwatch'")" ] ||
  bad "the marker is still in v1.db"
# the same inputs and options: read as it is
"$mw" report "$tmp/run" -q --db "$tmp/v1.db" --no-symbols
rc=$?
[ $rc = 0 ] && ok "a database of the earlier format is read as it is" || bad "earlier format, unchanged inputs: rc $rc"
# other options: built again, replaced, and marked
"$mw" report "$tmp/run" -q --db "$tmp/v1.db"
rc=$?
marker=$(sqlite3 "$tmp/v1.db" "SELECT format FROM memwatch" 2>/dev/null)
[ $rc = 0 ] && [ "$marker" = "memwatch report" ] &&
  ok "a database of the earlier format is replaced (and marked)" ||
  bad "earlier format: rc $rc, marker '$marker'"
# ... but not one whose schema table says another version
cp "$tmp/v1.db" "$tmp/v7.db"
sqlite3 "$tmp/v7.db" "DROP TABLE memwatch; UPDATE schema SET version = 7" || exit 1
refused "$tmp/v7.db" "no marker and a schema version memwatch never wrote"

# 7. an empty file (mktemp's) is replaced
: >"$tmp/empty.db"
"$mw" report "$tmp/run" -q --db "$tmp/empty.db" --no-symbols
rc=$?
[ $rc = 0 ] && [ -s "$tmp/empty.db" ] && ok "an empty file is replaced" || bad "empty file: rc $rc"

# 8. a file that cannot be read is not replaced (unless root, who reads it)
if [ "$(id -u)" != 0 ]; then
  cp "$tmp/user.db" "$tmp/locked.db"
  chmod 000 "$tmp/locked.db"
  "$mw" report "$tmp/run" -q --db "$tmp/locked.db" 2>"$tmp/err"
  rc=$?
  chmod 600 "$tmp/locked.db"
  [ $rc = 2 ] && cmp -s "$tmp/user.db" "$tmp/locked.db" && ok "an unreadable file refused" ||
    bad "unreadable file: rc $rc $(cat "$tmp/err")"
fi

[ $fail = 0 ] && echo PASS
exit $fail
