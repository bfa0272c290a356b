#!/usr/bin/env bash
# tests/export/test_mpi_runs.sh: the ranks of one MPI job are one run
# (docs/jobs.md). For Debian's Open MPI, and MPICH (Hydra) where it is
# installed, each launch line of docs/jobs.md with 4 ranks:
#   A. mpirun -np 4 -x LD_PRELOAD=libmemwatch.so -x MEMWATCH_DIR=DIR bwdemo
#      (MPICH: -genv LD_PRELOAD ... -genv MEMWATCH_DIR ...)
#   B. mpirun -np 4 memwatch record -o DIR -- bwdemo
# gives, with a plain `memwatch report DIR` (no --all-runs, no --run):
# no "the inputs hold N runs" line, one run id in every file, naming the
# launcher (ompi-, hydra-), 4 processes with ranks 0..3 in the per-rank table
# (JSON job.processes and the text) and the imbalance line.
#   C. two jobs of line A in one directory are two runs: the report names
#      both and reports the newest (4 ranks); --all-runs gives 8 ranks.
#   D. memwatch record -o DIR -- mpirun -np 4 bwdemo: mpirun's own process
#      has no rank (NULL in the database, no "rank" in JSON, no rank in the
#      text's per-rank table), the four ranks have 0..3, and all are one run.
#   E. without a launcher: the environment of a Slurm step, of PMIx, of a
#      PMI_JOBID launcher names the run (slurm-JOB.STEP, pmix-NS, pmi-ID),
#      in libmemwatch.so and in memwatch record alike; a long namespace with
#      characters outside the allowed set becomes a valid id of at most 63
#      characters, and two that differ only at their end stay apart; a rank
#      variable without a job identity (a Slurm batch script: no step id)
#      and an explicit MEMWATCH_RUN_ID keep the run id of the process tree;
#      a plain process has no rank.
# The threshold is set to 1 ns so that intervals are flagged on any machine.
set -u
[ -n "${MW_SAN_PRELOAD:-}" ] && export LD_PRELOAD=$MW_SAN_PRELOAD
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
lib=$B/libmemwatch.so
app=$B/bwdemo
[ -f "$lib" ] && [ -x "$app" ] || { echo "SKIP: libmemwatch.so or bwdemo not built"; exit 77; }
[ -z "${MW_SAN_PRELOAD:-}" ] || { echo "SKIP: sanitized build: the launchers' own runtime under the ASan preload is not what this tests"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 command is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/mw_mpiruns.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if [ "$2" = 1 ]; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
appargs=(0.3 1 16 1)

# one_run NAME DIR PREFIX: a plain report of DIR is one run of 4 ranks
one_run() {
  local name=$1 dir=$2 prefix=$3 db=$tmp/$1.db
  "$mw" report "$dir" --db "$db" --json >"$tmp/$name.json" 2>"$tmp/$name.err"
  check "$name: memwatch report DIR" $(( $? == 0 )) || cat "$tmp/$name.err"
  ! grep -q "runs:" "$tmp/$name.err"
  check "$name: the report finds one run, no 'the inputs hold N runs'" $(( $? == 0 )) || cat "$tmp/$name.err"
  local ids
  ids=$(sqlite3 "$db" "SELECT GROUP_CONCAT(v) FROM (SELECT DISTINCT value AS v FROM meta WHERE key = 'run_id')")
  check "$name: one run id in every file ($ids), named after the launcher ($prefix)" \
    $([[ "$ids" != *,* && "$ids" == "$prefix"* ]] && echo 1 || echo 0)
  python3 - "$tmp/$name.json" "$name" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); name = sys.argv[2]
ranks = sorted(p["rank"] for p in m["job"]["processes"] if "rank" in p)
good = ranks == [0, 1, 2, 3]
print(("ok: " if good else "FAILED: ") + "%s: JSON per-rank table holds ranks 0..3: %s" % (name, ranks))
im = m["job"].get("imbalance")
good2 = im is not None and "rank" in im.get("text", "")
print(("ok: " if good2 else "FAILED: ") + "%s: imbalance among the ranks: %s" % (name, im and im.get("text")))
sys.exit(not (good and good2))
PY
  check "$name: per-rank JSON" $(( $? == 0 ))
  "$mw" report "$dir" --db "$tmp/$name.t.db" >"$tmp/$name.txt" 2>/dev/null
  ranks=$(python3 "${MW_SOURCE_DIR:?}/tests/report/text_ranks.py" "$tmp/$name.txt")
  imb=$(grep -c "imbalance:" "$tmp/$name.txt")
  echo "$name: text per-rank table ranks '$ranks', imbalance line $imb"
  check "$name: per-rank text" $([ "$ranks" = "0 1 2 3" ] && [ "$imb" -ge 1 ] && echo 1 || echo 0)
}

