/*
 * cli/cmd_record.c: `memwatch record [-o DIR] [options] -- program args`.
 *
 * Runs the program with libmemwatch.so (found beside the memwatch executable)
 * in LD_PRELOAD and the options turned into MEMWATCH_* variables, returns the
 * program's exit status (128 + signal when a signal ended it), then prints
 * where the raw files are and a three-line summary read from them: duration,
 * share of time bandwidth-bound, samples and losses. A statically linked or
 * setuid program cannot be profiled through the dynamic loader: record says
 * why and runs it unprofiled.
 *
 * Calls: libc; counters for the idle probe baseline and the held perf event
 * (mw_perf_group_open). The raw files are read with a minimal reader of its
 * own, records checked for size and alignment like any reader of
 * docs/raw-format.md.
 *
 * While the program runs, record holds one perf event that counts nothing
 * (rec_hooks_hold): the kernel switches on its perf scheduler hooks for the
 * first per-task event and off again about a second after the last one, and
 * switching them on keeps perf_event_open asleep for tens of ms in a VM. Held
 * here, opened on a thread beside the baseline measurement, that is paid
 * before the program starts and never again during the run (an OpenMP
 * program's first threads, a build after a pause).
 */
#include "cli.h"
#include "tsc.h" /* counters/: the TSC frequency handed to the program */

#include <memwatch/mwr.h>
#include <memwatch/perf.h>
#include <memwatch/probe_lat.h>

#include <dirent.h>
#include <pthread.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void rec_usage(FILE *f)
{
    fprintf(f,
            "usage: memwatch record [-o DIR] [options] -- program [args...]\n"
            "\n"
            "Runs the program under libmemwatch.so: one raw file per process in DIR\n"
            "(default: the current directory), then a short summary.\n"
            "\n"
            "  -o, --output DIR        where the raw files go (created if missing)\n"
            "  -i, --interval T        measurement interval, e.g. 10ms (default), 1ms..60s\n"
            "  -F, --rate N            cpu-clock samples per second per thread (default 250, 0 off)\n"
            "  -m, --method M          auto (default), probe_lat, none\n"
            "  -a, --alloc-threshold B allocations recorded from this size on (default 64K; off)\n"
            "      --threshold-ns NS   latency above which an interval is bandwidth-bound\n"
            "      --profile PATH      machine profile (default: memwatch calibrate's output)\n"
            "      --no-follow         do not profile child processes\n"
            "  -q, --quiet             no summary\n"
            "  -v, --verbose           libmemwatch.so reports more on stderr\n"
            "\n"
            "Every MEMWATCH_* variable (docs/config.md) may be set in the environment instead.\n");
}

/* ---- the program ---- */

static int rec_find_program(const char *name, char *out, size_t n)
{
    if (strchr(name, '/')) {
        snprintf(out, n, "%s", name);
        return access(out, X_OK) == 0 ? 0 : -errno;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *c = strchr(path, ':');
        size_t len = c ? (size_t)(c - path) : strlen(path);
        snprintf(out, n, "%.*s/%s", (int)len, len ? path : ".", name);
        if (access(out, X_OK) == 0)
            return 0;
        path += len + (c ? 1 : 0);
    }
    return -ENOENT;
}

enum rec_kind { REC_DYNAMIC, REC_STATIC, REC_SCRIPT, REC_UNKNOWN };

/* Dynamic (has PT_INTERP), static, a script (#!), or unknown. */
static enum rec_kind rec_elf_kind(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return REC_UNKNOWN;
    Elf64_Ehdr eh;
    enum rec_kind k = REC_UNKNOWN;
    ssize_t r = pread(fd, &eh, sizeof eh, 0);
    if (r >= 2 && ((char *)&eh)[0] == '#' && ((char *)&eh)[1] == '!') {
        k = REC_SCRIPT;
    } else if (r == (ssize_t)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
               eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr) &&
               eh.e_phnum < 256) {
        k = REC_STATIC;
        for (unsigned i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != sizeof ph)
                break;
            if (ph.p_type == PT_INTERP)
                k = REC_DYNAMIC;
        }
    }
    close(fd);
    return k;
}

