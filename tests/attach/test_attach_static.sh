#!/usr/bin/env bash
# tests/attach/test_attach_static.sh: a statically linked program under
# `memwatch record --` (no dynamic loader, so no LD_PRELOAD) is sampled from
# outside by the external sampler (cli/attach.c, docs/attach.md): record
# says so, the program's output and status are those of a run without
# memwatch, the raw file says mode=attach, and the report names the same
# top lines (triad's loop and compute's chain in static_triad.c) as the
# dynamic build of the same source recorded through libmemwatch.so, and its
# stacks unwind (no .eh_frame_hdr in a static link: sampling/unwind.c).
# Skipped (77) only where no static libc exists to link it.
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
dyn=$(find "$B" -name mwa_triad_dyn -type f -perm -u+x | head -1)
st=$(find "$B" -name mwa_triad_static -type f -perm -u+x | head -1)
[ -x "$mw" ] && [ -n "$dyn" ] || { echo "SKIP: memwatch or mwa_triad_dyn not built"; exit 77; }
[ -n "$st" ] || { echo "SKIP: static linking is impossible here (no static libc: gcc -static fails), so mwa_triad_static was not built"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/mw_attach_static.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAILED: $*"; fail=1; }
args="20 100000000"
"$dyn" $args >"$tmp/plain.out"; rc0=$?
"$mw" record -o "$tmp/st" -- "$st" $args >"$tmp/st.out" 2>"$tmp/st.err"; rc=$?
[ $rc = $rc0 ] && ok "static: status $rc, as without memwatch" || bad "static: status $rc, expected $rc0: $(cat "$tmp/st.err")"
cmp -s "$tmp/plain.out" "$tmp/st.out" && ok "static: output unchanged ($(cat "$tmp/st.out"))" ||
    bad "static: output '$(cat "$tmp/st.out")', expected '$(cat "$tmp/plain.out")'"
grep -q "statically linked" "$tmp/st.err" && grep -q "sampling it from outside" "$tmp/st.err" &&
    ok "static: record says it samples from outside" || bad "static: '$(cat "$tmp/st.err")'"
"$mw" record -q -o "$tmp/dy" -- "$dyn" $args >"$tmp/dy.out" 2>"$tmp/dy.err" || bad "dynamic: $(cat "$tmp/dy.err")"
for v in st dy; do
    "$mw" report "$tmp/$v" --db "$tmp/$v.db" --json --top 10 >"$tmp/$v.json" 2>"$tmp/$v.rep.err" ||
        bad "$v: report failed: $(cat "$tmp/$v.rep.err")"
done
python3 - "$tmp/st.db" "$tmp/st.json" "$tmp/dy.json" <<'PY' || fail=1
import json, sqlite3, sys
bad = 0
def check(what, cond, detail=""):
    global bad
    print(("ok: " if cond else "FAILED: ") + what + (": " + detail if detail else ""))
    bad |= not cond
meta = dict(sqlite3.connect(sys.argv[1]).execute("SELECT key, value FROM meta"))
check("static: META mode=attach", meta.get("mode") == "attach", str(meta.get("mode")))
def top(path):
    d = json.load(open(path))
    rows = [l for l in d["overall"]["lines"] if l.get("file", "").endswith("static_triad.c")]
    total = sum(l["samples"] for l in d["overall"]["lines"]) or 1
    return {(l["function"], l["line"]): l["samples"] / total for l in rows}
s, y = top(sys.argv[2]), top(sys.argv[3])
# the lines holding at least 10 % of the samples: the triad loop and the
# compute chain, in both builds
hs = {k for k, v in s.items() if v >= 0.10}
hy = {k for k, v in y.items() if v >= 0.10}
check("static: the triad and compute lines are named",
      {f for f, _ in hs} >= {"triad", "compute"}, str(sorted(s.items())))
check("dynamic: the triad and compute lines are named",
      {f for f, _ in hy} >= {"triad", "compute"}, str(sorted(y.items())))
check("static and dynamic name the same top lines", hs == hy, f"static {sorted(hs)}, dynamic {sorted(hy)}")
# a static program has no .eh_frame_hdr: the report's unwinder builds its
# search table from .eh_frame (sampling/unwind.c); its stacks reach main
st = json.load(open(sys.argv[2]))["stacks"]
check("static: the stacks are unwound (not cut at the sampled function)",
      st["samples"] > 0 and st["samples_truncated"] <= 0.05 * st["samples"],
      f'{st["samples_truncated"]} of {st["samples"]} truncated')
sys.exit(bad)
PY
exit $fail
