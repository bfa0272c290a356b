/*
 * cli/neighbours.c: memwatch record's load sampler (cli/neighbours.h).
 *
 * Owns: the sampler thread and its load file. From 250 ms after the program
 * started (NB_FIRST_NS), every 250 ms (a slot; longer where a scan costs
 * more than 1 % of the slot in CPU time) it reads
 * /proc/stat (the machine's busy and stolen CPU time) and /proc/PID/stat of
 * every process (CPU time, children's CPU time, page faults, parent, start
 * time; the descriptors stay open from scan to scan), classifies each
 * process as the recorded tree (the program, and every process whose parent
 * chain leads to it or that was in the tree before: orphans stay), memwatch
 * record itself, or outside, reads the tree's threads' time waiting for a
 * CPU (/proc/PID/task/TID/schedstat), and writes one MWR_LOAD record per
 * slot (include/memwatch/mwr_load.h), 16 slots per write.
 *
 * The tree's CPU time is counted inclusively: the sum over the tree's
 * processes of their own and their reaped children's time (utime + stime +
 * cutime + cstime), so that a child that lived between two scans still
 * counts when its parent reaps it. A child reaped after the scan read its
 * parent but before it read the child leaves the sum short for one slot:
 * that is carried into the next slot, never made negative.
 *
 * Outside processes that used CPU in a slot are looked at once (per pid,
 * start time and name) in /proc/PID/environ: one whose MEMWATCH_RUN_ID is
 * this run's belongs to the run (another memwatch record of the same job)
 * and is counted apart; LD_PRELOAD naming libmemwatch.so marks it recorded.
 * The tree's environment and memory are never read; nothing is signalled or
 * traced.
 *
 * Calls: libc, pthreads. Threading: one sampler thread per mw_nb; mw_nb_start
 * and mw_nb_stop on the thread that owns it.
 */
#include "neighbours.h"
#include "procstat.h"

#include <memwatch/meta_keys.h>
#include <memwatch/mwr.h>
#include <memwatch/mwr_frame.h>
#include <memwatch/mwr_load.h>
#include <memwatch/profile.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NB_PERIOD_NS 250000000ull /* a slot, at least */
#define NB_COST_RATIO 100         /* a slot lasts at least 100 x its scan's CPU time: */
                                  /* the sampler takes at most 1 % of one CPU */
#define NB_PERIOD_MAX_NS 10000000000ull
#define NB_FIRST_NS NB_PERIOD_NS /* the first scan waits one slot: a program */
                                 /* shorter than that, which could get no slot */
                                 /* (two scans a slot apart), costs no scan */
#define NB_BATCH 16      /* slots per write (4 s) */
#define NB_ENV_MAX 65536 /* bytes of an environment looked at */
#define NB_DEPTH 256     /* parent chain followed at most */

enum nb_class { NB_UNKNOWN, NB_TREE, NB_OUT, NB_OWN };
enum nb_env { NB_ENV_DONE = 1, NB_ENV_RUN = 2, NB_ENV_RECORDED = 4 };

/* One process of a scan. */
typedef struct nb_proc {
    int32_t pid, ppid;
    uint64_t start;  /* start time (clock ticks after boot): with pid, its identity */
    uint64_t cpu;    /* utime + stime, clock ticks */
    uint64_t incl;   /* cpu + cutime + cstime: with the children it reaped */
    uint64_t faults; /* minflt + majflt + cminflt + cmajflt */
    uint64_t wait;   /* tree processes: its threads' run_delay (ns runnable, not running) */
    char comm[16];
    uint8_t cls; /* enum nb_class */
    uint8_t env; /* enum nb_env bits; 0: not looked at */
    int fd;      /* its /proc/PID/stat kept open for the next scan, or -1 */
} nb_proc;

