/*
 * report/ingest.c: raw files -> SQLite (mw_report_ingest).
 *
 * Owns: the run (its threshold for precise samples, its runs row), the pass
 * over each file in one transaction (processes row, records through
 * ingest_records.c, the trailer's losses and the process's columns from its
 * META keys), and the threshold of each process's precise samples. The parts
 * it drives are listed in report/ingest.h.
 * May call: mwr_reader, profile, symbolize, the ingest parts, SQLite, libc.
 * Prints nothing. Threading: one ingest per database at a time; no global
 * state.
 */
#include <memwatch/profile.h>

#include "ingest.h"
#include "load.h"
#include "perfmap.h"
#include "region.h"

#include <stdio.h>
#include <time.h>

typedef struct ingest {
    ing_db db;
    ing_code code;
    ing_objects objs;
    ing_file file;
    mw_rgn *rgn;               /* regions of the file (ingest_region.c) */
    const mw_report_opts *o;
    mw_report_stats *st;
    double threshold;          /* the run's precise-sample threshold */
    int have_run_profile;      /* threshold came from a profile or the option */
    const char *run_thr_src;
    const char *proc_thr_src;  /* source of file.threshold, NULL: the run's */
    int64_t run_id;
    uint64_t bytes_done, bytes_total;
    size_t files_opened;
    int in_tx;                 /* a transaction is open (tx_begin) */
    uint64_t tx_bytes;         /* raw bytes ingested in it */
    char *debug_dirs;          /* .build-id roots (ingest_debug_dirs) */
} ingest;

/* Files are ingested in transactions of about 64 MiB of raw input, not one
 * each: a commit writes every page the transaction touched (64 KiB pages,
 * about ten tables), and a build's thousand small files made that a
 * thousand times the same pages. A failed ingest is rolled back and its
 * database never replaces the old one, so the grouping loses nothing. */
static int tx_begin(ingest *g)
{
    if (g->in_tx)
        return 0;
    if (ing_db_exec(&g->db, "BEGIN"))
        return -EIO;
    g->in_tx = 1;
    g->tx_bytes = 0;
    return 0;
}

static int tx_commit(ingest *g, uint64_t bytes, int force)
{
    g->tx_bytes += bytes;
    if (!g->in_tx || (!force && g->tx_bytes < (64u << 20)))
        return 0;
    g->in_tx = 0;
    return ing_db_exec(&g->db, "COMMIT") ? -EIO : 0;
}

/* The path of the machine profile a recording used: META "profile_path";
 * files written before that key existed name it in "profile" as
 * "PATH (created DATE)". "" when none was used. */
static void recorded_profile(ingest *g, char *buf, size_t n)
{
    ing_db_meta_value(&g->db, g->file.proc, "profile_path", buf, n);
    if (buf[0])
        return;
    ing_db_meta_value(&g->db, g->file.proc, "profile", buf, n);
    if (buf[0] != '/') {
        buf[0] = 0;
        return;
    }
    char *cut = strstr(buf, " (created");
    if (cut)
        *cut = 0;
}

/* The latency threshold (core cycles, the unit of PEBS/IBS weights) for this
 * process's precise samples: the user's value; else the machine profile the
 * recording used (META "profile_path"), its precise-latency method's
 * threshold or its idle DRAM latency; else the profile found when the report
 * started; else the idle probe latency measured at record time (META
 * "baseline_ns"); else the run default. */
static void process_threshold(ingest *g)
{
    g->file.threshold = g->threshold;
    g->proc_thr_src = g->o->threshold > 0 ? "option" : NULL;
    if (g->o->threshold > 0)
        return;
    char prof[4096], tsc[64], base[64];
    recorded_profile(g, prof, sizeof prof);
    ing_db_meta_value(&g->db, g->file.proc, "tsc_hz", tsc, sizeof tsc);
    ing_db_meta_value(&g->db, g->file.proc, "baseline_ns", base, sizeof base);
    double tsc_hz = atof(tsc);
    if (!g->o->profile_path && prof[0]) {
        mw_profile p;
        if (mw_profile_load(prof, 0, &p) == 0) {
            double t = mw_hybrid_threshold(&p, 0);
            double hz = p.tsc_hz > 0 ? p.tsc_hz : tsc_hz;
            if (t > 0 && hz > 0) {
                g->file.threshold = t * hz / 1e9;
                g->proc_thr_src = "machine profile of the recording (cycles)";
                return;
            }
        }
    }
    if (g->have_run_profile)
        return;
    double b = atof(base);
    if (b > 0 && tsc_hz > 0) {
        g->file.threshold = b * tsc_hz / 1e9;
        g->proc_thr_src = "idle latency measured at record time (baseline_ns, cycles)";
    }
}

