/*
 * perf ring buffers: map the mmap'ed sample buffer of one perf event and copy
 * whole kernel records out of it. Implemented in sampling/ring.c; linked into
 * libmemwatch.so (the hot path) and usable by any module.
 *
 * Memory-ordering contract with the kernel (see linux/perf_event.h):
 * data_head is read with acquire semantics before any record byte; data_tail
 * is written with release semantics after the bytes were copied. Only whole
 * records are copied; a record that wraps past the end of the buffer is
 * reassembled in the destination (which is the bounce buffer).
 *
 * Threading and signals: a ring has one consumer at a time (the caller
 * serializes); mw_ring_read() and mw_ring_pending() call no libc function but
 * memcpy and are async-signal-safe. Map and unmap are plain syscalls.
 */
#ifndef MEMWATCH_RING_H
#define MEMWATCH_RING_H

#include <memwatch/memwatch.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mw_ring {
    void *base;        /* the mapping: metadata page then data pages; NULL if unmapped */
    size_t map_bytes;  /* (1 + data pages) * page size */
    size_t data_bytes; /* power of two */
    int fd;            /* the perf event the ring belongs to (-1 if none) */
} mw_ring;

/* What one read found besides samples. */
typedef struct mw_ring_stats {
    uint64_t samples;   /* PERF_RECORD_SAMPLE records copied */
    uint64_t lost;      /* sum of PERF_RECORD_LOST.lost */
    uint64_t throttled; /* PERF_RECORD_THROTTLE records */
    uint64_t skipped;   /* records that could not be copied (larger than dst, or damaged) */
} mw_ring_stats;

/* Map 1 + data_pages pages of event fd (data_pages: a power of two >= 1).
 * Returns 0 or -errno (EPERM when RLIMIT_MEMLOCK / perf_event_mlock_kb is
 * exhausted, EINVAL for an inherited per-task event). */
MW_API int mw_ring_map(mw_ring *r, int fd, unsigned data_pages);
/* Unmap (idempotent). Does not close the fd. */
MW_API void mw_ring_unmap(mw_ring *r);

/* Bytes published by the kernel and not yet consumed. */
MW_API uint64_t mw_ring_pending(const mw_ring *r);

/* Copy whole records, oldest first, into dst (at most cap bytes), consume
 * them and add to *st (may be NULL). Returns the bytes copied (a multiple of
 * 8): 0 when the ring is empty or dst cannot hold the next record. A record
 * larger than cap is consumed, not copied, and counted in st->skipped (cap of
 * 64 KiB or more never skips: kernel records are at most 65535 bytes). */
MW_API size_t mw_ring_read(mw_ring *r, void *dst, size_t cap, mw_ring_stats *st);

#ifdef __cplusplus
}
#endif
#endif