static int rec_self_dir(char *out, size_t n)
{
    ssize_t k = readlink("/proc/self/exe", out, n - 1);
    if (k <= 0)
        return -errno;
    out[k] = 0;
    char *s = strrchr(out, '/');
    if (s)
        *s = 0;
    return 0;
}

static int rec_mkdirs(const char *dir)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0755) && errno != EEXIST)
                return -errno;
            *p = '/';
        }
    }
    if (mkdir(tmp, 0755) && errno != EEXIST)
        return -errno;
    return 0;
}

/* ---- summary from the raw files ---- */

struct rec_sum {
    unsigned files, trailers, damaged;
    uint64_t t_first, t_last;     /* CLOCK_MONOTONIC over all intervals */
    uint64_t iv_n, iv_bound, iv_lat;
    double ns_measured, ns_bound;
    uint64_t samples, lost, dropped, alloc_dropped;
    int uncalibrated;
};

static void rec_read_file(const char *path, struct rec_sum *s)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) || st.st_size < (off_t)sizeof(mwr_file_header)) {
        close(fd);
        s->damaged++;
        s->files++;
        return;
    }
    size_t len = (size_t)st.st_size;
    const unsigned char *b = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (b == MAP_FAILED)
        return;
    s->files++;
    const mwr_file_header *h = (const void *)b;
    if (memcmp(h->magic, MWR_MAGIC, 8) || h->version_major != MWR_VERSION_MAJOR ||
        h->header_size < sizeof *h || h->header_size > len) {
        s->damaged++;
        goto out;
    }
    size_t off = h->header_size;
    int trailer = 0;
    while (off + sizeof(mwr_rec_hdr) <= len) {
        mwr_rec_hdr r;
        memcpy(&r, b + off, sizeof r);
        if (r.size < sizeof r || (r.size & 7) || r.size > len - off)
            break; /* cut short: everything before is whole */
        const unsigned char *p = b + off + sizeof r;
        size_t pl = r.size - sizeof r;
        if (r.type == MWR_INTERVAL && pl >= sizeof(mwr_interval)) {
            mwr_interval iv;
            memcpy(&iv, p, sizeof iv);
            if (iv.t_end_ns > iv.t_start_ns) {
                if (!s->t_first || iv.t_start_ns < s->t_first)
                    s->t_first = iv.t_start_ns;
                if (iv.t_end_ns > s->t_last)
                    s->t_last = iv.t_end_ns;
            }
            s->samples += iv.samples;
            s->lost += iv.lost;
            if (iv.flags & MWR_IV_LAT_VALID) {
                double d = (double)(iv.t_end_ns - iv.t_start_ns);
                s->iv_lat++;
                s->ns_measured += d;
                if (iv.flags & MWR_IV_BW_BOUND) {
                    s->iv_bound++;
                    s->ns_bound += d;
                }
                if (iv.flags & MWR_IV_UNCALIBRATED)
                    s->uncalibrated = 1;
            }
            s->iv_n++;
        } else if (r.type == MWR_TRAILER && pl >= sizeof(mwr_trailer)) {
            mwr_trailer t;
            memcpy(&t, p, sizeof t);
            s->dropped += t.dropped_records;
            s->alloc_dropped += t.alloc_dropped;
            trailer = 1;
        }
        off += r.size;
    }
    if (trailer)
        s->trailers++;
out:
    munmap((void *)b, len);
}

