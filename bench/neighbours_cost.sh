#!/usr/bin/env bash
# bench/neighbours_cost.sh: what memwatch record's load sampler costs
# (cli/neighbours.c; docs/saturation.md, "Whose load is it"). Records
# `sleep SECONDS` (default 10) with memwatch record, ROUNDS times (default 3),
# and prints for each run the sampler thread's CPU time (META sampler_cpu_ns
# of the load file: CLOCK_THREAD_CPUTIME_ID at its end), its scans, the
# processes each scan read, the CPU time per scan and per process read, and
# the share of one CPU. With PROCS=N, N idle processes (sleep) run beside it,
# to show how the cost grows with the machine's processes.
# usage: bench/neighbours_cost.sh BIN_DIR [SECONDS]
#   BIN_DIR holds memwatch and libmemwatch.so (a build directory).
set -uo pipefail
bin=$(cd "${1:?usage: bench/neighbours_cost.sh BIN_DIR [SECONDS]}" && pwd)
secs=${2:-10}
rounds=${ROUNDS:-3}
procs=${PROCS:-0}
out=$(mktemp -d /tmp/mw-nbcost-XXXXXX)
trap 'kill $idle 2>/dev/null; rm -rf "$out"' EXIT
idle=""
for ((i = 0; i < procs; i++)); do
  sleep $((secs * rounds + 60)) &
  idle="$idle $!"
done
echo "machine: $(nproc) CPUs, $(ls /proc | grep -c '^[0-9]') processes, load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= rounds; r++)); do
  "$bin/memwatch" record -q -o "$out/r$r" -- sleep "$secs" || exit 1
  python3 - "$out"/r$r/memwatch-*-load-*.mwl "$secs" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
off, meta, procs = struct.unpack_from('<I', b, 12)[0], {}, []
while off + 8 <= len(b):
    t, sz = struct.unpack_from('<II', b, off)
    if sz < 8 or sz % 8 or off + sz > len(b):
        break
    p = b[off + 8:off + sz]
    if t == 1:
        for l in p.rstrip(b'\0').decode().splitlines():
            k, _, v = l.partition('=')
            meta[k] = v
    elif t == 16:
        procs.append(struct.unpack_from('<I', p, 40)[0])
    off += sz
cpu, scans, secs = int(meta['sampler_cpu_ns']) / 1e9, int(meta['scans']), float(sys.argv[2])
n = sum(procs) / len(procs) if procs else 0
print("sampler: %.1f ms CPU over %.0f s: %.3f %% of one CPU; %d scans of %.0f processes, "
      "%.0f us per scan, %.2f us per process read" %
      (cpu * 1e3, secs, 100 * cpu / secs, scans, n, 1e6 * cpu / scans, 1e6 * cpu / scans / max(n, 1)))
PY
done
