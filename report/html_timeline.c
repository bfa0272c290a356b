/*
 * report/html_timeline.c: the timeline of the HTML report (docs/html.md): a
 * whole-run lane (every process folded into one), then a lane per MPI rank
 * or per command (a bounded number, the rest folded into "other"), each with
 * its loaded latency against the threshold, its DRAM bandwidth, its flagged
 * intervals shaded (only intervals with a reading can be), a strip of the
 * memory-load level of each column with the columns in the threshold's
 * uncertainty band marked (intervals.level, in_band: docs/saturation.md),
 * its GPU kernels and, in a lane of one process, its threads' regions
 * (report/html_region.c).
 * Aggregated before it is drawn: a fixed number of columns per lane whatever
 * the run's length. The legend names only what the lanes draw.
 *
 * May call: SQLite, cJSON, libc, report/view.c, report/html_region.c.
 * Threading: reentrant.
 */
#include "html_int.h"
#include "jobview_int.h"
#include "levels_int.h"
#include "region.h"

#include <memwatch/levels.h>

#include <stdlib.h>

#define TL_W 1100      /* plot width of the timeline, px */
#define TL_BINS 550    /* columns per lane */
#define TL_LANE_H 84   /* latency plot height */
#define TL_GPU_H 18    /* GPU kernel strip, one per device */
#define TL_GPU_DEVS 8  /* devices drawn per lane (the rest: a note) */
#define TL_LABEL_H 18
#define TL_MAX_GROUPS 12 /* lanes after the whole-run lane, "other" included */
#define TL_MAX_LANES (TL_MAX_GROUPS + 1)
#define TL_RG_ROW 13     /* a thread's region band */
#define TL_RG_THREADS 16 /* threads drawn per process */
#define TL_RG_LEVELS 3   /* nesting levels drawn per thread */
#define TL_BRIDGE 2      /* a line goes on across this many columns without a value */
#define TL_NORD_MIN 3    /* columns without a reading hatched from this many in a row */
#define TL_LVL_H 8       /* the level strip under the latency plot */
#define TL_BAND_H 3      /* its in-band marks, above it */

typedef struct lane {
    int64_t id;     /* the process, where the lane holds exactly one; else -1 */
    int nproc;      /* processes folded into the lane */
    char name[256];
    /* per column: time covered by intervals, by intervals with a reading,
     * flagged time (of intervals with a reading), latency sums, threshold */
    double cov[TL_BINS], rd[TL_BINS], fl[TL_BINS], latw[TL_BINS], latt[TL_BINS], thr[TL_BINS];
    double bytes[TL_BINS], bwt[TL_BINS];
    /* per column: time per memory-load level (mw_level), time in the band */
    double lvt[MW_LEVEL_COUNT][TL_BINS], inb[TL_BINS];
    int has_lvl;              /* some interval has a level below bound (a latency curve) */
    int has_band;             /* some interval lay in the threshold's band */
    double gbusy[TL_GPU_DEVS][TL_BINS], gflag[TL_GPU_DEVS][TL_BINS];
    int gdev[TL_GPU_DEVS];    /* the device of each strip, in ascending order */
    int64_t glaunch[TL_GPU_DEVS], gflagged[TL_GPU_DEVS];
    double maxlat;
    int has_bw, has_gpu;      /* has_gpu: the number of strips */
    int gpu_more, gpu_last;   /* devices beyond TL_GPU_DEVS, not drawn; the last one seen */
    mwh_rbands *rb; /* its threads' regions (a lane of one process) */
} lane;

/* a lane candidate: an MPI rank, or a command (the program's file name) */
typedef struct group {
    char key[128];
    int has_rank;
    double rank, time, flagged;
    int n;
    int64_t first_id;
    double pid; /* of the first process */
    char host[104];
    int lane; /* index into the lanes, or the "other" lane */
} group;

/* spread [a,b) over the bins, calling back with each overlap */
#define SPREAD(a, b, T, K, body)                                                                  \
    do {                                                                                       \
        double w_ = (T) / TL_BINS;                                                             \
        int k0_ = (int)((a) / w_);                                                             \
        if (k0_ < 0)                                                                           \
            k0_ = 0;                                                                           \
        for (int K = k0_; K < TL_BINS && K * w_ < (b); K++) {                                  \
            double lo_ = (a) > K * w_ ? (a) : K * w_, hi_ = (b) < (K + 1) * w_ ? (b) : (K + 1) * w_; \
            double ov = hi_ - lo_;                                                             \
            if (ov > 0) {                                                                      \
                body;                                                                          \
            }                                                                                  \
        }                                                                                      \
    } while (0)

/* a line through the columns where valid > 0 and v >= 0, across gaps of up
 * to TL_BRIDGE columns; nothing when no column has a value (returns whether
 * it drew) */
static int path_series(FILE *f, const double *v, const double *valid, double x0, double y0,
                       double hgt, double vmin, double vmax, const char *cls, const char *style)
{
    double bw = (double)TL_W / TL_BINS;
    int open = 0, any = 0, gap = 0;
    for (int k = 0; k < TL_BINS; k++) {
        if (valid[k] <= 0 || v[k] < 0) {
            if (++gap > TL_BRIDGE)
                open = 0;
            continue;
        }
        gap = 0;
        if (!any)
            fprintf(f, "<path class=%s %s d=\"", cls, style);
        any = 1;
        double c = v[k] > vmax ? vmax : v[k] < vmin ? vmin : v[k];
        double y = y0 + hgt - (c - vmin) / (vmax - vmin) * hgt;
        fprintf(f, "%c%.1f %.1f", open ? 'L' : 'M', x0 + (k + 0.5) * bw, y);
        open = 1;
    }
    if (any)
        fputs("\"/>\n", f);
    return any;
}

