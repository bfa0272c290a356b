/*
 * cli/attach.c: memwatch record's external sampler (cli/attach.h,
 * docs/attach.md).
 *
 * Owns: the targets (processes sampled from outside), their threads' perf
 * events and rings, the raw file of each target, the interval loop with the
 * latency probe, the lock that keeps a second memwatch off a target.
 * Calls: sampling's safe part (mw_attr_*, mw_ring_*), counters (the probe,
 * the machine profile and its threshold rule mw_profile_lat_threshold, the
 * TSC, privileges), symbolize's mw_sym_file_build_id, the raw framing
 * (mwr_frame.h), libc.
 * Threading: everything on the caller's thread; the only state shared with
 * a signal handler is att_stop.
 *
 * Sampling: one cpu-clock event per thread (pid = tid, cpu = -1, not
 * inherited: the kernel refuses to mmap an inherited per-task event), with
 * user registers and user stack where DWARF unwinding is on (as
 * libmemwatch.so's unwind mode), and the side-band bits mmap/mmap2, comm and
 * task, so the rings also carry PERF_RECORD_MMAP2 (modules loaded after the
 * attach), COMM and FORK/EXIT. /proc/PID/task is read again every interval
 * and new threads get their event then: a thread is unsampled for at most
 * one interval after it starts. Modules present at the attach come from
 * /proc/PID/maps as MWR_MODULE records.
 *
 * Each interval: sleep to its end, take one probe reading (only where some
 * target ran: had a sample), drain every ring into PERF_DATA records, write
 * each target's INTERVAL record with the reading and the threshold, and
 * append the target's records to its file with one write.
 *
 * record --all, where CPU-wide events are allowed (CAP_PERFMON,
 * CAP_SYS_ADMIN, or kernel.perf_event_paranoid <= 0): one event per online
 * CPU instead (pid = -1, cpu = N: the same attribute and side band), one
 * ring each, and no /proc scan. Each interval the CPU rings are drained and
 * their records sorted by the process they name (a sample's pid, an
 * MMAP2's, COMM's, FORK's or EXIT's pid); a process gets its target (file,
 * start META, modules from /proc/PID/maps) at its first record, an INTERVAL
 * record for each interval in which it had samples, and its end at its
 * thread-group leader's EXIT record (or at the detach). PERF_RECORD_LOST of
 * a CPU ring names no process: those samples are counted machine-wide and
 * said in the META of each file recorded meanwhile. memwatch's own process,
 * processes that carry libmemwatch.so, and (without CAP_PERFMON) other
 * users' processes are left out. Where CPU-wide events are refused, --all
 * says why in one line and attaches per process as -p does (att_cpu_*).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "attach.h"
#include "procstat.h"
#include "envval.h" /* counters/: MEMWATCH_* values, parsed as libmemwatch.so does */
#include "tsc.h"    /* counters/: the TSC rate for META */

#include <memwatch/attrs.h>
#include <memwatch/decode.h>
#include <memwatch/memwatch.h>
#include <memwatch/mwr.h>
#include <memwatch/mwr_frame.h>
#include <memwatch/perf.h>
#include <memwatch/pmu.h>
#include <memwatch/probe_lat.h>
#include <memwatch/profile.h>
#include <memwatch/ring.h>
#include <memwatch/symbolize.h>

#include <linux/perf_event.h>

#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define ATT_PAGES_DWARF 32u  /* ring pages with user stacks (about 60 ms at 250/s) */
#define ATT_PAGES_PLAIN 8u
#define ATT_BOUNCE (256u << 10)
#define ATT_MAX_THREADS 4096u
#define ATT_WHAT_NOT                                                                            \
    "allocation sites, allocation-based data objects, regions, page-fault samples, counter "   \
    "methods (no code runs inside the process)"

static volatile sig_atomic_t att_stop; /* the signal that asked to detach */

static uint64_t att_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- configuration: the MEMWATCH_* variables record checked already ---- */

struct att_cfg {
    uint64_t interval_ns;
    unsigned long rate;
    int rate_clamped;
    unsigned stack_bytes; /* 0: frame pointers only (MEMWATCH_UNWIND=fp) */
    unsigned stack_depth;
    double threshold_ns, factor, baseline_ns;
    int method_none;
};

static uint64_t att_env_u64(const char *var, const char *const *suf, const uint64_t *mul,
                            uint64_t dmul, uint64_t dflt)
{
    const char *v = getenv(var);
    uint64_t x;
    if (!v || !*v || mw_env_scaled(v, suf, mul, dmul, &x))
        return dflt;
    return x;
}

static void att_cfg_read(struct att_cfg *c)
{
    static const char *const tsuf[] = {"ns", "us", "ms", "s", NULL};
    static const uint64_t tmul[] = {1, 1000, 1000000, 1000000000};
    static const char *const rsuf[] = {"hz", "khz", NULL};
    static const uint64_t rmul[] = {1, 1000};
    static const char *const bsuf[] = {"k", "kb", "kib", NULL};
    static const uint64_t bmul[] = {1024, 1024, 1024};
    memset(c, 0, sizeof *c);
    c->interval_ns = att_env_u64("MEMWATCH_INTERVAL", tsuf, tmul, 1000000, 10000000ull);
    c->rate = (unsigned long)att_env_u64("MEMWATCH_RATE", rsuf, rmul, 1, 250);
    if (c->rate)
        c->rate = mw_attr_clamp_rate(c->rate, mw_attr_max_rate(), &c->rate_clamped);
    c->stack_bytes = (unsigned)att_env_u64("MEMWATCH_UNWIND_STACK", bsuf, bmul, 1,
                                           MW_UNWIND_STACK_DEFAULT);
    const char *u = getenv("MEMWATCH_UNWIND");
    if (u && !strcmp(u, "fp"))
        c->stack_bytes = 0;
    const char *d = getenv("MEMWATCH_STACK_DEPTH");
    c->stack_depth = d && *d ? (unsigned)strtoul(d, NULL, 10) : 64;
    const char *t = getenv("MEMWATCH_THRESHOLD_NS");
    c->threshold_ns = t && *t ? strtod(t, NULL) : 0;
    const char *f = getenv("MEMWATCH_THRESHOLD_FACTOR");
    c->factor = f && *f ? strtod(f, NULL) : 1.35;
    const char *b = getenv("MEMWATCH_BASELINE_NS");
    c->baseline_ns = b && *b ? strtod(b, NULL) : 0;
    const char *m = getenv("MEMWATCH_METHOD");
    c->method_none = m && !strcmp(m, "none");
}

/* ---- a growing buffer of records, one per target, written per interval ---- */

struct att_buf {
    unsigned char *p;
    size_t len, cap;
    int fail; /* sticky: out of memory */
};

static void *att_buf_room(struct att_buf *b, size_t n)
{
    if (b->fail)
        return NULL;
    if (b->len + n > b->cap) {
        size_t c = b->cap ? b->cap : 65536;
        while (c < b->len + n)
            c *= 2;
        unsigned char *q = realloc(b->p, c);
        if (!q) {
            b->fail = 1;
            return NULL;
        }
        b->p = q;
        b->cap = c;
    }
    void *r = b->p + b->len;
    b->len += n;
    return r;
}

/* The array arr of *cap elements of size bytes, grown to twice as many
 * (first where it has none): the new array, with *cap updated, or NULL where
 * memory ran out (arr and *cap as they were). */
static void *att_grow(void *arr, size_t *cap, size_t size, size_t first)
{
    size_t c = *cap ? 2 * *cap : first;
    void *q = realloc(arr, c * size);
    if (q)
        *cap = c;
    return q;
}

/* ---- targets ---- */

struct att_thr {
    pid_t tid;
    mw_ring ring;
    int fd;
    int gone; /* no longer in /proc/PID/task: drained once more, then closed */
};

struct att_tgt {
    pid_t pid;
    unsigned long long starttime; /* /proc/PID/stat field 22: tells pid reuse apart */
    int fd;                       /* the raw file */
    char path[PATH_MAX];
    int lock_fd;
    char lock_path[PATH_MAX + 64];
    struct att_buf out;
    uint64_t records, bytes, lost, throttled, dropped;
    struct att_thr *thr;
    size_t nthr, cap;
    int ended, io_fail, child;
    uint64_t iv_samples, iv_lost;
    size_t live; /* threads sampled at the last scan */
    int mods_done; /* a spawned program: its modules read once (after its exec) */
    unsigned mods_tick; /* intervals since the modules were last read */
    uint64_t *mod_seen; /* start addresses of the modules written (spawned programs) */
    size_t nmod_seen;
    uint64_t *anon_seen; /* start addresses of the anonymous mappings written */
    size_t nanon_seen;
    dev_t exe_dev;
    ino_t exe_ino;
    uint64_t cpu0_ticks[2], cpu_ticks[2], flt0[2], flt[2]; /* utime stime, minflt majflt */
    unsigned long long vsz;
    char exe[PATH_MAX];
    /* --all per CPU (att_cpu_*): the target of one process seen in the CPU rings */
    int percpu;
    struct att_buf stage; /* its records of the ring chunk being sorted */
    int staged;           /* listed in R->touched for this chunk */
    pid_t *iv_tids;       /* the threads sampled in the interval */
    size_t n_iv_tids, cap_iv_tids;
    uint64_t nx_samples;  /* drained now but timed after the interval's end: the next's */
    uint64_t last_time;   /* the time of its latest sample */
    uint64_t lost0;       /* the machine-wide lost samples when its file began */
    unsigned idle;        /* intervals since its last record (its file is closed after ATT_CPU_IDLE) */
    unsigned maps_tick;   /* intervals with samples since /proc/PID/maps was last read */
    unsigned exit_wait;   /* intervals since its leader's EXIT record (0: none seen) */
    int pending;          /* its file is written at the interval's end (att_cpu_begin) */
    uint64_t t_begin;     /* the start of the interval of its first record */
    int had_samples;
    int exec_end;         /* its process exec'ed: it ends (end=exec), the new image has a target */
    int want_exe;         /* an exec came: the next executable file mapped is its exe */
    size_t prev1;         /* after an exec in this interval: 1 + the old image's target */
    uint64_t exec_time;   /* ... and when the exec was: samples before it are the old image's */
};

struct att_run {
    struct att_cfg cfg;
    const mw_attach_opts *o;
    struct perf_event_attr attr;
    struct att_tgt *t;
    size_t n, cap;
    /* processes a target forked since the last interval (PERF_RECORD_FORK in
     * its rings): attached to after the interval (att_follow) */
    struct att_fork {
        pid_t pid, parent;
    } *forks;
    size_t nforks, capforks;
    const char *thr_meta; /* the threshold META every target gets (att_probe_setup) */
    unsigned char *bounce;
    mw_probe_lat *probe;
    double threshold;
    int calibrated;
    int unsaturable; /* the calibrated profile says memory cannot saturate: nothing is flagged */
    char host[65];
    char identity[256];
    uint64_t t_start;
    /* --all per CPU (att_cpu_*) */
    struct att_cpu {
        int cpu, fd;
        mw_ring ring;
    } *cpus;
    size_t ncpu;
    unsigned ring_pages;   /* data pages of each CPU's ring */
    mw_sample_fmt fmt;     /* how the records of R->attr decode */
    int any_user;          /* other users' processes too (CAP_PERFMON, CAP_SYS_ADMIN) */
    int32_t *pidmap;       /* by pid: 0 not seen, -1 left out, k + 1 the target R->t[k] */
    size_t npidmap;
    struct att_skip {
        pid_t pid;
        unsigned long long start;
    } *skip;               /* the pids left out, looked at again every ATT_CPU_CHECK intervals */
    size_t nskip, capskip;
    size_t *freeslot;      /* R->t entries of ended targets, for new ones */
    size_t nfree, capfree;
    size_t *touched;       /* targets with records staged from the ring chunk */
    size_t ntouched, captouched;
    uint64_t cpu_lost;     /* samples the kernel dropped from full CPU rings (no process known) */
    uint64_t cpu_throttled;
    uint64_t cpu_foreign;  /* records of pid 0: tasks outside memwatch's pid namespace */
    size_t files, files_ended, live;
    char *sampling_meta;   /* the META `sampling` line each per-CPU target gets */
};

/* Append one record to the target's buffer. */
static void att_emit(struct att_tgt *t, uint32_t type, const void *a, size_t alen, const void *b,
                     size_t blen)
{
    void *p = att_buf_room(&t->out, mwr_rec_size(alen + blen));
    if (!p) {
        t->dropped++;
        return;
    }
    mwr_frame(p, type, a, alen, b, blen);
    t->records++;
    t->bytes += mwr_rec_size(alen + blen);
}

