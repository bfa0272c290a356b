/*
 * report/ingest_region.c: a file's region records into the report database
 * (report/region.h, docs/regions.md).
 *
 * Owns: pairing each thread's begins and ends into spans (nesting, ends that
 * close inner regions, ends without a begin, regions open at the end of the
 * thread or image), their time in bandwidth-bound intervals, which samples
 * and GPU kernels fall in them, and the notes about bad input.
 * May call: SQLite, libc. Threading: one ingest at a time per mw_rgn.
 */
#include "ingest.h"
#include "region.h"

#include <memwatch/memwatch.h>
#include <memwatch/mwr.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct rg_name {
    uint32_t id;
    uint16_t flags;
    char *name;
} rg_name;

typedef struct rg_ev {
    uint32_t tid;
    uint64_t rkey;   /* the time of its record's first event: records sort by it */
    uint64_t seq;    /* file order */
    mwr_region_ev e;
} rg_ev;

typedef struct rg_thr {
    uint32_t tid;
    uint64_t t_end;
} rg_thr;

typedef struct rg_span {
    uint32_t tid, raw_id, depth, flags;
    uint64_t t_start, t_end, calls;
    int64_t region_id, span_id;
} rg_span;

enum { SPAN_FORK = 1, SPAN_IMPLICIT = 2, SPAN_OPEN = 4 };

#define ARR(T)                                                                                     \
    struct {                                                                                       \
        T *v;                                                                                      \
        size_t n, cap;                                                                             \
    }

struct mw_rgn {
    ARR(rg_name) names;
    ARR(rg_ev) evs;
    ARR(rg_thr) thrs;
    uint64_t seq, last_time;
    /* notes: count and the first name for each kind */
    uint64_t n_unmatched, n_implicit, n_open, n_exec_open, n_unnamed;
    uint32_t id_unmatched, id_open;
};

static int grow(void **v, size_t *cap, size_t need, size_t sz)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 64;
    while (nc < need)
        nc *= 2;
    void *p = realloc(*v, nc * sz);
    if (!p)
        return -ENOMEM;
    *v = p;
    *cap = nc;
    return 0;
}
#define PUSH(a, x)                                                                                 \
    (grow((void **)&(a).v, &(a).cap, (a).n + 1, sizeof *(a).v) ? -ENOMEM                           \
                                                               : ((a).v[(a).n++] = (x), 0))

mw_rgn *mw_rgn_new(void)
{
    return calloc(1, sizeof(mw_rgn));
}

static void reset(mw_rgn *g)
{
    for (size_t i = 0; i < g->names.n; i++)
        free(g->names.v[i].name);
    free(g->names.v);
    free(g->evs.v);
    free(g->thrs.v);
    memset(g, 0, sizeof *g);
}

void mw_rgn_free(mw_rgn *g)
{
    if (!g)
        return;
    reset(g);
    free(g);
}

/* A name as the report shows it: control characters as '?', bytes that are
 * not UTF-8 as '?' (the JSON and the text stay valid whatever a writer
 * put there). */
static char *clean_name(const unsigned char *p, size_t n, uint16_t *flags)
{
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    size_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        size_t k = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
                               : (c & 0xf8) == 0xf0 ? 4 : 0;
        int ok = k && i + k <= n && !(k == 2 && c < 0xc2);
        for (size_t j = 1; ok && j < k; j++)
            ok = (p[i + j] & 0xc0) == 0x80;
        if (!ok || (k == 1 && (c < 0x20 || c == 0x7f))) {
            s[i] = '?';
            if (k == 1)
                *flags |= MWR_RGN_CONTROL;
            i++;
            continue;
        }
        memcpy(s + i, p + i, k);
        i += k;
    }
    s[n] = 0;
    return s;
}

/* One event of a record (the i-th): its record's key is its first event's
 * time. The room is there (grown for the record). */
