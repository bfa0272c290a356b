/*
 * preload/exec.c: what libmemwatch.so does where a process becomes another
 * program or starts one: exec* (this image's file is finished first and
 * taken up again where the exec fails; a process that never began comes
 * back lazy), posix_spawn, and the environment the child gets (without
 * libmemwatch.so when MEMWATCH_FOLLOW=0; with the baseline, the machine
 * identity, the TSC rate and a lazy fork's identity handed down where the
 * child is recorded). Split from process.c, which owns the process's life
 * cycle and calls mwp_env_unfollow_self.
 *
 * Everything here may run in a vfork child or after fork: no malloc, the
 * environment is built on the caller's stack.
 */
#include "exec.h"

#include "base.h"
#include "config.h"
#include "engine.h"
#include "lazy.h"
#include "process.h"
#include "real.h"
#include "sys.h"
#include "util.h"
#include "writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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

void mwp_env_unfollow_self(void)
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
    char *vec[ENV_MAX + 6]; /* the program's, 5 added, the NULL */
    char preload[4096];
    char baseline[64];
    char machine[300];
    char tsc[224];
    char forked[80];
    char handed[160];
};

/* ---- 32-bit programs ----
 * libmemwatch.so is 64-bit only: a 32-bit program's loader cannot load it
 * and prints "ERROR: ld.so: object ... cannot be preloaded (wrong ELF class:
 * ELFCLASS64): ignored." on the program's stderr. So a child image that is a
 * 32-bit ELF file gets an environment without libmemwatch.so in LD_PRELOAD
 * (as with MEMWATCH_FOLLOW=0): it, and what it starts, runs unprofiled, and
 * its stderr is its own. Found by reading the file's ELF class (the 5th
 * byte) before the exec: an open, a read and a close; a name without a '/'
 * for execvp, execvpe and posix_spawnp is searched in PATH as they search it
 * (the first that opens). A script's interpreter (#!) is not followed. System
 * calls only, on the caller's stack: vfork children run this. */
static int exec_elf32_fd(int fd)
{
    unsigned char h[5];
    return mwp_syscall(SYS_pread64, fd, h, sizeof h, 0) == (long)sizeof h && h[0] == 0x7f &&
           h[1] == 'E' && h[2] == 'L' && h[3] == 'F' && h[4] == 1 /* ELFCLASS32 */;
}

