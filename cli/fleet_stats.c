/*
 * cli/fleet_stats.c (cli/fleet.h): groups the nodes by machine kind and
 * compares every figure with its group's median, or with a reference
 * profile. A value is an outlier when it lies further from the centre than
 * both FL_Z_LIMIT robust standard deviations (FL_MAD_SCALE x the median
 * absolute deviation: the modified z-score of Iglewicz and Hoaglin) and the
 * figure's smallest relative deviation (fl_kind_tolerance), so that nodes
 * whose figures agree within calibration's own noise do not flag when the
 * MAD happens to be tiny. docs/fleet.md, "Statistics", states both.
 */
#include "fleet.h"

#include <memwatch/validate.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GB 1e-9
const fl_fig_def fl_figs[FL_NFIG] = {
    [FL_PEAK_BW] = {"peak_bw", "peak bandwidth", "GB/s", GB, FL_K_BW, FL_ODD_LOW},
    [FL_IDLE_NS] = {"idle_latency_ns", "idle latency", "ns", 1, FL_K_LAT, FL_ODD_HIGH},
    [FL_THRESH_NS] = {"lat_threshold_ns", "saturation threshold", "ns", 1, FL_K_LAT, 0},
    [FL_DRAM_NS] = {"dram_ns", "DRAM latency (ladder)", "ns", 1, FL_K_LAT, 0},
    [FL_TRIAD_BW] = {"triad_bw", "triad", "GB/s", GB, FL_K_BW, 0},
    [FL_TRIAD_NT_BW] = {"triad_nt_bw", "triad, non-temporal stores", "GB/s", GB, FL_K_BW, 0},
    [FL_SWEEP_BW] = {"read_sweep_peak_bw", "read sweep peak", "GB/s", GB, FL_K_BW, 0},
    [FL_LOADED_IDLE_NS] = {"loaded_idle_ns", "loaded-latency idle", "ns", 1, FL_K_LAT, 0},
    [FL_MLP] = {"outstanding_misses", "outstanding misses (MLP)", "", 1, FL_K_COUNT, 0},
    [FL_MIX_BW0] = {"mix.reads100.peak_bw", "reads100 curve peak", "GB/s", GB, FL_K_BW, FL_ODD_LOW},
    [FL_MIX_BW0 + 1] = {"mix.reads75.peak_bw", "reads75 curve peak", "GB/s", GB, FL_K_BW,
                        FL_ODD_LOW},
    [FL_MIX_BW0 + 2] = {"mix.reads50.peak_bw", "reads50 curve peak", "GB/s", GB, FL_K_BW,
                        FL_ODD_LOW},
    [FL_MIX_BW0 + 3] = {"mix.nt50.peak_bw", "nt50 curve peak", "GB/s", GB, FL_K_BW, FL_ODD_LOW},
    [FL_MIX_TH0] = {"mix.reads100.threshold_ns", "reads100 threshold", "ns", 1, FL_K_LAT, 0},
    [FL_MIX_TH0 + 1] = {"mix.reads75.threshold_ns", "reads75 threshold", "ns", 1, FL_K_LAT, 0},
    [FL_MIX_TH0 + 2] = {"mix.reads50.threshold_ns", "reads50 threshold", "ns", 1, FL_K_LAT, 0},
    [FL_MIX_TH0 + 3] = {"mix.nt50.threshold_ns", "nt50 threshold", "ns", 1, FL_K_LAT, 0},
    [FL_LEVEL_NS0] = {"level1.ns", "cache level 1 latency", "ns", 1, FL_K_LAT, 0},
    [FL_LEVEL_NS0 + 1] = {"level2.ns", "cache level 2 latency", "ns", 1, FL_K_LAT, 0},
    [FL_LEVEL_NS0 + 2] = {"level3.ns", "cache level 3 latency", "ns", 1, FL_K_LAT, 0},
    [FL_LEVEL_NS0 + 3] = {"level4.ns", "cache level 4 latency", "ns", 1, FL_K_LAT, 0},
    [FL_LEVEL_SIZE0] = {"level1.size", "cache level 1 size (ladder)", "KiB", 1.0 / 1024, FL_K_SIZE,
                        0},
    [FL_LEVEL_SIZE0 + 1] = {"level2.size", "cache level 2 size (ladder)", "KiB", 1.0 / 1024,
                            FL_K_SIZE, 0},
    [FL_LEVEL_SIZE0 + 2] = {"level3.size", "cache level 3 size (ladder)", "KiB", 1.0 / 1024,
                            FL_K_SIZE, 0},
    [FL_LEVEL_SIZE0 + 3] = {"level4.size", "cache level 4 size (ladder)", "KiB", 1.0 / 1024,
                            FL_K_SIZE, 0},
    [FL_MEM_BYTES] = {"mem_total_bytes", "memory installed", "GiB", 1.0 / 1073741824.0, FL_K_MEM,
                      FL_ODD_BOTH},
    [FL_TLB_REACH] = {"tlb_reach", "TLB reach (ladder)", "KiB", 1.0 / 1024, FL_K_SIZE, 0},
};

