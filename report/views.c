/*
 * report/views.c: views of a report database beside the summary
 * (mw_report_view): `--sort comm|dso|function|line|object` (shares of the
 * timer samples by command, module, function with its inclusive share, source
 * line, or data object) and `--callers FUNCTION` (a function's inclusive and
 * exclusive shares, its callers and its callees).
 *
 * Owns: the call-stack walk over the stacks trie (every distinct stack once,
 * weighted by its samples), function identity (name and module), the text
 * and JSON of these views.
 * May call: SQLite, cJSON, libc. Writes only to the stream it is given.
 * Threading: reentrant; opens its own read-only connection.
 */
#include "text.h"
#include "view_int.h"

#include <memwatch/report.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VIEW_MAX_DEPTH 512

/* ---- functions: one id per (name, module) ---- */
typedef struct fn_tab {
    char **name, **module; /* by function id */
    size_t n, cap;
    uint32_t *slot;        /* open addressing: function id + 1, 0 empty */
    size_t nslot;
} fn_tab;

static uint64_t str_hash(const char *a, const char *b)
{
    uint64_t h = 1469598103934665603ull;
    for (; *a; a++)
        h = (h ^ (unsigned char)*a) * 1099511628211ull;
    h = (h ^ 1) * 1099511628211ull;
    for (; b && *b; b++)
        h = (h ^ (unsigned char)*b) * 1099511628211ull;
    return h;
}

static int fn_grow(fn_tab *t)
{
    size_t ns = t->nslot ? t->nslot * 2 : 4096;
    uint32_t *s = calloc(ns, sizeof *s);
    if (!s)
        return -ENOMEM;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = str_hash(t->name[i], t->module[i]) & (ns - 1);
        while (s[j])
            j = (j + 1) & (ns - 1);
        s[j] = (uint32_t)i + 1;
    }
    free(t->slot);
    t->slot = s;
    t->nslot = ns;
    return 0;
}

/* The id of (name, module), added when new; -1 when out of memory. */
static long fn_id(fn_tab *t, const char *name, const char *module)
{
    if ((t->n + 1) * 2 > t->nslot && fn_grow(t))
        return -1;
    const char *m = module ? module : "";
    size_t j = str_hash(name, m) & (t->nslot - 1);
    while (t->slot[j]) {
        size_t i = t->slot[j] - 1;
        if (!strcmp(t->name[i], name) && !strcmp(t->module[i], m))
            return (long)i;
        j = (j + 1) & (t->nslot - 1);
    }
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 1024;
        char **a = realloc(t->name, nc * sizeof *a);
        if (!a)
            return -1;
        t->name = a;
        char **b = realloc(t->module, nc * sizeof *b);
        if (!b)
            return -1;
        t->module = b;
        t->cap = nc;
    }
    t->name[t->n] = strdup(name);
    t->module[t->n] = strdup(m);
    if (!t->name[t->n] || !t->module[t->n])
        return -1;
    t->slot[j] = (uint32_t)t->n + 1;
    return (long)t->n++;
}

static void fn_free(fn_tab *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->name[i]);
        free(t->module[i]);
    }
    free(t->name);
    free(t->module);
    free(t->slot);
}

/* ---- the stacks trie and the samples on it ---- */
typedef struct trie {
    fn_tab fns;
    int64_t nnodes;   /* stacks ids are 1..nnodes */
    int64_t *parent;  /* by stack id */
    int32_t *fn;      /* function id of the node's frame, by stack id (-1 none) */
    /* distinct sample stacks: id, samples, of which truncated */
    int64_t *sid;
    uint64_t *cnt, *trunc;
    size_t nsid;
    uint64_t total;   /* samples counted */
} trie;

static void trie_free(trie *t)
{
    fn_free(&t->fns);
    free(t->parent);
    free(t->fn);
    free(t->sid);
    free(t->cnt);
    free(t->trunc);
}

