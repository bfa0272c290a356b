/*
 * report/load.c: memwatch record's load files in the report (report/load.h).
 *
 * Owns: the load tables' rows (load_sources, load_slots, load_procs: one
 * load file, its slots, each slot's busiest processes outside the
 * recording) and the verdict read back from them: the flagged time of each
 * slot (the flagged intervals of the processes on the slot's host that
 * overlap it), the rule (load_rule.c) over the slots, and the busiest
 * neighbour over the flagged time the rule calls neighbour-loaded.
 * May call: mwr_reader, SQLite, cJSON, libc. Prints only to the stream it is
 * given. Threading: reentrant; no global state.
 */
#include "load.h"

#include "text.h"
#include "view_int.h"

#include <memwatch/mwr_load.h>
#include <memwatch/mwr_reader.h>
#include <memwatch/report.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int mw_load_is_file(const char *path)
{
    size_t n = strlen(path);
    return n > 4 && !strcmp(path + n - 4, ".mwl");
}

/* ---- the load file into the database ---- */

/* What the file's META records say (the last value of a key wins). */
typedef struct load_meta {
    char host[512], note[512];
    int64_t record_pid, program_pid, period_ns, ncpus, sampler_cpu_ns;
    int has_host, has_note, has_end;
} load_meta;

typedef struct load_in {
    sqlite3 *db;
    sqlite3_stmt *slot, *proc;
    int64_t src;
    int64_t slots, bad;
    int damaged; /* the reader stopped at damage */
    load_meta m;
} load_in;

static void load_meta_line(load_meta *m, const char *k, size_t kl, const char *v, size_t vl)
{
    static const struct {
        const char *key;
        size_t off;
    } nums[] = {
        {"record_pid", offsetof(load_meta, record_pid)},
        {"program_pid", offsetof(load_meta, program_pid)},
        {"period_ns", offsetof(load_meta, period_ns)},
        {"ncpus", offsetof(load_meta, ncpus)},
        {"sampler_cpu_ns", offsetof(load_meta, sampler_cpu_ns)},
    };
    char val[512];
    snprintf(val, sizeof val, "%.*s", (int)vl, v);
    if (kl == 4 && !memcmp(k, "host", 4)) {
        snprintf(m->host, sizeof m->host, "%s", val);
        m->has_host = 1;
    } else if (kl == 16 && !memcmp(k, "end_monotonic_ns", 16)) {
        m->has_end = 1;
    } else if (kl == 4 && !memcmp(k, "note", 4)) {
        snprintf(m->note, sizeof m->note, "%s", val);
        m->has_note = 1;
    }
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        if (strlen(nums[i].key) == kl && !memcmp(k, nums[i].key, kl))
            *(int64_t *)((char *)m + nums[i].off) = strtoll(val, NULL, 10);
}

static void load_meta_text(load_meta *m, const char *t, size_t n)
{
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(t + i, '\n', n - i);
        size_t l = nl ? (size_t)(nl - (t + i)) : n - i;
        const char *eq = memchr(t + i, '=', l);
        if (eq)
            load_meta_line(m, t + i, (size_t)(eq - (t + i)), eq + 1,
                           l - (size_t)(eq - (t + i)) - 1);
        i += l + 1;
    }
}

static int load_sql_err(sqlite3 *db, const char *what)
{
    mw_log(MW_LOG_ERROR, "load file: %s: %s", what, sqlite3_errmsg(db));
    return -EIO;
}

/* One MWR_LOAD record: its slot row and its processes' rows. 0, 1 when it
 * is malformed (skipped), or -EIO. */