static int exec_elf32_at(int dirfd, const char *path)
{
    /* O_NONBLOCK: a FIFO by that name must not hold the exec up */
    int fd = (int)mwp_syscall(SYS_openat, dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return -1;
    int r = exec_elf32_fd(fd);
    mwp_sys_close(fd);
    return r;
}

/* path as execve takes it; search: look a name without '/' up in PATH */
static int exec_elf32(const char *path, int search)
{
    if (!path || !*path)
        return 0;
    if (!search || strchr(path, '/'))
        return exec_elf32_at(AT_FDCWD, path) > 0;
    const char *dirs = getenv("PATH");
    if (!dirs)
        dirs = "/bin:/usr/bin"; /* glibc's default */
    size_t pl = strlen(path);
    for (const char *d = dirs;; d++) {
        const char *e = strchr(d, ':');
        size_t dl = e ? (size_t)(e - d) : strlen(d);
        char buf[4096];
        if (dl + pl + 2 <= sizeof buf) {
            memcpy(buf, d, dl);
            size_t k = dl;
            if (k)
                buf[k++] = '/'; /* an empty element: the current directory */
            memcpy(buf + k, path, pl + 1);
            int r = exec_elf32_at(AT_FDCWD, buf);
            if (r >= 0)
                return r;
        }
        if (!e)
            return 0;
        d = e;
    }
}

/* What a child's environment holds that memwatch looks at, found in one
 * pass with a character's test for most variables: every command a shell
 * runs passes here, and the environments of CUDA images and of HPC module
 * systems hold a hundred variables and more. */
struct env_seen {
    size_t n;                                 /* variables */
    unsigned char preload;                    /* an LD_PRELOAD= */
    unsigned char preload_us;                 /* the first LD_PRELOAD= names libmemwatch.so */
    unsigned char base, machine, tsc, handed; /* MEMWATCH_x= present */
};

static void env_look(char *const *envp, struct env_seen *v)
{
    memset(v, 0, sizeof *v);
    size_t n = 0;
    for (; envp && envp[n]; n++) {
        const char *e = envp[n], *t;
        if (e[0] == 'L') {
            if (!v->preload && (t = mwp_after(e, "LD_PRELOAD="))) {
                v->preload = 1;
                v->preload_us = strstr(t, "libmemwatch.so") != NULL;
            }
        } else if (e[0] == 'M' && (t = mwp_after(e, "MEMWATCH_"))) {
            /* the three that do not match fail within their first characters */
            v->base |= mwp_after(t, "BASELINE_NS=") != NULL;
            v->machine |= mwp_after(t, "MACHINE=") != NULL;
            v->tsc |= mwp_after(t, "TSC=") != NULL;
            v->handed |= mwp_after(t, "HANDED=") != NULL;
        }
    }
    v->n = n;
}

static char *const *env_for_child(char *const *envp, struct env_copy *c, const struct env_seen *v,
                                  int elf32)
{
    if (!envp)
        return envp;
    double base = mwp_engine_baseline();
    int strip = !mwp_cfg.follow || elf32;
    size_t n = v->n;
    /* What to hand down to a recorded child (only when it is recorded). */
    int follow = mwp_cfg.follow && v->preload && !elf32;
    int add_base = follow && base > 0 && !v->base;
    int add_machine =
        follow && !v->machine && mwp_proc.identity[0] && strcmp(mwp_proc.identity, "unknown");
    const char *tsc_src;
    double tsc_hz = mwp_engine_tsc_hz(&tsc_src);
    int add_tsc = follow && !v->tsc && tsc_src && tsc_hz >= 1e6 && tsc_hz <= 1e11;
    /* A fork child that never began hands its fork to the image it becomes
     * (lazy start): that image's file is the record of the process. A
     * MEMWATCH_FORKED already there is an earlier image's (left in its
     * environment, process.c): replaced. */
    int add_forked = follow && mwp_proc.is_fork_child && !atomic_load(&mwp_lazy.begun) &&
                     atomic_load(&mwp_proc.state) == MWP_RUNNING &&
                     (pid_t)syscall(SYS_getpid) == mwp_proc.pid;
    /* where these were handed (a launcher may carry them to other machines) */
    int add_handed =
        (add_base || add_machine || add_tsc || add_forked) && !v->handed && mwp_proc.host[0];
    strip = strip && v->preload;
    if ((!strip && !add_base && !add_machine && !add_tsc && !add_forked) || n > ENV_MAX)
        return envp;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (add_forked && envp[i][0] == 'M' && mwp_after(envp[i], "MEMWATCH_FORKED="))
            continue;
        const char *pre;
        if (strip && envp[i][0] == 'L' && (pre = mwp_after(envp[i], "LD_PRELOAD="))) {
            if (env_strip_preload(pre, c->preload, sizeof c->preload))
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
        mwp_s_str(&s, mwp_proc.identity);
        c->vec[k++] = c->machine;
    }
    if (add_tsc) {
        struct mwp_str s = {c->tsc, sizeof c->tsc, 0};
        mwp_s_str(&s, "MEMWATCH_TSC=");
        mwp_s_dbl(&s, tsc_hz);
        mwp_s_str(&s, " ");
        mwp_s_str(&s, tsc_src);
        c->vec[k++] = c->tsc;
    }
    if (add_forked) {
        struct mwp_str s = {c->forked, sizeof c->forked, 0};
        mwp_s_str(&s, "MEMWATCH_FORKED=");
        mwp_s_i64(&s, mwp_proc.pid);
        mwp_s_str(&s, " ");
        mwp_s_u64(&s, mwp_proc.start_mono_ns);
        c->vec[k++] = c->forked;
    }
    if (add_handed) {
        struct mwp_str s = {c->handed, sizeof c->handed, 0};
        mwp_s_str(&s, "MEMWATCH_HANDED=");
        mwp_s_str(&s, mwp_proc.host);
        c->vec[k++] = c->handed;
    }
    c->vec[k] = NULL;
    return c->vec;
}

/* ---- exec ---- */

/* Is the class of the child's file worth reading: the child's environment
 * would preload libmemwatch.so (no file is opened otherwise). */
static int exec_child_elf32(const struct env_seen *v)
{
    return mwp_cfg.follow && v->preload_us;
}

/* The exec wrappers: the child's environment (env, for call), this image's
 * file finished before the call and taken up again where the exec fails. */
#define EXEC_WITH(envp, elf32, call)                                                               \
    do {                                                                                           \
        struct env_copy c_;                                                                        \
        struct env_seen v_;                                                                        \
        env_look(envp, &v_);                                                                       \
        char *const *env = env_for_child(envp, &c_, &v_, exec_child_elf32(&v_) && (elf32));        \
        int did_ = exec_pre();                                                                     \
        int rc_ = call;                                                                            \
        int err_ = errno;                                                                          \
        exec_failed(did_, err_);                                                                   \
        errno = err_;                                                                              \
        return rc_;                                                                                \
    } while (0)

static int exec_pre(void)
{
    if (atomic_load(&mwp_proc.state) != MWP_RUNNING || (pid_t)syscall(SYS_getpid) != mwp_proc.pid)
        return 0;
    int lazy = !atomic_load(&mwp_lazy.begun);
    /* the timer of inline intervals too: exec keeps a signal it left
     * pending, and the new image would die of it */
    if (lazy || mwp_engine_inline())
        mwp_lazy_disarm();
    mwp_finish(0, "exec", 1);
    /* a process that never began comes back lazy where the exec fails */
    return lazy && !atomic_load(&mwp_lazy.begun) ? 2 : 1;
}

static void exec_failed(int did, int err)
{
    if (!did)
        return;
    int exp = MWP_ENDED;
    if (!atomic_compare_exchange_strong(&mwp_proc.state, &exp, MWP_RUNNING))
        return;
    if (did == 2) {
        mwp_lazy_rearm();
    } else {
        mwp_writer_reopen_after_exec_failure(err);
        mwp_inline_rearm();
    }
}

MWP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    MWP_NEED(execve, "execve");
    EXEC_WITH(envp, exec_elf32(path, 0), mwp_real.execve(path, argv, env));
}