/* the file name of a program path */
static const char *prog_name(const char *exe)
{
    if (!exe || !*exe)
        return "?";
    const char *b = strrchr(exe, '/');
    return b && b[1] ? b + 1 : exe;
}

static double jnum(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    return v ? cJSON_GetNumberValue(v) : 0;
}

/* a process's group: "rank N", or its program's file name */
static void group_key(const cJSON *pr, char *key, size_t n)
{
    const cJSON *rk = cJSON_GetObjectItem(pr, "rank");
    if (rk)
        snprintf(key, n, "rank %.0f", cJSON_GetNumberValue(rk));
    else
        snprintf(key, n, "%s", prog_name(cJSON_GetStringValue(cJSON_GetObjectItem(pr, "exe"))));
}

static int cmp_group_lane(const void *pa, const void *pb)
{
    const group *a = *(group *const *)pa, *b = *(group *const *)pb;
    if (a->has_rank != b->has_rank) /* ranks first, in rank order */
        return b->has_rank - a->has_rank;
    if (a->has_rank && a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->flagged != b->flagged) /* then commands: the most flagged time first */
        return a->flagged > b->flagged ? -1 : 1;
    if (a->time != b->time)
        return a->time > b->time ? -1 : 1;
    return strcmp(a->key, b->key);
}

static int cmp_group_weight(const void *pa, const void *pb)
{
    const group *a = *(group *const *)pa, *b = *(group *const *)pb;
    if (a->flagged != b->flagged)
        return a->flagged > b->flagged ? -1 : 1;
    if (a->time != b->time)
        return a->time > b->time ? -1 : 1;
    if (a->n != b->n)
        return b->n - a->n;
    return cmp_group_lane(pa, pb);
}

/* an interval of a process, added to a lane */
static void lane_add_iv(lane *l, double Td, double a, double b, int reading, int haslat,
                        double lat, double thr, int hasb, double bytes, int fl)
{
    if (haslat && lat > l->maxlat)
        l->maxlat = lat;
    if (hasb)
        l->has_bw = 1;
    double dur = b - a;
    SPREAD(a, b, Td, bk, {
        l->cov[bk] += ov;
        if (reading) {
            l->rd[bk] += ov;
            if (fl)
                l->fl[bk] += ov;
        }
        if (haslat) {
            l->latw[bk] += lat * ov;
            l->latt[bk] += ov;
        }
        if (reading && thr > 0 && thr > l->thr[bk]) /* a threshold applied to a reading */
            l->thr[bk] = thr;
        if (hasb && dur > 0) {
            l->bytes[bk] += bytes * ov / dur;
            l->bwt[bk] += ov;
        }
    });
}

/* an interval's level (mw_level; < 0 none) and band mark, added to a lane */
static void lane_add_level(lane *l, double Td, double a, double b, int lvl, int in_band)
{
    if (lvl < 0 && !in_band)
        return;
    /* bound alone is the flagged shading: the strip is for a latency curve's
     * levels and the band */
    l->has_lvl |= lvl >= 0 && lvl != MW_LEVEL_BOUND;
    l->has_band |= in_band;
    SPREAD(a, b, Td, bk, {
        if (lvl >= 0 && lvl < MW_LEVEL_COUNT)
            l->lvt[lvl][bk] += ov;
        if (in_band)
            l->inb[bk] += ov;
    });
}

/* the level of most of a column's time with a level (a tie: the higher);
 * -1 where none has one */
static int col_level(const lane *l, int b)
{
    int best = -1;
    for (int v = 0; v < MW_LEVEL_COUNT; v++)
        if (l->lvt[v][b] > 0 && (best < 0 || l->lvt[v][b] >= l->lvt[best][b]))
            best = v;
    return best;
}

static const char *const lvl_colour[MW_LEVEL_COUNT] = {"#9ecae1", "#f2c14e", "#ff7f0e",
                                                       "#d62728"};

/* the level strip at y (runs of one level as one rect, class lvl, its level
 * in data-level; only where the lane has levels below bound), the in-band
 * marks above it */
static void draw_levels(FILE *f, const lane *l, double x0, double y, double bwid)
{
    fputs("<g class=levels>", f);
    for (int b = 0; l->has_lvl && b < TL_BINS;) {
        int v = col_level(l, b), e = b + 1;
        while (e < TL_BINS && col_level(l, e) == v)
            e++;
        if (v >= 0)
            fprintf(f, "<rect class=lvl data-level=%s x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                       "height=\"%d\" fill=\"%s\"/>",
                    mw_level_name((mw_level)v), x0 + b * bwid, y + TL_BAND_H + 1, (e - b) * bwid,
                    TL_LVL_H, lvl_colour[v]);
        b = e;
    }
    for (int b = 0; b < TL_BINS;) {
        int in = l->inb[b] > 0, e = b + 1;
        while (e < TL_BINS && (l->inb[e] > 0) == in)
            e++;
        if (in)
            fprintf(f, "<rect class=inband x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
                       "fill=\"#6a3d9a\"/>",
                    x0 + b * bwid, y, (e - b) * bwid, TL_BAND_H);
        b = e;
    }
    fputs("</g>\n", f);
}

