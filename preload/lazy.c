/*
 * preload/lazy.c: the lazy start (lazy.h: its states, transitions and
 * invariants): the CPU-time timer, its handler, begin, and the end of a
 * process that never began. Moved from process.c, which keeps the
 * constructor, fork and the end of every image.
 *
 * Owns: mwp_lazy.begun, the timer (lz_timer), the start's signal mask and
 * the text ranges the handler checks.
 * May call: every part's start-up (writer, threads, engine, modules,
 * regions), process.c's start-up steps (mwp_proc_attrs, _alloc_note).
 * Threading: the program's one thread (the timer's thread) until the
 * process began; the handler runs in signal context and begins only at a
 * safe point (lazy_safe).
 */
#include "lazy.h"

#include "base.h"
#include "config.h"
#include "engine.h"
#include "modules.h"
#include "process.h"
#include "real.h"
#include "region.h"
#include "signals.h"
#include "sys.h"
#include "threads.h"
#include "util.h"
#include "writer.h"

#include <memwatch/meta_keys.h>
#include <memwatch/mwr.h>

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>

MWP_HOT_DATA struct mwp_lazy mwp_lazy;

/* ---- lazy start ----
 * Most processes of a build, a configure script or a shell pipeline live a
 * few milliseconds. Each pays, under memwatch, for what it sets up before it
 * ends; so a process sets up nothing that can wait until it has run for
 * about one interval (docs/overhead.md, "lazy start"):
 *
 * - the constructor reads the configuration, checks the directory, installs
 *   the signal dispositions and arms a one-shot timer on the main thread's
 *   CPU clock (MWP_LAZY_SIG after one interval of its CPU time); no thread,
 *   no perf event (but with MEMWATCH_LAZY=tick, and once that signal found
 *   no safe point: lazy_retry), no file;
 * - mwp_begin, at the first safe point after that (the timer's handler where
 *   it interrupted the program's own code, the program's first
 *   pthread_create, its own use of MWP_LAZY_SIG), does what the constructor
 *   used to: sampler attributes, META, the start-up batch, the interval
 *   thread, which creates the file, lists the modules and opens the main
 *   thread's samplers;
 * - a process that ends before then writes one small file: its META (command
 *   line, parent, start) and a trailer with its exit status and end time
 *   (mwp_writer_summary); with allocation records kept meanwhile it writes
 *   them too;
 * - a fork child that execs before then writes nothing: the program it
 *   becomes continues the record, and its META names the fork
 *   (fork_monotonic_ns, from MEMWATCH_FORKED).
 *
 * The timer counts the main thread's own CPU time, and the kernel sends its
 * signal on the thread's way back to user space (posix CPU timers run as
 * task work there): it never interrupts a system call, so no program sees
 * EINTR from it. Until a second thread exists (which begins first) the main
 * thread's CPU time is the process's. The handler begins only where the
 * interrupted code is neither libc's, the loader's, memwatch's nor the
 * allocator's that memwatch's malloc calls (where not libc's) and the
 * signal mask is the one the program started with (not inside one of the
 * program's own signal handlers): there nothing that pthread_create, malloc
 * or the loader's lock needs can be half done. Elsewhere it asks again after
 * MWP_LAZY_RETRY_NS more CPU time. That holds where the program's malloc is
 * libc's (behind memwatch's): a program whose executable (or an earlier
 * preload) defines its own allocator may be inside it anywhere in its own
 * code, and pthread_create's calloc would enter it again; such a process
 * begins in the constructor, as every process did before lazy start (with
 * inline intervals whose ticks do only their async-signal-safe part). A
 * buffer of allocation records half full begins the process where the
 * allocator behind memwatch's malloc is libc's, and else asks the timer to
 * come soon: the hook may run inside that allocator (in its mmap)
 * (mwp_lazy_soon). */
#define MWP_LAZY_RETRY_NS 2000000ull
/* one interval of CPU time, at most 10 ms (a long MEMWATCH_INTERVAL would
 * leave a running program unsampled for as long) */
MWP_HOT static uint64_t lazy_delay(void)
{
    return mwp_cfg.interval_ns < 10000000ull ? mwp_cfg.interval_ns : 10000000ull;
}
/* The lazy start's retries (lazy_retry), reset in a fork child (with the
 * page of the other variables a short process touches):
 * stopped: 1 in the handler of a tick's signal, which stopped the event
 * until a refresh; tried: the retries' event, 0 not tried, 1 opened, -errno
 * refused; unsafe: signals of the lazy start that found no safe point. */