static int load_slot(load_in *in, const unsigned char *p, size_t len)
{
    mwr_load l;
    if (len < sizeof l)
        return 1;
    memcpy(&l, p, sizeof l);
    if (l.ntop > 64 || l.top_offset < sizeof l || l.top_size < sizeof(mwr_load_proc) ||
        len < l.top_offset + (size_t)l.ntop * l.top_size || l.t_end_ns <= l.t_start_ns)
        return 1;
    double busy = l.busy_mcpu / 1e3, tree = l.tree_mcpu / 1e3, run = l.run_mcpu / 1e3,
           own = l.own_mcpu / 1e3, out = busy - tree - run - own;
    sqlite3_stmt *s = in->slot;
    sqlite3_bind_int64(s, 1, in->src);
    sqlite3_bind_int64(s, 2, (int64_t)l.t_start_ns);
    sqlite3_bind_int64(s, 3, (int64_t)l.t_end_ns);
    sqlite3_bind_double(s, 4, busy);
    sqlite3_bind_double(s, 5, l.steal_mcpu / 1e3);
    sqlite3_bind_double(s, 6, tree);
    sqlite3_bind_double(s, 7, run);
    sqlite3_bind_double(s, 8, own);
    sqlite3_bind_double(s, 9, out > 0 ? out : 0);
    sqlite3_bind_int64(s, 10, l.tree_faults);
    sqlite3_bind_int64(s, 11, l.nprocs);
    sqlite3_bind_double(s, 12, l.tree_wait_mcpu / 1e3);
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE)
        return load_sql_err(in->db, "load_slots");
    int64_t id = sqlite3_last_insert_rowid(in->db);
    for (uint32_t k = 0; k < l.ntop; k++) {
        mwr_load_proc q;
        memcpy(&q, p + l.top_offset + (size_t)k * l.top_size, sizeof q);
        s = in->proc;
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_int(s, 2, (int)k + 1);
        sqlite3_bind_int64(s, 3, q.pid);
        sqlite3_bind_int64(s, 4, q.ppid);
        sqlite3_bind_text(s, 5, q.comm, (int)strnlen(q.comm, sizeof q.comm), SQLITE_TRANSIENT);
        sqlite3_bind_double(s, 6, q.mcpu / 1e3);
        sqlite3_bind_int(s, 7, (q.flags & MWR_LOAD_RECORDED) != 0);
        rc = sqlite3_step(s);
        sqlite3_reset(s);
        if (rc != SQLITE_DONE)
            return load_sql_err(in->db, "load_procs");
    }
    in->slots++;
    return 0;
}

/* The records of the file; 0 or -EIO. */
static int load_records(load_in *in, mw_reader *r)
{
    mw_record rec;
    int n;
    while ((n = mw_reader_next(r, &rec)) == 1) {
        if (rec.type == MWR_META) {
            const char *t;
            size_t tl;
            if (mw_rec_text(&rec, &t, &tl) == 0)
                load_meta_text(&in->m, t, tl);
        } else if (rec.type == MWR_LOAD) {
            int e = load_slot(in, rec.payload, rec.payload_len);
            if (e < 0)
                return e;
            in->bad += e;
        }
    }
    in->damaged = n < 0;
    return 0;
}

/* The load_sources row, once the file was read. */
static int load_source_end(load_in *in, mw_reader *r)
{
    static const char upd[] =
        "UPDATE load_sources SET host=?, record_pid=?, program_pid=?, period_ns=?, ncpus=?,"
        " slots=?, sampler_cpu_ns=?, note=?, status=? WHERE id=?";
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(in->db, upd, -1, &s, NULL) != SQLITE_OK)
        return load_sql_err(in->db, "load_sources");
    const load_meta *m = &in->m;
    if (m->has_host)
        sqlite3_bind_text(s, 1, m->host, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 2, m->record_pid);
    sqlite3_bind_int64(s, 3, m->program_pid);
    sqlite3_bind_int64(s, 4, m->period_ns);
    sqlite3_bind_int64(s, 5, m->ncpus);
    sqlite3_bind_int64(s, 6, in->slots);
    sqlite3_bind_int64(s, 7, m->sampler_cpu_ns);
    if (m->has_note)
        sqlite3_bind_text(s, 8, m->note, -1, SQLITE_TRANSIENT);
    /* a load file has no trailer: its last META (end_monotonic_ns) closes it */
    char st[300];
    const char *rs = r && in->damaged   ? mw_reader_status(r)
                     : r && !m->has_end ? "no closing META record: memwatch record was killed or "
                                          "still runs; the slots up to here are whole"
                                        : "";
    if (in->bad)
        snprintf(st, sizeof st, "%lld malformed load records skipped%s%s", (long long)in->bad,
                 rs[0] ? "; " : "", rs);
    else
        snprintf(st, sizeof st, "%s", rs[0] ? rs : "ok");
    sqlite3_bind_text(s, 9, st, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 10, in->src);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : load_sql_err(in->db, "load_sources");
}

