#!/usr/bin/env bash
# tests/cli/test_record_unprofiled.sh: programs libmemwatch.so cannot be
# loaded into run unprofiled with one line that says why, their own output
# unchanged, and leave no run directory behind (docs/config.md):
#  - a 32-bit program (gcc -m32 where gcc-multilib is installed, and a
#    hand-made static ELF32 that writes a line and exits 3 in any case): no
#    "wrong ELF class" line from a 32-bit loader on its stderr;
#  - a static 64-bit program (mwp_static, where a static libc exists) is
#    no longer unprofiled: record says why LD_PRELOAD cannot reach it and
#    samples it from outside (docs/attach.md; tests/attach test it further).
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
[ -x "$mw" ] || { echo "SKIP: memwatch not built"; exit 77; }
tmp=$(mktemp -d /tmp/mw_unprofiled.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0
bad() { echo "FAILED: $*"; fail=1; }
# i386: write(2, "hi from 32\n", 11); exit(3)
python3 - <<'PY'
import struct
base, off, msg = 0x08048000, 52 + 32, b"hi from 32\n"
code_len = 34
addr = base + off + code_len
code = (b"\xb8" + struct.pack("<I", 4) + b"\xbb" + struct.pack("<I", 2) + b"\xb9" + struct.pack("<I", addr) +
        b"\xba" + struct.pack("<I", len(msg)) + b"\xcd\x80" + b"\xb8" + struct.pack("<I", 1) +
        b"\xbb" + struct.pack("<I", 3) + b"\xcd\x80")
assert len(code) == code_len
total = off + len(code) + len(msg)
eh = b"\x7fELF" + bytes([1, 1, 1, 0]) + b"\0" * 8 + struct.pack("<HHIIIIIHHHHHH", 2, 3, 1, base + off, 52, 0, 0, 52, 32, 1, 0, 0, 0)
ph = struct.pack("<IIIIIIII", 1, 0, base, base, total, total, 5, 0x1000)
open("elf32", "wb").write(eh + ph + code + msg)
PY
chmod +x elf32
progs="./elf32"
printf '#include <stdio.h>\nint main(void) { fputs("hi from 32\\n", stderr); return 3; }\n' >m32.c
if gcc -m32 -o m32 m32.c 2>/dev/null; then progs="$progs ./m32"; else echo "note: gcc -m32 cannot link here (no gcc-multilib): the dynamic 32-bit case is not run"; fi
for p in $progs; do
  "$p" >/dev/null 2>&1
  if [ $? != 3 ]; then echo "note: $p does not run here (no 32-bit support in the kernel)"; continue; fi
  "$mw" record -o "$tmp/run-${p#./}" -- "$p" 2>err >out; rc=$?
  [ $rc = 3 ] || bad "$p: exit status $rc, expected the program's 3"
  grep -q "is a 32-bit program; libmemwatch.so is 64-bit only" err && echo "ok: $p: record says why" || bad "$p: no 32-bit line: $(cat err)"
  grep -q "wrong ELF class" err && bad "$p: the loader's error reached the program's stderr"
  [ "$(grep -v "memwatch record:" err)" = "hi from 32" ] && echo "ok: $p: its stderr unchanged" || bad "$p: stderr '$(cat err)'"
  [ -e "$tmp/run-${p#./}" ] && bad "$p: an empty run directory was left: $(ls -A "$tmp/run-${p#./}")"
done
# children of a recorded 64-bit program that exec a 32-bit one (execve from
# the shell, execvp's PATH search from env, and the last command exec'ed):
# libmemwatch.so is left out of their LD_PRELOAD (preload/exec.c), so no
# loader error reaches their stderr
if [ -x m32 ] && ./m32 2>/dev/null; [ $? = 3 ]; then
  "$mw" record -o "$tmp/run-kids" -- /bin/sh -c "./m32; PATH=$tmp:\$PATH env m32; exec ./m32" 2>err >out; rc=$?
  [ $rc = 3 ] || bad "children: exit status $rc, expected 3"
  grep -q "wrong ELF class\|ld.so" err && bad "children: the 32-bit loader's error reached stderr: $(grep "ld.so" err)"
  [ "$(grep -c "^hi from 32$" err)" = 3 ] && echo "ok: children: three 32-bit children, their stderr unchanged" ||
    bad "children: stderr '$(cat err)'"
fi
if [ -x "$B/mwp_static" ]; then
  "$mw" record -o "$tmp/run-static" -- "$B/mwp_static" _exit 2>err; rc=$?
  grep -q "statically linked" err && echo "ok: static: record says why" || bad "static: $(cat err)"
  grep -q "sampling it from outside" err && echo "ok: static: sampled from outside" || bad "static: $(cat err)"
  ls "$tmp/run-static"/*.mwr >/dev/null 2>&1 && echo "ok: static: a raw file" || bad "static: no raw file in $tmp/run-static"
fi
mkdir keep
"$mw" record -o "$tmp/keep" -- ./elf32 2>/dev/null
[ -d keep ] && echo "ok: a directory that existed before stays" || bad "record removed a directory it did not make"
exit $fail