static void att_meta(struct att_tgt *t, const char *text)
{
    att_emit(t, MWR_META, text, strlen(text), NULL, 0);
}

/* Write what the buffer holds (sticky error: a failed write stops the file). */
static void att_flush(struct att_tgt *t)
{
    if (t->io_fail || !t->out.len || t->fd < 0) {
        t->out.len = 0;
        return;
    }
    size_t off = 0;
    while (off < t->out.len) {
        ssize_t w = write(t->fd, t->out.p + off, t->out.len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            fprintf(stderr, "memwatch record: %s: %s; nothing more is written to it\n", t->path,
                    w < 0 ? strerror(errno) : "short write");
            t->io_fail = 1;
            break;
        }
        off += (size_t)w;
    }
    t->out.len = 0;
}

/* /proc/PID/stat: state, start time, CPU ticks and faults. 0, or -1 when
 * the process is gone; *state gets its state letter. */
static int att_stat(pid_t pid, char *state, unsigned long long *start, uint64_t ticks[2],
                    uint64_t flt[2])
{
    char path[64];
    mw_procstat ps;
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    if (mw_procstat_read(AT_FDCWD, path, &ps))
        return -1;
    if (state)
        *state = ps.state;
    if (start)
        *start = ps.start;
    if (ticks) {
        ticks[0] = ps.utime;
        ticks[1] = ps.stime;
    }
    if (flt) {
        flt[0] = ps.minflt;
        flt[1] = ps.majflt;
    }
    return 0;
}

static uid_t att_uid_of(pid_t pid)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%ld", (long)pid);
    return stat(path, &st) ? (uid_t)-1 : st.st_uid;
}

/* A file of /proc/PID (cmdline, comm) as one line: NULs and newlines as
 * spaces, trailing blanks cut. */
static void att_proc_line(pid_t pid, const char *what, char *out, size_t n)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%ld/%s", (long)pid, what);
    out[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t r = read(fd, out, n - 1);
    close(fd);
    if (r <= 0)
        return;
    out[r] = 0;
    for (ssize_t i = 0; i < r; i++)
        if (out[i] == 0 || out[i] == '\n')
            out[i] = ' ';
    while (r > 0 && out[r - 1] == ' ')
        out[--r] = 0;
}

/* ---- the lock: one memwatch per target ---- */

/* $XDG_RUNTIME_DIR/memwatch-attach (or /tmp/memwatch-attach-UID), then
 * PID-STARTTIME.lock held with flock while a memwatch samples that process.
 * A lock whose holder ended is free again (the kernel drops flock locks with
 * the descriptor), and the start time keeps a new process of a reused pid
 * apart. 0, or -1 with the holder's pid in *holder (0: unknown) when another
 * memwatch holds it, or -2 when no lock could be made (said; attaching goes
 * on without). */
static int att_lock(struct att_tgt *t, pid_t *holder)
{
    char dir[PATH_MAX];
    const char *x = getenv("XDG_RUNTIME_DIR");
    if (x && *x && x[0] == '/')
        snprintf(dir, sizeof dir, "%s/memwatch-attach", x);
    else
        snprintf(dir, sizeof dir, "/tmp/memwatch-attach-%ld", (long)getuid());
    struct stat st;
    if (mkdir(dir, 0700) && errno != EEXIST)
        return -2;
    if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid())
        return -2; /* not ours: someone else's directory under /tmp */
    snprintf(t->lock_path, sizeof t->lock_path, "%s/%ld-%llu.lock", dir, (long)t->pid,
             t->starttime);
    for (int tries = 0; tries < 8; tries++) {
        int fd = open(t->lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
            return -2;
        if (flock(fd, LOCK_EX | LOCK_NB)) {
            char b[32] = "";
            ssize_t r = pread(fd, b, sizeof b - 1, 0);
            *holder = r > 0 ? (pid_t)strtol(b, NULL, 10) : 0;
            close(fd);
            return -1;
        }
        /* the file may have been unlinked by its last holder between our
         * open and our lock: then lock the new one */
        struct stat a, b2;
        if (fstat(fd, &a) || stat(t->lock_path, &b2) || a.st_ino != b2.st_ino) {
            close(fd);
            continue;
        }
        char b[32];
        int l = snprintf(b, sizeof b, "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) || pwrite(fd, b, (size_t)l, 0) != l) {
            /* the lock holds without the holder's pid */
        }
        t->lock_fd = fd;
        return 0;
    }
    return -2;
}

static void att_unlock(struct att_tgt *t)
{
    if (t->lock_fd >= 0) {
        unlink(t->lock_path);
        close(t->lock_fd);
        t->lock_fd = -1;
    }
}

/* ---- perf events ---- */

static int att_perf_open(struct perf_event_attr *a, pid_t tid)
{
    int fd = (int)syscall(SYS_perf_event_open, a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* Why perf_event_open(pid) failed, in words: what it means and what to set. */
static void att_explain(int err, pid_t pid, char *buf, size_t n)
{
    mw_privs pv;
    memset(&pv, 0, sizeof pv);
    pv.paranoid = MW_PARANOID_UNKNOWN;
    (void)mw_privs_read(NULL, &pv);
    uid_t owner = att_uid_of(pid);
    switch (err) {
    case EACCES:
    case EPERM:
        if (owner != (uid_t)-1 && owner != getuid() && !pv.is_root)
            snprintf(buf, n,
                     "perf_event_open: %s: pid %ld belongs to uid %ld, you are uid %ld; sampling "
                     "another user's process needs CAP_PERFMON (e.g. setcap cap_perfmon+ep on "
                     "the memwatch executable) or CAP_SYS_PTRACE, or root",
                     strerror(err), (long)pid, (long)owner, (long)getuid());
        else if (pv.paranoid > 2)
            snprintf(buf, n,
                     "perf_event_open: %s: kernel.perf_event_paranoid is %d, which forbids every "
                     "perf event to unprivileged users; set it to 2 or lower (sysctl -w "
                     "kernel.perf_event_paranoid=2) or give memwatch CAP_PERFMON",
                     strerror(err), pv.paranoid);
        else
            snprintf(buf, n,
                     "perf_event_open: %s: the kernel refuses to let you sample pid %ld: it is "
                     "not dumpable (set-user-ID, or prctl(PR_SET_DUMPABLE, 0)) or a security "
                     "module forbids it (perf_event_paranoid %d); CAP_PERFMON allows it",
                     strerror(err), (long)pid, pv.paranoid);
        break;
    case ENOENT:
    case EOPNOTSUPP:
        snprintf(buf, n,
                 "perf_event_open: %s: this kernel has no cpu-clock software event or refuses "
                 "its sample bits (PERF_SAMPLE_REGS_USER/STACK_USER need a kernel built with "
                 "perf register support; MEMWATCH_UNWIND=fp samples without them)",
                 strerror(err));
        break;
    case EMFILE:
    case ENFILE:
        snprintf(buf, n,
                 "perf_event_open: %s: one descriptor per thread is needed; raise the limit "
                 "(ulimit -n)",
                 strerror(err));
        break;
    case ENOSYS:
        snprintf(buf, n, "perf_event_open: %s: the kernel was built without perf events",
                 strerror(err));
        break;
    case EINVAL:
        snprintf(buf, n,
                 "perf_event_open: %s: the kernel refuses an attribute (sample rate above "
                 "kernel.perf_event_max_sample_rate, or use_clockid unsupported)",
                 strerror(err));
        break;
    default:
        snprintf(buf, n, "perf_event_open: %s", strerror(err));
    }
}

/* Open thread tid's sampler and map its ring. 0 or -errno. */
static int att_thr_open(struct att_run *R, struct att_thr *th, pid_t tid, int on_exec)
{
    struct perf_event_attr a = R->attr;
    if (on_exec) {
        a.disabled = 1;
        a.enable_on_exec = 1;
    }
    memset(th, 0, sizeof *th);
    th->tid = tid;
    th->fd = -1;
    int fd = att_perf_open(&a, tid);
    if (fd < 0)
        return fd;
    unsigned want[] = {R->cfg.stack_bytes ? ATT_PAGES_DWARF : ATT_PAGES_PLAIN, ATT_PAGES_PLAIN, 2,
                       1};
    int err = -ENOMEM;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        err = mw_ring_map(&th->ring, fd, want[i]);
        if (err != -EPERM && err != -ENOMEM)
            break;
    }
    if (err) {
        close(fd);
        return err;
    }
    th->fd = fd;
    return 0;
}

static void att_thr_close(struct att_thr *th)
{
    mw_ring_unmap(&th->ring);
    if (th->fd >= 0)
        close(th->fd);
    th->fd = -1;
}

static struct att_thr *att_thr_find(struct att_tgt *t, pid_t tid)
{
    for (size_t i = 0; i < t->nthr; i++)
        if (t->thr[i].tid == tid)
            return &t->thr[i];
    return NULL;
}

static void att_thread_rec(struct att_tgt *t, pid_t tid, uint32_t ev, uint64_t now)
{
    mwr_thread r;
    memset(&r, 0, sizeof r);
    r.time_ns = now;
    r.tid = (uint32_t)tid;
    r.event = ev;
    char path[64], name[32];
    snprintf(path, sizeof path, "task/%ld/comm", (long)tid);
    att_proc_line(t->pid, path, name, sizeof name);
    snprintf(r.name, sizeof r.name, "%.15s", name);
    att_emit(t, MWR_THREAD, &r, sizeof r, NULL, 0);
}

/* Drain one thread's ring into PERF_DATA records. */
/* The new processes (FORK records whose pid is not the parent's: a thread's
 * has both the same) that target t forked, among n bytes of kernel records
 * at p: kept in R->forks for att_follow. */
static void att_note_forks(struct att_run *R, const struct att_tgt *t, const unsigned char *p,
                           size_t n)
{
    size_t off = 0;
    while (off + sizeof(struct perf_event_header) <= n) {
        struct perf_event_header h;
        memcpy(&h, p + off, sizeof h);
        if (h.size < sizeof h || off + h.size > n)
            break;
        uint32_t f[4]; /* pid, ppid, tid, ptid */
        if (h.type == PERF_RECORD_FORK && h.size >= sizeof h + sizeof f) {
            memcpy(f, p + off + sizeof h, sizeof f);
            if (f[0] != f[1] && (pid_t)f[1] == t->pid) {
                if (R->nforks == R->capforks) {
                    struct att_fork *q = att_grow(R->forks, &R->capforks, sizeof *q, 8);
                    if (!q)
                        return;
                    R->forks = q;
                }
                R->forks[R->nforks++] = (struct att_fork){(pid_t)f[0], t->pid};
            }
        }
        off += h.size;
    }
}

static void att_drain(struct att_run *R, struct att_tgt *t, struct att_thr *th, uint64_t now)
{
    for (;;) {
        mw_ring_stats st = {0};
        size_t got = mw_ring_read(&th->ring, R->bounce, ATT_BOUNCE, &st);
        t->iv_samples += st.samples;
        t->iv_lost += st.lost;
        t->lost += st.lost;
        t->throttled += st.throttled;
        if (!got)
            break;
        att_note_forks(R, t, R->bounce, got);
        mwr_perf_data pd = {1, (uint32_t)th->tid, now};
        att_emit(t, MWR_PERF_DATA, &pd, sizeof pd, R->bounce, got);
    }
}

/* Read /proc/PID/task: open the sampler of every thread not seen before,
 * mark the ones gone. Returns the live threads; *first_err gets the first
 * open failure (-errno) other than a thread that ended meanwhile. */
static size_t att_scan(struct att_run *R, struct att_tgt *t, uint64_t now, int *first_err)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/task", (long)t->pid);
    DIR *d = opendir(path);
    for (size_t i = 0; i < t->nthr; i++)
        t->thr[i].gone |= 2; /* cleared below for every thread still listed */
    size_t live = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        pid_t tid = (pid_t)strtol(e->d_name, NULL, 10);
        struct att_thr *th = att_thr_find(t, tid);
        if (th) {
            th->gone &= ~2;
            live += !th->gone;
            continue;
        }
        if (t->nthr >= ATT_MAX_THREADS)
            continue;
        if (t->nthr == t->cap) {
            struct att_thr *q = att_grow(t->thr, &t->cap, sizeof *q, 16);
            if (!q)
                break;
            t->thr = q;
        }
        struct att_thr nt;
        int rc = att_thr_open(R, &nt, tid, 0);
        if (rc < 0) {
            if (rc != -ESRCH && first_err && !*first_err)
                *first_err = rc;
            continue;
        }
        t->thr[t->nthr++] = nt;
        att_thread_rec(t, tid, MWR_THREAD_START, now);
        live++;
    }
    if (d)
        closedir(d);
    for (size_t i = 0; i < t->nthr; i++)
        if (t->thr[i].gone & 2) {
            t->thr[i].gone = 1;
            if (t->thr[i].fd >= 0) {
                att_drain(R, t, &t->thr[i], now);
                att_thread_rec(t, t->thr[i].tid, MWR_THREAD_EXIT, now);
                att_thr_close(&t->thr[i]);
            }
        }
    return live;
}