/* Load the trie and the timer samples' stacks. */
static int trie_load(sqlite3 *db, const char *where, trie *t)
{
    memset(t, 0, sizeof *t);
    t->nnodes = mwv_scalar(db, "SELECT COALESCE(MAX(id), 0) FROM stacks");
    int64_t npcs = mwv_scalar(db, "SELECT COALESCE(MAX(id), 0) FROM pcs");
    int32_t *pcfn = calloc((size_t)npcs + 1, sizeof *pcfn);
    t->parent = calloc((size_t)t->nnodes + 1, sizeof *t->parent);
    t->fn = calloc((size_t)t->nnodes + 1, sizeof *t->fn);
    if (!pcfn || !t->parent || !t->fn) {
        free(pcfn);
        return -ENOMEM;
    }
    sqlite3_stmt *s;
    int rc = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT p.id, COALESCE(p.function, p.symbol, printf('0x%x', p.rel_addr)),"
                           " m.path FROM pcs p LEFT JOIN modules m ON m.id = p.module_id",
                           -1, &s, NULL) != SQLITE_OK) {
        free(pcfn);
        return -EIO;
    }
    while (sqlite3_step(s) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(s, 0);
        const char *name = (const char *)sqlite3_column_text(s, 1);
        const char *mod = (const char *)sqlite3_column_text(s, 2);
        if (id < 0 || id > npcs)
            continue;
        long f = fn_id(&t->fns, name ? name : "?", mod ? mwv_base(mod) : "");
        if (f < 0) {
            rc = -ENOMEM;
            break;
        }
        pcfn[id] = (int32_t)f;
    }
    sqlite3_finalize(s);
    if (!rc && sqlite3_prepare_v2(db, "SELECT id, parent_id, pc_id FROM stacks", -1, &s, NULL) ==
                   SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(s, 0), pc = sqlite3_column_int64(s, 2);
            if (id < 1 || id > t->nnodes)
                continue;
            t->parent[id] = sqlite3_column_int64(s, 1);
            t->fn[id] = pc >= 1 && pc <= npcs ? pcfn[pc] : -1;
        }
        sqlite3_finalize(s);
    }
    free(pcfn);
    if (rc)
        return rc;
    char sql[400];
    snprintf(sql, sizeof sql,
             "SELECT stack_id, COUNT(*), COALESCE(SUM(truncated), 0) FROM samples WHERE %s"
             " GROUP BY stack_id",
             where);
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return -EIO;
    size_t cap = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        if (t->nsid == cap) {
            cap = cap ? cap * 2 : 4096;
            int64_t *a = realloc(t->sid, cap * sizeof *a);
            uint64_t *b = a ? realloc(t->cnt, cap * sizeof *b) : NULL;
            uint64_t *c = b ? realloc(t->trunc, cap * sizeof *c) : NULL;
            if (a)
                t->sid = a;
            if (b)
                t->cnt = b;
            if (c)
                t->trunc = c;
            if (!c) {
                rc = -ENOMEM;
                break;
            }
        }
        t->sid[t->nsid] = sqlite3_column_int64(s, 0);
        t->cnt[t->nsid] = (uint64_t)sqlite3_column_int64(s, 1);
        t->trunc[t->nsid] = (uint64_t)sqlite3_column_int64(s, 2);
        t->total += t->cnt[t->nsid];
        t->nsid++;
    }
    sqlite3_finalize(s);
    return rc;
}

/* The functions of a stack, innermost first; returns how many. */
static size_t trie_path(const trie *t, int64_t sid, int32_t *path)
{
    size_t n = 0;
    for (int64_t id = sid; id >= 1 && id <= t->nnodes && n < VIEW_MAX_DEPTH; id = t->parent[id])
        path[n++] = t->fn[id];
    return n;
}

/* ---- tables ---- */
typedef struct row {
    const char *key, *module;
    double v, w; /* samples (self), and inclusive or CPU seconds */
    uint64_t n;  /* processes */
} row;

static int row_cmp(const void *a, const void *b)
{
    const row *x = a, *y = b;
    return x->v < y->v ? 1 : x->v > y->v ? -1 : x->w < y->w ? 1 : x->w > y->w ? -1 : 0;
}

static void pct(FILE *f, double v, double total)
{
    fprintf(f, "  %5.1f%%", total > 0 ? 100 * v / total : 0.0);
}

