/*
 * report/html.c: `memwatch report --html FILE`: one self-contained HTML page
 * of a report database (docs/html.md), titled with the run's root command:
 * a timeline with a whole-run lane and a lane per MPI rank or command
 * (loaded latency against the threshold, DRAM bandwidth, flagged intervals
 * shaded, GPU kernels, each thread's regions as named bands:
 * report/html_timeline.c, report/html_region.c), the processes table (the
 * most flagged first, the first --top shown, the rest behind "show all")
 * and the per-host table, the per-region table (report/html_region.c), the
 * top source lines (with their source text where the file is readable),
 * functions and data objects inside flagged intervals, an icicle graph of
 * their call stacks, the machine profile's latency-versus-bandwidth curve
 * with the threshold and the method verdicts (report/html_profile.c),
 * losses, warnings and how the run was recorded. This file draws the page
 * and its tables; what its parts share is in report/html_int.h.
 *
 * Everything is aggregated before it is drawn: the timeline has a fixed
 * number of columns and a bounded number of lanes whatever the run's length
 * and size, the icicle folds frames under 0.5 % of the samples into one
 * "other" frame per caller, tables have --top rows (the processes table
 * lists at most PROC_ROWS_MAX). The page is never wider than a 1400 px
 * window: long names wrap, a wide table scrolls inside itself. No network,
 * no external script or font; the inline script only adds a hover readout,
 * click-to-zoom on the icicle and the processes table's "show all".
 *
 * May call: SQLite, cJSON, libc, report/view.c, report/jobview.c,
 * report/html_timeline.c, report/html_profile.c, report/html_region.c.
 * Threading: reentrant.
 */
#include "export_int.h"
#include "html_int.h"
#include "jobview_int.h"
#include "load.h"
#include "region.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FL_W 1100      /* icicle width */
#define FL_ROW 17
#define FL_DEPTH 80     /* frames drawn from the outermost */
#define FL_MIN_SHARE 0.005 /* frames under this share of the samples: one "other" per parent */
#define FL_MAX_NODES 3000  /* frames drawn at most (the share above rises to keep to it) */
#define FL_NAME_MAX 300    /* characters of a frame's name kept for its hover */

const char mwh_css[] =
    "body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1d2330;"
    "background:#f6f7f9}main{max-width:1180px;margin:0 auto;padding:8px 24px 40px}"
    "h1{font-size:22px;margin:18px 0 4px}h2{font-size:17px;margin:26px 0 6px;"
    "border-bottom:1px solid #d5d9e0;padding-bottom:3px}"
    ".verdict{font-size:16px;margin:6px 0}.bound{color:#b3261e;font-weight:600}"
    ".ok{color:#1b6e3a;font-weight:600}.neutral{color:#475467;font-weight:600}"
    ".muted{color:#667085}.note{background:#fff7e0;"
    "border:1px solid #f0d48a;padding:6px 10px;border-radius:4px;margin:8px 0}"
    "nav a{margin-right:14px;color:#2657a6;text-decoration:none}"
    "table{border-collapse:collapse;background:#fff;margin:6px 0;font-size:13px}"
    "th,td{padding:3px 9px;border-bottom:1px solid #e6e8ec;text-align:left;vertical-align:top}"
    "th{background:#eef0f4;font-weight:600}td.n{text-align:right;font-variant-numeric:"
    "tabular-nums;white-space:nowrap}code{font:12px ui-monospace,Menlo,Consolas,monospace;"
    "white-space:pre-wrap;overflow-wrap:anywhere}.bar{display:inline-block;height:9px;"
    "background:#d1495b;margin-right:6px;"
    "vertical-align:middle}.card{background:#fff;border:1px solid #e0e3e8;border-radius:6px;"
    "padding:8px 10px;margin:8px 0;overflow-x:auto}svg text{font:11px system-ui,sans-serif;"
    "fill:#333}#tip{position:fixed;pointer-events:none;background:#1d2330;color:#fff;"
    "font-size:12px;padding:4px 7px;border-radius:4px;display:none;white-space:pre;z-index:9}"
    ".legend span{display:inline-block;margin-right:16px}.sw{display:inline-block;width:22px;"
    "height:10px;margin-right:5px;vertical-align:middle}dl{display:grid;grid-template-columns:"
    "minmax(0,max-content) minmax(0,auto);gap:2px 14px;margin:6px 0}dt{color:#667085}dd{margin:0}"
    /* never wider than the window: long names wrap, a wide table scrolls in itself */
    "main,h1,p,li,dd{overflow-wrap:anywhere}td,th{overflow-wrap:break-word}"
    "table{display:block;width:fit-content;max-width:100%;overflow-x:auto}svg{max-width:100%}"
    "button{font:inherit;font-size:12px;margin:4px 0}";

