/*
 * sampling/ring.c: perf ring buffers (include/memwatch/ring.h).
 *
 * Owns: the mapping of one event's sample buffer and the consumer side of the
 * kernel's single-producer/single-consumer protocol. Calls: mmap/munmap (as
 * raw syscalls, so that libmemwatch.so's own mmap interposer never sees
 * memwatch's buffers), memcpy. Threading: one consumer per ring at a time,
 * serialized by the caller; mw_ring_read is async-signal-safe.
 *
 * Protocol: the kernel writes records at data_head and publishes data_head
 * after the bytes (a store-release on its side). The consumer loads data_head
 * with acquire, reads [data_tail, data_head) and then stores data_tail with
 * release, so the kernel never overwrites bytes still being copied.
 */
#include <memwatch/ring.h>

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static long ring_page(void)
{
    static long pg;
    if (!pg)
        pg = sysconf(_SC_PAGESIZE);
    return pg;
}

MW_API int mw_ring_map(mw_ring *r, int fd, unsigned data_pages)
{
    r->base = NULL;
    r->fd = -1;
    if (data_pages == 0 || (data_pages & (data_pages - 1)))
        return -EINVAL;
    size_t pg = (size_t)ring_page();
    size_t bytes = (1 + (size_t)data_pages) * pg;
    long p = syscall(SYS_mmap, NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == -1) /* glibc's syscall() returns -1 and sets errno */
        return -errno;
    r->base = (void *)p;
    r->map_bytes = bytes;
    r->data_bytes = (size_t)data_pages * pg;
    r->fd = fd;
    return 0;
}

MW_API void mw_ring_unmap(mw_ring *r)
{
    if (r->base)
        syscall(SYS_munmap, r->base, r->map_bytes);
    r->base = NULL;
}

static inline uint64_t ring_head(const struct perf_event_mmap_page *m)
{
    return __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
}

MW_API uint64_t mw_ring_pending(const mw_ring *r)
{
    if (!r->base)
        return 0;
    const struct perf_event_mmap_page *m = r->base;
    return ring_head(m) - __atomic_load_n(&m->data_tail, __ATOMIC_RELAXED);
}

/* Copy n bytes starting at ring offset pos (modulo the data size). */
static void ring_copy(const mw_ring *r, uint64_t pos, void *dst, size_t n)
{
    const char *data = (const char *)r->base + (r->map_bytes - r->data_bytes);
    size_t off = (size_t)(pos & (r->data_bytes - 1));
    size_t first = r->data_bytes - off;
    if (first >= n) {
        memcpy(dst, data + off, n);
    } else {
        memcpy(dst, data + off, first);
        memcpy((char *)dst + first, data, n - first);
    }
}

MW_API size_t mw_ring_read(mw_ring *r, void *dst, size_t cap, mw_ring_stats *st)
{
    if (!r->base)
        return 0;
    struct perf_event_mmap_page *m = r->base;
    uint64_t head = ring_head(m);
    uint64_t tail = __atomic_load_n(&m->data_tail, __ATOMIC_RELAXED);
    size_t out = 0;
    while (tail < head) {
        struct perf_event_header h;
        if (head - tail < sizeof h)
            break;
        ring_copy(r, tail, &h, sizeof h);
        if (h.size < sizeof h || (h.size & 7) || h.size > head - tail) {
            /* Damaged: give up on what is there (cannot resynchronize). */
            if (st)
                st->skipped++;
            tail = head;
            break;
        }
        if (h.size > cap) {
            if (out == 0) {
                if (st)
                    st->skipped++;
                tail += h.size;
                continue;
            }
            break;
        }
        if (out + h.size > cap)
            break;
        char *d = (char *)dst + out;
        ring_copy(r, tail, d, h.size);
        if (st) {
            if (h.type == PERF_RECORD_SAMPLE) {
                st->samples++;
            } else if (h.type == PERF_RECORD_LOST && h.size >= sizeof h + 16) {
                uint64_t lost;
                memcpy(&lost, d + sizeof h + 8, sizeof lost);
                st->lost += lost;
            } else if (h.type == PERF_RECORD_THROTTLE) {
                st->throttled++;
            }
        }
        out += h.size;
        tail += h.size;
    }
    __atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
    return out;
}
