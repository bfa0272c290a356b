/*
 * report/html_region.c: regions in the HTML report (docs/html.md,
 * docs/regions.md): the bands that draw each thread's regions under its
 * process's lane of the timeline, and the per-region section (time, bound
 * share, top lines, top objects, GPU kernels, notes) with the figures of the
 * text and JSON summary (mw_rgn_collect).
 *
 * The bands are aggregated like the rest of the timeline: per thread and
 * nesting level, each column shows the region that held most of the
 * column's time, so the page's size does not grow with the number of spans.
 *
 * May call: SQLite, cJSON, libc, report/view.c, report/summary_region.c.
 * Threading: reentrant.
 */
#include "region.h"
#include "view_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RB_SLOTS 4 /* candidate regions kept per column */

typedef struct rb_col {
    int64_t id[RB_SLOTS];
    double t[RB_SLOTS];
} rb_col;

typedef struct rb_row {
    int64_t tid;
    int level;
    rb_col *col;
} rb_row;

struct mwh_rbands {
    int bins, nrows, threads_all, threads_shown, deeper;
    double T;
    rb_row *row;
    /* region id -> name, for the rows' labels */
    int64_t *nid;
    char **name;
    int nname;
};

static const char *const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#9c755f",
                                      "#76b7b2", "#edc948", "#ff9da7", "#bab0ac", "#e15759"};

const char *mwh_region_color(int64_t region_id)
{
    size_t n = sizeof palette / sizeof palette[0];
    return palette[(size_t)(region_id > 0 ? region_id - 1 : 0) % n];
}

static void rb_add(rb_col *c, int64_t id, double ov)
{
    int free_slot = -1, low = 0;
    for (int i = 0; i < RB_SLOTS; i++) {
        if (c->id[i] == id) {
            c->t[i] += ov;
            return;
        }
        if (!c->id[i] && free_slot < 0)
            free_slot = i;
        if (c->t[i] < c->t[low])
            low = i;
    }
    if (free_slot >= 0) {
        c->id[free_slot] = id;
        c->t[free_slot] = ov;
    } else if (ov > c->t[low]) { /* a fifth region: the least of the column gives way */
        c->id[low] = id;
        c->t[low] = ov;
    }
}

/* the column's region (0 none) and the share of the column it covers */
static int64_t rb_best(const rb_col *c, double w, double *cover)
{
    int64_t best = 0;
    double bt = 0, sum = 0;
    for (int i = 0; i < RB_SLOTS; i++) {
        sum += c->t[i];
        if (c->id[i] && c->t[i] > bt) {
            bt = c->t[i];
            best = c->id[i];
        }
    }
    *cover = w > 0 ? fmin(1, sum / w) : 0;
    return best;
}

