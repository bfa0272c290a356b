#!/usr/bin/env bash
# tests/cli/test_record_buildid.sh: allocation stacks hold after
# libmemwatch.so is rebuilt or upgraded.
#   - every allocation stack begins in libmemwatch.so's own code, so the
#     report unwinds it with the library's unwind tables; memwatch record
#     keeps a copy of the library by its build-id beside the raw files
#     (DIR/.build-id/xx/yyyy.debug), once;
#   - with another build at the recorded path, memwatch report unwinds the
#     stacks through that copy: whole stacks, down to main;
#   - without the copy the same stacks end in the library (truncated): the
#     check that it is the copy that holds them;
#   - report --no-symbols unwinds them too.
set -u
B=${MW_BUILD_DIR:?}
for f in memwatch libmemwatch.so mwp_app libmwhot.so; do
  [ -e "$B/$f" ] || { echo "SKIP: $B/$f not built"; exit 77; }
done
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 command is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/mw_record_buildid.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAILED: $*"; fail=1; }

# memwatch finds its library beside itself: a copy of both, which the test
# may then replace
cp "$B/memwatch" "$B/libmemwatch.so" "$tmp/"
"$tmp/memwatch" record -q -o "$tmp/run" -- "$B/mwp_app" alloc 0 >/dev/null 2>"$tmp/err" ||
  bad "record failed: $(cat "$tmp/err")"
"$tmp/memwatch" record -q -o "$tmp/run" -- "$B/mwp_app" alloc 0 >/dev/null 2>>"$tmp/err" ||
  bad "second record failed: $(cat "$tmp/err")"
bid=$(readelf -n "$tmp/libmemwatch.so" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
kept=$(cd "$tmp/run" && find .build-id -type f | sort)
echo "kept: $kept"
[ "$kept" = ".build-id/${bid:0:2}/${bid:2}.debug" ] && echo "ok: one copy of the library, by its build-id" ||
  bad "kept: '$kept', expected .build-id/${bid:0:2}/${bid:2}.debug"
cmp -s "$tmp/libmemwatch.so" "$tmp/run/.build-id/${bid:0:2}/${bid:2}.debug" || bad "the copy differs from the library"

stacks() { # db: allocations whose stack is whole and reaches main
  sqlite3 "$1" "select count(*) from allocations a where a.truncated = 0 and exists
    (with recursive up(id, parent_id, pc_id) as (select id, parent_id, pc_id from stacks where id = a.stack_id
       union all select s.id, s.parent_id, s.pc_id from stacks s join up on s.id = up.parent_id)
     select 1 from up join pcs p on p.id = up.pc_id where p.symbol = 'main' or p.function = 'main')"
}
"$tmp/memwatch" report -q --db "$tmp/same.db" "$tmp/run" --all-runs >/dev/null 2>&1 || bad "report failed"
same=$(stacks "$tmp/same.db")
all=$(sqlite3 "$tmp/same.db" "select count(*) from allocations")
echo "the same library: $same of $all allocation stacks whole, down to main"
[ "$all" -ge 14 ] && [ "$same" = "$all" ] || bad "with the library unchanged: $same of $all stacks whole"

# without symbols the stacks are unwound all the same (libelf was not set
# up before, and every stack ended in the library)
"$tmp/memwatch" report -q --no-symbols --db "$tmp/nosym.db" "$tmp/run" --all-runs >/dev/null 2>&1 || bad "report --no-symbols failed"
nosym=$(sqlite3 "$tmp/nosym.db" "select count(*) from allocations a join stacks s on s.id = a.stack_id where a.truncated = 0 and s.depth >= 3")
echo "--no-symbols: $nosym of $all stacks whole"
[ "$nosym" = "$all" ] || bad "with --no-symbols: $nosym of $all stacks whole"

# another build at the recorded path (an object with another build-id)
cp "$B/libmwhot.so" "$tmp/libmemwatch.so"
"$tmp/memwatch" report -q --db "$tmp/rebuilt.db" "$tmp/run" --all-runs >/dev/null 2>&1 || bad "report failed"
rebuilt=$(stacks "$tmp/rebuilt.db")
echo "library rebuilt, the copy kept: $rebuilt of $all stacks whole"
[ "$rebuilt" = "$all" ] || bad "after a rebuild: $rebuilt of $all stacks whole, expected all, through the kept copy"

rm -rf "$tmp/run/.build-id"
"$tmp/memwatch" report -q --db "$tmp/none.db" "$tmp/run" --all-runs >/dev/null 2>&1 || bad "report failed"
none=$(stacks "$tmp/none.db")
echo "library rebuilt, no copy: $none of $all stacks whole"
[ "$none" = 0 ] || bad "without the copy $none stacks were whole: the check above proves nothing"

[ $fail = 0 ] && echo PASS
exit $fail
