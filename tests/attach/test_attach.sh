#!/usr/bin/env bash
# tests/attach/test_attach.sh: memwatch record -p (cli/attach.c, docs/attach.md).
#  1. A running program (mwa_target: two threads spinning) gets attached,
#     a thread it starts afterwards is sampled too, a second memwatch on the
#     same pid is refused, Ctrl-C (SIGINT) detaches; the program runs on and
#     ends with the output of a run without memwatch. In the report: every
#     sample is timed after the attach (META start_monotonic_ns, itself
#     after the program printed its start), samples of the main thread and
#     of the late thread, META mode=attach, the program's own lines named.
#  2. --duration 1s detaches by itself; the file ends with end=detach.
#  3. A target that ends first: record returns 0 once it has gone, end=exit.
#  4. Errors, each with a non-zero status and its message: a pid of no
#     process, a process that has ended (a zombie), a pid given twice,
#     another user's process (as nobody, where this runs as root).
#  4b. A child the target forks after the attach is followed: a file of
#     its own, META attach=fork, its work sampled and named.
#  5. -p on a streaming and a computing program at once, and 6. --all while
#     they run (as root: one event per CPU): the per-process view names the
#     streaming one; META attach says per-CPU; a program started after the
#     recording began (by this shell, memwatch's parent, which --all per
#     process would not follow) is recorded with its samples.
#  6b. --all where CPU-wide events are refused (as nobody, where
#     perf_event_paranoid > 0): one line says what is missing, and the
#     caller's own processes are recorded per process.
# Every wait is for a fact (a line printed, a file), never a fixed time.
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
tgt=$(find "$B" -name mwa_target -type f -perm -u+x | head -1)
[ -x "$mw" ] && [ -n "$tgt" ] || { echo "SKIP: memwatch or mwa_target not built"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/mw_attach.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAILED: $*"; fail=1; }
# wait_for FILE REGEX: until a line of FILE matches (at most 120 s: a hang guard only)
wait_for() {
    local i
    for ((i = 0; i < 2400; i++)); do
        grep -qE "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    echo "FAILED: waited in vain for '$2' in $1: $(cat "$1" 2>/dev/null)"
    return 1
}
# the output of a run without memwatch (go exists from the start)
mkdir -p "$tmp/ref"
touch "$tmp/ref/go"
"$tgt" "$tmp/ref" >"$tmp/ref.out" || { echo "FAILED: the reference run"; exit 1; }
want=$(grep '^result' "$tmp/ref.out")
[ -n "$want" ] || { echo "FAILED: no result line in the reference run"; exit 1; }

# start_target NAME: runs mwa_target with its own folder; sets T (pid) and TD
start_target() {
    TD=$tmp/$1
    mkdir -p "$TD"
    "$tgt" "$TD" >"$TD/out" 2>"$TD/err" &
    T=$!
    pids+=("$T")
    wait_for "$TD/out" '^ready ' || exit 1
}
# finish_target: lets it end, checks its status and output
finish_target() {
    touch "$TD/go"
    wait "$T"; local rc=$?
    [ $rc = 0 ] && ok "$1: the program ended with status 0" || bad "$1: the program ended with status $rc"
    [ "$(grep '^result' "$TD/out")" = "$want" ] && ok "$1: its output is unchanged ($want)" ||
        bad "$1: output '$(cat "$TD/out")', expected '$want'"
}

# ---- 1. attach, a late thread, twice, Ctrl-C ----
start_target one
ready_ns=$(awk '/^ready/ {print $3}' "$TD/out")
"$mw" record -o "$tmp/raw1" -p "$T" 2>"$tmp/rec1.err" >"$tmp/rec1.out" &
M=$!
pids+=("$M")
wait_for "$tmp/rec1.err" "attached to pid $T" || exit 1
touch "$TD/more"
wait_for "$TD/out" '^late ' || exit 1
late=$(awk '/^late/ {print $2}' "$TD/out")
"$mw" record -o "$tmp/raw-twice" -p "$T" 2>"$tmp/twice.err"; rc=$?
[ $rc != 0 ] && grep -q "already attached" "$tmp/twice.err" &&
    ok "twice: refused with status $rc: $(head -1 "$tmp/twice.err")" ||
    bad "twice: status $rc, '$(cat "$tmp/twice.err")'"
[ -e "$tmp/raw-twice" ] && bad "twice: the refused run left its directory" || ok "twice: no directory left"
kill -INT "$M"
wait "$M"; rc=$?
[ $rc = 0 ] && ok "Ctrl-C: memwatch record returned 0" || bad "Ctrl-C: memwatch record returned $rc: $(cat "$tmp/rec1.err")"
grep -q "detached" "$tmp/rec1.err" && ok "Ctrl-C: it says it detached" || bad "Ctrl-C: '$(cat "$tmp/rec1.err")'"
kill -0 "$T" 2>/dev/null && ok "the program still runs after the detach" || bad "the program did not survive the detach"
finish_target attach
"$mw" report "$tmp/raw1" --db "$tmp/one.db" --json >"$tmp/one.json" 2>"$tmp/one.rep.err" ||
    { bad "report: $(cat "$tmp/one.rep.err")"; }
python3 - "$tmp/one.db" "$tmp/one.json" "$T" "$late" "$ready_ns" <<'PY' || fail=1
import json, sqlite3, sys
db, js, pid, late, ready = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
c = sqlite3.connect(db)
meta = dict(c.execute("SELECT key, value FROM meta"))
bad = 0
def check(what, cond, detail=""):
    global bad
    print(("ok: " if cond else "FAILED: ") + what + (": " + detail if detail else ""))
    bad |= not cond
check("META mode=attach", meta.get("mode") == "attach", str(meta.get("mode")))
check("META says what the external mode cannot give", "allocation sites" in meta.get("attach_missing", ""))
start = int(meta.get("start_monotonic_ns", "0"))
check("the attach came after the program's start", start > ready, f"{start} vs {ready}")
n, tmin = c.execute("SELECT count(*), min(time_ns) FROM samples").fetchone()
check("samples were taken", n > 0, f"{n}")
check("every sample is from after the attach", n > 0 and tmin >= start, f"first {tmin}, attach {start}")
tids = {r[0]: r[1] for r in c.execute("SELECT tid, count(*) FROM samples GROUP BY tid")}
check("the main thread was sampled", tids.get(pid, 0) > 0, str(tids))
check("the thread started after the attach was sampled", tids.get(late, 0) > 0, str(tids))
check("at least three threads were sampled", len(tids) >= 3, str(tids))
iv = c.execute("SELECT count(*) FROM intervals").fetchone()[0]
check("intervals were written", iv > 0, str(iv))
d = json.load(open(js))
files = {l.get("file", "").rsplit("/", 1)[-1] for l in d["overall"]["lines"]}
check("the report names the program's lines", "attach_target.c" in files, str(files))
sys.exit(bad)
PY

# ---- 2. --duration ----
start_target two
"$mw" record -q -o "$tmp/raw2" -p "$T" --duration 1s 2>"$tmp/rec2.err"; rc=$?
[ $rc = 0 ] && ok "--duration 1s: returned 0 by itself" || bad "--duration: status $rc: $(cat "$tmp/rec2.err")"
kill -0 "$T" 2>/dev/null && ok "--duration: the program still runs" || bad "--duration: the program is gone"
tr -c '[:print:]' '\n' <"$(ls "$tmp"/raw2/*.mwr | head -1)" | grep -qx "end=detach" &&
    ok "--duration: the file ends with end=detach" || bad "--duration: no end=detach in the file"
"$mw" report --db "$tmp/raw2.db" "$tmp/raw2" >"$tmp/rep2" 2>&1
grep -q "detached: memwatch let go and the process ran on" "$tmp/rep2" &&
    ok "--duration: the report says the process was detached" ||
    bad "--duration: report: $(grep -m1 '^  pid' "$tmp/rep2")"
finish_target duration

# ---- 3. the target ends first ----
start_target three
"$mw" record -o "$tmp/raw3" -p "$T" 2>"$tmp/rec3.err" &
M=$!
pids+=("$M")
wait_for "$tmp/rec3.err" "attached to pid $T" || exit 1
finish_target "ends first"
wait "$M"; rc=$?
[ $rc = 0 ] && ok "ends first: memwatch record returned 0 after the program ended" ||
    bad "ends first: status $rc: $(cat "$tmp/rec3.err")"
tr -c '[:print:]' '\n' <"$(ls "$tmp"/raw3/*.mwr | head -1)" | grep -qx "end=exit" &&
    ok "ends first: the file ends with end=exit" || bad "ends first: no end=exit in the file"
"$mw" report --db "$tmp/raw3.db" "$tmp/raw3" >"$tmp/rep3" 2>&1
grep -q "ended while attached; its exit status went to its parent" "$tmp/rep3" &&
    ok "ends first: the report does not invent an exit status" ||
    bad "ends first: report: $(grep -m1 '^  pid' "$tmp/rep3")"

# ---- 4. errors ----
sh -c 'exit 0' & gone=$!
wait "$gone"
if kill -0 "$gone" 2>/dev/null; then
    echo "note: pid $gone was reused at once; the no-such-process case is skipped"
else
    "$mw" record -o "$tmp/raw4" -p "$gone" 2>"$tmp/e1"; rc=$?
    [ $rc != 0 ] && grep -q "no such process" "$tmp/e1" && ok "no such process: status $rc: $(cat "$tmp/e1")" ||
        bad "no such process: status $rc, '$(cat "$tmp/e1")'"
    [ -e "$tmp/raw4" ] && bad "no such process: a directory was left" || ok "no such process: no directory left"
fi
# a zombie: a child that has exited, which its parent never reaps
python3 -c 'import os, sys, time
p = os.fork()
if p == 0:
    os._exit(0)
print(p, flush=True)
time.sleep(600)' >"$tmp/z.out" &
zp=$!
pids+=("$zp")
wait_for "$tmp/z.out" '^[0-9]+$' || exit 1
z=$(cat "$tmp/z.out")
for ((i = 0; i < 2400; i++)); do
    [ "$(sed 's/.*) //' "/proc/$z/stat" 2>/dev/null | cut -c1)" = Z ] && break
    sleep 0.05
done
"$mw" record -o "$tmp/raw5" -p "$z" 2>"$tmp/e2"; rc=$?
[ $rc != 0 ] && grep -qE "ended|no such process" "$tmp/e2" && ok "ended during the attach: status $rc: $(cat "$tmp/e2")" ||
    bad "ended during the attach: status $rc, '$(cat "$tmp/e2")'"
kill "$zp" 2>/dev/null
"$mw" record -o "$tmp/raw6" -p "$$,$$" 2>"$tmp/e3"; rc=$?
[ $rc != 0 ] && grep -q "twice" "$tmp/e3" && ok "a pid given twice: status $rc" || bad "a pid given twice: status $rc, '$(cat "$tmp/e3")'"
"$mw" record -o "$tmp/raw7" -p "$$" -- true 2>"$tmp/e4"; rc=$?
[ $rc = 2 ] && ok "-p with a program: status 2" || bad "-p with a program: status $rc"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    start_target four
    mkdir -m 777 "$tmp/nobody"
    chmod 755 "$tmp"
    (cd "$tmp/nobody" && setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
        "$mw" record -o "$tmp/nobody/raw" -p "$T") 2>"$tmp/e5"; rc=$?
    [ $rc != 0 ] && grep -q "CAP_PERFMON" "$tmp/e5" && ok "another user's process: status $rc: $(cat "$tmp/e5")" ||
        bad "another user's process: status $rc, '$(cat "$tmp/e5")'"
    kill -0 "$T" 2>/dev/null && ok "another user's process: it runs on" || bad "another user's process: it is gone"
    finish_target "another user"
else
    echo "note: another user's process not tried (needs root and setpriv to become nobody)"
fi

# ---- 4b. a child forked after the attach is followed ----
start_target forked
"$mw" record -o "$tmp/rawf" -p "$T" 2>"$tmp/recf.err" >"$tmp/recf.out" &
M=$!
pids+=("$M")
wait_for "$tmp/recf.err" "attached to pid $T" || exit 1
touch "$TD/fork"
wait_for "$TD/out" '^child ' || exit 1
cpid=$(awk '/^child/ {print $2}' "$TD/out")
wait_for "$tmp/recf.err" "pid $cpid: forked by pid $T, followed" || exit 1
kill -INT "$M"
wait "$M"; rc=$?
[ $rc = 0 ] && ok "fork: memwatch record returned 0" || bad "fork: status $rc: $(cat "$tmp/recf.err")"
finish_target fork
cf=""
for f in "$tmp"/rawf/*.mwr; do
    tr -c '[:print:]' '\n' <"$f" | grep -qx "pid=$cpid" && cf=$f
done
[ -n "$cf" ] && tr -c '[:print:]' '\n' <"$cf" | grep -qx "attach=fork: a child of pid $T, followed from its fork" &&
    ok "fork: the child $cpid has a file of its own, its META says it was followed from pid $T" ||
    bad "fork: no file for the child $cpid among $(ls "$tmp/rawf")"
if [ -n "$cf" ] && command -v sqlite3 >/dev/null; then
    "$mw" report -q --db "$tmp/rawf.db" "$tmp/rawf" >/dev/null 2>&1
    # its samples whose stack holds child_work (spin is the leaf)
    cs=$(sqlite3 "$tmp/rawf.db" "WITH RECURSIVE ch(sid, id) AS (SELECT s.id, s.stack_id FROM samples s
            JOIN processes p ON p.id = s.process_id WHERE p.pid = $cpid
          UNION ALL SELECT ch.sid, st.parent_id FROM ch JOIN stacks st ON st.id = ch.id WHERE st.parent_id IS NOT NULL)
        SELECT count(DISTINCT ch.sid) FROM ch JOIN stacks st ON st.id = ch.id JOIN pcs c ON c.id = st.pc_id
        WHERE c.function = 'child_work'")
    echo "fork: $cs samples of the child under child_work"
    [ "${cs:-0}" -ge 5 ] && ok "fork: the child's work is sampled and named ($cs samples under child_work)" ||
        bad "fork: ${cs:-0} samples of the child under child_work"
fi

# ---- 5. two programs at once: which one was at memory accesses ----
# A streaming program and a computing one attached together, every interval
# flagged (MEMWATCH_THRESHOLD_NS=1: this VM cannot saturate memory): the
# per-process view gives the streaming one its samples at memory accesses in
# flagged intervals, the computing one none (docs/data-addresses.md)
D=$B/mwd_data
if [ -x "$D" ]; then
    "$D" triad 60000 &
    sp=$!
    "$D" compute 60000 &
    cp=$!
    pids+=("$sp" "$cp")
    for ((i = 0; i < 400; i++)); do # until both have run a while (CPU ticks in /proc)
        [ "$(awk '{ print $14 }' "/proc/$sp/stat")" -ge 20 ] 2>/dev/null &&
            [ "$(awk '{ print $14 }' "/proc/$cp/stat")" -ge 20 ] 2>/dev/null && break
        sleep 0.05
    done
    MEMWATCH_THRESHOLD_NS=1 "$mw" record -q -o "$tmp/raw8" -p "$sp,$cp" --duration 2s 2>"$tmp/e8" ||
        bad "two programs: $(cat "$tmp/e8")"
    kill "$sp" "$cp" 2>/dev/null
    "$mw" report --db "$tmp/raw8.db" --by process "$tmp/raw8" >"$tmp/by8" 2>&1
    sed -n '/^By process/,$p' "$tmp/by8"
    row() { grep -E "^  $1 " "$tmp/by8" | sed -n 's/.*\[\([0-9]*\)%, \([0-9]*\) in flagged intervals\]$/\1 \2/p'; }
    read -r smem sfl <<<"$(row "$sp")"
    read -r cmem cfl <<<"$(row "$cp")"
    echo "two programs: streaming pid $sp at memory ${smem:-?}% (${sfl:-?} in flagged intervals), computing pid $cp ${cmem:-?}% (${cfl:-?})"
    [ "${smem:-0}" -ge 80 ] && [ "${sfl:-0}" -ge 20 ] && [ "${cmem:-100}" -le 5 ] && [ "${cfl:-1}" -lt "${sfl:-0}" ] &&
        ok "the per-process view names the streaming program as the one at memory accesses in flagged intervals" ||
        bad "two programs: $(sed -n '/^By process/,$p' "$tmp/by8")"
    # no allocation records from outside: its arrays are named by their
    # anonymous mapping (/proc/PID/maps)
    grep -E "^  $sp " "$tmp/by8" | grep -q "anonymous mapping at 0x" &&
        ok "the streaming program's data: its anonymous mapping" ||
        bad "the streaming program's data is not named: $(grep -E "^  $sp " "$tmp/by8")"

    # ---- 6. the whole machine: --all while the same two programs run ----
    # As root: one cpu-clock event per CPU, every process that runs gets its
    # own file from its first record; the per-process view names the
    # streaming one as above, among all the others (ctest, whatever else
    # runs here; another test's streaming program may run beside it, so only
    # the two are compared). A third program, started once the recording
    # runs, is recorded too.
    utime() { awk '{ print $14 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
    if [ "$(id -u)" = 0 ]; then
        "$D" triad 60000 &
        sp=$!
        "$D" compute 60000 &
        cp=$!
        pids+=("$sp" "$cp")
        for ((i = 0; i < 400; i++)); do
            [ "$(utime "$sp")" -ge 20 ] && [ "$(utime "$cp")" -ge 20 ] && break
            sleep 0.05
        done
        MEMWATCH_THRESHOLD_NS=1 "$mw" record -o "$tmp/raw9" --all 2>"$tmp/e9" >/dev/null &
        M=$!
        pids+=("$M")
        wait_for "$tmp/e9" "sampling every process per CPU" || exit 1
        s0=$(utime "$sp")
        "$D" compute 60000 & # started after the recording began
        lp=$!
        pids+=("$lp")
        # until the late one has run 200 ms and the streaming one 1 s more (CPU ticks)
        for ((i = 0; i < 2400; i++)); do
            [ "$(utime "$lp")" -ge 20 ] && [ "$(utime "$sp")" -ge $((s0 + 100)) ] && break
            sleep 0.05
        done
        kill -INT "$M"
        wait "$M"; rc=$?
        [ $rc = 0 ] && ok "--all: memwatch record returned 0 after Ctrl-C" || bad "--all: status $rc: $(cat "$tmp/e9")"
        grep -q "attaching to each of" "$tmp/e9" && bad "--all fell back to per-process attach as root: $(cat "$tmp/e9")"
        cat "/proc/$sp/cgroup" >"$tmp/cg9" 2>/dev/null
        kill "$sp" "$cp" "$lp" 2>/dev/null
        nf=$(ls "$tmp/raw9" | grep -c '\.mwr$')
        "$mw" report --db "$tmp/raw9.db" --by process --top 1000 "$tmp/raw9" >"$tmp/by9" 2>&1
        row9() { grep -E "^  $1 " "$tmp/by9" | sed -n 's/.*\[\([0-9]*\)%, \([0-9]*\) in flagged intervals\]$/\1 \2/p'; }
        read -r smem sfl <<<"$(row9 "$sp")"
        read -r cmem cfl <<<"$(row9 "$cp")"
        top=$(sed -n '/^By process/,$p' "$tmp/by9" | grep -E '^  [0-9]+ ' |
              sed -n 's/^  \([0-9]*\) .*\[[0-9]*%, \([0-9]*\) in flagged intervals\]$/\2 \1/p' | sort -rn | head -1)
        echo "--all: $nf files; streaming pid $sp at memory ${smem:-?}% (${sfl:-?} in flagged intervals), computing pid $cp ${cmem:-?}% (${cfl:-?}); most in flagged intervals: pid ${top#* }"
        [ "$nf" -ge 3 ] && ok "--all: $nf processes attached, each in its own file" || bad "--all: $nf raw files"
        [ "${smem:-0}" -ge 80 ] && [ "${sfl:-0}" -ge 20 ] && [ "${cmem:-100}" -le 5 ] && [ "${cfl:-1}" -lt "${sfl:-0}" ] &&
            ok "--all: the per-process view names the streaming program as the one at memory accesses in flagged intervals" ||
            bad "--all: $(sed -n '/^By process/,$p' "$tmp/by9" | head -20)"
        # the same processes by user and by cgroup: every process in one row
        # (the counts in parentheses add up), root's own row, and the
        # streaming program's samples at memory accesses in its groups' rows
        np=$(sqlite3 "$tmp/raw9.db" "select count(*) from processes" 2>/dev/null || echo 0)
        for g in user cgroup; do
            "$mw" report --db "$tmp/raw9.db" --by $g --top 1000 "$tmp/raw9" >"$tmp/g9" 2>&1
            sum=$(sed -n "/^By $g/,\$p" "$tmp/g9" | grep -E '^  \S' | grep -v "^  $g " |
                  sed -n 's/^  .* (\([0-9]*\)) .*/\1/p' | awk '{ n += $1 } END { print n + 0 }')
            gfl=$(sed -n "/^By $g/,\$p" "$tmp/g9" | sed -n 's/.*, \([0-9]*\) in flagged intervals\]$/\1/p' |
                  sort -rn | head -1)
            echo "--by $g: $sum of $np processes in its rows, at most ${gfl:-?} samples at memory accesses in flagged intervals in one"
            [ "$sum" = "$np" ] && [ "$np" -ge 3 ] && ok "--by $g: every process in one row" ||
                bad "--by $g: $sum of $np processes: $(cat "$tmp/g9")"
            [ "${gfl:-0}" -ge "${sfl:-1}" ] && ok "--by $g: the streaming program's samples in its row" ||
                bad "--by $g: $(cat "$tmp/g9")"
        done
        grep -qE '^  root \([0-9]+\) ' <("$mw" report --db "$tmp/raw9.db" --by user "$tmp/raw9" 2>&1) &&
            ok "--by user: root's row" || bad "--by user: no row for root"
        mcg=$(sqlite3 "$tmp/raw9.db" "select value from meta m join processes p on p.id = m.process_id where p.pid = $sp and m.key = 'cgroup'")
        [ -n "$mcg" ] && grep -qE "^[0-9]+:[^:]*:$mcg\$" "$tmp/cg9" &&
            ok "META cgroup: the streaming program's, one of /proc/$sp/cgroup's paths ($mcg)" ||
            bad "META cgroup of pid $sp is '$mcg', /proc/$sp/cgroup: $(tr '\n' ' ' <"$tmp/cg9")"
        how=$(sqlite3 "$tmp/raw9.db" "select value from meta m join processes p on p.id = m.process_id where p.pid = $sp and m.key = 'attach'")
        [ "$how" = "cpu: memwatch record --all, per-CPU events" ] &&
            ok "META attach: $how" || bad "META attach of pid $sp is '$how'"
        # the program started after the recording began: its own file (the
        # image that exec'ed mwd_data) with its samples under compute
        ls=$(sqlite3 "$tmp/raw9.db" "select count(*) from samples s join processes p on p.id = s.process_id
            where p.pid = $lp and p.exe like '%/mwd_data'")
        lt=$(sqlite3 "$tmp/raw9.db" "select min(s.time_ns) - (select min(cast(value as integer)) from meta m join processes q on q.id = m.process_id
            where q.pid = $sp and m.key = 'start_monotonic_ns') from samples s join processes p on p.id = s.process_id where p.pid = $lp")
        echo "--all: the late program (pid $lp): ${ls:-0} samples, the first ${lt:-?} ns after the recording began"
        [ "${ls:-0}" -ge 5 ] && [ "${lt:--1}" -gt 0 ] 2>/dev/null &&
            ok "--all: a program started after the recording began is recorded (${ls} samples)" ||
            bad "--all: the program started after the recording began (pid $lp): ${ls:-0} samples; files: $(sqlite3 "$tmp/raw9.db" "select pid, exe from processes where pid = $lp")"
    else
        echo "note: --all not tried (needs root here: perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid))"
    fi

    # ---- 6b. --all where CPU-wide events are refused: per process ----
    # As nobody (no capability) where perf_event_paranoid > 0: one line
    # says what per-CPU sampling lacks, and nobody's own program is attached
    # per process (META attach=all: ...), no other user's
    par=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)
    if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ "$par" -gt 0 ]; then
        nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
        "${nobody[@]}" "$D" compute 60000 & # setpriv execs it: the same pid
        np=$!
        pids+=("$np")
        for ((i = 0; i < 400; i++)); do
            [ "$(utime "$np")" -ge 20 ] && break
            sleep 0.05
        done
        mkdir -m 777 "$tmp/nobody6"
        chmod 755 "$tmp"
        (cd "$tmp/nobody6" && "${nobody[@]}" "$mw" record -o "$tmp/nobody6/raw" --all --duration 1s) \
            2>"$tmp/e10" >/dev/null; rc=$?
        kill "$np" 2>/dev/null
        line=$(grep "per-CPU sampling of the whole machine needs CAP_PERFMON" "$tmp/e10")
        [ $rc = 0 ] && echo "$line" | grep -q "kernel.perf_event_paranoid is $par" &&
            echo "$line" | grep -q "attaching to each of your processes instead" &&
            ok "fallback: status 0, one line says why: $line" || bad "fallback: status $rc, '$(cat "$tmp/e10")'"
        "$mw" report -q --db "$tmp/raw10.db" "$tmp/nobody6/raw" >/dev/null 2>&1
        ns=$(sqlite3 "$tmp/raw10.db" "select count(*) from samples s join processes p on p.id = s.process_id where p.pid = $np")
        how=$(sqlite3 "$tmp/raw10.db" "select value from meta m join processes p on p.id = m.process_id where p.pid = $np and m.key = 'attach'")
        others=$(sqlite3 "$tmp/raw10.db" "select count(*) from processes p where not exists (select 1 from meta m
            where m.process_id = p.id and m.key = 'uid' and m.value = '65534')")
        echo "fallback: nobody's program (pid $np): ${ns:-0} samples, META attach '$how'; $others files of other users"
        [ "${ns:-0}" -ge 5 ] && [ "$how" = "all: memwatch record --all, per process (CPU-wide events refused)" ] &&
            ok "fallback: the caller's own program is recorded per process" ||
            bad "fallback: pid $np: ${ns:-0} samples, attach '$how': $(cat "$tmp/e10")"
        [ "${others:-1}" = 0 ] && ok "fallback: no other user's process" || bad "fallback: $others files of other users"
    else
        echo "note: the per-process fallback of --all not tried (needs root, setpriv and perf_event_paranoid > 0)"
    fi
fi
exit $fail
