#!/usr/bin/env python3
"""tests/gpu/launch_table.py: the per-launch table of a launch_app run.

For each kernel and device: launches, flagged launches, launches without PM
windows, and the DRAM bytes memwatch measured per launch against the known
volume launch_app printed ("known kernel=NAME bytes=B"): median, min and max of
measured/known and the share of launches within 3 %.
Usage: launch_table.py DUMP_TXT APP_STDOUT   (DUMP_TXT: mwr_gpu_dump's output)
"""
import sys

known = {}
for line in open(sys.argv[2]):
    if line.startswith("known kernel="):
        f = dict(x.split("=", 1) for x in line.split()[1:])
        known[f["kernel"]] = float(f["bytes"])
rows = {}
for line in open(sys.argv[1]):
    if not line.startswith("kernel "):
        continue
    parts = line.split()
    name = parts[1]
    f = dict(x.split("=", 1) for x in parts[2:] if "=" in x)
    key = (name, f.get("dev", "0"))
    r = rows.setdefault(key, {"n": 0, "flagged": 0, "nowin": 0, "v": []})
    r["n"] += 1
    r["flagged"] += " BW_BOUND" in line
    if not int(f.get("flags", "0"), 16) & 2:
        r["nowin"] += 1
        continue
    kn = next((b for k, b in known.items() if k in name), None)
    r["v"].append(float(f["bytes"]) / kn if kn else float(f["bytes"]))
print("%-18s %3s %8s %8s %9s %10s %9s %9s %9s %7s" % ("kernel", "dev", "launches", "flagged",
      "no-window", "known_MB", "med/known", "min/known", "max/known", "in3%"))
for (name, dev), r in sorted(rows.items()):
    v = sorted(r["v"])
    kn = next((b for k, b in known.items() if k in name), None)
    med = v[(len(v) - 1) // 2] if v else 0
    lo, hi = (v[0], v[-1]) if v else (0, 0)
    short = name if len(name) <= 18 else name[:18]
    for k in known:
        if k in name:
            short = k
    if kn:
        in3 = 100.0 * sum(1 for x in v if abs(x - 1) <= 0.03) / len(v) if v else 0
        print("%-18s %3s %8d %8d %9d %10.1f %9.4f %9.4f %9.4f %6.1f%%" % (short, dev, r["n"],
              r["flagged"], r["nowin"], kn / 1e6, med, lo, hi, in3))
    else:
        print("%-18s %3s %8d %8d %9d %10s %9.3g %9.3g %9.3g bytes" % (short, dev, r["n"],
              r["flagged"], r["nowin"], "-", med, lo, hi))
