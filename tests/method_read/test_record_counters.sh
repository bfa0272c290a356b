#!/usr/bin/env bash
# tests/method_read/test_record_counters.sh: the profiler with a machine
# profile whose validated methods are counter methods (lmrl for latency,
# imc_cas / amd_umc for bandwidth), PMU descriptions from fixture trees, on
# this kernel. The CPU is forced too (MEMWATCH_PROC: a fixture's cpuinfo), so
# the catalogue row does not depend on the host's CPU model. Where the counters cannot be opened (this development VM has no
# hardware PMU) the raw file must say which method and why in META
# method_note / bw_method_note, the intervals must carry probe_lat and no DRAM
# bytes, and the program's output and exit status must be unchanged. Where
# they open (a machine with the PMU), intervals must carry the method and the
# flag. The raw files are read with `memwatch report` (SQLite database).
# Exit 0 pass, 1 fail, 77 skip.
set -u
# sanitized build: the ASan runtime first in every program (tests/CMakeLists.txt)
[ -n "${MW_SAN_PRELOAD:-}" ] && export LD_PRELOAD=$MW_SAN_PRELOAD
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
    local thr=0 bwe=""
    [ -n "$1" ] && thr=300
    [ -n "$2" ] && bwe="{\"name\": \"$2\", \"verdict\": \"accurate\", \"reason\": \"test\", \"factor\": 1},"
    printf '%s\n' '{"schema": "memwatch-profile", "version": 1, "identity": "mw-counter-test",' \
        '"created": "2026-01-01T00:00:00Z", "tsc_hz": 2e9, "peak_bw": 5e10,' \
        "\"idle_latency_ns\": 100, \"lat_method\": \"$1\", \"lat_threshold_ns\": $thr," \
        "\"bw_method\": \"$2\", \"bw_factor\": 1, \"methods\": [" \
        '{"name": "lmrl", "verdict": "accurate", "reason": "test", "threshold_ns": 300},' \
        "$bwe" \
        '{"name": "probe_lat", "verdict": "noisy", "reason": "test", "threshold_ns": 1}]}' >"$T/prof.json"
}

# record(sysfs, extra env...): run the program (PROG, default mwp_app cpuwork
# 200, from the moment recording began: MWP_WAIT_BEGUN) under the library, check output and status against a run without it,
# build the database. The CPU: CPU (a directory holding a cpuinfo), else the
# proc fixture of the sysfs fixture's name.
record() {
    local sysfs=$1
    shift
    local proc=${CPU:-$FX/proc/$(basename "$sysfs")}
    [ -f "$proc/cpuinfo" ] || fail "no cpuinfo fixture for $sysfs: $proc"
    rm -rf "$T/out" "$T/db"
    mkdir -p "$T/out"
    local prog=("$APP" cpuwork 200)
    [ -n "${PROG:-}" ] && read -r -a prog <<<"$PROG"
    "${prog[@]}" >"$T/plain.txt" 2>&1
    local rc0=$?
    env "$@" MWP_WAIT_BEGUN=1 MEMWATCH_MACHINE=mw-counter-test MEMWATCH_PROFILE="$T/prof.json" \
        MEMWATCH_SYSFS="$sysfs" MEMWATCH_PROC="$proc" MEMWATCH_DIR="$T/out" LD_PRELOAD="${MW_SAN_PRELOAD:+$MW_SAN_PRELOAD:}$LIB" \
        "${prog[@]}" >"$T/rec.txt" 2>"$T/err.txt"
    local rc1=$?
    [ "$rc1" = "$rc0" ] || fail "exit status $rc1 under memwatch, $rc0 without"
    cmp -s "$T/plain.txt" "$T/rec.txt" || fail "the program's output changed: $(head -3 "$T/rec.txt")"
    "$MW" report "$T/out" --db "$T/db" -q --no-symbols || fail "memwatch report failed"
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

# A CPU the catalogue does not know (a Zhaoxin part, vendor CentaurHauls):
# whatever the host, the notes say the catalogue has no row for it, the probe
# runs, and nothing else is attempted.
mkdir -p "$T/unknown"
printf '%s\n' 'processor	: 0' 'vendor_id	: CentaurHauls' 'cpu family	: 7' 'model		: 91' \
    'model name	: ZHAOXIN KaiXian KX-U6780A@2.7GHz' 'stepping	: 0' '' >"$T/unknown/cpuinfo"
profile lmrl imc_cas
CPU=$T/unknown record "$FX/sysfs/skx"
echo "unknown CPU: method_note=$(meta method_note)"
meta method_note | grep -q "^lmrl validated in the machine profile but cannot be opened here: memwatch's catalogue has no lmrl for this CPU (unknown CPU" ||
    fail "unknown CPU: the lmrl note does not say the catalogue has no row: $(meta method_note)"
meta bw_method_note | grep -q "catalogue has no imc_cas for this CPU (unknown CPU" ||
    fail "unknown CPU: the imc_cas note does not say the catalogue has no row: $(meta bw_method_note)"
[ -z "$(meta lat_counters)$(meta bw_counters)" ] || fail "unknown CPU: counters opened"
# Zen 1 (EPYC 7601): its catalogue row has no lmrl (no MAB occupancy event)
CPU=$FX/cpuinfo/amd_epyc_7601_naples record "$FX/sysfs/zen3"
echo "Zen 1: method_note=$(meta method_note)"
meta method_note | grep -q "catalogue has no lmrl for this CPU (AMD Zen 1" ||
    fail "Zen 1: the lmrl note does not name the Zen 1 row: $(meta method_note)"

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
    # MEMWATCH_METHOD names a bandwidth method: the latency method is chosen
    # as with auto (the profile's), the bandwidth method is the one asked for
    profile lmrl ""
    record "$FX/sysfs/skx" MEMWATCH_METHOD=imc_cas
    meta bw_method_note | grep -q "^imc_cas requested by MEMWATCH_METHOD but cannot be opened here" ||
        fail "MEMWATCH_METHOD=imc_cas: bw_method_note '$(meta bw_method_note)'"
    meta method_note | grep -q "^lmrl validated in the machine profile but cannot be opened here" ||
        fail "MEMWATCH_METHOD=imc_cas: method_note '$(meta method_note)'"
fi

# MEMWATCH_METHOD=none (a keyword, not a method): no latency method although
# the profile names one, and not the profile's bandwidth method either
profile lmrl imc_cas
record "$FX/sysfs/skx" MEMWATCH_METHOD=none
[ "$(meta lat_method)" = none ] && [ -z "$(meta method_note)$(meta bw_method_note)" ] ||
    fail "MEMWATCH_METHOD=none: lat_method '$(meta lat_method)', notes '$(meta method_note)' '$(meta bw_method_note)'"
[ "$(q "SELECT COUNT(*) FROM intervals WHERE lat_method != '' OR bw_method != '' OR latency_ns > 0")" = 0 ] ||
    fail "MEMWATCH_METHOD=none: intervals with a method or a latency"

# Where a bandwidth method opens: the profiler's plumbing, with memory-
# controller PMUs that are the software cpu-clock in disguise
# (fixtures/sysfs_swbw/README.md): each of the method's two events counts the
# ns CPU 0 was counted, so an interval carries about 2 x 64 x its length.
SW=${MW_SOURCE_DIR:?}/tests/method_read/fixtures/sysfs_swbw
# Both bandwidth methods, each with the CPU whose catalogue row names it.
for bwm in amd_umc imc_cas; do
case $bwm in amd_umc) export CPU=$FX/proc/zen4 ;; imc_cas) export CPU=$FX/proc/skx ;; esac
profile "" "$bwm"
record "$SW"
bc=$(meta bw_counters)
echo "disguised $bwm: bw_counters=$bc bw_method_note=$(meta bw_method_note)"
if [ -z "$bc" ]; then
    if [ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ]; then
        fail "system-wide counting is allowed here, but $bwm did not open: $(meta bw_method_note)"
    fi
    meta bw_method_note | grep -Eq "paranoid|CAP_PERFMON|CAP_SYS_ADMIN" ||
        fail "the refusal does not name the privilege: $(meta bw_method_note)"
    echo "bandwidth success path not checked: system-wide counting is not allowed for this user"
    echo PASS
    exit 0
