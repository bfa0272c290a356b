/*
 * tests/gpu/test_gpu_struct.c (unit): the GPU structure probes' arithmetic on
 * synthetic chase results: conflict scans of simulated LRU caches with a
 * modulo set index (ways and sets recovered at several geometries) and of a
 * hashed one (no conflicts: reported as such), the first step of latency
 * curves measured on an H200 (TLB spans), eviction bounds; the eviction-set
 * reduction against simulated caches with a hashed set index (least
 * recently used and random replacement) and the ways and sets read from it.
 */
#include <stdio.h>
#include <stdlib.h>
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

/* A cache of sets x ways lines whose set index hashes the line number;
 * least-recently-used or random replacement. */
typedef struct sim {
    int sets, ways, random, reps;
    uint32_t target;
    uint32_t tag[256][32];
    unsigned age[256][32], clock, rng;
    int tests;
} sim;

static int sim_set(const sim *c, uint32_t line)
{
    return (int)(((line * 0x9E3779B1u) >> 9 ^ line) % (uint32_t)c->sets);
}

static int sim_has(const sim *c, uint32_t line)
{
    int s = sim_set(c, line);
    for (int w = 0; w < c->ways; w++)
        if (c->tag[s][w] == line + 1)
            return 1;
    return 0;
}

static void sim_access(sim *c, uint32_t line)
{
    int s = sim_set(c, line), v = 0;
    c->clock++;
    for (int w = 0; w < c->ways; w++)
        if (c->tag[s][w] == line + 1) {
            c->age[s][w] = c->clock;
            return;
        }
    if (c->random) {
        c->rng = c->rng * 1103515245u + 12345u;
        v = (int)((c->rng >> 16) % (unsigned)c->ways);
    } else {
        for (int w = 1; w < c->ways; w++)
            if (c->age[s][w] < c->age[s][v])
                v = w;
    }
    c->tag[s][v] = line + 1;
    c->age[s][v] = c->clock;
}

/* what the probe's kernels do: load the target, traverse the set twice,
 * look for the target again */
static int sim_test(void *u, const uint32_t *set, size_t n)
{
    sim *c = u;
    int miss = 0;
    c->tests++;
    for (int r = 0; r < c->reps; r++) {
        sim_access(c, c->target);
        for (int p = 0; p < 2; p++)
            for (size_t i = 0; i < n; i++)
                sim_access(c, set[i]);
        miss += !sim_has(c, c->target);
    }
    return miss;
}

/* pool: the lines 1..2 x capacity except the target, shuffled */
static size_t sim_pool(const sim *c, uint32_t *pool, unsigned seed)
{
    size_t n = 0, want = 2 * (size_t)c->sets * (size_t)c->ways;
    for (uint32_t l = 1; n < want; l++)
        if (l != c->target)
            pool[n++] = l;
    for (size_t i = n - 1; i > 0; i--) {
        seed = seed * 1664525u + 1013904223u;
        size_t j = (seed >> 8) % (i + 1);
        uint32_t t = pool[i];
        pool[i] = pool[j];
        pool[j] = t;
    }
    return n;
}

/* share of reloads that miss with the first k of the target's set-mates */
static void sim_mates(sim *c, mw_gpu_curve *m)
{
    uint32_t mates[64];
    int k = 0;
    memset(m, 0, sizeof *m);
    for (uint32_t l = 1; k < c->ways + 4; l++)
        if (l != c->target && sim_set(c, l) == sim_set(c, c->target))
            mates[k++] = l;
    int reps = c->reps;
    c->reps = 32;
    for (int i = 0; i <= k; i++) {
        m->p[m->n].x = i;
        m->p[m->n].y = sim_test(c, mates, (size_t)i) / 32.0;
        m->n++;
    }
    c->reps = reps;
}

