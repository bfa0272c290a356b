/*
 * calibrate/bench_plot.c: small self-contained SVG line charts of the
 * calibration results: read sweep (bandwidth vs delay, one line per thread
 * count), loaded latency (latency vs bandwidth), memory-level parallelism
 * (speed-up vs chains) and the latency ladder (latency vs footprint, with the
 * kernel's cache sizes marked). May call: libc. Not reentrant (static
 * scratch arrays); prints nothing.
 */
#include "bench_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define W 760
#define H 460
#define ML 80
#define MR 150
#define MT 40
#define MB 60

struct series {
    char name[32];
    const double *x, *y;
    unsigned n;
};

struct chart {
    const char *title, *xlabel, *ylabel;
    int xlog, ylog;
    const struct series *s;
    unsigned ns;
    const double *vlines; /* vertical marks (x values), may be NULL */
    const char *const *vlabels;
    unsigned nv;
    double hline;         /* horizontal mark when > 0 */
    const char *hlabel;
    const double *hlines; /* more horizontal marks, coloured as series k (may be NULL) */
    const char *const *hlabels;
    unsigned nh;
};

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                     "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22",
                                     "#393b79", "#637939"};

static double tx(double v, int lg)
{
    return lg ? log10(v > 0 ? v : 1e-300) : v;
}

static void nice_ticks(double lo, double hi, int lg, double *t, unsigned *nt)
{
    *nt = 0;
    if (lg) {
        for (double e = floor(lo); e <= ceil(hi) && *nt < 24; e += 1)
            if (e >= lo - 1e-9 && e <= hi + 1e-9)
                t[(*nt)++] = e;
        return;
    }
    double span = hi - lo, raw = span / 5, mag = pow(10, floor(log10(raw > 0 ? raw : 1)));
    double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag
                                                                                       : 10 * mag;
    for (double v = ceil(lo / step) * step; v <= hi + 1e-9 * step && *nt < 24; v += step)
        t[(*nt)++] = v;
}

static void fmt_val(char *b, size_t n, double v, int lg)
{
    double x = lg ? pow(10, v) : v;
    double ax = fabs(x);
    if (ax >= 1e9 && fmod(ax, 1 << 30) == 0)
        snprintf(b, n, "%gG", x / (1 << 30));
    else if (ax >= 1e6 && lg)
        snprintf(b, n, "%.3g", x);
    else
        snprintf(b, n, "%g", x);
}

static int chart_write(const char *path, const struct chart *c)
{
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    for (unsigned k = 0; k < c->ns; k++)
        for (unsigned i = 0; i < c->s[k].n; i++) {
            double x = tx(c->s[k].x[i], c->xlog), y = tx(c->s[k].y[i], c->ylog);
            if (!isfinite(x) || !isfinite(y))
                continue;
            x0 = fmin(x0, x);
            x1 = fmax(x1, x);
            y0 = fmin(y0, y);
            y1 = fmax(y1, y);
        }
    if (c->hline > 0) {
        y0 = fmin(y0, tx(c->hline, c->ylog));
        y1 = fmax(y1, tx(c->hline, c->ylog));
    }
    for (unsigned i = 0; i < c->nh; i++)
        if (c->hlines[i] > 0) {
            y0 = fmin(y0, tx(c->hlines[i], c->ylog));
            y1 = fmax(y1, tx(c->hlines[i], c->ylog));
        }
    if (!isfinite(x0) || !isfinite(y0))
        return MW_ERR_NODATA;
    if (!c->ylog) {
        y0 = fmin(y0, 0);
        y1 *= 1.08;
    } else {
        y0 = floor(y0 * 4) / 4;
        y1 = ceil(y1 * 4) / 4;
    }
    if (x1 - x0 < 1e-12)
        x1 = x0 + 1;
    if (y1 - y0 < 1e-12)
        y1 = y0 + 1;
    /* the owner's only, whatever the umask (also a file written before) */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0)
        (void)fchmod(fd, 0600);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return -e;
    }
    double pw = W - ML - MR, ph = H - MT - MB;
    /* the legend's margin grows to the longest name (about 7 px a character
     * at 12 px), so that no name runs past the picture's edge */
    int width = W;
    for (unsigned k = 0; k < c->ns; k++) {
        int need = ML + (int)pw + 38 + 7 * (int)strlen(c->s[k].name) + 8;
        if (need > width)
            width = need;
    }