/* The smallest relative deviation flagged. Bandwidths and latencies: 10 %,
 * about what repeated calibrations of one machine spread (docs/calibrate.md:
 * idle latency 118.8-139.9 ns, thresholds 153-188 ns in --quick runs of one
 * guest); the ladder's capacities: 20 %, more than one step of its grid
 * (2^(1/4), 19 %); installed memory: 2 % (the kernel's share moves with its
 * version; a missing DIMM is 1/8 or more); outstanding misses: 15 %. */
double fl_kind_tolerance(fl_kind k)
{
    switch (k) {
    case FL_K_BW:
    case FL_K_LAT:
        return 0.10;
    case FL_K_SIZE:
        return 0.20;
    case FL_K_MEM:
        return 0.02;
    case FL_K_COUNT:
        return 0.15;
    }
    return 0.10;
}

void fl_fmt(int fig, double v, char *out, size_t len)
{
    const fl_fig_def *d = &fl_figs[fig];
    double s = v * d->scale;
    if (!isfinite(v))
        snprintf(out, len, "-");
    else if (d->kind == FL_K_SIZE && s >= 4096)
        snprintf(out, len, "%.1f MiB", s / 1024);
    else if (d->kind == FL_K_SIZE)
        snprintf(out, len, "%.0f KiB", s);
    else
        snprintf(out, len, "%.1f%s%s", s, d->unit[0] ? " " : "", d->unit);
}

/* ------------------------------------------------------------- grouping */

static int fl_group_of(fl_fleet *f, const char *key)
{
    for (size_t g = 0; g < f->n_groups; g++)
        if (!strcmp(f->groups[g].key, key))
            return (int)g;
    fl_group *ng = realloc(f->groups, (f->n_groups + 1) * sizeof *ng);
    if (!ng)
        return -1;
    f->groups = ng;
    fl_group *g = &f->groups[f->n_groups];
    memset(g, 0, sizeof *g);
    snprintf(g->key, sizeof g->key, "%s", key);
    g->member = calloc(f->n_nodes, sizeof *g->member);
    if (!g->member)
        return -1;
    return (int)f->n_groups++;
}

static int fl_cmp_groups(const void *a, const void *b)
{
    const fl_group *x = a, *y = b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return strcmp(x->key, y->key);
}

static int fl_make_groups(fl_fleet *f)
{
    for (size_t i = 0; i < f->n_nodes; i++) {
        char key[sizeof f->groups[0].key];
        fl_group_key(&f->nodes[i], key, sizeof key);
        int g = fl_group_of(f, key);
        if (g < 0)
            return -1;
        f->groups[g].member[f->groups[g].n++] = i;
    }
    qsort(f->groups, f->n_groups, sizeof *f->groups, fl_cmp_groups);
    for (size_t g = 0; g < f->n_groups; g++)
        for (size_t k = 0; k < f->groups[g].n; k++)
            f->nodes[f->groups[g].member[k]].group = (int)g;
    return 0;
}

