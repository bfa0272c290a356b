#!/usr/bin/env bash
# bench/dataaddr_flags.sh: do the flagged intervals of a bandwidth-bound
# multithreaded program name its arrays, decoded from timer samples
# (docs/data-addresses.md), and does compute beside them name none?
# Calibrates quickly (or takes MEMWATCH_PROFILE), records bench/dataaddr_mt.c
# (nproc-2 threads streaming, 2 computing, then all computing) and prints the
# report's data objects and the code inside flagged intervals.
# usage: bench/dataaddr_flags.sh BIN_DIR [OUTDIR]
#   BIN_DIR holds memwatch and libmemwatch.so (a build directory, or the bin/
#   of bench/device_pack, whose lib/ beside it is put on LD_LIBRARY_PATH).
set -uo pipefail
bin=$(cd "${1:?usage: bench/dataaddr_flags.sh BIN_DIR [OUTDIR]}" && pwd)
out=${2:-$(mktemp -d /tmp/mw-dataaddr-XXXXXX)}
mkdir -p "$out"
[ -d "$bin/../lib" ] && export LD_LIBRARY_PATH="$bin/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mw=$bin/memwatch
here=$(cd "$(dirname "$0")" && pwd)
cc -O2 -g -pthread -o "$out/dataaddr_mt" "$here/dataaddr_mt.c" || exit 1
n=$(nproc)
t=$((n > 3 ? n - 2 : 1))
if [ -z "${MEMWATCH_PROFILE:-}" ]; then
  "$mw" calibrate --quick --profile "$out/profile.json" --json "$out/cal.json" >"$out/cal.txt" 2>&1 ||
    { tail -5 "$out/cal.txt"; exit 1; }
  export MEMWATCH_PROFILE=$out/profile.json
fi
"$mw" record -o "$out/rec" -- "$out/dataaddr_mt" "$t" 2 "${DATAADDR_SECONDS:-4}" >"$out/record.txt" 2>&1
tail -3 "$out/record.txt"
"$mw" report --db "$out/rec.db" "$out/rec" >"$out/report.txt" 2>&1
sed -n '/^Bandwidth-bound/,/^  latency/p' "$out/report.txt"
sed -n '/^Top code inside flagged/,/^  share  function/p' "$out/report.txt"
sed -n '/^Top data objects/,/^$/p' "$out/report.txt"
# the acceptance: each array has samples in flagged intervals; the compute
# function has none at memory accesses
arrays=$(sed -n '/^Top data objects/,/^$/p' "$out/report.txt" | grep -cE "(m|c)alloc\(268435456\).*in flagged intervals")
echo "dataaddr_flags: arrays named in flagged intervals: $arrays of 3"
grep -q "compute_regs" "$out/report.txt" && sed -n '/^Top code overall/,/^$/p' "$out/report.txt" | grep "compute_regs\|triad_slice"
