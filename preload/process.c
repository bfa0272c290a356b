/*
 * preload/process.c: libmemwatch.so's life cycle and everything that starts
 * or ends a process image.
 *
 * Owns: the constructor and destructor, the process-wide state, fork
 * handling (pthread_atfork: the child closes the parent's file, gets its own
 * file, thread registry, samplers and interval thread), the lazy start,
 * exit/_exit/_Exit and the return from main (__libc_start_main), and
 * mw_preload_emit. exec* and posix_spawn are in exec.c; the guard that keeps
 * programs from closing or dup2-ing over memwatch's descriptor, and the
 * namespace calls that need a single-threaded process, in guard.c.
 *
 * vfork is not interposed: a vfork child shares the parent's memory, so
 * memwatch code running in it (exec*, _exit) sees getpid() != mwp_pid and
 * touches nothing; the exec'ed image is profiled through the environment.
 */
#include "internal.h"

#include <memwatch/attrs.h>
#include <memwatch/preload.h>
#include <memwatch/profile.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

extern char **environ;

_Atomic int mwp_state;
pid_t mwp_pid;
int mwp_is_fork_child;
char mwp_host[128];
int mwp_rank;
const char *mwp_rank_from;
_Atomic int mwp_exit_known;
_Atomic int mwp_exit_status;
char mwp_identity[256];
char mwp_profile_desc[PATH_MAX + 160] = "pending (see the later META record)";
MWP_COLD char mwp_exe[PATH_MAX];
uint64_t mwp_start_mono_ns, mwp_start_real_ns;
double mwp_tsc_hz_val;
const char *_Atomic mwp_tsc_src;
/* libmemwatch.so's path: the loader's own string (dladdr), valid while
 * the library is loaded, which is for good (-z nodelete); looked up where
 * first needed (dladdr scans the library's symbols: not in every process) */
static const char *mwp_self_path_v;
static const char *self_path(void)
{
    if (!mwp_self_path_v) {
        Dl_info di;
        mwp_self_path_v = dladdr((void *)self_path, &di) && di.dli_fname ? di.dli_fname : "";
    }
    return mwp_self_path_v;
}
/* 0 while the process is lazy (no interval thread, no perf event, no file:
 * "lazy start" below), 1 from mwp_begin on. */
_Atomic int mwp_begun;
/* The fork this image continues, handed down by a lazy fork child that
 * execs (MEMWATCH_FORKED "PID MONO_NS"); 0 where none. */
uint64_t mwp_forked_ns;

#define MWP_STATUS_UNKNOWN INT32_MIN

static int mwp_lazy_end(int32_t status, const char *how, int in_signal);
static void ctor_attrs(void);
static void ctor_alloc_note(void);

/* ---- finishing ---- */

