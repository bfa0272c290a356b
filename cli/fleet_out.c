/*
 * cli/fleet_out.c (cli/fleet.h): what `memwatch fleet` prints (text or JSON,
 * docs/fleet.md) and the reference profile it writes: a machine profile
 * (docs/profile-format.md, read by mw_profile_load like any other) whose
 * figures are the group's medians, plus a "fleet" object with the group's
 * spread, which `--reference` uses.
 */
#include "fleet.h"

#include <memwatch/validate.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ text */

/* "6.18.44 (12), 6.1.0 (1: node7)": the distinct values of a string field. */
static void fl_distinct(const fl_fleet *f, const fl_group *g, size_t off, char *out, size_t len)
{
    size_t w = 0;
    out[0] = 0;
    for (size_t a = 0; a < g->n; a++) {
        const char *sa = (const char *)&f->nodes[g->member[a]] + off;
        size_t b, same = 0;
        for (b = 0; b < a; b++)
            if (!strcmp(sa, (const char *)&f->nodes[g->member[b]] + off))
                break;
        if (b < a)
            continue; /* said already */
        for (b = 0; b < g->n; b++)
            same += !strcmp(sa, (const char *)&f->nodes[g->member[b]] + off);
        int k = snprintf(out + w, len > w ? len - w : 0, "%s%s (%zu", w ? ", " : "",
                         sa[0] ? sa : "?", same);
        w += k > 0 ? (size_t)k : 0;
        if (same <= 3 && same < g->n)
            for (b = 0; b < g->n; b++)
                if (!strcmp(sa, (const char *)&f->nodes[g->member[b]] + off)) {
                    k = snprintf(out + w, len > w ? len - w : 0, "%s%s", b == a ? ": " : " ",
                                 f->nodes[g->member[b]].name);
                    w += k > 0 ? (size_t)k : 0;
                }
        k = snprintf(out + w, len > w ? len - w : 0, ")");
        w += k > 0 ? (size_t)k : 0;
    }
}

static void fl_text_identity(const fl_fleet *f, const fl_group *g, FILE *out)
{
    char s[1024];
    fl_distinct(f, g, offsetof(fl_node, kernel), s, sizeof s);
    fprintf(out, "  kernel %s\n", s);
    fl_distinct(f, g, offsetof(fl_node, ucode), s, sizeof s);
    fprintf(out, "  microcode %s\n", s);
    fl_distinct(f, g, offsetof(fl_node, mem), s, sizeof s);
    fprintf(out, "  memory %s\n", s);
    fl_distinct(f, g, offsetof(fl_node, caches), s, sizeof s);
    fprintf(out, "  caches %s\n", s);
}

static void fl_range(const fl_fleet *f, const fl_group *g, int fig, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t k = 0; k < g->n; k++) {
        double v = f->nodes[g->member[k]].fig[fig];
        if (isfinite(v)) {
            *lo = v < *lo ? v : *lo;
            *hi = v > *hi ? v : *hi;
        }
    }
}

static void fl_text_figures(const fl_fleet *f, const fl_group *g, FILE *out)
{
    fprintf(out, "  %-34s %5s %9s %7s %9s %17s %4s %4s\n", "figure", "nodes",
            g->against_ref ? "reference" : "median", "MAD", "allowed", "min .. max", "off", "odd");
    for (int fig = 0; fig < FL_NFIG; fig++) {
        if (!g->have[fig])
            continue;
        const fl_fig_def *d = &fl_figs[fig];
        char label[64], range[48], allowed[24], odd[16];
        double s = d->scale, lo, hi;
        int pr = d->kind == FL_K_SIZE ? 0 : 1; /* sizes in whole KiB */
        snprintf(label, sizeof label, "%s (%s)", d->label, d->unit[0] ? d->unit : "count");
        fl_range(f, g, fig, &lo, &hi);
        snprintf(range, sizeof range, "%.*f .. %.*f", pr, lo * s, pr, hi * s);
        snprintf(allowed, sizeof allowed, "+-%.*f", pr, g->bound[fig] * s);
        snprintf(odd, sizeof odd, "%u", g->n_odd[fig]);
        fprintf(out, "  %-34s %5u %9.*f %7.*f %9s %17s %4u %4s\n", label, g->have[fig], pr,
                g->centre[fig] * s, pr, g->mad[fig] * s, allowed, range, g->n_flagged[fig],
                d->odd ? odd : "-");
    }
}

