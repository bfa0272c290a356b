#!/usr/bin/env bash
# bench/report_decode.sh: what decoding timer samples' data addresses
# (docs/data-addresses.md) costs memwatch report, on a million timer
# kernel samples, against the memwatch before it (REF, by default the commit
# before decoding came). Records tests/dataaddr/mwd_data.c's triad at
# 4000 samples/s, repeats its kernel sample records in the raw file until
# the timer samples number at least 1 M, and reports that file with both
# memwatch builds, three times each: CPU time (user + system) and peak RSS,
# medians, as ratios new / old.
# usage: bench/report_decode.sh NEW_BIN_DIR [OLD_BIN_DIR]
#   without OLD_BIN_DIR, REF (default 27e569d) is built in a temporary
#   worktree (minutes).
set -euo pipefail
new=$(cd "${1:?usage: bench/report_decode.sh NEW_BIN_DIR [OLD_BIN_DIR]}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/mw-rdec-XXXXXX)
trap 'git -C "$src" worktree remove --force "$tmp/old-src" 2>/dev/null || true; rm -rf "$tmp"' EXIT
if [ -n "${2:-}" ]; then
  old=$(cd "$2" && pwd)
else
  ref=${REF:-27e569d}
  echo "report_decode: building memwatch $ref (the reference)" >&2
  git -C "$src" worktree add -q --detach "$tmp/old-src" "$ref"
  cmake -S "$tmp/old-src" -B "$tmp/old" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$tmp/old" -j"$(nproc)" --target memwatch memwatch_preload >/dev/null
  old=$tmp/old
fi
cc -O2 -g -o "$tmp/mwd_data" "$src/tests/dataaddr/mwd_data.c"
rec_cost() { # BIN -> "cpu_seconds raw_bytes" of one recording of the triad
  local f=$tmp/rtime.$$
  rm -rf "$tmp/r"
  /usr/bin/time -f "%U %S" -o "$f" "$1/memwatch" record -q -o "$tmp/r" -- "$tmp/mwd_data" triad 1500 >/dev/null 2>&1
  awk -v b="$(cat "$tmp"/r/*.mwr | wc -c)" '{ printf "%.3f %d\n", $1 + $2, b }' "$f"
}
: >"$tmp/r-new"; : >"$tmp/r-old"
for i in 1 2 3 4 5; do
  rec_cost "$new" >>"$tmp/r-new"
  rec_cost "$old" >>"$tmp/r-old"
done
MEMWATCH_RATE=4000 "$new/memwatch" record -q -o "$tmp/rec" -- "$tmp/mwd_data" triad 3000 >/dev/null
raw=$(ls "$tmp"/rec/*.mwr | grep -v short | head -1)
python3 - "$raw" "$tmp/big.mwr" <<'PY'
import struct, sys
# the raw format (docs/raw-format.md): a 32-byte header, then records of
# (u32 type, u32 size) padded to 8; PERF_DATA is type 3, the trailer 0x7fff
data = open(sys.argv[1], 'rb').read()
hdr, off, recs = data[:32], 32, []
while off + 8 <= len(data):
    t, size = struct.unpack_from('<II', data, off)
    if size < 8 or off + size > len(data):
        break
    recs.append((t, data[off:off + size]))
    off += size
perf = [r for t, r in recs if t == 3]
def timer_samples(r):  # PERF_RECORD_SAMPLE (9) records inside one PERF_DATA record
    n, p = 0, 8 + 16
    while p + 8 <= len(r):
        typ, misc, sz = struct.unpack_from('<IHH', r, p)
        if sz < 8:
            break
        n += typ == 9
        p += sz
    return n
per = sum(timer_samples(r) for r in perf)
k = max(1, -(-1000000 // max(per, 1)))
out = [hdr]
for t, r in recs:
    if t == 0x7fff:
        out += perf * (k - 1)
    out.append(r)
open(sys.argv[2], 'wb').write(b''.join(out))
print("report_decode: %d kernel samples recorded, repeated %d times: %d" % (per, k, per * k),
      file=sys.stderr)
PY
mkdir -p "$tmp/in" && mv "$tmp/big.mwr" "$tmp/in/"
measure() { # BIN -> "cpu_seconds max_rss_kb"
  local f=$tmp/time.$$
  /usr/bin/time -f "%U %S %M" -o "$f" "$1/memwatch" report -q --db "$tmp/db-$RANDOM" "$tmp/in" >/dev/null 2>&1
  awk '{ printf "%.3f %d\n", $1 + $2, $3 }' "$f"
}
med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
: >"$tmp/t-new"; : >"$tmp/t-old"
for i in 1 2 3; do
  measure "$new" >>"$tmp/t-new"
  measure "$old" >>"$tmp/t-old"
done
nc=$(cut -d' ' -f1 "$tmp/t-new" | med); oc=$(cut -d' ' -f1 "$tmp/t-old" | med)
nm=$(cut -d' ' -f2 "$tmp/t-new" | med); om=$(cut -d' ' -f2 "$tmp/t-old" | med)
rn=$(cut -d' ' -f1 "$tmp/r-new" | med); ro=$(cut -d' ' -f1 "$tmp/r-old" | med)
bn=$(cut -d' ' -f2 "$tmp/r-new" | med); bo=$(cut -d' ' -f2 "$tmp/r-old" | med)
awk -v rn="$rn" -v ro="$ro" -v bn="$bn" -v bo="$bo" 'BEGIN {
  printf "report_decode: recording the triad, CPU time of the tree new/old %.3fx (%.3f s / %.3f s), raw bytes new/old %.2fx (%d / %d)\n",
         rn / ro, rn, ro, bn / bo, bn, bo }'
awk -v nc="$nc" -v oc="$oc" -v nm="$nm" -v om="$om" 'BEGIN {
  printf "report_decode: CPU time new/old %.2fx (%.2f s / %.2f s), peak RSS new/old %.2fx (%d / %d KiB)\n",
         nc / oc, nc, oc, nm / om, nm, om }'
