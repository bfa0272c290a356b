/*
 * report/load.h: whose load the flagged intervals were (docs/saturation.md,
 * "Whose load is it"), private to report/. memwatch record's sampler writes
 * the machine's load in slots of 250 ms into a load file (.mwl,
 * include/memwatch/mwr_load.h); the report ingests it into the tables
 * load_sources, load_slots and load_procs (docs/report-schema.md) and, where
 * intervals were flagged while the recorded program used clearly less CPU
 * than other processes, names them as the likely source.
 *
 *   load_rule.c  the rule, on slots in memory (pure: unit-tested alone)
 *   load.c       the load file into the database; the verdict from the
 *                database for the summary (text, JSON) and the HTML page
 */
#ifndef MW_REPORT_LOAD_H
#define MW_REPORT_LOAD_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct cJSON;

/* ---- the rule (load_rule.c) ---- */

/* A slot is neighbour-loaded when the processes outside the recording used
 * at least MW_LOAD_OUTSIDE_MIN CPUs and at least MW_LOAD_RATIO times the
 * CPUs the recording used (counted as at least MW_LOAD_RECORDED_FLOOR): a
 * program's memory traffic needs its CPU time, so in such a slot most of the
 * machine's traffic can only be the others'. The time the recording's
 * threads waited for a CPU is carried along (a program others keep off the
 * CPUs says so) but is no CPU time: it does not weigh. The verdict "other
 * processes" holds when neighbour-loaded slots hold at least MW_LOAD_SHARE of
 * the flagged time the slots cover. */
#define MW_LOAD_OUTSIDE_MIN 1.0
#define MW_LOAD_RATIO 4.0
#define MW_LOAD_RECORDED_FLOOR 0.125
#define MW_LOAD_SHARE 0.5

typedef struct mw_load_slot {
    double len_ns;             /* the slot's length */
    double flagged_ns;         /* flagged time inside it (at most len_ns) */
    double recorded_cpus;      /* the recorded tree and the other processes of its run */
    double recorded_wait_cpus; /* the tree's threads runnable, waiting for a CPU (said, not
                                  weighed) */
    double outside_cpus;       /* the machine's busy CPUs less those and memwatch record's */
} mw_load_slot;

typedef struct mw_load_verdict {
    double flagged_ns;         /* flagged time the slots cover */
    double loaded_ns;          /* of it in neighbour-loaded slots */
    double share;              /* loaded_ns / flagged_ns (0 without flagged time) */
    double recorded_cpus;      /* mean over loaded_ns (weighted by flagged time) */
    double recorded_wait_cpus; /* likewise */
    double outside_cpus;       /* likewise */
    int others;                /* 1: the likely source is other processes */
} mw_load_verdict;

/* 1 when the slot is neighbour-loaded (its flagged time aside). */
int mw_load_slot_loaded(const mw_load_slot *s);
/* The verdict over n slots. */
void mw_load_judge(const mw_load_slot *s, size_t n, mw_load_verdict *v);

/* ---- the database (load.c) ---- */

/* 1 when path names a load file (it ends in .mwl). */
int mw_load_is_file(const char *path);
/* The load file at path into the load tables of run_id (in one savepoint).
 * 0, or a negative error after logging why; a file damaged part way is
 * read up to the damage (load_sources.status says so). */
int mw_load_ingest(sqlite3 *db, int64_t run_id, const char *path);
/* The load figures of the flagged intervals, as the JSON summary's
 * bandwidth.load (NULL where there is no load file or no flagged interval
 * in a slot); its "likely_source" holds the sentence where the verdict is
 * "other processes". */
struct cJSON *mw_load_collect(sqlite3 *db, int top);
/* The summary's line "  Likely source: ..." from bandwidth.load, if any. */
void mw_load_text(FILE *f, const struct cJSON *bw);
/* The HTML page's paragraph, if any (db as the page reads it). */
void mw_load_html(FILE *f, sqlite3 *db);

#endif
