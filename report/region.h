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
 * its text rendering, and what the summary's parts share: query rows as JSON
 * and the members of a summary object.
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
/* The rows of a prepared statement, its parameters bound, stepped to the end
 * and finalized: an array of objects, column names as keys; integers and
 * reals as numbers, text made valid UTF-8 (U+FFFD), NULLs left out. */
cJSON *mw_summary_rows(sqlite3_stmt *s);
/* a member of a summary object: its number (0 when absent), its string (NULL) */
double mw_rgn_num(const cJSON *o, const char *k);
const char *mw_rgn_str(const cJSON *o, const char *k);
/* A process row counted in its group, the object of arr whose member key is
 * the string value (made with 0s where there is none): its "processes" plus
 * one, and each member named in sums (a NULL-ended list) plus row's. */
cJSON *mw_summary_group_add(cJSON *arr, const char *key, const char *value, const char *const *sums,
                            const cJSON *row);
/* A source line as the text shows it: "file.c:41" (the file without its
 * folders), "(no line info)" where file is NULL. */
void mw_summary_loc(const char *file, double line, char *buf, size_t n);
/* "1.234 s", "5.678 ms", "9.1 us": a region's or kernel's time in the views */
void mw_rgn_human_time(double ns, char *buf, size_t n);

/* html_region.c: regions in the HTML report (docs/html.md). The bands of one
 * process's threads on the timeline (T: the timeline's length in ns, on the
 * pclock axis; at most max_threads threads, levels nesting levels each). */
typedef struct mwh_rbands mwh_rbands;
mwh_rbands *mwh_rbands_load(sqlite3 *db, int64_t proc_id, double T, int bins, int max_threads,
                            int levels);
int mwh_rbands_rows(const mwh_rbands *b);
void mwh_rbands_draw(FILE *f, const mwh_rbands *b, double x0, double y, double pw, double row_h);
/* what the bands leave out (threads, deeper levels), as a sentence */
void mwh_rbands_note(FILE *f, const mwh_rbands *b, const char *proc);
void mwh_rbands_free(mwh_rbands *b);
const char *mwh_region_color(int64_t region_id);
/* the Regions section: the table, each region's lines, objects, kernels, notes */
void mwh_regions_section(FILE *f, sqlite3 *db, int top);
int mwh_has_regions(sqlite3 *db);
/* kernel_name.c: a GPU kernel's name shortened to about width characters
 * for text (out holds width + 4 bytes). */
void mw_kernel_short(const char *full, char *out, size_t width);
/* summary_names.c: "jit_functions" (perf-map names) and "name_notes". */
void mw_names_collect(sqlite3 *db, cJSON *root, int top);
void mw_names_text(FILE *f, const cJSON *root);
/* Whether a perf map named any code address (pcs.quality 'perf-map'). */
int mw_names_have_perfmap(sqlite3 *db);
/* Interpreted and JIT-compiled code (docs/report.md "Symbolization"): the
 * samples that `where` selects (an SQL condition on samples AS s), each
 * counted at the innermost perf-map frame of its stack, as an array of
 * {function, samples, leaf_samples (in that frame's own code), leaves: the
 * first `leaves` leaf functions under it (0: none) {function, module,
 * samples}}, most samples first, at most top rows; *with_frame: the
 * selected samples that have such a frame. */
cJSON *mw_names_interp(sqlite3 *db, const char *where, int top, int leaves, double *with_frame);

#endif