/* Fill processes columns from META keys once the file was read. ?3, ?4, ?5:
 * the rowids of meta, intervals and samples before the process began (its
 * rows come after them): each subquery reads the process's rows only, not
 * every earlier process's (quadratic in a build of a thousand processes). */
static const char proc_from_meta[] =
    "UPDATE processes SET "
    " pid = (SELECT CAST(value AS INTEGER) FROM meta WHERE rowid>?3 AND process_id=?1 AND key='pid'),"
    " ppid = (SELECT CAST(value AS INTEGER) FROM meta WHERE rowid>?3 AND process_id=?1 AND key='ppid'),"
    /* a launcher's rank only: memwatch's own writers name its variable
     * (rank_from) and write rank=0 for a process without one (mpirun, a
     * helper), which has no rank (NULL); other writers' rank keys as given */
    " rank = CASE WHEN EXISTS (SELECT 1 FROM meta WHERE rowid>?3 AND process_id=?1 AND key='rank_from')"
    "   OR NOT EXISTS (SELECT 1 FROM meta WHERE rowid>?3 AND process_id=?1 AND key='writer'"
    "     AND value IN ('libmemwatch.so','memwatch record'))"
    "  THEN (SELECT CAST(value AS INTEGER) FROM meta WHERE rowid>?3 AND process_id=?1 AND key IN "
    "   ('rank','mpi.rank','mpi_rank') LIMIT 1) END,"
    " hostname = (SELECT value FROM meta WHERE rowid>?3 AND process_id=?1 AND key IN ('hostname','host') LIMIT 1),"
    " exe = (SELECT value FROM meta WHERE rowid>?3 AND process_id=?1 AND key IN ('exe','program') LIMIT 1),"
    " cmdline = (SELECT value FROM meta WHERE rowid>?3 AND process_id=?1 AND key IN ('cmdline','argv','command') LIMIT 1),"
    " t_start = COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE rowid>?3 AND process_id=?1 AND key IN "
    "   ('start_monotonic_ns','start_ns','t_start') LIMIT 1),"
    "   (SELECT MIN(t_start) FROM intervals WHERE id>?4 AND process_id=?1),"
    "   (SELECT MIN(time_ns) FROM samples WHERE id>?5 AND process_id=?1)),"
    " t_end = COALESCE((SELECT MAX(t_end) FROM intervals WHERE id>?4 AND process_id=?1),"
    "   (SELECT MAX(time_ns) FROM samples WHERE id>?5 AND process_id=?1), ?2)"
    " WHERE id=?1";

/* The processes row of a file, before its records. */
static int process_begin(ingest *g, const char *path, int open_rc)
{
    sqlite3_stmt *s = NULL;
    static const char ins[] =
        "INSERT INTO processes(run_id,file,status,clean_exit) VALUES(?,?,?,0)";
    static const char rowids[] = "SELECT (SELECT COALESCE(MAX(rowid), 0) FROM meta),"
                                 " (SELECT COALESCE(MAX(id), 0) FROM intervals),"
                                 " (SELECT COALESCE(MAX(id), 0) FROM samples)";
    if (!(s = ing_db_prep(&g->db, ins)))
        return ing_db_err(&g->db, "processes");
    sqlite3_bind_int64(s, 1, g->run_id);
    ing_bind_text(s, 2, path);
    if (open_rc) {
        char msg[300];
        snprintf(msg, sizeof msg, "cannot read: %s", mw_strerror(open_rc));
        ing_bind_text(s, 3, msg);
    }
    sqlite3_step(s);
    sqlite3_reset(s);
    g->file.proc = ing_db_last_id(&g->db);
    /* where this process's rows will start (proc_from_meta, ing_db_meta_value) */
    g->db.meta0 = g->db.iv0 = g->db.smp0 = 0;
    if (!(s = ing_db_prep(&g->db, rowids)))
        return ing_db_err(&g->db, "processes");
    if (sqlite3_step(s) == SQLITE_ROW) {
        g->db.meta0 = sqlite3_column_int64(s, 0);
        g->db.iv0 = sqlite3_column_int64(s, 1);
        g->db.smp0 = sqlite3_column_int64(s, 2);
    }
    sqlite3_reset(s);
    return 0;
}

