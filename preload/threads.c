/*
 * preload/threads.c: every application thread's sampling, from birth to exit.
 *
 * Owns: the thread registry (struct mwp_thr, in memwatch's own mmap'ed slabs,
 * never freed, reused through a free list), the per-thread perf rings
 * (cpu-clock with call chains, page faults with data addresses) and the
 * per-thread allocation-record buffer (single producer: the thread; single
 * consumer at a time: whoever holds t->busy).
 *
 * Why per thread: the kernel refuses to mmap an inherited per-task event, so
 * each thread opens its own events, on itself, in the pthread_create
 * trampoline (the first thread of a process may get its events from the
 * interval thread: "deferred samplers" below), until the process starts its
 * second thread: from then on the cpu-clock and page-fault samples come from
 * per-CPU events that threads
 * inherit (see "inherited sampling" below; context switches between threads
 * then cost what they cost without memwatch), and the trampoline opens only
 * the precise sampler. The event descriptors are closed as soon as the ring is mapped
 * (the mapping keeps the event alive), so memwatch holds no descriptor per
 * thread that a program could close, dup2 over or run out of; the one
 * exception is the precise-load group leader on Sapphire Rapids and later
 * (preload/precise.c), held until the thread exits. Ring 2 is the precise
 * load sampler where the hardware and kernel offer one.
 *
 * Threading: the registry is a lock-free singly linked list: threads push at
 * the head; only the interval thread unlinks (dead entries). The free list
 * has a spin flag taken only outside signal context. Draining is serialized
 * per thread by t->busy (try-acquire on the signal path).
 */
#include "threads.h"

#include "base.h"
#include "config.h"
#include "engine.h"
#include "lazy.h"
#include "precise.h"
#include "process.h"
#include "real.h"
#include "region.h"
#include "sys.h"
#include "util.h"
#include "writer.h"

#include <memwatch/attrs.h>
#include <memwatch/memwatch.h>
#include <memwatch/mwr_frame.h>
#include <memwatch/perf.h>
#include <memwatch/pmu.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define THR_DWARF_PAGES 128u /* cpu-clock ring pages with user stacks (MEMWATCH_UNWIND) */
#define THR_DWARF_PAGES_MIN 32u /* where the locked-memory limit refuses those */

MWP_TLS struct mwp_thr *mwp_self;
struct mwp_attrs mwp_attrs;
/* [2] is set by mwp_precise_setup: "mem-loads" or "ibs_op" */
/* relocated at load: in the page every process writes anyway (base.h) */
MWP_HOT_DATA static const char *attr_names[MWP_NATTR] = {"cpu-clock", "page-faults", "mem-loads"};
static _Atomic uint64_t thr_unsampled;

const char *mwp_attr_name(unsigned i)
{
    return attr_names[i];
}

void mwp_attr_name_precise(const char *name)
{
    attr_names[2] = name;
}

MWP_HOT_DATA static struct mwp_thr *_Atomic thr_head;
MWP_HOT_DATA static struct mwp_thr *thr_free;
MWP_HOT_DATA static atomic_flag thr_free_lock = ATOMIC_FLAG_INIT;
MWP_HOT_DATA static pthread_key_t thr_key;
MWP_HOT_DATA static int thr_key_ok;
static _Atomic int thr_err_said;
MWP_COLD static char eng_buf[256 << 10];
MWP_COLD static char sig_buf[64 << 10 | 4096];
MWP_HOT_DATA static atomic_flag sig_busy = ATOMIC_FLAG_INIT;

static void *thr_sys_mmap(size_t n)
{
    long p = syscall(SYS_mmap, NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p < 0 && p > -4096)
        return NULL;
    return (void *)p;
}

/* fresh entries (under thr_free_lock) */
MWP_HOT_DATA static struct mwp_thr *thr_slab_next, *thr_slab_end;
/* The first slab: the main thread's entry and one more, without an mmap in
 * every process */
MWP_HOT_DATA static struct mwp_thr thr_first_slab[2];

/* An entry with nothing open: no rings, no group leader, not a CPU's. */
static void thr_blank(struct mwp_thr *t)
{
    memset(t, 0, sizeof *t);
    atomic_flag_clear(&t->busy);
    t->ring[0].fd = t->ring[1].fd = t->ring[2].fd = -1;
    t->aux_fd = -1;
    t->cpu_ring = -1;
}

/* Close what an entry has open: its rings (each mapping holds its event)
 * and the precise sampler's group leader. */
static void thr_close_samplers(struct mwp_thr *t)
{
    for (int i = 0; i < MWP_NATTR; i++)
        mw_ring_unmap(&t->ring[i]);
    if (t->aux_fd >= 0)
        mwp_sys_close(t->aux_fd);
    t->aux_fd = -1;
}

MWP_HOT static struct mwp_thr *thr_alloc(void)
{
    while (atomic_flag_test_and_set_explicit(&thr_free_lock, memory_order_acquire))
        syscall(SYS_sched_yield);
    /* Released entries first, then fresh ones from the slab in order: a
     * slab's pages are touched only as threads need them (a single-threaded
     * process touches one page, not 64 KiB). */
    struct mwp_thr *t = thr_free;
    if (t) {
        thr_free = t->free_next;
    } else {
        if (!thr_slab_end) {
            thr_slab_next = thr_first_slab;
            thr_slab_end = thr_first_slab + 2;
        }
        if (thr_slab_next == thr_slab_end) {
            size_t n = 64 * 1024;
            struct mwp_thr *slab = thr_sys_mmap(n);
            if (slab) {
                thr_slab_next = slab;
                thr_slab_end = slab + n / sizeof *slab;
            }
        }
        if (thr_slab_next != thr_slab_end)
            t = thr_slab_next++;
    }
    atomic_flag_clear_explicit(&thr_free_lock, memory_order_release);
    if (!t)
        return NULL;
    char *abuf = t->abuf; /* the allocation-record buffer stays with the slot */
    struct mwp_rgn *rgn = t->rgn; /* so does the region buffer */
    thr_blank(t);
    t->abuf = abuf;
    t->rgn = rgn;
    if (rgn)
        mwp_region_reset(rgn);
    return t;
}

static void thr_release(struct mwp_thr *t)
{
    atomic_store(&t->state, MWP_T_FREE);
    while (atomic_flag_test_and_set_explicit(&thr_free_lock, memory_order_acquire))
        syscall(SYS_sched_yield);
    t->free_next = thr_free;
    thr_free = t;
    atomic_flag_clear_explicit(&thr_free_lock, memory_order_release);
}

MWP_HOT static void thr_push(struct mwp_thr *t)
{
    struct mwp_thr *h = atomic_load(&thr_head);
    do {
        atomic_store(&t->next, h);
    } while (!atomic_compare_exchange_weak(&thr_head, &h, t));
}

