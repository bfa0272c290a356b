/*
 * preload/process.c: libmemwatch.so's life cycle and everything that starts
 * or ends a process image.
 *
 * Owns: the constructor and destructor, the process-wide state, fork
 * handling (pthread_atfork: the child closes the parent's file, gets its own
 * file, thread registry, samplers and interval thread), exec* (flush before
 * the exec; with MEMWATCH_FOLLOW=0 libmemwatch.so is taken out of the
 * environment the new image gets), posix_spawn, exit/_exit/_Exit and the
 * return from main (__libc_start_main), the guard that keeps programs from
 * closing or dup2-ing over memwatch's descriptor, and mw_preload_emit.
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
#include <linux/close_range.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
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
char mwp_exe[PATH_MAX];
uint64_t mwp_start_mono_ns, mwp_start_real_ns;
double mwp_tsc_hz_val;
/* How mwp_tsc_hz_val was determined (NULL until the interval thread knows):
 * with it, children are handed MEMWATCH_TSC. */
const char *_Atomic mwp_tsc_src;
static char mwp_self_path[PATH_MAX];

#define MWP_STATUS_UNKNOWN INT32_MIN

/* ---- finishing ---- */

void mwp_finish(int32_t status, const char *how, int in_signal)
{
    if ((pid_t)syscall(SYS_getpid) != mwp_pid)
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
    /* an interval in progress on the interval thread writes what it
     * gathered first (it holds the rings it drains meanwhile) */
    mwp_writer_gather_wait();
    if (!in_signal)
        mwp_modules_scan(0);
    uint64_t s = 0, l = 0;
    unsigned live = mwp_threads_drain(0, in_signal, &s, &l);
    mwp_region_finish();
    /* The last, partial interval: samples only, no latency measurement. */
    mwr_interval iv;
    memset(&iv, 0, sizeof iv);
    iv.t_start_ns = mwp_iv_last_end;
    iv.t_end_ns = mwp_now_ns();
    iv.nthreads = live;
    iv.samples = s;
    iv.lost = l;
    struct iovec v = {&iv, sizeof iv};
    if (iv.t_start_ns && iv.t_end_ns > iv.t_start_ns)
        mwp_write(MWR_INTERVAL, &v, 1);
    mwp_writer_trailer(status, how);
    atomic_store(&mwp_state, MWP_ENDED);
    mwp_in_hook--;
}

