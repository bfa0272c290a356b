#!/usr/bin/env bash
# tests/gonames/test_gonames.sh: Go programs named from Go's own function
# table (.gopclntab), with Debian's golang-go (skipped where go is missing).
# GONAMES_CASE=stripped: tests/gonames/hot built twice with fixed flags
#   (CGO_ENABLED=0, -trimpath), once as it is and once with -ldflags='-s -w'
#   (no symbol table, no DWARF). For every instruction of every function
#   (`go tool objdump` on the unstripped build), the function, file and line
#   of `go tool addr2line` must be what memwatch's symbolizer says for the
#   stripped build (check_gonames); main.scale's code inside main.hotLoop is
#   an inlined frame under hotLoop's call line; the padding after each
#   function (its end by `go tool nm -size` up to the next function) gets no
#   Go name. The unstripped build must agree too (the table before DWARF).
#   The same program as a stripped PIE: every function's entry named.
# GONAMES_CASE=cgo: tests/gonames/cgohot, a cgo program (dynamically
#   linked), recorded with memwatch record: the report's top function is
#   main.hotLoop at one of its lines marked HOT; every name of the report
#   checked against the symbol tables (tests/names/check_names.py).
# GONAMES_CASE=recorded: tests/gonames/loop, a pure Go program stripped with
#   -ldflags='-s -w' (static: memwatch record samples it from outside): the
#   top function is main.hotLoop at one of its HOT lines, and every name of
#   the report covers its address by the unstripped build's symbols.
# Go runs offline and apart from the user's setup: GOCACHE and GOPATH under
# the build tree, GOENV=off, GOFLAGS empty, GOTOOLCHAIN=local, GOPROXY=off.
set -u
[ -n "${MW_SAN_PRELOAD:-}" ] && export LD_PRELOAD=$MW_SAN_PRELOAD
B=${MW_BUILD_DIR:?}
S=${MW_SOURCE_DIR:?}
command -v go >/dev/null || { echo "SKIP: go is not installed (Debian: golang-go)"; exit 77; }
export GOCACHE=$B/go-cache GOPATH=$B/go-path GOENV=off GOFLAGS= GOTOOLCHAIN=local GOPROXY=off \
    GO111MODULE=on
tmp=$(mktemp -d /tmp/mw_gonames.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if [ "$2" = 1 ]; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }
# hot_top SUM_JSON "LINES" GO_FILE: the report's top function is main.hotLoop,
# its top line one of LINES in GO_FILE, and no Go function's line lies under
# a C file (cgo's gcc_mmap.c took them once)
hot_top() {
    python3 - "$1" "$2" "$3" <<'EOF2'
import json, sys
d = json.load(open(sys.argv[1]))
hot = [int(x) for x in sys.argv[2].split()]
gofile = sys.argv[3]
fail = 0
def check(what, ok):
    global fail
    print(("ok" if ok else "FAILED") + ": " + what)
    fail |= not ok
o = d["overall"]
fn = o["functions"][0] if o["functions"] else {}
check("%d timer samples, enough to rank" % o["samples"], o["samples"] >= 20)
check("the top function is main.hotLoop (%s, %s of %d samples)"
      % (fn.get("function"), fn.get("samples"), o["samples"]), fn.get("function") == "main.hotLoop")
ln = o["lines"][0] if o["lines"] else {}
check("the top line is one of hotLoop's in its Go file (%s:%s, lines %s)"
      % (ln.get("file"), ln.get("line"), hot),
      ln.get("function") == "main.hotLoop" and (ln.get("file") or "").endswith(gofile)
      and ln.get("line") in hot)
bad = [l for l in o["lines"] if (l.get("function") or "").startswith("main.")
       and not (l.get("file") or "").endswith(".go")]
check("no Go function's line under a C file (gcc_mmap.c): %s" % bad[:3], not bad)
sys.exit(fail)
EOF2
}
echo "$(go version)"

