/*
 * preload/precise.c: precise load sampling in the profiler, per application
 * thread, beside cpu-clock and page faults (preload/threads.c).
 *
 * Owns: the decision made once, when the process begins (MEMWATCH_PRECISE=auto|off,
 * the hardware per sampling/attrs.c, MEMWATCH_LDLAT or the machine profile's
 * idle latency, read only where the hardware has a sampler), the attribute stored as
 * MWR_PERF_ATTR 3 (named "mem-loads" or "ibs_op", which report/ and
 * sampling/hybrid.c treat as precise), opening it on each thread, and the
 * one line that says why it is not recorded (META precise_loads and, at
 * MEMWATCH_VERBOSE>=2, stderr; at >=1 when the hardware has it but the
 * kernel refuses it). On Sapphire Rapids and later the group leader
 * (mem-loads-aux) stays open for the thread's life in t->aux_fd: closing it
 * would break the group; the member's descriptor is closed once mapped.
 * Threading: setup once, when the process begins recording (lazy.h);
 * mwp_precise_open opens on thread t->tid, from that thread (trampoline, a
 * thread settling before its first pthread_create) or from the interval
 * thread (the deferred samplers of the first process of a tree and of a
 * fork child, preload/threads.c): raw syscalls only.
 */
#include "precise.h"

#include "base.h"
#include "config.h"
#include "process.h"
#include "threads.h"
#include "util.h"
#include "writer.h"

#include <memwatch/attrs.h>
#include <memwatch/memwatch.h>
#include <memwatch/profile.h>

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static char pr_note[400] = "unavailable: not set up"; /* META precise_loads */
static _Atomic uint64_t pr_unopened; /* threads whose precise sampler failed */
static char pr_leader[256]; /* attr bytes of the group leader, if any */
static int pr_have_leader;
static _Atomic int pr_said;

void mwp_precise_setup(void)
{
    if (!mwp_cfg.precise) {
        snprintf(pr_note, sizeof pr_note,
                 "off: MEMWATCH_PRECISE=off, nothing attempted");
        return;
    }
    const char *root = mwp_cfg.sysfs[0] ? mwp_cfg.sysfs : NULL;
    unsigned long freq = mwp_cfg.rate ? mwp_cfg.rate : 1000;
    freq = mw_attr_clamp_rate(freq, mw_attr_max_rate(), NULL);
    struct perf_event_attr pa[2];
    size_t n = 2;
    char name[32], why[300];
    int rc = mwp_precise_attrs(root, MWP_LDLAT_DEFAULT, freq, mwp_cfg.stack_depth, pa, &n, name,
                               sizeof name, why, sizeof why);
    if (rc) {
        snprintf(pr_note, sizeof pr_note, "unavailable: %s", why);
        mwp_say(2, "precise load sampling unavailable: ", why, NULL);
        return;
    }
    /* The hardware has it: only now pay for reading the machine profile. */
    MWP_COLD static mw_profile prof;
    const struct mw_profile *pp = NULL;
    if (!mwp_cfg.ldlat && strcmp(mwp_cfg.profile, "none")) {
        const char *path = mwp_cfg.profile; /* resolved in the constructor */
        /* The identity is compared with the one the process already has
         * (computed once per tree, or MEMWATCH_MACHINE), as the interval
         * engine does, instead of reading /proc and /sys again in the
         * constructor of every process. */
        if (path[0] && mwp_profile_read(path, &prof) == 0 && mwp_proc.identity[0] &&
            strcmp(mwp_proc.identity, "unknown") && !strcmp(prof.identity, mwp_proc.identity))
            pp = &prof;
    }
    const char *src;
    unsigned ldlat = mwp_precise_ldlat(mwp_cfg.ldlat, pp, &src);
    n = 2;
    rc = mwp_precise_attrs(root, ldlat, freq, mwp_cfg.stack_depth, pa, &n, name, sizeof name, why,
                           sizeof why);
    if (rc) {
        snprintf(pr_note, sizeof pr_note, "unavailable: %s", why);
        mwp_say(2, "precise load sampling unavailable: ", why, NULL);
        return;
    }
    pr_have_leader = n == 2;
    if (pr_have_leader)
        memcpy(pr_leader, &pa[0], sizeof pa[0]);
    memcpy(mwp_attrs.bytes[2], &pa[n - 1], sizeof pa[0]);
    mwp_attr_name_precise(pa[n - 1].precise_ip ? "mem-loads" : "ibs_op");
    if (pa[n - 1].precise_ip)
        snprintf(pr_note, sizeof pr_note,
                 "available: %.200s; recorded as %s, ldlat %u cycles (%s), %lu samples/s per "
                 "thread",
                 why, name, ldlat, src, freq);
    else
        snprintf(pr_note, sizeof pr_note,
                 "available: %.200s; recorded as %s, no hardware latency filter (the report "
                 "filters by weight), %lu samples/s per thread",
                 why, name, freq);
    mwp_say(3, "precise load sampling: ", pr_note, NULL);
}