/* --sort function: self and inclusive shares. */
static int view_functions(sqlite3 *db, FILE *f, cJSON *js, int top)
{
    trie t;
    int rc = trie_load(db, "source = 'timer'", &t);
    if (rc) {
        trie_free(&t);
        return rc;
    }
    double *self = calloc(t.fns.n + 1, sizeof *self), *incl = calloc(t.fns.n + 1, sizeof *incl);
    uint64_t *seen = calloc(t.fns.n + 1, sizeof *seen);
    int32_t path[VIEW_MAX_DEPTH];
    if (!self || !incl || !seen) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < t.nsid; i++) {
        size_t n = trie_path(&t, t.sid[i], path);
        if (n && path[0] >= 0)
            self[path[0]] += (double)t.cnt[i];
        for (size_t k = 0; k < n; k++) /* each function once per stack */
            if (path[k] >= 0 && seen[path[k]] != i + 1) {
                seen[path[k]] = i + 1;
                incl[path[k]] += (double)t.cnt[i];
            }
    }
    row *r = calloc(t.fns.n + 1, sizeof *r);
    if (!r) {
        rc = -ENOMEM;
        goto out;
    }
    size_t nr = 0;
    for (size_t k = 0; k < t.fns.n; k++)
        if (incl[k] > 0)
            r[nr++] = (row){t.fns.name[k], t.fns.module[k], incl[k], self[k], 0};
    qsort(r, nr, sizeof *r, row_cmp);
    cJSON *arr = cJSON_AddArrayToObject(js, "functions");
    cJSON_AddNumberToObject(js, "samples", (double)t.total);
    fprintf(f, "Functions (timer samples: %llu), most inclusive first: inclusive = in the "
               "function or in what it called, self = in the function itself\n"
               "  inclusive     self  function (module)\n",
            (unsigned long long)t.total);
    for (size_t k = 0; k < nr && (int)k < top; k++) {
        fprintf(f, "  ");
        pct(f, r[k].v, (double)t.total);
        fprintf(f, "  %6.1f%%  %s (%s)\n", t.total ? 100 * r[k].w / (double)t.total : 0.0,
                r[k].key, r[k].module[0] ? r[k].module : "?");
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "function", r[k].key);
        cJSON_AddStringToObject(o, "module", r[k].module);
        cJSON_AddNumberToObject(o, "inclusive", r[k].v);
        cJSON_AddNumberToObject(o, "self", r[k].w);
        cJSON_AddItemToArray(arr, o);
    }
    if (!nr)
        fprintf(f, "  none\n");
    free(r);
out:
    free(self);
    free(incl);
    free(seen);
    trie_free(&t);
    return rc;
}

/* Add n to the entry of function id k in a (k, count) list. */
typedef struct kc {
    int32_t k;
    double n;
} kc;
static int kc_add(kc **v, size_t *nv, size_t *cap, int32_t k, double n)
{
    for (size_t i = 0; i < *nv; i++)
        if ((*v)[i].k == k) {
            (*v)[i].n += n;
            return 0;
        }
    if (*nv == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        kc *a = realloc(*v, nc * sizeof *a);
        if (!a)
            return -ENOMEM;
        *v = a;
        *cap = nc;
    }
    (*v)[(*nv)++] = (kc){k, n};
    return 0;
}
static int kc_cmp(const void *a, const void *b)
{
    const kc *x = a, *y = b;
    return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

#define KC_ROOT (-2)  /* the outermost frame: no caller */
#define KC_TRUNC (-3) /* a truncated stack: the caller is unknown */

static void kc_print(FILE *f, cJSON *arr, const trie *t, kc *v, size_t nv, double of, int top)
{
    qsort(v, nv, sizeof *v, kc_cmp);
    for (size_t i = 0; i < nv && (int)i < top; i++) {
        const char *name = v[i].k == KC_ROOT    ? "[the program's or thread's entry]"
                           : v[i].k == KC_TRUNC ? "[truncated stack: caller unknown]"
                           : v[i].k >= 0        ? t->fns.name[v[i].k]
                                                : "?";
        const char *mod = v[i].k >= 0 ? t->fns.module[v[i].k] : "";
        pct(f, v[i].n, of);
        fprintf(f, "  %s%s%s%s\n", name, mod[0] ? " (" : "", mod, mod[0] ? ")" : "");
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "function", name);
        cJSON_AddStringToObject(o, "module", mod);
        cJSON_AddNumberToObject(o, "samples", v[i].n);
        cJSON_AddItemToArray(arr, o);
    }
    if (!nv)
        fprintf(f, "    none\n");
    else if ((size_t)top < nv)
        fprintf(f, "    ... %zu more\n", nv - (size_t)top);
}

