/*
 * cli/cmd_record.c: `memwatch record [-o DIR] [options] -- program args`.
 *
 * Runs the program with libmemwatch.so (found beside the memwatch executable)
 * in LD_PRELOAD and the options turned into MEMWATCH_* variables, returns the
 * program's exit status (128 + signal when a signal ended it), then prints
 * where the raw files are and a three-line summary read from them: duration,
 * share of time bandwidth-bound, samples and losses. A setuid program cannot
 * be profiled through the dynamic loader: record says why and runs it
 * unprofiled. A statically linked one (or any, with --external) is sampled
 * from outside by the external sampler (cli/attach.c), as running processes
 * are with -p and --all (docs/attach.md).
 *
 * Calls: libc; counters for the idle probe baseline and the held perf event
 * (mw_perf_group_open). The raw files are read with a minimal reader of its
 * own, records checked for size and alignment like any reader of
 * docs/raw-format.md.
 *
 * While the program runs, record holds one perf event that counts nothing
 * and one that counts its own page faults (rec_hooks_hold): the kernel switches on its perf scheduler hooks for the
 * first per-task event and off again about a second after the last one, and
 * switching them on keeps perf_event_open asleep for tens of ms in a VM. Held
 * here, opened on a thread beside the baseline measurement, that is paid
 * before the program starts and never again during the run (an OpenMP
 * program's first threads, a build after a pause).
 */
#include "cli.h"
#include "neighbours.h" /* the load sampler: whose load is it */
#include "attach.h"     /* the external sampler: -p, --all, static programs */
#include "envval.h" /* counters/: what MEMWATCH_METHOD asks for */
#include "tsc.h"    /* counters/: the TSC frequency handed to the program */
#include "../preload/jobid.h" /* the run id of an MPI or Slurm job's rank */

#include <memwatch/meta_keys.h>
#include <memwatch/mwr.h>
#include <memwatch/mwr_frame.h>
#include <memwatch/perf.h>
#include <memwatch/probe_lat.h>
#include <memwatch/profile.h>
#include <memwatch/report.h>
#include <memwatch/symbolize.h>

#include <linux/perf_event.h>

#include <dirent.h>
#include <pthread.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void rec_usage(FILE *f)
{
    fprintf(f,
            "usage: memwatch record [-o DIR] [options] -- program [args...]\n"
            "       memwatch record [-o DIR] [options] -p PID[,PID...] [--duration T]\n"
            "       memwatch record [-o DIR] [options] --all [--duration T]\n"
            "\n"
            "Runs the program under libmemwatch.so: one raw file per process in DIR\n"
            "(default: a new memwatch-YYYYMMDD-HHMMSS directory, one per run), then a short\n"
            "summary of this run's files.\n"
            "\n"
            "  -o, --output DIR        where the raw files go (created if missing)\n"
            "  -i, --interval T        measurement interval, e.g. 10ms (default), 1ms..60s\n"
            "  -F, --rate N            cpu-clock samples per second per thread (default 250, 0 off)\n"
            "  -m, --method M          auto (default), probe_lat, none\n"
            "  -a, --alloc-threshold B allocations recorded from this size on (default 64K; off)\n"
            "      --threshold-ns NS   latency above which an interval is bandwidth-bound\n"
            "      --profile PATH      machine profile (default: memwatch calibrate's output)\n"
            "      --no-follow         do not profile child processes\n"
            "      --group-readable    raw files readable by their group (default: owner only)\n"
            "      --max-size SIZE     stop writing samples once the run's raw files reach SIZE\n"
            "                          (e.g. 500M, 2G); intervals and process ends go on\n"
            "  -p, --pid PID[,PID...]  attach to running processes (external sampler, no\n"
            "                          LD_PRELOAD; docs/attach.md) until they end or Ctrl-C\n"
            "      --all               attach to every process you may sample\n"
            "      --duration T        with -p or --all: detach after T (e.g. 10s)\n"
            "      --external          sample the program from outside, as -p does, even where\n"
            "                          LD_PRELOAD would work (static programs always are)\n"
            "  -q, --quiet             no summary\n"
            "  -v, --verbose           libmemwatch.so reports more on stderr\n"
            "\n"
            "Every MEMWATCH_* variable (docs/config.md) may be set in the environment instead.\n");
}

/* ---- the program ---- */

/* The program's path, as a shell finds it: 0, -ENOENT (127: not found) or
 * -EACCES (126: found, but not an executable file). */
static int rec_find_program(const char *name, char *out, size_t n)
{
    struct stat st;
    if (strchr(name, '/')) {
        snprintf(out, n, "%s", name);
        if (stat(out, &st))
            return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -errno;
        if (S_ISDIR(st.st_mode))
            return -EISDIR;
        return access(out, X_OK) == 0 ? 0 : -EACCES;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    char denied[PATH_MAX] = "";
    while (*path) {
        const char *c = strchr(path, ':');
        size_t len = c ? (size_t)(c - path) : strlen(path);
        snprintf(out, n, "%.*s/%s", (int)len, len ? path : ".", name);
        if (stat(out, &st) == 0 && !S_ISDIR(st.st_mode)) {
            if (access(out, X_OK) == 0)
                return 0;
            if (!denied[0])
                snprintf(denied, sizeof denied, "%s", out);
        }
        path += len + (c ? 1 : 0);
    }
    if (denied[0]) {
        snprintf(out, n, "%s", denied);
        return -EACCES;
    }
    return -ENOENT;
}

enum rec_kind { REC_DYNAMIC, REC_STATIC, REC_SCRIPT, REC_ELF32, REC_UNKNOWN };

/* Dynamic (has PT_INTERP), static, a script (#!), a 32-bit ELF file, or
 * unknown. */
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
    } else if (r >= EI_NIDENT && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
               eh.e_ident[EI_CLASS] == ELFCLASS32) {
        k = REC_ELF32;
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

/* libmemwatch.so: beside the memwatch command (the build tree), else where
 * `cmake --install` puts libraries relative to the command
 * (MW_LIBDIR_FROM_BINDIR, e.g. ../lib/x86_64-linux-gnu). lib holds the first
 * place looked at when it is found nowhere. */
static int rec_find_lib(char *lib, size_t n, char *self, size_t sn)
{
    if (rec_self_dir(self, sn) < 0) {
        snprintf(lib, n, "libmemwatch.so");
        return -1;
    }
    snprintf(lib, n, "%s/libmemwatch.so", self);
    if (access(lib, R_OK) == 0)
        return 0;
#ifdef MW_LIBDIR_FROM_BINDIR
    char alt[PATH_MAX + 64];
    snprintf(alt, sizeof alt, "%s/" MW_LIBDIR_FROM_BINDIR "/libmemwatch.so", self);
    if (access(alt, R_OK) == 0) {
        snprintf(lib, n, "%s", alt);
        return 0;
    }
#endif
    return -1;
}

/* --group-readable (MEMWATCH_GROUP_READABLE, as the library reads it for
 * raw files): what record creates is the group's to read too. */
static int rec_group_readable(void)
{
    const char *g = getenv("MEMWATCH_GROUP_READABLE");
    return g && (*g == '1' || *g == 'y' || *g == 't' || !strcasecmp(g, "on"));
}

/* A directory of the run, 0700 (0750 group-readable) whatever the umask;
 * one that exists is left as it is. 0, or -errno. */
static int rec_mkdir(const char *path)
{
    mode_t m = rec_group_readable() ? 0750 : 0700;
    if (mkdir(path, m))
        return errno == EEXIST ? 0 : -errno;
    (void)chmod(path, m);
    return 0;
}

/* Every allocation stack libmemwatch.so records begins in its own code, so
 * the report unwinds it with the library's unwind tables. A copy of the
 * library by its build-id beside the raw files (DIR/.build-id/xx/yyyy.debug,
 * the layout of debug-info trees, where memwatch report looks) keeps those
 * stacks whole after the library was rebuilt or upgraded. Made once per
 * build of the library and directory; where it cannot be made, the report
 * still has the library itself while it stays the same. A copy, not a hard
 * link: `cp` of another build over the library writes into the same file
 * (test_record_buildid). */
static void rec_keep_lib(const char *dir, const char *lib)
{
    uint8_t bid[20];
    int n = mw_sym_file_build_id(lib, bid, sizeof bid);
    if (n < 2)
        return;
    char hex[41];
    for (int i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", bid[i]);
    char path[PATH_MAX], tmp[PATH_MAX + 32];
    if (snprintf(path, sizeof path, "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2) >=
        (int)sizeof path)
        return;
    char *cut = strrchr(path, '/'); /* DIR/.build-id/xx */
    *cut = 0;
    char *mid = strrchr(path, '/'); /* DIR/.build-id */
    *mid = 0;
    if (rec_mkdir(path))
        return;
    *mid = '/';
    if (rec_mkdir(path))
        return;
    *cut = '/';
    uint8_t have[20];
    if (mw_sym_file_build_id(path, have, sizeof have) == n && !memcmp(have, bid, (size_t)n))
        return; /* kept by an earlier run */
    snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
    int in = open(lib, O_RDONLY | O_CLOEXEC);
    mode_t fm = rec_group_readable() ? 0640 : 0600;
    int out = in < 0 ? -1 : open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, fm);
    int ok = out >= 0 && fchmod(out, fm) == 0;
    char buf[1 << 16];
    ssize_t r;
    while (ok && (r = read(in, buf, sizeof buf)) != 0) {
        if (r < 0) {
            ok = errno == EINTR;
            continue;
        }
        for (ssize_t o = 0; ok && o < r;) {
            ssize_t w = write(out, buf + o, (size_t)(r - o));
            if (w < 0 && errno != EINTR)
                ok = 0;
            else if (w > 0)
                o += w;
        }
    }
    if (out >= 0 && close(out))
        ok = 0;
    if (in >= 0)
        close(in);
    if (ok && rename(tmp, path) == 0)
        return;
    if (out >= 0)
        unlink(tmp);
}

/* Did the program (pid) write its end itself? Its newest file of its own
 * (memwatch-HOST-RANK-PID[.N].mwr in dir) ends in a trailer, or, without
 * one, the run's shared file of short processes holds a segment of its pid
 * that ends in one. */
static int rec_program_ended(const char *dir, const char *run, pid_t pid)
{
    DIR *d = opendir(dir);
    if (!d)
        return 1; /* nothing can be said: write nothing */
    char own[PATH_MAX + 320] = "", shortf[PATH_MAX + 320] = "", tail[64], tail0[48], sfx[96];
    snprintf(tail0, sizeof tail0, "-%ld.mwr", (long)pid);
    snprintf(sfx, sizeof sfx, "-%s-short.mwr", run);
    long best = -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name), sl = strlen(sfx);
        if (strncmp(e->d_name, "memwatch-", 9) || strstr(e->d_name, "-reaped-"))
            continue;
        if (l > sl && !strcmp(e->d_name + l - sl, sfx)) {
            snprintf(shortf, sizeof shortf, "%s/%s", dir, e->d_name);
            continue;
        }
        for (long n = 0; n < 100; n++) { /* the image's suffix: none, .1 .. .99 */
            if (n)
                snprintf(tail, sizeof tail, "-%ld.%ld.mwr", (long)pid, n);
            size_t tl = strlen(n ? tail : tail0);
            if (l > tl && !strcmp(e->d_name + l - tl, n ? tail : tail0)) {
                if (n > best) {
                    best = n;
                    snprintf(own, sizeof own, "%s/%s", dir, e->d_name);
                }
                break;
            }
        }
    }
    closedir(d);
    const char *path = own[0] ? own : shortf;
    int fd = path[0] ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || st.st_size < (off_t)sizeof(mwr_file_header)) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    size_t len = (size_t)st.st_size;
    const unsigned char *b = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (b == MAP_FAILED)
        return 0;
    char want[32];
    int wl = snprintf(want, sizeof want, "\n%s=%ld\n", mw_meta_key(MW_META_PID), (long)pid);
    int mine = own[0], ended = 0;
    for (size_t off = sizeof(mwr_file_header); off + sizeof(mwr_rec_hdr) <= len;) {
        mwr_rec_hdr r;
        memcpy(&r, b + off, sizeof r);
        if (r.size < sizeof r || (r.size & 7) || r.size > len - off)
            break; /* cut short */
        if (!own[0] && r.type == MWR_META)
            mine = memmem(b + off + sizeof r, r.size - sizeof r, want, (size_t)wl) != NULL;
        if (r.type == MWR_TRAILER)
            ended = own[0] ? 1 : ended || mine;
        else if (own[0])
            ended = 0; /* own file: only a trailer at the end counts */
        off += r.size;
    }
    munmap((void *)b, len);
    return ended;
}

