/*
 * memwatch raw reader: iterate the records of a .mwr file (layout in
 * include/memwatch/mwr.h). Never trusts the file: a record whose size is
 * below 8, not a multiple of 8, or runs past the end stops the iteration
 * with MW_ERR_CORRUPT and a message naming the byte offset; every record
 * before the damage has been returned. A file that ends without
 * MWR_TRAILER is reported (mw_reader_trailer() returns 0 and
 * mw_reader_status() says why).
 *
 * Typed accessors (mw_rec_*) copy a payload into its struct: payloads
 * shorter than the struct's required part are MW_ERR_CORRUPT, longer ones
 * (newer writers appending fields) are accepted, missing appended fields
 * read as 0.
 *
 * Threading: one reader per thread; readers share nothing.
 */
#ifndef MEMWATCH_MWR_READER_H
#define MEMWATCH_MWR_READER_H

#include <memwatch/memwatch.h>
#include <memwatch/mwr.h>
#include <memwatch/mwr_gpu.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mw_reader mw_reader;

typedef struct mw_record {
    uint32_t type;          /* enum mwr_type */
    uint32_t size;          /* whole record */
    uint64_t offset;        /* file offset of its header */
    const void *payload;    /* bytes after the 8-byte header (valid until the next call) */
    size_t payload_len;     /* size - 8 */
} mw_record;

/* Open a file (mapped read-only). MW_ERR_CORRUPT when the header is short or
 * has a wrong magic, MW_ERR_FOREIGN for another major version, -errno when it
 * cannot be opened. */
MW_API int mw_reader_open(const char *path, mw_reader **out);
/* Read from memory (the caller keeps buf alive while the reader lives). */
MW_API int mw_reader_open_mem(const void *buf, size_t len, mw_reader **out);
MW_API void mw_reader_close(mw_reader *r);

/* Next record: 1 and *rec filled; 0 at the clean end of the file (after a
 * trailer, or at EOF without one: check mw_reader_trailer); MW_ERR_CORRUPT at
 * damage (mw_reader_status() describes it; further calls return it again). */
MW_API int mw_reader_next(mw_reader *r, mw_record *rec);

/* 1 when the trailer was read (then *t is filled when t != NULL). */
MW_API int mw_reader_trailer(const mw_reader *r, mwr_trailer *t);
/* The shared file of short processes (docs/raw-format.md) holds one process
 * after another, each its META and its trailer: after mw_reader_next has
 * returned 0 at a trailer with more records behind it, this starts the next
 * process (1); 0 where nothing follows. */
MW_API int mw_reader_next_segment(mw_reader *r);
/* 1 when the segment just read ended with its trailer and bytes follow it,
 * which mw_reader_next_segment would read as the next process (the shared
 * file of short processes); the reader's status then says they were
 * ignored, which is true only for a caller that stops there. */
MW_API int mw_reader_segment_follows(const mw_reader *r);
/* A sentence about the reader's state: "" while fine, else what went wrong
 * ("truncated at byte 1234: record of 96 bytes, 40 left", "no trailer: the
 * process did not end normally", ...). */
MW_API const char *mw_reader_status(const mw_reader *r);
/* Header version of the file. */
MW_API void mw_reader_version(const mw_reader *r, unsigned *major, unsigned *minor);
/* Bytes of the file and bytes consumed so far (for progress). */
MW_API uint64_t mw_reader_size(const mw_reader *r);
MW_API uint64_t mw_reader_pos(const mw_reader *r);

/* Typed payloads. Variable parts are returned as pointers into the record. */
MW_API int mw_rec_interval(const mw_record *rec, mwr_interval *out);
MW_API int mw_rec_thread(const mw_record *rec, mwr_thread *out);
/* An allocation and its call chain (nframes return addresses at *frames).
 * Where the record names a stack id (format 1.1, MWR_A_STACKREF) the frames
 * are those of the process's MWR_STACK record of that id, wherever it lies in
 * the process's records, and MWR_A_STACKREF is taken off out->kind; none
 * (nframes 0) where that record is missing or rec does not lie in the
 * memory of an open reader. */
MW_API int mw_rec_alloc(const mw_record *rec, mwr_alloc *out, const void **frames);
/* A stack table entry (MWR_STACK): its id, and its frames at *frames. */
MW_API int mw_rec_stack(const mw_record *rec, mwr_stack *out, const void **frames);
/* The stack part of an allocation whose kind has MWR_A_STACK (a, frames from
 * mw_rec_alloc): the header, the registers (popcount(regs_mask) u64 values)
 * and the stack copy, checked against the record's length. */
MW_API int mw_rec_alloc_stack(const mw_record *rec, const mwr_alloc *a, mwr_alloc_stack *out,
                              const void **regs, const void **stack);
MW_API int mw_rec_free(const mw_record *rec, mwr_free *out);
MW_API int mw_rec_alloc_site(const mw_record *rec, mwr_alloc_site *out); /* format 1.2 */
MW_API int mw_rec_cpu(const mw_record *rec, mwr_cpu *out);
MW_API int mw_rec_module(const mw_record *rec, mwr_module *out, const char **path);
MW_API int mw_rec_counters(const mw_record *rec, mwr_counters *out, const void **values);
MW_API int mw_rec_trailer(const mw_record *rec, mwr_trailer *out);
/* attr bytes and their count */
MW_API int mw_rec_perf_attr(const mw_record *rec, mwr_perf_attr *out, const void **attr);
/* kernel records and their byte count */
MW_API int mw_rec_perf_data(const mw_record *rec, mwr_perf_data *out, const void **data,
                            size_t *len);
/* GPU records (mwr_gpu.h): the kernel's name (name_len bytes, no NUL); a PC
 * line's file and function (file_len and func_len bytes, no NUL) */
MW_API int mw_rec_gpu_kernel(const mw_record *rec, mwr_gpu_kernel *out,
                             const char **name);
MW_API int mw_rec_gpu_sample(const mw_record *rec, mwr_gpu_sample *out);
MW_API int mw_rec_gpu_pc(const mw_record *rec, mwr_gpu_pc *out, const char **file,
                         const char **func);
/* text records (META, LOG, GPU_META): pointer and length, not NUL-terminated */
MW_API int mw_rec_text(const mw_record *rec, const char **text, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
