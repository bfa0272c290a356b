/*
 * report/summary_names.c: the summary's part about names (report/region.h):
 * the functions of interpreted and JIT-compiled code that perf maps name
 * (report/perfmap.c), counted at the innermost such frame of each sample's
 * call chain (an interpreter's C code is the leaf; the Python or JavaScript
 * function that runs it is a caller) for any selection of samples (the
 * code sections of the summary and the HTML report begin with them), the
 * notes about names (perf maps expected but missing, stacks cut where no
 * code lies), and per module with code no symbol names what would name it
 * (module_names).
 * May call: SQLite, cJSON, libc, dpkg-query (popen: which package holds a
 * module). Threading: reentrant.
 */
#include "region.h"

#include <memwatch/memwatch.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One interpreted or JIT-compiled function: its samples (at it or in what it
 * ran), those in its own code, and the leaf functions under it. */
typedef struct jleaf {
    char *name, *module;
    double n;
} jleaf;

typedef struct jf {
    char *name;
    double samples, leaf;
    jleaf *lv;
    size_t nl, capl;
} jf;

static int jf_cmp(const void *a, const void *b)
{
    const jf *x = a, *y = b;
    return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 : strcmp(x->name, y->name);
}

static int jleaf_cmp(const void *a, const void *b)
{
    const jleaf *x = a, *y = b;
    return x->n < y->n ? 1 : x->n > y->n ? -1 : strcmp(x->name, y->name);
}

int mw_names_have_perfmap(sqlite3 *db)
{
    sqlite3_stmt *s;
    int have = 0;
    if (sqlite3_prepare_v2(db, "SELECT EXISTS(SELECT 1 FROM pcs WHERE quality='perf-map')", -1, &s,
                           NULL) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
        have = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    return have;
}

/* Every sample the condition `where` selects (on samples AS s) that has a
 * perf-map frame on its stack, counted at the innermost one: the stacks trie
 * is walked once from the roots down, each node taking its own pc where a
 * perf map names it, else its parent's. Rows: that frame's function, the
 * sample's leaf function and module, samples, samples in the frame itself. */
static const char q_interp[] =
    "WITH RECURSIVE j(id, jpc) AS ("
    " SELECT st.id, CASE WHEN st.pc_id IN (SELECT id FROM pcs WHERE quality = 'perf-map')"
    " THEN st.pc_id ELSE 0 END FROM stacks st WHERE st.parent_id = 0 OR st.parent_id IS NULL"
    " UNION ALL"
    " SELECT st.id, CASE WHEN st.pc_id IN (SELECT id FROM pcs WHERE quality = 'perf-map')"
    " THEN st.pc_id ELSE j.jpc END FROM stacks st JOIN j ON st.parent_id = j.id)"
    " SELECT jf.function, lf.function, lm.path, COUNT(*), SUM(s.pc_id = j.jpc)"
    " FROM samples s JOIN j ON j.id = s.stack_id JOIN pcs jf ON jf.id = j.jpc"
    " JOIN pcs lf ON lf.id = s.pc_id LEFT JOIN modules lm ON lm.id = lf.module_id"
    " WHERE j.jpc != 0 AND (%s) GROUP BY jf.function, lf.function, lm.path";

static jf *jf_get(jf **v, size_t *n, size_t *cap, const char *name)
{
    for (size_t k = 0; k < *n; k++)
        if (!strcmp((*v)[k].name, name))
            return &(*v)[k];
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        jf *nv = realloc(*v, nc * sizeof *nv);
        if (!nv)
            return NULL;
        *v = nv;
        *cap = nc;
    }
    jf *e = &(*v)[*n];
    memset(e, 0, sizeof *e);
    if (!(e->name = strdup(name)))
        return NULL;
    (*n)++;
    return e;
}