/* The program's own code wrote no end: a signal memwatch does not catch
 * (SIGKILL) ended it, or it exited by a raw exit_group system call (Go
 * programs), past libc's exit; where it had not begun recording it wrote
 * nothing at all. memwatch record, its parent, writes what a recorded
 * parent writes for such a child (preload/reap.c), and more, since it
 * started it: its command line and start. A file of its own,
 * memwatch-HOST-RUN-reaped-PID.mwr: META (reported_by=parent), the CPU time
 * wait4 returned, a trailer with the exit status or minus the signal
 * (status < 0) as its status. Where the program began, the report makes it
 * the end of the program's own file. */
static void rec_write_reaped(const char *dir, const char *run, pid_t pid, int32_t status,
                             const struct rusage *ru, uint64_t start_ns, uint64_t end_ns,
                             const char *exe, char *const prog[])
{
    char host[65];
    mw_host_name(host, sizeof host); /* as libmemwatch.so names hosts */
    char exe_l[PATH_MAX]; /* one META line: a newline in the path would start another key */
    snprintf(exe_l, sizeof exe_l, "%s", exe);
    for (char *p = exe_l; *p; p++)
        if (*p == '\n')
            *p = ' ';
    static char meta[8192];
    int n = snprintf(meta, sizeof meta,
                     "%s=%u.%u\n%s=%s\n%s=memwatch record\n%s=CLOCK_MONOTONIC\n%s=%llu\n%s=%ld\n"
                     "%s=%ld\n%s=0\n%s=%s\n%s=%s\n%s=%s\n%s=%s\n%s=parent\n%s=%s; written by "
                     "memwatch record, which started it, when it reaped it\n%s=",
                     mw_meta_key(MW_META_FORMAT), MWR_VERSION_MAJOR, MWR_VERSION_MINOR,
                     mw_meta_key(MW_META_MEMWATCH_VERSION), MW_VERSION,
                     mw_meta_key(MW_META_WRITER),
                     mw_meta_key(MW_META_CLOCK),
                     mw_meta_key(MW_META_START_MONOTONIC_NS), (unsigned long long)start_ns,
                     mw_meta_key(MW_META_PID), (long)pid,
                     mw_meta_key(MW_META_PPID), (long)getpid(),
                     mw_meta_key(MW_META_RANK),
                     mw_meta_key(MW_META_HOST), host,
                     mw_meta_key(MW_META_EXE), exe_l,
                     mw_meta_key(MW_META_RUN_ID), run,
                     mw_meta_key(MW_META_END), status < 0 ? "signal" : "exit",
                     mw_meta_key(MW_META_REPORTED_BY),
                     mw_meta_key(MW_META_NOTE),
                     status < 0 ? "killed by a signal memwatch does not catch"
                                : "exited without memwatch's exit path (a raw exit_group system "
                                  "call, as Go programs end, or a last image libmemwatch.so was "
                                  "not loaded into)",
                     mw_meta_key(MW_META_CMDLINE));
    n = n > 0 && (size_t)n < sizeof meta ? n : 0;
    /* the arguments apart by spaces, newlines as spaces, as the library
     * writes a command line */
    for (int i = 0; n > 0 && prog[i] && (size_t)n < sizeof meta - 8; i++) {
        if (i)
            meta[n++] = ' ';
        for (const char *c = prog[i]; *c && (size_t)n < sizeof meta - 8; c++)
            meta[n++] = *c == '\n' ? ' ' : *c;
    }
    if (n == 0)
        return;
    meta[n++] = '\n';
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/memwatch-%s-%s-reaped-%ld.mwr", dir, host, run, (long)pid) >=
        (int)sizeof path)
        return;
    mode_t fm = rec_group_readable() ? 0640 : 0600; /* as the library creates raw files */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, fm);
    if (fd < 0)
        return;
    (void)fchmod(fd, fm); /* whatever the umask */
    mwr_file_header fh;
    mwr_file_header_init(&fh);
    mwr_cpu c;
    memset(&c, 0, sizeof c);
    c.time_ns = end_ns;
    mwr_cpu_from_rusage(ru, &c);
    mwr_trailer t;
    memset(&t, 0, sizeof t);
    t.time_ns = end_ns;
    t.exit_status = status;
    t.records = 2;
    t.bytes = mwr_rec_size((size_t)n) + mwr_rec_size(sizeof c);
    static char buf[sizeof meta + 512];
    size_t len = 0;
    memcpy(buf, &fh, sizeof fh);
    len += sizeof fh;
    len += mwr_frame(buf + len, MWR_META, meta, (size_t)n, NULL, 0);
    len += mwr_frame(buf + len, MWR_CPU, &c, sizeof c, NULL, 0);
    len += mwr_frame(buf + len, MWR_TRAILER, &t, sizeof t, NULL, 0);
    ssize_t w = write(fd, buf, len);
    close(fd);
    if (w != (ssize_t)len)
        unlink(path);
}

static int rec_mkdirs(const char *dir)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            int e = rec_mkdir(tmp);
            if (e)
                return e;
            *p = '/';
        }
    }
    return rec_mkdir(tmp);
}

/* ---- summary from the raw files ---- */

struct rec_sum {
    unsigned files, trailers, damaged;
    uint64_t t_first, t_last;     /* CLOCK_MONOTONIC over all intervals */
    uint64_t iv_n, iv_bound, iv_lat;
    double ns_measured, ns_bound;
    uint64_t samples, lost, dropped, alloc_dropped;
    unsigned unsampled;      /* processes whose samplers the kernel refused (META sampling_error) */
    char unsampled_why[480]; /* the first one's reason */
    int uncalibrated;
    char lat_method[16]; /* of the first interval with a latency measurement */
};

/* What the status file (MEMWATCH_STATUS, preload/status.c) says: the first
 * write failure of the tree. */
struct rec_status {
    int err;            /* errno; 0: none */
    uint64_t time_ns;   /* CLOCK_MONOTONIC of the failure */
    char file[PATH_MAX];
};

