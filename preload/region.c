/*
 * preload/region.c: memwatch_region_begin/end, the region API of
 * include/memwatch/region.h (docs/regions.md).
 *
 * Hot path (the program's threads): no system call, no lock, no malloc. A
 * begin or end reads the time stamp counter, finds the name's id (a 4-entry
 * per-thread cache by the name's address, checked against the name's bytes;
 * else a lock-free table by content hash; the first use of a name takes a
 * spin flag), keeps the thread's stack of open regions and puts a 24-byte
 * event in the thread's ring (single producer: the thread; single consumer:
 * whoever holds the thread's busy flag, the interval thread at each interval).
 *
 * An end is held back (r->pend, up to RG_PEND of them, innermost first): a
 * begin of the same region at the same depth within RG_MERGE_TICKS of the
 * newest held-back end takes it back, so a region begun and ended in a tight
 * loop, and nested regions begun and ended together, are one span each with
 * a count, not two events per iteration. Held-back ends are newer than every
 * event in the ring (the thread moves them to the ring before it puts another
 * event there). The consumer takes them with a compare-and-swap (1 -> 2, copy,
 * 0); the thread takes them back with 1 -> 0 before it changes them.
 *
 * Consumer (mwp_region_drain, under the thread's busy flag): packs the events
 * into MWR_REGION_PACKED records (varint tick deltas, 3 to 6 bytes an event;
 * docs/raw-format.md) with the record's start time and the ticks' length in
 * ns from the line through a (ticks, CLOCK_MONOTONIC) pair read at the first
 * region of the process and a pair read now, and writes each name's
 * MWR_REGION_NAME record the first time the file needs it. A thread whose
 * ring is full drains it itself (one write per RG_CAP events).
 */
#include "region.h"

#include "base.h"
#include "lazy.h"
#include "process.h"
#include "real.h"
#include "threads.h"
#include "util.h"
#include "writer.h"

#include <memwatch/mwr.h>

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define RG_TSC 1
#else
#define RG_TSC 0
#endif

#define RG_MAXNAMES 4096u  /* ids 1..4095 name regions; 0 is "(other regions)" */
#define RG_SLOTS 8192u     /* open-addressing table, power of two */
#define RG_NAMELEN 255u
#define RG_DEPTH 64u       /* open regions a thread's stack remembers */
#define RG_CAP 1024u       /* events per thread ring (power of two) */
#define RG_MERGE_TICKS 4096u
#define RG_PEND 8u         /* ends held back per thread (nested spans going on) */
#define RG_CACHE 4u        /* names per thread known by their pointer */
#define RG_OTHER_NAME "(other regions)"

struct mwp_rgn {
    _Atomic uint64_t head, tail;
    /* pend[0..npend): ends held back, oldest (deepest) first, newer than
     * every event in the ring. 0: the thread owns them (none outside its
     * calls), 1: published (the consumer may take them, the thread takes
     * them back), 2: the consumer copies them */
    _Atomic uint32_t pend_state;
    uint32_t npend;
    mwr_region_ev pend[RG_PEND];   /* time_ns holds ticks until written */
    uint32_t depth;
    uint32_t stack[RG_DEPTH];
    uint32_t merged[RG_DEPTH];     /* end/begin pairs swallowed by the open span at that depth */
    const char *cache_ptr[RG_CACHE]; /* the names last passed, and their ids */
    uint32_t cache_id[RG_CACHE];
    mwr_region_ev ev[RG_CAP];      /* time_ns holds ticks */
    unsigned char out[RG_CAP * 16]; /* the consumer's packed events (MWR_REGION_PACKED) */
};

/* mapped at the first name (not .bss: a page fault there would show up as a
 * data object of the program's report) */
static char (*rg_names)[RG_NAMELEN + 1];
MWP_COLD static uint16_t rg_len[RG_MAXNAMES];
MWP_COLD static uint16_t rg_flags[RG_MAXNAMES];
MWP_COLD static _Atomic uint32_t rg_written[RG_MAXNAMES]; /* file generation that has the name */
MWP_COLD static _Atomic uint64_t rg_slot[RG_SLOTS];         /* hash << 32 | (id + 1), 0 empty */
static _Atomic uint32_t rg_nnames = 1;
static atomic_flag rg_lock = ATOMIC_FLAG_INIT;
static _Atomic uint32_t rg_gen = 1;
/* the first pair of (ticks, CLOCK_MONOTONIC) */
static _Atomic int rg_ref_state; /* 0 unset, 1 being set, 2 set */
static uint64_t rg_tick0, rg_ns0;
/* what META region_notes counts */
static _Atomic uint64_t rg_n_unmatched, rg_n_implicit, rg_n_cut, rg_n_control, rg_n_other,
    rg_n_deep, rg_n_dropped, rg_n_nothread, rg_n_fork;

