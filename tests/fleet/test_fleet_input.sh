#!/usr/bin/env bash
# tests/fleet/test_fleet_input.sh: bad input to `memwatch fleet` gives clear
# lines and nothing is dropped silently. From two real profiles
# (tests/fixtures/fleet/real) the test makes, in one folder: three good
# profiles of one kind and one of another (mixed CPU models), a profile of
# format version 2, a truncated profile (the first half of a good one), a
# file of another schema (calibrate's --json), an empty file, a file that
# is not JSON, a profile of version 1 that lacks a required key, a note.txt,
# and a subfolder node9/profile.json (named node9). Then:
#  - every *.json is either used or named with its reason (version 2,
#    truncated, not a memwatch profile, empty, not valid JSON, missing key),
#    in text and JSON; note.txt is counted as not read; exit status 1;
#  - the two kinds are two groups; --write-reference without --group names
#    both kinds and exits 2; --group 1 writes the reference of the first;
#  - a file that does not exist is named; no usable profile exits 2; bad
#    usage exits 2 with a sentence.
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
R=${MW_FIXTURES:?}/fleet/real
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/mw_fleet_in.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if [ "$2" = 1 ]; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }

d=$tmp/fleet
mkdir -p "$d/node9"
cp "$R/gpu-d2-quick.json" "$d/a.json"
cp "$R/gpu-d3-quick.json" "$d/b.json"
cp "$R/gpu-d4-quick.json" "$d/node9/profile.json"
cp "$R/vm-home.json" "$d/vm.json"
python3 - "$R/gpu-d2-full.json" "$d" <<'PY'
import json, os, sys
src, d = sys.argv[1], sys.argv[2]
text = open(src).read()
p = json.loads(text)
v2 = dict(p, version=2)
json.dump(v2, open(os.path.join(d, "v2.json"), "w"))
open(os.path.join(d, "trunc.json"), "w").write(text[: len(text) // 2])
json.dump({"schema": "memwatch-calibrate", "version": 1, "triad": {}},
          open(os.path.join(d, "cal.json"), "w"))
open(os.path.join(d, "empty.json"), "w").close()
open(os.path.join(d, "garbage.json"), "w").write("peak_bw = 12\n")
nokey = dict(p); del nokey["idle_latency_ns"]
json.dump(nokey, open(os.path.join(d, "nokey.json"), "w"))
open(os.path.join(d, "note.txt"), "w").write("calibrated on 2026-11-28\n")
PY

"$mw" fleet "$d" >"$tmp/out.txt" 2>"$tmp/err.txt"
rc=$?
cat "$tmp/out.txt" | sed -n '1,12p'
cat "$tmp/err.txt"
check "exit status 1 (inputs not used): $rc" $(( rc == 1 ))
"$mw" fleet --json "$d" >"$tmp/out.json" 2>/dev/null
python3 - "$tmp/out.json" "$tmp/out.txt" "$tmp/err.txt" "$d" <<'PY'
import json, os, sys
m = json.load(open(sys.argv[1])); txt = open(sys.argv[2]).read(); err = open(sys.argv[3]).read()
d = sys.argv[4]
bad = 0
def check(what, good):
    global bad
    print(("ok: " if good else "FAILED: ") + what)
    bad |= not good
byname = {os.path.relpath(i["path"], d): i for i in m["inputs"]}
want_used = {"a.json": "a", "b.json": "b", "vm.json": "vm", "node9/profile.json": "node9"}
for f, node in want_used.items():
    i = byname.get(f, {})
    check("%s used as node %s" % (f, i.get("node")), i.get("used") is True and i.get("node") == node)
reasons = {
    "v2.json": "profile format version 2; this memwatch reads version 1",
    "trunc.json": "truncated",
    "cal.json": 'not a memwatch profile (schema "memwatch-calibrate"',
    "empty.json": "empty file",
    "garbage.json": "not valid JSON at byte",
    "nokey.json": 'missing number "idle_latency_ns"',
}
for f, words in reasons.items():
    i = byname.get(f, {})
    r = i.get("reason", "")
    check("%s not used: %s" % (f, r), i.get("used") is False and words in r)
    check("%s named in the text with its reason" % f,
          ("not used: %s: %s" % (os.path.join(d, f), r)) in txt)
check("every input accounted for: %d inputs" % len(m["inputs"]),
      sorted(byname) == sorted(list(want_used) + list(reasons)))
check("note.txt counted as not read: " + err.strip(), "1 file not named *.json not read" in err)
kinds = [(g["cpu_model"], len(g["nodes"])) for g in m["groups"]]
check("mixed CPU models: two groups %s" % kinds,
      kinds == [("Intel(R) Xeon(R) Processor", 3), ("AMD EPYC", 1)])
check("a kind of one node is not judged", m["groups"][1]["judged"] is False and
      "1 node: too few to tell an odd one" in txt)
sys.exit(bad)
PY
[ $? = 0 ] || fail=1

"$mw" fleet "$d" --write-reference "$tmp/ref.json" >/dev/null 2>"$tmp/w.err"
rc=$?
grep -q "the profiles are of 2 machine kinds; name one with --group N" "$tmp/w.err"
check "--write-reference over two kinds: exit $rc, $(cat "$tmp/w.err")" $(( rc == 2 && $? == 0 ))
[ ! -e "$tmp/ref.json" ]; check "no reference written" $(( $? == 0 ))
"$mw" fleet "$d" --write-reference "$tmp/ref.json" --group 1 >/dev/null 2>"$tmp/w.err"
grep -q '"cpu_model": "Intel(R) Xeon(R) Processor"' "$tmp/ref.json" 2>/dev/null
check "--group 1 writes the first kind's reference: $(cat "$tmp/w.err")" $(( $? == 0 ))
"$mw" fleet "$R/gpu-d2-quick.json" "$R/vm-home.json" "$R/gpu-d3-quick.json" "$R/gpu-d4-quick.json" \
  --reference "$tmp/ref.json" >"$tmp/ref.txt" 2>&1
grep -q "(not compared with the reference, which is of another kind: Intel(R) Xeon(R) Processor, family 6 model 207 stepping 2, 16 CPUs)" "$tmp/ref.txt"
check "--reference: the group of another kind is said not to be compared" $(( $? == 0 ))

"$mw" fleet "$tmp/none.json" "$d/trunc.json" >"$tmp/n.out" 2>"$tmp/n.err"
rc=$?
grep -q "none.json: cannot be read: No such file or directory" "$tmp/n.err" &&
  grep -q "no usable machine profile among 2 inputs" "$tmp/n.err"
check "no usable profile: exit $rc, each input named: $(tr '\n' '|' <"$tmp/n.err")" $(( rc == 2 && $? == 0 ))
"$mw" fleet >/dev/null 2>&1
check "no input: exit 2" $(( $? == 2 ))
"$mw" fleet --bogus "$d" >/dev/null 2>"$tmp/u.err"
rc=$?
grep -q "unknown option '--bogus'" "$tmp/u.err"
check "unknown option: exit $rc, $(cat "$tmp/u.err")" $(( rc == 2 && $? == 0 ))
"$mw" fleet "$d" --group 0 >/dev/null 2>"$tmp/u.err"
rc=$?
grep -q "group expects a group number (1, 2, ...), got '0'" "$tmp/u.err"
check "--group 0: exit $rc, $(cat "$tmp/u.err")" $(( rc == 2 && $? == 0 ))
"$mw" fleet "$d" --reference "$d/trunc.json" >/dev/null 2>"$tmp/u.err"
rc=$?
grep -q "reference .*trunc.json: not valid JSON" "$tmp/u.err"
check "a bad --reference: exit $rc, $(cat "$tmp/u.err")" $(( rc == 2 && $? == 0 ))
exit $fail