/* One scan of the machine, its processes sorted by pid. */
typedef struct nb_scan {
    nb_proc *v;
    size_t n, cap;
    uint64_t t_ns; /* CLOCK_MONOTONIC when /proc/stat was read */
    uint64_t busy; /* /proc/stat ticks: user nice system irq softirq, all CPUs */
    uint64_t steal;
} nb_scan;

#define NB_REC_MAX (sizeof(mwr_rec_hdr) + sizeof(mwr_load) + MWR_LOAD_TOP * sizeof(mwr_load_proc))

struct mw_nb {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;       /* under mu: mw_nb_stop asked */
    int fd;         /* the load file; -1 before it was made or once a write failed */
    int open_tried; /* made (or tried) at the first write: no slot, no file */
    char dir[PATH_MAX], path[PATH_MAX + 256];
    mode_t mode;
    uint64_t start_mono, start_real; /* when the sampler started (CLOCK_MONOTONIC, REALTIME) */
    pid_t root, self;
    char run[64];
    long tck;           /* clock ticks per second */
    int nfds, maxfds;   /* /proc/PID/stat descriptors kept open, and at most */
    nb_scan a, b;       /* the previous and the current scan */
    int64_t tree_carry; /* tree ticks counted short in an earlier slot (<= 0) */
    unsigned char out[NB_BATCH * NB_REC_MAX];
    size_t olen;
    uint64_t slots, scans;
    uint64_t cpu_ns;      /* the sampler thread's CPU time, at its end */
    char note[256];       /* the first failure */
    char env[NB_ENV_MAX]; /* one process's environment */
};

static uint64_t nb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void nb_note(mw_nb *nb, const char *what, int err)
{
    if (!nb->note[0])
        snprintf(nb->note, sizeof nb->note, "%.200s: %s", what, strerror(err));
}

/* ---- the load file ---- */

/* Writes all of buf, or closes the file and notes why (no more writes). */
static void nb_write(mw_nb *nb, const void *buf, size_t len)
{
    const char *p = buf;
    while (nb->fd >= 0 && len) {
        ssize_t w = write(nb->fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            nb_note(nb, "writing the load file", w < 0 ? errno : ENOSPC);
            close(nb->fd);
            nb->fd = -1;
            return;
        }
        p += w;
        len -= (size_t)w;
    }
}

static int nb_open(mw_nb *nb);

/* Writes the slots gathered, making the file first. */
static void nb_flush(mw_nb *nb)
{
    if (!nb->open_tried && nb->olen) {
        nb->open_tried = 1;
        int e = nb_open(nb);
        if (e)
            nb_note(nb, nb->path[0] ? nb->path : nb->dir, -e);
    }
    if (nb->olen)
        nb_write(nb, nb->out, nb->olen);
    nb->olen = 0;
}

static void nb_meta(mw_nb *nb, const char *text, size_t n)
{
    unsigned char rec[4096 + 16];
    if (n > 4096)
        n = 4096;
    nb_write(nb, rec, mwr_frame(rec, MWR_META, text, n, NULL, 0));
}

/* Creates the file (nb->dir, nb->mode: O_EXCL, never through a link) and
 * writes its header and first META. 0 or -errno. */
