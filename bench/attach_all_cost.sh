#!/usr/bin/env bash
# bench/attach_all_cost.sh: what `memwatch record --all` costs per CPU (one
# cpu-clock event and ring per online CPU) against per process (one event
# and ring per thread of every process, /proc rescans every interval: what
# --all does where CPU-wide events are refused), side by side in one run
# (cli/attach.c, docs/attach.md, "--all").
#
# Beside whatever else runs on the machine it starts a process with
# IDLE_THREADS idle threads (python3, each blocked on an event), a streaming
# program and a computing one (tests/dataaddr's mwd_data triad and
# compute), then records the whole machine for SECONDS, ROUNDS times per
# mode, the order alternated each round:
#   per-CPU      memwatch record --all (as root)
#   per-process  the same under setpriv --bounding-set=-perfmon,-sys_admin:
#                root without CAP_PERFMON and CAP_SYS_ADMIN, so that the
#                kernel refuses CPU-wide events (kernel.perf_event_paranoid
#                > 0) and --all attaches to every process (CAP_SYS_PTRACE
#                is kept), which is checked in its stderr
# For each run: the most perf events and ring mappings memwatch held at
# once and their bytes (polled every 0.2 s in /proc/PID/fd and /proc/PID/maps),
# the CPU time (user + system) of memwatch record itself (wait4's rusage),
# the files and bytes it wrote, the samples of the streaming program (in its
# file, counted by memwatch report) per second of its CPU time while
# recorded (the file's CPU record, in clock ticks; 250/s is the rate asked
# for), and the samples of a program of 1 s of CPU time (mwd_data compute
# 1000) started once the recording runs (250 expected; none where nothing
# follows it). Prints medians and the ratios.
# Needs root, setpriv, python3, sqlite3.
# Usage: bench/attach_all_cost.sh BUILD_DIR [SECONDS [ROUNDS [IDLE_THREADS]]]
set -euo pipefail
B=${1:?usage: attach_all_cost.sh BUILD_DIR [SECONDS [ROUNDS [IDLE_THREADS]]]}
S=${2:-10}
R=${3:-3}
NT=${4:-200}
[ "$(id -u)" = 0 ] || { echo "attach_all_cost: needs root (per-CPU events beside per-process ones)"; exit 1; }
for c in setpriv python3 sqlite3; do
    command -v $c >/dev/null || { echo "attach_all_cost: $c is not installed"; exit 1; }