static void fl_text_methods(const fl_group *g, FILE *out)
{
    fprintf(out, "  methods:");
    for (unsigned i = 0; i < g->n_verdict; i++) {
        const fl_verdict *v = &g->verdict[i];
        if (v->verdict[0])
            fprintf(out, "%s %s %s (%u of %u)", i ? "," : "", v->name, v->verdict, v->agree, v->n);
        else
            fprintf(out, "%s %s no common verdict", i ? "," : "", v->name);
    }
    fprintf(out, "\n");
}

static void fl_text_outliers(const fl_fleet *f, const fl_group *g, FILE *out)
{
    char why[8192];
    if (!g->against_ref && g->n < FL_MIN_GROUP) {
        fprintf(out,
                "  %zu node%s: too few to tell an odd one (%d are needed; --reference "
                "FILE compares with a reference profile)\n",
                g->n, g->n == 1 ? "" : "s", FL_MIN_GROUP);
        return;
    }
    fprintf(out, "  odd nodes: %d of %zu\n", g->n_outliers, g->n);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            size_t noted = 0;
            for (size_t k = 0; k < g->n; k++)
                noted += !f->nodes[g->member[k]].outlier && f->nodes[g->member[k]].noted;
            if (!noted)
                break;
            fprintf(out, "  other nodes with figures outside their band (not odd: figures that "
                         "do not decide, or in the harmless direction):\n");
        }
        for (size_t k = 0; k < g->n; k++) {
            const fl_node *n = &f->nodes[g->member[k]];
            if (pass == 0 ? !n->outlier : (n->outlier || !n->noted))
                continue;
            fl_explain(f, g, n, why, sizeof why);
            fprintf(out, "  %s:\n", n->name);
            for (char *save = NULL, *l = strtok_r(why, "\n", &save); l;
                 l = strtok_r(NULL, "\n", &save))
                fprintf(out, "    %s\n", l);
        }
    }
}

static void fl_text_nodes(const fl_fleet *f, const fl_group *g, FILE *out)
{
    for (size_t k = 0; k < g->n; k++) {
        const fl_node *n = &f->nodes[g->member[k]];
        fprintf(out, "  node %s (%s):", n->name, n->path);
        for (int fig = 0; fig < FL_NFIG; fig++) {
            char v[48];
            if (!isfinite(n->fig[fig]))
                continue;
            fl_fmt(fig, n->fig[fig], v, sizeof v);
            fprintf(out, " %s %s%s;", fl_figs[fig].key, v, n->flag[fig] ? " (!)" : "");
        }
        fprintf(out, "\n");
    }
}

void fl_print_text(const fl_fleet *f, FILE *out, int verbose)
{
    size_t unused = 0;
    for (size_t i = 0; i < f->n_in; i++)
        unused += f->in[i].node == -1;
    fprintf(out, "memwatch fleet: %zu profile%s used, %zu not used, %zu machine kind%s\n",
            f->n_nodes, f->n_nodes == 1 ? "" : "s", unused, f->n_groups,
            f->n_groups == 1 ? "" : "s");
    for (size_t i = 0; i < f->n_in; i++)
        if (f->in[i].node == -1)
            fprintf(out, "  not used: %s: %s\n", f->in[i].path, f->in[i].why);
    if (f->ref)
        fprintf(out, "reference: %s (%s%u nodes)\n", f->ref->node.path,
                f->ref->from_nodes ? "the median of " : "one profile, ",
                f->ref->from_nodes ? f->ref->from_nodes : 1);
    for (size_t gi = 0; gi < f->n_groups; gi++) {
        const fl_group *g = &f->groups[gi];
        char title[256];
        fl_group_title(f, g, title, sizeof title);
        fprintf(out, "\ngroup %zu: %s: %zu node%s, compared with %s\n", gi + 1, title, g->n,
                g->n == 1 ? "" : "s", g->against_ref ? "the reference" : "their median");
        if (f->ref && !g->against_ref) {
            fl_group rg = {.n = 1};
            size_t zero = 0;
            fl_fleet rf = {.nodes = (fl_node *)&f->ref->node, .n_nodes = 1};
            char rt[256];
            rg.member = &zero;
            fl_group_title(&rf, &rg, rt, sizeof rt);
            fprintf(out, "  (not compared with the reference, which is of another kind: %s)\n", rt);
        }
        fl_text_identity(f, g, out);
        fl_text_figures(f, g, out);
        fl_text_methods(g, out);
        if (verbose)
            fl_text_nodes(f, g, out);
        fl_text_outliers(f, g, out);
    }
    fprintf(out, "\nsummary: %d odd node%s among %zu", f->n_outliers, f->n_outliers == 1 ? "" : "s",
            f->n_nodes);
    const char *sep = ": ";
    for (size_t i = 0; i < f->n_nodes; i++)
        if (f->nodes[i].outlier) {
            fprintf(out, "%s%s", sep, f->nodes[i].name);
            sep = ", ";
        }
    fprintf(out, "\n");
}