__attribute__((destructor)) static void mwp_fini(void)
{
    if (mwp_cfg.verbose >= 3) {
        char b[64];
        struct mwp_str s = {b, sizeof b, 0};
        mwp_s_i64(&s, (int64_t)syscall(SYS_getpid));
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
    mwp_resolve();
    atomic_store(&mwp_exit_status, status & 0xff);
    atomic_store(&mwp_exit_known, 1);
    mwp_real.exit(status);
}

MWP_EXPORT void _exit(int status)
{
    mwp_resolve();
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

MWP_EXPORT int __libc_start_main(mwp_main_fn main_fn, int argc, char **argv, void (*init)(void),
                                 void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    int (*real)(mwp_main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void),
                void *);
    *(void **)&real = dlsym(RTLD_NEXT, "__libc_start_main");
    mwp_app_main = main_fn;
    return real(mwp_main, argc, argv, init, fini, rtld_fini, stack_end);
}

/* ---- environment for children ---- */

/* Is this LD_PRELOAD element libmemwatch.so? */
static int env_is_us(const char *e, size_t n)
{
    static const char name[] = "libmemwatch.so";
    size_t k = sizeof name - 1;
    const char *base = e;
    for (size_t i = 0; i < n; i++)
        if (e[i] == '/')
            base = e + i + 1;
    size_t bn = n - (size_t)(base - e);
    return bn >= k && !memcmp(base, name, k);
}

/* Write "LD_PRELOAD=<value without libmemwatch.so>" into out; 0 if nothing else remains. */
static size_t env_strip_preload(const char *val, char *out, size_t cap)
{
    struct mwp_str s = {out, cap, 0};
    mwp_s_str(&s, "LD_PRELOAD=");
    size_t start = s.len;
    const char *p = val;
    while (*p) {
        while (*p == ':' || *p == ' ')
            p++;
        const char *q = p;
        while (*q && *q != ':' && *q != ' ')
            q++;
        if (q > p && !env_is_us(p, (size_t)(q - p))) {
            if (s.len > start)
                mwp_s_str(&s, ":");
            mwp_s_mem(&s, p, (size_t)(q - p));
        }
        p = q;
    }
    return s.len > start ? s.len : 0;
}

static void env_unfollow_self(void)
{
    const char *v = getenv("LD_PRELOAD");
    if (!v)
        return;
    char buf[4096];
    if (env_strip_preload(v, buf, sizeof buf))
        setenv("LD_PRELOAD", buf + 11, 1);
    else
        unsetenv("LD_PRELOAD");
}

/* The environment a child image gets: without libmemwatch.so when
 * MEMWATCH_FOLLOW=0; with MEMWATCH_BASELINE_NS added when this process knows
 * the baseline and the child would otherwise measure its own (cheaper, and
 * measured before the load). Built on the caller's stack: no malloc (this
 * runs in vfork children and after fork). */
#define ENV_MAX 1024
struct env_copy {
    char *vec[ENV_MAX + 4];
    char preload[4096];
    char baseline[64];
    char machine[300];
    char tsc[224];
};

static char *const *env_for_child(char *const *envp, struct env_copy *c)
{
    if (!envp)
        return envp;
    double base = mwp_engine_baseline();
    int strip = !mwp_cfg.follow;
    size_t n = 0;
    int have_preload = 0, have_base = 0, have_machine = 0, have_tsc = 0;
    for (; envp[n]; n++) {
        if (!strncmp(envp[n], "LD_PRELOAD=", 11))
            have_preload = 1;
        else if (!strncmp(envp[n], "MEMWATCH_BASELINE_NS=", 21))
            have_base = 1;
        else if (!strncmp(envp[n], "MEMWATCH_MACHINE=", 17))
            have_machine = 1;
        else if (!strncmp(envp[n], "MEMWATCH_TSC=", 13))
            have_tsc = 1;
    }
    /* What to hand down to a recorded child (only when it is recorded). */
    int follow = mwp_cfg.follow && have_preload;
    int add_base = follow && base > 0 && !have_base;
    int add_machine = follow && !have_machine && mwp_identity[0] && strcmp(mwp_identity, "unknown");
    const char *tsc_src = atomic_load(&mwp_tsc_src);
    int add_tsc = follow && !have_tsc && tsc_src && mwp_tsc_hz_val >= 1e6 && mwp_tsc_hz_val <= 1e11;
    strip = strip && have_preload;
    if ((!strip && !add_base && !add_machine && !add_tsc) || n > ENV_MAX)
        return envp;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (strip && !strncmp(envp[i], "LD_PRELOAD=", 11)) {
            if (env_strip_preload(envp[i] + 11, c->preload, sizeof c->preload))
                c->vec[k++] = c->preload;
        } else {
            c->vec[k++] = envp[i];
        }
    }
    if (add_base) {
        struct mwp_str s = {c->baseline, sizeof c->baseline, 0};
        mwp_s_str(&s, "MEMWATCH_BASELINE_NS=");
        mwp_s_dbl(&s, base);
        c->vec[k++] = c->baseline;
    }
    if (add_machine) {
        /* the machine identity costs ~0.1 ms to compute; children inherit it */
        struct mwp_str s = {c->machine, sizeof c->machine, 0};
        mwp_s_str(&s, "MEMWATCH_MACHINE=");
        mwp_s_str(&s, mwp_identity);
        c->vec[k++] = c->machine;
    }
    if (add_tsc) {
        struct mwp_str s = {c->tsc, sizeof c->tsc, 0};
        mwp_s_str(&s, "MEMWATCH_TSC=");
        mwp_s_dbl(&s, mwp_tsc_hz_val);
        mwp_s_str(&s, " ");
        mwp_s_str(&s, tsc_src);
        c->vec[k++] = c->tsc;
    }
    c->vec[k] = NULL;
    return c->vec;
}

/* ---- exec ---- */

static int exec_pre(void)
{
    if (atomic_load(&mwp_state) != MWP_RUNNING || (pid_t)syscall(SYS_getpid) != mwp_pid)
        return 0;
    mwp_finish(0, "exec", 1);
    return 1;
}

static void exec_failed(int did, int err)
{
    if (!did)
        return;
    int exp = MWP_ENDED;
    if (atomic_compare_exchange_strong(&mwp_state, &exp, MWP_RUNNING))
        mwp_writer_reopen_after_exec_failure(err);
}