static int nb_open(mw_nb *nb)
{
    char host[65], run[64];
    mw_host_name(host, sizeof host); /* as libmemwatch.so names it */
    snprintf(run, sizeof run, "%s", nb->run);
    for (char *p = run; *p; p++) /* a file name, whatever the run id holds */
        if (*p == '/' || *p == '\n')
            *p = '_';
    if (snprintf(nb->path, sizeof nb->path, "%s/memwatch-%s-%s-load-%ld.mwl", nb->dir, host, run,
                 (long)nb->self) >= (int)sizeof nb->path)
        return -ENAMETOOLONG;
    nb->fd = open(nb->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, nb->mode);
    if (nb->fd < 0)
        return -errno;
    (void)fchmod(nb->fd, nb->mode); /* whatever the umask */
    mwr_file_header fh;
    mwr_file_header_init(&fh);
    nb_write(nb, &fh, sizeof fh);
    char m[1024];
    int n = snprintf(m, sizeof m,
                     "%s=%u.%u\n%s=%s\n%s=memwatch record\n%s=load\n%s=%d\n%s=CLOCK_MONOTONIC\n"
                     "%s=%s\n%s=%s\n%s=%llu\n%s=%llu\n%s=%ld\n%s=%ld\n%s=%llu\n%s=%ld\n%s=%ld\n",
                     mw_meta_key(MW_META_FORMAT), MWR_VERSION_MAJOR, MWR_VERSION_MINOR,
                     mw_meta_key(MW_META_MEMWATCH_VERSION), MW_VERSION,
                     mw_meta_key(MW_META_WRITER),
                     mw_meta_key(MW_META_CONTENT),
                     mw_meta_key(MW_META_LOAD_VERSION), MWR_LOAD_VERSION,
                     mw_meta_key(MW_META_CLOCK),
                     mw_meta_key(MW_META_HOST), host,
                     mw_meta_key(MW_META_RUN_ID), nb->run,
                     mw_meta_key(MW_META_START_MONOTONIC_NS), (unsigned long long)nb->start_mono,
                     mw_meta_key(MW_META_START_REALTIME_NS), (unsigned long long)nb->start_real,
                     mw_meta_key(MW_META_RECORD_PID), (long)nb->self,
                     mw_meta_key(MW_META_PROGRAM_PID), (long)nb->root,
                     mw_meta_key(MW_META_PERIOD_NS), NB_PERIOD_NS,
                     mw_meta_key(MW_META_NCPUS), sysconf(_SC_NPROCESSORS_ONLN),
                     mw_meta_key(MW_META_CLK_TCK), nb->tck);
    nb_meta(nb, m, n > 0 && (size_t)n < sizeof m ? (size_t)n : 0);
    return nb->fd >= 0 ? 0 : -EIO;
}

/* ---- reading /proc ---- */

/* The first line of /proc/stat into s->busy and s->steal. 0 or -errno. */
static int nb_read_cpu(nb_scan *s)
{
    char buf[512];
    int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    int e = errno;
    close(fd);
    if (n <= 0)
        return n < 0 ? -e : -EIO;
    buf[n] = 0;
    unsigned long long v[8] = {0};
    if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
               &v[4], &v[5], &v[6], &v[7]) < 7)
        return -EIO;
    /* user nice system idle iowait irq softirq steal; guest time is in user */
    s->busy = v[0] + v[1] + v[2] + v[5] + v[6];
    s->steal = v[7];
    return 0;
}

/* Parses a /proc/PID/stat line. 0, or -1 when it is not one. */
static int nb_parse_stat(const char *buf, nb_proc *p)
{
    mw_procstat ps;
    if (mw_procstat_parse(buf, &ps))
        return -1;
    memcpy(p->comm, ps.comm, sizeof p->comm);
    p->pid = ps.pid;
    p->ppid = ps.ppid;
    p->faults = ps.minflt + ps.cminflt + ps.majflt + ps.cmajflt;
    p->cpu = ps.utime + ps.stime;
    p->incl = p->cpu + ps.cutime + ps.cstime;
    p->start = ps.start;
    p->wait = 0;
    p->cls = NB_UNKNOWN;
    p->env = 0;
    return 0;
}

static void nb_close(mw_nb *nb, int *fd)
{
    if (*fd < 0)
        return;
    close(*fd);
    *fd = -1;
    nb->nfds--;
}

/* /proc/PID/stat of one process (name: the PID's directory) into p,
 * through fd (its descriptor from the last scan, or -1) where it still
 * reads: a descriptor of a process that ended reads nothing (ESRCH), even
 * where its pid was taken again, and is then opened anew. p->fd is the
 * descriptor kept for the next scan (-1: none, past maxfds). 0, or -1 when
 * the process ended meanwhile or cannot be read. */