static void rec_summary(const char *dir, time_t since, int quiet)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct rec_sum s;
    memset(&s, 0, sizeof s);
    struct dirent *e;
    char path[PATH_MAX + 256];
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "memwatch-", 9) || n < 4 || strcmp(e->d_name + n - 4, ".mwr"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) || st.st_mtime < since)
            continue; /* an earlier recording */
        rec_read_file(path, &s);
    }
    closedir(d);
    if (quiet)
        return;
    if (!s.files) {
        fprintf(stderr, "memwatch: no raw files were written to %s\n", dir);
        return;
    }
    fprintf(stderr, "memwatch: %u raw file%s in %s", s.files, s.files == 1 ? "" : "s", dir);
    if (s.files != s.trailers)
        fprintf(stderr, " (%u without a trailer: killed or still running)",
                s.files - s.trailers);
    fprintf(stderr, "\n");
    double dur = s.t_last > s.t_first ? (double)(s.t_last - s.t_first) / 1e9 : 0;
    fprintf(stderr, "  duration        %.3f s, %llu intervals\n", dur, (unsigned long long)s.iv_n);
    if (s.iv_lat)
        fprintf(stderr, "  bandwidth-bound %.1f %% of the measured time (%llu of %llu intervals)%s\n",
                s.ns_measured > 0 ? 100.0 * s.ns_bound / s.ns_measured : 0.0,
                (unsigned long long)s.iv_bound, (unsigned long long)s.iv_lat,
                s.uncalibrated ? "; uncalibrated threshold: run 'memwatch calibrate'" : "");
    else
        fprintf(stderr, "  bandwidth-bound n/a: no interval carries a latency measurement\n");
    fprintf(stderr, "  samples         %llu, %llu lost, %llu records dropped, %llu allocation records dropped\n",
            (unsigned long long)s.samples, (unsigned long long)s.lost,
            (unsigned long long)s.dropped, (unsigned long long)s.alloc_dropped);
}

/* The idle latency the uncalibrated default threshold is relative to,
 * measured here, before the program (and its children) load the machine. */
/* Length of the first LD_PRELOAD entry when it is a sanitizer runtime
 * (libasan, libtsan, libubsan, liblsan, libhwasan, clang's libclang_rt.*),
 * which must come first in the library list of an instrumented program; 0
 * otherwise. */
static size_t rec_sanitizer_prefix(const char *ld)
{
    if (!ld || !*ld)
        return 0;
    size_t n = strcspn(ld, ": ");
    const char *base = ld;
    for (size_t i = 0; i < n; i++)
        if (ld[i] == '/')
            base = ld + i + 1;
    static const char *const rt[] = {"libasan", "libtsan", "libubsan", "liblsan", "libhwasan",
                                     "libclang_rt."};
    for (size_t i = 0; i < sizeof rt / sizeof rt[0]; i++)
        if (!strncmp(base, rt[i], strlen(rt[i])))
            return n;
    return 0;
}

static void rec_baseline(void)
{
    const char *m = getenv("MEMWATCH_METHOD");
    if (getenv("MEMWATCH_BASELINE_NS") || (m && !strcmp(m, "none")))
        return;
    mw_probe_lat *p = NULL;
    if (mw_probe_lat_create(NULL, &p) < 0)
        return;
    /* The lowest of 5 baselines (each the median of 7 readings) 5 ms apart:
     * anything else on the machine only ever adds latency, and one baseline
     * taken during a disturbance (seen on the GPU machine: 338 ns where the
     * others read 130-160) set a threshold no memory-bound interval reached. */
    double base = 0;
    for (int i = 0; i < 5; i++) {
        if (i)
            nanosleep(&(struct timespec){0, 5000000}, NULL);
        double b = mw_probe_lat_baseline(p);
        if (b > 0 && (base == 0 || b < base))
            base = b;
    }
    mw_probe_lat_destroy(p);
    if (base > 0) {
        char b[32];
        snprintf(b, sizeof b, "%.1f", base);
        setenv("MEMWATCH_BASELINE_NS", b, 1);
    }
}

/* The TSC frequency, determined once here and handed to every recorded
 * process (MEMWATCH_TSC "HZ HOW"): without it, each process started by exec
 * determines it again on its interval thread (in a virtual machine without a
 * TSC CPUID leaf: a perf event, /proc/cpuinfo and a 20 ms measurement). */