/* hover readout on the timeline, click-to-zoom on the icicle */
const char mwh_js[] =
    "(function(){var tip=document.getElementById('tip');"
    "function show(e,t){tip.textContent=t;tip.style.display='block';"
    "tip.style.left=(e.clientX+14)+'px';tip.style.top=(e.clientY+12)+'px';}"
    "function hide(){tip.style.display='none';}"
    "var tl=document.getElementById('tl'),D=window.MW_TL;"
    "if(tl&&D){var cur=tl.querySelector('#cursor');tl.addEventListener('mousemove',function(e){"
    "var r=tl.getBoundingClientRect(),sx=D.w/r.width,x=(e.clientX-r.left)*sx-D.x0;"
    "if(x<0||x>=D.pw){hide();cur.setAttribute('visibility','hidden');return;}"
    "var b=Math.floor(x/D.pw*D.bins),y=(e.clientY-r.top)*sx,L=null;"
    "for(var i=0;i<D.lanes.length;i++)if(y>=D.lanes[i].y0&&y<D.lanes[i].y1)L=D.lanes[i];"
    "cur.setAttribute('x1',D.x0+x);cur.setAttribute('x2',D.x0+x);"
    "cur.setAttribute('visibility','visible');"
    "var t=(b+0.5)*D.T/D.bins,s='t = '+t.toFixed(3)+' s';"
    "if(L){s+='\\n'+L.name;var v=L.lat[b];s+='\\nlatency '+(v<0?'not measured':v.toFixed(1)+' ns')"
    "+' (threshold '+(L.thr[b]<0?'-':L.thr[b].toFixed(1))+' ns)';"
    "s+='\\nbandwidth-bound '+(L.fl[b]<0?'- (no reading)':"
    "Math.round(L.fl[b]*100)+' % of the column');"
    "if(L.bw)s+='\\nDRAM '+(L.bw[b]<0?'-':L.bw[b].toFixed(2)+' GB/s');}"
    "show(e,s);});tl.addEventListener('mouseleave',function(){hide();"
    "cur.setAttribute('visibility','hidden');});}"
    "var fl=document.getElementById('flame');if(fl){var rs=fl.querySelectorAll('g.f');"
    "function zoom(x0,w){var W=+fl.getAttribute('data-w');rs.forEach(function(g){"
    "var x=+g.getAttribute('data-x'),ww=+g.getAttribute('data-w'),nx=(x-x0)/w*W,nw=ww/w*W,"
    "r=g.firstChild,t=g.querySelector('text');if(nx+nw<=0.01||nx>=W-0.01||nw<0.5)"
    "{g.style.display='none';return;}g.style.display='';r.setAttribute('x',nx);"
    "r.setAttribute('width',nw);if(t){t.setAttribute('x',nx+3);var n=g.getAttribute('data-n'),"
    "k=Math.floor((nw-6)/6.5);t.textContent=k<3?'':(n.length>k?n.slice(0,k-1)+'\\u2026':n);}});}"
    "rs.forEach(function(g){g.addEventListener('click',function(){"
    "zoom(+g.getAttribute('data-x'),+g.getAttribute('data-w'));});"
    "g.addEventListener('mousemove',function(e){show(e,g.getAttribute('data-n')+'\\n'+"
    "g.getAttribute('data-s'));});g.addEventListener('mouseleave',hide);});"
    "var rb=document.getElementById('flame-reset');if(rb)rb.addEventListener('click',function(){"
    "zoom(0,+fl.getAttribute('data-w'));});}"
    "var pa=document.getElementById('procs-all');if(pa)pa.addEventListener('click',function(){"
    "var m=document.querySelector('#rank-table tbody.more'),o=m.hidden;m.hidden=!o;"
    "pa.textContent=o?pa.getAttribute('data-less'):pa.getAttribute('data-more');});})();";

/* ---- tables ---- */

/* the source text of file:line, when the file is readable */
static void snippet(FILE *f, const char *file, int64_t line)
{
    if (!file || line <= 0)
        return;
    FILE *src = fopen(file, "r");
    if (!src)
        return;
    char buf[512];
    int64_t n = 0;
    while (fgets(buf, sizeof buf, src)) {
        size_t l = strlen(buf);
        int whole = l > 0 && buf[l - 1] == '\n';
        if (++n == line) {
            while (l > 0 && (buf[l - 1] == '\n' || buf[l - 1] == '\r'))
                buf[--l] = 0;
            char *p = buf;
            while (*p == ' ' || *p == '\t')
                p++;
            if (strlen(p) > 110)
                strcpy(p + 107, "...");
            fputs("<code>", f);
            h(f, p);
            fputs("</code>", f);
            break;
        }
        while (!whole && fgets(buf, sizeof buf, src)) { /* the rest of a long line */
            l = strlen(buf);
            whole = l > 0 && buf[l - 1] == '\n';
        }
    }
    fclose(src);
}

static void share_cell(FILE *f, double share)
{
    fprintf(f, "<td class=n><span class=bar style=\"width:%.0fpx\"></span>%.1f%%</td>",
            fmax(1, share * 80), 100 * share);
}

static const char *code_source(sqlite3 *db, int flagged)
{
    return mwv_scalar(db, flagged ? "SELECT COALESCE(SUM(sel), 0) FROM pcc WHERE"
                                    " source='precise'"
                                  : "SELECT COALESCE(SUM(n), 0) FROM pcc WHERE source='precise'")
               ? "precise"
               : "timer";
}

/* Where a perf map named code: the samples of the table below, each at the
 * innermost interpreted or JIT-compiled frame of its stack (a Python or
 * JavaScript function), with the leaf functions it ran. */
