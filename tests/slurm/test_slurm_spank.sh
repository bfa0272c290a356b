#!/usr/bin/env bash
# tests/slurm/test_slurm_spank.sh: the SPANK plugin (slurm/memwatch_spank.c,
# docs/slurm.md) under Debian's Slurm. Brings up munged, slurmctld and slurmd
# on loopback, each with this test's own files (key, socket, slurm.conf,
# state and spool folders, free ports), plugstack.conf loading the built
# plugin, and checks:
#   A. srun --memwatch=threshold-ns=1 -n 4 of bwdemo (the threshold flags
#      intervals on any machine, so that the text lists the ranks): one step folder
#      ROOT/USER/job-J/step-0 with 4 raw files named
#      memwatch-HOST-RANK-PID.mwr (ranks 0..3), and the step's end merges
#      them into one report (merge.log says memwatch report exited 0,
#      memwatch.db holds one run slurm-J.0 with ranks 0..3, report.txt's
#      per-rank table lists 0..3, report.html exists); `memwatch report` of
#      the folder later gives the same 4 ranks;
#   B. a step without --memwatch (default off) records nothing;
#   C. --memwatch=bogus is refused by srun with the plugin's sentence;
#   D. users= that leaves this user out: srun --memwatch is refused;
#   E. default=on records a step that did not ask, --memwatch=off opts out;
#   F. sbatch --memwatch: the batch script (folder batch) and the srun step
#      inside it (step-0, its 2 tasks) are recorded, the step merged;
#   G. srun --memwatch=off inside a recorded batch script: not recorded.
# The daemons are this test's children and are ended on every exit (trap).
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
lib=$B/libmemwatch.so
app=$B/bwdemo
plugin=$B/memwatch_spank.so
for c in slurmctld slurmd srun sinfo scontrol munged mungekey munge unmunge; do
  command -v $c >/dev/null ||
    { echo "SKIP: $c is not installed (Debian: slurmctld slurmd slurm-client munge, .ci/install-deps)"; exit 77; }
