#!/usr/bin/env bash
# tests/export/test_mpi.sh: job-wide views of real runs.
#  1. Debian's OpenMPI: `memwatch record -- mpirun -np 4 --oversubscribe bwdemo`
#     gives four rank files (META rank_from) beside mpirun's own; the merged
#     report's per-rank rows (text, JSON, HTML) hold what each rank's file
#     reported alone says: share of time bound, time, samples, top line.
#  2. Two hosts: the two ranks of one PMIx job (PMIX_RANK, PMIX_NAMESPACE as
#     a launcher sets them), one recorded in a separate UTS namespace under
#     the host name nodeB and one on this host, in two subdirectories of one
#     folder, are one run (no --all-runs) and merge into one report (the
#     folder's tree) with a per-host table; --host narrows it to one.
# The threshold is set to 1 ns so that intervals are flagged on any machine.
set -u
[ -n "${MW_SAN_PRELOAD:-}" ] && export LD_PRELOAD=$MW_SAN_PRELOAD
B=${MW_BUILD_DIR:?}
S=${MW_SOURCE_DIR:?}
mw=$B/memwatch
[ -f "$B/libmemwatch.so" ] && [ -x "$B/bwdemo" ] || { echo "SKIP: libmemwatch.so or bwdemo not built"; exit 77; }
[ -z "${MW_SAN_PRELOAD:-}" ] || { echo "SKIP: sanitized build: mpirun's own runtime under the ASan preload is not what this tests"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 command is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/mw_mpi.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if [ "$2" = 1 ]; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }
ran=0

# compare_ranks MERGED.json DIR: each rank's row against its own file's report
compare_ranks() {
  local merged=$1 dir=$2 db=$3
  sqlite3 "$db" "SELECT p.rank, p.file FROM processes p JOIN meta m ON m.process_id = p.id AND m.key = 'rank_from' ORDER BY p.rank" |
  while IFS='|' read -r rank file; do
    "$mw" report "$file" --db "$tmp/rank$rank.db" --json >"$tmp/rank$rank.json" 2>/dev/null ||
      { echo "FAILED: report of rank $rank alone"; echo 1 >"$tmp/bad"; continue; }
    python3 - "$merged" "$tmp/rank$rank.json" "$rank" <<'PY' || echo 1 >"$tmp/bad"
import json, sys
m = json.load(open(sys.argv[1])); own = json.load(open(sys.argv[2])); rank = int(sys.argv[3])
row = [p for p in m["job"]["processes"] if p.get("rank") == rank]
ok = len(row) == 1
row = row[0] if ok else {}
bw = own["bandwidth"]
samples = sum(x["samples"] for x in own["samples"])
scope = "flagged" if own["flagged"]["samples"] else "overall"
top = own[scope]["lines"][0] if own[scope]["lines"] else None
checks = [
    ("one row", ok),
    ("share %.4f" % bw["share"], abs(row.get("share", -1) - bw["share"]) < 1e-9),
    ("time %d ns" % bw["time_ns"], row.get("time_ns") == bw["time_ns"]),
    ("samples %d" % samples, row.get("samples") == samples),
    ("top line %s:%s (%s, %s samples)" % (top and top.get("file", "?").split("/")[-1], top and top.get("line"), scope, top and top["samples"]),
     top is None or (row.get("top_line", {}).get("scope") == scope and row["top_line"].get("line") == top.get("line")
                     and row["top_line"].get("file") == top.get("file") and row["top_line"]["samples"] == top["samples"])),
]
bad = 0
for what, good in checks:
    print(("ok: " if good else "FAILED: ") + "rank %d's merged row = its own report: %s" % (rank, what))
    bad |= not good
sys.exit(bad)
PY
  done
}

# Open MPI's mpirun (Debian's default `mpirun`; mpirun.openmpi beside MPICH's)
ompi=""
for c in mpirun.openmpi mpirun; do
  if command -v $c >/dev/null && $c --version 2>&1 | grep -q "Open MPI"; then ompi=$c; break; fi