/* The processes row of a file, after its records: trailer, status, threshold,
 * then the columns taken from META keys. */
static int process_end(ingest *g, mw_reader *r, const mwr_trailer *tr, int have_tr)
{
    sqlite3_stmt *s = NULL;
    static const char upd[] =
        "UPDATE processes SET clean_exit=?, exit_status=?, status=?, records=?,"
        " bytes=?, trailer_lost=?, trailer_throttled=?, trailer_dropped=?,"
        " trailer_alloc_dropped=?, threshold=?, threshold_source=?, user_ns=?,"
        " system_ns=?, minflt=?, majflt=? WHERE id=?";
    if (!(s = ing_db_prep(&g->db, upd)))
        goto sqlfail;
    sqlite3_bind_int(s, 1, have_tr);
    if (have_tr) {
        sqlite3_bind_int(s, 2, tr->exit_status);
        ing_bind_u64(s, 6, tr->lost_samples);
        ing_bind_u64(s, 7, tr->throttled);
        ing_bind_u64(s, 8, tr->dropped_records);
        ing_bind_u64(s, 9, tr->alloc_dropped);
    }
    /* bytes after a trailer are the next process (mw_reader_next_segment),
     * not ignored */
    ing_bind_text(s, 3,
                  mw_reader_status(r)[0] && !mw_reader_segment_follows(r) ? mw_reader_status(r)
                                                                          : "ok");
    ing_bind_u64(s, 4, g->st->records);
    ing_bind_u64(s, 5, mw_reader_pos(r));
    sqlite3_bind_double(s, 10, g->file.threshold);
    ing_bind_text(s, 11, g->proc_thr_src ? g->proc_thr_src : g->run_thr_src);
    if (g->file.have_cpu) {
        ing_bind_u64(s, 12, g->file.cpu.user_ns);
        ing_bind_u64(s, 13, g->file.cpu.system_ns);
        ing_bind_u64(s, 14, g->file.cpu.minflt);
        ing_bind_u64(s, 15, g->file.cpu.majflt);
    }
    sqlite3_bind_int64(s, 16, g->file.proc);
    if (sqlite3_step(s) != SQLITE_DONE)
        goto sqlfail;
    sqlite3_reset(s);
    s = NULL;
    if (!(s = ing_db_prep(&g->db, proc_from_meta)))
        goto sqlfail;
    sqlite3_bind_int64(s, 1, g->file.proc);
    /* a process without intervals or samples (one that ended before its
     * first interval: the shared file of short processes) ends at its
     * trailer's time */
    if (have_tr && tr->time_ns)
        ing_bind_u64(s, 2, tr->time_ns);
    sqlite3_bind_int64(s, 3, g->db.meta0);
    sqlite3_bind_int64(s, 4, g->db.iv0);
    sqlite3_bind_int64(s, 5, g->db.smp0);
    if (sqlite3_step(s) != SQLITE_DONE)
        goto sqlfail;
    sqlite3_reset(s);
    return 0;
sqlfail:
    sqlite3_reset(s);
    return ing_db_err(&g->db, "process update");
}

/* A loss the trailer counts, n records of kind (none where n is 0), as a
 * losses row of the file's process; 0 or the error. */
static int trailer_loss(ingest *g, const mwr_trailer *tr, const char *kind, uint64_t n)
{
    if (!n)
        return 0;
    g->st->losses++;
    if (ing_db_loss(&g->db, g->file.proc, tr->time_ns, 0, 0, kind, n))
        return ing_db_err(&g->db, "process update");
    return 0;
}

