/*
 * The framing of a memwatch raw file (.mwr), written in one place: the file
 * header and the record header with its size and padding (layouts in
 * include/memwatch/mwr.h, described in docs/raw-format.md). Used by every
 * writer: libmemwatch.so (preload/writer.c, preload/threads.c), the GPU
 * injection library (gpu/inject_out.c) and the tests' file builder
 * (tests/report/mwr_build.h).
 *
 * Everything here is async-signal-safe (no allocation, no locks, only
 * stores and copies), so the preload library may frame records inside
 * signal handlers and allocation hooks.
 */
#ifndef MEMWATCH_MWR_FRAME_H
#define MEMWATCH_MWR_FRAME_H

#include <memwatch/mwr.h>

#include <stddef.h>
#include <string.h>
#include <sys/resource.h>

/* The header a writer puts first: magic, this version, its own size. */
static inline void mwr_file_header_init(mwr_file_header *h)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, MWR_MAGIC, 8);
    h->version_major = MWR_VERSION_MAJOR;
    h->version_minor = MWR_VERSION_MINOR;
    h->header_size = sizeof *h;
}

/* Bytes of a whole record whose payload has len bytes: header, payload and
 * the zero padding to 8. */
static inline size_t mwr_rec_size(size_t len) { return sizeof(mwr_rec_hdr) + MWR_ALIGN(len); }

/* Zero bytes that pad a payload of len bytes to 8. */
static inline size_t mwr_pad_len(size_t len) { return MWR_ALIGN(len) - len; }

/* The header of a record whose payload has len bytes (<= 0xffffff00). */
static inline mwr_rec_hdr mwr_rec_hdr_make(uint32_t type, size_t len)
{
    mwr_rec_hdr h = {type, (uint32_t)mwr_rec_size(len)};
    return h;
}

/* A whole record in buf (room for mwr_rec_size(alen + blen) bytes): header,
 * the payload's two parts (b may be NULL), zero padding. Returns its size. */
static inline size_t mwr_frame(void *buf, uint32_t type, const void *a, size_t alen,
                               const void *b, size_t blen)
{
    unsigned char *p = (unsigned char *)buf;
    mwr_rec_hdr h = mwr_rec_hdr_make(type, alen + blen);
    memcpy(p, &h, sizeof h);
    if (alen)
        memcpy(p + sizeof h, a, alen);
    if (blen)
        memcpy(p + sizeof h + alen, b, blen);
    memset(p + sizeof h + alen + blen, 0, mwr_pad_len(alen + blen));
    return h.size;
}

/* The CPU record's accounting from the kernel's (getrusage, wait4): user
 * and system time in ns, page faults; time_ns and tid are the caller's. */
static inline void mwr_cpu_from_rusage(const struct rusage *r, mwr_cpu *c)
{
    c->user_ns = (uint64_t)r->ru_utime.tv_sec * 1000000000ull + (uint64_t)r->ru_utime.tv_usec * 1000ull;
    c->system_ns = (uint64_t)r->ru_stime.tv_sec * 1000000000ull + (uint64_t)r->ru_stime.tv_usec * 1000ull;
    c->minflt = (uint64_t)r->ru_minflt;
    c->majflt = (uint64_t)r->ru_majflt;
}

#endif
