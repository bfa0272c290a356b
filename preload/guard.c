/*
 * preload/guard.c: the program's calls that would break libmemwatch.so,
 * made safe: closing or replacing memwatch's descriptor (close,
 * close_range, closefrom, dup2, dup3: the program believes it closed it, or
 * the file moves out of the way; fcntl and dup: it is not open, as far as
 * the program can tell), and unshare/setns into namespaces that
 * need a single-threaded process (the interval thread is stopped for the
 * call and started again). Split from process.c.
 */
#include "base.h"
#include "engine.h"
#include "lazy.h"
#include "process.h"
#include "threads.h"
#include "real.h"
#include "writer.h"

#include <dlfcn.h>
#include <errno.h>
#include <linux/close_range.h>
#include <sched.h>
#include <stdarg.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- descriptors ---- */

/* memwatch's descriptors: its file, the inline tick's perf event (lazy.c),
 * the main thread's cpu-clock event (threads.c) and a reaping process's
 * reader of the shared file (writer.c): at most four, ascending, the -1s
 * last */
#define MWP_OURS 4
static int fds_ours(int ours[MWP_OURS])
{
    int v[MWP_OURS] = {mwp_writer_fd(), mwp_lazy_tick_fd(), mwp_threads_clock_fd(),
                       mwp_writer_short_rd_fd()};
    int n = 0;
    for (int i = 0; i < MWP_OURS; i++)
        if (v[i] >= 0) {
            int k = n++;
            while (k > 0 && ours[k - 1] > v[i]) { /* insertion */
                ours[k] = ours[k - 1];
                k--;
            }
            ours[k] = v[i];
        }
    for (int i = n; i < MWP_OURS; i++)
        ours[i] = -1;
    return n;
}

static int fd_is_ours(int fd)
{
    return fd >= 0 && (fd == mwp_writer_fd() || fd == mwp_lazy_tick_fd() ||
                       fd == mwp_threads_clock_fd() || fd == mwp_writer_short_rd_fd());
}

/* dup2/dup3 onto one of memwatch's descriptors: it moves out of the way */
static void fd_make_way(int newfd)
{
    if (newfd == mwp_writer_fd())
        mwp_writer_relocate();
    if (newfd == mwp_lazy_tick_fd())
        mwp_lazy_tick_relocate();
    if (newfd == mwp_threads_clock_fd())
        mwp_threads_clock_relocate();
    if (newfd == mwp_writer_short_rd_fd())
        mwp_writer_short_rd_relocate();
}

MWP_EXPORT int close(int fd)
{
    mwp_writer_settle();
    if (fd_is_ours(fd) && atomic_load(&mwp_proc.state) == MWP_RUNNING)
        return 0; /* memwatch's: the program believes it closed it */
    static int (*real_close)(int);
    if (!real_close)
        *(void **)&real_close = dlsym(RTLD_NEXT, "close");
    return real_close ? real_close(fd) : (int)syscall(SYS_close, fd);
}

/* The program's range without memwatch's descriptors in it */
MWP_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    MWP_NEED(close_range, "close_range");
    mwp_writer_settle();
    int ours[MWP_OURS];
    int n = fds_ours(ours);
    int (*real)(unsigned, unsigned, int) = mwp_real.close_range;
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    if (flags & CLOSE_RANGE_CLOEXEC)
        return real(first, last, flags);
    int rc = 0;
    unsigned lo = first;
    for (int i = 0; i < n && rc == 0; i++) {
        unsigned o = (unsigned)ours[i];
        if (o < lo || o > last)
            continue;
        if (o > lo)
            rc = real(lo, o - 1, flags);
        if (o == last)
            return rc;
        lo = o + 1;
    }
    return rc == 0 ? real(lo, last, flags) : rc;
}

MWP_EXPORT void closefrom(int low)
{
    if (low < 0)
        low = 0;
    if (close_range((unsigned)low, ~0u, 0) == 0)
        return;
    /* No close_range in this kernel: close one by one. */
    long max = sysconf(_SC_OPEN_MAX);
    for (long fd = low; fd < max && fd < (1 << 20); fd++)
        if (!fd_is_ours((int)fd))
            syscall(SYS_close, (int)fd);
}

MWP_EXPORT int dup2(int oldfd, int newfd)
{
    MWP_NEED(dup2, "dup2");
    mwp_writer_settle();
    if (oldfd != newfd && fd_is_ours(newfd))
        fd_make_way(newfd);
    return mwp_real.dup2(oldfd, newfd);
}

