/*
 * report/view_int.h: what the views (HTML report, exports, narrowed summary)
 * share, private to report/: opening a report database narrowed to some
 * processes, the job's aligned clock, the code names of the stacks trie, and
 * writing an output file whole or not at all.
 */
#ifndef MW_REPORT_VIEW_INT_H
#define MW_REPORT_VIEW_INT_H

#include <memwatch/views.h>

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

/* Open a report database read-only. A TEMP view shadows processes: its rank
 * is the MPI rank, NULL for processes that are none (META rank_from). With a
 * filter, TEMP views named like the tables that carry a process_id (samples,
 * intervals, ...) shadow them too, so every unqualified query sees only the
 * chosen processes. A TEMP
 * table pclock(process_id, off) gives each process the offset that puts its
 * CLOCK_MONOTONIC times on the job's clock: nanoseconds since the job's first
 * start, hosts aligned through their META start_realtime_ns (docs/export.md);
 * goff does the same for GPU kernel times (CUPTI clock, META gpu.clock).
 * Returns 0, or a negative code after logging why (no database, not a report
 * database, no process matches). */
int mwv_open(const char *db_path, const mw_view_filter *f, sqlite3 **db);

int64_t mwv_scalar(sqlite3 *db, const char *sql);
double mwv_scalar_real(sqlite3 *db, const char *sql); /* the first column as a real */

/* The data objects the samples name, one row per object merged across the
 * processes by what it is (a heap object by its allocation site, a static
 * or thread-local variable by module and name, a file by path; a stack per
 * thread), never across different sites; ? binds the row limit. Columns:
 * kind, name, size (largest), min_size, site_function, site_file,
 * site_line, samples (decoded and precise shares), in_flagged, selected,
 * decoded, precise, faults (page-fault samples: first touch), faults_in_flagged,
 * processes, objects (the objects merged: allocations of one site...), first_process
 * ("rank R" or "pid P"), last_process; a name of allocations of several sizes
 * gives their range ("malloc(4096..8192)"). Most
 * samples in flagged intervals first (docs/data-addresses.md). */
extern const char mwv_q_objects[];

/* SQL to put before a query on gpu_kernels: devname(process_id, device,
 * name), each process's CUDA devices with their names (a device's gpu.name
 * follows its gpu.device line in the META, docs/gpu.md); at most one row per
 * process and device, so a LEFT JOIN on both adds no rows. */
#define MWV_GPU_DEVNAME_CTE                                                                        \
    "WITH devname(process_id, device, name) AS (SELECT process_id, device, MAX(name)"               \
    " FROM (SELECT d.process_id, CAST(d.value AS INTEGER) AS device, (SELECT n.value"               \
    " FROM meta n WHERE n.process_id = d.process_id AND n.key = 'gpu.name' AND"                     \
    " n.rowid > d.rowid ORDER BY n.rowid LIMIT 1) AS name FROM meta d WHERE d.key ="                \
    " 'gpu.device') GROUP BY process_id, device)"

/* TEMP table pcc(process_id, pc_id, source, n, sel, fl): the samples counted
 * per process, code address and source (all, selected, in flagged
 * intervals), made by one scan of samples the first time it is asked for;
 * the views' code rankings read it instead of scanning samples again. */
int mwv_pcc(sqlite3 *db);

/* The label of a process for lanes and tracks: "rank 3 @ host (pid 1234)",
 * "pid 1234 @ host exe". */
void mwv_proc_label(sqlite3 *db, int64_t process_id, char *buf, size_t n);

/* An output written to PATH.tmp.XXXXXX beside PATH and renamed over PATH by
 * mwv_out_close(ok = 1); ok = 0 (or a write error) removes it. */
typedef struct mwv_out {
    FILE *f;
    char *tmp;
    const char *path;
} mwv_out;
int mwv_out_open(mwv_out *o, const char *path);
int mwv_out_close(mwv_out *o, int ok);
/* A view written whole: db_path opened narrowed to filter (mwv_open), the
 * output PATH written by write(db, f, arg) and kept when it returns 0
 * (mwv_out). 0, or the first error. */
int mwv_write(const char *db_path, const mw_view_filter *filter, const char *out_path,
              int (*write)(sqlite3 *db, FILE *f, const void *arg), const void *arg);

/* Code names of the stacks trie, loaded once: for each stacks node its
 * parent and the names of its frames (an inlined chain gives several, the
 * innermost first). */
typedef struct mwv_code {
    int64_t nstack;        /* stacks ids run 0..nstack-1 */
    int64_t *parent;       /* -1 at the root */
    int64_t *stack_pc;     /* pcs id, -1 when none */
    int64_t npc;
    uint32_t *pc_first;    /* index into names of a pc's first (innermost) frame */
    uint16_t *pc_nframes;  /* frames of a pc (>= 1) */
    int64_t *pc_line;      /* innermost line (0 none) */
    int64_t *pc_module;    /* module id (-1 none) */
    int64_t *pc_addr;      /* module-relative address */
    char **names;          /* frame names: "function" */
    char **files;          /* frame files (may be NULL) */
    int64_t *lines;        /* frame lines */
    uint32_t nnames;
} mwv_code;
int mwv_code_load(sqlite3 *db, mwv_code *c);
void mwv_code_free(mwv_code *c);

/* The last part of a path ("?" for NULL). */
const char *mwv_base(const char *path);
/* Bytes in B, KiB, MiB, GiB or TiB: "512 B", "1.5 MiB". */
void mwv_human_bytes(double v, char *buf, size_t n);

/* Escapes for the writers. */
void mwv_json_str(FILE *f, const char *s);
void mwv_html_str(FILE *f, const char *s);
void mwv_csv_str(FILE *f, const char *s);

#endif
