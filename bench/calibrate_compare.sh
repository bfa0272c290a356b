#!/usr/bin/env bash
# bench/calibrate_compare.sh: two builds of `memwatch calibrate` side by side
# on one machine: OLD full, NEW full and NEW --quick, ROUNDS rounds, the
# order rotated every round (interleaved: drift and neighbours hit all
# alike). Each run writes its JSON and its machine profile into OUTDIR; the
# table prints, per run and as medians, the wall time, the probe_lat
# verdict, the saturation threshold, the triad, the read sweep's peak and the
# idle latency, and the medians' ratios to OLD's.
# Usage: bench/calibrate_compare.sh OLD_MEMWATCH NEW_MEMWATCH ROUNDS OUTDIR [MODES]
#   MODES: a comma list of old,new,quick (default all three)
set -uo pipefail
old=${1:?usage: calibrate_compare.sh OLD_MEMWATCH NEW_MEMWATCH ROUNDS OUTDIR [MODES]}
new=${2:?}
R=${3:?}
O=${4:?}
modes=${5:-old,new,quick}
mkdir -p "$O"
export XDG_DATA_HOME=$O/xdg # nothing written to the user's own profile
IFS=, read -r -a M <<<"$modes"
for r in $(seq "$R"); do
  n=${#M[@]}
  for k in $(seq 0 $((n - 1))); do
    m=${M[$(((k + r - 1) % n))]}
    id=$r.$k # a mode named twice in MODES runs twice a round
    case $m in
    old) bin=$old args=() ;;
    new) bin=$new args=() ;;
    quick) bin=$new args=(--quick) ;;
    esac
    t0=$(date +%s%N)
    "$bin" calibrate "${args[@]}" --no-progress --json "$O/$m-$id.json" --profile "$O/$m-$id.profile.json" \
      >"$O/$m-$id.txt" 2>&1
    rc=$?
    t1=$(date +%s%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
    echo "$m $id $secs $rc" >>"$O/times.txt"
    echo "round $r: $m took $secs s (exit $rc)" >&2
  done
done
python3 - "$O" <<'PY'
import json, os, statistics as st, sys
O = sys.argv[1]
rows = [l.split() for l in open(os.path.join(O, "times.txt"))]
def load(p):
    try:
        return json.load(open(p))
    except Exception:
        return {}
runs = []
for m, r, secs, rc in rows:
    j = load(os.path.join(O, "%s-%s.json" % (m, r)))
    p = load(os.path.join(O, "%s-%s.profile.json" % (m, r)))
    pl = next((x for x in p.get("methods", []) if x.get("name") == "probe_lat"), {})
    tri = (j.get("triad") or {}).get("normal", {}).get("bw", {}).get("best")
    runs.append(dict(mode=m, round=r, wall=float(secs), rc=int(rc),
                     verdict=pl.get("verdict", "-"), thr=p.get("lat_threshold_ns") or pl.get("threshold_ns"),
                     triad=tri / 1e9 if tri else None,
                     peak=((j.get("read_sweep") or {}).get("peak_bw") or 0) / 1e9 or None,
                     idle=p.get("idle_latency_ns")))
cols = [("wall", "wall time (s)", "%.1f"), ("verdict", "probe_lat verdict", "%s"),
        ("thr", "threshold (ns)", "%.1f"), ("triad", "triad (GB/s)", "%.1f"),
        ("peak", "read peak (GB/s)", "%.1f"), ("idle", "idle latency (ns)", "%.1f")]
hdr = ["%s %s" % (x["mode"], x["round"]) for x in runs]
print("| | " + " | ".join(hdr) + " |")
print("|---|" + "---|" * len(hdr))
for k, name, f in cols:
    print("| %s | " % name + " | ".join((f % x[k]) if x[k] is not None else "-" for x in runs) + " |")
print()
med = {}
for m in ("old", "new", "quick"):
    xs = [x for x in runs if x["mode"] == m]
    if not xs:
        continue
    med[m] = {k: st.median([x[k] for x in xs if isinstance(x[k], (int, float))] or [float("nan")])
              for k in ("wall", "thr", "triad", "peak", "idle")}
    med[m]["verdicts"] = ",".join(x["verdict"] for x in xs)
print("| median | " + " | ".join(med) + " |")
print("|---|" + "---|" * len(med))
for k, name, f in cols:
    if k == "verdict":
        print("| verdicts | " + " | ".join(med[m]["verdicts"] for m in med) + " |")
        continue
    cells = []
    for m in med:
        v = med[m][k]
        ratio = " (%.3fx)" % (v / med["old"][k]) if "old" in med and m != "old" and med["old"][k] else ""
        cells.append((f % v) + ratio)
    print("| %s | " % name + " | ".join(cells) + " |")
PY
