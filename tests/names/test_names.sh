#!/usr/bin/env bash
# tests/names/test_names.sh: names for code that has no symbol of its own.
# NAMES_CASE=nearest: libmwhot.so stripped (only .dynsym): its hot static
#   function hot_loop is one row of the report, named libmwhot.so@0xSTART with
#   START hot_loop's start (its FDE), never after hot_before, the exported
#   symbol before it, which is a hint in the JSON only (nearest_symbol); the
#   report says what would name the library (a debug file by build-id); with
#   the unstripped library the same row is hot_loop with its lines.
# NAMES_CASE=minidebuginfo: the stripped library with .gnu_debugdata (the
#   function symbols, xz-compressed, as Fedora ships them): the row is hot_loop.
# NAMES_CASE=debuginfod: the stripped library's debug file served by Debian's
#   debuginfod on loopback, DEBUGINFOD_URLS set for the report: hot_loop with
#   its source lines; skipped with the reason where debuginfod is missing.
# NAMES_CASE=perfmap: node --perf-basic-prof running a JavaScript array loop:
#   the JS function (sumArray) is named from /tmp/perf-PID.map; without the
#   map the report says it was expected but missing.
# NAMES_PYTHON=python3.12 (NAMES_CASE=pyperf): python -X perf names the
#   Python function (py_hot_loop), and it heads the summary's code section
#   (JSON overall.interpreted, the text's first row) before the
#   interpreter's C leaf (_PyEval_EvalFrameDefault); skipped where Python is
#   older than 3.12 (not registered: run by hand where python3.12 exists).
# NAMES_CASE=cxx: the same in C++ (libmwcxxhot.so): unstripped, the hot
#   function demangled (hotns::(anonymous namespace)::kernel(...)); stripped,
#   libmwcxxhot.so@0x... with the hint demangled with its offset
#   (hotns::before(double)+0x...); no name anywhere left mangled.
# NAMES_CASE=symtab: every function name in the JSON of recorded runs (the
#   stripped libmwhot.so, and Debian's stripped sort) checked against the
#   modules' symbol tables by check_names.py: a name covers its address, or
#   is module@0x....
# NAMES_CASE=stacks: no stack holds a libmemwatch.so frame (mwp_main, the
#   interposers), --callers main names main's real caller, and no caller
#   frame lies in no module (such frames end the stack).
# NAMES_CASE=pyjit: mwpytramp, an interpreter in miniature that publishes
#   its functions in /tmp/perf-PID.map as python3.12 -X perf does (a
#   trampoline per Python function in anonymous memory, calling the C
#   function eval_frame): the summary's code section, text, JSON and HTML,
#   begins with the innermost interpreted frame of each sample,
#   py::hot_loop:SCRIPT, with the C leaf it ran (eval_frame), not with
#   eval_frame alone; folded stacks carry the frame.
# NAMES_CASE=debian: Debian's own xz, sqlite3 and python3 (stripped, no
#   frame pointers), recorded: every name of the JSON and every code address
#   of the database checked against the symbol tables (check_names.py); the
#   text names code without a line by its function, never "?:0".
# NAMES_CASE=libcdbg: with libc6-dbg's debug file for this libc, a stripped
#   program copying on a thread: libc's memmove (__memmove_*) is the top
#   function, and start_thread among its callers, by their real names.
set -u
[ -n "${MW_SAN_PRELOAD:-}" ] && export LD_PRELOAD=$MW_SAN_PRELOAD
B=${MW_BUILD_DIR:?}
S=${MW_SOURCE_DIR:?}
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/mw_names.XXXXXX)
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
check() { if [ "$2" = 1 ]; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }
lib=$(find "$B" -name libmwhot.so -type f | head -1)
app=$(find "$B" -name mwhotapp -type f -perm -u+x | head -1)
tool() { command -v "$1" >/dev/null || { echo "SKIP: $1 is not installed ($2)"; exit 77; }; }