MWP_HOT_DATA static struct {
    unsigned char stopped;
    short tried;
    unsigned short unsafe;
} lz_retry;
MWP_HOT_DATA static int lz_timer = -1; /* the kernel's timer id, -1: none */
MWP_HOT_DATA static sigset_t lz_mask;  /* the main thread's signal mask at the start */
/* text ranges of libc, the loader and memwatch (lz_nr -1: unknown) */
MWP_HOT_DATA static int lz_nr = -1;
MWP_HOT_DATA static uintptr_t lz_lo[24], lz_hi[24];
MWP_HOT_DATA static unsigned char lz_libc[24]; /* 1: the range is libc's */
static int lz_attrs_done;

/* SIGRTMAX is a call into libc (glibc's __libc_current_sigrtmax), whose
 * first use costs a lazy binding; its value is the kernel's last signal,
 * __SIGRTMAX, wherever glibc reserves none at the top */
static int lazy_sig(void)
{
#ifdef __SIGRTMAX
    return __SIGRTMAX - 3;
#else
    return SIGRTMAX - 3;
#endif
}

/* ---- a program that blocks memwatch's signal ----
 * The lazy start and inline intervals come by one signal (lazy_sig) of a
 * CPU-time timer. A program that blocks it (sigprocmask of every signal)
 * leaves it pending: a process that never began stays unrecorded (no
 * samples, no intervals), a begun one with inline intervals gets no more
 * intervals, and its rings fill. A program whose mask no longer is the one
 * it started with never reaches a point where the lazy start may begin
 * (lazy_safe). Neither can be helped from inside the program's threads;
 * its record says which signals were blocked and what that cost (META
 * signals_blocked). */
static const char *const sig_names[32] = {
    "0", "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS",
    "SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM",
    "SIGSTKFLT", "SIGCHLD", "SIGCONT", "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG",
    "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO", "SIGPWR", "SIGSYS"};

static void blocked_name(struct mwp_str *s, int sig)
{
    if (sig < 32) {
        mwp_s_str(s, sig_names[sig]);
    } else if (sig > (SIGRTMIN + SIGRTMAX) / 2) {
        mwp_s_str(s, "SIGRTMAX-");
        mwp_s_u64(s, (uint64_t)(SIGRTMAX - sig));
    } else {
        mwp_s_str(s, "SIGRTMIN+");
        mwp_s_u64(s, (uint64_t)(sig - SIGRTMIN));
    }
}

/* The signals the mask m blocks, by name: "all 62 that can be" or a list */
static void blocked_list(struct mwp_str *s, const sigset_t *m)
{
    int n = 0, all = 0;
    for (int i = 1; i < _NSIG; i++)
        if (i != SIGKILL && i != SIGSTOP && (i < 32 || i >= SIGRTMIN)) {
            all++;
            n += sigismember(m, i) == 1;
        }
    if (n == all) {
        mwp_s_str(s, "all ");
        mwp_s_u64(s, (uint64_t)n);
        mwp_s_str(s, " signals a program can block");
        return;
    }
    int k = 0;
    for (int i = 1; i < _NSIG; i++) {
        if (sigismember(m, i) != 1 || (i >= 32 && i < SIGRTMIN))
            continue;
        if (k++ == 12) {
            mwp_s_str(s, " ...");
            break;
        }
        if (k > 1)
            mwp_s_str(s, " ");
        blocked_name(s, i);
    }
}

/* "recording never began (lazy start) in X ms of CPU time: no samples, no
 * intervals", the words both notes of a process that never began share */
static void lazy_s_never(struct mwp_str *s, uint64_t cpu_ns)
{
    mwp_s_str(s, "recording never began (lazy start) in ");
    mwp_s_dbl(s, (double)cpu_ns / 1e6);
    mwp_s_str(s, " ms of CPU time: no samples, no intervals");
}

/* The value of META signals_blocked into out (NUL-terminated), its length;
 * 0 where memwatch's signal was not kept from it. A process that never
 * began (begun 0) is looked at only where it ran one lazy delay of CPU time
 * (cpu_ns), so that short processes pay no system call; a begun one only
 * with inline intervals. System calls only: async-signal-safe. */