static void rec_status_read(const char *path, struct rec_status *st)
{
    memset(st, 0, sizeof *st);
    char buf[PATH_MAX + 256];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = 0;
    for (char *line = buf, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl)
            break;
        *nl = 0;
        if (!strncmp(line, "errno=", 6))
            st->err = atoi(line + 6);
        else if (!strncmp(line, "time_ns=", 8))
            st->time_ns = strtoull(line + 8, NULL, 10);
        else if (!strncmp(line, "file=", 5))
            snprintf(st->file, sizeof st->file, "%s", line + 5);
    }
}

/* A status file of blocks allocated now, while there is room: a process
 * that meets a full disk can still leave its reason there. */
static int rec_status_create(const char *dir, char *path, size_t n)
{
    snprintf(path, n, "%s/.memwatch-status-%ld", dir, (long)getpid());
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    static const char zero[4096];
    ssize_t w = write(fd, zero, sizeof zero);
    close(fd);
    if (w != (ssize_t)sizeof zero) {
        unlink(path);
        return -ENOSPC;
    }
    return 0;
}

static const char *rec_err_meaning(int e)
{
    return e == ENOSPC ? " (disk full)" : e == EDQUOT ? " (disk quota exceeded)"
         : e == EROFS ? " (read-only file system)" : "";
}

/* The value of META key k in a META record's text into out (cut to fit):
 * 1, or 0 where the record has none. */
static int rec_meta_value(const unsigned char *p, size_t n, int k, char *out, size_t outn)
{
    const char *t = (const char *)p, *key = mw_meta_key(k);
    size_t kl = strlen(key) + 1; /* "key=" */
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(t + i, '\n', n - i);
        size_t l = nl ? (size_t)(nl - (t + i)) : n - i;
        if (l > kl && !memcmp(t + i, key, kl - 1) && t[i + kl - 1] == '=') {
            size_t c = l - kl < outn - 1 ? l - kl : outn - 1;
            memcpy(out, t + i + kl, c);
            out[c] = 0;
            return 1;
        }
        i += l + 1;
    }
    return 0;
}

/* The run_id of a META record's text ("" when it has none). */
static void rec_meta_run(const unsigned char *p, size_t n, char *id, size_t idn)
{
    if (!rec_meta_value(p, n, MW_META_RUN_ID, id, idn))
        id[0] = 0;
}

/* Reads one raw file into the summary when it belongs to the run (its first
 * META record names it). */
static void rec_read_file(const char *path, const char *run, struct rec_sum *s)
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
    int trailer = 0, first = 1;
    while (off + sizeof(mwr_rec_hdr) <= len) {
        mwr_rec_hdr r;
        memcpy(&r, b + off, sizeof r);
        if (r.size < sizeof r || (r.size & 7) || r.size > len - off)
            break; /* cut short: everything before is whole */
        const unsigned char *p = b + off + sizeof r;
        size_t pl = r.size - sizeof r;
        if (first) {
            char id[64] = "";
            if (r.type == MWR_META)
                rec_meta_run(p, pl, id, sizeof id);
            if (strcmp(id, run)) {
                s->files--; /* another run's file */
                goto out;
            }
            first = 0;
        }
        if (r.type == MWR_META) {
            char why[sizeof s->unsampled_why];
            if (rec_meta_value(p, pl, MW_META_SAMPLING_ERROR, why, sizeof why) && !s->unsampled++)
                memcpy(s->unsampled_why, why, sizeof why);
        } else if (r.type == MWR_INTERVAL && pl >= sizeof(mwr_interval)) {
            mwr_interval iv;
            memcpy(&iv, p, sizeof iv);
            if (iv.t_end_ns > iv.t_start_ns) {
                if (!s->t_first || iv.t_start_ns < s->t_first)
                    s->t_first = iv.t_start_ns;
                if (iv.t_end_ns > s->t_last)
                    s->t_last = iv.t_end_ns;
            }
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
                if (!s->lat_method[0])
                    memcpy(s->lat_method, iv.lat_method, sizeof s->lat_method - 1);
            }
            s->iv_n++;
        } else if (r.type == MWR_PERF_DATA && pl >= sizeof(mwr_perf_data)) {
            /* Count the kernel's records as `memwatch report` does: every
             * sample written (an interval's own count misses those drained
             * when a thread ends), and the kernel's lost counts. */
            size_t k = sizeof(mwr_perf_data);
            while (pl - k >= 8) {
                uint32_t type;
                uint16_t ksize;
                memcpy(&type, p + k, 4);
                memcpy(&ksize, p + k + 6, 2);
                if (ksize < 8 || ksize > pl - k)
                    break;
                uint64_t v = 0;
                if (type == PERF_RECORD_SAMPLE)
                    s->samples++;
                else if (type == PERF_RECORD_LOST && ksize >= 24)
                    memcpy(&v, p + k + 16, 8);
                else if (type == PERF_RECORD_LOST_SAMPLES && ksize >= 16)
                    memcpy(&v, p + k + 8, 8);
                s->lost += v;
                k += ksize;
            }
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

/* Returns the number of the run's raw files. */
/* ---- the size cap (--max-size) and what the run wrote ---- */

/* The page that the run's processes share (preload/writer.c: the layout
 * and the name are the library's): the cap and the bytes written so far. */
struct rec_size_page {
    uint64_t magic, cap;
    _Atomic uint64_t used, dropped;
};
#define REC_SIZE_MAGIC 0x3170616373776d00ull
static uint64_t rec_max_size;           /* --max-size in bytes; 0: none */
static struct rec_size_page *rec_cap;   /* mapped while the program runs */

/* SIZE: a number with an optional K, M, G or T (powers of 1024; a trailing B
 * or iB allowed). 0 and -1 where it is not one, or below 64 KiB. */
static int rec_parse_size(const char *v, uint64_t *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || errno || !(x > 0))
        return -1;
    double mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1024.0; end++; break;
    case 'm': case 'M': mul = 1024.0 * 1024; end++; break;
    case 'g': case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
    case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (mul > 1 && *end == 'i')
        end++;
    if (*end == 'B')
        end++;
    if (*end || x * mul < 65536.0 || x * mul > 1e18)
        return -1;
    *out = (uint64_t)(x * mul);
    return 0;
}

/* DIR/.memwatch-size: with --max-size, a new page holding the cap, mapped
 * here to read the total at the end; without, removed (an earlier run's cap
 * in the same directory does not apply to this one). */
static void rec_size_page_create(const char *dir)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/.memwatch-size", dir);
    if (!rec_max_size) {
        (void)unlink(path);
        return;
    }
    (void)unlink(path);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  rec_group_readable() ? 0640 : 0600);
    if (fd < 0 || ftruncate(fd, 4096) < 0) {
        fprintf(stderr, "memwatch record: cannot create %s (%s): no size cap for this run\n", path,
                strerror(errno));
        if (fd >= 0)
            close(fd);
        return;
    }
    void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        fprintf(stderr, "memwatch record: cannot map %s (%s): no size cap for this run\n", path,
                strerror(errno));
        return;
    }
    rec_cap = m;
    rec_cap->cap = rec_max_size;
    atomic_store(&rec_cap->used, 0);
    atomic_store(&rec_cap->dropped, 0);
    __atomic_store_n(&rec_cap->magic, REC_SIZE_MAGIC, __ATOMIC_RELEASE);
}

/* A size for people: 12.3 MB (powers of 1000, as du -h --si). */
static void rec_human(double b, char *out, size_t n)
{
    if (b >= 1e9)
        snprintf(out, n, "%.2f GB", b / 1e9);
    else if (b >= 1e6)
        snprintf(out, n, "%.1f MB", b / 1e6);
    else
        snprintf(out, n, "%.1f kB", b / 1e3);
}

/* 1 when the raw file at path belongs to run: its first record, META, names
 * it (read alone: the file's size is all rec_wrote needs). */
static int rec_file_of_run(const char *path, const char *run)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    static unsigned char b[65536];
    ssize_t n = pread(fd, b, sizeof b, 0);
    close(fd);
    mwr_file_header h;
    mwr_rec_hdr r;
    if (n < (ssize_t)sizeof h)
        return 0;
    memcpy(&h, b, sizeof h);
    if (memcmp(h.magic, MWR_MAGIC, 8) || h.header_size < sizeof h ||
        h.header_size + sizeof r > (size_t)n)
        return 0;
    memcpy(&r, b + h.header_size, sizeof r);
    if (r.type != MWR_META || r.size < sizeof r || r.size > (size_t)n - h.header_size)
        return 0;
    char id[64] = "";
    rec_meta_run(b + h.header_size + sizeof r, r.size - sizeof r, id, sizeof id);
    return !strcmp(id, run);
}

/* Calls fn for every regular file memwatch-*.mwr in dir. */
static void rec_raw_files(const char *dir, void (*fn)(const char *path, const struct stat *st, void *ctx),
                          void *ctx)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[PATH_MAX + 256];
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "memwatch-", 9) || n < 4 || strcmp(e->d_name + n - 4, ".mwr"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) || !S_ISREG(st.st_mode))
            continue;
        fn(path, &st, ctx);
    }
    closedir(d);
}

struct rec_wrote_ctx {
    const char *run;
    uint64_t bytes;
    unsigned files;
};

static void rec_wrote_file(const char *path, const struct stat *st, void *ctx)
{
    struct rec_wrote_ctx *w = ctx;
    if (!rec_file_of_run(path, w->run))
        return;
    w->files++;
    w->bytes += (uint64_t)st->st_size;
}

/* The last line: the bytes and files of this run's raw files in dir (those
 * of other runs in the same directory left out), and the samples the size
 * cap dropped. */
