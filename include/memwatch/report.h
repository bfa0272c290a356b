/*
 * memwatch report: raw .mwr files -> a SQLite database (schema in
 * docs/report-schema.md) -> a summary (text or JSON).
 *
 * mw_report_ingest() reads every file (one per process; many for an MPI job),
 * decodes the kernel records, assigns samples to intervals and applies the
 * hybrid selection, symbolizes code addresses and allocation sites offline,
 * matches data addresses to allocations, static data and stacks, and writes
 * all of it in one transaction per file with prepared statements. A damaged
 * file contributes everything up to the damage; the damage is recorded in
 * processes.status and counted in the stats.
 *
 * mw_report_summary() writes the summary to a stream the caller gives (the
 * CLI passes stdout). The library itself prints nothing else.
 *
 * Threading: one ingest at a time per database file.
 */
#ifndef MEMWATCH_REPORT_H
#define MEMWATCH_REPORT_H

#include <memwatch/memwatch.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Called now and then during ingest: bytes done of bytes total. */
typedef void (*mw_progress_fn)(uint64_t done, uint64_t total, const char *file, void *user);

typedef struct mw_report_opts {
    const char *db_path;      /* database to create (replaced if it exists) */
    const char *debug_dirs;   /* NULL: "/usr/lib/debug" */
    double threshold;         /* precise-sample latency threshold (in the weight's unit);
                                 <= 0: from the machine profile, else idle DRAM latency */
    const char *profile_path; /* NULL: the default profile path; "": none */
    int no_symbols;           /* 1: skip symbolization (addresses only) */
    mw_progress_fn progress;
    void *progress_user;
    const char *inputs;       /* what the user named (a directory...), for runs.inputs;
                                 NULL: the first file */
    int leaf_only;            /* 1: no offline (DWARF) unwinding: samples keep the kernel's
                                 chain, DWARF allocation stacks none (views that need no
                                 stacks, `report --sort comm`); part of the sources key */
} mw_report_opts;

typedef struct mw_report_stats {
    uint64_t files, files_damaged, files_no_trailer;
    uint64_t records, perf_records, samples, intervals, allocations, losses;
    uint64_t bad_perf_records;   /* kernel records that failed to decode */
    uint64_t pcs;                /* distinct code addresses symbolized */
    uint64_t unwound;            /* stacks unwound from sampled registers and stack (DWARF) */
    uint64_t truncated;          /* sample and allocation stacks cut short */
    uint64_t decoded;            /* timer samples whose instruction was decoded */
    uint64_t decoded_mem;        /* ... at a memory instruction */
    uint64_t decoded_addr;       /* ... whose data address was computed */
    double unwind_seconds;       /* thread CPU time spent in those unwinds */
    double seconds;              /* wall time of the ingest */
} mw_report_stats;

/* Ingest raw files into opts->db_path. Returns 0 when every file was read
 * (damaged files included: see stats), a negative code when the database
 * cannot be written or no file could be opened. */
MW_API int mw_report_ingest(const char *const *files, size_t nfiles, const mw_report_opts *opts,
                            mw_report_stats *stats);

/* The raw files a database was built from (report/sources.c): the file
 * names, sizes, modification times and last 64 bytes (the trailer of a
 * process that ended), and the options that shape an ingest. _write records
 * them in the database; _match is 1 when the database exists, passes
 * SQLite's quick_check and was built from exactly these files, unchanged,
 * with these options (a report then reads it as it is). _key writes the
 * options string: memwatch's version and the identity of its code, opts'
 * ingest options and the machine profile file (profile: its path, NULL for
 * none) with its size and modification time. */
MW_API int mw_report_sources_key(char *buf, size_t n, const mw_report_opts *opts,
                                 const char *profile);
MW_API int mw_report_sources_write(const char *db_path, const char *const *files, size_t n,
                                   const char *options);