static inline uint64_t rg_ticks(void)
{
#if RG_TSC
    return __rdtsc();
#else
    return mwp_now_ns();
#endif
}

static void rg_ref_init(void)
{
    int exp = 0;
    if (atomic_compare_exchange_strong(&rg_ref_state, &exp, 1)) {
        rg_ns0 = mwp_now_ns();
        rg_tick0 = rg_ticks();
        atomic_store_explicit(&rg_ref_state, 2, memory_order_release);
    }
}

static void *rg_map(size_t n)
{
    void *p = (void *)syscall(SYS_mmap, NULL, n, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return (long)p < 0 && (long)p > -4096 ? NULL : p;
}

void mwp_region_reset(struct mwp_rgn *r)
{
    atomic_store(&r->head, 0);
    atomic_store(&r->tail, 0);
    atomic_store(&r->pend_state, 0);
    r->npend = 0;
    r->depth = 0;
    for (uint32_t i = 0; i < RG_CACHE; i++)
        r->cache_ptr[i] = NULL;
}

static struct mwp_rgn *rg_new(struct mwp_thr *t)
{
    struct mwp_rgn *r = rg_map(sizeof *r);
    if (!r)
        return NULL;
    mwp_region_reset(r);
    t->rgn = r;
    if (atomic_load_explicit(&rg_ref_state, memory_order_acquire) != 2)
        rg_ref_init();
    return r;
}

/* ---- names ---- */

static inline uint32_t rg_hash(const char *s, size_t *len, int *cut)
{
    uint32_t h = 2166136261u;
    size_t n = 0;
    while (n < RG_NAMELEN && s[n]) {
        h = (h ^ (unsigned char)s[n]) * 16777619u;
        n++;
    }
    *cut = n == RG_NAMELEN && s[n];
    *len = n;
    return h ? h : 1;
}

static inline int rg_is(uint32_t id, const char *s, size_t n)
{
    return rg_len[id] == n && memcmp(rg_names[id], s, n) == 0;
}

static uint32_t rg_intern(const char *name)
{
    if (!name)
        name = "(null)";
    size_t n;
    int cut;
    uint32_t h = rg_hash(name, &n, &cut);
    uint32_t i = h & (RG_SLOTS - 1);
    for (;; i = (i + 1) & (RG_SLOTS - 1)) {
        uint64_t w = atomic_load_explicit(&rg_slot[i], memory_order_acquire);
        if (!w)
            break;
        if ((uint32_t)(w >> 32) == h && rg_is((uint32_t)w - 1, name, n))
            return (uint32_t)w - 1;
    }
    /* a new name (or one another thread is adding now) */
    while (atomic_flag_test_and_set_explicit(&rg_lock, memory_order_acquire))
        sched_yield();
    uint32_t id = 0;
    for (;; i = (i + 1) & (RG_SLOTS - 1)) {
        uint64_t w = atomic_load_explicit(&rg_slot[i], memory_order_acquire);
        if (!w)
            break;
        if ((uint32_t)(w >> 32) == h && rg_is((uint32_t)w - 1, name, n)) {
            id = (uint32_t)w - 1;
            goto out;
        }
    }
    uint32_t nn = atomic_load(&rg_nnames);
    if (!rg_names && !(rg_names = rg_map(sizeof *rg_names * RG_MAXNAMES))) {
        atomic_fetch_add(&rg_n_dropped, 1);
        goto out; /* id 0 */
    }
    if (nn >= RG_MAXNAMES) {
        atomic_fetch_add(&rg_n_other, 1);
        goto out; /* id 0 */
    }
    id = nn;
    memcpy(rg_names[id], name, n);
    rg_names[id][n] = 0;
    rg_len[id] = (uint16_t)n;
    uint16_t fl = cut ? MWR_RGN_CUT : 0;
    for (size_t k = 0; k < n; k++)
        if ((unsigned char)name[k] < 0x20 || name[k] == 0x7f)
            fl |= MWR_RGN_CONTROL;
    rg_flags[id] = fl;
    if (cut)
        atomic_fetch_add(&rg_n_cut, 1);
    if (fl & MWR_RGN_CONTROL)
        atomic_fetch_add(&rg_n_control, 1);
    atomic_store(&rg_nnames, nn + 1);
    atomic_store_explicit(&rg_slot[i], ((uint64_t)h << 32) | (id + 1), memory_order_release);
out:
    atomic_flag_clear_explicit(&rg_lock, memory_order_release);
    return id;
}

/* The MWR_REGION_NAME record of id, once per file (consumer side). */
static void rg_emit_name(uint32_t id)
{
    uint32_t gen = atomic_load_explicit(&rg_gen, memory_order_relaxed);
    if (id >= RG_MAXNAMES || atomic_load_explicit(&rg_written[id], memory_order_relaxed) == gen)
        return;
    char buf[RG_NAMELEN + 1];
    mwr_region_name h = {id, 0, 0};
    size_t n;
    if (id == 0) {
        n = sizeof RG_OTHER_NAME - 1;
        memcpy(buf, RG_OTHER_NAME, n);
        h.flags = MWR_RGN_OTHER;
    } else {
        n = rg_len[id];
        h.flags = rg_flags[id];
        for (size_t k = 0; k < n; k++) {
            unsigned char ch = (unsigned char)rg_names[id][k];
            buf[k] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
        }
    }
    h.len = (uint16_t)n;
    struct iovec v[2] = {{&h, sizeof h}, {buf, n}};
    if (mwp_write(MWR_REGION_NAME, v, 2) == 0)
        atomic_store_explicit(&rg_written[id], gen, memory_order_relaxed);
}

/* ---- the consumer ---- */

struct rg_out {
    struct mwp_rgn *r;
    mwr_region_packed hdr;
    uint64_t t0, last;  /* ticks: of the record's first event, of the last one */
    uint32_t n;         /* bytes in r->out */
    uint64_t tick_now, ns_now;
};

static void rg_out_flush(struct rg_out *o)
{
    if (!o->hdr.nevents)
        return;
    o->hdr.nbytes = o->n;
    struct iovec v[2] = {{&o->hdr, sizeof o->hdr}, {o->r->out, o->n}};
    if (mwp_write(MWR_REGION_PACKED, v, 2) < 0)
        atomic_fetch_add(&rg_n_dropped, o->hdr.nevents);
    o->hdr.nevents = 0;
    o->n = 0;
}

static inline unsigned char *rg_varint(unsigned char *q, uint64_t v)
{
    while (v >= 0x80) {
        *q++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *q++ = (unsigned char)v;
    return q;
}

static inline void rg_out_put(struct rg_out *o, const mwr_region_ev *e)
{
    if (atomic_load_explicit(&rg_written[e->id < RG_MAXNAMES ? e->id : 0], memory_order_relaxed) !=
        atomic_load_explicit(&rg_gen, memory_order_relaxed))
        rg_emit_name(e->id);
    if (o->hdr.nevents == 0) {
        /* the record's tick 0 and its time: the line through the process's
         * first (ticks, CLOCK_MONOTONIC) pair and the one read now */
        o->t0 = o->last = e->time_ns;
#if RG_TSC
        double back = e->time_ns <= o->tick_now ? (double)(o->tick_now - e->time_ns) * o->hdr.ns_per_tick
                                                : -(double)(e->time_ns - o->tick_now) * o->hdr.ns_per_tick;
        double v = (double)o->ns_now - back;
        o->hdr.t0_ns = v > 0 ? (uint64_t)v : 0;
#else
        o->hdr.t0_ns = e->time_ns;
#endif
    }
    int64_t d = (int64_t)(e->time_ns - o->last);
    o->last = e->time_ns;
    unsigned char *q = o->r->out + o->n;
    q = rg_varint(q, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
    q = rg_varint(q, e->id);
    q = rg_varint(q, (uint64_t)e->depth << 3 | e->kind);
    q = rg_varint(q, e->merged);
    o->n = (uint32_t)(q - o->r->out);
    o->hdr.nevents++;
    if (o->n > sizeof o->r->out - 40)
        rg_out_flush(o);
}

void mwp_region_drain(struct mwp_thr *t)
{
    struct mwp_rgn *r = t->rgn;
    if (!r)
        return;
    /* Take the held-back ends first, then the ring's head: every event in
     * the ring before the swap is older than they are, every later one
     * newer; the ticks (one thread's counter) say which is which. */
    uint32_t one = 1, np = 0;
    mwr_region_ev pe[RG_PEND];
    if (atomic_load_explicit(&r->pend_state, memory_order_relaxed) == 1 &&
        atomic_compare_exchange_strong(&r->pend_state, &one, 2)) {
        np = r->npend < RG_PEND ? r->npend : RG_PEND;
        memcpy(pe, r->pend, np * sizeof pe[0]);
        r->npend = 0;
        atomic_store_explicit(&r->pend_state, 0, memory_order_release);
    }
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    if (head == tail && !np)
        return;
    struct rg_out o;
    memset(&o, 0, sizeof o);
    o.r = r;
    o.hdr.tid = (uint32_t)t->tid;
    o.tick_now = rg_ticks();
    o.ns_now = mwp_now_ns();
    o.hdr.ns_per_tick = 1.0;
#if RG_TSC
    if (atomic_load_explicit(&rg_ref_state, memory_order_acquire) == 2 && o.tick_now > rg_tick0 &&
        o.ns_now > rg_ns0)
        o.hdr.ns_per_tick = (double)(o.ns_now - rg_ns0) / (double)(o.tick_now - rg_tick0);
    else
        o.hdr.ns_per_tick = 0; /* no reference yet: every event at the time of the write */
#endif
    for (uint64_t p = tail; p < head; p++) {
        const mwr_region_ev *e = &r->ev[p % RG_CAP];
        if (np && e->time_ns > pe[0].time_ns) {
            for (uint32_t i = 0; i < np; i++)
                rg_out_put(&o, &pe[i]);
            np = 0;
        }
        rg_out_put(&o, e);
    }
    atomic_store_explicit(&r->tail, head, memory_order_release);
    for (uint32_t i = 0; i < np; i++)
        rg_out_put(&o, &pe[i]);
    rg_out_flush(&o);
}

/* ---- the producer (the thread itself) ---- */

static void rg_flush_self(struct mwp_thr *t)
{
    mwp_in_hook++;
    for (int spin = 0; spin < 1000; spin++) {
        if (!atomic_flag_test_and_set_explicit(&t->busy, memory_order_acquire)) {
            mwp_region_drain(t);
            atomic_flag_clear_explicit(&t->busy, memory_order_release);
            break;
        }
        sched_yield();
    }
    mwp_in_hook--;
}

static inline void rg_push(struct mwp_thr *t, struct mwp_rgn *r, const mwr_region_ev *e)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (h - atomic_load_explicit(&r->tail, memory_order_acquire) >= RG_CAP) {
        rg_flush_self(t);
        if (h - atomic_load_explicit(&r->tail, memory_order_acquire) >= RG_CAP) {
            atomic_fetch_add(&rg_n_dropped, 1);
            return;
        }
    }
    r->ev[h % RG_CAP] = *e;
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
}

/* Take the held-back ends back from the consumer (they are the thread's
 * again until it publishes them): how many. */
static inline uint32_t rg_take(struct mwp_rgn *r)
{
    uint32_t st = atomic_load_explicit(&r->pend_state, memory_order_acquire);
    if (st == 0)
        return r->npend;
    uint32_t one = 1;
    if (st == 1 && atomic_compare_exchange_strong(&r->pend_state, &one, 0))
        return r->npend;
    while (atomic_load_explicit(&r->pend_state, memory_order_acquire) != 0)
        ; /* the consumer is copying them out: they are written, none left */
    return r->npend;
}

/* Give the held-back ends (if any) to the consumer's reach. */
static inline void rg_give(struct mwp_rgn *r)
{
    if (r->npend)
        atomic_store_explicit(&r->pend_state, 1, memory_order_release);
}

/* The held-back ends go to the ring (taken: the thread owns them). */
static inline void rg_push_pend(struct mwp_thr *t, struct mwp_rgn *r)
{
    uint32_t n = r->npend;
    r->npend = 0;
    for (uint32_t i = 0; i < n; i++)
        rg_push(t, r, &r->pend[i]);
}

/* a name the thread passed before (at the same address, unchanged) */
static inline int rg_same(const char *a, const char *b)
{
    for (uint32_t i = 0; i < RG_NAMELEN; i++) {
        if (a[i] != b[i])
            return 0;
        if (!a[i])
            return 1;
    }
    return 1; /* a longer name, cut to the same 255 bytes */
}

static inline uint32_t rg_id(struct mwp_rgn *r, const char *name)
{
    if (!name)
        return rg_intern(name);
    uint32_t k = (uint32_t)((uintptr_t)name >> 3) & (RG_CACHE - 1);
    uint32_t id = r->cache_id[k];
    if (r->cache_ptr[k] == name && id && rg_same(name, rg_names[id]))
        return id;
    id = rg_intern(name);
    r->cache_ptr[k] = name;
    r->cache_id[k] = id;
    return id;
}

static inline struct mwp_rgn *rg_self(struct mwp_thr **tp)
{
    if (atomic_load_explicit(&mwp_proc.state, memory_order_relaxed) != MWP_RUNNING)
        return NULL;
    struct mwp_thr *t = mwp_self;
    if (!t || mwp_in_hook) {
        if (!t)
            atomic_fetch_add_explicit(&rg_n_nothread, 1, memory_order_relaxed);
        return NULL;
    }
    *tp = t;
    if (!atomic_load_explicit(&mwp_lazy.begun, memory_order_relaxed))
        mwp_begin(); /* regions are records worth keeping (lazy start, lazy.h) */
    struct mwp_rgn *r = t->rgn;
    return r ? r : rg_new(t);
}

MWP_EXPORT void memwatch_region_begin(const char *name)
{
    struct mwp_thr *t;
    struct mwp_rgn *r = rg_self(&t);
    if (!r)
        return;
    uint64_t now = rg_ticks();
    uint32_t id = rg_id(r, name);
    uint32_t d = r->depth;
    uint32_t np = rg_take(r);
    if (np) {
        /* the newest held-back end is at this depth: the same region again
         * within RG_MERGE_TICKS continues its span */
        const mwr_region_ev *p = &r->pend[np - 1];
        if (p->id == id && p->depth == d && now - p->time_ns < RG_MERGE_TICKS) {
            if (d < RG_DEPTH) {
                r->stack[d] = id;
                r->merged[d] = p->merged + 1;
            }
            r->depth = d + 1;
            r->npend = np - 1;
            rg_give(r);
            return;
        }
        rg_push_pend(t, r);
    }
    mwr_region_ev e = {now, id, MWR_RG_BEGIN, (uint16_t)(d < 0xffff ? d : 0xffff), 0, 0};
    rg_push(t, r, &e);
    if (d < RG_DEPTH) {
        r->stack[d] = id;
        r->merged[d] = 0;
    } else if (d == RG_DEPTH) {
        atomic_fetch_add_explicit(&rg_n_deep, 1, memory_order_relaxed);
    }
    r->depth = d + 1;
}

MWP_EXPORT void memwatch_region_end(const char *name)
{
    struct mwp_thr *t;
    struct mwp_rgn *r = rg_self(&t);
    if (!r)
        return;
    uint64_t now = rg_ticks();
    uint32_t d = r->depth, level, id;
    if (d > 0 && d <= RG_DEPTH && r->stack[d - 1] != 0 &&
        rg_same(name ? name : "(null)", rg_names[r->stack[d - 1]])) {
        level = d - 1;
        id = r->stack[level];
    } else {
        id = rg_id(r, name);
        level = UINT32_MAX;
        if (d > RG_DEPTH) {
            level = d - 1; /* beyond what the stack remembers: the innermost ends */
        } else {
            for (uint32_t i = d; i-- > 0;)
                if (r->stack[i] == id) {
                    level = i;
                    break;
                }
        }
        if (level == UINT32_MAX) {
            rg_take(r);
            rg_push_pend(t, r);
            mwr_region_ev e = {now, id, MWR_RG_END_UNMATCHED, (uint16_t)(d < 0xffff ? d : 0xffff),
                               0, 0};
            rg_push(t, r, &e);
            atomic_fetch_add_explicit(&rg_n_unmatched, 1, memory_order_relaxed);
            return;
        }
    }
    uint32_t np = rg_take(r);
    if (level + 1 < d || np == RG_PEND) {
        rg_push_pend(t, r);
        for (uint32_t i = d - 1; i > level; i--) {
            mwr_region_ev e = {now, i < RG_DEPTH ? r->stack[i] : id, MWR_RG_END_IMPLICIT,
                               (uint16_t)(i < 0xffff ? i : 0xffff), i < RG_DEPTH ? r->merged[i] : 0,
                               0};
            rg_push(t, r, &e);
            atomic_fetch_add_explicit(&rg_n_implicit, 1, memory_order_relaxed);
        }
    }
    r->pend[r->npend++] =
        (mwr_region_ev){now, id, MWR_RG_END, (uint16_t)(level < 0xffff ? level : 0xffff),
                        level < RG_DEPTH ? r->merged[level] : 0, 0};
    r->depth = level;
    rg_give(r);
}

/* ---- process events ---- */

/* t has region events not yet written (lazy start: a process that ends
 * before it began keeps them in a file of its own). */
MWP_HOT int mwp_region_pending(const struct mwp_thr *t)
{
    const struct mwp_rgn *r = t ? t->rgn : NULL;
    return r && (atomic_load(&r->head) != atomic_load(&r->tail) || atomic_load(&r->pend_state));
}

void mwp_region_child(void)
{
    atomic_fetch_add(&rg_gen, 1); /* the child's file needs the names again */
    atomic_flag_clear(&rg_lock);
    _Atomic uint64_t *cnt[] = {&rg_n_unmatched, &rg_n_implicit, &rg_n_cut, &rg_n_control,
                               &rg_n_other, &rg_n_deep, &rg_n_dropped, &rg_n_nothread, &rg_n_fork};
    for (size_t i = 0; i < sizeof cnt / sizeof cnt[0]; i++)
        atomic_store(cnt[i], 0); /* the parent's file has the parent's counts */
    struct mwp_thr *t = mwp_self;
    struct mwp_rgn *r = t ? t->rgn : NULL;
    if (!r)
        return;
    uint32_t d = r->depth;
    atomic_store(&r->head, 0);
    atomic_store(&r->tail, 0);
    atomic_store(&r->pend_state, 0);
    r->npend = 0;
    uint64_t now = rg_ticks();
    for (uint32_t i = 0; i < d && i < RG_DEPTH; i++) {
        mwr_region_ev e = {now, r->stack[i], MWR_RG_BEGIN_FORK, (uint16_t)i, 0, 0};
        rg_push(t, r, &e);
        r->merged[i] = 0;
    }
    if (d > RG_DEPTH)
        r->depth = RG_DEPTH;
    if (d)
        atomic_fetch_add(&rg_n_fork, d);
}

void mwp_region_finish(void)
{
    static const struct {
        _Atomic uint64_t *n;
        const char *what;
    } k[] = {
        {&rg_n_unmatched, " ends without an open region of that name (ignored)"},
        {&rg_n_implicit, " regions ended because an enclosing region ended"},
        {&rg_n_cut, " names longer than 255 bytes (cut)"},
        {&rg_n_control, " names with control characters (replaced by '?')"},
        {&rg_n_other, " begins or ends of names beyond the first 4095 (under " RG_OTHER_NAME ")"},
        {&rg_n_deep, " times nesting went deeper than 64 (ends there close the innermost)"},
        {&rg_n_dropped, " region events lost (ring full or write failed)"},
        {&rg_n_nothread, " calls on threads memwatch does not know (ignored)"},
        {&rg_n_fork, " regions open at fork (begin anew in the child)"},
    };
    char buf[1024];
    struct mwp_str s = {buf, sizeof buf, 0};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        uint64_t n = atomic_load(k[i].n);
        if (!n)
            continue;
        if (s.len)
            mwp_s_str(&s, "; ");
        mwp_s_u64(&s, n);
        mwp_s_str(&s, k[i].what);
    }
    if (s.len < sizeof buf)
        buf[s.len] = 0;
    else
        buf[sizeof buf - 1] = 0;
    if (s.len)
        mwp_meta_note(MW_META_REGION_NOTES, buf);
}
