#!/usr/bin/env python3
"""bench/shape_rejudge.py: judge bench/shape_flags.sh recordings again, offline,
with the load-shape rule of calibrate/threshold.c placed anywhere in the gap.

For each OUTDIR of bench/shape_flags.sh it reads the percentiles each
calibration printed (OUTDIR/cal-quick.txt, cal-full.txt: the "load shapes"
table) and the recorded intervals (OUTDIR/intervals.csv), places the reads'
and the writes' thresholds as calibrate does (docs/saturation.md, "The rule on
load shapes"; light loads only up to half their mode's peak), except that in
a clean gap the threshold lies the fraction --frac of the way from the light
loads' highest 5 % to the saturating loads' lowest 5 % (0.5, the default, is
calibrate's rule), and prints the acceptance lines each instance misses, with
the share of the load's intervals flagged, inside the band (the gap) and
above and below it. At --frac 0.5 its verdicts are the bench's own.

usage: bench/shape_rejudge.py [--frac F] OUTDIR...
"""
import csv
import re
import sys

READS = {"idle", "compute_T", "read_T", "read_P", "read_3", "read_1"}
WRITES = {"idle", "compute_T", "copy_T", "triad_T", "nt_T", "triad_P", "copy_3", "triad_3",
          "nt_3", "triad_1"}
ROW = re.compile(r"\s+(\w+)\s+(saturating|light|-)\s+(\d+)\s+(\d+)\s+([\d.]+) GB/s\s+(\S+)\s+"
                 r"(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)%")


def shapes_table(path):
    """the last "load shapes" table of a calibration's text: name -> row"""
    rows, on = {}, False
    for line in open(path):
        if "load shapes (probe" in line:
            rows, on = {}, True
            continue
        m = ROW.match(line) if on else None
        if m:
            share = m.group(6)
            rows[m.group(1)] = {"cls": m.group(2), "p5": float(m.group(8)),
                                "p50": float(m.group(9)), "p95": float(m.group(10)),
                                "share": None if share == "-" else float(share.rstrip("%")) / 100}
        elif on and rows and line.strip().startswith("idle "):
            on = False
    return rows


def place(rows, names, frac):
    """(threshold, band_lo, band_hi) of the shapes named, or None"""
    light = [r for n, r in rows.items() if n in names and r["cls"] == "light" and
             (r["share"] is None or r["share"] <= 0.5)]
    sat = [r for n, r in rows.items() if n in names and r["cls"] == "saturating"]
    if not light or not sat:
        return None
    l50 = max(r["p50"] for r in light)
    l_hi = max(r["p95"] for r in light)
    s_lo = min(r["p5"] for r in sat)
    if l_hi < s_lo:
        return l_hi + frac * (s_lo - l_hi), l_hi, s_lo
    if l50 < s_lo:
        t = (l50 + s_lo) / 2
        return t, min(t, s_lo), max(t, l_hi)
    return None  # the minimax case needs every reading: not judged here


def main(argv):
    frac = 0.5
    if len(argv) > 2 and argv[1] == "--frac":
        frac = float(argv[2])
        argv = argv[:1] + argv[3:]
    if len(argv) < 2:
        sys.exit(__doc__)
    total = 0
    for out in argv[1:]:
        th = {}
        for c in ("quick", "full"):
            rows = shapes_table("%s/cal-%s.txt" % (out, c))
            th[c] = {"reads": place(rows, READS, frac), "writes": place(rows, WRITES, frac)}
        loads = {}
        for name, cls, mode, gbs, pid, lat, tc in csv.reader(open(out + "/intervals.csv")):
            loads.setdefault(name, [cls, tc, []])[2].append(float(lat))
        missed = []
        for name, (cls, tc, lat) in loads.items():
            for c in ("quick", "full"):
                p = th[c].get(tc)
                if not p:
                    missed.append("%s under %s: no threshold placed offline" % (name, c))
                    continue
                t, lo, hi = p
                n = len(lat)
                fl = 100.0 * sum(x > t for x in lat) / n
                if (cls == "saturating" and fl < 90) or (cls != "saturating" and fl > 5):
                    missed.append("%s under %s: flagged %.1f %%, in the band %.1f %%, above it %.1f %%, "
                                  "below it %.1f %%" % (
                                      name, c, fl, 100.0 * sum(lo <= x <= hi for x in lat) / n,
                                      100.0 * sum(x > hi for x in lat) / n,
                                      100.0 * sum(x < lo for x in lat) / n))
        for tc in ("reads", "writes"):
            q, f = th["quick"][tc], th["full"][tc]
            if q and f and abs(q[0] - f[0]) / f[0] > 0.05:
                missed.append("%s thresholds %.1f %% apart" % (tc, 100 * abs(q[0] - f[0]) / f[0]))
        total += len(missed)
        print("%s: thresholds (full) reads %s, writes %s; %d lines missed" % (
            out, "%.1f ns" % th["full"]["reads"][0] if th["full"]["reads"] else "-",
            "%.1f ns" % th["full"]["writes"][0] if th["full"]["writes"] else "-", len(missed)))
        for m in missed:
            print("  " + m)
    print("threshold at %.2f of the gap: %d lines missed in all" % (frac, total))


if __name__ == "__main__":
    main(sys.argv)