#define PX(v) (ML + ((v) - x0) / (x1 - x0) * pw)
#define PY(v) (MT + ph - ((v) - y0) / (y1 - y0) * ph)
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">%s</text>\n",
            width, H, ML, c->title);
    double t[24];
    unsigned nt;
    char lab[32];
    nice_ticks(x0, x1, c->xlog, t, &nt);
    for (unsigned i = 0; i < nt; i++) {
        fmt_val(lab, sizeof lab, t[i], c->xlog);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                PX(t[i]), MT, PX(t[i]), MT + ph, PX(t[i]), MT + ph + 16, lab);
    }
    nice_ticks(y0, y1, c->ylog, t, &nt);
    for (unsigned i = 0; i < nt; i++) {
        fmt_val(lab, sizeof lab, t[i], c->ylog);
        fprintf(f,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                ML, PY(t[i]), ML + pw, PY(t[i]), ML - 6, PY(t[i]) + 4, lab);
    }
    fprintf(f,
            "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
            "stroke=\"#333\"/>\n"
            "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n"
            "<text transform=\"translate(18,%.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n",
            ML, MT, pw, ph, ML + pw / 2, H - 14, c->xlabel, MT + ph / 2, c->ylabel);
    for (unsigned i = 0; i < c->nv; i++) {
        double v = tx(c->vlines[i], c->xlog);
        if (v < x0 || v > x1)
            continue;
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" "
                "stroke-dasharray=\"4,3\"/><text x=\"%.1f\" y=\"%d\" fill=\"#666\">%s</text>\n",
                PX(v), MT, PX(v), MT + ph, PX(v) + 3, MT + 12, c->vlabels ? c->vlabels[i] : "");
    }
    if (c->hline > 0) {
        double v = tx(c->hline, c->ylog);
        fprintf(f,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" "
                "stroke-dasharray=\"4,3\"/><text x=\"%.1f\" y=\"%.1f\" fill=\"#666\">%s</text>\n",
                ML, PY(v), ML + pw, PY(v), ML + 4.0, PY(v) - 4, c->hlabel ? c->hlabel : "");
    }
    for (unsigned i = 0; i < c->nh; i++) {
        if (!(c->hlines[i] > 0))
            continue;
        double v = tx(c->hlines[i], c->ylog);
        const char *col = colors[i % (sizeof colors / sizeof colors[0])];
        fprintf(f,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-dasharray=\"6,4\"/><text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">%s</text>\n",
                ML, PY(v), ML + pw, PY(v), col, ML + 4.0 + 150.0 * (i % 4), PY(v) - 4, col,
                c->hlabels ? c->hlabels[i] : "");
    }
    for (unsigned k = 0; k < c->ns; k++) {
        const struct series *s = &c->s[k];
        const char *col = colors[k % (sizeof colors / sizeof colors[0])];
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", col);
        for (unsigned i = 0; i < s->n; i++)
            fprintf(f, "%.1f,%.1f ", PX(tx(s->x[i], c->xlog)), PY(tx(s->y[i], c->ylog)));
        fprintf(f, "\"/>\n");
        for (unsigned i = 0; i < s->n; i++)
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
                    PX(tx(s->x[i], c->xlog)), PY(tx(s->y[i], c->ylog)), col);
        fprintf(f,
                "<line x1=\"%.0f\" y1=\"%d\" x2=\"%.0f\" y2=\"%d\" stroke=\"%s\" "
                "stroke-width=\"3\"/><text x=\"%.0f\" y=\"%d\">%s</text>\n",
                ML + pw + 12, MT + 10 + 18 * (int)k, ML + pw + 32, MT + 10 + 18 * (int)k, col,
                ML + pw + 38, MT + 14 + 18 * (int)k, s->name);
    }
