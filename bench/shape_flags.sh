#!/usr/bin/env bash
# bench/shape_flags.sh: does the bandwidth-bound flag hold on the loads real
# programs make, under a quick and a full calibration of this machine?
# Calibrates (--quick, then full), then records bench/shapes.c's loads with
# memwatch record and prints, per load, its bandwidth against its own mode's
# load on every CPU, the interval latencies in steady state (from 1 s after a
# process starts to 0.5 s before it ends) and the share of intervals flagged
# and possibly bound (inside the threshold's band) under each profile
# (docs/saturation.md, "Load shapes"), each judged by the threshold memwatch
# report gives it: the profile's threshold for loads that write where the
# report found the process's sampled loops writing ("judged as"), else the
# profile's threshold ("Loads that write"). The acceptance lines at the end say
# whether every saturating load is flagged in >= 90 % of its intervals,
# every light one (at most half its mode's bandwidth) in <= 5 %, compute in
# 0 %, and whether the two thresholds lie within 5 % of each other.
# usage: bench/shape_flags.sh BIN_DIR [OUTDIR]
#   BIN_DIR holds memwatch and libmemwatch.so (a build directory, or the bin/
#   of bench/device_pack, whose lib/ beside it is put on LD_LIBRARY_PATH).
#   SHAPE_SECONDS (default 3) sets each load's length.
#   SHAPE_PRE_IDLE=1 records before each load one compute thread for 1 s (a
#   reading of the idle latency through the same probe, as a baseline at
#   the start of a recording would be) and writes per load its intervals'
#   count, median, 5 % and 95 % to OUTDIR/pre.txt (docs/saturation.md,
#   "Drift").
# The calibrations write the user's machine profile, as memwatch calibrate
# does; the one in force before is put back at the end.
set -uo pipefail
bin=$(cd "${1:?usage: bench/shape_flags.sh BIN_DIR [OUTDIR]}" && pwd)
out=${2:-$(mktemp -d /tmp/mw-shapes-XXXXXX)}
mkdir -p "$out"
secs=${SHAPE_SECONDS:-3}
. "$(dirname "$0")/shapes_setup.sh"
for c in quick full; do
  opt=""; [ $c = quick ] && opt=--quick
  echo "shape_flags: memwatch calibrate $opt" >&2
  start=$(date +%s.%N)
  "$mw" calibrate $opt --json "$out/cal-$c.json" >"$out/cal-$c.txt" 2>&1 || { tail -5 "$out/cal-$c.txt"; exit 1; }
  awk -v a="$start" -v b="$(date +%s.%N)" -v c=$c 'BEGIN { print c, b - a }' >>"$out/cal-seconds"
  cp "$prof" "$out/profile-$c.json"
done
restore
n=$(nproc)
k=$((n / 5)); [ "$k" -ge 1 ] || k=1
: >"$out/intervals.csv"
pre_idle() { # name: the idle latency through the probe, just before the load
  MEMWATCH_PROFILE="$out/profile-full.json" "$mw" record -o "$out/pre-$1" -- "$shapes" compute 1 1 1 >/dev/null 2>&1
  "$mw" report "$out/pre-$1" --db "$out/pre-$1.db" -q >/dev/null 2>&1
  python3 - "$out/pre-$1.db" "$1" >>"$out/pre.txt" <<'PY'
import sqlite3, sys
l = sorted(r[0] for r in sqlite3.connect(sys.argv[1]).execute(
    "select i.latency_ns from intervals i join processes p on p.id = i.process_id "
    "where p.exe like '%shapes%' and i.latency_ns is not null and i.t_start - p.t_start >= 2e8"))
q = lambda f: l[min(len(l) - 1, int(f * len(l)))] if l else 0
print(sys.argv[2], len(l), "%.1f %.1f %.1f" % (q(.5), q(.05), q(.95)))
PY
}
run() { # name class mode threads [processes]
  local name=$1 class=$2 mode=$3 threads=$4 procs=${5:-1}
  echo "shape_flags: $name: shapes $mode $threads $secs $procs" >&2
  [ "${SHAPE_PRE_IDLE:-0}" = 1 ] && pre_idle "$name"
  MEMWATCH_PROFILE="$out/profile-full.json" "$mw" record -o "$out/r-$name" -- \
      "$shapes" "$mode" "$threads" "$secs" "$procs" >"$out/shape-$name.txt" 2>&1
  "$mw" report "$out/r-$name" --db "$out/r-$name.db" -q >/dev/null 2>&1
  python3 - "$out/r-$name.db" "$name" "$class" "$mode" \
      "$(awk '/GB\/s/ { s += $(NF-1) } END { print s + 0 }' "$out/shape-$name.txt")" \
      >>"$out/intervals.csv" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
# the threshold class memwatch report gave the process: "writes" where its
# sampled loops write (META mix_curve, its newest), else "reads"
q = """select p.pid, i.t_start - p.t_start, p.t_end - i.t_end, i.latency_ns,
       coalesce((select value like 'shapes: for loads that write%' from meta m
                 where m.process_id = p.id and m.key = 'mix_curve'
                 order by m.rowid desc limit 1), 0)
       from intervals i join processes p on p.id = i.process_id
       where p.exe like '%shapes%' and i.latency_ns is not null"""
for pid, since, left, lat, wr in db.execute(q):
    if since >= 1e9 and left >= 0.5e9:
        print("%s,%s,%s,%s,%d,%.2f,%s" % (sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], pid, lat,
                                          "writes" if wr else "reads"))