/* the legend's entries of the level strip (sat: the profile could saturate
 * memory: 1, 0, -1 unknown) */
static void legend_levels(FILE *f, int any_lvl, int any_band, int sat)
{
    if (any_lvl) {
        fputs("<span data-k=lvl id=tl-levels>memory load, the strip under each lane "
              "(share of the calibrated peak bandwidth, from the latency curve):", f);
        for (int v = MW_LEVEL_COUNT - 1; v >= 0; v--) {
            if (v == MW_LEVEL_BOUND && sat == 0)
                continue; /* nothing is bound where memory could not saturate */
            fprintf(f, " <i class=sw style=\"background:%s\"></i>%s", lvl_colour[v],
                    v == MW_LEVEL_BOUND ? "bound (flagged)"
                    : v == MW_LEVEL_HIGH ? "high (&ge; 80 %)"
                    : v == MW_LEVEL_MEDIUM ? "medium (&ge; 50 %)"
                                           : "low");
        }
        fputs("</span>", f);
    }
    if (any_band)
        fprintf(f, "<span data-k=band id=tl-band><i class=sw style=\"height:3px;"
                   "background:#6a3d9a\"></i>latency within the threshold's uncertainty band%s"
                   "</span>",
                sat == 0 ? "" : " (possibly bound)");
}

static void lane_add_kernel(lane *l, double Td, int dev, double a, double b, int fl)
{
    int g = 0;
    while (g < l->has_gpu && l->gdev[g] != dev)
        g++;
    if (g == l->has_gpu) { /* a new device (rows come in device order) */
        if (g == TL_GPU_DEVS) {
            if (!l->gpu_more || l->gpu_last != dev)
                l->gpu_more++;
            l->gpu_last = dev;
            return;
        }
        l->gdev[l->has_gpu++] = dev;
    }
    l->glaunch[g]++;
    l->gflagged[g] += fl != 0;
    SPREAD(a, b, Td, bk, {
        l->gbusy[g][bk] += ov;
        if (fl)
            l->gflag[g][bk] += ov;
    });
}

/* a column's state: 0 nothing, 1 no interval, 2 no reading, 3 + q flagged
 * (q tenths of the time with a reading). Intervals without a reading are
 * never flagged; a stretch of them is hatched where it is at least
 * TL_NORD_MIN columns wide (a reading every other interval leaves single
 * columns without one: those stay blank) */
static int col_state_1(const lane *l, int b)
{
    if (l->cov[b] <= 0)
        return 1;
    if (l->rd[b] <= 0)
        return 2;
    int q = (int)lround(l->fl[b] / l->rd[b] * 10);
    return q > 0 ? 3 + q : 0;
}

static int col_state(const lane *l, int b)
{
    int st = col_state_1(l, b);
    if (st != 2)
        return st;
    int lo = b, hi = b;
    while (lo > 0 && b - lo < TL_NORD_MIN && col_state_1(l, lo - 1) == 2)
        lo--;
    while (hi < TL_BINS - 1 && hi - lo + 1 < TL_NORD_MIN && col_state_1(l, hi + 1) == 2)
        hi++;
    return hi - lo + 1 >= TL_NORD_MIN ? 2 : 0;
}

/* every interval into the whole-run lane and its process's lane (map:
 * process id -> lane, 0 none; sat: the profile could saturate memory, 1, 0
 * or -1 unknown: at 0 nothing is shaded bound) */
static void lanes_add_intervals(sqlite3 *db, lane *L, const int *map, int64_t maxid, double Td,
                                int sat)
{
    sqlite3_stmt *s;
    /* a database of schema 1 has no level columns */
    const char *ivq = mwv_has_levels(db)
                          ? "SELECT i.process_id, i.t_start + c.off, i.t_end + c.off, i.latency_ns,"
                            " i.threshold_ns, i.bytes, i.bw_bound, i.flags, i.level, i.in_band"
                            " FROM intervals i JOIN pclock c ON c.process_id = i.process_id"
                          : "SELECT i.process_id, i.t_start + c.off, i.t_end + c.off, i.latency_ns,"
                            " i.threshold_ns, i.bytes, i.bw_bound, i.flags, NULL, NULL"
                            " FROM intervals i JOIN pclock c ON c.process_id = i.process_id";
    if (sqlite3_prepare_v2(db, ivq, -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(s, 0);
            int lk = id >= 0 && id <= maxid ? map[id] : 0;
            double a = (double)sqlite3_column_int64(s, 1), b = (double)sqlite3_column_int64(s, 2);
            int haslat = sqlite3_column_type(s, 3) != SQLITE_NULL;
            double lat = sqlite3_column_double(s, 3), thr = sqlite3_column_double(s, 4);
            int hasb = sqlite3_column_type(s, 5) != SQLITE_NULL;
            double bytes = sqlite3_column_double(s, 5);
            /* nothing is shaded bound where memory could not saturate */
            int fl = sat != 0 && sqlite3_column_int(s, 6);
            /* a reading: a latency or a bandwidth measurement (MWR_IV_LAT_VALID,
             * MWR_IV_BW_VALID); only those can be flagged */
            int reading = (sqlite3_column_int(s, 7) & 6) != 0 && (haslat || hasb);
            lane_add_iv(&L[0], Td, a, b, reading, haslat, lat, thr, hasb, bytes, fl);
            if (lk > 0)
                lane_add_iv(&L[lk], Td, a, b, reading, haslat, lat, thr, hasb, bytes, fl);
            const char *lv = col_text(s, 8);
            int v = 0, inb = sqlite3_column_int(s, 9) == 1;
            while (lv && v < MW_LEVEL_COUNT && strcmp(lv, mw_level_name((mw_level)v)))
                v++;
            v = lv && v < MW_LEVEL_COUNT ? v : -1;
            lane_add_level(&L[0], Td, a, b, v, inb);
            if (lk > 0)
                lane_add_level(&L[lk], Td, a, b, v, inb);
        }
        sqlite3_finalize(s);
    }
}