static int load_begin(load_in *in, int64_t run_id, const char *path)
{
    static const char ins_src[] = "INSERT INTO load_sources(run_id, file) VALUES(?, ?)";
    static const char ins_slot[] =
        "INSERT INTO load_slots(source_id, t_start, t_end, busy_cpus, steal_cpus, tree_cpus,"
        " run_cpus, own_cpus, outside_cpus, tree_faults, nprocs, tree_wait_cpus)"
        " VALUES(?,?,?,?,?,?,?,?,?,?,?,?)";
    static const char ins_proc[] = "INSERT INTO load_procs(slot_id, pos, pid, ppid, comm, cpus, "
                                   "recorded) VALUES(?,?,?,?,?,?,?)";
    sqlite3_stmt *s;
    if (sqlite3_exec(in->db, "SAVEPOINT mw_load", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(in->db, ins_src, -1, &s, NULL) != SQLITE_OK)
        return load_sql_err(in->db, "load_sources");
    sqlite3_bind_int64(s, 1, run_id);
    sqlite3_bind_text(s, 2, path, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return load_sql_err(in->db, "load_sources");
    in->src = sqlite3_last_insert_rowid(in->db);
    if (sqlite3_prepare_v2(in->db, ins_slot, -1, &in->slot, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(in->db, ins_proc, -1, &in->proc, NULL) != SQLITE_OK)
        return load_sql_err(in->db, "load_slots");
    return 0;
}

int mw_load_ingest(sqlite3 *db, int64_t run_id, const char *path)
{
    load_in in;
    memset(&in, 0, sizeof in);
    in.db = db;
    mw_reader *r = NULL;
    int open_rc = mw_reader_open(path, &r);
    int rc = load_begin(&in, run_id, path);
    if (!rc && !open_rc)
        rc = load_records(&in, r);
    if (!rc && open_rc) {
        snprintf(in.m.note, sizeof in.m.note, "cannot read: %s", mw_strerror(open_rc));
        in.m.has_note = 1;
        mw_log(MW_LOG_WARN, "%s: %s", path, mw_strerror(open_rc));
    }
    if (!rc)
        rc = load_source_end(&in, open_rc ? NULL : r);
    if (!rc && sqlite3_exec(db,
                            "CREATE INDEX IF NOT EXISTS load_procs_slot ON"
                            " load_procs(slot_id)",
                            NULL, NULL, NULL) != SQLITE_OK)
        rc = load_sql_err(db, "load_procs index");
    sqlite3_finalize(in.slot);
    sqlite3_finalize(in.proc);
    if (rc)
        sqlite3_exec(db, "ROLLBACK TO mw_load", NULL, NULL, NULL);
    sqlite3_exec(db, "RELEASE mw_load", NULL, NULL, NULL);
    mw_reader_close(r);
    return rc;
}

/* ---- the verdict ---- */

/* One slot as the verdict reads it. */
typedef struct load_row {
    int64_t id;
    int host; /* index in load_set.hosts */
    int64_t t0, t1;
    double faults; /* the tree's page faults in the slot */
    mw_load_slot s;
} load_row;

/* A neighbour over the loaded flagged time: its CPUs weighted by it. */
typedef struct load_nb {
    int host;
    int64_t pid;
    char comm[64];
    int recorded;
    double w; /* sum of flagged ns x CPUs */
} load_nb;

typedef struct load_set {
    char **hosts;
    int nhosts;
    load_row *rows; /* by host, then time; overlapping slots of a host dropped */
    size_t n;
    int *first; /* per host: its rows are [first[h], first[h + 1]) */
    load_nb *nbs;
    size_t nnb;
    int64_t sources;
    double flagged_all_ns; /* the flagged intervals' time, every host's */
    double flagged_in_ns;  /* of it inside a kept slot (before the cap at the slot) */
} load_set;

static void load_set_free(load_set *ls)
{
    for (int i = 0; i < ls->nhosts; i++)
        free(ls->hosts[i]);
    free(ls->hosts);
    free(ls->rows);
    free(ls->first);
    free(ls->nbs);
}

static int load_host_index(load_set *ls, const char *h)
{
    for (int i = 0; i < ls->nhosts; i++)
        if (!strcmp(ls->hosts[i], h))
            return i;
    char **nh = realloc(ls->hosts, (size_t)(ls->nhosts + 1) * sizeof *nh);
    if (!nh)
        return -1;
    ls->hosts = nh;
    if (!(nh[ls->nhosts] = strdup(h)))
        return -1;
    return ls->nhosts++;
}

/* The slots of every load file, by host and time; a slot that overlaps the
 * one kept before it on its host (another memwatch record of the same job
 * sampled the same machine) is left out. 0 or -ENOMEM. */
static int load_rows(sqlite3 *db, load_set *ls)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT l.id, COALESCE(s.host, ''), l.t_start, l.t_end,"
                           " l.tree_cpus + l.run_cpus, l.outside_cpus,"
                           " COALESCE(l.tree_wait_cpus, 0), COALESCE(l.tree_faults, 0)"
                           " FROM load_slots l JOIN"
                           " load_sources s ON s.id = l.source_id ORDER BY 2, l.t_start, l.id",
                           -1, &s, NULL) != SQLITE_OK)
        return 0; /* a database without the load tables */
    size_t cap = 0;
    int rc = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        int h = load_host_index(ls, (const char *)sqlite3_column_text(s, 1));
        load_row r;
        memset(&r, 0, sizeof r);
        r.id = sqlite3_column_int64(s, 0);
        r.host = h;
        r.t0 = sqlite3_column_int64(s, 2);
        r.t1 = sqlite3_column_int64(s, 3);
        if (h < 0 || (ls->n && ls->rows[ls->n - 1].host == h && r.t0 < ls->rows[ls->n - 1].t1)) {
            rc = h < 0 ? -ENOMEM : 0;
            if (rc)
                break;
            continue;
        }
        r.s.len_ns = (double)(r.t1 - r.t0);
        r.s.recorded_cpus = sqlite3_column_double(s, 4);
        r.s.outside_cpus = sqlite3_column_double(s, 5);
        r.s.recorded_wait_cpus = sqlite3_column_double(s, 6);
        r.faults = sqlite3_column_double(s, 7);
        if (ls->n == cap) {
            size_t nc = cap ? 2 * cap : 256;
            load_row *nr = realloc(ls->rows, nc * sizeof *nr);
            if (!nr) {
                rc = -ENOMEM;
                break;
            }
            ls->rows = nr;
            cap = nc;
        }
        ls->rows[ls->n++] = r;
    }
    sqlite3_finalize(s);
    if (rc || !(ls->first = calloc((size_t)ls->nhosts + 1, sizeof *ls->first)))
        return rc ? rc : -ENOMEM;
    for (int h = 0, i = 0; h <= ls->nhosts; h++) {
        while ((size_t)i < ls->n && ls->rows[i].host < h)
            i++;
        ls->first[h] = i;
    }
    ls->sources = mwv_scalar(db, "SELECT COUNT(*) FROM load_sources");
    return 0;
}