MWP_HOT size_t mwp_lazy_blocked(char *out, size_t cap, uint64_t cpu_ns, int begun)
{
    if (lz_timer < 0 || (!begun && cpu_ns < lazy_delay()) || (begun && !mwp_engine_inline()))
        return 0;
    sigset_t pend, cur;
    sigemptyset(&pend);
    sigemptyset(&cur);
    if (mwp_syscall(SYS_rt_sigpending, &pend, _NSIG / 8) != 0 ||
        mwp_syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &cur, _NSIG / 8) != 0)
        return 0;
    int pending = sigismember(&pend, lazy_sig()) == 1 && sigismember(&cur, lazy_sig()) == 1;
    int moved = 0; /* the mask is not the start's: the lazy start never finds a safe point */
    for (int i = 1; !begun && i < _NSIG; i++)
        moved |= i != lazy_sig() && sigismember(&cur, i) != sigismember(&lz_mask, i);
    if (!pending && !moved)
        return 0;
    struct mwp_str s = {out, cap - 1, 0};
    blocked_list(&s, &cur);
    mwp_s_str(&s, " were blocked (the program's signal mask at its end)");
    if (pending) {
        mwp_s_str(&s, ", memwatch's ");
        blocked_name(&s, lazy_sig());
        mwp_s_str(&s, " (its CPU-time timer) among them");
    }
    if (!begun) {
        mwp_s_str(&s, ": ");
        lazy_s_never(&s, cpu_ns);
        if (!pending)
            mwp_s_str(&s, " (memwatch begins only where the mask is the one the program started with)");
    } else {
        mwp_s_str(&s, ": inline intervals (on that signal) stopped while it was blocked: no intervals, "
                      "and samples only as far as the rings held them");
    }
    out[s.len] = 0;
    return s.len;
}

/* The value of META never_began into out (NUL-terminated), its length: a
 * process that ran three lazy delays of CPU time and never began, where its
 * signal mask did not keep the timer from it (mwp_lazy_blocked says that):
 * what the lazy start saw. System calls only: async-signal-safe. */
MWP_HOT size_t mwp_lazy_late(char *out, size_t cap, uint64_t cpu_ns)
{
    if (lz_timer < 0 || cpu_ns < 3 * lazy_delay() || cap < 2)
        return 0;
    struct mwp_str s = {out, cap - 1, 0};
    lazy_s_never(&s, cpu_ns);
    mwp_s_str(&s, ": ");
    if (!lz_retry.unsafe && lz_retry.tried == 1) {
        mwp_s_str(&s, "neither the timer on its CPU clock nor the task-clock event came (the event "
                      "counts only the program's own code, not its system calls)");
    } else if (!lz_retry.unsafe) {
        mwp_s_str(&s,
                  "the timer on its CPU clock never came (the kernel checks it at its clock tick, "
                  "and on a loaded machine the tick may never land on this thread; "
                  "MEMWATCH_LAZY=tick adds a task-clock event, which does not wait for the tick)");
    } else {
        mwp_s_str(&s, "memwatch's signal came ");
        mwp_s_u64(&s, lz_retry.unsafe);
        mwp_s_str(&s, " times, each where memwatch may not begin (libc, the loader, memwatch, "
                      "an allocator, one of the program's signal handlers)");
        if (lz_retry.tried < 0) {
            mwp_s_str(&s, "; perf refused the task-clock event that retries (errno ");
            mwp_s_u64(&s, (uint64_t)-lz_retry.tried);
            mwp_s_str(&s, ")");
        }
    }
    out[s.len] = 0;
    return s.len;
}

/* the program's malloc is not memwatch's (its executable's, or an earlier
 * preload's): it begins in the constructor */
MWP_HOT_DATA static int lz_own_alloc;

MWP_HOT static void lazy_arm(uint64_t cpu_ns, uint64_t period_ns)
{
    if (lz_timer < 0) {
        struct sigevent ev;
        memset(&ev, 0, sizeof ev);
        ev.sigev_notify = SIGEV_THREAD_ID;
        ev.sigev_signo = lazy_sig();
        ev._sigev_un._tid = mwp_self ? mwp_self->tid : mwp_gettid();
        int id = -1;
        if (mwp_syscall(SYS_timer_create, CLOCK_THREAD_CPUTIME_ID, &ev, &id) < 0)
            return;
        lz_timer = id;
    }
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    its.it_value.tv_sec = (time_t)(cpu_ns / 1000000000ull);
    its.it_value.tv_nsec = (long)(cpu_ns % 1000000000ull);
    its.it_interval.tv_sec = (time_t)(period_ns / 1000000000ull);
    its.it_interval.tv_nsec = (long)(period_ns % 1000000000ull);
    mwp_syscall(SYS_timer_settime, lz_timer, 0, &its, NULL);
}