static void interp_table(FILE *f, sqlite3 *db, const char *src, int flagged, int top, int64_t total)
{
    if (!mw_names_have_perfmap(db))
        return;
    char where[160];
    snprintf(where, sizeof where, "s.source = '%s'%s", src, flagged ? " AND s.selected = 1" : "");
    double with = 0;
    cJSON *arr = mw_names_interp(db, where, top, 3, &with), *r, *l;
    if (with > 0) {
        fprintf(f,
                "<p>Interpreted and JIT-compiled code (perf map): each sample at the innermost "
                "such frame of its stack; %.0f of %lld samples have one.</p>\n",
                with, (long long)total);
        fputs("<table><tr><th>share</th><th>samples</th><th>function</th>"
              "<th>running (leaf functions)</th></tr>\n",
              f);
        cJSON_ArrayForEach(r, arr)
        {
            double n = cJSON_GetNumberValue(cJSON_GetObjectItem(r, "samples"));
            fputs("<tr>", f);
            share_cell(f, n / (double)total);
            fprintf(f, "<td class=n>%.0f</td><td>", n);
            h(f, cJSON_GetStringValue(cJSON_GetObjectItem(r, "function")));
            fputs("</td><td>", f);
            int first = 1;
            cJSON_ArrayForEach(l, cJSON_GetObjectItem(r, "leaves"))
            {
                const char *lf = cJSON_GetStringValue(cJSON_GetObjectItem(l, "function"));
                fputs(first ? "" : ", ", f);
                h(f, lf ? lf : "?");
                fprintf(f, " %.0f%%",
                        100 * cJSON_GetNumberValue(cJSON_GetObjectItem(l, "samples")) / n);
                first = 0;
            }
            fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
    }
    cJSON_Delete(arr);
}

static void code_tables(FILE *f, sqlite3 *db, int flagged, int top, const char *id)
{
    const char *src = code_source(db, flagged);
    char where[200], sql[900];
    /* counted from pcc (view.c): one scan of the samples for every table */
    const char *cnt = flagged ? "x.sel" : "x.n";
    snprintf(where, sizeof where, "x.source = '%s'%s", src, flagged ? " AND x.sel > 0" : "");
    snprintf(sql, sizeof sql, "SELECT COALESCE(SUM(%s), 0) FROM pcc x WHERE %s", cnt, where);
    int64_t total = mwv_scalar(db, sql);
    fprintf(f, "<h2 id=%s>%s</h2>\n", id,
            flagged ? "Top code inside bandwidth-bound intervals" : "Top code over the whole run");
    if (total == 0) {
        fprintf(f, "<p class=muted>%s</p>\n",
                flagged ? "No sample naming code fell inside a flagged interval: either no "
                          "interval was flagged, or no sample was taken while one was."
                        : "No sample names code.");
        return;
    }
    fprintf(f, "<p class=muted>%lld %s samples%s; share of those. %s</p>\n", (long long)total, src,
            flagged ? " inside flagged intervals" : "",
            !strcmp(src, "precise")
                ? "Precise load samples at or above the latency threshold (hybrid selection)."
                : "Timer samples: where the CPU time went.");
    interp_table(f, db, src, flagged, top, total);
    snprintf(sql, sizeof sql,
             "SELECT p.file, p.line, p.function, SUM(%s) AS n FROM pcc x JOIN pcs p ON"
             " p.id = x.pc_id WHERE %s GROUP BY p.file, p.line, p.function"
             " ORDER BY n DESC, p.file, p.line LIMIT %d",
             cnt, where, top);
    sqlite3_stmt *s;
    /* rows first: the source column is shown when some line's file is readable */
    struct crow {
        char *file, *func;
        int64_t line, n;
    } *rows = calloc((size_t)top, sizeof *rows);
    int nr = 0, readable = 0;
    if (rows && sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK) {
        while (nr < top && sqlite3_step(s) == SQLITE_ROW) {
            const char *file = col_text(s, 0), *fn = col_text(s, 2);
            rows[nr].file = file ? strdup(file) : NULL;
            rows[nr].func = strdup(fn ? fn : "?");
            rows[nr].line = sqlite3_column_int64(s, 1);
            rows[nr].n = sqlite3_column_int64(s, 3);
            if (file && !readable && access(file, R_OK) == 0)
                readable = 1;
            nr++;
        }
        sqlite3_finalize(s);
    }
    fprintf(f, "<table><tr><th>share</th><th>samples</th><th>source line</th><th>function</th>%s"
               "</tr>\n",
            readable ? "<th>source</th>" : "");
    for (int i = 0; i < nr; i++) {
        const char *file = rows[i].file;
        fputs("<tr>", f);
        share_cell(f, (double)rows[i].n / (double)total);
        fprintf(f, "<td class=n>%lld</td><td title=\"", (long long)rows[i].n);
        h(f, file ? file : "");
        fputs("\">", f);
        if (file) {
            h(f, mwv_base(file));
            fprintf(f, ":%lld", (long long)rows[i].line);
        } else {
            fputs("<span class=muted>(no line info)</span>", f);
        }
        fputs("</td><td>", f);
        h(f, rows[i].func ? rows[i].func : "?");
        if (readable) {
            fputs("</td><td>", f);
            snippet(f, file, rows[i].line);
        }
        fputs("</td></tr>\n", f);
        free(rows[i].file);
        free(rows[i].func);
    }
    free(rows);
    fputs("</table>\n", f);
    snprintf(sql, sizeof sql,
             "SELECT p.function, m.path, SUM(%s) AS n FROM pcc x JOIN pcs p ON p.id = x.pc_id"
             " LEFT JOIN modules m ON m.id = p.module_id WHERE %s GROUP BY p.function, m.path"
             " ORDER BY n DESC, p.function LIMIT %d",
             cnt, where, top < 10 ? top : 10);
    fputs("<table><tr><th>share</th><th>samples</th><th>function</th><th>module</th></tr>\n", f);
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            int64_t n = sqlite3_column_int64(s, 2);
            fputs("<tr>", f);
            share_cell(f, (double)n / (double)total);
            fprintf(f, "<td class=n>%lld</td><td>", (long long)n);
            h(f, col_text(s, 0) ? col_text(s, 0) : "?");
            fputs("</td><td title=\"", f);
            h(f, col_text(s, 1) ? col_text(s, 1) : "");
            fputs("\">", f);
            h(f, mwv_base(col_text(s, 1)));
            fputs("</td></tr>\n", f);
        }
        sqlite3_finalize(s);
    }
    fputs("</table>\n", f);
}

static void objects_table(FILE *f, sqlite3 *db, int top, int multi)
{
    int64_t addressed = mwv_scalar(db, "SELECT COUNT(*) FROM samples WHERE addr_source IN"
                                       " ('decoded', 'precise')");
    int64_t faults = mwv_scalar(db, "SELECT COUNT(*) FROM samples WHERE addr_source = 'fault'");
    double unattr = mwv_scalar_real(db, "SELECT (SELECT COUNT(*) FROM samples WHERE addr_source"
                                        " IN ('decoded', 'precise')) - COALESCE((SELECT"
                                        " SUM(share) FROM sample_objects WHERE addr_source !="
                                        " 'fault'), 0)");
    fputs("<h2 id=objects>Data objects</h2>\n", f);
    if (addressed == 0 && faults == 0) {
        fputs("<p class=muted>No sample carried a data address (timer samples do where their "
              "instructions could be decoded: docs/data-addresses.md; precise load samples do "
              "where the hardware has them; page faults name where data was first touched).</p>\n",
              f);
        return;
    }
    fprintf(f, "<p class=muted>%lld samples with a data address (decoded from timer samples, "
               "precise loads; a decoded sample is shared among the accesses around it), %.0f "
               "not inside any known object. Share of them; the flagged column counts those "
               "inside bandwidth-bound intervals, and the objects with the most of those come "
               "first. %lld page-fault samples, where data was first touched, are counted "
               "apart. An object found in several processes (its allocation site, variable or "
               "file) is one row.</p>\n",
            (long long)addressed, unattr > 0 ? unattr : 0, (long long)faults);
    sqlite3_stmt *s;
    fprintf(f, "<table><tr><th>share</th><th>samples</th><th>in flagged</th><th>first touched"
               "</th>%s<th>kind</th><th>object</th><th>size</th><th>allocated at</th></tr>\n",
            multi ? "<th>process</th>" : "");
    if (sqlite3_prepare_v2(db, mwv_q_objects, -1, &s, NULL) == SQLITE_OK) {
        sqlite3_bind_int(s, 1, top);
        while (sqlite3_step(s) == SQLITE_ROW) {
            double n = sqlite3_column_double(s, 7);
            char sz[32];
            mwv_human_bytes((double)sqlite3_column_int64(s, 2), sz, sizeof sz);
            fputs("<tr>", f);
            share_cell(f, addressed > 0 ? n / (double)addressed : 0);
            fprintf(f, "<td class=n>%.1f</td><td class=n>%.1f</td><td class=n>%lld</td><td>", n,
                    sqlite3_column_double(s, 8), sqlite3_column_int64(s, 12));
            if (multi) {
                char who[96];
                if (sqlite3_column_int64(s, 14) > 1)
                    snprintf(who, sizeof who, "%lld processes (%s .. %s)",
                             sqlite3_column_int64(s, 14), col_text(s, 16) ? col_text(s, 16) : "?",
                             col_text(s, 17) ? col_text(s, 17) : "?");
                else
                    snprintf(who, sizeof who, "%s", col_text(s, 16) ? col_text(s, 16) : "?");
                h(f, who);
                fputs("</td><td>", f);
            }
            h(f, col_text(s, 0));
            fputs("</td><td>", f);
            h(f, col_text(s, 1) ? col_text(s, 1) : "?");
            fprintf(f, "</td><td class=n>%s</td><td>", sz);
            if (col_text(s, 5)) {
                h(f, mwv_base(col_text(s, 5)));
                fprintf(f, ":%lld ", sqlite3_column_int64(s, 6));
            }
            h(f, col_text(s, 4) ? col_text(s, 4) : "");
            fputs("</td></tr>\n", f);
        }
        sqlite3_finalize(s);
    }
    fputs("</table>\n", f);
}