/* Open this thread's samplers and map their rings (runs on the thread). */
static _Atomic int thr_inherited; /* cpu-clock and page faults come from per-CPU rings */

/* Whether sampler i (0 cpu-clock, 1 page faults) is configured. */
static int thr_attr_on(int i)
{
    return mwp_attrs.bytes[i][0] || mwp_attrs.bytes[i][1];
}

/* The main thread's own cpu-clock event, kept open (moved high, guarded:
 * preload/guard.c) so that its period can vary: cpu-clock samples come
 * every period of the thread's CPU time exactly, and a loop of constant
 * cost in step with that period is sampled at the same points every time
 * (docs/report.md, "Samples in step with the program"). -1: none (the
 * process samples through inherited per-CPU events, or not at all). */
MWP_HOT_DATA static _Atomic int thr_clock_fd = -1;

int mwp_threads_clock_fd(void)
{
    return atomic_load(&thr_clock_fd);
}

static void thr_clock_keep(int fd)
{
    int old = atomic_exchange(&thr_clock_fd, fd);
    if (old >= 0 && old != fd)
        mwp_sys_close(old);
}

void mwp_threads_clock_relocate(void)
{
    mwp_fd_step_aside(&thr_clock_fd);
}

void mwp_threads_clock_jitter(void)
{
    static uint64_t x;
    int fd = atomic_load(&thr_clock_fd);
    if (fd < 0 || !mwp_cfg.rate)
        return;
    if (!x)
        x = (mwp_now_ns() ^ ((uint64_t)mwp_proc.pid << 32)) | 1;
    x ^= x << 13; /* xorshift64 */
    x ^= x >> 7;
    x ^= x << 17;
    uint64_t p = 1000000000ull / mwp_cfg.rate;
    /* uniform in [p/2, 3p/2): the mean keeps the rate */
    uint64_t np = p / 2 + (uint64_t)((double)(x >> 11) / 9007199254740992.0 * (double)p);
    if (np < 1000)
        np = 1000;
    mwp_syscall(SYS_ioctl, fd, PERF_EVENT_IOC_PERIOD, &np);
}

/* Data pages of an inline process's own DWARF cpu-clock ring: its drains
 * come at every interval of its CPU time (the tick event), so the ring need
 * hold only a few intervals' samples: 3 intervals at the sampling rate,
 * each sample its stack copy and about 512 bytes more, as a power of two of
 * at least 8 pages. At the defaults (250/s, 10 ms, 8 KiB) 16 pages: 7
 * samples. Mapping 128 pages and freeing them at exit cost a process
 * some 60 us of CPU more than 16 (docs/overhead.md). */
static unsigned thr_inline_pages(void)
{
    double per = (double)mwp_cfg.unwind_stack + 512.0;
    double want = 3.0 * (double)mwp_cfg.interval_ns / 1e9 * (double)mwp_cfg.rate * per / 4096.0;
    unsigned p = 8;
    while (p < THR_DWARF_PAGES && p < want)
        p *= 2;
    return p;
}

/* Open sampler i on thread tid (cpu -1) or, inherited by the threads the
 * calling thread creates from now on, on one CPU (tid 0); map its ring and
 * close the descriptor (the mapping keeps the event), except the main
 * thread's own cpu-clock event's (thr_clock_fd). Returns 0 or a negative
 * errno; *in_map (may be NULL) 1 where the event opened and its ring could
 * not be mapped. */
