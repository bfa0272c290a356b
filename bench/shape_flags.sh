#!/usr/bin/env bash
# bench/shape_flags.sh: does the bandwidth-bound flag transfer from the
# calibration's load generator to the loads real programs make? Calibrates
# (quick and full), then records bench/shapes.c's loads (read, copy, triad,
# non-temporal triad; threads and processes; one to four threads; compute
# only) with memwatch record and prints, per load, its bandwidth as a share
# of the full calibration's peak, the interval latencies in steady state
# (from 1 s after a process starts to 0.5 s before it ends) and the share of
# intervals above each calibration's threshold (docs/saturation.md, "Load
# shapes").
# usage: bench/shape_flags.sh BIN_DIR [OUTDIR]
#   BIN_DIR holds memwatch and libmemwatch.so (a build directory, or the bin/
#   of bench/device_pack, whose lib/ beside it is put on LD_LIBRARY_PATH).
# The calibrations write the user's machine profile, as memwatch calibrate
# does; the one in force before is put back at the end.
set -uo pipefail
bin=$(cd "${1:?usage: bench/shape_flags.sh BIN_DIR [OUTDIR]}" && pwd)
out=${2:-$(mktemp -d /tmp/mw-shapes-XXXXXX)}
mkdir -p "$out"
src=$(cd "$(dirname "$0")/.." && pwd)
[ -d "$bin/../lib" ] && export LD_LIBRARY_PATH=$bin/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mw=$bin/memwatch
shapes=$out/shapes
cc -O2 -pthread -o "$shapes" "$src/bench/shapes.c" || exit 1
prof=${XDG_DATA_HOME:-$HOME/.local/share}/memwatch/profile.json
saved=""
if [ -f "$prof" ]; then saved=$out/profile-before.json; cp -p "$prof" "$saved"; fi
restore() { if [ -n "$saved" ]; then cp -p "$saved" "$prof"; else rm -f "$prof"; fi; }
trap restore EXIT
for c in quick full; do
  opt=""; [ $c = quick ] && opt=--quick
  echo "shape_flags: memwatch calibrate $opt" >&2
  "$mw" calibrate $opt --json "$out/cal-$c.json" >"$out/cal-$c.txt" 2>&1 || { tail -5 "$out/cal-$c.txt"; exit 1; }
  cp "$prof" "$out/profile-$c.json"
done
restore
n=$(nproc)
: >"$out/intervals.csv"
run() { # name mode threads seconds [processes]
  local name=$1; shift
  echo "shape_flags: $name: shapes $*" >&2
  MEMWATCH_PROFILE="$out/profile-full.json" "$mw" record -o "$out/r-$name" -- "$shapes" "$@" >"$out/shape-$name.txt" 2>&1
  "$mw" report "$out/r-$name" --db "$out/r-$name.db" -q >/dev/null 2>&1
  python3 - "$out/r-$name.db" "$name" "$(awk '/GB\/s/ { s += $(NF-1) } END { print s + 0 }' "$out/shape-$name.txt")" \
      >>"$out/intervals.csv" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
q = """select p.pid, i.t_start - p.t_start, p.t_end - i.t_end, i.latency_ns
       from intervals i join processes p on p.id = i.process_id
       where p.exe like '%shapes%' and i.latency_ns is not null"""
for pid, since, left, lat in db.execute(q):
    if since >= 1e9 and left >= 0.5e9:
        print("%s,%s,%d,%.2f" % (sys.argv[2], sys.argv[3], pid, lat))
PY
}
run read_T read "$n" 4
run copy_T copy "$n" 4
run triad_T triad "$n" 4
run nt_T nt "$n" 4
run read_P read 1 4 "$n"
run triad_P triad 1 4 "$n"
run copy_Phalf copy 1 4 $((n / 2))
run read_1 read 1 4
run triad_1 triad 1 4
run triad_2 triad 2 4
run read_4 read 4 4
run triad_4 triad 4 4
run compute_T compute "$n" 4
python3 - "$out" <<'PY'
import csv, json, sys
from collections import OrderedDict
out = sys.argv[1]
prof = {c: json.load(open("%s/profile-%s.json" % (out, c))) for c in ("quick", "full")}
peak = prof["full"].get("peak_bw") or 0
print("calibration   threshold   idle     peak")
for c in ("quick", "full"):
    p = prof[c]
    print("%-12s %7.1f ns %6.1f ns %5.1f GB/s" % (c, p.get("lat_threshold_ns") or 0, p.get("idle_latency_ns") or 0, (p.get("peak_bw") or 0) / 1e9))
rows = OrderedDict()
for name, gbs, pid, lat in csv.reader(open(out + "/intervals.csv")):
    rows.setdefault(name, (float(gbs), []))[1].append(float(lat))
print()
print("| load | GB/s | of peak | intervals | p5 ns | p50 ns | p95 ns | flagged (quick) | flagged (full) |")
print("|---|---|---|---|---|---|---|---|---|")
for name, (gbs, l) in rows.items():
    l.sort()
    q = lambda f: l[min(len(l) - 1, int(f * len(l)))]
    fl = lambda c: 100.0 * sum(x > (prof[c].get("lat_threshold_ns") or float("inf")) for x in l) / len(l)
    print("| %s | %.1f | %.0f %% | %d | %.1f | %.1f | %.1f | %.1f %% | %.1f %% |" % (
        name, gbs, 100 * gbs * 1e9 / peak if peak else 0, len(l), q(.05), q(.5), q(.95), fl("quick"), fl("full")))
PY
