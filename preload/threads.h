/*
 * preload/threads.h: every application thread's sampling, from birth to
 * exit: the thread registry, the perf rings, the allocation-record buffers,
 * the sampler attributes, and CPU-time records. Owner: threads.c.
 */
#ifndef MW_PRELOAD_THREADS_H
#define MW_PRELOAD_THREADS_H

#include "base.h"

#include <memwatch/mwr.h>
#include <memwatch/ring.h>

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

struct mwp_rgn;

/* One entry of the registry: an application thread, or (cpu_ring >= 0) the
 * per-CPU rings of inherited sampling. Entries live in memwatch's own
 * mmap'ed slabs, are never freed and are reused through a free list. The
 * thread itself produces into abuf; one consumer at a time drains it and the
 * rings, whoever holds busy. */
struct mwp_thr {
    struct mwp_thr *_Atomic next; /* registry */
    struct mwp_thr *free_next;
    _Atomic int state;            /* enum mwp_thr_state */
    atomic_flag busy;             /* one consumer at a time */
    pid_t tid;
    mw_ring ring[3];              /* 0 cpu-clock, 1 page-faults, 2 precise loads */
    int aux_fd;                   /* precise-load group leader (mem-loads-aux) or -1 */
    uintptr_t stk_lo, stk_hi;     /* read with mwp_thr_bounds first */
    uint64_t fs_base;             /* the thread's FS base (its TLS), 0: not known */
    uintptr_t bounds_at;          /* 0, or the constructor's stack address: the
                                   * two fields above not read yet (lazy start) */
    void *(*start)(void *);
    void *arg;
    char *abuf;                   /* allocation records (SPSC ring), abuf_size bytes */
    _Atomic uint64_t ahead, atail;
    uint64_t start_ns;
    int cpu_ring;                 /* >= 0: not a thread but the per-CPU rings of CPU cpu_ring
                                     (inherited sampling); -1: an application thread */
    _Atomic int pend;             /* enum mwp_thr_pend: its samplers left to the interval thread */
    struct mwp_rgn *rgn;          /* region events (region.c), made at the thread's first region;
                                     stays with the slot like abuf */
};
/* MWP_PEND_WAIT: the thread's samplers are to be opened by the interval
 * thread (constructor, fork child); MWP_PEND_OPENING: someone is opening
 * them now (futex word: waiters sleep on it until it becomes MWP_PEND_NONE). */
enum mwp_thr_pend { MWP_PEND_NONE = 0, MWP_PEND_WAIT, MWP_PEND_OPENING };
/* How long after a process starts the interval thread opens the deferred
 * samplers. A fork child that execs, or a process that ends, within it never
 * opens any (and never waits for the kernel at exec or exit); at 250
 * samples/s a thread's first cpu-clock sample comes after 4 ms of its CPU time
 * at the earliest, so the grace costs half a sample's expectation. */
#define MWP_OPEN_GRACE_NS 2000000ull
enum mwp_thr_state { MWP_T_FREE = 0, MWP_T_STARTING, MWP_T_LIVE, MWP_T_DEAD };
#define MWP_ABUF_SIZE (256u << 10)
#define MWP_ATTR_CLOCK 1
#define MWP_ATTR_FAULT 2

/* The calling thread's entry (NULL: none). Per thread, written only by the
 * thread itself (its start, the constructor, a fork child). */
extern MWP_TLS struct mwp_thr *mwp_self;

/* The samplers' perf_event_attr, as opened and as written in PERF_ATTR
 * records: [0] cpu-clock, [1] page faults, [2] precise loads; a sampler
 * whose bytes are all zero is not configured. Owner: threads.c. Written when
 * the process begins recording (process.c's attributes step, precise.c's set
 * up for [2]), on the program's one thread before any sampler opens; read by
 * threads.c (opening samplers), precise.c and writer.c (PERF_ATTR). */
#define MWP_NATTR 3
struct mwp_attrs {
    unsigned size; /* bytes of each attribute (0: none configured) */
    char bytes[MWP_NATTR][256];
};
extern struct mwp_attrs mwp_attrs;
/* The name of sampler i in its PERF_ATTR record: "cpu-clock",
 * "page-faults", and for [2] "mem-loads" or "ibs_op". [AS-safe] */