/* ---- modules from /proc/PID/maps ---- */

/* The lowest PT_LOAD p_vaddr (page-aligned) of an ELF file: the load bias is
 * where its first mapping starts minus this. -1 when it is no ELF file. */
static long long att_elf_first_vaddr(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    Elf64_Ehdr eh;
    long long lo = -1;
    if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr) &&
        eh.e_phnum < 256) {
        for (unsigned i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph)
                break;
            if (ph.p_type == PT_LOAD && (lo < 0 || (long long)ph.p_vaddr < lo))
                lo = (long long)(ph.p_vaddr & ~(Elf64_Addr)4095);
        }
    }
    close(fd);
    return lo;
}

/* What att_modules reads from an ELF file (its first PT_LOAD address and
 * its build-id), kept for the next process that maps the same file: under
 * --all per CPU every process that runs reads libc and the loader. Keyed by
 * the file's device, inode, size and modification time. */
static struct att_elf_memo {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtim;
    long long v0;
    uint8_t bid[20];
    int bid_len;
} att_elf_memo[256];
static size_t att_elf_memo_n, att_elf_memo_next;

static void att_elf_info(const char *file, long long *v0, uint8_t *bid, size_t cap, int *bid_len)
{
    struct stat st;
    int have = stat(file, &st) == 0;
    for (size_t i = 0; have && i < att_elf_memo_n; i++) {
        struct att_elf_memo *m = &att_elf_memo[i];
        if (m->dev == st.st_dev && m->ino == st.st_ino && m->size == st.st_size &&
            m->mtim.tv_sec == st.st_mtim.tv_sec && m->mtim.tv_nsec == st.st_mtim.tv_nsec) {
            *v0 = m->v0;
            *bid_len = m->bid_len < (int)cap ? m->bid_len : (int)cap;
            if (*bid_len > 0)
                memcpy(bid, m->bid, (size_t)*bid_len);
            return;
        }
    }
    *v0 = att_elf_first_vaddr(file);
    *bid_len = *v0 < 0 ? 0 : mw_sym_file_build_id(file, bid, cap);
    if (!have)
        return;
    struct att_elf_memo *m = &att_elf_memo[att_elf_memo_next];
    att_elf_memo_next = (att_elf_memo_next + 1) % (sizeof att_elf_memo / sizeof att_elf_memo[0]);
    if (att_elf_memo_n < sizeof att_elf_memo / sizeof att_elf_memo[0])
        att_elf_memo_n++;
    m->dev = st.st_dev;
    m->ino = st.st_ino;
    m->size = st.st_size;
    m->mtim = st.st_mtim;
    m->v0 = *v0;
    m->bid_len = *bid_len > (int)sizeof m->bid ? (int)sizeof m->bid : *bid_len;
    if (m->bid_len > 0)
        memcpy(m->bid, bid, (size_t)m->bid_len);
}

/* A MODULE record (MWR_MODULE_DATA_ANON) for an anonymous mapping, once
 * per start address */
static void att_anon(struct att_tgt *t, uint64_t now, uint64_t s, uint64_t e, const char *name)
{
    for (size_t i = 0; i < t->nanon_seen; i++)
        if (t->anon_seen[i] == s)
            return;
    uint64_t *q = realloc(t->anon_seen, (t->nanon_seen + 1) * sizeof *q);
    if (!q)
        return;
    t->anon_seen = q;
    t->anon_seen[t->nanon_seen++] = s;
    mwr_module r;
    memset(&r, 0, sizeof r);
    r.time_ns = now;
    r.base = s;
    r.start = s;
    r.end = e;
    r.flags = MWR_MODULE_DATA_ANON;
    r.path_len = (uint32_t)strlen(name);
    att_emit(t, MWR_MODULE, &r, sizeof r, name, r.path_len);
}

/* One MODULE record per file of /proc/PID/maps that has an executable
 * mapping: its lowest and highest address, the bias from the ELF headers,
 * its build-id. The file is opened by its path, else through
 * /proc/PID/root (another mount namespace). */
static void att_modules(struct att_tgt *t, uint64_t now)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/maps", (long)t->pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    struct mod {
        char path[PATH_MAX];
        uint64_t lo, hi, lo_off0;
        int exec;
    } *m = NULL;
    size_t nm = 0, cm = 0;
    char line[PATH_MAX + 128];
    while (fgets(line, sizeof line, f)) {
        unsigned long long s, e, off;
        char perm[8];
        int pos = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perm, &off, &pos) < 4 || !pos)
            continue;
        char *p = line + pos;
        p[strcspn(p, "\n")] = 0;
        /* writable anonymous memory of 1 MiB or more (the heap, large
         * allocations): the data objects this mode can name
         * (docs/data-addresses.md) */
        if ((!p[0] || !strcmp(p, "[heap]")) && perm[1] == 'w' && e - s >= (1u << 20))
            att_anon(t, now, s, e, p);
        if (p[0] != '/')
            continue;
        size_t k;
        for (k = 0; k < nm; k++)
            if (!strcmp(m[k].path, p))
                break;
        if (k == nm) {
            if (nm == cm) {
                struct mod *q = att_grow(m, &cm, sizeof *q, 32);
                if (!q)
                    break;
                m = q;
            }
            snprintf(m[nm].path, sizeof m[nm].path, "%s", p);
            m[nm].lo = s;
            m[nm].hi = e;
            m[nm].lo_off0 = off == 0 ? s : 0;
            m[nm].exec = 0;
            nm++;
        }
        if (s < m[k].lo)
            m[k].lo = s;
        if (e > m[k].hi)
            m[k].hi = e;
        if (off == 0 && (!m[k].lo_off0 || s < m[k].lo_off0))
            m[k].lo_off0 = s;
        if (perm[2] == 'x')
            m[k].exec = 1;
    }
    fclose(f);
    for (size_t k = 0; k < nm; k++) {
        if (!m[k].exec)
            continue;
        char file[PATH_MAX + 64];
        snprintf(file, sizeof file, "%s", m[k].path);
        if (access(file, R_OK))
            snprintf(file, sizeof file, "/proc/%ld/root%s", (long)t->pid, m[k].path);
        int seen = 0;
        for (size_t i = 0; i < t->nmod_seen; i++)
            seen |= t->mod_seen[i] == m[k].lo;
        if (seen)
            continue;
        long long v0;
        uint8_t bid[sizeof ((mwr_module *)0)->build_id];
        int bl;
        att_elf_info(file, &v0, bid, sizeof bid, &bl);
        if (v0 < 0)
            continue;
        if (t->child || t->percpu) { /* read again later: each module once */
            uint64_t *q = realloc(t->mod_seen, (t->nmod_seen + 1) * sizeof *q);
            if (q) {
                t->mod_seen = q;
                t->mod_seen[t->nmod_seen++] = m[k].lo;
            }
        }
        mwr_module r;
        memset(&r, 0, sizeof r);
        r.time_ns = now;
        r.base = (m[k].lo_off0 ? m[k].lo_off0 : m[k].lo) - (uint64_t)v0;
        r.start = m[k].lo;
        r.end = m[k].hi;
        if (bl > 0)
            memcpy(r.build_id, bid, (size_t)bl);
        r.build_id_size = bl > 0 ? (uint8_t)bl : 0;
        r.path_len = (uint32_t)strlen(m[k].path);
        att_emit(t, MWR_MODULE, &r, sizeof r, m[k].path, r.path_len);
    }
    free(m);
}

/* Has the spawned program exec'ed? /proc/PID/exe is its executable, or at
 * least no longer memwatch's own (a script's interpreter). */
static int att_execed(struct att_tgt *t)
{
    char lp[64];
    struct stat st, self;
    snprintf(lp, sizeof lp, "/proc/%ld/exe", (long)t->pid);
    if (stat(lp, &st))
        return 0;
    if (st.st_dev == t->exe_dev && st.st_ino == t->exe_ino)
        return 1;
    return stat("/proc/self/exe", &self) == 0 &&
           (st.st_dev != self.st_dev || st.st_ino != self.st_ino);
}

/* ---- the file of one target ---- */

static int att_file_open(struct att_run *R, struct att_tgt *t)
{
    mode_t fm = R->o->group_readable ? 0640 : 0600;
    for (int n = 0; n < 100; n++) {
        if (n)
            snprintf(t->path, sizeof t->path, "%s/memwatch-%s-0-%ld.%d.mwr", R->o->dir, R->host,
                     (long)t->pid, n);
        else
            snprintf(t->path, sizeof t->path, "%s/memwatch-%s-0-%ld.mwr", R->o->dir, R->host,
                     (long)t->pid);
        t->fd = open(t->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_APPEND, fm);
        if (t->fd >= 0) {
            (void)fchmod(t->fd, fm);
            mwr_file_header h;
            mwr_file_header_init(&h);
            void *p = att_buf_room(&t->out, sizeof h);
            if (p)
                memcpy(p, &h, sizeof h);
            t->bytes += sizeof h;
            return 0;
        }
        if (errno != EEXIST)
            break;
    }
    fprintf(stderr, "memwatch record: cannot create %s: %s\n", t->path, strerror(errno));
    return -1;
}

/* The first META record: what libmemwatch.so's says, with mode=attach and
 * what this mode cannot record. */
static void att_meta_start(struct att_run *R, struct att_tgt *t, const char *how, uint64_t now)
{
    char cmd[4096], exe[PATH_MAX] = "";
    att_proc_line(t->pid, "cmdline", cmd, sizeof cmd);
    char lp[64];
    snprintf(lp, sizeof lp, "/proc/%ld/exe", (long)t->pid);
    ssize_t l = readlink(lp, exe, sizeof exe - 1);
    exe[l > 0 ? l : 0] = 0;
    if (t->exe[0] && !exe[0])
        snprintf(exe, sizeof exe, "%s", t->exe);
    for (char *p = exe; *p; p++)
        if (*p == '\n')
            *p = ' ';
    char ppid[32] = "0";
    {
        char path[64];
        mw_procstat ps;
        snprintf(path, sizeof path, "/proc/%ld/stat", (long)t->pid);
        if (mw_procstat_read(AT_FDCWD, path, &ps) == 0)
            snprintf(ppid, sizeof ppid, "%ld", (long)ps.ppid);
    }
    /* who it runs as and where (the report's --by user and --by cgroup) */
    char user[64] = "", cgroup[512] = "", cgt[4096];
    uid_t uid = att_uid_of(t->pid);
    if (uid != (uid_t)-1)
        mw_procstat_user((unsigned)uid, user, sizeof user);
    {
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld/cgroup", (long)t->pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t r = fd >= 0 ? read(fd, cgt, sizeof cgt - 1) : -1;
        if (fd >= 0)
            close(fd);
        cgt[r > 0 ? r : 0] = 0;
        if (mw_procstat_cgroup(cgt, cgroup, sizeof cgroup))
            cgroup[0] = 0;
    }
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    static char m[12288];
    char unwind[200];
    if (R->cfg.stack_bytes)
        snprintf(unwind, sizeof unwind,
                 "dwarf (attach): registers and %u bytes of user stack per sample, unwound at "
                 "report time",
                 R->cfg.stack_bytes);
    else
        snprintf(unwind, sizeof unwind, "fp (MEMWATCH_UNWIND=fp): the kernel's frame-pointer "
                                        "call chains");
    snprintf(m, sizeof m,
             "format=%u.%u\nmemwatch_version=%s\nwriter=memwatch record (external sampler)\n"
             "mode=attach\nattach=%s\nattach_missing=%s\nmachine=%s\nclock=CLOCK_MONOTONIC\n"
             "start_monotonic_ns=%llu\nstart_realtime_ns=%llu\npid=%ld\nppid=%s\nrank=0\nhost=%s\n"
             "exe=%s\ncmdline=%s\norigin=attach\ninterval_ns=%llu\nsample_rate=%lu\n"
             "sample_rate_clamped=%d\nfault_period=0\nstack_depth=%u\nunwind=%s\n"
             "alloc_threshold=off\nalloc_frames=0\nfollow=%d\nmethod=%s\nrun_id=%s\n",
             MWR_VERSION_MAJOR, MWR_VERSION_MINOR, MW_VERSION, how, ATT_WHAT_NOT, R->identity,
             (unsigned long long)now,
             (unsigned long long)rt.tv_sec * 1000000000ull + (unsigned long long)rt.tv_nsec,
             (long)t->pid, ppid, R->host, exe, cmd, (unsigned long long)R->cfg.interval_ns,
             R->cfg.rate, R->cfg.rate_clamped, R->cfg.stack_depth, unwind, t->percpu,
             R->cfg.method_none ? "none" : "auto", R->o->run);
    size_t k = strlen(m);
    if (uid != (uid_t)-1)
        k += (size_t)snprintf(m + k, sizeof m - k, "uid=%u\nuser=%s\n", (unsigned)uid, user);
    if (cgroup[0] && k < sizeof m)
        snprintf(m + k, sizeof m - k, "cgroup=%s\n", cgroup);
    att_meta(t, m);
    mwr_perf_attr pa;
    memset(&pa, 0, sizeof pa);
    pa.attr_id = 1;
    pa.attr_size = sizeof R->attr;
    snprintf(pa.name, sizeof pa.name, "cpu-clock");
    att_emit(t, MWR_PERF_ATTR, &pa, sizeof pa, &R->attr, sizeof R->attr);
}

