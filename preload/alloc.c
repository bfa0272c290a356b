/*
 * preload/alloc.c: allocation tracking. Interposes malloc, calloc, realloc,
 * free, posix_memalign, aligned_alloc, memalign, valloc, pvalloc, mmap,
 * mmap64, munmap and mremap; allocations of at least MEMWATCH_ALLOC_THRESHOLD
 * bytes become MWR_ALLOC records (address, size, time, thread, the calling
 * return addresses, each distinct chain written once per process: the
 * stack table below), their release MWR_FREE. Under churn a site's
 * allocations beyond its first few are sampled and counted per site, and
 * only recorded blocks get a FREE (alloc_sites.c).
 *
 * Safety: before the next allocator is known (dlsym itself allocates) the
 * requests are served from a small static arena whose blocks are never
 * freed; a per-thread flag stops recursion (memwatch's own allocations and
 * the ones made while a record is being written are not recorded). Call
 * sites come from a frame-pointer walk bounded by the thread's stack, so a
 * program built without frame pointers yields fewer frames, never a fault.
 * Records go to the thread's buffer (threads.c), never to a fixed table; if
 * it is full they are written directly: nothing is dropped silently.
 */
#include "alloc.h"

#include "base.h"
#include "config.h"
#include "lazy.h"
#include "modules.h"
#include "process.h"
#include "real.h"
#include "threads.h"
#include "util.h"
#include "writer.h"

#include <memwatch/mwr.h>

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>

/* ---- bootstrap arena ---- */
MWP_COLD static char boot_arena[256 << 10] __attribute__((aligned(64)));
static _Atomic size_t boot_used;

static inline int boot_owns(const void *p)
{
    return (uintptr_t)p - (uintptr_t)boot_arena < sizeof boot_arena; /* one compare */
}

static void *boot_alloc(size_t n, size_t align)
{
    if (align < 16)
        align = 16;
    size_t need = n + align + 16;
    size_t off = atomic_fetch_add(&boot_used, need);
    if (off + need > sizeof boot_arena)
        return NULL;
    uintptr_t p = (uintptr_t)(boot_arena + off + 16);
    p = (p + align - 1) & ~(uintptr_t)(align - 1);
    ((size_t *)p)[-1] = n;
    return (void *)p;
}

static size_t boot_size(const void *p)
{
    return ((const size_t *)p)[-1];
}

/* ---- which blocks may be recorded ones ----
 * free() and realloc() must tell a recorded (large) block from the many small
 * ones without asking the allocator each time (malloc_usable_size on every
 * free added about a third to a malloc/free pair). A filter of 2^16 bits,
 * one set (by address hash) for every block recorded: a clear bit means the
 * block was not recorded, a set bit sends the block to malloc_usable_size as
 * before. Bits are never cleared, so a program with very many large blocks
 * slowly returns to asking every time: slower, never wrong. 8 KiB. */
#define BIG_BITS 16
MWP_COLD static _Atomic uint64_t big_filter[(1u << BIG_BITS) / 64];