/* ---- icicle of the flagged samples' stacks ---- */

typedef struct fnode {
    const char *name;
    int64_t n;
    int32_t child, next; /* indexes, -1 none */
} fnode;

typedef struct ftree {
    fnode *v;
    int32_t n, cap;
} ftree;

static int32_t fchild(ftree *t, int32_t parent, const char *name)
{
    int32_t *link = parent >= 0 ? &t->v[parent].child : NULL;
    for (int32_t c = link ? *link : -1; c >= 0; c = t->v[c].next)
        if (t->v[c].name == name || !strcmp(t->v[c].name, name))
            return c;
    if (t->n == t->cap) {
        int32_t nc = t->cap ? t->cap * 2 : 1024;
        fnode *nv = realloc(t->v, (size_t)nc * sizeof *nv);
        if (!nv)
            return -1;
        t->v = nv;
        t->cap = nc;
        link = parent >= 0 ? &t->v[parent].child : NULL;
    }
    int32_t id = t->n++;
    t->v[id] = (fnode){name, 0, -1, link ? *link : -1};
    if (link)
        *link = id;
    return id;
}

static uint32_t name_hash(const char *s)
{
    uint32_t x = 2166136261u;
    for (; *s; s++)
        x = (x ^ (uint8_t)*s) * 16777619u;
    return x;
}

/* fold the children of id under minn samples into one "other" frame
 * (without children of its own), and below FL_DEPTH every child */
static void flame_merge(ftree *t, int32_t id, int64_t minn, int depth)
{
    int64_t on = 0;
    int32_t head = -1, tail = -1, o = -1;
    for (int32_t c = t->v[id].child, nx; c >= 0; c = nx) {
        nx = t->v[c].next;
        if (t->v[c].n < minn || depth >= FL_DEPTH) {
            on += t->v[c].n;
            continue;
        }
        t->v[c].next = -1;
        if (tail >= 0)
            t->v[tail].next = c;
        else
            head = c;
        tail = c;
    }
    t->v[id].child = head;
    if (on > 0 && depth < FL_DEPTH) {
        if (t->n == t->cap) {
            int32_t nc = t->cap ? t->cap * 2 : 1024;
            fnode *nv = realloc(t->v, (size_t)nc * sizeof *nv);
            if (!nv)
                return;
            t->v = nv;
            t->cap = nc;
        }
        o = t->n++;
        t->v[o] = (fnode){"[other]", on, -1, -1};
        if (tail >= 0)
            t->v[tail].next = o;
        else
            t->v[id].child = o;
    }
    for (int32_t c = head; c >= 0; c = t->v[c].next)
        if (c != o)
            flame_merge(t, c, minn, depth + 1);
}

static int flame_emit(FILE *f, const ftree *t, int32_t id, double x, double scale, int depth,
                      int64_t total, int *maxdepth)
{
    int emitted = 0;
    for (int32_t c = t->v[id].child; c >= 0; c = t->v[c].next) {
        const fnode *nd = &t->v[c];
        double w = (double)nd->n * scale;
        if (w >= 0.5 && depth < 80) {
            uint32_t hh = name_hash(nd->name);
            int r = 205 + (int)(hh % 50), g = 90 + (int)((hh >> 8) % 110), b = 40 + (int)((hh >> 16) % 45);
            double y = depth * FL_ROW;
            fprintf(f, "<g class=f data-x=\"%.2f\" data-w=\"%.2f\" data-n=\"", x, w);
            if (strlen(nd->name) > FL_NAME_MAX) {
                char cut[FL_NAME_MAX + 4];
                snprintf(cut, sizeof cut, "%.*s...", FL_NAME_MAX - 3, nd->name);
                h(f, cut);
            } else {
                h(f, nd->name);
            }
            fprintf(f, "\" data-s=\"%lld samples, %.1f%%\"><rect x=\"%.2f\" y=\"%.0f\" "
                       "width=\"%.2f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" stroke=\"#fff\" "
                       "stroke-width=\"0.5\"/>",
                    (long long)nd->n, 100.0 * (double)nd->n / (double)total, x, y, w, FL_ROW - 1, r,
                    g, b);
            int k = (int)((w - 6) / 6.5);
            fprintf(f, "<text x=\"%.2f\" y=\"%.0f\">", x + 3, y + 12);
            if (k >= 3) {
                size_t l = strlen(nd->name);
                if ((int)l > k) {
                    char buf[512];
                    snprintf(buf, sizeof buf, "%.*s", k - 1 < 500 ? k - 1 : 500, nd->name);
                    h(f, buf);
                    fputs("\xe2\x80\xa6", f);
                } else {
                    h(f, nd->name);
                }
            }
            fputs("</text></g>\n", f);
            if (depth + 1 > *maxdepth)
                *maxdepth = depth + 1;
            emitted++;
            emitted += flame_emit(f, t, c, x, scale, depth + 1, total, maxdepth);
        }
        x += w;
    }
    return emitted;
}

