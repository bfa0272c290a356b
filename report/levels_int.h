/*
 * report/levels_int.h: the memory-load levels in the summary
 * (report/summary_levels.c), private to report/. The levels themselves:
 * include/memwatch/levels.h; their columns: docs/report-schema.md.
 */
#ifndef MW_REPORT_LEVELS_INT_H
#define MW_REPORT_LEVELS_INT_H

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

/* Processes whose META says saturable=1 (*yes) and saturable=0 (*no). */
void mwv_saturable_counts(sqlite3 *db, int *yes, int *no);
/* 1 when the database's intervals have the level columns (schema 2 on). */
int mwv_has_levels(sqlite3 *db);
/* The bandwidth object's memory-load members (docs/report.md): saturable
 * and where it came from, levels, level_unknown_ns, band,
 * possibly_bound_ns, possibly_bound_above_ns, above_threshold_ns and
 * _intervals, peak_bw, timeline_levels (ncols columns of [t0, t1); none
 * where ncols is 0), threshold_notes. Needs bw's time_ns. */
void mw_levels_collect(sqlite3 *db, cJSON *bw, int64_t t0, int64_t t1, int ncols);
/* The text summary's bandwidth section from that object (the whole
 * section: headline, band, levels, the method lines, the timelines). */
void mw_levels_text(FILE *f, const cJSON *bw, int ncols);

#endif
