/*
 * preload/alloc_sites.c: what allocation churn costs (alloc.c's helper).
 *
 * Two lock-free tables, both async-signal-safe (atomics only, no allocation,
 * no lock), both fixed in size and in .lbss (touched only where allocations
 * of at least the threshold happen):
 *
 * - the site table: per allocation site (the return address in the caller
 *   of the allocation function) how many allocations of at least the
 *   threshold it made, their bytes, and how many of them were recorded. The
 *   first MWP_SITE_FULL allocations of a site are all recorded; after that
 *   about 1 in 2, 4, ... up to 1 in 1024: each recorded allocation draws the
 *   ordinal of the site's next one (mwp_alloc_sample_next, by a hash of the
 *   ordinal, so that no period of the program aliases with it) and the
 *   others only compare their ordinal with it (a hash per allocation was
 *   the largest part of the hook's cost under churn). At
 *   the process's end each site that left allocations unrecorded is written
 *   as an MWR_ALLOC_SITE record (docs/raw-format.md). A site that finds no
 *   slot (1024 sites, 16 probes) is recorded in full, as before sampling.
 *
 * - the live table: the addresses of the recorded blocks that are not freed
 *   yet, so that free() writes a FREE only for a block that has an ALLOC.
 *   4096 buckets of 4 addresses. A recorded block that finds its bucket full
 *   makes the table "overflowed" for the rest of the process: from then on
 *   every free of a block of at least the threshold is written, as before
 *   (correct, larger), and META alloc_live_overflow says so.
 *
 * Owner: this file; alloc.c calls it with mwp_in_hook raised. A fork child
 * starts an empty site table (its counts are its own); the live table is
 * kept (the child may free the parent's recorded blocks: those FREEs are
 * written, as before).
 */
#include "alloc.h"
#include "base.h"
#include "process.h"
#include "threads.h"
#include "writer.h"

#include <memwatch/mwr.h>

#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h> /* glibc 2.32: __libc_single_threaded */
#define MWP_SINGLE_THREADED() (__libc_single_threaded != 0)
#endif
#endif
#ifndef MWP_SINGLE_THREADED
#define MWP_SINGLE_THREADED() 0
#endif

/* ---- the sampling rule (pure) ---- */

static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

/* The period of the site's allocation of 0-based ordinal n: 1 for the first
 * MWP_SITE_FULL, then the power of two that makes each doubling of the count
 * record about MWP_SITE_FULL/2 more, at most MWP_SITE_MAXPER. Pure. */
uint64_t mwp_alloc_sample_period(uint64_t n)
{
    if (n < MWP_SITE_FULL)
        return 1;
    unsigned lg = 63u - (unsigned)__builtin_clzll(n);          /* n in [2^lg, 2^(lg+1)) */
    unsigned full = 63u - (unsigned)__builtin_clzll(MWP_SITE_FULL); /* 5 for 32 */
    unsigned k = lg - full + 1;                                /* 1 for n in [32, 64) */
    uint64_t p = 1ull << (k < 63 ? k : 63);
    return p < MWP_SITE_MAXPER ? p : MWP_SITE_MAXPER;
}

/* The ordinal of the site's next recorded allocation after its recorded
 * allocation n: n + 1 while the period is 1, else n + a gap drawn from
 * 1 .. 2p - 1 (mean p, the period at n + 1) by a hash of the site and the
 * ordinal, so that no period of the program aliases with it and two sites
 * do not sample in step. Computed once per recorded allocation: the others
 * only compare their ordinal with it. Pure. */
uint64_t mwp_alloc_sample_next(uint64_t key, uint64_t n)
{
    uint64_t m = n + 1;
    uint64_t p = mwp_alloc_sample_period(m);
    if (p == 1)
        return m;
    return m + mix64(key ^ (n * 0x9E3779B97F4A7C15ull)) % (2 * p - 1);
}

