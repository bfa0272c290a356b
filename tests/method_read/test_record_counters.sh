#!/usr/bin/env bash
# tests/method_read/test_record_counters.sh: the profiler with a machine
# profile whose validated methods are counter methods (lmrl for latency,
# imc_cas / amd_umc for bandwidth), PMU descriptions from fixture trees, on
# this kernel. Where the counters cannot be opened (this development VM has no
# hardware PMU) the raw file must say which method and why in META
# method_note / bw_method_note, the intervals must carry probe_lat and no DRAM
# bytes, and the program's output and exit status must be unchanged. Where
# they open (a machine with the PMU), intervals must carry the method and the
# flag. The raw files are read with `memwatch report` (SQLite database).
# Exit 0 pass, 1 fail, 77 skip.
set -u
B=${MW_BUILD_DIR:?}
FX=${MW_FIXTURES:?}
LIB=$B/libmemwatch.so
APP=$B/mwp_app
MW=$B/memwatch
T=$(mktemp -d /tmp/mw_rc.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() {
    echo "FAIL: $*"
    exit 1
}
[ -f "$LIB" ] && [ -x "$APP" ] && [ -x "$MW" ] || { echo "SKIP: libmemwatch.so, mwp_app or memwatch not built"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 (the command) is not installed"; exit 77; }

# profile(lat_method, bw_method): methods all judged accurate, lmrl's
# threshold in core cycles per miss, probe_lat's entry noisy (so a fallback
# runs with the uncalibrated default, marked as such)
profile() {
    printf '%s\n' '{"schema": "memwatch-profile", "version": 1, "identity": "mw-counter-test",' \
        '"created": "2026-01-01T00:00:00Z", "tsc_hz": 2e9, "peak_bw": 5e10,' \
        "\"idle_latency_ns\": 100, \"lat_method\": \"$1\", \"lat_threshold_ns\": 300," \
        "\"bw_method\": \"$2\", \"bw_factor\": 1, \"methods\": [" \
        '{"name": "lmrl", "verdict": "accurate", "reason": "test", "threshold_ns": 300},' \
        "{\"name\": \"$2\", \"verdict\": \"accurate\", \"reason\": \"test\", \"factor\": 1}," \
        '{"name": "probe_lat", "verdict": "noisy", "reason": "test", "threshold_ns": 1}]}' >"$T/prof.json"
}

# record(sysfs, extra env...): run mwp_app under the library, check output
# and status against a run without it, build the database
record() {
    local sysfs=$1
    shift
    rm -rf "$T/out" "$T/db"
    mkdir -p "$T/out"
    "$APP" work 200 >"$T/plain.txt" 2>&1
    local rc0=$?
    env "$@" MEMWATCH_MACHINE=mw-counter-test MEMWATCH_PROFILE="$T/prof.json" \
        MEMWATCH_SYSFS="$sysfs" MEMWATCH_DIR="$T/out" LD_PRELOAD="$LIB" \
        "$APP" work 200 >"$T/rec.txt" 2>"$T/err.txt"
    local rc1=$?
    [ "$rc1" = "$rc0" ] || fail "exit status $rc1 under memwatch, $rc0 without"
    cmp -s "$T/plain.txt" "$T/rec.txt" || fail "the program's output changed: $(head -3 "$T/rec.txt")"
    "$MW" report "$T/out" -o "$T/db" -q --no-symbols || fail "memwatch report failed"
}
q() { sqlite3 "$T/db" "$1"; }
meta() { q "SELECT value FROM meta WHERE key = '$1' ORDER BY rowid DESC LIMIT 1"; }

check_case() { # name lat_method bw_method fixture
    local name=$1 lat=$2 bw=$3
    profile "$lat" "$bw"
    record "$FX/sysfs/$4"
    local n np lat_note bw_note lc bc
    n=$(q "SELECT COUNT(*) FROM intervals")
    [ "$n" -ge 5 ] || fail "$name: $n intervals"
    lat_note=$(meta method_note)
    bw_note=$(meta bw_method_note)
    lc=$(meta lat_counters)
    bc=$(meta bw_counters)
    echo "$name: method_note=$lat_note"
    echo "$name: bw_method_note=$bw_note"
    echo "$name: lat_counters=$lc bw_counters=$bc"
    if [ -n "$lc" ]; then
        # the counters opened (a machine with this PMU): the method is used
        # (the last, partial interval at exit carries no method)
        [ "$(q "SELECT COUNT(*) FROM intervals WHERE lat_method NOT IN ('$lat', '')")" = 0 ] ||
            fail "$name: $lat opened but intervals name another method"
        [ -z "$lat_note" ] || fail "$name: a method_note although $lat opened"
    else
        case "$lat_note" in
        "$lat validated in the machine profile but cannot be opened here: "?????*"; using probe_lat") ;;
        *) fail "$name: method_note does not say why $lat is not used: '$lat_note'" ;;
        esac
        # (the last, partial interval at exit carries no method)
        [ "$(q "SELECT COUNT(*) FROM intervals WHERE lat_method NOT IN ('probe_lat', '')")" = 0 ] ||
            fail "$name: intervals name another method than probe_lat: $(q "SELECT DISTINCT lat_method FROM intervals")"
        np=$(q "SELECT COUNT(*) FROM intervals WHERE lat_method = 'probe_lat'")
        [ "$np" -ge 4 ] || fail "$name: only $np of $n intervals name probe_lat"
        [ "$(q "SELECT COUNT(*) FROM intervals WHERE latency_ns > 0")" -ge 1 ] ||
            fail "$name: the fallback probe measured nothing"
        case "$(meta threshold_source)" in
        uncalibrated*) ;;
        *) fail "$name: threshold_source '$(meta threshold_source)' (probe_lat's entry is noisy)" ;;
        esac
        [ "$(q "SELECT COUNT(*) FROM intervals WHERE flags & 8")" = "$np" ] ||
            fail "$name: intervals not marked uncalibrated"
    fi
    if [ -n "$bc" ]; then
        [ "$(q "SELECT COUNT(*) FROM intervals WHERE bw_method = '$bw' AND bytes IS NOT NULL")" -ge 1 ] ||
            fail "$name: $bw opened but no interval carries bytes"
    else
        case "$bw_note" in
        "$bw validated in the machine profile but cannot be opened here: "?????*"; intervals carry no DRAM bytes") ;;
        *) fail "$name: bw_method_note does not say why $bw is not used: '$bw_note'" ;;
        esac
        [ "$(q "SELECT COUNT(*) FROM intervals WHERE bytes IS NOT NULL OR flags & 4 OR bw_method != ''")" = 0 ] ||
            fail "$name: intervals carry DRAM bytes without a bandwidth method"
    fi
    grep -q "cannot be opened" "$T/err.txt" && fail "$name: stderr at the default verbosity: $(cat "$T/err.txt")"
    return 0
}