static void pr_fail(const char *what, int err)
{
    atomic_fetch_add(&pr_unopened, 1);
    if (atomic_exchange(&pr_said, 1))
        return;
    char why[300];
    struct mwp_str s = {why, sizeof why, 0};
    mwp_s_str(&s, "unavailable: the kernel refused ");
    mwp_s_str(&s, mwp_attr_name(2));
    mwp_s_str(&s, what);
    mwp_s_str(&s, mw_strerror(err));
    mwp_s_str(&s, mwp_attr_name(2)[0] == 'i'
                      ? " (per-task IBS needs Linux 6.2 or later, and some kernels refuse "
                        "user-only IBS)"
                      : " (PEBS needs the hardware PMU; virtual machines rarely pass it on)");
    why[s.len < sizeof why ? s.len : sizeof why - 1] = 0;
    size_t k = strlen(why);
    if (k >= sizeof pr_note)
        k = sizeof pr_note - 1;
    memcpy(pr_note, why, k);
    pr_note[k] = 0;
    mwp_say(1, "precise load sampling ", why, "; the rest of the profiling goes on");
    mwp_meta_note(MW_META_PRECISE_LOADS, why);
}

int mwp_precise_open(struct mwp_thr *t)
{
    if (!mwp_attrs.bytes[2][0] && !mwp_attrs.bytes[2][1])
        return 0;
    int leader = -1;
    if (pr_have_leader) {
        struct perf_event_attr l;
        memcpy(&l, pr_leader, sizeof l);
        leader = (int)syscall(SYS_perf_event_open, &l, t->tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (leader < 0) {
            int err = -errno;
            if (err == -ESRCH)
                return err; /* opened late (interval thread) for a thread that has ended */
            pr_fail(" group leader (mem-loads-aux): perf_event_open: ", err);
            return err;
        }
    }
    struct perf_event_attr a;
    memcpy(&a, mwp_attrs.bytes[2], sizeof a);
    int fd = (int)syscall(SYS_perf_event_open, &a, t->tid, -1, leader, PERF_FLAG_FD_CLOEXEC);
    int err = fd < 0 ? -errno : 0;
    if (fd >= 0) {
        unsigned pages = mwp_cfg.ring_pages;
        err = mw_ring_map(&t->ring[2], fd, pages ? pages : 1);
        mwp_sys_close(fd);
        t->ring[2].fd = -1;
        if (err) {
            pr_fail(": mapping its ring: ", err);
        }
    } else if (err != -ESRCH) {
        pr_fail(": perf_event_open: ", err);
    }
    if (err) {
        if (leader >= 0)
            mwp_sys_close(leader);
        return err;
    }
    t->aux_fd = leader;
    return 0;
}

const char *mwp_precise_note(void)
{
    return pr_note;
}

uint64_t mwp_precise_unopened(void)
{
    return atomic_load(&pr_unopened);
}