/* ------------------------------------------------------------------ JSON */

static void fl_jnum(cJSON *o, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *fl_json_inputs(const fl_fleet *f)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < f->n_in; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddStringToObject(o, "path", f->in[i].path);
        cJSON_AddBoolToObject(o, "used", f->in[i].node >= 0);
        if (f->in[i].node >= 0)
            cJSON_AddStringToObject(o, "node", f->nodes[f->in[i].node].name);
        else if (f->in[i].node == -2)
            cJSON_AddStringToObject(o, "reason", "the same file as an earlier input, read once");
        else
            cJSON_AddStringToObject(o, "reason", f->in[i].why);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *fl_json_figure(const fl_fleet *f, const fl_group *g, int fig)
{
    const fl_fig_def *d = &fl_figs[fig];
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "name", d->key);
    cJSON_AddStringToObject(o, "label", d->label);
    cJSON_AddNumberToObject(o, "nodes", g->have[fig]);
    fl_jnum(o, g->against_ref ? "reference" : "median", g->centre[fig]);
    fl_jnum(o, "mad", g->mad[fig]);
    fl_jnum(o, "allowed", g->bound[fig]);
    cJSON_AddNumberToObject(o, "tolerance", fl_kind_tolerance(d->kind));
    cJSON *vals = cJSON_AddObjectToObject(o, "values");
    cJSON *out = cJSON_AddArrayToObject(o, "outliers");
    for (size_t k = 0; vals && out && k < g->n; k++) {
        const fl_node *n = &f->nodes[g->member[k]];
        if (!isfinite(n->fig[fig]))
            continue;
        cJSON_AddNumberToObject(vals, n->name, n->fig[fig]);
        if (n->flag[fig])
            cJSON_AddItemToArray(out, cJSON_CreateString(n->name));
    }
    return o;
}

static cJSON *fl_json_node(const fl_fleet *f, const fl_group *g, const fl_node *n)
{
    cJSON *o = cJSON_CreateObject();
    char why[8192];
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "node", n->name);
    cJSON_AddStringToObject(o, "path", n->path);
    cJSON_AddStringToObject(o, "identity", n->p.identity);
    cJSON_AddStringToObject(o, "created", n->p.created);
    cJSON_AddBoolToObject(o, "outlier", n->outlier);
    cJSON *fl = cJSON_AddArrayToObject(o, "flagged");
    for (int fig = 0; fl && fig < FL_NFIG; fig++)
        if (n->flag[fig]) {
            cJSON *x = cJSON_CreateObject();
            if (!x)
                break;
            cJSON_AddStringToObject(x, "figure", fl_figs[fig].key);
            cJSON_AddNumberToObject(x, "value", n->fig[fig]);
            cJSON_AddNumberToObject(x, g->against_ref ? "reference" : "median", g->centre[fig]);
            cJSON_AddNumberToObject(x, "deviation",
                                    (n->fig[fig] - g->centre[fig]) / fabs(g->centre[fig]));
            cJSON_AddBoolToObject(x, "odd", n->odd[fig]);
            cJSON_AddItemToArray(fl, x);
        }
    cJSON *vm = cJSON_AddArrayToObject(o, "verdicts_differ");
    for (unsigned m = 0; vm && m < n->p.n_methods; m++)
        if (n->vflag[m])
            cJSON_AddItemToArray(vm, cJSON_CreateString(n->p.methods[m].name));
    cJSON_AddBoolToObject(o, "numa_differs", n->numa_odd);
    cJSON_AddBoolToObject(o, "caches_differ", n->caches_odd);
    cJSON_AddBoolToObject(o, "levels_differ", n->levels_odd);
    fl_explain(f, g, n, why, sizeof why);
    size_t l = strlen(why);
    if (l && why[l - 1] == '\n')
        why[l - 1] = 0;
    cJSON_AddStringToObject(o, "explanation", why);
    return o;
}