/* ---- the inline tick ----
 * On a loaded machine the kernel's CPU-time timers come late: beside
 * stress-ng --cpu 3 on a 2-core VM, a 10 ms CLOCK_THREAD_CPUTIME_ID timer on
 * a spinning thread fired a median 47.5 times per CPU second, with gaps up
 * to 530 ms, while a perf task-clock event of the same period fired 98
 * times, its largest gap 20 ms (bench/inline_ticks; docs/overhead.md,
 * "Inline intervals on a loaded machine"). So inline intervals tick from a
 * task-clock event of the program's thread where perf_event_open allows
 * one: after MEMWATCH_INTERVAL of the thread's CPU time its overflow sends
 * lazy_sig to the thread (O_ASYNC, F_SETSIG, the thread its owner) with
 * si_code POLL_HUP, and the event stops (PERF_EVENT_IOC_REFRESH 1) until the
 * handler refreshes it: one signal at most is queued, however long the
 * program blocks it (a queue of them would fill the user's pending-signal
 * limit, where the kernel sends SIGIO instead, which ends a program). It
 * counts only where the clock interrupts the program's user code
 * (exclude_kernel, as an unprivileged sampler must), so the signal arrives
 * on that interrupt's way back to user space and never interrupts a system
 * call, as the timer's never does. Its descriptor sits high and is
 * memwatch's as the writer's is (guard.c: the program's close, close_range,
 * closefrom, dup2 and dup3 pass it by). Where perf refuses it, the CPU-time
 * timer stays periodic; the one-shot retry of a tick that found memwatch's
 * own code stays on the timer. */
MWP_HOT_DATA static _Atomic int lz_tick = -1; /* the task-clock event's descriptor; -1: none */

int mwp_lazy_tick_fd(void)
{
    return atomic_load(&lz_tick);
}

/* the tick's event, one period (ns) long: 0, or -errno where perf refuses */
static int inline_tick_open(uint64_t period)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = period;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = (int)mwp_syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return fd;
    fd = mwp_fd_move_high(fd);
    struct f_owner_ex own = {F_OWNER_TID, mwp_self ? mwp_self->tid : mwp_gettid()};
    long fl = mwp_syscall(SYS_fcntl, fd, F_GETFL), rc = fl < 0 ? fl : 0;
    if (!rc)
        rc = mwp_syscall(SYS_fcntl, fd, F_SETOWN_EX, &own);
    if (!rc)
        rc = mwp_syscall(SYS_fcntl, fd, F_SETSIG, lazy_sig());
    if (!rc)
        rc = mwp_syscall(SYS_fcntl, fd, F_SETFL, fl | O_ASYNC);
    if (!rc)
        rc = mwp_syscall(SYS_ioctl, fd, PERF_EVENT_IOC_REFRESH, 1);
    if (rc) {
        mwp_sys_close(fd);
        return (int)rc;
    }
    atomic_store(&lz_tick, fd);
    return 0;
}

/* The tick's event for the lazy start (lazy_retry, MEMWATCH_LAZY=tick),
 * and its outcome for META never_began */
static void lazy_tick_try(uint64_t period)
{
    int rc = inline_tick_open(period);
    lz_retry.tried = (short)(rc ? rc : 1);
}

/* The program dup2s onto the tick's descriptor (guard.c): the tick moves to
 * another. On the program's thread, in a hook; a tick that comes between
 * the two stores still finds a valid descriptor. */
void mwp_lazy_tick_relocate(void)
{
    mwp_fd_step_aside(&lz_tick);
}

/* Take back memwatch's signals left pending (blocked by the program): exec
 * keeps pending signals and resets the handler, and the new image would die
 * of them (one of the timer's, one of the tick's at most). */
static void lazy_take_pending(void)
{
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, lazy_sig());
    struct timespec zero = {0, 0};
    for (int i = 0; i < 4096 && mwp_syscall(SYS_rt_sigtimedwait, &one, NULL, &zero, _NSIG / 8) > 0; i++)
        ;
}

static void inline_tick_close(void)
{
    int fd = atomic_exchange(&lz_tick, -1);
    lz_retry.stopped = 0;
    if (fd >= 0)
        mwp_sys_close(fd);
}

/* Inline intervals: periodic ticks from the task-clock event and from the
 * timer, whichever comes first (inline_due) */
