/*
 * preload/probe_share.c: one probe_lat measurement per interval for the whole
 * machine, not one per recorded process.
 *
 * Loaded DRAM latency is a property of the memory system, not of a process:
 * sixteen compilers of one build measuring it sixteen times per interval
 * learn nothing the first measurement did not, and pay sixteen times the
 * probe's cost (tens of µs of flushes and DRAM misses per interval each).
 * The recorded processes of one user on one machine therefore share a page
 * in /dev/shm. In each interval the first process to claim a NUMA node's slot
 * measures with its own probe and publishes the measurement's median; every
 * process that ran in the interval reads the median of the node's
 * measurements of the last window (the probe's window, default 80 ms). A
 * process that finds nothing fresh (alone, or the others idle) measures
 * itself, so a reading never comes from an older window than without sharing.
 *
 * The page holds no pointers and no locks: every field is one 64-bit atomic
 * word, a measurement is one packed word (time, node, latency), so a reader
 * never sees a torn entry, and a process killed at any instant leaves the
 * page consistent. The file is created 0600, checked to be a regular file
 * owned by this user, mapped and closed (no descriptor stays open in the
 * application). Its name carries the probe settings (lines, bursts, layout,
 * from the configuration the constructor read: no getenv here) so that
 * differently configured probes never pool. It stays in /dev/shm
 * (4 KiB) for later runs. MEMWATCH_PROBE_SHARE=0 turns sharing off.
 *
 * May call: libc, counters (probe_lat's window). Threading: the interval
 * thread, or the inline ticks on a single-threaded program's thread
 * (engine.c); the page is shared with other processes through atomics alone.
 * Opening is not async-signal-safe (open/mmap); claim, publish, node and
 * reading are (atomics, getcpu, no libc sort).
 */
#include "probe_share.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memwatch/probe_lat.h"

#define PS_MAGIC 0x31534857454d5750ull /* "PWMEWHS1" */
#define PS_NODES 64
#define PS_ENTRIES 256
#define PS_PAGE 4096

struct ps_page {
    _Atomic uint64_t magic;
    _Atomic uint64_t head;              /* entries written so far */
    _Atomic uint64_t claim[PS_NODES];   /* CLOCK_MONOTONIC ns of a node's latest claim */
    _Atomic uint64_t ent[PS_ENTRIES];   /* mwp_pshare_pack() words, 0: empty */
};
_Static_assert(sizeof(struct ps_page) <= PS_PAGE, "the shared page holds one page");

static struct ps_page *ps;
static uint64_t ps_window_ns;

/* A measurement in one word: time in units of 2^16 ns (40 bits: 2.3 years of
 * uptime), NUMA node (6 bits), latency in 1/8 ns (18 bits: up to 32 µs). */
uint64_t mwp_pshare_pack(uint64_t t_ns, unsigned node, double lat_ns)
{
    double q = lat_ns * 8.0 + 0.5;
    uint64_t l = q >= (double)((1u << 18) - 1) ? (1u << 18) - 1 : q < 1 ? 1 : (uint64_t)q;
    return ((t_ns >> 16) & ((1ull << 40) - 1)) << 24 | (uint64_t)(node & 63) << 18 | l;
}

void mwp_pshare_unpack(uint64_t w, uint64_t *t_ns, unsigned *node, double *lat_ns)
{
    *t_ns = (w >> 24) << 16;
    *node = (unsigned)(w >> 18) & 63;
    *lat_ns = (double)(w & ((1u << 18) - 1)) / 8.0;
}

