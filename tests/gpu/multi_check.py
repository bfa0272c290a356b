#!/usr/bin/env python3
"""tests/gpu/multi_check.py: the checks of test_gpu_multi.sh on memwatch's
JSON summary. multi JSON HTML: one process on two devices (multi_app);
nccl JSON OUT: two ranks with a GPU each (nccl_app, OUT its output).
Prints ok:/FAILED: lines; exits 1 when a check failed."""
import json, re, sys

bad = 0


def check(what, ok):
    global bad
    print(("ok: " if ok else "FAILED: ") + what)
    bad |= not ok


def multi(d, html):
    dev = {r["device"]: r for r in d.get("gpu_devices", [])}
    check("a row per device (%s)" % sorted(dev), sorted(dev) == [0, 1])
    k = {(r["device"], r["name"]): r for r in d.get("gpu_kernels", [])}
    s = [r for (dv, n), r in k.items() if dv == 0 and "stream_triad" in n]
    c = [r for (dv, n), r in k.items() if dv == 1 and "fma_chain" in n]
    check("device 0 ran stream_triad only, device 1 fma_chain only (%s)" % sorted(k),
          len(s) == 1 and len(c) == 1 and len(k) == 2)
    if s and c:
        s, c = s[0], c[0]
        check("device 0: %d of %d stream_triad launches flagged (all)" % (s["bw_bound"], s["launches"]),
              s["launches"] >= 40 and s["bw_bound"] == s["launches"])
        check("device 1: %d of %d fma_chain launches flagged (none)" % (c["bw_bound"], c["launches"]),
              c["launches"] >= 5 and c["bw_bound"] == 0)
    if 0 in dev and 1 in dev:
        check("device rows: device 0 %d/%d flagged, device 1 %d/%d" % (dev[0]["bw_bound"], dev[0]["launches"],
              dev[1]["bw_bound"], dev[1]["launches"]),
              dev[0]["bw_bound"] == dev[0]["launches"] and dev[1]["bw_bound"] == 0)
    strips = re.findall(r'class=gpustrip data-device="(\d+)" data-launches="(\d+)" data-flagged="(\d+)"', html)
    check("the timeline draws a strip per device (%s)" % strips,
          sorted(int(x[0]) for x in strips) == [0, 1] and
          all(int(f) == (int(n) if x == "0" else 0) for x, n, f in strips))


def nccl(d, out):
    check("both ranks' all-reduces gave the right sums", out.count("allreduce_ok=1") == 2)
    ranks = sorted(p.get("rank") for p in d["job"]["processes"] if p.get("rank") is not None)
    check("the merged report has both ranks (%s)" % ranks, ranks == [0, 1])
    rows = {(r.get("rank"), r["device"]): r for r in d.get("gpu_ranks", [])}
    check("a row per rank and device: rank 0 on device 0, rank 1 on device 1 (%s)" % sorted(rows),
          sorted(rows) == [(0, 0), (1, 1)])
    for dev in (0, 1):
        st = [r for r in d.get("gpu_kernels", []) if r["device"] == dev and "stream_triad" in r["name"]]
        if not st:
            check("rank %d: stream_triad on device %d" % (dev, dev), False)
            continue
        s = st[0]
        check("rank %d, device %d: %d of %d stream_triad launches flagged (all)" % (dev, dev, s["bw_bound"], s["launches"]),
              s["launches"] >= 20 and s["bw_bound"] == s["launches"])
    nccl = [r for r in d.get("gpu_kernels", []) if "ncclDevKernel" in r["name"] or "nccl" in r["name"].lower()]
    print("NCCL kernels: " + "; ".join("device %d %s: %d launches, %d flagged" % (r["device"], r["name"][:40], r["launches"], r["bw_bound"]) for r in nccl))


mode, jpath, other = sys.argv[1:4]
(multi if mode == "multi" else nccl)(json.load(open(jpath)), open(other).read())
sys.exit(bad)