ran=0
# ---- Open MPI ----
ompi=""
for c in mpirun.openmpi mpirun; do
  if command -v $c >/dev/null && $c --version 2>&1 | grep -q "Open MPI"; then ompi=$c; break; fi
done
if [ -n "$ompi" ]; then
  ran=1
  echo "== Open MPI ($ompi)"
  # A: the library preloaded into each rank (MEMWATCH_DIR exists: the
  # library writes into it, memwatch record makes it)
  mkdir -p "$tmp/oA" "$tmp/oC"
  $ompi -np 4 --oversubscribe -x LD_PRELOAD="$lib" -x MEMWATCH_DIR="$tmp/oA" -x MEMWATCH_THRESHOLD_NS=1 \
    "$app" "${appargs[@]}" >"$tmp/oA.out" 2>&1
  check "ompi A: mpirun -np 4 -x LD_PRELOAD -x MEMWATCH_DIR bwdemo" $(( $? == 0 )) || cat "$tmp/oA.out"
  one_run ompiA "$tmp/oA" ompi-
  # B: memwatch record per rank
  $ompi -np 4 --oversubscribe "$mw" record -q -o "$tmp/oB" --threshold-ns 1 -- "$app" "${appargs[@]}" \
    >"$tmp/oB.out" 2>&1
  check "ompi B: mpirun -np 4 memwatch record -o DIR -- bwdemo" $(( $? == 0 )) || cat "$tmp/oB.out"
  one_run ompiB "$tmp/oB" ompi-
  # C: two jobs in one directory
  for j in 1 2; do
    $ompi -np 4 --oversubscribe -x LD_PRELOAD="$lib" -x MEMWATCH_DIR="$tmp/oC" -x MEMWATCH_THRESHOLD_NS=1 \
      "$app" "${appargs[@]}" >"$tmp/oC$j.out" 2>&1
    check "ompi C: job $j into one directory" $(( $? == 0 )) || cat "$tmp/oC$j.out"
  done
  "$mw" report "$tmp/oC" --db "$tmp/oC.db" --json >"$tmp/oC.json" 2>"$tmp/oC.err"
  check "ompi C: report of two jobs" $(( $? == 0 )) || cat "$tmp/oC.err"
  grep -q "the inputs hold 2 runs" "$tmp/oC.err"
  rc=$?
  check "ompi C: two jobs are two runs: $(head -1 "$tmp/oC.err" | cut -c1-300)" $(( rc == 0 ))
  n=$(sqlite3 "$tmp/oC.db" "SELECT COUNT(*) FROM processes WHERE rank IS NOT NULL")
  check "ompi C: the newest job's 4 ranks reported ($n)" $(( n == 4 ))
  "$mw" report "$tmp/oC" --all-runs --db "$tmp/oC2.db" --json >/dev/null 2>&1
  r=$(sqlite3 "$tmp/oC2.db" "SELECT COUNT(*), COUNT(DISTINCT rank), (SELECT COUNT(DISTINCT value) FROM meta WHERE key = 'run_id') FROM processes WHERE rank IS NOT NULL")
  check "ompi C: --all-runs: 8 rank processes, ranks 0..3, 2 run ids ($r)" $([ "$r" = "8|4|2" ] && echo 1 || echo 0)
  # D: mpirun under memwatch record has no rank
  "$mw" record -q -o "$tmp/oD" --threshold-ns 1 -- $ompi -np 4 --oversubscribe "$app" "${appargs[@]}" \
    >"$tmp/oD.out" 2>&1
  check "ompi D: memwatch record -- mpirun -np 4 bwdemo" $(( $? == 0 )) || cat "$tmp/oD.out"
  "$mw" report "$tmp/oD" --db "$tmp/oD.db" --json >"$tmp/oD.json" 2>"$tmp/oD.err"
  check "ompi D: report" $(( $? == 0 )) || cat "$tmp/oD.err"
  ! grep -q "runs:" "$tmp/oD.err"; check "ompi D: one run" $(( $? == 0 ))
  r=$(sqlite3 "$tmp/oD.db" "SELECT COUNT(*), GROUP_CONCAT(COALESCE(rank, 'NULL')) FROM processes WHERE exe LIKE '%/orterun' OR exe LIKE '%/mpirun%' OR exe LIKE '%/prterun'")
  check "ompi D: mpirun's own process has no rank (count|ranks: $r)" $([ "$r" = "1|NULL" ] && echo 1 || echo 0)
  r=$(sqlite3 "$tmp/oD.db" "SELECT GROUP_CONCAT(rank) FROM (SELECT rank FROM processes WHERE rank IS NOT NULL ORDER BY rank)")
  check "ompi D: the ranks are 0,1,2,3 ($r)" $([ "$r" = "0,1,2,3" ] && echo 1 || echo 0)
  mpid=$(sqlite3 "$tmp/oD.db" "SELECT pid FROM processes WHERE exe LIKE '%/orterun' OR exe LIKE '%/mpirun%' OR exe LIKE '%/prterun'")
  python3 - "$tmp/oD.json" "${mpid:-0}" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); pid = int(sys.argv[2])