static void inline_arm(void)
{
    int fd = atomic_load(&lz_tick);
    if (fd < 0) {
        inline_tick_open(mwp_cfg.interval_ns);
    } else { /* the lazy start's retries (lazy_retry): the interval's period from here */
        uint64_t period = mwp_cfg.interval_ns;
        mwp_syscall(SYS_ioctl, fd, PERF_EVENT_IOC_PERIOD, &period);
        if (lz_retry.stopped)
            mwp_syscall(SYS_ioctl, fd, PERF_EVENT_IOC_REFRESH, 1);
    }
    lz_retry.stopped = 0;
    if (atomic_load(&lz_tick) < 0) /* only the timer, which can be late: the large ring */
        mwp_threads_ring_grow();
    lazy_arm(mwp_cfg.interval_ns, mwp_cfg.interval_ns);
}

/* The two sources of ticks each cover what the other misses: the event
 * comes only where its clock interrupts user code (a program in system
 * calls most of its time gets few of its ticks), the timer counts system
 * time too but comes late on a loaded machine. Each interval ends at the
 * first of them after three quarters of MEMWATCH_INTERVAL of the thread's
 * CPU time; the other, coming soon after, finds too little and returns. */
static uint64_t lz_iv_cpu; /* the thread's CPU time at the last inline interval's end */

static int inline_due(uint64_t *cpu)
{
    *cpu = mwp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    return !*cpu || !lz_iv_cpu || *cpu - lz_iv_cpu >= mwp_cfg.interval_ns / 4 * 3;
}

/* Delete the timer and the tick, and take back a signal they left pending */
void mwp_lazy_disarm(void)
{
    int had = atomic_load(&lz_tick) >= 0 || lz_timer >= 0;
    inline_tick_close();
    if (lz_timer >= 0)
        mwp_syscall(SYS_timer_delete, lz_timer);
    lz_timer = -1;
    if (had)
        lazy_take_pending();
}

/* The lazy start's timer; with MEMWATCH_LAZY=tick the task-clock event
 * beside it from the start (lazy_retry says why one may need it) */
MWP_HOT void mwp_lazy_rearm(void)
{
    lazy_arm(lazy_delay(), 0);
    if (mwp_cfg.lazy_tick && atomic_load(&lz_tick) < 0 && lz_timer >= 0) {
        lazy_tick_try(lazy_delay());
    }
}

/* After a failed exec of a process with inline intervals */
void mwp_inline_rearm(void)
{
    if (mwp_engine_inline())
        inline_arm();
}

/* The text ranges of libc, the loader and memwatch itself (and of the
 * allocator memwatch's malloc hands calls to, where it is known then and not
 * libc's), listed once in the constructor: never in the timer's handler,
 * which may interrupt the loader in the middle of a dlclose, when the list
 * of objects still holds one whose headers are already unmapped (the
 * loader's lock is recursive, so dl_iterate_phdr would walk into them: ar
 * and ranlib died of SIGSEGV that way, in libbfd's dlclose of its plugin). */
/* (every process runs this: compared inline, no more of libc's functions
 * bound) */
MWP_HOT static int lazy_range_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const char *n = info->dlpi_name ? info->dlpi_name : "", *b = n;
    for (const char *c = n; *c; c++)
        if (*c == '/')
            b = c + 1;
    int libc = mwp_after(b, "libc.so") != NULL;
    int want = libc || mwp_after(b, "ld-linux") || mwp_after(b, "ld64.so") ||
               mwp_after(b, "libpthread.so") || mwp_after(b, "libdl.so");
    /* memwatch itself (this function's object), and the allocator */
    uintptr_t me = (uintptr_t)&lazy_range_cb, m = (uintptr_t)mwp_real.malloc;
    for (int i = 0; !want && i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        want = ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
               ((me >= lo && me < lo + ph->p_memsz) || (m && m >= lo && m < lo + ph->p_memsz));
    }
    if (!want)
        return 0;
    for (int i = 0; i < info->dlpi_phnum && lz_nr < 24; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        lz_lo[lz_nr] = info->dlpi_addr + ph->p_vaddr;
        lz_hi[lz_nr] = lz_lo[lz_nr] + ph->p_memsz;
        lz_libc[lz_nr] = (unsigned char)libc;
        lz_nr++;
    }
    return 0;
}

/* 1 (2 where libc's) when a is in one of the ranges listed */
static int lazy_in_ranges(uintptr_t a)
{
    for (int i = 0; i < lz_nr; i++)
        if (a >= lz_lo[i] && a < lz_hi[i])
            return 1 + lz_libc[i];
    return 0;
}