/* --callers NAME: every function of that name (any module). */
static int view_callers(sqlite3 *db, FILE *f, cJSON *js, const char *name, int top)
{
    trie t;
    int rc = trie_load(db, "source = 'timer'", &t);
    if (rc) {
        trie_free(&t);
        return rc;
    }
    char *is = calloc(t.fns.n + 1, 1);
    kc *callers = NULL, *callees = NULL;
    size_t ncr = 0, ccr = 0, nce = 0, cce = 0;
    int found = 0;
    for (size_t k = 0; is && k < t.fns.n; k++)
        if (!strcmp(t.fns.name[k], name))
            is[k] = 1, found = 1;
    cJSON_AddStringToObject(js, "function", name);
    cJSON_AddNumberToObject(js, "samples", (double)t.total);
    if (!is) {
        rc = -ENOMEM;
        goto out;
    }
    if (!found) {
        fprintf(f, "No function named %s in the stacks.", name);
        int shown = 0;
        for (size_t k = 0; k < t.fns.n && shown < 8; k++)
            if (strstr(t.fns.name[k], name))
                fprintf(f, "%s %s", shown++ ? "," : " Similar names:", t.fns.name[k]);
        fprintf(f, "\n");
        goto out;
    }
    double incl = 0, excl = 0;
    int32_t path[VIEW_MAX_DEPTH];
    for (size_t i = 0; i < t.nsid; i++) {
        size_t n = trie_path(&t, t.sid[i], path);
        int in = 0;
        for (size_t k = 0; k < n; k++)
            in |= path[k] >= 0 && is[path[k]];
        if (!in)
            continue;
        double c = (double)t.cnt[i];
        incl += c;
        if (path[0] >= 0 && is[path[0]])
            excl += c;
        /* each caller and callee once per stack (recursion) */
        int32_t got_r[16], got_e[16];
        int nr = 0, ne = 0;
        for (size_t k = 0; k < n; k++) {
            if (path[k] < 0 || !is[path[k]])
                continue;
            int32_t up = k + 1 < n ? path[k + 1] : (t.trunc[i] ? KC_TRUNC : KC_ROOT);
            if (!(up >= 0 && is[up])) {
                int dup = 0;
                for (int j = 0; j < nr; j++)
                    dup |= got_r[j] == up;
                if (!dup && nr < 16) {
                    got_r[nr++] = up;
                    /* a truncated stack's share of unknown callers: its truncated samples */
                    double w = up == KC_TRUNC ? (double)t.trunc[i] : c;
                    if (kc_add(&callers, &ncr, &ccr, up, w))
                        rc = -ENOMEM;
                    if (up == KC_TRUNC && c > w && kc_add(&callers, &ncr, &ccr, KC_ROOT, c - w))
                        rc = -ENOMEM;
                }
            }
            if (k > 0 && !(path[k - 1] >= 0 && is[path[k - 1]])) {
                int dup = 0;
                for (int j = 0; j < ne; j++)
                    dup |= got_e[j] == path[k - 1];
                if (!dup && ne < 16) {
                    got_e[ne++] = path[k - 1];
                    if (kc_add(&callees, &nce, &cce, path[k - 1], c))
                        rc = -ENOMEM;
                }
            }
        }
    }
    fprintf(f, "Function %s: inclusive %.1f%% (%.0f of %llu timer samples: in it or in what it "
               "called), exclusive %.1f%% (%.0f: in the function itself)\n",
            name, t.total ? 100 * incl / (double)t.total : 0.0, incl,
            (unsigned long long)t.total, t.total ? 100 * excl / (double)t.total : 0.0, excl);
    cJSON_AddNumberToObject(js, "inclusive", incl);
    cJSON_AddNumberToObject(js, "exclusive", excl);
    fprintf(f, "  callers (share of its %.0f samples)\n", incl);
    kc_print(f, cJSON_AddArrayToObject(js, "callers"), &t, callers, ncr, incl, top);
    fprintf(f, "  callees (share of its %.0f samples)\n", incl);
    kc_print(f, cJSON_AddArrayToObject(js, "callees"), &t, callees, nce, incl, top);
out:
    free(is);
    free(callers);
    free(callees);
    trie_free(&t);
    return rc;
}