done
if [ -n "$ompi" ]; then
  ran=1
  asroot=""
  [ "$(id -u)" = 0 ] && asroot=--allow-run-as-root
  "$mw" record -q -o "$tmp/mpi" --threshold-ns 1 -- \
    $ompi -np 4 --oversubscribe $asroot "$B/bwdemo" 0.3 1 16 1 >"$tmp/mpi.out" 2>&1
  check "memwatch record -- mpirun -np 4 bwdemo" $(( $? == 0 )) || cat "$tmp/mpi.out"
  "$mw" report "$tmp/mpi" --db "$tmp/mpi.db" --json >"$tmp/merged.json" 2>"$tmp/merged.err"
  check "merged report" $(( $? == 0 )) || cat "$tmp/merged.err"
  n=$(sqlite3 "$tmp/mpi.db" "SELECT COUNT(*) FROM meta WHERE key = 'rank_from'")
  check "four rank files ($n with an MPI rank among $(ls "$tmp/mpi" | grep -c '\.mwr$') raw files)" $(( n == 4 ))
  r=$(sqlite3 "$tmp/mpi.db" "SELECT GROUP_CONCAT(rank) FROM (SELECT DISTINCT p.rank FROM processes p JOIN meta m ON m.process_id = p.id AND m.key = 'rank_from' ORDER BY 1)")
  check "ranks 0,1,2,3 ($r)" $([ "$r" = "0,1,2,3" ] && echo 1 || echo 0)
  r=$(sqlite3 "$tmp/mpi.db" "SELECT COUNT(*) || ':' || GROUP_CONCAT(COALESCE(rank, 'NULL')) FROM (SELECT rank FROM processes WHERE id NOT IN (SELECT process_id FROM meta WHERE key = 'rank_from') ORDER BY id)")
  check "mpirun and any other process without a launcher's rank have no rank in the database ($r)" $([[ "$r" =~ ^[1-9][0-9]*:NULL(,NULL)*$ ]] && echo 1 || echo 0)
  rm -f "$tmp/bad"
  compare_ranks "$tmp/merged.json" "$tmp/mpi" "$tmp/mpi.db"
  [ ! -e "$tmp/bad" ]; check "every rank's row matches its own report (JSON)" $(( $? == 0 ))
  # text: one row per rank with the same share
  "$mw" report "$tmp/mpi" --db "$tmp/mpi2.db" >"$tmp/merged.txt" 2>/dev/null
  python3 - "$tmp/merged.json" "$tmp/merged.txt" <<'PY'
import json, re, sys
m = json.load(open(sys.argv[1])); txt = open(sys.argv[2]).read()
bad = 0
if "Per rank/process" not in txt or "imbalance:" not in txt:
    print("FAILED: text summary has the per-rank table and the imbalance line"); sys.exit(1)
for p in m["job"]["processes"]:
    if "rank" not in p:
        continue
    pat = r"^\s+%d\s+\S+\s+%d\s+[\d.]+\s+%.1f%%\s+%d\s" % (p["rank"], p["pid"], 100 * p["share"], p["samples"])
    good = re.search(pat, txt, re.M) is not None
    print(("ok: " if good else "FAILED: ") + "text row of rank %d: %.1f%%, %d samples" % (p["rank"], 100 * p["share"], p["samples"]))
    bad |= not good
sys.exit(bad)
PY
  check "text per-rank rows" $(( $? == 0 ))
  grep "imbalance:" "$tmp/merged.txt"
  # HTML: the rank table in the browser
  if command -v node >/dev/null && [ -d "$S/tests/js/node_modules/playwright-core" ] && command -v chromium >/dev/null; then
    "$mw" export "$tmp/mpi.db" --format html -o "$tmp/mpi.html" &&
      timeout 180 node "$S/tests/js/html_check.js" "$tmp/mpi.html" "$B/test-artifacts/html_mpi.png" >"$tmp/page.json" 2>"$tmp/page.err"
    check "HTML of the MPI run loads in headless chromium" $(( $? == 0 )) || cat "$tmp/page.err"
    python3 - "$tmp/merged.json" "$tmp/page.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2]))