check_case skx lmrl imc_cas skx
check_case zen4 lmrl amd_umc zen4

# On a machine without hardware PMU the reason must name what is missing.
if ! ls /sys/bus/event_source/devices 2>/dev/null | grep -Eq '^(cpu|cpu_core|uncore_|amd_umc|amd_df)'; then
    profile lmrl imc_cas
    record "$FX/sysfs/skx"
    meta method_note | grep -Eq "cannot open cpu/pending .*(no hardware PMU|not supported)" ||
        fail "the lmrl note does not name the missing PMU: $(meta method_note)"
    meta bw_method_note | grep -Eq "catalogue has no imc_cas|cannot open uncore_imc_0/|no PMU of type" ||
        fail "the imc_cas note does not say what is missing: $(meta bw_method_note)"
    # MEMWATCH_METHOD names the counter method: the note says who asked
    profile "" ""
    record "$FX/sysfs/skx" MEMWATCH_METHOD=lmrl MEMWATCH_VERBOSE=2
    meta method_note | grep -q "^lmrl requested by MEMWATCH_METHOD but cannot be opened here: cannot open cpu/pending" ||
        fail "MEMWATCH_METHOD=lmrl: $(meta method_note)"
    grep -q "lmrl requested by MEMWATCH_METHOD but cannot be opened here" "$T/err.txt" ||
        fail "MEMWATCH_VERBOSE=2 does not say it on stderr: $(cat "$T/err.txt")"
    [ "$(q "SELECT COUNT(*) FROM intervals WHERE lat_method NOT IN ('probe_lat', '')")" = 0 ] ||
        fail "MEMWATCH_METHOD=lmrl: intervals name another method than probe_lat"
fi
echo "PASS"
