/*
 * report/view.c: the views' common ground (report/view_int.h): a read-only
 * connection narrowed to some processes, the job's aligned clock, code names
 * of the stacks trie, escaping, and output files that appear whole or not at
 * all.
 *
 * Owns: the TEMP objects of a view connection (filter views, pclock).
 * May call: SQLite, libc. Threading: reentrant (one connection per call).
 */
#include "text.h"
#include "view_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Tables whose rows belong to a process (column process_id). */
static const char *const per_process[] = {
    "meta",    "logs",        "threads", "events",      "intervals",  "samples",
    "process_modules", "allocations", "objects", "losses", "counters", "gpu_kernels",
    "gpu_samples", "gpu_pcs", "region_spans", "region_notes", NULL};

/* sql prepared and stepped to its first row (the caller finalizes it), or NULL
 * when it fails or returns no row. */
static sqlite3_stmt *first_row(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        return s;
    sqlite3_finalize(s);
    return NULL;
}

int64_t mwv_scalar(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *s = first_row(db, sql);
    int64_t v = s ? sqlite3_column_int64(s, 0) : 0;
    sqlite3_finalize(s);
    return v;
}

double mwv_scalar_real(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *s = first_row(db, sql);
    double v = s ? sqlite3_column_double(s, 0) : 0;
    sqlite3_finalize(s);
    return v;
}

const char mwv_q_objects[] =
    "SELECT g.kind, g.name, g.size, g.min_size, g.site_function, g.site_file, g.site_line,"
    " g.samples, g.in_flagged, g.selected, g.decoded, g.precise, g.faults, g.faults_in_flagged,"
    " g.processes, g.objects,"
    " (SELECT CASE WHEN q.rank IS NOT NULL THEN 'rank ' || q.rank ELSE 'pid ' || q.pid END"
    " FROM processes q WHERE q.id = g.p0) AS first_process,"
    " (SELECT CASE WHEN q.rank IS NOT NULL THEN 'rank ' || q.rank ELSE 'pid ' || q.pid END"
    " FROM processes q WHERE q.id = g.p1) AS last_process FROM ("
    "SELECT MIN(o.kind) AS kind,"
    " CASE WHEN MIN(o.size) != MAX(o.size) AND instr(MIN(o.name), '(') > 0"
    " THEN substr(MIN(o.name), 1, instr(MIN(o.name), '(')) || MIN(o.size) || '..' || MAX(o.size)"
    " || ')' ELSE MIN(o.name) END AS name, MAX(o.size) AS size,"
    " MIN(o.size) AS min_size, MIN(ps.function) AS site_function, MIN(ps.file) AS site_file,"
    " MIN(ps.line) AS site_line,"
    " COALESCE(SUM(CASE WHEN x.addr_source != 'fault' THEN x.share END), 0) AS samples,"
    " COALESCE(SUM(CASE WHEN x.addr_source != 'fault' THEN x.share * s.in_flagged END), 0)"
    " AS in_flagged,"
    " COALESCE(SUM(CASE WHEN x.addr_source != 'fault' THEN x.share * s.selected END), 0)"
    " AS selected,"
    " COALESCE(SUM(CASE WHEN x.addr_source = 'decoded' THEN x.share END), 0) AS decoded,"
    " COALESCE(SUM(CASE WHEN x.addr_source = 'precise' THEN x.share END), 0) AS precise,"
    " SUM(x.addr_source = 'fault') AS faults,"
    " SUM(x.addr_source = 'fault' AND s.in_flagged) AS faults_in_flagged,"
    " COUNT(DISTINCT o.process_id) AS processes, COUNT(DISTINCT o.id) AS objects,"
    " MIN(o.process_id) AS p0,"
    " MAX(o.process_id) AS p1, MIN(o.id) AS o0"
    " FROM sample_objects x JOIN samples s ON s.id = x.sample_id"
    " JOIN objects o ON o.id = x.object_id LEFT JOIN pcs ps ON ps.id = o.site_pc_id"
    " GROUP BY CASE WHEN o.site_pc_id IS NOT NULL THEN 'site ' || o.kind || ' ' || o.site_pc_id"
    " WHEN o.kind IN ('static', 'tls') THEN o.kind || ' ' || COALESCE(o.module_id, 0) || ' '"
    " || o.name WHEN o.kind = 'file' THEN 'file ' || o.name ELSE 'object ' || o.id END"
    " ORDER BY in_flagged DESC, samples DESC, faults_in_flagged DESC, faults DESC, o0"
    " LIMIT ?) g"
    " ORDER BY g.in_flagged DESC, g.samples DESC, g.faults_in_flagged DESC, g.faults DESC, g.o0";

