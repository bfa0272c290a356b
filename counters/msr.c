/*
 * counters/msr.c: MSR access through <prefix>/N/msr and safe prefetcher control
 * (include/memwatch/msr.h; user guide docs/prefetch.md).
 *
 * Owns: the prefetcher state file and the process-wide guard (the saved
 * original values, the previous signal dispositions). May call: libc, mw_log,
 * counters/dirs.c.
 * Threading: one guard per process, not thread-safe; the signal handler uses
 * only async-signal-safe calls and the guard's static arrays (no malloc, no
 * stdio, no locks): open, pread, pwrite, close, unlink, sigaction, raise.
 *
 * State file (text, see docs/prefetch.md):
 *   memwatch-prefetch-state 1
 *   prefix /dev/cpu
 *   msr 0x1a4
 *   mask 0xf
 *   cpu 0 0x0000000000000000      (one line per CPU: the value before any change)
 *   end
 */
#include <memwatch/msr.h>

#include "dirs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MSR_DEFAULT_PREFIX "/dev/cpu"
#define MSR_STATE_MAGIC "memwatch-prefetch-state 1"

static __thread char msr_why[320];

MW_API const char *mw_msr_why(void)
{
    return msr_why;
}

/* Sets the reason (long paths are cut at the end of the buffer). */
__attribute__((format(printf, 1, 2))) static void msr_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msr_why, sizeof msr_why, fmt, ap);
    va_end(ap);
}

static int msr_fail(int err, const char *path, uint32_t msr, int writing)
{
    const char *what;
    switch (-err) {
    case ENOENT:
    case ENXIO:
    case ENODEV:
        what = "no such device: the msr driver is not loaded (modprobe msr) or this CPU does not "
               "exist; in many VMs the device is absent altogether";
        break;
    case EACCES:
    case EPERM:
        what = writing ? "permission denied: writing MSRs needs root (CAP_SYS_RAWIO) and, on "
                         "some kernels, msr.allow_writes=on"
                       : "permission denied: reading MSRs needs root (CAP_SYS_RAWIO)";
        break;
    case EIO:
        what = "the CPU (or the hypervisor) has no such register or refuses the access";
        break;
    default:
        what = strerror(-err);
        break;
    }
    msr_say("%s MSR 0x%" PRIx32 " via %s: %s",
             writing ? "writing" : "reading", msr, path, what);
    return err;
}

/* "<prefix>/<cpu>/msr" without stdio (also used from the signal handler). */
static int msr_path(char *buf, size_t n, const char *prefix, unsigned cpu)
{
    size_t k = 0;
    for (const char *p = prefix; *p; p++) {
        if (k + 1 >= n)
            return -1;
        buf[k++] = *p;
    }
    char digits[12];
    int d = 0;
    do {
        digits[d++] = (char)('0' + cpu % 10);
        cpu /= 10;
    } while (cpu && d < 11);
    if (k + (size_t)d + 6 >= n)
        return -1;
    buf[k++] = '/';
    while (d)
        buf[k++] = digits[--d];
    memcpy(buf + k, "/msr", 5);
    return 0;
}

MW_API int mw_msr_read(const char *prefix, unsigned cpu, uint32_t msr, uint64_t *val)
{
    char path[PATH_MAX];
    if (!val || msr_path(path, sizeof path, prefix ? prefix : MSR_DEFAULT_PREFIX, cpu) < 0)
        return -EINVAL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return msr_fail(-errno, path, msr, 0);
    ssize_t r = pread(fd, val, sizeof *val, (off_t)msr);
    int e = r < 0 ? -errno : 0;
    close(fd);
    if (r != (ssize_t)sizeof *val)
        return msr_fail(e ? e : -EIO, path, msr, 0);
    return 0;
}

MW_API int mw_msr_write(const char *prefix, unsigned cpu, uint32_t msr, uint64_t val)
{
    char path[PATH_MAX];
    if (msr_path(path, sizeof path, prefix ? prefix : MSR_DEFAULT_PREFIX, cpu) < 0)
        return -EINVAL;
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return msr_fail(-errno, path, msr, 1);
    ssize_t r = pwrite(fd, &val, sizeof val, (off_t)msr);
    int e = r < 0 ? -errno : 0;
    close(fd);
    if (r != (ssize_t)sizeof val)
        return msr_fail(e ? e : -EIO, path, msr, 1);
    return 0;
}

MW_API int mw_prefetch_state_default_path(char *buf, size_t n)
{
    if (!buf || !n)
        return -EINVAL;
    const char *env = getenv("MW_PREFETCH_STATE");
    int w = snprintf(buf, n, "%s", env && env[0] ? env : "/run/memwatch/prefetch.state");
    return w < 0 || (size_t)w >= n ? MW_ERR_TOOBIG : 0;
}