MWP_HOT void mwp_finish(int32_t status, const char *how, int in_signal)
{
    if ((pid_t)mwp_syscall(SYS_getpid) != mwp_pid)
        return; /* vfork child or a clone memwatch does not know: touch nothing */
    int exp = MWP_RUNNING;
    if (!atomic_compare_exchange_strong(&mwp_state, &exp, MWP_ENDING))
        return;
    if (mwp_cfg.verbose >= 3) {
        char b[64];
        struct mwp_str s = {b, sizeof b, 0};
        mwp_s_i64(&s, mwp_pid);
        mwp_say(3, "finishing (", how, b);
    }
    mwp_in_hook++;
    mwp_alloc_sites_emit(); /* sampled allocation sites' totals (alloc_sites.c), buffered */
    if (!atomic_load(&mwp_begun) && mwp_lazy_end(status, how, in_signal)) {
        atomic_store(&mwp_state, MWP_ENDED);
        mwp_in_hook--;
        return;
    }
    /* an interval in progress on the interval thread writes what it
     * gathered first (it holds the rings it drains meanwhile) */
    mwp_writer_gather_wait();
    /* The program never waits for the interval thread's set-up (its perf
     * event opens can take hundreds of milliseconds); one that ends before
     * it is done has no threshold in META, and says why. None of its
     * intervals has a latency reading then: the probe comes after. */
    if (mwp_engine_setting_up())
        mwp_meta_note("threshold_source",
                      "none: the process ended before memwatch's interval thread finished its set-up");
    if (!in_signal)
        mwp_modules_scan(0);
    uint64_t s = 0, l = 0;
    unsigned live = mwp_threads_drain(0, in_signal, &s, &l);
    mwp_region_finish();
    uint64_t own = atomic_load(&mwp_stat_own);
    if (own) {
        char b[24];
        struct mwp_str str = {b, sizeof b, 0};
        mwp_s_u64(&str, own);
        b[str.len] = 0;
        mwp_meta_note("samples_own", b); /* memwatch's inline ticks, left out */
    }
    /* The last, partial interval: samples only, no latency measurement. */
    mwr_interval iv;
    memset(&iv, 0, sizeof iv);
    iv.t_start_ns = mwp_iv_last_end;
    iv.t_end_ns = mwp_now_ns();
    iv.nthreads = live;
    iv.samples = s;
    iv.lost = l;
    iv.threshold_ns = mwp_engine_threshold(); /* no reading, but the threshold in force */
    struct iovec v = {&iv, sizeof iv};
    if (iv.t_start_ns && iv.t_end_ns > iv.t_start_ns)
        mwp_write(MWR_INTERVAL, &v, 1);
    mwp_threads_short_note();
    char blk[400];
    if (mwp_lazy_blocked(blk, sizeof blk, 0, 1))
        mwp_meta_note("signals_blocked", blk);
    mwp_cpu_emit(0);
    mwp_cpu_emit(1);
    mwp_writer_trailer(status, how);
    atomic_store(&mwp_state, MWP_ENDED);
    mwp_in_hook--;
}

MWP_HOT __attribute__((destructor)) static void mwp_fini(void)
{
    if (mwp_cfg.verbose >= 3) {
        char b[64];
        struct mwp_str s = {b, sizeof b, 0};
        mwp_s_i64(&s, (int64_t)mwp_syscall(SYS_getpid));
        mwp_s_str(&s, " state ");
        mwp_s_i64(&s, atomic_load(&mwp_state));
        mwp_say(3, "fini ", b, NULL);
    }
    if (atomic_load(&mwp_state) != MWP_RUNNING)
        return;
    int32_t st = atomic_load(&mwp_exit_known) ? atomic_load(&mwp_exit_status) : MWP_STATUS_UNKNOWN;
    mwp_finish(st, "exit", 0);
}

MWP_EXPORT void exit(int status)
{
    MWP_NEED(exit, "exit");
    atomic_store(&mwp_exit_status, status & 0xff);
    atomic_store(&mwp_exit_known, 1);
    mwp_real.exit(status);
}

MWP_EXPORT void _exit(int status)
{
    MWP_NEED(_exit, "_exit");
    if (atomic_load(&mwp_state) == MWP_RUNNING)
        mwp_finish(status & 0xff, "_exit", 1);
    if (mwp_real._exit)
        mwp_real._exit(status);
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

MWP_EXPORT void _Exit(int status)
{
    _exit(status);
}

typedef int (*mwp_main_fn)(int, char **, char **);
static mwp_main_fn mwp_app_main;

static int mwp_main(int argc, char **argv, char **envp)
{
    int r = mwp_app_main(argc, argv, envp);
    atomic_store(&mwp_exit_status, r & 0xff);
    atomic_store(&mwp_exit_known, 1);
    return r;
}

MWP_HOT MWP_EXPORT int __libc_start_main(mwp_main_fn main_fn, int argc, char **argv, void (*init)(void),
                                 void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    int (*real)(mwp_main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void),
                void *);
    *(void **)&real = dlsym(RTLD_NEXT, "__libc_start_main");
    mwp_app_main = main_fn;
    return real(mwp_main, argc, argv, init, fini, rtld_fini, stack_end);
}