static int table_exists(sqlite3 *db, const char *name)
{
    sqlite3_stmt *s;
    int ok = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM main.sqlite_master WHERE type='table' AND name=?",
                           -1, &s, NULL) == SQLITE_OK) {
        sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
        ok = sqlite3_step(s) == SQLITE_ROW;
    }
    sqlite3_finalize(s);
    return ok;
}

/* processes, as the views see it: rank only for MPI ranks (META rank_from;
 * files written before it: where any process has a rank above 0), NULL for
 * every other process (mpirun itself, helpers, a program run alone), and
 * narrowed by the filter. The other per-process tables follow the filter. */
static int shadow(sqlite3 *db, const mw_view_filter *f)
{
    int rc = sqlite3_exec(db, "CREATE TEMP TABLE mpi_rank(process_id INTEGER PRIMARY KEY)", NULL,
                          NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(
            db,
            "INSERT OR IGNORE INTO mpi_rank SELECT process_id FROM main.meta WHERE key = 'rank_from'"
            " AND process_id IS NOT NULL;"
            "INSERT OR IGNORE INTO mpi_rank SELECT id FROM main.processes WHERE NOT EXISTS"
            " (SELECT 1 FROM main.meta WHERE key = 'rank_from') AND"
            " (SELECT MAX(rank) FROM main.processes) > 0",
            NULL, NULL, NULL);
    /* the column list, so that columns added to the schema come along */
    char cols[4096] = "";
    size_t n = 0;
    sqlite3_stmt *s;
    if (rc == SQLITE_OK &&
        sqlite3_prepare_v2(db, "PRAGMA main.table_info(processes)", -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW && n < sizeof cols - 200) {
            const char *c = (const char *)sqlite3_column_text(s, 1);
            n += (size_t)snprintf(cols + n, sizeof cols - n, "%s%s", n ? ", " : "",
                                  !strcmp(c, "rank")
                                      ? "CASE WHEN id IN (SELECT process_id FROM temp.mpi_rank)"
                                        " THEN rank END AS rank"
                                      : c);
        }
        sqlite3_finalize(s);
    }
    char where[512] = "1";
    size_t k = strlen(where);
    if (f && f->has_rank)
        k += (size_t)snprintf(where + k, sizeof where - k, " AND rank = %ld", f->rank);
    if (f && f->has_pid)
        k += (size_t)snprintf(where + k, sizeof where - k, " AND pid = %ld", f->pid);
    if (f && f->host) {
        char *q = sqlite3_mprintf(" AND hostname = %Q", f->host);
        if (!q)
            return -ENOMEM;
        snprintf(where + k, sizeof where - k, "%s", q);
        sqlite3_free(q);
    }
    if (rc == SQLITE_OK) {
        char *sql = sqlite3_mprintf("CREATE TEMP VIEW processes AS SELECT * FROM (SELECT %s FROM"
                                    " main.processes) WHERE %s",
                                    cols, where);
        rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
        sqlite3_free(sql);
    }
    int narrowed = f && (f->has_rank || f->has_pid || f->host);
    for (int i = 0; narrowed && rc == SQLITE_OK && per_process[i]; i++) {
        if (!table_exists(db, per_process[i]))
            continue;
        char *sql = sqlite3_mprintf("CREATE TEMP VIEW %s AS SELECT * FROM main.%s WHERE"
                                    " process_id IN (SELECT id FROM temp.processes)",
                                    per_process[i], per_process[i]);
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
        sqlite3_free(sql);
    }
    if (rc != SQLITE_OK) {
        mw_log(MW_LOG_ERROR, "cannot open the report's views: %s", sqlite3_errmsg(db));
        return -EIO;
    }
    return 0;
}

/* pclock: one offset per process. Processes of one host share their clock;
 * hosts are put on one axis through the wall clock each file's META pairs
 * with its monotonic start (the first such pair of the host). A host without
 * it starts at the job's start. */
static int build_pclock(sqlite3 *db)
{
    if (sqlite3_exec(db, "CREATE TEMP TABLE pclock(process_id INTEGER PRIMARY KEY, off INTEGER, goff INTEGER)",
                     NULL, NULL, NULL) != SQLITE_OK)
        return -EIO;
    sqlite3_stmt *s;
    const char *q =
        "SELECT p.id, COALESCE(p.hostname, ''), COALESCE(p.t_start, 0),"
        " (SELECT CAST(value AS INTEGER) FROM meta m WHERE m.process_id = p.id AND"
        "  m.key = 'start_realtime_ns' LIMIT 1),"
        " (SELECT CAST(value AS INTEGER) FROM meta m WHERE m.process_id = p.id AND"
        "  m.key = 'start_monotonic_ns' LIMIT 1),"
        " (SELECT value FROM meta m WHERE m.process_id = p.id AND m.key = 'gpu.clock' LIMIT 1)"
        " FROM processes p ORDER BY p.id";
    if (sqlite3_prepare_v2(db, q, -1, &s, NULL) != SQLITE_OK)
        return -EIO;
    struct ph {
        char host[128];
        int64_t wall_minus_mono; /* INT64_MIN: unknown */
        int64_t first;           /* earliest t_start of the host (monotonic) */
    } *hosts = NULL;
    struct pp {
        int64_t id;
        int64_t gpu; /* CLOCK_MONOTONIC minus the CUPTI clock */
        int h;
    } *procs = NULL;
    size_t nh = 0, np = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        const char *host = (const char *)sqlite3_column_text(s, 1);
        int64_t ts = sqlite3_column_int64(s, 2);
        size_t h;
        for (h = 0; h < nh; h++)
            if (!strcmp(hosts[h].host, host))
                break;
        if (h == nh) {
            struct ph *nhp = realloc(hosts, (nh + 1) * sizeof *hosts);
            if (!nhp)
                break;
            hosts = nhp;
            snprintf(hosts[nh].host, sizeof hosts[nh].host, "%s", host);
            hosts[nh].wall_minus_mono = INT64_MIN;
            hosts[nh].first = ts;
            nh++;
        }
        if (ts < hosts[h].first)
            hosts[h].first = ts;
        if (hosts[h].wall_minus_mono == INT64_MIN && sqlite3_column_type(s, 3) == SQLITE_INTEGER &&
            sqlite3_column_type(s, 4) == SQLITE_INTEGER && sqlite3_column_int64(s, 3) > 0)
            hosts[h].wall_minus_mono = sqlite3_column_int64(s, 3) - sqlite3_column_int64(s, 4);
        struct pp *npp = realloc(procs, (np + 1) * sizeof *procs);
        if (!npp)
            break;
        procs = npp;
        procs[np].id = sqlite3_column_int64(s, 0);
        procs[np].h = (int)h;
        procs[np].gpu = 0;
        const char *gc = (const char *)sqlite3_column_text(s, 5);
        unsigned long long cupti, mono;
        if (gc && sscanf(gc, "%llu %llu", &cupti, &mono) == 2)
            procs[np].gpu = (int64_t)(mono - cupti);
        np++;
    }
    sqlite3_finalize(s);
    /* the job starts at the earliest wall-clock start among hosts with one */
    int64_t job0 = INT64_MAX;
    for (size_t h = 0; h < nh; h++)
        if (hosts[h].wall_minus_mono != INT64_MIN && hosts[h].first + hosts[h].wall_minus_mono < job0)
            job0 = hosts[h].first + hosts[h].wall_minus_mono;
    int rc = 0;
    if (sqlite3_prepare_v2(db, "INSERT INTO pclock VALUES(?, ?, ?)", -1, &s, NULL) != SQLITE_OK) {
        rc = -EIO;
    } else {
        for (size_t i = 0; i < np; i++) {
            const struct ph *h = &hosts[procs[i].h];
            int64_t off = h->wall_minus_mono != INT64_MIN && job0 != INT64_MAX
                              ? h->wall_minus_mono - job0
                              : -h->first;
            sqlite3_bind_int64(s, 1, procs[i].id);
            sqlite3_bind_int64(s, 2, off);
            sqlite3_bind_int64(s, 3, off + procs[i].gpu);
            sqlite3_step(s);
            sqlite3_reset(s);
        }
        sqlite3_finalize(s);
    }
    free(hosts);
    free(procs);
    return rc;
}