cJSON *mw_names_interp(sqlite3 *db, const char *where, int top, int leaves, double *with_frame)
{
    *with_frame = 0;
    cJSON *arr = cJSON_CreateArray();
    char sql[sizeof q_interp + 400];
    snprintf(sql, sizeof sql, q_interp, where);
    sqlite3_stmt *q = NULL;
    jf *v = NULL;
    size_t n = 0, cap = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
        mw_log(MW_LOG_WARN, "summary query failed: %s", sqlite3_errmsg(db));
        goto out;
    }
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(q, 0);
        const char *lname = (const char *)sqlite3_column_text(q, 1);
        const char *lmod = (const char *)sqlite3_column_text(q, 2);
        double cnt = (double)sqlite3_column_int64(q, 3), own = (double)sqlite3_column_int64(q, 4);
        jf *e = jf_get(&v, &n, &cap, name ? name : "?");
        if (!e)
            goto out;
        e->samples += cnt;
        e->leaf += own;
        *with_frame += cnt;
        if (e->nl == e->capl) {
            size_t nc = e->capl ? e->capl * 2 : 8;
            jleaf *nl = realloc(e->lv, nc * sizeof *nl);
            if (!nl)
                goto out;
            e->lv = nl;
            e->capl = nc;
        }
        jleaf *l = &e->lv[e->nl];
        l->name = strdup(lname ? lname : "?");
        l->module = lmod ? strdup(lmod) : NULL;
        l->n = cnt;
        if (!l->name)
            goto out;
        e->nl++;
    }
    if (n > 1)
        qsort(v, n, sizeof *v, jf_cmp);
    for (size_t k = 0; k < n && (int)k < top; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "function", v[k].name);
        cJSON_AddNumberToObject(o, "samples", v[k].samples);
        cJSON_AddNumberToObject(o, "leaf_samples", v[k].leaf);
        if (leaves) {
            /* the code it ran: the samples' leaf functions, most first */
            if (v[k].nl > 1)
                qsort(v[k].lv, v[k].nl, sizeof *v[k].lv, jleaf_cmp);
            cJSON *la = cJSON_AddArrayToObject(o, "leaves");
            for (size_t i = 0; i < v[k].nl && (int)i < leaves; i++) {
                cJSON *lo = cJSON_CreateObject();
                cJSON_AddStringToObject(lo, "function", v[k].lv[i].name);
                if (v[k].lv[i].module)
                    cJSON_AddStringToObject(lo, "module", v[k].lv[i].module);
                cJSON_AddNumberToObject(lo, "samples", v[k].lv[i].n);
                cJSON_AddItemToArray(la, lo);
            }
        }
        cJSON_AddItemToArray(arr, o);
    }
out:
    for (size_t k = 0; k < n; k++) {
        free(v[k].name);
        for (size_t i = 0; i < v[k].nl; i++) {
            free(v[k].lv[i].name);
            free(v[k].lv[i].module);
        }
        free(v[k].lv);
    }
    free(v);
    sqlite3_finalize(q);
    return arr;
}

/* "jit_functions": over the samples that name code (precise ones when
 * present, else timer ones, as the summary's overall code) */
static cJSON *jit_functions(sqlite3 *db, int top)
{
    double with;
    return mw_names_interp(db,
                           "s.source = (CASE WHEN EXISTS(SELECT 1 FROM samples WHERE"
                           " source='precise') THEN 'precise' ELSE 'timer' END)",
                           top, 0, &with);
}

/* glibc's libraries, whose debug files Debian ships in libc6-dbg */
static int is_glibc(const char *base)
{
    static const char *const v[] = {"libc.so", "libm.so", "libpthread.so", "libdl.so",
                                    "librt.so", "libresolv.so", "ld-linux", "libmvec.so",
                                    "libanl.so", "libutil.so"};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!strncmp(base, v[i], strlen(v[i])))
            return 1;
    return 0;
}

/* The Debian package that holds path (dpkg-query -S), into pkg; 0 if none
 * is known (no dpkg, a path dpkg does not list, or one it cannot be asked
 * about). /lib and /usr/lib are tried both (merged /usr). */
static int deb_package(const char *path, char *pkg, size_t cap)
{
    if (access("/usr/bin/dpkg-query", X_OK) != 0 || strchr(path, '\'') || strlen(path) > 900)
        return 0;
    char alt[1000];
    if (!strncmp(path, "/usr/", 5))
        snprintf(alt, sizeof alt, "%s", path + 4);
    else
        snprintf(alt, sizeof alt, "/usr%s", path);
    const char *tries[2] = {path, alt};
    for (int t = 0; t < 2; t++) {
        char cmd[1100], line[512];
        snprintf(cmd, sizeof cmd, "dpkg-query -S -- '%s' 2>/dev/null", tries[t]);
        FILE *pf = popen(cmd, "r");
        if (!pf)
            return 0;
        int got = fgets(line, sizeof line, pf) != NULL;
        pclose(pf);
        char *colon = got ? strchr(line, ':') : NULL;
        if (colon && colon > line && !strchr(line, ',')) {
            size_t n = (size_t)(colon - line);
            if (n && n < cap) {
                memcpy(pkg, line, n);
                pkg[n] = 0;
                return 1;
            }
        }
    }
    return 0;
}

/* "module_names": per module with sampled code that no symbol names
 * (module@0x... functions), what would name it: libc6-dbg for glibc, the
 * package's -dbgsym where dpkg knows the file, and always the debug file by
 * build-id (a .build-id tree or debuginfod). Samples: the precise ones where
 * the run has them, else the timer ones (as the summary's top code). Most
 * sampled first, at most top. */
