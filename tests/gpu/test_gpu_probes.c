/*
 * tests/gpu/test_gpu_probes.c (gpu): the probes against what is known —
 * published Hopper latencies (docs/sources.md §4, within 15 %), the L2 size
 * attribute (within 10 %), bank-conflict latency rising with the conflict
 * degree, an outstanding-request spike, and the triad at >= 0.98x the
 * device-to-device cudaMemcpy rate of the same run. Skips without a GPU.
 */
#include <stdio.h>
#include <string.h>

#include "gpu_skip.h"

static void near15(const char *what, double v, double lo, double hi)
{
    MW_CHECK(v >= lo * 0.85 && v <= hi * 1.15, "%s: %.1f cycles, published %.0f-%.0f", what, v,
             lo, hi);
    printf("%-12s %7.1f cycles (published %.0f-%.0f)\n", what, v, lo, hi);
}

int main(void)
{
    mw_gpu_require();
    mw_gpu_device d;
    char why[256];
    MW_CHECK_INT(mw_gpu_device_get(0, &d, why, sizeof why), 0);
    printf("device: %s, cc %d.%d, L2 %zu\n", d.name, d.cc_major, d.cc_minor, d.l2_bytes);
    static mw_gpu_latency l;
    static mw_gpu_geometry g;
    static mw_gpu_banks b;
    static mw_gpu_outstanding o;
    static mw_gpu_triad t;
    MW_CHECK_INT(mw_gpu_probe_latency(0, &l, NULL, NULL), 0);
    MW_CHECK(l.sm_hz > 5e8 && l.sm_hz < 4e9, "SM clock %.0f Hz", l.sm_hz);
    if (d.cc_major == 9) {
        near15("L1 hit", l.l1_cyc, 32, 32);
        near15("L2 near", l.l2_near_cyc, 260, 280);
        near15("L2 far", l.l2_far_cyc, 415, 500);
        near15("DRAM", l.dram_cyc, 650, 690);
    } else {
        printf("not a Hopper GPU: latency figures not compared\n");
        MW_CHECK(l.l1_cyc < l.l2_cyc && l.l2_cyc < l.dram_cyc, "L1 < L2 < DRAM");
    }
    MW_CHECK_INT(mw_gpu_probe_geometry(0, &l, &g, NULL, NULL), 0);
    MW_CHECK_NEAR((double)g.l2_bytes, (double)g.l2_attr_bytes, 0.10);
    /* One SM's near partition holds about half a Hopper L2. */
    MW_CHECK(d.cc_major != 9 || (g.l2_near_bytes > g.l2_attr_bytes / 3 &&
                                 g.l2_near_bytes < g.l2_attr_bytes * 2 / 3),
             "near partition %zu of %zu", g.l2_near_bytes, g.l2_attr_bytes);
    printf("L2 one SM %zu (near partition %zu), chip-wide %zu, attribute %zu; L1 %zu; TLB %zu / "
           "%zu\n", g.l2_bytes, g.l2_near_bytes, g.l2_chip_bytes, g.l2_attr_bytes, g.l1_bytes,
           g.tlb1_reach, g.tlb2_reach);
    MW_CHECK(g.l1_bytes >= 16384, "L1 size %zu", g.l1_bytes);
    /* structure scans: every stride scanned; ways and sets found or the
     * reason; TLB span curves and the eviction test measured, the ring's
     * first pass before any eviction at an L2 hit's latency */
    MW_CHECK_INT(mw_gpu_probe_structure(0, &l, &g, NULL, NULL), 0);
    MW_CHECK_INT(g.l1_conflict.n, 6);
    MW_CHECK_INT(g.l2_conflict.n, 4);
    printf("L1 sets: %s\nL2 sets: %s\nTLB: %s\n", g.l1_sets_note, g.l2_sets_note, g.tlb_note);
    MW_CHECK((g.l1_assoc > 0 && g.l1_sets > 0) || strstr(g.l1_sets_note, "hashed") ||
                 strstr(g.l1_sets_note, "not a modulo"),
             "L1: %s", g.l1_sets_note);
    MW_CHECK((g.l2_assoc > 0 && g.l2_sets > 0) || strstr(g.l2_sets_note, "hashed") ||
                 strstr(g.l2_sets_note, "not a modulo"),
             "L2: %s", g.l2_sets_note);
    /* eviction sets: tests ran at both levels; where a set was found, its
     * mates curve starts with the target kept (0 mates: a hit) and ends with
     * it evicted; ways and sets agree with the note */
    printf("L1 eviction sets (%d tests, %.0f ms): %s\nL2 eviction sets (%d tests, %.0f ms): %s\n",
           g.l1_ev_tests, g.l1_ev_ms, g.l1_ev_note, g.l2_ev_tests, g.l2_ev_ms, g.l2_ev_note);
    const mw_gpu_curve *mc[2] = {&g.l1_mates, &g.l2_mates};
    const int *es[2] = {g.l1_evset, g.l2_evset};
    for (int lv = 0; lv < 2; lv++) {
        MW_CHECK((lv ? g.l2_ev_tests : g.l1_ev_tests) > 0, "L%d: no eviction tests", lv + 1);
        int sz = 0;
        for (int tg = 0; tg < MW_GPU_EVSET_TARGETS && !sz; tg++)
            sz = es[lv][tg];
        if (!sz)
            continue;
        MW_CHECK(mc[lv]->n >= (unsigned)sz + 1, "L%d mates: %u points for a set of %d", lv + 1,
                 mc[lv]->n, sz);
        MW_CHECK(mc[lv]->p[0].y < 0.2, "L%d: the target misses %.2f with no mates", lv + 1,
                 mc[lv]->p[0].y);
        MW_CHECK(mc[lv]->p[mc[lv]->n - 1].y > 0.5, "L%d: the target stays (%.2f) with all mates",
                 lv + 1, mc[lv]->p[mc[lv]->n - 1].y);
    }
    MW_CHECK(!strstr(g.l1_ev_note, " ways;") || (g.l1_assoc > 0 && g.l1_sets > 0), "L1: %s",
             g.l1_ev_note);
    for (int k = 0; k < MW_GPU_TLB_SPANS; k++)
        MW_CHECK(g.tlb_span[k].n >= 5, "TLB span %d: %u points", k, g.tlb_span[k].n);
    MW_CHECK(g.tlb_evict.n >= 3, "eviction points %u", g.tlb_evict.n);
    MW_CHECK(g.tlb_evict_base > 0 && g.tlb_evict_base < 1.5 * l.l2_fg_cyc,
             "ring before eviction %.0f cycles, L2 hit %.0f", g.tlb_evict_base, l.l2_fg_cyc);

    MW_CHECK_INT(mw_gpu_probe_banks(0, &b), 0);
    MW_CHECK(b.corr4 > 0.8, "4-byte latency vs degree: Spearman %.3f", b.corr4);
    MW_CHECK(b.corr8 > 0.8, "8-byte latency vs degree: Spearman %.3f", b.corr8);
    MW_CHECK_INT(b.degree4[32], 32);
    MW_CHECK_INT(b.degree4[1], 1);
    /* Strides 1, 2, 4, 8, 16, 32 give degrees 1..32: each must cost more. */
    for (int s = 2; s <= 32; s *= 2)
        MW_CHECK(b.lat4.p[s].y > b.lat4.p[s / 2].y, "stride %d (degree %d) %.1f cycles, not above "
                 "stride %d %.1f", s, b.degree4[s], b.lat4.p[s].y, s / 2, b.lat4.p[s / 2].y);
    MW_CHECK(b.lat4.p[32].y > 2 * b.lat4.p[1].y, "stride 32 %.1f vs stride 1 %.1f cycles",
             b.lat4.p[32].y, b.lat4.p[1].y);

    MW_CHECK_INT(mw_gpu_probe_outstanding(0, &o, NULL, NULL), 0);
    MW_CHECK(o.limit_requests > 0, "no outstanding-request knee");
    MW_CHECK(o.slope_cyc > 0, "latency does not rise with requests in flight");
    printf("outstanding: flat %.0f cycles up to %d requests, then +%.2f per request; variance "
           "spike at %d\n", o.base_cyc, o.limit_requests, o.slope_cyc, o.spike_requests);

    MW_CHECK_INT(mw_gpu_probe_triad(0, 20, &t), 0);
    printf("triad %.1f GB/s (%.1f %% of peak, shape %s; vec2x1 %.1f, vec2x4 %.1f, scalar %.1f), "
           "memcpy %.1f GB/s (%.1f %%), ratio %.3f\n",
           t.triad_bw / 1e9, 100 * t.triad_bw / t.peak_bw, t.variant, t.variant_bw[0] / 1e9,
           t.variant_bw[1] / 1e9, t.variant_bw[2] / 1e9, t.memcpy_bw / 1e9,
           100 * t.memcpy_bw / t.peak_bw, t.triad_bw / t.memcpy_bw);
    MW_CHECK(t.triad_bw >= 0.98 * t.memcpy_bw, "triad %.4g < 0.98 x memcpy %.4g", t.triad_bw,
             t.memcpy_bw);
    MW_CHECK(t.triad_bw < t.peak_bw, "triad above the computed peak");
    return mw_test_done();
}