int mwv_open(const char *db_path, const mw_view_filter *f, sqlite3 **out)
{
    *out = NULL;
    struct stat st;
    if (stat(db_path, &st) < 0) {
        int e = errno;
        mw_log(MW_LOG_ERROR, "%s: %s", db_path, strerror(e));
        return -e;
    }
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        mw_log(MW_LOG_ERROR, "%s: %s", db_path, db ? sqlite3_errmsg(db) : "cannot open");
        sqlite3_close(db);
        return -EIO;
    }
    if (!table_exists(db, "processes") || !table_exists(db, "samples") ||
        !table_exists(db, "intervals")) {
        mw_log(MW_LOG_ERROR, "%s is not a memwatch report database (made by memwatch report)",
               db_path);
        sqlite3_close(db);
        return MW_ERR_FOREIGN;
    }
    int rc = shadow(db, f);
    if (rc == 0 && mwv_scalar(db, "SELECT COUNT(*) FROM processes") == 0) {
        mw_log(MW_LOG_ERROR, "%s: no recorded process%s", db_path,
               f && (f->has_rank || f->has_pid || f->host) ? " matches --rank/--host/--pid" : "");
        rc = MW_ERR_NODATA;
    }
    if (rc == 0)
        rc = build_pclock(db);
    if (rc) {
        sqlite3_close(db);
        return rc;
    }
    *out = db;
    return 0;
}

