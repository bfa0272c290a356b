/*
 * gpu/main.c: memwatch-gpu, the GPU half of `memwatch calibrate --gpu`.
 *
 *   memwatch-gpu calibrate [--device N] [--out FILE] [--svg-dir DIR] [--runs N] [--no-cupti]
 *   memwatch-gpu cupti [--device N]     only the CUPTI check of the triad
 *   memwatch-gpu devices                list CUDA devices, or say why there are none
 *
 * `memwatch calibrate --gpu ...` execs this program with the arguments that
 * followed "calibrate" (so "--gpu" may come first; it is accepted and ignored).
 * Runs the probes of gpu/probes.cu with progress on stderr, the CUPTI check of
 * gpu/cupti_check.c, prints a summary with the published Hopper figures beside
 * the measured ones, writes the GPU profile (JSON, schema in docs/gpu.md) and
 * SVG plots. May call: everything in gpu/. Single-threaded.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "memwatch/gpu.h"
#include "memwatch/memwatch.h"
#include "svg.h"

typedef struct opts {
    int device;
    const char *out;
    const char *svg_dir;
    int runs;
    int no_cupti;
} opts;

static void on_progress(const char *step, void *user)
{
    int *k = user;
    fprintf(stderr, "memwatch-gpu: [%d] %s\n", ++*k, step);
}

static int mkdir_p(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0755) && errno != EEXIST)
                return -errno;
            *p = '/';
        }
    if (mkdir(buf, 0755) && errno != EEXIST)
        return -errno;
    return 0;
}

static void json_curve(FILE *f, const char *key, const mw_gpu_curve *c, int last)
{
    fprintf(f, "    \"%s\": [", key);
    for (unsigned i = 0; i < c->n; i++)
        fprintf(f, "%s[%.6g, %.6g]", i ? ", " : "", c->p[i].x, c->p[i].y);
    fprintf(f, "]%s\n", last ? "" : ",");
}

/* Published Hopper pointer-chase figures (docs/sources.md §4), cycles. */
static const struct {
    const char *what;
    double lo, hi;
} published[] = {
    {"L1 hit", 32, 32},
    {"L2 hit near", 260, 280},
    {"L2 hit far", 415, 500},
    {"DRAM", 650, 690},
    {"shared memory", 29, 29},
};

static const char *within15(double v, double lo, double hi)
{
    if (v >= lo * 0.85 && v <= hi * 1.15)
        return "within 15 %";
    return "OUTSIDE 15 %";
}

static int cmd_devices(void)
{
    char why[256] = "";
    int n = mw_gpu_count(why, sizeof why);
    if (n <= 0) {
        printf("no CUDA device: %s\n", why);
        return 1;
    }
    for (int i = 0; i < n; i++) {
        mw_gpu_device d;
        if (mw_gpu_device_get(i, &d, why, sizeof why) == 0)
            printf("%d: %s, cc %d.%d, %d SMs, L2 %zu bytes, %d-bit bus at %.0f MHz, peak %.1f "
                   "GB/s\n",
                   i, d.name, d.cc_major, d.cc_minor, d.sms, d.l2_bytes, d.bus_width_bits,
                   d.mem_clock_hz / 1e6, d.peak_bw / 1e9);
    }
    return 0;
}

static void print_cupti(const mw_gpu_cupti *c)
{
    if (c->status) {
        printf("CUPTI check: not done: %s\n", c->status_text);
        return;
    }
    printf("CUPTI range profiler on %s (%d pass%s), triad after an L2 flush:\n", c->chip,
           c->passes, c->passes == 1 ? "" : "es");
    for (unsigned i = 0; i < c->n; i++)
        printf("  %-24s %14.4g  known %14.4g  ratio %.4f  %s (%s)\n", c->m[i].metric,
               c->m[i].value, c->m[i].expected, c->m[i].ratio, c->m[i].verdict, c->m[i].reason);
}

static int cmd_cupti(const opts *o)
{
    mw_gpu_cupti c;
    mw_gpu_cupti_check(o->device, (size_t)1 << 28, &c);
    print_cupti(&c);
    return c.status ? 1 : 0;
}

