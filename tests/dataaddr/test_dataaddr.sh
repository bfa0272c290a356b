#!/usr/bin/env bash
# tests/dataaddr/test_dataaddr.sh: the data addresses
# memwatch decodes from timer samples (docs/data-addresses.md), on a program
# whose accesses are known (mwd_data.c, built with fixed flags), recorded
# with memwatch record and read from the report's database:
#  - triad: >= 90 % of the loop's memory samples name its three arrays,
#    each within 10 % of a third (one access of each per iteration);
#  - chase: the node array is named;
#  - compute: >= 95 % of its samples at code without memory accesses;
#  - kinds: a thread-local array, a static array, a stack array and an
#    mmap'd file are each named;
#  - touch4: page-fault samples do not alias with a program's pattern.
# Where this memwatch has no decoder, the report must say why.
set -u
B=${MW_BUILD_DIR:?}
MW=$B/memwatch
D=$B/mwd_data
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAILED: $*"; fail=1; }
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 command is not installed"; exit 77; }

rec() { # rec NAME ARGS...: records mwd_data ARGS (or, after -c, the command ARGS) into $T/NAME
    local name=$1
    shift
    if [ "$1" = -c ]; then shift; else set -- "$D" "$@"; fi
    "$MW" record -q -o "$T/$name" -- "$@" >"$T/$name.out" 2>&1 || bad "record $name: $(tail -3 "$T/$name.out")"
    "$MW" report --db "$T/$name.db" "$T/$name" >"$T/$name.rep" 2>&1 || bad "report $name: $(tail -3 "$T/$name.rep")"
}
q() { sqlite3 "$T/$1.db" "$2"; }

rec triad triad 1500
if grep -q "not decoded: .*Zydis" "$T/triad.rep"; then
    echo "no decoder in this memwatch, and the report says so: $(grep -m1 'not decoded' "$T/triad.rep")"
    exit $fail