int mwv_pcc(sqlite3 *db)
{
    return sqlite3_exec(db,
                        "CREATE TEMP TABLE IF NOT EXISTS pcc AS SELECT process_id, pc_id, source,"
                        " COUNT(*) AS n, SUM(selected) AS sel, SUM(in_flagged) AS fl FROM samples"
                        " GROUP BY 1, 2, 3",
                        NULL, NULL, NULL) == SQLITE_OK
               ? 0
               : -EIO;
}

void mwv_proc_label(sqlite3 *db, int64_t id, char *buf, size_t n)
{
    sqlite3_stmt *s;
    snprintf(buf, n, "process %" PRId64, id);
    if (sqlite3_prepare_v2(db, "SELECT pid, rank, hostname, exe FROM processes WHERE id = ?", -1,
                           &s, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_int64(s, 1, id);
    if (sqlite3_step(s) == SQLITE_ROW) {
        const char *host = (const char *)sqlite3_column_text(s, 2);
        const char *exe = (const char *)sqlite3_column_text(s, 3);
        const char *b = exe ? strrchr(exe, '/') : NULL;
        b = b ? b + 1 : exe ? exe : "";
        if (sqlite3_column_type(s, 1) == SQLITE_INTEGER) /* an MPI rank (shadow()) */
            snprintf(buf, n, "rank %lld @ %s (pid %lld %s)", sqlite3_column_int64(s, 1),
                     host ? host : "?", sqlite3_column_int64(s, 0), b);
        else
            snprintf(buf, n, "pid %lld @ %s %s", sqlite3_column_int64(s, 0), host ? host : "?", b);
    }
    sqlite3_finalize(s);
}

int mwv_out_open(mwv_out *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    size_t n = strlen(path) + 16;
    o->tmp = malloc(n);
    if (!o->tmp)
        return -ENOMEM;
    snprintf(o->tmp, n, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        int e = errno;
        mw_log(MW_LOG_ERROR, "cannot write %s: %s", path, strerror(e));
        free(o->tmp);
        o->tmp = NULL;
        return -e;
    }
    /* the mode a plain create would give */
    mode_t um = umask(0);
    umask(um);
    fchmod(fd, 0666 & ~um);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
        return -e;
    }
    setvbuf(o->f, NULL, _IOFBF, 1 << 16);
    return 0;
}

int mwv_out_close(mwv_out *o, int ok)
{
    if (!o->f)
        return -EBADF;
    int e = 0;
    if (ferror(o->f))
        e = EIO;
    if (fflush(o->f) != 0 && !e)
        e = errno ? errno : EIO;
    if (fclose(o->f) != 0 && !e)
        e = errno ? errno : EIO;
    o->f = NULL;
    if (ok && !e && rename(o->tmp, o->path) != 0)
        e = errno;
    if (!ok || e)
        unlink(o->tmp);
    if (ok && e)
        mw_log(MW_LOG_ERROR, "cannot write %s: %s", o->path, strerror(e));
    free(o->tmp);
    o->tmp = NULL;
    return ok ? -e : 0;
}

int mwv_write(const char *db_path, const mw_view_filter *filter, const char *out_path,
              int (*write)(sqlite3 *db, FILE *f, const void *arg), const void *arg)
{
    sqlite3 *db;
    int rc = mwv_open(db_path, filter, &db);
    if (rc)
        return rc;
    mwv_out out;
    rc = mwv_out_open(&out, out_path);
    if (rc == 0) {
        rc = write(db, out.f, arg);
        int c = mwv_out_close(&out, rc == 0);
        if (rc == 0)
            rc = c;
    }
    sqlite3_close(db);
    return rc;
}

/* ---- code names ---- */

static char *xstrdup(const char *s) { return s ? strdup(s) : NULL; }

int mwv_code_load(sqlite3 *db, mwv_code *c)
{
    memset(c, 0, sizeof *c);
    c->nstack = mwv_scalar(db, "SELECT COALESCE(MAX(id), -1) + 1 FROM main.stacks");
    c->npc = mwv_scalar(db, "SELECT COALESCE(MAX(id), -1) + 1 FROM main.pcs");
    c->parent = malloc(((size_t)c->nstack + 1) * sizeof *c->parent);
    c->stack_pc = malloc(((size_t)c->nstack + 1) * sizeof *c->stack_pc);
    c->pc_first = calloc((size_t)c->npc + 1, sizeof *c->pc_first);
    c->pc_nframes = calloc((size_t)c->npc + 1, sizeof *c->pc_nframes);
    c->pc_line = calloc((size_t)c->npc + 1, sizeof *c->pc_line);
    c->pc_module = malloc(((size_t)c->npc + 1) * sizeof *c->pc_module);
    c->pc_addr = calloc((size_t)c->npc + 1, sizeof *c->pc_addr);
    if (!c->parent || !c->stack_pc || !c->pc_first || !c->pc_nframes || !c->pc_line ||
        !c->pc_module || !c->pc_addr) {
        mwv_code_free(c);
        return -ENOMEM;
    }
    for (int64_t i = 0; i < c->nstack; i++)
        c->parent[i] = c->stack_pc[i] = -1;
    for (int64_t i = 0; i < c->npc; i++)
        c->pc_module[i] = -1;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "SELECT id, parent_id, pc_id FROM main.stacks", -1, &s, NULL) ==
        SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(s, 0);
            if (id < 0 || id >= c->nstack)
                continue;
            c->parent[id] = sqlite3_column_type(s, 1) == SQLITE_NULL ? -1
                                                                     : sqlite3_column_int64(s, 1);
            c->stack_pc[id] = sqlite3_column_type(s, 2) == SQLITE_NULL ? -1
                                                                       : sqlite3_column_int64(s, 2);
            if (c->parent[id] >= id) /* a trie's parent comes first: guard against loops */
                c->parent[id] = -1;
        }
    }
    sqlite3_finalize(s);
    /* names: the inline chain from frames where a pc has several, else the
     * pc's own function (or symbol, or module+offset) */
    size_t cap = 0;
    uint32_t nn = 0;
