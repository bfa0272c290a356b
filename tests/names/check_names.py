#!/usr/bin/env python3
"""tests/names/check_names.py DB JSON...: every function name in a report's JSON
(any "function" value, at any depth) checked against the symbol tables of its
module (docs/report.md, "Symbolization"):

- quality 'symtab' (and 'dwarf' rows that carry an ELF symbol): the symbol
  is in the module's symbol table (nm: .symtab, .dynsym, or the debug file's)
  at rel_addr - symbol_offset, and covers rel_addr: within its size, or, for
  a sizeless symbol, accepted (the CFI check is the symbolizer's);
- quality 'none': the name is "<module's file name>@0x<hex>" with the hex at
  or below the address, and no sized function symbol of the module covers
  the address (a name memwatch could have given but did not);
- no name is left mangled (_Z...).
Names that no pcs row has (the views' "[...]" entries) must be frames of an
inlined chain (frames table) or bracketed markers. Prints one line per
failure and "checked N names (M code addresses)"; exit status 1 on failure.
"""
import json
import os
import re
import sqlite3
import subprocess
import sys

from json_names import json_names

db = sqlite3.connect(sys.argv[1])
docs = [json.load(open(a)) for a in sys.argv[2:]]


symcache = {}


def symtab(path):
    """(start, size, name) of the defined code symbols of path, names without
    their version (@GLIBC_2.2.5)."""
    if path in symcache:
        return symcache[path]
    syms = []
    for args in (["nm", "-S", "--defined-only", path], ["nm", "-D", "-S", "--defined-only", path]):
        try:
            out = subprocess.run(args, capture_output=True, text=True).stdout
        except OSError:
            continue
        for line in out.splitlines():
            p = line.split()
            if len(p) == 4:
                start, size, typ, name = int(p[0], 16), int(p[1], 16), p[2], p[3]
            elif len(p) == 3:
                start, size, typ, name = int(p[0], 16), 0, p[1], p[2]
            else:
                continue
            if typ not in ("T", "t", "W", "w", "i"):
                continue
            syms.append((start, size, name.split("@")[0]))
    symcache[path] = syms
    return syms


fails = []
checked = 0
npcs = 0
for fn in sorted(set(json_names(docs))):
    if fn.startswith("_Z"):
        fails.append("mangled name in the report: %s" % fn)
    rows = db.execute(
        "SELECT p.rel_addr, p.symbol, p.symbol_offset, p.quality, m.path, m.debug_file"
        " FROM pcs p LEFT JOIN modules m ON m.id = p.module_id WHERE p.function = ?", (fn,)).fetchall()
    if not rows:
        inl = db.execute("SELECT COUNT(*) FROM frames WHERE function = ?", (fn,)).fetchone()[0]
        if not inl and not fn.startswith("["):
            fails.append("%s: no code address has this name" % fn)
        continue
    checked += 1
    for rel, sym, off, q, path, dbg in rows:
        npcs += 1
        if q in ("perf-map",) or path is None:
            continue
        syms = symtab(path) + (symtab(dbg) if dbg and os.path.exists(dbg) else [])
        if q == "none":
            m = re.fullmatch(r"(.+)@0x([0-9a-f]+)", fn)
            if not m or m.group(1) != os.path.basename(path) or int(m.group(2), 16) > rel:
                fails.append("%s at %s+0x%x: not module@0xSTART" % (fn, path, rel))
            cover = [n for s, z, n in syms if z and s <= rel < s + z]
            if cover:
                fails.append("%s at %s+0x%x: the symbol %s covers it" % (fn, path, rel, cover[0]))
            continue
        if sym is None:
            if q == "symtab":
                fails.append("%s at %s+0x%x: quality symtab without a symbol" % (fn, path, rel))
            continue
        start = rel - (off or 0)
        sym = sym.split("@")[0]
        hit = [(s, z) for s, z, n in syms if n == sym and s == start]
        if not hit:
            fails.append("%s at %s+0x%x: symbol %s not at 0x%x in the symbol table"
                         % (fn, path, rel, sym, start))
        elif all(z and not (s <= rel < s + z) for s, z in hit):
            fails.append("%s at %s+0x%x: symbol %s (0x%x, size %d) does not cover it"
                         % (fn, path, rel, sym, hit[0][0], hit[0][1]))
print("checked %d names (%d code addresses)" % (checked, npcs))
for f in fails[:30]:
    print("FAILED:", f)
sys.exit(1 if fails else 0)