static void rec_tsc(void)
{
    if (getenv("MEMWATCH_TSC"))
        return;
    const char *how = NULL;
    double hz = mw_tsc_hz(&how);
    if (!(hz >= 1e6 && hz <= 1e11) || !how || strchr(how, '\n'))
        return;
    char b[200];
    snprintf(b, sizeof b, "%.3f %s", hz, how);
    setenv("MEMWATCH_TSC", b, 1);
}

/* ---- the kernel's perf hooks, on before the program ---- */

/* The held event: a dummy, user-only, on record's main thread, which lives
 * until the program has ended (not on the opening thread, which ends at
 * once); close-on-exec and not inherited, so the program never sees it. NULL
 * where no perf event can be opened here (the library says what it lacks). */
static mw_perf_group *rec_hooks;
static pthread_t rec_hooks_th;
static int rec_hooks_started;

static void *rec_hooks_open(void *arg)
{
    (void)arg;
    mw_perf_event ev;
    mw_perf_target t = {.kind = MW_PERF_THREAD, .tid = getpid()};
    if (mw_perf_event_generic("dummy", &ev) == 0)
        (void)mw_perf_group_open(&ev, 1, &t, MW_PERF_USER_ONLY, &rec_hooks);
    return NULL;
}

/* Start opening the held event, on a thread beside the baseline
 * measurement; rec_hooks_wait waits for it. */
static void rec_hooks_hold(void)
{
    rec_hooks_started = pthread_create(&rec_hooks_th, NULL, rec_hooks_open, NULL) == 0;
    if (!rec_hooks_started)
        rec_hooks_open(NULL);
}

static void rec_hooks_wait(void)
{
    if (rec_hooks_started)
        pthread_join(rec_hooks_th, NULL);
    rec_hooks_started = 0;
}

/* ---- running ---- */

static int rec_setenv_opt(const char *var, const char *val)
{
    if (setenv(var, val, 1)) {
        fprintf(stderr, "memwatch: cannot set %s: %s\n", var, strerror(errno));
        return -1;
    }
    return 0;
}