/* The threshold META, the same keys the preload engine writes. */
static void att_meta_threshold(struct att_run *R, struct att_tgt *t, const char *text)
{
    att_meta(t, text);
    (void)R;
}

/* The CPU record (since the attach, from /proc/PID/stat; the spawned
 * program's whole life from wait4) and the trailer. */
static void att_end(struct att_run *R, struct att_tgt *t, const char *end, int32_t status,
                    const struct rusage *ru, uint64_t now)
{
    for (size_t i = 0; i < t->nthr; i++)
        if (t->thr[i].fd >= 0) {
            att_drain(R, t, &t->thr[i], now);
            att_thr_close(&t->thr[i]);
        }
    char m[256];
    snprintf(m, sizeof m, "end=%s\n%s", end,
             status == INT32_MIN ? "exit_status=unknown (not memwatch's child)\n" : "");
    att_meta(t, m);
    mwr_cpu c;
    memset(&c, 0, sizeof c);
    c.time_ns = now;
    if (ru) {
        mwr_cpu_from_rusage(ru, &c);
    } else {
        long hz = sysconf(_SC_CLK_TCK);
        if (hz <= 0)
            hz = 100;
        c.user_ns = (t->cpu_ticks[0] - t->cpu0_ticks[0]) * (1000000000ull / (uint64_t)hz);
        c.system_ns = (t->cpu_ticks[1] - t->cpu0_ticks[1]) * (1000000000ull / (uint64_t)hz);
        c.minflt = t->flt[0] - t->flt0[0];
        c.majflt = t->flt[1] - t->flt0[1];
    }
    att_emit(t, MWR_CPU, &c, sizeof c, NULL, 0);
    mwr_trailer tr;
    memset(&tr, 0, sizeof tr);
    tr.time_ns = now;
    tr.records = t->records;
    tr.bytes = t->bytes;
    tr.lost_samples = t->lost;
    tr.throttled = t->throttled;
    tr.dropped_records = t->dropped;
    tr.exit_status = status == INT32_MIN ? 0 : status;
    att_emit(t, MWR_TRAILER, &tr, sizeof tr, NULL, 0);
    att_flush(t);
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
    att_unlock(t);
    t->ended = 1;
}

/* ---- the probe and the threshold ---- */

static void att_probe_setup(struct att_run *R, char *meta, size_t n)
{
    size_t k = 0;
#define ATT_PUT(...)                                                                            \
    do {                                                                                        \
        int w_ = snprintf(meta + k, k < n ? n - k : 0, __VA_ARGS__);                            \
        if (w_ > 0)                                                                             \
            k += (size_t)w_;                                                                    \
    } while (0)
    const char *tsrc = "";
    double hz = mw_tsc_hz(&tsrc);
    ATT_PUT("tsc_hz=%.0f\ntsc_source=%s\n", hz, tsrc ? tsrc : "");
    if (R->cfg.method_none) {
        ATT_PUT("lat_method=none\nthreshold_ns=0\nthreshold_source=none\n");
        return;
    }
    mw_probe_lat_config pc;
    memset(&pc, 0, sizeof pc);
    mw_probe_lat_config_env(&pc);
    if (mw_probe_lat_create(&pc, &R->probe) < 0) {
        R->probe = NULL;
        ATT_PUT("lat_method=none\nmethod_note=probe_lat unavailable on this CPU\n"
                "threshold_ns=0\nthreshold_source=none\n");
        return;
    }
    /* the machine profile: MEMWATCH_PROFILE, else calibrate's default */
    char path[PATH_MAX] = "";
    const char *pe = getenv("MEMWATCH_PROFILE");
    int have = 0;
    static mw_profile prof;
    if (pe && !strcmp(pe, "none")) {
        ATT_PUT("profile=none (MEMWATCH_PROFILE=none)\n");
    } else {
        if (pe && *pe)
            snprintf(path, sizeof path, "%s", pe);
        else if (mw_profile_default_path(path, sizeof path) < 0)
            path[0] = 0;
        int rc = path[0] ? mw_profile_load(path, 0, &prof) : -ENOENT;
        if (rc == 0 && strcmp(prof.identity, R->identity))
            rc = MW_ERR_FOREIGN;
        if (rc == 0) {
            have = 1;
            ATT_PUT("profile=%s (created %s)\nprofile_path=%s\n", path, prof.created, path);
        } else {
            ATT_PUT("profile=none: %s: %s\n", path[0] ? path : "(no default path)",
                    mw_strerror(rc));
        }
    }
    if (have && prof.lat_method[0] && strcmp(prof.lat_method, "probe_lat"))
        ATT_PUT("method_note=%s validated in the machine profile, but counting methods count "
                "the threads of the process that opens them; the external sampler uses "
                "probe_lat\n",
                prof.lat_method);
    char mixnote[200] = "";
    const char *mix = getenv("MEMWATCH_MIX");
    const char *src;
    R->threshold = 0;
    if (R->cfg.threshold_ns > 0) {
        R->threshold = R->cfg.threshold_ns;
        src = "user (MEMWATCH_THRESHOLD_NS)";
    } else {
        int in_ns = 1;
        double t = have ? mw_profile_lat_threshold(&prof, "probe_lat", mix, &in_ns, mixnote,
                                                   sizeof mixnote)
                        : 0;
        if (t > 0) {
            R->threshold = t;
            R->calibrated = 1;
            src = "profile";
        } else {
            double base = R->cfg.baseline_ns;
            src = "uncalibrated default: MEMWATCH_THRESHOLD_FACTOR x MEMWATCH_BASELINE_NS";
            if (!(base > 0)) {
                /* the lowest of 3 baselines: other load only ever adds latency */
                for (int i = 0; i < 3; i++) {
                    double b = mw_probe_lat_baseline(R->probe);
                    if (b > 0 && (base <= 0 || b < base))
                        base = b;
                }
                src = "uncalibrated default: MEMWATCH_THRESHOLD_FACTOR x baseline probe latency "
                      "measured by memwatch record at the attach";
            }
            if (base > 0) {
                R->threshold = base * R->cfg.factor;
                ATT_PUT("baseline_ns=%.1f\n", base);
            } else {
                src = "none";
            }
        }
    }
    ATT_PUT("lat_method=probe_lat\nthreshold_ns=%.1f\nthreshold_source=%s\n", R->threshold, src);
    if (R->calibrated && mixnote[0])
        ATT_PUT("mix_curve=%s\n", mixnote);
    if (R->calibrated) {
        if (prof.saturable != MW_SAT_UNKNOWN)
            ATT_PUT("saturable=%d\n", prof.saturable == MW_SAT_YES);
        R->unsaturable = prof.saturable == MW_SAT_NO;
        if (prof.band_hi_ns > 0)
            ATT_PUT("threshold_band_ns=%.17g,%.17g\n", prof.band_lo_ns, prof.band_hi_ns);
        if (prof.n_curve) {
            ATT_PUT("lat_curve=");
            for (unsigned i = 0; i < prof.n_curve && i < MW_PROFILE_MAX_CURVE; i++)
                ATT_PUT("%s%.17g:%.17g", i ? "," : "", prof.curve[i].bw / 1e9, prof.curve[i].ns);
            ATT_PUT("\npeak_bw=%.17g\n", prof.curve[prof.n_curve - 1].bw);
        }
    }
    if (have && prof.threshold_note[0])
        ATT_PUT("threshold_note=%s\n", prof.threshold_note);
    ATT_PUT("probe_share=off: the external sampler measures every interval itself\n");
#undef ATT_PUT
}

/* ---- the run ---- */

static int att_run_init(struct att_run *R, const mw_attach_opts *o)
{
    memset(R, 0, sizeof *R);
    R->o = o;
    att_cfg_read(&R->cfg);
    mw_attr_cpu_clock(&R->attr, R->cfg.rate ? R->cfg.rate : 1, R->cfg.stack_depth);
    if (R->cfg.stack_bytes)
        mw_attr_user_stack(&R->attr, R->cfg.stack_bytes);
    /* side band: modules mapped later, thread names, thread starts and ends */
    R->attr.mmap = 1;
    R->attr.mmap2 = 1;
    R->attr.comm = 1;
    R->attr.comm_exec = 1;
    R->attr.task = 1;
    R->attr.sample_id_all = 1;
    mw_host_name(R->host, sizeof R->host);
    if (mw_machine_identity_taken(R->identity, sizeof R->identity) < 0)
        snprintf(R->identity, sizeof R->identity, "unknown");
    R->bounce = malloc(ATT_BOUNCE);
    return R->bounce ? 0 : -ENOMEM;
}

static void att_run_free(struct att_run *R)
{
    for (size_t i = 0; i < R->n; i++) {
        free(R->t[i].thr);
        free(R->t[i].mod_seen);
        free(R->t[i].anon_seen);
        free(R->t[i].out.p);
        free(R->t[i].stage.p);
        free(R->t[i].iv_tids);
        att_unlock(&R->t[i]);
    }
    for (size_t i = 0; i < R->ncpu; i++) {
        mw_ring_unmap(&R->cpus[i].ring);
        if (R->cpus[i].fd >= 0)
            close(R->cpus[i].fd);
    }
    free(R->cpus);
    free(R->pidmap);
    free(R->skip);
    free(R->freeslot);
    free(R->touched);
    free(R->sampling_meta);
    free(R->t);
    free(R->forks);
    free(R->bounce);
    if (R->probe)
        mw_probe_lat_destroy(R->probe);
}

static void att_on_signal(int sig)
{
    att_stop = sig;
}

/* The probe's reading for an interval in which some target ran (ran): 1
 * with *lat, else 0 (no target ran, no probe, or no reading). */
static int att_reading(struct att_run *R, int ran, double *lat)
{
    mw_probe_lat_result r;
    if (!ran || !R->probe || mw_probe_lat_measure(R->probe, &r) != 0 || !(r.median_ns > 0))
        return 0;
    *lat = r.median_ns;
    return 1;
}

/* Target t's INTERVAL record from t0 to t1 (its samples, and the reading
 * where have_lat judged by the threshold as libmemwatch.so's engine judges
 * it: a profile that could not saturate memory flags nothing), then its CPU
 * time and faults so far from /proc. */
static void att_interval_rec(struct att_run *R, struct att_tgt *t, uint64_t t0, uint64_t t1,
                             uint32_t nthreads, int have_lat, double lat)
{
    mwr_interval iv;
    memset(&iv, 0, sizeof iv);
    iv.t_start_ns = t0;
    iv.t_end_ns = t1;
    iv.nthreads = nthreads;
    iv.threshold_ns = R->threshold;
    iv.samples = t->iv_samples;
    iv.lost = t->iv_lost;
    if (R->probe)
        snprintf(iv.lat_method, sizeof iv.lat_method, "probe_lat");
    if (have_lat) {
        iv.latency_ns = lat;
        iv.flags |= MWR_IV_LAT_VALID;
        if (R->threshold > 0 && lat > R->threshold && !R->unsaturable)
            iv.flags |= MWR_IV_BW_BOUND;
    }
    if (R->threshold > 0 && !R->calibrated)
        iv.flags |= MWR_IV_UNCALIBRATED;
    att_emit(t, MWR_INTERVAL, &iv, sizeof iv, NULL, 0);
    uint64_t ticks[2], flt[2];
    if (att_stat(t->pid, NULL, NULL, ticks, flt) == 0) {
        memcpy(t->cpu_ticks, ticks, sizeof ticks);
        memcpy(t->flt, flt, sizeof flt);
    }
}