/* the lanes: the whole run first, then a lane per MPI rank or per command
 * (at most TL_MAX_GROUPS, the rest folded into "other"). Returns the
 * number of lanes; map[process id] = its lane (0: none but the whole run). */
static int make_lanes(sqlite3 *db, cJSON *job, lane *L, int *map, int64_t maxid, int *nother_out)
{
    cJSON *arr = cJSON_GetObjectItem(job, "processes"), *pr;
    int nproc = cJSON_GetArraySize(arr);
    lane *w = &L[0];
    w->id = -1;
    w->nproc = nproc;
    if (nproc == 1) {
        char one[200];
        w->id = (int64_t)jnum(cJSON_GetArrayItem(arr, 0), "id");
        mwv_proc_label(db, w->id, one, sizeof one);
        snprintf(w->name, sizeof w->name, "whole run: %s", one);
        *nother_out = 0;
        return 1;
    }
    snprintf(w->name, sizeof w->name, "whole run: %d processes folded into one", nproc);
    group *g = calloc((size_t)nproc, sizeof *g);
    group **ord = calloc((size_t)nproc, sizeof *ord);
    int ng = 0;
    if (!g || !ord) {
        free(g);
        free(ord);
        return 1;
    }
    cJSON_ArrayForEach(pr, arr)
    {
        const cJSON *rk = cJSON_GetObjectItem(pr, "rank");
        char key[128];
        group_key(pr, key, sizeof key);
        int j = 0;
        while (j < ng && (g[j].has_rank != (rk != NULL) || strcmp(g[j].key, key)))
            j++;
        if (j == ng) {
            snprintf(g[j].key, sizeof g[j].key, "%s", key);
            g[j].has_rank = rk != NULL;
            g[j].rank = rk ? cJSON_GetNumberValue(rk) : 0;
            g[j].first_id = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(pr, "id"));
            g[j].pid = cJSON_GetNumberValue(cJSON_GetObjectItem(pr, "pid"));
            const char *hn = cJSON_GetStringValue(cJSON_GetObjectItem(pr, "host"));
            snprintf(g[j].host, sizeof g[j].host, "%s", hn ? hn : "?");
            ng++;
        }
        g[j].n++;
        g[j].time += cJSON_GetNumberValue(cJSON_GetObjectItem(pr, "time_ns"));
        g[j].flagged += cJSON_GetNumberValue(cJSON_GetObjectItem(pr, "flagged_ns"));
    }
    for (int j = 0; j < ng; j++)
        ord[j] = &g[j];
    /* which groups get a lane: all, or the heaviest TL_MAX_GROUPS - 1 */
    int keep = ng <= TL_MAX_GROUPS ? ng : TL_MAX_GROUPS - 1;
    qsort(ord, (size_t)ng, sizeof *ord, cmp_group_weight);
    for (int j = 0; j < ng; j++)
        ord[j]->lane = j < keep ? 0 : -1;
    qsort(ord, (size_t)keep, sizeof *ord, cmp_group_lane);
    int nl = 1;
    for (int j = 0; j < keep; j++) {
        lane *l = &L[nl];
        group *q = ord[j];
        q->lane = nl;
        l->nproc = q->n;
        l->id = q->n == 1 ? q->first_id : -1;
        if (q->n == 1 && q->has_rank) {
            mwv_proc_label(db, q->first_id, l->name, sizeof l->name);
        } else if (q->n == 1) {
            snprintf(l->name, sizeof l->name, "%.100s: 1 process (pid %.0f @ %.100s)", q->key,
                     q->pid, q->host);
        } else
            snprintf(l->name, sizeof l->name, "%s: %d processes", q->key, q->n);
        nl++;
    }
    int nother = 0, other_groups = 0;
    if (keep < ng) {
        lane *l = &L[nl];
        l->id = -1;
        for (int j = keep; j < ng; j++) {
            ord[j]->lane = nl;
            l->nproc += ord[j]->n;
            other_groups++;
        }
        nother = l->nproc;
        snprintf(l->name, sizeof l->name, "other: %d processes of %d %s", l->nproc, other_groups,
                 ord[keep]->has_rank ? "more ranks" : "more commands");
        nl++;
    }
    /* each process to its group's lane */
    cJSON_ArrayForEach(pr, arr)
    {
        const cJSON *rk = cJSON_GetObjectItem(pr, "rank");
        char key[128];
        group_key(pr, key, sizeof key);
        int64_t id = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(pr, "id"));
        for (int j = 0; j < ng; j++)
            if (g[j].has_rank == (rk != NULL) && !strcmp(g[j].key, key)) {
                if (id >= 0 && id <= maxid)
                    map[id] = g[j].lane;
                break;
            }
    }
    free(g);
    free(ord);
    *nother_out = nother;
    return nl;
}