static cJSON *fl_json_group(const fl_fleet *f, const fl_group *g, size_t gi)
{
    const fl_node *n0 = &f->nodes[g->member[0]];
    char title[256];
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    fl_group_title(f, g, title, sizeof title);
    cJSON_AddNumberToObject(o, "group", (double)gi + 1);
    cJSON_AddStringToObject(o, "title", title);
    cJSON_AddStringToObject(o, "cpu_model", n0->cpu_model);
    cJSON_AddNumberToObject(o, "family", n0->family);
    cJSON_AddNumberToObject(o, "model", n0->model);
    cJSON_AddNumberToObject(o, "stepping", n0->stepping);
    cJSON_AddNumberToObject(o, "cpus", n0->cpus);
    cJSON_AddStringToObject(o, "compared_with", g->against_ref ? "reference" : "median");
    cJSON_AddBoolToObject(o, "judged", g->against_ref || g->n >= FL_MIN_GROUP);
    cJSON *figs = cJSON_AddArrayToObject(o, "figures");
    for (int fig = 0; figs && fig < FL_NFIG; fig++)
        if (g->have[fig])
            cJSON_AddItemToArray(figs, fl_json_figure(f, g, fig));
    cJSON *vs = cJSON_AddArrayToObject(o, "methods");
    for (unsigned i = 0; vs && i < g->n_verdict; i++) {
        cJSON *v = cJSON_CreateObject();
        if (!v)
            break;
        cJSON_AddStringToObject(v, "name", g->verdict[i].name);
        cJSON_AddStringToObject(v, "verdict", g->verdict[i].verdict);
        cJSON_AddNumberToObject(v, "agree", g->verdict[i].agree);
        cJSON_AddNumberToObject(v, "nodes", g->verdict[i].n);
        cJSON_AddItemToArray(vs, v);
    }
    cJSON *nodes = cJSON_AddArrayToObject(o, "nodes");
    for (size_t k = 0; nodes && k < g->n; k++)
        cJSON_AddItemToArray(nodes, fl_json_node(f, g, &f->nodes[g->member[k]]));
    cJSON_AddNumberToObject(o, "outliers", g->n_outliers);
    return o;
}

int fl_write_json(const fl_fleet *f, FILE *out)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return -1;
    cJSON_AddStringToObject(root, "schema", "memwatch-fleet");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddItemToObject(root, "inputs", fl_json_inputs(f));
    if (f->ref) {
        cJSON *r = cJSON_AddObjectToObject(root, "reference");
        cJSON_AddStringToObject(r, "path", f->ref->node.path);
        cJSON_AddNumberToObject(r, "from_nodes", f->ref->from_nodes);
    }
    cJSON *gs = cJSON_AddArrayToObject(root, "groups");
    for (size_t g = 0; gs && g < f->n_groups; g++)
        cJSON_AddItemToArray(gs, fl_json_group(f, &f->groups[g], g));
    cJSON_AddNumberToObject(root, "outlier_nodes", f->n_outliers);
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (!s)
        return -1;
    fprintf(out, "%s\n", s);
    free(s);
    return 0;
}

/* ------------------------------------------------------------- reference */

/* The median of the group's values of one number each node gives (NAN
 * where it gives none). */
typedef double (*fl_get)(const fl_node *n, const void *arg);

static double fl_group_median(const fl_fleet *f, const fl_group *g, fl_get get, const void *arg)
{
    double *v = calloc(g->n ? g->n : 1, sizeof *v);
    size_t k = 0;
    for (size_t i = 0; v && i < g->n; i++) {
        double x = get(&f->nodes[g->member[i]], arg);
        if (isfinite(x))
            v[k++] = x;
    }
    double m = v ? mw_val_median_inplace(v, k) : NAN;
    free(v);
    return m;
}

static double fl_get_fig(const fl_node *n, const void *arg)
{
    return n->fig[*(const int *)arg];
}

static double fl_get_tsc(const fl_node *n, const void *arg)
{
    (void)arg;
    return n->p.tsc_hz > 0 ? n->p.tsc_hz : NAN;
}

static double fl_get_band(const fl_node *n, const void *arg)
{
    if (!(n->p.band_hi_ns > 0))
        return NAN;
    return *(const int *)arg ? n->p.band_hi_ns : n->p.band_lo_ns;
}