static void rec_wrote(const char *dir, const char *run)
{
    struct rec_wrote_ctx w = {run, 0, 0};
    rec_raw_files(dir, rec_wrote_file, &w);
    uint64_t bytes = w.bytes;
    unsigned files = w.files;
    char h[32];
    rec_human((double)bytes, h, sizeof h);
    if (rec_cap) {
        uint64_t dropped = atomic_load(&rec_cap->dropped);
        char c[32];
        rec_human((double)rec_cap->cap, c, sizeof c);
        if (dropped)
            fprintf(stderr, "memwatch: %llu samples dropped: the size cap of %s was reached\n",
                    (unsigned long long)dropped, c);
    }
    fprintf(stderr, "memwatch: wrote %s in %u file%s\n", h, files, files == 1 ? "" : "s");
}

struct rec_sum_ctx {
    const char *run;
    struct rec_sum *sum;
};

static void rec_sum_file(const char *path, const struct stat *st, void *ctx)
{
    (void)st;
    struct rec_sum_ctx *c = ctx;
    rec_read_file(path, c->run, c->sum); /* files of other runs are left out */
}

struct rec_lvl_ctx {
    const char *run;
    mw_raw_levels *lv;
};

/* The memory-load levels of one of the run's raw files (their META). */
static void rec_lvl_file(const char *path, const struct stat *st, void *ctx)
{
    (void)st;
    struct rec_lvl_ctx *c = ctx;
    if (rec_file_of_run(path, c->run))
        (void)mw_raw_levels_add(c->lv, path); /* an unreadable file adds nothing */
}

/* The machine profile the recorded processes read: MEMWATCH_PROFILE
 * (--profile), else the default path (into def); NULL where there is none. */
static const char *rec_profile_path(char *def, size_t n)
{
    const char *prof = getenv("MEMWATCH_PROFILE");
    if (prof && *prof)
        return prof;
    return mw_profile_default_path(def, n) == 0 ? def : NULL;
}

/* Where the calibration could not saturate memory: the load relative to
 * its peak (from the raw files' META lat_curve), never a bound share. */
static void rec_levels_line(const mw_raw_levels *lv, uint64_t iv_lat)
{
    double m = lv->measured_ns, known = lv->level_ns[0] + lv->level_ns[1] + lv->level_ns[2];
    if (m <= 0 || known <= 0) {
        fprintf(stderr, "  memory load     nothing is called bandwidth-bound: the machine "
                        "profile's calibration could not saturate memory here (%llu intervals "
                        "with a latency reading)\n",
                (unsigned long long)iv_lat);
        return;
    }
    fprintf(stderr, "  memory load     high %.1f %%, medium %.1f %%, low %.1f %% of the measured "
                    "time, relative to ",
            100 * lv->level_ns[2] / m, 100 * lv->level_ns[1] / m, 100 * lv->level_ns[0] / m);
    if (lv->peak_bw > 0)
        fprintf(stderr, "the %.1f GB/s this machine's calibration reached", lv->peak_bw / 1e9);
    else
        fprintf(stderr, "the highest bandwidth of the calibrated latency curve");
    fprintf(stderr, " (it could not saturate memory here, so nothing is called "
                    "bandwidth-bound)\n");
}

static unsigned rec_summary(const char *dir, const char *run, const struct rec_status *fail,
                            uint64_t t0_ns, int quiet)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    closedir(d);
    struct rec_sum s;
    memset(&s, 0, sizeof s);
    struct rec_sum_ctx c = {run, &s};
    rec_raw_files(dir, rec_sum_file, &c);
    if (quiet)
        return s.files;
    if (fail->err) {
        double at = fail->time_ns > t0_ns ? (double)(fail->time_ns - t0_ns) / 1e9 : 0;
        fprintf(stderr, "memwatch: recorded up to %.1f s; %s%s writing %s: the raw files hold "
                        "what was written before\n",
                at, strerror(fail->err), rec_err_meaning(fail->err), fail->file);
    }
    if (!s.files) {
        fprintf(stderr, "memwatch: no raw files were written to %s\n", dir);
        return 0;
    }
    fprintf(stderr, "memwatch: %u raw file%s in %s", s.files, s.files == 1 ? "" : "s", dir);
    if (s.files != s.trailers) {
        if (fail->err)
            fprintf(stderr, " (%u cut short: %s)", s.files - s.trailers,
                    fail->err == ENOSPC ? "disk full" : strerror(fail->err));
        else
            fprintf(stderr, " (%u without a trailer: killed or still running)",
                    s.files - s.trailers);
    }
    fprintf(stderr, "\n");
    double dur = s.t_last > s.t_first ? (double)(s.t_last - s.t_first) / 1e9 : 0;
    fprintf(stderr, "  duration        %.3f s, %llu intervals\n", dur, (unsigned long long)s.iv_n);
    /* a profile whose calibration never saw memory saturate cannot tell "not
     * bound" from "not detectable here": nothing is called bandwidth-bound.
     * What the raw files' META says (saturable, levels, band), else (files
     * of before those keys) the profile. */
    mw_raw_levels lv;
    mw_raw_levels_init(&lv);
    struct rec_lvl_ctx lc = {run, &lv};
    rec_raw_files(dir, rec_lvl_file, &lc);
    int blind = mw_raw_levels_saturable(&lv) == 0;
    if (mw_raw_levels_saturable(&lv) < 0 && s.iv_lat && !s.uncalibrated) {
        char def[PATH_MAX];
        blind = mw_report_saturation_seen(rec_profile_path(def, sizeof def), s.lat_method) == 0;
    }
    if (s.iv_lat && blind)
        rec_levels_line(&lv, s.iv_lat);
    else if (s.iv_lat)
        fprintf(stderr, "  bandwidth-bound %.1f %% of the measured time (%llu of %llu intervals)%s\n",
                s.ns_measured > 0 ? 100.0 * s.ns_bound / s.ns_measured : 0.0,
                (unsigned long long)s.iv_bound, (unsigned long long)s.iv_lat,
                s.uncalibrated && !lv.note[0] ? "; uncalibrated threshold: run 'memwatch calibrate'"
                : s.uncalibrated ? "; uncalibrated threshold (see the threshold note)" : "");
    if (lv.note[0])
        fprintf(stderr, "  threshold note  %s\n", lv.note);
    if (s.iv_lat && lv.have_band && lv.measured_ns > 0)
        fprintf(stderr, "  %s %.1f %% of the measured time (latency within the threshold's "
                        "uncertainty band %.1f-%.1f ns; %.1f %% of them above the threshold)\n",
                blind ? "near threshold " : "possibly bound ", 100 * lv.band_ns / lv.measured_ns,
                lv.band_lo, lv.band_hi, lv.band_ns > 0 ? 100 * lv.band_above_ns / lv.band_ns : 0.0);
    if (!s.iv_lat)
        fprintf(stderr, "  bandwidth-bound n/a: no interval carries a latency measurement\n");
    fprintf(stderr, "  samples         %llu, %llu lost, %llu records dropped, %llu allocation records dropped\n",
            (unsigned long long)s.samples, (unsigned long long)s.lost,
            (unsigned long long)s.dropped, (unsigned long long)s.alloc_dropped);
    if (s.unsampled)
        fprintf(stderr, "  sampling        none in %u process%s: %s\n", s.unsampled,
                s.unsampled == 1 ? "" : "es", s.unsampled_why);
    return s.files;
}

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

static char rec_logged[512];
static void rec_log(int level, const char *msg, void *user);

/* The values memwatch hands down about a machine, where a launcher carried
 * them here from another host (MEMWATCH_HANDED names it): they describe
 * that machine, so record and the program determine this one's. */
static void rec_forget_handed(void)
{
    if (!mw_handed_elsewhere())
        return;
    static const char *const names[] = {MW_HANDED_VARS};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unsetenv(names[i]);
}

/* Where record hands a value about this machine down (MEMWATCH_BASELINE_NS,
 * MEMWATCH_TSC): MEMWATCH_HANDED names this host, so that a process a
 * launcher starts on another one does not take it. */
static void rec_handed_here(void)
{
    char h[128];
    mw_host_name(h, sizeof h);
    setenv("MEMWATCH_HANDED", h, 1);
}

/* The profile at path, read once per run: record checks a named one
 * (rec_check_profile) and then hands it down (rec_machine_profile). 0, or
 * the loader's error with its logged reason in rec_logged. */
static int rec_profile_load(const char *path, const mw_profile **out)
{
    static mw_profile pf;
    static char loaded[PATH_MAX];
    static int rc = 1; /* 1: not read yet */
    if (rc == 1 || strcmp(loaded, path)) {
        snprintf(loaded, sizeof loaded, "%s", path);
        rec_logged[0] = 0;
        mw_set_log(rec_log, NULL, MW_LOG_WARN);
        rc = access(path, R_OK) ? -errno : mw_profile_load(path, 0, &pf);
        mw_set_log(NULL, NULL, MW_LOG_WARN);
    }
    *out = &pf;
    return rc;
}

/* The profile the processes will read, where it is this machine's (loaded
 * once; its problems are left for the processes to say); NULL otherwise.
 * This machine is the identity the processes take (MEMWATCH_MACHINE where
 * handed down). record hands it to the program only as a snapshot marked
 * with this host (rec_profile_snapshot): a launcher (srun, mpiexec) passes
 * its environment to processes on other machines, which must read theirs. */