/* One interval's end for every live target: drain, the interval record,
 * one write. */
static void att_interval(struct att_run *R, uint64_t t0, uint64_t t1)
{
    int ran = 0;
    for (size_t i = 0; i < R->n; i++) {
        struct att_tgt *t = &R->t[i];
        t->live = 0;
        if (t->ended)
            continue;
        t->iv_samples = t->iv_lost = 0;
        for (size_t k = 0; k < t->nthr; k++)
            if (t->thr[k].fd >= 0)
                att_drain(R, t, &t->thr[k], t1);
        t->live = att_scan(R, t, t1, NULL);
        /* a spawned program has no MMAP2 side band (att_spawn): its
         * modules are read after the exec, then every 10 intervals for
         * what it loaded since */
        if (t->child && (t->mods_done ? ++t->mods_tick >= 10 : att_execed(t))) {
            att_modules(t, t1);
            t->mods_done = 1;
            t->mods_tick = 0;
        }
        ran |= t->iv_samples > 0;
    }
    double lat = 0;
    int have_lat = att_reading(R, ran, &lat);
    for (size_t i = 0; i < R->n; i++) {
        struct att_tgt *t = &R->t[i];
        if (t->ended)
            continue;
        att_interval_rec(R, t, t0, t1, (uint32_t)t->live, have_lat && t->iv_samples, lat);
        att_flush(t);
    }
}

/* Has the target ended? (gone, a zombie, or another process under its pid) */
static int att_gone(struct att_tgt *t)
{
    char st = 0;
    unsigned long long start = 0;
    if (att_stat(t->pid, &st, &start, NULL, NULL))
        return 1;
    return st == 'Z' || st == 'X' || start != t->starttime;
}

static int att_target_attach(struct att_run *R, struct att_tgt *t, pid_t pid, pid_t parent);

/* Does the process carry libmemwatch.so (it records itself)? */
static int att_preloaded(pid_t pid)
{
    char mp[64], line[PATH_MAX + 128];
    snprintf(mp, sizeof mp, "/proc/%ld/maps", (long)pid);
    FILE *mf = fopen(mp, "re");
    int preloaded = 0;
    while (mf && fgets(line, sizeof line, mf))
        if (strstr(line, "/libmemwatch.so")) {
            preloaded = 1;
            break;
        }
    if (mf)
        fclose(mf);
    return preloaded;
}

/* What a failed attach left in t (its events are closed): freed, t empty. */
static void att_target_clear(struct att_tgt *t)
{
    free(t->thr);
    free(t->out.p);
    memset(t, 0, sizeof *t);
    t->fd = t->lock_fd = -1;
}

/* Attach to the processes the targets forked during the interval (children
 * are followed as -p's threads are: from the interval after they started;
 * docs/attach.md, "Children"). One that is a target already, ended at once
 * or runs libmemwatch.so is left as it is. */
static void att_follow(struct att_run *R)
{
    for (size_t i = 0; i < R->nforks; i++) {
        pid_t c = R->forks[i].pid;
        int known = 0;
        for (size_t k = 0; k < R->n && !known; k++)
            known = R->t[k].pid == c && !R->t[k].ended;
        if (known)
            continue;
        if (R->n == R->cap) {
            struct att_tgt *q = att_grow(R->t, &R->cap, sizeof *q, 4);
            if (!q)
                break;
            R->t = q;
        }
        if (att_target_attach(R, &R->t[R->n], c, R->forks[i].parent)) {
            att_target_clear(&R->t[R->n]);
            continue;
        }
        if (R->thr_meta)
            att_meta_threshold(R, &R->t[R->n], R->thr_meta);
        att_flush(&R->t[R->n]);
        if (!R->o->quiet)
            fprintf(stderr, "memwatch: pid %ld: forked by pid %ld, followed\n", (long)c,
                    (long)R->forks[i].parent);
        R->n++;
    }
    R->nforks = 0;
}

/* The loop: intervals until every target ended, the duration passed or a
 * signal came; child: the spawned program's pid (its end through waitpid:
 * then the children it forked, followed, are let go). */
static void att_loop(struct att_run *R, pid_t child, int *wstatus, struct rusage *ru)
{
    uint64_t t0 = att_now(), start = t0;
    uint64_t next = t0 + R->cfg.interval_ns;
    for (;;) {
        struct timespec ts = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
        int e;
        while ((e = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) == EINTR &&
               !att_stop && !child)
            ;
        uint64_t t1 = att_now();
        att_interval(R, t0, t1);
        att_follow(R);
        t0 = t1;
        next += R->cfg.interval_ns;
        if (next < t1) /* fell behind (a loaded machine): no burst of short intervals */
            next = t1 + R->cfg.interval_ns;
        size_t alive = 0;
        int child_ended = 0;
        for (size_t i = 0; i < R->n; i++) {
            struct att_tgt *t = &R->t[i];
            if (t->ended)
                continue;
            if (child && t->pid == child) {
                pid_t w = wait4(child, wstatus, WNOHANG, ru);
                if (w == child) {
                    int32_t s = WIFEXITED(*wstatus) ? WEXITSTATUS(*wstatus) : -WTERMSIG(*wstatus);
                    att_end(R, t, WIFEXITED(*wstatus) ? "exit" : "signal", s, ru, att_now());
                    child_ended = 1;
                    continue;
                }
            } else if (att_gone(t)) {
                att_end(R, t, "exit", INT32_MIN, NULL, att_now());
                if (!R->o->quiet)
                    fprintf(stderr, "memwatch: pid %ld ended\n", (long)t->pid);
                continue;
            }
            alive++;
        }
        if (!alive)
            return;
        if (child_ended) /* the program memwatch started has ended: its children are let go */
            break;
        if (!child && (att_stop || (R->o->duration_ns && t1 - start >= R->o->duration_ns)))
            break;
    }
    uint64_t now = att_now();
    for (size_t i = 0; i < R->n; i++)
        if (!R->t[i].ended)
            att_end(R, &R->t[i], "detach", INT32_MIN, NULL, now);
}

#define ATT_SAY(...)                                                                            \
    do {                                                                                        \
        if (e)                                                                                  \
            fprintf(e, __VA_ARGS__);                                                            \
    } while (0)
/* Check pid and attach to it: lock, file, start META, modules, every
 * thread's sampler. parent: 0 for a process named by -p or --all, else the
 * target that forked it (followed: nothing is said where it cannot be
 * attached, as a child that ended at once or exec'ed a program that
 * libmemwatch.so records). 0, or -1 after saying why on e (where not NULL);
 * nothing of it stays open. */
static int att_target_attach(struct att_run *R, struct att_tgt *t, pid_t pid, pid_t parent)
{
    FILE *e = parent ? NULL : stderr;
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->fd = t->lock_fd = -1;
    char st = 0;
    if (pid <= 0 || (kill(pid, 0) && errno == ESRCH) ||
        att_stat(pid, &st, &t->starttime, t->cpu0_ticks, t->flt0)) {
        ATT_SAY("memwatch record: -p %ld: no such process\n", (long)pid);
        return -1;
    }
    if (st == 'Z' || st == 'X') {
        ATT_SAY("memwatch record: -p %ld: the process has ended (a zombie its parent has "
                        "not reaped); nothing to attach to\n", (long)pid);
        return -1;
    }
    if (pid == getpid()) {
        ATT_SAY("memwatch record: -p %ld: that is memwatch itself\n", (long)pid);
        return -1;
    }
    memcpy(t->cpu_ticks, t->cpu0_ticks, sizeof t->cpu_ticks);
    memcpy(t->flt, t->flt0, sizeof t->flt);
    /* a process that carries libmemwatch.so records itself already */
    if (att_preloaded(pid)) {
        ATT_SAY("memwatch record: -p %ld: the process is recorded already: it has "
                        "libmemwatch.so loaded (memwatch record -- or LD_PRELOAD); its raw files "
                        "go where that run's go\n", (long)pid);
        return -1;
    }
    pid_t holder = 0;
    int lk = att_lock(t, &holder);
    if (lk == -1) {
        if (holder > 0)
            ATT_SAY("memwatch record: -p %ld: already attached: memwatch record (pid %ld) "
                            "samples it (lock %s); one external sampler per process\n",
                    (long)pid, (long)holder, t->lock_path);
        else
            ATT_SAY("memwatch record: -p %ld: already attached by another memwatch "
                            "record (lock %s)\n", (long)pid, t->lock_path);
        return -1;
    }
    /* every thread's sampler, before any file exists */
    int err = 0;
    uint64_t now = att_now();
    size_t live = att_scan(R, t, now, &err);
    if (!live) {
        char why[600];
        if (att_gone(t))
            ATT_SAY("memwatch record: -p %ld: the process ended during the attach\n",
                    (long)pid);
        else {
            att_explain(err ? -err : EPERM, pid, why, sizeof why);
            ATT_SAY("memwatch record: -p %ld: cannot sample it: %s\n", (long)pid, why);
        }
        for (size_t i = 0; i < t->nthr; i++)
            att_thr_close(&t->thr[i]);
        t->out.len = 0;
        att_unlock(t);
        return -1;
    }
    if (err && !R->o->quiet) {
        char why[600];
        att_explain(-err, pid, why, sizeof why);
        ATT_SAY("memwatch: pid %ld: some threads could not be sampled: %s\n", (long)pid,
                why);
    }
    /* the THREAD records of the scan come after the start META */
    struct att_buf thr = t->out;
    memset(&t->out, 0, sizeof t->out);
    uint64_t thr_records = t->records, thr_bytes = t->bytes;
    t->records = t->bytes = 0;
    if (att_file_open(R, t)) {
        for (size_t i = 0; i < t->nthr; i++)
            att_thr_close(&t->thr[i]);
        free(thr.p);
        att_unlock(t);
        return -1;
    }
    if (parent) {
        char how[96];
        snprintf(how, sizeof how, "fork: a child of pid %ld, followed from its fork", (long)parent);
        att_meta_start(R, t, how, now);
    } else {
        att_meta_start(R, t,
                       R->o->all ? "all: memwatch record --all, per process (CPU-wide events "
                                   "refused)"
                                 : "pid: memwatch record -p",
                       R->t_start);
    }
    att_modules(t, now);
    if (thr.len && att_buf_room(&t->out, thr.len))
        memcpy(t->out.p + t->out.len - thr.len, thr.p, thr.len);
    free(thr.p);
    t->records += thr_records;
    t->bytes += thr_bytes;
    return 0;
}
#undef ATT_SAY

/* ---- record --all: one event per CPU ---- */

#define ATT_PAGES_CPU 64u   /* data pages of a CPU's ring: about 120 ms of DWARF samples at 250/s */
#define ATT_CPU_CHECK 100u  /* intervals between looks at /proc for ends no EXIT record told */
#define ATT_CPU_IDLE 100u   /* intervals without a record after which a target's file is closed */
#define ATT_CPU_MAPS 10u    /* intervals with samples between two reads of a target's maps */
#define ATT_PID_MAX 4194304 /* PID_MAX_LIMIT of 64-bit kernels */
#define ATT_CPU_FALLBACK 3  /* att_cpu_run: CPU-wide events refused, attach per process (said) */
#define ATT_HOW_CPU "cpu: memwatch record --all, per-CPU events"
#define ATT_PER_PROCESS                                                                         \
    "one event per thread (a process started later is recorded only where a recorded process " \
    "forks it)"

/* What per-CPU sampling lacks here: the capabilities and the setting. */
static void att_cpu_missing(const mw_privs *pv, char *buf, size_t n)
{
    char par[80];
    if (pv->paranoid == MW_PARANOID_UNKNOWN)
        snprintf(par, sizeof par, "kernel.perf_event_paranoid cannot be read");
    else
        snprintf(par, sizeof par, "kernel.perf_event_paranoid is %d", pv->paranoid);
    snprintf(buf, n,
             "per-CPU sampling of the whole machine needs CAP_PERFMON (or CAP_SYS_ADMIN: root) "
             "or kernel.perf_event_paranoid <= 0; memwatch runs as uid %ld without either "
             "capability and %s (sysctl -w kernel.perf_event_paranoid=0, or setcap "
             "cap_perfmon+ep on the memwatch executable)",
             (long)geteuid(), par);
}