/* Adds the flagged interval [t0, t1) to the slots of host h it overlaps. */
static void load_flag(load_set *ls, int h, int64_t t0, int64_t t1)
{
    int lo = ls->first[h], hi = ls->first[h + 1];
    while (lo < hi) { /* the first slot that ends after t0 */
        int mid = (lo + hi) / 2;
        if (ls->rows[mid].t1 <= t0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int i = lo; i < ls->first[h + 1] && ls->rows[i].t0 < t1; i++) {
        int64_t a = t0 > ls->rows[i].t0 ? t0 : ls->rows[i].t0;
        int64_t b = t1 < ls->rows[i].t1 ? t1 : ls->rows[i].t1;
        if (b > a) {
            ls->rows[i].s.flagged_ns += (double)(b - a);
            ls->flagged_in_ns += (double)(b - a);
        }
    }
}

/* The flagged intervals of the processes (as narrowed) into their host's
 * slots. A process without a host name counts on the only host there is. */
static void load_flagged(sqlite3 *db, load_set *ls)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT i.t_start, i.t_end, p.hostname FROM intervals i JOIN processes"
                           " p ON p.id = i.process_id WHERE i.bw_bound = 1 AND i.t_end > i.t_start",
                           -1, &s, NULL) != SQLITE_OK)
        return;
    int last = -1;
    while (sqlite3_step(s) == SQLITE_ROW) {
        const char *host = (const char *)sqlite3_column_text(s, 2);
        ls->flagged_all_ns += (double)(sqlite3_column_int64(s, 1) - sqlite3_column_int64(s, 0));
        int h = -1;
        if (!host && ls->nhosts == 1)
            h = 0;
        else if (host && last >= 0 && !strcmp(ls->hosts[last], host))
            h = last;
        else
            for (int k = 0; host && k < ls->nhosts && h < 0; k++)
                if (!strcmp(ls->hosts[k], host))
                    h = k;
        if (h < 0)
            continue;
        last = h;
        load_flag(ls, h, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1));
    }
    sqlite3_finalize(s);
    for (size_t i = 0; i < ls->n; i++) /* a union over the processes: at most the slot */
        if (ls->rows[i].s.flagged_ns > ls->rows[i].s.len_ns)
            ls->rows[i].s.flagged_ns = ls->rows[i].s.len_ns;
}