# run_hot LIB: record mwhotapp with LIB as its libmwhot.so, report as JSON
run_hot() {
    rm -rf "$tmp/app" "$tmp/raw" "$tmp/db"
    mkdir -p "$tmp/app"
    cp "$app" "$tmp/app/mwhotapp"
    cp "$1" "$tmp/app/libmwhot.so"
    LD_LIBRARY_PATH=$tmp/app "$B/memwatch" record -q -o "$tmp/raw" -- "$tmp/app/mwhotapp" 1 >/dev/null ||
        { echo "FAILED: memwatch record mwhotapp"; exit 1; }
    "$B/memwatch" report "$tmp/raw" -o "$tmp/db" --json --top 20 >"$tmp/sum.json" 2>"$tmp/err.txt" ||
        { echo "FAILED: memwatch report"; cat "$tmp/err.txt"; exit 1; }
}
# rows PATTERN: the overall top functions of libmwhot.so as "function samples" lines
rows() {
    python3 - "$tmp/sum.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for f in d["overall"]["functions"]:
    if (f.get("module") or "").endswith("libmwhot.so"):
        print(f.get("function"), f["samples"])
EOF
}
strip_lib() { # strip_lib OUT: the library with only .dynsym
    tool strip "binutils"
    strip --strip-all -o "$1" "$lib"
}

case ${NAMES_CASE:-nearest} in
nearest)
    strip_lib "$tmp/stripped.so"
    run_hot "$tmp/stripped.so"
    rows >"$tmp/rows.txt"; cat "$tmp/rows.txt"
    # hot_loop's start in the unstripped library: the name the row must have
    start=$(nm "$lib" | awk '$3 == "hot_loop" { print $1 }' | python3 -c 'import sys; print(hex(int(sys.stdin.read(), 16)))')
    n=$(grep -c '^hot_before' "$tmp/rows.txt")
    check "the exported symbol before the static function names none of its addresses ($n rows hot_before...)" $(( n == 0 ))
    top=$(head -1 "$tmp/rows.txt" | cut -d' ' -f1)
    check "the hot static function is libmwhot.so@$start ($top)" $([ "$top" = "libmwhot.so@$start" ] && echo 1 || echo 0)
    n=$(grep -c '^libmwhot.so@' "$tmp/rows.txt")
    check "one row for it, not one per address ($n rows libmwhot.so@...)" $(( n == 1 ))
    python3 - "$tmp/sum.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d["overall"]["functions"] if x.get("function", "").startswith("libmwhot.so@")]
hint = f[0].get("nearest_symbol", "") if f else ""
ok = hint.startswith("hot_before+0x")
print(("ok" if ok else "FAILED") + ": the nearest symbol is a hint in the JSON (%s)" % hint)
m = [x for x in d.get("module_names", []) if x["module"].endswith("libmwhot.so")]
ok2 = bool(m) and "build-id" in m[0]["would_name_it"]
print(("ok" if ok2 else "FAILED") + ": the report says what would name it: %s" % (m[0]["would_name_it"] if m else "nothing"))
sys.exit(not (ok and ok2))
EOF
    [ $? = 0 ] || fail=1
    "$B/memwatch" report "$tmp/raw" -o "$tmp/db" --top 20 >"$tmp/sum.txt" 2>&1
    grep -q "libmwhot.so@$start" "$tmp/sum.txt"; check "the text report prints libmwhot.so@$start" $(( $? == 0 ))
    grep -q "hot_before" "$tmp/sum.txt"; check "the text report never prints hot_before" $(( $? != 0 ))
    run_hot "$lib"
    rows >"$tmp/rows2.txt"; cat "$tmp/rows2.txt"
    grep -q "^hot_loop " "$tmp/rows2.txt"; check "unstripped library: hot_loop" $(( $? == 0 ))
    ;;
