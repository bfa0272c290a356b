#!/usr/bin/env bash
# tests/monitor/test_monitor_metrics.sh: what memwatch monitor serves
# (docs/monitor.md), with no profile, a foreign one and a test profile:
#  - promtool check metrics passes on the Prometheus text rendering with no
#    lint remark; the OpenMetrics rendering has its Content-Type, ends with
#    "# EOF", passes a strict OpenMetrics parser (Debian's
#    python3-prometheus-client, where installed) and has the same samples;
#  - profile status present / missing / foreign in memwatch_profile_info,
#    levels unknown without a profile, the bandwidth share omitted with its
#    reason where the profile has no curve, present where it has one;
#  - 404 for other paths, 405 for other methods, HEAD answered;
#  - bad options exit 2, a port in use exits 1 and says so; SIGTERM and
#    SIGINT stop it with status 0;
#  - docs/memwatch-monitor.rules.yml passes promtool check rules and its
#    unit test (tests/monitor/rules_test.yml); the Grafana panel is JSON;
#    the systemd unit passes systemd-analyze verify where that runs.
# Skipped (77) only where promtool is absent or the build has no HTTP server.
set -u
. "$(dirname "$0")/lib.sh"
command -v promtool >/dev/null || { echo "SKIP: promtool not found (Debian package prometheus)"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl not found"; exit 77; }
tmp=$(mktemp -d /tmp/mw_mon_metrics.XXXXXX)
trap 'mon_stop; rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAILED: $*"; fail=1; }
ok() { echo "ok: $*"; }
PY=/usr/bin/python3
$PY -c 'import prometheus_client.openmetrics.parser' 2>/dev/null || PY=""

# Both renderings of one scrape moment pass their checkers; same samples.
check_renderings() {
  local what=$1
  mon_scrape -D "$tmp/h.om" >"$tmp/m.om" || { bad "$what: no answer"; return; }
  mon_scrape -H 'Accept: text/plain; version=0.0.4' -D "$tmp/h.txt" >"$tmp/m.txt"
  grep -qi '^content-type: application/openmetrics-text; version=1.0.0; charset=utf-8' "$tmp/h.om" &&
    ok "$what: OpenMetrics Content-Type" || bad "$what: Content-Type: $(grep -i content-type "$tmp/h.om")"
  grep -qi '^content-type: text/plain; version=0.0.4' "$tmp/h.txt" ||
    bad "$what: text Content-Type: $(grep -i content-type "$tmp/h.txt")"
  [ "$(tail -n 1 "$tmp/m.om")" = "# EOF" ] && ok "$what: ends with # EOF" || bad "$what: last line '$(tail -n 1 "$tmp/m.om")'"
  grep -q '^# EOF' "$tmp/m.txt" && bad "$what: # EOF in the text format"
  local out rc
  out=$(promtool check metrics <"$tmp/m.txt" 2>&1); rc=$?
  [ $rc -eq 0 ] && [ -z "$out" ] && ok "$what: promtool check metrics (text format): clean" ||
    bad "$what: promtool check metrics: rc $rc: $out"
  # (promtool reads the 0.0.4 text format only: it knows no OpenMetrics
  # info type, and names counters by their _total sample)
  if [ -n "$PY" ]; then
    out=$($PY - "$tmp/m.om" "$tmp/m.txt" <<'PYEOF' 2>&1
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families as om
from prometheus_client.parser import text_string_to_metric_families as txt
a = {(s.name, tuple(sorted((k, v) for k, v in s.labels.items()))) for f in om(open(sys.argv[1]).read()) for s in f.samples}
b = {(s.name, tuple(sorted((k, v) for k, v in s.labels.items()))) for f in txt(open(sys.argv[2]).read()) for s in f.samples}
# the text parser reads an info family's sample as it is
d = a ^ b
if d:
    print("differ:", sorted(d)[:5]); sys.exit(1)
print(len(a), "samples")
PYEOF
)
    [ $? -eq 0 ] && ok "$what: strict OpenMetrics parser, same samples in both: $out" ||
      bad "$what: OpenMetrics parser: $out"
  else
    echo "note: python3-prometheus-client not installed: the strict OpenMetrics parse is skipped"
  fi
}

# 1. No profile (the hermetic HOME has none): levels unknown, status missing.
#    NVML named where no library is: the GPU metrics omitted, with the reason.
MEMWATCH_NVML_LIB=/nonexistent/libnvidia-ml.so.1 mon_start "$tmp/a.log" --interval 50ms
sleep 1
check_renderings "no profile"
grep -q 'memwatch_omitted_info{.*metric="memwatch_gpu_memory_busy_ratio",reason="NVML (the NVIDIA driver.s /nonexistent/libnvidia-ml.so.1) cannot be loaded: [^"]' "$tmp/m.om" &&
  grep -q "no GPU metrics: NVML.*/nonexistent/libnvidia-ml.so.1" "$tmp/a.log" &&
  ok "no NVML: the GPU metrics omitted, with the reason, in the metrics and the log" ||
  bad "no NVML: $(grep -i 'gpu' "$tmp/m.om" "$tmp/a.log" | head -5)"
grep -q '^memwatch_gpu_memory_busy_ratio' "$tmp/m.om" && bad "a GPU reading without NVML"
grep -q 'memwatch_profile_info{host="[^"]*",status="missing"' "$tmp/m.om" && ok "profile status missing" ||
  bad "no status=missing: $(grep profile_info "$tmp/m.om")"
u=$(mon_value 'memwatch_level_seconds_total{level="unknown"' <"$tmp/m.om")
m=$(mon_value memwatch_measured_seconds_total <"$tmp/m.om")
awk -v u="$u" -v m="$m" 'BEGIN { exit !(u > 0.5 && u == m) }' && ok "without a profile every second is unknown ($u of $m s)" ||
  bad "unknown seconds $u, measured $m"
grep -q 'memwatch_omitted_info{.*metric="memwatch_bandwidth_share_ratio",reason="no machine profile' "$tmp/m.om" &&
  ok "the share is omitted, with its reason" || bad "no omitted_info for the share"
grep -q '^memwatch_threshold_seconds' "$tmp/m.om" && bad "a threshold without a profile"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MON_PORT/")
[ "$code" = 404 ] && ok "GET / is 404" || bad "GET / answered $code"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MON_PORT/metrics/x")
[ "$code" = 404 ] || bad "GET /metrics/x answered $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -d x=1 "http://127.0.0.1:$MON_PORT/metrics")
[ "$code" = 405 ] && ok "POST is 405" || bad "POST answered $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -I "http://127.0.0.1:$MON_PORT/metrics")
[ "$code" = 200 ] && ok "HEAD is 200" || bad "HEAD answered $code"
mon_scrape >"$tmp/m2.om"
n1=$(mon_value memwatch_intervals_total <"$tmp/m.om"); n2=$(mon_value memwatch_intervals_total <"$tmp/m2.om")
[ "${n2%.*}" -gt "${n1%.*}" ] && ok "intervals advance ($n1 -> $n2)" || bad "intervals $n1 -> $n2"
grep -q '^memwatch_http_errors_total{host="[^"]*",reason="not_found"} 2$' "$tmp/m2.om" || bad "not_found count: $(grep not_found "$tmp/m2.om")"
# the port is taken now
"$MW" monitor --listen "127.0.0.1:$MON_PORT" >"$tmp/busy.log" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "Address already in use" "$tmp/busy.log" && ok "a port in use: exit 1, said" ||
  bad "port in use: rc $rc: $(cat "$tmp/busy.log")"
mon_stop; rc=$?
[ $rc -eq 0 ] && grep -q "Terminated: stopped after" "$tmp/a.log" && ok "SIGTERM: clean exit" || bad "SIGTERM: rc $rc: $(tail -2 "$tmp/a.log")"

# 2. Bad options.
for args in "--interval 5ms" "--interval 11s" "--interval x" "--bogus" "--listen" "--max-connections 0" \
            "--max-per-ip -1" "--http-timeout x"; do
  "$MW" monitor $args >"$tmp/o.log" 2>&1
  rc=$?
  [ $rc -eq 2 ] || bad "'monitor $args' exited $rc: $(cat "$tmp/o.log")"
done
ok "bad options exit 2"
for l in "127.0.0.1" "127.0.0.1:99999" "[::1" "no.such.host.invalid:1"; do
  "$MW" monitor --listen "$l" >"$tmp/o.log" 2>&1
  rc=$?
  [ $rc -eq 1 ] || bad "'--listen $l' exited $rc: $(cat "$tmp/o.log")"
done
ok "bad listen addresses exit 1"

# 3. A foreign profile, then the test profile (MEMWATCH_MACHINE names this
#    machine for it, as in the preload tests).
prof() { # IDENTITY THRESHOLD [CURVE]
  printf '{"schema": "memwatch-profile", "version": 1, "identity": "%s", "created": "2026-01-01T00:00:00Z",
  "peak_bw": 40e9, "idle_latency_ns": 100, "lat_method": "probe_lat", "lat_threshold_ns": %s,
  "bw_method": "", "bw_factor": 1, "saturable": true, "threshold_band_ns": [%s, %s]%s}\n' \
    "$1" "$2" "$(awk -v t="$2" 'BEGIN { print (t > 5 ? t - 5 : 0) }')" "$(awk -v t="$2" 'BEGIN { print t + 5 }')" "${3:-}"
}
prof other-machine 150 >"$tmp/foreign.json"
MEMWATCH_MACHINE=mw-monitor-test mon_start "$tmp/b.log" --interval 50ms --profile "$tmp/foreign.json"
sleep 0.5
mon_scrape >"$tmp/m.om"
grep -q 'memwatch_profile_info{host="[^"]*",status="foreign"' "$tmp/m.om" && ok "a foreign profile: status foreign" ||
  bad "foreign: $(grep profile_info "$tmp/m.om")"