done
D=$(find "$B" -name mwd_data -type f -perm -u+x | head -1)
[ -x "$B/memwatch" ] && [ -n "$D" ] || { echo "attach_all_cost: memwatch or mwd_data is not built in $B"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$B/memwatch" "$D" "$S" "$R" "$NT" "$tmp" <<'PY'
import os, statistics, subprocess, sys, time
mw, data, secs, rounds, nthr, tmp = sys.argv[1:7]
secs, rounds, nthr = float(secs), int(rounds), int(nthr)
dn = subprocess.DEVNULL
idle = subprocess.Popen([sys.executable, "-c",
    "import threading, sys\n"
    "e = threading.Event()\n"
    f"ts = [threading.Thread(target=e.wait, daemon=True) for _ in range({nthr})]\n"
    "[t.start() for t in ts]\n"
    "print('ready', flush=True)\n"
    "sys.stdin.read()\n"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
assert idle.stdout.readline().strip() == b"ready"
stream = subprocess.Popen([data, "triad", "100000000"], stdout=dn)
comp = subprocess.Popen([data, "compute", "100000000"], stdout=dn)

def ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[11])

while ticks(stream.pid) < 20 or ticks(comp.pid) < 20:  # both have run (CPU ticks)
    time.sleep(0.05)

def held(pid):
    """perf events (descriptors) and ring mappings (count, bytes) of pid now"""
    ev = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                ev += os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:[perf_event]"
            except OSError:
                pass
        rings = rb = 0
        with open(f"/proc/{pid}/maps") as f:
            for l in f:
                if "perf_event" in l:
                    a, b = l.split()[0].split("-")
                    rings += 1
                    rb += int(b, 16) - int(a, 16)
    except OSError:
        return 0, 0, 0
    return ev, rings, rb

def run(mode, r):
    out = os.path.join(tmp, f"{mode}-{r}")
    cmd = [mw, "record", "-o", out, "--all", "--duration", f"{secs}s"]
    if mode == "per-process":
        cmd = ["setpriv", "--bounding-set=-perfmon,-sys_admin"] + cmd
    err = open(os.path.join(tmp, f"{mode}-{r}.err"), "w+")
    p = subprocess.Popen(cmd, stdout=dn, stderr=err)
    peak = (0, 0, 0)
    st = None
    late = None
    while st is None:
        time.sleep(0.2)
        h = held(p.pid)
        peak = tuple(max(a, b) for a, b in zip(peak, h))
        if late is None:
            err.seek(0)
            e = err.read()
            if "sampling every process per CPU" in e or "memwatch: attached to pid" in e:
                # once recording runs: a program of 1 s of CPU time
                late = subprocess.Popen([data, "compute", "1000"], stdout=dn)
        elif late.poll() is not None and late.returncode != 0:
            sys.exit(f"attach_all_cost: the late program failed ({late.returncode})")
        w = os.wait4(p.pid, os.WNOHANG)
        if w[0] == p.pid:
            st = w
    if late is None or late.poll() is None:
        sys.exit(f"attach_all_cost: {mode}: the late program did not end within the recording; "
                 "give more SECONDS")
    p.returncode = 0
    err.seek(0)
    e = err.read()
    fell = "attaching to each of" in e
    if st[1] != 0 or fell != (mode == "per-process"):
        sys.exit(f"attach_all_cost: {mode} did not run as such (status {st[1]}): {e}")
    files = [f for f in os.listdir(out) if f.endswith(".mwr")]
    size = sum(os.path.getsize(os.path.join(out, f)) for f in files)
    db = out + ".db"
    subprocess.run([mw, "report", "-q", "--db", db, out], stdout=dn, stderr=dn)
    # its samples, and its CPU time while recorded (the file's CPU record)
    q = subprocess.run(["sqlite3", db, "select (select count(*) from samples s where "
                        "s.process_id = p.id), (user_ns + system_ns) / 1e9 from processes p "
                        f"where p.pid = {stream.pid}"],
                       capture_output=True, text=True).stdout.strip()
    q, scpu = (q.split("|") + ["0", "0"])[:2] if q else ("0", "0")
    scpu = float(scpu or 0)
    lq = subprocess.run(["sqlite3", db, "select count(*) from samples s join processes p on "
                         f"p.id = s.process_id where p.pid = {late.pid}"],
                        capture_output=True, text=True).stdout.strip()
    cpu = st[2].ru_utime + st[2].ru_stime
    print(f"round {r + 1} {mode:11s} events {peak[0]:5d} rings {peak[1]:5d} "
          f"({peak[2] / 1024:8.0f} KiB) cpu {cpu:6.3f} s files {len(files):5d} "
          f"{size / 1e6:7.1f} MB streaming samples {q} in {scpu:.2f} s of its CPU time, "
          f"late program {lq}", file=sys.stderr)
    return dict(events=peak[0], rings=peak[1], kib=peak[2] / 1024, cpu=cpu, files=len(files),
                mb=size / 1e6, samples=int(q or 0), rate=int(q or 0) / scpu if scpu else 0,
                late=int(lq or 0))

def procs():
    n = t = 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                t += len(os.listdir(f"/proc/{d}/task"))
                n += 1
            except OSError:
                pass
    return n, t

try:
    n0, t0 = procs()
    modes = ["per-CPU", "per-process"]
    res = {m: [] for m in modes}
    for r in range(rounds):
        for m in (modes if r % 2 == 0 else modes[::-1]):
            res[m].append(run(m, r))
    n1, t1 = procs()
finally:
    for p in (stream, comp):
        p.kill()
    idle.stdin.close()
    idle.wait()
ncpu = len(os.sched_getaffinity(0))
print(f"machine: {os.cpu_count()} online CPUs; {n0}..{n1} processes, {t0}..{t1} threads "
      f"(of them {nthr} idle threads in one process, a streaming and a computing program); "
      f"--all --duration {secs:g}s, {rounds} rounds, medians")
keys = [("events", "perf events", "{:.0f}"), ("rings", "rings", "{:.0f}"),
        ("kib", "ring KiB", "{:.0f}"), ("cpu", "memwatch CPU s", "{:.3f}"),
        ("files", "files", "{:.0f}"), ("mb", "MB written", "{:.1f}"),
        ("samples", "streaming samples", "{:.0f}"),
        ("rate", "  per its CPU s", "{:.0f}"),
        ("late", "late program samples", "{:.0f}")]
med = {m: {k: statistics.median(x[k] for x in res[m]) for k, _, _ in keys} for m in modes}
print(f"{'':20s} {'per-CPU':>12s} {'per-process':>12s} {'per-process/per-CPU':>20s}")
for k, name, fmt in keys:
    a, b = med["per-CPU"][k], med["per-process"][k]
    ratio = f"{b / a:.2f}" if a else "-"
    print(f"{name:20s} {fmt.format(a):>12s} {fmt.format(b):>12s} {ratio:>20s}")
print(f"memwatch CPU per second recorded: per-CPU {med['per-CPU']['cpu'] / secs * 100:.2f} %, "
      f"per-process {med['per-process']['cpu'] / secs * 100:.2f} % of one CPU")
PY