MWP_EXPORT int dup3(int oldfd, int newfd, int flags)
{
    MWP_NEED(dup3, "dup3");
    mwp_writer_settle();
    if (oldfd != newfd && fd_is_ours(newfd))
        fd_make_way(newfd);
    return mwp_real.dup3(oldfd, newfd, flags);
}

/* fcntl and dup of one of memwatch's descriptors fail with EBADF, as for a
 * descriptor that is not open: the program never opened it. A program that
 * finds a descriptor open before it puts one of its own there may save a
 * copy and put it back afterwards, as bash does for `exec 1000>file`: the
 * program's output then went into memwatch's raw file, its own file stayed
 * empty, and memwatch went on writing into a descriptor the program took
 * for its own (the "shellfd" case of tests/preload/cases.sh). memwatch's
 * own calls are system calls, which pass by here. */
static int fd_hidden(int fd)
{
    mwp_writer_settle(); /* its file's first, low number is not ours to show */
    return fd_is_ours(fd) && !mwp_in_hook && atomic_load(&mwp_proc.state) == MWP_RUNNING;
}

MWP_EXPORT int dup(int fd)
{
    MWP_NEED(dup, "dup");
    if (fd_hidden(fd)) {
        errno = EBADF;
        return -1;
    }
    return mwp_real.dup ? mwp_real.dup(fd) : (int)syscall(SYS_dup, fd);
}

/* The third argument, where cmd takes one, is an int or a pointer: read as
 * a pointer and passed on, as libc's own fcntl does. */
#define FCNTL_HOOK(name)                                                                           \
    MWP_EXPORT int name(int fd, int cmd, ...)                                                      \
    {                                                                                              \
        va_list ap;                                                                                \
        va_start(ap, cmd);                                                                         \
        void *arg = va_arg(ap, void *);                                                            \
        va_end(ap);                                                                                \
        MWP_NEED(name, #name);                                                                     \
        if (fd_hidden(fd)) {                                                                       \
            errno = EBADF;                                                                         \
            return -1;                                                                             \
        }                                                                                          \
        return mwp_real.name ? mwp_real.name(fd, cmd, arg)                                         \
                             : (int)syscall(SYS_fcntl, fd, cmd, arg);                              \
    }
FCNTL_HOOK(fcntl)
FCNTL_HOOK(fcntl64)

/* ---- namespaces: calls that need a single-threaded process ---- */

/* unshare(CLONE_NEWUSER / CLONE_NEWNS / CLONE_FS / CLONE_FILES ...) and
 * setns into a user or mount namespace fail with EINVAL in a multi-threaded
 * process; memwatch's interval thread must not make them fail. It is stopped
 * for the call and started again. */
#define MWP_SOLO_FLAGS                                                                             \
    (CLONE_NEWUSER | CLONE_NEWNS | CLONE_FS | CLONE_FILES | CLONE_THREAD | CLONE_VM | CLONE_SIGHAND)

static int solo_call(long nr, long a, long b)
{
    int running = atomic_load(&mwp_proc.state) == MWP_RUNNING && mwp_engine_stop();
    long rc = -1;
    for (int i = 0; i < 200; i++) {
        rc = syscall(nr, a, b);
        if (rc == 0 || errno != EINVAL)
            break;
        /* the stopped thread may take a moment to leave the thread group */
        struct timespec ts = {0, 500000};
        nanosleep(&ts, NULL);
    }
    int err = errno;
    if (running && atomic_load(&mwp_proc.state) == MWP_RUNNING)
        mwp_engine_start();
    errno = err;
    return (int)rc;
}

MWP_EXPORT int unshare(int flags)
{
    if (!(flags & MWP_SOLO_FLAGS) || atomic_load(&mwp_proc.state) != MWP_RUNNING)
        return (int)syscall(SYS_unshare, flags);
    return solo_call(SYS_unshare, flags, 0);
}

MWP_EXPORT int setns(int fd, int nstype)
{
    if ((nstype && !(nstype & (CLONE_NEWUSER | CLONE_NEWNS))) ||
        atomic_load(&mwp_proc.state) != MWP_RUNNING)
        return (int)syscall(SYS_setns, fd, nstype);
    return solo_call(SYS_setns, fd, nstype);
}
