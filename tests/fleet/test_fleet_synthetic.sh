#!/usr/bin/env bash
# tests/fleet/test_fleet_synthetic.sh: fleets of 64 nodes made from one real
# profile (tests/fixtures/fleet/real/gpu-d3-full.json). Every number of
# every node gets its own noise (normal, 1 % standard deviation, seeded);
# node17's bandwidths (peak, triad, read sweep, every mix curve's peak) are
# 15 % lower. For three seeds:
#  - exactly node17 is odd, its explanation names its peak, the median of
#    64 nodes and an idle latency that is normal (fewer channels?), exit 1;
#  - the same fleet without the slow node: no odd node, exit 0;
#  - one node whose kernel and microcode differ in the identity stays in
#    the group (they are listed, not grouped by);
# then the reference profile:
#  - --write-reference writes a profile that the profile reader takes
#    (memwatch record --profile checks it) and that validates against
#    docs/profile.schema.json;
#  - --reference REF on two new calibrations: the one 15 % slower is odd,
#    the other not; on the fleet: node17 again;
#  - --html: one plot per figure, node17 in red;
#  - docs/fleet.md's 64-node example is seed 1's output.
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
src=${MW_FIXTURES:?}/fleet/real/gpu-d3-full.json
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/mw_fleet_syn.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if [ "$2" = 1 ]; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }

# gen DIR SEED SLOW [EXTRA]: 64 node profiles node00..node63 in DIR
gen() {
  python3 - "$src" "$1" "$2" "$3" "${4:-}" <<'PY'
import json, os, random, sys
src, out, seed, slow, extra = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
base = json.load(open(src))
rnd = random.Random(seed)
BW = {"peak_bw", "triad_bw", "triad_nt_bw", "read_sweep_peak_bw"}
def noisy(o, slow_node, key=None):
    # every number 1 % off, on its own; a slow node's bandwidths 15 % lower
    if isinstance(o, dict):
        return {k: noisy(v, slow_node, k) for k, v in o.items()}
    if isinstance(o, list):
        return [noisy(v, slow_node, key) for v in o]
    if isinstance(o, float):
        v = o * rnd.gauss(1, 0.01)
        return v * 0.85 if slow_node and key in BW else v
    return o
os.makedirs(out, exist_ok=True)
for i in range(64):
    keep = {k: base[k] for k in ("schema", "version", "identity", "created", "memwatch_version",
                                  "machine", "methods")}
    p = noisy({k: v for k, v in base.items() if k not in ("evidence", "shapes", "curve")},
              slow == "slow" and i == 17)
    p.update(keep)
    # the identity and the machine are the node's hardware: not noisy
    p["curve"] = base.get("curve", [])
    if "threshold_band_ns" in p:
        p["threshold_band_ns"] = sorted(p["threshold_band_ns"])
    if extra == "kernel" and i == 5:
        parts = dict(x.split("=", 1) for x in p["identity"].split(";"))
        parts["kernel"], parts["ucode"] = "6.1.0-99-other", "0x2b000620"
        p["identity"] = ";".join("%s=%s" % kv for kv in parts.items())
    json.dump(p, open(os.path.join(out, "node%02d.json" % i), "w"), indent=1)
PY
}

for seed in 1 2 3; do
  d=$tmp/s$seed
  gen "$d/slow" $seed slow
  gen "$d/even" $seed even kernel
  "$mw" fleet --json "$d/slow" >"$d/slow.json" 2>"$d/slow.err"
  rc=$?
  check "seed $seed: a fleet with one slow node exits 1 ($rc)" $(( rc == 1 ))
  "$mw" fleet --json "$d/even" >"$d/even.json" 2>"$d/even.err"
  rc=$?
  check "seed $seed: the same fleet without it exits 0 ($rc)" $(( rc == 0 ))
  python3 - "$d/slow.json" "$d/even.json" "$seed" <<'PY'
import json, re, sys
s = json.load(open(sys.argv[1])); e = json.load(open(sys.argv[2])); seed = sys.argv[3]
bad = 0
def check(what, good):
    global bad
    print(("ok: " if good else "FAILED: ") + "seed %s: " % seed + what)
    bad |= not good
odd = [n["node"] for g in s["groups"] for n in g["nodes"] if n["outlier"]]
check("exactly node17 is odd: %s" % odd, odd == ["node17"])
g = s["groups"][0]
n17 = [n for n in g["nodes"] if n["node"] == "node17"][0]
first = n17["explanation"].splitlines()[0]
mm = re.match(r"peak bandwidth [0-9.]+ GB/s, (\d+) % below the median of 64 nodes", first)
check("node17 explained (15 % lower, and 1 % noise): " + first,
      mm is not None and 13 <= int(mm.group(1)) <= 17)
check("node17: idle latency normal, fewer channels?",
      "idle latency normal" in n17["explanation"] and "fewer memory channels" in n17["explanation"])
