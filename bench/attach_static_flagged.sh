#!/usr/bin/env bash
# bench/attach_static_flagged.sh: issue 40's acceptance on a machine of many
# cores: tests/attach/static_triad.c (a triad phase, then a compute phase)
# linked statically (gcc -static) and dynamically, each run on THREADS
# threads (default: every online CPU) through `memwatch record --`: the
# static build by the external sampler (no LD_PRELOAD), the dynamic one by
# libmemwatch.so. For each: the report's timer samples of triad and compute
# and how many lie in flagged (bandwidth-bound) intervals. PASS when, in the
# static build, most of triad's samples are in flagged intervals and
# compute's share is lower: the triad phase is flagged, the compute phase
# is not (the dynamic build's line is there to compare with). Uses the
# machine profile of `memwatch calibrate` where there is one (else the
# uncalibrated default, 1.35 x the idle probe latency; the lines say which).
# Usage: bench/attach_static_flagged.sh BUILD_DIR [THREADS [REPS [ITERS]]]
set -euo pipefail
B=${1:?usage: attach_static_flagged.sh BUILD_DIR [THREADS [REPS [ITERS]]]}
T=${2:-$(nproc)}
REPS=${3:-60}
ITERS=${4:-1000000000}
S=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$S/tests/attach/static_triad.c
gcc -std=c11 -g -O2 -fno-inline -static -pthread -o "$tmp/static_triad" "$src" ||
    { echo "attach_static_flagged: gcc -static failed (no static libc?)"; exit 77; }
gcc -std=c11 -g -O2 -fno-inline -pthread -o "$tmp/dynamic_triad" "$src"
if readelf -l "$tmp/static_triad" | grep -q INTERP; then echo "not a static program"; exit 1; fi
rc=0
for v in static dynamic; do
    echo "== $v build, $T threads: memwatch record -- ${v}_triad $REPS $ITERS $T"
    "$B/memwatch" record -o "$tmp/raw-$v" -- "$tmp/${v}_triad" "$REPS" "$ITERS" "$T"
    "$B/memwatch" report "$tmp/raw-$v" --db "$tmp/$v.db" >"$tmp/$v.txt"
    grep -E "^  pid |latency method|threshold" "$tmp/$v.txt" | head -6 || true
    python3 - "$tmp/$v.db" "$v" <<'PY' || rc=1
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
meta = dict(c.execute("SELECT key, value FROM meta"))
print(f"{sys.argv[2]}: mode={meta.get('mode', 'preload')} threshold_ns={meta.get('threshold_ns')} "
      f"({meta.get('threshold_source')})")
iv = c.execute("SELECT count(*), coalesce(sum(flags & 1), 0) FROM intervals").fetchone()
print(f"{sys.argv[2]}: intervals {iv[0]}, flagged {iv[1]}")
rows = {f: (n, fl or 0) for f, n, fl in c.execute(
    "SELECT function, count(*), sum(in_flagged) FROM sample_lines "
    "WHERE source = 'timer' AND function IN ('triad', 'compute') GROUP BY function")}
for f in ("triad", "compute"):
    n, fl = rows.get(f, (0, 0))
    print(f"{sys.argv[2]}: {f:8s} samples {n:7d}  in flagged intervals {fl:7d}  ({100 * fl / max(n, 1):5.1f} %)")
t, k = rows.get("triad", (0, 0)), rows.get("compute", (0, 0))
st, sk = t[1] / max(t[0], 1), k[1] / max(k[0], 1)
ok = t[0] > 0 and st >= 0.5 and st > sk
print(f"{sys.argv[2]}: " + ("PASS: the triad phase is flagged, the compute phase less" if ok else
                            "FAIL: the triad phase is not flagged as expected"))
sys.exit(0 if ok or sys.argv[2] != "static" else 1)
PY
done
exit $rc