case ${GONAMES_CASE:-stripped} in
stripped)
    chk=$B/tests/gonames/check_gonames
    [ -x "$chk" ] || chk=$(find "$B" -name check_gonames -type f -perm -u+x | head -1)
    [ -n "$chk" ] || { echo "FAILED: check_gonames not built"; exit 1; }
    cp -r "$S/tests/gonames/hot" "$tmp/src"
    (cd "$tmp/src" && CGO_ENABLED=0 go build -trimpath -o "$tmp/hot" . &&
        CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$tmp/hot.stripped" .) ||
        { echo "FAILED: go build"; exit 1; }
    go tool objdump "$tmp/hot" | awk '$2 ~ /^0x/ { print $2 }' >"$tmp/addrs"
    go tool addr2line "$tmp/hot" <"$tmp/addrs" | paste - - >"$tmp/a2l"
    inl=$(grep -n '// INL' "$tmp/src/hot.go" | cut -d: -f1)
    call=$(grep -n '// CALL' "$tmp/src/hot.go" | cut -d: -f1)
    # at ADDR FUNCTION FILE LINE; inl ADDR main.scale main.hotLoop CALL_LINE
    # (tab-separated: Go's names may hold spaces, "type..eq.struct { ... }")
    paste "$tmp/addrs" "$tmp/a2l" | awk -F'\t' -v OFS='\t' -v inl="$inl" -v call="$call" '
        { n = split($3, fl, ":"); line = fl[n]; file = substr($3, 1, length($3) - length(line) - 1)
          print "at", $1, $2, file, line
          if ($2 == "main.hotLoop" && file ~ /hot\.go$/ && line == inl)
              print "inl", $1, "main.scale", "main.hotLoop", call }' >"$tmp/expect"
    # gap END: the padding after a function that ends before the next one begins
    go tool nm -size -sort address "$tmp/hot" >"$tmp/nm"
    awk 'function hex(s,  i, v) { v = 0; for (i = 1; i <= length(s); i++)
                                   v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
                                 return v }
        $3 ~ /^[Tt]$/ { a = hex($1); if (prev_end && a > prev_end) printf "gap\t%x\n", prev_end
                        prev_end = $2 > 0 ? a + $2 : 0 }' "$tmp/nm" >>"$tmp/expect"
    n_at=$(grep -c '^at' "$tmp/expect"); n_inl=$(grep -c '^inl' "$tmp/expect")
    n_gap=$(grep -c '^gap' "$tmp/expect")
    check "expectations from go tool: $n_at addresses, $n_inl inlined, $n_gap padding" \
        $(( n_at > 10000 && n_inl > 0 && n_gap > 100 ))
    grep -qP "^at\t.*\tmain\.hotLoop\t" "$tmp/expect" && grep -qP "^at\t.*\truntime\.memmove\t" "$tmp/expect"
    check "main.hotLoop and runtime.memmove among them" $(( $? == 0 ))
    out=$("$chk" "$tmp/hot.stripped" "$tmp/expect"); rc=$?
    echo "$out" | tail -21
    check "stripped build: every function, file and line as go tool says" $(( rc == 0 ))
    out=$("$chk" "$tmp/hot" "$tmp/expect"); rc=$?
    echo "$out" | tail -21
    check "unstripped build: the same (Go's table before DWARF)" $(( rc == 0 ))
    # A PIE (-buildmode=pie): the table in .data.rel.ro.gopclntab, its text
    # start a relocation. go tool addr2line reads no line there, so only the
    # functions' entries are checked, by go tool nm's names (ABI0 assembly
    # functions' symbols end in .abi0, which Go's tracebacks leave off;
    # instantiated names hold [...] there, so they are left out).
    (cd "$tmp/src" && CGO_ENABLED=0 go build -trimpath -buildmode=pie -o "$tmp/hot.pie" . &&
        CGO_ENABLED=0 go build -trimpath -buildmode=pie -ldflags='-s -w' -o "$tmp/hot.pie.stripped" .) ||
        { echo "FAILED: go build -buildmode=pie"; exit 1; }
    go tool nm "$tmp/hot.pie" | awk '$2 ~ /^[Tt]$/ && $3 != "runtime.text" && $3 != "runtime.etext" {
        n = $0; sub(/^ *[0-9a-f]+ [Tt] /, "", n); sub(/\.abi0$/, "", n)
        if (n !~ /\[/) printf "fn\t%s\t%s\n", $1, n }' >"$tmp/pie.expect"
    out=$("$chk" "$tmp/hot.pie.stripped" "$tmp/pie.expect"); rc=$?
    echo "$out" | tail -21
    check "stripped PIE: every function's entry named, with a line" $(( rc == 0 ))
    ;;