/* A method's figure over the nodes whose verdict is the reference's. */
typedef struct fl_marg {
    const char *name, *verdict;
    int what; /* 0 factor, 1 cv, 2 false_pos, 3 false_neg, 4 threshold */
} fl_marg;

static double fl_get_method(const fl_node *n, const void *arg)
{
    const fl_marg *a = arg;
    for (unsigned i = 0; i < n->p.n_methods; i++) {
        const mw_profile_method *m = &n->p.methods[i];
        if (strcmp(m->name, a->name) || strcmp(m->verdict, a->verdict))
            continue;
        double v[] = {m->factor, m->cv, m->false_pos, m->false_neg, m->threshold};
        return v[a->what];
    }
    return NAN;
}

typedef struct fl_xarg {
    const char *mix;
    int what; /* 0 peak_ns */
} fl_xarg;

static double fl_get_mix_ns(const fl_node *n, const void *arg)
{
    int i = mw_profile_mix_find(&n->p, ((const fl_xarg *)arg)->mix);
    return i >= 0 && n->p.mixes[i].peak_ns > 0 ? n->p.mixes[i].peak_ns : NAN;
}

static double fl_get_lat_thresh(const fl_node *n, const void *arg)
{
    return !strcmp(n->p.lat_method, arg) && n->p.lat_threshold_ns > 0 ? n->p.lat_threshold_ns : NAN;
}

static double fl_get_bw_factor(const fl_node *n, const void *arg)
{
    return !strcmp(n->p.bw_method, arg) ? n->p.bw_factor : NAN;
}

static void fl_ref_methods(const fl_fleet *f, const fl_group *g, cJSON *root)
{
    cJSON *ms = cJSON_AddArrayToObject(root, "methods");
    for (unsigned i = 0; ms && i < g->n_verdict; i++) {
        const fl_verdict *v = &g->verdict[i];
        cJSON *m = cJSON_CreateObject();
        char reason[200];
        if (!m)
            break;
        cJSON_AddStringToObject(m, "name", v->name);
        cJSON_AddStringToObject(m, "verdict", v->verdict[0] ? v->verdict : "unavailable");
        if (v->verdict[0])
            snprintf(reason, sizeof reason, "the verdict of %u of %u nodes", v->agree, v->n);
        else
            snprintf(reason, sizeof reason, "no verdict common to most of %u nodes", v->n);
        cJSON_AddStringToObject(m, "reason", reason);
        const char *keys[] = {"factor", "cv", "false_pos", "false_neg", "threshold_ns"};
        for (int w = 0; v->verdict[0] && w < 5; w++) {
            fl_marg a = {v->name, v->verdict, w};
            double x = fl_group_median(f, g, fl_get_method, &a);
            if (isfinite(x))
                cJSON_AddNumberToObject(m, keys[w], x);
        }
        cJSON_AddItemToArray(ms, m);
    }
}

static void fl_ref_mixes(const fl_fleet *f, const fl_group *g, cJSON *root)
{
    cJSON *mx = cJSON_AddArrayToObject(root, "mixes");
    for (int k = 0; mx && k < FL_NMIX; k++) {
        int th = FL_MIX_TH0 + k, bw = FL_MIX_BW0 + k;
        const mw_profile_mix *first = NULL;
        size_t sat = 0, have = 0;
        for (size_t i = 0; i < g->n; i++) {
            const mw_profile *p = &f->nodes[g->member[i]].p;
            int j = mw_profile_mix_find(p, fl_mix_names[k]);
            if (j < 0)
                continue;
            first = first ? first : &p->mixes[j];
            have++;
            sat += p->mixes[j].saturated != 0;
        }
        if (!first || 2 * have <= g->n)
            continue;
        fl_xarg xa = {fl_mix_names[k], 0};
        double t = fl_group_median(f, g, fl_get_fig, &th);
        double b = fl_group_median(f, g, fl_get_fig, &bw);
        double ns = fl_group_median(f, g, fl_get_mix_ns, &xa);
        cJSON *m = cJSON_CreateObject();
        if (!m)
            break;
        cJSON_AddStringToObject(m, "name", fl_mix_names[k]);
        cJSON_AddNumberToObject(m, "read_share", first->read_share);
        cJSON_AddBoolToObject(m, "nontemporal", first->nontemporal);
        cJSON_AddNumberToObject(m, "threshold_ns", isfinite(t) ? t : 0);
        cJSON_AddNumberToObject(m, "peak_bw", isfinite(b) ? b : 0);
        cJSON_AddNumberToObject(m, "peak_ns", isfinite(ns) ? ns : 0);
        cJSON_AddBoolToObject(m, "saturated", 2 * sat > have);
        cJSON_AddItemToArray(mx, m);
    }
}