#ifndef MWP_ALLOC_SITES_RULE_ONLY /* the unit test takes the rule alone */

/* A recorded block found its bucket of the live table full (below): from
 * then on every free of a block of at least the threshold is written. */
static _Atomic int live_overflow;

/* ---- the site table ---- */
#define SITE_SLOTS 1024u
#define SITE_PROBES 16u
struct site {
    _Atomic uint64_t pc;       /* 0: free slot */
    _Atomic uint64_t count;    /* allocations of the site */
    _Atomic uint64_t bytes;    /* their bytes */
    _Atomic uint64_t recorded; /* of them written as ALLOC */
    _Atomic uint64_t next;     /* the ordinal of the next one recorded */
};
MWP_COLD static struct site sites[SITE_SLOTS];
/* the process whose counts the table holds; -1: being emptied */
MWP_HOT_DATA static _Atomic pid_t site_pid;

static int site_own(void)
{
    pid_t owner = atomic_load_explicit(&site_pid, memory_order_acquire);
    if (owner == mwp_proc.pid)
        return 1;
    if (owner == -1 || !atomic_compare_exchange_strong(&site_pid, &owner, -1))
        return 0;
    for (unsigned i = 0; i < SITE_SLOTS; i++) {
        atomic_store_explicit(&sites[i].pc, 0, memory_order_relaxed);
        atomic_store_explicit(&sites[i].count, 0, memory_order_relaxed);
        atomic_store_explicit(&sites[i].bytes, 0, memory_order_relaxed);
        atomic_store_explicit(&sites[i].recorded, 0, memory_order_relaxed);
        atomic_store_explicit(&sites[i].next, 0, memory_order_relaxed);
    }
    atomic_store_explicit(&site_pid, mwp_proc.pid, memory_order_release);
    return 1;
}

/* The site found last: a loop that allocates again and again finds it
 * without the hash (a stale or reused slot fails the compare). */
static struct site *_Atomic site_last;

static struct site *site_find(uint64_t pc)
{
    struct site *l = atomic_load_explicit(&site_last, memory_order_relaxed);
    if (l && atomic_load_explicit(&l->pc, memory_order_relaxed) == pc)
        return l;
    uint64_t h = mix64(pc);
    for (unsigned k = 0; k < SITE_PROBES; k++) {
        struct site *s = &sites[(h + k) & (SITE_SLOTS - 1)];
        uint64_t cur = atomic_load_explicit(&s->pc, memory_order_acquire);
        if (cur == 0) {
            uint64_t zero = 0;
            if (atomic_compare_exchange_strong(&s->pc, &zero, pc)) {
                atomic_store_explicit(&site_last, s, memory_order_relaxed);
                return s;
            }
            cur = zero;
        }
        if (cur == pc) {
            atomic_store_explicit(&site_last, s, memory_order_relaxed);
            return s;
        }
    }
    return NULL;
}

/* Count an allocation of n bytes at site pc; 1: record it. AS-safe. */
int mwp_alloc_site_take(uint64_t pc, size_t n)
{
    if (!pc || !site_own())
        return 1;
    struct site *s = site_find(pc);
    if (!s)
        return 1; /* table full: recorded in full */
    /* A process with one thread (glibc's flag, false from its first
     * pthread_create on, memwatch's own threads included) counts without
     * locked instructions: the two locked adds were most of the hook's cost
     * under churn (docs/overhead.md, "Allocation churn"). Nothing else can
     * run meanwhile but a signal handler, and one that allocates is
     * undefined behaviour in the program already. */
    uint64_t ord;
    if (MWP_SINGLE_THREADED()) {
        ord = atomic_load_explicit(&s->count, memory_order_relaxed);
        atomic_store_explicit(&s->count, ord + 1, memory_order_relaxed);
        atomic_store_explicit(&s->bytes, atomic_load_explicit(&s->bytes, memory_order_relaxed) + n,
                              memory_order_relaxed);
        if (ord < atomic_load_explicit(&s->next, memory_order_relaxed))
            return 0;
        atomic_store_explicit(&s->next, mwp_alloc_sample_next(pc, ord), memory_order_relaxed);
    } else {
        ord = atomic_fetch_add_explicit(&s->count, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&s->bytes, n, memory_order_relaxed);
        uint64_t nx = atomic_load_explicit(&s->next, memory_order_relaxed);
        /* of the threads past the next ordinal, the one that moves it on
         * records */
        if (ord < nx || !atomic_compare_exchange_strong_explicit(
                            &s->next, &nx, mwp_alloc_sample_next(pc, ord), memory_order_relaxed,
                            memory_order_relaxed))
            return 0;
    }
    atomic_fetch_add_explicit(&s->recorded, 1, memory_order_relaxed);
    return 1;
}

