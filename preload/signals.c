/*
 * preload/signals.c: flush on fatal and terminating signals, then hand the
 * signal to the application's own disposition.
 *
 * Owns: the application's view of the dispositions of the signals below
 * (sigaction and signal are interposed, so the application reads back what it
 * set). memwatch's handler stays installed in the kernel with the
 * application's mask and flags; it calls the application's handler when there
 * is one (emulating SA_RESETHAND), does nothing for SIG_IGN, and for SIG_DFL
 * flushes with async-signal-safe calls only, restores SIG_DFL and re-raises,
 * so the process ends exactly as it would have (same signal, same core dump).
 * Signals ignored when the program starts stay ignored in the kernel (so that
 * exec'ed children inherit that) and are not managed.
 */
#include "signals.h"

#include "base.h"
#include "lazy.h"
#include "process.h"
#include "real.h"
#include "sys.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

/* The signals whose handlers every process installs in its constructor:
 * the faults, where only the process itself can tell where it happened
 * (META fault), and those a terminal, a timeout or a job controller sends
 * to a whole process group (SIGINT, SIGQUIT, SIGHUP, SIGTERM), which end
 * the parent too, so that no parent is left to reap the child and report
 * it. The rest, which end one process while its recorded parent lives on
 * to report it as well as it could (the signal: SIGPIPE, SIGALRM, SIGUSR1,
 * abort()...), get theirs when the process begins (lazy start): a short
 * process does not pay 10 more sigaction calls (docs/overhead.md, "Short
 * processes"). */
static const int sig_early[] = {SIGSEGV, SIGBUS, SIGILL,  SIGFPE, SIGTRAP,
                                SIGINT,  SIGQUIT, SIGHUP, SIGTERM};
static const int sig_list[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGILL,  SIGTRAP, SIGABRT, SIGBUS,
                               SIGFPE,  SIGSEGV, SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM,
                               SIGXCPU, SIGXFSZ, SIGSYS,  SIGVTALRM, SIGPROF};
#define SIG_MAX 65
MWP_COLD static struct sigaction app_act[SIG_MAX];
/* 1: in the list; our handler may be in */
MWP_HOT_DATA static _Atomic unsigned char sig_managed[SIG_MAX];
MWP_HOT_DATA static int sig_ready;

#define SIG_N(list) (sizeof list / sizeof list[0])

static int sig_in(const int *list, size_t n, int sig)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == sig)
            return 1;
    return 0;
}

static int sig_in_list(int sig)
{
    return sig_in(sig_list, SIG_N(sig_list), sig);
}

int mwp_signal_caught(int sig)
{
    return sig_in(sig_early, SIG_N(sig_early), sig) ? 2 : sig_in_list(sig);
}

static void sig_handler(int sig, siginfo_t *si, void *uc);

static int sig_install_ours(int sig, const struct sigaction *app)
{
    MWP_NEED(sigaction, "sigaction");
    if (!mwp_real.sigaction)
        return -1;
    struct sigaction k;
    memset(&k, 0, sizeof k);
    k.sa_sigaction = sig_handler;
    k.sa_mask = app->sa_mask;
    k.sa_flags = (app->sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
    return mwp_real.sigaction(sig, &k, NULL);
}

/* Where a fault ended the process, for its record's META ("fault"):
 * "pc 0x..., <module>+0x<offset>, address 0x..., code N". Built in the
 * handler of a default-action fault with system calls only: the module from
 * /proc/self/maps (no loader lock: another thread may hold it), into static
 * buffers (a stack overflow leaves little stack). */
MWP_HOT_DATA struct mwp_fault mwp_fault;
MWP_COLD static char fault_maps[4096];

/* The mapping of /proc/self/maps that holds pc: its path's last part and
 * pc's offset in the file. 0 when none was found. */
static int fault_module(uint64_t pc, struct mwp_str *s)
{
    int fd = (int)mwp_syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t have = 0;
    int found = 0;
    for (;;) {
        long r = mwp_syscall(SYS_read, fd, fault_maps + have, sizeof fault_maps - have);
        if (r <= 0)
            break;
        have += (size_t)r;
        const char *ln = fault_maps, *end = fault_maps + have, *nl;
        while (!found && (nl = memchr(ln, '\n', (size_t)(end - ln)))) {
            const char *q = ln;
            uint64_t lo = mwp_parse_hex(&q, nl);
            q++;
            uint64_t hi = mwp_parse_hex(&q, nl);
            if (pc >= lo && pc < hi) {
                /* perms, offset, dev, inode, path */
                int field = 0;
                uint64_t off = 0;
                while (q < nl && field < 5) {
                    while (q < nl && *q == ' ')
                        q++;
                    if (++field == 2)
                        off = mwp_parse_hex(&q, nl);
                    if (field == 5)
                        break;
                    while (q < nl && *q != ' ')
                        q++;
                }
                const char *base = q;
                for (const char *c = q; c < nl; c++)
                    if (*c == '/')
                        base = c + 1;
                mwp_s_mem(s, base, (size_t)(nl - base));
                if (base == nl)
                    mwp_s_str(s, "[anonymous]");
                mwp_s_str(s, "+");
                mwp_s_hex(s, pc - lo + off);
                found = 1;
            }
            ln = nl + 1;
        }
        if (found)
            break;
        /* keep the partial last line */
        size_t rest = (size_t)(end - ln);
        memmove(fault_maps, ln, rest);
        have = rest;
        if (have == sizeof fault_maps)
            have = 0; /* a line longer than the buffer: skip it */
    }
    mwp_syscall(SYS_close, fd);
    return found;
}

static void fault_note(int sig, const siginfo_t *si, const void *ucv)
{
    if (sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE && sig != SIGTRAP)
        return;
    if (si->si_code == SI_USER || si->si_code == SI_TKILL || si->si_code == SI_QUEUE)
        return; /* sent, not a fault */
    static atomic_flag taken = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&taken))
        return; /* another thread's fault is being noted: the first is the record's */
    struct mwp_str s = {mwp_fault.text, sizeof mwp_fault.text - 1, 0};
    uint64_t pc = 0;