/* ---- lazy start ----
 * Most processes of a build, a configure script or a shell pipeline live a
 * few milliseconds. Each pays, under memwatch, for what it sets up before it
 * ends; so a process sets up nothing that can wait until it has run for
 * about one interval (docs/overhead.md, "lazy start"):
 *
 * - the constructor reads the configuration, checks the directory, installs
 *   the signal dispositions and arms a one-shot timer on the main thread's
 *   CPU clock (MWP_LAZY_SIG after one interval of its CPU time); no thread,
 *   no perf event, no file;
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
static int lz_timer = -1;          /* the kernel's timer id, -1: none */
static sigset_t lz_mask;           /* the main thread's signal mask at the start */
static int lz_nr = -1;             /* text ranges of libc, the loader and memwatch; -1: unknown */
static uintptr_t lz_lo[24], lz_hi[24];
static unsigned char lz_libc[24];  /* 1: the range is libc's */
static int lz_attrs_done;

static int lazy_sig(void)
{
    return SIGRTMAX - 3;
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

/* The value of META signals_blocked into out (NUL-terminated), its length;
 * 0 where memwatch's signal was not kept from it. A process that never
 * began (begun 0) is looked at only where it ran one lazy delay of CPU time
 * (cpu_ns), so that short processes pay no system call; a begun one only
 * with inline intervals. System calls only: async-signal-safe. */
size_t mwp_lazy_blocked(char *out, size_t cap, uint64_t cpu_ns, int begun)
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
        mwp_s_str(&s, ": recording never began (lazy start) in ");
        mwp_s_dbl(&s, (double)cpu_ns / 1e6);
        mwp_s_str(&s, " ms of CPU time: no samples, no intervals");
        if (!pending)
            mwp_s_str(&s, " (memwatch begins only where the mask is the one the program started with)");
    } else {
        mwp_s_str(&s, ": inline intervals (on that signal) stopped while it was blocked: no intervals, "
                      "and samples only as far as the rings held them");
    }
    out[s.len] = 0;
    return s.len;
}

static int lz_own_alloc; /* the program's malloc is not memwatch's (its executable's, or an
                            earlier preload's): it begins in the constructor */

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

/* Delete the timer and take back a signal it left pending (blocked by the
 * program): exec keeps pending signals and resets the handler, and the new
 * image would die of it. */
void mwp_lazy_disarm(void)
{
    if (lz_timer < 0)
        return;
    mwp_syscall(SYS_timer_delete, lz_timer);
    lz_timer = -1;
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, lazy_sig());
    struct timespec zero = {0, 0};
    mwp_syscall(SYS_rt_sigtimedwait, &one, NULL, &zero, _NSIG / 8);
}

void mwp_lazy_rearm(void)
{
    lazy_arm(lazy_delay(), 0);
}

/* After a failed exec of a process with inline intervals */
void mwp_inline_rearm(void)
{
    if (mwp_engine_inline())
        lazy_arm(mwp_cfg.interval_ns, mwp_cfg.interval_ns);
}

/* The text ranges of libc, the loader and memwatch itself (and of the
 * allocator memwatch's malloc hands calls to, where it is known then and not
 * libc's), listed once in the constructor: never in the timer's handler,
 * which may interrupt the loader in the middle of a dlclose, when the list
 * of objects still holds one whose headers are already unmapped (the
 * loader's lock is recursive, so dl_iterate_phdr would walk into them: ar
 * and ranlib died of SIGSEGV that way, in libbfd's dlclose of its plugin). */
MWP_HOT static int lazy_pfx(const char *s, const char *p)
{
    while (*p && *s == *p)
        s++, p++;
    return !*p;
}

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
    int libc = lazy_pfx(b, "libc.so");
    int want = libc || lazy_pfx(b, "ld-linux") || lazy_pfx(b, "ld64.so") ||
               lazy_pfx(b, "libpthread.so") || lazy_pfx(b, "libdl.so");
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