static int nb_read_proc(mw_nb *nb, int procfd, const char *name, int fd, nb_proc *p)
{
    char path[64], buf[1024];
    ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
    if (n <= 0) {
        nb_close(nb, &fd);
        snprintf(path, sizeof path, "%s/stat", name);
        if ((fd = openat(procfd, path, O_RDONLY | O_CLOEXEC)) < 0)
            return -1;
        nb->nfds++;
        n = read(fd, buf, sizeof buf - 1);
    }
    if (n <= 0 || nb->nfds > nb->maxfds)
        nb_close(nb, &fd);
    p->fd = -1;
    if (n <= 0)
        return -1;
    buf[n] = 0;
    if (nb_parse_stat(buf, p)) {
        nb_close(nb, &fd);
        return -1;
    }
    p->fd = fd;
    return 0;
}

static int nb_cmp_pid(const void *a, const void *b)
{
    const nb_proc *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

static nb_proc *nb_find(const nb_scan *s, int32_t pid)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->v[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && s->v[lo].pid == pid ? &s->v[lo] : NULL;
}

/* The same process in the earlier scan (pid and start time), or NULL. */
static const nb_proc *nb_same(const nb_scan *prev, const nb_proc *p)
{
    const nb_proc *q = nb_find(prev, p->pid);
    return q && q->start == p->start ? q : NULL;
}

/* Closes the descriptors a scan still holds. */
static void nb_scan_close(mw_nb *nb, nb_scan *s)
{
    for (size_t i = 0; i < s->n; i++)
        nb_close(nb, &s->v[i].fd);
}

/* Every process of /proc into s, sorted by pid, reading each through the
 * descriptor prev kept for it (handed over to s); prev's others (processes
 * that ended) are closed. 0, or -errno. */
static int nb_scan_procs(mw_nb *nb, DIR *proc, nb_scan *prev, nb_scan *s)
{
    nb_scan_close(nb, s); /* a scan that failed part way */
    s->n = 0;
    rewinddir(proc);
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(proc))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        if (s->n == s->cap) {
            size_t nc = s->cap ? 2 * s->cap : 512;
            nb_proc *nv = realloc(s->v, nc * sizeof *nv);
            if (!nv) {
                rc = -ENOMEM;
                break;
            }
            s->v = nv;
            s->cap = nc;
        }
        nb_proc *q = nb_find(prev, (int32_t)atoi(e->d_name));
        int fd = q ? q->fd : -1;
        if (q)
            q->fd = -1; /* handed over */
        if (nb_read_proc(nb, dirfd(proc), e->d_name, fd, &s->v[s->n]) == 0)
            s->n++;
    }
    nb_scan_close(nb, prev);
    qsort(s->v, s->n, sizeof *s->v, nb_cmp_pid); /* /proc lists by pid: already in order */
    return rc;
}

/* ---- who is who ---- */

/* A process's class where it does not follow from its parent's; 0 where it
 * does. */
static uint8_t nb_class_own(const mw_nb *nb, const nb_scan *prev, const nb_proc *p)
{
    if (p->pid == nb->root)
        return NB_TREE;
    if (p->pid == nb->self)
        return NB_OWN;
    const nb_proc *q = nb_same(prev, p);
    if (q && q->cls == NB_TREE) /* in the tree before: an orphan stays in it */
        return NB_TREE;
    return 0;
}

/* Classifies every process of cur: its own class, else its parent's tree
 * membership, following the parent chain (at most NB_DEPTH steps). */