/* The timeline's geometry and what its parts share, set once by mwh_timeline
 * and tl_geometry. */
typedef struct tl_geom {
    int nl;                 /* lanes */
    double Td;              /* the run's span (ns) */
    int sat;                /* mwv_saturation_seen: 0 where memory could not saturate */
    double x0, pw, bwid;    /* the plot's left edge, its width and a column's */
    double W, H;            /* the picture's size */
    double ys[TL_MAX_LANES], ye[TL_MAX_LANES]; /* each lane's top and bottom */
} tl_geom;

/* What the timeline draws (any lane, any column): the legend names only that. */
typedef struct tl_drawn {
    int fl, none, nord, lat, thr, bw, gpu, lvl, band, rg;
} tl_drawn;

/* The readout's data for the page's script: rounded per-column values, -1
 * unmeasured (fl: -1 where the column has no reading). */
static void tl_readout(FILE *f, const lane *L, const tl_geom *tg)
{
    double Ts = tg->Td / 1e9;
    fprintf(f, "<script>window.MW_TL={w:%.0f,x0:%.0f,pw:%.0f,bins:%d,T:%.6f,lanes:[", tg->W,
            tg->x0, tg->pw, TL_BINS, Ts);
    for (int k = 0; k < tg->nl; k++) {
        const lane *l = &L[k];
        fprintf(f, "%s{y0:%.1f,y1:%.1f,n:%d,name:", k ? "," : "", tg->ys[k], tg->ye[k], l->nproc);
        mwv_json_str(f, l->name);
        fputs(",lat:[", f);
        for (int b = 0; b < TL_BINS; b++)
            fprintf(f, "%s%.1f", b ? "," : "", l->latt[b] > 0 ? l->latw[b] / l->latt[b] : -1);
        fputs("],thr:[", f);
        for (int b = 0; b < TL_BINS; b++)
            fprintf(f, "%s%.1f", b ? "," : "", l->cov[b] > 0 ? l->thr[b] : -1);
        fputs("],fl:[", f);
        for (int b = 0; b < TL_BINS; b++)
            fprintf(f, "%s%.2f", b ? "," : "", l->rd[b] > 0 ? l->fl[b] / l->rd[b] : -1);
        fputs("]", f);
        if (l->has_bw) {
            fputs(",bw:[", f);
            for (int b = 0; b < TL_BINS; b++)
                fprintf(f, "%s%.2f", b ? "," : "", l->bwt[b] > 0 ? l->bytes[b] / l->bwt[b] : -1);
            fputs("]", f);
        }
        fputs("}", f);
    }
    fputs("]};</script>\n", f);
}

/* The time axis under the lanes, the cursor line, and the end of the picture. */
static void tl_time_axis(FILE *f, const tl_geom *tg)
{
    double Ts = tg->Td / 1e9, step = nice_max(Ts / 8);
    if (step > Ts / 4)
        step /= 2;
    fprintf(f, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n", tg->x0,
            tg->x0 + tg->pw, tg->H - 24, tg->H - 24);
    for (double t = 0; t <= Ts * 1.0001; t += step) {
        double x = tg->x0 + t / Ts * tg->pw;
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g s</text>\n",
                x, x, tg->H - 24, tg->H - 20, x, tg->H - 8, round(t * 1e6) / 1e6);
    }
    fprintf(f, "<line id=cursor y1=\"0\" y2=\"%.0f\" stroke=\"#333\" stroke-width=\"0.8\" "
               "visibility=\"hidden\"/>\n</svg></div>\n",
            tg->H - 24);
}

/* A lane's GPU strips, one per device, and the note on devices not drawn. */
static void tl_lane_gpu(FILE *f, const lane *l, double ly, double lvh, const tl_geom *tg)
{
    /* a strip per device: kernels busy (height: share of the column),
     * red where a launch in the column was flagged */
    for (int g = 0; g < l->has_gpu; g++) {
        double gy = ly + TL_LANE_H + lvh + 4 + g * (TL_GPU_H + 4);
        fprintf(f, "<g class=gpustrip data-device=\"%d\" data-launches=\"%lld\" "
                   "data-flagged=\"%lld\"><title>GPU %d: %lld launches, %lld "
                   "bandwidth-bound</title><rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" "
                   "height=\"%d\" fill=\"#fafafa\" stroke=\"#e0e0e0\"/><text x=\"%.0f\" "
                   "y=\"%.1f\" text-anchor=\"end\">GPU %d</text>",
                l->gdev[g], (long long)l->glaunch[g], (long long)l->gflagged[g], l->gdev[g],
                (long long)l->glaunch[g], (long long)l->gflagged[g], tg->x0, gy, tg->pw, TL_GPU_H,
                tg->x0 - 4, gy + 13, l->gdev[g]);
        for (int b = 0; b < TL_BINS; b++) {
            double w_ = tg->Td / TL_BINS;
            double busy = fmin(1, l->gbusy[g][b] / w_), fl = fmin(1, l->gflag[g][b] / w_);
            if (busy > 0)
                fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                           "fill=\"%s\"/>",
                        tg->x0 + b * tg->bwid, gy + TL_GPU_H * (1 - fmax(busy, 0.15)), tg->bwid,
                        TL_GPU_H * fmax(busy, 0.15), fl > 0 ? "#d62728" : "#7f7f7f");
        }
        fputs("</g>\n", f);
    }
    if (l->gpu_more)
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#666\">%d "
                   "more device%s: see the GPU device table</text>\n",
                tg->x0 + tg->pw, ly + TL_LANE_H + lvh + 4 + l->has_gpu * (TL_GPU_H + 4) + 10,
                l->gpu_more, l->gpu_more == 1 ? "" : "s");
}