/* ------------------------------------------------------------- figures */

static int fl_is_level(int fig)
{
    return fig >= FL_LEVEL_NS0 && fig < FL_LEVEL_SIZE0 + 4;
}

/* A node's value of a figure as compared: a ladder that found another
 * number of cache plateaus than most numbers its levels differently, so its
 * levels are not compared level by level (levels_odd says so instead). */
static double fl_value(const fl_node *n, int fig)
{
    return fl_is_level(fig) && n->levels_odd ? NAN : n->fig[fig];
}

/* The number of cache plateaus most of the group's ladders found. */
static void fl_levels_major(fl_fleet *f, fl_group *g)
{
    unsigned best = 0, with = 0;
    g->levels_major = -1;
    for (size_t a = 0; a < g->n; a++) {
        int na = f->nodes[g->member[a]].n_levels;
        unsigned same = 0;
        with += na > 0;
        for (size_t b = 0; na > 0 && b < g->n; b++)
            same += f->nodes[g->member[b]].n_levels == na;
        if (same > best) {
            best = same;
            g->levels_major = na;
        }
    }
    if (2 * best <= with)
        g->levels_major = -1;
    for (size_t k = 0; k < g->n; k++) {
        fl_node *n = &f->nodes[g->member[k]];
        n->levels_odd = n->n_levels > 0 && g->levels_major > 0 && n->n_levels != g->levels_major;
    }
}

static void fl_centre(fl_fleet *f, fl_group *g, int fig, double *tmp)
{
    size_t n = 0;
    for (size_t k = 0; k < g->n; k++) {
        double v = fl_value(&f->nodes[g->member[k]], fig);
        if (isfinite(v))
            tmp[n++] = v;
    }
    g->have[fig] = (unsigned)n;
    if (g->against_ref) {
        g->centre[fig] = f->ref->node.fig[fig];
        g->mad[fig] = isfinite(f->ref->mad[fig]) ? f->ref->mad[fig] : 0;
    } else {
        g->centre[fig] = mw_val_median_inplace(tmp, n);
        for (size_t k = 0; k < n; k++)
            tmp[k] = fabs(tmp[k] - g->centre[fig]);
        g->mad[fig] = mw_val_median_inplace(tmp, n);
    }
    double tol = fl_kind_tolerance(fl_figs[fig].kind) * fabs(g->centre[fig]);
    double z = FL_Z_LIMIT * FL_MAD_SCALE * g->mad[fig];
    g->bound[fig] = z > tol ? z : tol;
}

static int fl_judges(const fl_group *g)
{
    return g->against_ref || g->n >= FL_MIN_GROUP;
}

static void fl_figures(fl_fleet *f, fl_group *g, double *tmp)
{
    fl_levels_major(f, g);
    for (int fig = 0; fig < FL_NFIG; fig++) {
        fl_centre(f, g, fig, tmp);
        if (!fl_judges(g) || !isfinite(g->centre[fig]))
            continue;
        for (size_t k = 0; k < g->n; k++) {
            fl_node *n = &f->nodes[g->member[k]];
            double v = fl_value(n, fig), c = g->centre[fig];
            if (!isfinite(v) || !(fabs(v - c) > g->bound[fig]))
                continue;
            n->flag[fig] = 1;
            g->n_flagged[fig]++;
            int odd = fl_figs[fig].odd;
            n->odd[fig] = (v < c && (odd & FL_ODD_LOW)) || (v > c && (odd & FL_ODD_HIGH));
            g->n_odd[fig] += n->odd[fig];
        }
    }
}

/* ------------------------------------------------------------ verdicts */