static void nb_classify(const mw_nb *nb, const nb_scan *prev, nb_scan *cur)
{
    size_t path[NB_DEPTH];
    for (size_t i = 0; i < cur->n; i++) {
        size_t depth = 0, k = i;
        uint8_t c = NB_OUT;
        while (!(c = cur->v[k].cls)) {
            uint8_t own = nb_class_own(nb, prev, &cur->v[k]);
            if (own) {
                c = cur->v[k].cls = own;
                break;
            }
            const nb_proc *par = cur->v[k].ppid > 0 ? nb_find(cur, cur->v[k].ppid) : NULL;
            if (!par || depth == NB_DEPTH) {
                c = cur->v[k].cls = NB_OUT;
                break;
            }
            path[depth++] = k;
            k = (size_t)(par - cur->v);
        }
        uint8_t inherit = c == NB_TREE ? NB_TREE : NB_OUT;
        while (depth)
            cur->v[path[--depth]].cls = inherit;
    }
}

/* What an outside process's environment says: this run (MEMWATCH_RUN_ID),
 * recorded (libmemwatch.so in LD_PRELOAD). Read once per process. */
static uint8_t nb_env_of(mw_nb *nb, int procfd, int32_t pid)
{
    char path[32];
    snprintf(path, sizeof path, "%d/environ", (int)pid);
    int fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NB_ENV_DONE; /* another user's, or ended */
    size_t len = 0;
    ssize_t r;
    while (len < sizeof nb->env - 1 && (r = read(fd, nb->env + len, sizeof nb->env - 1 - len)) > 0)
        len += (size_t)r;
    close(fd);
    nb->env[len] = 0;
    uint8_t env = NB_ENV_DONE;
    for (size_t i = 0; i < len; i += strlen(nb->env + i) + 1) {
        const char *v = nb->env + i;
        if (!strncmp(v, "MEMWATCH_RUN_ID=", 16) && !strcmp(v + 16, nb->run))
            env |= NB_ENV_RUN;
        else if (!strncmp(v, "LD_PRELOAD=", 11) && strstr(v + 11, "libmemwatch.so"))
            env |= NB_ENV_RECORDED;
    }
    return env;
}

/* The time p's threads were runnable but waited for a CPU (the second
 * field of /proc/PID/task/TID/schedstat, ns), summed: what tells a program
 * that is idle from one that other processes keep off the CPUs. Threads
 * that ended took theirs with them. */
static uint64_t nb_wait_of(int procfd, int32_t pid)
{
    char path[48];
    snprintf(path, sizeof path, "%d/task", (int)pid);
    int tfd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = tfd >= 0 ? fdopendir(tfd) : NULL;
    if (!d) {
        if (tfd >= 0)
            close(tfd);
        return 0;
    }
    uint64_t w = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char sp[300], buf[128];
        snprintf(sp, sizeof sp, "%s/schedstat", e->d_name);
        int fd = openat(dirfd(d), sp, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        unsigned long long run, delay;
        if (n > 0 && (buf[n] = 0, sscanf(buf, "%llu %llu", &run, &delay) == 2))
            w += delay;
    }
    closedir(d);
    return w;
}

/* ---- one slot ---- */

static uint32_t nb_mcpu(const mw_nb *nb, uint64_t ticks, uint64_t dt_ns)
{
    double c = (double)ticks * 1e9 / (double)nb->tck / (double)dt_ns * 1000.0 + 0.5;
    return c > 4e9 ? 4000000000u : (uint32_t)c;
}

/* The tree's time waiting for a CPU over the slot, ns: each tree process's
 * threads' run_delay now less before (never below 0: threads that ended). */
static uint64_t nb_tree_wait(int procfd, const nb_scan *prev, nb_scan *cur)
{
    uint64_t w = 0;
    for (size_t i = 0; i < cur->n; i++) {
        nb_proc *p = &cur->v[i];
        if (p->cls != NB_TREE)
            continue;
        p->wait = nb_wait_of(procfd, p->pid);
        const nb_proc *q = nb_same(prev, p);
        uint64_t before = q ? q->wait : 0;
        w += p->wait > before ? p->wait - before : 0;
    }
    return w;
}