static int thr_ring_open_at(mw_ring *r, int i, pid_t tid, int cpu, int *in_map)
{
    if (in_map)
        *in_map = 0;
    struct perf_event_attr a;
    memcpy(&a, mwp_attrs.bytes[i], sizeof a);
    if (cpu >= 0) {
        a.inherit = 1;
        a.inherit_thread = 1;
    }
    int fd = (int)syscall(SYS_perf_event_open, &a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return -errno;
    unsigned pages = mwp_cfg.ring_pages ? mwp_cfg.ring_pages : 1;
    /* A DWARF cpu-clock sample carries its stack copy (8 KiB by default):
     * 128 pages hold some 60 samples, 240 ms at 250/s, where the
     * locked-memory limits allow it, else 32 pages (60 ms). The drains can
     * come that late: on a loaded machine the CPU-time timer, which alone
     * drives an inline process's intervals where perf refuses its tick
     * event, fires a few times a second instead of every interval
     * (docs/overhead.md, "Inline intervals on a loaded machine"). */
    /* A thread of a process with inline intervals, whose drains come at
     * every interval of its CPU time, starts with a ring for a few of them
     * (thr_inline_pages); mwp_threads_ring_grow gives it the large one where
     * the drains may come late (the interval thread takes over; no tick
     * event). */
    unsigned first = cpu < 0 && mwp_engine_inline() ? thr_inline_pages() : THR_DWARF_PAGES;
    /* the main thread's own cpu-clock event stays open (its period varies) */
    int keep = i == 0 && cpu < 0 && tid == mwp_proc.pid;
    int err = -EPERM;
    for (unsigned dp = first; i == 0 && mwp_cfg.unwind == MWP_UNWIND_DWARF && pages < dp &&
                              (dp >= THR_DWARF_PAGES_MIN || dp == first);
         dp /= 4) {
        err = mw_ring_map(r, fd, dp);
        if (err != -EPERM && err != -ENOMEM)
            break;
    }
    if (err == -EPERM || err == -ENOMEM)
        err = mw_ring_map(r, fd, pages);
    r->fd = -1;
    if (err == 0 && keep) {
        thr_clock_keep(mwp_fd_move_high(fd));
        return 0;
    }
    mwp_sys_close(fd);
    if (err && in_map)
        *in_map = 1;
    return err;
}

static int thr_ring_open(mw_ring *r, int i, pid_t tid, int cpu)
{
    return thr_ring_open_at(r, i, tid, cpu, NULL);
}

/* Why sampler i could not be opened on thread tid (err, a negative errno;
 * in_map: its ring, not the event), in words a user can act on: the
 * kernel's perf_event_paranoid, a missing capability, a security policy
 * such as a container's seccomp filter (mw_perf_explain), or the locked-memory
 * limit of the rings. Into why, NUL-terminated. Reads /proc (the
 * privileges) where the event was refused: once per process. */
static void thr_sampling_why(int i, int err, int in_map, pid_t tid, char *why, size_t n)
{
    struct mwp_str s = {why, n - 1, 0};
    mwp_s_str(&s, attr_names[i]);
    mwp_s_str(&s, " sampling unavailable: ");
    if (in_map) {
        mwp_s_str(&s, "its ring buffer could not be mapped: ");
        mwp_s_str(&s, mw_strerror(err));
        if (err == -EPERM || err == -ENOMEM)
            mwp_s_str(&s, " (the locked-memory limits: kernel.perf_event_mlock_kb and "
                          "RLIMIT_MEMLOCK)");
    } else {
        mw_privs pv;
        memset(&pv, 0, sizeof pv);
        pv.paranoid = MW_PARANOID_UNKNOWN;
        (void)mw_privs_read(mwp_cfg.proc[0] ? mwp_cfg.proc : NULL, &pv);
        struct perf_event_attr a;
        memcpy(&a, mwp_attrs.bytes[i], sizeof a);
        mw_perf_event ev = {attr_names[i], a.type, a.config, a.config1, a.config2, 0};
        mw_perf_target tg = {MW_PERF_THREAD, tid, -1, NULL, 0};
        char buf[400];
        (void)mw_perf_explain(-err, &ev, &tg, MW_PERF_USER_ONLY, &pv, NULL, buf, sizeof buf);
        mwp_s_str(&s, buf);
    }
    why[s.len] = 0;
}

/* Drain t's rings once outside the interval thread (thread exit, the switch
 * to per-CPU events, a ring that grows). Records with a user stack copy do not fit a small
 * buffer on the thread's own stack: those get a mapping for the call. */
static void thr_drain(struct mwp_thr *t, char *buf, size_t cap, uint64_t *samples,
                      uint64_t *lost);
static void thr_drain_here(struct mwp_thr *t)
{
    char small[4096];
    uint64_t s = 0, l = 0;
    if (mwp_cfg.unwind != MWP_UNWIND_DWARF) {
        thr_drain(t, small, sizeof small, &s, &l);
        return;
    }
    size_t cap = (size_t)MW_UNWIND_STACK_MAX + 4096;
    void *big = (void *)syscall(SYS_mmap, NULL, cap, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if ((uintptr_t)big > (uintptr_t)-4096) {
        thr_drain(t, small, sizeof small, &s, &l); /* larger records are counted as dropped */
        return;
    }
    thr_drain(t, big, cap, &s, &l);
    syscall(SYS_munmap, big, cap);
}

void mwp_threads_ring_grow(void)
{
    struct mwp_thr *t = mwp_self;
    if (!t || t->cpu_ring >= 0 || mwp_cfg.unwind != MWP_UNWIND_DWARF || !thr_attr_on(0) ||
        !t->ring[0].base || t->ring[0].data_bytes >= (size_t)THR_DWARF_PAGES * 4096u)
        return;
    /* drained and unmapped first, so that no sample is taken twice */
    while (atomic_flag_test_and_set_explicit(&t->busy, memory_order_acquire))
        syscall(SYS_sched_yield);
    thr_drain_here(t);
    mw_ring_unmap(&t->ring[0]);
    int err = thr_ring_open(&t->ring[0], 0, t->tid, -1); /* not inline any more: the large one */
    atomic_flag_clear_explicit(&t->busy, memory_order_release);
    if (err < 0)
        mwp_say(1, "cpu-clock sampling stopped: its larger ring could not be opened: ",
                mw_strerror(err), NULL);
}

/* Open t's samplers on thread t->tid (itself, or an application thread for
 * the interval thread: mwp_threads_open_deferred). */
static void thr_sampling_open(struct mwp_thr *t)
{
    mwp_precise_open(t); /* reports its own failure; the others go on */
    for (int i = 0; i < 2; i++) {
        if (!thr_attr_on(i))
            continue;
        if (atomic_load(&thr_inherited))
            continue; /* the thread inherited its creator's per-CPU events */
        int in_map;
        int err = thr_ring_open_at(&t->ring[i], i, t->tid, -1, &in_map);
        if (err == -ESRCH)
            break; /* opened from the interval thread for a thread that has ended */
        if (err) {
            atomic_fetch_add(&thr_unsampled, 1);
            if (!atomic_exchange(&thr_err_said, 1)) {
                char why[480];
                thr_sampling_why(i, err, in_map, t->tid, why, sizeof why);
                mwp_say(2, why, NULL, NULL);
                mwp_meta_note(MW_META_SAMPLING_ERROR, why);
            }
        }
    }
}

/* The bounds that keep allocation call-site walks on the thread's stack.
 * The main thread's come from the loader's __libc_stack_end (every frame of
 * the program lies below it) and RLIMIT_STACK, not from
 * pthread_getattr_np, which reads /proc/self/maps for the main thread and was
 * a visible share of every short process's start-up. */
extern void *__libc_stack_end;

/* here: an address on the thread's stack (the main thread: on the stack
 * the loader set up, unless this is a fork child of another thread) */
MWP_HOT static void thr_stack_bounds(struct mwp_thr *t, uintptr_t here)
{
#if defined(__x86_64__)
    /* the TLS base, so that the report can compute fs-relative data
     * addresses of decoded samples (docs/data-addresses.md) */
    unsigned long fs = 0;
    if (mwp_syscall(SYS_arch_prctl, 0x1003 /* ARCH_GET_FS */, &fs) == 0)
        t->fs_base = fs;
#endif
    if (t->tid == mwp_proc.pid && __libc_stack_end) {
        struct rlimit rl;
        uintptr_t hi = (uintptr_t)__libc_stack_end;
        uintptr_t sz = 8u << 20;
        /* prlimit64 as getrlimit makes it, without binding getrlimit */
        if (mwp_syscall(SYS_prlimit64, 0, RLIMIT_STACK, NULL, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            rl.rlim_cur > 0 && rl.rlim_cur < hi)
            sz = (uintptr_t)rl.rlim_cur;
        /* round the top up to the page above the loader's frame */
        uintptr_t top = (hi + 4095) & ~(uintptr_t)4095;
        uintptr_t bot = top > sz ? top - sz : 0;
        if (here >= bot && here < top) { /* not a fork child of another thread */
            t->stk_hi = top;
            t->stk_lo = bot;
            return;
        }
    }
    pthread_attr_t at;
    void *lo = NULL;
    size_t sz = 0;
    if (pthread_getattr_np(pthread_self(), &at) == 0) {
        if (pthread_attr_getstack(&at, &lo, &sz) == 0) {
            t->stk_lo = (uintptr_t)lo;
            t->stk_hi = (uintptr_t)lo + sz;
        }
        pthread_attr_destroy(&at);
    }
}

void mwp_thr_bounds(struct mwp_thr *t)
{
    if (t && t->bounds_at) {
        thr_stack_bounds(t, t->bounds_at);
        t->bounds_at = 0;
    }
}

void mwp_thread_emit(struct mwp_thr *t, uint32_t ev)
{
    mwp_thr_bounds(t);
    mwr_thread r;
    memset(&r, 0, sizeof r);
    /* a start written later (lazy start: the main thread's) keeps its time */
    r.time_ns = ev == MWR_THREAD_START && t && t->start_ns ? t->start_ns : mwp_now_ns();
    r.tid = (uint32_t)(t ? t->tid : mwp_gettid());
    r.event = ev;
    r.fs_base = t ? t->fs_base : 0;
    prctl(PR_GET_NAME, r.name, 0, 0, 0);
    struct iovec v = {&r, sizeof r};
    mwp_write(MWR_THREAD, &v, 1);
}

/* The process's CPU time when this image started: an exec'ed image's
 * RUSAGE_SELF carries the time of the image before it. */
MWP_HOT_DATA static mwr_cpu cpu_base;

MWP_HOT void mwp_cpu_base_take(void)
{
    struct rusage r;
    if (mwp_syscall(SYS_getrusage, RUSAGE_SELF, &r) == 0)
        mwr_cpu_from_rusage(&r, &cpu_base);
}

MWP_HOT int mwp_cpu_fill(int whole, uint64_t now_ns, mwr_cpu *out)
{
    struct rusage r;
    if (mwp_syscall(SYS_getrusage, whole ? RUSAGE_SELF : RUSAGE_THREAD, &r) != 0)
        return -1;
    mwr_cpu c;
    memset(&c, 0, sizeof c);
    /* a process that never began passes the time it read already (by
     * system call, not the vDSO's first use: mwp_clock_sys_ns) */
    c.time_ns = now_ns ? now_ns : mwp_now_ns();
    c.tid = whole ? 0 : (uint32_t)mwp_gettid();
    mwr_cpu_from_rusage(&r, &c);
    if (whole) {
        c.user_ns -= c.user_ns > cpu_base.user_ns ? cpu_base.user_ns : c.user_ns;
        c.system_ns -= c.system_ns > cpu_base.system_ns ? cpu_base.system_ns : c.system_ns;
        c.minflt -= c.minflt > cpu_base.minflt ? cpu_base.minflt : c.minflt;
        c.majflt -= c.majflt > cpu_base.majflt ? cpu_base.majflt : c.majflt;
    }
    *out = c;
    return 0;
}

/* ---- threads shorter than a sampling period ----
 * Each thread's cpu-clock sampler (its own, or its inherited copy of the
 * per-CPU event) starts a whole period when the thread starts, and what a
 * thread ran short of its next sample is lost when it ends: a thread that
 * runs less than one period of CPU time (4 ms at 250 samples/s) is never
 * sampled. The kernel offers no way to carry the remainder over, so such
 * threads are counted at their exit (their CPU time, which their CPU record
 * reads anyway) and the process's end names the loss: META
 * samples_short_threads. */
static _Atomic uint64_t thr_short_n, thr_short_ns;

MWP_HOT static void thr_cpu_exit(void)
{
    mwr_cpu c;
    if (mwp_cpu_fill(0, 0, &c) != 0)
        return;
    uint64_t cpu = c.user_ns + c.system_ns;
    if (mwp_cfg.rate && cpu < 1000000000ull / mwp_cfg.rate) {
        atomic_fetch_add(&thr_short_n, 1);
        atomic_fetch_add(&thr_short_ns, cpu);
    }
    struct iovec v = {&c, sizeof c};
    mwp_write(MWR_CPU, &v, 1);
}

/* META samples_short_threads at the process's end: "N samples not taken:
 * ..." (N: their CPU time at the sampling rate, what a sampler that carried
 * its period over would have taken), where it is at least one sample.
 * Async-signal-safe. */
void mwp_threads_short_note(void)
{
    uint64_t n = atomic_load(&thr_short_n), ns = atomic_load(&thr_short_ns);
    if (!mwp_cfg.rate || ns * mwp_cfg.rate < 1000000000ull)
        return;
    char b[320];
    struct mwp_str s = {b, sizeof b - 1, 0};
    mwp_s_u64(&s, ns * mwp_cfg.rate / 1000000000ull);
    mwp_s_str(&s, " samples not taken: ");
    mwp_s_u64(&s, n);
    mwp_s_str(&s, " threads each ran less than one sampling period (");
    mwp_s_dbl(&s, 1e3 / (double)mwp_cfg.rate);
    mwp_s_str(&s, " ms of CPU time at ");
    mwp_s_u64(&s, mwp_cfg.rate);
    mwp_s_str(&s, " samples/s), ");
    mwp_s_dbl(&s, (double)ns / 1e9);
    mwp_s_str(&s, " s of CPU time in all, and the kernel starts each thread's period anew, so "
                  "they were never sampled");
    b[s.len] = 0;
    mwp_meta_note(MW_META_SAMPLES_SHORT_THREADS, b);
}

void mwp_cpu_emit(int whole)
{
    mwr_cpu c;
    if (mwp_cpu_fill(whole, 0, &c) != 0)
        return;
    struct iovec v = {&c, sizeof c};
    mwp_write(MWR_CPU, &v, 1);
}

/* ---- memwatch's own time ----
 * Inline intervals (engine.c) run on the program's thread, whose samplers
 * keep sampling: a sample taken while a tick ran is memwatch's work, not the
 * program's (and the probe's loads are the slowest loads a precise sampler
 * could name). The tick says when it ran; the drain leaves out the samples
 * whose time (CLOCK_MONOTONIC, sampling/attrs.c) lies in the last finished
 * tick or after the start of the one in progress, and counts them (META
 * samples_own). */
static uint64_t own_lo, own_hi; /* the last finished tick */
static uint64_t own_cur;        /* the tick in progress began here (0: none) */
static _Atomic uint64_t own_samples; /* left out (META samples_own) */

uint64_t mwp_threads_own_samples(void)
{
    return atomic_load(&own_samples);
}

void mwp_threads_own_time(uint64_t t0, uint64_t t1)
{
    if (!t1) {
        own_cur = t0;
        return;
    }
    own_lo = t0;
    own_hi = t1;
    own_cur = 0;
}

static int own_time(uint64_t t)
{
    return (own_cur && t >= own_cur) || (own_hi && t >= own_lo && t <= own_hi);
}

/* Leave memwatch's own samples out of n bytes of kernel records at p (ring
 * i's); returns the bytes kept and counts what it left out in *gone. */
static size_t own_filter(int i, char *p, size_t n, uint64_t *gone)
{
    struct perf_event_attr a;
    memcpy(&a, mwp_attrs.bytes[i], sizeof a);
    uint64_t st = a.sample_type;
    if (!(st & PERF_SAMPLE_TIME))
        return n;
    size_t off = sizeof(struct perf_event_header) + 8 * (!!(st & PERF_SAMPLE_IDENTIFIER) +
                                                         !!(st & PERF_SAMPLE_IP) +
                                                         !!(st & PERF_SAMPLE_TID));
    size_t in = 0, out = 0;
    while (in + sizeof(struct perf_event_header) <= n) {
        struct perf_event_header h;
        memcpy(&h, p + in, sizeof h);
        if (h.size < sizeof h || in + h.size > n)
            break;
        uint64_t t = 0;
        int drop = 0;
        if (h.type == PERF_RECORD_SAMPLE && off + 8 <= h.size) {
            memcpy(&t, p + in + off, 8);
            drop = own_time(t);
        }
        if (drop) {
            (*gone)++;
        } else {
            if (out != in)
                memmove(p + out, p + in, h.size);
            out += h.size;
        }
        in += h.size;
    }
    if (in < n) { /* a damaged tail: kept as it was */
        if (out != in)
            memmove(p + out, p + in, n - in);
        out += n - in;
    }
    return out;
}

/* Copy one ring's records into PERF_DATA records. buf holds the headers
 * first; cap is its size. */
static void thr_drain_ring(struct mwp_thr *t, int i, char *buf, size_t cap, uint64_t *samples,
                           uint64_t *lost)
{
    const size_t hdr = sizeof(mwr_rec_hdr) + sizeof(mwr_perf_data);
    for (int rounds = 0; rounds < 64; rounds++) {
        mw_ring_stats st = {0, 0, 0, 0};
        size_t n = mw_ring_read(&t->ring[i], buf + hdr, cap - hdr, &st);
        size_t raw = n;
        if (n && (own_cur || own_hi) && t->cpu_ring < 0) {
            uint64_t gone = 0;
            n = own_filter(i, buf + hdr, n, &gone);
            st.samples -= gone < st.samples ? gone : st.samples;
            atomic_fetch_add(&own_samples, gone);
        }
        *samples += st.samples;
        *lost += st.lost;
        atomic_fetch_add(&mwp_wstat.lost, st.lost);
        atomic_fetch_add(&mwp_wstat.throttled, st.throttled);
        atomic_fetch_add(&mwp_wstat.samples, st.samples);
        if (st.skipped)
            atomic_fetch_add(&mwp_wstat.dropped, st.skipped);
        if (!raw)
            return;
        if (!n)
            continue; /* all of them memwatch's own */
        mwr_rec_hdr *h = (mwr_rec_hdr *)buf;
        mwr_perf_data *d = (mwr_perf_data *)(buf + sizeof *h);
        *h = mwr_rec_hdr_make(MWR_PERF_DATA, sizeof *d + n); /* n: whole kernel records, 8-aligned */
        d->attr_id = (uint32_t)(i + 1);
        d->tid = (uint32_t)t->tid;
        d->time_ns = mwp_now_ns();
        struct iovec v = {buf, hdr + n};
        mwp_write_raw(&v, 1, 1);
    }
}

/* What t's allocation-record buffer holds, as one or two pieces of the
 * ring in v, its whole records counted in *nrec; the position it ends at in
 * *head. Returns the number of pieces, 0 where it is empty. */
static int thr_abuf_pieces(struct mwp_thr *t, struct iovec v[2], uint64_t *nrec, uint64_t *head_out)
{
    if (!t->abuf)
        return 0;
    uint64_t head = atomic_load_explicit(&t->ahead, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&t->atail, memory_order_relaxed);
    if (head == tail)
        return 0;
    uint64_t n = 0;
    for (uint64_t p = tail; p < head;) {
        mwr_rec_hdr h;
        size_t off = (size_t)(p % MWP_ABUF_SIZE);
        memcpy(&h, t->abuf + off, sizeof h); /* headers never wrap: 8-aligned in an 8-multiple */
        if (h.size < 8 || h.size > head - p)
            break;
        p += h.size;
        n++;
    }
    size_t off = (size_t)(tail % MWP_ABUF_SIZE), len = (size_t)(head - tail);
    int k = 1;
    if (off + len <= MWP_ABUF_SIZE) {
        v[0] = (struct iovec){t->abuf + off, len};
    } else {
        v[0] = (struct iovec){t->abuf + off, MWP_ABUF_SIZE - off};
        v[1] = (struct iovec){t->abuf, len - (MWP_ABUF_SIZE - off)};
        k = 2;
    }
    *nrec = n;
    *head_out = head;
    return k;
}

/* Flush the allocation-record buffer (consumer side). */
static void thr_drain_abuf(struct mwp_thr *t)
{
    struct iovec v[2];
    uint64_t nrec = 0, head = 0;
    int n = thr_abuf_pieces(t, v, &nrec, &head);
    if (!n)
        return;
    if (mwp_write_raw(v, n, nrec) < 0)
        atomic_fetch_add(&mwp_wstat.alloc_dropped, nrec);
    atomic_store_explicit(&t->atail, head, memory_order_release);
}

/* The calling thread's allocation records, handed over whole to a writer
 * that writes them itself (a process that ends before it began: its segment
 * of the shared file of short processes) and taken out of the buffer. */
int mwp_abuf_take(struct iovec v[2], uint64_t *nrec)
{
    struct mwp_thr *t = mwp_self;
    uint64_t head = 0;
    *nrec = 0;
    int n = t ? thr_abuf_pieces(t, v, nrec, &head) : 0;
    if (n)
        atomic_store_explicit(&t->atail, head, memory_order_release);
    return n;
}

static void thr_drain(struct mwp_thr *t, char *buf, size_t cap, uint64_t *samples, uint64_t *lost)
{
    for (int i = 0; i < MWP_NATTR; i++)
        if (t->ring[i].base)
            thr_drain_ring(t, i, buf, cap, samples, lost);
    thr_drain_abuf(t);
    mwp_region_drain(t);
}

/* Copy n bytes into t's allocation buffer at *at (wrapping), advance *at. */
static void abuf_put(struct mwp_thr *t, uint64_t *at, const void *src, size_t n)
{
    size_t off = (size_t)(*at % MWP_ABUF_SIZE), first = MWP_ABUF_SIZE - off;
    if (first >= n) {
        memcpy(t->abuf + off, src, n);
    } else {
        memcpy(t->abuf + off, src, first);
        memcpy(t->abuf, (const char *)src + first, n - first);
    }
    *at += n;
}

void mwp_emit_buffered(uint32_t type, const void *a, size_t alen, const void *b, size_t blen)
{
    struct mwp_thr *t = mwp_self;
    size_t size = mwr_rec_size(alen + blen);
    if (t && !t->abuf && atomic_load(&t->state) == MWP_T_LIVE)
        t->abuf = thr_sys_mmap(MWP_ABUF_SIZE);
    /* Up to half the buffer: an allocation with its stack copy (DWARF
     * stacks, alloc.c) is a few KiB. */
    if (t && t->abuf && atomic_load(&t->state) == MWP_T_LIVE && size <= MWP_ABUF_SIZE / 2) {
        uint64_t head = atomic_load_explicit(&t->ahead, memory_order_relaxed);
        uint64_t tail = atomic_load_explicit(&t->atail, memory_order_acquire);
        /* Full: the thread writes its own buffer out, with one system call,
         * where no one else drains it now (an allocation-heavy compiler
         * makes hundreds of records with stack copies per interval: one
         * writev each, before) */
        if (head + size - tail > MWP_ABUF_SIZE && atomic_load(&mwp_lazy.begun) &&
            !atomic_flag_test_and_set_explicit(&t->busy, memory_order_acquire)) {
            thr_drain_abuf(t);
            atomic_flag_clear_explicit(&t->busy, memory_order_release);
            tail = atomic_load_explicit(&t->atail, memory_order_acquire);
        }
        if (head + size - tail <= MWP_ABUF_SIZE) {
            mwr_rec_hdr h = mwr_rec_hdr_make(type, alen + blen);
            static const char zero[8];
            uint64_t at = head;
            abuf_put(t, &at, &h, sizeof h);
            abuf_put(t, &at, a, alen);
            if (blen)
                abuf_put(t, &at, b, blen);
            abuf_put(t, &at, zero, mwr_pad_len(alen + blen));
            atomic_store_explicit(&t->ahead, head + size, memory_order_release);
            /* allocations worth keeping fill the buffer before the
             * process began (lazy start): begin, so that they are drained
             * (here only where this cannot be inside the program's own
             * allocator, its mmap, which pthread_create's calloc would
             * enter again) */
            if (!atomic_load_explicit(&mwp_lazy.begun, memory_order_relaxed) &&
                head + size - tail > MWP_ABUF_SIZE / 2 && t->tid == mwp_proc.pid)
                mwp_lazy_soon();
            return;
        }
    }
    struct iovec v[2] = {{(void *)a, alen}, {(void *)b, blen}};
    if (mwp_write(type, v, blen ? 2 : 1) < 0 && (type == MWR_ALLOC || type == MWR_FREE))
        atomic_fetch_add(&mwp_wstat.alloc_dropped, 1);
}

/* Thread exit (pthread key destructor: return, pthread_exit, cancellation). */
static void thr_exit(void *p)
{
    struct mwp_thr *t = p;
    if (!t || atomic_load(&t->state) != MWP_T_LIVE)
        return;
    mwp_in_hook++;
    while (atomic_flag_test_and_set_explicit(&t->busy, memory_order_acquire))
        syscall(SYS_sched_yield);
    thr_drain_here(t);
    thr_cpu_exit();
    mwp_thread_emit(t, MWR_THREAD_EXIT);
    thr_close_samplers(t);
    atomic_store(&t->state, MWP_T_DEAD);
    atomic_flag_clear_explicit(&t->busy, memory_order_release);
    mwp_self = NULL;
    mwp_in_hook--;
}

/* Set up the calling thread (trampoline or constructor); defer: leave its
 * samplers to the interval thread (see "deferred samplers" below). */
MWP_HOT static void thr_begin(struct mwp_thr *t, int defer)
{
    /* deferred: the constructor's main thread, whose id and start the
     * constructor knows (no system call, no vDSO page: lazy start) */
    t->tid = defer ? mwp_proc.pid : mwp_gettid();
    t->start_ns = defer ? mwp_proc.start_mono_ns : mwp_now_ns();
    if (defer) {
        t->bounds_at = (uintptr_t)__builtin_frame_address(0);
        atomic_store(&t->pend, MWP_PEND_WAIT);
    } else {
        thr_stack_bounds(t, (uintptr_t)__builtin_frame_address(0));
        thr_sampling_open(t);
    }
    atomic_store(&t->state, MWP_T_LIVE);
    mwp_self = t;
    if (thr_key_ok)
        pthread_setspecific(thr_key, t);
    thr_push(t);
    if (atomic_load(&mwp_lazy.begun)) /* else written when the process begins (lazy start) */
        mwp_thread_emit(t, MWR_THREAD_START);
}

static void *thr_trampoline(void *p)
{
    struct mwp_thr *t = p;
    void *(*start)(void *) = t->start;
    void *arg = t->arg;
    mwp_in_hook++;
    if (atomic_load(&mwp_proc.state) == MWP_RUNNING)
        thr_begin(t, 0);
    else
        thr_release(t);
    mwp_in_hook--;
    return start(arg);
}

/* ---- deferred samplers ----
 * The first per-task perf event on a machine where none has existed for
 * about a second makes the kernel switch on its scheduler hooks (a static
 * key) and wait for an RCU grace period before perf_event_open returns: the
 * caller sleeps 5-30 ms on the development VM and 40-55 ms on the GPU machine
 * with every CPU busy (once per quiet spell, so typically once per recorded
 * program or build; every later open takes microseconds).
 *
 * So the first process of a tree, and every fork child, leave their thread's
 * samplers to the interval thread, which opens them on that thread
 * (perf_event_open with its tid) MWP_OPEN_GRACE_NS (2 ms) after the process
 * started, while the program runs on. Until then the thread is not sampled;
 * META sampling_from_ns says for how long where that was 1 ms more than the
 * grace. A fork child that execs within the grace opens nothing.
 *
 * A process execed by a recorded parent (the constructor finds
 * MEMWATCH_MACHINE handed down) opens its own in the constructor: its parent
 * holds perf events, so the hooks are on and the open takes microseconds,
 * and an event opened by a thread on itself needs no inter-processor
 * interrupt, which one opened from the interval thread on a running thread
 * does (a VM exit: about 0.15 ms more per process on the development VM).
 *
 * A thread that creates its first thread before its samplers exist opens
 * them itself first, or waits until the interval thread has, so that the new
 * thread is set up as it would have been (inherited per-CPU events, or its
 * own). */

/* Open the samplers of t (whose pend the caller moved to MWP_PEND_OPENING)
 * into a scratch entry, off t->busy (the open may sleep for milliseconds,
 * and the final drain at exit must not wait for it), then install them under
 * t->busy if t still lives. Returns 1 when installed. */
static int thr_open_claimed(struct mwp_thr *t)
{
    struct mwp_thr s;
    thr_blank(&s);
    s.tid = t->tid;
    thr_sampling_open(&s);
    while (atomic_flag_test_and_set_explicit(&t->busy, memory_order_acquire))
        syscall(SYS_sched_yield);
    int live = atomic_load(&t->state) == MWP_T_LIVE;
    if (live) {
        memcpy(t->ring, s.ring, sizeof t->ring);
        t->aux_fd = s.aux_fd;
    }
    atomic_store(&t->pend, MWP_PEND_NONE);
    atomic_flag_clear_explicit(&t->busy, memory_order_release);
    syscall(SYS_futex, &t->pend, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
    if (!live) {
        thr_close_samplers(&s);
        return 0;
    }
    uint64_t late = mwp_now_ns() - mwp_proc.start_mono_ns;
    if (t->tid == mwp_proc.pid && late >= MWP_OPEN_GRACE_NS + 1000000) {
        char b[32];
        struct mwp_str str = {b, sizeof b, 0};
        mwp_s_u64(&str, late);
        b[str.len] = 0;
        mwp_meta_note(MW_META_SAMPLING_FROM_NS, b);
    }
    return 1;
}

/* On the calling thread t, before it creates a thread: its samplers exist
 * when this returns (opened here, or by the interval thread meanwhile). */
static void thr_settle(struct mwp_thr *t)
{
    if (!t || atomic_load(&t->pend) == MWP_PEND_NONE)
        return;
    int e = MWP_PEND_WAIT;
    if (atomic_compare_exchange_strong(&t->pend, &e, MWP_PEND_OPENING)) {
        thr_open_claimed(t);
        return;
    }
    while ((e = atomic_load(&t->pend)) == MWP_PEND_OPENING)
        syscall(SYS_futex, &t->pend, FUTEX_WAIT_PRIVATE, e, NULL, NULL, 0);
}

unsigned mwp_threads_open_deferred(void)
{
    unsigned done = 0;
    for (struct mwp_thr *t = atomic_load(&thr_head); t; t = atomic_load(&t->next)) {
        int e = MWP_PEND_WAIT;
        if (atomic_load(&t->state) == MWP_T_LIVE &&
            atomic_compare_exchange_strong(&t->pend, &e, MWP_PEND_OPENING))
            done += (unsigned)thr_open_claimed(t);
    }
    return done;
}

/* ---- inherited sampling ----
 * A thread's own cpu-clock event is taken off the CPU and put back at every
 * context switch (an hrtimer cancelled and restarted: in a VM, a trap to the
 * hypervisor each time; bench/switch_cost). Events inherited from one thread
 * are clones of one context, and the kernel swaps cloned contexts between
 * threads without touching the events. So when a process starts its second
 * application thread, the creating thread (then the only one) trades its own
 * cpu-clock and page-fault events for one pair per online CPU, opened with
 * inherit and inherit_thread (threads inherit them, fork children do not),
 * each with its ring; every thread created from then on is sampled through
 * them. The per-CPU rings sit in the thread registry as entries with
 * cpu_ring >= 0 and are drained like a thread's. A process that never starts
 * a thread keeps the cheaper per-thread pair (two events, not two per CPU).
 * Where the per-CPU events cannot all be opened (an old kernel without
 * inherit_thread, the locked-memory limit), the thread gets its own events
 * back and later threads open theirs, as before; META says which. */

/* Online CPUs from /sys/devices/system/cpu/online ("0-3,8-11"). */
static int thr_online_cpus(int *cpus, int cap)
{
    char b[512];
    int n = mw_read_small("/sys/devices/system/cpu/online", b, sizeof b);
    if (n < 0)
        return n;
    return mw_cpulist_parse(b, cpus, (size_t)cap);
}

static void thr_inherit_note(const char *what, int err)
{
    char b[200];
    struct mwp_str s = {b, sizeof b, 0};
    mwp_s_str(&s, what);
    if (err) {
        mwp_s_str(&s, ": ");
        mwp_s_str(&s, mw_strerror(err));
        mwp_s_str(&s, "; every thread keeps its own events");
    }
    b[s.len] = 0;
    mwp_meta_note(MW_META_SAMPLING, b);
    if (err)
        mwp_say(2, "inherited sampling unavailable: ", b, NULL);
}

static _Atomic int thr_inherit_tried; /* once per process (a fork child tries again) */

/* Called on the creating thread before its first pthread_create, while it
 * is the only application thread memwatch knows. */
static void thr_inherit_start(struct mwp_thr *self)
{
    if (!mwp_cfg.inherit || atomic_exchange(&thr_inherit_tried, 1))
        return;
    if (!self || (!thr_attr_on(0) && !thr_attr_on(1)))
        return;
    for (struct mwp_thr *t = atomic_load(&thr_head); t; t = atomic_load(&t->next))
        if (t != self && t->cpu_ring < 0 && atomic_load(&t->state) == MWP_T_LIVE)
            return; /* not the only thread: keep per-thread events */
    int cpus[1024];
    int n = thr_online_cpus(cpus, 1024);
    if (n <= 0) {
        thr_inherit_note("per-thread events (online CPUs unknown)", n < 0 ? n : -ENODATA);
        return;
    }
    /* Only the CPUs the process may run on now (an MPI rank bound to a few
     * cores of a large node holds rings for those, not for every CPU); a
     * thread that later widens its affinity beyond them is not sampled there. */
    cpu_set_t aff;
    int nall = n;
    if (sched_getaffinity(0, sizeof aff, &aff) == 0) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (cpus[i] < CPU_SETSIZE && CPU_ISSET(cpus[i], &aff))
                cpus[k++] = cpus[i];
        if (k > 0)
            n = k;
    }
    /* The thread's own events go first (drained, then unmapped), so that no
     * sample is taken twice; if the per-CPU ones fail, it gets them back. */
    while (atomic_flag_test_and_set_explicit(&self->busy, memory_order_acquire))
        syscall(SYS_sched_yield);
    thr_drain_here(self);
    for (int i = 0; i < 2; i++)
        mw_ring_unmap(&self->ring[i]);
    thr_clock_keep(-1); /* the per-CPU events' periods stay fixed */
    struct mwp_thr *made[1024];
    int nm = 0, err = 0;
    for (int k = 0; k < n && !err; k++) {
        struct mwp_thr *t = thr_alloc();
        if (!t) {
            err = -ENOMEM;
            break;
        }
        made[nm++] = t;
        t->cpu_ring = cpus[k];
        t->tid = (pid_t)mwp_proc.pid;
        t->start_ns = mwp_now_ns();
        for (int i = 0; i < 2 && !err; i++)
            if (thr_attr_on(i))
                err = thr_ring_open(&t->ring[i], i, 0, cpus[k]);
    }
    if (err) {
        for (int k = 0; k < nm; k++) {
            for (int i = 0; i < 2; i++)
                mw_ring_unmap(&made[k]->ring[i]);
            thr_release(made[k]);
        }
        thr_sampling_open(self); /* its own events again */
        atomic_flag_clear_explicit(&self->busy, memory_order_release);
        thr_inherit_note("per-thread events (per-CPU inherited events refused)", err);
        return;
    }
    for (int k = 0; k < nm; k++) {
        atomic_store(&made[k]->state, MWP_T_LIVE);
        thr_push(made[k]);
    }
    atomic_store(&thr_inherited, 1);
    atomic_flag_clear_explicit(&self->busy, memory_order_release);
    char b[160];
    struct mwp_str str = {b, sizeof b, 0};
    mwp_s_str(&str, "per-CPU events inherited by threads, from the second thread on (");
    mwp_s_u64(&str, (uint64_t)n);
    mwp_s_str(&str, " CPUs");
    if (n < nall) {
        mwp_s_str(&str, ": the process's affinity, of ");
        mwp_s_u64(&str, (uint64_t)nall);
        mwp_s_str(&str, " online");
    }
    mwp_s_str(&str, ")");
    b[str.len] = 0;
    thr_inherit_note(b, 0);
}

MWP_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*start)(void *),
                              void *arg)
{
    MWP_NEED(pthread_create, "pthread_create");
    if (atomic_load(&mwp_proc.state) != MWP_RUNNING || mwp_in_hook)
        return mwp_real.pthread_create(th, attr, start, arg);
    /* the program's first thread: the process begins (lazy start), or
     * leaves its inline intervals for an interval thread, while it still
     * has one thread */
    mwp_begin_threaded();
    mwp_in_hook++;
    mwp_threads_key(); /* where the process did not begin here (a vfork child, ...) */
    thr_settle(mwp_self);
    if (!atomic_load(&thr_inherited))
        thr_inherit_start(mwp_self);
    struct mwp_thr *t = thr_alloc();
    mwp_in_hook--;
    if (!t)
        return mwp_real.pthread_create(th, attr, start, arg);
    t->start = start;
    t->arg = arg;
    atomic_store(&t->state, MWP_T_STARTING);
    int rc = mwp_real.pthread_create(th, attr, thr_trampoline, t);
    if (rc)
        thr_release(t);
    return rc;
}

MWP_EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
    MWP_NEED(pthread_setname_np, "pthread_setname_np");
    int rc = mwp_real.pthread_setname_np ? mwp_real.pthread_setname_np(th, name) : ENOSYS;
    if (rc == 0 && th == pthread_self() && atomic_load(&mwp_proc.state) == MWP_RUNNING) {
        mwp_in_hook++;
        mwp_thread_emit(mwp_self, MWR_THREAD_NAME);
        mwp_in_hook--;
    }
    return rc;
}