/* --sort comm: by command (the executable's name) across processes. */
static int view_comm(sqlite3 *db, FILE *f, cJSON *js, int top)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT p.exe, COALESCE(p.user_ns, 0) + COALESCE(p.system_ns, 0),"
                           " (SELECT COUNT(*) FROM samples x WHERE x.process_id = p.id AND"
                           " x.source = 'timer') FROM processes p",
                           -1, &s, NULL) != SQLITE_OK)
        return -EIO;
    row *r = NULL;
    size_t nr = 0, cap = 0;
    double tot_s = 0, tot_c = 0;
    int rc = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        const char *b = mwv_base((const char *)sqlite3_column_text(s, 0));
        double cpu = (double)sqlite3_column_int64(s, 1) / 1e9;
        double n = (double)sqlite3_column_int64(s, 2);
        tot_s += n;
        tot_c += cpu;
        size_t k = 0;
        while (k < nr && strcmp(r[k].key, b))
            k++;
        if (k == nr) {
            if (nr == cap) {
                cap = cap ? cap * 2 : 64;
                row *a = realloc(r, cap * sizeof *a);
                if (!a) {
                    rc = -ENOMEM;
                    break;
                }
                r = a;
            }
            char *key = strdup(b);
            if (!key) {
                rc = -ENOMEM;
                break;
            }
            r[nr++] = (row){key, NULL, 0, 0, 0};
        }
        r[k].v += n;
        r[k].w += cpu;
        r[k].n++;
    }
    sqlite3_finalize(s);
    qsort(r, nr, sizeof *r, row_cmp);
    cJSON *arr = cJSON_AddArrayToObject(js, "commands");
    cJSON_AddNumberToObject(js, "samples", tot_s);
    cJSON_AddNumberToObject(js, "cpu_s", tot_c);
    fprintf(f, "Commands (timer samples: %.0f; CPU time from the kernel: %.2f s)\n"
               "  samples      CPU  processes  command\n",
            tot_s, tot_c);
    for (size_t k = 0; k < nr && (int)k < top; k++) {
        pct(f, r[k].v, tot_s);
        fprintf(f, "  %6.1f%%  %9llu  %s\n", tot_c > 0 ? 100 * r[k].w / tot_c : 0.0,
                (unsigned long long)r[k].n, r[k].key);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "command", r[k].key);
        cJSON_AddNumberToObject(o, "samples", r[k].v);
        cJSON_AddNumberToObject(o, "cpu_s", r[k].w);
        cJSON_AddNumberToObject(o, "processes", (double)r[k].n);
        cJSON_AddItemToArray(arr, o);
    }
    if (nr > (size_t)top)
        fprintf(f, "  ... %zu more commands\n", nr - (size_t)top);
    for (size_t k = 0; k < nr; k++)
        free((char *)r[k].key);
    free(r);
    return rc;
}

/* A --sort key: a function of its own, or a query (rows of key, detail and
 * samples) with its title and the samples it counts. */
typedef struct view_sort {
    const char *name;
    int (*fn)(sqlite3 *db, FILE *f, cJSON *js, int top); /* NULL: the query below */
    const char *title, *where, *sql;
    const char *noun;   /* "timer" or "addressed" samples */
    const char *detail; /* before a row's detail ("allocated in ") */
    int base;           /* the key is a path: print its base name */
} view_sort;

static int view_query(sqlite3 *db, FILE *f, cJSON *js, const view_sort *v, int top);

/* The sort keys: one row each (docs/architecture.md). */
static const view_sort view_sorts[] = {
    {"comm", view_comm, NULL, NULL, NULL, NULL, NULL, 0},
    {"dso", NULL, "Modules", "source = 'timer'",
     "SELECT COALESCE(m.path, '[unknown]') AS k, '' AS k2, SUM(x.n) AS n FROM"
     " (SELECT pc_id, COUNT(*) AS n FROM samples WHERE source = 'timer' GROUP BY pc_id) x"
     " JOIN pcs p ON p.id = x.pc_id LEFT JOIN modules m ON m.id = p.module_id"
     " GROUP BY m.path ORDER BY n DESC LIMIT ?",
     "timer", "", 1},
    {"function", view_functions, NULL, NULL, NULL, NULL, NULL, 0},
    {"line", NULL, "Source lines", "source = 'timer'",
     "SELECT COALESCE(p.file || ':' || p.line, '(no line info)') AS k,"
     " COALESCE(p.function, p.symbol, '?') AS k2, SUM(x.n) AS n FROM"
     " (SELECT pc_id, COUNT(*) AS n FROM samples WHERE source = 'timer' GROUP BY pc_id) x"
     " JOIN pcs p ON p.id = x.pc_id GROUP BY p.file, p.line, k2 ORDER BY n DESC LIMIT ?",
     "timer", "", 0},
    {"object", NULL, "Data objects", "object_id IS NOT NULL",
     /* one row per allocation site (never across two sites: three
      * malloc(256 MiB) of one function are three arrays) */
     "SELECT o.kind || ' ' || COALESCE(o.name, '?') AS k,"
     " COALESCE(ps.function || COALESCE(' (' || ps.file || ':' || ps.line || ')', ''), '') AS k2,"
     " SUM(x.n) AS n FROM"
     " (SELECT object_id, COUNT(*) AS n FROM samples WHERE object_id IS NOT NULL"
     " GROUP BY object_id) x JOIN objects o ON o.id = x.object_id"
     " LEFT JOIN pcs ps ON ps.id = o.site_pc_id"
     " GROUP BY o.kind, o.name, ps.function, ps.file, ps.line ORDER BY n DESC LIMIT ?",
     "addressed", "allocated in ", 0},
};
#define VIEW_NSORTS (sizeof view_sorts / sizeof view_sorts[0])