/* May mwp_begin run here, in the timer's handler? */
static int lazy_safe(const ucontext_t *uc)
{
    if (mwp_in_hook || lz_nr <= 0)
        return 0;
    uintptr_t pc;
#if defined(__x86_64__)
    pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    pc = (uintptr_t)uc->uc_mcontext.pc;
#else
    (void)uc;
    return 0; /* the program's next pthread_create begins */
#endif
    sigset_t m = uc->uc_sigmask;
    sigdelset(&m, lazy_sig());
    for (int s = 1; s < _NSIG; s++)
        if (sigismember(&m, s) != sigismember(&lz_mask, s) && s != lazy_sig())
            return 0;
    /* an allocator resolved since the list was made and not in it: it may
     * be the one interrupted */
    if (mwp_real.malloc && !lazy_in_ranges((uintptr_t)mwp_real.malloc))
        return 0;
    return !lazy_in_ranges(pc);
}

static void inline_to_thread(const char *why);

/* an inline tick that found memwatch's own code running tries again after
 * this much more CPU time */
#define MWP_INLINE_AGAIN_NS 500000ull

/* 1 where the signal is the tick's (lz_tick's overflow) */
static int lazy_tick_from(const siginfo_t *si)
{
    return atomic_load(&lz_tick) >= 0 && (si->si_code == POLL_HUP || si->si_code == POLL_IN);
}

/* A signal of the tick: the event stopped after it, so it starts again for
 * one more period (the closing interval's work is done within it, as with
 * the timer) */
static int lazy_tick_sig(const siginfo_t *si)
{
    if (!lazy_tick_from(si))
        return 0;
    mwp_syscall(SYS_ioctl, atomic_load(&lz_tick), PERF_EVENT_IOC_REFRESH, 1);
    return 1;
}

/* The lazy start found no safe point: again after MWP_LAZY_RETRY_NS more CPU
 * time, from the timer and from a task-clock event. The kernel checks a
 * CPU-time timer only at its clock tick, on the thread the tick interrupts.
 * Under load the scheduler can end the thread's every turn between two
 * ticks: it does where each turn ends in a system call that updates the
 * thread's run time (a read of its own CPU clock, sched_yield), and
 * then the timer never comes, however much CPU time the thread runs.
 * Beside stress-ng --cpu 3 on a 2-core VM, a thread that read its CPU clock
 * every 1-2 us got no signal of a 10 ms periodic timer in 200 ms of CPU time
 * in up to 7 of 20 runs (bench/inline_ticks; docs/overhead.md, "When the timer is
 * late, or does not come"). MEMWATCH_LAZY=tick opens the event from the
 * start for such a machine.
 * The event's hrtimer does not depend on the tick. It costs a perf event, so
 * only a process whose timer came once and found no safe point opens it
 * (lz_retry.tried), as a retry that the interval's tick reuses. */
static void lazy_retry(void)
{
    if (lz_retry.unsafe < 65535)
        lz_retry.unsafe++;
    lazy_arm(MWP_LAZY_RETRY_NS, 0);
    int fd = atomic_load(&lz_tick);
    if (fd >= 0 && lz_retry.stopped) {
        lz_retry.stopped = 0;
        mwp_syscall(SYS_ioctl, fd, PERF_EVENT_IOC_REFRESH, 1);
    } else if (fd < 0 && !lz_retry.tried) {
        lazy_tick_try(MWP_LAZY_RETRY_NS);
    }
}

static void lazy_handler(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    int saved = errno;
    uint64_t cpu = 0;
    int tick = si->si_code != SI_TIMER && lazy_tick_from(si);
    if ((si->si_code == SI_TIMER || tick) && atomic_load(&mwp_proc.state) == MWP_RUNNING &&
        !atomic_load(&mwp_lazy.begun) && (pid_t)mwp_syscall(SYS_getpid) == mwp_proc.pid) {
        lz_retry.stopped |= tick;
        if (lazy_safe(ucv))
            mwp_begin();
        else
            lazy_retry();
    } else if ((si->si_code == SI_TIMER || lazy_tick_sig(si)) && mwp_engine_inline() &&
               atomic_load(&mwp_lazy.begun) && (pid_t)mwp_syscall(SYS_getpid) == mwp_proc.pid &&
               inline_due(&cpu)) {
        /* from here to the return the program's samples are memwatch's
         * (preload/threads.c, "memwatch's own time") */
        uint64_t t0 = mwp_now_ns();
        mwp_threads_own_time(t0, 0);
        /* where the program has an allocator of its own, its code may be
         * inside it anywhere: nothing but the async-signal-safe part */
        int safe = !lz_own_alloc && lazy_safe(ucv);
        if (!mwp_engine_tick(safe)) { /* again after a little more CPU time */
            lazy_arm(MWP_INLINE_AGAIN_NS, mwp_cfg.interval_ns);
        } else {
            lz_iv_cpu = cpu;
            if (safe && mwp_engine_inline_due())
                inline_to_thread("the process ran MEMWATCH_INLINE's CPU time (a long run)");
        }
        mwp_threads_own_time(t0, mwp_now_ns());
    }
    errno = saved;
}

