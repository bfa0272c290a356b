/*
 * gpu/svg.c: line plots of probe curves (see svg.h). Axis ranges from the
 * data, linear or log2 x, up to 6 curves with a legend, an optional marker.
 * May call: libc only. No state; thread-safe.
 */
#include "svg.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                      "#8c564b"};

static void esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else
            fputc(*s, f);
    }
}

int mw_svg_plot(const char *path, const char *title, const char *xlabel, const char *ylabel,
                const mw_gpu_curve *const *curves, int ncurves, int logx, double mark_x,
                const char *mark_label)
{
    const double W = 720, H = 440, L = 70, R = 20, T = 40, B = 60;
    double x0 = INFINITY, x1 = -INFINITY, y0 = 0, y1 = -INFINITY;
    for (int c = 0; c < ncurves; c++)
        for (unsigned i = 0; i < curves[c]->n; i++) {
            double x = curves[c]->p[i].x, y = curves[c]->p[i].y;
            if (logx && x <= 0)
                continue;
            x = logx ? log2(x) : x;
            x0 = fmin(x0, x);
            x1 = fmax(x1, x);
            y1 = fmax(y1, y);
            y0 = fmin(y0, y);
        }
    if (!(x1 > x0))
        x1 = x0 + 1;
    if (!(y1 > y0))
        y1 = y0 + 1;
    y1 *= 1.05;
    FILE *f = fopen(path, "w");
    if (!f)
        return -errno;
#define PX(x) (L + ((logx ? log2(x) : (x)) - x0) / (x1 - x0) * (W - L - R))
#define PY(y) (H - B - ((y) - y0) / (y1 - y0) * (H - T - B))
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n", W, H);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"%.0f\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">", W / 2);
    esc(f, title);
    fprintf(f, "</text>\n");
    fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", L,
            H - B, W - R, H - B);
    fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", L, T,
            L, H - B);
    /* a log2 axis is labelled at powers of two (at most 7 of them) */
    int k0 = (int)ceil(x0 - 1e-9), k1 = (int)floor(x1 + 1e-9), kstep = (k1 - k0) / 7 + 1;
    for (int k = k0; logx && k <= k1; k += kstep) {
        double xs = L + (k - x0) / (x1 - x0) * (W - L - R);
        fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%.*f</text>\n", xs,
                H - B + 16, k < 0 ? -k : 0, exp2(k));
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#eee\"/>\n", xs,
                T, xs, H - B);
    }
    for (int k = 0; k <= 5; k++) {
        double xv = x0 + (x1 - x0) * k / 5, yv = y0 + (y1 - y0) * k / 5;
        double xs = L + (W - L - R) * k / 5, ys = H - B - (H - T - B) * k / 5;
        if (!logx)
            fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%.4g</text>\n", xs,
                    H - B + 16, xv);
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%.4g</text>\n", L - 6, ys + 4,
                yv);
        fprintf(f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
                L, ys, W - R, ys);
    }
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">", (L + W - R) / 2, H - 18);
    esc(f, xlabel);
    fprintf(f, "%s</text>\n", logx ? " (log scale)" : "");
    fprintf(f, "<text transform=\"translate(16,%.0f) rotate(-90)\" text-anchor=\"middle\">",
            (T + H - B) / 2);
    esc(f, ylabel);
    fprintf(f, "</text>\n");
    for (int c = 0; c < ncurves; c++) {
        const char *col = colours[c % 6];
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" points=\"", col);
        for (unsigned i = 0; i < curves[c]->n; i++)
            if (!logx || curves[c]->p[i].x > 0)
                fprintf(f, "%.1f,%.1f ", PX(curves[c]->p[i].x), PY(curves[c]->p[i].y));
        fprintf(f, "\"/>\n");
        for (unsigned i = 0; i < curves[c]->n; i++)
            if (!logx || curves[c]->p[i].x > 0)
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"%s\"/>\n",
                        PX(curves[c]->p[i].x), PY(curves[c]->p[i].y), col);
        /* Legend in the lower right corner, clear of the marker label. */
        double lx = W - R - 250, ly = H - B - 12 - 16 * (ncurves - c);
        fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"3\" fill=\"%s\"/>"
                   "<text x=\"%.0f\" y=\"%.0f\">", lx, ly - 4, col, lx + 18, ly);
        esc(f, curves[c]->name);
        fprintf(f, "</text>\n");
    }
    if (mark_x > 0) {
        double xs = PX(mark_x);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"black\" "
                   "stroke-dasharray=\"4,3\"/>\n<text x=\"%.1f\" y=\"%.0f\">", xs, T, xs, H - B,
                xs + 4, T + 12);
        esc(f, mark_label ? mark_label : "");
        fprintf(f, "</text>\n");
    }
    fprintf(f, "</svg>\n");
#undef PX
#undef PY
    return fclose(f) ? -errno : 0;
}