static fl_verdict *fl_verdict_slot(fl_group *g, const char *name)
{
    for (unsigned i = 0; i < g->n_verdict; i++)
        if (!strcmp(g->verdict[i].name, name))
            return &g->verdict[i];
    if (g->n_verdict == MW_PROFILE_MAX_METHODS)
        return NULL;
    fl_verdict *v = &g->verdict[g->n_verdict++];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%s", name);
    return v;
}

static const char *fl_verdict_of(const fl_node *n, const char *method)
{
    for (unsigned i = 0; i < n->p.n_methods; i++)
        if (!strcmp(n->p.methods[i].name, method))
            return n->p.methods[i].verdict;
    return NULL;
}

/* The verdict most nodes of the group reached for v->name (more than half
 * of those that have the method), or the reference's. */
static void fl_verdict_major(fl_fleet *f, fl_group *g, fl_verdict *v)
{
    if (g->against_ref) {
        const char *r = fl_verdict_of(&f->ref->node, v->name);
        snprintf(v->verdict, sizeof v->verdict, "%s", r ? r : "");
    }
    for (size_t a = 0; a < g->n; a++) {
        const char *va = fl_verdict_of(&f->nodes[g->member[a]], v->name);
        if (!va)
            continue;
        v->n++;
        if (g->against_ref) {
            v->agree += v->verdict[0] && !strcmp(va, v->verdict);
            continue;
        }
        unsigned same = 0;
        for (size_t b = 0; b < g->n; b++) {
            const char *vb = fl_verdict_of(&f->nodes[g->member[b]], v->name);
            same += vb && !strcmp(va, vb);
        }
        if (same > v->agree) {
            v->agree = same;
            snprintf(v->verdict, sizeof v->verdict, "%s", va);
        }
    }
    if (!g->against_ref && 2 * v->agree <= v->n)
        v->verdict[0] = 0; /* no majority */
}

static void fl_verdicts(fl_fleet *f, fl_group *g)
{
    for (size_t k = 0; k < g->n; k++) {
        const fl_node *n = &f->nodes[g->member[k]];
        for (unsigned i = 0; i < n->p.n_methods; i++)
            fl_verdict_slot(g, n->p.methods[i].name);
    }
    for (unsigned i = 0; i < g->n_verdict; i++) {
        fl_verdict *v = &g->verdict[i];
        fl_verdict_major(f, g, v);
        if (!v->verdict[0] || !fl_judges(g))
            continue;
        for (size_t k = 0; k < g->n; k++) {
            fl_node *n = &f->nodes[g->member[k]];
            for (unsigned m = 0; m < n->p.n_methods; m++)
                if (!strcmp(n->p.methods[m].name, v->name) &&
                    strcmp(n->p.methods[m].verdict, v->verdict))
                    n->vflag[m] = 1;
        }
    }
}

/* ------------------------------------------------- identity within a group */

const char *fl_common(const fl_fleet *f, const fl_group *g, size_t off, size_t *count)
{
    const char *best = "";
    size_t bn = 0;
    for (size_t a = 0; a < g->n; a++) {
        const char *s = (const char *)&f->nodes[g->member[a]] + off;
        size_t same = 0;
        for (size_t b = 0; b < g->n; b++)
            same += !strcmp(s, (const char *)&f->nodes[g->member[b]] + off);
        if (same > bn) {
            bn = same;
            best = s;
        }
    }
    if (count)
        *count = bn;
    return best;
}

/* The string most members have (more than half), or "" */
static void fl_major_str(fl_fleet *f, fl_group *g, size_t off, char *out, size_t len)
{
    size_t n;
    const char *s = fl_common(f, g, off, &n);
    snprintf(out, len, "%s", 2 * n > g->n ? s : "");
}

