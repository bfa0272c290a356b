#!/usr/bin/env bash
# tests/cli/test_record_killed.sh: the program memwatch record started is in
# the report with its end when SIGKILL (which memwatch cannot catch) ends it.
#   - killed before it began recording (it wrote nothing): memwatch record,
#     its parent, writes its record (command line, start, CPU time, the
#     signal; META reported_by=parent), and the report lists it;
#   - killed after it began (its own file has no trailer): the report takes
#     the end from memwatch record's record, one process.
set -u
B=${MW_BUILD_DIR:?}
for f in memwatch libmemwatch.so mwp_app; do
  [ -e "$B/$f" ] || { echo "SKIP: $B/$f not built"; exit 77; }
done
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 command is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/mw_record_killed.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0
bad() { echo "FAILED: $*"; fail=1; }

"$B/memwatch" record -o k1 -- sh -c 'kill -9 $$' 2>err1
rc=$?
[ $rc = 137 ] || bad "record returned $rc, expected 137 (128 + SIGKILL)"
"$B/memwatch" report -q --db k1.db k1 >/dev/null 2>&1 || bad "report of k1 failed"
row=$(sqlite3 k1.db "select count(*), max(exit_status), max(cmdline), max(t_start > 0), max(clean_exit) from processes")
echo "killed at once: $row"
[ "$row" = "1|-9|sh -c kill -9 \$\$|1|1" ] || bad "killed at once: processes '$row', expected one, -9, its command line and start"
rb=$(sqlite3 k1.db "select value from meta where key = 'reported_by'")
[ "$rb" = parent ] || bad "META reported_by '$rb'"
"$B/memwatch" report k1 2>/dev/null | grep -q 'killed by SIGKILL before memwatch recorded it' || bad "the text report does not say it"

"$B/memwatch" record -o k2 -- "$B/mwp_app" spin >out2 2>err2 &
rec=$!
for _ in $(seq 100); do grep -q ready out2 2>/dev/null && break; sleep 0.05; done
sleep 0.4
app=$(pgrep -P $rec | head -1)
[ -n "$app" ] && kill -9 "$app"
wait $rec
rc=$?
[ $rc = 137 ] || bad "record returned $rc after the program was killed, expected 137"
"$B/memwatch" report -q --db k2.db k2 >/dev/null 2>&1 || bad "report of k2 failed"
row=$(sqlite3 k2.db "select count(*), max(exit_status), max(clean_exit), max(user_ns > 0), (select count(*) from intervals) > 3 from processes")
echo "killed after it began: $row"
[ "$row" = "1|-9|0|1|1" ] || bad "killed after it began: '$row', expected one process, -9, no trailer of its own, its CPU time, its intervals"
"$B/memwatch" report k2 2>/dev/null | grep 'mwp_app spin' | grep -q 'killed by SIGKILL (its parent, pid' || bad "the text report: $("$B/memwatch" report k2 2>/dev/null | grep 'mwp_app spin')"

[ $fail = 0 ] && echo PASS
exit $fail
