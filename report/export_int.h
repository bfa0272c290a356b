/*
 * report/export_int.h: what the export writers share, private to report/.
 */
#ifndef MW_REPORT_EXPORT_INT_H
#define MW_REPORT_EXPORT_INT_H

#include "view_int.h"

/* WHERE clause (samples aliased s) of the samples an export covers. */
void mwx_sample_where(const mw_export_opts *o, char *buf, size_t n);
/* A sample's frames, outermost first, as indexes into c->names. */
size_t mwx_stack_frames(const mwv_code *c, int64_t stack, int64_t pc, uint32_t *v, size_t max);
/* temp.sample_rset(sample_id, rset): each sample's regions as one text,
 * names for folded stacks ("region:outer;region:inner") or ids ("3,7").
 * 1 made, 0 where the database has no regions (export.c). */
int mwx_region_sets(sqlite3 *db, int names);
/* The trace's track of the bandwidth-bound slices (not a thread's: the
 * threads' tracks carry their regions). */
#define MWX_BW_TID 2000000000L
/* The trace's track of the memory-load level slices (export_levels.c). */
#define MWX_LEVEL_TID 2000000001L
/* The levels in the trace: the level tracks named, a "memory load share"
 * counter per process, the level slices; events after the ones written
 * (*first: none yet). 0, or -EIO when the intervals cannot be read. */
int mwx_trace_levels(sqlite3 *db, FILE *f, int *first);
/* pprof: gzipped profile.proto (export_pprof.c). */
int mwx_pprof(sqlite3 *db, FILE *f, const mw_export_opts *o);

#endif