/* Why the event or the ring of CPU cpu could not be had, in words. */
static void att_cpu_explain(int err, int cpu, const mw_privs *pv, int mapping, char *buf,
                            size_t n)
{
    if (mapping) {
        snprintf(buf, n,
                 "cannot map the ring of CPU %d: %s (the locked-memory limit: ulimit -l, "
                 "kernel.perf_event_mlock_kb)",
                 cpu, strerror(err));
        return;
    }
    switch (err) {
    case EACCES:
    case EPERM:
        snprintf(buf, n,
                 "perf_event_open(pid -1, cpu %d): %s although %s: a security module (SELinux, "
                 "AppArmor, lockdown) or a seccomp filter forbids CPU-wide events",
                 cpu, strerror(err),
                 pv->cap_perfmon || pv->cap_sys_admin ? "memwatch has CAP_PERFMON"
                                                      : "kernel.perf_event_paranoid is <= 0");
        break;
    case ENOENT:
    case EOPNOTSUPP:
        snprintf(buf, n,
                 "perf_event_open(pid -1, cpu %d): %s: this kernel has no cpu-clock software "
                 "event or refuses its sample bits (MEMWATCH_UNWIND=fp samples without "
                 "registers and stack)",
                 cpu, strerror(err));
        break;
    case EMFILE:
    case ENFILE:
        snprintf(buf, n,
                 "perf_event_open(pid -1, cpu %d): %s: one descriptor per CPU is needed; raise "
                 "the limit (ulimit -n)",
                 cpu, strerror(err));
        break;
    case EINVAL:
        snprintf(buf, n,
                 "perf_event_open(pid -1, cpu %d): %s: the kernel refuses an attribute (sample "
                 "rate above kernel.perf_event_max_sample_rate, or use_clockid unsupported)",
                 cpu, strerror(err));
        break;
    default:
        snprintf(buf, n, "perf_event_open(pid -1, cpu %d): %s", cpu, strerror(err));
    }
}

/* One disabled event per online CPU, each with its ring. 0, or -errno
 * with why (everything opened is closed again). */
static int att_cpu_open(struct att_run *R, const mw_privs *pv, char *why, size_t n)
{
    char b[4096];
    int cpus[4096];
    int nc = mw_read_small("/sys/devices/system/cpu/online", b, sizeof b) < 0
                 ? -1
                 : mw_cpulist_parse(b, cpus, sizeof cpus / sizeof cpus[0]);
    if (nc <= 0) {
        snprintf(why, n, "the online CPUs cannot be read (/sys/devices/system/cpu/online)");
        return -ENOENT;
    }
    R->cpus = calloc((size_t)nc, sizeof *R->cpus);
    if (!R->cpus) {
        snprintf(why, n, "out of memory");
        return -ENOMEM;
    }
    struct perf_event_attr a = R->attr;
    a.disabled = 1; /* enabled once the probe is set up (att_cpu_run) */
    R->ring_pages = ATT_PAGES_CPU;
    int err = 0;
    for (int i = 0; i < nc && !err; i++) {
        int fd = (int)syscall(SYS_perf_event_open, &a, -1, cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) {
            if (errno == ENODEV) /* went offline meanwhile */
                continue;
            err = errno;
            att_cpu_explain(err, cpus[i], pv, 0, why, n);
            break;
        }
        struct att_cpu *c = &R->cpus[R->ncpu];
        c->cpu = cpus[i];
        c->fd = fd;
        int e = -ENOMEM;
        for (unsigned p = R->ring_pages; p >= 1; p /= 2) {
            e = mw_ring_map(&c->ring, fd, p);
            if (e != -EPERM && e != -ENOMEM) {
                if (!e)
                    R->ring_pages = p; /* the next CPUs start there */
                break;
            }
        }
        if (e) {
            close(fd);
            err = -e;
            att_cpu_explain(err, cpus[i], pv, 1, why, n);
            break;
        }
        R->ncpu++;
    }
    if (!err && !R->ncpu) {
        err = ENODEV;
        snprintf(why, n, "no online CPU could be opened");
    }
    if (err) {
        for (size_t i = 0; i < R->ncpu; i++) {
            mw_ring_unmap(&R->cpus[i].ring);
            close(R->cpus[i].fd);
        }
        R->ncpu = 0;
        return -err;
    }
    return 0;
}

/* Leave process pid out (memwatch itself, libmemwatch.so, another user's):
 * its records are dropped until it is gone (att_cpu_check). */
static void att_cpu_leave_out(struct att_run *R, pid_t pid)
{
    R->pidmap[pid] = -1;
    if (R->nskip == R->capskip) {
        struct att_skip *q = att_grow(R->skip, &R->capskip, sizeof *q, 64);
        if (!q)
            return; /* left out for good */
        R->skip = q;
    }
    unsigned long long st = 0;
    (void)att_stat(pid, NULL, &st, NULL, NULL);
    R->skip[R->nskip++] = (struct att_skip){pid, st};
}

/* The threads sampled in the interval (INTERVAL nthreads). */
static void att_cpu_tid(struct att_tgt *t, pid_t tid)
{
    for (size_t i = 0; i < t->n_iv_tids; i++)
        if (t->iv_tids[i] == tid)
            return;
    if (t->n_iv_tids == t->cap_iv_tids) {
        pid_t *q = att_grow(t->iv_tids, &t->cap_iv_tids, sizeof *q, 8);
        if (!q)
            return;
        t->iv_tids = q;
    }
    t->iv_tids[t->n_iv_tids++] = tid;
}

/* The slot R->t[k] of a target that ended: freed for a new one. */
static void att_cpu_release(struct att_run *R, size_t k)
{
    struct att_tgt *t = &R->t[k];
    free(t->thr);
    free(t->mod_seen);
    free(t->anon_seen);
    free(t->out.p);
    free(t->stage.p);
    free(t->iv_tids);
    t->thr = NULL;
    t->mod_seen = t->anon_seen = NULL;
    t->iv_tids = NULL;
    memset(&t->out, 0, sizeof t->out);
    memset(&t->stage, 0, sizeof t->stage);
    t->nthr = t->cap = t->nmod_seen = t->nanon_seen = t->n_iv_tids = t->cap_iv_tids = 0;
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
    t->ended = 1;
    if ((size_t)t->pid < R->npidmap && R->pidmap[t->pid] == (int32_t)k + 1)
        R->pidmap[t->pid] = 0;
    R->live--;
    if (R->nfree == R->capfree) {
        size_t *q = att_grow(R->freeslot, &R->capfree, sizeof *q, 64);
        if (!q)
            return; /* the slot is not used again */
        R->freeslot = q;
    }
    R->freeslot[R->nfree++] = k;
}

/* A target's file is closed while it has no records (ATT_CPU_IDLE): open
 * it again to append. -1 when it cannot be (said once). */
static int att_cpu_reopen(struct att_tgt *t)
{
    if (t->fd >= 0 || t->io_fail)
        return t->io_fail ? -1 : 0;
    t->fd = open(t->path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (t->fd < 0) {
        fprintf(stderr, "memwatch record: %s: %s; nothing more is written to it\n", t->path,
                strerror(errno));
        t->io_fail = 1;
        return -1;
    }
    return 0;
}

/* The THREAD records of the threads process t has when its file begins. */
static void att_cpu_threads(struct att_tgt *t, uint64_t now)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/task", (long)t->pid);
    DIR *d = opendir(path);
    struct dirent *e;
    size_t n = 0;
    while (d && (e = readdir(d)) && n < ATT_MAX_THREADS)
        if (isdigit((unsigned char)e->d_name[0])) {
            att_thread_rec(t, (pid_t)strtol(e->d_name, NULL, 10), MWR_THREAD_START, now);
            n++;
        }
    if (d)
        closedir(d);
}

/* Process pid's first record: its target (file, start META, modules,
 * threads), or -1 when it is left out. t0: the interval's start, before
 * every record of it. */
static long att_cpu_new(struct att_run *R, pid_t pid, uint64_t t0)
{
    if ((!R->any_user && att_uid_of(pid) != getuid()) || att_preloaded(pid)) {
        att_cpu_leave_out(R, pid);
        return -1;
    }
    size_t k;
    if (R->nfree) {
        k = R->freeslot[--R->nfree];
    } else {
        if (R->n == R->cap) {
            struct att_tgt *q = att_grow(R->t, &R->cap, sizeof *q, 64);
            if (!q) {
                att_cpu_leave_out(R, pid);
                return -1;
            }
            R->t = q;
        }
        k = R->n++;
    }
    struct att_tgt *t = &R->t[k];
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->fd = t->lock_fd = -1;
    t->percpu = 1;
    t->pending = 1;
    t->t_begin = t0;
    t->lost0 = R->cpu_lost;
    if (att_stat(pid, NULL, &t->starttime, t->cpu0_ticks, t->flt0) == 0) {
        memcpy(t->cpu_ticks, t->cpu0_ticks, sizeof t->cpu_ticks);
        memcpy(t->flt, t->flt0, sizeof t->flt);
    }
    R->live++;
    R->pidmap[pid] = (int32_t)k + 1;
    return (long)k;
}

/* The file of a target made in this interval, written at its end: by then
 * /proc/PID names the program a fork child exec'ed meanwhile (the report
 * names a process by its first META). Header, start META, threshold,
 * modules and threads, then the records sorted into it so far. -1 when no
 * file could be made (said): the target is dropped and its pid left out. */
static int att_cpu_begin(struct att_run *R, size_t k)
{
    struct att_tgt *t = &R->t[k];
    struct att_buf data = t->out;
    uint64_t nrec = t->records, nbytes = t->bytes;
    memset(&t->out, 0, sizeof t->out);
    t->records = t->bytes = 0;
    t->pending = 0;
    if (att_file_open(R, t)) {
        pid_t pid = t->pid;
        free(data.p);
        att_cpu_release(R, k);
        att_cpu_leave_out(R, pid);
        return -1;
    }
    att_meta_start(R, t, ATT_HOW_CPU, t->t_begin);
    att_meta(t, R->thr_meta);
    att_meta(t, R->sampling_meta);
    att_modules(t, t->t_begin);
    att_cpu_threads(t, t->t_begin);
    if (data.len && att_buf_room(&t->out, data.len))
        memcpy(t->out.p + t->out.len - data.len, data.p, data.len);
    free(data.p);
    t->records += nrec;
    t->bytes += nbytes;
    R->files++;
    return 0;
}

/* The target of process pid (made at its first record), or -1 when it is
 * left out. */
static long att_cpu_find(struct att_run *R, pid_t pid, uint64_t t0)
{
    if ((size_t)pid >= R->npidmap) {
        size_t n = (size_t)pid + 1 > ATT_PID_MAX + 1 ? (size_t)pid + 1 : ATT_PID_MAX + 1;
        int32_t *q = realloc(R->pidmap, n * sizeof *q);
        if (!q)
            return -1;
        memset(q + R->npidmap, 0, (n - R->npidmap) * sizeof *q);
        R->pidmap = q;
        R->npidmap = n;
    }
    int32_t v = R->pidmap[pid];
    if (v > 0)
        return v - 1;
    if (v < 0)
        return -1;
    return att_cpu_new(R, pid, t0);
}

/* A target whose process turned out to carry libmemwatch.so (an MMAP2 of
 * it: the process exec'ed with it preloaded): it records itself; its file
 * here is removed and it is left out. */
static void att_cpu_drop(struct att_run *R, size_t k)
{
    struct att_tgt *t = &R->t[k];
    pid_t pid = t->pid;
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
    if (!t->pending) {
        unlink(t->path);
        R->files--;
    }
    att_cpu_release(R, k);
    att_cpu_leave_out(R, pid);
}

/* One record of process k into its staging buffer. */
static void att_cpu_stage(struct att_run *R, size_t k, const void *rec, size_t len)
{
    struct att_tgt *t = &R->t[k];
    if (!t->staged) {
        if (R->ntouched == R->captouched) {
            size_t *q = att_grow(R->touched, &R->captouched, sizeof *q, 64);
            if (!q) {
                t->dropped++;
                return;
            }
            R->touched = q;
        }
        R->touched[R->ntouched++] = k;
        t->staged = 1;
    }
    void *p = att_buf_room(&t->stage, len);
    if (!p) {
        t->dropped++;
        t->stage.fail = 0;
        return;
    }
    memcpy(p, rec, len);
}