MWP_HOT static void lazy_install(void)
{
    /* every signal blocked in the handler but glibc's internal two
     * (mwp_sigfill's set); installed with the system call (signals.c) */
    struct mwp_ksig a = {(void *)lazy_handler, SA_SIGINFO | SA_RESTART, NULL,
                         ~(uint64_t)0 & ~MWP_SIG_GLIBC_INTERNAL};
    lz_nr = 0;
    dl_iterate_phdr(lazy_range_cb, NULL); /* the constructor: the list is whole */
    if (mwp_ksig_set(lazy_sig(), &a, NULL) == 0)
        mwp_lazy_rearm();
}

/* Begin now where that cannot enter an allocator in the middle of a call:
 * where memwatch's malloc hands the program's calls to libc's, which calls
 * neither memwatch's mmap nor its malloc from inside. Elsewhere at the
 * timer's next safe point, after MWP_LAZY_SOON_NS more CPU time (asked once:
 * later calls would push the expiry on). */
#define MWP_LAZY_SOON_NS 100000ull
void mwp_lazy_soon(void)
{
    static int libc_alloc = -1; /* the main thread's only (threads begin) */
    static int asked;
    if (atomic_load(&mwp_lazy.begun))
        return;
    if (libc_alloc < 0) /* from the ranges the constructor listed: this hook may run inside the loader */
        libc_alloc = mwp_real.malloc && lazy_in_ranges((uintptr_t)mwp_real.malloc) == 2;
    if (libc_alloc) {
        mwp_begin();
    } else if (lz_timer >= 0 && !asked) {
        asked = 1;
        lazy_arm(MWP_LAZY_SOON_NS, 0);
    }
}

/* The program installs a disposition for memwatch's timer signal: begin now
 * (a hook, so a safe point) with an interval thread, and leave the signal to
 * the program. */
void mwp_lazy_claimed(int sig)
{
    if (sig == lazy_sig() && lz_timer >= 0)
        mwp_begin_threaded();
}

/* Allocation records kept by the main thread while lazy: worth a file. */
static int lazy_has_records(void)
{
    struct mwp_thr *t = mwp_self;
    return t && ((t->abuf && atomic_load(&t->ahead) != atomic_load(&t->atail)) ||
                 mwp_region_pending(t));
}

/* The writer, the META and the held start-up batch (the constructor's part
 * of a process that records in full). 0 or -errno. */
static int begin_writer(int in_signal)
{
    mwp_resolve(); /* the whole table (the constructor resolved none) */
    if (!lz_attrs_done) {
        mwp_proc_attrs();
        lz_attrs_done = 1;
    }
    mwp_meta_build();
    mwp_writer_batch(1);
    int rc = mwp_writer_start(MWP_W_LATER);
    if (rc == 0) {
        if (mwp_self)
            mwp_thread_emit(mwp_self, MWR_THREAD_START);
        if (!in_signal)
            mwp_proc_alloc_note();
    }
    mwp_writer_batch(0);
    return rc;
}

/* From inline intervals to the interval thread (the program's first
 * pthread_create, its claim of the timer's signal): on the program's one
 * thread, at a safe point, where no tick runs (mwp_in_hook). */
static void inline_to_thread(const char *why)
{
    mwp_in_hook++;
    mwp_engine_inline_stop(); /* the timer is no longer periodic work */
    mwp_lazy_disarm();
    mwp_threads_ring_grow(); /* the interval thread's drains can come late */
    char b[24];
    struct mwp_str str = {b, sizeof b, 0};
    mwp_s_u64(&str, mwp_now_ns());
    b[str.len] = 0;
    mwp_meta_note(MW_META_INTERVALS_THREAD_FROM_NS, b);
    mwp_meta_note(MW_META_INTERVALS_THREAD_WHY, why);
    mwp_engine_start();
    mwp_in_hook--;
}

/* threaded: with an interval thread (else inline intervals where the
 * process has the lazy start's timer and MEMWATCH_INLINE allows them) */