static void fl_identity_parts(fl_fleet *f, fl_group *g)
{
    char numa[16];
    unsigned best = 0;
    g->numa_major[0] = 0;
    for (size_t a = 0; a < g->n; a++) {
        unsigned same = 0;
        for (size_t b = 0; b < g->n; b++)
            same += f->nodes[g->member[a]].numa == f->nodes[g->member[b]].numa;
        if (same > best) {
            best = same;
            snprintf(g->numa_major, sizeof g->numa_major, "%d", f->nodes[g->member[a]].numa);
        }
    }
    if (2 * best <= g->n)
        g->numa_major[0] = 0;
    fl_major_str(f, g, offsetof(fl_node, caches), g->caches_major, sizeof g->caches_major);
    if (g->against_ref) {
        snprintf(g->numa_major, sizeof g->numa_major, "%d", f->ref->node.numa);
        snprintf(g->caches_major, sizeof g->caches_major, "%s", f->ref->node.caches);
    }
    if (!fl_judges(g))
        return;
    for (size_t k = 0; k < g->n; k++) {
        fl_node *n = &f->nodes[g->member[k]];
        snprintf(numa, sizeof numa, "%d", n->numa);
        n->numa_odd = g->numa_major[0] && strcmp(numa, g->numa_major);
        n->caches_odd = g->caches_major[0] && n->caches[0] && strcmp(n->caches, g->caches_major);
    }
}

int fl_compare(fl_fleet *f)
{
    if (fl_make_groups(f) < 0)
        return -1;
    char refkey[sizeof f->groups[0].key] = "";
    if (f->ref)
        fl_group_key(&f->ref->node, refkey, sizeof refkey);
    double *tmp = calloc(f->n_nodes ? f->n_nodes : 1, sizeof *tmp);
    if (!tmp)
        return -1;
    f->n_outliers = 0;
    for (size_t gi = 0; gi < f->n_groups; gi++) {
        fl_group *g = &f->groups[gi];
        g->against_ref = f->ref && !strcmp(g->key, refkey);
        fl_figures(f, g, tmp);
        fl_verdicts(f, g);
        fl_identity_parts(f, g);
        for (size_t k = 0; k < g->n; k++) {
            fl_node *n = &f->nodes[g->member[k]];
            int o = n->numa_odd || n->caches_odd;
            for (int fig = 0; fig < FL_NFIG; fig++) {
                o |= n->odd[fig];
                n->noted |= n->flag[fig] && !n->odd[fig];
            }
            for (unsigned m = 0; m < MW_PROFILE_MAX_METHODS; m++)
                o |= n->vflag[m];
            n->noted |= n->levels_odd;
            n->outlier = o;
            g->n_outliers += o;
        }
        f->n_outliers += g->n_outliers;
    }
    free(tmp);
    return 0;
}

/* ---------------------------------------------------------------- words */

void fl_group_title(const fl_fleet *f, const fl_group *g, char *out, size_t len)
{
    const fl_node *n = &f->nodes[g->member[0]];
    snprintf(out, len, "%s, family %d model %d stepping %d, %d CPUs", n->cpu_model, n->family,
             n->model, n->stepping, n->cpus);
}

static void fl_centre_words(const fl_group *g, int fig, char *out, size_t len)
{
    char c[48];
    fl_fmt(fig, g->centre[fig], c, sizeof c);
    if (g->against_ref)
        snprintf(out, len, "the reference (%s)", c);
    else
        snprintf(out, len, "the median of %u nodes of this kind (%s)", g->have[fig], c);
}

void fl_fig_words(const fl_group *g, const fl_node *n, int fig, char *out, size_t len)
{
    char v[48], c[128];
    double x = n->fig[fig], m = g->centre[fig];
    fl_fmt(fig, x, v, sizeof v);
    fl_centre_words(g, fig, c, sizeof c);
    double rel = m != 0 ? 100 * (x - m) / fabs(m) : 0;
    snprintf(out, len, "%s %s, %.0f %% %s %s", fl_figs[fig].label, v, fabs(rel),
             rel < 0 ? "below" : "above", c);
}

