/*
 * cli/monitor_procs.c: memwatch monitor's processes (cli/monitor.h): the
 * CPU time each process used during bound intervals, read from /proc.
 *
 While intervals are bound the loop reads /proc/PID/stat of every process
 * (utime + stime, start time, name) about once a second (MON_SCAN_EVERY_S),
 * and once more at the end of the bound phase: each process's CPU time
 * since the previous read, times the share of that time that was bound,
 * counts as used in bound intervals. The first read of a phase (no read in
 * the MON_SCAN_GAP_S before) is only the baseline. Outside bound phases
 * /proc is not read at all, so an idle or merely busy machine costs nothing
 * here. What is counted is CPU time spent
 * while memory was saturated, not memory instructions: a process that
 * computes beside a streaming one is counted too.
 *
 * Bounded: a table of MON_PROCS_MAX processes allocated once, indexed by a
 * hash of the pid rebuilt after each read; a process that finds the table
 * full of live processes is not remembered (counted in dropped); an exited
 * process stays MON_PROC_KEEP_S seconds, then makes room.
 *
 * May call: libc. Threading: called with the state's lock held.
 */
#include "monitor.h"
#include "procstat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define IDX_SLOTS 4096 /* hash slots, > 2 x MON_PROCS_MAX; -1 empty */

static int16_t procs_idx[IDX_SLOTS];

static unsigned idx_hash(int32_t pid)
{
    return ((uint32_t)pid * 2654435761u) >> 20; /* 12 bits */
}

static void idx_rebuild(const mon_procs *p)
{
    memset(procs_idx, 0xff, sizeof procs_idx);
    for (size_t i = 0; i < p->n; i++) {
        unsigned h = idx_hash(p->v[i].pid);
        while (procs_idx[h] >= 0)
            h = (h + 1) % IDX_SLOTS;
        procs_idx[h] = (int16_t)i;
    }
}

static mon_proc *idx_find(mon_procs *p, int32_t pid)
{
    for (unsigned h = idx_hash(pid);; h = (h + 1) % IDX_SLOTS) {
        int k = procs_idx[h];
        if (k < 0)
            return NULL;
        if (p->v[k].pid == pid)
            return &p->v[k];
    }
}

int mon_procs_init(mon_procs *p)
{
    memset(p, 0, sizeof *p);
    p->v = calloc(MON_PROCS_MAX, sizeof *p->v);
    p->cg = calloc(MON_CGROUPS_MAX, sizeof *p->cg);
    p->hz = sysconf(_SC_CLK_TCK);
    if (p->hz <= 0)
        p->hz = 100;
    idx_rebuild(p);
    if (p->v && p->cg)
        return 0;
    mon_procs_free(p);
    return -1;
}

void mon_procs_free(mon_procs *p)
{
    free(p->v);
    free(p->cg);
    p->v = NULL;
    p->cg = NULL;
    p->n = p->ncg = 0;
}

/* /proc/PID/stat: name, utime + stime and start time; 0, or -1 when the
 * process is gone or the line is not one. */
static int read_stat(int dfd, const char *pid, char *comm, uint64_t *ticks, uint64_t *start)
{
    char path[300];
    mw_procstat ps;
    snprintf(path, sizeof path, "%s/stat", pid);
    if (mw_procstat_read(dfd, path, &ps))
        return -1;
    memcpy(comm, ps.comm, sizeof ps.comm);
    *ticks = ps.utime + ps.stime;
    *start = ps.start;
    return 0;
}

/* The process's cgroup, by cli/procstat.c's rule (the unified hierarchy's
 * path, else the memory controller's, a path below the root first); "" when
 * unreadable. */