mwh_rbands *mwh_rbands_load(sqlite3 *db, int64_t proc_id, double T, int bins, int max_threads,
                            int levels)
{
    mwh_rbands *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->bins = bins;
    b->T = T;
    if (!mwv_scalar(db, "SELECT COUNT(*) FROM sqlite_master WHERE name='region_spans'"))
        return b;
    sqlite3_stmt *s;
    /* the threads with the most region time, shown in tid order */
    int64_t *tids = calloc((size_t)max_threads, sizeof *tids);
    if (!tids)
        return b;
    int nt = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT tid FROM (SELECT tid, SUM(t_end - t_start) AS t FROM"
                           " region_spans WHERE process_id = ?1 GROUP BY tid ORDER BY t DESC"
                           " LIMIT ?2) ORDER BY tid",
                           -1, &s, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(s, 1, proc_id);
        sqlite3_bind_int(s, 2, max_threads);
        while (nt < max_threads && sqlite3_step(s) == SQLITE_ROW)
            tids[nt++] = sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
    }
    char sql[300];
    snprintf(sql, sizeof sql,
             "SELECT COUNT(DISTINCT tid), COALESCE(SUM(depth >= %d), 0) FROM region_spans"
             " WHERE process_id = %lld",
             levels, (long long)proc_id);
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW) {
            b->threads_all = sqlite3_column_int(s, 0);
            b->deeper = sqlite3_column_int(s, 1);
        }
        sqlite3_finalize(s);
    }
    b->threads_shown = nt;
    /* levels per thread: as deep as its spans go, at most `levels` */
    int *lv = calloc((size_t)(nt ? nt : 1), sizeof *lv);
    if (!lv) {
        free(tids);
        return b;
    }
    if (sqlite3_prepare_v2(db, "SELECT tid, MAX(depth) FROM region_spans WHERE process_id = ?1"
                               " GROUP BY tid",
                           -1, &s, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(s, 1, proc_id);
        while (sqlite3_step(s) == SQLITE_ROW)
            for (int i = 0; i < nt; i++)
                if (tids[i] == sqlite3_column_int64(s, 0)) {
                    int d = sqlite3_column_int(s, 1) + 1;
                    lv[i] = d < levels ? d : levels;
                }
        sqlite3_finalize(s);
    }
    for (int i = 0; i < nt; i++)
        b->nrows += lv[i];
    b->row = calloc((size_t)(b->nrows ? b->nrows : 1), sizeof *b->row);
    int r = 0;
    for (int i = 0; b->row && i < nt; i++)
        for (int l = 0; l < lv[i]; l++, r++) {
            b->row[r].tid = tids[i];
            b->row[r].level = l;
            b->row[r].col = calloc((size_t)bins, sizeof(rb_col));
        }
    if (!b->row)
        b->nrows = 0;
    if (b->nrows &&
        sqlite3_prepare_v2(db,
                           "SELECT sp.tid, sp.depth, sp.region_id, sp.t_start + c.off,"
                           " sp.t_end + c.off FROM region_spans sp JOIN pclock c ON"
                           " c.process_id = sp.process_id WHERE sp.process_id = ?1 AND"
                           " sp.depth < ?2",
                           -1, &s, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(s, 1, proc_id);
        sqlite3_bind_int(s, 2, levels);
        double w = T / bins;
        while (sqlite3_step(s) == SQLITE_ROW) {
            int64_t tid = sqlite3_column_int64(s, 0);
            int d = sqlite3_column_int(s, 1);
            rb_row *row = NULL;
            for (int k = 0; k < b->nrows && !row; k++)
                if (b->row[k].tid == tid && b->row[k].level == d)
                    row = &b->row[k];
            if (!row || !row->col)
                continue;
            int64_t id = sqlite3_column_int64(s, 2);
            double a = (double)sqlite3_column_int64(s, 3), e = (double)sqlite3_column_int64(s, 4);
            int k0 = a > 0 ? (int)(a / w) : 0;
            for (int k = k0; k < bins && k * w < e; k++) {
                double lo = fmax(a, k * w), hi = fmin(e, (k + 1) * w);
                if (hi > lo)
                    rb_add(&row->col[k], id, hi - lo);
            }
        }
        sqlite3_finalize(s);
    }
    /* the names of the regions drawn */
    if (sqlite3_prepare_v2(db, "SELECT id, name FROM regions WHERE id IN (SELECT DISTINCT"
                               " region_id FROM region_spans WHERE process_id = ?1)",
                           -1, &s, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(s, 1, proc_id);
        int cap = 0;
        while (sqlite3_step(s) == SQLITE_ROW) {
            if (b->nname == cap) {
                cap = cap ? 2 * cap : 16;
                int64_t *ni = realloc(b->nid, (size_t)cap * sizeof *ni);
                if (ni)
                    b->nid = ni;
                char **nn = realloc(b->name, (size_t)cap * sizeof *nn);
                if (nn)
                    b->name = nn;
                if (!ni || !nn)
                    break;
            }
            const char *nm = (const char *)sqlite3_column_text(s, 1);
            b->nid[b->nname] = sqlite3_column_int64(s, 0);
            b->name[b->nname] = strdup(nm ? nm : "?");
            b->nname++;
        }
        sqlite3_finalize(s);
    }
    free(lv);
    free(tids);
    return b;
}

int mwh_rbands_rows(const mwh_rbands *b) { return b ? b->nrows : 0; }

static const char *rb_name(const mwh_rbands *b, int64_t id)
{
    for (int i = 0; i < b->nname; i++)
        if (b->nid[i] == id)
            return b->name[i] ? b->name[i] : "?";
    return "?";
}

void mwh_rbands_draw(FILE *f, const mwh_rbands *b, double x0, double y, double pw, double row_h)
{
    if (!b || !b->nrows)
        return;
    double bw = pw / b->bins, w = b->T / b->bins;
    for (int r = 0; r < b->nrows; r++) {
        const rb_row *row = &b->row[r];
        double ry = y + r * row_h;
        if (row->level == 0)
            fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">tid %lld</text>", x0 - 4,
                    ry + row_h - 3, (long long)row->tid);
        fprintf(f, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" fill=\"#fbfbfc\"/>",
                x0, ry, pw, row_h - 1);
        if (!row->col)
            continue;
        for (int k = 0; k < b->bins;) {
            double cover;
            int64_t id = rb_best(&row->col[k], w, &cover);
            int e = k + 1;
            double csum = cover;
            while (e < b->bins) {
                double c2;
                if (rb_best(&row->col[e], w, &c2) != id)
                    break;
                csum += c2;
                e++;
            }
            if (id) {
                const char *nm = rb_name(b, id);
                double x = x0 + k * bw, wd = (e - k) * bw;
                fprintf(f, "<g class=rgn data-region=\"");
                mwv_html_str(f, nm);
                fprintf(f, "\" data-tid=\"%lld\" data-level=\"%d\"><title>", (long long)row->tid,
                        row->level);
                mwv_html_str(f, nm);
                fprintf(f, " (tid %lld, level %d)</title><rect x=\"%.1f\" y=\"%.1f\" "
                           "width=\"%.1f\" height=\"%.1f\" fill=\"%s\" fill-opacity=\"%.2f\"/>",
                        (long long)row->tid, row->level, x, ry, wd, row_h - 1,
                        mwh_region_color(id), 0.35 + 0.65 * csum / (e - k));
                /* the name where the band is wide enough (about 6 px a character) */
                int fit = (int)((wd - 6) / 6);
                size_t len = strlen(nm);
                if (fit >= 5) {
                    char lab[128];
                    if (len <= (size_t)fit && len < sizeof lab)
                        snprintf(lab, sizeof lab, "%s", nm);
                    else
                        snprintf(lab, sizeof lab, "%.*s...", fit - 3 < 120 ? fit - 3 : 120, nm);
                    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" style=\"font-size:10px;fill:#fff\">",
                            x + 3, ry + row_h - 4);
                    mwv_html_str(f, lab);
                    fputs("</text>", f);
                }
                fputs("</g>", f);
            }
            k = e;
        }
        fputc('\n', f);
    }
}