#undef PX
#undef PY
    fprintf(f, "</svg>\n");
    if (fclose(f) != 0)
        return -errno;
    return 0;
}

int mw_plot_lines(const char *path, const char *title, const char *xlabel, const char *ylabel,
                  int xlog, int ylog, const mw_plot_series *ser, unsigned n,
                  const double *hlines, const char *const *hlabels, unsigned nh)
{
    struct series s[16];
    if (n > 16)
        n = 16;
    for (unsigned k = 0; k < n; k++) {
        snprintf(s[k].name, sizeof s[k].name, "%s", ser[k].name);
        s[k].x = ser[k].x;
        s[k].y = ser[k].y;
        s[k].n = ser[k].n;
    }
    struct chart c = {.title = title, .xlabel = xlabel, .ylabel = ylabel, .xlog = xlog,
                      .ylog = ylog, .s = s, .ns = n, .hlines = hlines, .hlabels = hlabels,
                      .nh = nh};
    return chart_write(path, &c);
}

static int plot_sweep(const mw_calib_results *r, const char *dir)
{
    const mw_sweep_result *s = &r->sweep;
    static double xs[MW_SWEEP_MAX_THREADS][MW_SWEEP_MAX_DELAYS];
    static double ys[MW_SWEEP_MAX_THREADS][MW_SWEEP_MAX_DELAYS];
    struct series ser[MW_SWEEP_MAX_THREADS];
    for (unsigned t = 0; t < s->nthreads; t++) {
        for (unsigned d = 0; d < s->ndelays; d++) {
            xs[t][d] = s->delay_grid[d] + 1.0;
            ys[t][d] = s->point[t][d].bw / 1e9;
        }
        snprintf(ser[t].name, sizeof ser[t].name, "%u thread%s", s->thread_grid[t],
                 s->thread_grid[t] > 1 ? "s" : "");
        ser[t].x = xs[t];
        ser[t].y = ys[t];
        ser[t].n = s->ndelays;
    }
    struct chart c = {.title = "Read sweep: bandwidth vs injected delay",
                      .xlabel = "delay + 1 (NOPs after every four loads; log scale)",
                      .ylabel = "read bandwidth (GB/s)",
                      .xlog = 1,
                      .s = ser,
                      .ns = s->nthreads};
    char path[4096];
    snprintf(path, sizeof path, "%s/sweep.svg", dir);
    return chart_write(path, &c);
}

static int plot_loaded(const mw_calib_results *r, const char *dir)
{
    const mw_loaded_result *L = &r->loaded;
    double x[MW_SWEEP_MAX_DELAYS + 1], y[MW_SWEEP_MAX_DELAYS + 1];
    unsigned n = 0;
    /* idle first, then decreasing delay = increasing load, sorted below */
    x[n] = 0;
    y[n++] = L->idle_ns;
    for (int i = (int)L->npoints - 1; i >= 0; i--) {
        x[n] = L->point[i].bw / 1e9;
        y[n++] = L->point[i].ns;
    }
    /* drawn in order of bandwidth: neighbouring delays can swap places when
     * the machine is busy, and a curve that doubles back reads badly */
    for (unsigned i = 1; i < n; i++)
        for (unsigned j = i; j > 0 && x[j] < x[j - 1]; j--) {
            double tx_ = x[j], ty_ = y[j];
            x[j] = x[j - 1];
            y[j] = y[j - 1];
            x[j - 1] = tx_;
            y[j - 1] = ty_;
        }
    struct series s = {.x = x, .y = y, .n = n};
    snprintf(s.name, sizeof s.name, "chaser CPU %u", L->chase_cpu);
    char title[128];
    snprintf(title, sizeof title, "Loaded latency: %u load thread%s running the read sweep",
             L->load_threads, L->load_threads == 1 ? "" : "s");
    struct chart c = {.title = title,
                      .xlabel = "bandwidth of the load threads (GB/s)",
                      .ylabel = "load-to-use latency (ns)",
                      .s = &s,
                      .ns = 1,
                      .hline = L->idle_ns,
                      .hlabel = "idle"};
    char path[4096];
    snprintf(path, sizeof path, "%s/loaded.svg", dir);
    return chart_write(path, &c);
}