row = [p for p in m["job"]["processes"] if p["pid"] == pid]
good = len(row) == 1 and "rank" not in row[0]
print(("ok: " if good else "FAILED: ") + "ompi D: JSON row of mpirun (pid %d) has no rank: %s" % (pid, row))
sys.exit(not good)
PY
  check "ompi D: JSON" $(( $? == 0 ))
  "$mw" report "$tmp/oD" --db "$tmp/oD2.db" >"$tmp/oD.txt" 2>/dev/null
  out=$(python3 "${MW_SOURCE_DIR:?}/tests/report/text_ranks.py" "$tmp/oD.txt" "${mpid:-0}")
  ranked=$(sed -n 1p <<<"$out"); mp=$(sed -n 2p <<<"$out")
  echo "ompi D: text per-rank table: ranks '$ranked'; mpirun (pid ${mpid:-0}) $([ -n "$mp" ] && echo "listed with rank '$mp'" || echo "not listed")"
  [ "$ranked" = "0 1 2 3" ] && [ -z "$(tr -d ' -' <<<"$mp")" ]
  check "ompi D: text per-rank table gives mpirun no rank" $(( $? == 0 )) || sed -n '/Per rank/,/imbalance/p' "$tmp/oD.txt"
else
  echo "note: Open MPI's mpirun is not installed: its part is not run"
fi

# ---- MPICH (Hydra) ----
if command -v mpirun.mpich >/dev/null; then
  ran=1
  echo "== MPICH (mpirun.mpich)"
  mkdir -p "$tmp/mA" "$tmp/mC"
  mpirun.mpich -np 4 -genv LD_PRELOAD "$lib" -genv MEMWATCH_DIR "$tmp/mA" -genv MEMWATCH_THRESHOLD_NS 1 \
    "$app" "${appargs[@]}" >"$tmp/mA.out" 2>&1
  check "mpich A: mpirun.mpich -np 4 -genv LD_PRELOAD -genv MEMWATCH_DIR bwdemo" $(( $? == 0 )) || cat "$tmp/mA.out"
  one_run mpichA "$tmp/mA" hydra-
  mpirun.mpich -np 4 "$mw" record -q -o "$tmp/mB" --threshold-ns 1 -- "$app" "${appargs[@]}" \
    >"$tmp/mB.out" 2>&1
  check "mpich B: mpirun.mpich -np 4 memwatch record -o DIR -- bwdemo" $(( $? == 0 )) || cat "$tmp/mB.out"
  one_run mpichB "$tmp/mB" hydra-
  for j in 1 2; do
    mpirun.mpich -np 4 -genv LD_PRELOAD "$lib" -genv MEMWATCH_DIR "$tmp/mC" -genv MEMWATCH_THRESHOLD_NS 1 \
      "$app" "${appargs[@]}" >"$tmp/mC$j.out" 2>&1
    check "mpich C: job $j into one directory" $(( $? == 0 )) || cat "$tmp/mC$j.out"
  done
  "$mw" report "$tmp/mC" --db "$tmp/mC.db" --json >/dev/null 2>"$tmp/mC.err"
  grep -q "the inputs hold 2 runs" "$tmp/mC.err"
  rc=$?
  check "mpich C: two jobs are two runs: $(head -1 "$tmp/mC.err" | cut -c1-300)" $(( rc == 0 ))
  n=$(sqlite3 "$tmp/mC.db" "SELECT COUNT(*) FROM processes WHERE rank IS NOT NULL")
  check "mpich C: the newest job's 4 ranks reported ($n)" $(( n == 4 ))