static void flame(FILE *f, sqlite3 *db)
{
    int64_t nsel = mwv_scalar(db, "SELECT COALESCE(SUM(sel), 0) FROM pcc WHERE source IN"
                                  " ('timer', 'precise')");
    const char *where = nsel ? "s.selected = 1 AND s.source IN ('timer', 'precise')"
                             : "s.source IN ('timer', 'precise')";
    fputs("<h2 id=flame-h>Call stacks (icicle)</h2>\n", f);
    mwv_code c;
    if (mwv_code_load(db, &c) != 0)
        return;
    char sql[400];
    snprintf(sql, sizeof sql,
             "SELECT COALESCE(s.stack_id, -1), COALESCE(s.pc_id, -1), COUNT(*) FROM samples s"
             " WHERE %s GROUP BY 1, 2",
             where);
    ftree t = {0};
    int32_t root = fchild(&t, -1, "all");
    int64_t total = 0;
    sqlite3_stmt *s;
    static uint32_t v[4096];
    if (root >= 0 && sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            size_t n = mwx_stack_frames(&c, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
                                        v, sizeof v / sizeof v[0]);
            int64_t cnt = sqlite3_column_int64(s, 2);
            int32_t cur = root;
            t.v[root].n += cnt;
            total += cnt;
            if (n == 0) {
                cur = fchild(&t, cur, "[unknown]");
                if (cur >= 0)
                    t.v[cur].n += cnt;
            }
            for (size_t i = 0; i < n && cur >= 0; i++) {
                cur = fchild(&t, cur, c.names[v[i]]);
                if (cur >= 0)
                    t.v[cur].n += cnt;
            }
        }
        sqlite3_finalize(s);
    }
    /* small frames folded: under FL_MIN_SHARE of the samples, more where
     * that would still draw more than FL_MAX_NODES frames */
    int64_t minn = (int64_t)ceil(FL_MIN_SHARE * (double)total);
    if (minn < 1)
        minn = 1;
    for (;;) {
        int32_t big = 0;
        for (int32_t i = 0; i < t.n; i++)
            big += t.v[i].n >= minn;
        if (big <= FL_MAX_NODES / 2)
            break;
        minn *= 2;
    }
    if (total > 0)
        flame_merge(&t, root, minn, 0);
    if (total == 0) {
        fputs("<p class=muted>No timer or precise sample to draw.</p>\n", f);
    } else {
        fprintf(f, "<p class=muted>%s: %lld samples, outermost frame at the top; width is the "
                   "share of samples. Frames with fewer than %lld samples (%.1f %%) are folded "
                   "into one <i>[other]</i> frame per caller. Click a frame to zoom in, hover for "
                   "its count.</p>\n",
                nsel ? "Samples inside bandwidth-bound intervals (the hybrid selection)"
                     : "No sample fell inside a flagged interval, so this is every timer/precise "
                       "sample of the run",
                (long long)total, (long long)minn, 100.0 * (double)minn / (double)total);
        /* draw into memory first: the height depends on the depth drawn */
        char *buf = NULL;
        size_t blen = 0;
        FILE *m = open_memstream(&buf, &blen);
        int maxdepth = 0;
        if (m) {
            flame_emit(m, &t, root, 0, (double)FL_W / (double)total, 0, total, &maxdepth);
            fclose(m);
            fprintf(f, "<div class=card><button id=flame-reset type=button>reset zoom</button>"
                       "<svg id=flame data-w=\"%d\" xmlns=\"http://www.w3.org/2000/svg\" "
                       "viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
                       "style=\"cursor:pointer;width:100%%;height:auto\">\n",
                    FL_W, FL_W, maxdepth * FL_ROW + 2, FL_W, maxdepth * FL_ROW + 2);
            fwrite(buf, 1, blen, f);
            fputs("</svg></div>\n", f);
            free(buf);
        }
    }
    free(t.v);
    mwv_code_free(&c);
}

/* ---- per rank / host ---- */

#define PROC_ROWS_MAX 5000 /* rows of the processes table, shown or behind "show all" */

static double jnumv(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    return v ? cJSON_GetNumberValue(v) : 0;
}

/* what matters inside flagged intervals first: flagged time, flagged
 * samples, then time measured, then the job view's order */
static int cmp_proc(const void *pa, const void *pb)
{
    const cJSON *a = *(const cJSON *const *)pa, *b = *(const cJSON *const *)pb;
    double x, y;
    if ((x = jnumv(a, "flagged_ns")) != (y = jnumv(b, "flagged_ns")))
        return x > y ? -1 : 1;
    if ((x = jnumv(a, "in_flagged")) != (y = jnumv(b, "in_flagged")))
        return x > y ? -1 : 1;
    if ((x = jnumv(a, "time_ns")) != (y = jnumv(b, "time_ns")))
        return x > y ? -1 : 1;
    if ((x = jnumv(a, "samples")) != (y = jnumv(b, "samples")))
        return x > y ? -1 : 1;
    return a < b ? -1 : a > b;
}

static void job_row(FILE *f, const cJSON *r)
{
    char dur[64], line[512];
    fmt_dur(dur, sizeof dur, jnumv(r, "time_ns") / 1e9);
    mwv_jobview_line(r, line, sizeof line);
    fputs("<tr><td class=n>", f);
    if (cJSON_GetObjectItem(r, "rank"))
        fprintf(f, "%.0f", jnumv(r, "rank"));
    else
        fputs("-", f);
    fputs("</td><td>", f);
    h(f, cJSON_GetStringValue(cJSON_GetObjectItem(r, "host")));
    fprintf(f, "</td><td class=n>%.0f</td><td>", jnumv(r, "pid"));
    h(f, mwv_base(cJSON_GetStringValue(cJSON_GetObjectItem(r, "exe"))));
    fprintf(f, "</td><td class=n>%s</td>", dur);
    share_cell(f, jnumv(r, "share"));
    fprintf(f, "<td class=n>%.0f</td><td>", jnumv(r, "samples"));
    h(f, line);
    fprintf(f, "</td><td class=n>%.0f</td></tr>\n", jnumv(r, "in_flagged"));
}

