/*
 * gpu/pclines.h: PC samples to source lines (gpu/pclines.c), apart from CUPTI
 * so that it can be tested with fixture data anywhere: sampled PCs of a
 * function are mapped to lines through a lookup (in the library, CUPTI's
 * SASS-to-source correlation of the kernel's cubin), summed per line with
 * their stall reasons, and sorted, most samples first.
 * Threading: none; the caller serialises.
 */
#ifndef MW_GPU_PCLINES_H
#define MW_GPU_PCLINES_H

#include <stddef.h>
#include <stdint.h>

/* One sampled PC: samples per stall reason (nstall counts, by position). */
typedef struct mw_pcl_hit {
    uint64_t crc, pc;
    const char *func;
    const uint64_t *stall;
} mw_pcl_hit;

/* file/line of (cubin crc, function, pc offset): 0, or -1 when unknown. */
typedef int (*mw_pcl_lookup)(uint64_t crc, const char *func, uint64_t pc, char *file,
                             size_t filesz, uint32_t *line, void *user);

typedef struct mw_pcl_line {
    char *func, *file;
    uint32_t line;             /* 0 when the lookup failed */
    uint64_t pc;               /* the line's most sampled PC */
    uint64_t samples, stall_mem;
    uint64_t *stall;           /* per stall reason */
    uint64_t pc_best;          /* samples of that PC */
} mw_pcl_line;

/* 1 for the stall reasons that wait on memory (long scoreboard, LG/MIO
 * throttle, drain, memory throttle). */
int mw_pcl_is_mem_stall(const char *name);

/* Lines of the hits: *out gets an array sorted by samples (then file, line).
 * Returns the number of lines, or -1 when out of memory. */
long mw_pcl_aggregate(const mw_pcl_hit *hits, size_t n, size_t nstall,
                      const unsigned char *is_mem, mw_pcl_lookup lookup, void *user,
                      mw_pcl_line **out);

/* "reason=count,..." of a line's top stall reasons (names without CUPTI's
 * smsp__pcsamp_warps_issue_stalled_ prefix), at most top of them. */
void mw_pcl_stall_text(const mw_pcl_line *l, size_t nstall, char *const *names, int top,
                       char *buf, size_t size);

void mw_pcl_free(mw_pcl_line *lines, long n, size_t nstall);

#endif