static void lazy_handler(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    int saved = errno;
    if (si->si_code == SI_TIMER && atomic_load(&mwp_state) == MWP_RUNNING &&
        !atomic_load(&mwp_begun) && (pid_t)mwp_syscall(SYS_getpid) == mwp_pid) {
        if (lazy_safe(ucv))
            mwp_begin();
        else
            lazy_arm(MWP_LAZY_RETRY_NS, 0);
    } else if (si->si_code == SI_TIMER && mwp_engine_inline() && atomic_load(&mwp_begun) &&
               (pid_t)mwp_syscall(SYS_getpid) == mwp_pid) {
        /* from here to the return the program's samples are memwatch's
         * (preload/threads.c, "memwatch's own time") */
        uint64_t t0 = mwp_now_ns();
        mwp_threads_own_time(t0, 0);
        /* where the program has an allocator of its own, its code may be
         * inside it anywhere: nothing but the async-signal-safe part */
        int safe = !lz_own_alloc && lazy_safe(ucv);
        if (!mwp_engine_tick(safe)) /* again after a little more CPU time */
            lazy_arm(MWP_INLINE_AGAIN_NS, mwp_cfg.interval_ns);
        else if (safe && mwp_engine_inline_due())
            inline_to_thread("the process ran MEMWATCH_INLINE's CPU time (a long run)");
        mwp_threads_own_time(t0, mwp_now_ns());
    }
    errno = saved;
}

MWP_HOT static void lazy_install(void)
{
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_sigaction = lazy_handler;
    a.sa_flags = SA_SIGINFO | SA_RESTART;
    mwp_sigfill(&a.sa_mask);
    lz_nr = 0;
    dl_iterate_phdr(lazy_range_cb, NULL); /* the constructor: the list is whole */
    if (mwp_real.sigaction(lazy_sig(), &a, NULL) == 0)
        lazy_arm(lazy_delay(), 0);
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
    if (atomic_load(&mwp_begun))
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
        ctor_attrs();
        lz_attrs_done = 1;
    }
    mwp_meta_build();
    mwp_writer_batch(1);
    int rc = mwp_writer_start(MWP_W_LATER);
    if (rc == 0) {
        if (mwp_self)
            mwp_thread_emit(mwp_self, MWR_THREAD_START);
        if (!in_signal)
            ctor_alloc_note();
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
    char b[24];
    struct mwp_str str = {b, sizeof b, 0};
    mwp_s_u64(&str, mwp_now_ns());
    b[str.len] = 0;
    mwp_meta_note("intervals_thread_from_ns", b);
    mwp_meta_note("intervals_thread_why", why);
    mwp_engine_start();
    mwp_in_hook--;
}

/* threaded: with an interval thread (else inline intervals where the
 * process has the lazy start's timer and MEMWATCH_INLINE allows them) */