check("one group of 64", len(s["groups"]) == 1 and len(g["nodes"]) == 64)
odd = [n["node"] for g in e["groups"] for n in g["nodes"] if n["outlier"]]
check("without the slow node: none odd %s" % odd, odd == [] and e["outlier_nodes"] == 0)
check("a node with another kernel and microcode stays in the group: %d group(s)" % len(e["groups"]),
      len(e["groups"]) == 1 and len(e["groups"][0]["nodes"]) == 64)
sys.exit(bad)
PY
  [ $? = 0 ] || fail=1
done
"$mw" fleet "$tmp/s1/even" >"$tmp/even.txt" 2>&1
grep -q "^  kernel 6.18.44-fc-v657-gpu (63), 6.1.0-99-other (1: node05)$" "$tmp/even.txt"
check "text lists the kernels: $(grep -m1 '^  kernel' "$tmp/even.txt")" $(( $? == 0 ))
grep -q "^  microcode 0x1 (63), 0x2b000620 (1: node05)$" "$tmp/even.txt"
check "text lists the microcodes: $(grep -m1 '^  microcode' "$tmp/even.txt")" $(( $? == 0 ))
"$mw" fleet "$tmp/s1/slow" >"$tmp/slow.txt" 2>&1
sed -n '/odd nodes/,$p' "$tmp/slow.txt" >"$tmp/slow-odd.txt"
cat "$tmp/slow-odd.txt"
# docs/fleet.md shows this part of seed 1's output
python3 - "${MW_SOURCE_DIR:?}/docs/fleet.md" "$tmp/slow-odd.txt" <<'PY'
import sys
doc = open(sys.argv[1]).read(); now = open(sys.argv[2]).read()
part = doc.split("## Example: 64 nodes, one slow", 1)[-1]
block = part.split("```\n", 2)[1] if part.count("```") >= 2 else ""
good = block == now
print(("ok: " if good else "FAILED: ") + "docs/fleet.md's 64-node example is seed 1's output")
sys.exit(not good)
PY
[ $? = 0 ] || fail=1

# ---- the reference profile
ref=$tmp/ref.json
"$mw" fleet "$tmp/s1/even" --write-reference "$ref" >/dev/null 2>"$tmp/ref.err"
check "--write-reference exits 0: $(cat "$tmp/ref.err")" $(( $? == 0 ))
"$mw" record -q -o "$tmp/rec" --profile "$ref" -- /bin/true >/dev/null 2>"$tmp/rec.err"
rc=$?
! grep -q "machine profile" "$tmp/rec.err"
check "the reference is a profile the reader takes (memwatch record --profile: exit $rc)" $(( $? == 0 )) ||
  cat "$tmp/rec.err"
if python3 -c 'import jsonschema' 2>/dev/null; then
  python3 - "$ref" "${MW_SOURCE_DIR:?}/docs/profile.schema.json" <<'PY'
import json, jsonschema, sys
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))
print("ok: the reference validates against docs/profile.schema.json")
PY
  [ $? = 0 ] || { echo "FAILED: schema"; fail=1; }
else
  echo "note: python3-jsonschema is not installed: the schema check is not run"
fi
mkdir -p "$tmp/new"
cp "$tmp/s2/even/node03.json" "$tmp/new/good.json"
cp "$tmp/s2/slow/node17.json" "$tmp/new/slow.json"
"$mw" fleet --json --reference "$ref" "$tmp/new" >"$tmp/new.json" 2>"$tmp/new.err"
rc=$?
check "--reference on two new calibrations exits 1 ($rc)" $(( rc == 1 ))
"$mw" fleet --json --reference "$ref" "$tmp/s3/slow" >"$tmp/ref3.json" 2>/dev/null
python3 - "$tmp/new.json" "$tmp/ref3.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); f = json.load(open(sys.argv[2]))
bad = 0
def check(what, good):
    global bad
    print(("ok: " if good else "FAILED: ") + what)
    bad |= not good
g = m["groups"][0]
check("compared with the reference of 64 nodes", g["compared_with"] == "reference" and
      m["reference"]["from_nodes"] == 64)
odd = {n["node"]: n for n in g["nodes"] if n["outlier"]}
check("the slow calibration is odd against the reference, the good one not: %s" % sorted(odd),
      sorted(odd) == ["slow"])
if "slow" in odd:
    first = odd["slow"]["explanation"].splitlines()[0]
    check("explained against the reference: " + first, "below the reference" in first)
odd = [n["node"] for n in f["groups"][0]["nodes"] if n["outlier"]]
check("another seed's fleet against the reference: node17 alone: %s" % odd, odd == ["node17"])
sys.exit(bad)
PY
[ $? = 0 ] || fail=1
"$mw" fleet "$tmp/s1/slow" --html "$tmp/f.html" >/dev/null 2>&1
n=$(grep -c "<svg " "$tmp/f.html")
grep -q 'class="odd"><title>node17: ' "$tmp/f.html"
check "--html: $n plots, node17 marked odd" $(( $? == 0 && n > 20 ))
exit $fail
