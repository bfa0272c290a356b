#!/usr/bin/env bash
# tests/cli/test_record_size_stacks.sh: allocation call chains are written
# once per process (the stack table, format 1.1: MWR_STACK records that
# allocation records name by id), and files of format 1.0 (every allocation
# with its frames) still read the same.
#  1. A program that allocates 64 KiB 1,000 times from one call site, with
#     frame-pointer stacks: its file holds 1,000 allocation records and one
#     STACK record, no allocation carries frames of its own, and the report
#     sites all 1,000 allocations in the allocating function.
#  2. The same file rewritten as format 1.0 (the frames back in every
#     allocation record, the STACK records gone, header and trailer as the
#     old writer wrote them): the report reads it, and its allocation sites
#     are those of the 1.1 file, one for one.
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
lib=$B/libmemwatch.so
[ -x "$mw" ] && [ -f "$lib" ] || { echo "SKIP: memwatch or libmemwatch.so not built"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed (reads the raw files)"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 not installed (reads the report)"; exit 77; }
CC=${CC:-cc}
command -v "$CC" >/dev/null || { echo "SKIP: no C compiler to build the test program"; exit 77; }
tmp=$(mktemp -d /tmp/mw_record_stacks.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAILED: $*"; fail=1; }

cat >"$tmp/site.c" <<'EOF'
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) void *one_site(size_t n)
{
    return malloc(n);
}
int main(void)
{
    unsigned long sum = 0;
    for (int i = 0; i < 1000; i++) {
        char *p = one_site(65536);
        if (!p)
            return 1;
        memset(p, i, 4096);
        sum += (unsigned char)p[100];
        free(p);
    }
    for (volatile unsigned long k = 0; k < 200000000ul; k++) /* begins recording */
        ;
    return sum == 12345 ? 3 : 0;
}
EOF
"$CC" -O1 -g -fno-omit-frame-pointer -o "$tmp/site" "$tmp/site.c" ||
  { echo "SKIP: $CC cannot build the test program"; exit 77; }

MEMWATCH_UNWIND=fp "$mw" record -q -o "$tmp/new" -- "$tmp/site"
rc=$?
[ "$rc" = 0 ] || bad "the program exited with $rc under memwatch record, 0 expected"

# count.py FILE...: "allocs N inline N stacks N refs N" over the files;
# old.py IN OUT: IN rewritten as format 1.0
cat >"$tmp/mwr.py" <<'EOF'
import struct, sys
def recs(b):
    off = struct.unpack_from('<I', b, 12)[0]
    while off + 8 <= len(b):
        t, s = struct.unpack_from('<II', b, off)
        if s < 8 or s % 8 or off + s > len(b):
            break
        yield t, off, s
        off += s
def count(paths):
    a = inline = stacks = refs = 0
    for p in paths:
        b = open(p, 'rb').read()
        for t, off, s in recs(b):
            if t == 6:
                a += 1
                kind, nfr = struct.unpack_from('<HH', b, off + 8 + 28)
                inline += nfr > 0
                refs += bool(kind & 0x4000)
            elif t == 15:
                stacks += 1
    print(f'allocs {a} inline {inline} stacks {stacks} refs {refs}')
