#!/usr/bin/env bash
# tests/names/test_names.sh: names for code that has no symbol of its own.
# NAMES_CASE=nearest: libmwhot.so stripped (only .dynsym): its hot static
#   function hot_loop is one row of the report, named after the nearest
#   dynamic symbol before it ("hot_before+0x..."), not one row per address;
#   with the unstripped library the same row is hot_loop with its lines.
# NAMES_CASE=minidebuginfo: the stripped library with .gnu_debugdata (the
#   function symbols, xz-compressed, as Fedora ships them): the row is hot_loop.
# NAMES_CASE=debuginfod: the stripped library's debug file served by Debian's
#   debuginfod on loopback, DEBUGINFOD_URLS set for the report: hot_loop with
#   its source lines; skipped with the reason where debuginfod is missing.
# NAMES_CASE=perfmap: node --perf-basic-prof running a JavaScript array loop:
#   the JS function (sumArray) is named from /tmp/perf-PID.map; without the
#   map the report says it was expected but missing.
# NAMES_PYTHON=python3.12 (NAMES_CASE=pyperf): python -X perf names the
#   Python function (py_hot_loop); skipped where Python is older than 3.12.
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
    # hot_loop's addresses all fold into one "hot_before+0x..." row (not one
    # row per address); hot_run, an exported function, may own a sample of
    # its own (the clock calls around the loop) and is a row of its own.
    n=$(grep -c '^hot_before+' "$tmp/rows.txt")
    top=$(head -1 "$tmp/rows.txt" | cut -d' ' -f1)
    check "stripped library: one row for its hot function ($n rows named hot_before+...)" $(( n == 1 ))
    case $top in hot_before+0x*) r=1 ;; *) r=0 ;; esac
    check "named after the nearest dynamic symbol before it ($top)" $r
    run_hot "$lib"
    rows >"$tmp/rows2.txt"; cat "$tmp/rows2.txt"
    grep -q "^hot_loop " "$tmp/rows2.txt"; check "unstripped library: hot_loop" $(( $? == 0 ))
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
sys.exit(not ok)
EOF
    check "the function is named from the perf map" $(( $? == 0 ))
    grep -q "$want" "$tmp/sum.txt"; check "the text report names it" $(( $? == 0 ))
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