cxx)
    cxlib=$(find "$B" -name libmwcxxhot.so -type f | head -1)
    cxapp=$(find "$B" -name mwcxxapp -type f -perm -u+x | head -1)
    [ -n "$cxlib" ] && [ -n "$cxapp" ] || { echo "SKIP: mwcxxapp not built: no C++ compiler found by CMake"; exit 77; }
    tool strip "binutils"
    # run_cxx LIB OUT: record mwcxxapp with LIB, the report's JSON into OUT
    # and the --sort function view's into OUT.fn
    run_cxx() {
        rm -rf "$tmp/app" "$tmp/raw" "$tmp/db"; mkdir -p "$tmp/app"
        cp "$cxapp" "$tmp/app/mwcxxapp"; cp "$1" "$tmp/app/libmwcxxhot.so"
        LD_LIBRARY_PATH=$tmp/app "$B/memwatch" record -q -o "$tmp/raw" -- "$tmp/app/mwcxxapp" 1 >/dev/null ||
            { echo "FAILED: memwatch record mwcxxapp"; exit 1; }
        "$B/memwatch" report "$tmp/raw" -o "$tmp/db" --json --top 20 >"$2" 2>"$tmp/err.txt" ||
            { echo "FAILED: memwatch report"; cat "$tmp/err.txt"; exit 1; }
        "$B/memwatch" report "$tmp/raw" -o "$tmp/db" --sort function --json --top 200 >"$2.fn" 2>/dev/null
    }
    run_cxx "$cxlib" "$tmp/full.json"
    strip --strip-all -o "$tmp/stripped.so" "$cxlib"
    run_cxx "$tmp/stripped.so" "$tmp/bare.json"
    python3 - "$tmp/full.json" "$tmp/bare.json" "$tmp/full.json.fn" "$tmp/bare.json.fn" <<'EOF'
import json, sys
import os; sys.path.insert(0, os.path.join(os.environ["MW_SOURCE_DIR"], "tests/names")); from json_names import json_names
full, bare = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
def mod_rows(d):
    return [x for x in d["overall"]["functions"] if (x.get("module") or "").endswith("libmwcxxhot.so")]
fail = 0
def check(what, ok):
    global fail
    print(("ok" if ok else "FAILED") + ": " + what)
    fail |= not ok
top = mod_rows(full)[0]["function"] if mod_rows(full) else ""
check("unstripped: the hot function demangled, no offset (%s)" % top,
      top == "hotns::(anonymous namespace)::kernel(double*, unsigned long)")
b = mod_rows(bare)[0] if mod_rows(bare) else {}
check("stripped: libmwcxxhot.so@0x... (%s)" % b.get("function"),
      b.get("function", "").startswith("libmwcxxhot.so@0x"))
hint = b.get("nearest_symbol", "")
check("stripped: the hint demangled with its offset (%s)" % hint, hint.startswith("hotns::before(double)+0x"))
names = json_names([json.load(open(a)) for a in sys.argv[1:]], ("function", "nearest_symbol"))
mangled = [n for n in names if n.startswith("_Z")]
check("no name left mangled among %d (%s)" % (len(names), mangled[:3]), not mangled)
sys.exit(fail)
EOF
    [ $? = 0 ] || fail=1
    ;;