/* The staged records of each process: one PERF_DATA record each. */
static void att_cpu_emit(struct att_run *R, uint64_t now)
{
    for (size_t i = 0; i < R->ntouched; i++) {
        struct att_tgt *t = &R->t[R->touched[i]];
        t->staged = 0;
        if (t->ended || !t->stage.len) {
            t->stage.len = 0;
            continue;
        }
        mwr_perf_data pd = {1, (uint32_t)t->pid, now};
        att_emit(t, MWR_PERF_DATA, &pd, sizeof pd, t->stage.p, t->stage.len);
        t->stage.len = 0;
    }
    R->ntouched = 0;
}

/* Sort n bytes of one CPU ring's records by process. Samples timed after
 * t1 count for the next interval. */
static void att_cpu_sort(struct att_run *R, const unsigned char *p, size_t n, uint64_t t0,
                         uint64_t t1)
{
    pid_t self = getpid();
    size_t off = 0;
    while (off + sizeof(struct perf_event_header) <= n) {
        mw_perf_record r;
        int sz = mw_perf_record_decode(&R->fmt, p + off, n - off, &r);
        if (sz <= 0)
            break; /* a damaged record: the rest of the chunk cannot be framed */
        const unsigned char *rec = p + off;
        off += (size_t)sz;
        uint32_t pid, tid = 0;
        switch (r.type) {
        case PERF_RECORD_SAMPLE:
            pid = r.u.sample.pid;
            tid = r.u.sample.tid;
            break;
        case PERF_RECORD_MMAP:
        case PERF_RECORD_MMAP2:
            pid = r.u.mmap2.pid;
            break;
        case PERF_RECORD_COMM:
            pid = r.u.comm.pid;
            tid = r.u.comm.tid;
            break;
        case PERF_RECORD_FORK:
        case PERF_RECORD_EXIT:
            pid = r.u.task.pid;
            tid = r.u.task.tid;
            break;
        case PERF_RECORD_LOST: /* of the whole CPU: no process known */
            R->cpu_lost += r.u.lost.lost;
            continue;
        case PERF_RECORD_LOST_SAMPLES:
            R->cpu_lost += r.u.lost_samples.lost;
            continue;
        case PERF_RECORD_THROTTLE:
            R->cpu_throttled++;
            continue;
        default:
            continue;
        }
        if (pid == 0 || pid > (uint32_t)INT32_MAX) { /* outside memwatch's pid namespace */
            R->cpu_foreign++;
            continue;
        }
        if ((pid_t)pid == self)
            continue;
        long k = att_cpu_find(R, (pid_t)pid, t0);
        if (k < 0)
            continue;
        int is_map = r.type == PERF_RECORD_MMAP2 || r.type == PERF_RECORD_MMAP;
        if (is_map && r.u.mmap2.filename && strstr(r.u.mmap2.filename, "/libmemwatch.so")) {
            att_cpu_drop(R, (size_t)k);
            continue;
        }
        if (r.type == PERF_RECORD_COMM && (r.misc & PERF_RECORD_MISC_COMM_EXEC) && tid == pid) {
            /* an exec (the kernel's COMM record of it comes before the new
             * image's MMAP2s): a file begun already ends with it, the new
             * image gets a target of its own; a target whose file has not
             * begun and had no samples yet simply becomes the new image's */
            if (!R->t[k].pending || R->t[k].had_samples) {
                att_cpu_emit(R, t1); /* what came before the exec, into the old image's file */
                long old = k;
                R->t[k].exec_end = 1;
                R->pidmap[pid] = 0;
                k = att_cpu_find(R, (pid_t)pid, t0);
                if (k < 0)
                    continue;
                R->t[k].prev1 = (size_t)old + 1;
                R->t[k].exec_time = r.has_sample_id ? r.sid.time : 0;
            }
            R->t[k].want_exe = 1;
        }
        if (r.type == PERF_RECORD_SAMPLE && R->t[k].prev1 &&
            r.u.sample.time < R->t[k].exec_time) {
            /* another CPU's ring, drained after the exec's: before it */
            size_t old = R->t[k].prev1 - 1;
            if (!R->t[old].ended && R->t[old].exec_end && R->t[old].pid == (pid_t)pid)
                k = (long)old;
        }
        struct att_tgt *t = &R->t[k];
        if (is_map && t->want_exe && (r.u.mmap2.prot & 4 /* PROT_EXEC */) &&
            r.u.mmap2.filename && r.u.mmap2.filename[0] == '/') {
            /* the exec maps the program first: its exe where /proc/PID/exe is gone */
            snprintf(t->exe, sizeof t->exe, "%s", r.u.mmap2.filename);
            t->want_exe = 0;
        }
        att_cpu_stage(R, (size_t)k, rec, (size_t)sz);
        t = &R->t[k];
        t->idle = 0;
        if (r.type == PERF_RECORD_SAMPLE) {
            uint64_t ts = r.u.sample.time;
            if (ts > t1)
                t->nx_samples++;
            else
                t->iv_samples++;
            if (ts > t->last_time)
                t->last_time = ts;
            t->had_samples = 1;
            att_cpu_tid(t, (pid_t)tid);
        } else if (r.type == PERF_RECORD_EXIT && tid == pid) {
            if (!t->exit_wait) /* the leader's: looked at after the drain */
                t->exit_wait = 1;
        }
    }
}

/* End target k: the machine-wide losses while it was recorded, then
 * att_end's META end, CPU record and trailer; its slot is freed. */
static void att_cpu_end(struct att_run *R, size_t k, const char *end, uint64_t now)
{
    struct att_tgt *t = &R->t[k];
    att_cpu_reopen(t);
    if (R->cpu_lost > t->lost0) {
        char m[1024];
        snprintf(m, sizeof m,
                 "%s; %llu samples were lost meanwhile (full CPU rings, machine-wide): whose "
                 "they were is not known\n",
                 R->sampling_meta, (unsigned long long)(R->cpu_lost - t->lost0));
        char *nl = strchr(m, '\n'); /* the start META's line, its newline cut */
        if (nl && nl[1])
            memmove(nl, nl + 1, strlen(nl + 1) + 1);
        att_meta(t, m);
    }
    att_end(R, t, end, strcmp(end, "exec") ? INT32_MIN : 0, NULL, now);
    if (!strcmp(end, "exit"))
        R->files_ended++;
    att_cpu_release(R, k);
}

/* One interval: drain every CPU ring, sort the records into the
 * processes' files, one probe reading where some process had samples, an
 * INTERVAL record for each such process; the ends of processes whose
 * leader exited. last: the detach (every live target ends). */
static void att_cpu_interval(struct att_run *R, uint64_t t0, uint64_t t1, int last,
                             unsigned tick)
{
    for (size_t i = 0; i < R->ncpu; i++) {
        for (;;) {
            mw_ring_stats st = {0};
            size_t got = mw_ring_read(&R->cpus[i].ring, R->bounce, ATT_BOUNCE, &st);
            if (!got)
                break;
            att_cpu_sort(R, R->bounce, got, t0, last ? UINT64_MAX : t1);
            att_cpu_emit(R, t1);
        }
    }
    if (last) /* every sample drained is before now */
        t1 = att_now();
    /* which targets end now: the leader's EXIT record came and the process
     * is gone (not an exec by another thread), or the detach */
    int ran = 0;
    for (size_t k = 0; k < R->n; k++) {
        struct att_tgt *t = &R->t[k];
        if (t->ended)
            continue;
        int gone = t->exec_end || (t->exit_wait && att_gone(t));
        t->exit_wait = gone ? UINT_MAX : t->exit_wait;
        if (gone || last) {
            t->iv_samples += t->nx_samples;
            t->nx_samples = 0;
        }
        ran |= t->iv_samples > 0;
    }
    double lat = 0;
    int have_lat = att_reading(R, ran, &lat);
    int check = tick % ATT_CPU_CHECK == 0;
    for (size_t k = 0; k < R->n; k++) {
        struct att_tgt *t = &R->t[k];
        if (t->ended)
            continue;
        int gone = t->exit_wait == UINT_MAX;
        if (t->pending && att_cpu_begin(R, k))
            continue;
        t = &R->t[k];
        if (t->iv_samples) {
            att_interval_rec(R, t, t0, gone && t->last_time > t1 ? t->last_time : t1,
                             (uint32_t)t->n_iv_tids, have_lat, lat);
            /* anonymous mappings (and modules) made since: its data objects */
            if (!gone && ++t->maps_tick >= ATT_CPU_MAPS) {
                att_modules(t, t1);
                t->maps_tick = 0;
            }
        }
        t->iv_samples = t->nx_samples;
        t->nx_samples = 0;
        t->n_iv_tids = 0;
        t->prev1 = 0; /* the old image ends in this interval */
        /* ended without an EXIT record seen (lost with a full ring) */
        if (!gone && !last && check && att_gone(t))
            gone = 1;
        if (gone || last) {
            att_cpu_end(R, k, t->exec_end ? "exec" : gone ? "exit" : "detach", t1);
            continue;
        }
        if (t->exit_wait && ++t->exit_wait > ATT_CPU_CHECK)
            t->exit_wait = 0; /* its EXIT was an exec's: it runs on */
        if (t->out.len && att_cpu_reopen(t) == 0)
            att_flush(t);
        t->out.len = 0;
        if (++t->idle >= ATT_CPU_IDLE && t->fd >= 0) {
            close(t->fd);
            t->fd = -1;
        }
    }
    if (check) /* a pid left out whose process ended may come back as another process */
        for (size_t i = 0; i < R->nskip;) {
            unsigned long long st = 0;
            pid_t p = R->skip[i].pid;
            if (p != getpid() &&
                (att_stat(p, NULL, &st, NULL, NULL) || st != R->skip[i].start)) {
                if ((size_t)p < R->npidmap && R->pidmap[p] < 0)
                    R->pidmap[p] = 0;
                R->skip[i] = R->skip[--R->nskip];
                continue;
            }
            i++;
        }
}

static void att_signals(struct sigaction old[3], int install)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = att_on_signal;
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < 3; k++)
        sigaction(sigs[k], install ? &sa : &old[k], install ? &old[k] : NULL);
}

/* record --all per CPU. 0 when it ran, 1 when it failed (said), or
 * ATT_CPU_FALLBACK when CPU-wide events are refused (said): then the
 * caller attaches per process. */
