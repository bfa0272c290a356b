/*
 * preload/process.c: libmemwatch.so's life cycle and everything that starts
 * or ends a process image.
 *
 * Owns: the constructor and destructor, the process-wide state (mwp_proc,
 * mwp_exe: process.h), fork handling (pthread_atfork: the child closes the
 * parent's file, gets its own file, thread registry, samplers and interval
 * thread), exit/_exit/_Exit and the return from main (__libc_start_main),
 * and mw_preload_emit. The lazy start (when a process begins recording) is
 * in lazy.c; exec* and posix_spawn in exec.c; the guard that keeps programs
 * from closing or dup2-ing over memwatch's descriptor, and the namespace
 * calls that need a single-threaded process, in guard.c.
 *
 * vfork is not interposed: a vfork child shares the parent's memory, so
 * memwatch code running in it (exec*, _exit) sees getpid() != mwp_proc.pid and
 * touches nothing; the exec'ed image is profiled through the environment.
 */
#include "process.h"

#include "alloc.h"
#include "base.h"
#include "config.h"
#include "engine.h"
#include "env.h"
#include "exec.h"
#include "lazy.h"
#include "modules.h"
#include "precise.h"
#include "real.h"
#include "region.h"
#include "sys.h"
#include "threads.h"
#include "util.h"
#include "writer.h"

#include <memwatch/attrs.h>
#include <memwatch/mwr.h>
#include <memwatch/preload.h>
#include <memwatch/profile.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
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
#include <unistd.h>

extern char **environ;

MWP_HOT_DATA struct mwp_proc mwp_proc;
/* The exit status the program gave (exit, the return from main), for the
 * destructor's end. */
MWP_HOT_DATA static _Atomic int exit_known;
MWP_HOT_DATA static _Atomic int exit_status;
MWP_COLD struct mwp_exe mwp_exe;
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

#define MWP_STATUS_UNKNOWN INT32_MIN


/* ---- finishing ---- */