mon_stop
# threshold 1 ns: every interval bound; with a curve, a share
prof mw-monitor-test 1 ', "curve": [[0, 0.5], [40e9, 1.5]]' >"$tmp/p.json"
MEMWATCH_MACHINE=mw-monitor-test mon_start "$tmp/c.log" --interval 50ms --profile "$tmp/p.json"
sleep 1.5
check_renderings "test profile"
grep -q 'memwatch_profile_info{host="[^"]*",status="present"' "$tmp/m.om" && ok "profile present" ||
  bad "present: $(grep profile_info "$tmp/m.om")"
t=$(mon_value memwatch_threshold_seconds <"$tmp/m.om")
[ "$t" = 1e-09 ] && ok "threshold served (1 ns)" || bad "threshold '$t'"
bnd=$(mon_value 'memwatch_level_seconds_total{level="bound"' <"$tmp/m.om"); m=$(mon_value memwatch_measured_seconds_total <"$tmp/m.om")
awk -v b="$bnd" -v m="$m" 'BEGIN { exit !(b > 0.5 && b == m) }' && ok "above a 1 ns threshold every second is bound ($bnd of $m s)" ||
  bad "bound $bnd of $m"
s=$(mon_value memwatch_bandwidth_share_ratio <"$tmp/m.om")
[ "$s" = 1 ] && ok "share at the curve's top: 1" || bad "share '$s'"
grep -q 'omitted_info{.*metric="memwatch_bandwidth_share_ratio"' "$tmp/m.om" && bad "share omitted although the profile has a curve"
# the GPUs of this machine: served where NVML lists one, else omitted with
# the reason (the driver's library found or not: either way one of them)
if grep -q '^memwatch_gpu_info{' "$tmp/m.om"; then
  n=$(grep -c '^memwatch_gpu_memory_busy_ratio{.*gpu="[0-9]*"} [0-9.e+-]*$' "$tmp/m.om")
  [ "$n" -ge 1 ] && ok "GPUs served: $(grep -c '^memwatch_gpu_info{' "$tmp/m.om"), memory busy ratio of $n" ||
    bad "GPU listed without a reading: $(grep '^memwatch_gpu' "$tmp/m.om" | head -4)"