static void begin(int threaded)
{
    if (atomic_load(&mwp_begun) && !(threaded && mwp_engine_inline()))
        return;
    if (atomic_load(&mwp_state) != MWP_RUNNING || (pid_t)mwp_syscall(SYS_getpid) != mwp_pid)
        return;
    if (atomic_load(&mwp_begun)) {
        inline_to_thread("the program started a thread, or claimed memwatch's timer signal");
        return;
    }
    int exp = 0;
    if (!atomic_compare_exchange_strong(&mwp_begun, &exp, 1))
        return;
    mwp_in_hook++;
    int inl = !threaded && mwp_cfg.inline_iv && lz_timer >= 0;
    if (!inl)
        mwp_lazy_disarm();
    if (begin_writer(0) < 0) {
        mwp_lazy_disarm();
        atomic_store(&mwp_state, MWP_OFF);
        mwp_in_hook--;
        return;
    }
    if (inl) {
        mwp_meta_note("intervals", "inline: on the program's thread while it has one");
        mwp_engine_inline_start();
        lazy_arm(mwp_cfg.interval_ns, mwp_cfg.interval_ns);
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
static int mwp_lazy_end(int32_t status, const char *how, int in_signal)
{
    int exec = mwp_streq(how, "exec");
    if (!lazy_has_records()) {
        if (!exec)
            mwp_writer_summary(status, how, NULL, 0, 0);
        return 1;
    }
    if (!exec && !mwp_region_pending(mwp_self) && lazy_end_short(status, how, in_signal))
        return 1;
    atomic_store(&mwp_begun, 1);
    if (exec)
        mwp_lazy_disarm();
    if (begin_writer(in_signal) < 0)
        return 1;
    return 0;
}

/* Where no parent handed down the TSC rate: the TSC beside the start's
 * clock reading, so that a process that begins measures the rate over its
 * own first interval instead of sleeping 20 ms for it (counters/tsc.c), on
 * the program's thread where its intervals run inline. CLOCK_MONOTONIC, the
 * start's own clock: its slewing (500 ppm at most) is far below what the
 * rate is checked against (0.2 %). */
uint64_t mwp_tsc_mark_tsc;
MWP_HOT static void ctor_tsc_mark(void)
{
#if defined(__x86_64__)
    if (mwp_cfg.tsc_hz <= 0)
        mwp_tsc_mark_tsc = __builtin_ia32_rdtsc();
#endif
}

/* ---- fork ---- */

static void fork_child(void)
{
    if (atomic_load(&mwp_state) != MWP_RUNNING)
        return;
    mwp_in_hook++;
    mwp_pid = (pid_t)mwp_syscall(SYS_getpid);
    mwp_is_fork_child = 1;
    mwp_cpu_base_take(); /* a fork child's own count starts at zero */
    mwp_writer_child();
    if (!mwp_cfg.follow) {
        atomic_store(&mwp_state, MWP_OFF);
        mwp_threads_child();
        mwp_in_hook--;
        return;
    }
    mwp_start_mono_ns = mwp_now_ns();
    ctor_tsc_mark(); /* beside this start's clock reading */
    mwp_start_real_ns = mwp_clock_ns(CLOCK_REALTIME);
    mwp_forked_ns = 0;
    /* Lazy, as a process started by exec: its own interval thread and file
     * come after one interval of its CPU time (lazy start); a child that
     * execs or ends sooner has none. */
    atomic_store(&mwp_begun, 0);
    lz_timer = -1; /* timers are not inherited */
    mwp_threads_child();
    mwp_region_child();
    mwp_modules_child();
    mwp_engine_child();
    lazy_arm(lazy_delay(), 0);
    mwp_in_hook--;
}

/* ---- the GPU hook ---- */

MWP_EXPORT int mw_preload_emit(uint32_t type, const void *payload, uint32_t len)
{
    if (atomic_load(&mwp_state) != MWP_RUNNING || (pid_t)mwp_syscall(SYS_getpid) != mwp_pid)
        return -ENODEV;
    if (len > MW_PRELOAD_EMIT_MAX || (len && !payload))
        return -EMSGSIZE;
    if (type == MWR_TRAILER)
        return -EINVAL;
    if (!atomic_load(&mwp_begun))
        mwp_begin(); /* records worth keeping (lazy start) */
    struct iovec v = {(void *)payload, len};
    mwp_in_hook++;
    int rc = mwp_write(type, &v, 1);
    mwp_in_hook--;
    return rc;
}

/* ---- constructor ---- */

extern void *__dso_handle;
extern int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void),
                             void *dso_handle);

MWP_HOT static int ctor_rank(void)
{
    static const char vars[][24] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                    "SLURM_PROCID"};
    static const int ids[] = {MWP_ENV_OMPI_RANK, MWP_ENV_PMIX_RANK, MWP_ENV_PMI_RANK,
                              MWP_ENV_SLURM_PROCID};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = mwp_env[ids[i]];
        if (v && *v) {
            char *end;
            long r = strtol(v, &end, 10);
            if (!*end && r >= 0 && r < (1L << 30)) {
                mwp_rank_from = vars[i];
                return (int)r;
            }
        }
    }
    return 0;
}