static int msr_int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

MW_API int mw_prefetch_cpus(const mw_prefetch_ctl *c, int *cpus, unsigned max)
{
    if (!c || !cpus)
        return -EINVAL;
    if (c->cpus) {
        unsigned n = c->ncpus < max ? c->ncpus : max;
        memcpy(cpus, c->cpus, n * sizeof *cpus);
        return (int)n;
    }
    const char *prefix = c->prefix ? c->prefix : MSR_DEFAULT_PREFIX;
    DIR *d = opendir(prefix);
    if (!d) {
        int e = -errno;
        msr_say("cannot list %s: %s%s", prefix, strerror(-e),
                 e == -ENOENT ? " (no CPU devices here)" : "");
        return e;
    }
    unsigned n = 0;
    struct dirent *e;
    char path[PATH_MAX];
    while ((e = readdir(d)) && n < max) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        char *end;
        long cpu = strtol(e->d_name, &end, 10);
        if (*end || cpu < 0 || cpu > INT_MAX)
            continue;
        if (msr_path(path, sizeof path, prefix, (unsigned)cpu) == 0 && access(path, F_OK) == 0)
            cpus[n++] = (int)cpu;
    }
    closedir(d);
    qsort(cpus, n, sizeof *cpus, msr_int_cmp);
    if (!n) {
        msr_say(
                 "no %s/N/msr device: the msr driver is not loaded (modprobe msr) or the "
                 "machine (a VM) offers none", prefix);
        return -ENOENT;
    }
    return (int)n;
}

MW_API int mw_prefetch_show(const mw_prefetch_ctl *c, int *cpus, uint64_t *vals, unsigned max)
{
    if (!c || !cpus || !vals)
        return -EINVAL;
    int n = mw_prefetch_cpus(c, cpus, max);
    for (int i = 0; i < n; i++) {
        int rc = mw_msr_read(c->prefix, (unsigned)cpus[i], c->msr, &vals[i]);
        if (rc < 0)
            return rc;
    }
    return n;
}

/* ------------------------------------------------------------ state file */

typedef struct msr_state {
    char prefix[PATH_MAX];
    uint32_t msr;
    uint64_t mask;
    unsigned n;
    int cpu[MW_MSR_MAX_CPUS];
    uint64_t orig[MW_MSR_MAX_CPUS];
} msr_state;

static int msr_state_write(const char *path, const msr_state *s)
{
    char tmp[PATH_MAX];
    int rc = mw_mkdir_parents(path);
    if (rc < 0) {
        msr_say("cannot create the directory of %s: %s", path,
                 strerror(-rc));
        return rc;
    }
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return -ENAMETOOLONG;
    FILE *f = fopen(tmp, "we");
    if (!f) {
        rc = -errno;
        msr_say("cannot save the prefetcher state to %s: %s", tmp,
                 strerror(-rc));
        return rc;
    }
    fprintf(f, "%s\nprefix %s\nmsr 0x%" PRIx32 "\nmask 0x%" PRIx64 "\n", MSR_STATE_MAGIC,
            s->prefix, s->msr, s->mask);
    for (unsigned i = 0; i < s->n; i++)
        fprintf(f, "cpu %d 0x%016" PRIx64 "\n", s->cpu[i], s->orig[i]);
    fprintf(f, "end\n");
    rc = fflush(f) == 0 && fsync(fileno(f)) == 0 ? 0 : -errno;
    if (fclose(f) != 0 && !rc)
        rc = -errno;
    if (!rc && rename(tmp, path) < 0)
        rc = -errno;
    if (rc) {
        unlink(tmp);
        msr_say("cannot save the prefetcher state to %s: %s", path,
                 strerror(-rc));
    }
    return rc;
}

static int msr_state_read(const char *path, msr_state *s)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        int e = -errno;
        msr_say("%s: %s%s", path, strerror(-e),
                 e == -ENOENT ? " (nothing to restore: no change is pending)" : "");
        return e;
    }
    memset(s, 0, sizeof *s);
    char line[PATH_MAX + 32];
    int have_magic = 0, have_end = 0, have_msr = 0, have_mask = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (have_end) {
            bad = 1;
            break;
        }
        if (!have_magic) {
            if (strcmp(line, MSR_STATE_MAGIC)) {
                bad = 1;
                break;
            }
            have_magic = 1;
        } else if (!strncmp(line, "prefix ", 7)) {
            size_t len = strlen(line + 7);
            if (len >= sizeof s->prefix) {
                bad = 1;
                break;
            }
            memcpy(s->prefix, line + 7, len + 1);
        } else if (sscanf(line, "msr 0x%" SCNx32, &s->msr) == 1) {
            have_msr = 1;
        } else if (sscanf(line, "mask 0x%" SCNx64, &s->mask) == 1) {
            have_mask = 1;
        } else if (!strncmp(line, "cpu ", 4)) {
            int cpu;
            uint64_t v;
            if (s->n == MW_MSR_MAX_CPUS || sscanf(line, "cpu %d 0x%" SCNx64, &cpu, &v) != 2 ||
                cpu < 0) {
                bad = 1;
                break;
            }
            s->cpu[s->n] = cpu;
            s->orig[s->n++] = v;
        } else if (!strcmp(line, "end")) {
            have_end = 1;
        } else {
            bad = 1;
            break;
        }
    }
    fclose(f);
    if (bad || !have_magic || !have_end || !have_msr || !have_mask || !s->n || !s->prefix[0]) {
        msr_say(
                 "%s is damaged or incomplete; it is left in place (values per CPU can be set "
                 "by hand with wrmsr)", path);
        return MW_ERR_CORRUPT;
    }
    return 0;
}