static void load_nb_add(load_set *ls, int host, int64_t pid, const char *comm, int recorded,
                        double w)
{
    for (size_t i = 0; i < ls->nnb; i++) {
        load_nb *b = &ls->nbs[i];
        if (b->host == host && b->pid == pid && !strcmp(b->comm, comm)) {
            b->w += w;
            return;
        }
    }
    if (ls->nnb % 64 == 0) {
        if (ls->nnb >= 65536)
            return; /* enough to find the busiest */
        load_nb *nn = realloc(ls->nbs, (ls->nnb + 64) * sizeof *nn);
        if (!nn)
            return;
        ls->nbs = nn;
    }
    load_nb *b = &ls->nbs[ls->nnb++];
    b->host = host;
    b->pid = pid;
    snprintf(b->comm, sizeof b->comm, "%s", comm);
    b->recorded = recorded;
    b->w = w;
}

static int load_nb_cmp(const void *a, const void *b)
{
    const load_nb *x = a, *y = b;
    return (x->w < y->w) - (x->w > y->w);
}

/* The busiest processes outside the recording over the flagged time of the
 * neighbour-loaded slots, busiest first. */
static void load_neighbours(sqlite3 *db, load_set *ls)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT pid, COALESCE(comm, ''), cpus, recorded FROM load_procs"
                           " WHERE slot_id = ?",
                           -1, &s, NULL) != SQLITE_OK)
        return;
    for (size_t i = 0; i < ls->n; i++) {
        const load_row *r = &ls->rows[i];
        if (!(r->s.flagged_ns > 0) || !mw_load_slot_loaded(&r->s))
            continue;
        sqlite3_bind_int64(s, 1, r->id);
        while (sqlite3_step(s) == SQLITE_ROW)
            load_nb_add(ls, r->host, sqlite3_column_int64(s, 0),
                        (const char *)sqlite3_column_text(s, 1), sqlite3_column_int(s, 3),
                        r->s.flagged_ns * sqlite3_column_double(s, 2));
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    if (ls->nnb > 1)
        qsort(ls->nbs, ls->nnb, sizeof *ls->nbs, load_nb_cmp);
}

