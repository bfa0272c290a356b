#!/usr/bin/env bash
# The suite is hermetic: this test runs under tests/hermetic.sh like every
# other, so it checks its own environment; then every registered test's
# command line (ctest --show-only=json-v1) and the wrapper's rules on a
# hostile environment.
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${MW_BUILD_DIR:?}" "${MW_SOURCE_DIR:?}"
W=$MW_SOURCE_DIR/tests/hermetic.sh

# 1. this test's own environment
case $HOME in "$MW_BUILD_DIR/test-home/test_suite_hermetic") ;; *) fail "HOME is '$HOME'" ;; esac
[ "${XDG_DATA_HOME:-}" = "$HOME/.local/share" ] || fail "XDG_DATA_HOME is '${XDG_DATA_HOME:-}'"
[ -d "$XDG_DATA_HOME" ] && [ -z "$(ls -A "$XDG_DATA_HOME")" ] || fail "the data directory is not new and empty"
[ -z "${LD_PRELOAD:-}" ] || fail "LD_PRELOAD is inherited: $LD_PRELOAD"
left=$(env | grep '^MEMWATCH_' | grep -v '^MEMWATCH_SUITE_KEPT=kept$' || true)
[ -z "$left" ] || fail "MEMWATCH_ variables inherited: $left"
[ "${MEMWATCH_SUITE_KEPT:-}" = kept ] || fail "the registration's own MEMWATCH_SUITE_KEPT was not set"

# 2. every registered test goes through the wrapper and carries its folder label
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
json=$(cd "$MW_BUILD_DIR" && ctest --show-only=json-v1) || fail "ctest --show-only=json-v1 failed"
echo "$json" | python3 -c '
import json, os, sys
w = sys.argv[1]
tests = json.load(sys.stdin)["tests"]
bad = []
labels = set()
for t in tests:
    cmd = t.get("command") or []
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    if len(cmd) < 3 or cmd[1] != w or not cmd[2].endswith("/test-home/" + t["name"]):
        bad.append("%s: command %s" % (t["name"], " ".join(cmd[:3])))
    if "ENVIRONMENT" in props:
        bad.append("%s: ENVIRONMENT property %s (variables go through the wrapper)" % (t["name"], props["ENVIRONMENT"]))
    if not props.get("LABELS"):
        bad.append("%s: no labels" % t["name"])
    labels.update(props.get("LABELS", []))
for want in ("preload", "cli", "report", "unit", "live"):
    if want not in labels:
        bad.append("no test carries the label %s (each test is labelled with its folder)" % want)
print("%d tests registered, %d not hermetic" % (len(tests), len(bad)))
for b in bad:
    print("  " + b)
sys.exit(1 if bad or len(tests) < 50 else 0)
' "$W" || fail "tests escape tests/hermetic.sh"

# 3. the wrapper on a hostile environment
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/test-home/x/.local/share/memwatch"
echo '{}' >"$T/test-home/x/.local/share/memwatch/profile.json"
out=$(env MEMWATCH_RATE=100 MEMWATCH_INTERVAL=50ms MEMWATCH_PROFILE=/x LD_PRELOAD=/nonexistent.so \
      CUDA_INJECTION64_PATH=/x DEBUGINFOD_URLS=http://127.0.0.1:1 LIBPFM_FORCE_PMU=skx HOME=/root \
      sh "$W" "$T/test-home/x" MEMWATCH_DIR=/kept -- env 2>&1) || fail "the wrapper failed: $out"
for v in MEMWATCH_RATE MEMWATCH_INTERVAL MEMWATCH_PROFILE LD_PRELOAD CUDA_INJECTION64_PATH \
         DEBUGINFOD_URLS LIBPFM_FORCE_PMU; do
    echo "$out" | grep -q "^$v=" && fail "the wrapper passed $v on"
done
echo "$out" | grep -qx "MEMWATCH_DIR=/kept" || fail "the wrapper dropped the registration's MEMWATCH_DIR"
echo "$out" | grep -qx "HOME=$T/test-home/x" || fail "HOME not set to the test's home"
[ -e "$T/test-home/x/.local/share/memwatch/profile.json" ] && fail "a profile left from an earlier run survived"
sh "$W" /tmp -- true 2>/dev/null && fail "the wrapper accepted a home outside test-home/"
sh "$W" "$T/test-home/y" notavar -- true 2>/dev/null && fail "the wrapper accepted 'notavar'"
echo "PASS: hermetic"