/* 64-bit FNV-1a of the settings that change what the probe reads. */
static uint64_t ps_key(const mw_probe_lat_config *pc)
{
    uint64_t v[3] = {pc ? pc->lines : 0, pc ? pc->bursts : 0,
                     pc ? (pc->flags & MW_PROBE_LAT_HUGE) : 0};
    uint64_t h = 1469598103934665603ull;
    const unsigned char *b = (const unsigned char *)v;
    for (size_t i = 0; i < sizeof v; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

int mwp_pshare_open(const char *dir, const mw_probe_lat_config *pc, char *path, size_t pathsz,
                    char *why, size_t whysz)
{
    ps = NULL;
    snprintf(path, pathsz, "%s/memwatch-probe-%u-%016llx", dir ? dir : "/dev/shm",
             (unsigned)geteuid(), (unsigned long long)ps_key(pc));
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        snprintf(why, whysz, "cannot open %s: %s", path, strerror(e));
        return -e;
    }
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st)) {
        rc = -errno;
        snprintf(why, whysz, "cannot stat %s: %s", path, strerror(-rc));
        goto out;
    }
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
        rc = -EPERM;
        snprintf(why, whysz, "%s is not a regular file owned by this user with mode 0600", path);
        goto out;
    }
    if (st.st_size < PS_PAGE && ftruncate(fd, PS_PAGE)) { /* zero-filled: empty */
        rc = -errno;
        snprintf(why, whysz, "cannot size %s: %s", path, strerror(-rc));
        goto out;
    }
    void *m = mmap(NULL, PS_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        rc = -errno;
        snprintf(why, whysz, "cannot map %s: %s", path, strerror(-rc));
        goto out;
    }
    struct ps_page *p = m;
    uint64_t zero = 0;
    if (!atomic_compare_exchange_strong(&p->magic, &zero, PS_MAGIC) && zero != PS_MAGIC) {
        munmap(m, PS_PAGE);
        rc = -EPROTO;
        snprintf(why, whysz, "%s holds another layout (another memwatch version?)", path);
        goto out;
    }
    ps = p;
    ps_window_ns = mw_probe_lat_window_ns(pc); /* no getenv with MW_PROBE_LAT_NO_ENV */
out:
    close(fd);
    return rc;
}

int mwp_pshare_on(void)
{
    return ps != NULL;
}

unsigned mwp_pshare_node(void)
{
    unsigned cpu = 0, node = 0;
    if (getcpu(&cpu, &node))
        return 0;
    return node < PS_NODES ? node : PS_NODES - 1;
}

/* 1: this process measures now (the node's slot was free for most of an
 * interval and this process took it); 0: another one did or does. */
int mwp_pshare_claim(uint64_t now, unsigned node, uint64_t iv_ns)
{
    if (!ps)
        return 1;
    _Atomic uint64_t *c = &ps->claim[node % PS_NODES];
    uint64_t last = atomic_load(c);
    if (last > now || now - last < iv_ns - iv_ns / 8)
        return 0;
    return atomic_compare_exchange_strong(c, &last, now);
}

void mwp_pshare_publish(uint64_t t_ns, unsigned node, double lat_ns)
{
    if (!ps || !(lat_ns > 0))
        return;
    uint64_t i = atomic_fetch_add(&ps->head, 1);
    atomic_store(&ps->ent[i % PS_ENTRIES], mwp_pshare_pack(t_ns, node, lat_ns));
}

/* The median of the node's measurements of the last window, if the newest is
 * at most fresh_ns old. Returns how many were pooled (0: none fresh). */
unsigned mwp_pshare_reading(uint64_t now, unsigned node, uint64_t fresh_ns, double *lat_ns)
{
    if (!ps)
        return 0;
    double v[PS_ENTRIES];
    uint64_t tv[PS_ENTRIES], newest = 0;
    unsigned n = 0;
    /* times are stored in 65.5 µs units: allow one unit of rounding */
    uint64_t slack = 1ull << 16;
    for (unsigned i = 0; i < PS_ENTRIES; i++) {
        uint64_t w = atomic_load_explicit(&ps->ent[i], memory_order_relaxed);
        if (!w)
            continue;
        uint64_t t;
        unsigned nd;
        double l;
        mwp_pshare_unpack(w, &t, &nd, &l);
        if (nd != node % PS_NODES || t > now + slack || now - t > ps_window_ns + fresh_ns + slack)
            continue;
        tv[n] = t;
        v[n++] = l;
        if (t > newest)
            newest = t;
    }
    if (!n || (newest + fresh_ns + slack < now))
        return 0;
    /* the window ends at the newest measurement, as the probe's own does */
    unsigned k = 0;
    for (unsigned i = 0; i < n; i++)
        if (ps_window_ns == 0 ? tv[i] == newest : newest - tv[i] <= ps_window_ns)
            v[k++] = v[i];
    /* sorted in place: inline intervals read this in a signal handler, where
     * qsort may not run (glibc's calls malloc/free, and the program may be
     * inside its allocator); a window holds a few measurements */
    for (unsigned i = 1; i < k; i++)
        for (unsigned j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    *lat_ns = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
    return k;
}
