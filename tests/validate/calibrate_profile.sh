#!/usr/bin/env bash
# tests/validate/calibrate_profile.sh: `memwatch calibrate` validates, prints the
# table and writes the machine profile; the next run reads it back; a corrupt or
# foreign profile is refused with a clear message and replaced, never a crash.
set -u
mw="$MW_BUILD_DIR/memwatch"
[ -x "$mw" ] || { echo "SKIP: $mw not built"; exit 77; }
tmp=$(mktemp -d /tmp/mw-test-calprof-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # description, command...
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; fail=1; fi
}
run() { "$mw" calibrate --quick --bench triad --repeats 2 --triad-size 16M --no-json \
          --no-progress --profile "$tmp/p/profile.json" >"$tmp/out" 2>"$tmp/err"; }

run; rc=$?
check "first run exits 0 (rc $rc)" test $rc -eq 0
check "table lists probe_lat" grep -q '^  probe_lat ' "$tmp/out"
check "separation printed" grep -q 'separation: idle end' "$tmp/out"
check "profile read back" grep -q 'read back and matched to this machine' "$tmp/out"
check "profile has the schema" grep -q '"schema":[[:space:]]*"memwatch-profile"' "$tmp/p/profile.json"
# An interpreter that has jsonschema: Debian's python3-jsonschema serves
# /usr/bin/python3, which another python3 earlier on PATH may not see.
PY=python3
for _py in python3 /usr/bin/python3; do
  if "$_py" -c 'import jsonschema' 2>/dev/null; then PY=$_py; break; fi
done
if "$PY" -c 'import jsonschema' 2>/dev/null; then
  check "profile valid against docs/profile.schema.json" "$PY" -c '
import json, sys, jsonschema
schema = json.load(open(sys.argv[1])); doc = json.load(open(sys.argv[2]))
jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)' \
    "$MW_SOURCE_DIR/docs/profile.schema.json" "$tmp/p/profile.json"
else
  echo "note: python3-jsonschema missing, schema check not run"
fi

run; rc=$?
check "second run exits 0 (rc $rc)" test $rc -eq 0
check "second run accepted the first profile" bash -c "! grep -q 'was refused' '$tmp/out'"

printf '{"schema": "memwatch-profile", "version": 1, "identity": ' >"$tmp/p/profile.json"
run; rc=$?
check "corrupt profile: exit 0 (rc $rc)" test $rc -eq 0
check "corrupt profile refused clearly" grep -q 'was refused (the file is damaged or truncated)' "$tmp/out"
check "corrupt profile replaced" grep -q 'read back and matched' "$tmp/out"

sed -i 's/"identity":[^,]*/"identity": "cpu=Another CPU;kernel=1.0"/' "$tmp/p/profile.json"
run; rc=$?
check "foreign profile: exit 0 (rc $rc)" test $rc -eq 0
check "foreign profile refused clearly" grep -q 'was refused (the file belongs to another machine' "$tmp/out"
check "reason names both identities" grep -q 'Another CPU' "$tmp/err"

if [ $fail -ne 0 ]; then
  echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"
fi
exit $fail