static int write_profile(const char *path, const mw_gpu_device *d, const mw_gpu_latency *l,
                         const mw_gpu_geometry *g, const mw_gpu_banks *b,
                         const mw_gpu_outstanding *os, const mw_gpu_triad *t,
                         const mw_gpu_cupti *c, double threshold)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -errno;
    time_t now = time(NULL);
    char when[32];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    double hz = l->sm_hz > 0 ? l->sm_hz : d->sm_clock_attr_hz;
    fprintf(f, "{\n  \"schema\": \"%s\",\n  \"version\": %d,\n  \"created\": \"%s\",\n",
            MW_GPU_PROFILE_SCHEMA, MW_GPU_PROFILE_VERSION, when);
    fprintf(f, "  \"device\": {\"ordinal\": %d, \"name\": \"%s\", \"cc\": \"%d.%d\", \"sms\": %d, "
               "\"l2_bytes\": %zu, \"global_bytes\": %zu, \"mem_clock_hz\": %.0f, "
               "\"bus_width_bits\": %d, \"sm_clock_attr_hz\": %.0f},\n",
            d->ordinal, d->name, d->cc_major, d->cc_minor, d->sms, d->l2_bytes, d->global_bytes,
            d->mem_clock_hz, d->bus_width_bits, d->sm_clock_attr_hz);
    fprintf(f, "  \"peak_bw\": %.6g,\n  \"threshold_bw\": %.6g,\n"
               "  \"threshold_rule\": \"%.2f x the triad's measured bandwidth\",\n",
            d->peak_bw, threshold, MW_GPU_THRESHOLD_OF_TRIAD);
    fprintf(f, "  \"sm_hz_measured\": %.6g,\n", l->sm_hz);
    fprintf(f, "  \"latency\": {\n");
    const struct {
        const char *k;
        double v;
    } lat[] = {{"l1", l->l1_cyc},
               {"l2", l->l2_cyc},
               {"l2_near", l->l2_near_cyc},
               {"l2_far", l->l2_far_cyc},
               {"dram", l->dram_cyc},
               {"smem", l->smem_cyc},
               {"l1_fine_grained", l->l1_fg_cyc},
               {"l2_fine_grained", l->l2_fg_cyc},
               {"dram_fine_grained", l->dram_fg_cyc}};
    for (size_t i = 0; i < sizeof lat / sizeof lat[0]; i++)
        fprintf(f, "    \"%s\": {\"cycles\": %.1f, \"ns\": %.1f}%s\n", lat[i].k, lat[i].v,
                lat[i].v / hz * 1e9, i + 1 < sizeof lat / sizeof lat[0] ? "," : "");
    fprintf(f, "  },\n  \"l2_far_fraction\": %.3f,\n  \"l2_far_sm\": %d,\n", l->far_fraction,
            l->far_sm);
    fprintf(f, "  \"l2_partitions\": {\n");
    json_curve(f, "median_by_warming_sm", &l->far_by_sm, 0);
    json_curve(f, "hist_far_sm", &l->l2_hist, 1);
    fprintf(f, "  },\n");
    fprintf(f, "  \"geometry\": {\n    \"l1_bytes\": %zu, \"l1_line_bytes\": %zu, "
               "\"l1_fill_bytes\": %zu, \"l1_assoc\": %d, \"l1_sets\": %d, \"l1_policy\": \"%s\",\n"
               "    \"l2_bytes\": %zu, \"l2_near_bytes\": %zu, \"l2_chip_bytes\": %zu, \"l2_attr_bytes\": %zu, \"tlb1_reach\": %zu, "
               "\"tlb2_reach\": %zu, \"tlb1_penalty_cycles\": %.1f, \"tlb2_penalty_cycles\": %.1f,\n",
            g->l1_bytes, g->l1_line_bytes, g->l1_fill_bytes, g->l1_assoc, g->l1_sets, g->l1_policy,
            g->l2_bytes, g->l2_near_bytes, g->l2_chip_bytes, g->l2_attr_bytes, g->tlb1_reach, g->tlb2_reach, g->tlb1_penalty_cyc,
            g->tlb2_penalty_cyc);
    json_curve(f, "l1_curve", &g->l1_curve, 0);
    json_curve(f, "l2_curve", &g->l2_curve, 0);
    json_curve(f, "l2_chip_curve", &g->l2_chip_curve, 0);
    json_curve(f, "tlb_curve", &g->tlb_curve, 0);
    fprintf(f, "    \"l1_sets_note\": \"%s\", \"l2_assoc\": %d, \"l2_sets\": %d, "
               "\"l2_sets_note\": \"%s\", \"l1_scan_max\": %d, \"l2_scan_max\": %d,\n",
            g->l1_sets_note, g->l2_assoc, g->l2_sets, g->l2_sets_note, g->l1_scan_max,
            g->l2_scan_max);
    json_curve(f, "l1_conflict", &g->l1_conflict, 0);
    json_curve(f, "l2_conflict", &g->l2_conflict, 0);
    const int *evs[2] = {g->l1_evset, g->l2_evset};
    const int evt[2] = {g->l1_ev_tests, g->l2_ev_tests};
    const double evms[2] = {g->l1_ev_ms, g->l2_ev_ms};
    const char *evn[2] = {g->l1_ev_note, g->l2_ev_note};
    const mw_gpu_curve *evm[2] = {&g->l1_mates, &g->l2_mates};
    for (int lv = 0; lv < 2; lv++) {
        char key[32];
        fprintf(f, "    \"l%d_evset\": [", lv + 1);
        for (int tg = 0; tg < MW_GPU_EVSET_TARGETS; tg++)
            fprintf(f, "%s%d", tg ? ", " : "", evs[lv][tg]);
        fprintf(f, "], \"l%d_ev_tests\": %d, \"l%d_ev_ms\": %.1f, \"l%d_ev_note\": \"%s\",\n",
                lv + 1, evt[lv], lv + 1, evms[lv], lv + 1, evn[lv]);
        snprintf(key, sizeof key, "l%d_mates", lv + 1);
        json_curve(f, key, evm[lv], 0);
    }
    for (int k = 0; k < MW_GPU_TLB_SPANS; k++) {
        char key[48];
        fprintf(f, "    \"tlb_span%d\": {\"span\": %zu, \"step\": %zu, \"penalty_cycles\": %.1f},\n",
                k, g->tlb_span_bytes[k], g->tlb_span_step[k], g->tlb_span_penalty[k]);
        snprintf(key, sizeof key, "tlb_span%d_curve", k);
        json_curve(f, key, &g->tlb_span[k], 0);
    }
    fprintf(f, "    \"tlb_evict_lo\": %zu, \"tlb_evict_hi\": %zu, \"tlb_note\": \"%s\",\n",
            g->tlb_evict_lo, g->tlb_evict_hi, g->tlb_note);
    json_curve(f, "tlb_evict", &g->tlb_evict, 1);
    fprintf(f, "  },\n  \"banks\": {\n    \"spearman_4\": %.3f, \"spearman_8\": %.3f,\n", b->corr4,
            b->corr8);
    json_curve(f, "lat4", &b->lat4, 0);
    json_curve(f, "lat8", &b->lat8, 0);
    fprintf(f, "    \"degree4\": [");
    for (unsigned i = 0; i < b->lat4.n; i++)
        fprintf(f, "%s%d", i ? ", " : "", b->degree4[i]);
    fprintf(f, "],\n    \"degree8\": [");
    for (unsigned i = 0; i < b->lat8.n; i++)
        fprintf(f, "%s%d", i ? ", " : "", b->degree8[i]);
    fprintf(f, "]\n  },\n  \"outstanding\": {\n    \"limit_requests\": %d, \"base_cycles\": %.1f, "
               "\"slope_cycles_per_request\": %.3f, \"spike_requests\": %d, \"spike_var\": %.4g, "
               "\"repeats\": %d,\n",
            os->limit_requests, os->base_cyc, os->slope_cyc, os->spike_requests, os->spike_var,
            os->repeats);
    json_curve(f, "combined", &os->combined, 0);
    for (int i = 0; i < 4; i++) {
        char k[16];
        snprintf(k, sizeof k, "loads%d", i + 1);
        json_curve(f, k, &os->lat[i], i == 3);
    }
    fprintf(f, "  },\n  \"triad\": {\"n\": %zu, \"bytes\": %.6g, \"triad_bw\": %.6g, "
               "\"memcpy_bw\": %.6g, \"triad_pct_peak\": %.2f, \"memcpy_pct_peak\": %.2f, "
               "\"triad_over_memcpy\": %.4f, \"runs\": %d, \"reps\": %d, \"variant\": \"%s\", "
               "\"variant_bw\": [%.6g, %.6g, %.6g]},\n",
            t->n, t->bytes, t->triad_bw, t->memcpy_bw, 100 * t->triad_bw / t->peak_bw,
            100 * t->memcpy_bw / t->peak_bw, t->triad_bw / t->memcpy_bw, t->runs, t->reps, t->variant,
            t->variant_bw[0], t->variant_bw[1], t->variant_bw[2]);
    fprintf(f, "  \"cupti\": {\"status\": %d, \"status_text\": \"", c->status);
    for (const char *s = c->status_text; *s; s++)
        fputs(*s == '"' ? "\\\"" : (char[2]){*s, 0}, f);
    fprintf(f, "\", \"chip\": \"%s\", \"passes\": %d, \"metrics\": [", c->chip, c->passes);
    for (unsigned i = 0; i < c->n; i++)
        fprintf(f, "%s\n    {\"metric\": \"%s\", \"value\": %.6g, \"expected\": %.6g, "
                   "\"ratio\": %.5f, \"verdict\": \"%s\", \"reason\": \"%s\"}",
                i ? "," : "", c->m[i].metric, c->m[i].value, c->m[i].expected, c->m[i].ratio,
                c->m[i].verdict, c->m[i].reason);
    fprintf(f, "]}\n}\n");
    if (fclose(f))
        return -errno;
    return rename(tmp, path) ? -errno : 0;
}

