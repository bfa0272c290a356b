#!/usr/bin/env bash
# Every MEMWATCH_* variable libmemwatch.so reads (MWP_ENV_LIST in
# preload/env.h) is documented in docs/config.md: a row of its table,
# or, for those memwatch sets itself, named in its text; and every row of the
# table names a variable the library reads. A variable added to one side
# only fails here.
set -u
fail() { echo "FAIL: $*"; exit 1; }
S=${MW_SOURCE_DIR:?}
lst=$(grep -o 'X([A-Z0-9_]*, "MEMWATCH_[A-Z0-9_]*")' "$S/preload/env.h" | sed 's/.*"\(MEMWATCH_[A-Z0-9_]*\)".*/\1/' | sort -u)
rows=$(grep -o '^| `MEMWATCH_[A-Z0-9_]*`' "$S/docs/config.md" | sed 's/^| `//; s/`$//' | sort -u)
[ "$(echo "$lst" | wc -l)" -ge 30 ] || fail "only $(echo "$lst" | wc -l) variables found in MWP_ENV_LIST"
[ "$(echo "$rows" | wc -l)" -ge 30 ] || fail "only $(echo "$rows" | wc -l) rows found in docs/config.md"
bad=0
for v in $lst; do
    echo "$rows" | grep -qx "$v" && continue
    if grep -q "\`$v\`" "$S/docs/config.md"; then
        echo "set by memwatch itself (named in the text): $v"
        continue
    fi
    echo "read by libmemwatch.so, not in docs/config.md: $v"; bad=1
done
for v in $rows; do
    echo "$lst" | grep -qx "$v" || { echo "a row of docs/config.md that libmemwatch.so does not read: $v"; bad=1; }
done
[ $bad = 0 ] || fail "MWP_ENV_LIST and docs/config.md differ"
echo "PASS: $(echo "$lst" | wc -l) variables, $(echo "$rows" | wc -l) rows"
