#!/usr/bin/env bash
# tests/fleet/test_fleet_real.sh: `memwatch fleet` on the real profiles of
# tests/fixtures/fleet/real (README.md there: 13 calibrations on 6
# instances of the GPU machine kind, 6 on the development VM):
#  - two groups by machine kind, 13 Intel Emerald Rapids guests and 6 AMD
#    EPYC guests, whatever their file order;
#  - the odd nodes are exactly gpu-d5-quick (idle latency 216.6 ns, its
#    figures named, the ladder's DRAM latency said to be near the others':
#    a disturbed idle reading), gpu-d6-3 (probe_lat noisy where 12 of 13
#    are accurate) and the two VM calibrations that read half the
#    bandwidth (vm-sf-full, vm-sf-quick); every other node is not odd;
#  - text and JSON agree, exit status 1; the HTML page has a plot per
#    figure and no external file;
#  - docs/fleet.md's example is exactly what the command prints today.
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
F=${MW_FIXTURES:?}/fleet/real
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/mw_fleet_real.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if [ "$2" = 1 ]; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }

"$mw" fleet "$F" >"$tmp/out.txt" 2>"$tmp/err.txt"
rc=$?
check "memwatch fleet DIR exits 1 (odd nodes found): $rc" $(( rc == 1 ))
cat "$tmp/out.txt"
"$mw" fleet "$F" --json --html "$tmp/fleet.html" >"$tmp/out.json" 2>>"$tmp/err.txt"
check "memwatch fleet --json --html exits 1: $?" $(( $? == 1 ))
[ -s "$tmp/err.txt" ] && { echo "stderr:"; cat "$tmp/err.txt"; }
# the same files in reverse order, named one by one
mapfile -t files < <(ls "$F"/*.json | sort -r)
"$mw" fleet --json "${files[@]}" >"$tmp/rev.json" 2>/dev/null

python3 - "$tmp/out.json" "$tmp/rev.json" "$tmp/out.txt" "$tmp/fleet.html" <<'PY'
import json, re, sys
m = json.load(open(sys.argv[1])); rev = json.load(open(sys.argv[2]))
txt = open(sys.argv[3]).read(); html = open(sys.argv[4]).read()
bad = 0
def check(what, good):
    global bad
    print(("ok: " if good else "FAILED: ") + what)
    bad |= not good

ins = m["inputs"]
check("19 inputs, all used: %d, %d used" % (len(ins), sum(i["used"] for i in ins)),
      len(ins) == 19 and all(i["used"] for i in ins))
kinds = [(g["cpu_model"], g["family"], g["model"], g["stepping"], g["cpus"], len(g["nodes"]))
         for g in m["groups"]]
check("two groups by machine kind: %s" % kinds,
      kinds == [("Intel(R) Xeon(R) Processor", 6, 207, 2, 16, 13), ("AMD EPYC", 26, 2, 1, 2, 6)])
names = [sorted(n["node"] for n in g["nodes"]) for g in m["groups"]]
check("the GPU instances' profiles in one group, the VM's in the other",
      all(x.startswith("gpu-") for x in names[0]) and all(x.startswith("vm-") for x in names[1]))
odd = sorted(n["node"] for g in m["groups"] for n in g["nodes"] if n["outlier"])
want = ["gpu-d5-quick", "gpu-d6-3", "vm-sf-full", "vm-sf-quick"]
check("odd nodes %s (expected %s)" % (odd, want), odd == want)
check("outlier_nodes %d" % m["outlier_nodes"], m["outlier_nodes"] == 4)
oddr = sorted(n["node"] for g in rev["groups"] for n in g["nodes"] if n["outlier"])
check("the same odd nodes with the files named in reverse order: %s" % oddr, oddr == want)

n5 = [n for n in m["groups"][0]["nodes"] if n["node"] == "gpu-d5-quick"][0]
f5 = {f["figure"]: f for f in n5["flagged"]}
idle = f5.get("idle_latency_ns", {})
check("gpu-d5-quick: idle latency %.1f ns flagged, odd, %+.0f %% off the median %.1f ns" %
      (idle.get("value", 0), 100 * idle.get("deviation", 0), idle.get("median", 0)),
      abs(idle.get("value", 0) - 216.6) < 0.1 and idle.get("odd") is True and
      idle.get("deviation", 0) > 0.5)
check("gpu-d5-quick: not odd for bandwidth (peak 161.0 GB/s within its band)",
      "peak_bw" not in f5)
e5 = n5["explanation"]
check("gpu-d5-quick explained with its figures: " + e5.splitlines()[0],
      "idle latency 216.6 ns" in e5 and "median of 13 nodes" in e5 and
      "DRAM latency (140.6 ns) is near the others'" in e5)
n63 = [n for n in m["groups"][0]["nodes"] if n["node"] == "gpu-d6-3"][0]
check("gpu-d6-3: probe_lat's verdict differs: " + n63["explanation"].splitlines()[0],
      n63["verdicts_differ"] == ["probe_lat"] and "noisy here, accurate on 12 of 13" in n63["explanation"])
for name in ("vm-sf-full", "vm-sf-quick"):
    n = [x for x in m["groups"][1]["nodes"] if x["node"] == name][0]
    pk = [f for f in n["flagged"] if f["figure"] == "peak_bw"]
    check("%s: peak bandwidth %.1f GB/s, %.0f %% below the median; idle normal" %
          (name, pk[0]["value"] / 1e9 if pk else 0, -100 * pk[0]["deviation"] if pk else 0),
          pk and pk[0]["odd"] and pk[0]["deviation"] < -0.4 and
          "idle latency normal" in n["explanation"])
# text says the same
for name in want:
    check("text names %s under its group" % name, re.search(r"^  %s:$" % re.escape(name), txt, re.M) is not None)
check("text: idle latency of gpu-d5-quick with its median",
      "idle latency 216.6 ns, 69 % above the median of 13 nodes of this kind (128.4 ns)" in txt)
check("text summary line", "summary: 4 odd nodes among 19: gpu-d5-quick, gpu-d6-3, vm-sf-full, vm-sf-quick" in txt)
# HTML: one plot per figure of each group, odd points marked, self-contained
nfig = sum(len(g["figures"]) for g in m["groups"])
nsvg = html.count("<svg ")
check("HTML: %d plots for %d figures" % (nsvg, nfig), nsvg == nfig and nfig > 20)
check("HTML: no script, no external file", "<script" not in html and "<link" not in html and
      not re.search(r'(src|href)="', html))
check("HTML: gpu-d5-quick's point marked odd", re.search(r'class="odd"><title>gpu-d5-quick: 216\.6', html) is not None)
sys.exit(bad)
PY
[ $? = 0 ] || fail=1
# docs/fleet.md shows this output: it must be what the command prints now
(cd "${MW_SOURCE_DIR:?}" && "$mw" fleet tests/fixtures/fleet/real) >"$tmp/doc-now.txt" 2>/dev/null
python3 - "$MW_SOURCE_DIR/docs/fleet.md" "$tmp/doc-now.txt" <<'PY'
import sys
doc = open(sys.argv[1]).read(); now = open(sys.argv[2]).read()
start = doc.find("$ memwatch fleet tests/fixtures/fleet/real; echo \"exit $?\"\n")
block = doc[start:].split("\n", 1)[1].split("\nexit 1\n```", 1)[0] + "\n" if start >= 0 else ""
good = block == now
print(("ok: " if good else "FAILED: ") + "docs/fleet.md's example is the output of today's memwatch fleet")
if not good:
    import difflib
    sys.stdout.writelines(difflib.unified_diff(block.splitlines(True), now.splitlines(True), "docs", "now"))
sys.exit(not good)
PY
[ $? = 0 ] || fail=1
exit $fail