static void plots(const char *dir, const mw_gpu_latency *l, const mw_gpu_geometry *g,
                  const mw_gpu_banks *b, const mw_gpu_outstanding *os)
{
    char p[4200], lbl[64];
    if (mkdir_p(dir))
        return;
    const mw_gpu_curve *c4[4] = {&os->lat[0], &os->lat[1], &os->lat[2], &os->lat[3]};
    snprintf(p, sizeof p, "%s/gpu_outstanding.svg", dir);
    snprintf(lbl, sizeof lbl, "knee: %d requests in flight (1 load/thread)", os->limit_requests);
    mw_svg_plot(p, "Outstanding requests: latency vs threads in one block", "threads",
                "mean latency (cycles)", c4, 4, 0, os->limit_requests, lbl);
    const mw_gpu_curve *cr[1] = {&os->combined};
    snprintf(p, sizeof p, "%s/gpu_outstanding_requests.svg", dir);
    snprintf(lbl, sizeof lbl, "knee: %d requests", os->limit_requests);
    mw_svg_plot(p, "Outstanding requests: latency vs requests in flight (1..4 loads per thread)",
                "requests in flight (threads x loads)", "median latency (cycles)", cr, 1, 0,
                os->limit_requests, lbl);
    const mw_gpu_curve *cb[2] = {&b->lat4, &b->lat8};
    snprintf(p, sizeof p, "%s/gpu_banks.svg", dir);
    mw_svg_plot(p, "Shared-memory bank conflicts", "stride (words)", "cycles per warp access",
                cb, 2, 0, 0, NULL);
    const mw_gpu_curve *c1[1] = {&g->l1_curve};
    snprintf(p, sizeof p, "%s/gpu_l1.svg", dir);
    mw_svg_plot(p, "L1: miss share vs array size", "KiB", "miss share", c1, 1, 0,
                g->l1_bytes / 1024.0, "L1 size");
    const mw_gpu_curve *c2[1] = {&g->l2_curve};
    snprintf(p, sizeof p, "%s/gpu_l2.svg", dir);
    mw_svg_plot(p, "L2: chase latency vs array size", "MiB", "mean cycles", c2, 1, 0,
                g->l2_bytes / 1048576.0, "L2 size (halfway to DRAM)");
    const mw_gpu_curve *cc[1] = {&g->l2_chip_curve};
    snprintf(p, sizeof p, "%s/gpu_l2_chip.svg", dir);
    mw_svg_plot(p, "L2, chip-wide: read bandwidth vs footprint", "MiB", "GB/s", cc, 1, 0,
                g->l2_chip_bytes / 1048576.0, "halfway");
    const mw_gpu_curve *ct[MW_GPU_TLB_SPANS];
    for (int k = 0; k < MW_GPU_TLB_SPANS; k++)
        ct[k] = &g->tlb_span[k];
    snprintf(p, sizeof p, "%s/gpu_tlb.svg", dir);
    mw_svg_plot(p, "TLB: pointers 2, 32, 512 MiB apart, L1 bypassed", "footprint (GiB)",
                "mean cycles per load", ct, MW_GPU_TLB_SPANS, 1, g->tlb1_reach / 1073741824.0,
                "first step");
    const mw_gpu_curve *ce[1] = {&g->tlb_evict};
    snprintf(p, sizeof p, "%s/gpu_tlb_evict.svg", dir);
    mw_svg_plot(p, "TLB eviction: a 1 GiB ring read once after touching x GiB elsewhere",
                "GiB touched elsewhere", "median cycles of the first pass", ce, 1, 0,
                g->tlb_evict_hi / 1073741824.0, "translations lost");
    const mw_gpu_curve *cs[2] = {&g->l1_conflict, &g->l2_conflict};
    snprintf(p, sizeof p, "%s/gpu_sets.svg", dir);
    mw_svg_plot(p, "Conflict scans: fewest lines that miss (0: none up to 160 / 384)",
                "stride (KiB)", "lines", cs, 2, 1, 0, NULL);
    const mw_gpu_curve *cm[2] = {&g->l1_mates, &g->l2_mates};
    snprintf(p, sizeof p, "%s/gpu_evsets.svg", dir);
    mw_svg_plot(p, "Eviction sets: the target's miss share vs set-mates traversed",
                "set-mates traversed (lines)", "share of reloads that miss", cm, 2, 0, 0, NULL);
    const mw_gpu_curve *ch[1] = {&l->l2_hist};
    snprintf(p, sizeof p, "%s/gpu_l2_hist.svg", dir);
    mw_svg_plot(p, "L2 hits from SM 0 of lines another SM brought in", "cycles", "accesses", ch,
                1, 0, 0, NULL);
}