/* CPUs for people: two decimals below one CPU, one from there on. */
static void load_cpus(char *buf, size_t n, double c)
{
    snprintf(buf, n, c < 1 ? "%.2f" : "%.1f", c);
}

/* The share of the flagged time the load was sampled in. */
static double load_coverage(const load_set *ls)
{
    return ls->flagged_all_ns > 0 ? ls->flagged_in_ns / ls->flagged_all_ns : 0;
}

/* The sentence of the verdict "other processes"; where the load was sampled
 * in less than 90 % of the flagged time, it says how much. */
static void load_sentence(const load_set *ls, const mw_load_verdict *v, char *out, size_t n)
{
    char cov[96] = "";
    if (load_coverage(ls) < 0.9)
        snprintf(cov, sizeof cov, "; the load was sampled in %.0f %% of the flagged time",
                 100 * load_coverage(ls));
    char rec[96], oth[32], top[32], wt[32];
    load_cpus(rec, sizeof rec, v->recorded_cpus);
    strcat(rec, " CPUs");
    if (v->recorded_wait_cpus >= 0.05) { /* it wanted more than it got: others kept it off */
        load_cpus(wt, sizeof wt, v->recorded_wait_cpus);
        snprintf(rec + strlen(rec), sizeof rec - strlen(rec), " (%s more waiting for a CPU)", wt);
    }
    load_cpus(oth, sizeof oth, v->outside_cpus);
    int k = snprintf(out, n,
                     "Likely source: other processes on this machine: %.0f %% of the flagged time "
                     "the recorded program used %s while ",
                     100 * v->share, rec);
    if (k < 0 || (size_t)k >= n)
        return;
    const load_nb *b = ls->nnb ? &ls->nbs[0] : NULL;
    if (!b || !(v->loaded_ns > 0) || b->w / v->loaded_ns < 0.005) {
        snprintf(out + k, n - (size_t)k,
                 "other processes used %s CPUs (none of them by name: processes memwatch cannot "
                 "see, such as another container's or virtual machine's, or too short-lived to "
                 "catch%s)",
                 oth, cov);
        return;
    }
    load_cpus(top, sizeof top, b->w / v->loaded_ns);
    snprintf(out + k, n - (size_t)k,
             "PID %lld %s%s%s used %s CPUs (top neighbour%s; %s CPUs "
             "outside the recording in all%s)",
             (long long)b->pid, b->comm, ls->nhosts > 1 ? " on " : "",
             ls->nhosts > 1 ? ls->hosts[b->host] : "", top,
             b->recorded ? ", recorded by memwatch in another run" : "", oth, cov);
}

/* The JSON of the verdict: figures, the neighbours and, where the rule
 * holds, the sentence. */