/* Write an MWR_ALLOC_SITE record for each site that left allocations
 * unrecorded (totals so far: a later record of the same pc replaces it).
 * At the process's end (mwp_finish), before its buffers are written.
 * AS-safe. */
void mwp_alloc_sites_emit(void)
{
    if (atomic_load_explicit(&site_pid, memory_order_acquire) != mwp_proc.pid)
        return;
    for (unsigned i = 0; i < SITE_SLOTS; i++) {
        struct site *s = &sites[i];
        uint64_t pc = atomic_load_explicit(&s->pc, memory_order_acquire);
        uint64_t c = atomic_load_explicit(&s->count, memory_order_relaxed);
        uint64_t r = atomic_load_explicit(&s->recorded, memory_order_relaxed);
        if (!pc || c <= r)
            continue;
        mwr_alloc_site a = {pc, c, atomic_load_explicit(&s->bytes, memory_order_relaxed), r,
                            (uint32_t)(c ? mwp_alloc_sample_period(c - 1) : 1), 0};
        mwp_emit_buffered(MWR_ALLOC_SITE, &a, sizeof a, NULL, 0);
    }
    if (atomic_load(&live_overflow))
        mwp_meta_note(MW_META_ALLOC_LIVE_OVERFLOW,
                      "more recorded blocks were live at once than the table holds (16384): "
                      "from then on every free of a block of at least the threshold was written");
}

/* ---- the live table ---- */
#define LIVE_BUCKETS 4096u
#define LIVE_WAYS 4u
MWP_COLD static _Atomic uint64_t live[LIVE_BUCKETS][LIVE_WAYS];

static inline _Atomic uint64_t *live_bucket(uint64_t a)
{
    return live[mix64(a >> 4) & (LIVE_BUCKETS - 1)];
}

/* Remember recorded block p; on a full bucket the table overflows. AS-safe. */
void mwp_alloc_live_add(const void *p)
{
    uint64_t a = (uint64_t)(uintptr_t)p;
    _Atomic uint64_t *b = live_bucket(a);
    for (unsigned w = 0; w < LIVE_WAYS; w++) {
        uint64_t zero = 0;
        if (atomic_load_explicit(&b[w], memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong(&b[w], &zero, a))
            return;
    }
    atomic_store(&live_overflow, 1);
}

/* 1: p was a recorded block (now forgotten): its release is written. Also 1
 * for any block once the table overflowed. AS-safe. */
int mwp_alloc_live_take(const void *p)
{
    uint64_t a = (uint64_t)(uintptr_t)p;
    _Atomic uint64_t *b = live_bucket(a);
    for (unsigned w = 0; w < LIVE_WAYS; w++) {
        uint64_t cur = a;
        if (atomic_load_explicit(&b[w], memory_order_relaxed) == a &&
            atomic_compare_exchange_strong(&b[w], &cur, 0))
            return 1;
    }
    return atomic_load_explicit(&live_overflow, memory_order_relaxed);
}

#endif /* MWP_ALLOC_SITES_RULE_ONLY */