static int ingest_file(ingest *g, const char *path)
{
    mw_reader *r = NULL;
    int rc = mw_reader_open(path, &r);
    /* one process per segment: the shared file of short processes holds
     * many (mw_reader_next_segment), any other file one */
    int seg = 0;
    uint64_t file_base = g->bytes_done;
next_process:
    if (tx_begin(g))
        return -EIO;
    int prc = process_begin(g, path, rc);
    if (prc)
        return prc;
    g->st->files += !seg;
    if (rc) {
        g->st->files_damaged++;
        mw_log(MW_LOG_WARN, "%s: %s", path, mw_strerror(rc));
        return tx_commit(g, 0, 0);
    }
    ing_file *f = &g->file;
    mw_record rec;
    int n, damaged = 0;
    uint64_t last_prog = 0, base_done = g->bytes_done;
    g->files_opened++;
    f->cur_base = base_done;
    f->cur_size = mw_reader_size(r);
    g->objs.proc = f->proc;
    g->code.proc = f->proc;
    g->code.raw_path = path;
    while ((n = mw_reader_next(r, &rec)) == 1) {
        g->st->records++;
        int e = 0;
        if (rec.type == MWR_REGION || rec.type == MWR_REGION_PACKED ||
            rec.type == MWR_REGION_NAME || rec.type == MWR_THREAD)
            e = mw_rgn_record(g->rgn, rec.type, rec.payload, rec.payload_len);
        if (!e && rec.type != MWR_REGION && rec.type != MWR_REGION_PACKED &&
            rec.type != MWR_REGION_NAME)
            e = ing_file_record(f, &rec);
        if (e == MW_ERR_CORRUPT) {
            mw_log(MW_LOG_WARN, "%s: record of type %u at byte %llu is malformed, skipped", path,
                   rec.type, (unsigned long long)rec.offset);
            continue;
        }
        if (e) {
            rc = e;
            goto out;
        }
        uint64_t pos = mw_reader_pos(r);
        if (g->o->progress && pos - last_prog > (8u << 20)) {
            last_prog = pos;
            g->o->progress(base_done + pos / 5, g->bytes_total, path, g->o->progress_user);
        }
    }
    if (n < 0) {
        damaged = 1;
        g->st->files_damaged++;
        mw_log(MW_LOG_WARN, "%s: %s", path, mw_reader_status(r));
    }
    mwr_trailer tr;
    int have_tr = mw_reader_trailer(r, &tr);
    if (!have_tr && !damaged)
        g->st->files_no_trailer++;
    process_threshold(g);
    if ((rc = ing_file_finish(f)) ||
        (rc = mw_rgn_file_done(g->rgn, g->db.db, f->proc, have_tr ? tr.time_ns : 0)) ||
        (rc = mw_perfmap_note(g->db.db, f->proc, g->code.pmap, g->code.pmap_why, g->code.anon_pcs,
                              g->code.anon_named)) ||
        (rc = mw_perfmap_cut_note(g->db.db, f->proc, g->code.cut_nocode, g->code.cut_first)))
        goto out;
    if (have_tr && ((rc = trailer_loss(g, &tr, "dropped_records", tr.dropped_records)) ||
                    (rc = trailer_loss(g, &tr, "alloc_dropped", tr.alloc_dropped))))
        goto out;
    if ((rc = process_end(g, r, &tr, have_tr)) || (rc = ing_levels(&g->db, f->proc)))
        goto out;
    rc = tx_commit(g, mw_reader_pos(r), 0);
    g->bytes_done = base_done + mw_reader_size(r);
out:
    ing_file_end(f);
    if (rc == 0 && r && mw_reader_next_segment(r)) {
        seg++;
        g->bytes_done = file_base;
        goto next_process;
    }
    mw_reader_close(r);
    return rc;
}

/* A parent's record of a child a signal memwatch does not catch ended
 * (META reported_by=parent, preload/reap.c) is the child's end where the
 * child began recording and has a file of its own, cut short by the signal
 * (no trailer): the latest such process of the same host and pid that started
 * before the reaping takes its exit status and, where its own end did not
 * give them, the CPU time and page faults the wait returned, and the note
 * who reported it; the parent's record is then not a process of its own. A
 * child that never began keeps the parent's record as its only one.
 * A parent's record of an exit (status >= 0: a raw exit_group, preload/reap.c)
 * is dropped where the child wrote its end itself after all (a process of the
 * same host, pid and parent with a trailer, not ended by exec, that ended by
 * the reaping): the parent looks only at the last segments of the shared file. */
