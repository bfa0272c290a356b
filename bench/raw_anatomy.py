#!/usr/bin/env python3
"""bench/raw_anatomy.py DIR...: what memwatch raw files (.mwr) are made of.

Prints, over every *.mwr under the DIRs: bytes by record type; for the
cpu-clock samples with DWARF stacks (attr 1, PERF_SAMPLE_STACK_USER) the
bytes of the stack copies, how many of those bytes the kernel could copy
(dyn_size) and their distribution; for allocation records the share of
distinct call chains (frame-pointer frames) and of distinct DWARF copies
(registers + stack bytes, per process), i.e. what a stack table can save.
Used by bench/raw_rate (docs/raw-format.md, docs/overhead.md).
"""
import collections
import glob
import hashlib
import os
import struct
import sys

NAMES = {1: 'META', 2: 'PERF_ATTR', 3: 'PERF_DATA', 4: 'INTERVAL', 5: 'THREAD', 6: 'ALLOC',
         7: 'FREE', 8: 'MODULE', 10: 'LOG', 12: 'REGION_NAME', 13: 'CPU', 14: 'REGION_PACKED',
         15: 'STACK', 0x7fff: 'TRAILER'}
PERF_RECORD_SAMPLE = 9
# perf_event sample_type bits
S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU, S_PERIOD, S_STREAM_ID, S_RAW = (
    1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
S_BRANCH, S_REGS_USER, S_STACK_USER = 2048, 4096, 8192


def records(b):
    if b[:8] != b'MEMWATCH':
        return
    off = struct.unpack_from('<I', b, 12)[0]
    while off + 8 <= len(b):
        typ, size = struct.unpack_from('<II', b, off)
        if size < 8 or size % 8 or off + size > len(b):
            break
        yield typ, off + 8, size
        off += size


def main():
    files = []
    for d in sys.argv[1:]:
        files += glob.glob(os.path.join(d, '**', '*.mwr'), recursive=True)
    by_type = collections.Counter()
    total = 0
    nsamp = stack_bytes = stack_dyn = 0
    dyn_hist = collections.Counter()
    nalloc = alloc_bytes = 0
    fp_chains = set()
    fp_allocs = 0
    dw_allocs = 0
    dw_copies = set()
    dw_bytes = 0
    stack_recs = 0
    dw_sigs = set()
    for path in files:
        b = open(path, 'rb').read()
        total += len(b)
        attrs = {}
        text = []
        for typ, p, size in records(b):
            by_type[NAMES.get(typ, str(typ))] += size
            pl = size - 8
            if typ == 2:
                aid, asz = struct.unpack_from('<II', b, p)
                attr = b[p + 40:p + 40 + asz]
                st, = struct.unpack_from('<Q', attr, 24)
                regs, = struct.unpack_from('<Q', attr, 80) if asz >= 88 else (0,)
                attrs[aid] = (st, regs)
            elif typ == 3:
                aid, = struct.unpack_from('<I', b, p)
                st, regs = attrs.get(aid, (0, 0))
                if not st & S_STACK_USER:
                    continue
                o, end = p + 16, p + pl
                while o + 8 <= end:
                    rt, misc, rsz = struct.unpack_from('<IHH', b, o)
                    if rsz < 8:
                        break
                    if rt == PERF_RECORD_SAMPLE:
                        q = o + 8
                        for bit in (S_IP, S_TID, S_TIME, S_ADDR, S_ID, S_STREAM_ID, S_CPU, S_PERIOD):
                            if st & bit:
                                q += 8
                        if st & S_CALLCHAIN:
                            nr, = struct.unpack_from('<Q', b, q)
                            q += 8 + 8 * nr
                        if st & S_REGS_USER:
                            abi, = struct.unpack_from('<Q', b, q)
                            q += 8 + (8 * bin(regs).count('1') if abi else 0)
                        sz, = struct.unpack_from('<Q', b, q)
                        dyn = struct.unpack_from('<Q', b, q + 8 + sz)[0] if sz else 0
                        nsamp += 1
                        stack_bytes += sz
                        stack_dyn += dyn
                        dyn_hist[min(dyn // 1024, 8)] += 1
                    o += rsz
            elif typ == 6:
                nalloc += 1
                alloc_bytes += size
                t, a, s, tid, kind, nfr = struct.unpack_from('<QQQIHH', b, p)
                if kind & 0x8000:
                    dw_allocs += 1
                    dw_bytes += size
                    q = p + 32 + 8 * nfr
                    mask, ssz = struct.unpack_from('<QI', b, q)
                    nr = bin(mask).count('1')
                    regs = struct.unpack_from('<%dQ' % nr, b, q + 16)
                    dw_copies.add((path, hashlib.blake2b(b[q:p + pl]).digest()))
                    # what an unwind can depend on: IP, SP, BP and the words of
                    # the copy that point into the copy or into a module
                    sp = regs[2] if nr >= 3 else 0
                    words = struct.unpack_from('<%dQ' % (ssz // 8), b, q + 16 + 8 * nr)
                    keep = tuple((i, w) for i, w in enumerate(words)
                                 if sp <= w < sp + ssz or any(lo <= w < hi for lo, hi in text))
                    dw_sigs.add((path, regs[1] if nr > 1 else 0, sp, regs[3] if nr > 3 else 0, keep))
                elif kind & 0x4000:
                    fp_allocs += 1
                else:
                    fp_allocs += 1
                    fp_chains.add((path, b[p + 32:p + 32 + 8 * nfr]))
            elif typ == 15:
                stack_recs += 1
            elif typ == 8:
                _, base, lo, hi = struct.unpack_from('<QQQQ', b, p)
                text.append((lo, hi))
    print(f'files {len(files)}, bytes {total}')
    for k, v in by_type.most_common():
        print(f'  {k:14s} {v:12d} bytes  {100.0 * v / max(total, 1):5.1f} %')
    if nsamp:
        print(f'cpu-clock samples with stack copies: {nsamp}, copy bytes {stack_bytes} '
              f'({100.0 * stack_bytes / max(total, 1):.1f} % of all), of them copied by the kernel '
              f'(dyn_size) {stack_dyn} ({100.0 * stack_dyn / max(stack_bytes, 1):.1f} %)')
        print('  dyn_size KiB histogram: ' + ', '.join(
            f'{k}{"+" if k == 8 else ""}: {v}' for k, v in sorted(dyn_hist.items())))
    print(f'allocation records: {nalloc} ({alloc_bytes} bytes); frame-pointer {fp_allocs} with '
          f'{len(fp_chains)} distinct chains written in full, {stack_recs} STACK records; '
          f'DWARF copies {dw_allocs} ({dw_bytes} bytes), {len(dw_copies)} distinct, '
          f'{len(dw_sigs)} distinct by the words an unwind can use (BP SP IP, stack and code addresses)')


if __name__ == '__main__':
    main()
