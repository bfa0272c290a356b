#!/usr/bin/env bash
# tests/calibrate_bench/test_calibrate_cli.sh: `memwatch calibrate` option
# handling as data: arguments | expected exit status | text expected on
# stderr (or stdout for --help). Every case here fails before any benchmark
# runs, so the test takes no measurable time.
set -u
mw=${MW_BUILD_DIR:?}/memwatch
[ -x "$mw" ] || { echo "SKIP: $mw not built"; exit 77; }
fail=0 pass=0
check() { # args exit text
    local args=$1 want_rc=$2 want_text=$3 out rc
    # shellcheck disable=SC2086
    out=$("$mw" calibrate $args 2>&1 </dev/null)
    rc=$?
    if [ "$rc" != "$want_rc" ] || ! grep -qF -- "$want_text" <<<"$out"; then
        echo "FAILED: memwatch calibrate $args: exit $rc (want $want_rc), output:"
        sed 's/^/    /' <<<"$out"
        echo "    (wanted text: $want_text)"
        fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
}
check "--help"                    0 "usage: memwatch calibrate"
check "--frobnicate"              2 "unknown option '--frobnicate'"
check "--threads"                 2 "--threads needs a value"
check "--threads 0"               2 "--threads: expected a whole number from 1 to 256, got '0'"
check "--threads abc"             2 "got 'abc'"
check "--threads=-3"              2 "got '-3'"
check "--threads 99999"           2 "got '99999'"
check "--bench triad,foo"         2 "--bench: expected a comma-separated list"
check "--bench="                  2 "--bench: expected"
check "--triad-size 12Q"          2 "--triad-size: expected a size"
check "--triad-size 100"          2 "--triad-size: expected a size of at least 4096 bytes"
check "--repeats 65"              2 "--repeats: expected a whole number from 1 to 64"
check "--isa vax"                 2 "--isa: expected one of auto, avx512, avx2, sse2, scalar"
check "--max-delay 0"             2 "--max-delay: expected a whole number from 1 to 8192"
check "--duration fast"           2 "--duration: expected seconds from 0.01 to 60"
check "--duration 0"              2 "--duration: expected seconds"
check "--ladder-max 1K"           2 "--ladder-max: expected a size of at least 64K"
check "--quick=yes"               2 "--quick takes no value"
check "--json out.json --no-json" 2 "--json and --no-json contradict each other"
check "--plot"                    2 "--plot needs a value"
check "--mlp-chains 65"           2 "--mlp-chains: expected a whole number from 2 to 64, got '65'"
check "--mix reads60"             2 "--mix: expected a comma-separated list of reads100, reads75, reads50, nt50"
check "--mix reads50,"            2 "got 'reads50,'"
check "--mix"                     2 "--mix needs a value"
check "--mix 50 --no-validate"    2 "--mix needs the validation"
echo "test_calibrate_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