else
  grep -q 'memwatch_omitted_info{.*metric="memwatch_gpu_memory_busy_ratio",reason="[^"]' "$tmp/m.om" &&
    ok "no GPU here: $(grep -o 'metric="memwatch_gpu_memory_busy_ratio",reason="[^"]*' "$tmp/m.om" | cut -c1-160)" ||
    bad "neither GPU metrics nor their reason"
fi
# /proc is read about once a second while bound, from the first bound
# interval on: a loaded machine may need a few scrapes for the second read
top=$(grep '^memwatch_process_bound_cpu_seconds_total' "$tmp/m.om" | head -1)
for ((i = 0; i < 50 && ${#top} == 0; i++)); do
  sleep 0.2
  top=$(mon_scrape | grep '^memwatch_process_bound_cpu_seconds_total' | head -1)
done
[ -n "$top" ] && ok "processes in bound intervals: ${top:0:120}" || bad "no process listed in bound intervals"
# cgroups: every process seen in one counts, so a cgroup's counter is at
# least what its served processes have; the counters never fall
mon_scrape >"$tmp/m1.om"
sleep 1.2
mon_scrape >"$tmp/m2.om"
python3 - "$tmp/m1.om" "$tmp/m2.om" <<'PY' && ok "cgroups in bound intervals: at least their processes' time, never falling" || bad "cgroup counters: $(grep cgroup_bound "$tmp/m2.om" | head -3)"
import re, sys
def parse(path):
    cg, pr = {}, {}
    for l in open(path):
        m = re.match(r'memwatch_cgroup_bound_cpu_seconds_total\{.*cgroup="([^"]*)"\} (\S+)', l)
        if m:
            cg[m.group(1)] = float(m.group(2))
        m = re.match(r'memwatch_process_bound_cpu_seconds_total\{.*cgroup="([^"]*)"\} (\S+)', l)
        if m:
            pr[m.group(1)] = pr.get(m.group(1), 0) + float(m.group(2))
    return cg, pr
cg1, _ = parse(sys.argv[1])
cg2, pr2 = parse(sys.argv[2])
ok = bool(cg2)
for c, v in pr2.items():
    # a cgroup among the 10 served holds at least its served processes' time
    if c in cg2 and cg2[c] + 1e-9 < v:
        print("cgroup %s: %g below its processes' %g" % (c, cg2[c], v)); ok = False
for c, v in cg1.items():
    if c in cg2 and cg2[c] + 1e-9 < v:
        print("cgroup %s fell from %g to %g" % (c, v, cg2[c])); ok = False
print("cgroups served: %d; %s" % (len(cg2), ", ".join("%s %.2f s" % (c[-40:], v) for c, v in sorted(cg2.items(), key=lambda x: -x[1])[:3])))
sys.exit(0 if ok else 1)
PY
kill -INT "$MON_PID"; wait "$MON_PID"; rc=$?; MON_PID=""
[ $rc -eq 0 ] && grep -q "Interrupt: stopped after" "$tmp/c.log" && ok "SIGINT: clean exit" || bad "SIGINT: rc $rc"

# 4. The rules, the panel, the unit.
cp "$S/docs/memwatch-monitor.rules.yml" "$S/tests/monitor/rules_test.yml" "$tmp/"
out=$(cd "$tmp" && promtool check rules memwatch-monitor.rules.yml 2>&1) && ok "promtool check rules" || bad "check rules: $out"
out=$(cd "$tmp" && promtool test rules rules_test.yml 2>&1) && ok "promtool test rules: the alert fires at 60 %, not at 40 %" ||
  bad "test rules: $out"
python3 -m json.tool "$S/docs/memwatch-monitor.grafana.json" >/dev/null && ok "Grafana panel is JSON" || bad "Grafana panel JSON"
if command -v systemd-analyze >/dev/null && command -v man >/dev/null; then
  mkdir -p "$tmp/man/man1" && cp "$S/docs/man/"*.1 "$tmp/man/man1/"
  sed "s|/usr/bin/memwatch|$MW|" "$S/docs/memwatch-monitor.service" >"$tmp/memwatch-monitor.service"
  out=$(cd "$tmp" && MANPATH="$tmp/man" systemd-analyze verify ./memwatch-monitor.service 2>&1)
  [ -z "$out" ] && ok "systemd-analyze verify: clean" || bad "systemd-analyze verify: $out"
else
  echo "note: systemd-analyze or man not found: the unit is not verified"
fi
exit $fail