static void fl_ref_num(const fl_fleet *f, const fl_group *g, cJSON *o, const char *key, int fig)
{
    double v = fl_group_median(f, g, fl_get_fig, &fig);
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
}

static void fl_ref_machine(const fl_fleet *f, const fl_group *g, const fl_node *n0, cJSON *root)
{
    cJSON *m = cJSON_AddObjectToObject(root, "machine");
    if (m) {
        cJSON_AddStringToObject(m, "vendor", n0->vendor);
        cJSON_AddStringToObject(m, "cpu_model", n0->cpu_model);
        cJSON_AddNumberToObject(m, "family", n0->family);
        cJSON_AddNumberToObject(m, "model", n0->model);
        cJSON_AddNumberToObject(m, "stepping", n0->stepping);
        cJSON_AddStringToObject(m, "microcode", n0->ucode);
        cJSON_AddStringToObject(m, "uarch", n0->uarch);
        cJSON_AddStringToObject(m, "kernel", n0->kernel);
        cJSON_AddNumberToObject(m, "cpus", n0->cpus);
        fl_ref_num(f, g, m, "mem_total_bytes", FL_MEM_BYTES);
    }
    cJSON *h = cJSON_AddObjectToObject(root, "hierarchy");
    if (!h)
        return;
    static const struct {
        const char *key;
        int fig;
    } hk[] = {{"dram_ns", FL_DRAM_NS},
              {"triad_bw", FL_TRIAD_BW},
              {"triad_nt_bw", FL_TRIAD_NT_BW},
              {"read_sweep_peak_bw", FL_SWEEP_BW},
              {"loaded_idle_ns", FL_LOADED_IDLE_NS},
              {"outstanding_misses", FL_MLP},
              {"tlb_reach", FL_TLB_REACH}};
    for (size_t i = 0; i < sizeof hk / sizeof hk[0]; i++)
        fl_ref_num(f, g, h, hk[i].key, hk[i].fig);
    cJSON *lv = cJSON_AddArrayToObject(h, "latency_levels");
    for (int k = 0; lv && k < 4; k++) {
        int fn = FL_LEVEL_NS0 + k, fs = FL_LEVEL_SIZE0 + k;
        double ns = fl_group_median(f, g, fl_get_fig, &fn);
        double sz = fl_group_median(f, g, fl_get_fig, &fs);
        cJSON *o = isfinite(ns) ? cJSON_CreateObject() : NULL;
        if (!o)
            continue;
        cJSON_AddNumberToObject(o, "level", k + 1);
        cJSON_AddBoolToObject(o, "memory", 0);
        cJSON_AddNumberToObject(o, "ns", ns);
        cJSON_AddNumberToObject(o, "size", isfinite(sz) ? sz : 0);
        cJSON_AddItemToArray(lv, o);
    }
}

static void fl_ref_fleet(const fl_fleet *f, const fl_group *g, const fl_node *n0, cJSON *root)
{
    cJSON *fl = cJSON_AddObjectToObject(root, "fleet");
    if (!fl)
        return;
    char note[200];
    snprintf(note, sizeof note,
             "written by memwatch fleet --write-reference: the median of %zu profiles of this "
             "machine kind",
             g->n);
    cJSON_AddStringToObject(fl, "note", note);
    cJSON_AddNumberToObject(fl, "nodes", (double)g->n);
    cJSON *names = cJSON_AddArrayToObject(fl, "names");
    for (size_t i = 0; names && i < g->n; i++)
        cJSON_AddItemToArray(names, cJSON_CreateString(f->nodes[g->member[i]].name));
    cJSON_AddStringToObject(fl, "caches", n0->caches);
    cJSON *mad = cJSON_AddObjectToObject(fl, "mad");
    double *tmp = calloc(g->n ? g->n : 1, sizeof *tmp);
    for (int fig = 0; mad && tmp && fig < FL_NFIG; fig++) {
        size_t k = 0;
        for (size_t i = 0; i < g->n; i++)
            if (isfinite(f->nodes[g->member[i]].fig[fig]))
                tmp[k++] = f->nodes[g->member[i]].fig[fig];
        if (!k)
            continue;
        double m = mw_val_median_inplace(tmp, k);
        for (size_t i = 0; i < k; i++)
            tmp[i] = fabs(tmp[i] - m);
        cJSON_AddNumberToObject(mad, fl_figs[fig].key, mw_val_median_inplace(tmp, k));
    }
    free(tmp);
}