static const view_sort *view_sort_find(const char *key)
{
    for (size_t i = 0; key && i < VIEW_NSORTS; i++)
        if (!strcmp(key, view_sorts[i].name))
            return &view_sorts[i];
    return NULL;
}

int mw_report_sort_known(const char *key)
{
    return view_sort_find(key) != NULL;
}

const char *mw_report_sort_names(char *buf, size_t n)
{
    size_t k = 0;
    if (n)
        buf[0] = 0;
    for (size_t i = 0; i < VIEW_NSORTS && k < n; i++) {
        int w = snprintf(buf + k, n - k, "%s%s", k ? ", " : "", view_sorts[i].name);
        k += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

/* A query's key: one query each, grouped per code address or object first. */
static int view_query(sqlite3 *db, FILE *f, cJSON *js, const view_sort *v, int top)
{
    const char *sql = v->sql, *title = v->title, *where = v->where;
    char q[200];
    snprintf(q, sizeof q, "SELECT COUNT(*) FROM samples WHERE %s", where);
    double total = (double)mwv_scalar(db, q);
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return -EIO;
    sqlite3_bind_int(s, 1, top);
    cJSON *arr = cJSON_AddArrayToObject(js, "rows");
    cJSON_AddNumberToObject(js, "samples", total);
    fprintf(f, "%s (%s samples: %.0f)\n", title, v->noun, total);
    int any = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(s, 0);
        const char *k2 = (const char *)sqlite3_column_text(s, 1);
        double n = (double)sqlite3_column_int64(s, 2);
        pct(f, n, total);
        fprintf(f, "  %s%s%s%s\n", v->base ? mwv_base(k) : k, k2 && *k2 ? "  " : "",
                k2 && *k2 ? v->detail : "", k2 ? k2 : "");
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "key", k ? k : "");
        cJSON_AddStringToObject(o, "detail", k2 ? k2 : "");
        cJSON_AddNumberToObject(o, "samples", n);
        cJSON_AddItemToArray(arr, o);
        any = 1;
    }
    sqlite3_finalize(s);
    if (!any)
        fprintf(f, "  none\n");
    return 0;
}

int mw_report_view_print(const char *db_path, FILE *out, const mw_report_view *v)
{
    sqlite3 *db = NULL;
    int orc = mwv_open(db_path, v->filter, &db); /* narrowed to the filter's processes */
    if (orc)
        return orc;
    int top = v->top > 0 ? v->top : 10, rc = 0;
    cJSON *root = cJSON_CreateObject();
    FILE *f = v->json ? fopen("/dev/null", "w") : out;
    if (!f) {
        sqlite3_close(db);
        cJSON_Delete(root);
        return -errno;
    }
    if (v->sort) {
        cJSON *js = cJSON_AddObjectToObject(root, "sort");
        cJSON_AddStringToObject(js, "by", v->sort);
        const view_sort *vs = view_sort_find(v->sort);
        rc = !vs ? -EINVAL : vs->fn ? vs->fn(db, f, js, top) : view_query(db, f, js, vs, top);
    }
    if (!rc && v->callers) {
        if (v->sort)
            fprintf(f, "\n");
        rc = view_callers(db, f, cJSON_AddObjectToObject(root, "callers"), v->callers, top);
    }
    if (v->json) {
        fclose(f);
        mw_text_json_utf8(root); /* names that are not UTF-8: docs/export.md */
        char *s = cJSON_Print(root);
        if (s) {
            fputs(s, out);
            fputc('\n', out);
            free(s);
        }
    }
    cJSON_Delete(root);
    sqlite3_close(db);
    return rc;
}