MWP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    mwp_resolve();
    struct env_copy c;
    char *const *env = env_for_child(envp, &c);
    int did = exec_pre();
    int rc = mwp_real.execve(path, argv, env);
    int err = errno;
    exec_failed(did, err);
    errno = err;
    return rc;
}

MWP_EXPORT int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

MWP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    mwp_resolve();
    struct env_copy c;
    char *const *env = env_for_child(envp, &c);
    int did = exec_pre();
    int rc = mwp_real.execvpe(file, argv, env);
    int err = errno;
    exec_failed(did, err);
    errno = err;
    return rc;
}

MWP_EXPORT int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

#define EXECL_MAX 1024
static int execl_collect(const char *arg0, va_list ap, char **argv, char ***envp_out)
{
    int n = 0;
    argv[n++] = (char *)arg0;
    while (arg0) {
        char *a = va_arg(ap, char *);
        if (n >= EXECL_MAX) {
            errno = E2BIG;
            return -1;
        }
        argv[n++] = a;
        if (!a)
            break;
    }
    if (envp_out)
        *envp_out = va_arg(ap, char **);
    return 0;
}

MWP_EXPORT int execl(const char *path, const char *arg, ...)
{
    char *argv[EXECL_MAX + 1];
    va_list ap;
    va_start(ap, arg);
    int rc = execl_collect(arg, ap, argv, NULL);
    va_end(ap);
    if (rc)
        return rc;
    return execve(path, argv, environ);
}

MWP_EXPORT int execlp(const char *file, const char *arg, ...)
{
    char *argv[EXECL_MAX + 1];
    va_list ap;
    va_start(ap, arg);
    int rc = execl_collect(arg, ap, argv, NULL);
    va_end(ap);
    if (rc)
        return rc;
    return execvpe(file, argv, environ);
}

MWP_EXPORT int execle(const char *path, const char *arg, ...)
{
    char *argv[EXECL_MAX + 1];
    char **envp = NULL;
    va_list ap;
    va_start(ap, arg);
    int rc = execl_collect(arg, ap, argv, &envp);
    va_end(ap);
    if (rc)
        return rc;
    return execve(path, argv, envp);
}

MWP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    mwp_resolve();
    struct env_copy c;
    char *const *env = env_for_child(envp, &c);
    int did = exec_pre();
    int rc = mwp_real.fexecve(fd, argv, env);
    int err = errno;
    exec_failed(did, err);
    errno = err;
    return rc;
}

MWP_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                        int flags)
{
    mwp_resolve();
    struct env_copy c;
    char *const *env = env_for_child(envp, &c);
    int did = exec_pre();
    int rc = mwp_real.execveat(dirfd, path, argv, env, flags);
    int err = errno;
    exec_failed(did, err);
    errno = err;
    return rc;
}

MWP_EXPORT int posix_spawn(pid_t *pid, const char *path, const void *fa, const void *at,
                           char *const argv[], char *const envp[])
{
    mwp_resolve();
    struct env_copy c;
    return mwp_real.posix_spawn(pid, path, fa, at, argv, env_for_child(envp, &c));
}

MWP_EXPORT int posix_spawnp(pid_t *pid, const char *file, const void *fa, const void *at,
                            char *const argv[], char *const envp[])
{
    mwp_resolve();
    struct env_copy c;
    return mwp_real.posix_spawnp(pid, file, fa, at, argv, env_for_child(envp, &c));
}

/* ---- fork ---- */

static void fork_child(void)
{
    if (atomic_load(&mwp_state) != MWP_RUNNING)
        return;
    mwp_in_hook++;
    mwp_pid = (pid_t)syscall(SYS_getpid);
    mwp_is_fork_child = 1;
    mwp_writer_child();
    if (!mwp_cfg.follow) {
        atomic_store(&mwp_state, MWP_OFF);
        mwp_threads_child();
        mwp_in_hook--;
        return;
    }
    mwp_start_mono_ns = mwp_now_ns();
    mwp_start_real_ns = mwp_clock_ns(CLOCK_REALTIME);
    mwp_meta_build();
    mwp_writer_start(MWP_W_FIRST_RECORD); /* the file appears with the first record */
    mwp_threads_child();
    mwp_region_child();
    mwp_modules_child();
    mwp_engine_child();
    mwp_in_hook--;
}

/* ---- descriptors ---- */

int mwp_fd_is_ours(int fd)
{
    return fd >= 0 && fd == mwp_writer_fd();
}

