#!/usr/bin/env bash
# tests/calibrate_bench/test_triad_compare_conv.sh: bench/triad_compare's
# conversions of likwid-bench and stress-ng output to real bytes/s, on output
# captured from the tools (no tool is run).
set -eu
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
python3 "${MW_SOURCE_DIR:?}/bench/triad_compare" --self-test
