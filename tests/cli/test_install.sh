#!/usr/bin/env bash
# tests/cli/test_install.sh: `cmake --install` into a staging DESTDIR puts
# the binaries, libmemwatch.so, the headers, the man pages (memwatch(1) and
# one per command) and the bash and zsh completions where Debian expects
# them; the staged memwatch records a program (it finds the staged
# libmemwatch.so relative to itself), `man` shows its page, and the bash
# completion completes commands and options.
set -u
B=${MW_BUILD_DIR:?}
command -v cmake >/dev/null || { echo "SKIP: cmake not found"; exit 77; }
tmp=$(mktemp -d /tmp/mw_install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAILED: $*"; fail=1; }
DESTDIR=$tmp/stage cmake --install "$B" --prefix /usr >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; echo "FAILED: cmake --install"; exit 1; }
S=$tmp/stage/usr
mw=$S/bin/memwatch
[ -x "$mw" ] || bad "no $mw"
lib=$(find "$S/lib" -name libmemwatch.so | head -1)
[ -n "$lib" ] && echo "ok: libmemwatch.so at ${lib#$tmp/stage}" || bad "no libmemwatch.so under $S/lib"
[ -f "$S/include/memwatch/report.h" ] && [ -f "$S/include/memwatch/mwr.h" ] || bad "headers missing"
for p in memwatch memwatch-probe memwatch-calibrate memwatch-record memwatch-report memwatch-prefetch; do
  [ -f "$S/share/man/man1/$p.1" ] || bad "no man page $p.1"
done
[ -f "$S/share/bash-completion/completions/memwatch" ] || bad "no bash completion"
[ -f "$S/share/zsh/vendor-completions/_memwatch" ] || bad "no zsh completion"

"$mw" --version | grep -q "^memwatch [0-9]" && echo "ok: staged memwatch runs" || bad "memwatch --version"
(cd "$tmp" && "$mw" record -q -o run -- /bin/true) || bad "staged record"
ls "$tmp"/run/*.mwr >/dev/null 2>&1 && echo "ok: the staged memwatch records with the staged library" ||
  bad "no raw file from the staged memwatch (libmemwatch.so not found relative to it?)"

if command -v man >/dev/null; then
  out=$(MANWIDTH=80 MANPAGER=cat man -M "$S/share/man" memwatch 2>&1)
  tr -s ' ' <<<"$out" | grep -q "memwatch - is my program memory-bandwidth bound" && echo "ok: man memwatch" ||
    bad "man memwatch: $(head -5 <<<"$out")"
  out=$(MANWIDTH=80 MANPAGER=cat man -M "$S/share/man" memwatch-record 2>&1)
  grep -q "run a program under libmemwatch.so" <<<"$out" && echo "ok: man memwatch-record" || bad "man memwatch-record"
  w=$(for f in "$S"/share/man/man1/*.1; do LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null; done)
  [ -z "$w" ] || bad "man page warnings: $w"
else
  echo "note: man is not installed: the pages are checked for their presence only"
fi

c=$(bash -c 'source "$1"; COMP_WORDS=(memwatch rec); COMP_CWORD=1; _memwatch; echo "${COMPREPLY[*]}"' _ \
    "$S/share/bash-completion/completions/memwatch")
[ "$c" = record ] && echo "ok: bash completes 'rec' to record" || bad "bash completion of 'rec': '$c'"
c=$(bash -c 'source "$1"; COMP_WORDS=(memwatch report --all); COMP_CWORD=2; _memwatch; echo "${COMPREPLY[*]}"' _ \
    "$S/share/bash-completion/completions/memwatch")
[ "$c" = --all-runs ] && echo "ok: bash completes report --all" || bad "bash completion of 'report --all': '$c'"
c=$(bash -c 'source "$1"; COMP_WORDS=(memwatch record -m probe); COMP_CWORD=3; _memwatch; echo "${COMPREPLY[*]}"' _ \
    "$S/share/bash-completion/completions/memwatch")
[ "$c" = probe_lat ] && echo "ok: bash completes record -m probe" || bad "bash completion of '-m probe': '$c'"
# every export format (the registry, as export --help lists it) is completed
fmts=$("$mw" export --help | sed -n '/Formats/,/^options:/s/^    \([a-z]\+\) .*/\1/p' | tr '\n' ' ')
c=$(bash -c 'source "$1"; COMP_WORDS=(memwatch export --format ""); COMP_CWORD=3; _memwatch; echo "${COMPREPLY[*]} "' _ \
    "$S/share/bash-completion/completions/memwatch")
[ -n "$fmts" ] && [ "$c" = "$fmts" ] && echo "ok: bash completes export --format: $c" ||
  bad "bash completion of 'export --format': '$c', export --help lists '$fmts'"
for f in $fmts; do
  grep -q "\[format\]:format:(.*\b$f\b" "$S/share/zsh/vendor-completions/_memwatch" || bad "zsh completion lacks export format $f"
done
if command -v zsh >/dev/null; then
  zsh -n "$S/share/zsh/vendor-completions/_memwatch" && echo "ok: zsh completion parses" || bad "zsh completion syntax"
else
  echo "note: zsh is not installed: its completion is checked for its presence only"
fi
exit $fail