static inline unsigned big_hash(const void *p)
{
    return (unsigned)(((uint64_t)(uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> (64 - BIG_BITS));
}

static inline void big_mark(const void *p)
{
    unsigned h = big_hash(p);
    atomic_fetch_or_explicit(&big_filter[h / 64], 1ull << (h % 64), memory_order_relaxed);
}

static inline int big_maybe(const void *p)
{
    unsigned h = big_hash(p);
    return (atomic_load_explicit(&big_filter[h / 64], memory_order_relaxed) >> (h % 64)) & 1;
}

/* Where the next allocator is glibc's (the usual case, known when the
 * process begins: mwp_alloc_glibc_set), its chunk header tells first: the
 * size word just before every block it hands out, flags in the low 3 bits,
 * is at least the size asked for. A block whose chunk is smaller than the
 * threshold was never recorded, and the word lies on the cache line free()
 * itself is about to touch, where the filter's word is a line of its own.
 * In cc1 the free wrapper's share of all samples went from 0.83 % to 0.58 %
 * (docs/overhead.md). Any other allocator keeps its headers elsewhere, or
 * none: the filter. */
static int alloc_glibc;

void mwp_alloc_glibc_set(void)
{
    alloc_glibc = 1;
}

/* A block of glibc's below the threshold, by its chunk header: never
 * recorded. Not for a bootstrap block, whose size word looks alike. */
static inline int glibc_small(const void *p)
{
    return alloc_glibc && !boot_owns(p) &&
           (((const size_t *)p)[-1] & ~(size_t)7) < mwp_cfg.alloc_threshold;
}

static inline int free_maybe_recorded(const void *p)
{
    if (glibc_small(p))
        return 0;
    return big_maybe(p);
}

/* ---- recording ---- */

static inline int alloc_on(size_t n)
{
    return n >= mwp_cfg.alloc_threshold && !mwp_in_hook &&
           atomic_load_explicit(&mwp_proc.state, memory_order_relaxed) == MWP_RUNNING;
}

__attribute__((noinline)) static unsigned alloc_frames(uint64_t *out, unsigned max)
{
    unsigned n = 0;
    struct mwp_thr *t = mwp_self;
    /* frame 0 of this function's caller's caller: the hook's return address */
    uintptr_t *fp = __builtin_frame_address(0);
    mwp_thr_bounds(t);
    uintptr_t lo = t ? t->stk_lo : 0, hi = t ? t->stk_hi : 0;
    /* Skip our own two frames (alloc_frames, the recording helper), then walk. */
    for (unsigned skip = 0; fp && n < max; skip++) {
        if (lo && ((uintptr_t)fp < lo || (uintptr_t)fp + 16 > hi))
            break;
        if (!lo && skip > 2)
            break; /* unknown stack bounds: only the immediate call sites */
        if ((uintptr_t)fp & 7)
            break;
        uintptr_t ret = fp[1];
        uintptr_t *next = (uintptr_t *)fp[0];
        if (skip >= 2) {
            if (ret < 4096)
                break;
            out[n++] = ret;
        }
        if (next <= fp || (uintptr_t)next - (uintptr_t)fp > (8u << 20))
            break;
        fp = next;
    }
    return n;
}

/* DWARF allocation stacks (MEMWATCH_UNWIND): the registers the unwinder
 * needs at one instruction of this function and a copy of the stack above
 * it, unwound at report time like a cpu-clock sample's; the report drops the
 * frames inside libmemwatch.so. Costs a copy of up to MEMWATCH_UNWIND_STACK
 * bytes per recorded allocation (bench/malloc_cost). Registers: BX BP SP IP
 * R12-R15 in perf_event x86 numbering; the others are not needed to unwind
 * (callee-saved ones and the stack and instruction pointers are). */
extern void *__libc_stack_end;

#if defined(__x86_64__)
#define ALLOC_REGS_MASK ((1ull << 1) | (1ull << 6) | (1ull << 7) | (1ull << 8) | (0xfull << 20))
__attribute__((noinline)) static void alloc_record_stack(mwr_alloc *a, uintptr_t stk_hi)
{
    struct {
        mwr_alloc a;
        mwr_alloc_stack h;
        uint64_t regs[8];
    } r;
    __asm__ volatile("movq %%rbx, 0(%0)\n\t"
                     "movq %%rbp, 8(%0)\n\t"
                     "movq %%rsp, 16(%0)\n\t"
                     "leaq 0(%%rip), %%rax\n\t"
                     "movq %%rax, 24(%0)\n\t"
                     "movq %%r12, 32(%0)\n\t"
                     "movq %%r13, 40(%0)\n\t"
                     "movq %%r14, 48(%0)\n\t"
                     "movq %%r15, 56(%0)\n\t"
                     :
                     : "r"(r.regs)
                     : "rax", "memory");
    uintptr_t sp = (uintptr_t)r.regs[2];
    /* on the main thread, up to the loader's frame: above it lie only the
     * arguments, the environment and the auxiliary vector (as writer.c cuts
     * the samples' copies) */
    uintptr_t top = (uintptr_t)__libc_stack_end + 128;
    if ((uintptr_t)__libc_stack_end > sp && top < stk_hi)
        stk_hi = top;
    size_t len = sp < stk_hi ? (size_t)(stk_hi - sp) : 0;
    if (len > mwp_cfg.unwind_stack)
        len = mwp_cfg.unwind_stack;
    len &= ~(size_t)7;
    r.a = *a;
    r.a.kind = (uint16_t)(a->kind | MWR_A_STACK);
    r.a.nframes = 0;
    r.h.regs_mask = ALLOC_REGS_MASK;
    r.h.stack_size = (uint32_t)len;
    r.h.pad = 0;
    mwp_emit_buffered(MWR_ALLOC, &r, sizeof r, (const void *)sp, len);
}
#else
static void alloc_record_stack(mwr_alloc *a, uintptr_t stk_hi)
{
    (void)stk_hi;
    a->nframes = 0;
    mwp_emit_buffered(MWR_ALLOC, a, sizeof *a, NULL, 0);
}
#endif

/* ---- the stack table ----
 * Allocation call chains repeat (a build's recording: 19,826 distinct
 * chains per process in 52,776 allocation records; a loop that allocates
 * from one site: one chain). Each distinct frame-pointer chain of the
 * process is written once, as an MWR_STACK record with an id, and the
 * allocation records name the id (MWR_A_STACKREF) instead of carrying the
 * frames. The table holds a 64-bit hash of each chain (never 0) and its id:
 * lock-free, a slot claimed by compare-and-swap, async-signal-safe. A chain
 * whose slot is claimed but whose id is not yet published (another thread
 * writes its STACK record at that moment), or that finds no slot within a
 * few probes (the table is full), is written in full as before. The STACK
 * record goes to the same thread's buffer before the first allocation that
 * names it; another thread's allocation may reach the file before it, which
 * readers allow (docs/raw-format.md). A fork child starts an empty table (it
 * writes a file of its own): the table belongs to the process id that
 * filled it. 4096 slots, 48 KiB, touched only where allocations are
 * recorded. */
#define STK_SLOTS 4096u
#define STK_PROBES 16u
MWP_COLD static _Atomic uint64_t stk_hash[STK_SLOTS];
MWP_COLD static _Atomic uint32_t stk_ids[STK_SLOTS];
static _Atomic uint32_t stk_next;
static _Atomic pid_t stk_pid; /* the process whose chains the table holds; -1: being emptied */

static uint64_t stk_hash_of(const uint64_t *fr, unsigned n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    for (unsigned i = 0; i < n; i++) {
        h ^= fr[i];
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h | 1;
}

/* The table, emptied first where it holds another process's chains (the
 * parent's, in a fork child). 0 while another thread empties it. */
static int stk_own(void)
{
    pid_t owner = atomic_load_explicit(&stk_pid, memory_order_acquire);
    if (owner == mwp_proc.pid)
        return 1;
    if (owner == -1 || !atomic_compare_exchange_strong(&stk_pid, &owner, -1))
        return 0;
    for (unsigned i = 0; i < STK_SLOTS; i++) {
        atomic_store_explicit(&stk_hash[i], 0, memory_order_relaxed);
        atomic_store_explicit(&stk_ids[i], 0, memory_order_relaxed);
    }
    atomic_store(&stk_next, 0);
    atomic_store_explicit(&stk_pid, mwp_proc.pid, memory_order_release);
    return 1;
}

/* Write allocation a with its chain fr[a->nframes] as a reference to the
 * process's stack table, writing the chain's STACK record first where it is
 * new. 0: not written (the caller writes the frames in full). */
static int alloc_emit_ref(mwr_alloc *a, const uint64_t *fr)
{
    if (!a->nframes || !stk_own())
        return 0;
    uint64_t h = stk_hash_of(fr, a->nframes);
    uint32_t id = 0;
    for (unsigned k = 0; k < STK_PROBES; k++) {
        unsigned i = (unsigned)((h >> 20) + k) & (STK_SLOTS - 1);
        uint64_t cur = atomic_load_explicit(&stk_hash[i], memory_order_acquire);
        if (cur == 0) {
            uint64_t zero = 0;
            if (atomic_compare_exchange_strong(&stk_hash[i], &zero, h)) {
                id = atomic_fetch_add(&stk_next, 1) + 1;
                mwr_stack st = {id, a->nframes, 0};
                mwp_emit_buffered(MWR_STACK, &st, sizeof st, fr, a->nframes * sizeof(uint64_t));
                atomic_store_explicit(&stk_ids[i], id, memory_order_release);
                break;
            }
            cur = zero; /* another thread took it: its hash */
        }
        if (cur == h) {
            id = atomic_load_explicit(&stk_ids[i], memory_order_acquire);
            if (!id)
                return 0; /* its STACK record is being written */
            break;
        }
    }
    if (!id)
        return 0;
    mwr_alloc_ref ref = {id, 0};
    a->kind = (uint16_t)(a->kind | MWR_A_STACKREF);
    a->nframes = 0;
    mwp_emit_buffered(MWR_ALLOC, a, sizeof *a, &ref, sizeof ref);
    return 1;
}

/* Record allocation p of n bytes, or only count it (alloc_sites.c: a site's
 * first MWP_SITE_FULL allocations are recorded, later ones sampled; force:
 * record anyway, for a recorded block that realloc grew or moved). mmap
 * regions are always recorded: munmap may release any part of one. */
__attribute__((noinline)) static void alloc_record_at(uint16_t kind, const void *p, size_t n,
                                                      int force, uint64_t site)
{
    mwp_in_hook++;
    int saved = errno;
    uint64_t frames[64];
    if (kind != MWR_A_MMAP && kind != MWR_A_MREMAP) {
        if (!force && !mwp_alloc_site_take(site, n)) {
            errno = saved;
            mwp_in_hook--;
            return; /* counted in its site's totals only */
        }
        big_mark(p); /* before the record: a free racing with it still looks */
        mwp_alloc_live_add(p);
    }
    mwr_alloc a;
    a.time_ns = mwp_now_ns();
    a.addr = (uint64_t)(uintptr_t)p;
    a.size = n;
    a.tid = (uint32_t)(mwp_self ? mwp_self->tid : mwp_gettid());
    a.kind = kind;
    struct mwp_thr *t = mwp_self;
    mwp_thr_bounds(t);
    /* past the run's size cap (writer.c) no stack copies: the frame-pointer
     * chain, written once per process */
    if (mwp_cfg.unwind == MWP_UNWIND_DWARF && mwp_cfg.alloc_frames && t && t->stk_hi &&
        !atomic_load_explicit(&mwp_wstat.size_capped, memory_order_relaxed)) {
        alloc_record_stack(&a, t->stk_hi);
    } else {
        unsigned max = mwp_cfg.alloc_frames > 64 ? 64 : mwp_cfg.alloc_frames;
        a.nframes = (uint16_t)alloc_frames(frames, max);
        if (!alloc_emit_ref(&a, frames))
            mwp_emit_buffered(MWR_ALLOC, &a, sizeof a, frames, a.nframes * sizeof(uint64_t));
    }
    errno = saved;
    mwp_in_hook--;
}

/* The site: the return address of the function that calls this, as the
 * frame walk (alloc_frames) reads it past alloc_record_at's frame, without
 * the walk: the hook's own return address (a slow path is jumped to from its
 * hook, and leaves the same). */
#define alloc_record(kind, p, n, force)                                                        \
    alloc_record_at(kind, p, n, force, (uint64_t)(uintptr_t)__builtin_return_address(0))

static void free_record(uint16_t kind, const void *p, size_t n)
{
    mwp_in_hook++;
    int saved = errno;
    mwr_free f;
    f.time_ns = mwp_now_ns();
    f.addr = (uint64_t)(uintptr_t)p;
    f.size = n;
    f.tid = (uint32_t)(mwp_self ? mwp_self->tid : mwp_gettid());
    f.kind = kind;
    f.pad = 0;
    mwp_emit_buffered(MWR_FREE, &f, sizeof f, NULL, 0);
    errno = saved;
    mwp_in_hook--;
}

/* ---- the hooks ---- */

#define NEED(fn)                                                                                \
    do {                                                                                        \
        if (!mwp_real.fn) {                                                                     \
            if (mwp_resolving)                                                                  \
                goto boot;                                                                      \
            mwp_resolve_one((void **)&mwp_real.fn, #fn);                                        \
            if (!mwp_real.fn)                                                                   \
                goto boot;                                                                      \
        }                                                                                       \
    } while (0)

/* The hooks' fast paths. Nearly every call a program makes is for a block
 * below the threshold (cc1: about a million malloc/free pairs per second):
 * that path loads the next allocator's function, compares, and jumps to it,
 * with no frame of its own (no frame pointer to keep: the jump leaves no
 * trace in a call chain). Everything else, recording, the bootstrap arena,
 * the first call that resolves, goes to the noinline slow functions. With
 * the recording check inside the hook, a hook's share of cc1's samples was
 * 0.60 % (free) and 0.27 % (malloc) (docs/overhead.md). */
#define MWP_FAST __attribute__((optimize("omit-frame-pointer")))

__attribute__((noinline)) static void *malloc_slow(size_t n)
{
    NEED(malloc);
    void *p = mwp_real.malloc(n);
    if (p && alloc_on(n))
        alloc_record(MWR_A_MALLOC, p, n, 0);
    return p;
boot:
    return boot_alloc(n, 16);
}

MWP_EXPORT MWP_FAST void *malloc(size_t n)
{
    void *(*fn)(size_t) = mwp_real.malloc;
    if (__builtin_expect(fn && n < mwp_cfg.alloc_threshold, 1))
        return fn(n);
    return malloc_slow(n);
}

/* This definition, by a name that the loader does not bind elsewhere. */
#if defined(__GNUC__) && !defined(__clang__)
extern void *mwp_malloc_here(size_t) __attribute__((copy(malloc), alias("malloc"), visibility("hidden")));
#else
extern void *mwp_malloc_here(size_t) __attribute__((alias("malloc"), visibility("hidden")));
#endif

MWP_HOT int mwp_alloc_ours(void *(*global)(size_t))
{
    if (global == mwp_malloc_here)
        return 1;
    /* A non-PIE executable that takes malloc's address (Debian's python3)
     * gives malloc its canonical address in its own PLT: an undefined symbol
     * with a value, which every reference to malloc's address then takes,
     * while calls through it still reach the first definition, memwatch's.
     * Only a defined symbol there is an allocator of the program's own.
     * (Only a process whose malloc is not ours pays for the look.) */
    Dl_info di;
    const ElfW(Sym) *sym = NULL;
    return dladdr1((void *)global, &di, (void **)&sym, RTLD_DL_SYMENT) && sym &&
           sym->st_shndx == SHN_UNDEF;
}

__attribute__((noinline)) static void *calloc_slow(size_t k, size_t n)
{
    NEED(calloc);
    void *p = mwp_real.calloc(k, n);
    if (p && n && k <= SIZE_MAX / n && alloc_on(k * n))
        alloc_record(MWR_A_CALLOC, p, k * n, 0);
    return p;
boot:
    if (n && k > SIZE_MAX / n)
        return NULL;
    return boot_alloc(k * n, 16); /* static memory is zeroed */
}

MWP_EXPORT MWP_FAST void *calloc(size_t k, size_t n)
{
    void *(*fn)(size_t, size_t) = mwp_real.calloc;
    size_t b;
    /* an overflowing product goes to the slow path, which lets the
     * allocator refuse it */
    if (__builtin_expect(fn && !__builtin_mul_overflow(k, n, &b) && b < mwp_cfg.alloc_threshold, 1))
        return fn(k, n);
    return calloc_slow(k, n);
}

/* malloc_usable_size, resolved where a recorded block is freed or
 * reallocated (the constructor resolves nothing: lazy start); 0: unknown */
static size_t usable_of(void *p)
{
    if (!mwp_real.usable && !mwp_resolving)
        mwp_resolve_one((void **)&mwp_real.usable, "malloc_usable_size");
    return mwp_real.usable ? mwp_real.usable(p) : 0;
}

__attribute__((noinline)) static void free_slow(void *p)
{
    if (!p || boot_owns(p))
        return;
    NEED(free);
    /* a FREE only for a recorded block (alloc_sites.c's live table) */
    if (free_maybe_recorded(p) && alloc_on(mwp_cfg.alloc_threshold) && mwp_alloc_live_take(p)) {
        size_t u = usable_of(p);
        if (u >= mwp_cfg.alloc_threshold)
            free_record(1, p, u);
    }
    mwp_real.free(p);
    return;
boot:
    return; /* cannot happen: free of a non-arena pointer before malloc was resolved */
}

/* With glibc's allocator behind the hooks, a block whose chunk header is
 * below the threshold was never recorded: straight to glibc. */
MWP_EXPORT MWP_FAST void free(void *p)
{
    void (*fn)(void *) = mwp_real.free;
    if (__builtin_expect(fn && p && glibc_small(p), 1)) {
        fn(p);
        return;
    }
    free_slow(p);
}

__attribute__((noinline)) static void *realloc_slow(void *p, size_t n)
{
    if (p && boot_owns(p)) {
        void *q = malloc(n);
        if (q) {
            size_t old = boot_size(p);
            memcpy(q, p, old < n ? old : n);
        }
        return q;
    }
    NEED(realloc);
    size_t old = 0;
    if (p && free_maybe_recorded(p) && alloc_on(mwp_cfg.alloc_threshold))
        old = usable_of(p);
    void *q = mwp_real.realloc(p, n);
    if (!q && n)
        return q;
    /* a recorded block leaves the live table here; grown or moved, it
     * stays recorded (force) */
    int was = p && old >= mwp_cfg.alloc_threshold && mwp_alloc_live_take(p);
    if (was && (q != p || !n))
        free_record(3, p, old);
    if (q && alloc_on(n))
        alloc_record(MWR_A_REALLOC, q, n, was);
    return q;
boot:
    return boot_alloc(n, 16);
}

/* Small to small (the old block by glibc's chunk header, as free): nothing
 * to record either way. */
MWP_EXPORT MWP_FAST void *realloc(void *p, size_t n)
{
    void *(*fn)(void *, size_t) = mwp_real.realloc;
    if (__builtin_expect(fn && n < mwp_cfg.alloc_threshold && (!p || glibc_small(p)), 1))
        return fn(p, n);
    return realloc_slow(p, n);
}

MWP_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    NEED(posix_memalign);
    int rc = mwp_real.posix_memalign(out, align, n);
    if (rc == 0 && alloc_on(n))
        alloc_record(MWR_A_POSIX_MEMALIGN, *out, n, 0);
    return rc;
boot:
    *out = boot_alloc(n, align);
    return *out ? 0 : ENOMEM;
}

MWP_EXPORT void *aligned_alloc(size_t align, size_t n)
{
    NEED(aligned_alloc);
    void *p = mwp_real.aligned_alloc(align, n);
    if (p && alloc_on(n))
        alloc_record(MWR_A_ALIGNED_ALLOC, p, n, 0);
    return p;
boot:
    return boot_alloc(n, align);
}

MWP_EXPORT void *memalign(size_t align, size_t n)
{
    NEED(memalign);
    void *p = mwp_real.memalign(align, n);
    if (p && alloc_on(n))
        alloc_record(MWR_A_MEMALIGN, p, n, 0);
    return p;
boot:
    return boot_alloc(n, align);
}

MWP_EXPORT void *valloc(size_t n)
{
    NEED(valloc);
    void *p = mwp_real.valloc(n);
    if (p && alloc_on(n))
        alloc_record(MWR_A_VALLOC, p, n, 0);
    return p;
boot:
    return boot_alloc(n, 4096);
}

MWP_EXPORT void *pvalloc(size_t n)
{
    NEED(pvalloc);
    void *p = mwp_real.pvalloc(n);
    if (p && alloc_on(n))
        alloc_record(MWR_A_PVALLOC, p, n, 0);
    return p;
boot:
    return boot_alloc((n + 4095) & ~(size_t)4095, 4096);
}

MWP_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    mwp_resolve_one((void **)&mwp_real.mmap, "mmap");
    void *p = mwp_real.mmap(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED && alloc_on(len))
        alloc_record(MWR_A_MMAP, p, len, 0);
    /* a file mapped as data: named by its path in the report's objects */
    if (p != MAP_FAILED && fd >= 0 && !(flags & MAP_ANONYMOUS) && !(prot & PROT_EXEC) &&
        !mwp_in_hook &&
        atomic_load_explicit(&mwp_proc.state, memory_order_relaxed) == MWP_RUNNING &&
        atomic_load(&mwp_lazy.begun)) /* (before, the start's scan of the maps sees it) */
        mwp_maps_note(fd, p, len, (long)off);
    return p;
}

MWP_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mmap(addr, len, prot, flags, fd, off);
}

MWP_EXPORT int munmap(void *addr, size_t len)
{
    mwp_resolve_one((void **)&mwp_real.munmap, "munmap");
    int rc = mwp_real.munmap(addr, len);
    if (rc == 0 && alloc_on(len))
        free_record(2, addr, len);
    return rc;
}

MWP_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    mwp_resolve_one((void **)&mwp_real.mremap, "mremap");
    void *newaddr = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        newaddr = va_arg(ap, void *);
        va_end(ap);
    }
    void *p = mwp_real.mremap(old, old_len, new_len, flags, newaddr);
    if (p != MAP_FAILED) {
        if (alloc_on(old_len) && (p != old || new_len < old_len))
            free_record(3, old, old_len);
        if (alloc_on(new_len))
            alloc_record(MWR_A_MREMAP, p, new_len, 0);
    }
    return p;
}