static const mw_profile *rec_machine_profile(void)
{
    static int state; /* 0: not tried, 1: loaded, -1: none */
    static const mw_profile *pf;
    if (state)
        return state > 0 ? pf : NULL;
    state = -1;
    char def[PATH_MAX];
    const char *prof = rec_profile_path(def, sizeof def);
    if (!prof || !strcmp(prof, "none"))
        return NULL;
    /* unreadable or refused: NULL, and the processes say what is wrong
     * with it; the identity is compared below */
    int e = rec_profile_load(prof, &pf);
    char here[sizeof pf->identity];
    if (e < 0 || mw_machine_identity_taken(here, sizeof here) <= 0 || strcmp(here, pf->identity))
        return NULL;
    state = 1;
    return pf;
}

/* 1 where no recorded process will need the baseline: the threshold is the
 * user's (MEMWATCH_THRESHOLD_NS), or the machine profile the processes will
 * read (MEMWATCH_PROFILE, else the default path) loads, is this machine's
 * and places a threshold for probe_lat (preload/engine.c,
 * eng_threshold_final: the baseline only makes the uncalibrated default).
 * Saves a calibrated run the measurement's 1-2 ms of CPU and 40 ms of wall
 * time before its program starts (docs/overhead.md). */
static int rec_baseline_unneeded(void)
{
    const char *t = getenv("MEMWATCH_THRESHOLD_NS");
    if (t && strtod(t, NULL) > 0)
        return 1;
    const mw_profile *pf = rec_machine_profile();
    int in_ns = 1;
    return pf &&
           mw_profile_lat_threshold(pf, "probe_lat", getenv("MEMWATCH_MIX"), &in_ns, NULL, 0) > 0 &&
           in_ns;
}

/* The idle latency the uncalibrated default threshold is relative to,
 * measured here, before the program (and its children) load the machine. */
static void rec_baseline(void)
{
    const char *m = getenv("MEMWATCH_METHOD");
    if (getenv("MEMWATCH_BASELINE_NS") || (m && mw_env_method(m) == MW_ENV_METHOD_NONE) ||
        rec_baseline_unneeded())
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
        rec_handed_here();
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
    /* where only a 20 ms measurement would give it: the machine profile's,
     * where the kernel's TSC calibration agrees (counters/tsc.h) */
    const mw_profile *pf = rec_machine_profile();
    if (pf && pf->tsc_hz >= 1e6 && pf->tsc_hz <= 1e11)
        mw_tsc_candidate(pf->tsc_hz, "the machine profile's (memwatch calibrate), which the "
                                     "kernel's TSC calibration confirms");
    const char *how = NULL;
    double hz = mw_tsc_hz(&how);
    if (!(hz >= 1e6 && hz <= 1e11) || !how || strchr(how, '\n'))
        return;
    char b[200];
    snprintf(b, sizeof b, "%.3f %s", hz, how);
    setenv("MEMWATCH_TSC", b, 1);
    rec_handed_here();
}

/* ---- the kernel's perf hooks, on before the program ---- */

/* The held event: a dummy, user-only, on record's main thread, which lives
 * until the program has ended (not on the opening thread, which ends at
 * once); close-on-exec and not inherited, so the program never sees it. NULL
 * where no perf event can be opened here (the library says what it lacks). */
static mw_perf_group *rec_hooks;
static pthread_t rec_hooks_th;
static int rec_hooks_started;

static mw_perf_group *rec_swfaults;

static int rec_perf_err;       /* the page-fault counter's open: 0, or the error */
static char rec_perf_why[480]; /* its reason, from the thread that opened it */
static void *rec_hooks_open(void *arg)
{
    (void)arg;
    mw_perf_event ev;
    mw_perf_target t = {.kind = MW_PERF_THREAD, .tid = getpid()};
    if (mw_perf_event_generic("dummy", &ev) == 0)
        (void)mw_perf_group_open(&ev, 1, &t, MW_PERF_USER_ONLY, &rec_hooks);
    /* and a page-fault counter, the software event the library samples:
     * the kernel allocates its per-CPU lists and patches its code (a jump
     * label, with an interrupt to every CPU) for the first such event and
     * undoes it after the last; held here, a tree of processes that each
     * open and close one never pays that (docs/overhead.md, "The first perf
     * event") */
    if (mw_perf_event_generic("page-faults", &ev) == 0) {
        rec_perf_err = mw_perf_group_open(&ev, 1, &t, MW_PERF_USER_ONLY, &rec_swfaults);
        if (rec_perf_err < 0)
            snprintf(rec_perf_why, sizeof rec_perf_why, "%s", mw_perf_why());
    }
    return NULL;
}

/* The program's samplers are events of the same kind as the page-fault
 * counter record holds (a thread's own, user mode): where the kernel refused
 * that one for want of a permission (perf_event_paranoid, a capability, a
 * container's seccomp filter), it will refuse theirs. Said once, before the
 * program runs, instead of only in the summary after it. */
static void rec_perf_say(int quiet)
{
    if ((rec_perf_err == MW_ERR_PRIV || rec_perf_err == MW_ERR_PARANOID) && !quiet)
        fprintf(stderr,
                "memwatch record: the kernel refuses perf events here, so the program gets no "
                "samples (its intervals and allocations are still recorded): %s\n",
                rec_perf_why);
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

/* ---- signals sent to memwatch record ---- */

/* SIGTERM, SIGHUP, SIGINT and SIGQUIT sent to memwatch record go on to the
 * program; record stays to wait for it, writes its summary and returns its
 * status (128 + the signal when the signal ended it), so that `timeout 300
 * memwatch record -- job` or a batch system's SIGTERM stops the job and
 * leaves its files complete.
 *
 * Where record is the foreground job of a terminal, the program shares its
 * process group: the terminal's Ctrl-C, Ctrl-\ and hangup reach the program
 * directly, as they do under a shell, and are not passed on a second time;
 * a signal another process sent (kill, sigqueue: si_code <= 0) goes to the
 * program's pid. Elsewhere (a script, timeout(1), a batch job) the program
 * leads a process group of its own and every such signal goes to that whole
 * group, once: a signal sent to record's process group does not reach the
 * program directly. The same signal from the same process is passed on once
 * (timeout sends its signal to record and again to its process group).
 * A signal ignored when record starts (nohup, `&` in a script) stays
 * ignored, by record and by the program. */
static const int rec_fwd_sigs[] = {SIGTERM, SIGHUP, SIGINT, SIGQUIT};
static struct sigaction rec_fwd_old[sizeof rec_fwd_sigs / sizeof rec_fwd_sigs[0]];
static unsigned char rec_fwd_on[sizeof rec_fwd_sigs / sizeof rec_fwd_sigs[0]];
static volatile sig_atomic_t rec_child;     /* the program's pid; 0 while none runs */
static volatile sig_atomic_t rec_own_group; /* 1: the program leads a group of its own */
static volatile sig_atomic_t rec_pending;   /* a signal that came while no program ran */
static volatile sig_atomic_t rec_last_sig, rec_last_from;

static void rec_forward(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int e = errno;
    int from_process = si && si->si_code <= 0;
    pid_t from = from_process ? si->si_pid : 0;
    if ((!rec_own_group && !from_process) || (from_process && from == getpid())) {
        errno = e; /* the terminal sent it to the program's group too */
        return;
    }
    if (from_process && sig == rec_last_sig && from == rec_last_from) {
        errno = e; /* passed on already */
        return;
    }
    rec_last_sig = sig;
    rec_last_from = from;
    pid_t c = (pid_t)rec_child;
    if (c > 0)
        (void)kill(rec_own_group ? -c : c, sig);
    else
        rec_pending = sig;
    errno = e;
}

/* After a signal record passed on to the program's own process group, the
 * program's other processes may still be ending when its first one is
 * reaped (memwatch's handler writes each one's end before it dies, and an
 * orphan waits for its new parent to reap it): record waits, at most 2 s,
 * for the group to be gone, so that whoever sees record end sees no
 * process of the program left (test_safety_signals, also under load).
 * Without such a signal the program may leave processes running on
 * purpose (a daemon it started), and record does not wait. */
static void rec_group_settle(pid_t pgid)
{
    if (!rec_own_group || !rec_last_sig)
        return;
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 2000 && kill(-pgid, 0) == 0; i++)
        nanosleep(&ms, NULL);
}

/* 1 when record is the foreground process group of a terminal (fd 0-2). */
static int rec_foreground(void)
{
    for (int fd = 0; fd < 3; fd++) {
        pid_t fg = tcgetpgrp(fd);
        if (fg > 0 && fg == getpgrp())
            return 1;
    }
    return 0;
}

static void rec_signals_catch(void)
{
    rec_own_group = !rec_foreground();
    for (size_t k = 0; k < sizeof rec_fwd_sigs / sizeof rec_fwd_sigs[0]; k++) {
        if (sigaction(rec_fwd_sigs[k], NULL, &rec_fwd_old[k]) ||
            (!(rec_fwd_old[k].sa_flags & SA_SIGINFO) && rec_fwd_old[k].sa_handler == SIG_IGN))
            continue;
        struct sigaction a;
        memset(&a, 0, sizeof a);
        a.sa_sigaction = rec_forward;
        a.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&a.sa_mask);
        for (size_t j = 0; j < sizeof rec_fwd_sigs / sizeof rec_fwd_sigs[0]; j++)
            sigaddset(&a.sa_mask, rec_fwd_sigs[j]);
        if (sigaction(rec_fwd_sigs[k], &a, NULL) == 0)
            rec_fwd_on[k] = 1;
    }
}

