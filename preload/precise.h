/*
 * preload/precise.h: precise load sampling per application thread (Intel
 * PEBS load latency, AMD IBS op). Owners: precise.c (the decision, opening
 * on threads, the note) and precise_attr.c (the attributes, pure).
 */
#ifndef MW_PRELOAD_PRECISE_H
#define MW_PRELOAD_PRECISE_H

#include <stddef.h>
#include <stdint.h>

struct perf_event_attr;
struct mw_profile;
struct mwp_thr;

#define MWP_LDLAT_DEFAULT 64u
/* Precise-load attributes for one thread: mw_attr_precise_loads() plus what
 * the profiler needs (call chains, frequency mode at `freq` samples/s, ldlat
 * placed per the PMU's format/ldlat field, an enabled group leader). Fills
 * a[0..*n) (leader first), the MWR_PERF_ATTR name ("mem-loads" or "ibs_op").
 * Returns 0, or MW_ERR_* with the reason in why. Pure (reads sysfs only).
 * [not AS-safe] (stdio). */
int mwp_precise_attrs(const char *sysfs_root, unsigned ldlat, unsigned long freq,
                      unsigned max_stack, struct perf_event_attr *a, size_t *n, char *name,
                      size_t name_len, char *why, size_t why_len);
/* The ldlat threshold in cycles: the user's value when set (non-zero); else
 * the profile's idle latency converted with its TSC rate (PEBS weights count
 * core cycles; the TSC rate stands in for the core clock); else
 * MWP_LDLAT_DEFAULT. Clamped to 3..65535. *src says which. p may be NULL.
 * Pure. [AS-safe] */
unsigned mwp_precise_ldlat(unsigned user, const struct mw_profile *p, const char **src);
/* Decide from MEMWATCH_PRECISE and the hardware; fills mwp_attrs.bytes[2]
 * and its name (and the group leader) when precise sampling will be tried.
 * [not AS-safe] (the lazy start's begin, on the program's one thread). */
void mwp_precise_setup(void);
/* This thread: open the precise sampler (leader kept in t->aux_fd) and map
 * its ring. Returns 0 or -errno; reports the first failure once. [AS-safe]
 * (raw system calls): the thread itself or the interval thread. */
int mwp_precise_open(struct mwp_thr *t);
/* META precise_loads: what was decided, or why the kernel refused.
 * [AS-safe] */
const char *mwp_precise_note(void);
/* Threads whose precise sampler failed to open. [AS-safe] */
uint64_t mwp_precise_unopened(void);

#endif
