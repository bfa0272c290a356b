/*
 * report/region.h: regions in the report (docs/regions.md). Private to report/.
 *
 * Ingest (ingest_region.c): the record loop hands every MWR_REGION,
 * MWR_REGION_NAME and MWR_THREAD record of a file to mw_rgn_record; once the
 * file's samples, intervals and GPU kernels are in the database,
 * mw_rgn_file_done pairs each thread's begins and ends into spans and writes
 * the tables regions, region_spans, sample_regions, gpu_kernel_regions and
 * region_notes (docs/report-schema.md), then forgets the file.
 *
 * Summary (summary_region.c): the per-region part of the JSON document and
 * its text rendering, and the --by views.
 */
#ifndef MW_REPORT_REGION_H
#define MW_REPORT_REGION_H

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

typedef struct mw_rgn mw_rgn;

mw_rgn *mw_rgn_new(void);
void mw_rgn_free(mw_rgn *g);
/* 0, MW_ERR_CORRUPT for a malformed region record, -ENOMEM */
int mw_rgn_record(mw_rgn *g, uint32_t type, const void *payload, size_t len);
/* t_end: the image's end (the trailer's time, 0 when unknown). 0 or -EIO. */
int mw_rgn_file_done(mw_rgn *g, sqlite3 *db, int64_t proc_id, uint64_t t_end);

/* The "regions" and "region_notes" members of the summary document. */
void mw_rgn_collect(sqlite3 *db, cJSON *root, int top);
void mw_rgn_text(FILE *f, const cJSON *root);
/* kernel_name.c: a GPU kernel's name shortened to about width characters
 * for text (out holds width + 4 bytes). */
void mw_kernel_short(const char *full, char *out, size_t width);
/* summary_names.c: "jit_functions" (perf-map names) and "name_notes". */
void mw_names_collect(sqlite3 *db, cJSON *root, int top);
void mw_names_text(FILE *f, const cJSON *root);

#endif