/* -1 below, 1 above, 0 not flagged or absent */
static int fl_dir(const fl_group *g, const fl_node *n, int fig)
{
    if (!n->flag[fig])
        return 0;
    return n->fig[fig] < g->centre[fig] ? -1 : 1;
}

/* Any bandwidth figure flagged in direction d. */
static int fl_bw_dir(const fl_group *g, const fl_node *n, int d)
{
    for (int fig = 0; fig < FL_NFIG; fig++)
        if (fl_figs[fig].kind == FL_K_BW && fl_figs[fig].odd && fl_dir(g, n, fig) == d)
            return 1;
    return 0;
}

static size_t fl_cat(char *out, size_t len, size_t w, const char *fmt, const char *a, const char *b)
{
    if (w >= len)
        return w;
    int k = snprintf(out + w, len - w, fmt, a ? a : "", b ? b : "");
    return k < 0 ? w : w + (size_t)k;
}

/* What the flagged figures together suggest. */
static size_t fl_diagnose(const fl_group *g, const fl_node *n, char *out, size_t len, size_t w)
{
    char v[48];
    int bw_lo = fl_bw_dir(g, n, -1), bw_hi = fl_bw_dir(g, n, 1);
    int idle = fl_dir(g, n, FL_IDLE_NS);
    /* the ladder's DRAM latency agrees with the others' where it lies within
     * its band, or much nearer the median than the idle reading does */
    double rel_idle = fabs(n->fig[FL_IDLE_NS] / g->centre[FL_IDLE_NS] - 1);
    double rel_dram = fabs(n->fig[FL_DRAM_NS] / g->centre[FL_DRAM_NS] - 1);
    int dram = fl_dir(g, n, FL_DRAM_NS) && !(rel_dram < rel_idle / 2);
    fl_fmt(FL_IDLE_NS, n->fig[FL_IDLE_NS], v, sizeof v);
    if (bw_lo && idle <= 0)
        w = fl_cat(out, len, w,
                   "bandwidth low with idle latency normal (%s): fewer memory channels "
                   "populated, slower DIMMs or a memory BIOS setting? (or other work moving "
                   "memory while it calibrated: calibrate again to tell)\n",
                   v, NULL);
    else if (bw_lo && idle > 0)
        w = fl_cat(out, len, w,
                   "bandwidth low and idle latency high (%s): slower memory, or other work "
                   "ran during the calibration: calibrate again before suspecting the "
                   "hardware\n",
                   v, NULL);
    else if (bw_hi)
        w = fl_cat(out, len, w,
                   "bandwidth above the others: more channels or faster memory than the rest "
                   "of this kind, or the others are slowed down%s%s\n",
                   NULL, NULL);
    if (idle > 0 && !bw_lo && isfinite(n->fig[FL_DRAM_NS]) && dram == 0) {
        fl_fmt(FL_DRAM_NS, n->fig[FL_DRAM_NS], v, sizeof v);
        w = fl_cat(out, len, w,
                   "the latency ladder's DRAM latency (%s) is near the others': the idle "
                   "reading was disturbed (other work during calibration?): calibrate this "
                   "node again\n",
                   v, NULL);
    } else if (idle > 0 && !bw_lo) {
        w = fl_cat(out, len, w,
                   "latency high with bandwidth normal: a power or uncore frequency setting, "
                   "or memory on another NUMA node?%s%s\n",
                   NULL, NULL);
    } else if (idle < 0 && !bw_lo && !bw_hi) {
        w = fl_cat(out, len, w,
                   "idle latency lower than the others' with bandwidth "
                   "normal%s%s\n",
                   NULL, NULL);
    }
    if (n->flag[FL_THRESH_NS] && !idle)
        w = fl_cat(out, len, w,
                   "the saturation threshold moved though the idle latency did not: see the "
                   "node's probe_lat verdict and threshold_note%s%s\n",
                   NULL, NULL);
    return w;
}

