#!/usr/bin/env bash
# tests/cli/test_record_rawexit.sh: a program that leaves by a raw
# exit_group (no libc exit, no destructor: as Go programs end) still gets its
# end from memwatch record's own wait: its exit status and CPU time, before
# it began recording (0 ms of CPU) and after (60 ms: a file of its own
# without a trailer). With golang-go installed, a Go hello world too.
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
K=$B/mwp_kinds
[ -x "$mw" ] && [ -x "$K" ] || { echo "SKIP: memwatch or mwp_kinds not built"; exit 77; }
tmp=$(mktemp -d /tmp/mw_rawexit.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAILED: $*"; fail=1; }
check() { # NAME STATUS CMD...: record, report, the status and CPU time named
  local name=$1 st=$2
  shift 2
  "$mw" record -q -o "$tmp/$name" -- "$@" >/dev/null 2>"$tmp/$name.err"; rc=$?
  [ "$rc" = "$st" ] || bad "$name: record's exit status $rc, expected $st: $(cat "$tmp/$name.err")"
  "$mw" report "$tmp/$name" >"$tmp/$name.rep" 2>&1 || bad "$name: report failed: $(tail -3 "$tmp/$name.rep")"
  line=$(grep "exited with status $st without memwatch's exit path" "$tmp/$name.rep")
  [ -n "$line" ] && echo "ok: $name: $line" || bad "$name: report: $(sed -n '/^Processes/,/^CPU time/p' "$tmp/$name.rep")"
  grep -q "no trailer: killed" "$tmp/$name.rep" && bad "$name: still reported as killed"
  echo "$line" | grep -qF "$(basename "$1") " || bad "$name: the command line is not the program's"
  # process rows ("pid N  host ..."), not the notes about a process ("pid N: ...")
  [ "$(grep -cE "pid [0-9]+ " "$tmp/$name.rep")" = 1 ] || bad "$name: not one process: $(grep -E "pid [0-9]+ " "$tmp/$name.rep")"
}
check short 3 "$K" rawexit 0
check long 3 "$K" rawexit 60
cpu=$(grep "rawexit 60" "$tmp/long.rep" | sed -n 's/.*CPU user \([0-9.]*\) s, system \([0-9.]*\) s.*/\1 \2/p')
awk -v c="$cpu" 'BEGIN { split(c, a, " "); exit !(a[1] + a[2] >= 0.04) }' && echo "ok: long: CPU $cpu" ||
  bad "long: not the program's CPU time ('$cpu')"
# a program that ends normally gets no record of record's
"$mw" record -q -o "$tmp/plain" -- /bin/true || bad "plain: /bin/true failed"
ls "$tmp/plain" | grep -q reaped && bad "plain: record wrote an end for a program that wrote its own"
if command -v go >/dev/null; then
  mkdir -p "$tmp/go" && cd "$tmp/go" || exit 1
  printf 'package main\nimport ("fmt"; "os")\nfunc main() { fmt.Println("hi"); os.Exit(4) }\n' >hi.go
  # cgo keeps it dynamically linked, so that libmemwatch.so is loaded
  if CGO_ENABLED=1 GOCACHE=$tmp/gocache go build -ldflags=-linkmode=external -o hi hi.go 2>"$tmp/go.err"; then
    check go 4 ./hi
  else
    echo "note: go build failed: $(tail -2 "$tmp/go.err")"
  fi
else
  echo "note: no Go toolchain (golang-go not installed): the Go case is not run"
fi
exit $fail