/* A lane's columns: no interval grey, no reading hatched, flagged red. */
static void tl_lane_states(FILE *f, const lane *l, double ly, const tl_geom *tg)
{
    /* no interval: grey; intervals without a reading: hatched (never
     * red); flagged: red, shaded by the share of the time with a reading */
    for (int b = 0; b < TL_BINS;) {
        int st = col_state(l, b), e = b + 1;
        while (e < TL_BINS && col_state(l, e) == st)
            e++;
        if (st == 1)
            fprintf(f, "<rect class=none x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
                       "fill=\"#eef0f3\"/>",
                    tg->x0 + b * tg->bwid, ly, (e - b) * tg->bwid, TL_LANE_H);
        else if (st == 2)
            fprintf(f, "<rect class=nord x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
                       "fill=\"url(#nord-pat)\"/>",
                    tg->x0 + b * tg->bwid, ly, (e - b) * tg->bwid, TL_LANE_H);
        else if (st > 3)
            fprintf(f, "<rect class=fl x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
                       "fill=\"#d62728\" fill-opacity=\"%.2f\"/>",
                    tg->x0 + b * tg->bwid, ly, (e - b) * tg->bwid, TL_LANE_H,
                    0.08 + 0.32 * (st - 3) / 10.0);
        b = e;
    }
    fputc('\n', f);
}

/* A lane's group, its name and flagged share, and the plot's frame. */
static void tl_lane_head(FILE *f, const lane *l, int k, double ly, const tl_geom *tg)
{
    fprintf(f, "<g class=lane data-lane=\"%d\" data-processes=\"%d\">", k, l->nproc);
    fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" font-weight=\"600\">", tg->x0, tg->ys[k] + 12);
    /* the name, cut to what fits beside the share */
    char nm[160];
    if (strlen(l->name) > 120)
        snprintf(nm, sizeof nm, "%.117s...", l->name);
    else
        snprintf(nm, sizeof nm, "%s", l->name);
    h(f, nm);
    /* the share as drawn: flagged time over the time with a reading */
    double rdt = 0, flt = 0;
    for (int b = 0; b < TL_BINS; b++) {
        rdt += l->rd[b];
        flt += l->fl[b];
    }
    if (tg->sat == 0) /* nothing is called bound where memory could not saturate */
        fprintf(f, "</text><text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">nothing "
                   "called bandwidth-bound: the calibration could not saturate memory"
                   "</text>\n",
                tg->x0 + tg->pw, tg->ys[k] + 12);
    else
        fprintf(f, "</text><text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">"
                   "bandwidth-bound %.1f%% of its time with a reading</text>\n",
                tg->x0 + tg->pw, tg->ys[k] + 12, rdt > 0 ? 100 * flt / rdt : 0.0);
    fprintf(f, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%d\" fill=\"#fff\" "
               "stroke=\"%s\"/>\n",
            tg->x0, ly, tg->pw, TL_LANE_H, k == 0 && tg->nl > 1 ? "#1d2330" : "#c9ced6");
}

/* One lane: its scales, head, columns, latency, threshold and bandwidth lines, level strip,
 * GPU strips and region bands. */
