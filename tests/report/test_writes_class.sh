#!/usr/bin/env bash
# tests/report/test_writes_class.sh: memwatch report judges a process whose
# sampled loops write by the profile's threshold for loads that write
# (report/ingest_records.c, "loads that write"; docs/saturation.md).
# mwr_loops (a read, copy, triad, non-temporal or compute loop) recorded
# under test profiles of this machine (MEMWATCH_MACHINE names it), whose
# thresholds lie far apart so that the class alone decides the flags:
#  1. threshold 1 ns, writes 1e6 ns: read and compute stay flagged in every
#     interval with a reading; copy, triad and nt in none, their intervals
#     carry 1e6 ns, META mix_curve (newest) and the text say why, the band
#     is the writes' band;
#  2. the other way round (1e6, writes 1 ns): copy flagged everywhere, read
#     nowhere;
#  3. a profile without a writes threshold: copy keeps the recorder's flags.
set -u
[ -n "${MW_SAN_PRELOAD:-}" ] && export LD_PRELOAD=$MW_SAN_PRELOAD
B=${MW_BUILD_DIR:?}
MW=$B/memwatch
L=$B/mwr_loops
[ -f "$B/libmemwatch.so" ] || { echo "SKIP: libmemwatch.so is not built"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 command is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/mw_writes.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAILED: $*"; fail=1; }
ok() { echo "ok: $*"; }
prof() { # FILE THRESHOLD [WRITES_THRESHOLD]
  {
    printf '{"schema": "memwatch-profile", "version": 1, "identity": "mw-writes-test",'
    printf ' "created": "2026-01-01T00:00:00Z", "peak_bw": 40e9, "idle_latency_ns": 100,'
    printf ' "lat_method": "probe_lat", "lat_threshold_ns": %s, "bw_method": "", "bw_factor": 1,' "$2"
    printf ' "saturable": true, "threshold_band_ns": [%s, %s], "threshold_from": "shapes"' "$2" "$2"
    [ -n "${3:-}" ] && printf ', "writes_threshold_ns": %s, "writes_band_ns": [%s, 2e6]' "$3" "$3"
    printf '}\n'
  } >"$1"
}
# rec NAME PROFILE MODE: records, reports; prints "intervals flagged threshold"
rec() {
  MEMWATCH_MACHINE=mw-writes-test MEMWATCH_PROFILE=$2 MEMWATCH_RATE=1000 \
    "$MW" record -q -o "$tmp/$1" -- "$L" "$3" 400 >/dev/null 2>"$tmp/$1.err" ||
    { bad "$1: record failed: $(tail -3 "$tmp/$1.err")"; return; }
  "$MW" report "$tmp/$1" >"$tmp/$1.txt" 2>&1 || { bad "$1: report failed: $(tail -3 "$tmp/$1.txt")"; return; }
  sqlite3 "$tmp/$1/memwatch.db" "select count(*), coalesce(sum(bw_bound), 0), max(threshold_ns)
    from intervals where latency_ns is not null"
}
curve() { sqlite3 "$tmp/$1/memwatch.db" "select value from meta where key = 'mix_curve' order by rowid desc limit 1"; }

prof "$tmp/p1.json" 1 1e6
for m in read compute copy triad nt; do
  r=$(rec "$m" "$tmp/p1.json" "$m"); echo "$m: $r (intervals, flagged, threshold)"
  n=${r%%|*}; f=$(cut -d'|' -f2 <<<"$r"); t=$(cut -d'|' -f3 <<<"$r")
  [ "${n:-0}" -ge 10 ] || { bad "$m: only ${n:-no} intervals with a reading"; continue; }
  case $m in
  read | compute)
    [ "$f" = "$n" ] && ok "$m: judged by the threshold (1 ns): every interval flagged" ||
      bad "$m: $f of $n flagged under a 1 ns threshold"
    curve "$m" | grep -q "for loads that write" && bad "$m: judged as a load that writes: $(curve "$m")"
    curve "$m" | grep -q "^shapes: placed on the loads that only read" ||
      bad "$m: mix_curve '$(curve "$m")'" ;;
  *)
    [ "$f" = 0 ] && [ "${t%.*}" = 1000000 ] && ok "$m: judged by the writes' threshold (1e6 ns): none flagged" ||
      bad "$m: $f of $n flagged, threshold $t"
    curve "$m" | grep -q "^shapes: for loads that write, .* [0-9]* % of their traffic as reads" &&
      ok "$m: META mix_curve: $(curve "$m" | cut -c1-140)" || bad "$m: mix_curve '$(curve "$m")'"
    grep -q "threshold from the load shapes: for loads that write" "$tmp/$m.txt" &&
      grep -q "uncertainty band 1000000.0-2000000.0 ns" "$tmp/$m.txt" &&
      ! grep -q "placed on the loads that only read" "$tmp/$m.txt" &&
      ok "$m: the text names the writes' threshold and band alone" ||
      bad "$m: text: $(grep -E 'threshold|band' "$tmp/$m.txt")" ;;
  esac
done
prof "$tmp/p2.json" 1e6 1
r=$(rec copy2 "$tmp/p2.json" copy); n=${r%%|*}; f=$(cut -d'|' -f2 <<<"$r")
[ "${n:-0}" -ge 10 ] && [ "$f" = "$n" ] && ok "writes' threshold 1 ns: copy flagged in all $n intervals" ||
  bad "writes' threshold 1 ns: copy $r"
r=$(rec read2 "$tmp/p2.json" read); f=$(cut -d'|' -f2 <<<"$r")
[ "$f" = 0 ] && ok "threshold 1e6 ns: read flagged in none" || bad "threshold 1e6 ns: read $r"
prof "$tmp/p3.json" 1
r=$(rec copy3 "$tmp/p3.json" copy); n=${r%%|*}; f=$(cut -d'|' -f2 <<<"$r")
[ "${n:-0}" -ge 10 ] && [ "$f" = "$n" ] && ! curve copy3 | grep -q "loads that write" &&
  ok "no writes' threshold in the profile: copy keeps the recorder's flags ($f of $n)" ||
  bad "no writes' threshold: copy $r, $(curve copy3)"
exit $fail