static int att_cpu_run(const mw_attach_opts *o)
{
    mw_privs pv;
    memset(&pv, 0, sizeof pv);
    pv.paranoid = MW_PARANOID_UNKNOWN;
    (void)mw_privs_read(NULL, &pv);
    int every = pv.is_root || pv.cap_perfmon || pv.cap_sys_admin;
    char why[700];
    if (!mw_privs_can_cpu_wide(&pv)) {
        att_cpu_missing(&pv, why, sizeof why);
        fprintf(stderr, "memwatch record --all: %s; attaching to each of %s processes instead, %s\n",
                why, every ? "the" : "your", ATT_PER_PROCESS);
        return ATT_CPU_FALLBACK;
    }
    struct att_run R;
    if (att_run_init(&R, o)) {
        fprintf(stderr, "memwatch record: out of memory\n");
        att_run_free(&R);
        return 1;
    }
    R.any_user = every;
    /* A CPU's timer samples whatever runs there when it fires. With a
     * period of whole milliseconds (250/s: 4 ms) it fires at one phase of
     * the scheduler tick (HZ 100, 250, 1000) every time, and a process's
     * count then follows where in the tick it tends to run rather than its
     * CPU time (docs/attach.md, "Cost"). Such a rate is lowered by 1.2 %,
     * so that the phase sweeps the tick in about 80 samples; META
     * sample_rate and sampling say the rate used. */
    unsigned long asked = R.cfg.rate;
    if (R.cfg.rate > 1) {
        unsigned long long per = 1000000000ull / R.cfg.rate;
        if (per % 1000000 < 25000 || per % 1000000 > 975000) {
            R.cfg.rate -= (R.cfg.rate * 12 + 999) / 1000;
            R.attr.sample_period = 1000000000ull / R.cfg.rate;
        }
    }
    if (att_cpu_open(&R, &pv, why, sizeof why)) {
        fprintf(stderr, "memwatch record --all: %s; attaching to each of %s processes instead, %s\n",
                why, every ? "the" : "your", ATT_PER_PROCESS);
        att_run_free(&R);
        return ATT_CPU_FALLBACK;
    }
    char b[32];
    long pm = mw_read_small("/proc/sys/kernel/pid_max", b, sizeof b) > 0 ? strtol(b, NULL, 10) : 0;
    R.npidmap = (size_t)(pm > 0 && pm <= ATT_PID_MAX ? pm : ATT_PID_MAX) + 1;
    R.pidmap = calloc(R.npidmap, sizeof *R.pidmap); /* pages of pids never seen stay untouched */
    R.sampling_meta = malloc(512);
    if (!R.pidmap || !R.sampling_meta ||
        mw_sample_fmt_from_attr(&R.attr, sizeof R.attr, &R.fmt)) {
        fprintf(stderr, "memwatch record: out of memory\n");
        att_run_free(&R);
        return 1;
    }
    char rate_note[160] = "";
    if (asked != R.cfg.rate)
        snprintf(rate_note, sizeof rate_note,
                 ", %lu samples/s (not %lu: a period of whole milliseconds keeps to one phase "
                 "of the scheduler tick)",
                 R.cfg.rate, asked);
    snprintf(R.sampling_meta, 512,
             "sampling=per-CPU: one cpu-clock event and ring per online CPU (%zu)%s, shared by "
             "every process (memwatch record --all); samples the kernel dropped from a full "
             "ring name no process and are counted machine-wide\n",
             R.ncpu, rate_note);
    struct sigaction old[3];
    att_signals(old, 1);
    static char meta[8192];
    att_probe_setup(&R, meta, sizeof meta);
    R.thr_meta = meta;
    if (!o->quiet) {
        char who[96];
        if (every)
            snprintf(who, sizeof who, "every process");
        else
            snprintf(who, sizeof who, "your processes (uid %ld; other users' need CAP_PERFMON)",
                     (long)getuid());
        fprintf(stderr,
                "memwatch: sampling %s per CPU: %zu cpu-clock event%s (one per online CPU, %lu "
                "samples/s), each with a ring of %u pages; a process gets its file at its first "
                "record; %s\n",
                who, R.ncpu, R.ncpu == 1 ? "" : "s", R.cfg.rate, R.ring_pages,
                o->duration_ns ? "detaching after the duration, Ctrl-C earlier"
                               : "Ctrl-C detaches");
    }
    uint64_t t0 = att_now(), start = t0;
    R.t_start = t0;
    for (size_t i = 0; i < R.ncpu; i++)
        ioctl(R.cpus[i].fd, PERF_EVENT_IOC_ENABLE, 0);
    uint64_t next = t0 + R.cfg.interval_ns;
    for (unsigned tick = 1;; tick++) {
        struct timespec ts = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !att_stop)
            ;
        uint64_t t1 = att_now();
        int last = att_stop || (o->duration_ns && t1 - start >= o->duration_ns);
        att_cpu_interval(&R, t0, t1, last, tick);
        if (last)
            break;
        t0 = t1;
        next += R.cfg.interval_ns;
        if (next < t1) /* fell behind (a loaded machine): no burst of short intervals */
            next = t1 + R.cfg.interval_ns;
    }
    if (R.cpu_lost)
        fprintf(stderr,
                "memwatch record --all: %llu samples were lost from full CPU rings (of %u pages; "
                "whose is not known: META sampling of each file recorded meanwhile says how "
                "many)\n",
                (unsigned long long)R.cpu_lost, R.ring_pages);
    if (!o->quiet) {
        if (att_stop)
            fprintf(stderr, "memwatch: detached (SIG%s); ",
                    sigabbrev_np(att_stop) ? sigabbrev_np(att_stop) : "?");
        else
            fprintf(stderr, "memwatch: ");
        fprintf(stderr, "%zu process%s recorded per CPU, %zu of them ended meanwhile", R.files,
                R.files == 1 ? "" : "es", R.files_ended);
        if (R.cpu_throttled)
            fprintf(stderr, "; the kernel throttled the CPU events %llu times",
                    (unsigned long long)R.cpu_throttled);
        if (R.cpu_foreign)
            fprintf(stderr, "; %llu records of tasks outside memwatch's pid namespace left out",
                    (unsigned long long)R.cpu_foreign);
        fputc('\n', stderr);
    }
    att_signals(old, 0);
    att_run_free(&R);
    return 0;
}

int mw_attach_pids(const pid_t *pids, size_t n, const mw_attach_opts *o)
{
    if (o->all) {
        int rc = att_cpu_run(o);
        if (rc != ATT_CPU_FALLBACK)
            return rc;
    }
    struct att_run R;
    if (att_run_init(&R, o)) {
        fprintf(stderr, "memwatch record: out of memory\n");
        return 1;
    }
    R.t = calloc(n, sizeof *R.t);
    if (!R.t) {
        att_run_free(&R);
        return 1;
    }
    R.cap = n;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < i; k++)
            if (pids[i] == pids[k]) {
                fprintf(stderr, "memwatch record: -p %ld is given twice\n", (long)pids[i]);
                att_run_free(&R);
                return 2;
            }
    struct sigaction sa, old[3];
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = att_on_signal;
    sigemptyset(&sa.sa_mask);
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (int k = 0; k < 3; k++)
        sigaction(sigs[k], &sa, &old[k]);
    R.t_start = att_now();
    int failed = 0;
    for (size_t i = 0; i < n && !att_stop; i++) {
        if (att_target_attach(&R, &R.t[R.n], pids[i], 0)) {
            att_target_clear(&R.t[R.n]);
            if (o->all)
                continue;
            failed = 1;
            break;
        }
        R.n++;
    }
    if (!R.n && !failed && !att_stop) {
        fprintf(stderr, "memwatch record: no process could be attached\n");
        failed = 1;
    }
    if (failed || att_stop) {
        /* no half runs: what was attached is let go, its file removed */
        for (size_t i = 0; i < R.n; i++) {
            for (size_t k = 0; k < R.t[i].nthr; k++)
                att_thr_close(&R.t[i].thr[k]);
            if (R.t[i].fd >= 0) {
                close(R.t[i].fd);
                unlink(R.t[i].path);
            }
        }
        for (int k = 0; k < 3; k++)
            sigaction(sigs[k], &old[k], NULL);
        att_run_free(&R);
        return 1;
    }
    char meta[8192];
    att_probe_setup(&R, meta, sizeof meta);
    R.thr_meta = meta;
    for (size_t i = 0; i < R.n; i++) {
        att_meta_threshold(&R, &R.t[i], meta);
        att_flush(&R.t[i]);
        if (!o->quiet) {
            size_t nt = 0;
            for (size_t k = 0; k < R.t[i].nthr; k++)
                nt += R.t[i].thr[k].fd >= 0;
            char cmd[200];
            att_proc_line(R.t[i].pid, "comm", cmd, sizeof cmd);
            fprintf(stderr, "memwatch: attached to pid %ld (%s), %zu thread%s; %s\n",
                    (long)R.t[i].pid, cmd, nt, nt == 1 ? "" : "s",
                    o->duration_ns ? "detaching after the duration, Ctrl-C earlier"
                                   : "Ctrl-C detaches");
        }
    }
    att_loop(&R, 0, NULL, NULL);
    if (!o->quiet && att_stop)
        fprintf(stderr, "memwatch: detached (SIG%s); the process%s run%s on\n",
                sigabbrev_np(att_stop) ? sigabbrev_np(att_stop) : "?", R.n > 1 ? "es" : "",
                R.n > 1 ? "" : "s");
    for (int k = 0; k < 3; k++)
        sigaction(sigs[k], &old[k], NULL);
    att_run_free(&R);
    return 0;
}

size_t mw_attach_list_pids(pid_t *pids, size_t cap, int any_user)
{
    DIR *d = opendir("/proc");
    size_t n = 0;
    struct dirent *e;
    pid_t self = getpid(), parent = getppid();
    while (d && (e = readdir(d)) && n < cap) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        pid_t p = (pid_t)strtol(e->d_name, NULL, 10);
        if (p == self || p == parent || (!any_user && att_uid_of(p) != getuid()))
            continue;
        char exe[64], t[8];
        snprintf(exe, sizeof exe, "/proc/%ld/exe", (long)p);
        if (readlink(exe, t, sizeof t) <= 0) /* kernel threads have no executable */
            continue;
        char st = 0;
        if (att_stat(p, &st, NULL, NULL, NULL) || st == 'Z')
            continue;
        pids[n++] = p;
    }
    if (d)
        closedir(d);
    return n;
}

int mw_attach_spawn(const char *exe, char *const argv[], const mw_attach_opts *o,
                    void (*started)(pid_t pid), const void *sigmask, int own_group,
                    int *wstatus, struct rusage *ru)
{
    struct att_run R;
    *wstatus = 126 << 8;
    if (att_run_init(&R, o)) {
        fprintf(stderr, "memwatch record: out of memory\n");
        return -1;
    }
    /* the exec maps a non-PIE executable where the kernel's MMAP2 records
     * give no load bias (file offset != address): the modules come from
     * /proc/PID/maps with the ELF headers instead */
    R.attr.mmap = 0;
    R.attr.mmap2 = 0;
    int go[2], err[2];
    if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
        fprintf(stderr, "memwatch record: pipe: %s\n", strerror(errno));
        att_run_free(&R);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "memwatch record: cannot run %s: fork: %s\n", exe, strerror(errno));
        att_run_free(&R);
        return -1;
    }
    if (pid == 0) {
        /* the child: wait for the samplers, then exec (only
         * async-signal-safe calls here) */
        close(go[1]);
        close(err[0]);
        if (own_group)
            setpgid(0, 0);
        if (sigmask)
            sigprocmask(SIG_SETMASK, (const sigset_t *)sigmask, NULL);
        char c;
        while (read(go[0], &c, 1) < 0 && errno == EINTR)
            ;
        execve(exe, argv, environ);
        int e = errno;
        (void)!write(err[1], &e, sizeof e);
        _exit(127);
    }
    close(go[0]);
    close(err[1]);
    if (started)
        started(pid);
    R.t = calloc(1, sizeof *R.t);
    struct att_tgt *t = R.t;
    int rc = -ENOMEM;
    if (t) {
        R.n = R.cap = 1;
        t->pid = pid;
        t->fd = t->lock_fd = -1;
        t->child = 1;
        snprintf(t->exe, sizeof t->exe, "%s", exe);
        struct stat xs;
        if (stat(exe, &xs) == 0) {
            t->exe_dev = xs.st_dev;
            t->exe_ino = xs.st_ino;
        }
        att_stat(pid, NULL, &t->starttime, t->cpu0_ticks, t->flt0);
        t->thr = calloc(1, sizeof *t->thr);
        t->cap = t->thr ? 1 : 0;
        rc = t->thr ? att_thr_open(&R, &t->thr[0], pid, 1) : -ENOMEM;
    }
    int profiled = rc == 0;
    if (profiled) {
        t->nthr = 1;
        R.t_start = att_now();
        if (att_file_open(&R, t)) {
            att_thr_close(&t->thr[0]);
            profiled = 0;
        }
    } else {
        char why[600];
        att_explain(-rc, pid, why, sizeof why);
        fprintf(stderr, "memwatch record: cannot sample %s from outside: %s; running it "
                        "unprofiled\n", exe, why);
    }
    /* let it exec: its sampler switches on at the exec (enable_on_exec) */
    (void)!write(go[1], "g", 1);
    close(go[1]);
    int e = 0;
    ssize_t got;
    while ((got = read(err[0], &e, sizeof e)) < 0 && errno == EINTR)
        ;
    close(err[0]);
    if (got == (ssize_t)sizeof e) {
        fprintf(stderr, "memwatch record: cannot run %s: %s\n", exe, strerror(e));
        while (wait4(pid, wstatus, 0, ru) < 0 && errno == EINTR)
            ;
        *wstatus = 126 << 8;
        if (profiled) {
            close(t->fd);
            unlink(t->path);
            att_thr_close(&t->thr[0]);
        }
        att_run_free(&R);
        return -1;
    }
    if (!profiled) {
        while (wait4(pid, wstatus, 0, ru) < 0 && errno == EINTR)
            ;
        att_run_free(&R);
        return 1;
    }
    uint64_t now = att_now();
    att_meta_start(&R, t, "static: memwatch record started it (no dynamic loader, so no "
                          "LD_PRELOAD)", R.t_start);
    att_thread_rec(t, pid, MWR_THREAD_START, now);
    char meta[8192];
    att_probe_setup(&R, meta, sizeof meta);
    R.thr_meta = meta;
    att_meta_threshold(&R, t, meta);
    att_flush(t);
    /* modules from /proc/PID/maps once the exec is through (the first
     * interval that finds the new image) */
    att_loop(&R, pid, wstatus, ru);
    att_run_free(&R);
    return 0;
}