done
[ -f "$plugin" ] || { echo "SKIP: memwatch_spank.so was not built (slurm/spank.h from libslurm-dev not found)"; exit 77; }
[ -f "$lib" ] && [ -x "$app" ] && [ -x "$mw" ] || { echo "SKIP: memwatch, libmemwatch.so or bwdemo not built"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: slurmd must run as root to start a job's tasks"; exit 77; }
[ -z "${MW_SAN_PRELOAD:-}" ] || { echo "SKIP: sanitized build: Slurm's daemons under the ASan preload are not what this tests"; exit 77; }
command -v sqlite3 >/dev/null && command -v python3 >/dev/null ||
  { echo "SKIP: sqlite3 or python3 is not installed"; exit 77; }

T=$(mktemp -d /tmp/mw_slurm.XXXXXX)
chmod 755 "$T" # munged wants its socket's folder reachable by all
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  rm -rf "$T"
}
trap cleanup EXIT
fail=0
check() { if [ "$2" = 1 ]; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; return 1; fi; }
logs() { for f in "$T"/log/*.log; do echo "== $f"; tail -n 30 "$f"; done; }
# until DEADLINE_S CMD...: runs CMD until it succeeds or the deadline passes
until_ok() {
  local end=$((SECONDS + $1)); shift
  while ! "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.2
  done
}

mkdir -m 700 "$T/munge" && mkdir -m 755 "$T/run" && mkdir -p "$T/state" "$T/spool" "$T/log" "$T/out"
mungekey --create --keyfile="$T/munge/munge.key" >/dev/null 2>&1 || { echo "FAILED: mungekey"; exit 1; }
munged -F --socket="$T/run/munge.sock" --key-file="$T/munge/munge.key" --pid-file="$T/run/munged.pid" \
  --log-file="$T/log/munged.log" --seed-file="$T/munge/munged.seed" >"$T/log/munged.out" 2>&1 &
pids+=($!)
munge_ok() { munge -n -S "$T/run/munge.sock" | unmunge -S "$T/run/munge.sock"; }
until_ok 30 munge_ok
check "munged answers on its own socket" $(( $? == 0 )) || { logs; exit 1; }

read -r pctl pd < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
cpus=$(nproc)
cat >"$T/slurm.conf" <<EOF
ClusterName=mwtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$pctl
SlurmdPort=$pd
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$T/run/munge.sock
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/run/slurmctld.pid
SlurmdPidFile=$T/run/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
ReturnToService=2
PlugStackConfig=$T/plugstack.conf
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=10 State=UP OverSubscribe=YES
EOF
plugstack() { echo "required $plugin root=$T/out lib=$lib memwatch=$mw merge_timeout=120 $*" >"$T/plugstack.conf"; }
plugstack
export SLURM_CONF=$T/slurm.conf
slurmctld -D -f "$T/slurm.conf" >"$T/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$T/slurm.conf" -N localhost >"$T/log/slurmd.out" 2>&1 &
pids+=($!)
until_ok 60 bash -c 'scontrol ping | grep -q UP'
check "slurmctld is up (scontrol ping)" $(( $? == 0 )) || { logs; exit 1; }
until_ok 60 bash -c '[ "$(sinfo -h -n localhost -o %t)" = idle ]'
check "the node is idle (sinfo)" $(( $? == 0 )) || { logs; sinfo; exit 1; }
srun --help 2>&1 | grep -q -- "--memwatch"
check "srun --help lists --memwatch" $(( $? == 0 ))

# ---- A: srun --memwatch -n 4
user=$(id -un)
t0=$SECONDS
timeout 120 srun --memwatch=threshold-ns=1 -n 4 --overcommit "$app" 0.3 1 16 1 >"$T/A.out" 2>"$T/A.err"
check "A: srun --memwatch=threshold-ns=1 -n 4 bwdemo" $(( $? == 0 )) || { cat "$T/A.err"; logs; }
jobs=("$T/out/$user"/job-*)
check "A: one job folder under root/$user (${jobs[*]##*/})" $(( ${#jobs[@]} == 1 ))
step=${jobs[0]}/step-0
job=${jobs[0]##*/job-}
until_ok 120 test -f "$step/merge.log"
check "A: the step's end merged the files (merge.log after $((SECONDS - t0)) s)" $(( $? == 0 )) || logs
cat "$step/merge.log" 2>/dev/null | sed 's/^/    /'
grep -q "exited with status 0" "$step/merge.log" 2>/dev/null
check "A: memwatch report exited 0" $(( $? == 0 ))
ranks=$(ls "$step" 2>/dev/null | sed -n "s/^memwatch-\(.*\)-\([0-9]*\)-[0-9]*\.mwr$/\1 \2/p" | sort -k2n)
check "A: 4 raw files memwatch-HOST-RANK-PID.mwr with ranks 0..3: $(tr '\n' ' ' <<<"$ranks")" \
  $([ "$(awk '{print $2}' <<<"$ranks" | tr '\n' ' ')" = "0 1 2 3 " ] && echo 1 || echo 0)
r=$(sqlite3 "$step/memwatch.db" "SELECT COUNT(*), GROUP_CONCAT(rank) FROM (SELECT rank FROM processes WHERE rank IS NOT NULL ORDER BY rank)" 2>&1)
check "A: the merged database has 4 ranks 0,1,2,3 ($r)" $([ "$r" = "4|0,1,2,3" ] && echo 1 || echo 0)
r=$(sqlite3 "$step/memwatch.db" "SELECT GROUP_CONCAT(DISTINCT value) FROM meta WHERE key = 'run_id'" 2>&1)
check "A: one run, slurm-$job.0 ($r)" $([ "$r" = "slurm-$job.0" ] && echo 1 || echo 0)
r=$(sqlite3 "$step/memwatch.db" "SELECT COUNT(*) FROM meta WHERE key = 'threshold_ns' AND CAST(value AS REAL) = 1" 2>&1)
check "A: --memwatch=threshold-ns=1 reached all 4 tasks (META threshold_ns=1 in $r)" $(( r == 4 ))
ranks=$(python3 "${MW_SOURCE_DIR:?}/tests/report/text_ranks.py" "$step/report.txt")
check "A: report.txt's per-rank table lists ranks '$ranks'" $([ "$ranks" = "0 1 2 3" ] && echo 1 || echo 0)
[ "$ranks" = "0 1 2 3" ] || sed -n '1,60p' "$step/report.txt"
[ -s "$step/report.html" ]; check "A: report.html written" $(( $? == 0 ))
"$mw" report "$step" --db "$T/again.db" --json >"$T/again.json" 2>"$T/again.err"
python3 - "$T/again.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
ranks = sorted(p["rank"] for p in m["job"]["processes"] if "rank" in p)
good = ranks == [0, 1, 2, 3]
print(("ok: " if good else "FAILED: ") + "A: memwatch report of the step folder later: ranks %s" % ranks)
sys.exit(not good)
PY
[ $? = 0 ] || fail=1
mode=$(stat -c %a "$step")
check "A: the step folder belongs to the job's user, mode 700 ($(stat -c %U "$step") $mode)" \
  $([ "$mode" = 700 ] && [ "$(stat -c %U "$step")" = "$user" ] && echo 1 || echo 0)

# ---- B: without --memwatch nothing is recorded (default off)
srun -n 1 "$app" 0.05 1 4 1 >/dev/null 2>"$T/B.err"
check "B: srun without --memwatch" $(( $? == 0 )) || cat "$T/B.err"
n=$(ls -d "$T/out/$user"/job-* | wc -l)
check "B: no job folder for it ($n folders)" $(( n == 1 ))

# ---- C: a bad option is refused before the job starts
srun --memwatch=bogus -n 1 true >/dev/null 2>"$T/C.err"
rc=$?
grep -q "memwatch: --memwatch: 'bogus' is not an option" "$T/C.err"
check "C: --memwatch=bogus refused (exit $rc): $(grep -m1 memwatch "$T/C.err")" $(( rc != 0 && $? == 0 ))

# ---- D: users= without this user
plugstack "users=mw-nobody-$$"
srun --memwatch -n 1 true >/dev/null 2>"$T/D.err"
rc=$?
grep -q "not available to uid $(id -u)" "$T/D.err"
check "D: users= leaves this user out: refused (exit $rc): $(grep -m1 memwatch "$T/D.err")" $(( rc != 0 && $? == 0 ))
n=$(ls -d "$T/out/$user"/job-* | wc -l)
check "D: nothing recorded ($n job folders)" $(( n == 1 ))

# ---- E: default=on
plugstack "default=on"
srun -n 2 --overcommit "$app" 0.05 1 4 1 >/dev/null 2>"$T/E.err"
check "E: default=on: srun -n 2 without --memwatch" $(( $? == 0 )) || cat "$T/E.err"
srun --memwatch=off -n 1 "$app" 0.05 1 4 1 >/dev/null 2>>"$T/E.err"
check "E: default=on: srun --memwatch=off" $(( $? == 0 )) || cat "$T/E.err"
dirs=$(ls -d "$T/out/$user"/job-*/step-0 | sort -V)
n=$(wc -l <<<"$dirs")
last=$(tail -1 <<<"$dirs")
check "E: the step that did not ask is recorded, the one that opted out is not ($n step folders)" $(( n == 2 ))
nf=$(ls "$last" | grep -c '\.mwr$')
check "E: its 2 tasks wrote 2 raw files ($nf)" $(( nf == 2 ))
until_ok 60 test -f "$last/merge.log"
check "E: merged at the step's end" $(( $? == 0 ))

# ---- F: sbatch --memwatch: the option reaches the batch step and its srun
plugstack
timeout 120 sbatch --memwatch --wait -n 2 --overcommit -o "$T/F.out" \
  --wrap "srun $app 0.05 1 4 1" >"$T/F.sub" 2>"$T/F.err"
check "F: sbatch --memwatch --wait --wrap 'srun bwdemo'" $(( $? == 0 )) || { cat "$T/F.err" "$T/F.out"; logs; }
fj=$(sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p' "$T/F.sub")
fs=$T/out/$user/job-$fj/step-0
nf=$(ls "$fs" 2>/dev/null | grep -c '^memwatch-.*\.mwr$')
check "F: the job's srun step recorded its 2 tasks into job-$fj/step-0 ($nf raw files)" $(( nf == 2 ))
until_ok 60 test -f "$fs/merge.log"
check "F: the step merged" $(( $? == 0 ))
[ -d "$T/out/$user/job-$fj/batch" ]
check "F: the batch script's step is recorded too (job-$fj/batch: $(ls "$T/out/$user/job-$fj/batch" 2>/dev/null | grep -c '\.mwr$') raw files)" $(( $? == 0 ))
# a step that opts out inside a recorded batch script is not recorded,
# though it inherits the script's LD_PRELOAD
timeout 120 sbatch --memwatch --wait -n 1 -o "$T/G.out" \
  --wrap "srun --memwatch=off $app 0.05 1 4 1" >"$T/G.sub" 2>"$T/G.err"
check "G: sbatch --memwatch --wrap 'srun --memwatch=off bwdemo'" $(( $? == 0 )) || cat "$T/G.err" "$T/G.out"
gj=$(sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p' "$T/G.sub")
nb=$(ls "$T/out/$user/job-$gj/batch" 2>/dev/null | grep -c '\.mwr$')
ng=$(ls "$T/out/$user/job-$gj" 2>/dev/null | grep -c '^step-')
np=$(grep -c "^phase" "$T/G.out")
"$mw" report "$T/out/$user/job-$gj/batch" --all-runs --db "$T/G.db" -q >/dev/null 2>&1
nbw=$(sqlite3 "$T/G.db" "SELECT COUNT(*) FROM processes WHERE exe LIKE '%/bwdemo'" 2>&1)
check "G: the script recorded ($nb raw files in batch/), the step that opted out not ($ng step folders, $nbw bwdemo processes in batch/), bwdemo ran ($np phases)" \
  $(( nb >= 1 && ng == 0 && nbw == 0 && np == 2 ))

echo "slurm test took $SECONDS s"
exit $fail