static void rg_add(mw_rgn *g, rg_ev *x, uint32_t i, uint64_t *rkey)
{
    if (i == 0)
        *rkey = x->e.time_ns;
    x->rkey = *rkey;
    if (x->e.time_ns > g->last_time)
        g->last_time = x->e.time_ns;
    g->evs.v[g->evs.n++] = *x;
}

int mw_rgn_record(mw_rgn *g, uint32_t type, const void *payload, size_t len)
{
    const unsigned char *p = payload;
    switch (type) {
    case MWR_REGION_NAME: {
        mwr_region_name h;
        if (len < sizeof h)
            return MW_ERR_CORRUPT;
        memcpy(&h, p, sizeof h);
        if (sizeof h + h.len > len)
            return MW_ERR_CORRUPT;
        for (size_t i = 0; i < g->names.n; i++)
            if (g->names.v[i].id == h.id)
                return 0; /* written again (two drains at once): the first counts */
        rg_name nm = {h.id, h.flags, NULL};
        nm.name = clean_name(p + sizeof h, h.len, &nm.flags);
        if (!nm.name)
            return -ENOMEM;
        if (PUSH(g->names, nm)) {
            free(nm.name);
            return -ENOMEM;
        }
        return 0;
    }
    case MWR_REGION: {
        mwr_region h;
        if (len < sizeof h)
            return MW_ERR_CORRUPT;
        memcpy(&h, p, sizeof h);
        if (h.nevents > (len - sizeof h) / sizeof(mwr_region_ev))
            return MW_ERR_CORRUPT;
        if (grow((void **)&g->evs.v, &g->evs.cap, g->evs.n + h.nevents, sizeof *g->evs.v))
            return -ENOMEM;
        uint64_t rkey = 0;
        for (uint32_t i = 0; i < h.nevents; i++) {
            rg_ev x = {h.tid, 0, g->seq++, {0}};
            memcpy(&x.e, p + sizeof h + i * sizeof x.e, sizeof x.e);
            rg_add(g, &x, i, &rkey);
        }
        return 0;
    }
    case MWR_REGION_PACKED: {
        mwr_region_packed h;
        if (len < sizeof h)
            return MW_ERR_CORRUPT;
        memcpy(&h, p, sizeof h);
        if (h.nbytes > len - sizeof h || h.nevents > h.nbytes || !(h.ns_per_tick >= 0) ||
            h.ns_per_tick > 1e6)
            return MW_ERR_CORRUPT;
        if (grow((void **)&g->evs.v, &g->evs.cap, g->evs.n + h.nevents, sizeof *g->evs.v))
            return -ENOMEM;
        const unsigned char *q = p + sizeof h, *end = q + h.nbytes;
        int64_t ticks = 0;
        uint64_t rkey = 0;
        size_t n0 = g->evs.n; /* a malformed record adds none of its events */
        uint64_t lt0 = g->last_time;
#define RG_BAD()                                                                               \
    do {                                                                                       \
        g->evs.n = n0;                                                                         \
        g->last_time = lt0;                                                                    \
        return MW_ERR_CORRUPT;                                                                 \
    } while (0)
        for (uint32_t i = 0; i < h.nevents; i++) {
            uint64_t v[4];
            for (int k = 0; k < 4; k++) {
                uint64_t x = 0;
                int sh = 0;
                for (;;) {
                    if (q >= end || sh > 63)
                        RG_BAD();
                    unsigned char c = *q++;
                    x |= (uint64_t)(c & 0x7f) << sh;
                    sh += 7;
                    if (!(c & 0x80))
                        break;
                }
                v[k] = x;
            }
            ticks += (int64_t)(v[0] >> 1) ^ -(int64_t)(v[0] & 1);
            if (v[1] > UINT32_MAX || v[2] >> 3 > 0xffff || v[3] > UINT32_MAX)
                RG_BAD();
            double dt = (double)ticks * h.ns_per_tick;
            rg_ev x = {h.tid, 0, g->seq++, {0}};
            if (dt < 0)
                x.e.time_ns = -dt >= (double)h.t0_ns ? 0 : h.t0_ns - (uint64_t)(-dt + 0.5);
            else
                x.e.time_ns = h.t0_ns + (uint64_t)(dt + 0.5);
            x.e.id = (uint32_t)v[1];
            x.e.kind = (uint16_t)(v[2] & 7);
            x.e.depth = (uint16_t)(v[2] >> 3);
            x.e.merged = (uint32_t)v[3];
            rg_add(g, &x, i, &rkey);
        }
#undef RG_BAD
        return 0;
    }
    case MWR_THREAD: {
        mwr_thread t;
        if (len < sizeof t)
            return 0; /* the main loop says what is wrong with it */
        memcpy(&t, p, sizeof t);
        if (t.event == MWR_THREAD_EXIT) {
            rg_thr th = {t.tid, t.time_ns};
            return PUSH(g->thrs, th);
        }
        return 0;
    }
    default:
        return 0;
    }
}

