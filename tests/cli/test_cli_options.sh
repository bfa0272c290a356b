#!/usr/bin/env bash
# tests/cli/test_cli_options.sh: the commands whose options are a table
# (cli/opts.h: export, report, calibrate, prefetch, monitor, fleet). Their --help lists the rows; for
# every row listed, the parser agrees with the help: an option that takes a
# value and gets none exits 2 with "--opt needs a value", a flag given a
# value (--flag=x) exits 2 with "takes no value", --opt=VALUE is taken as
# the value, and an unknown option exits 2 naming it.
set -u
B=${MW_BUILD_DIR:?}
MW=$B/memwatch
[ -x "$MW" ] || { echo "SKIP: memwatch not built"; exit 77; }
fail=0
bad() { echo "FAILED: $*"; fail=1; }
for cmd in export report calibrate prefetch monitor fleet; do
    help=$("$MW" $cmd --help 2>&1) || { bad "$cmd --help exited $?"; continue; }
    # option lines: "  -o, --output FILE   ..." or "  --flagged   ..."
    rows=$(sed -n 's/^  \(-[a-zA-Z], \)\{0,1\}\(--[a-z-]*\)\( [A-Z][A-Z:]*\)\{0,1\}\( .*\)\{0,1\}$/\2\3/p' <<<"$help")
    n=$(grep -c . <<<"$rows")
    [ "$n" -ge 3 ] || { bad "$cmd: only $n option lines in --help: $help"; continue; }
    while read -r opt arg; do
        [ "$opt" = --help ] && continue
        if [ -n "$arg" ]; then
            out=$("$MW" $cmd "$opt" 2>&1); rc=$?
            [ $rc = 2 ] && grep -qF -- "$opt needs a value" <<<"$out" ||
                bad "$cmd $opt without its $arg: status $rc, '$out'"
        else
            out=$("$MW" $cmd "$opt=x" 2>&1); rc=$?
            [ $rc = 2 ] && grep -qF -- "$opt takes no value" <<<"$out" ||
                bad "$cmd $opt=x: status $rc, '$out'"
        fi
    done <<<"$rows"
    out=$("$MW" $cmd --no-such-option 2>&1); rc=$?
    [ $rc = 2 ] && grep -qF -- "unknown option '--no-such-option'" <<<"$out" ||
        bad "$cmd --no-such-option: status $rc, '$out'"
    echo "$cmd: $n options in --help, each refused as the parser should"
done
# --opt=VALUE is the value: export's format is known, so it asks for the run
out=$("$MW" export --format=csv -o /dev/null 2>&1); rc=$?
[ $rc = 2 ] && grep -q "which run" <<<"$out" || bad "export --format=csv: status $rc, '$out'"
out=$("$MW" monitor --interval=5ms 2>&1); rc=$?
[ $rc = 2 ] && grep -q "needs a time from 10ms" <<<"$out" || bad "monitor --interval=5ms: status $rc, '$out'"
[ $fail = 0 ] && echo "PASS"
exit $fail