MWP_HOT static void ctor_host(void)
{
    struct utsname u;
    /* no snprintf on the path of every process: the first call of the
     * printf machinery faults in pages of libc's text */
    if (mwp_syscall(SYS_uname, &u) == 0) {
        size_t l = 0;
        while (l < sizeof u.nodename && u.nodename[l])
            l++;
        l = l < sizeof mwp_host - 1 ? l : sizeof mwp_host - 1;
        memcpy(mwp_host, u.nodename, l);
        mwp_host[l] = 0;
    } else {
        mwp_strcpy(mwp_host, "unknown");
    }
    for (char *p = mwp_host; *p; p++)
        if (*p == '/' || *p == ' ')
            *p = '_';
}

/* Out of line: its buffers are paid for only by the first process of a
 * tree (the others inherit CUDA_INJECTION64_PATH). */
__attribute__((noinline)) static void ctor_gpu_set(void)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", self_path());
    char *slash = strrchr(dir, '/');
    if (!slash)
        return;
    *slash = 0;
    char lib[PATH_MAX + 32];
    snprintf(lib, sizeof lib, "%s/libmemwatch_cuda.so", dir);
    if (access(lib, R_OK) == 0) {
        setenv("CUDA_INJECTION64_PATH", lib, 1);
        /* NVTX ranges become regions (gpu/nvtx.c), unless another tool takes them */
        if (!getenv("NVTX_INJECTION64_PATH"))
            setenv("NVTX_INJECTION64_PATH", lib, 1);
    }
}

MWP_HOT static void ctor_gpu(void)
{
    if (mwp_cfg.gpu && !mwp_env[MWP_ENV_CUDA_INJECTION])
        ctor_gpu_set();
}

/* MEMWATCH_RATE against kernel.perf_event_max_sample_rate (one line where
 * it is clamped). In the constructor where the user set a rate, so that the
 * line comes whether or not the process lives to sample; else at the start
 * of sampling (lazy start). */
static int rate_checked;
static void ctor_rate(void)
{
    if (rate_checked || !mwp_cfg.rate)
        return;
    rate_checked = 1;
    unsigned long max = mw_attr_max_rate();
    int clamped = 0;
    mwp_cfg.rate = mw_attr_clamp_rate(mwp_cfg.rate, max, &clamped);
    mwp_cfg.rate_clamped = clamped;
    if (clamped)
        mwp_say(1, "MEMWATCH_RATE clamped to kernel.perf_event_max_sample_rate", NULL, NULL);
}

MWP_HOT static void ctor_attrs(void)
{
    mwp_attr_size = sizeof(struct perf_event_attr);
    if (mwp_cfg.rate) {
        ctor_rate();
        struct perf_event_attr a;
        mw_attr_cpu_clock(&a, mwp_cfg.rate, mwp_cfg.stack_depth);
        if (mwp_cfg.unwind == MWP_UNWIND_DWARF)
            mw_attr_user_stack(&a, mwp_cfg.unwind_stack);
        else
            mw_attr_user_regs(&a); /* data addresses of decoded samples */
        memcpy(mwp_attr_bytes[0], &a, sizeof a);
    }
    if (mwp_cfg.fault_period) {
        struct perf_event_attr a;
        mw_attr_page_faults(&a, mwp_cfg.fault_period, mwp_cfg.stack_depth);
        memcpy(mwp_attr_bytes[1], &a, sizeof a);
    }
    mwp_precise_setup();
}

/* Allocation hooks see only the calls that reach them: where another
 * library preloaded ahead of libmemwatch.so (a sanitizer runtime, another
 * allocator) serves malloc, the program's allocations never pass through
 * memwatch. Say so instead of recording none silently. */