fi
case "$bc" in "$bwm (validated in the machine profile): all DRAM traffic of the machine"*) ;;
*) fail "bw_counters: '$bc'" ;; esac
nb=$(q "SELECT COUNT(*) FROM intervals WHERE flags & 4 AND bytes IS NOT NULL AND bw_method = '$bwm'")
[ "$nb" -ge 8 ] || fail "only $nb intervals carry bytes"
[ "$(q "SELECT COUNT(*) FROM intervals WHERE flags & 4 AND bw_method != '$bwm'")" = 0 ] ||
    fail "bytes without the method's name"
# over the run together, from the end of the first interval with bytes to
# the end of the last: a reading the loaded machine takes late, or an
# interval that carries no bytes, moves bytes to the next interval with
# bytes, not out of the sum
ratio=$(q "WITH b AS (SELECT t_end, bytes FROM intervals WHERE flags & 4 AND bytes IS NOT NULL),
           f AS (SELECT MIN(t_end) AS t0 FROM b)
           SELECT SUM(bytes) / (128.0 * (MAX(t_end) - (SELECT t0 FROM f))) FROM b WHERE t_end > (SELECT t0 FROM f)")
echo "bytes / (2 x 64 x interval ns): $ratio over $nb intervals"
awk -v r="$ratio" 'BEGIN { exit !(r > 0.6 && r < 1.3) }' || fail "bytes per interval off: ratio $ratio"
[ "$(q "SELECT COUNT(*) FROM intervals WHERE lat_method NOT IN ('probe_lat', '')")" = 0 ] ||
    fail "the latency method changed with the bandwidth method"
"$MW" report "$T/out" --db "$T/db2" --no-symbols >"$T/sum.txt" 2>/dev/null || fail "report"
grep -q "^  DRAM bandwidth ($bwm): mean [0-9.]* GB/s" "$T/sum.txt" ||
    fail "the summary shows no DRAM bandwidth: $(grep -i bandwidth "$T/sum.txt")"

# a fork child closes the parent's descriptors and opens its own
PROG="$B/mr_app fork" record "$SW"
[ "$(q "SELECT COUNT(DISTINCT process_id) FROM meta WHERE key = 'bw_counters'")" = 2 ] ||
    fail "fork: bw_counters in $(q "SELECT COUNT(DISTINCT process_id) FROM meta WHERE key = 'bw_counters'") of 2 files"
[ "$(q "SELECT COUNT(DISTINCT process_id) FROM intervals WHERE flags & 4")" = 2 ] ||
    fail "fork: not both processes' intervals carry bytes"

# the program closes every descriptor and takes the numbers back for its own
# pipes: memwatch reads none of them and says that the method stopped
PROG="$B/mr_app takefds" record "$SW"
n=$(meta bw_method_note)
echo "takefds: $n"
case "$n" in "$bwm stopped: a descriptor of the counters was closed or replaced by the program; intervals carry no DRAM bytes from here on") ;;
*) fail "takefds: bw_method_note '$n'" ;; esac
[ "$(q "SELECT COUNT(*) FROM intervals WHERE flags & 4")" -ge 2 ] || fail "takefds: no bytes before the descriptors were taken"
done
unset CPU
echo "PASS"