MWP_EXPORT int close(int fd)
{
    mwp_writer_settle();
    if (mwp_fd_is_ours(fd) && atomic_load(&mwp_state) == MWP_RUNNING)
        return 0; /* memwatch's file: the program believes it closed it */
    static int (*real_close)(int);
    if (!real_close)
        *(void **)&real_close = dlsym(RTLD_NEXT, "close");
    return real_close ? real_close(fd) : (int)syscall(SYS_close, fd);
}

MWP_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    mwp_resolve();
    mwp_writer_settle();
    int ours = mwp_writer_fd();
    int (*real)(unsigned, unsigned, int) = mwp_real.close_range;
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    if (ours < 0 || (flags & CLOSE_RANGE_CLOEXEC) || (unsigned)ours < first ||
        (unsigned)ours > last)
        return real(first, last, flags);
    int rc = 0;
    if ((unsigned)ours > first)
        rc = real(first, (unsigned)ours - 1, flags);
    if (rc == 0 && (unsigned)ours < last)
        rc = real((unsigned)ours + 1, last, flags);
    return rc;
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
        if (!mwp_fd_is_ours((int)fd))
            syscall(SYS_close, (int)fd);
}

MWP_EXPORT int dup2(int oldfd, int newfd)
{
    mwp_resolve();
    mwp_writer_settle();
    if (oldfd != newfd && mwp_fd_is_ours(newfd))
        mwp_writer_relocate();
    return mwp_real.dup2(oldfd, newfd);
}

MWP_EXPORT int dup3(int oldfd, int newfd, int flags)
{
    mwp_resolve();
    mwp_writer_settle();
    if (oldfd != newfd && mwp_fd_is_ours(newfd))
        mwp_writer_relocate();
    return mwp_real.dup3(oldfd, newfd, flags);
}

/* ---- namespaces: calls that need a single-threaded process ---- */

/* unshare(CLONE_NEWUSER / CLONE_NEWNS / CLONE_FS / CLONE_FILES ...) and
 * setns into a user or mount namespace fail with EINVAL in a multi-threaded
 * process; memwatch's interval thread must not make them fail. It is stopped
 * for the call and started again. */
#define MWP_SOLO_FLAGS                                                                          \
    (CLONE_NEWUSER | CLONE_NEWNS | CLONE_FS | CLONE_FILES | CLONE_THREAD | CLONE_VM |          \
     CLONE_SIGHAND)

static int solo_call(long nr, long a, long b)
{
    int running = atomic_load(&mwp_state) == MWP_RUNNING;
    if (running)
        mwp_engine_stop();
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
    if (running && atomic_load(&mwp_state) == MWP_RUNNING)
        mwp_engine_start();
    errno = err;
    return (int)rc;
}

MWP_EXPORT int unshare(int flags)
{
    if (!(flags & MWP_SOLO_FLAGS) || atomic_load(&mwp_state) != MWP_RUNNING)
        return (int)syscall(SYS_unshare, flags);
    return solo_call(SYS_unshare, flags, 0);
}

MWP_EXPORT int setns(int fd, int nstype)
{
    if ((nstype && !(nstype & (CLONE_NEWUSER | CLONE_NEWNS))) ||
        atomic_load(&mwp_state) != MWP_RUNNING)
        return (int)syscall(SYS_setns, fd, nstype);
    return solo_call(SYS_setns, fd, nstype);
}

/* ---- the GPU hook ---- */

MWP_EXPORT int mw_preload_emit(uint32_t type, const void *payload, uint32_t len)
{
    if (atomic_load(&mwp_state) != MWP_RUNNING || (pid_t)syscall(SYS_getpid) != mwp_pid)
        return -ENODEV;
    if (len > MW_PRELOAD_EMIT_MAX || (len && !payload))
        return -EMSGSIZE;
    if (type == MWR_TRAILER)
        return -EINVAL;
    struct iovec v = {(void *)payload, len};
    mwp_in_hook++;
    int rc = mwp_write(type, &v, 1);
    mwp_in_hook--;
    return rc;
}

/* ---- constructor ---- */

static int ctor_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
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

static void ctor_host(void)
{
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(mwp_host, sizeof mwp_host, "%s", u.nodename);
    else
        strcpy(mwp_host, "unknown");
    for (char *p = mwp_host; *p; p++)
        if (*p == '/' || *p == ' ')
            *p = '_';
}

