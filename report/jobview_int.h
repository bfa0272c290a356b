/*
 * report/jobview_int.h: the per-process and per-host view of a job
 * (report/jobview.c), private to report/.
 */
#ifndef MW_REPORT_JOBVIEW_INT_H
#define MW_REPORT_JOBVIEW_INT_H

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdio.h>

/* {processes: [...], hosts: [...], imbalance: {...}} (imbalance with two or
 * more processes). */
cJSON *mwv_jobview(sqlite3 *db);
/* The text tables (nothing for a single process). */
void mwv_jobview_text(FILE *f, const cJSON *jv);
/* "rank 3 on nodeB" / "pid 12 on host" of a process row. */
void mwv_jobview_who(const cJSON *p, char *buf, size_t n);
/* "file.c:41 function" of a row's top line. */
void mwv_jobview_line(const cJSON *p, char *buf, size_t n);
void mwv_jobview_sentence(const cJSON *im, char *buf, size_t n);
/* Whether the calibration of the run's machine profile saw memory saturate
 * (report/summary.c: META saturable, else the profile's validation of the
 * run's latency method): 1, 0, or -1 when unknown. At 0 nothing is called
 * bandwidth-bound (false negatives cannot be judged). */
int mwv_saturation_seen(sqlite3 *db);

#endif