static void job_section(FILE *f, const cJSON *job, int top)
{
    const cJSON *procs = cJSON_GetObjectItem(job, "processes"), *r;
    const cJSON *hosts = cJSON_GetObjectItem(job, "hosts");
    int np = cJSON_GetArraySize(procs), nh = cJSON_GetArraySize(hosts);
    fprintf(f, "<h2 id=ranks>Processes%s</h2>\n", nh > 1 ? " and hosts" : "");
    const cJSON *im = cJSON_GetObjectItem(job, "imbalance");
    if (im && cJSON_GetStringValue(cJSON_GetObjectItem(im, "text"))) {
        fputs("<p class=verdict>Imbalance: ", f);
        h(f, cJSON_GetStringValue(cJSON_GetObjectItem(im, "text")));
        fputs(".</p>\n", f);
    }
    const cJSON **ord = calloc((size_t)(np ? np : 1), sizeof *ord);
    if (!ord)
        return;
    int n = 0;
    cJSON_ArrayForEach(r, procs) ord[n++] = r;
    qsort(ord, (size_t)n, sizeof *ord, cmp_proc);
    int shown = n <= top + 5 ? n : top; /* a few more than --top: all of them */
    int listed = n < PROC_ROWS_MAX ? n : PROC_ROWS_MAX;
    fprintf(f, "<p class=muted>%d process%s, the most flagged time first (then flagged samples, "
               "then time measured).</p>\n",
            n, n == 1 ? "" : "es");
    if (listed < n)
        fprintf(f, "<p class=muted>The page lists %d of them; the report database and "
                   "<code>memwatch report --json</code> have every one.</p>\n",
                listed);
    fputs("<table id=rank-table><thead><tr><th>rank</th><th>host</th><th>pid</th><th>program</th>"
          "<th>time measured</th><th>bandwidth-bound</th><th>samples</th><th>top line</th>"
          "<th>samples in flagged</th></tr></thead>\n<tbody>\n",
          f);
    for (int i = 0; i < shown; i++)
        job_row(f, ord[i]);
    fputs("</tbody>\n", f);
    if (listed > shown) {
        fputs("<tbody class=more hidden>\n", f);
        for (int i = shown; i < listed; i++)
            job_row(f, ord[i]);
        fputs("</tbody>\n", f);
    }
    fputs("</table>\n", f);
    if (listed > shown)
        fprintf(f, "<button id=procs-all type=button data-more=\"show all %d processes\" "
                   "data-less=\"show the first %d\">show all %d processes</button>\n",
                listed, shown, listed);
    free(ord);
    if (nh < 2)
        return;
    fputs("<table id=host-table><tr><th>host</th><th>processes</th><th>time measured</th>"
          "<th>bandwidth-bound</th><th>most bound process</th><th>samples</th><th>top line</th>"
          "</tr>\n",
          f);
    cJSON_ArrayForEach(r, hosts)
    {
        char dur[64], line[512];
        fmt_dur(dur, sizeof dur, cJSON_GetNumberValue(cJSON_GetObjectItem(r, "time_ns")) / 1e9);
        mwv_jobview_line(r, line, sizeof line);
        fputs("<tr><td>", f);
        h(f, cJSON_GetStringValue(cJSON_GetObjectItem(r, "host")));
        fprintf(f, "</td><td class=n>%.0f</td><td class=n>%s</td>",
                cJSON_GetNumberValue(cJSON_GetObjectItem(r, "processes")), dur);
        share_cell(f, cJSON_GetNumberValue(cJSON_GetObjectItem(r, "share")));
        fprintf(f, "<td class=n>%.1f%%</td><td class=n>%.0f</td><td>",
                100 * cJSON_GetNumberValue(cJSON_GetObjectItem(r, "max_share")),
                cJSON_GetNumberValue(cJSON_GetObjectItem(r, "samples")));
        h(f, line);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* ---- recording, losses, warnings, GPU ---- */

static void recording_section(FILE *f, sqlite3 *db)
{
    fputs("<h2 id=recording>How the run was recorded</h2>\n<table><tr><th>setting</th>"
          "<th>value (processes)</th></tr>\n",
          f);
    static const char *const keys[][2] = {
        {"lat_method", "latency method"},    {"bw_method", "bandwidth method"},
        {"threshold_source", "threshold"},   {"interval_ns", "interval (ns)"},
        {"sample_rate", "timer samples / s"}, {"sampling", "sampling"},
        {"precise_loads", "precise loads"},  {"profile", "machine profile"},
        {"method_note", "method note"},      {"tsc_source", "TSC"},
        {"machine", "machine"}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        sqlite3_stmt *s;
        if (sqlite3_prepare_v2(db, "SELECT value, COUNT(DISTINCT process_id) FROM meta WHERE key ="
                                   " ? GROUP BY value ORDER BY 2 DESC LIMIT 4",
                               -1, &s, NULL) != SQLITE_OK)
            continue;
        sqlite3_bind_text(s, 1, keys[i][0], -1, SQLITE_STATIC);
        int first = 1;
        while (sqlite3_step(s) == SQLITE_ROW) {
            if (first) {
                fputs("<tr><td>", f);
                h(f, keys[i][1]);
                fputs("</td><td>", f);
            } else {
                fputs("<br>", f);
            }
            first = 0;
            h(f, col_text(s, 0));
            fprintf(f, " <span class=muted>(%lld)</span>", sqlite3_column_int64(s, 1));
        }
        if (!first)
            fputs("</td></tr>\n", f);
        sqlite3_finalize(s);
    }
    sqlite3_stmt *s;
    /* only where the machine had precise sampling, as in the text summary */
    if (mwv_scalar(db, "SELECT COUNT(*) FROM samples WHERE source='precise'") > 0 &&
        sqlite3_prepare_v2(db, "SELECT threshold, threshold_source FROM processes LIMIT 1", -1, &s,
                           NULL) == SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW) {
            fprintf(f, "<tr><td>precise-sample threshold</td><td>%.0f cycles (",
                    sqlite3_column_double(s, 0));
            h(f, col_text(s, 1) ? col_text(s, 1) : "?");
            fputs(")</td></tr>\n", f);
        }
        sqlite3_finalize(s);
    }
    fputs("</table>\n", f);
    int64_t unc = mwv_scalar(db, "SELECT COUNT(*) FROM intervals WHERE flags & 8");
    if (unc)
        fprintf(f, "<p class=note>%lld intervals used memwatch's default (uncalibrated) "
                   "threshold: no machine profile. Run <code>memwatch calibrate</code> first.</p>\n",
                (long long)unc);

    fputs("<h2 id=losses>Losses and warnings</h2>\n", f);
    int any = 0;
    if (sqlite3_prepare_v2(db, "SELECT kind, SUM(count), COUNT(*) FROM losses GROUP BY kind ORDER"
                               " BY kind",
                           -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            if (!any)
                fputs("<table><tr><th>loss</th><th>count</th><th>records</th></tr>\n", f);
            any = 1;
            fputs("<tr><td>", f);
            h(f, col_text(s, 0));
            fprintf(f, "</td><td class=n>%lld</td><td class=n>%lld</td></tr>\n",
                    sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2));
        }
        sqlite3_finalize(s);
    }
    if (any)
        fputs("</table><p class=muted>Shares are over the samples that survived.</p>\n", f);
    else
        fputs("<p>No samples or records were reported lost.</p>\n", f);
    any = 0;
    /* bounded: 20 damaged files, 50 distinct warnings */
    int64_t damaged = mwv_scalar(db, "SELECT COUNT(*) FROM processes WHERE status != 'ok'");
    if (sqlite3_prepare_v2(db, "SELECT file, status FROM (SELECT file, status FROM processes"
                               " WHERE status != 'ok' ORDER BY id LIMIT 20)"
                               " UNION ALL SELECT NULL, text FROM (SELECT DISTINCT text FROM logs"
                               " LIMIT 50)",
                           -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            if (!any)
                fputs("<ul>\n", f);
            any = 1;
            fputs("<li>", f);
            if (col_text(s, 0)) {
                h(f, mwv_base(col_text(s, 0)));
                fputs(": ", f);
            }
            h(f, col_text(s, 1));
            fputs("</li>\n", f);
        }
        sqlite3_finalize(s);
    }
    if (any && damaged > 20)
        fprintf(f, "<li>and %lld more damaged files: the processes table of the report database "
                   "has their status.</li>\n",
                (long long)(damaged - 20));
    if (any)
        fputs("</ul>\n", f);
    else
        fputs("<p>No warnings.</p>\n", f);
}