static int merge_reaped(ingest *g)
{
    static const char sql[] =
        "CREATE TEMP TABLE reaped_dup AS SELECT p.id AS rid FROM processes p"
        " JOIN meta m ON m.process_id = p.id AND m.key = 'reported_by' AND m.value = 'parent'"
        " WHERE p.exit_status >= 0 AND EXISTS (SELECT 1 FROM processes q WHERE q.run_id = p.run_id"
        "   AND q.pid = p.pid AND q.hostname IS p.hostname AND q.ppid IS p.ppid AND q.id != p.id"
        "   AND q.clean_exit = 1 AND q.t_end <= p.t_end"
        "   AND NOT EXISTS (SELECT 1 FROM meta e WHERE e.process_id = q.id"
        "     AND ((e.key = 'end' AND e.value = 'exec') OR e.key = 'reported_by')));"
        "DELETE FROM meta WHERE process_id IN (SELECT rid FROM reaped_dup);"
        "DELETE FROM logs WHERE process_id IN (SELECT rid FROM reaped_dup);"
        "DELETE FROM processes WHERE id IN (SELECT rid FROM reaped_dup);"
        "DROP TABLE reaped_dup;"
        "CREATE TEMP TABLE reaped AS SELECT p.id AS rid, p.exit_status AS st, p.user_ns AS u,"
        " p.system_ns AS sy, p.minflt AS mi, p.majflt AS ma,"
        " (SELECT q.id FROM processes q WHERE q.run_id = p.run_id AND q.pid = p.pid"
        "   AND q.hostname IS p.hostname AND q.clean_exit = 0 AND q.id != p.id"
        "   AND (q.t_start IS NULL OR q.t_start <= p.t_end) ORDER BY q.t_start DESC LIMIT 1) AS tid"
        " FROM processes p JOIN meta m ON m.process_id = p.id AND m.key = 'reported_by'"
        " AND m.value = 'parent';"
        "DELETE FROM reaped WHERE tid IS NULL;"
        "UPDATE processes SET exit_status = (SELECT st FROM reaped WHERE tid = processes.id),"
        " user_ns = COALESCE(user_ns, (SELECT u FROM reaped WHERE tid = processes.id)),"
        " system_ns = COALESCE(system_ns, (SELECT sy FROM reaped WHERE tid = processes.id)),"
        " minflt = COALESCE(minflt, (SELECT mi FROM reaped WHERE tid = processes.id)),"
        " majflt = COALESCE(majflt, (SELECT ma FROM reaped WHERE tid = processes.id))"
        " WHERE id IN (SELECT tid FROM reaped);"
        "INSERT INTO meta(process_id, key, value) SELECT tid, 'reported_by', 'parent' FROM reaped;"
        "DELETE FROM meta WHERE process_id IN (SELECT rid FROM reaped);"
        "DELETE FROM logs WHERE process_id IN (SELECT rid FROM reaped);"
        "DELETE FROM processes WHERE id IN (SELECT rid FROM reaped);"
        "DROP TABLE reaped;";
    int rc = ing_db_exec(&g->db, "BEGIN");
    if (!rc)
        rc = ing_db_exec(&g->db, sql);
    if (!rc)
        return ing_db_exec(&g->db, "COMMIT");
    ing_db_exec(&g->db, "ROLLBACK");
    return rc;
}

/* The run's threshold for precise samples: the option, else the machine
 * profile (its validated precise-latency threshold in cycles), else a
 * default of about one idle DRAM access. */
static void run_threshold(ingest *g)
{
    const mw_report_opts *o = g->o;
    g->run_thr_src = "option";
    g->threshold = o->threshold;
    if (g->threshold > 0)
        return;
    char pp[4096] = "";
    mw_profile prof;
    const char *path = o->profile_path;
    if (!path && mw_profile_default_path(pp, sizeof pp) == 0)
        path = pp;
    if (path && path[0] && mw_profile_load(path, 0, &prof) == 0) {
        g->threshold = mw_hybrid_threshold(&prof, 0);
        /* precise weights count core cycles: convert with the TSC rate */
        if (prof.tsc_hz > 0)
            g->threshold *= prof.tsc_hz / 1e9;
        g->run_thr_src = "machine profile (cycles)";
        g->have_run_profile = g->threshold > 0;
    }
    if (g->threshold <= 0) {
        g->threshold = 300; /* cycles: about one idle DRAM access on current CPUs */
        g->run_thr_src = "default (no machine profile)";
    }
}

/* dirs (the user's ':'-separated list, default /usr/lib/debug), then each
 * distinct directory of the raw files, once. */