#if defined(__x86_64__)
    pc = (uint64_t)((const ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    pc = (uint64_t)((const ucontext_t *)ucv)->uc_mcontext.pc;
#else
    (void)ucv;
#endif
    mwp_s_str(&s, "pc ");
    mwp_s_hex(&s, pc);
    mwp_s_str(&s, ", ");
    if (!pc || !fault_module(pc, &s))
        mwp_s_str(&s, "no mapping");
    mwp_s_str(&s, ", address ");
    mwp_s_hex(&s, (uint64_t)(uintptr_t)si->si_addr);
    mwp_s_str(&s, ", code ");
    mwp_s_i64(&s, si->si_code);
    mwp_fault.text[s.len < sizeof mwp_fault.text ? s.len : sizeof mwp_fault.text - 1] = 0;
}

static void sig_handler(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    struct sigaction a = app_act[sig];
    if (a.sa_handler == SIG_IGN)
        goto out;
    if (a.sa_handler != SIG_DFL) {
        if (a.sa_flags & SA_RESETHAND) {
            app_act[sig].sa_handler = SIG_DFL;
            app_act[sig].sa_flags &= ~(SA_RESETHAND | SA_SIGINFO);
        }
        errno = saved;
        if (a.sa_flags & SA_SIGINFO)
            a.sa_sigaction(sig, si, uc);
        else
            a.sa_handler(sig);
        return;
    }
    /* Default action: every signal managed here terminates the process. */
    if (atomic_load(&mwp_proc.state) == MWP_RUNNING &&
        (pid_t)mwp_syscall(SYS_getpid) == mwp_proc.pid) {
        fault_note(sig, si, uc);
        mwp_finish(-sig, "signal", 1);
    }
    struct mwp_ksig d = {(void *)SIG_DFL, 0, NULL, 0};
    mwp_ksig_set(sig, &d, NULL);
    /* Re-raise: pending until this handler returns and the mask is restored;
     * a fault re-executes the faulting instruction and ends the same way. */
    syscall(SYS_tgkill, (pid_t)syscall(SYS_getpid), mwp_gettid(), sig);
out:
    errno = saved;
}

#if defined(__x86_64__)
/* The return from memwatch's handlers: the bytes of glibc's __restore_rt
 * (mov $15, %rax; syscall: rt_sigreturn), which libgcc's, libunwind's and
 * gdb's unwinders recognize as a signal frame, and no unwind table entry of
 * its own, so that they look at those bytes. */
__asm__(".pushsection .text.hot,\"ax\",@progbits\n"
        ".p2align 4\n"
        "mwp_sig_restore:\n"
        ".byte 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05\n"
        ".popsection\n");
void mwp_sig_restore(void) __asm__("mwp_sig_restore");
#define MWP_SA_RESTORER 0x04000000ul

MWP_HOT long mwp_ksig_set(int sig, const struct mwp_ksig *act, struct mwp_ksig *old)
{
    struct mwp_ksig a;
    if (act) {
        a = *act;
        if (a.handler != (void *)SIG_DFL && a.handler != (void *)SIG_IGN) {
            a.flags |= MWP_SA_RESTORER;
            a.restorer = mwp_sig_restore;
        }
    }
    return mwp_syscall(SYS_rt_sigaction, sig, act ? &a : NULL, old, 8);
}
#else
long mwp_ksig_set(int sig, const struct mwp_ksig *act, struct mwp_ksig *old)
{
    MWP_NEED(sigaction, "sigaction");
    if (!mwp_real.sigaction) {
        errno = ENOSYS;
        return -1;
    }
    struct sigaction a, o;
    memset(&a, 0, sizeof a);
    if (act) {
        a.sa_handler = (void (*)(int))act->handler;
        a.sa_flags = (int)act->flags;
        memcpy(&a.sa_mask, &act->mask, sizeof act->mask);
    }
    memset(&o, 0, sizeof o);
    long r = mwp_real.sigaction(sig, act ? &a : NULL, &o);
    if (old) {
        old->handler = (void *)o.sa_handler;
        old->flags = (unsigned long)o.sa_flags;
        old->restorer = NULL;
        memcpy(&old->mask, &o.sa_mask, sizeof old->mask);
    }
    return r;
}
#endif

/* Install memwatch's handler for the signals of list that it does not
 * manage yet (a fork child inherits the parent's, which it must not read
 * back as the program's). With the rt_sigaction system call (sys.h,
 * mwp_ksig_set), as the kernel keeps the action: libc's sigaction would cost
 * every process the first dlsym, a page of libc's text and its wrapper ten
 * times over. */
MWP_HOT static void sig_install(const int *list, size_t n, sigset_t *mask_out)
{
    /* One call per signal: install ours and read back what was there.
     * After exec that is SIG_DFL with no mask or flags (the kernel resets
     * caught signals) or SIG_IGN (kept); a library initialised before this
     * one, or the program before it began, may have set a handler. The few
     * that are not plain SIG_DFL take a second call (SIG_IGN restored, a
     * handler's mask and flags copied). Signals stay blocked meanwhile, so
     * none meets our handler before app_act holds what the application had. */
    sigset_t all, old;
    mwp_sigfill(&all);
    /* pthread_sigmask's system call, without binding it: glibc's internal
     * signals are not in all, and are taken out of old before it is set
     * back, as pthread_sigmask does */
    memset(&old, 0, sizeof old);
    mwp_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, _NSIG / 8);
    if (mask_out)
        *mask_out = old; /* the program's mask at the start (lazy start) */
    struct mwp_ksig k = {(void *)sig_handler, SA_SIGINFO, NULL, 0};
    for (size_t i = 0; i < n; i++) {
        int sig = list[i];
        if (atomic_load(&sig_managed[sig]))
            continue;
        struct mwp_ksig cur;
        if (mwp_ksig_set(sig, &k, &cur))
            continue;
        /* app_act starts zeroed, which is plain SIG_DFL: the common case
         * leaves its 10 KiB untouched (three pages a short process does
         * not fault in) */
        int plain = cur.handler == (void *)SIG_DFL && !cur.flags && !cur.mask;
        atomic_store(&sig_managed[sig], 1);
        if (plain)
            continue;
        struct sigaction a;
        memset(&a, 0, sizeof a);
        a.sa_handler = (void (*)(int))cur.handler; /* the union's one pointer */
        a.sa_flags = (int)cur.flags;
        a.sa_restorer = cur.restorer;
        memcpy(&a.sa_mask, &cur.mask, sizeof cur.mask);
        app_act[sig] = a;
        if (cur.handler == (void *)SIG_IGN)
            mwp_ksig_set(sig, &cur, NULL);
        else
            sig_install_ours(sig, &a);
    }
    sig_ready = 1;
    sigset_t back = old;
    back.__val[0] &= ~MWP_SIG_GLIBC_INTERNAL;
    mwp_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &back, NULL, _NSIG / 8);
}