int mw_cmd_record(int argc, char **argv)
{
    const char *out = NULL;
    int quiet = 0, i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-')
            break;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            rec_usage(stdout);
            return 0;
        }
        if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
            continue;
        }
        if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            rec_setenv_opt("MEMWATCH_VERBOSE", "2");
            continue;
        }
        if (!strcmp(a, "--no-follow")) {
            rec_setenv_opt("MEMWATCH_FOLLOW", "0");
            continue;
        }
        static const struct {
            const char *s, *l, *var;
        } opts[] = {
            {"-o", "--output", NULL},
            {"-i", "--interval", "MEMWATCH_INTERVAL"},
            {"-F", "--rate", "MEMWATCH_RATE"},
            {"-m", "--method", "MEMWATCH_METHOD"},
            {"-a", "--alloc-threshold", "MEMWATCH_ALLOC_THRESHOLD"},
            {"", "--threshold-ns", "MEMWATCH_THRESHOLD_NS"},
            {"", "--profile", "MEMWATCH_PROFILE"},
        };
        int done = 0;
        for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
            if (strcmp(a, opts[k].s) && strcmp(a, opts[k].l))
                continue;
            if (!v) {
                fprintf(stderr, "memwatch record: %s needs a value\n", a);
                return 2;
            }
            if (opts[k].var) {
                if (rec_setenv_opt(opts[k].var, v))
                    return 2;
            } else {
                out = v;
            }
            i++;
            done = 1;
            break;
        }
        if (!done) {
            fprintf(stderr, "memwatch record: unknown option '%s'\n", a);
            rec_usage(stderr);
            return 2;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "memwatch record: no program given\n");
        rec_usage(stderr);
        return 2;
    }
    char **prog = argv + i;

    char dir[PATH_MAX];
    if (!out)
        out = getenv("MEMWATCH_DIR");
    if (!out || !*out)
        out = ".";
    if (rec_mkdirs(out) < 0 && access(out, F_OK)) {
        fprintf(stderr, "memwatch record: cannot create %s: %s\n", out, strerror(errno));
        return 2;
    }
    if (!realpath(out, dir)) {
        fprintf(stderr, "memwatch record: %s: %s\n", out, strerror(errno));
        return 2;
    }
    rec_setenv_opt("MEMWATCH_DIR", dir);

    char self[PATH_MAX], lib[PATH_MAX + 32], exe[PATH_MAX];
    int profile = 1;
    if (rec_self_dir(self, sizeof self) < 0) {
        fprintf(stderr, "memwatch record: cannot find my own path: %s\n", strerror(errno));
        return 2;
    }
    snprintf(lib, sizeof lib, "%s/libmemwatch.so", self);
    if (access(lib, R_OK)) {
        fprintf(stderr,
                "memwatch record: %s is missing (it is built and installed beside the memwatch "
                "command); running the program unprofiled\n",
                lib);
        profile = 0;
    }
    if (rec_find_program(prog[0], exe, sizeof exe) < 0) {
        fprintf(stderr, "memwatch record: %s: command not found\n", prog[0]);
        return 127;
    }
    struct stat st;
    if (profile && stat(exe, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID)) &&
        (st.st_uid != geteuid() || ((st.st_mode & S_ISGID) && st.st_gid != getegid()))) {
        fprintf(stderr,
                "memwatch record: %s is set-user-ID or set-group-ID: the dynamic loader ignores "
                "LD_PRELOAD for such programs (secure execution) and libmemwatch.so refuses to "
                "run in them, so memwatch cannot profile it; running it unprofiled\n",
                exe);
        profile = 0;
    } else if (profile && stat(exe, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID))) {
        fprintf(stderr,
                "memwatch record: %s is set-user-ID or set-group-ID; it runs in secure-execution "
                "mode only when that changes its identity (not for you), so it is profiled\n",
                exe);
    }
    enum rec_kind kind = rec_elf_kind(exe);
    if (profile && kind == REC_STATIC) {
        fprintf(stderr,
                "memwatch record: %s is statically linked (no PT_INTERP program header): no "
                "dynamic loader runs, so LD_PRELOAD cannot load libmemwatch.so into it; running "
                "it unprofiled (link it dynamically to profile it)\n",
                exe);
        profile = 0;
    }
    if (profile) {
        rec_hooks_hold();
        rec_baseline();
        rec_tsc();
        rec_hooks_wait();
        const char *old = getenv("LD_PRELOAD");
        char pre[2 * PATH_MAX + 64];
        size_t san = rec_sanitizer_prefix(old);
        if (san) /* a sanitizer runtime must stay first: libmemwatch.so goes after it */
            snprintf(pre, sizeof pre, "%.*s:%s%s%s", (int)san, old, lib, old[san] ? ":" : "",
                     old[san] ? old + san + 1 : "");
        else if (old && *old)
            snprintf(pre, sizeof pre, "%s:%s", lib, old);
        else
            snprintf(pre, sizeof pre, "%s", lib);
        rec_setenv_opt("LD_PRELOAD", pre);
    }

    time_t since = time(NULL) - 1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid;
    int rc = posix_spawn(&pid, exe, NULL, NULL, prog, environ);
    if (rc) {
        fprintf(stderr, "memwatch record: cannot run %s: %s\n", exe, strerror(rc));
        return 126;
    }
    /* Like a shell: keyboard signals go to the program, which decides. */
    struct sigaction ign, oint, oquit;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ign, &oint);
    sigaction(SIGQUIT, &ign, &oquit);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    sigaction(SIGINT, &oint, NULL);
    sigaction(SIGQUIT, &oquit, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    mw_perf_group_close(rec_hooks);
    int ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (profile) {
        if (!quiet)
            fprintf(stderr, "memwatch: %s %s after %.3f s wall time\n", prog[0],
                    WIFEXITED(status) ? "exited" : "was killed by a signal",
                    (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
        rec_summary(dir, since, quiet);
        if (!quiet)
            fprintf(stderr, "memwatch: 'memwatch report %s' turns them into a report\n", dir);
    }
    return ret;
}