/* After the program ended: the signals act on record as they did before. */
static void rec_signals_restore(void)
{
    rec_child = 0;
    for (size_t k = 0; k < sizeof rec_fwd_sigs / sizeof rec_fwd_sigs[0]; k++)
        if (rec_fwd_on[k])
            sigaction(rec_fwd_sigs[k], &rec_fwd_old[k], NULL);
}

/* ---- running ---- */

static void rec_log(int level, const char *msg, void *user)
{
    (void)user;
    if (level <= MW_LOG_WARN && !rec_logged[0])
        snprintf(rec_logged, sizeof rec_logged, "%s", msg);
}

static int rec_setenv_opt(const char *var, const char *val)
{
    if (setenv(var, val, 1)) {
        fprintf(stderr, "memwatch: cannot set %s: %s\n", var, strerror(errno));
        return -1;
    }
    return 0;
}

/* The signal mask a program started by the external sampler gets, and
 * the moment record learns its pid (cli/attach.c calls it back). */
static sigset_t rec_omask;
static const char *rec_ext_dir, *rec_ext_run;
static mw_nb *rec_ext_nb; /* the load sampler of the program's tree */
static pid_t rec_ext_pid;
static void rec_ext_started(pid_t pid)
{
    rec_child = pid;
    rec_ext_pid = pid;
    rec_ext_nb = mw_nb_start(rec_ext_dir, rec_ext_run, pid, rec_group_readable() ? 0640 : 0600);
    if (rec_pending)
        (void)kill(rec_own_group ? -pid : pid, (int)rec_pending);
    pthread_sigmask(SIG_SETMASK, &rec_omask, NULL);
}

/* -p PID[,PID...] and --all: the external sampler (cli/attach.c) on running
 * processes, then the summary of the files it wrote. --all without the
 * privilege of sampling every user's processes takes the caller's own. */
static int rec_attach_run(const char *dir, const char *run, int dir_made, int quiet,
                          const pid_t *pids, size_t n, int all, uint64_t duration_ns)
{
    mw_attach_opts o = {dir, run, duration_ns, quiet, rec_group_readable(), all};
    pid_t *list = NULL;
    if (all) {
        mw_privs pv;
        memset(&pv, 0, sizeof pv);
        pv.paranoid = MW_PARANOID_UNKNOWN;
        (void)mw_privs_read(NULL, &pv);
        int every = pv.is_root || pv.cap_perfmon || pv.cap_sys_admin;
        /* cli/attach.c says what is missing where it falls back to attaching
         * process by process */
        list = calloc(4096, sizeof *list);
        if (!list)
            return 1;
        n = mw_attach_list_pids(list, 4096, every);
        pids = list;
        if (!n && !mw_privs_can_cpu_wide(&pv)) {
            fprintf(stderr, "memwatch record --all: no process to attach to\n");
            free(list);
            if (dir_made)
                rmdir(dir);
            return 1;
        }
    }
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = mw_attach_pids(pids, n, &o);
    free(list);
    if (rc) {
        if (dir_made)
            rmdir(dir);
        return rc;
    }
    struct rec_status fail = {0};
    uint64_t t0_ns = (uint64_t)t0.tv_sec * 1000000000ull + (uint64_t)t0.tv_nsec;
    if (rec_summary(dir, run, &fail, t0_ns, quiet) && !quiet)
        fprintf(stderr, "memwatch: 'memwatch report %s' turns them into a report\n", dir);
    if (!quiet)
        rec_wrote(dir, run);
    return 0;
}

/* What record's command line asked for (rec_parse_opts fills it). */
struct rec_args {
    const char *out;      /* -o, or NULL */
    int quiet;            /* -q */
    pid_t att_pids[256];  /* -p PID[,PID...] */
    size_t att_n;
    int att_all;          /* --all */
    int att_external;     /* --external */
    uint64_t att_duration; /* --duration in ns; 0: none */
    int prog;             /* argv index of the program to run */
};

/* One run of a program under record: what the phases after parsing share. */
struct rec_run {
    const struct rec_args *ra;
    char **prog;
    char exe[PATH_MAX];
    char lib[PATH_MAX + 64];
    char dir[PATH_MAX];
    char run[64];
    char status_path[PATH_MAX + 64];
    char snap_path[PATH_MAX + 64]; /* the profile's snapshot (rec_profile_snapshot), "" none */
    int dir_made; /* record created the run directory: removed again if nothing is recorded */
    int profile;  /* LD_PRELOAD or the external sampler records the program */
    int ext;      /* ext: the external sampler (a static program) */
    pid_t pid;
    int status;
    struct rusage ru;
    struct timespec t0, t1;
};

/* -p PID[,PID...]: the process ids into ra; 0, or 2 on a bad list. */
static int rec_opt_pids(const char *a, const char *v, struct rec_args *ra)
{
    if (!v) {
        fprintf(stderr, "memwatch record: %s needs a value\n", a);
        return 2;
    }
    for (const char *c = v; *c;) {
        char *end;
        errno = 0;
        long p = strtol(c, &end, 10);
        if (end == c || errno || p <= 0 || p > INT_MAX || (*end && *end != ',') ||
            ra->att_n >= sizeof ra->att_pids / sizeof ra->att_pids[0]) {
            char shown[200];
            mw_cli_escape(v, shown, sizeof shown);
            fprintf(stderr, "memwatch record: %s '%s' is invalid: expected process ids "
                            "separated by commas (at most 256)\n", a, shown);
            return 2;
        }
        ra->att_pids[ra->att_n++] = (pid_t)p;
        c = *end ? end + 1 : end;
    }
    return 0;
}

/* The options that take a value and need no more than a check: -o and the
 * ones that set a MEMWATCH_* variable. *done tells whether a matched; 0, or
 * 2 on a missing or bad value. */
static int rec_opt_valued(const char *a, const char *v, struct rec_args *ra, int *done)
{
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
    *done = 0;
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        if (strcmp(a, opts[k].s) && strcmp(a, opts[k].l))
            continue;
        if (!v) {
            fprintf(stderr, "memwatch record: %s needs a value\n", a);
            return 2;
        }
        if (opts[k].var) {
            const char *expect = "";
            if (mw_cli_check_env(opts[k].var, v, &expect) < 0) {
                char shown[200];
                mw_cli_escape(v, shown, sizeof shown);
                fprintf(stderr, "memwatch record: %s '%s' is invalid: expected %s\n", a,
                        shown, expect);
                return 2;
            }
            if (rec_setenv_opt(opts[k].var, v))
                return 2;
        } else {
            ra->out = v;
        }
        *done = 1;
        break;
    }
    return 0;
}

/* One option a at argv[*i] (v: the next argument, or NULL); *i moves past a
 * value taken. -1 to go on, else the exit status (0 after --help). */
static int rec_opt_one(const char *a, const char *v, int *i, struct rec_args *ra)
{
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
        rec_usage(stdout);
        return 0;
    }
    if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
        ra->quiet = 1;
        return -1;
    }
    if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
        rec_setenv_opt("MEMWATCH_VERBOSE", "2");
        return -1;
    }
    if (!strcmp(a, "--no-follow")) {
        rec_setenv_opt("MEMWATCH_FOLLOW", "0");
        return -1;
    }
    if (!strcmp(a, "-p") || !strcmp(a, "--pid")) {
        if (rec_opt_pids(a, v, ra))
            return 2;
        (*i)++;
        return -1;
    }
    if (!strcmp(a, "--all")) {
        ra->att_all = 1;
        return -1;
    }
    if (!strcmp(a, "--external")) {
        ra->att_external = 1;
        return -1;
    }
    if (!strcmp(a, "--duration")) {
        static const char *const suf[] = {"ns", "us", "ms", "s", "m", "min", "h", NULL};
        static const uint64_t mul[] = {1, 1000, 1000000, 1000000000, 60000000000ull,
                                       60000000000ull, 3600000000000ull};
        if (!v || mw_env_scaled(v, suf, mul, 1000000000, &ra->att_duration) ||
            !ra->att_duration) {
            fprintf(stderr, "memwatch record: %s needs a time above 0, e.g. 10s or 500ms\n",
                    a);
            return 2;
        }
        (*i)++;
        return -1;
    }
    if (!strcmp(a, "--group-readable")) {
        rec_setenv_opt("MEMWATCH_GROUP_READABLE", "1");
        return -1;
    }
    if (!strcmp(a, "--max-size")) {
        if (!v) {
            fprintf(stderr, "memwatch record: %s needs a value\n", a);
            return 2;
        }
        if (rec_parse_size(v, &rec_max_size)) {
            char shown[200];
            mw_cli_escape(v, shown, sizeof shown);
            fprintf(stderr, "memwatch record: %s '%s' is invalid: expected a size of 64K or "
                            "more, e.g. 500M or 2G\n", a, shown);
            return 2;
        }
        (*i)++;
        return -1;
    }
    int done;
    if (rec_opt_valued(a, v, ra, &done))
        return 2;
    if (!done) {
        fprintf(stderr, "memwatch record: unknown option '%s' ('memwatch record --help' lists "
                        "them)\n", a);
        return 2;
    }
    (*i)++;
    return -1;
}

/* The options before the program, and the rules between them: -1 to go on
 * (ra->prog the program's index), else the exit status. */