static void tl_lane(FILE *f, lane *L, int k, const tl_geom *tg)
{
    lane *l = &L[k];
    double ly = tg->ys[k] + TL_LABEL_H;
    double thrmax = 0;
    for (int b = 0; b < TL_BINS; b++)
        if (l->thr[b] > thrmax)
            thrmax = l->thr[b];
    double vmax = nice_max(fmax(l->maxlat, thrmax * 1.25));
    double mean[TL_BINS], thr[TL_BINS], bw[TL_BINS], bwmax = 0;
    for (int b = 0; b < TL_BINS; b++) {
        mean[b] = l->latt[b] > 0 ? l->latw[b] / l->latt[b] : -1;
        thr[b] = l->thr[b];
        bw[b] = l->bwt[b] > 0 ? l->bytes[b] / l->bwt[b] : -1; /* bytes/ns = GB/s */
        if (bw[b] > bwmax)
            bwmax = bw[b];
    }
    bwmax = nice_max(bwmax);
    /* the latency axis starts below the lowest value (idle latency is far
     * from 0; from 0 the rise to the threshold would be squeezed) */
    double lo = thrmax > 0 ? thrmax : vmax;
    for (int b = 0; b < TL_BINS; b++)
        if (mean[b] >= 0 && mean[b] < lo)
            lo = mean[b];
    double vmin = 0;
    if (lo * 0.8 > 1) {
        double m = pow(10, floor(log10(lo * 0.8)));
        vmin = floor(lo * 0.8 / m) * m;
    }
    if (vmin >= vmax)
        vmin = 0;
    tl_lane_head(f, l, k, ly, tg);
    tl_lane_states(f, l, ly, tg);
    /* axes */
    fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%g ns</text>"
               "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%g ns</text>\n",
            tg->x0 - 4, ly + 9, vmax, tg->x0 - 4, ly + TL_LANE_H, vmin);
    if (l->has_bw)
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" fill=\"#2ca02c\">%g GB/s</text>\n",
                tg->x0 + tg->pw + 4, ly + 9, bwmax);
    path_series(f, thr, l->cov, tg->x0, ly, TL_LANE_H, vmin, vmax, "thr",
                "fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\" "
                "stroke-dasharray=\"5 3\"");
    if (l->has_bw)
        path_series(f, bw, l->bwt, tg->x0, ly, TL_LANE_H, 0, bwmax, "bw",
                    "fill=\"none\" stroke=\"#2ca02c\" stroke-width=\"1.2\"");
    path_series(f, mean, l->latt, tg->x0, ly, TL_LANE_H, vmin, vmax, "lat",
                "fill=\"none\" stroke=\"#1f4e9c\" stroke-width=\"1.4\"");
    /* the level strip, right under the plot; what follows moves down */
    double lvh = l->has_lvl || l->has_band ? TL_LVL_H + TL_BAND_H + 4 : 0;
    if (lvh > 0)
        draw_levels(f, l, tg->x0, ly + TL_LANE_H + 2, tg->bwid);
    tl_lane_gpu(f, l, ly, lvh, tg);
    mwh_rbands_draw(f, l->rb, tg->x0,
                    ly + TL_LANE_H + lvh + l->has_gpu * (TL_GPU_H + 4) + (l->gpu_more ? 14 : 0) + 4,
                    tg->pw, TL_RG_ROW);
    fputs("</g>\n", f);
    if (k == 0 && tg->nl > 1) /* the whole run apart from the lanes below */
        fprintf(f, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" "
                   "stroke-dasharray=\"2 3\"/>\n",
                8.0, tg->W - 8, tg->ye[0] - 8, tg->ye[0] - 8);
}

/* What the lanes are, the legend of what is drawn, and the picture's start. */
static void tl_legend(FILE *f, const tl_drawn *d, int nproc, int nother, const tl_geom *tg)
{
    if (tg->nl > 1)
        fprintf(f, "<p class=muted id=tl-lanes>The first lane folds all %d processes into one "
                   "timeline: per column, the share of the time with a reading that was flagged, "
                   "and the mean loaded latency. Then a lane per %s%s.</p>\n",
                nproc, "MPI rank or command (the program's file name)",
                nother ? ", the least bound ones folded into \"other\"" : "");
    fputs("<div class=legend id=tl-legend>", f);
    if (d->fl)
        fputs("<span data-k=fl><i class=sw style=\"background:rgba(214,39,40,.35)\"></i>flagged "
              "bandwidth-bound (shade: share of the column's time with a reading)</span>",
              f);
    if (d->lat)
        fputs("<span data-k=lat><i class=sw style=\"height:2px;background:#1f4e9c\"></i>loaded "
              "latency (ns, left axis)</span>",
              f);
    if (d->thr)
        fputs("<span data-k=thr><i class=sw style=\"height:0;border-top:2px dashed #d62728\"></i>"
              "saturation threshold</span>",
              f);
    legend_levels(f, d->lvl, d->band, tg->sat);
    if (d->bw)
        fputs("<span data-k=bw><i class=sw style=\"height:2px;background:#2ca02c\"></i>DRAM "
              "bandwidth (GB/s, right axis)</span>",
              f);
    if (d->gpu)
        fputs("<span data-k=gpu><i class=sw style=\"background:#7f7f7f\"></i>GPU kernels (<b "
              "style=\"color:#d62728\">red</b>: flagged)</span>",
              f);
    if (d->nord)
        fputs("<span data-k=nord><i class=sw style=\"background:#fff;border:1px solid #c9ced6;"
              "background-image:repeating-linear-gradient(45deg,#c9ced6 0 1px,transparent 1px 4px)"
              "\"></i>intervals without a reading</span>",
              f);
    if (d->none)
        fputs("<span data-k=none><i class=sw style=\"background:#eef0f3;border:1px solid #c9ced6\">"
              "</i>no interval (not running)</span>",
              f);
    if (d->rg)
        fputs("<span data-k=rgn><i class=sw style=\"background:#4e79a7\"></i>regions per thread (a "
              "row per nesting level; colours as in the region table)</span>",
              f);
    fputs("</div>\n", f);
    fprintf(f,
            "<div class=card><svg id=tl xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
            "width=\"%.0f\" height=\"%.0f\" style=\"width:100%%;height:auto\" role=img "
            "aria-label=\"timeline\">\n",
            tg->W, tg->H, tg->W, tg->H);
    if (d->nord)
        fputs("<defs><pattern id=nord-pat width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
              "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fff\"/>"
              "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#c9ced6\" stroke-width=\"1.5\"/>"
              "</pattern></defs>\n",
              f);
}

