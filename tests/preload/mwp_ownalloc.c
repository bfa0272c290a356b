/*
 * tests/preload/mwp_ownalloc.c: a program with an allocator of its own, for
 * the "ownalloc" case (tests/preload/cases.sh). Built three ways:
 *   mwp_ownalloc      the allocator in the executable (as in some compilers'
 *                     tools): it comes before libmemwatch.so in the scope;
 *   libmwp_ownalloc.so  the allocator alone in a library (-DMWP_OA_LIB),
 *   mwp_ownalloc_lib  which this program (-DMWP_OA_MAIN) links: it comes
 *                     after libmemwatch.so, whose malloc hands it the calls.
 * Its blocks of 64 KiB and more come from mmap, which memwatch records. An
 * allocator call that starts while the same thread is inside another (as
 * pthread_create's calloc would be, were memwatch to start its thread from
 * the mmap that an allocation makes) ends the program with status 86.
 * It allocates and frees such blocks until memwatch began recording it (at
 * most 5 s of CPU time), then for at least 150 ms of CPU time more and until
 * its raw file holds three intervals (the CPU-time ticks of inline intervals
 * come late on a loaded machine: a few a second beside stress-ng --cpu 2),
 * at most 5 s of CPU time more.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "memwatch/mwr.h"
#include "mwp_begun.h"

#define OA_API __attribute__((visibility("default")))

#ifndef MWP_OA_MAIN
#define OA_HDR 64                 /* header before each block: keeps 64-byte alignment */
#define OA_BIG (64u << 10)        /* from here on, one mmap per block */
#define OA_ARENA (64u << 20)      /* the small blocks: bumped, never reused */
static char arena[OA_ARENA] __attribute__((aligned(4096)));
static _Atomic size_t arena_used;
static __thread int depth;

struct hdr {
    size_t size;   /* what the caller asked for */
    size_t mapped; /* 0: in the arena; else the mapping's length */
    void *base;    /* the mapping's start */
};

static void enter(void)
{
    if (depth++) {
        static const char m[] = "mwp_ownalloc: the allocator was entered again from inside itself\n";
        ssize_t r = write(2, m, sizeof m - 1);
        (void)r;
        _exit(86);
    }
}

static void *oa_alloc(size_t n, size_t align)
{
    if (align < OA_HDR)
        align = OA_HDR;
    if (n >= OA_BIG || align > 4096) {
        size_t len = (n + align + OA_HDR + 4095) & ~(size_t)4095;
        char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        uintptr_t p = ((uintptr_t)m + OA_HDR + align - 1) & ~(uintptr_t)(align - 1);
        struct hdr *h = (struct hdr *)(p - sizeof *h);
        h->size = n;
        h->mapped = len;
        h->base = m;
        return (void *)p;
    }
    size_t need = n + align + OA_HDR;
    size_t at = atomic_fetch_add(&arena_used, need);
    if (at + need > OA_ARENA) {
        errno = ENOMEM;
        return NULL;
    }
    uintptr_t p = ((uintptr_t)arena + at + OA_HDR + align - 1) & ~(uintptr_t)(align - 1);
    struct hdr *h = (struct hdr *)(p - sizeof *h);
    h->size = n;
    h->mapped = 0;
    h->base = NULL;
    return (void *)p;
}

static void oa_free(void *p)
{
    if (!p)
        return;
    struct hdr *h = (struct hdr *)((char *)p - sizeof *h);
    if (h->mapped)
        munmap(h->base, h->mapped);
}

OA_API void *malloc(size_t n)
{
    enter();
    void *p = oa_alloc(n, 16);
    depth--;
    return p;
}

OA_API void *calloc(size_t k, size_t n)
{
    enter();
    void *p = n && k > SIZE_MAX / n ? NULL : oa_alloc(k * n, 16);
    if (p)
        memset(p, 0, k * n);
    depth--;
    return p;
}

OA_API void free(void *p)
{
    enter();
    oa_free(p);
    depth--;
}

OA_API void *realloc(void *p, size_t n)
{
    enter();
    void *q = oa_alloc(n, 16);
    if (q && p) {
        size_t old = ((struct hdr *)((char *)p - sizeof(struct hdr)))->size;
        memcpy(q, p, old < n ? old : n);
        oa_free(p);
    }
    depth--;
    return q;
}

OA_API void *memalign(size_t align, size_t n)
{
    enter();
    void *p = oa_alloc(n, align);
    depth--;
    return p;
}

OA_API void *aligned_alloc(size_t align, size_t n)
{
    return memalign(align, n);
}

OA_API int posix_memalign(void **out, size_t align, size_t n)
{
    void *p = memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

OA_API void *valloc(size_t n)
{
    return memalign(4096, n);
}

OA_API void *pvalloc(size_t n)
{
    return memalign(4096, (n + 4095) & ~(size_t)4095);
}

OA_API size_t malloc_usable_size(void *p)
{
    return p ? ((struct hdr *)((char *)p - sizeof(struct hdr)))->size : 0;
}

#endif

#ifndef MWP_OA_LIB
static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Allocates until recording began (the CPU-time timer that begins it comes
 * late on a loaded machine; at most 5 s of CPU time), then for 150 ms more
 * and until its raw file holds three intervals (at most 5 s more): the
 * file's size grows by allocation records and samples too, and a loaded
 * machine gave one interval where the size had grown three times. */
static int mwp_oa_run(void)
{
    /* not preloaded: nothing to wait for */
    const char *pre = getenv("LD_PRELOAD");
    int begun = !pre || !strstr(pre, "memwatch");
    double end = cpu_s() + (begun ? 0.15 : 5.0), min_end = 0;
    long intervals = begun ? 3 : 0;
    volatile unsigned sum = 0;
    for (unsigned k = 0; cpu_s() < end && (intervals < 3 || cpu_s() < min_end); k++) {
        if (!begun && (k & 15) == 0 && (begun = recording_begun())) {
            min_end = cpu_s() + 0.15;
            end = cpu_s() + 5.0;
        }
        if (begun && intervals < 3 && (k & 15) == 0)
            intervals = own_raw_records(MWR_INTERVAL);
        char *p = malloc(256u << 10);
        if (!p)
            return 1;
        for (size_t i = 0; i < (256u << 10); i += 64) /* the program's own code, not libc's */
            ((volatile char *)p)[i] = (char)i;
        sum += (unsigned char)p[4096 + 64];
        free(p);
    }
    return sum ? 0 : 1;
}

int main(void)
{
    return mwp_oa_run();
}
#endif