else
  echo "note: MPICH (mpirun.mpich, Debian's mpich) is not installed: its part is not run"
fi

# ---- E: launcher environments without a launcher ----
# run_id_of NAME ENV...: the run id and rank of bwdemo under libmemwatch.so
# with ENV, and of the same under memwatch record
run_env() {
  local name=$1
  shift
  mkdir -p "$tmp/e-$name"
  env -u OMPI_COMM_WORLD_RANK -u PMIX_RANK -u PMI_RANK -u SLURM_PROCID "$@" \
    LD_PRELOAD="$lib" MEMWATCH_DIR="$tmp/e-$name" "$app" 0.05 1 16 1 >/dev/null 2>&1
  env -u OMPI_COMM_WORLD_RANK -u PMIX_RANK -u PMI_RANK -u SLURM_PROCID "$@" \
    "$mw" record -q -o "$tmp/e-$name-rec" -- "$app" 0.05 1 16 1 >/dev/null 2>&1
  for d in "$tmp/e-$name" "$tmp/e-$name-rec"; do
    "$mw" report "$d" --all-runs --db "$d.db" >/dev/null 2>&1
    sqlite3 "$d.db" "SELECT (SELECT value FROM meta WHERE key = 'run_id' AND process_id = p.id LIMIT 1) || '|' || COALESCE(p.rank, 'NULL') FROM processes p WHERE p.exe LIKE '%bwdemo' LIMIT 1"
  done
}
expect_env() { # WHAT EXPECTED-ID-PATTERN EXPECTED-RANK ENV...
  local what=$1 pat=$2 rank=$3
  shift 3
  local out
  out=$(run_env "$what" "$@" | tr '\n' ' ')
  local good=1
  for r in $out; do
    [[ "${r%|*}" =~ ^$pat$ && "${r#*|}" = "$rank" ]] || good=0
  done
  [ "$(echo $out | wc -w)" = 2 ] || good=0
  check "env $what: run id ~ $pat, rank $rank, preloaded and recorded alike ($out)" $good
}
ran=1
echo "== launcher environments"
expect_env slurm 'slurm-4711\.2' 3 SLURM_PROCID=3 SLURM_JOB_ID=4711 SLURM_STEP_ID=2
expect_env slurm-batch '[0-9]{8}-[0-9]{6}-[0-9]+' 0 SLURM_PROCID=0 SLURM_JOB_ID=4711
expect_env pmix 'pmix-slurm\.pmix\.4711\.2' 5 PMIX_RANK=5 PMIX_NAMESPACE=slurm.pmix.4711.2
expect_env pmi 'pmi-4711\.2' 1 PMI_RANK=1 PMI_JOBID=4711.2
expect_env explicit 'mine\.1' 3 SLURM_PROCID=3 SLURM_JOB_ID=4711 SLURM_STEP_ID=2 MEMWATCH_RUN_ID=mine.1
expect_env plain '[0-9]{8}-[0-9]{6}-[0-9]+' NULL
long=prterun-a-very-long-host-name.example.org-1234567@1/with:odd*chars/and/more/padding
expect_env long1 '[A-Za-z0-9._-]{1,63}' 2 OMPI_COMM_WORLD_RANK=2 PMIX_NAMESPACE="${long}A"
expect_env long2 '[A-Za-z0-9._-]{1,63}' 2 OMPI_COMM_WORLD_RANK=2 PMIX_NAMESPACE="${long}B"
a=$(run_env long1b OMPI_COMM_WORLD_RANK=2 PMIX_NAMESPACE="${long}A" | head -1)
b=$(run_env long2b OMPI_COMM_WORLD_RANK=2 PMIX_NAMESPACE="${long}B" | head -1)
check "two long namespaces that differ at the end are two run ids ($a, $b)" \
  $([ -n "$a" ] && [ "${a%|*}" != "${b%|*}" ] && [[ "$a" == ompi-prterun-a-very-long* ]] && echo 1 || echo 0)

[ "$ran" = 1 ] || { echo "SKIP: nothing to run"; exit 77; }
exit $fail