static int ev_cmp(const void *a, const void *b)
{
    const rg_ev *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->rkey != y->rkey)
        return x->rkey < y->rkey ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int span_start_cmp(const void *a, const void *b)
{
    const rg_span *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->t_start < y->t_start ? -1 : x->t_start > y->t_start;
}

static const rg_name *name_of(const mw_rgn *g, uint32_t id)
{
    for (size_t i = 0; i < g->names.n; i++)
        if (g->names.v[i].id == id)
            return &g->names.v[i];
    return NULL;
}

static uint64_t thread_end(const mw_rgn *g, uint32_t tid, uint64_t proc_end)
{
    for (size_t i = 0; i < g->thrs.n; i++)
        if (g->thrs.v[i].tid == tid)
            return g->thrs.v[i].t_end;
    return proc_end;
}

typedef ARR(rg_span) span_arr;

/* Pair one file's events (sorted by thread, then time) into spans. */
static int pair(mw_rgn *g, span_arr *out, uint64_t proc_end)
{
    struct {
        uint32_t raw_id, flags;
        uint64_t t_start;
    } stk[256];
    size_t i = 0;
    while (i < g->evs.n) {
        uint32_t tid = g->evs.v[i].tid;
        size_t d = 0, deep = 0;
        for (; i < g->evs.n && g->evs.v[i].tid == tid; i++) {
            const mwr_region_ev *e = &g->evs.v[i].e;
            if (e->kind == MWR_RG_BEGIN || e->kind == MWR_RG_BEGIN_FORK) {
                if (d < sizeof stk / sizeof stk[0]) {
                    stk[d].raw_id = e->id;
                    stk[d].t_start = e->time_ns;
                    stk[d].flags = e->kind == MWR_RG_BEGIN_FORK ? SPAN_FORK : 0;
                    d++;
                } else {
                    deep++;
                }
                continue;
            }
            if (e->kind != MWR_RG_END && e->kind != MWR_RG_END_IMPLICIT) {
                if (e->kind == MWR_RG_END_UNMATCHED) {
                    if (!g->n_unmatched++)
                        g->id_unmatched = e->id;
                }
                continue;
            }
            if (deep) {
                deep--;
                continue;
            }
            size_t k = d;
            while (k > 0 && stk[k - 1].raw_id != e->id)
                k--;
            if (k == 0) {
                if (!g->n_unmatched++)
                    g->id_unmatched = e->id;
                continue;
            }
            /* regions opened inside it end with it */
            while (d >= k) {
                d--;
                rg_span s = {tid, stk[d].raw_id, (uint32_t)d, stk[d].flags, stk[d].t_start,
                             e->time_ns, 1, 0, 0};
                if (d == k - 1) {
                    s.calls += e->merged;
                    if (e->kind == MWR_RG_END_IMPLICIT)
                        s.flags |= SPAN_IMPLICIT;
                } else {
                    s.flags |= SPAN_IMPLICIT;
                }
                if (s.flags & SPAN_IMPLICIT)
                    g->n_implicit++;
                if (s.t_end < s.t_start)
                    s.t_end = s.t_start;
                if (PUSH(*out, s))
                    return -ENOMEM;
                if (d == k - 1)
                    break;
            }
        }
        uint64_t te = thread_end(g, tid, proc_end);
        while (d > 0) {
            d--;
            rg_span s = {tid, stk[d].raw_id, (uint32_t)d, stk[d].flags | SPAN_OPEN,
                         stk[d].t_start, te > stk[d].t_start ? te : stk[d].t_start, 1, 0, 0};
            if (!g->n_open++)
                g->id_open = s.raw_id;
            if (PUSH(*out, s))
                return -ENOMEM;
        }
    }
    return 0;
}