#define PUSH(name, file, line)                                                                 \
    do {                                                                                       \
        if (nn == cap) {                                                                       \
            cap = cap ? cap * 2 : 1024;                                                        \
            char **a = realloc(c->names, cap * sizeof *a), **b = realloc(c->files, cap * sizeof *b); \
            int64_t *l = realloc(c->lines, cap * sizeof *l);                                   \
            if (a)                                                                             \
                c->names = a;                                                                  \
            if (b)                                                                             \
                c->files = b;                                                                  \
            if (l)                                                                             \
                c->lines = l;                                                                  \
            if (!a || !b || !l) {                                                              \
                c->nnames = nn;                                                                \
                mwv_code_free(c);                                                              \
                sqlite3_finalize(s);                                                           \
                return -ENOMEM;                                                                \
            }                                                                                  \
        }                                                                                      \
        c->names[nn] = (name);                                                                 \
        c->files[nn] = (file);                                                                 \
        c->lines[nn] = (line);                                                                 \
        nn++;                                                                                  \
    } while (0)
    if (sqlite3_prepare_v2(db,
                           "SELECT p.id, p.function, p.symbol, p.file, p.line, p.module_id,"
                           " p.rel_addr, m.path FROM main.pcs p LEFT JOIN main.modules m"
                           " ON m.id = p.module_id",
                           -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(s, 0);
            if (id < 0 || id >= c->npc)
                continue;
            const char *fn = (const char *)sqlite3_column_text(s, 1);
            const char *sym = (const char *)sqlite3_column_text(s, 2);
            const char *mod = (const char *)sqlite3_column_text(s, 7);
            char buf[512];
            if (!fn || !*fn) {
                if (sym && *sym) {
                    fn = sym;
                } else {
                    const char *b = mod ? strrchr(mod, '/') : NULL;
                    snprintf(buf, sizeof buf, "%s+0x%llx", b ? b + 1 : mod ? mod : "[unknown]",
                             (unsigned long long)sqlite3_column_int64(s, 6));
                    fn = buf;
                }
            }
            c->pc_first[id] = nn;
            c->pc_nframes[id] = 1;
            c->pc_line[id] = sqlite3_column_int64(s, 4);
            c->pc_module[id] = sqlite3_column_type(s, 5) == SQLITE_NULL ? -1
                                                                        : sqlite3_column_int64(s, 5);
            c->pc_addr[id] = sqlite3_column_int64(s, 6);
            PUSH(xstrdup(fn), xstrdup((const char *)sqlite3_column_text(s, 3)),
                 sqlite3_column_int64(s, 4));
        }
    }
    sqlite3_finalize(s);
    /* pcs with an inline chain: replace the one name by the chain */
    if (sqlite3_prepare_v2(db,
                           "SELECT pc_id, function, file, line FROM main.frames WHERE pc_id IN"
                           " (SELECT pc_id FROM main.frames WHERE depth > 0) ORDER BY pc_id, depth",
                           -1, &s, NULL) == SQLITE_OK) {
        int64_t cur = -1;
        while (sqlite3_step(s) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(s, 0);
            if (id < 0 || id >= c->npc)
                continue;
            const char *fn = (const char *)sqlite3_column_text(s, 1);
            if (id != cur) {
                cur = id;
                c->pc_first[id] = nn;
                c->pc_nframes[id] = 0;
            }
            if (c->pc_nframes[id] == UINT16_MAX)
                continue;
            PUSH(xstrdup(fn && *fn ? fn : "[inlined]"),
                 xstrdup((const char *)sqlite3_column_text(s, 2)), sqlite3_column_int64(s, 3));
            c->pc_nframes[id]++;
        }
    }
    sqlite3_finalize(s);