symtab)
    tool nm "binutils"
    strip_lib "$tmp/stripped.so"
    run_hot "$tmp/stripped.so"
    "$B/memwatch" report "$tmp/raw" -o "$tmp/db" --sort function --json --top 1000 >"$tmp/fn.json" 2>/dev/null
    python3 "$S/tests/names/check_names.py" "$tmp/db" "$tmp/sum.json" "$tmp/fn.json"
    check "every name of the stripped library's run covers its address or is module@0x..." $(( $? == 0 ))
    # Debian's sort: stripped, without frame pointers, its own functions unnamed
    python3 -c 'import random; r = random.Random(1); print("\n".join(str(r.random()) for _ in range(600000)))' >"$tmp/lines"
    "$B/memwatch" record -q -o "$tmp/raw2" -- sort -n "$tmp/lines" -o /dev/null >/dev/null ||
        { echo "FAILED: memwatch record sort"; exit 1; }
    "$B/memwatch" report "$tmp/raw2" -o "$tmp/db2" --json --top 1000 >"$tmp/sum2.json" 2>/dev/null
    "$B/memwatch" report "$tmp/raw2" -o "$tmp/db2" --sort function --json --top 1000 >"$tmp/fn2.json" 2>/dev/null
    python3 "$S/tests/names/check_names.py" "$tmp/db2" "$tmp/sum2.json" "$tmp/fn2.json"
    check "every name of sort's run covers its address or is module@0x..." $(( $? == 0 ))
    ;;
stacks)
    command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 is not installed (the stacks are read from the database)"; exit 77; }
    run_hot "$lib"
    own=$(sqlite3 "$tmp/db" "SELECT COUNT(*) FROM stacks s JOIN pcs p ON p.id = s.pc_id JOIN modules m ON m.id = p.module_id WHERE m.path LIKE '%libmemwatch%'")
    check "no stack frame in libmemwatch.so ($own)" $(( own == 0 ))
    nomod=$(sqlite3 "$tmp/db" "SELECT COUNT(*) FROM stacks s JOIN pcs p ON p.id = s.pc_id WHERE p.module_id IS NULL AND p.quality IS NOT 'perf-map' AND s.id IN (SELECT parent_id FROM stacks)")
    check "no caller frame in no module ($nomod)" $(( nomod == 0 ))
    "$B/memwatch" report "$tmp/raw" -o "$tmp/db" --callers main --json >"$tmp/callers.json" 2>/dev/null
    "$B/memwatch" report "$tmp/raw" -o "$tmp/db" --callers main >"$tmp/callers.txt" 2>/dev/null
    cat "$tmp/callers.txt"
    python3 - "$tmp/callers.json" <<'EOF'
import json, sys
import os; sys.path.insert(0, os.path.join(os.environ["MW_SOURCE_DIR"], "tests/names")); from json_names import json_names
d = json.load(open(sys.argv[1]))
n = json_names(d)
callers = [x["function"] for x in d.get("callers", {}).get("callers", [])]
ok = bool(callers) and not any(c.startswith("mwp_") for c in n) and \
    any(c in ("__libc_start_call_main", "__libc_start_main", "__libc_start_main_impl") for c in callers)
print(("ok" if ok else "FAILED") + ": --callers main names libc's entry, no memwatch frame: %s" % callers)
sys.exit(not ok)
EOF
    [ $? = 0 ] || fail=1
    ;;
pyjit)
    tramp=$(find "$B" -name mwpytramp -type f -perm -u+x | head -1)
    [ -n "$tramp" ] || { echo "SKIP: mwpytramp not built (x86-64 only)"; exit 77; }
    script=$tmp/work/x.py
    # 1.5 s of CPU time: about 375 timer samples at 250/s, however loaded
    "$B/memwatch" record -q -o "$tmp/raw" -- "$tramp" 1.5 "$script" >"$tmp/out.txt" ||
        { echo "FAILED: memwatch record mwpytramp"; exit 1; }
    map=$(head -1 "$tmp/out.txt")
    # the map beside the raw file (read first), none left in /tmp
    [ -f "$map" ] && mv "$map" "$tmp/raw/"
    check "the program wrote its perf map ($map)" $([ -f "$tmp/raw/$(basename "$map")" ] && echo 1 || echo 0)
    "$B/memwatch" report "$tmp/raw" --db "$tmp/db" --json --top 20 >"$tmp/sum.json" 2>"$tmp/err.txt" ||
        { echo "FAILED: memwatch report"; cat "$tmp/err.txt"; exit 1; }
    "$B/memwatch" report "$tmp/raw" --db "$tmp/db" --top 20 >"$tmp/sum.txt" 2>/dev/null
    "$B/memwatch" report "$tmp/raw" --db "$tmp/db" --html "$tmp/r.html" -q 2>/dev/null
    "$B/memwatch" export "$tmp/raw" --format folded -o "$tmp/folded" 2>/dev/null
    sed -n '/^Top code overall/,/^$/p' "$tmp/sum.txt"
    SCRIPT=$script python3 - "$tmp/sum.json" <<'EOF'