static size_t fl_identity_words(const fl_group *g, const fl_node *n, char *out, size_t len,
                                size_t w)
{
    char a[48], b[48];
    if (n->flag[FL_MEM_BYTES]) {
        fl_fmt(FL_MEM_BYTES, n->fig[FL_MEM_BYTES], a, sizeof a);
        fl_fmt(FL_MEM_BYTES, g->centre[FL_MEM_BYTES], b, sizeof b);
        w = fl_cat(out, len, w,
                   "memory installed %s where the others have %s: a DIMM missing "
                   "or not detected?\n",
                   a, b);
    }
    if (n->numa_odd) {
        snprintf(a, sizeof a, "%d", n->numa);
        w = fl_cat(out, len, w,
                   "%s NUMA nodes where the others have %s: another sub-NUMA "
                   "clustering setting?\n",
                   a, g->numa_major);
    }
    if (n->caches_odd)
        w = fl_cat(out, len, w,
                   "the kernel lists caches %s where the others have %s: another "
                   "CPU part or BIOS setting?\n",
                   n->caches, g->caches_major);
    return w;
}

/* Deviations that do not make the node odd, on one line. */
static size_t fl_notes(const fl_group *g, const fl_node *n, char *out, size_t len, size_t w)
{
    char s[512];
    const char *lead = "also outside the band, not deciding: ";
    for (int fig = 0; fig < FL_NFIG; fig++) {
        if (!n->flag[fig] || n->odd[fig])
            continue;
        char v[48];
        double m = g->centre[fig];
        fl_fmt(fig, n->fig[fig], v, sizeof v);
        snprintf(s, sizeof s, "%s %s (%+.0f %%)", fl_figs[fig].label, v,
                 m != 0 ? 100 * (n->fig[fig] - m) / fabs(m) : 0.0);
        w = fl_cat(out, len, w, "%s%s", lead, s);
        lead = "; ";
    }
    if (n->levels_odd) {
        snprintf(s, sizeof s,
                 "the latency ladder found %d cache levels where most found %d "
                 "(its levels are not compared)",
                 n->n_levels, g->levels_major);
        w = fl_cat(out, len, w, "%s%s", lead, s);
        lead = "; ";
    }
    if (lead[0] == ';')
        w = fl_cat(out, len, w, "\n%s%s", NULL, NULL);
    return w;
}

void fl_explain(const fl_fleet *f, const fl_group *g, const fl_node *n, char *out, size_t len)
{
    size_t w = 0;
    char s[512];
    out[0] = 0;
    for (int fig = 0; fig < FL_NFIG; fig++) {
        if (!n->odd[fig] || fig == FL_MEM_BYTES)
            continue;
        fl_fig_words(g, n, fig, s, sizeof s);
        w = fl_cat(out, len, w, "%s\n", s, NULL);
    }
    for (unsigned m = 0; m < n->p.n_methods; m++) {
        if (!n->vflag[m])
            continue;
        const mw_profile_method *pm = &n->p.methods[m];
        for (unsigned i = 0; i < g->n_verdict; i++) {
            const fl_verdict *v = &g->verdict[i];
            if (strcmp(v->name, pm->name))
                continue;
            char who[64];
            if (g->against_ref)
                snprintf(who, sizeof who, "in the reference");
            else
                snprintf(who, sizeof who, "on %u of %u nodes", v->agree, v->n);
            snprintf(s, sizeof s, "method %s: %s here, %s %s%s%s", pm->name, pm->verdict,
                     v->verdict, who, pm->reason[0] ? " (here: " : "", "");
            w = fl_cat(out, len, w, "%s%s", s, pm->reason[0] ? pm->reason : NULL);
            w = fl_cat(out, len, w, "%s\n", pm->reason[0] ? ")" : "", NULL);
        }
    }
    w = fl_identity_words(g, n, out, len, w);
    if (n->outlier)
        w = fl_diagnose(g, n, out, len, w);
    w = fl_notes(g, n, out, len, w);
    (void)f;
}