cgo)
    command -v gcc >/dev/null || { echo "SKIP: gcc is not installed (cgo needs a C compiler)"; exit 77; }
    cp -r "$S/tests/gonames/cgohot" "$tmp/src"
    (cd "$tmp/src" && CGO_ENABLED=1 go build -trimpath -o "$tmp/cgohot" .) ||
        { echo "FAILED: go build (cgo)"; exit 1; }
    file_ok=$(readelf -lW "$tmp/cgohot" | grep -c 'Requesting program interpreter')
    check "the cgo program is dynamically linked" $(( file_ok == 1 ))
    hot=$(grep -n '// HOT' "$tmp/src/cgohot.go" | cut -d: -f1 | tr '\n' ' ')
    # the work is fixed (800 passes over 8 MiB, about a second): the test
    # needs a few dozen timer samples, not a given time
    "$B/memwatch" record -q -o "$tmp/raw" -- "$tmp/cgohot" 800 >"$tmp/out.txt" 2>"$tmp/rec.err" ||
        { echo "FAILED: memwatch record: $(tail -5 "$tmp/rec.err")"; exit 1; }
    "$B/memwatch" report "$tmp/raw" --db "$tmp/db" --json --top 20 >"$tmp/sum.json" 2>"$tmp/err.txt" ||
        { echo "FAILED: memwatch report: $(tail -5 "$tmp/err.txt")"; exit 1; }
    command -v python3 >/dev/null || { echo "SKIP: python3 is not installed (reads the JSON)"; exit 77; }
    hot_top "$tmp/sum.json" "$hot" cgohot/cgohot.go || fail=1
    "$B/memwatch" report "$tmp/raw" --db "$tmp/db" --sort function --json --top 1000 >"$tmp/fn.json" 2>/dev/null
    out=$(python3 "$S/tests/names/check_names.py" "$tmp/db" "$tmp/sum.json" "$tmp/fn.json"); rc=$?
    echo "$out" | head -5
    check "every name covers its address or is module@0x..." $(( rc == 0 ))
    ;;
recorded)
    command -v python3 >/dev/null || { echo "SKIP: python3 is not installed (reads the JSON)"; exit 77; }
    cp -r "$S/tests/gonames/loop" "$tmp/src"
    (cd "$tmp/src" && CGO_ENABLED=0 go build -trimpath -o "$tmp/loop.full" . &&
        CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$tmp/loop" .) ||
        { echo "FAILED: go build"; exit 1; }
    nsym=$(readelf -SW "$tmp/loop" | grep -c '\.symtab')
    check "the recorded build has no symbol table" $(( nsym == 0 ))
    hot=$(grep -n '// HOT' "$tmp/src/loop.go" | cut -d: -f1 | tr '\n' ' ')
    # fixed work (2000 passes over 8 MiB, about a second of CPU time); a
    # static program: memwatch record samples it from outside
    "$B/memwatch" record -o "$tmp/raw" -- "$tmp/loop" 2000 >"$tmp/out.txt" 2>"$tmp/rec.err" ||
        { echo "FAILED: memwatch record: $(tail -5 "$tmp/rec.err")"; exit 1; }
    grep -q 'sampl.* from outside\|statically linked' "$tmp/rec.err" ||
        { echo "SKIP: memwatch record did not sample the static program: $(head -3 "$tmp/rec.err")"; exit 77; }
    "$B/memwatch" report "$tmp/raw" --db "$tmp/db" --json --top 1000 >"$tmp/sum.json" 2>"$tmp/err.txt" ||
        { echo "FAILED: memwatch report: $(tail -5 "$tmp/err.txt")"; exit 1; }
    "$B/memwatch" report "$tmp/raw" --db "$tmp/db" --sort function --json --top 1000 >"$tmp/fn.json" 2>/dev/null
    hot_top "$tmp/sum.json" "$hot" loop/loop.go || fail=1
    # every name against the symbols of the unstripped build (the same code
    # at the same addresses)
    out=$(python3 "$S/tests/names/check_names.py" --symbols "$tmp/loop=$tmp/loop.full" "$tmp/db" \
        "$tmp/sum.json" "$tmp/fn.json"); rc=$?
    echo "$out" | head -5
    check "every name covers its address (the unstripped build's symbols)" $(( rc == 0 ))
    ;;
*) echo "unknown GONAMES_CASE ${GONAMES_CASE}"; exit 2 ;;
esac
exit $fail