/* A table from a query whose columns are all shown: text cells escaped,
 * numbers right-aligned; a column named in red_col is red where non-zero. */
static void gpu_table(FILE *f, sqlite3 *db, const char *id, const char *head, const char *sql,
                      int red_col)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return;
    fprintf(f, "<table id=%s><tr>%s</tr>\n", id, head);
    while (sqlite3_step(s) == SQLITE_ROW) {
        fputs("<tr>", f);
        for (int c = 0; c < sqlite3_column_count(s); c++) {
            const char *nm = sqlite3_column_name(s, c);
            int t = sqlite3_column_type(s, c);
            if (!strcmp(nm, "time_ns")) {
                char dur[64];
                fmt_dur(dur, sizeof dur, (double)sqlite3_column_int64(s, c) / 1e9);
                fprintf(f, "<td class=n>%s</td>", dur);
            } else if (!strncmp(nm, "gbs", 3)) {
                fprintf(f, "<td class=n>%.1f</td>", sqlite3_column_double(s, c) / 1e9);
            } else if (t == SQLITE_INTEGER) {
                long long v = sqlite3_column_int64(s, c);
                fprintf(f, "<td class=n%s>%lld</td>",
                        c == red_col && v ? " style=\"color:#b3261e\"" : "", v);
            } else if (t == SQLITE_FLOAT) {
                fprintf(f, "<td class=n>%.3g</td>", sqlite3_column_double(s, c));
            } else {
                fputs("<td>", f);
                h(f, col_text(s, c) ? col_text(s, c) : "-");
                fputs("</td>", f);
            }
        }
        fputs("</tr>\n", f);
    }
    sqlite3_finalize(s);
    fputs("</table>\n", f);
}

static void gpu_section(FILE *f, sqlite3 *db, int top)
{
    if (mwv_scalar(db, "SELECT COUNT(*) FROM gpu_kernels") == 0)
        return;
    char sql[1600];
    fputs("<h2 id=gpu>GPU kernels</h2>\n<h3>Devices</h3>\n", f);
    snprintf(sql, sizeof sql,
             MWV_GPU_DEVNAME_CTE
             " SELECT COALESCE(p.hostname, '?') AS host, k.device, MAX(dn.name) AS name,"
             " GROUP_CONCAT(DISTINCT p.rank) AS ranks, COUNT(*) AS launches,"
             " SUM(k.bw_bound) AS flagged, SUM(k.end_ns - k.start_ns) AS time_ns,"
             " MAX(k.threshold_bw) AS gbs_thr FROM gpu_kernels k JOIN processes p ON p.id ="
             " k.process_id LEFT JOIN devname dn ON dn.process_id = k.process_id AND dn.device ="
             " k.device GROUP BY p.hostname, k.device ORDER BY p.hostname, k.device LIMIT %d",
             top);
    gpu_table(f, db, "gpu_devices",
              "<th>host</th><th>device</th><th>name</th><th>ranks</th><th>launches</th>"
              "<th>bandwidth-bound launches</th><th>time</th><th>threshold GB/s</th>",
              sql, 5);
    if (mwv_scalar(db, "SELECT COUNT(*) FROM (SELECT 1 FROM gpu_kernels GROUP BY process_id,"
                       " device)") > 1) {
        fputs("<h3>Per rank (process) and device</h3>\n", f);
        snprintf(sql, sizeof sql,
                 "SELECT p.rank, p.pid, COALESCE(p.hostname, '?'), k.device, COUNT(*),"
                 " SUM(k.bw_bound), SUM(k.end_ns - k.start_ns) AS time_ns,"
                 " AVG(CASE WHEN k.flags & 2 THEN k.dram_bw END) AS gbs_mean FROM gpu_kernels k"
                 " JOIN processes p ON p.id = k.process_id GROUP BY k.process_id, k.device"
                 " ORDER BY p.rank, p.hostname, p.pid, k.device LIMIT %d",
                 top * 4);
        gpu_table(f, db, "gpu_ranks",
                  "<th>rank</th><th>pid</th><th>host</th><th>device</th><th>launches</th>"
                  "<th>bandwidth-bound launches</th><th>time</th><th>mean DRAM GB/s</th>",
                  sql, 5);
    }
    fputs("<h3>Kernels</h3>\n", f);
    snprintf(sql, sizeof sql,
             "SELECT name, device, COUNT(*), SUM(end_ns - start_ns) AS time_ns,"
             " AVG(dram_bw) AS gbs_mean, MAX(threshold_bw) AS gbs_thr, SUM(bw_bound)"
             " FROM gpu_kernels GROUP BY name, device ORDER BY 4 DESC LIMIT %d",
             top);
    gpu_table(f, db, "gpu_kernels",
              "<th>kernel</th><th>device</th><th>launches</th><th>time</th><th>mean DRAM GB/s</th>"
              "<th>threshold GB/s</th><th>bandwidth-bound launches</th>",
              sql, 6);
}