static int note(sqlite3 *db, int64_t proc_id, const char *text)
{
    return ing_db_note(db, "region_notes", proc_id, text);
}

static int64_t region_id(sqlite3 *db, const char *name, int flags)
{
    sqlite3_stmt *s;
    int64_t id = -1;
    if (sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO regions(name, flags) VALUES(?,?)", -1, &s,
                           NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(s, 1, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(s, 2, flags);
    sqlite3_step(s);
    sqlite3_finalize(s);
    if (sqlite3_prepare_v2(db, "SELECT id FROM regions WHERE name=?", -1, &s, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(s, 1, name, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(s) == SQLITE_ROW)
        id = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return id;
}

typedef struct iv {
    uint64_t a, b;
    int flags;
} iv;

/* Time of [a, b) in intervals with a latency reading, and in bound ones. */
static void overlap(const iv *v, size_t n, uint64_t a, uint64_t b, uint64_t *meas, uint64_t *bound)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first interval ending after a */
        size_t m = (lo + hi) / 2;
        if (v[m].b <= a)
            lo = m + 1;
        else
            hi = m;
    }
    *meas = *bound = 0;
    for (size_t i = lo; i < n && v[i].a < b; i++) {
        uint64_t x = v[i].a > a ? v[i].a : a, y = v[i].b < b ? v[i].b : b;
        if (y <= x || !(v[i].flags & MWR_IV_LAT_VALID))
            continue;
        *meas += y - x;
        if (v[i].flags & MWR_IV_BW_BOUND)
            *bound += y - x;
    }
}

static int iv_cmp(const void *a, const void *b)
{
    const iv *x = a, *y = b;
    return x->a < y->a ? -1 : x->a > y->a;
}

/* Inclusive attribution: a sample (or kernel) counts for every region open
 * on its thread (for kernels: on any thread of the process) at its time;
 * once per region when a region nests in itself. */
static int attribute(sqlite3 *db, const char *select, const char *insert, int64_t proc_id,
                     int64_t offset, rg_span *sp, size_t nsp, int by_thread)
{
    sqlite3_stmt *q = NULL, *ins = NULL;
    int rc = -EIO;
    size_t *act = malloc((nsp + 1) * sizeof *act);
    if (!act)
        return -ENOMEM;
    if (sqlite3_prepare_v2(db, select, -1, &q, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, insert, -1, &ins, NULL) != SQLITE_OK)
        goto out;
    sqlite3_bind_int64(q, 1, proc_id);
    if (sqlite3_bind_parameter_count(q) >= 2)
        sqlite3_bind_int64(q, 2, offset);
    size_t next = 0, nact = 0;
    uint32_t cur_tid = UINT32_MAX;
    while (sqlite3_step(q) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(q, 0);
        uint32_t tid = by_thread ? (uint32_t)sqlite3_column_int64(q, 1) : 0;
        uint64_t t = (uint64_t)sqlite3_column_int64(q, 2);
        if (tid != cur_tid) {
            cur_tid = tid;
            nact = 0;
            /* spans are sorted by (tid, t_start) when by_thread, else by t_start */
            next = 0;
            if (by_thread) {
                size_t lo = 0, hi = nsp;
                while (lo < hi) {
                    size_t m = (lo + hi) / 2;
                    if (sp[m].tid < tid)
                        lo = m + 1;
                    else
                        hi = m;
                }
                next = lo;
            }
        }
        while (next < nsp && (!by_thread || sp[next].tid == tid) && sp[next].t_start <= t)
            act[nact++] = next++;
        size_t w = 0;
        for (size_t k = 0; k < nact; k++)
            if (sp[act[k]].t_end > t || (sp[act[k]].t_end == t && sp[act[k]].t_start == t))
                act[w++] = act[k];
        nact = w;
        for (size_t k = 0; k < nact; k++) {
            int dup = 0;
            for (size_t j = 0; j < k && !dup; j++)
                dup = sp[act[j]].region_id == sp[act[k]].region_id;
            if (dup)
                continue;
            sqlite3_bind_int64(ins, 1, id);
            sqlite3_bind_int64(ins, 2, sp[act[k]].region_id);
            if (sqlite3_step(ins) != SQLITE_DONE)
                goto out;
            sqlite3_reset(ins);
        }
    }
    rc = 0;
out:
    free(act);
    sqlite3_finalize(q);
    sqlite3_finalize(ins);
    return rc;
}

static int span_global_cmp(const void *a, const void *b)
{
    const rg_span *x = a, *y = b;
    return x->t_start < y->t_start ? -1 : x->t_start > y->t_start;
}

/* mw_rgn_file_done's shared state: the recorder, the database, the process,
 * its paired spans and its intervals sorted by start. */
typedef struct rgn_done {
    mw_rgn *g;
    sqlite3 *db;
    int64_t proc_id;
    span_arr sp;
    iv *ivs;
    size_t niv, civ;
} rgn_done;

/* The image's end: the trailer, else its last interval or event. */
static uint64_t rgn_image_end(const rgn_done *c, uint64_t t_end)
{
    sqlite3_stmt *s = NULL;
    uint64_t e = t_end;
    if (sqlite3_prepare_v2(c->db, "SELECT MAX(t_end) FROM intervals WHERE process_id=?", -1, &s,
                           NULL) == SQLITE_OK) {
        sqlite3_bind_int64(s, 1, c->proc_id);
        if (sqlite3_step(s) == SQLITE_ROW && !e)
            e = (uint64_t)sqlite3_column_int64(s, 0);
    }
    sqlite3_finalize(s);
    return e > c->g->last_time ? e : c->g->last_time;
}

/* Reads the process's intervals into c->ivs, sorted by start. */
static int rgn_load_intervals(rgn_done *c)
{
    sqlite3_stmt *s = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(c->db, "SELECT t_start, t_end, flags FROM intervals WHERE process_id=?",
                           -1, &s, NULL) != SQLITE_OK) {
        rc = -EIO;
        goto out;
    }
    sqlite3_bind_int64(s, 1, c->proc_id);
    while (sqlite3_step(s) == SQLITE_ROW) {
        if (grow((void **)&c->ivs, &c->civ, c->niv + 1, sizeof *c->ivs)) {
            rc = -ENOMEM;
            goto out;
        }
        c->ivs[c->niv++] = (iv){(uint64_t)sqlite3_column_int64(s, 0),
                                (uint64_t)sqlite3_column_int64(s, 1), sqlite3_column_int(s, 2)};
    }
    sqlite3_finalize(s);
    s = NULL;
    if (c->niv > 1)
        qsort(c->ivs, c->niv, sizeof *c->ivs, iv_cmp);
out:
    sqlite3_finalize(s);
    return rc;
}

/* Inserts each span's region and its region_spans row (measured and bound
 * time from the intervals); sets the span's region_id and span_id. */
static int rgn_insert_spans(rgn_done *c)
{
    sqlite3_stmt *s = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(c->db,
                           "INSERT INTO region_spans(process_id, region_id, tid, depth, t_start,"
                           " t_end, calls, measured_ns, bound_ns, flags)"
                           " VALUES(?,?,?,?,?,?,?,?,?,?)",
                           -1, &s, NULL) != SQLITE_OK) {
        rc = -EIO;
        goto out;
    }
    for (size_t i = 0; i < c->sp.n; i++) {
        rg_span *x = &c->sp.v[i];
        const rg_name *nm = name_of(c->g, x->raw_id);
        char unnamed[48];
        if (!nm) {
            snprintf(unnamed, sizeof unnamed, "(region %u, name not recorded)", x->raw_id);
            c->g->n_unnamed++;
        }
        x->region_id = region_id(c->db, nm ? nm->name : unnamed, nm ? nm->flags : 0);
        if (x->region_id < 0) {
            rc = -EIO;
            goto out;
        }
        uint64_t meas, bound;
        overlap(c->ivs, c->niv, x->t_start, x->t_end, &meas, &bound);
        sqlite3_bind_int64(s, 1, c->proc_id);
        sqlite3_bind_int64(s, 2, x->region_id);
        sqlite3_bind_int64(s, 3, x->tid);
        sqlite3_bind_int64(s, 4, x->depth);
        sqlite3_bind_int64(s, 5, (int64_t)x->t_start);
        sqlite3_bind_int64(s, 6, (int64_t)x->t_end);
        sqlite3_bind_int64(s, 7, (int64_t)x->calls);
        sqlite3_bind_int64(s, 8, (int64_t)meas);
        sqlite3_bind_int64(s, 9, (int64_t)bound);
        sqlite3_bind_int(s, 10, (int)x->flags);
        if (sqlite3_step(s) != SQLITE_DONE) {
            rc = -EIO;
            goto out;
        }
        sqlite3_reset(s);
        x->span_id = sqlite3_last_insert_rowid(c->db);
    }
out:
    sqlite3_finalize(s);
    return rc;
}