static void read_cgroup(int dfd, const char *pid, char *out, size_t n)
{
    char path[300], b[2048];
    out[0] = 0;
    snprintf(path, sizeof path, "%s/cgroup", pid);
    int fd = openat(dfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t r = read(fd, b, sizeof b - 1);
    close(fd);
    b[r > 0 ? r : 0] = 0;
    if (mw_procstat_cgroup(b, out, n))
        out[0] = 0;
}

/* The row of cgroup path in p->cg, added where new; -1 when the table is
 * full of cgroups with live processes. */
static int cg_row(mon_procs *p, const char *path)
{
    for (size_t i = 0; i < p->ncg; i++)
        if (!strcmp(p->cg[i].path, path)) {
            p->cg[i].gone = 0;
            return (int)i;
        }
    if (p->ncg == MON_CGROUPS_MAX)
        return -1;
    mon_cgroup *c = &p->cg[p->ncg];
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", path);
    return (int)p->ncg++;
}

/* After a read: a cgroup none of whose processes is tracked any more is
 * marked gone, and one gone for MON_PROC_KEEP_S leaves the table (its
 * series ends); the processes' rows follow the moves. */
static void cg_expire(mon_procs *p, double now_s)
{
    unsigned char used[MON_CGROUPS_MAX] = {0};
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i].cg >= 0)
            used[p->v[i].cg] = 1;
    int16_t to[MON_CGROUPS_MAX];
    size_t k = 0;
    for (size_t i = 0; i < p->ncg; i++) {
        mon_cgroup *c = &p->cg[i];
        if (!used[i] && c->gone == 0)
            c->gone = now_s;
        if (used[i])
            c->gone = 0;
        if (!used[i] && now_s - c->gone > MON_PROC_KEEP_S) {
            to[i] = -1;
            continue;
        }
        to[i] = (int16_t)k;
        if (k != i)
            p->cg[k] = *c;
        k++;
    }
    if (k == p->ncg)
        return;
    p->ncg = k;
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i].cg >= 0)
            p->v[i].cg = to[p->v[i].cg];
}

/* A user's name, from a small cache (the lookup may ask a directory
 * service: once per uid, not once per process). */
static void user_name(uint32_t uid, char *out, size_t n)
{
    static struct {
        uint32_t uid;
        int used;
        char name[32];
    } cache[16];
    static unsigned next;
    for (size_t i = 0; i < sizeof cache / sizeof cache[0]; i++)
        if (cache[i].used && cache[i].uid == uid) {
            snprintf(out, n, "%s", cache[i].name);
            return;
        }
    unsigned k = next++ % (sizeof cache / sizeof cache[0]);
    mw_procstat_user(uid, cache[k].name, sizeof cache[k].name);
    cache[k].uid = uid;
    cache[k].used = 1;
    snprintf(out, n, "%s", cache[k].name);
}

/* A slot for a new process: a free one, else the exited process that used
 * the least bound time; NULL when every slot holds a live process. */
static mon_proc *slot_new(mon_procs *p)
{
    if (p->n < MON_PROCS_MAX)
        return &p->v[p->n++];
    mon_proc *best = NULL;
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i].gone > 0 && (!best || p->v[i].bound < best->bound))
            best = &p->v[i];
    return best;
}