/* ---- the page ---- */

static int page(FILE *f, sqlite3 *db, const mw_html_opts *o)
{
    int top = o->top > 0 ? o->top : 15;
    cJSON *job = mwv_jobview(db);
    int nproc = cJSON_GetArraySize(cJSON_GetObjectItem(job, "processes"));
    sqlite3_stmt *s;
    int64_t nsamp = mwv_scalar(db, "SELECT COALESCE(SUM(n), 0) FROM pcc");
    char title[512] = "memwatch report";
    /* the root command: the first process whose parent was not recorded
     * (the command memwatch record ran, e.g. make -j2), not one of its children */
    if (sqlite3_prepare_v2(db, "SELECT COALESCE(NULLIF(p.cmdline, ''), p.exe) FROM processes p"
                               " ORDER BY EXISTS (SELECT 1 FROM processes q WHERE q.pid = p.ppid"
                               " AND q.hostname IS p.hostname AND q.id != p.id), p.rank,"
                               " p.t_start IS NULL, p.t_start, p.id LIMIT 1",
                           -1, &s, NULL) == SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW && col_text(s, 0))
            snprintf(title, sizeof title, "memwatch: %s", col_text(s, 0));
        sqlite3_finalize(s);
    }
    fputs("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><meta name=viewport "
          "content=\"width=device-width\"><title>",
          f);
    h(f, title);
    fprintf(f, "</title><style>%s</style></head><body><div id=tip></div><main>\n", mwh_css);
    fputs("<h1>", f);
    h(f, title);
    fputs("</h1>\n", f);
    /* the share bandwidth-bound, or the load where memory could not saturate */
    mwh_verdict(f, db, nproc, nsamp);
    if (sqlite3_prepare_v2(db, "SELECT lat_method, AVG(latency_ns), MAX(threshold_ns) FROM intervals"
                               " WHERE latency_ns IS NOT NULL AND lat_method != '' GROUP BY"
                               " lat_method",
                           -1, &s, NULL) == SQLITE_OK) {
        int sat0 = mwv_saturation_seen(db) == 0;
        while (sqlite3_step(s) == SQLITE_ROW) {
            fputs("<p class=muted>Latency method ", f);
            h(f, col_text(s, 0));
            fprintf(f, ": mean %.1f ns against a threshold of %.1f ns. %s</p>\n",
                    sqlite3_column_double(s, 1), sqlite3_column_double(s, 2),
                    sat0 ? "Where the calibration could not saturate memory no interval is "
                           "called bandwidth-bound, whatever its latency."
                         : "An interval is flagged bandwidth-bound when its loaded latency "
                           "crosses the threshold.");
        }
        sqlite3_finalize(s);
    }
    mwh_threshold_notes(f, db); /* why the threshold is what it is (META threshold_note) */
    mw_load_html(f, db); /* whose load it was, where other processes' is likely */
    const mw_view_filter *flt = &o->filter;
    if (flt->has_rank || flt->has_pid || flt->host) {
        fputs("<p class=note>Narrowed to", f);
        if (flt->has_rank)
            fprintf(f, " rank %ld", flt->rank);
        if (flt->has_pid)
            fprintf(f, " pid %ld", flt->pid);
        if (flt->host) {
            fputs(" host ", f);
            h(f, flt->host);
        }
        fputs(".</p>\n", f);
    }
    fputs("<nav><a href=\"#timeline\">timeline</a>", f);
    if (nproc > 1)
        fputs("<a href=\"#ranks\">ranks &amp; hosts</a>", f);
    if (mwh_has_regions(db))
        fputs("<a href=\"#regions\">regions</a>", f);
    fputs("<a href=\"#flagged\">top code</a><a href=\"#objects\">data objects</a>"
          "<a href=\"#flame-h\">call stacks</a><a href=\"#profile\">machine profile</a>"
          "<a href=\"#recording\">recording</a><a href=\"#losses\">losses</a></nav>\n",
          f);
    fputs("<h2 id=timeline>Timeline</h2>\n", f);
    mwh_timeline(f, db, job);
    if (nproc > 1)
        job_section(f, job, top);
    mwh_regions_section(f, db, top);
    code_tables(f, db, 1, top, "flagged");
    code_tables(f, db, 0, top, "overall");
    objects_table(f, db, top, nproc > 1);
    flame(f, db);
    gpu_section(f, db, top);
    mwh_profile_section(f, db, o->profile_path);
    recording_section(f, db);
    fprintf(f, "<p class=muted style=\"margin-top:30px\">Made by memwatch %s from ", mw_version());
    if (sqlite3_prepare_v2(db, "SELECT inputs, created FROM runs LIMIT 1", -1, &s, NULL) ==
        SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW) {
            h(f, col_text(s, 0));
            fputs(" (ingested ", f);
            h(f, col_text(s, 1));
            fputs(")", f);
        }
        sqlite3_finalize(s);
    }
    fprintf(f, ". Every figure is aggregated from the report database; see docs/report-schema.md "
               "to query it.</p>\n</main><script>%s</script></body></html>\n",
            mwh_js);
    cJSON_Delete(job);
    return ferror(f) ? -EIO : 0;
}

static int write_page(sqlite3 *db, FILE *f, const void *o)
{
    return page(f, db, o);
}

int mw_report_html(const char *db_path, const char *out_path, const mw_html_opts *opts)
{
    static const mw_html_opts none;
    const mw_html_opts *o = opts ? opts : &none;
    return mwv_write(db_path, &o->filter, out_path, write_page, o);
}