import json, os, sys
d = json.load(open(sys.argv[1]))
want = "py::hot_loop:" + os.environ["SCRIPT"]
o = d["overall"]
fail = 0
def check(what, ok):
    global fail
    print(("ok" if ok else "FAILED") + ": " + what)
    fail |= not ok
inter = o.get("interpreted", [])
n = o["samples"]
check("%d timer samples, enough to rank" % n, n >= 50)
top = inter[0] if inter else {}
check("the interpreted function heads the code (%s)" % top.get("function"), top.get("function") == want)
check("%s: %s of %d samples (9 of 10 calls)" % (want, top.get("samples"), n), top.get("samples", 0) >= 0.6 * n)
leaves = [l["function"] for l in top.get("leaves", [])]
check("the C code it ran beside it: %s" % leaves, leaves[:1] == ["eval_frame"])
check("the second is cold_path (%s)" % [x["function"] for x in inter[1:2]],
      len(inter) > 1 and inter[1]["function"] == "py::cold_path:" + os.environ["SCRIPT"])
check("%s of %d samples have an interpreted frame" % (o.get("interpreted_samples"), n),
      o.get("interpreted_samples", 0) >= 0.9 * n)
fn = o["functions"][0]["function"] if o["functions"] else None
check("the C leaf ranking is kept: eval_frame (%s)" % fn, fn == "eval_frame")
sys.exit(fail)
EOF
    [ $? = 0 ] || fail=1
    # the text: the first share under "Top code overall" is the Python function's
    first=$(sed -n '/^Top code overall/,/^$/p' "$tmp/sum.txt" | grep -m1 -E '^ +[0-9.]+%')
    check "the text's first code row: $first" $(echo "$first" | grep -qF "py::hot_loop:$script" && echo 1 || echo 0)
    python3 - "$tmp/r.html" "py::hot_loop:$script" <<'EOF'
import sys
h = open(sys.argv[1]).read()
sec = h[h.find("<h2 id=overall>"):]
sec = sec[:sec.find("<h2", 5)]
i, j = sec.find(sys.argv[2]), sec.find("source line")
ok = 0 <= i < j
print(("ok" if ok else "FAILED") + ": HTML: the interpreted function before the source lines (%d, %d)" % (i, j))
sys.exit(not ok)
EOF
    [ $? = 0 ] || fail=1
    n=$(grep -c "py::hot_loop:$script;eval_frame" "$tmp/folded")
    check "folded stacks carry the interpreted frame ($n stacks)" $(( n > 0 ))
    ;;