void mon_procs_scan(mon_procs *p, double share, double now_s)
{
    struct timespec c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    int consecutive = share > 0 && p->scan > 0;
    if (share > 1)
        share = 1;
    uint64_t prev = p->scan, cur = p->scan + 1;
    DIR *d = opendir("/proc");
    if (!d)
        return;
    int dfd = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid > INT32_MAX)
            continue;
        char comm[16];
        uint64_t ticks, start;
        if (read_stat(dfd, e->d_name, comm, &ticks, &start))
            continue;
        mon_proc *q = idx_find(p, (int32_t)pid);
        if (q && q->start == start) {
            if (consecutive && q->seen == prev && ticks >= q->last) {
                double add = (double)(ticks - q->last) * share;
                q->bound += add;
                if (q->cg >= 0)
                    p->cg[q->cg].bound += add;
            }
            q->last = ticks;
            q->seen = cur;
            q->gone = 0;
            if (strcmp(q->comm, comm)) /* exec */
                memcpy(q->comm, comm, sizeof q->comm);
            continue;
        }
        /* not known (or its pid was reused: the exited process's slot is
         * the new one's): this read is its baseline; idle processes are not
         * worth a slot while the table is full */
        int fresh = !q;
        if (!q && p->n >= MON_PROCS_MAX && ticks == 0)
            continue;
        if (!q) {
            size_t n0 = p->n;
            q = slot_new(p);
            if (!q) {
                p->dropped++;
                continue;
            }
            fresh = p->n > n0; /* appended: only the index needs it */
            if (!fresh)
                q->pid = 0; /* a reused slot: its old pid leaves the index below */
        }
        memset(q, 0, sizeof *q);
        q->pid = (int32_t)pid;
        q->start = start;
        q->last = ticks;
        q->seen = cur;
        memcpy(q->comm, comm, sizeof q->comm);
        struct stat st;
        q->uid = fstatat(dfd, e->d_name, &st, 0) == 0 ? st.st_uid : (uint32_t)-1;
        if (q->uid != (uint32_t)-1)
            user_name(q->uid, q->user, sizeof q->user);
        read_cgroup(dfd, e->d_name, q->cgroup, sizeof q->cgroup);
        q->cg = q->cgroup[0] ? (int16_t)cg_row(p, q->cgroup) : -1;
        if (q->cgroup[0] && q->cg < 0)
            p->cg_dropped++;
        if (fresh) {
            unsigned h = idx_hash(q->pid);
            while (procs_idx[h] >= 0)
                h = (h + 1) % IDX_SLOTS;
            procs_idx[h] = (int16_t)(q - p->v);
        } else {
            idx_rebuild(p);
        }
    }
    closedir(d);
    /* processes this read did not see have exited; those gone long ago
     * make room */
    for (size_t i = 0; i < p->n;) {
        mon_proc *q = &p->v[i];
        if (q->seen != cur && q->gone == 0)
            q->gone = now_s;
        if (q->gone > 0 && (now_s - q->gone > MON_PROC_KEEP_S || q->bound == 0)) {
            p->v[i] = p->v[--p->n];
            continue;
        }
        i++;
    }
    idx_rebuild(p);
    cg_expire(p, now_s);
    p->scan = cur;
    p->scan_t = now_s;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    p->scan_cpu_s += (double)(c1.tv_sec - c0.tv_sec) + (c1.tv_nsec - c0.tv_nsec) / 1e9;
}

static double bound_at(const char *p)
{
    double b;
    memcpy(&b, p, sizeof b);
    return b;
}

/* The n (<= MON_TOP) entries of v[0..nv) (each `size` bytes, its bound a
 * double at offset off) with the largest bound above 0, largest first,
 * copied to top; returns n. */
static size_t top_by_bound(const void *v, size_t nv, size_t size, size_t off, void *top)
{
    const char *src = v;
    char *dst = top;
    size_t n = 0;
    for (size_t i = 0; i < nv; i++) {
        const char *e = src + i * size;
        double b = bound_at(e + off);
        if (!b)
            continue;
        size_t k = n < MON_TOP ? n++ : MON_TOP;
        if (k == MON_TOP) {
            if (b <= bound_at(dst + (MON_TOP - 1) * size + off))
                continue;
            k = MON_TOP - 1;
        }
        while (k > 0 && bound_at(dst + (k - 1) * size + off) < b) {
            memcpy(dst + k * size, dst + (k - 1) * size, size);
            k--;
        }
        memcpy(dst + k * size, e, size);
    }
    return n;
}

size_t mon_procs_top(const mon_procs *p, mon_proc *top)
{
    return top_by_bound(p->v, p->n, sizeof *p->v, offsetof(mon_proc, bound), top);
}

size_t mon_cgroups_top(const mon_procs *p, mon_cgroup *top)
{
    return top_by_bound(p->cg, p->ncg, sizeof *p->cg, offsetof(mon_cgroup, bound), top);
}