static int rec_parse_opts(int argc, char **argv, struct rec_args *ra)
{
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-')
            break;
        int r = rec_opt_one(a, v, &i, ra);
        if (r >= 0)
            return r;
    }
    int att_mode = ra->att_n || ra->att_all;
    if (att_mode && i < argc) {
        fprintf(stderr, "memwatch record: %s and a program to run exclude each other\n",
                ra->att_all ? "--all" : "-p");
        return 2;
    }
    if (ra->att_n && ra->att_all) {
        fprintf(stderr, "memwatch record: -p and --all exclude each other\n");
        return 2;
    }
    if (ra->att_duration && !att_mode) {
        fprintf(stderr, "memwatch record: --duration goes with -p or --all (a program runs until "
                        "it ends)\n");
        return 2;
    }
    if (i >= argc && !att_mode) {
        fprintf(stderr, "memwatch record: no program given (memwatch record [options] -- program "
                        "[args...])\n");
        return 2;
    }
    ra->prog = i;
    return -1;
}

/* MEMWATCH_PROFILE (or --profile), when set and not "none" (no profile,
 * as docs/config.md allows), names a profile that loads; 0, or 2 with the
 * reason. */
static int rec_check_profile(void)
{
    const char *prof = getenv("MEMWATCH_PROFILE");
    if (prof && *prof && strcmp(prof, "none")) {
        const mw_profile *pf;
        int e = rec_profile_load(prof, &pf); /* its reason, in the one line below */
        if (e < 0) {
            fprintf(stderr, "memwatch record: machine profile %s: %s (MEMWATCH_PROFILE or "
                            "--profile)\n",
                    prof, rec_logged[0] ? rec_logged : mw_strerror(e));
            return 2;
        }
    }
    return 0;
}

/* The program to run, found in PATH into exe: 0, else the exit status
 * (127 not found, 126 not runnable). */
static int rec_check_program(const char *prog0, char *exe, size_t n)
{
    int fe = rec_find_program(prog0, exe, n);
    if (fe == -ENOENT) {
        char shown[PATH_MAX];
        mw_cli_escape(prog0, shown, sizeof shown);
        fprintf(stderr, "memwatch record: %s: command not found\n", shown);
        return 127;
    }
    if (fe < 0) {
        char shown[PATH_MAX];
        mw_cli_escape(exe, shown, sizeof shown);
        fprintf(stderr, "memwatch record: %s: %s\n", shown,
                fe == -EACCES ? "permission denied (not an executable file)" : mw_strerror(fe));
        return 126;
    }
    return 0;
}

/* The run directory into r->dir: out (-o or MEMWATCH_DIR) as given, else a
 * new memwatch-YYYYMMDD-HHMMSS[-N] in the current directory, one per run;
 * 0, or 2. */
static int rec_make_dir(const char *out, const struct tm *tm, struct rec_run *r)
{
    char made[64] = "";
    if (out && !*out) {
        fprintf(stderr, "memwatch record: -o: an empty name is not a directory\n");
        return 2;
    }
    if (!out)
        out = getenv("MEMWATCH_DIR");
    if (!out || !*out) {
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", tm);
        if (mw_cli_check_out_dir("record", "the current directory", "."))
            return 2;
        for (int k = 1; k < 1000; k++) {
            if (k == 1)
                snprintf(made, sizeof made, "memwatch-%s", stamp);
            else
                snprintf(made, sizeof made, "memwatch-%s-%d", stamp, k);
            if (mkdir(made, rec_group_readable() ? 0750 : 0700) == 0) {
                (void)chmod(made, rec_group_readable() ? 0750 : 0700); /* whatever the umask */
                break;
            }
            if (errno != EEXIST) {
                fprintf(stderr, "memwatch record: cannot create %s: %s\n", made, strerror(errno));
                return 2;
            }
            made[0] = 0;
        }
        if (!made[0]) {
            fprintf(stderr, "memwatch record: no free run directory name for %s\n", stamp);
            return 2;
        }
        out = made;
        r->dir_made = 1;
    } else {
        if (mw_cli_check_out_dir("record", "output directory", out))
            return 2;
        r->dir_made = access(out, F_OK) != 0;
        if (rec_mkdirs(out) < 0 && access(out, F_OK)) {
            fprintf(stderr, "memwatch record: cannot create %s: %s\n", out, strerror(errno));
            return 2;
        }
    }
    if (!realpath(out, r->dir)) {
        fprintf(stderr, "memwatch record: %s: %s\n", out, strerror(errno));
        return 2;
    }
    return 0;
}

/* The run's name into r->run, in every raw file (META run_id): the summary
 * and report tell this run's files from others in the same directory. */
static void rec_name_run(const struct tm *tm, struct rec_run *r)
{
    const char *given = getenv("MEMWATCH_RUN_ID");
    if (given && *given) {
        snprintf(r->run, sizeof r->run, "%s", given);
    } else if (mw_job_run_id(r->run, sizeof r->run)) {
        /* one record per rank (mpirun -np N memwatch record -- ./app): the
         * job's identity names the run, the same in every rank */
        rec_setenv_opt("MEMWATCH_RUN_ID", r->run);
    } else {
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", tm);
        snprintf(r->run, sizeof r->run, "%s-%ld", stamp, (long)getpid());
        rec_setenv_opt("MEMWATCH_RUN_ID", r->run);
    }
}

/* Whether and how the program can be profiled: the library beside memwatch,
 * set-ID programs, 32-bit ones, static ones and --external decide
 * r->profile and r->ext, each said on stderr. */
static void rec_choose_way(struct rec_run *r)
{
    char self[PATH_MAX];
    int quiet = r->ra->quiet;
    if (rec_find_lib(r->lib, sizeof r->lib, self, sizeof self) < 0) {
        fprintf(stderr,
                "memwatch record: %s is missing (it is built and installed beside the memwatch "
                "command); running the program unprofiled\n",
                r->lib);
        r->profile = 0;
    }
    struct stat st;
    if (r->profile && stat(r->exe, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID)) &&
        (st.st_uid != geteuid() || ((st.st_mode & S_ISGID) && st.st_gid != getegid()))) {
        fprintf(stderr,
                "memwatch record: %s is set-user-ID or set-group-ID: the dynamic loader ignores "
                "LD_PRELOAD for such programs (secure execution) and libmemwatch.so refuses to "
                "run in them, so memwatch cannot profile it; running it unprofiled\n",
                r->exe);
        r->profile = 0;
    } else if (r->profile && stat(r->exe, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID))) {
        fprintf(stderr,
                "memwatch record: %s is set-user-ID or set-group-ID; it runs in secure-execution "
                "mode only when that changes its identity (not for you), so it is profiled\n",
                r->exe);
    }
    enum rec_kind kind = rec_elf_kind(r->exe);
    if (r->profile && kind == REC_ELF32) {
        /* LD_PRELOAD of a 64-bit library would make a 32-bit loader print
         * "wrong ELF class" on the program's stderr */
        fprintf(stderr,
                "memwatch record: %s is a 32-bit program; libmemwatch.so is 64-bit only, so it "
                "runs unprofiled, its child processes too\n",
                r->exe);
        r->profile = 0;
    }
    if (r->profile && r->ra->att_external && kind != REC_STATIC) {
        if (!quiet)
            fprintf(stderr, "memwatch: sampling %s from outside (--external: no LD_PRELOAD; no "
                            "allocation sites, regions or child processes; docs/attach.md)\n",
                    r->exe);
        r->ext = 1;
    }
    if (r->profile && kind == REC_STATIC) {
        if (!quiet)
            fprintf(stderr,
                    "memwatch: %s is statically linked (no PT_INTERP program header): no dynamic "
                    "loader runs, so LD_PRELOAD cannot load libmemwatch.so into it; sampling it "
                    "from outside instead (external sampler: no allocation sites, regions or "
                    "child processes; docs/attach.md)\n",
                    r->exe);
        r->ext = 1;
    }
}

/* The files record made for the program's processes (the status file, the
 * profile's snapshot), removed once it ended or did not start. */
static void rec_files_drop(struct rec_run *r)
{
    if (r->status_path[0])
        unlink(r->status_path);
    if (r->snap_path[0])
        unlink(r->snap_path);
}

/* The machine profile every process that begins recording would parse
 * (some 2 million instructions each: docs/overhead.md), parsed once, and
 * the machine identity it matched (MEMWATCH_MACHINE): the profile's
 * snapshot in the run directory, named by MEMWATCH_PROFILE_SNAPSHOT, which
 * such a process reads instead where it is the profile it would load
 * (docs/profile-format.md, "The snapshot"). MEMWATCH_HANDED names this host
 * with both: a process a launcher starts on another machine forgets them
 * and determines that machine's. The snapshot only for an absolute profile
 * path: a relative one names another file in a process that changed its
 * directory. */
static void rec_profile_snapshot(struct rec_run *r)
{
    char def[PATH_MAX];
    const mw_profile *pf = rec_machine_profile();
    const char *prof = rec_profile_path(def, sizeof def);
    r->snap_path[0] = 0;
    unsetenv("MEMWATCH_PROFILE_SNAPSHOT"); /* an outer run's */
    if (!pf)
        return;
    /* the identity the profile matched, which the program's constructor
     * would compute again (/proc/cpuinfo twice, meminfo, sysfs) */
    if (!getenv("MEMWATCH_MACHINE") && rec_setenv_opt("MEMWATCH_MACHINE", pf->identity) == 0)
        rec_handed_here();
    if (!prof || prof[0] != '/')
        return;
    snprintf(r->snap_path, sizeof r->snap_path, "%s/.memwatch-profile-%ld", r->dir, (long)getpid());
    if (mw_profile_snapshot_write(r->snap_path, prof, pf) == 0 &&
        rec_setenv_opt("MEMWATCH_PROFILE_SNAPSHOT", r->snap_path) == 0)
        rec_handed_here();
    else {
        unlink(r->snap_path);
        r->snap_path[0] = 0;
    }
}