static cJSON *load_json(const load_set *ls, const mw_load_verdict *v, const mw_load_verdict *all,
                        int top)
{
    double fps = 0; /* the tree's page faults per second, weighted by flagged time */
    for (size_t i = 0; i < ls->n && v->flagged_ns > 0; i++)
        fps += ls->rows[i].s.flagged_ns * ls->rows[i].faults / (ls->rows[i].s.len_ns / 1e9);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "sources", (double)ls->sources);
    cJSON_AddNumberToObject(o, "slots", (double)ls->n);
    cJSON_AddNumberToObject(o, "flagged_ns", v->flagged_ns);
    cJSON_AddNumberToObject(o, "coverage", load_coverage(ls));
    cJSON_AddNumberToObject(o, "neighbour_loaded_ns", v->loaded_ns);
    cJSON_AddNumberToObject(o, "share", v->share);
    cJSON_AddNumberToObject(o, "recorded_cpus", v->recorded_cpus);
    cJSON_AddNumberToObject(o, "recorded_wait_cpus", v->recorded_wait_cpus);
    cJSON_AddNumberToObject(o, "outside_cpus", v->outside_cpus);
    cJSON_AddNumberToObject(o, "flagged_recorded_cpus", all->recorded_cpus);
    cJSON_AddNumberToObject(o, "flagged_recorded_wait_cpus", all->recorded_wait_cpus);
    cJSON_AddNumberToObject(o, "flagged_outside_cpus", all->outside_cpus);
    cJSON_AddNumberToObject(o, "flagged_recorded_faults_per_s",
                            v->flagged_ns > 0 ? fps / v->flagged_ns : 0);
    cJSON_AddStringToObject(o, "rule",
                            "a slot is neighbour-loaded when the processes outside "
                            "the recording used at least 1 CPU and at least 4 times "
                            "the CPUs the recording used (counted as at least 0.125); "
                            "other processes are the likely source when such slots "
                            "hold at least half of the flagged time");
    cJSON *arr = cJSON_AddArrayToObject(o, "neighbours");
    for (size_t i = 0; i < ls->nnb && (int)i < top && v->loaded_ns > 0; i++) {
        cJSON *b = cJSON_CreateObject();
        cJSON_AddStringToObject(b, "host", ls->hosts[ls->nbs[i].host]);
        cJSON_AddNumberToObject(b, "pid", (double)ls->nbs[i].pid);
        cJSON_AddStringToObject(b, "comm", ls->nbs[i].comm);
        cJSON_AddNumberToObject(b, "cpus", ls->nbs[i].w / v->loaded_ns);
        cJSON_AddBoolToObject(b, "recorded_by_memwatch", ls->nbs[i].recorded);
        cJSON_AddItemToArray(arr, b);
    }
    if (v->others) {
        char line[1024];
        load_sentence(ls, v, line, sizeof line);
        cJSON_AddStringToObject(o, "likely_source", line);
    }
    return o;
}

cJSON *mw_load_collect(sqlite3 *db, int top)
{
    load_set ls;
    memset(&ls, 0, sizeof ls);
    cJSON *o = NULL;
    mw_load_slot *sl = NULL;
    if (load_rows(db, &ls) || !ls.n || !(sl = malloc(ls.n * sizeof *sl)))
        goto out;
    load_flagged(db, &ls);
    for (size_t i = 0; i < ls.n; i++)
        sl[i] = ls.rows[i].s;
    mw_load_verdict v, all;
    mw_load_judge(sl, ls.n, &v);
    if (!(v.flagged_ns > 0))
        goto out; /* no flagged interval in a sampled slot: nothing to judge */
    all = v;      /* the means over all the flagged time, loaded or not */
    double fr = 0, fw = 0, fo = 0;
    for (size_t i = 0; i < ls.n; i++) {
        fr += ls.rows[i].s.flagged_ns * ls.rows[i].s.recorded_cpus;
        fw += ls.rows[i].s.flagged_ns * ls.rows[i].s.recorded_wait_cpus;
        fo += ls.rows[i].s.flagged_ns * ls.rows[i].s.outside_cpus;
    }
    all.recorded_cpus = fr / v.flagged_ns;
    all.recorded_wait_cpus = fw / v.flagged_ns;
    all.outside_cpus = fo / v.flagged_ns;
    load_neighbours(db, &ls);
    o = load_json(&ls, &v, &all, top);
out:
    free(sl);
    load_set_free(&ls);
    return o;
}

void mw_load_text(FILE *f, const cJSON *bw)
{
    const cJSON *l = cJSON_GetObjectItem(cJSON_GetObjectItem(bw, "load"), "likely_source");
    if (!cJSON_IsString(l))
        return;
    char buf[4096];
    mw_text_escape(l->valuestring, buf, sizeof buf); /* a process's name is anyone's */
    fprintf(f, "  %s\n", buf);
}

void mw_load_html(FILE *f, sqlite3 *db)
{
    cJSON *o = mw_load_collect(db, 3);
    const cJSON *l = cJSON_GetObjectItem(o, "likely_source");
    if (cJSON_IsString(l)) {
        char *u = mw_text_utf8(l->valuestring);
        fputs("<p class=verdict id=likely-source>", f);
        mwv_html_str(f, u ? u : "");
        fputs("</p>\n", f);
        free(u);
    }
    cJSON_Delete(o);
}