/* ----------------------------------------------------------------- guard */

static msr_state g_state;                 /* the guard's saved values */
static char g_state_path[PATH_MAX];
static volatile sig_atomic_t g_active;    /* 1 while a guard holds changed registers */
static int g_atexit_done;
static mw_prefetch_hook g_hook;
static void *g_hook_user;
static const int g_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV,
                                SIGBUS, SIGILL,  SIGFPE, SIGABRT};
#define NSIG_GUARD (sizeof g_signals / sizeof g_signals[0])
static struct sigaction g_old[NSIG_GUARD];

MW_API void mw_prefetch_set_hook(mw_prefetch_hook h, void *user)
{
    g_hook = h;
    g_hook_user = user;
}

/* Async-signal-safe restore of s's known bits; returns the number of failures. */
static unsigned msr_restore_raw(const msr_state *s, const char *prefix)
{
    unsigned fails = 0;
    char path[PATH_MAX];
    for (unsigned i = 0; i < s->n; i++) {
        uint64_t cur;
        if (msr_path(path, sizeof path, prefix, (unsigned)s->cpu[i]) < 0) {
            fails++;
            continue;
        }
        int fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            fails++;
            continue;
        }
        if (pread(fd, &cur, sizeof cur, (off_t)s->msr) != (ssize_t)sizeof cur) {
            close(fd);
            fails++;
            continue;
        }
        uint64_t v = (cur & ~s->mask) | (s->orig[i] & s->mask);
        if (v != cur && pwrite(fd, &v, sizeof v, (off_t)s->msr) != (ssize_t)sizeof v)
            fails++;
        close(fd);
    }
    return fails;
}