static char *ingest_debug_dirs(const char *dirs, const char *const *files, size_t nfiles)
{
    const char *base = dirs ? dirs : "/usr/lib/debug";
    size_t cap = strlen(base) + 1, len = strlen(base);
    for (size_t i = 0; i < nfiles; i++)
        cap += strlen(files[i]) + 3;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    memcpy(out, base, len + 1);
    for (size_t i = 0; i < nfiles; i++) {
        const char *slash = strrchr(files[i], '/');
        const char *d = slash ? files[i] : ".";
        size_t dl = slash ? (size_t)(slash - files[i]) : 1;
        if (slash && dl == 0) /* a file in / */
            dl = 1;
        /* already in the list? (the usual case: every file in one directory) */
        int seen = 0;
        for (const char *p = out; *p;) {
            const char *e = strchr(p, ':');
            size_t pl = e ? (size_t)(e - p) : strlen(p);
            if (pl == dl && !memcmp(p, d, dl)) {
                seen = 1;
                break;
            }
            p += pl + (e ? 1 : 0);
        }
        if (seen)
            continue;
        out[len++] = ':';
        memcpy(out + len, d, dl);
        len += dl;
        out[len] = 0;
    }
    return out;
}

int mw_report_ingest(const char *const *files, size_t nfiles, const mw_report_opts *o,
                     mw_report_stats *st)
{
    mw_report_stats dummy;
    if (!st)
        st = &dummy;
    memset(st, 0, sizeof *st);
    if (!o || !o->db_path || !nfiles)
        return -EINVAL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ingest *g = calloc(1, sizeof *g);
    if (!g)
        return -ENOMEM;
    g->o = o;
    g->st = st;
    g->code.db = &g->db;
    g->code.st = st;
    g->objs.db = &g->db;
    g->objs.code = &g->code;
    g->file.db = &g->db;
    g->file.code = &g->code;
    g->file.objs = &g->objs;
    g->file.st = st;
    g->file.o = o;
    int rc = 0;
    if (!(g->rgn = mw_rgn_new())) {
        free(g);
        return -ENOMEM;
    }
    run_threshold(g);
    for (size_t i = 0; i < nfiles; i++) {
        FILE *f = fopen(files[i], "rb");
        if (f) {
            fseek(f, 0, SEEK_END);
            long sz = ftell(f);
            g->bytes_total += sz > 0 ? (uint64_t)sz : 0;
            fclose(f);
        }
    }
    g->file.bytes_total = g->bytes_total;
    if ((rc = ing_db_open(&g->db, o->db_path)) ||
        (rc = ing_db_run(&g->db, o->inputs ? o->inputs : files[0], nfiles, g->threshold,
                         g->run_thr_src, &g->run_id)))
        goto out;
    g->code.leaf_only = o->leaf_only;
    /* the .build-id roots: the user's (or the system's) and the raw files'
     * directories, where memwatch record keeps its libmemwatch.so */
    if (!(g->debug_dirs = ingest_debug_dirs(o->debug_dirs, files, nfiles))) {
        rc = -ENOMEM;
        goto out;
    }
    g->code.debug_dirs = g->debug_dirs;
    if (!o->no_symbols) {
        mw_symbolizer_opts so = {g->debug_dirs};
        if ((rc = mw_symbolizer_new(&so, &g->code.sym)))
            goto out;
    }
    for (size_t i = 0; i < nfiles; i++) {
        /* memwatch record's load file is no process (report/load.c) */
        rc = mw_load_is_file(files[i]) ? mw_load_ingest(g->db.db, g->run_id, files[i])
                                       : ingest_file(g, files[i]);
        if (rc) {
            ing_db_exec(&g->db, "ROLLBACK");
            goto out;
        }
    }
    if ((rc = tx_commit(g, 0, 1)) || (rc = merge_reaped(g)))
        goto out;
    if (o->progress)
        o->progress(g->bytes_total, g->bytes_total, NULL, o->progress_user);
    rc = ing_db_indexes(&g->db);
    if (!rc && !g->files_opened)
        rc = MW_ERR_NODATA;
out:
    ing_db_close(&g->db);
    ing_file_end(&g->file);
    ing_code_free(&g->code);
    mw_symbolizer_free(g->code.sym);
    mw_rgn_free(g->rgn);
    free(g->debug_dirs);
    free(g);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    st->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    return rc;
}