void mwh_rbands_note(FILE *f, const mwh_rbands *b, const char *proc)
{
    if (!b || !b->nrows)
        return;
    if (b->threads_all > b->threads_shown) {
        fputs("<p class=muted>", f);
        mwv_html_str(f, proc);
        fprintf(f, ": the region bands show the %d threads with the most region time of %d; "
                   "the region table counts them all.</p>\n",
                b->threads_shown, b->threads_all);
    }
    if (b->deeper) {
        fputs("<p class=muted>", f);
        mwv_html_str(f, proc);
        fprintf(f, ": %d spans nested deeper than the bands draw; the region table counts "
                   "them.</p>\n",
                b->deeper);
    }
}

void mwh_rbands_free(mwh_rbands *b)
{
    if (!b)
        return;
    for (int r = 0; r < b->nrows; r++)
        free(b->row[r].col);
    free(b->row);
    for (int i = 0; i < b->nname; i++)
        free(b->name[i]);
    free(b->name);
    free(b->nid);
    free(b);
}

/* ---- the per-region section ---- */

static void share_td(FILE *f, double share)
{
    fprintf(f, "<td class=n><span class=bar style=\"width:%.0fpx\"></span>%.1f%%</td>",
            fmax(1, share * 80), 100 * share);
}

void mwh_regions_section(FILE *f, sqlite3 *db, int top)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return;
    mw_rgn_collect(db, root, top);
    const cJSON *regs = cJSON_GetObjectItem(root, "regions"), *r, *x;
    const cJSON *notes = cJSON_GetObjectItem(root, "region_notes");
    if (cJSON_GetArraySize(regs) == 0 && cJSON_GetArraySize(notes) == 0) {
        cJSON_Delete(root);
        return;
    }
    fprintf(f, "<h2 id=regions>Regions</h2>\n<p class=muted>%.0f region%s marked by the program "
               "(docs/regions.md). Time: the spans' lengths summed over the threads in them; "
               "bound: the share of that time, where measured, in bandwidth-bound intervals (the "
               "process's intervals); samples: those taken on the region's thread while it was "
               "open.</p>\n",
            mw_rgn_num(root, "region_count"), mw_rgn_num(root, "region_count") == 1 ? "" : "s");
    fputs("<table id=region-table><tr><th>region</th><th>time</th><th>threads</th><th>spans</th>"
          "<th>calls</th><th>bound</th><th>samples</th></tr>\n",
          f);
    cJSON_ArrayForEach(r, regs)
    {
        const char *nm = mw_rgn_str(r, "region") ? mw_rgn_str(r, "region") : "?";
        char t[32];
        mw_rgn_human_time(mw_rgn_num(r, "time_ns"), t, sizeof t);
        fprintf(f, "<tr data-region-id=\"%.0f\" data-time-ns=\"%.0f\"><td><i class=sw "
                   "style=\"background:%s\"></i><a href=\"#region-%.0f\">",
                mw_rgn_num(r, "id"), mw_rgn_num(r, "time_ns"), mwh_region_color((int64_t)mw_rgn_num(r, "id")),
                mw_rgn_num(r, "id"));
        mwv_html_str(f, nm);
        fprintf(f, "</a></td><td class=n>%s</td><td class=n>%.0f</td><td class=n>%.0f</td>"
                   "<td class=n>%.0f</td>",
                t, mw_rgn_num(r, "threads"), mw_rgn_num(r, "spans"), mw_rgn_num(r, "calls"));
        if (cJSON_GetObjectItem(r, "bound_share"))
            share_td(f, mw_rgn_num(r, "bound_share"));
        else
            fputs("<td class=n title=\"no interval measured while it was open\">-</td>", f);
        fprintf(f, "<td class=n>%.0f</td></tr>\n", mw_rgn_num(r, "samples"));
    }
    fputs("</table>\n", f);
    cJSON_ArrayForEach(r, regs)
    {
        const cJSON *ln = cJSON_GetObjectItem(r, "lines"), *ob = cJSON_GetObjectItem(r, "objects"),
                    *gk = cJSON_GetObjectItem(r, "gpu_kernels");
        if (!cJSON_GetArraySize(ln) && !cJSON_GetArraySize(ob) && !cJSON_GetArraySize(gk))
            continue;
        const char *nm = mw_rgn_str(r, "region") ? mw_rgn_str(r, "region") : "?";
        double tot = mw_rgn_num(r, "samples");
        fprintf(f, "<div class=\"card region\" id=\"region-%.0f\" data-region=\"", mw_rgn_num(r, "id"));
        mwv_html_str(f, nm);
        fprintf(f, "\"><b><i class=sw style=\"background:%s\"></i>region ",
                mwh_region_color((int64_t)mw_rgn_num(r, "id")));
        mwv_html_str(f, nm);
        fputs("</b>", f);
        if (cJSON_GetArraySize(ln)) {
            fprintf(f, "<table class=rlines><tr><th>share</th><th>%s samples</th><th>source "
                       "line</th><th>function</th></tr>\n",
                    mw_rgn_str(r, "source") ? mw_rgn_str(r, "source") : "");
            int k = 0;
            cJSON_ArrayForEach(x, ln)
            {
                if (k++ == 8)
                    break;
                fputs("<tr>", f);
                share_td(f, tot > 0 ? mw_rgn_num(x, "samples") / tot : 0);
                fprintf(f, "<td class=n>%.0f</td><td title=\"", mw_rgn_num(x, "samples"));
                mwv_html_str(f, mw_rgn_str(x, "file") ? mw_rgn_str(x, "file") : "");
                fputs("\">", f);
                if (mw_rgn_str(x, "file")) {
                    const char *p = mw_rgn_str(x, "file"), *sl = strrchr(p, '/');
                    mwv_html_str(f, sl ? sl + 1 : p);
                    fprintf(f, ":%.0f", mw_rgn_num(x, "line"));
                } else {
                    fputs("(no line info)", f);
                }
                fputs("</td><td>", f);
                mwv_html_str(f, mw_rgn_str(x, "function") ? mw_rgn_str(x, "function") : "?");
                fputs("</td></tr>\n", f);
            }
            fputs("</table>\n", f);
        }
        if (cJSON_GetArraySize(ob)) {
            fputs("<table class=robjects><tr><th>samples with its address</th><th>kind</th>"
                  "<th>object</th><th>size</th></tr>\n",
                  f);
            int k = 0;
            cJSON_ArrayForEach(x, ob)
            {
                if (k++ == 5)
                    break;
                fprintf(f, "<tr><td class=n>%.0f</td><td>", mw_rgn_num(x, "samples"));
                mwv_html_str(f, mw_rgn_str(x, "kind") ? mw_rgn_str(x, "kind") : "?");
                fputs("</td><td>", f);
                mwv_html_str(f, mw_rgn_str(x, "name") ? mw_rgn_str(x, "name") : "?");
                double sz = mw_rgn_num(x, "size");
                if (sz >= 1048576)
                    fprintf(f, "</td><td class=n>%.1f MiB</td></tr>\n", sz / 1048576);
                else
                    fprintf(f, "</td><td class=n>%.0f B</td></tr>\n", sz);
            }
            fputs("</table>\n", f);
        }
        if (cJSON_GetArraySize(gk)) {
            fputs("<table class=rkernels><tr><th>GPU kernel</th><th>launches</th><th>time</th>"
                  "<th>bandwidth-bound launches</th></tr>\n",
                  f);
            int k = 0;
            cJSON_ArrayForEach(x, gk)
            {
                if (k++ == 8)
                    break;
                char t[32];
                mw_rgn_human_time(mw_rgn_num(x, "time_ns"), t, sizeof t);
                fputs("<tr><td>", f);
                mwv_html_str(f, mw_rgn_str(x, "name") ? mw_rgn_str(x, "name") : "?");
                fprintf(f, "</td><td class=n>%.0f</td><td class=n>%s</td><td class=n>%.0f</td>"
                           "</tr>\n",
                        mw_rgn_num(x, "launches"), t, mw_rgn_num(x, "bw_bound"));
            }
            fputs("</table>\n", f);
        }
        fputs("</div>\n", f);
    }
    if (cJSON_GetArraySize(notes) > 0) {
        fputs("<div class=note id=region-notes><b>Region notes</b><ul>\n", f);
        cJSON_ArrayForEach(x, notes)
        {
            fprintf(f, "<li>pid %.0f (%s): ", mw_rgn_num(x, "pid"),
                    mw_rgn_str(x, "source") ? mw_rgn_str(x, "source") : "?");
            mwv_html_str(f, mw_rgn_str(x, "note") ? mw_rgn_str(x, "note") : "");
            fputs("</li>\n", f);
        }
        fputs("</ul></div>\n", f);
    }
    cJSON_Delete(root);
}

int mwh_has_regions(sqlite3 *db)
{
    return mwv_scalar(db, "SELECT COUNT(*) FROM sqlite_master WHERE name='region_spans'") &&
           (mwv_scalar(db, "SELECT EXISTS(SELECT 1 FROM region_spans)") ||
            mwv_scalar(db, "SELECT EXISTS(SELECT 1 FROM region_notes)") ||
            mwv_scalar(db, "SELECT EXISTS(SELECT 1 FROM meta WHERE key = 'region_notes')"));
}