MWP_HOT void mwp_signals_install(sigset_t *mask_out)
{
    sig_install(sig_early, SIG_N(sig_early), mask_out);
}

void mwp_signals_begin(void)
{
    sig_install(sig_list, SIG_N(sig_list), NULL);
}

MWP_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    MWP_NEED(sigaction, "sigaction");
    if (act && !mwp_in_hook)
        mwp_lazy_claimed(sig);
    if (!sig_ready || sig <= 0 || sig >= SIG_MAX || !atomic_load(&sig_managed[sig]) ||
        !sig_in_list(sig))
        return mwp_real.sigaction(sig, act, old);
    struct sigaction prev = app_act[sig];
    if (act) {
        int rc;
        if (act->sa_handler == SIG_IGN)
            rc = mwp_real.sigaction(sig, act, NULL);
        else
            rc = sig_install_ours(sig, act);
        if (rc)
            return rc;
        app_act[sig] = *act;
    }
    if (old)
        *old = prev;
    return 0;
}

typedef void (*mwp_sighandler_t)(int);

MWP_EXPORT mwp_sighandler_t signal(int sig, mwp_sighandler_t h)
{
    struct sigaction a, o;
    memset(&a, 0, sizeof a);
    a.sa_handler = h;
    a.sa_flags = SA_RESTART;
    sigemptyset(&a.sa_mask);
    sigaddset(&a.sa_mask, sig);
    if (sigaction(sig, &a, &o))
        return SIG_ERR;
    return o.sa_handler;
}

MWP_EXPORT mwp_sighandler_t bsd_signal(int sig, mwp_sighandler_t h)
{
    return signal(sig, h);
}

MWP_EXPORT mwp_sighandler_t sysv_signal(int sig, mwp_sighandler_t h)
{
    struct sigaction a, o;
    memset(&a, 0, sizeof a);
    a.sa_handler = h;
    a.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigemptyset(&a.sa_mask);
    if (sigaction(sig, &a, &o))
        return SIG_ERR;
    return o.sa_handler;
}