/* Attributes the process's samples, then its GPU kernels, to the spans. */
static int rgn_attribute_all(rgn_done *c)
{
    sqlite3_stmt *s = NULL;
    int rc;
    qsort(c->sp.v, c->sp.n, sizeof *c->sp.v, span_start_cmp);
    if ((rc = attribute(c->db,
                        "SELECT id, tid, time_ns FROM samples WHERE process_id=?"
                        " ORDER BY tid, time_ns",
                        "INSERT INTO sample_regions(sample_id, region_id) VALUES(?,?)",
                        c->proc_id, 0, c->sp.v, c->sp.n, 1)))
        return rc;
    qsort(c->sp.v, c->sp.n, sizeof *c->sp.v, span_global_cmp);
    /* kernel times are CUPTI's: META gpu.clock pairs one with CLOCK_MONOTONIC */
    int64_t off = 0;
    if (sqlite3_prepare_v2(c->db, "SELECT value FROM meta WHERE process_id=? AND"
                                  " key='gpu.clock' ORDER BY rowid DESC LIMIT 1", -1, &s,
                           NULL) == SQLITE_OK) {
        sqlite3_bind_int64(s, 1, c->proc_id);
        unsigned long long ts = 0, mono = 0;
        if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0) &&
            sscanf((const char *)sqlite3_column_text(s, 0), "%llu %llu", &ts, &mono) == 2)
            off = (int64_t)(mono - ts);
    }
    sqlite3_finalize(s);
    return attribute(c->db,
                     "SELECT id, 0, start_ns + ?2 FROM gpu_kernels WHERE process_id=?1"
                     " ORDER BY start_ns",
                     "INSERT INTO gpu_kernel_regions(kernel_id, region_id) VALUES(?,?)",
                     c->proc_id, off, c->sp.v, c->sp.n, 0);
}

