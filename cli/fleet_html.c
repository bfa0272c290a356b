/*
 * cli/fleet_html.c (cli/fleet.h): `memwatch fleet --html FILE`, one
 * self-contained page (no script, no external file): per group the nodes
 * that lie off the median with their explanation, then one inline SVG plot
 * per figure: every node's value in the group's order, the centre (median
 * or reference) as a line, the allowed band shaded, outliers in red.
 */
#include "fleet.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void fl_h(FILE *o, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", o);
            break;
        case '>':
            fputs("&gt;", o);
            break;
        case '&':
            fputs("&amp;", o);
            break;
        case '"':
            fputs("&quot;", o);
            break;
        default:
            fputc(*s, o);
        }
    }
}

#define W 760.0
#define H 190.0
#define ML 70.0
#define MR 50.0
#define MT 10.0
#define MB 36.0

static void fl_plot(FILE *o, const fl_fleet *f, const fl_group *g, int fig)
{
    const fl_fig_def *d = &fl_figs[fig];
    double s = d->scale;
    const char *unit = d->unit;
    double c = g->centre[fig] * s, b = g->bound[fig] * s;
    double lo = c - b, hi = c + b;
    for (size_t k = 0; k < g->n; k++) {
        double v = f->nodes[g->member[k]].fig[fig] * s;
        if (isfinite(v)) {
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    }
    double pad = (hi - lo) * 0.08 + 1e-9;
    lo -= pad;
    hi += pad;
    double pw = W - ML - MR, ph = H - MT - MB;
#define Y(v) (MT + ph * (1 - ((v)-lo) / (hi - lo)))
    fprintf(o, "<h4>");
    fl_h(o, d->label);
    fprintf(o, "%s%s%s: %s %.1f, allowed &plusmn;%.1f, %u outside</h4>\n", unit[0] ? " (" : "",
            unit, unit[0] ? ")" : "", g->against_ref ? "reference" : "median", c, b,
            g->n_flagged[fig]);
    fprintf(o,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "role=\"img\">\n",
            W, H);
    fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"band\"/>\n", ML,
            Y(c + b), pw, Y(c - b) - Y(c + b));
    fprintf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"centre\"/>\n", ML,
            ML + pw, Y(c), Y(c));
    fprintf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>\n", ML, ML,
            MT, MT + ph);
    double ticks[3] = {lo + pad, c, hi - pad};
    for (int t = 0; t < 3; t++)
        fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\">%.1f</text>\n", ML - 4,
                Y(ticks[t]) + 4, ticks[t]);
    for (size_t k = 0; k < g->n; k++) {
        const fl_node *n = &f->nodes[g->member[k]];
        double v = n->fig[fig] * s, x = ML + pw * (k + 0.5) / g->n;
        if (!isfinite(v))
            continue;
        const char *cls = n->odd[fig] ? "odd" : n->flag[fig] ? "off" : "node";
        fprintf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" class=\"%s\"><title>", x, Y(v),
                n->flag[fig] ? "5" : "3.5", cls);
        fl_h(o, n->name);
        fprintf(o, ": %.2f %s</title></circle>\n", v, unit);
        if (n->flag[fig] || g->n <= 16) {
            fprintf(o,
                    "<text x=\"%.1f\" y=\"%.1f\" class=\"name%s\" transform=\"rotate(20 %.1f "
                    "%.1f)\">",
                    x, MT + ph + 12,
                    n->odd[fig]    ? " oddname"
                    : n->flag[fig] ? " offname"
                                   : "",
                    x, MT + ph + 12);
            fl_h(o, n->name);
            fprintf(o, "</text>\n");
        }
    }
    fprintf(o, "</svg>\n");
#undef Y
}

static void fl_html_group(FILE *o, const fl_fleet *f, const fl_group *g, size_t gi)
{
    char title[256], why[8192];
    fl_group_title(f, g, title, sizeof title);
    fprintf(o, "<h2>group %zu: ", gi + 1);
    fl_h(o, title);
    fprintf(o, ": %zu node%s, compared with %s</h2>\n", g->n, g->n == 1 ? "" : "s",
            g->against_ref ? "the reference" : "their median");
    if (!g->against_ref && g->n < FL_MIN_GROUP)
        fprintf(o, "<p>Too few nodes to tell an odd one (%d are needed).</p>\n", FL_MIN_GROUP);
    else
        fprintf(o, "<p>%d of %zu nodes are odd.</p>\n", g->n_outliers, g->n);
    for (size_t k = 0; k < g->n; k++) {
        const fl_node *n = &f->nodes[g->member[k]];
        if (!n->outlier)
            continue;
        fl_explain(f, g, n, why, sizeof why);
        fprintf(o, "<div class=\"odd\"><b>");
        fl_h(o, n->name);
        fprintf(o, "</b><ul>");
        for (char *save = NULL, *l = strtok_r(why, "\n", &save); l;
             l = strtok_r(NULL, "\n", &save)) {
            fprintf(o, "<li>");
            fl_h(o, l);
            fprintf(o, "</li>");
        }
        fprintf(o, "</ul></div>\n");
    }
    for (int fig = 0; fig < FL_NFIG; fig++)
        if (g->have[fig])
            fl_plot(o, f, g, fig);
}

int fl_write_html(const fl_fleet *f, const char *path)
{
    FILE *o = fopen(path, "we");
    if (!o)
        return -1;
    fprintf(o, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
               "<title>memwatch fleet</title>\n<style>\n"
               "body{font-family:sans-serif;margin:1em 2em;color:#222}\n"
               "svg{display:block;margin-bottom:1em}\n"
               ".band{fill:#dde8f5}.centre{stroke:#3465a4;stroke-width:1.5}\n"
               ".axis{stroke:#888}.tick{font-size:10px;text-anchor:end;fill:#555}\n"
               ".node{fill:#3465a4}.odd{fill:#cc0000}.off{fill:#f57900}\n"
               ".name{font-size:9px;fill:#555}.oddname{fill:#cc0000;font-weight:bold}"
               ".offname{fill:#ce5c00}\n"
               "div.odd{fill:none;border-left:4px solid #cc0000;padding-left:.6em;margin:.5em 0}\n"
               "h4{margin:.4em 0 .1em 0;font-size:13px}\n"
               "</style></head><body>\n<h1>memwatch fleet</h1>\n");
    size_t unused = 0;
    for (size_t i = 0; i < f->n_in; i++)
        unused += f->in[i].node == -1;
    fprintf(o,
            "<p>%zu profiles used, %zu not used, %zu machine kind%s, %d odd node%s. Points "
            "outside the shaded band are orange, red where they make the node odd "
            "(docs/fleet.md).</p>\n",
            f->n_nodes, unused, f->n_groups, f->n_groups == 1 ? "" : "s", f->n_outliers,
            f->n_outliers == 1 ? "" : "s");
    if (unused) {
        fprintf(o, "<ul>\n");
        for (size_t i = 0; i < f->n_in; i++)
            if (f->in[i].node == -1) {
                fprintf(o, "<li>not used: ");
                fl_h(o, f->in[i].path);
                fprintf(o, ": ");
                fl_h(o, f->in[i].why);
                fprintf(o, "</li>\n");
            }
        fprintf(o, "</ul>\n");
    }
    for (size_t g = 0; g < f->n_groups; g++)
        fl_html_group(o, f, &f->groups[g], g);
    fprintf(o, "</body></html>\n");
    int bad = ferror(o);
    return fclose(o) == 0 && !bad ? 0 : -1;
}