/* The key whose destructor ends a thread's record, with the calling
 * thread's value: when the process begins (lazy.c) or starts its first
 * thread. Not in the constructor: pthread_key_create writes a page of
 * libc's that a process ending at once need not touch (docs/overhead.md);
 * before it begins, only the main thread exists and its end is the
 * process's. */
void mwp_threads_key(void)
{
    if (thr_key_ok)
        return;
    if (pthread_key_create(&thr_key, thr_exit) != 0)
        return;
    thr_key_ok = 1;
    if (mwp_self)
        pthread_setspecific(thr_key, mwp_self);
}

MWP_HOT int mwp_threads_init(int defer)
{
    struct mwp_thr *t = thr_alloc();
    if (!t)
        return -ENOMEM;
    thr_begin(t, defer);
    return 0;
}

void mwp_threads_child(void)
{
    thr_clock_keep(-1); /* the descriptor is inherited; its event is the parent's */
    atomic_store(&thr_inherited, 0); /* inherit_thread: the child has no inherited events */
    atomic_store(&thr_inherit_tried, 0);
    atomic_flag_clear(&thr_free_lock);
    atomic_flag_clear(&sig_busy);
    struct mwp_thr *self = mwp_self;
    struct mwp_thr *t = atomic_load(&thr_head);
    atomic_store(&thr_head, NULL);
    for (int guard = 0; t && guard < (1 << 22); guard++) {
        struct mwp_thr *next = atomic_load(&t->next);
        t->ring[0].base = t->ring[1].base = t->ring[2].base = NULL; /* perf mappings are not inherited */
        if (t->aux_fd >= 0) /* the descriptor is inherited; its event is the parent's */
            mwp_sys_close(t->aux_fd);
        t->aux_fd = -1;
        if (t != self) {
            t->free_next = thr_free;
            thr_free = t;
            atomic_store(&t->state, MWP_T_FREE);
        }
        t = next;
    }
    if (self) {
        atomic_flag_clear(&self->busy);
        atomic_store(&self->ahead, 0);
        atomic_store(&self->atail, 0);
        self->tid = mwp_gettid();
        /* Opened by the child's own interval thread (where the child is
         * recorded: a child memwatch does not follow opens nothing). */
        atomic_store(&self->pend, MWP_PEND_WAIT);
        thr_push(self);
    }
}