/* The tree's inclusive ticks in scan s, and its page faults. */
static uint64_t nb_tree_sum(const nb_scan *s, uint64_t *faults)
{
    uint64_t t = 0;
    *faults = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].cls == NB_TREE) {
            t += s->v[i].incl;
            *faults += s->v[i].faults;
        }
    return t;
}

/* Ticks of the tree's processes of prev that are gone from cur without
 * being reaped into the tree (the program itself, or an orphan whose parent
 * was outside the tree): their time left the sum with them and is added
 * back. */
static uint64_t nb_tree_kept(const mw_nb *nb, const nb_scan *prev, const nb_scan *cur)
{
    uint64_t kept = 0;
    for (size_t i = 0; i < prev->n; i++) {
        const nb_proc *p = &prev->v[i];
        if (p->cls != NB_TREE || nb_same(cur, p))
            continue;
        const nb_proc *par = nb_find(prev, p->ppid);
        if (p->pid == nb->root || !par || par->cls != NB_TREE)
            kept += p->incl; /* not reaped into the tree's cutime */
    }
    return kept;
}

/* Puts p among the busiest (top, n of them, busiest first). */
static void nb_top_add(mwr_load_proc *top, uint32_t *n, const nb_proc *p, uint32_t mcpu)
{
    uint32_t k = *n < MWR_LOAD_TOP ? (*n)++ : MWR_LOAD_TOP;
    while (k > 0 && top[k - 1].mcpu < mcpu) {
        if (k < MWR_LOAD_TOP)
            top[k] = top[k - 1];
        k--;
    }
    if (k >= MWR_LOAD_TOP)
        return;
    memset(&top[k], 0, sizeof top[k]);
    top[k].pid = (uint32_t)p->pid;
    top[k].ppid = (uint32_t)p->ppid;
    top[k].mcpu = mcpu;
    top[k].flags = p->env & NB_ENV_RECORDED ? MWR_LOAD_RECORDED : 0;
    memcpy(top[k].comm, p->comm, sizeof top[k].comm);
}

/* The processes outside: their environments looked at once, this run's
 * summed into run_mcpu, the busiest others into top. */
static void nb_outside(mw_nb *nb, int procfd, const nb_scan *prev, nb_scan *cur, uint64_t dt,
                       mwr_load *l, mwr_load_proc *top)
{
    uint64_t run = 0;
    for (size_t i = 0; i < cur->n; i++) {
        nb_proc *p = &cur->v[i];
        const nb_proc *q = nb_same(prev, p);
        if (p->cls == NB_OWN && q) {
            l->own_mcpu = nb_mcpu(nb, p->cpu - q->cpu, dt);
            continue;
        }
        if (p->cls != NB_OUT)
            continue;
        uint64_t d = q ? (p->cpu > q->cpu ? p->cpu - q->cpu : 0) : p->cpu;
        if (q && !strcmp(q->comm, p->comm)) /* the same image: looked at before */
            p->env = q->env;
        if (!d)
            continue;
        if (!p->env)
            p->env = nb_env_of(nb, procfd, p->pid);
        if (p->env & NB_ENV_RUN)
            run += d;
        else
            nb_top_add(top, &l->ntop, p, nb_mcpu(nb, d, dt));
    }
    l->run_mcpu = nb_mcpu(nb, run, dt);
}

