/*
 * report/summary_names.c: the summary's part about names (report/region.h):
 * the functions of interpreted and JIT-compiled code that perf maps name
 * (report/perfmap.c), counted at the innermost such frame of each sample's
 * call chain (an interpreter's C code is the leaf; the Python or JavaScript
 * function that runs it is a caller), and the notes about names (perf maps
 * expected but missing), and per module with code no symbol names what
 * would name it (module_names).
 * May call: SQLite, cJSON, libc, dpkg-query (popen: which package holds a
 * module). Threading: reentrant.
 */
#include "region.h"

#include <memwatch/memwatch.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct jf {
    char *name;
    double samples, leaf;
} jf;

static int jf_cmp(const void *a, const void *b)
{
    const jf *x = a, *y = b;
    return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 : strcmp(x->name, y->name);
}

static cJSON *jit_functions(sqlite3 *db, int top)
{
    cJSON *arr = cJSON_CreateArray();
    sqlite3_stmt *q = NULL, *up = NULL, *pc = NULL;
    jf *v = NULL;
    size_t n = 0, cap = 0;
    /* which samples name code: precise ones when present, else timer ones (as the summary) */
    if (sqlite3_prepare_v2(db,
                           "SELECT stack_id, COUNT(*) FROM samples WHERE stack_id IS NOT NULL AND"
                           " source = (CASE WHEN EXISTS(SELECT 1 FROM samples WHERE"
                           " source='precise') THEN 'precise' ELSE 'timer' END)"
                           " GROUP BY stack_id",
                           -1, &q, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT parent_id, pc_id FROM stacks WHERE id = ?", -1, &up,
                           NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT function FROM pcs WHERE id = ? AND quality = 'perf-map'",
                           -1, &pc, NULL) != SQLITE_OK)
        goto out;
    while (sqlite3_step(q) == SQLITE_ROW) {
        int64_t sid = sqlite3_column_int64(q, 0);
        double cnt = (double)sqlite3_column_int64(q, 1);
        for (int depth = 0; sid > 0 && depth < 512; depth++) {
            sqlite3_reset(up);
            sqlite3_bind_int64(up, 1, sid);
            if (sqlite3_step(up) != SQLITE_ROW)
                break;
            int64_t parent = sqlite3_column_int64(up, 0), pcid = sqlite3_column_int64(up, 1);
            sqlite3_reset(pc);
            sqlite3_bind_int64(pc, 1, pcid);
            if (sqlite3_step(pc) == SQLITE_ROW && sqlite3_column_text(pc, 0)) {
                const char *name = (const char *)sqlite3_column_text(pc, 0);
                size_t k = 0;
                while (k < n && strcmp(v[k].name, name))
                    k++;
                if (k == n) {
                    if (n == cap) {
                        size_t nc = cap ? cap * 2 : 64;
                        jf *nv = realloc(v, nc * sizeof *nv);
                        if (!nv)
                            goto out;
                        v = nv;
                        cap = nc;
                    }
                    v[n].name = strdup(name);
                    if (!v[n].name)
                        goto out;
                    v[n].samples = v[n].leaf = 0;
                    n++;
                }
                v[k].samples += cnt;
                if (depth == 0)
                    v[k].leaf += cnt;
                break;
            }
            sid = parent;
        }
    }
    if (n > 1)
        qsort(v, n, sizeof *v, jf_cmp);
    for (size_t k = 0; k < n && (int)k < top; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "function", v[k].name);
        cJSON_AddNumberToObject(o, "samples", v[k].samples);
        cJSON_AddNumberToObject(o, "leaf_samples", v[k].leaf);
        cJSON_AddItemToArray(arr, o);
    }
out:
    for (size_t k = 0; k < n; k++)
        free(v[k].name);
    free(v);
    sqlite3_finalize(q);
    sqlite3_finalize(up);
    sqlite3_finalize(pc);
    return arr;
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
    if (sqlite3_prepare_v2(db, "SELECT EXISTS(SELECT 1 FROM pcs WHERE quality='perf-map')", -1,
                           &s, NULL) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
        have_jit = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
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
    const cJSON *jit = cJSON_GetObjectItem(root, "jit_functions"), *x;
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
    if (cJSON_GetArraySize(jit) > 0) {
        fprintf(f, "\nInterpreted and JIT-compiled code (perf maps; innermost such frame per"
                   " sample)\n");
        cJSON_ArrayForEach(x, jit)
        {
            const cJSON *nm = cJSON_GetObjectItem(x, "function"),
                        *sa = cJSON_GetObjectItem(x, "samples"),
                        *lf = cJSON_GetObjectItem(x, "leaf_samples");
            fprintf(f, "  %8.0f samples (%.0f in its own code)  %s\n",
                    cJSON_IsNumber(sa) ? sa->valuedouble : 0,
                    cJSON_IsNumber(lf) ? lf->valuedouble : 0,
                    cJSON_IsString(nm) ? nm->valuestring : "?");
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
