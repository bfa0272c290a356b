/*
 * preload/status.c: a write failure of the raw file (a full disk, a quota,
 * an I/O error, a read-only file system) named once, with what was kept.
 *
 * Owns: the once-per-process flag and the status file memwatch record
 * hands down (MEMWATCH_STATUS, docs/config.md): a file it created before the
 * program started, with its blocks already allocated, so that a process can
 * leave the reason there when the disk is full. The first process of the
 * tree to fail writes "key=value" lines into it under flock and says why on
 * stderr; later ones find it written and stay quiet (verbose 2 says it
 * again), and memwatch record's summary repeats it.
 * Calls: raw syscalls and mwp_say only: it may run in a signal handler (the
 * trailer written at a fatal signal).
 */
#include "status.h"

#include "config.h"
#include "process.h"
#include "util.h"

#include <memwatch/memwatch.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

static _Atomic int st_said;

/* A few words on what the error means for the user. */
static const char *st_meaning(int err)
{
    switch (err) {
    case ENOSPC:
        return "disk full";
    case EDQUOT:
        return "disk quota exceeded";
    case EROFS:
        return "read-only file system";
    case EIO:
        return "I/O error";
    case EFBIG:
        return "file too large";
    default:
        return NULL;
    }
}

int mwp_write_error_is_fatal(int err)
{
    return st_meaning(err) != NULL;
}

int mwp_write_short_errno(int fd)
{
    struct statfs sf;
    if (syscall(SYS_fstatfs, fd, &sf) == 0 && sf.f_bavail == 0)
        return ENOSPC;
    return EIO;
}

/* Leave the reason in the status file; 1 when this process is the first of
 * the tree to do so (or there is no status file). */
static int st_record(int err, uint64_t at_ns, const char *path)
{
    if (!mwp_cfg.status)
        return 1;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, mwp_cfg.status, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 1;
    int first = 1;
    if (syscall(SYS_flock, fd, LOCK_EX) == 0) {
        char c = 0;
        if (syscall(SYS_pread64, fd, &c, 1, 0) == 1 && c != 0) {
            first = 0;
        } else {
            char buf[PATH_MAX + 256];
            struct mwp_str s = {buf, sizeof buf, 0};
            mwp_s_kvu(&s, "errno", (uint64_t)err);
            mwp_s_kvu(&s, "time_ns", at_ns);
            mwp_s_kvu(&s, "pid", (uint64_t)mwp_proc.pid);
            mwp_s_kv(&s, "file", path);
            ssize_t w = (ssize_t)syscall(SYS_pwrite64, fd, buf, s.len, 0);
            (void)w;
        }
    }
    mwp_sys_close(fd); /* releases the lock */
    return first;
}

void mwp_write_failed(int err, const char *path, int created)
{
    if (atomic_exchange(&st_said, 1))
        return;
    uint64_t now = mwp_now_ns();
    int first = st_record(err, now, path);
    char why[384];
    struct mwp_str s = {why, sizeof why, 0};
    mwp_s_str(&s, ": ");
    mwp_s_str(&s, mw_strerror(-err));
    const char *m = st_meaning(err);
    if (m && err != EIO) {
        mwp_s_str(&s, " (");
        mwp_s_str(&s, m);
        mwp_s_str(&s, ")");
    }
    if (created && mwp_proc.start_mono_ns && now > mwp_proc.start_mono_ns) {
        mwp_s_str(&s, "; recorded up to ");
        mwp_s_dbl(&s, (double)(now - mwp_proc.start_mono_ns) / 1e9);
        mwp_s_str(&s, " s of this process, nothing after it");
    } else {
        mwp_s_str(&s, "; this process is not recorded");
    }
    mwp_say(first ? 1 : 2, created ? "cannot write " : "cannot create ", path, why);
}