def old(src, dst):
    b = open(src, 'rb').read()
    table = {}
    for t, off, s in recs(b):
        if t == 15:
            sid, nfr = struct.unpack_from('<IH', b, off + 8)
            table[sid] = b[off + 16:off + 16 + 8 * nfr]
    out = bytearray(b[:32])
    struct.pack_into('<HH', out, 8, 1, 0)            # format 1.0
    n = 0
    for t, off, s in recs(b):
        body = b[off + 8:off + s]
        if t == 15:
            continue
        if t == 1:
            body = body.replace(b'format=1.2\n', b'format=1.0\n').replace(b'format=1.1\n', b'format=1.0\n')
        if t == 6:
            kind, nfr = struct.unpack_from('<HH', body, 28)
            if kind & 0x4000:
                sid, = struct.unpack_from('<I', body, 32)
                fr = table.get(sid, b'')
                body = bytearray(body[:32]) + fr
                struct.pack_into('<HH', body, 28, kind & ~0x4000, len(fr) // 8)
        if t == 0x7fff:
            body = bytearray(body)
            struct.pack_into('<QQ', body, 8, n, len(out))
        body = bytes(body) + b'\0' * (-len(body) % 8)
        out += struct.pack('<II', t, 8 + len(body)) + body
        n += t != 0x7fff
    open(dst, 'wb').write(out)
if sys.argv[1] == 'count':
    count(sys.argv[2:])
else:
    old(sys.argv[2], sys.argv[3])
EOF

files=$(ls "$tmp"/new/memwatch-*.mwr 2>/dev/null)
[ -n "$files" ] || { bad "no raw file written"; exit 1; }
# shellcheck disable=SC2086
c=$(python3 "$tmp/mwr.py" count $files)
echo "1.1 file: $c"
read -r _ allocs _ inline _ stacks _ refs <<<"$c"
# one site's 1000 allocations: its first 32 recorded, later ones sampled
# (format 1.2, docs/raw-format.md); the report's alloc_sites row counts all
"$mw" report -q --db "$tmp/new.db" "$tmp/new" >/dev/null 2>&1 || bad "memwatch report failed on the 1.1 file"
rec=$(sqlite3 "$tmp/new.db" "select recorded from alloc_sites where count = 1000")
echo "one_site: 1000 allocations counted, ${rec:-none} recorded"
[ -n "$rec" ] && [ "$rec" -ge 32 ] && [ "$rec" -lt 1000 ] || bad "no site with 1000 allocations of which 32..999 recorded: ${rec:-none}"
rec=${rec:-1000}
[ "$allocs" -ge "$rec" ] || bad "$allocs allocation records, $rec or more expected"
[ "$stacks" -ge 1 ] && [ "$stacks" -le 2 ] || bad "$stacks STACK records for one call site, 1 expected"
[ "$inline" = 0 ] || bad "$inline allocation records carry their frames: the chain is written more than once"
[ "$refs" -ge "$rec" ] || bad "$refs allocation records name a stack id, $rec or more expected"

sites() { # DB: the allocation sites, one line each, in order
  sqlite3 "$1" "select a.size || ':' || ifnull(p.function, '?') from allocations a left join pcs p on p.id = a.site_pc_id order by a.t_alloc"
}
n=$(sites "$tmp/new.db" | grep -c '^65536:one_site$')
echo "1.1 file: $n allocations sited in one_site"
[ "$n" -ge "$rec" ] || bad "$n allocations of 64 KiB sited in one_site, $rec expected: $(sites "$tmp/new.db" | sort | uniq -c | head -3)"

mkdir "$tmp/old"
for f in $files; do python3 "$tmp/mwr.py" old "$f" "$tmp/old/$(basename "$f")"; done
# shellcheck disable=SC2086
echo "1.0 file: $(python3 "$tmp/mwr.py" count "$tmp"/old/*.mwr)"
"$mw" report -q --db "$tmp/old.db" "$tmp/old" >"$tmp/old.out" 2>&1 || { cat "$tmp/old.out"; bad "memwatch report failed on the 1.0 file"; }
if ! cmp -s <(sites "$tmp/new.db") <(sites "$tmp/old.db"); then
  bad "the 1.0 file's allocation sites differ from the 1.1 file's: $(diff <(sites "$tmp/new.db") <(sites "$tmp/old.db") | head -4)"
fi
n=$(sites "$tmp/old.db" | grep -c '^65536:one_site$')
echo "1.0 file: $n allocations sited in one_site"
[ "$n" -ge "$rec" ] || bad "$n allocations sited in one_site in the 1.0 file, $rec expected"
[ $fail = 0 ] && echo PASS
exit $fail