/* What is drawn, over all lanes and columns, into d (zeroed by the caller). */
static void tl_drawn_scan(const lane *L, int nl, tl_drawn *d)
{
    for (int k = 0; k < nl; k++) {
        for (int b = 0; b < TL_BINS; b++) {
            d->lvl |= L[k].has_lvl && col_level(&L[k], b) >= 0;
            d->band |= L[k].inb[b] > 0;
            int st = col_state(&L[k], b);
            d->none |= st == 1;
            d->nord |= st == 2;
            d->fl |= st > 3;
            d->lat |= L[k].latt[b] > 0;
            d->thr |= L[k].cov[b] > 0 && L[k].thr[b] >= 0;
            d->bw |= L[k].bwt[b] > 0;
        }
        d->gpu |= L[k].has_gpu > 0;
    }
}

/* Each lane's region bands (a process's threads); whether any lane has one. */
static int tl_regions_load(sqlite3 *db, lane *L, int nl, double Td)
{
    int any_rg = 0;
    for (int k = 0; k < nl; k++) {
        /* region bands are a process's threads: lanes of one process */
        if (L[k].id >= 0 && (k > 0 || nl == 1))
            L[k].rb = mwh_rbands_load(db, L[k].id, Td, TL_BINS, TL_RG_THREADS, TL_RG_LEVELS);
        any_rg |= mwh_rbands_rows(L[k].rb) > 0;
    }
    return any_rg;
}

/* The geometry into tg (its nl set): the plot's place, each lane's top and
 * bottom, and the picture's size. */
static void tl_geometry(const lane *L, tl_geom *tg)
{
    tg->x0 = 64;
    tg->pw = TL_W;
    tg->bwid = tg->pw / TL_BINS;
    double y = 8;
    for (int k = 0; k < tg->nl; k++) {
        int rows = mwh_rbands_rows(L[k].rb);
        tg->ys[k] = y;
        y += TL_LABEL_H + TL_LANE_H + (L[k].has_lvl || L[k].has_band ? TL_LVL_H + TL_BAND_H + 4 : 0) +
             L[k].has_gpu * (TL_GPU_H + 4) + (L[k].gpu_more ? 14 : 0) +
             (rows ? rows * TL_RG_ROW + 4 : 0) + 14 + (k == 0 && tg->nl > 1 ? 10 : 0);
        tg->ye[k] = y;
    }
    tg->H = y + 28;
    tg->W = tg->x0 + tg->pw + 64;
}

/* GPU kernels: in the lane of their process (in the whole-run lane when it is the only
 * one). */
static void tl_add_kernels(sqlite3 *db, lane *L, int nl, const int *map, int64_t maxid, double Td)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT k.process_id, k.start_ns + c.goff, k.end_ns + c.goff,"
                           " k.bw_bound, k.device FROM gpu_kernels k JOIN pclock c ON"
                           " c.process_id = k.process_id ORDER BY k.device, k.process_id",
                           -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(s, 0);
            int lk = nl == 1 ? 0 : id >= 0 && id <= maxid ? map[id] : 0;
            if (nl > 1 && lk == 0)
                continue;
            lane_add_kernel(&L[lk], Td, sqlite3_column_int(s, 4),
                            (double)sqlite3_column_int64(s, 1), (double)sqlite3_column_int64(s, 2),
                            sqlite3_column_int(s, 3));
        }
        sqlite3_finalize(s);
    }
}

void mwh_timeline(FILE *f, sqlite3 *db, cJSON *job)
{
    int64_t T = mwv_scalar(db, "SELECT MAX(e) FROM (SELECT MAX(i.t_end + c.off) AS e FROM intervals"
                               " i JOIN pclock c ON c.process_id = i.process_id UNION ALL SELECT"
                               " MAX(k.end_ns + c.goff) FROM gpu_kernels k JOIN pclock c ON"
                               " c.process_id = k.process_id)");
    int nproc = cJSON_GetArraySize(cJSON_GetObjectItem(job, "processes"));
    if (T <= 0 || nproc == 0) {
        fputs("<p class=note>No interval was recorded: the run ended before its first interval, "
              "or it was recorded with MEMWATCH_METHOD=none.</p>\n",
              f);
        return;
    }
    int64_t maxid = mwv_scalar(db, "SELECT COALESCE(MAX(id), 0) FROM processes");
    lane *L = calloc(TL_MAX_LANES, sizeof *L);
    int *map = calloc((size_t)maxid + 1, sizeof *map);
    if (!L || !map) {
        free(L);
        free(map);
        return;
    }
    int nother = 0;
    int nl = make_lanes(db, job, L, map, maxid, &nother);
    for (int k = 0; k < nl; k++)
        for (int b = 0; b < TL_BINS; b++)
            L[k].thr[b] = -1;
    double Td = (double)T;
    int sat = mwv_saturation_seen(db);
    lanes_add_intervals(db, L, map, maxid, Td, sat);
    tl_add_kernels(db, L, nl, map, maxid, Td);
    free(map);
    tl_drawn d = {0};
    d.rg = tl_regions_load(db, L, nl, Td);
    tl_drawn_scan(L, nl, &d);
    tl_geom tg = {.nl = nl, .Td = Td, .sat = sat};
    tl_geometry(L, &tg);
    tl_legend(f, &d, nproc, nother, &tg);
    for (int k = 0; k < nl; k++)
        tl_lane(f, L, k, &tg);
    tl_time_axis(f, &tg);
    tl_readout(f, L, &tg);
    for (int k = 0; k < nl; k++) {
        mwh_rbands_note(f, L[k].rb, L[k].name);
        mwh_rbands_free(L[k].rb);
    }
    free(L);
}