debian)
    tool nm "binutils"; tool sqlite3 "Debian package sqlite3"; tool xz "xz-utils"
    [ -x /usr/bin/python3 ] || { echo "SKIP: /usr/bin/python3 (Debian's python3) is not installed"; exit 77; }
    # xz: 4 MB of random bytes and text; sqlite3: a table, an index, a
    # search; python3: build and parse JSON. About a second of CPU time each.
    head -c 4000000 /dev/urandom >"$tmp/xzin"; seq 1 600000 >>"$tmp/xzin"
    printf '%s\n' "CREATE TABLE t(a INTEGER, b TEXT);" \
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 200000) INSERT INTO t SELECT x, hex(randomblob(16)) FROM c;" \
        "CREATE INDEX ti ON t(b);" "SELECT COUNT(*) FROM t WHERE b LIKE '%AB%';" >"$tmp/q.sql"
    printf '%s\n' "import json" \
        "d = [{'k': i, 'v': str(i) * 3, 'l': list(range(i % 7))} for i in range(100000)]" \
        "print(len(json.loads(json.dumps(d))))" >"$tmp/j.py"
    k=0
    for cmd in "xz -6 -T1 -c $tmp/xzin" "sqlite3 -init $tmp/q.sql :memory: .quit" "/usr/bin/python3 $tmp/j.py"; do
        k=$((k + 1))
        # shellcheck disable=SC2086
        "$B/memwatch" record -q -o "$tmp/raw$k" -- $cmd >/dev/null 2>"$tmp/rec$k.err" </dev/null ||
            { echo "FAILED: memwatch record $cmd: $(tail -3 "$tmp/rec$k.err")"; fail=1; continue; }
        "$B/memwatch" report "$tmp/raw$k" --db "$tmp/db$k" --json --top 1000 >"$tmp/sum$k.json" 2>/dev/null
        "$B/memwatch" report "$tmp/raw$k" --db "$tmp/db$k" --sort function --json --top 1000 >"$tmp/fn$k.json" 2>/dev/null
        out=$(python3 "$S/tests/names/check_names.py" "$tmp/db$k" "$tmp/sum$k.json" "$tmp/fn$k.json"); rc=$?
        echo "$out" | head -5
        check "${cmd%% *}: every name covers its address or is module@0x..." $(( rc == 0 ))
        # code without a line is named by its function in the text too, never "?:0"
        "$B/memwatch" report "$tmp/raw$k" --db "$tmp/db$k" >"$tmp/sum$k.txt" 2>/dev/null
        n=$(grep -c '?:0' "$tmp/sum$k.txt")
        check "${cmd%% *}: no code named ?:0 in the text ($n lines)" $(( n == 0 ))
    done
    ;;
libcdbg)
    mm=$(find "$B" -name mwmemmove -type f -perm -u+x | head -1)
    [ -n "$mm" ] || { echo "FAILED: mwmemmove not built"; exit 1; }
    libc=$(ldd "$mm" 2>/dev/null | awk '$1 ~ /^libc\.so/ { print $3 }')
    bid=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID:/ { print $3 }')
    dbg=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
    [ -n "$bid" ] && [ -f "$dbg" ] ||
        { echo "SKIP: no debug file for $libc (build-id ${bid:-unknown}): install libc6-dbg"; exit 77; }
    "$B/memwatch" record -q -o "$tmp/raw" -- "$mm" 1 >/dev/null ||
        { echo "FAILED: memwatch record mwmemmove"; exit 1; }
    "$B/memwatch" report "$tmp/raw" --db "$tmp/db" --json >"$tmp/sum.json" 2>/dev/null
    top=$(python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["overall"]["functions"]; print(f[0]["function"] if f else "")' "$tmp/sum.json")
    check "libc's memmove by its name: $top" $(case $top in __memmove_*) echo 1 ;; *) echo 0 ;; esac)
    "$B/memwatch" report "$tmp/raw" --db "$tmp/db" --sort function --json --top 50 >"$tmp/fn.json" 2>/dev/null
    python3 - "$tmp/fn.json" <<'EOF'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["MW_SOURCE_DIR"], "tests/names"))
from json_names import json_names
names = json_names(json.load(open(sys.argv[1])))
ok = "start_thread" in names and not [n for n in names if n.startswith("libc.so.6@")]
print(("ok" if ok else "FAILED") + ": start_thread named, no libc.so.6@0x... function: %s" % names[:8])
sys.exit(not ok)
EOF
    [ $? = 0 ] || fail=1
    ;;