#undef PUSH
    c->nnames = nn;
    return 0;
}

void mwv_code_free(mwv_code *c)
{
    for (uint32_t i = 0; i < c->nnames; i++) {
        free(c->names[i]);
        free(c->files[i]);
    }
    free(c->names);
    free(c->files);
    free(c->lines);
    free(c->parent);
    free(c->stack_pc);
    free(c->pc_first);
    free(c->pc_nframes);
    free(c->pc_line);
    free(c->pc_module);
    free(c->pc_addr);
    memset(c, 0, sizeof *c);
}

/* ---- names and sizes for people ---- */

const char *mwv_base(const char *p)
{
    const char *b = p ? strrchr(p, '/') : NULL;
    return b ? b + 1 : p ? p : "?";
}

void mwv_human_bytes(double v, char *buf, size_t n)
{
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    while (v >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    snprintf(buf, n, i ? "%.1f %s" : "%.0f %s", v, u[i]);
}

/* ---- escapes ----
 * Each writes valid UTF-8 whatever s holds: a byte that is not part of
 * valid UTF-8 becomes U+FFFD (report/text.h, docs/export.md). */

/* s to f a UTF-8 sequence at a time: a valid one (p, its l bytes) as put
 * writes it, a byte that is not part of one as U+FFFD. */
static void put_seqs(FILE *f, const char *s, void (*put)(FILE *f, const char *p, size_t l))
{
    for (const char *p = s ? s : ""; *p;) {
        size_t l = mw_text_utf8_seq(p);
        if (l == 0) {
            fputs(MW_TEXT_REPLACEMENT, f);
            p++;
            continue;
        }
        put(f, p, l);
        p += l;
    }
}

/* p's l bytes as they are */
static void put_raw(FILE *f, const char *p, size_t l)
{
    if (l == 1)
        fputc(*p, f);
    else
        fwrite(p, 1, l, f);
}

/* JSON string: quotes, backslash and control characters escaped, and '<'
 * as \u003c so that no name can end a <script> of the HTML report. */
static void json_seq(FILE *f, const char *p, size_t l)
{
    unsigned char c = (unsigned char)*p;
    if (c == '"' || c == '\\')
        fprintf(f, "\\%c", c);
    else if (c < 0x20 || c == 0x7f || c == '<')
        fprintf(f, "\\u%04x", c);
    else
        put_raw(f, p, l);
}

void mwv_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    put_seqs(f, s, json_seq);
    fputc('"', f);
}

static void html_seq(FILE *f, const char *p, size_t l)
{
    unsigned char c = (unsigned char)*p;
    switch (c) {
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '&': fputs("&amp;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&#39;", f); break;
    default:
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            fputc(' ', f);
        else
            put_raw(f, p, l);
    }
}

void mwv_html_str(FILE *f, const char *s)
{
    put_seqs(f, s, html_seq);
}

/* a quote doubled */
static void csv_seq(FILE *f, const char *p, size_t l)
{
    if (*p == '"')
        fputc('"', f);
    fwrite(p, 1, l, f);
}

void mwv_csv_str(FILE *f, const char *s)
{
    s = s ? s : "";
    if (!strpbrk(s, ",\"\n\r")) {
        mw_text_put_utf8(f, s);
        return;
    }
    fputc('"', f);
    put_seqs(f, s, csv_seq);
    fputc('"', f);
}