static void ctor_gpu(void)
{
    if (!mwp_cfg.gpu || getenv("CUDA_INJECTION64_PATH"))
        return;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", mwp_self_path);
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

static void ctor_attrs(void)
{
    mwp_attr_size = sizeof(struct perf_event_attr);
    if (mwp_cfg.rate) {
        unsigned long max = mw_attr_max_rate();
        int clamped = 0;
        mwp_cfg.rate = mw_attr_clamp_rate(mwp_cfg.rate, max, &clamped);
        mwp_cfg.rate_clamped = clamped;
        if (clamped)
            mwp_say(1, "MEMWATCH_RATE clamped to kernel.perf_event_max_sample_rate", NULL, NULL);
        struct perf_event_attr a;
        mw_attr_cpu_clock(&a, mwp_cfg.rate, mwp_cfg.stack_depth);
        memcpy(mwp_attr_bytes[0], &a, sizeof a);
    }
    if (mwp_cfg.fault_period) {
        struct perf_event_attr a;
        mw_attr_page_faults(&a, mwp_cfg.fault_period);
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
    if (!owner || !strcmp(owner, mwp_self_path))
        return;
    char why[PATH_MAX + 160];
    snprintf(why, sizeof why,
             "not recorded: the program's malloc is %s's, loaded ahead of libmemwatch.so",
             owner[0] ? owner : mwp_exe);
    mwp_meta_note("allocations", why);
    mwp_say(2, "allocations ", why, NULL);
}

int mwp_argc;
char **mwp_argv;

/* glibc calls ELF constructors with (argc, argv, envp). */
__attribute__((constructor)) static void mwp_init(int argc, char **argv, char **envp)
{
    (void)envp;
    mwp_argc = argc;
    mwp_argv = argv;
    mwp_resolve();
    if (getauxval(AT_SECURE))
        return; /* setuid/setgid or otherwise secure execution: never profile */
    mwp_config_load(&mwp_cfg);
    if (!mwp_cfg.enabled)
        return;
    mwp_in_hook++;
    Dl_info di;
    if (dladdr((void *)mwp_init, &di) && di.dli_fname)
        snprintf(mwp_self_path, sizeof mwp_self_path, "%s", di.dli_fname);
    mwp_pid = (pid_t)syscall(SYS_getpid);
    ctor_host();
    mwp_rank = ctor_rank();
    ssize_t n = readlink("/proc/self/exe", mwp_exe, sizeof mwp_exe - 1);
    mwp_exe[n > 0 ? n : 0] = 0;
    if (mwp_cfg.dir[0] != '/') {
        /* Children write beside us even after a chdir: make the directory absolute. */
        char cwd[PATH_MAX], abs[2 * PATH_MAX + 8];
        if (getcwd(cwd, sizeof cwd)) {
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
    }
    if (!mwp_cfg.follow)
        env_unfollow_self();
    ctor_gpu();
    const char *mid = getenv("MEMWATCH_MACHINE"); /* handed down by a recorded parent */
    int recorded_parent = 0;
    if (mid && *mid && strlen(mid) < sizeof mwp_identity && !strchr(mid, '\n')) {
        strcpy(mwp_identity, mid);
        recorded_parent = 1;
    } else if (mw_machine_identity(NULL, NULL, mwp_identity, sizeof mwp_identity) < 0)
        strcpy(mwp_identity, "unknown");
    ctor_attrs();
    mwp_start_mono_ns = mwp_now_ns();
    mwp_start_real_ns = mwp_clock_ns(CLOCK_REALTIME);
    mwp_meta_build();
    mwp_writer_batch(1);
    if (mwp_writer_start(MWP_W_LATER) < 0) {
        mwp_writer_batch(0);
        /* One warning per program: its children stay out of the way quietly. */
        setenv("MEMWATCH_ENABLE", "0", 1);
        mwp_in_hook--;
        return; /* one warning was given; the program runs without memwatch */
    }
    atomic_store(&mwp_state, MWP_RUNNING);
    /* The first process of a tree leaves its samplers to the interval thread
     * (preload/threads.c, "deferred samplers"); a child of a recorded
     * process, whose parent holds perf events, opens them here. */
    mwp_threads_init(!recorded_parent);
    mwp_modules_scan(1);
    ctor_alloc_note();
    mwp_writer_batch(0);
    mwp_signals_install();
    pthread_atfork(mwp_writer_settle, NULL, fork_child);
    mwp_engine_start();
    mwp_in_hook--;
}
