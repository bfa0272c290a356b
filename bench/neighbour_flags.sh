#!/usr/bin/env bash
# bench/neighbour_flags.sh: repeated quick calibrations on one machine, and a
# light program recorded beside a neighbour that saturates memory
# (docs/saturation.md, "Whose load is it"). Prints each calibration's
# threshold and band, then the report's bandwidth section for
#   alone:  `shapes read 1 SECONDS` recorded on an otherwise idle machine;
#   beside: the same while `shapes triad N-1 SECONDS+3` runs unrecorded.
# usage: bench/neighbour_flags.sh BIN_DIR [OUTDIR [CALIBRATIONS]]
#   BIN_DIR holds memwatch and libmemwatch.so (a build directory, or the bin/
#   of bench/device_pack, whose lib/ beside it is put on LD_LIBRARY_PATH).
# The calibrations write the user's machine profile; the one in force before
# is put back at the end (the recordings use the last calibration's).
set -uo pipefail
bin=$(cd "${1:?usage: bench/neighbour_flags.sh BIN_DIR [OUTDIR [CALIBRATIONS]]}" && pwd)
out=${2:-$(mktemp -d /tmp/mw-neighbour-XXXXXX)}
ncal=${3:-3}
secs=${SHAPE_SECONDS:-4}
mkdir -p "$out"
. "$(dirname "$0")/shapes_setup.sh"
for i in $(seq "$ncal"); do
  "$mw" calibrate --quick --json "$out/cal-$i.json" >"$out/cal-$i.txt" 2>&1 || { tail -5 "$out/cal-$i.txt"; exit 1; }
  cp "$prof" "$out/profile-$i.json"
  python3 - "$out/profile-$i.json" "$i" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
b = p.get("threshold_band_ns") or [0, 0]
print("quick calibration %s: threshold %.1f ns, band %.1f..%.1f ns, idle %.1f ns, saturable %s%s" % (
    sys.argv[2], p["lat_threshold_ns"], b[0], b[1], p["idle_latency_ns"], p.get("saturable"),
    "; note: " + p["threshold_note"] if p.get("threshold_note") else ""))
PY
done
python3 - "$out" "$ncal" <<'PY'
import json, statistics, sys
t = [json.load(open("%s/profile-%d.json" % (sys.argv[1], i)))["lat_threshold_ns"] for i in range(1, int(sys.argv[2]) + 1)]
m = statistics.median(t)
print("thresholds: median %.1f ns, spread %+.1f..%+.1f %% of it" % (m, 100 * (min(t) / m - 1), 100 * (max(t) / m - 1)))
PY
n=$(nproc)
section() { sed -n '/^Bandwidth-bound\|^Memory load/,/^Top code/p' | grep -v '^Top code'; }
echo; echo "== alone: shapes read 1 $secs"
"$mw" record -o "$out/r-alone" -- "$shapes" read 1 "$secs" >/dev/null 2>"$out/rec-alone.txt"
"$mw" report "$out/r-alone" 2>&1 | section
echo; echo "== beside a neighbour: shapes triad $((n - 1)) $((secs + 3)), unrecorded"
"$shapes" triad $((n - 1)) $((secs + 3)) >/dev/null &
nb=$!
sleep 1.5
"$mw" record -o "$out/r-beside" -- "$shapes" read 1 "$secs" >/dev/null 2>"$out/rec-beside.txt"
wait "$nb"
echo "(neighbour pid $nb)"
"$mw" report "$out/r-beside" 2>&1 | section
