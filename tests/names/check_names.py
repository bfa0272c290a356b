#!/usr/bin/env python3
"""tests/names/check_names.py [--symbols PATH=REF]... DB JSON...: every
function name of a report checked against the symbol tables of its module
(docs/report.md, "Symbolization"): every "function" value of the JSON
documents, at any depth, and every code address of the database (pcs):

- quality 'symtab' (and 'dwarf' rows that carry an ELF symbol): the symbol
  is in the module's symbol table (nm: .symtab, .dynsym, or the debug file's)
  at rel_addr - symbol_offset, and covers rel_addr: within its size, or, for
  a sizeless symbol, accepted (the CFI check is the symbolizer's);
- quality 'none': the name is "<module's file name>@0x<hex>" with the hex at
  or below the address, and no sized function symbol of the module covers
  the address (a name memwatch could have given but did not);
- no name is left mangled (_Z...).
--symbols PATH=REF reads the symbols of module PATH from REF, a build of the
same code with its symbol table (a Go program stripped with -ldflags='-s -w'
is named from its .gopclntab; REF is the unstripped build, whose addresses
are the same). Go's assembly functions' symbols end in .abi0, which Go's
names leave off. A module whose file is gone (the vDSO) is not checked.
Names that no pcs row has (the views' "[...]" entries) must be frames of an
inlined chain (frames table) or bracketed markers. Prints one line per
failure and "checked N names (M code addresses), K database addresses";
exit status 1 on failure.
"""
import json
import os
import re
import sqlite3
import subprocess
import sys

from json_names import json_names

args = sys.argv[1:]
refs = {}
while args and args[0] == "--symbols":
    path, ref = args[1].split("=", 1)
    refs[path] = ref
    args = args[2:]
db = sqlite3.connect(args[0])
docs = [json.load(open(a)) for a in args[1:]]


symcache = {}


def plain(name):
    """a symbol's name without its version (@GLIBC_2.2.5) or Go's ABI
    suffix (.abi0)"""
    name = name.split("@")[0]
    for abi in (".abi0", ".abiinternal"):
        if name.endswith(abi):
            name = name[: -len(abi)]
    return name


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
            syms.append((start, size, plain(name)))
    symcache[path] = syms
    return syms


fails = []
checked = 0
npcs = 0
skipped = set()


def check_pc(fn, rel, sym, off, q, path, dbg):
    """the failures of one code address named fn"""
    if q in ("perf-map",) or path is None:
        return
    if not os.path.exists(refs.get(path, path)):
        skipped.add(path)
        return
    syms = symtab(refs.get(path, path)) + (symtab(dbg) if dbg and os.path.exists(dbg) else [])
    if q == "none":
        m = re.fullmatch(r"(.+)@0x([0-9a-f]+)", fn)
        if not m or m.group(1) != os.path.basename(path) or int(m.group(2), 16) > rel:
            fails.append("%s at %s+0x%x: not module@0xSTART" % (fn, path, rel))
        cover = [n for s, z, n in syms if z and s <= rel < s + z]
        if cover:
            fails.append("%s at %s+0x%x: the symbol %s covers it" % (fn, path, rel, cover[0]))
        return
    if sym is None:
        if q == "symtab":
            fails.append("%s at %s+0x%x: quality symtab without a symbol" % (fn, path, rel))
        return
    start = rel - (off or 0)
    sym = plain(sym)
    hit = [(s, z) for s, z, n in syms if n == sym and s == start]
    if not hit:
        fails.append("%s at %s+0x%x: symbol %s not at 0x%x in the symbol table"
                     % (fn, path, rel, sym, start))
    elif all(z and not (s <= rel < s + z) for s, z in hit):
        fails.append("%s at %s+0x%x: symbol %s (0x%x, size %d) does not cover it"
                     % (fn, path, rel, sym, hit[0][0], hit[0][1]))


PCS = ("SELECT p.rel_addr, p.symbol, p.symbol_offset, p.quality, m.path, m.debug_file, p.function"
       " FROM pcs p LEFT JOIN modules m ON m.id = p.module_id")
for fn in sorted(set(json_names(docs))):
    if fn.startswith("_Z"):
        fails.append("mangled name in the report: %s" % fn)
    rows = db.execute(PCS + " WHERE p.function = ?", (fn,)).fetchall()
    if not rows:
        inl = db.execute("SELECT COUNT(*) FROM frames WHERE function = ?", (fn,)).fetchone()[0]
        if not inl and not fn.startswith("["):
            fails.append("%s: no code address has this name" % fn)
        continue
    checked += 1
    for rel, sym, off, q, path, dbg, _ in rows:
        npcs += 1
        check_pc(fn, rel, sym, off, q, path, dbg)
# every code address of the database, named in the JSON or not (callers,
# allocation sites, frames of stacks the summary does not list)
ndb = 0
for rel, sym, off, q, path, dbg, fn in db.execute(PCS):
    ndb += 1
    if fn is None:
        continue
    if fn.startswith("_Z"):
        fails.append("mangled name in the database: %s" % fn)
    check_pc(fn, rel, sym, off, q, path, dbg)
for fr in db.execute("SELECT DISTINCT function FROM frames WHERE function LIKE '\\_Z%' ESCAPE '\\'"):
    fails.append("mangled inlined frame in the database: %s" % fr[0])
print("checked %d names (%d code addresses), %d database addresses%s"
      % (checked, npcs, ndb, "; not checked (file gone): " + ", ".join(sorted(skipped)) if skipped else ""))
if ndb == 0:
    fails.append("the database holds no code address")
fails = list(dict.fromkeys(fails))  # an address named in the JSON is checked twice
for f in fails[:30]:
    print("FAILED:", f)
sys.exit(1 if fails else 0)