/* The process's notes: unmatched, open, implicitly ended and unnamed regions,
 * cut, odd and surplus names, spans open at a fork. */
static int rgn_notes(rgn_done *c)
{
    mw_rgn *g = c->g;
    sqlite3 *db = c->db;
    int64_t proc_id = c->proc_id;
    sqlite3_stmt *s = NULL;
    int rc = 0;
    char buf[600], end[64] = "";
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE process_id=? AND key='end'"
                               " ORDER BY rowid DESC LIMIT 1", -1, &s, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(s, 1, proc_id);
        if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
            snprintf(end, sizeof end, "%s", (const char *)sqlite3_column_text(s, 0));
    }
    sqlite3_finalize(s);
    const rg_name *a = name_of(g, g->id_unmatched), *b = name_of(g, g->id_open);
    if (g->n_unmatched) {
        snprintf(buf, sizeof buf,
                 "%llu region end(s) without an open region of that name on the thread"
                 " (first: \"%.200s\"): ignored",
                 (unsigned long long)g->n_unmatched, a ? a->name : "?");
        if ((rc = note(db, proc_id, buf)))
            return rc;
    }
    if (g->n_open) {
        snprintf(buf, sizeof buf,
                 "%llu region(s) never ended (first: \"%.200s\"): counted up to the end of"
                 " their thread or of the process%s",
                 (unsigned long long)g->n_open, b ? b->name : "?",
                 !strcmp(end, "exec") ? " (it exec'ed: the new image has its own file)" : "");
        if ((rc = note(db, proc_id, buf)))
            return rc;
    }
    if (g->n_implicit) {
        snprintf(buf, sizeof buf,
                 "%llu region(s) ended because an enclosing region ended first",
                 (unsigned long long)g->n_implicit);
        if ((rc = note(db, proc_id, buf)))
            return rc;
    }
    if (g->n_unnamed) {
        snprintf(buf, sizeof buf, "%llu span(s) of regions whose name record is missing",
                 (unsigned long long)g->n_unnamed);
        if ((rc = note(db, proc_id, buf)))
            return rc;
    }
    size_t cut = 0, ctl = 0, other = 0, fork = 0;
    for (size_t i = 0; i < g->names.n; i++) {
        cut += !!(g->names.v[i].flags & MWR_RGN_CUT);
        ctl += !!(g->names.v[i].flags & MWR_RGN_CONTROL);
        other += !!(g->names.v[i].flags & MWR_RGN_OTHER);
    }
    for (size_t i = 0; i < c->sp.n; i++)
        fork += !!(c->sp.v[i].flags & SPAN_FORK);
    if (cut) {
        snprintf(buf, sizeof buf, "%zu region name(s) longer than 255 bytes, cut", cut);
        if ((rc = note(db, proc_id, buf)))
            return rc;
    }
    if (ctl) {
        snprintf(buf, sizeof buf,
                 "%zu region name(s) with control characters or bytes that are not UTF-8,"
                 " shown with '?'", ctl);
        if ((rc = note(db, proc_id, buf)))
            return rc;
    }
    if (other) {
        snprintf(buf, sizeof buf,
                 "more than 4095 distinct region names: the rest are counted under"
                 " \"(other regions)\"");
        if ((rc = note(db, proc_id, buf)))
            return rc;
    }
    if (fork) {
        snprintf(buf, sizeof buf,
                 "%zu region(s) were open when this process was forked: counted from the"
                 " fork", fork);
        if ((rc = note(db, proc_id, buf)))
            return rc;
    }
    return 0;
}

int mw_rgn_file_done(mw_rgn *g, sqlite3 *db, int64_t proc_id, uint64_t t_end)
{
    int rc = 0;
    rgn_done c = {.g = g, .db = db, .proc_id = proc_id};
    if (!g->evs.n && !g->names.n)
        goto out;
    t_end = rgn_image_end(&c, t_end);
    qsort(g->evs.v, g->evs.n, sizeof *g->evs.v, ev_cmp);
    if ((rc = pair(g, &c.sp, t_end)))
        goto out;
    /* intervals of the process */
    if ((rc = rgn_load_intervals(&c)))
        goto out;
    /* regions and spans */
    if ((rc = rgn_insert_spans(&c)))
        goto out;
    if (c.sp.n && (rc = rgn_attribute_all(&c)))
        goto out;
    /* notes */
    rc = rgn_notes(&c);
out:
    free(c.sp.v);
    free(c.ivs);
    reset(g);
    return rc;
}
