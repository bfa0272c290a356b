#!/usr/bin/env bash
# tests/report/test_report_safety.sh: a report never destroys the database it
# cannot rebuild (docs/report.md, "The database is never lost"):
#   - inputs that are not raw files (junk, a database, an empty file) are
#     refused and the database stays as it was;
#   - a FIFO (named x.mwr) is refused at once, never read;
#   - a report killed mid-ingest (SIGKILL) leaves the old database, and the
#     next report removes what it left;
#   - a full disk (a small tmpfs, where this test may mount one) leaves the
#     old database;
#   - two reports of one directory at once both print the right summary (the
#     second waits); --no-wait fails with a non-zero exit instead;
#   - an existing file that is not a database is not overwritten;
#   - the database is created 0600 (0640 with --group-readable);
#   - a report of unchanged files reads the database as it is, but never a
#     stale or damaged one: a raw file touched, the machine profile changed
#     or the database damaged (its pages overwritten) makes it build again.
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
fix=$B/mwr_fixture
[ -x "$fix" ] || { echo "SKIP: $fix not built"; exit 77; }
tmp=$(mktemp -d /tmp/mw_report_safety.XXXXXX)
mnt=""
cleanup() {
  [ -n "$mnt" ] && umount "$mnt" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
bad() { echo "FAILED: $*"; fail=1; }
ok() { echo "ok: $*"; }
rows() { sqlite3 "$1" "SELECT COUNT(*) FROM samples" 2>/dev/null; }

mkdir -p "$tmp/run"
"$fix" "$tmp/run/p1.mwr" || { echo "FAILED: fixture"; exit 1; }
"$fix" "$tmp/run/p2.mwr" || { echo "FAILED: fixture"; exit 1; }
"$mw" report "$tmp/run" -q || bad "first report"
db=$tmp/run/memwatch.db
want=$(rows "$db")
[ -n "$want" ] && [ "$want" -gt 0 ] || bad "no samples in the first database ($want)"
sum0=$(md5sum <"$db")

# 1. bad inputs: nothing replaces the database
echo "not a raw file" >"$tmp/junk.mwr"
: >"$tmp/empty.mwr"
for args in "$tmp/junk.mwr --db $db" "$tmp/empty.mwr --db $db" "$db" "$db --db $db"; do
  # shellcheck disable=SC2086
  out=$("$mw" report $args 2>&1)
  rc=$?
  if [ $rc = 2 ] && [ "$(md5sum <"$db")" = "$sum0" ] && grep -q "not a raw\|not a memwatch raw" <<<"$out"; then
    ok "report $args refused (rc 2), database kept"
  else
    bad "report $args -> rc $rc, database $(rows "$db") rows (want 2, $want): $out"
  fi
done
grep -q "SQLite database" <<<"$("$mw" report "$db" 2>&1)" || bad "a database named as input is not called one"
mkdir -p "$tmp/onlyjunk"
cp "$tmp/junk.mwr" "$tmp/onlyjunk/a.mwr"
cp "$db" "$tmp/onlyjunk/memwatch.db"
out=$("$mw" report "$tmp/onlyjunk" 2>&1)
rc=$?
[ $rc = 2 ] && [ "$(rows "$tmp/onlyjunk/memwatch.db")" = "$want" ] &&
  grep -q "left out" <<<"$out" && ok "directory of junk refused, its database kept" ||
  bad "directory of junk -> rc $rc: $out"

# 2. a FIFO among the raw files: named and left out within a second (the
#    report goes on with the others), never opened
mkdir -p "$tmp/fifo"
cp "$tmp/run/p1.mwr" "$tmp/fifo/"
mkfifo "$tmp/fifo/x.mwr"
s=$(date +%s%N)
timeout 20 "$mw" report "$tmp/fifo" >/dev/null 2>"$tmp/fifo.err" &
fp=$!
ms=""
for _ in $(seq 1 200); do
  if grep -q "x.mwr: a FIFO" "$tmp/fifo.err"; then
    ms=$((($(date +%s%N) - s) / 1000000))
    break
  fi
  sleep 0.01
done
wait $fp
rc=$?
if [ $rc = 0 ] && [ -n "$ms" ] && [ "$ms" -lt 2000 ]; then
  ok "FIFO in the directory named and left out after $ms ms, report rc 0"
else
  bad "FIFO in the directory: rc $rc, message after ${ms:-never} ms: $(cat "$tmp/fifo.err")"
fi
s=$(date +%s%N)
out=$(timeout 10 "$mw" report "$tmp/fifo/x.mwr" 2>&1)
rc=$?
ms=$((($(date +%s%N) - s) / 1000000))
[ $rc = 2 ] && [ $ms -lt 2000 ] && grep -q "FIFO" <<<"$out" &&
  ok "FIFO named as input refused in $ms ms" || bad "FIFO named as input: rc $rc after $ms ms: $out"

# 3. SIGKILL mid-ingest: many files make the ingest last a while
mkdir -p "$tmp/big"
cp "$tmp/run/p1.mwr" "$tmp/big/p0.mwr"
(cd "$tmp/big" && tee p{1..1500}.mwr <p0.mwr >/dev/null)
cp "$db" "$tmp/big/memwatch.db"
"$mw" report "$tmp/big" -q &
pid=$!
caught=0
for _ in $(seq 1 1000); do
  if compgen -G "$tmp/big/.memwatch.db.tmp-*" >/dev/null && kill -STOP $pid 2>/dev/null; then
    caught=1
    break
  fi
  sleep 0.005
done
kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
if [ $caught = 1 ]; then
  [ "$(rows "$tmp/big/memwatch.db")" = "$want" ] && ok "SIGKILL mid-ingest: old database kept" ||
    bad "SIGKILL mid-ingest: database has $(rows "$tmp/big/memwatch.db") rows (want $want)"
  rm -f "$tmp"/big/p1[0-9][0-9]*.mwr "$tmp"/big/p[2-9][0-9][0-9].mwr
  "$mw" report "$tmp/big" -q || bad "report after the kill"
  compgen -G "$tmp/big/.memwatch.db.tmp-*" >/dev/null && bad "the killed report's file was not removed" ||
    ok "the next report removed what the killed one left"
else
  bad "could not catch the report mid-ingest"
fi

# 4. a full disk: the old database survives, the report says why and fails
mkdir -p "$tmp/mnt"
size=$(($(stat -c %s "$db") + 96 * 1024))
if mount -t tmpfs -o size=$size tmpfs "$tmp/mnt" 2>/dev/null; then
  mnt=$tmp/mnt
  cp "$db" "$mnt/memwatch.db"
  touch "$tmp/run/p2.mwr" # changed: the copy is not read as it is, the report ingests
  out=$("$mw" report "$tmp/run" --db "$mnt/memwatch.db" 2>&1)
  rc=$?
  if [ $rc != 0 ] && [ "$(rows "$mnt/memwatch.db")" = "$want" ] && grep -q "No space left on device.*left as it was" <<<"$out"; then
    ok "full disk: rc $rc, database kept: $(grep -m1 'left as it was' <<<"$out")"
  else
    bad "full disk: rc $rc, $(rows "$mnt/memwatch.db") rows: $out"
  fi
  compgen -G "$mnt/.memwatch.db.tmp-*" >/dev/null && bad "full disk: the new file was left behind"
  umount "$mnt" && mnt=""
else
  echo "note: cannot mount a tmpfs here (not root or no CAP_SYS_ADMIN): the full-disk case is not run"
fi

# 5. two reports of one directory at once
"$mw" report "$tmp/run" >"$tmp/c1.out" 2>"$tmp/c1.err" &
p1=$!
"$mw" report "$tmp/run" >"$tmp/c2.out" 2>"$tmp/c2.err" &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
for k in 1 2; do
  r=$r1; [ $k = 2 ] && r=$r2
  if [ $r = 0 ]; then
    grep -q "Bandwidth-bound: 50.0%" "$tmp/c$k.out" && grep -q "2 file(s)" "$tmp/c$k.err" &&
      ok "concurrent report $k: right summary" ||
      bad "concurrent report $k: rc 0 with a wrong summary: $(cat "$tmp/c$k.out" "$tmp/c$k.err")"
  else
    ok "concurrent report $k: non-zero exit ($r)"
  fi
done
[ $r1 = 0 ] || [ $r2 = 0 ] || bad "neither concurrent report succeeded"
flock "$tmp/run" sleep 3 &
fl=$!
sleep 0.3
out=$("$mw" report "$tmp/run" --no-wait 2>&1)
rc=$?
[ $rc = 1 ] && grep -q "another memwatch report" <<<"$out" && ok "--no-wait while another holds the lock: rc 1" ||
  bad "--no-wait: rc $rc: $out"
s=$(date +%s%N)
"$mw" report "$tmp/run" >/dev/null 2>"$tmp/w.err"
ms=$((($(date +%s%N) - s) / 1000000))
wait $fl
[ $ms -gt 1500 ] && grep -q "waiting for another report" "$tmp/w.err" && ok "a report waits ($ms ms) for the lock" ||
  bad "no wait for the lock ($ms ms): $(cat "$tmp/w.err")"

# 6. an existing file that is not a database is never overwritten
echo '{"mine": 1}' >"$tmp/out.json"
out=$("$mw" report "$tmp/run" --db "$tmp/out.json" 2>&1)
rc=$?
[ $rc = 2 ] && [ "$(cat "$tmp/out.json")" = '{"mine": 1}' ] && ok "--db naming a JSON file refused" ||
  bad "--db out.json: rc $rc: $out"
out=$("$mw" report "$tmp/run" -o "$tmp/old.db" -q 2>&1)
[ $? = 0 ] && grep -q "spelled --db" <<<"$out" && [ -n "$(rows "$tmp/old.db")" ] &&
  ok "-o still names the database, with a note" || bad "-o: $out"

# 7. modes
m=$(stat -c %a "$db")
[ "$m" = 600 ] && ok "database mode 600" || bad "database mode $m"
"$mw" report "$tmp/run" -q --group-readable
m=$(stat -c %a "$db")
[ "$m" = 640 ] && ok "--group-readable: mode 640" || bad "--group-readable: mode $m"

# 8. a database read as it is only when it is neither stale nor damaged
summary() { "$mw" report "$tmp/run" "$@" 2>"$tmp/r.err" | grep -E '^(Bandwidth-bound|  samples:)'; }
ref=$(summary)
reused() { grep -q "not ingested again" "$tmp/r.err"; }
[ "$(summary)" = "$ref" ] && reused && ok "unchanged files: the database read as it is" ||
  bad "unchanged files: ingested again or another summary: $(cat "$tmp/r.err")"
touch "$tmp/run/p1.mwr"
[ "$(summary)" = "$ref" ] && ! reused && ok "a raw file touched: ingested again" ||
  bad "a raw file touched: $(cat "$tmp/r.err")"
echo '{}' >"$tmp/prof.json"
summary --profile "$tmp/prof.json" >/dev/null
summary --profile "$tmp/prof.json" >/dev/null
reused || bad "the same profile twice: ingested again: $(cat "$tmp/r.err")"
touch -d '1 minute ago' "$tmp/prof.json"
summary --profile "$tmp/prof.json" >/dev/null
! reused && ok "the machine profile changed: ingested again" ||
  bad "the machine profile changed: the database read as it is"
summary >/dev/null
# the samples table's pages overwritten, the sources table intact: the
# database still answers which files it holds, but it is damaged
psz=$(sqlite3 "$db" "PRAGMA page_size")
for p in $(sqlite3 "$db" "SELECT pageno FROM dbstat WHERE name = 'samples'"); do
  dd if=/dev/urandom of="$db" bs="$psz" seek=$((p - 1)) count=1 conv=notrunc status=none
done
[ "$(sqlite3 "$db" "SELECT COUNT(*) FROM sources")" = 2 ] || bad "the damage reached the sources table"
out=$(summary)
[ "$out" = "$ref" ] && ! reused && [ "$(rows "$db")" = "$want" ] && ok "a damaged database: built again" ||
  bad "a damaged database: $out / $(cat "$tmp/r.err")"
exit $fail
