#!/usr/bin/env bash
# tests/cli/test_record_diskfull.sh: a full disk during record is named
# once, in the program's stderr and in the summary, with what was kept
# ("recorded up to 1.4 s; No space left on device (disk full)"); later
# processes of the tree do not say it again, and no 0-byte raw file is left.
# Needs a small tmpfs (root with CAP_SYS_ADMIN); skips elsewhere.
set -u
B=${MW_BUILD_DIR:?}
mw=$B/memwatch
[ -x "$mw" ] && [ -f "$B/libmemwatch.so" ] && [ -x "$B/bwdemo" ] ||
  { echo "SKIP: memwatch, libmemwatch.so or bwdemo not built"; exit 77; }
tmp=$(mktemp -d /tmp/mw_record_diskfull.XXXXXX)
mkdir -p "$tmp/full"
if ! mount -t tmpfs -o size=64k tmpfs "$tmp/full" 2>/dev/null; then
  rm -rf "$tmp"
  echo "SKIP: cannot mount a 64 KiB tmpfs here (needs root with CAP_SYS_ADMIN)"
  exit 77
fi
trap 'umount "$tmp/full"; rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAILED: $*"; fail=1; }
# a bandwidth program fills 64 KiB within a second or two; three more
# processes start after the disk is full
"$mw" record -F 1000 -o "$tmp/full" -- /bin/sh -c \
  "$B/bwdemo 2 1 16 >/dev/null; /bin/true; /bin/true; $B/bwdemo 0.3 1 8 >/dev/null" 2>"$tmp/err"
rc=$?
cat "$tmp/err"
[ $rc = 0 ] || bad "the program's exit status was $rc"
n=$(grep -c "No space left on device (disk full)" "$tmp/err")
grep -q "^memwatch: cannot write $tmp/full/memwatch-.*No space left on device (disk full); recorded up to [0-9.]* s of this process" "$tmp/err" ||
  bad "no disk-full line from the library"
grep -q "^memwatch: recorded up to [0-9.]* s; No space left on device (disk full) writing" "$tmp/err" ||
  bad "no disk-full line in the summary"
[ "$n" = 2 ] && echo "ok: disk full named once by the tree and once by the summary" ||
  bad "disk full named $n times (want 2: the library once, the summary once)"
grep -q "cut short: disk full" "$tmp/err" || bad "the summary blames something else for the files without a trailer"
grep -q "killed or still running" "$tmp/err" && bad "the summary says killed or still running"
z=$(find "$tmp/full" -name '*.mwr' -size 0 | wc -l)
[ "$z" = 0 ] && echo "ok: no 0-byte raw file" || bad "$z 0-byte raw files"
ls -A "$tmp/full" | grep -q "^\.memwatch-status" && bad "the status file was left behind"
exit $fail