static int plot_mlp(const mw_calib_results *r, const char *dir)
{
    const mw_mlp_result *m = &r->mlp;
    double x[MW_MLP_MAX_CHAINS];
    for (unsigned k = 0; k < m->n; k++)
        x[k] = k + 1;
    struct series s = {.name = "speed-up", .x = x, .y = m->parallelism, .n = m->n};
    char hl[64];
    snprintf(hl, sizeof hl, "sustained: %.1f outstanding misses", m->outstanding);
    struct chart c = {.title = "Memory-level parallelism: k independent pointer chains",
                      .xlabel = "independent chains k",
                      .ylabel = "speed-up over one chain (loads in flight)",
                      .s = &s,
                      .ns = 1,
                      .hline = m->outstanding,
                      .hlabel = hl};
    char path[4096];
    snprintf(path, sizeof path, "%s/mlp.svg", dir);
    return chart_write(path, &c);
}

static int plot_ladder(const mw_calib_results *r, const char *dir)
{
    const mw_ladder_result *l = &r->ladder;
    double x[MW_LADDER_MAX_POINTS], y[MW_LADDER_MAX_POINTS], yl[MW_LADDER_MAX_POINTS];
    for (unsigned i = 0; i < l->npoints; i++) {
        x[i] = (double)l->point[i].bytes;
        y[i] = l->point[i].ns;
        yl[i] = l->point[i].local_ns;
    }
    struct series s[2] = {{.name = "full random", .x = x, .y = y, .n = l->npoints},
                          {.name = "page-local", .x = x, .y = yl, .n = l->npoints}};
    double v[MW_CACHE_MAX_LEVELS];
    static char names[MW_CACHE_MAX_LEVELS][32];
    const char *vl[MW_CACHE_MAX_LEVELS];
    for (unsigned i = 0; i < r->cache.n; i++) {
        v[i] = (double)r->cache.level[i].size;
        snprintf(names[i], sizeof names[i], "L%d (sysfs)", r->cache.level[i].level);
        vl[i] = names[i];
    }
    struct chart c = {.title = "Latency ladder: pointer chase (levels from the page-local one)",
                      .xlabel = "footprint (bytes, log scale)",
                      .ylabel = "ns per load (log scale)",
                      .xlog = 1,
                      .ylog = 1,
                      .s = s,
                      .ns = l->levels_from_local ? 2 : 1,
                      .vlines = v,
                      .vlabels = vl,
                      .nv = r->cache.n};
    char path[4096];
    snprintf(path, sizeof path, "%s/ladder.svg", dir);
    return chart_write(path, &c);
}

MW_API int mw_calib_results_write_plots(const mw_calib_results *r, const char *dir)
{
    if (mkdir(dir, 0700) == 0) /* the owner's only, whatever the umask */
        (void)chmod(dir, 0700);
    else if (errno != EEXIST)
        return -errno;
    int rc = 0, e;
    if ((r->ran & MW_CALIB_SWEEP) && (e = plot_sweep(r, dir)) < 0)
        rc = e;
    if ((r->ran & MW_CALIB_LOADED) && (e = plot_loaded(r, dir)) < 0)
        rc = e;
    if ((r->ran & MW_CALIB_MLP) && (e = plot_mlp(r, dir)) < 0)
        rc = e;
    if ((r->ran & MW_CALIB_LADDER) && (e = plot_ladder(r, dir)) < 0)
        rc = e;
    if ((r->ran & MW_CALIB_STRUCT) && (e = mw_struct_plots(&r->structure, dir)) < 0)
        rc = e;
    return rc;
}