static cJSON *fl_ref_build(const fl_fleet *f, const fl_group *g)
{
    size_t nid = 0;
    const char *id = fl_common(f, g, offsetof(fl_node, p.identity), &nid);
    const fl_node *n0 = &f->nodes[g->member[0]];
    for (size_t i = 0; i < g->n; i++)
        if (!strcmp(f->nodes[g->member[i]].p.identity, id))
            n0 = &f->nodes[g->member[i]];
    const char *lat = fl_common(f, g, offsetof(fl_node, p.lat_method), NULL);
    const char *bwm = fl_common(f, g, offsetof(fl_node, p.bw_method), NULL);
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    char now[32];
    time_t t = time(NULL);
    struct tm tm;
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
    cJSON_AddStringToObject(root, "schema", MW_PROFILE_SCHEMA);
    cJSON_AddNumberToObject(root, "version", MW_PROFILE_VERSION);
    cJSON_AddStringToObject(root, "identity", id);
    cJSON_AddStringToObject(root, "created", now);
    cJSON_AddStringToObject(root, "memwatch_version", MW_VERSION);
    double tsc = fl_group_median(f, g, fl_get_tsc, NULL);
    if (isfinite(tsc))
        cJSON_AddNumberToObject(root, "tsc_hz", tsc);
    int fp = FL_PEAK_BW, fi = FL_IDLE_NS;
    double peak = fl_group_median(f, g, fl_get_fig, &fp);
    double idle = fl_group_median(f, g, fl_get_fig, &fi);
    double th = lat[0] ? fl_group_median(f, g, fl_get_lat_thresh, lat) : 0;
    double bwf = bwm[0] ? fl_group_median(f, g, fl_get_bw_factor, bwm) : 1;
    cJSON_AddNumberToObject(root, "peak_bw", isfinite(peak) ? peak : 0);
    cJSON_AddNumberToObject(root, "idle_latency_ns", isfinite(idle) ? idle : 0);
    cJSON_AddStringToObject(root, "lat_method", lat);
    cJSON_AddNumberToObject(root, "lat_threshold_ns", isfinite(th) ? th : 0);
    cJSON_AddStringToObject(root, "bw_method", bwm);
    cJSON_AddNumberToObject(root, "bw_factor", isfinite(bwf) ? bwf : 1);
    fl_ref_methods(f, g, root);
    fl_ref_mixes(f, g, root);
    int lo = 0, hi = 1;
    double blo = fl_group_median(f, g, fl_get_band, &lo),
           bhi = fl_group_median(f, g, fl_get_band, &hi);
    if (isfinite(blo) && isfinite(bhi) && blo <= bhi) {
        cJSON *b = cJSON_AddArrayToObject(root, "threshold_band_ns");
        cJSON_AddItemToArray(b, cJSON_CreateNumber(blo));
        cJSON_AddItemToArray(b, cJSON_CreateNumber(bhi));
    }
    fl_ref_machine(f, g, n0, root);
    fl_ref_fleet(f, g, n0, root);
    return root;
}

int fl_write_reference(const fl_fleet *f, const fl_group *g, const char *path)
{
    cJSON *root = fl_ref_build(f, g);
    char *s = root ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!s) {
        fprintf(stderr, "memwatch fleet: --write-reference: out of memory\n");
        return -1;
    }
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    size_t len = strlen(s), w = 0;
    while (fd >= 0 && w < len) {
        ssize_t r = write(fd, s + w, len - w);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        w += (size_t)r;
    }
    int ok = fd >= 0 && w == len && write(fd, "\n", 1) == 1 && fsync(fd) == 0;
    int err = errno;
    if (fd >= 0 && close(fd) != 0)
        ok = 0;
    if (ok && rename(tmp, path) != 0) {
        ok = 0;
        err = errno;
    }
    free(s);
    if (!ok) {
        unlink(tmp);
        fprintf(stderr, "memwatch fleet: --write-reference %s: %s\n", path, strerror(err));
        return -1;
    }
    return 0;
}