fi
mem=$(q triad "SELECT COUNT(*) FROM sample_lines WHERE function = 'triad' AND at_memory = 1")
echo "triad: $mem samples of the loop at memory accesses"
[ "${mem:-0}" -ge 100 ] || bad "only $mem decoded triad samples"
# per array (three heap objects of 32 MiB): its share of the loop's samples
shares=$(q triad "SELECT ROUND(SUM(x.share) / $mem, 4) FROM sample_objects x
                  JOIN samples s ON s.id = x.sample_id JOIN pcs p ON p.id = s.pc_id
                  JOIN objects o ON o.id = x.object_id
                  WHERE x.addr_source = 'decoded' AND p.function = 'triad' AND o.kind = 'heap'
                  AND o.size = 33554432 GROUP BY o.id ORDER BY o.addr")
echo "triad: shares of the three arrays: $(echo $shares)"
[ "$(echo "$shares" | grep -c .)" = 3 ] || bad "arrays named: $(echo $shares), expected 3"
echo "$shares" | awk '{ t += $1; if ($1 < 0.9 / 3 || $1 > 1.1 / 3) bad = 1 }
    END { exit (t < 0.9 || bad) }' || bad "shares $(echo $shares): not >= 90 % in all, each within 10 % of a third"
# the report names them, decoded
grep -q "samples with a data address, [0-9]* of them decoded from timer samples" "$T/triad.rep" ||
    bad "report: $(grep -A2 '^Top data objects' "$T/triad.rep")"
grep -q "allocated at mwd_data.c" "$T/triad.rep" || bad "report names no array: $(sed -n '/^Top data objects/,/^$/p' "$T/triad.rep")"

rec chase chase 1500
cm=$(q chase "SELECT COUNT(*) FROM sample_lines WHERE function = 'chase' AND at_memory = 1")
node=$(q chase "SELECT ROUND(SUM(x.share), 1) FROM sample_objects x JOIN samples s ON s.id = x.sample_id
                JOIN pcs p ON p.id = s.pc_id JOIN objects o ON o.id = x.object_id
                WHERE x.addr_source = 'decoded' AND p.function = 'chase' AND o.size = 67108864")
echo "chase: $cm samples at memory accesses, ${node:-0} of them name the node array"
awk -v n="${node:-0}" -v m="${cm:-0}" 'BEGIN { exit !(m >= 50 && n >= 0.9 * m) }' ||
    bad "the node array has ${node:-0} of $cm chase samples"

rec compute compute 1500
read -r cn ct <<<"$(q compute "SELECT SUM(at_memory = 0), COUNT(*) FROM sample_lines WHERE function = 'compute' AND at_memory IS NOT NULL" | tr '|' ' ')"
echo "compute: $cn of $ct samples at code without memory accesses"
awk -v n="${cn:-0}" -v t="${ct:-0}" 'BEGIN { exit !(t >= 50 && n >= 0.95 * t) }' || bad "compute: $cn of $ct"

rec kinds kinds 2000 "$T/mapped"
for k in "tls:tls_arr (thread-local)" "static:static_arr" "stack:stack of thread %" "file:$T/mapped"; do
    kind=${k%%:*} name=${k#*:}
    s=$(q kinds "SELECT ROUND(SUM(x.share), 1) FROM sample_objects x JOIN objects o ON o.id = x.object_id
                 WHERE x.addr_source = 'decoded' AND o.kind = '$kind' AND o.name LIKE '$name'")
    echo "kinds: $kind '$name': ${s:-0} samples"
    awk -v s="${s:-0}" 'BEGIN { exit !(s >= 10) }' || bad "$kind object '$name' not named ($s samples)"
done
# fault samples are apart: never counted as data addresses
nf=$(q kinds "SELECT COUNT(*) FROM samples WHERE addr_source = 'fault'")
na=$(grep -o "^Top data objects ([0-9]*" "$T/kinds.rep" | grep -o "[0-9]*$")
nd=$(q kinds "SELECT COUNT(*) FROM samples WHERE addr_source = 'decoded'")
[ "$na" = "$nd" ] || bad "the report counts $na samples with a data address, the database $nd decoded ($nf fault samples)"

# page-fault samples (every MEMWATCH_FAULT_PERIOD-th fault, default 61, a
# prime) of four arrays first touched by turns, a page of each: each array
# gets about a quarter. With a period of 16 (a multiple of the pattern's 4),
# every sample fell in the same array and another had none.
rec touch4 touch4 30
read -r a1 a2 a3 a4 <<<"$(q touch4 "SELECT COUNT(*) FROM samples s JOIN objects o ON o.id = s.object_id
   WHERE s.addr_source = 'fault' AND o.name = 'malloc(67108864)' GROUP BY o.id ORDER BY o.id" | tr '\n' ' ')"
echo "touch4: fault samples per array: ${a1:-0} ${a2:-0} ${a3:-0} ${a4:-0}"
awk -v a="${a1:-0}" -v b="${a2:-0}" -v c="${a3:-0}" -v d="${a4:-0}" 'BEGIN {
    t = a + b + c + d; if (t < 400) exit 1
    n = split(a " " b " " c " " d, v, " ")
    for (i = 1; i <= n; i++) if (v[i] < 0.2 * t || v[i] > 0.3 * t) exit 1 }' ||
    bad "four arrays touched by turns: fault samples ${a1:-0} ${a2:-0} ${a3:-0} ${a4:-0}"

# the same arrays in two processes: one row per allocation site, with the
# processes named, never one row per process
rec two -c sh -c "'$D' triad 800 & '$D' triad 800; wait"
rows=$(sed -n '/^Top data objects/,/^$/p' "$T/two.rep" | grep -c "alloc(33554432)")
merged=$(sed -n '/^Top data objects/,/^$/p' "$T/two.rep" | grep -c "alloc(33554432).*in 2 processes (pid [0-9]* .. pid [0-9]*)")
echo "two processes: $rows rows for the arrays, $merged of them naming both processes"
[ "$rows" = 3 ] && [ "$merged" = 3 ] || bad "arrays of two processes: $(sed -n '/^Top data objects/,/^$/p' "$T/two.rep")"
exit $fail