minidebuginfo)
    tool objcopy "binutils"; tool nm "binutils"; tool xz "xz-utils"
    strip_lib "$tmp/stripped.so"
    # MiniDebugInfo as Fedora builds it: the function symbols .dynsym lacks,
    # in an xz-compressed ELF file in .gnu_debugdata
    nm -D "$tmp/stripped.so" --format=posix --defined-only | awk '{ print $1 }' | sort >"$tmp/dyn"
    nm "$lib" --format=posix --defined-only | awk '$2 == "T" || $2 == "t" { print $1 }' | sort >"$tmp/funcs"
    comm -13 "$tmp/dyn" "$tmp/funcs" >"$tmp/keep"
    objcopy --only-keep-debug "$lib" "$tmp/mini.debug"
    objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$tmp/keep" \
        "$tmp/mini.debug" "$tmp/mini2.debug"
    xz "$tmp/mini2.debug"
    objcopy --add-section .gnu_debugdata="$tmp/mini2.debug.xz" "$tmp/stripped.so" "$tmp/mini.so"
    run_hot "$tmp/mini.so"
    rows >"$tmp/rows.txt"; cat "$tmp/rows.txt"
    top=$(head -1 "$tmp/rows.txt" | cut -d' ' -f1)
    check "MiniDebugInfo names the hot function ($top)" $([ "$top" = hot_loop ] && echo 1 || echo 0)
    ;;