const char *mwp_attr_name(unsigned i);
/* precise.c's set-up names the precise sampler [2]. [AS-safe] (written
 * when mwp_attrs is). */
void mwp_attr_name_precise(const char *name);

/* The main thread's entry (constructor); defer: its samplers are left to
 * the interval thread. 0 or -ENOMEM. [not AS-safe] (constructor). */
int mwp_threads_init(int defer);
/* The thread-end key, created once, the caller's value set (threads.c).
 * [not AS-safe] (safe points: the lazy start, pthread_create). */
void mwp_threads_key(void);
/* Open the samplers left to the interval thread (mwp_threads_init, fork
 * child); returns how many threads got them. [interval thread], or
 * mwp_engine_start where that thread could not be started. */
unsigned mwp_threads_open_deferred(void);
/* The calling thread's own DWARF cpu-clock ring, made small while the
 * process ran its intervals inline, becomes the large one (drained first):
 * on its thread, at a safe point, where its drains may come late from now
 * on (the interval thread takes over; no tick event). No-op otherwise. */
void mwp_threads_ring_grow(void);
/* The main thread's own cpu-clock event's descriptor (-1: none), kept so
 * that mwp_threads_clock_jitter can give it a new period, uniform in
 * [1/2, 3/2] of the sampling period, at every interval; relocate: the
 * program dup2s onto it (guard.c). */
int mwp_threads_clock_fd(void);
void mwp_threads_clock_relocate(void);
void mwp_threads_clock_jitter(void);
/* Fork child: only the calling thread remains. [AS-safe] (fork child). */
void mwp_threads_child(void);
/* Drain every live thread's rings and buffers; reap dead entries when reap
 * is set ([interval thread] only). Returns the live threads and adds to the
 * samples and lost counts. [AS-safe] with in_signal set (the end of the
 * process). */
unsigned mwp_threads_drain(int reap, int in_signal, uint64_t *samples, uint64_t *lost);
/* META samples_short_threads at the end: the samples threads shorter than
 * one sampling period never got. [AS-safe] */
void mwp_threads_short_note(void);
/* An MWR_THREAD record of t (NULL: the calling thread) for event ev.
 * [AS-safe] */
void mwp_thread_emit(struct mwp_thr *t, uint32_t ev);
/* t's stack bounds and FS base, read where the constructor left them to the
 * first use (two system calls a process that ends at once does not make).
 * On t's own thread. [AS-safe] */
void mwp_thr_bounds(struct mwp_thr *t);
/* MWR_CPU: the calling thread's CPU time (whole = 0) or the process image's
 * since mwp_cpu_base_take (whole = 1). [AS-safe] */
void mwp_cpu_emit(int whole);
/* The kernel's accounting of this image or thread, at now_ns (0: read
 * now). 0 or -1. [AS-safe] */
int mwp_cpu_fill(int whole, uint64_t now_ns, mwr_cpu *out);
/* What came before this image (constructor, fork child). [AS-safe] */
void mwp_cpu_base_take(void);
/* An inline interval's tick on the program's thread began at t0 (t1 = 0) or
 * ran from t0 to t1: its samples are memwatch's own, left out at the drain
 * and counted (mwp_threads_own_samples). [AS-safe] (the lazy start's
 * handler, engine.c). */
void mwp_threads_own_time(uint64_t t0, uint64_t t1);
/* The samples left out so far (META samples_own). [AS-safe] */
uint64_t mwp_threads_own_samples(void);
/* Buffer one framed record in the calling thread's allocation buffer (or
 * write it directly). [AS-safe] once the process began or is ending; before
 * it began, an allocation hook's path: a buffer half full begins the process
 * (lazy.h, mwp_lazy_soon). */
void mwp_emit_buffered(uint32_t type, const void *a, size_t alen, const void *b, size_t blen);
/* The calling thread's allocation records, taken out of its buffer whole:
 * up to two pieces in v, nrec records. [AS-safe] */
int mwp_abuf_take(struct iovec v[2], uint64_t *nrec);

#endif
