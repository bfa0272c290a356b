/*
 * report/summary_names.c: the summary's part about names (report/region.h):
 * the functions of interpreted and JIT-compiled code that perf maps name
 * (report/perfmap.c), counted at the innermost such frame of each sample's
 * call chain (an interpreter's C code is the leaf; the Python or JavaScript
 * function that runs it is a caller), and the notes about names (perf maps
 * expected but missing).
 * May call: SQLite, cJSON, libc. Threading: reentrant.
 */
#include "region.h"

#include <memwatch/memwatch.h>

#include <stdlib.h>
#include <string.h>

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

void mw_names_collect(sqlite3 *db, cJSON *root, int top)
{
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
