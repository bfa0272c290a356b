/*
 * preload/reap.c: what a recorded process learns when it reaps a child.
 * Interposes wait, waitpid, wait3, wait4 and waitid.
 *
 * A process records itself: its constructor, its exit and its signal
 * handlers write what it was (docs/overhead.md, "lazy start"). A child that
 * SIGKILL (or another signal whose default action ends a process and that
 * memwatch does not catch) ends before it began recording runs none of that
 * code, and would be missing from the report: a `sleep` or a waiting server
 * killed with `kill -9`, a compiler the OOM killer chose. Its parent sees
 * the end when it reaps the child, and writes the child's segment into the
 * shared file of short processes (writer.c, mwp_writer_reaped): its pid, its
 * parent, the signal, and its CPU time where the wait returned it.
 *
 * A child that exits by a raw exit_group system call (Go programs: no
 * libc exit, no destructor) writes no end either, nor does one that a
 * terminating signal other than those sent to process groups (SIGPIPE,
 * SIGALRM, SIGUSR1, ...) ends before it began: its handlers for those come
 * when it begins (signals.h). Where the child exited, or such a signal
 * ended it, the parent looks whether it wrote its end (the trailer of its
 * own file, or its segment among the last of the shared file:
 * mwp_writer_child_ended: an fstat and a pread per reaped child that never
 * began, the file kept open after the first look)
 * and writes the exit status and CPU time for it where it did not.
 *
 * waitpid, wait and wait3 go to the next wait4 (glibc's own are the same
 * system call), so that the child's accounting comes with every reaping at
 * no cost; cancellation and errno stay the next definition's. What the
 * caller asked for is returned unchanged; memwatch looks only at what it
 * returned, and only after it returned.
 */
#include "base.h"
#include "config.h"
#include "process.h"
#include "real.h"
#include "signals.h"
#include "sys.h"
#include "writer.h"

#include <sys/wait.h>

/* Called after the wait returned, in the caller's context (not in a signal
 * handler of memwatch's; the program may wait in its own handler: system
 * calls only, no allocation). */
static void reap_seen(pid_t pid, int status, const struct rusage *ru)
{
    if (pid <= 0 || !(WIFEXITED(status) || WIFSIGNALED(status)) ||
        (WIFSIGNALED(status) && mwp_signal_caught(WTERMSIG(status)) == 2))
        return; /* the child's handler wrote its end, begun or not */
    if (atomic_load(&mwp_proc.state) != MWP_RUNNING || !mwp_cfg.follow || mwp_in_hook)
        return;
    if ((pid_t)mwp_syscall(SYS_getpid) != mwp_proc.pid)
        return; /* a vfork child, or a clone memwatch does not know */
    int e = errno;
    mwp_in_hook++;
    /* A terminating signal memwatch catches ended a child that had begun:
     * its handler wrote the end; one that had not begun had no handler for
     * it yet (signals.h). The signals not caught (SIGKILL): nobody wrote it. */
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        if (!mwp_signal_caught(sig) || !mwp_writer_child_ended(pid))
            mwp_writer_reaped(pid, -sig, WCOREDUMP(status), ru);
    } else if (!mwp_writer_child_ended(pid)) {
        mwp_writer_reaped(pid, WEXITSTATUS(status), 0, ru);
    }
    mwp_in_hook--;
    errno = e;
}

static pid_t reap_wait4(pid_t pid, int *st, int opt, struct rusage *ru)
{
    MWP_NEED(wait4, "wait4");
    if (!mwp_real.wait4) {
        errno = ENOSYS;
        return -1;
    }
    int s = 0;
    struct rusage r;
    pid_t p = mwp_real.wait4(pid, st ? st : &s, opt, ru ? ru : &r);
    if (p > 0)
        reap_seen(p, st ? *st : s, ru ? ru : &r);
    return p;
}

MWP_EXPORT pid_t wait4(pid_t pid, int *st, int opt, struct rusage *ru)
{
    return reap_wait4(pid, st, opt, ru);
}

MWP_EXPORT pid_t wait3(int *st, int opt, struct rusage *ru)
{
    return reap_wait4(-1, st, opt, ru);
}

MWP_EXPORT pid_t waitpid(pid_t pid, int *st, int opt)
{
    return reap_wait4(pid, st, opt, NULL);
}

MWP_EXPORT pid_t wait(int *st)
{
    return reap_wait4(-1, st, 0, NULL);
}

MWP_EXPORT int waitid(idtype_t type, id_t id, siginfo_t *info, int opt)
{
    MWP_NEED(waitid, "waitid");
    if (!mwp_real.waitid) {
        errno = ENOSYS;
        return -1;
    }
    siginfo_t own;
    siginfo_t *si = info ? info : &own;
    if (!info)
        memset(&own, 0, sizeof own);
    int rc = mwp_real.waitid((int)type, (unsigned)id, si, opt);
    /* WNOWAIT leaves the child to a later wait; WNOHANG with nothing to
     * report leaves si_pid 0 */
    if (rc == 0 && !(opt & WNOWAIT) && si->si_pid > 0 &&
        (si->si_code == CLD_KILLED || si->si_code == CLD_DUMPED))
        reap_seen(si->si_pid, (si->si_status & 0x7f) | (si->si_code == CLD_DUMPED ? 0x80 : 0), NULL);
    else if (rc == 0 && !(opt & WNOWAIT) && si->si_pid > 0 && si->si_code == CLD_EXITED)
        reap_seen(si->si_pid, (si->si_status & 0xff) << 8, NULL);
    return rc;
}