static void begin(int threaded)
{
    if (atomic_load(&mwp_lazy.begun) && !(threaded && mwp_engine_inline()))
        return;
    if (atomic_load(&mwp_proc.state) != MWP_RUNNING ||
        (pid_t)mwp_syscall(SYS_getpid) != mwp_proc.pid)
        return;
    if (atomic_load(&mwp_lazy.begun)) {
        inline_to_thread("the program started a thread, or claimed memwatch's timer signal");
        return;
    }
    int exp = 0;
    if (!atomic_compare_exchange_strong(&mwp_lazy.begun, &exp, 1))
        return;
    mwp_in_hook++;
    mwp_config_load_late(&mwp_cfg);
    mwp_threads_key(); /* the threads' end (threads.c) */
    mwp_signals_begin(); /* the handlers of the signals left for now (signals.h) */
    int inl = !threaded && mwp_cfg.inline_iv && lz_timer >= 0;
    if (!inl)
        mwp_lazy_disarm();
    if (begin_writer(0) < 0) {
        mwp_lazy_disarm();
        atomic_store(&mwp_proc.state, MWP_OFF);
        mwp_in_hook--;
        return;
    }
    if (inl) {
        mwp_meta_note(MW_META_INTERVALS, "inline: on the program's thread while it has one");
        mwp_engine_inline_start();
        inline_arm();
    } else {
        mwp_engine_start();
    }
    mwp_in_hook--;
}

void mwp_begin(void)
{
    begin(0);
}

void mwp_begin_threaded(void)
{
    begin(1);
}

/* A process that ends before it began, holding allocation records and
 * nothing else (most of a build's compiler drivers, assemblers and linkers:
 * one or a few allocations of 64 KiB or more): the records, and the modules
 * their return addresses and stacks are read against, go into its segment
 * of the shared file of short processes instead of a file of its own (no
 * file to create, no writer to start; docs/overhead.md). In a signal
 * handler (a fatal signal, _exit) without the modules, which a file of its
 * own would lack there too (dl_iterate_phdr takes the loader's lock).
 * Returns 1 when written, 0 where the modules do not fit (then a file of its
 * own, as before). */
MWP_COLD static char lz_mods[32 << 10];
static int lazy_end_short(int32_t status, const char *how, int in_signal)
{
    struct iovec v[3];
    uint64_t nm = 0, na = 0;
    int k = 0;
    if (!in_signal) {
        long len = mwp_modules_collect(lz_mods, sizeof lz_mods, &nm);
        if (len < 0)
            return 0;
        v[k++] = (struct iovec){lz_mods, (size_t)len};
    }
    int n = mwp_abuf_take(v + k, &na);
    mwp_writer_summary(status, how, v, k + n, nm + na);
    return 1;
}

/* The end of a process that never began (mwp_finish): one small file, or
 * nothing for an exec (the new image continues). Returns 1 when done, 0 when
 * the process has records to keep and ends as a recording one does. */
MWP_HOT int mwp_lazy_end(int32_t status, const char *how, int in_signal)
{
    int exec = mwp_streq(how, "exec");
    if (!lazy_has_records()) {
        if (!exec)
            mwp_writer_summary(status, how, NULL, 0, 0);
        return 1;
    }
    if (!exec && !mwp_region_pending(mwp_self) && lazy_end_short(status, how, in_signal))
        return 1;
    atomic_store(&mwp_lazy.begun, 1);
    if (exec)
        mwp_lazy_disarm();
    if (begin_writer(in_signal) < 0)
        return 1;
    return 0;
}

/* ---- what the constructor and a fork child hand over ---- */

MWP_HOT void mwp_lazy_signals(void)
{
    mwp_signals_install(&lz_mask);
}

MWP_HOT void mwp_lazy_install(int own_alloc)
{
    lz_own_alloc = own_alloc;
    lazy_install();
    if (lz_own_alloc)
        mwp_begin(); /* the program's own allocator (see "lazy start"): inline intervals from here */
}

void mwp_lazy_child(void)
{
    /* Lazy, as a process started by exec: its own interval thread and file
     * come after one interval of its CPU time (lazy start); a child that
     * execs or ends sooner has none. */
    atomic_store(&mwp_lazy.begun, 0);
    lz_timer = -1; /* timers are not inherited, */
    lz_iv_cpu = 0;
    memset(&lz_retry, 0, sizeof lz_retry);
    inline_tick_close(); /* the tick's descriptor is the parent's event */
}