/* Before an LD_PRELOAD run: the library kept in the run directory, the
 * measurements taken before the program starts, and LD_PRELOAD set (after
 * a sanitizer runtime, which must stay first). */
static void rec_preload_prepare(struct rec_run *r)
{
    rec_keep_lib(r->dir, r->lib);
    rec_hooks_hold();
    rec_baseline();
    rec_tsc();
    rec_profile_snapshot(r);
    rec_hooks_wait();
    rec_perf_say(r->ra->quiet);
    const char *old = getenv("LD_PRELOAD");
    char pre[2 * PATH_MAX + 64];
    size_t san = rec_sanitizer_prefix(old);
    if (san) /* a sanitizer runtime must stay first: libmemwatch.so goes after it */
        snprintf(pre, sizeof pre, "%.*s:%s%s%s", (int)san, old, r->lib, old[san] ? ":" : "",
                 old[san] ? old + san + 1 : "");
    else if (old && *old)
        snprintf(pre, sizeof pre, "%s:%s", r->lib, old);
    else
        snprintf(pre, sizeof pre, "%s", r->lib);
    rec_setenv_opt("LD_PRELOAD", pre);
}

/* The program under the external sampler, until it ends: -1 to go on to the
 * summary, else the exit status. */
static int rec_run_external(struct rec_run *r, posix_spawnattr_t *sa, sigset_t *omask)
{
    posix_spawnattr_destroy(sa);
    rec_omask = *omask;
    mw_attach_opts ao = {r->dir, r->run, 0, r->ra->quiet, rec_group_readable(), 0};
    rec_ext_dir = r->dir;
    rec_ext_run = r->run;
    int ar = mw_attach_spawn(r->exe, r->prog, &ao, rec_ext_started, omask, rec_own_group,
                             &r->status, &r->ru);
    if (ar >= 0 && rec_ext_pid > 0)
        rec_group_settle(rec_ext_pid);
    mw_nb_stop(rec_ext_nb);
    rec_signals_restore();
    clock_gettime(CLOCK_MONOTONIC, &r->t1);
    if (ar < 0) {
        rec_files_drop(r);
        return 126;
    }
    r->pid = rec_ext_pid;
    if (ar > 0)
        r->profile = 0;
    return -1;
}

/* The program started and waited for, signals passed on meanwhile: -1 to go
 * on to the summary, else the exit status (the program did not run). */
static int rec_run_program(struct rec_run *r)
{
    clock_gettime(CLOCK_MONOTONIC, &r->t0);
    pid_t pid;
    /* The signals passed on are held from the last look at rec_pending
     * until the program's pid is known; the program starts with record's
     * own mask, in a process group of its own unless record is a terminal's
     * foreground job (rec_signals_catch). */
    sigset_t fwd, omask;
    sigemptyset(&fwd);
    for (size_t k = 0; k < sizeof rec_fwd_sigs / sizeof rec_fwd_sigs[0]; k++)
        sigaddset(&fwd, rec_fwd_sigs[k]);
    pthread_sigmask(SIG_BLOCK, &fwd, &omask);
    if (rec_pending) {
        int sig = (int)rec_pending;
        pthread_sigmask(SIG_SETMASK, &omask, NULL);
        fprintf(stderr, "memwatch record: stopped by SIG%s before the program started; it did "
                        "not run\n",
                sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
        rec_files_drop(r);
        return 128 + sig;
    }
    posix_spawnattr_t sa;
    posix_spawnattr_init(&sa);
    posix_spawnattr_setsigmask(&sa, &omask);
    short sflags = POSIX_SPAWN_SETSIGMASK;
    if (rec_own_group) {
        posix_spawnattr_setpgroup(&sa, 0);
        sflags |= POSIX_SPAWN_SETPGROUP;
    }
    posix_spawnattr_setflags(&sa, sflags);
    r->status = 0;
    memset(&r->ru, 0, sizeof r->ru);
    if (r->ext)
        return rec_run_external(r, &sa, &omask);
    int rc = posix_spawn(&pid, r->exe, NULL, &sa, r->prog, environ);
    posix_spawnattr_destroy(&sa);
    if (rc) {
        pthread_sigmask(SIG_SETMASK, &omask, NULL);
        fprintf(stderr, "memwatch record: cannot run %s: %s\n", r->exe, strerror(rc));
        rec_files_drop(r);
        return 126;
    }
    rec_child = pid;
    if (rec_pending) /* came on another thread while the program started */
        (void)kill(rec_own_group ? -pid : pid, (int)rec_pending);
    pthread_sigmask(SIG_SETMASK, &omask, NULL);
    /* who else loads the machine meanwhile (cli/neighbours.c) */
    mw_nb *nb = r->profile ? mw_nb_start(r->dir, r->run, pid, rec_group_readable() ? 0640 : 0600)
                           : NULL;
    while (wait4(pid, &r->status, 0, &r->ru) < 0 && errno == EINTR)
        ;
    rec_group_settle(pid);
    mw_nb_stop(nb);
    rec_signals_restore();
    clock_gettime(CLOCK_MONOTONIC, &r->t1);
    r->pid = pid;
    return -1;
}

/* After the program: how it ended, its reaped record where its library
 * could not write one, the summary; returns the program's exit status. */
static int rec_finish(struct rec_run *r)
{
    int quiet = r->ra->quiet, status = r->status;
    mw_perf_group_close(rec_hooks);
    mw_perf_group_close(rec_swfaults);
    int ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    struct rec_status fail = {0};
    if (r->status_path[0])
        rec_status_read(r->status_path, &fail);
    rec_files_drop(r);
    if (r->profile) {
        if (!quiet) {
            char shown[PATH_MAX];
            mw_cli_escape(r->prog[0], shown, sizeof shown);
            double wall = (double)(r->t1.tv_sec - r->t0.tv_sec) +
                          (double)(r->t1.tv_nsec - r->t0.tv_nsec) / 1e9;
            if (WIFEXITED(status))
                fprintf(stderr, "memwatch: %s exited with status %d after %.3f s wall time\n",
                        shown, WEXITSTATUS(status), wall);
            else
                fprintf(stderr, "memwatch: %s was killed by SIG%s (signal %d) after %.3f s wall "
                                "time\n",
                        shown, sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?",
                        WTERMSIG(status), wall);
        }
        uint64_t t0_ns = (uint64_t)r->t0.tv_sec * 1000000000ull + (uint64_t)r->t0.tv_nsec;
        uint64_t t1_ns = (uint64_t)r->t1.tv_sec * 1000000000ull + (uint64_t)r->t1.tv_nsec;
        /* Its end, where its library wrote none: SIGKILL, a raw
         * exit_group, a signal such as SIGPIPE or SIGUSR1 before it began
         * recording (its handlers of those come then: preload/signals.h). */
        int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        if (sig == SIGKILL || !rec_program_ended(r->dir, r->run, r->pid))
            rec_write_reaped(r->dir, r->run, r->pid, sig ? -sig : WEXITSTATUS(status), &r->ru,
                             t0_ns, t1_ns, r->exe, r->prog);
        if (rec_summary(r->dir, r->run, &fail, t0_ns, quiet) && !quiet)
            fprintf(stderr, "memwatch: 'memwatch report %s' turns them into a report\n", r->dir);
        if (!quiet)
            rec_wrote(r->dir, r->run);
    } else if (r->dir_made) {
        rmdir(r->dir); /* nothing recorded: no empty run directory left (if still empty) */
    }
    return ret;
}

int mw_cmd_record(int argc, char **argv)
{
    struct rec_args ra;
    struct rec_run r;
    memset(&ra, 0, sizeof ra);
    memset(&r, 0, sizeof r);
    int rc = rec_parse_opts(argc, argv, &ra);
    if (rc >= 0)
        return rc;
    int att_mode = ra.att_n || ra.att_all;
    r.ra = &ra;
    r.prog = argv + ra.prog;
    r.profile = 1;
    rec_forget_handed();

    /* Everything is checked before the program starts: a bad value exits 2
     * here instead of a warning in every process of the tree. */
    if (mw_cli_check_environment("record"))
        return 2;
    if (rec_check_profile())
        return 2;
    if (!att_mode && (rc = rec_check_program(r.prog[0], r.exe, sizeof r.exe)))
        return rc;

    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    if (rec_make_dir(ra.out, &tm, &r))
        return 2;
    rec_setenv_opt("MEMWATCH_DIR", r.dir);
    rec_name_run(&tm, &r);
    if (att_mode)
        return rec_attach_run(r.dir, r.run, r.dir_made, ra.quiet, ra.att_pids, ra.att_n,
                              ra.att_all, ra.att_duration);
    /* from here on a signal to record reaches the program, or, before it
     * runs, stops record without running it (no stray status file) */
    rec_signals_catch();
    if (rec_status_create(r.dir, r.status_path, sizeof r.status_path) == 0)
        rec_setenv_opt("MEMWATCH_STATUS", r.status_path);
    else
        r.status_path[0] = 0;

    rec_choose_way(&r);
    if (r.profile && !r.ext)
        rec_preload_prepare(&r);
    if (r.profile)
        rec_size_page_create(r.dir);
    rc = rec_run_program(&r);
    if (rc >= 0)
        return rc;
    return rec_finish(&r);
}