/* One MWR_LOAD record for the slot from prev to cur, into the batch. */
static void nb_slot(mw_nb *nb, int procfd, const nb_scan *prev, nb_scan *cur)
{
    uint64_t dt = cur->t_ns > prev->t_ns ? cur->t_ns - prev->t_ns : 1;
    mwr_load l;
    mwr_load_proc top[MWR_LOAD_TOP];
    memset(&l, 0, sizeof l);
    memset(top, 0, sizeof top);
    l.t_start_ns = prev->t_ns;
    l.t_end_ns = cur->t_ns;
    l.top_offset = sizeof l;
    l.top_size = sizeof *top;
    l.busy_mcpu = nb_mcpu(nb, cur->busy > prev->busy ? cur->busy - prev->busy : 0, dt);
    l.steal_mcpu = nb_mcpu(nb, cur->steal > prev->steal ? cur->steal - prev->steal : 0, dt);
    uint64_t fp, fc;
    uint64_t tp = nb_tree_sum(prev, &fp);
    uint64_t tc = nb_tree_sum(cur, &fc) + nb_tree_kept(nb, prev, cur);
    int64_t d = (int64_t)(tc - tp) + nb->tree_carry;
    nb->tree_carry = d < 0 ? d : 0;
    l.tree_mcpu = nb_mcpu(nb, d > 0 ? (uint64_t)d : 0, dt);
    l.tree_faults = fc > fp ? (uint32_t)(fc - fp > UINT32_MAX ? UINT32_MAX : fc - fp) : 0;
    l.nprocs = (uint32_t)cur->n;
    double w = (double)nb_tree_wait(procfd, prev, cur) / (double)dt * 1000.0 + 0.5;
    l.tree_wait_mcpu = w > 4e9 ? 4000000000u : (uint32_t)w;
    nb_outside(nb, procfd, prev, cur, dt, &l, top);
    if (nb->olen + NB_REC_MAX > sizeof nb->out)
        nb_flush(nb);
    nb->olen +=
        mwr_frame(nb->out + nb->olen, MWR_LOAD, &l, sizeof l, top, l.ntop * sizeof(mwr_load_proc));
    nb->slots++;
    if (nb->slots % NB_BATCH == 0)
        nb_flush(nb);
}

/* ---- the thread ---- */

/* One scan: the machine's CPU time, then every process, classified. */
static int nb_take(mw_nb *nb, DIR *proc, nb_scan *prev, nb_scan *cur)
{
    cur->t_ns = nb_now();
    int e = nb_read_cpu(cur);
    if (e) {
        nb_note(nb, "/proc/stat", -e);
        return e;
    }
    if ((e = nb_scan_procs(nb, proc, prev, cur))) {
        nb_note(nb, "/proc", -e);
        return e;
    }
    nb_classify(nb, prev, cur);
    nb->scans++;
    return 0;
}

/* Sleeps until deadline (CLOCK_MONOTONIC ns). 1 when asked to stop. */
static int nb_wait(mw_nb *nb, uint64_t deadline)
{
    struct timespec ts = {(time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull)};
    pthread_mutex_lock(&nb->mu);
    while (!nb->stop && pthread_cond_timedwait(&nb->cv, &nb->mu, &ts) != ETIMEDOUT)
        ;
    int stop = nb->stop;
    pthread_mutex_unlock(&nb->mu);
    return stop;
}