unsigned mwp_threads_drain(int reap, int in_signal, uint64_t *samples, uint64_t *lost)
{
    char *buf = eng_buf;
    size_t cap = sizeof eng_buf;
    /* eng_buf belongs to the interval thread (reap); the final drain at
     * exit, which may run while that thread drains, uses sig_buf. */
    if (in_signal || !reap) {
        if (atomic_flag_test_and_set(&sig_busy))
            return 0;
        buf = sig_buf;
        cap = sizeof sig_buf;
    }
    unsigned live = 0;
    struct mwp_thr *prev = NULL;
    struct mwp_thr *t = atomic_load(&thr_head);
    for (int guard = 0; t && guard < (1 << 20); guard++) {
        struct mwp_thr *next = atomic_load(&t->next);
        int st = atomic_load(&t->state);
        if (st == MWP_T_LIVE) {
            int got = 0;
            for (int spin = 0; spin < (in_signal ? 1000 : 1); spin++) {
                if (!atomic_flag_test_and_set_explicit(&t->busy, memory_order_acquire)) {
                    got = 1;
                    break;
                }
                syscall(SYS_sched_yield);
            }
            if (got) {
                if (atomic_load(&t->state) == MWP_T_LIVE) {
                    thr_drain(t, buf, cap, samples, lost);
                    live += t->cpu_ring < 0;
                }
                atomic_flag_clear_explicit(&t->busy, memory_order_release);
            } else {
                live += t->cpu_ring < 0;
            }
            prev = t;
        } else if (st == MWP_T_DEAD && reap && !in_signal) {
            /* Unlink (only the interval thread removes entries). */
            struct mwp_thr *exp = t;
            if (!prev && atomic_compare_exchange_strong(&thr_head, &exp, next)) {
                /* was the head */
            } else {
                struct mwp_thr *p = prev ? prev : atomic_load(&thr_head);
                while (p && atomic_load(&p->next) != t)
                    p = atomic_load(&p->next);
                if (p)
                    atomic_store(&p->next, next);
                prev = p;
            }
            thr_release(t);
        } else {
            prev = t;
        }
        t = next;
    }
    if (in_signal || !reap)
        atomic_flag_clear(&sig_busy);
    return live;
}