static void ctor_alloc_note(void)
{
    if (mwp_cfg.alloc_threshold == UINT64_MAX)
        return;
    /* Is the allocator behind memwatch's hooks glibc's? (alloc.c reads its
     * chunk headers then) */
    const char *fo = mwp_real.free ? mwp_object_of(*(void **)&mwp_real.free) : NULL;
    const char *mo = mwp_real.malloc ? mwp_object_of(*(void **)&mwp_real.malloc) : NULL;
    const char *base = fo ? strrchr(fo, '/') : NULL;
    if (base && !strncmp(base + 1, "libc.so.", 8) && mo && !strcmp(mo, fo))
        mwp_alloc_glibc = 1;
    void *m = dlsym(RTLD_DEFAULT, "malloc");
    const char *owner = m ? mwp_object_of(m) : NULL;
    if (!owner || !strcmp(owner, self_path()))
        return;
    char why[PATH_MAX + 160];
    snprintf(why, sizeof why,
             "not recorded: the program's malloc is %s's, loaded ahead of libmemwatch.so",
             owner[0] ? owner : mwp_exe);
    mwp_meta_note("allocations", why);
    mwp_say(2, "allocations ", why, NULL);
}


/* glibc calls ELF constructors with (argc, argv, envp). */
/* MEMWATCH_ENABLE says no (0, no, false, off): the constructor returns
 * before anything else, so that a disabled library costs what any preloaded
 * library costs (config.c still reports an invalid value). */
MWP_HOT static int ctor_disabled(void)
{
    const char *v = mwp_env[MWP_ENV_ENABLE];
    return v && (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "false") ||
                 !strcasecmp(v, "off"));
}

/* strtoull of the plain decimals memwatch writes (up to 18 digits; strtoull
 * itself for anything else): its code is a page of libc that a process
 * would touch for this alone. */
MWP_HOT static unsigned long long ctor_dec(const char *v, char **end)
{
    unsigned long long n = 0;
    const char *p = v;
    while (*p >= '0' && *p <= '9' && p - v < 18)
        n = n * 10 + (unsigned long long)(*p++ - '0');
    if (p == v || (*p >= '0' && *p <= '9'))
        return strtoull(v, end, 10);
    if (end)
        *end = (char *)p;
    return n;
}

/* MEMWATCH_FORKED "PID MONO_NS": the lazy fork child this image continues
 * (only where PID is this process: a stale value is ignored). */
MWP_HOT static void ctor_forked(void)
{
    const char *v = mwp_env[MWP_ENV_FORKED];
    if (!v)
        return;
    char *end;
    long pid = v[0] >= '0' && v[0] <= '9' ? (long)ctor_dec(v, &end) : strtol(v, &end, 10);
    if (pid == (long)mwp_pid && *end == ' ')
        mwp_forked_ns = ctor_dec(end + 1, NULL);
    unsetenv("MEMWATCH_FORKED");
    mwp_env_drop("MEMWATCH_FORKED");
}

/* MEMWATCH_DIR_OK: the output directory a recorded parent found usable,
 * so that its children do not check it again (three system calls in every
 * process of a tree). */
MWP_HOT static int ctor_dir_checked(void)
{
    const char *v = mwp_env[MWP_ENV_DIR_OK];
    return v && mwp_cfg.dir[0] == '/' && mwp_streq(v, mwp_cfg.dir);
}

/* Children write beside us even after a chdir: make the directory
 * absolute. Out of line: its buffers would make the constructor's frame
 * 12 KiB, and the stack probes of such a frame touch three pages of stack
 * in every process. */
__attribute__((noinline)) static void ctor_dir_absolute(void)
{
    char cwd[PATH_MAX], abs[2 * PATH_MAX + 8];
    if (!getcwd(cwd, sizeof cwd))
        return;
    if (!mwp_cfg.dir[0] || !strcmp(mwp_cfg.dir, "."))
        snprintf(abs, sizeof abs, "%s", cwd);
    else
        snprintf(abs, sizeof abs, "%s/%s", cwd, mwp_cfg.dir);
    if (strlen(abs) < sizeof mwp_cfg.dir - 80) {
        strcpy(mwp_cfg.dir, abs);
        if (mwp_cfg.follow)
            setenv("MEMWATCH_DIR", mwp_cfg.dir, 1);
    }
}