bad = 0 if p["errors"] == [] else 1
print(("ok: " if not bad else "FAILED: ") + "no console error")
rows = {r[0]: r for r in p["rank_rows"]}
for q in m["job"]["processes"]:
    if "rank" not in q:
        continue
    r = rows.get(str(q["rank"]))
    good = r is not None and r[5] == "%.1f%%" % (100 * q["share"]) and r[6] == "%d" % q["samples"]
    print(("ok: " if good else "FAILED: ") + "HTML row of rank %d" % q["rank"] + ("" if good else " %r" % (r,)))
    bad |= not good
good = all(sum(l.startswith("rank %d @" % r) for l in p["timeline_lanes"]) == 1 for r in range(4))
print(("ok: " if good else "FAILED: ") + "one timeline lane per rank, named: %s" % p["timeline_lanes"])
sys.exit(bad or not good)
PY
    check "HTML per-rank rows" $(( $? == 0 ))
  else
    echo "note: node, playwright-core or chromium missing: the HTML of the MPI run is not checked"
  fi
else
  echo "note: Open MPI's mpirun (Debian's openmpi-bin) is not installed: the MPI part is not run"
fi

if unshare --uts true 2>/dev/null; then
  ran=1
  mkdir -p "$tmp/two"
  job="PMIX_NAMESPACE=mw-two-hosts.$$"
  unshare --uts env PMIX_RANK=0 "$job" sh -c "hostname nodeB && exec \"$mw\" record -q -o \"$tmp/two/nodeB\" --threshold-ns 1 -- \"$B/bwdemo\" 0.3 1 16 1" >"$tmp/b.out" 2>&1
  check "rank 0 recorded as host nodeB (UTS namespace)" $(( $? == 0 )) || cat "$tmp/b.out"
  env PMIX_RANK=1 "$job" "$mw" record -q -o "$tmp/two/here" --threshold-ns 1 -- "$B/bwdemo" 0.3 1 16 1 >"$tmp/a.out" 2>&1
  check "rank 1 recorded on this host" $(( $? == 0 )) || cat "$tmp/a.out"
  "$mw" report "$tmp/two" --db "$tmp/two.db" --json >"$tmp/two.json" 2>"$tmp/two.err"
  check "the folder's tree merges into one report" $(( $? == 0 )) || cat "$tmp/two.err"
  ! grep -q "runs:" "$tmp/two.err"
  check "the two hosts' ranks are one run" $(( $? == 0 )) || cat "$tmp/two.err"
  here=$(uname -n)
  python3 - "$tmp/two.json" "$here" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); here = sys.argv[2]
hosts = sorted(h["host"] for h in m["job"]["hosts"])
good = hosts == sorted(["nodeB", here])
print(("ok: " if good else "FAILED: ") + "per-host table: %s" % hosts)
sys.exit(not good)
PY
  check "two hosts in the merged report" $(( $? == 0 ))
  "$mw" report "$tmp/two" --db "$tmp/two2.db" >"$tmp/two.txt" 2>/dev/null
  grep -q "^Per host" "$tmp/two.txt"; check "text summary has the per-host table" $(( $? == 0 ))
  grep -A3 "^Per host" "$tmp/two.txt"
  n=$("$mw" report "$tmp/two" --db "$tmp/two3.db" --host nodeB --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["processes"]))')
  check "--host nodeB narrows the report to that host's process ($n)" $(( n == 1 ))
else
  echo "note: unshare --uts is not permitted here (needs root or user namespaces): the two-host part is not run"
fi
[ "$ran" = 1 ] || { echo "SKIP: neither mpirun nor unshare --uts is available"; exit 77; }
exit $fail