debuginfod)
    command -v debuginfod >/dev/null ||
        { echo "SKIP: debuginfod is not installed (Debian package debuginfod; .ci/install-deps installs it)"; exit 77; }
    ls /usr/lib/x86_64-linux-gnu/libdebuginfod.so.1 /usr/lib/*/libdebuginfod.so.1 >/dev/null 2>&1 ||
        { echo "SKIP: libdebuginfod.so.1 is not installed (Debian package libdebuginfod1)"; exit 77; }
    tool objcopy "binutils"
    strip_lib "$tmp/stripped.so"
    mkdir -p "$tmp/serve"
    objcopy --only-keep-debug "$lib" "$tmp/serve/libmwhot.debug"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    debuginfod -F "$tmp/serve" -p "$port" -d "$tmp/debuginfod.sqlite" -t 1 -g 0 >"$tmp/srv.log" 2>&1 &
    srv=$!
    bid=$(python3 - "$tmp/stripped.so" <<'EOF'
import subprocess, sys
out = subprocess.run(["readelf", "-n", sys.argv[1]], capture_output=True, text=True).stdout
for line in out.splitlines():
    if "Build ID:" in line:
        print(line.split("Build ID:")[1].strip())
EOF
)
    ok=0
    for i in $(seq 100); do
        if python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/buildid/$bid/debuginfo', timeout=2)" 2>/dev/null; then ok=1; break; fi
        sleep 0.3
    done
    check "debuginfod on 127.0.0.1:$port serves the debug file of build-id $bid" $ok
    [ $ok = 1 ] || { cat "$tmp/srv.log"; exit 1; }
    export DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$tmp/cache
    run_hot "$tmp/stripped.so"
    rows >"$tmp/rows.txt"; cat "$tmp/rows.txt"
    top=$(head -1 "$tmp/rows.txt" | cut -d' ' -f1)
    check "debuginfod's debug file names the hot function ($top)" $([ "$top" = hot_loop ] && echo 1 || echo 0)
    python3 - "$tmp/sum.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ok = any(l.get("file", "").endswith("libhot.c") and l.get("function") == "hot_loop"
         for l in d["overall"]["lines"])
print(("ok" if ok else "FAILED") + ": source lines of libhot.c from the fetched debug file")
sys.exit(not ok)
EOF
    [ $? = 0 ] || fail=1
    ls "$tmp/cache" >/dev/null 2>&1; check "the debug file is in the client's cache" $(( $? == 0 ))
    ;;
perfmap|pyperf)
    if [ "$NAMES_CASE" = perfmap ]; then
        tool node "Debian package nodejs"
        run=(node --perf-basic-prof "$S/tests/names/jsloop.js" 1)
        norun=(node "$S/tests/names/jsloop.js" 1)
        want=sumArray
    else
        py=${NAMES_PYTHON:-python3}
        "$py" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null ||
            { echo "SKIP: $py is older than 3.12 (no -X perf)"; exit 77; }
        run=("$py" -X perf "$S/tests/names/pyloop.py" 1)
        norun=("$py" "$S/tests/names/pyloop.py" 1)
        want=py_hot_loop
    fi
    "$B/memwatch" record -q -o "$tmp/raw" -- "${run[@]}" >/dev/null ||
        { echo "FAILED: memwatch record ${run[*]}"; exit 1; }
    # the runtime's /tmp/perf-PID.map beside the raw file (read first), none
    # left in /tmp
    for f in "$tmp"/raw/*.mwr; do
        pid=${f##*-}; pid=${pid%.mwr}
        [ -f "/tmp/perf-$pid.map" ] && mv "/tmp/perf-$pid.map" "$tmp/raw/"
    done
    "$B/memwatch" report "$tmp/raw" -o "$tmp/db" --json --top 20 >"$tmp/sum.json" 2>"$tmp/err.txt" ||
        { echo "FAILED: memwatch report"; cat "$tmp/err.txt"; exit 1; }
    "$B/memwatch" report "$tmp/raw" -o "$tmp/db2" --top 20 >"$tmp/sum.txt" 2>/dev/null
    WANT=$want python3 - "$tmp/sum.json" <<'EOF'
import json, os, sys
d = json.load(open(sys.argv[1]))
want = os.environ["WANT"]
jit = [f["function"] for f in d.get("jit_functions", [])]
top = [f.get("function") or "" for f in d["overall"]["functions"]]
print("perf-map functions:", jit[:5])
print("top functions:", top[:5])
ok = any(want in f for f in jit[:3]) or any(want in f for f in top[:3])
print(("ok" if ok else "FAILED") + ": %s named in the report" % want)
if os.environ.get("NAMES_CASE") == "pyperf":
    # python -X perf: the interpreter's C code is every sample's leaf; the
    # Python function heads the code section as the innermost perf-map frame
    inter = [f["function"] for f in d["overall"].get("interpreted", [])]
    print("interpreted:", inter[:3])
    ok2 = bool(inter) and want in inter[0]
    print(("ok" if ok2 else "FAILED") + ": %s heads the summary's code" % want)
    ok = ok and ok2
sys.exit(not ok)
EOF
    check "the function is named from the perf map" $(( $? == 0 ))
    grep -q "$want" "$tmp/sum.txt"; check "the text report names it" $(( $? == 0 ))
    if [ "$NAMES_CASE" = pyperf ]; then
        first=$(sed -n '/^Top code overall/,/^$/p' "$tmp/sum.txt" | grep -m1 -E '^ +[0-9.]+%')
        check "the text's first code row is the Python function: $first" \
            $(echo "$first" | grep -q "$want" && echo 1 || echo 0)
    fi
    # the same program without the map: the report says one was expected
    rm -rf "$tmp/raw"
    "$B/memwatch" record -q -o "$tmp/raw" -- "${norun[@]}" >/dev/null
    "$B/memwatch" report "$tmp/raw" -o "$tmp/db3" --json >"$tmp/sum3.json" 2>/dev/null
    if [ "$NAMES_CASE" = perfmap ]; then
        python3 - "$tmp/sum3.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
notes = [n["note"] for n in d.get("name_notes", [])]
ok = any("no perf map names them" in n and "--perf-basic-prof" in n for n in notes)
print(("ok" if ok else "FAILED") + ": without --perf-basic-prof the report says a map was expected: %s" % notes[:1])
sys.exit(not ok)
EOF
        [ $? = 0 ] || fail=1
    fi
    ;;
esac
exit $fail