static int cmd_calibrate(const opts *o)
{
    char why[256] = "", path[4096];
    int k = 0, rc;
    int n = mw_gpu_count(why, sizeof why);
    if (n <= 0) {
        fprintf(stderr, "memwatch-gpu: no CUDA device: %s\n", why);
        return 1;
    }
    if (o->device >= n) {
        fprintf(stderr, "memwatch-gpu: no device %d (%d present)\n", o->device, n);
        return 2;
    }
    mw_gpu_device d;
    mw_gpu_device_get(o->device, &d, why, sizeof why);
    static mw_gpu_latency l;
    static mw_gpu_geometry g;
    static mw_gpu_banks b;
    static mw_gpu_outstanding os;
    static mw_gpu_triad t;
    static mw_gpu_cupti c;
    fprintf(stderr, "memwatch-gpu: calibrating %s (cc %d.%d, %d SMs)\n", d.name, d.cc_major,
            d.cc_minor, d.sms);
    if ((rc = mw_gpu_probe_latency(o->device, &l, on_progress, &k)) ||
        (rc = mw_gpu_probe_geometry(o->device, &l, &g, on_progress, &k))) {
        fprintf(stderr, "memwatch-gpu: the P-chase failed (%d)\n", rc);
        return 1;
    }
    on_progress("shared-memory bank conflicts: stride 0..64, 4- and 8-byte words", &k);
    if ((rc = mw_gpu_probe_banks(o->device, &b)) ||
        (rc = mw_gpu_probe_outstanding(o->device, &os, on_progress, &k))) {
        fprintf(stderr, "memwatch-gpu: a probe failed (%d)\n", rc);
        return 1;
    }
    on_progress("triad and device-to-device cudaMemcpy, interleaved, best of runs", &k);
    if ((rc = mw_gpu_probe_triad(o->device, o->runs, &t))) {
        fprintf(stderr, "memwatch-gpu: the triad failed (%d)\n", rc);
        return 1;
    }
    if ((rc = mw_gpu_probe_structure(o->device, &l, &g, on_progress, &k))) {
        fprintf(stderr, "memwatch-gpu: the structure scans failed (%d)\n", rc);
        return 1;
    }
    if (o->no_cupti) {
        c.status = MW_ERR_UNSUPPORTED;
        snprintf(c.status_text, sizeof c.status_text, "skipped (--no-cupti)");
    } else {
        on_progress("CUPTI range profiler: triad after an L2 flush", &k);
        mw_gpu_cupti_check(o->device, t.n, &c);
    }

    double hz = l.sm_hz > 0 ? l.sm_hz : d.sm_clock_attr_hz;
    printf("GPU %d: %s, cc %d.%d, %d SMs, SM clock %.0f MHz measured (attribute %.0f MHz)\n",
           d.ordinal, d.name, d.cc_major, d.cc_minor, d.sms, l.sm_hz / 1e6,
           d.sm_clock_attr_hz / 1e6);
    double got[] = {l.l1_cyc, l.l2_near_cyc, l.l2_far_cyc, l.dram_cyc, l.smem_cyc};
    printf("latency (P-chase, cycles / ns; published Hopper figures from docs/sources.md §4):\n");
    for (size_t i = 0; i < sizeof got / sizeof got[0]; i++)
        printf("  %-14s %7.1f cyc %7.1f ns   published %.0f-%.0f cyc: %s\n", published[i].what,
               got[i], got[i] / hz * 1e9, published[i].lo, published[i].hi,
               within15(got[i], published[i].lo, published[i].hi));
    printf("  (near/far: L2 hits from SM 0 of a ring SM %d brought in; far mode %.0f %% of "
           "them)\n",
           l.far_sm, 100 * l.far_fraction);
    printf("  plain-chase L2 hit (own lines) %.1f cyc; fine-grained (timing each access, "
           "recording it in shared memory): L1 %.1f, L2 %.1f, DRAM %.1f cyc\n",
           l.l2_cyc, l.l1_fg_cyc, l.l2_fg_cyc, l.dram_fg_cyc);
    char l1geo[64] = "ways and sets: none from strides (below)";
    if (g.l1_assoc)
        snprintf(l1geo, sizeof l1geo, "assoc %d, sets %d", g.l1_assoc, g.l1_sets);
    printf("L1: %zu KiB without misses (carveout preferring L1), line %zu B, cold-walk fill "
           "period %zu B, %s; replacement: %s\n",
           g.l1_bytes >> 10, g.l1_line_bytes, g.l1_fill_bytes, l1geo, g.l1_policy);
    printf("L2: attribute %.1f MiB; one SM's chase: whole L2 %.1f MiB (%+.1f %%), near "
           "partition %.1f MiB; chip-wide bandwidth knee %.1f MiB (%+.1f %%)\n",
           g.l2_attr_bytes / 1048576.0, g.l2_bytes / 1048576.0,
           g.l2_attr_bytes ? 100.0 * ((double)g.l2_bytes / g.l2_attr_bytes - 1) : 0,
           g.l2_near_bytes / 1048576.0, g.l2_chip_bytes / 1048576.0,
           g.l2_attr_bytes ? 100.0 * ((double)g.l2_chip_bytes / g.l2_attr_bytes - 1) : 0);
    printf("L1 sets (conflict scan): %s\n", g.l1_sets_note);
    printf("L2 sets (conflict scan): %s\n", g.l2_sets_note);
    printf("L1 ways and sets (eviction sets, %d tests, %.0f ms): %s\n", g.l1_ev_tests,
           g.l1_ev_ms, g.l1_ev_note);
    printf("L2 ways and sets (eviction sets, %d tests, %.0f ms): %s\n", g.l2_ev_tests,
           g.l2_ev_ms, g.l2_ev_note);
    printf("TLB (pointers a span apart, L1 bypassed; first step of the mean latency):\n");
    for (int sk = 0; sk < MW_GPU_TLB_SPANS; sk++) {
        const mw_gpu_curve *cv = &g.tlb_span[sk];
        double top = cv->n ? cv->p[cv->n - 1].x : 0;
        if (g.tlb_span_step[sk])
            printf("  span %4zu MiB: step past %.1f GiB (%zu pointers), +%.0f cyc\n",
                   g.tlb_span_bytes[sk] >> 20, g.tlb_span_step[sk] / 1073741824.0,
                   g.tlb_span_step[sk] / g.tlb_span_bytes[sk], g.tlb_span_penalty[sk]);
        else
            printf("  span %4zu MiB: no step up to %.1f GiB (%.0f pointers)\n",
                   g.tlb_span_bytes[sk] >> 20, top,
                   g.tlb_span_bytes[sk] ? top * 1073741824.0 / g.tlb_span_bytes[sk] : 0);
    }
    printf("  eviction: %s\n", g.tlb_note);
    printf("bank conflicts: Spearman(latency, degree) = %.3f (4-byte), %.3f (8-byte); stride 1 "
           "%.1f cyc, stride 32 %.1f cyc (degree %d)\n",
           b.corr4, b.corr8, b.lat4.p[1].y, b.lat4.p[32].y, b.degree4[32]);
    printf("outstanding requests (one block, loads to distinct 128-B lines from DRAM, median of "
           "%d cold runs): latency flat at %.0f cyc up to %d requests in flight per SM, then "
           "+%.2f cyc per request; largest 3-point variance (Lashgar) at %d requests\n",
           os.repeats, os.base_cyc, os.limit_requests, os.slope_cyc, os.spike_requests);
    printf("triad %.1f GB/s (%.1f %% of peak %.1f GB/s; shape %s), D2D cudaMemcpy %.1f GB/s "
           "(%.1f %%): triad/memcpy = %.3f\n",
           t.triad_bw / 1e9, 100 * t.triad_bw / t.peak_bw, t.peak_bw / 1e9, t.variant,
           t.memcpy_bw / 1e9, 100 * t.memcpy_bw / t.peak_bw, t.triad_bw / t.memcpy_bw);
    printf("  triad shapes: vec2x1 %.1f, vec2x4 %.1f, scalar %.1f GB/s; %zu doubles per array, "
           "best of %d runs of %d launches each\n",
           t.variant_bw[0] / 1e9, t.variant_bw[1] / 1e9, t.variant_bw[2] / 1e9, t.n, t.runs, t.reps);
    print_cupti(&c);

    double threshold = MW_GPU_THRESHOLD_OF_TRIAD * t.triad_bw;
    printf("flagging threshold: %.1f GB/s (%.2f x triad)\n", threshold / 1e9,
           MW_GPU_THRESHOLD_OF_TRIAD);
    if (o->out)
        snprintf(path, sizeof path, "%s", o->out);
    else if (mw_gpu_profile_path(path, sizeof path)) {
        fprintf(stderr, "memwatch-gpu: no place for the profile (set --out)\n");
        return 1;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = 0;
        mkdir_p(dir);
    } else {
        snprintf(dir, sizeof dir, ".");
    }
    if ((rc = write_profile(path, &d, &l, &g, &b, &os, &t, &c, threshold))) {
        fprintf(stderr, "memwatch-gpu: cannot write %s: %s\n", path, strerror(-rc));
        return 1;
    }
    printf("GPU profile written to %s\n", path);
    const char *sd = o->svg_dir ? o->svg_dir : dir;
    plots(sd, &l, &g, &b, &os);
    printf("plots: %s/gpu_{outstanding,outstanding_requests,banks,l1,l2,l2_chip,tlb,tlb_evict,sets,l2_hist}.svg\n", sd);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: memwatch-gpu calibrate [--device N] [--out FILE] [--svg-dir DIR] "
               "[--runs N] [--no-cupti]\n"
               "       memwatch-gpu cupti [--device N]\n"
               "       memwatch-gpu devices\n");
}

int main(int argc, char **argv)
{
    opts o = {0, NULL, NULL, 30, 0};
    const char *cmd = "calibrate";
    int i = 1;
    if (argc > 1 && argv[1][0] != '-')
        cmd = argv[i++];
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--gpu"))
            continue;
        else if (!strcmp(argv[i], "--device") && i + 1 < argc)
            o.device = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            o.out = argv[++i];
        else if (!strcmp(argv[i], "--svg-dir") && i + 1 < argc)
            o.svg_dir = argv[++i];
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            o.runs = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 30;
        else if (!strcmp(argv[i], "--no-cupti"))
            o.no_cupti = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "memwatch-gpu: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(cmd, "calibrate"))
        return cmd_calibrate(&o);
    if (!strcmp(cmd, "cupti"))
        return cmd_cupti(&o);
    if (!strcmp(cmd, "devices"))
        return cmd_devices();
    usage(stderr);
    return 2;
}