static uint64_t nb_thread_cpu(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The next slot's length: NB_PERIOD_NS, or NB_COST_RATIO times the CPU time
 * the last scan took where that is longer (a machine of thousands of
 * processes), at most NB_PERIOD_MAX_NS. */
static uint64_t nb_period(uint64_t scan_cpu_ns)
{
    uint64_t p = scan_cpu_ns * NB_COST_RATIO;
    return p < NB_PERIOD_NS ? NB_PERIOD_NS : p > NB_PERIOD_MAX_NS ? NB_PERIOD_MAX_NS : p;
}

static void *nb_main(void *arg)
{
    mw_nb *nb = arg;
    DIR *proc = opendir("/proc");
    if (!proc) {
        nb_note(nb, "/proc", errno);
        return NULL;
    }
    nb_scan *prev = &nb->a, *cur = &nb->b;
    if (nb_wait(nb, nb_now() + NB_FIRST_NS)) { /* the program ended before it */
        closedir(proc);
        nb->cpu_ns = nb_thread_cpu();
        return NULL;
    }
    uint64_t c0 = nb_thread_cpu();
    int have = nb_take(nb, proc, cur, prev) == 0; /* the first scan: no earlier one (empty) */
    uint64_t period = nb_period(nb_thread_cpu() - c0);
    uint64_t next = nb_now() + period;
    while (!nb_wait(nb, next)) {
        c0 = nb_thread_cpu();
        if (nb_take(nb, proc, prev, cur) == 0) {
            if (have)
                nb_slot(nb, dirfd(proc), prev, cur);
            nb_scan *t = prev;
            prev = cur;
            cur = t;
            have = 1;
        }
        period = nb_period(nb_thread_cpu() - c0);
        uint64_t now = nb_now();
        next += period;
        if (next <= now) /* a slot was missed (the machine stalled): start again from now */
            next = now + period;
    }
    nb_scan_close(nb, prev);
    nb_scan_close(nb, cur);
    closedir(proc);
    nb->cpu_ns = nb_thread_cpu();
    return NULL;
}

mw_nb *mw_nb_start(const char *dir, const char *run, pid_t root, mode_t mode)
{
    mw_nb *nb = calloc(1, sizeof *nb);
    if (!nb) {
        fprintf(stderr, "memwatch record: no load sampler: %s\n", strerror(ENOMEM));
        return NULL;
    }
    nb->fd = -1;
    nb->root = root;
    nb->self = getpid();
    nb->tck = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
    /* descriptors kept open between scans: half of what is left to record */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        nb->maxfds = rl.rlim_cur > 256 ? (int)((rl.rlim_cur - 128) / 2) : 0;
    else
        nb->maxfds = 4096;
    if (nb->maxfds > 16384)
        nb->maxfds = 16384;
    snprintf(nb->run, sizeof nb->run, "%s", run);
    snprintf(nb->dir, sizeof nb->dir, "%s", dir);
    nb->mode = mode;
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    nb->start_real = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
    nb->start_mono = nb_now();
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&nb->mu, NULL);
    pthread_cond_init(&nb->cv, &ca);
    pthread_condattr_destroy(&ca);
    sigset_t all, old;
    sigfillset(&all);
    /* the signals record passes on to the program stay with its main thread */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&nb->th, NULL, nb_main, nb);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) {
        fprintf(stderr, "memwatch record: no load sampler: %s\n", strerror(e));
        pthread_cond_destroy(&nb->cv);
        pthread_mutex_destroy(&nb->mu);
        free(nb);
        return NULL;
    }
    return nb;
}

void mw_nb_stop(mw_nb *nb)
{
    if (!nb)
        return;
    pthread_mutex_lock(&nb->mu);
    nb->stop = 1;
    pthread_cond_signal(&nb->cv);
    pthread_mutex_unlock(&nb->mu);
    pthread_join(nb->th, NULL);
    nb_flush(nb);
    char m[512];
    int n = snprintf(m, sizeof m, "%s=%llu\n%s=%llu\n%s=%llu\n%s=%llu\n%s%s%s%s",
                     mw_meta_key(MW_META_END_MONOTONIC_NS), (unsigned long long)nb_now(),
                     mw_meta_key(MW_META_SLOTS), (unsigned long long)nb->slots,
                     mw_meta_key(MW_META_SCANS), (unsigned long long)nb->scans,
                     mw_meta_key(MW_META_SAMPLER_CPU_NS), (unsigned long long)nb->cpu_ns,
                     nb->note[0] ? mw_meta_key(MW_META_NOTE) : "", nb->note[0] ? "=" : "",
                     nb->note, nb->note[0] ? "\n" : "");
    nb_meta(nb, m, n > 0 && (size_t)n < sizeof m ? (size_t)n : sizeof m - 1);
    if (nb->fd >= 0)
        close(nb->fd);
    if (nb->note[0])
        fprintf(stderr,
                "memwatch record: load sampler: %s; the load file is incomplete or "
                "missing\n",
                nb->note);
    pthread_cond_destroy(&nb->cv);
    pthread_mutex_destroy(&nb->mu);
    free(nb->a.v);
    free(nb->b.v);
    free(nb);
}