MW_API int mw_report_sources_match(const char *db_path, const char *const *files, size_t n,
                                   const char *options);

/* Views beside the summary (report/views.c, docs/report.md "Views"). */
typedef struct mw_report_view {
    const char *sort;    /* "comm", "dso", "function", "line" or "object"; NULL: none */
    const char *callers; /* a function name: its shares, callers and callees; NULL: none */
    int top;             /* rows per table (0 = 10) */
    int json;            /* 1: one JSON document instead of text */
    const struct mw_view_filter *filter; /* the processes covered (--rank/--pid/--host);
                                            NULL: all */
} mw_report_view;

/* Print the views asked for. 0, -EINVAL for an unknown sort key, -EIO when the
 * database cannot be read. */
MW_API int mw_report_view_print(const char *db_path, FILE *out, const mw_report_view *v);
/* Whether --sort takes key: a row of report/views.c's table of sort keys,
 * where adding a key is one row plus its query or function. */
MW_API int mw_report_sort_known(const char *key);
/* "comm, dso, function, line, object": the keys, into buf. */
MW_API const char *mw_report_sort_names(char *buf, size_t n);

/* Write the summary of a database: text (json = 0) or JSON (json = 1).
 * top: rows per table (0 = 10). */
MW_API int mw_report_summary(const char *db_path, FILE *out, int json, int top);

/* One text table of a database by "process", "thread", "region", "user" or
 * "cgroup": per row its time, share bandwidth-bound, samples, top function
 * and top data object (report/summary_by.c, a row of its by_views per view).
 * top: rows (0 = 10). -EINVAL for another view. */
MW_API int mw_report_by(const char *db_path, FILE *out, const char *by, int top);
/* Whether by names a view of mw_report_by; the views' names in words. */
MW_API int mw_report_by_known(const char *by);
MW_API const char *mw_report_by_names(void);

/* Whether the machine profile at profile_path saw memory saturate: its
 * "saturable" where it has one, else when it validated latency method
 * lat_method (that method's "saturated"): 1 yes, 0 no (nothing is then
 * called bandwidth-bound: false negatives cannot be judged), -1 unknown. */
MW_API int mw_report_saturation_seen(const char *profile_path, const char *lat_method);

/* The memory-load levels of raw files, read from the files themselves
 * (their processes' META saturable, threshold_band_ns, lat_curve, peak_bw
 * and their intervals; report/levels_raw.c): what memwatch record's
 * end-of-run summary says without a report database. Times in ns of the
 * intervals with a latency reading (MWR_IV_LAT_VALID). */
typedef struct mw_raw_levels {
    int yes, no;              /* processes whose META says saturable=1, =0 */
    double measured_ns;       /* intervals with a latency reading */
    double level_ns[4];       /* low, medium, high, bound (enum mw_level) */
    double unknown_ns;        /* of those without a level (no curve, not flagged) */
    double flagged_ns;        /* of those flagged (MWR_IV_BW_BOUND) */
    double above_ns;          /* flagged, or latency above the interval's threshold */
    uint64_t above_n;
    int have_band;            /* some process has a band: the lowest LO, highest HI */
    double band_lo, band_hi;
    double band_ns, band_above_ns; /* in the band, and of those above the threshold */
    double peak_bw;           /* the highest META peak_bw (bytes/s); 0 none */
    char note[240];           /* the first META threshold_note ("" none) */
} mw_raw_levels;

MW_API void mw_raw_levels_init(mw_raw_levels *s);
/* Adds every process of a raw file (each segment of a shared file). 0, or
 * the reader's error when the file cannot be opened (a damaged file adds
 * what comes before the damage). */
MW_API int mw_raw_levels_add(mw_raw_levels *s, const char *path);
/* 1, 0 as the files' META saturable says (1 where any process's says 1),
 * -1 where none says. */
MW_API int mw_raw_levels_saturable(const mw_raw_levels *s);

#ifdef __cplusplus
}
#endif
#endif
