/*
 * tests/gpu/test_gpu_struct.c (unit): the GPU structure probes' arithmetic on
 * synthetic chase results: conflict scans of simulated LRU caches with a
 * modulo set index (ways and sets recovered at several geometries) and of a
 * hashed one (no conflicts: reported as such), the first step of latency
 * curves measured on an H200 (TLB spans), eviction bounds.
 */
#include <stdio.h>
#include <string.h>

#include "memwatch/gpu.h"
#include "mw_test.h"

/* The fewest lines `stride` apart whose cyclic chase misses in an LRU cache
 * of `sets` x `ways` lines of `line` bytes: when one set gets ways + 1 of
 * them (0 when none up to max). hashed: the set index mixes the high bits. */
static int first_miss(size_t stride, size_t line, int sets, int ways, int max, int hashed)
{
    int count[4096] = {0};
    for (int n = 1; n <= max; n++) {
        size_t a = (size_t)(n - 1) * stride / line;
        size_t set = hashed ? (a ^ (a >> 7) ^ (a >> 13) ^ (a >> 17) * 0x9e37u) % (size_t)sets
                            : a % (size_t)sets;
        if (++count[set] > ways)
            return n;
    }
    return 0;
}

static void scan(mw_gpu_curve *c, size_t line, int sets, int ways, int max, int hashed)
{
    memset(c, 0, sizeof *c);
    for (size_t s = 1024; s <= (1u << 20); s *= 2) {
        c->p[c->n].x = s / 1024.0;
        c->p[c->n].y = first_miss(s, line, sets, ways, max, hashed);
        c->n++;
    }
}

static void test_conflicts(void)
{
    static const struct {
        int sets, ways;
    } geo[] = {{64, 4}, {32, 8}, {256, 6}, {16, 16}, {512, 2}};
    char why[240];
    int w, s;
    mw_gpu_curve c;
    for (unsigned g = 0; g < sizeof geo / sizeof geo[0]; g++) {
        scan(&c, 128, geo[g].sets, geo[g].ways, 160, 0);
        MW_CHECK_INT(mw_gpu_conflict_analyse(&c, 128, 160, 0, &w, &s, why, sizeof why), 0);
        MW_CHECK(w == geo[g].ways && s == geo[g].sets, "%d x %d read as %d x %d (%s)",
                 geo[g].ways, geo[g].sets, w, s, why);
    }
    /* the same scan checked against the measured size: 4 x 64 x 128 B = 32 KiB
     * fits a 32 KiB cache, not a 8 KiB one; the H200's L2 scan that leveled
     * off at 17 lines from 16 MiB on (16 x 131072 sets: 256 MiB) is refused
     * against its 60 MiB */
    scan(&c, 128, 64, 4, 160, 0);
    MW_CHECK_INT(mw_gpu_conflict_analyse(&c, 128, 160, 32768, &w, &s, why, sizeof why), 0);
    MW_CHECK_INT(mw_gpu_conflict_analyse(&c, 128, 160, 8192, &w, &s, why, sizeof why), 1);
    MW_CHECK(w == 0 && strstr(why, "not a modulo") != NULL, "%d ways: %s", w, why);
    memset(&c, 0, sizeof c);
    static const double l2x[] = {1024, 4096, 16384, 65536}, l2y[] = {0, 0, 17, 17};
    for (int i = 0; i < 4; i++) {
        c.p[i].x = l2x[i];
        c.p[i].y = l2y[i];
    }
    c.n = 4;
    MW_CHECK_INT(mw_gpu_conflict_analyse(&c, 128, 384, 0, &w, &s, why, sizeof why), 0);
    MW_CHECK(w == 16 && s == 131072, "unchecked: %d x %d", w, s);
    MW_CHECK_INT(mw_gpu_conflict_analyse(&c, 128, 384, (size_t)60 << 20, &w, &s, why, sizeof why), 1);
    MW_CHECK_INT(w, 0);
    /* a hashed index (or more ways than lines scanned): nothing to read */
    scan(&c, 128, 64, 4, 160, 1);
    MW_CHECK_INT(mw_gpu_conflict_analyse(&c, 128, 160, 0, &w, &s, why, sizeof why), 1);
    MW_CHECK(w == 0 && s == 0, "hashed read as %d x %d", w, s);
    scan(&c, 128, 64, 200, 160, 0); /* 200 ways: no set ever overflows within 160 lines */
    MW_CHECK_INT(mw_gpu_conflict_analyse(&c, 128, 160, 0, &w, &s, why, sizeof why), 1);
    MW_CHECK(strstr(why, "hashed") != NULL, "reason: %s", why);
    /* misses that do not level off (a count still falling at the largest
     * stride) are not read as ways */
    memset(&c, 0, sizeof c);
    for (int i = 0; i < 6; i++) {
        c.p[i].x = 1 << i;
        c.p[i].y = 120 >> i;
    }
    c.n = 6;
    MW_CHECK_INT(mw_gpu_conflict_analyse(&c, 128, 160, 0, &w, &s, why, sizeof why), 1);
    MW_CHECK_INT(w, 0);
}

