#!/usr/bin/env bash
# tests/method_read/test_report_bw.sh: `memwatch report` shows the DRAM
# bandwidth of intervals that carry bytes from a bandwidth method (text and
# JSON), ignores bytes without MWR_IV_BW_VALID, and says nothing about DRAM
# bandwidth for a recording without it. Exit 0 pass, 1 fail, 77 skip.
set -u
B=${MW_BUILD_DIR:?}
MW=$B/memwatch
FX=$B/mwr_bw_fixture
T=$(mktemp -d /tmp/mw_rbw.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() {
    echo "FAIL: $*"
    exit 1
}
[ -x "$MW" ] && [ -x "$FX" ] || { echo "SKIP: memwatch or mwr_bw_fixture not built"; exit 77; }
"$FX" "$T/a.mwr" || fail "fixture"
"$MW" report "$T/a.mwr" --db "$T/a.db" --no-symbols >"$T/sum.txt" 2>"$T/err.txt" || fail "report: $(cat "$T/err.txt")"
cat "$T/sum.txt" | grep -E "latency method|DRAM"
# 3.5e8 bytes over the 40 ms of the four intervals with a reading = 8.75 GB/s;
# the highest, 2e8 bytes in 10 ms = 20 GB/s
grep -q "^  DRAM bandwidth (imc_cas): mean 8.75 GB/s, highest interval 20.00 GB/s (4 intervals)$" "$T/sum.txt" ||
    fail "the summary does not show the DRAM bandwidth: $(grep DRAM "$T/sum.txt")"
"$MW" report "$T/a.mwr" --db "$T/b.db" --no-symbols --json >"$T/sum.json" 2>/dev/null || fail "report --json"
python3 - "$T/sum.json" <<'PY' || fail "JSON bandwidth.dram"
import json, sys
d = json.load(open(sys.argv[1]))["bandwidth"]["dram"]
assert len(d) == 1 and d[0]["bw_method"] == "imc_cas", d
assert abs(d[0]["mean_gbs"] - 8.75) < 1e-9 and abs(d[0]["max_gbs"] - 20) < 1e-9, d
assert d[0]["intervals"] == 4, d
PY
if [ -x "$B/mwr_fixture" ]; then
    "$B/mwr_fixture" "$T/p.mwr" && "$MW" report "$T/p.mwr" --db "$T/p.db" --no-symbols >"$T/p.txt" 2>/dev/null ||
        fail "report of the probe-only fixture"
    grep -q "DRAM bandwidth" "$T/p.txt" && fail "a DRAM bandwidth line without a bandwidth method"
    grep -q "latency method probe_lat" "$T/p.txt" || fail "the probe-only summary lost its latency line"
fi
echo PASS