static void msr_signal_handler(int sig)
{
    if (g_active) {
        g_active = 0;
        if (msr_restore_raw(&g_state, g_state.prefix) == 0)
            unlink(g_state_path);
    }
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

static void msr_atexit(void)
{
    if (g_active) {
        g_active = 0;
        if (msr_restore_raw(&g_state, g_state.prefix) == 0)
            unlink(g_state_path);
    }
}

/* Read the current values of the CPUs into s (the originals to save). */
static int msr_snapshot(const mw_prefetch_ctl *c, msr_state *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->prefix, sizeof s->prefix, "%s", c->prefix ? c->prefix : MSR_DEFAULT_PREFIX);
    s->msr = c->msr;
    s->mask = c->mask;
    int n = mw_prefetch_cpus(c, s->cpu, MW_MSR_MAX_CPUS);
    if (n < 0)
        return n;
    s->n = (unsigned)n;
    for (unsigned i = 0; i < s->n; i++) {
        int rc = mw_msr_read(s->prefix, (unsigned)s->cpu[i], s->msr, &s->orig[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int msr_apply(const msr_state *s, int disable)
{
    for (unsigned i = 0; i < s->n; i++) {
        uint64_t cur;
        int rc = mw_msr_read(s->prefix, (unsigned)s->cpu[i], s->msr, &cur);
        if (rc < 0)
            return rc;
        uint64_t v = disable ? (cur | s->mask) : (cur & ~s->mask);
        if (v != cur && (rc = mw_msr_write(s->prefix, (unsigned)s->cpu[i], s->msr, v)) < 0)
            return rc;
        if (g_hook)
            g_hook(i, s->cpu[i], g_hook_user);
    }
    return 0;
}

static int msr_check_ctl(const mw_prefetch_ctl *c)
{
    if (!c)
        return -EINVAL;
    if (!c->msr || !c->mask) {
        msr_say(
                 "no prefetcher control register is known for this CPU model");
        return MW_ERR_UNSUPPORTED;
    }
    return 0;
}

static int msr_state_path(const mw_prefetch_ctl *c, char *buf, size_t n)
{
    if (c->state_path) {
        if (snprintf(buf, n, "%s", c->state_path) >= (int)n)
            return -ENAMETOOLONG;
        return 0;
    }
    return mw_prefetch_state_default_path(buf, n);
}

MW_API int mw_prefetch_set(const mw_prefetch_ctl *c, int disable)
{
    int rc = msr_check_ctl(c);
    if (rc < 0)
        return rc;
    char path[PATH_MAX];
    if ((rc = msr_state_path(c, path, sizeof path)) < 0)
        return rc;
    msr_state *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    if ((rc = msr_snapshot(c, s)) < 0)
        goto out;
    if (access(path, F_OK) == 0) {
        /* a change is pending: keep the file's originals, check it matches */
        msr_state *old = calloc(1, sizeof *old);
        if (!old) {
            rc = -ENOMEM;
            goto out;
        }
        rc = msr_state_read(path, old);
        if (rc == 0 && (old->msr != s->msr || old->mask != s->mask)) {
            msr_say(
                     "%s holds the state of another register (0x%" PRIx32 "); restore it first",
                     path, old->msr);
            rc = -EEXIST;
        }
        free(old);
        if (rc < 0)
            goto out;
    } else if ((rc = msr_state_write(path, s)) < 0) {
        goto out;
    }
    rc = msr_apply(s, disable);
out:
    free(s);
    if (rc < 0)
        mw_log(MW_LOG_WARN, "prefetch: %s", msr_why);
    return rc;
}

MW_API int mw_prefetch_restore(const mw_prefetch_ctl *c)
{
    char path[PATH_MAX];
    mw_prefetch_ctl none = {0};
    if (!c)
        c = &none;
    int rc = msr_state_path(c, path, sizeof path);
    if (rc < 0)
        return rc;
    msr_state *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    if ((rc = msr_state_read(path, s)) < 0)
        goto out;
    if (c->prefix)
        snprintf(s->prefix, sizeof s->prefix, "%s", c->prefix);
    for (unsigned i = 0; i < s->n; i++) {
        uint64_t cur;
        if ((rc = mw_msr_read(s->prefix, (unsigned)s->cpu[i], s->msr, &cur)) < 0)
            goto out;
        uint64_t v = (cur & ~s->mask) | (s->orig[i] & s->mask);
        if (v != cur && (rc = mw_msr_write(s->prefix, (unsigned)s->cpu[i], s->msr, v)) < 0)
            goto out;
    }
    if (unlink(path) < 0) {
        rc = -errno;
        msr_say("restored, but cannot remove %s: %s", path,
                 strerror(errno));
    }
out:
    free(s);
    if (rc < 0 && rc != -ENOENT)
        mw_log(MW_LOG_WARN, "prefetch: %s", msr_why);
    return rc;
}

MW_API int mw_prefetch_guard_begin(const mw_prefetch_ctl *c, int disable)
{
    int rc = msr_check_ctl(c);
    if (rc < 0)
        return rc;
    if (g_active)
        return -EBUSY;
    if ((rc = msr_state_path(c, g_state_path, sizeof g_state_path)) < 0)
        return rc;
    if (access(g_state_path, F_OK) == 0) {
        msr_say(
                 "%s exists: an earlier change was not restored; run `memwatch prefetch "
                 "--restore` first", g_state_path);
        return -EEXIST;
    }
    if ((rc = msr_snapshot(c, &g_state)) < 0 || (rc = msr_state_write(g_state_path, &g_state)) < 0)
        goto fail;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = msr_signal_handler;
    sigfillset(&sa.sa_mask);
    for (size_t i = 0; i < NSIG_GUARD; i++)
        sigaction(g_signals[i], &sa, &g_old[i]);
    if (!g_atexit_done && atexit(msr_atexit) == 0)
        g_atexit_done = 1;
    g_active = 1;
    if ((rc = msr_apply(&g_state, disable)) < 0) {
        mw_prefetch_guard_end();
        goto fail;
    }
    return 0;
fail:
    mw_log(MW_LOG_WARN, "prefetch: %s", msr_why);
    return rc;
}

MW_API int mw_prefetch_guard_end(void)
{
    if (!g_active)
        return 0;
    g_active = 0;
    unsigned fails = msr_restore_raw(&g_state, g_state.prefix);
    for (size_t i = 0; i < NSIG_GUARD; i++)
        sigaction(g_signals[i], &g_old[i], NULL);
    if (fails) {
        msr_say(
                 "%u CPU(s) could not be restored; the originals stay in %s for `memwatch "
                 "prefetch --restore`", fails, g_state_path);
        mw_log(MW_LOG_ERROR, "prefetch: %s", msr_why);
        return -EIO;
    }
    unlink(g_state_path);
    return 0;
}