static void curve(mw_gpu_curve *c, const double *x, const double *y, unsigned n)
{
    memset(c, 0, sizeof *c);
    for (unsigned i = 0; i < n; i++) {
        c->p[i].x = x[i];
        c->p[i].y = y[i];
    }
    c->n = n;
}

static void test_steps(void)
{
    mw_gpu_curve c;
    double h = 0;
    /* 32 MiB span on the H200, L1 bypassed: flat near 260 cycles, +94 past 63 GiB
     * (cold first points above the plateau are not a step) */
    static const double x1[] = {2, 4, 8, 16, 32, 40, 50, 63, 79, 99, 123};
    static const double y1[] = {287.8, 272.7, 261.3, 257.1, 266.8, 268.0, 268.4, 267.8, 362.1, 362.3, 362.5};
    curve(&c, x1, y1, 11);
    MW_CHECK_NEAR(mw_gpu_curve_step(&c, 0.10, &h), 63, 1e-9);
    MW_CHECK(h > 100 && h < 110, "height %.1f", h);
    /* 2 MiB span: no step, one noisy point alone is not one */
    static const double y2[] = {283.2, 262.4, 257.7, 254.1, 252.8, 290.0, 259.6, 260.0, 259.9, 259.8, 259.8};
    curve(&c, x1, y2, 11);
    MW_CHECK_NEAR(mw_gpu_curve_step(&c, 0.10, &h), 0, 1e-9);
    MW_CHECK_NEAR(h, 0, 1e-9);
    /* a step at the last point counts */
    static const double y3[] = {100, 100, 100, 130};
    curve(&c, x1, y3, 4);
    MW_CHECK_NEAR(mw_gpu_curve_step(&c, 0.10, &h), 8, 1e-9);
    MW_CHECK_NEAR(h, 30, 1e-9);
}

static void test_evict(void)
{
    mw_gpu_curve c;
    double lo, hi;
    static const double x[] = {0, 1, 4, 16, 64};
    static const double y[] = {290, 289, 289, 295, 670};
    curve(&c, x, y, 5);
    mw_gpu_evict_bounds(&c, 0.25, &lo, &hi);
    MW_CHECK_NEAR(lo, 16, 1e-9);
    MW_CHECK_NEAR(hi, 64, 1e-9);
    static const double y2[] = {290, 289, 289, 295, 300};
    curve(&c, x, y2, 5);
    mw_gpu_evict_bounds(&c, 0.25, &lo, &hi);
    MW_CHECK(lo == 0 && hi == 0, "no eviction read as %g..%g", lo, hi);
}

int main(void)
{
    test_conflicts();
    test_steps();
    test_evict();
    return mw_test_done();
}