MWP_HOT void mwp_finish(int32_t status, const char *how, int in_signal)
{
    if ((pid_t)mwp_syscall(SYS_getpid) != mwp_proc.pid)
        return; /* vfork child or a clone memwatch does not know: touch nothing */
    int exp = MWP_RUNNING;
    if (!atomic_compare_exchange_strong(&mwp_proc.state, &exp, MWP_ENDING))
        return;
    if (mwp_cfg.verbose >= 3) {
        char b[64];
        struct mwp_str s = {b, sizeof b, 0};
        mwp_s_i64(&s, mwp_proc.pid);
        mwp_say(3, "finishing (", how, b);
    }
    mwp_in_hook++;
    mwp_alloc_sites_emit(); /* sampled allocation sites' totals (alloc_sites.c), buffered */
    if (!atomic_load(&mwp_lazy.begun) && mwp_lazy_end(status, how, in_signal)) {
        atomic_store(&mwp_proc.state, MWP_ENDED);
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
        mwp_meta_note(MW_META_THRESHOLD_SOURCE,
                      "none: the process ended before memwatch's interval thread finished its set-up");
    if (!in_signal)
        mwp_modules_scan(0);
    uint64_t s = 0, l = 0;
    unsigned live = mwp_threads_drain(0, in_signal, &s, &l);
    mwp_region_finish();
    uint64_t own = mwp_threads_own_samples();
    if (own) {
        char b[24];
        struct mwp_str str = {b, sizeof b, 0};
        mwp_s_u64(&str, own);
        b[str.len] = 0;
        mwp_meta_note(MW_META_SAMPLES_OWN, b); /* memwatch's inline ticks, left out */
    }
    /* The last, partial interval: samples only, no latency measurement. */
    mwr_interval iv;
    memset(&iv, 0, sizeof iv);
    iv.t_start_ns = mwp_engine_last_end();
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
        mwp_meta_note(MW_META_SIGNALS_BLOCKED, blk);
    mwp_cpu_emit(0);
    mwp_cpu_emit(1);
    mwp_writer_trailer(status, how);
    atomic_store(&mwp_proc.state, MWP_ENDED);
    mwp_in_hook--;
}

MWP_HOT __attribute__((destructor)) static void mwp_fini(void)
{
    if (mwp_cfg.verbose >= 3) {
        char b[64];
        struct mwp_str s = {b, sizeof b, 0};
        mwp_s_i64(&s, (int64_t)mwp_syscall(SYS_getpid));
        mwp_s_str(&s, " state ");
        mwp_s_i64(&s, atomic_load(&mwp_proc.state));
        mwp_say(3, "fini ", b, NULL);
    }
    if (atomic_load(&mwp_proc.state) != MWP_RUNNING)
        return;
    int32_t st = atomic_load(&exit_known) ? atomic_load(&exit_status) : MWP_STATUS_UNKNOWN;
    mwp_finish(st, "exit", 0);
}

MWP_EXPORT void exit(int status)
{
    MWP_NEED(exit, "exit");
    atomic_store(&exit_status, status & 0xff);
    atomic_store(&exit_known, 1);
    mwp_real.exit(status);
}

MWP_EXPORT void _exit(int status)
{
    MWP_NEED(_exit, "_exit");
    if (atomic_load(&mwp_proc.state) == MWP_RUNNING)
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
MWP_HOT_DATA static mwp_main_fn mwp_app_main;

MWP_HOT static int mwp_main(int argc, char **argv, char **envp)
{
    int r = mwp_app_main(argc, argv, envp);
    atomic_store(&exit_status, r & 0xff);
    atomic_store(&exit_known, 1);
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

/* Where no parent handed down the TSC rate: the TSC beside the start's
 * clock reading, so that a process that begins measures the rate over its
 * own first interval instead of sleeping 20 ms for it (counters/tsc.c), on
 * the program's thread where its intervals run inline. CLOCK_MONOTONIC, the
 * start's own clock: its slewing (500 ppm at most) is far below what the
 * rate is checked against (0.2 %). */
MWP_HOT static void ctor_tsc_mark(void)
{
#if defined(__x86_64__)
    if (mwp_cfg.tsc_hz <= 0)
        mwp_proc.tsc_mark = __builtin_ia32_rdtsc();
#endif
}

/* ---- fork ---- */

static void fork_child(void)
{
    if (atomic_load(&mwp_proc.state) != MWP_RUNNING)
        return;
    mwp_in_hook++;
    mwp_proc.pid = (pid_t)mwp_syscall(SYS_getpid);
    mwp_proc.is_fork_child = 1;
    mwp_cpu_base_take(); /* a fork child's own count starts at zero */
    mwp_writer_child();
    if (!mwp_cfg.follow) {
        atomic_store(&mwp_proc.state, MWP_OFF);
        mwp_threads_child();
        mwp_in_hook--;
        return;
    }
    mwp_proc.start_mono_ns = mwp_now_ns();
    ctor_tsc_mark(); /* beside this start's clock reading */
    mwp_proc.start_real_ns = mwp_clock_ns(CLOCK_REALTIME);
    mwp_proc.forked_ns = 0;
    mwp_lazy_child(); /* lazy, as a process started by exec (lazy.h) */
    mwp_threads_child();
    mwp_region_child();
    mwp_modules_child();
    mwp_engine_child();
    mwp_lazy_rearm();
    mwp_in_hook--;
}

/* ---- the GPU hook ---- */

MWP_EXPORT int mw_preload_emit(uint32_t type, const void *payload, uint32_t len)
{
    if (atomic_load(&mwp_proc.state) != MWP_RUNNING ||
        (pid_t)mwp_syscall(SYS_getpid) != mwp_proc.pid)
        return -ENODEV;
    if (len > MW_PRELOAD_EMIT_MAX || (len && !payload))
        return -EMSGSIZE;
    if (type == MWR_TRAILER)
        return -EINVAL;
    if (!atomic_load(&mwp_lazy.begun))
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
        const char *v = mwp_env.val[ids[i]];
        if (v && *v) {
            char *end;
            long r = strtol(v, &end, 10);
            if (!*end && r >= 0 && r < (1L << 30)) {
                mwp_proc.rank_from = vars[i];
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
        l = l < sizeof mwp_proc.host - 1 ? l : sizeof mwp_proc.host - 1;
        mwp_copy(mwp_proc.host, u.nodename, l);
        mwp_proc.host[l] = 0;
    } else {
        mwp_strcpy(mwp_proc.host, "unknown");
    }
    for (char *p = mwp_proc.host; *p; p++)
        if (*p == '/' || *p == ' ')
            *p = '_';
}

/* MEMWATCH_HANDED "HOST": the values a recorded parent hands down about its
 * machine (MEMWATCH_BASELINE_NS, _MACHINE, _TSC, _DIR_OK, _FORKED) were
 * handed on HOST. A launcher (srun, mpiexec) passes its environment to
 * processes on other machines: there they describe another machine, so
 * this process forgets them and determines its own (its children then get
 * this machine's). Out of line: only processes of a recorded tree pay. */
__attribute__((noinline)) static void ctor_handed(void)
{
    ctor_host();
    if (mwp_streq(mwp_env.val[MWP_ENV_HANDED], mwp_proc.host))
        return;
    static const char names[][32] = {MW_HANDED_VARS};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        unsetenv(names[i]);
        mwp_env_drop(names[i]);
    }
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
    if (mwp_cfg.gpu && !mwp_env.val[MWP_ENV_CUDA_INJECTION])
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

void mwp_proc_attrs(void)
{
    mwp_attrs.size = sizeof(struct perf_event_attr);
    if (mwp_cfg.rate) {
        ctor_rate();
        struct perf_event_attr a;
        mw_attr_cpu_clock(&a, mwp_cfg.rate, mwp_cfg.stack_depth);
        if (mwp_cfg.unwind == MWP_UNWIND_DWARF)
            mw_attr_user_stack(&a, mwp_cfg.unwind_stack);
        else
            mw_attr_user_regs(&a); /* data addresses of decoded samples */
        memcpy(mwp_attrs.bytes[0], &a, sizeof a);
    }
    if (mwp_cfg.fault_period) {
        struct perf_event_attr a;
        mw_attr_page_faults(&a, mwp_cfg.fault_period, mwp_cfg.stack_depth);
        memcpy(mwp_attrs.bytes[1], &a, sizeof a);
    }
    mwp_precise_setup();
}

/* Allocation hooks see only the calls that reach them: where another
 * library preloaded ahead of libmemwatch.so (a sanitizer runtime, another
 * allocator) serves malloc, the program's allocations never pass through
 * memwatch. Say so instead of recording none silently. */
void mwp_proc_alloc_note(void)
{
    if (mwp_cfg.alloc_threshold == UINT64_MAX)
        return;
    /* Is the allocator behind memwatch's hooks glibc's? (alloc.c reads its
     * chunk headers then) */
    const char *fo = mwp_real.free ? mwp_object_of(*(void **)&mwp_real.free) : NULL;
    const char *mo = mwp_real.malloc ? mwp_object_of(*(void **)&mwp_real.malloc) : NULL;
    const char *base = fo ? strrchr(fo, '/') : NULL;
    if (base && !strncmp(base + 1, "libc.so.", 8) && mo && !strcmp(mo, fo))
        mwp_alloc_glibc_set();
    void *m = dlsym(RTLD_DEFAULT, "malloc");
    const char *owner = m ? mwp_object_of(m) : NULL;
    if (!owner || !strcmp(owner, self_path()))
        return;
    char why[PATH_MAX + 160];
    snprintf(why, sizeof why,
             "not recorded: the program's malloc is %s's, loaded ahead of libmemwatch.so",
             owner[0] ? owner : mwp_exe_file());
    mwp_meta_note(MW_META_ALLOCATIONS, why);
    mwp_say(2, "allocations ", why, NULL);
}


const char *mwp_exe_file(void)
{
    if (!mwp_exe.file[0]) {
        char b[sizeof mwp_exe.file];
        ssize_t n = (ssize_t)mwp_syscall(SYS_readlink, "/proc/self/exe", b, sizeof b - 1);
        if (n > 0) {
            b[n] = 0;
            memcpy(mwp_exe.file, b, (size_t)n + 1); /* the same bytes where two threads race */
        }
    }
    return mwp_exe.file;
}

/* META exe (mwp_proc.exe). A descriptor's path (fexecve, execveat) names
 * nothing after the exec: there, and where the kernel gave no AT_EXECFN,
 * the executable file. */
static void ctor_exe(void)
{
    const char *e = (const char *)getauxval(AT_EXECFN);
    if (!e || !*e || mwp_after(e, "/dev/fd/") || mwp_after(e, "/proc/self/fd/")) {
        mwp_proc.exe = mwp_exe_file();
        return;
    }
    mwp_proc.exe = e;
    if (e[0] == '/')
        return;
    char cwd[PATH_MAX];
    while (e[0] == '.' && e[1] == '/')
        e += 2;
    if (!getcwd(cwd, sizeof cwd) ||
        snprintf(mwp_exe.run, sizeof mwp_exe.run, "%s/%s", cwd, e) >= (int)sizeof mwp_exe.run)
        return; /* as it was given */
    mwp_proc.exe = mwp_exe.run;
}

/* glibc calls ELF constructors with (argc, argv, envp). */
/* MEMWATCH_ENABLE says no (0, no, false, off): the constructor returns
 * before anything else, so that a disabled library costs what any preloaded
 * library costs (config.c still reports an invalid value). */
MWP_HOT static int ctor_disabled(void)
{
    const char *v = mwp_env.val[MWP_ENV_ENABLE];
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
    const char *v = mwp_env.val[MWP_ENV_FORKED];
    if (!v)
        return;
    char *end;
    long pid = v[0] >= '0' && v[0] <= '9' ? (long)ctor_dec(v, &end) : strtol(v, &end, 10);
    if (pid == (long)mwp_proc.pid && *end == ' ')
        mwp_proc.forked_ns = ctor_dec(end + 1, NULL);
    /* left in the environment: unsetenv would cost every image a fork
     * hands down two pages (libc's code and its lock); children ignore the
     * stale pid, and a fork child's exec replaces it (exec.c) */
    mwp_env_drop("MEMWATCH_FORKED");
}

/* MEMWATCH_DIR_OK: the output directory a recorded parent found usable,
 * so that its children do not check it again (three system calls in every
 * process of a tree). */
MWP_HOT static int ctor_dir_checked(void)
{
    const char *v = mwp_env.val[MWP_ENV_DIR_OK];
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
    if (mwp_len(abs) < sizeof mwp_cfg.dir - 80) {
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
    if (mwp_env.val[MWP_ENV_HANDED])
        ctor_handed(); /* before the values it may forget are read */
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
    mwp_proc.pid = (pid_t)mwp_syscall(SYS_getpid);
    mwp_cpu_base_take();
    if (!mwp_proc.host[0])
        ctor_host();
    mwp_proc.rank = ctor_rank();
    ctor_exe();
    if (mwp_cfg.dir[0] != '/')
        ctor_dir_absolute();
    if (!mwp_cfg.follow)
        mwp_env_unfollow_self();
    ctor_gpu();
    ctor_forked();
    if (mwp_env.val[MWP_ENV_RATE])
        ctor_rate();
    const char *mid = mwp_env.val[MWP_ENV_MACHINE]; /* handed down by a recorded parent */
    if (mid && *mid && mwp_len(mid) < sizeof mwp_proc.identity && !mwp_has_char(mid, '\n'))
        mwp_strcpy(mwp_proc.identity, mid);
    else if (mw_machine_identity(NULL, NULL, mwp_proc.identity, sizeof mwp_proc.identity) < 0)
        mwp_strcpy(mwp_proc.identity, "unknown");
    mwp_proc.start_mono_ns = mwp_clock_sys_ns(CLOCK_MONOTONIC);
    ctor_tsc_mark();
    mwp_proc.start_real_ns = mwp_clock_sys_ns(CLOCK_REALTIME);
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
        setenv("MEMWATCH_HANDED", mwp_proc.host, 0);
    }
    atomic_store(&mwp_proc.state, MWP_RUNNING);
    /* The main thread's entry; its samplers are left to the interval thread
     * (preload/threads.c, "deferred samplers"), which comes at mwp_begin
     * (the lazy start: lazy.h). */
    mwp_threads_init(1);
    mwp_lazy_signals(); /* memwatch's dispositions; the mask the program started with */
    /* pthread_atfork's body (libc_nonshared.a), called directly: the stub
     * linked into this library would lie in a page of text of its own */
    __register_atfork(mwp_writer_settle, NULL, fork_child, &__dso_handle);
    mwp_lazy_install(!mwp_alloc_ours(malloc)); /* the timer; begins here with an own allocator */
    mwp_in_hook--;
}