MWP_EXPORT int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

MWP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    MWP_NEED(execvpe, "execvpe");
    EXEC_WITH(envp, exec_elf32(file, 1), mwp_real.execvpe(file, argv, env));
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

/* execl, execlp, execle: the list collected into argv (and, with envp_out,
 * the environment after it), then the vector call. */
#define EXECL_WITH(arg, envp_out, call)                                                            \
    do {                                                                                           \
        char *argv[EXECL_MAX + 1];                                                                 \
        va_list ap_;                                                                               \
        va_start(ap_, arg);                                                                        \
        int rc_ = execl_collect(arg, ap_, argv, envp_out);                                         \
        va_end(ap_);                                                                               \
        if (rc_)                                                                                   \
            return rc_;                                                                            \
        return call;                                                                               \
    } while (0)

MWP_EXPORT int execl(const char *path, const char *arg, ...)
{
    EXECL_WITH(arg, NULL, execve(path, argv, environ));
}

MWP_EXPORT int execlp(const char *file, const char *arg, ...)
{
    EXECL_WITH(arg, NULL, execvpe(file, argv, environ));
}

MWP_EXPORT int execle(const char *path, const char *arg, ...)
{
    char **envp = NULL;
    EXECL_WITH(arg, &envp, execve(path, argv, envp));
}

MWP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    MWP_NEED(fexecve, "fexecve");
    EXEC_WITH(envp, exec_elf32_fd(fd), mwp_real.fexecve(fd, argv, env));
}

MWP_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                        int flags)
{
    MWP_NEED(execveat, "execveat");
    EXEC_WITH(envp,
              (flags & AT_EMPTY_PATH) && !*path ? exec_elf32_fd(dirfd)
                                                           : exec_elf32_at(dirfd, path) > 0,
              mwp_real.execveat(dirfd, path, argv, env, flags));
}

MWP_EXPORT int posix_spawn(pid_t *pid, const char *path, const void *fa, const void *at,
                           char *const argv[], char *const envp[])
{
    MWP_NEED(posix_spawn, "posix_spawn");
    struct env_copy c;
    struct env_seen v;
    env_look(envp, &v);
    int e32 = exec_child_elf32(&v) && exec_elf32(path, 0);
    return mwp_real.posix_spawn(pid, path, fa, at, argv, env_for_child(envp, &c, &v, e32));
}

MWP_EXPORT int posix_spawnp(pid_t *pid, const char *file, const void *fa, const void *at,
                            char *const argv[], char *const envp[])
{
    MWP_NEED(posix_spawnp, "posix_spawnp");
    struct env_copy c;
    struct env_seen v;
    env_look(envp, &v);
    int e32 = exec_child_elf32(&v) && exec_elf32(file, 1);
    return mwp_real.posix_spawnp(pid, file, fa, at, argv, env_for_child(envp, &c, &v, e32));
}