static void test_evsets(void)
{
    static const struct {
        int sets, ways;
    } geo[] = {{64, 8}, {48, 12}, {16, 4}, {128, 16}};
    static uint32_t pool[8192], scratch[8192];
    static sim c;
    char why[320];
    for (unsigned g = 0; g < sizeof geo / sizeof geo[0]; g++) {
        int sizes[MW_GPU_EVSET_TARGETS], w = 0, s = 0;
        memset(&c, 0, sizeof c);
        c.sets = geo[g].sets;
        c.ways = geo[g].ways;
        c.reps = 5;
        for (int t = 0; t < MW_GPU_EVSET_TARGETS; t++) {
            c.target = (uint32_t)(7 + 1000 * t);
            size_t n = sim_pool(&c, pool, (unsigned)(g * 10 + t));
            c.tests = 0;
            int tests = 0;
            int rc = mw_gpu_evset_reduce(pool, &n, scratch, c.reps, sim_test, &c, &tests);
            MW_CHECK(rc == 0 && (int)n == c.ways, "%d x %d, target %u: rc %d, %zu lines", c.ways,
                     c.sets, c.target, rc, n);
            MW_CHECK_INT(tests, c.tests);
            MW_CHECK(tests < 40 * c.ways * c.ways, "%d tests for %d ways", tests, c.ways);
            for (size_t i = 0; i < n; i++)
                MW_CHECK(sim_set(&c, pool[i]) == sim_set(&c, c.target), "line %u not a set-mate",
                         pool[i]);
            sizes[t] = rc == 0 ? (int)n : 0;
            if (t == 0) {
                /* more mates, found from the minimal set and a fresh pool */
                static uint32_t pool2[8192], mates[8];
                size_t pn = sim_pool(&c, pool2, 99);
                tests = 0;
                int k = mw_gpu_evset_mates(pool, n, pool2, pn, mates, 4, scratch, c.reps, sim_test,
                                           &c, &tests);
                MW_CHECK_INT(k, 4);
                for (int i = 0; i < k; i++) {
                    MW_CHECK(sim_set(&c, mates[i]) == sim_set(&c, c.target), "mate %u", mates[i]);
                    for (size_t j = 0; j < n; j++)
                        MW_CHECK(mates[i] != pool[j], "mate %u already in the set", mates[i]);
                }
                MW_CHECK(tests < 4 * (int)(pn / (2 * n)) + 200, "%d tests for 4 mates", tests);
            }
        }
        mw_gpu_curve m;
        sim_mates(&c, &m);
        size_t cap = (size_t)c.sets * (size_t)c.ways * 128;
        MW_CHECK_INT(mw_gpu_evset_geometry(sizes, MW_GPU_EVSET_TARGETS, cap, 128, &m, &w, &s, why,
                                           sizeof why), 0);
        MW_CHECK(w == c.ways && s == c.sets, "%d x %d read as %d x %d: %s", c.ways, c.sets, w, s,
                 why);
        MW_CHECK(strstr(why, "least-recently-used") && !strstr(why, "not a sharp"), "%s", why);
        MW_CHECK((strstr(why, "not a power of two") != NULL) == ((c.sets & (c.sets - 1)) != 0),
                 "%s", why);
    }
    /* a pool that holds fewer set-mates than ways does not evict */
    memset(&c, 0, sizeof c);
    c.sets = 64;
    c.ways = 8;
    c.reps = 5;
    c.target = 3;
    size_t n = 0;
    for (uint32_t l = 4; n < 5; l++)
        if (sim_set(&c, l) == sim_set(&c, c.target))
            pool[n++] = l;
    int tests = 0;
    MW_CHECK_INT(mw_gpu_evset_reduce(pool, &n, scratch, 5, sim_test, &c, &tests), 1);
    MW_CHECK_INT(tests, 1);
    /* random replacement: the reload misses more often with each mate, no step */
    c.random = 1;
    c.rng = 42;
    mw_gpu_curve m;
    sim_mates(&c, &m);
    int ways = 0, sets = 0;
    int sz[3] = {8, 8, 8};
    MW_CHECK_INT(mw_gpu_evset_geometry(sz, 3, 65536, 128, &m, &ways, &sets, why, sizeof why), 0);
    MW_CHECK(strstr(why, "not a sharp") != NULL, "random replacement: %s", why);
    /* sizes that disagree, or a single target, give no geometry */
    int sz2[3] = {8, 9, 8}, sz3[3] = {0, 8, 0};
    MW_CHECK_INT(mw_gpu_evset_geometry(sz2, 3, 65536, 128, NULL, &ways, &sets, why, sizeof why), 1);
    MW_CHECK(ways == 0 && strstr(why, "no single size"), "%d: %s", ways, why);
    MW_CHECK_INT(mw_gpu_evset_geometry(sz3, 3, 65536, 128, NULL, &ways, &sets, why, sizeof why), 1);
    MW_CHECK(strstr(why, "1 of 3") != NULL, "%s", why);
}

int main(void)
{
    test_conflicts();
    test_steps();
    test_evict();
    test_evsets();
    return mw_test_done();
}
