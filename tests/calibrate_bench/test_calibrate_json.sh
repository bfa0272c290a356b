#!/usr/bin/env bash
# tests/calibrate_bench/test_calibrate_json.sh: a tiny real `memwatch
# calibrate` run writes JSON that follows docs/calibrate-json.md (schema name,
# version, every benchmark's section and the exact byte arithmetic), SVG
# plots that parse as XML, and prints its table; with stdout not a terminal
# and no --progress it prints no progress. No timing is asserted.
set -eu
mw=${MW_BUILD_DIR:?}/memwatch
[ -x "$mw" ] || { echo "SKIP: $mw not built"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$mw" calibrate --bench triad,sweep,ladder,mlp,loaded --triad-size 8M --repeats 2 \
    --max-delay 8 --duration 0.02 --ladder-max 2M --no-validate --json "$tmp/c.json" --plot "$tmp/plots" \
    >"$tmp/out" 2>"$tmp/err"
grep -q "STREAM triad" "$tmp/out"
grep -q "latency ladder" "$tmp/out"
if grep -q "ladder .*/" "$tmp/err"; then echo "FAILED: progress printed without a terminal"; exit 1; fi
python3 - "$tmp/c.json" "$tmp/plots" <<'PY'
import json, sys, os
import xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1]))
ok = True
def need(cond, msg):
    global ok
    if not cond:
        print("FAILED:", msg); ok = False
need(d["schema"] == "memwatch-calibrate" and d["version"] == 1, "schema/version")
for k in ("timer", "caches", "triad", "read_sweep", "ladder", "mlp"):
    need(k in d, "missing section " + k)
t = d["triad"]["normal"]
need(t["bytes_per_iter"] == 32 and t["bytes_per_repeat"] == 32 * t["elements"], "triad normal bytes")
need(t["array_bytes"] == 8 * t["elements"] and t["elements"] >= 1 << 20, "triad array size")
need(len(t["seconds"]) == 2 and len(t["bytes_per_s"]) == 2, "triad repeats")
need(t["verified"] is True, "triad not verified")
for s, b in zip(t["seconds"], t["bytes_per_s"]):
    need(abs(s * b - t["bytes_per_repeat"]) <= 1e-6 * t["bytes_per_repeat"], "triad rate arithmetic")
nt = d["triad"].get("nontemporal")
if nt:
    need(nt["bytes_per_iter"] == 24, "triad NT bytes")
sw = d["read_sweep"]
need(sw["delay_grid"] == [0, 1, 2, 4, 8], "delay grid %s" % sw["delay_grid"])
need(len(sw["points"]) == len(sw["delay_grid"]) * len(sw["thread_grid"]), "sweep points")
for p in sw["points"]:
    need(p["bytes"] == 64 * p["lines"] and p["lines"] % 384 == 0, "sweep line arithmetic")
lad = d["ladder"]
need(lad["points"][0]["bytes"] == 4096 and lad["points"][-1]["bytes"] <= 2 << 20, "ladder range")
need(lad.get("levels_from") == "page_local" and lad.get("dram_from") == "random", "ladder curves")
need(all(p.get("local_ns", 0) > 0 for p in lad["points"]), "page-local latencies")
need(lad.get("group_lines") == 32 and "tlb_reach" in lad and lad.get("tlb_ratio", 0) > 0, "ladder TLB fields")
need(isinstance(lad.get("random_levels"), list) and len(lad["random_levels"]) >= 1, "random_levels")
need(len(d["mlp"]["ns_per_load"]) == 32, "mlp chains")
if "loaded_latency" in d:
    need(len(d["loaded_latency"]["points"]) == 5, "loaded points")
for f in ("sweep", "ladder", "mlp"):
    path = os.path.join(sys.argv[2], f + ".svg")
    need(os.path.exists(path), path + " missing")
    if os.path.exists(path):
        svg = ET.parse(path).getroot()
        width = float(svg.get("width"))
        # no left-anchored label (the legend's names) runs past the picture's
        # edge, at about 7 px a character
        for t in svg.iter("{http://www.w3.org/2000/svg}text"):
            if t.get("text-anchor") is None and t.get("x") and t.text:
                need(float(t.get("x")) + 7 * len(t.text) <= width + 1,
                     "%s: '%s' runs past the edge (%s px)" % (f, t.text, width))
sys.exit(0 if ok else 1)
PY
echo "test_calibrate_json: passed"