static void module_names(sqlite3 *db, cJSON *root, int top)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT m.path, m.build_id, m.debug_file, COUNT(DISTINCT p.function),"
                           " SUM(x.n) AS n FROM (SELECT pc_id, COUNT(*) AS n FROM samples"
                           " WHERE pc_id IS NOT NULL AND source = (CASE WHEN EXISTS(SELECT 1"
                           " FROM samples WHERE source='precise') THEN 'precise' ELSE 'timer'"
                           " END) GROUP BY pc_id) x JOIN pcs p ON p.id = x.pc_id"
                           " JOIN modules m ON m.id = p.module_id WHERE p.quality = 'none'"
                           " GROUP BY m.id ORDER BY n DESC LIMIT ?",
                           -1, &s, NULL) != SQLITE_OK) {
        mw_log(MW_LOG_WARN, "summary query failed: %s", sqlite3_errmsg(db));
        return;
    }
    sqlite3_bind_int(s, 1, top > 0 ? top : 10);
    cJSON *arr = NULL;
    while (sqlite3_step(s) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(s, 0);
        const char *bid = (const char *)sqlite3_column_text(s, 1);
        const char *dbg = (const char *)sqlite3_column_text(s, 2);
        if (!path)
            continue;
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        char want[1400], pkg[300], byid[400];
        if (bid && strlen(bid) > 2)
            snprintf(byid, sizeof byid,
                     "a debug file with build-id %s (/usr/lib/debug/.build-id/%.2s/%s.debug, or"
                     " from a debuginfod server: DEBUGINFOD_URLS)",
                     bid, bid, bid + 2);
        else
            snprintf(byid, sizeof byid, "its symbols (the file has no build-id: an unstripped"
                                        " copy at the same path)");
        if (is_glibc(base))
            snprintf(want, sizeof want, "install libc6-dbg, or %s", byid);
        else if (deb_package(path, pkg, sizeof pkg))
            snprintf(want, sizeof want, "install %s-dbgsym (Debian's debian-debug archive), or %s",
                     pkg, byid);
        else
            snprintf(want, sizeof want, "%s", byid);
        if (!arr)
            arr = cJSON_AddArrayToObject(root, "module_names");
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "module", path);
        if (bid)
            cJSON_AddStringToObject(o, "build_id", bid);
        if (dbg)
            cJSON_AddStringToObject(o, "debug_file", dbg);
        cJSON_AddNumberToObject(o, "unnamed_functions", (double)sqlite3_column_int64(s, 3));
        cJSON_AddNumberToObject(o, "samples", (double)sqlite3_column_int64(s, 4));
        cJSON_AddStringToObject(o, "would_name_it", want);
        cJSON_AddItemToArray(arr, o);
    }
    sqlite3_finalize(s);
}

void mw_names_collect(sqlite3 *db, cJSON *root, int top)
{
    module_names(db, root, top);
    sqlite3_stmt *s;
    int have_notes = 0, have_jit = 0;
    if (sqlite3_prepare_v2(db, "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE name='name_notes')",
                           -1, &s, NULL) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
        have_notes = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    have_jit = mw_names_have_perfmap(db);
    if (have_jit)
        cJSON_AddItemToObject(root, "jit_functions", jit_functions(db, top));
    if (!have_notes)
        return;
    cJSON *notes = cJSON_AddArrayToObject(root, "name_notes");
    if (sqlite3_prepare_v2(db,
                           "SELECT p.pid, n.note FROM name_notes n LEFT JOIN processes p"
                           " ON p.id = n.process_id ORDER BY n.rowid LIMIT 100",
                           -1, &s, NULL) != SQLITE_OK)
        return;
    while (sqlite3_step(s) == SQLITE_ROW) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "pid", (double)sqlite3_column_int64(s, 0));
        cJSON_AddStringToObject(o, "note", (const char *)sqlite3_column_text(s, 1));
        cJSON_AddItemToArray(notes, o);
    }
    sqlite3_finalize(s);
}

void mw_names_text(FILE *f, const cJSON *root)
{
    const cJSON *x;
    const cJSON *notes = cJSON_GetObjectItem(root, "name_notes");
    const cJSON *mods = cJSON_GetObjectItem(root, "module_names");
    if (cJSON_GetArraySize(mods) > 0) {
        fprintf(f, "\nCode without symbols (named module@0xSTART, the function's start)\n");
        cJSON_ArrayForEach(x, mods)
        {
            const cJSON *m = cJSON_GetObjectItem(x, "module"),
                        *n = cJSON_GetObjectItem(x, "unnamed_functions"),
                        *sa = cJSON_GetObjectItem(x, "samples"),
                        *w = cJSON_GetObjectItem(x, "would_name_it");
            const char *path = cJSON_IsString(m) ? m->valuestring : "?";
            const char *b = strrchr(path, '/');
            fprintf(f, "  %s: %.0f function(s), %.0f samples; would name it: %s\n",
                    b ? b + 1 : path, cJSON_IsNumber(n) ? n->valuedouble : 0,
                    cJSON_IsNumber(sa) ? sa->valuedouble : 0,
                    cJSON_IsString(w) ? w->valuestring : "?");
        }
    }
    if (cJSON_GetArraySize(notes) > 0) {
        fprintf(f, "\nNames\n");
        cJSON_ArrayForEach(x, notes)
        {
            const cJSON *p = cJSON_GetObjectItem(x, "pid"), *n = cJSON_GetObjectItem(x, "note");
            fprintf(f, "  pid %.0f: %s\n", cJSON_IsNumber(p) ? p->valuedouble : 0,
                    cJSON_IsString(n) ? n->valuestring : "");
        }
    }
}