/* glibc calls ELF constructors with (argc, argv, envp). */
MWP_HOT __attribute__((constructor)) static void mwp_init(int argc, char **argv, char **envp)
{
    (void)envp;
    if (getauxval(AT_SECURE))
        return; /* setuid/setgid or otherwise secure execution: never profile */
    mwp_env_scan(); /* the environment in one pass (env.c) */
    if (ctor_disabled()) {
        mwp_env_unfollow_self(); /* children do not even load the library */
        return;
    }
    mwp_writer_cmdline(argc, argv);
    /* The interposed functions resolve their next definitions one by one as
     * they are first called (MWP_NEED); the whole table at mwp_begin. */
    mwp_env_lookup_on(1);
    mwp_config_load(&mwp_cfg);
    mwp_env_lookup_on(0);
    if (!mwp_cfg.enabled) {
        mwp_env_unfollow_self();
        return;
    }
    mwp_in_hook++;
    mwp_pid = (pid_t)mwp_syscall(SYS_getpid);
    mwp_cpu_base_take();
    ctor_host();
    mwp_rank = ctor_rank();
    ssize_t n = (ssize_t)mwp_syscall(SYS_readlink, "/proc/self/exe", mwp_exe, sizeof mwp_exe - 1);
    mwp_exe[n > 0 ? n : 0] = 0;
    if (mwp_cfg.dir[0] != '/')
        ctor_dir_absolute();
    if (!mwp_cfg.follow)
        mwp_env_unfollow_self();
    ctor_gpu();
    ctor_forked();
    if (mwp_env[MWP_ENV_RATE])
        ctor_rate();
    const char *mid = mwp_env[MWP_ENV_MACHINE]; /* handed down by a recorded parent */
    if (mid && *mid && strlen(mid) < sizeof mwp_identity && !mwp_has_char(mid, '\n'))
        mwp_strcpy(mwp_identity, mid);
    else if (mw_machine_identity(NULL, NULL, mwp_identity, sizeof mwp_identity) < 0)
        mwp_strcpy(mwp_identity, "unknown");
    mwp_start_mono_ns = mwp_clock_sys_ns(CLOCK_MONOTONIC);
    ctor_tsc_mark();
    mwp_start_real_ns = mwp_clock_sys_ns(CLOCK_REALTIME);
    if (ctor_dir_checked()) {
        /* a recorded parent checked this directory */
    } else if (mwp_writer_dir_check() < 0) {
        /* One warning per program: its children stay out of the way quietly
         * (and do not load the library). */
        setenv("MEMWATCH_ENABLE", "0", 1);
        mwp_env_unfollow_self();
        mwp_in_hook--;
        return; /* one warning was given; the program runs without memwatch */
    } else if (mwp_cfg.follow && mwp_cfg.dir[0] == '/') {
        setenv("MEMWATCH_DIR_OK", mwp_cfg.dir, 1);
    }
    atomic_store(&mwp_state, MWP_RUNNING);
    /* The main thread's entry; its samplers are left to the interval thread
     * (preload/threads.c, "deferred samplers"), which comes at mwp_begin
     * ("lazy start" above). */
    mwp_threads_init(1);
    mwp_signals_install(&lz_mask);
    /* pthread_atfork's body (libc_nonshared.a), called directly: the stub
     * linked into this library would lie in a page of text of its own */
    __register_atfork(mwp_writer_settle, NULL, fork_child, &__dso_handle);
    lz_own_alloc = !mwp_alloc_ours(malloc);
    lazy_install();
    if (lz_own_alloc)
        mwp_begin(); /* the program's own allocator (see "lazy start"): inline intervals from here */
    mwp_in_hook--;
}
