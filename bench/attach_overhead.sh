#!/usr/bin/env bash
# bench/attach_overhead.sh: what the external sampler (memwatch record -p,
# --external, static programs: cli/attach.c, docs/attach.md) costs against
# libmemwatch.so (LD_PRELOAD) on the same long program: tests/attach's
# mwa_triad_dyn (a triad phase, then a compute phase; REPS passes, ITERS
# steps, THREADS threads). Each configuration runs once per round, the
# order rotated every round; per run the CPU time (user + system) of the
# whole process tree (the program and memwatch record with everything it
# runs, from wait4's rusage of the tree) and the wall time. Prints the
# medians and the ratios to the program alone:
#   alone     the program without memwatch
#   preload   memwatch record -- prog         (libmemwatch.so in the program)
#   external  memwatch record --external -- prog   (sampled from outside)
#   attach    prog started alone, memwatch record -p PID attached at once
# Usage: bench/attach_overhead.sh BUILD_DIR [ROUNDS [REPS [ITERS [THREADS]]]]
set -euo pipefail
B=${1:?usage: attach_overhead.sh BUILD_DIR [ROUNDS [REPS [ITERS [THREADS]]]]}
R=${2:-5}
REPS=${3:-150}
ITERS=${4:-1500000000}
THR=${5:-1}
prog=$(find "$B" -name mwa_triad_dyn -type f -perm -u+x | head -1)
[ -n "$prog" ] || { echo "attach_overhead: mwa_triad_dyn is not built in $B"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$B/memwatch" "$prog" "$R" "$tmp" "$REPS" "$ITERS" "$THR" <<'PY'
import os, resource, statistics, subprocess, sys, time
mw, prog, rounds, tmp = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
args = [prog] + sys.argv[5:8]
dn = subprocess.DEVNULL

def tree(fn):
    """CPU seconds (user + system) of the processes fn starts and waits for, and wall s"""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    fn()
    t1 = time.monotonic()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), t1 - t0

def out(k):
    d = os.path.join(tmp, k)
    subprocess.run(["rm", "-rf", d])
    return d

def alone():
    subprocess.run(args, stdout=dn, check=True)

def preload():
    subprocess.run([mw, "record", "-q", "-o", out("p"), "--"] + args, stdout=dn, check=True)

def external():
    subprocess.run([mw, "record", "-q", "-o", out("e"), "--external", "--"] + args, stdout=dn,
                   check=True)

def attach():
    p = subprocess.Popen(args, stdout=dn)
    m = subprocess.Popen([mw, "record", "-q", "-o", out("a"), "-p", str(p.pid)], stdout=dn)
    p.wait()
    m.wait()

cfgs = [("alone", alone), ("preload", preload), ("external", external), ("attach", attach)]
res = {k: [] for k, _ in cfgs}
for r in range(rounds):
    order = cfgs[r % len(cfgs):] + cfgs[:r % len(cfgs)]
    for k, fn in order:
        res[k].append(tree(fn))
        print(f"round {r + 1} {k:9s} cpu {res[k][-1][0]:7.3f} s  wall {res[k][-1][1]:7.3f} s",
              file=sys.stderr)
med = {k: (statistics.median(c for c, _ in v), statistics.median(w for _, w in v))
       for k, v in res.items()}
print(f"program: {' '.join(args)}; {rounds} rounds, medians")
print(f"{'config':10s} {'cpu s':>8s} {'wall s':>8s} {'cpu/alone':>10s} {'wall/alone':>11s}")
for k, _ in cfgs:
    c, w = med[k]
    print(f"{k:10s} {c:8.3f} {w:8.3f} {c / med['alone'][0]:10.3f} {w / med['alone'][1]:11.3f}")
print(f"external / preload: cpu {med['external'][0] / med['preload'][0]:.3f}, "
      f"wall {med['external'][1] / med['preload'][1]:.3f}")
print(f"attach / preload:   cpu {med['attach'][0] / med['preload'][0]:.3f}, "
      f"wall {med['attach'][1] / med['preload'][1]:.3f}")
PY