PY
}
for m in read copy triad nt; do run ${m}_T saturating $m "$n"; done
for m in read copy triad nt; do run ${m}_P saturating $m 1 "$n"; done
for m in read copy triad nt; do run ${m}_$k light $m "$k"; done
[ "$k" -gt 1 ] && for m in read triad; do run ${m}_1 light $m 1; done
run compute_T compute compute "$n"
python3 - "$out" <<'PY'
import csv, json, sys
from collections import OrderedDict
out = sys.argv[1]
prof = {c: json.load(open("%s/profile-%s.json" % (out, c))) for c in ("quick", "full")}
secs = dict(l.split() for l in open(out + "/cal-seconds"))
print("calibration  threshold  band              writes: threshold  band              idle     peak       saturable  from    seconds")
for c in ("quick", "full"):
    p = prof[c]
    band = p.get("threshold_band_ns") or [0, 0]
    wband = p.get("writes_band_ns") or [0, 0]
    print("%-12s %7.1f ns %6.1f..%6.1f ns        %7.1f ns %6.1f..%6.1f ns %6.1f ns %6.1f GB/s %-10s %-7s %5.0f" % (
        c, p.get("lat_threshold_ns") or 0, band[0], band[1], p.get("writes_threshold_ns") or 0,
        wband[0], wband[1], p.get("idle_latency_ns") or 0,
        (p.get("peak_bw") or 0) / 1e9, p.get("saturable"), p.get("threshold_from"),
        float(secs.get(c, 0))))
rows = OrderedDict()
for name, cls, mode, gbs, pid, lat, tc in csv.reader(open(out + "/intervals.csv")):
    r = rows.setdefault(name, [cls, mode, float(gbs), [], set()])
    r[3].append(float(lat))
    r[4].add(tc)
top = {r[1]: r[2] for n, r in rows.items() if n.endswith("_T") and r[0] == "saturating"}
# the threshold memwatch report judges the load by: the writes' where its
# report found its loops writing and the profile has one
def th(c, tc="reads"):
    p = prof[c]
    if tc == "writes" and p.get("writes_threshold_ns"):
        return p["writes_threshold_ns"]
    return p.get("lat_threshold_ns") or float("inf")
def band(c, tc="reads"):
    p = prof[c]
    if tc == "writes" and p.get("writes_threshold_ns"):
        return p.get("writes_band_ns") or [th(c, tc)] * 2
    return p.get("threshold_band_ns") or [th(c), th(c)]
print()
print("| load | class | judged as | GB/s | of its mode's peak | intervals | p5 ns | p50 ns | p95 ns "
      "| flagged (quick) | flagged (full) | in band (full) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
ok = True
verdicts = []
for name, (cls, mode, gbs, l, tcs) in rows.items():
    l.sort()
    tc = "writes" if tcs == {"writes"} else "reads" if tcs == {"reads"} else "mixed"
    q = lambda f: l[min(len(l) - 1, int(f * len(l)))]
    fl = {c: 100.0 * sum(x > th(c, tc) for x in l) / len(l) for c in ("quick", "full")}
    lo, hi = band("full", tc)
    inb = 100.0 * sum(lo <= x <= hi for x in l) / len(l)
    share = gbs / top[mode] if mode in top and top[mode] > 0 else float("nan")
    print("| %s | %s | %s | %.1f | %s | %d | %.1f | %.1f | %.1f | %.1f %% | %.1f %% | %.1f %% |" % (
        name, cls, tc, gbs, "%.0f %%" % (100 * share) if share == share else "-", len(l), q(.05),
        q(.5), q(.95), fl["quick"], fl["full"], inb))
    for c in ("quick", "full"):
        if cls == "saturating" and fl[c] < 90:
            verdicts.append("%s under %s: flagged %.1f %% < 90 %%" % (name, c, fl[c]))
        if cls == "light" and share <= 0.5 and fl[c] > 5:
            verdicts.append("%s under %s: flagged %.1f %% > 5 %%" % (name, c, fl[c]))
        if cls == "compute" and fl[c] > 0:
            verdicts.append("%s under %s: flagged %.1f %% > 0 %%" % (name, c, fl[c]))
    if cls == "light" and not share <= 0.5:
        verdicts.append("%s is not a light load here (%.0f %% of its mode's peak): not judged" % (name, 100 * share))
print()
for tc in ("reads", "writes"):
    tq, tf = th("quick", tc), th("full", tc)
    d = abs(tq - tf) / tf if tf else float("inf")
    if d > 0.05:
        verdicts.append("%s thresholds differ by %.1f %% > 5 %%" % (tc, 100 * d))
    print("quick / full threshold (%s): %.3f (%.1f %% apart)" % (tc, tq / tf if tf else 0, 100 * d))
if not all(prof[c].get("saturable") for c in ("quick", "full")):
    print("acceptance: not judged: calibration could not saturate memory here (saturable false), "
          "so no load is called bandwidth-bound")
else:
    print("acceptance: " + ("every line met" if not [v for v in verdicts if "not judged" not in v] else "NOT met"))
for v in verdicts:
    print("  " + v)
PY
