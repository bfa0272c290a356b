/*
 * tests/calibrate_bench/test_bench_arith.c: the arithmetic of the calibration
 * microbenchmarks, without timing: triad byte counts, the delay and thread
 * grids, Sattolo cycles (one cycle covering every line), the page-local
 * cycle (one cycle, each group of a page's lines visited back to back, even
 * groups before odd ones), repeat statistics,
 * sysfs cache parsing on a fixture tree, cache-step detection on synthetic
 * latency curves, the TLB reach from a full-random and a page-local curve,
 * and the MLP analysis.
 */
#include "mw_test.h"

#include <memwatch/bench.h>
#include <memwatch/validate.h>

#include <math.h>

#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_triad_bytes(void)
{
    MW_CHECK_INT(mw_triad_bytes_per_iter(MW_TRIAD_NORMAL, 0), 32); /* 3 x 8 + write-allocate 8 */
    MW_CHECK_INT(mw_triad_bytes_per_iter(MW_TRIAD_NT, 0), 24);     /* no write-allocate */
    MW_CHECK_INT(mw_triad_bytes_per_iter(MW_TRIAD_NORMAL, 1), 24); /* STREAM's convention */
    MW_CHECK_INT(mw_triad_bytes_per_iter(MW_TRIAD_NT, 1), 24);
}

static void test_delay_grid(void)
{
    unsigned g[MW_SWEEP_MAX_DELAYS];
    unsigned n = mw_read_sweep_delay_grid(1024, g, MW_SWEEP_MAX_DELAYS);
    static const unsigned want[] = {0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
    MW_CHECK_INT(n, sizeof want / sizeof want[0]);
    for (unsigned i = 0; i < n && i < sizeof want / sizeof want[0]; i++)
        MW_CHECK(g[i] == want[i], "grid[%u] = %u, expected %u", i, g[i], want[i]);
    /* strictly increasing, and a max that is not a power of two is appended */
    n = mw_read_sweep_delay_grid(1000, g, MW_SWEEP_MAX_DELAYS);
    MW_CHECK_INT(n, 12);
    MW_CHECK_INT(g[n - 1], 1000);
    MW_CHECK_INT(g[n - 2], 512);
    for (unsigned i = 1; i < n; i++)
        MW_CHECK(g[i] > g[i - 1], "grid not increasing at %u", i);
    /* the cap is honoured */
    n = mw_read_sweep_delay_grid(1u << 20, g, 5);
    MW_CHECK_INT(n, 5);
    MW_CHECK_INT(g[4], 8);
    /* zero maximum: only delay 0 */
    n = mw_read_sweep_delay_grid(0, g, MW_SWEEP_MAX_DELAYS);
    MW_CHECK_INT(n, 1);
    MW_CHECK_INT(g[0], 0);
}

static void test_thread_grid(void)
{
    unsigned g[MW_SWEEP_MAX_THREADS];
    unsigned n = mw_read_sweep_thread_grid(16, g, MW_SWEEP_MAX_THREADS);
    MW_CHECK_INT(n, 5);
    MW_CHECK_INT(g[0], 1);
    MW_CHECK_INT(g[4], 16);
    n = mw_read_sweep_thread_grid(12, g, MW_SWEEP_MAX_THREADS);
    MW_CHECK_INT(n, 5); /* 1 2 4 8 12 */
    MW_CHECK_INT(g[4], 12);
    n = mw_read_sweep_thread_grid(2, g, MW_SWEEP_MAX_THREADS);
    MW_CHECK_INT(n, 2);
    n = mw_read_sweep_thread_grid(1, g, MW_SWEEP_MAX_THREADS);
    MW_CHECK_INT(n, 1);
    MW_CHECK_INT(g[0], 1);
    /* when the cap cuts the powers of two the maximum still ends the grid */
    n = mw_read_sweep_thread_grid(100, g, 3);
    MW_CHECK_INT(n, 3);
    MW_CHECK_INT(g[2], 100);
}

/* One cycle through every element: following next[] from 0 returns to 0
 * after exactly n steps and visits each element once. */
static int is_one_cycle(const uint32_t *next, size_t n)
{
    unsigned char *seen = calloc(n, 1);
    size_t i = 0, steps = 0;
    int ok = 1;
    do {
        if (next[i] >= n || seen[i]) {
            ok = 0;
            break;
        }
        seen[i] = 1;
        i = next[i];
        steps++;
    } while (i != 0 && steps <= n);
    if (steps != n || i != 0)
        ok = 0;
    free(seen);
    return ok;
}

static void test_sattolo(void)
{
    static const size_t sizes[] = {1, 2, 3, 7, 64, 1000, 65536, 1u << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        uint32_t *next = malloc(n * sizeof *next);
        MW_CHECK_INT(mw_sattolo_cycle(next, n, 42 + k), 0);
        MW_CHECK(is_one_cycle(next, n), "Sattolo over %zu elements is not one cycle", n);
        if (n > 1) {
            size_t fixed = 0;
            for (size_t i = 0; i < n; i++)
                fixed += next[i] == i;
            MW_CHECK(fixed == 0, "%zu fixed points in %zu", fixed, n);
        }
        free(next);
    }
    /* different seeds give different cycles; the same seed the same one */
    uint32_t a[256], b[256], c[256];
    mw_sattolo_cycle(a, 256, 1);
    mw_sattolo_cycle(b, 256, 2);
    mw_sattolo_cycle(c, 256, 1);
    MW_CHECK(memcmp(a, b, sizeof a) != 0, "seeds 1 and 2 gave the same cycle");
    MW_CHECK(memcmp(a, c, sizeof a) == 0, "seed 1 is not deterministic");
    /* the order is not trivially sequential: few successors are neighbours */
    size_t seq = 0;
    for (size_t i = 0; i < 256; i++)
        seq += a[i] == (i + 1) % 256;
    MW_CHECK(seq < 16, "%zu of 256 successors are the next line", seq);
    MW_CHECK_INT(mw_sattolo_cycle(a, 0, 1), -EINVAL);
    MW_CHECK_INT(mw_sattolo_cycle(NULL, 4, 1), -EINVAL);
}

static void test_page_local(void)
{
    /* whole pages, a partial last page, fewer lines than one page */
    static const size_t sizes[] = {2, 3, 33, 64, 65, 100, 1000, 4096, 65536 + 17, 1u << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        uint32_t *next = malloc(n * sizeof *next);
        MW_CHECK_INT(mw_page_local_cycle(next, n, 7 + k), 0);
        MW_CHECK(is_one_cycle(next, n), "page-local cycle over %zu lines is not one cycle", n);
        /* walk the cycle from line 0: count the runs of one group and of one
         * parity (cyclically); a group seen again after it was left is split */
        size_t ngroups = (n - 1) / MW_LADDER_PAGE_LINES * 2 + 2, runs = 0, parity_changes = 0,
               nonempty = 0;
        unsigned char *left = calloc(ngroups, 1), *seen = calloc(ngroups, 1);
        size_t split = 0, x = 0;
        /* start where a group's run begins, so that the walk ends by coming
         * back to it (the one re-entry allowed) */
        for (size_t step = 0; step < n; step++, x = next[x])
            if (mw_page_local_group(next[x]) != mw_page_local_group(x)) {
                x = next[x];
                break;
            }
        for (size_t step = 0; step < n; step++) {
            size_t y = next[x];
            size_t gx = mw_page_local_group(x), gy = mw_page_local_group(y);
            seen[gx] = 1;
            if (gx != gy) {
                runs++;
                split += left[gy] && step + 1 < n; /* entering a group already left */
                left[gx] = 1;
            }
            parity_changes += (x & 1) != (y & 1);
            x = y;
        }
        for (size_t g = 0; g < ngroups; g++)
            nonempty += seen[g];
        MW_CHECK(split == 0, "n=%zu: %zu groups visited in more than one run", n, split);
        MW_CHECK(runs == (nonempty > 1 ? nonempty : 0), "n=%zu: %zu group runs for %zu groups", n,
                 runs, nonempty);
        MW_CHECK(parity_changes == 2, "n=%zu: parity changes %zu times (even groups, then odd)",
                 n, parity_changes);
        /* a group of a whole page holds its 32 lines of one parity */
        if (n >= 2 * MW_LADDER_PAGE_LINES) {
            size_t cnt = 0;
            for (size_t i = 0; i < n; i++)
                cnt += mw_page_local_group(i) == 2;
            MW_CHECK_INT(cnt, MW_LADDER_GROUP_LINES);
        }
        /* inside a group the order is not sequential */
        if (n >= 4096) {
            size_t seq = 0;
            for (size_t i = 0; i < n; i++)
                seq += next[i] == i + 2;
            MW_CHECK(seq < n / 8, "n=%zu: %zu successors are the next line of the group", n, seq);
        }
        free(left);
        free(seen);
        free(next);
    }
    uint32_t a[512], b[512], c[512];
    mw_page_local_cycle(a, 512, 1);
    mw_page_local_cycle(b, 512, 2);
    mw_page_local_cycle(c, 512, 1);
    MW_CHECK(memcmp(a, b, sizeof a) != 0, "seeds 1 and 2 gave the same cycle");
    MW_CHECK(memcmp(a, c, sizeof a) == 0, "seed 1 is not deterministic");
    MW_CHECK_INT(mw_page_local_cycle(a, 0, 1), -EINVAL);
    MW_CHECK_INT(mw_page_local_cycle(NULL, 4, 1), -EINVAL);
}

static void test_stats(void)
{
    const double v[] = {4, 1, 3, 2, 5};
    mw_stats s;
    mw_stats_compute(v, 5, 1, &s);
    MW_CHECK_INT(s.n, 5);
    MW_CHECK_NEAR(s.best, 5, 1e-12);
    MW_CHECK_NEAR(s.worst, 1, 1e-12);
    MW_CHECK_NEAR(s.median, 3, 1e-12);
    MW_CHECK_NEAR(s.mean, 3, 1e-12);
    MW_CHECK_NEAR(s.cv, sqrt(2.5) / 3, 1e-12); /* sample standard deviation */
    mw_stats_compute(v, 4, 0, &s);              /* 4 1 3 2: lower is better */
    MW_CHECK_NEAR(s.best, 1, 1e-12);
    MW_CHECK_NEAR(s.median, 2.5, 1e-12);
    MW_CHECK_NEAR(v[0], 4, 0); /* input untouched */
    mw_stats_compute(v, 1, 1, &s);
    MW_CHECK_NEAR(s.cv, 0, 0);
    mw_stats_compute(v, 0, 1, &s);
    MW_CHECK_INT(s.n, 0);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

static void make_index(const char *root, int idx, const char *type, int level, const char *size,
                       const char *ways, const char *shared)
{
    char p[512];
    snprintf(p, sizeof p, "%s/devices/system/cpu/cpu0/cache/index%d", root, idx);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", p);
    if (system(cmd) != 0)
        exit(1);
    char f[600], v[32];
    snprintf(f, sizeof f, "%s/type", p);
    write_file(f, type);
    snprintf(f, sizeof f, "%s/level", p);
    snprintf(v, sizeof v, "%d\n", level);
    write_file(f, v);
    snprintf(f, sizeof f, "%s/size", p);
    write_file(f, size);
    snprintf(f, sizeof f, "%s/coherency_line_size", p);
    write_file(f, "64\n");
    snprintf(f, sizeof f, "%s/ways_of_associativity", p);
    write_file(f, ways);
    snprintf(f, sizeof f, "%s/shared_cpu_list", p);
    write_file(f, shared);
}

static void test_cache_info(void)
{
    char root[] = "/tmp/mw_cache_fixture_XXXXXX";
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        mw_t_fail++;
        return;
    }
    /* deliberately out of order, with an instruction cache to skip */
    make_index(root, 3, "Unified\n", 3, "32768K\n", "16\n", "0-7,16-23\n");
    make_index(root, 0, "Data\n", 1, "48K\n", "12\n", "0\n");
    make_index(root, 1, "Instruction\n", 1, "32K\n", "8\n", "0\n");
    make_index(root, 2, "Unified\n", 2, "1024K\n", "16\n", "0\n");
    mw_cache_info ci;
    MW_CHECK_INT(mw_cache_info_read(root, 0, &ci), 0);
    MW_CHECK_INT(ci.n, 3);
    MW_CHECK_INT(ci.level[0].level, 1);
    MW_CHECK_INT(ci.level[0].size, 48 * 1024);
    MW_CHECK_STR(ci.level[0].type, "Data");
    MW_CHECK_INT(ci.level[1].size, 1024 * 1024);
    MW_CHECK_INT(ci.level[2].size, 32 * 1024 * 1024);
    MW_CHECK_INT(ci.level[2].ways, 16);
    MW_CHECK_INT(ci.level[2].sharing, 16);
    MW_CHECK_INT(ci.llc_size, 32 * 1024 * 1024);
    MW_CHECK_INT(ci.line, 64);
    MW_CHECK_INT(mw_cache_info_read(root, 5, &ci), MW_ERR_NODATA);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        mw_t_fail++;
}

/* A synthetic ladder: plateaus with gradual transitions (a fraction of the
 * next level's latency mixed in), optional noise spikes. */
struct synth {
    int line;
    double lat[5];      /* latency per level, last = memory */
    size_t size[4];     /* capacity per cache level */
    unsigned nlev;      /* cache levels */
    double spread;      /* transition: misses start at size/spread */
    int spike;          /* add a 2.5x spike at this point index (-1 none) */
    double noise;       /* relative alternating noise */
};

static double synth_lat(const struct synth *s, size_t bytes)
{
    double lat = s->lat[0];
    for (unsigned l = 0; l < s->nlev; l++) {
        double c = (double)s->size[l];
        double lo = c / s->spread;
        if ((double)bytes <= lo)
            break;
        /* fraction of misses rises from 0 at size/spread to 1 at size,
         * mostly near the size (set conflicts first, then capacity) */
        double f = (double)bytes >= c ? 1.0 : pow(log((double)bytes / lo) / log(c / lo), 3);
        lat = (1 - f) * s->lat[l] + f * s->lat[l + 1];
        if (f < 1)
            break;
    }
    return lat;
}

static void test_ladder_detect(void)
{
    mw_cache_info ci;
    memset(&ci, 0, sizeof ci);
    ci.n = 3;
    ci.level[0] = (mw_cache_level){.level = 1, .size = 48 << 10};
    ci.level[1] = (mw_cache_level){.level = 2, .size = 1 << 20};
    ci.level[2] = (mw_cache_level){.level = 3, .size = 32 << 20};
    ci.llc_size = 32 << 20;
    const struct synth cases[] = {
        /* sharp steps, exactly the sysfs sizes */
        {__LINE__, {1.1, 3.8, 12, 110}, {48 << 10, 1 << 20, 32 << 20}, 3, 1.0001, -1, 0},
        /* gradual transitions starting at half the capacity, noise 3 % */
        {__LINE__, {1.1, 3.8, 12, 110}, {48 << 10, 1 << 20, 32 << 20}, 3, 2.0, -1, 0.03},
        /* a spike of noise on the L2 plateau does not make a new level */
        {__LINE__, {1.1, 3.8, 12, 110}, {48 << 10, 1 << 20, 32 << 20}, 3, 1.5, 24, 0.01},
        /* Intel-like: L2 2 MiB, L3 300 MiB... truncated to L3 32 MiB here */
        {__LINE__, {1.5, 6, 30, 120}, {48 << 10, 1 << 20, 32 << 20}, 3, 1.3, -1, 0.02},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const struct synth *s = &cases[k];
        size_t bytes[MW_LADDER_MAX_POINTS];
        double ns[MW_LADDER_MAX_POINTS], cyc[MW_LADDER_MAX_POINTS];
        unsigned n = 0;
        for (unsigned i = 0; n < MW_LADDER_MAX_POINTS; i++) {
            size_t b = (size_t)(4096.0 * pow(2.0, i / 4.0) + 0.5) / 64 * 64;
            if (b > ((size_t)128 << 20))
                break;
            bytes[n] = b;
            ns[n] = synth_lat(s, b) * (1 + (n % 2 ? s->noise : -s->noise));
            if ((int)n == s->spike)
                ns[n] *= 2.5;
            cyc[n] = ns[n] * 2.6;
            n++;
        }
        mw_ladder_result r;
        memset(&r, 0, sizeof r);
        MW_CHECK_AT(__FILE__, s->line, mw_ladder_detect(bytes, ns, cyc, n, pow(2, 0.25), &ci, &r) == 0,
                    "detect failed");
        MW_CHECK_AT(__FILE__, s->line, r.nlevels == s->nlev + 1, "%u levels, expected %u",
                    r.nlevels, s->nlev + 1);
        for (unsigned l = 0; l < r.nlevels && l < s->nlev; l++) {
            MW_CHECK_AT(__FILE__, s->line, !r.level[l].is_memory, "level %u is memory", l);
            MW_CHECK_AT(__FILE__, s->line, r.level[l].within_one_step,
                        "level %u: detected %zu vs %zu", l, r.level[l].size, s->size[l]);
            MW_CHECK_AT(__FILE__, s->line,
                        fabs(r.level[l].ns - s->lat[l]) <= 0.1 * s->lat[l],
                        "level %u latency %g, expected %g", l, r.level[l].ns, s->lat[l]);
            MW_CHECK_AT(__FILE__, s->line, r.level[l].plateau_end < r.level[l].size,
                        "plateau end %zu beyond size %zu", r.level[l].plateau_end, r.level[l].size);
        }
        if (r.nlevels == s->nlev + 1) {
            MW_CHECK_AT(__FILE__, s->line, r.level[s->nlev].is_memory, "last level not memory");
            MW_CHECK_AT(__FILE__, s->line,
                        fabs(r.dram_ns - s->lat[s->nlev]) <= 0.1 * s->lat[s->nlev],
                        "memory latency %g, expected %g", r.dram_ns, s->lat[s->nlev]);
        }
    }
    /* Emerald-Rapids-like guest: L2 2 MiB, L3 300 MiB, and a TLB that runs
     * out of reach at 8 MiB inside the L3 (30 -> 50 ns). The extra step is
     * left unpaired; L3 still pairs with the kernel's 300 MiB. */
    {
        struct synth e = {__LINE__, {1.5, 5, 30, 50, 130},
                          {48 << 10, 2 << 20, 8 << 20, (size_t)300 << 20}, 4, 1.2, -1, 0.01};
        mw_cache_info eci;
        memset(&eci, 0, sizeof eci);
        eci.n = 3;
        eci.level[0] = (mw_cache_level){.level = 1, .size = 48 << 10};
        eci.level[1] = (mw_cache_level){.level = 2, .size = 2 << 20};
        eci.level[2] = (mw_cache_level){.level = 3, .size = (size_t)300 << 20};
        size_t bytes[MW_LADDER_MAX_POINTS];
        double ns[MW_LADDER_MAX_POINTS];
        unsigned n = 0;
        for (unsigned i = 0; n < MW_LADDER_MAX_POINTS; i++) {
            size_t b = (size_t)(4096.0 * pow(2.0, i / 4.0) + 0.5) / 64 * 64;
            if (b > ((size_t)1200 << 20))
                break;
            bytes[n] = b;
            ns[n] = synth_lat(&e, b) * (1 + (n % 2 ? e.noise : -e.noise));
            n++;
        }
        mw_ladder_result r;
        MW_CHECK_INT(mw_ladder_detect(bytes, ns, NULL, n, pow(2, 0.25), &eci, &r), 0);
        MW_CHECK_INT(r.nlevels, 5);
        if (r.nlevels == 5) {
            MW_CHECK(r.level[0].within_one_step && r.level[1].within_one_step,
                     "L1/L2 %zu %zu", r.level[0].size, r.level[1].size);
            MW_CHECK(r.level[2].sysfs_size == 0, "the TLB step paired with %zu",
                     r.level[2].sysfs_size);
            MW_CHECK(r.level[3].sysfs_size == ((size_t)300 << 20) && r.level[3].within_one_step,
                     "L3 %zu paired with %zu", r.level[3].size, r.level[3].sysfs_size);
            MW_CHECK(r.level[4].is_memory, "no memory level");
        }
    }
    /* a detected size two steps off is reported as not within one step */
    {
        size_t bytes[40];
        double ns[40];
        unsigned n = 0;
        for (unsigned i = 0; i < 40; i++) {
            bytes[n] = (size_t)(4096.0 * pow(2.0, i / 4.0)) / 64 * 64;
            ns[n++] = bytes[i] < (64u << 10) ? 1.0 : 10.0; /* "L1" of 64K vs sysfs 48K */
        }
        mw_cache_info one = {.n = 1, .level = {{.level = 1, .size = 32 << 10}}};
        mw_ladder_result r;
        MW_CHECK_INT(mw_ladder_detect(bytes, ns, NULL, n, pow(2, 0.25), &one, &r), 0);
        MW_CHECK_INT(r.nlevels, 2);
        MW_CHECK_INT(r.level[0].size, 64 << 10);
        MW_CHECK(!r.level[0].within_one_step, "64K accepted as one step from 32K");
    }
    /* bad input */
    {
        size_t b[3] = {4096, 2048, 8192};
        double ns[3] = {1, 1, 1};
        mw_ladder_result r;
        MW_CHECK_INT(mw_ladder_detect(b, ns, NULL, 3, 1.19, NULL, &r), -EINVAL);
        size_t b2[3] = {4096, 8192, 16384};
        double ns2[3] = {1, 0, 1};
        MW_CHECK_INT(mw_ladder_detect(b2, ns2, NULL, 3, 1.19, NULL, &r), -EINVAL);
    }
}

/* Curves measured on the development VM (Zen 5 guest, 2 vCPUs, busy
 * neighbours): L1 48K and L2 1M show at their kernel sizes; the L3 this guest
 * really got ended near 2.5 MiB that time (the kernel says 32 MiB). */
/* Two synthetic curves of one machine: the page-local one has the caches'
 * steps only; the full-random one also pays a page walk per load past a TLB
 * reach of 8 MiB, which hides the 32 MiB L3 (as in a guest whose huge pages
 * are backed by small host pages). Levels come from the page-local curve and
 * the TLB reach from the step that only the full-random curve has. */
static void test_ladder_tlb_reach(void)
{
    mw_cache_info ci;
    memset(&ci, 0, sizeof ci);
    ci.n = 3;
    ci.level[0] = (mw_cache_level){.level = 1, .size = 48 << 10};
    ci.level[1] = (mw_cache_level){.level = 2, .size = 2 << 20};
    ci.level[2] = (mw_cache_level){.level = 3, .size = 32 << 20};
    const struct synth loc = {__LINE__, {1.5, 5, 20, 90}, {48 << 10, 2 << 20, 32 << 20}, 3, 1.3,
                              -1, 0.02};
    size_t bytes[MW_LADDER_MAX_POINTS];
    double lns[MW_LADDER_MAX_POINTS], fns[MW_LADDER_MAX_POINTS];
    unsigned n = 0;
    for (unsigned i = 0; n < MW_LADDER_MAX_POINTS; i++) {
        size_t b = (size_t)(4096.0 * pow(2.0, i / 4.0) + 0.5) / 64 * 64;
        if (b > ((size_t)256 << 20))
            break;
        bytes[n] = b;
        lns[n] = synth_lat(&loc, b) * (1 + (n % 2 ? loc.noise : -loc.noise));
        /* a page walk of 150 ns per load past 8 MiB, reached gradually */
        double f = b <= (6u << 20) ? 0 : b >= (8u << 20) ? 1 : 0.5;
        fns[n] = lns[n] + 150 * f;
        n++;
    }
    mw_ladder_result *lr = calloc(1, sizeof *lr), *fr = calloc(1, sizeof *fr);
    MW_CHECK_INT(mw_ladder_detect(bytes, lns, NULL, n, pow(2, 0.25), &ci, lr), 0);
    MW_CHECK_INT(mw_ladder_detect(bytes, fns, NULL, n, pow(2, 0.25), NULL, fr), 0);
    MW_CHECK_INT(lr->nlevels, 4);
    MW_CHECK(lr->nlevels == 4 && lr->level[2].within_one_step,
             "page-local L3 at %zu, not within one step of 32 MiB", lr->level[2].size);
    for (unsigned l = 0; l < lr->nlevels; l++) {
        MW_CHECK(lr->level[l].plateau_start <= lr->level[l].plateau_end,
                 "level %u: plateau %zu..%zu", l, lr->level[l].plateau_start,
                 lr->level[l].plateau_end);
        if (l)
            MW_CHECK(lr->level[l].plateau_start > lr->level[l - 1].plateau_end,
                     "level %u starts at %zu, inside level %u", l, lr->level[l].plateau_start,
                     l - 1);
    }
    MW_CHECK_INT(lr->level[0].plateau_start, 4096);
    MW_CHECK_INT(fr->nlevels, 4); /* L1, L2, the TLB step, memory */
    size_t reach = mw_ladder_tlb_reach(lr, fr, pow(2, 0.25));
    MW_CHECK(reach >= (5u << 20) && reach <= (8u << 20), "TLB reach %zu, expected 5..8 MiB",
             reach);
    /* the same curve twice: every step is a cache step, no TLB reach */
    MW_CHECK_INT(mw_ladder_tlb_reach(lr, lr, pow(2, 0.25)), 0);
    /* a TLB step within two footprint steps of a cache step is not told apart */
    mw_ladder_result near = *lr;
    near.level[2].size = (size_t)((double)lr->level[2].size / pow(2, 0.5));
    MW_CHECK_INT(mw_ladder_tlb_reach(lr, &near, pow(2, 0.25)), 0);
    MW_CHECK_INT(mw_ladder_tlb_reach(NULL, fr, pow(2, 0.25)), 0);
    free(lr);
    free(fr);
}

static void test_ladder_real_curve(void)
{
    static const size_t real_b[] = {
        4096, 4928, 5824, 6912, 8192, 9792, 11648, 13824, 16384, 19520, 23232, 27584, 32768,
        38976, 46400, 55168, 65536, 77952, 92736, 110272, 131072, 155904, 185408, 220480,
        262144, 311744, 370752, 440896, 524288, 623488, 741504, 881792, 1048576, 1246976,
        1482944, 1763520, 2097152, 2493952, 2965824, 3526976, 4194304, 4987904, 5931648,
        7053952, 8388608, 9975808, 11863296, 14107904, 16777216, 19951616, 23726592,
        28215808, 33554432, 39903232, 47453184, 56431616, 67108864, 79806400, 94906304,
        112863232, 134217728};
    static const double real_ns[] = {
        1.02, 1.02, 1.02, 1.02, 1.02, 1.03, 1.03, 1.03, 1.04, 1.04, 1.05, 1.05, 1.06, 1.10,
        1.13, 3.61, 3.61, 3.63, 3.66, 3.66, 3.67, 3.69, 3.69, 3.66, 3.69, 3.66, 3.65, 4.08,
        4.34, 4.43, 4.78, 6.31, 8.62, 11.37, 10.75, 12.73, 13.33, 39.59, 161.25, 156.48,
        146.11, 143.14, 160.47, 147.50, 144.22, 144.65, 146.55, 146.13, 151.47, 146.73,
        153.17, 151.13, 147.67, 156.60, 150.92, 166.97, 156.52, 154.95, 167.14, 154.58,
        164.23};
    /* another run: a three-point stretch of the L2-to-L3 transition
     * (7.1, 7.2, 8.4 ns) must not count as a cache level of its own */
    static const size_t real2_b[] = {
        4096, 4928, 5824, 6912, 8192, 9792, 11648, 13824, 16384, 19520, 23232, 27584, 32768,
        38976, 46400, 55168, 65536, 77952, 92736, 110272, 131072, 155904, 185408, 220480,
        262144, 311744, 370752, 440896, 524288, 623488, 741504, 881792, 1048576, 1246976,
        1482944, 1763520, 2097152, 2493952, 2965824, 3526976, 4194304, 4987904, 5931648,
        7053952, 8388608, 9975808, 11863296, 14107904, 16777216, 19951616, 23726592,
        28215808, 33554432, 39903232, 47453184, 56431616, 67108864, 79806400, 94906304,
        112863232, 134217728};
    static const double real2_ns[] = {
        1.06, 1.06, 1.07, 1.06, 1.07, 1.07, 1.07, 1.07, 1.07, 1.07, 1.07, 1.07, 1.09, 1.11,
        1.15, 3.71, 3.69, 3.69, 3.70, 3.69, 3.74, 3.75, 3.75, 3.76, 3.75, 3.76, 3.75, 4.07,
        4.30, 4.70, 7.13, 7.22, 8.37, 9.84, 12.15, 13.41, 17.12, 14.20, 15.55, 123.05,
        132.47, 131.46, 108.21, 139.80, 137.81, 142.59, 140.70, 146.87, 152.42, 149.10,
        154.91, 157.97, 152.15, 155.01, 166.32, 156.08, 159.43, 206.70, 165.19, 166.93,
        161.81};
    unsigned n = sizeof real_b / sizeof real_b[0];
    mw_cache_info ci;
    memset(&ci, 0, sizeof ci);
    ci.n = 3;
    ci.level[0] = (mw_cache_level){.level = 1, .size = 48 << 10};
    ci.level[1] = (mw_cache_level){.level = 2, .size = 1 << 20};
    ci.level[2] = (mw_cache_level){.level = 3, .size = 32 << 20};
    mw_ladder_result r;
    MW_CHECK_INT(mw_ladder_detect(real_b, real_ns, NULL, n, pow(2, 0.25), &ci, &r), 0);
    MW_CHECK_INT(r.nlevels, 4);
    MW_CHECK(r.level[0].within_one_step, "L1 %zu", r.level[0].size);
    MW_CHECK(r.level[1].within_one_step, "L2 %zu", r.level[1].size);
    MW_CHECK(r.level[2].ns > 10 && r.level[2].ns < 15, "L3 latency %g", r.level[2].ns);
    MW_CHECK(!r.level[2].within_one_step, "L3 %zu accepted against 32 MiB", r.level[2].size);
    MW_CHECK(r.level[3].is_memory, "no memory level");
    MW_CHECK(r.dram_ns > 140 && r.dram_ns < 170, "memory latency %g", r.dram_ns);

    n = sizeof real2_b / sizeof real2_b[0];
    MW_CHECK_INT(mw_ladder_detect(real2_b, real2_ns, NULL, n, pow(2, 0.25), &ci, &r), 0);
    MW_CHECK_INT(r.nlevels, 4);
    MW_CHECK(r.level[0].within_one_step, "L1 %zu", r.level[0].size);
    MW_CHECK(r.level[1].within_one_step, "L2 %zu", r.level[1].size);
    MW_CHECK(r.level[2].ns > 12 && r.level[2].ns < 18, "L3 latency %g", r.level[2].ns);
    MW_CHECK(r.level[3].is_memory, "no memory level");
}

static void test_mlp_analyse(void)
{
    /* latency 100 ns, up to 10 misses in flight */
    mw_mlp_result r;
    memset(&r, 0, sizeof r);
    r.n = 32;
    for (unsigned k = 1; k <= 32; k++)
        r.ns_per_load[k - 1] = 100.0 / (k < 10 ? k : 10);
    MW_CHECK_INT(mw_mlp_analyse(&r), 0);
    MW_CHECK_NEAR(r.max_parallelism, 10, 1e-9);
    MW_CHECK_INT(r.saturation_k, 10);
    MW_CHECK_NEAR(r.outstanding, 10, 1e-9);
    MW_CHECK_INT(r.saturated, 1);
    MW_CHECK_NEAR(r.parallelism[3], 4, 1e-9);
    /* still rising at k = 32: only a lower bound */
    for (unsigned k = 1; k <= 32; k++)
        r.ns_per_load[k - 1] = 100.0 / k;
    MW_CHECK_INT(mw_mlp_analyse(&r), 0);
    MW_CHECK_INT(r.saturated, 0);
    MW_CHECK_NEAR(r.outstanding, 32, 1e-9);
    r.n = 0;
    MW_CHECK_INT(mw_mlp_analyse(&r), -EINVAL);
}

/* Read/write mixes: names, parsing, the store pattern and the exact traffic
 * (a store reads its line first unless it is non-temporal). */
static void test_mixes(void)
{
    static const struct {
        mw_read_mix m;
        const char *name;
        unsigned stores;
        double share;
        int nt;
    } want[] = {{MW_MIX_R100, "reads100", 0, 1.0, 0},
                {MW_MIX_R75, "reads75", 4, 0.75, 0},
                {MW_MIX_R50, "reads50", 12, 0.5, 0},
                {MW_MIX_NT50, "nt50", 6, 0.5, 1}};
    for (unsigned i = 0; i < 4; i++) {
        mw_read_mix m = want[i].m, back;
        MW_CHECK_STR(mw_mix_name(m), want[i].name);
        MW_CHECK_INT(mw_mix_parse(want[i].name, &back), 0);
        MW_CHECK_INT(back, m);
        unsigned mask = mw_mix_store_mask(m);
        MW_CHECK_INT(__builtin_popcount(mask), want[i].stores);
        MW_CHECK(mask < (1u << MW_MIX_PERIOD), "mask beyond the period");
        MW_CHECK_INT(mw_mix_nontemporal(m), want[i].nt);
        MW_CHECK_NEAR(mw_mix_read_share(m), want[i].share, 1e-12);
        double r, w;
        MW_CHECK_INT(mw_mix_traffic(m, 384, &r, &w), 0);
        unsigned reads = want[i].nt ? 12 - want[i].stores : 12;
        MW_CHECK_NEAR(r, 32.0 * reads * 64, 0);
        MW_CHECK_NEAR(w, 32.0 * want[i].stores * 64, 0);
        MW_CHECK_INT(mw_mix_traffic(m, 385, &r, &w), -EINVAL); /* not whole periods */
    }
    /* stores spread over the period: every group of four has its share */
    MW_CHECK_INT(mw_mix_store_mask(MW_MIX_R75) & 0xf ? 1 : 0, 1);
    MW_CHECK_INT(mw_mix_store_mask(MW_MIX_R75) & 0xf0 ? 1 : 0, 1);
    MW_CHECK_INT(mw_mix_store_mask(MW_MIX_R75) & 0xf00 ? 1 : 0, 1);
    MW_CHECK(mw_mix_name((mw_read_mix)4) == NULL, "name of a mix out of range");
    MW_CHECK(isnan(mw_mix_read_share((mw_read_mix)4)), "share of a mix out of range");
    mw_read_mix m;
    MW_CHECK_INT(mw_mix_parse("50", &m), 0);
    MW_CHECK_INT(m, MW_MIX_R50);
    MW_CHECK_INT(mw_mix_parse("nt", &m), 0);
    MW_CHECK_INT(m, MW_MIX_NT50);
    MW_CHECK_INT(mw_mix_parse("reads60", &m), -EINVAL);
    MW_CHECK_INT(mw_mix_parse(NULL, &m), -EINVAL);
    unsigned set = 0;
    MW_CHECK_INT(mw_mix_parse_list("reads50,nt", &set), 0);
    MW_CHECK_INT(set, (1u << MW_MIX_R50) | (1u << MW_MIX_NT50));
    MW_CHECK_INT(mw_mix_parse_list("all", &set), 0);
    MW_CHECK_INT(set, 0xf);
    MW_CHECK_INT(mw_mix_parse_list("", &set), -EINVAL);
    MW_CHECK_INT(mw_mix_parse_list("reads50,", &set), -EINVAL);
    MW_CHECK_INT(mw_mix_parse_list(",reads50", &set), -EINVAL);
    MW_CHECK_INT(mw_mix_parse_list("reads50,bogus", &set), -EINVAL);
    /* a bad mix is refused by the load generator */
    mw_read_load_config c = {.threads = 1, .bytes_per_thread = 2 << 20, .mix = (mw_read_mix)7};
    mw_read_load *l;
    MW_CHECK_INT(mw_read_load_create(&c, &l), -EINVAL);
}

/* The mix curves' delay grid: 0, then every stride-th power of two. */
static void test_mix_delay_grid(void)
{
    unsigned g[MW_SWEEP_MAX_DELAYS];
    unsigned n = mw_val_mix_delay_grid(1024, 2, g, MW_SWEEP_MAX_DELAYS);
    static const unsigned want[] = {0, 1, 4, 16, 64, 256, 1024};
    MW_CHECK_INT(n, 7);
    for (unsigned i = 0; i < n && i < 7; i++)
        MW_CHECK(g[i] == want[i], "grid[%u] = %u, expected %u", i, g[i], want[i]);
    n = mw_val_mix_delay_grid(1000, 3, g, MW_SWEEP_MAX_DELAYS); /* 0 1 8 64 512 1000 */
    MW_CHECK_INT(n, 6);
    MW_CHECK_INT(g[3], 64);
    MW_CHECK_INT(g[n - 1], 1000);
    n = mw_val_mix_delay_grid(1024, 1, g, 4); /* capped: the maximum replaces the last */
    MW_CHECK_INT(n, 4);
    MW_CHECK_INT(g[3], 1024);
    MW_CHECK_INT(mw_val_mix_delay_grid(1024, 0, g, 4), 0);
    n = mw_val_mix_delay_grid(0, 2, g, 4);
    MW_CHECK_INT(n, 1);
    /* --quick's validation grid: every second thread count and the largest */
    unsigned t[MW_SWEEP_MAX_THREADS];
    n = mw_read_sweep_thread_grid(15, t, MW_SWEEP_MAX_THREADS); /* 1 2 4 8 15 */
    MW_CHECK_INT(n, 5);
    n = mw_val_thread_subset(t, n);
    MW_CHECK_INT(n, 3);
    MW_CHECK(t[0] == 1 && t[1] == 4 && t[2] == 15, "subset %u %u %u", t[0], t[1], t[2]);
    n = mw_read_sweep_thread_grid(16, t, MW_SWEEP_MAX_THREADS); /* 1 2 4 8 16 */
    MW_CHECK_INT(mw_val_thread_subset(t, n), 3);
    MW_CHECK_INT(t[2], 16);
    n = mw_read_sweep_thread_grid(8, t, MW_SWEEP_MAX_THREADS); /* 1 2 4 8 */
    MW_CHECK_INT(mw_val_thread_subset(t, n), 3); /* 1 4 8 */
    MW_CHECK_INT(t[1], 4);
    MW_CHECK_INT(t[2], 8);
    n = mw_read_sweep_thread_grid(2, t, MW_SWEEP_MAX_THREADS);
    MW_CHECK_INT(mw_val_thread_subset(t, n), 2);
    /* --quick's sweep: 0 1 4 16 ... 4096 from 0 1 2 4 ... 4096, the largest kept */
    unsigned d[MW_SWEEP_MAX_DELAYS];
    n = mw_read_sweep_delay_grid(4096, d, MW_SWEEP_MAX_DELAYS);
    MW_CHECK_INT(n, 14);
    n = mw_read_sweep_delay_thin(d, n, 2);
    MW_CHECK_INT(n, 8);
    MW_CHECK(d[0] == 0 && d[1] == 1 && d[2] == 4 && d[6] == 1024 && d[7] == 4096,
             "thinned %u %u %u .. %u %u", d[0], d[1], d[2], d[6], d[7]);
    n = mw_read_sweep_delay_grid(1000, d, MW_SWEEP_MAX_DELAYS); /* 0 1 2 .. 512 1000 */
    n = mw_read_sweep_delay_thin(d, n, 2);
    MW_CHECK_INT(d[n - 1], 1000);
    MW_CHECK_INT(d[n - 2], 256);
    n = mw_read_sweep_delay_grid(64, d, MW_SWEEP_MAX_DELAYS);
    MW_CHECK_INT(mw_read_sweep_delay_thin(d, n, 1), n);
}

/* The structure probes' arithmetic: stride grids and step detection. */
static void test_struct_arith(void)
{
    size_t g[MW_CURVE_MAX];
    unsigned n = mw_struct_stride_grid(64, 8192, 1, g, MW_CURVE_MAX);
    MW_CHECK_INT(n, 8); /* 64 128 ... 8192 */
    MW_CHECK_INT(g[0], 64);
    MW_CHECK_INT(g[7], 8192);
    n = mw_struct_stride_grid(64, 8192, 2, g, MW_CURVE_MAX);
    MW_CHECK_INT(n, 14); /* 64, 128 (91 rounds to 64: dropped), 192, 256, 384 ... */
    for (unsigned i = 0; i < n; i++) {
        MW_CHECK(g[i] % 64 == 0, "stride %zu not whole lines", g[i]);
        MW_CHECK(i == 0 || g[i] > g[i - 1], "strides not increasing at %u", i);
        MW_CHECK(g[i] <= 8192, "stride %zu past the maximum", g[i]);
    }
    MW_CHECK_INT(g[1], 128);
    MW_CHECK_INT(g[2], 192);
    MW_CHECK_INT(mw_struct_stride_grid(64, 8192, 4, g, 5), 5); /* capped */
    MW_CHECK_INT(mw_struct_stride_grid(0, 8192, 2, g, MW_CURVE_MAX), 0);
    MW_CHECK_INT(mw_struct_stride_grid(128, 64, 2, g, MW_CURVE_MAX), 0);
    /* steps: two levels, a one-point spike that is not one */
    unsigned at[4];
    const double y[] = {1.0, 1.05, 1.0, 2.5, 1.02, 1.0, 1.1, 3.5, 3.6, 3.4, 3.5, 9.0, 9.2, 9.1};
    n = mw_curve_steps(y, 14, 0.3, at, 4);
    MW_CHECK_INT(n, 2);
    MW_CHECK_INT(at[0], 7);
    MW_CHECK_INT(at[1], 11);
    MW_CHECK_INT(mw_curve_steps(y, 14, 0.3, at, 1), 1); /* capped */
    const double flat[] = {2.0, 2.1, 1.9, 2.2, 2.0};
    MW_CHECK_INT(mw_curve_steps(flat, 5, 0.3, at, 4), 0);
    const double last[] = {2.0, 2.0, 2.0, 5.0}; /* a step at the last point counts */
    MW_CHECK_INT(mw_curve_steps(last, 4, 0.3, at, 4), 1);
    MW_CHECK_INT(at[0], 3);
    MW_CHECK_INT(mw_curve_steps(last, 0, 0.3, at, 4), 0);
}

/* TLB steps on curves measured on the development VM (Zen 5 guest, 2 vCPUs;
 * `memwatch calibrate --bench struct`: three runs of the issue-18 audit and
 * three of ours). The ratio-based detector read the gradual rise of the 4 KiB
 * curve past the L2 TLB as two or three levels (1536/2048/3072, 2048/3072/4096,
 * 1024/2048/3072, 3072/4096), a one-point spike (7.2 ns at 1536 pages between
 * 5.1 and 5.1) as the start of a level, the transition point at 96 huge pages
 * as its own level (64 then 96), and a two-point bump that fell back (27.3 and
 * 24.1 ns at 384 and 512 huge pages, 16-17 ns around) as a level of 256. */
#define TLB_PTS_4K 25 /* 8 12 16 24 ... 24576 32768 */
#define TLB_PTS_2M 15 /* 8 ... 1024 */
static const double tlb_x[TLB_PTS_4K] = {8,    12,   16,   24,   32,   48,    64,    96,   128,
                                         192,  256,  384,  512,  768,  1024,  1536,  2048, 3072,
                                         4096, 6144, 8192, 12288, 16384, 24576, 32768};
struct tlb_case {
    const char *name;
    double pages[TLB_PTS_4K], packed[TLB_PTS_4K];
};

static unsigned tlb_entries(const struct tlb_case *c, unsigned n, unsigned *ent, unsigned cap)
{
    mw_curve_rise st[MW_TLB_MAX_LEVELS];
    unsigned k = mw_tlb_steps(c->pages, c->packed, n, st, cap);
    for (unsigned i = 0; i < k; i++)
        ent[i] = (unsigned)tlb_x[st[i].mid];
    return k;
}

static void test_tlb_steps(void)
{
    static const struct tlb_case c4[] = {
        {"audit1/4k",
         {0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.98, 2.61, 2.64, 2.56, 2.63, 2.64, 2.71, 5.14, 5.35, 6.78, 8.91, 11.80, 13.62, 16.45, 23.70, 28.41, 31.53, 36.52},
         {0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.98, 1.05, 3.39, 3.39, 3.40, 3.40, 3.41, 3.41, 3.79, 5.38, 8.26, 10.99, 11.57}},
        {"audit2/4k",
         {0.96, 0.96, 0.96, 0.96, 0.96, 0.96, 0.97, 0.97, 2.65, 2.65, 2.65, 2.65, 2.66, 2.71, 5.05, 5.23, 7.03, 9.02, 11.78, 13.61, 17.28, 27.38, 29.90, 35.18, 87.35},
         {0.96, 0.96, 0.96, 0.96, 0.96, 0.96, 0.96, 0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 1.07, 3.37, 3.37, 3.38, 3.38, 3.37, 3.38, 3.80, 4.69, 7.83, 10.92, 12.24}},
        {"audit3/4k",
         {0.96, 0.97, 0.96, 0.96, 0.96, 0.97, 0.96, 0.97, 2.65, 2.66, 2.66, 2.67, 2.67, 2.72, 5.07, 5.28, 5.21, 6.64, 10.22, 13.29, 16.89, 27.21, 29.75, 31.99, 35.51},
         {0.96, 0.96, 0.96, 0.96, 0.96, 0.97, 0.96, 0.96, 0.97, 0.97, 0.97, 0.97, 0.98, 1.07, 3.38, 3.38, 3.38, 3.38, 3.38, 3.37, 3.80, 4.57, 6.87, 10.84, 12.06}},
        {"dev1/4k",
         {0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 2.66, 2.66, 2.66, 2.67, 2.68, 2.72, 5.08, 7.16, 5.07, 5.08, 6.21, 13.35, 23.07, 31.65, 33.56, 35.94, 36.84},
         {0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.96, 0.96, 0.97, 0.97, 0.97, 0.97, 0.98, 1.07, 3.38, 3.38, 3.38, 3.38, 3.37, 3.39, 3.81, 4.86, 6.85, 9.62, 10.64}},
        {"dev2/4k",
         {0.98, 0.98, 0.97, 0.97, 0.97, 0.98, 0.97, 0.98, 2.67, 2.67, 2.68, 2.69, 2.70, 2.74, 5.13, 7.04, 6.80, 8.93, 11.89, 13.93, 19.76, 30.94, 34.66, 36.44, 38.37},
         {0.98, 0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.98, 0.98, 0.98, 1.07, 3.41, 3.40, 3.41, 3.40, 3.41, 3.39, 3.86, 4.41, 7.09, 10.51, 10.82}},
        {"dev3/4k",
         {0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.98, 0.98, 2.69, 2.68, 2.68, 2.68, 2.70, 2.75, 5.15, 5.32, 6.98, 5.61, 9.67, 14.00, 20.09, 28.18, 32.45, 35.23, 36.81},
         {0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.98, 0.98, 0.98, 0.97, 0.98, 0.98, 0.99, 1.09, 3.43, 3.41, 3.41, 3.39, 3.42, 3.37, 3.87, 5.08, 7.50, 11.05, 11.48}},
    };
    static const struct tlb_case c2[] = {
        {"audit1/2m",
         {0.96, 0.96, 0.96, 0.96, 0.96, 0.97, 0.98, 2.02, 16.11, 15.20, 16.05, 16.21, 15.98, 17.11, 17.25},
         {0.96, 0.96, 0.96, 0.96, 0.96, 0.96, 0.96, 0.96, 0.96, 0.96, 0.96, 0.96, 0.97, 1.06, 3.36}},
        {"audit2/2m",
         {0.97, 0.97, 0.97, 0.98, 0.98, 0.99, 1.00, 1.18, 14.53, 14.42, 14.71, 14.71, 14.67, 16.97, 17.42},
         {0.97, 0.97, 0.97, 0.97, 0.97, 0.97, 0.98, 0.97, 0.98, 0.98, 0.98, 0.98, 0.98, 1.08, 3.40}},
        {"audit3/2m",
         {0.96, 0.96, 0.96, 0.97, 0.97, 0.98, 0.99, 1.13, 14.57, 14.58, 14.25, 14.54, 14.36, 16.75, 17.47},
         {0.96, 0.96, 0.96, 0.96, 0.96, 0.96, 0.96, 0.96, 0.97, 0.97, 0.97, 0.97, 0.98, 1.06, 3.36}},
        {"dev1/2m",
         {1.01, 1.01, 1.01, 1.02, 1.02, 1.03, 1.04, 2.38, 16.49, 16.04, 16.72, 27.30, 24.12, 17.29, 17.62},
         {1.01, 1.01, 1.01, 1.02, 1.01, 1.01, 1.01, 1.01, 1.00, 1.01, 2.36, 0.96, 0.98, 1.07, 3.40}},
        {"dev2/2m",
         {0.96, 0.96, 0.96, 0.96, 0.96, 0.97, 0.98, 2.26, 15.37, 14.78, 15.07, 15.36, 15.23, 16.82, 17.15},
         {0.96, 0.95, 0.95, 0.95, 0.96, 0.96, 0.96, 0.96, 0.96, 0.95, 0.96, 0.96, 0.97, 1.06, 3.33}},
        {"dev3/2m",
         {0.96, 0.96, 0.96, 0.97, 0.97, 0.98, 0.99, 1.59, 15.59, 15.20, 15.81, 15.91, 15.78, 16.99, 17.20},
         {0.96, 0.96, 0.96, 0.96, 0.96, 0.96, 0.96, 0.96, 0.96, 0.97, 0.96, 0.97, 0.96, 1.06, 3.34}},
    };
    unsigned ent[MW_TLB_MAX_LEVELS];
    for (unsigned i = 0; i < sizeof c4 / sizeof c4[0]; i++) {
        /* 4 KiB pages: L1 at 96 entries, then one gradual rise (1536-4096 to 12288 pages),
         * half of it by 6144 in every run */
        unsigned k = tlb_entries(&c4[i], TLB_PTS_4K, ent, MW_TLB_MAX_LEVELS);
        MW_CHECK(k == 2, "%s: %u levels, expected 2 (first %u, second %u)", c4[i].name, k,
                 k > 0 ? ent[0] : 0, k > 1 ? ent[1] : 0);
        MW_CHECK(k >= 1 && ent[0] == 96, "%s: first level %u entries, expected 96", c4[i].name,
                 k ? ent[0] : 0);
        MW_CHECK(k >= 2 && ent[1] == 6144, "%s: second level %u entries, expected 6144",
                 c4[i].name, k > 1 ? ent[1] : 0);
    }
    for (unsigned i = 0; i < sizeof c2 / sizeof c2[0]; i++) {
        /* 2 MiB pages: one step, 96 then 128 */
        unsigned k = tlb_entries(&c2[i], TLB_PTS_2M, ent, MW_TLB_MAX_LEVELS);
        MW_CHECK(k == 1, "%s: %u levels, expected 1 (first %u, second %u)", c2[i].name, k,
                 k > 0 ? ent[0] : 0, k > 1 ? ent[1] : 0);
        MW_CHECK(k >= 1 && ent[0] == 96, "%s: level %u entries, expected 96", c2[i].name,
                 k ? ent[0] : 0);
    }
    /* the rise's extent and heights on one curve (audit run 1, 4 KiB) */
    mw_curve_rise st[MW_TLB_MAX_LEVELS];
    unsigned k = mw_tlb_steps(c4[0].pages, c4[0].packed, TLB_PTS_4K, st, MW_TLB_MAX_LEVELS);
    MW_CHECK_INT(k, 2);
    if (k == 2) {
        MW_CHECK_INT(st[0].from, 7); /* 96: a sharp step */
        MW_CHECK_INT(st[0].mid, 7);
        MW_CHECK_INT(st[0].to, 8);
        MW_CHECK(fabs(st[0].low_ns) < 0.1 && fabs(st[0].high_ns - 1.65) < 0.1,
                 "L1 step %.2f -> %.2f ns", st[0].low_ns, st[0].high_ns);
        MW_CHECK_INT(st[1].from, 15); /* 1536 */
        MW_CHECK_INT(st[1].to, 21);   /* 12288 */
        MW_CHECK(st[1].high_ns > 15 && st[1].high_ns < 25, "L2 plateau %.2f ns", st[1].high_ns);
    }
    MW_CHECK_INT(mw_tlb_steps(c4[0].pages, c4[0].packed, TLB_PTS_4K, st, 1), 1); /* capped */

    /* synthetic: n points of 1 ns packed, the excess given */
    double pk[16], pg[16];
    for (unsigned i = 0; i < 16; i++)
        pk[i] = 1.0;
#define SET(...)                                                                                   \
    do {                                                                                           \
        const double v_[] = {__VA_ARGS__};                                                         \
        for (unsigned i_ = 0; i_ < 16; i_++)                                                       \
            pg[i_] = 1.0 + (i_ < sizeof v_ / sizeof v_[0] ? v_[i_] : v_[sizeof v_ / sizeof v_[0] - 1]); \
    } while (0)
    SET(0, 0, 0, 0, 0, 0, 0, 0); /* flat */
    MW_CHECK_INT(mw_tlb_steps(pg, pk, 16, st, 4), 0);
    SET(0, 0, 0, 0, 5, 5, 5, 5); /* one sharp step */
    MW_CHECK_INT(mw_tlb_steps(pg, pk, 16, st, 4), 1);
    MW_CHECK_INT(st[0].mid, 3);
    MW_CHECK_INT(st[0].to, 4);
    SET(0, 0, 0, 0, 5, 0, 0, 0); /* a one-point spike */
    MW_CHECK_INT(mw_tlb_steps(pg, pk, 16, st, 4), 0);
    SET(0, 0, 0, 0, 5, 5, 0, 0); /* a two-point bump that falls back */
    MW_CHECK_INT(mw_tlb_steps(pg, pk, 16, st, 4), 0);
    SET(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5); /* a rise at the last point */
    MW_CHECK_INT(mw_tlb_steps(pg, pk, 16, st, 4), 0);
    SET(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 5, 5); /* a plateau of three at the end */
    MW_CHECK_INT(mw_tlb_steps(pg, pk, 16, st, 4), 1);
    SET(0, 0, 0, 2, 2, 2, 2, 2, 4, 6, 8, 8, 8); /* two levels, the second gradual */
    MW_CHECK_INT(mw_tlb_steps(pg, pk, 16, st, 4), 2);
    MW_CHECK_INT(st[0].mid, 2);
    MW_CHECK_INT(st[1].from, 7);
    MW_CHECK_INT(st[1].mid, 8); /* 4 < 2 + 6/2 = 5: the last point below half */
    MW_CHECK_INT(st[1].to, 10);
    SET(0, 0, 0, 1, 1, 5, 9, 9, 9); /* an onset, a one-point pause, a larger rise: one level */
    MW_CHECK_INT(mw_tlb_steps(pg, pk, 16, st, 4), 1);
    MW_CHECK_INT(st[0].from, 2);
    MW_CHECK_INT(st[0].mid, 4);
    SET(0, 0, 0, 0.1, 0.2, 0.3, 0.3, 0.3); /* below 0.3 ns and 25 % of the latency */
    MW_CHECK_INT(mw_tlb_steps(pg, pk, 16, st, 4), 0);
    /* a data-cache step in both curves is not a TLB step */
    for (unsigned i = 0; i < 16; i++)
        pk[i] = pg[i] = i < 8 ? 1.0 : 3.4;
    MW_CHECK_INT(mw_tlb_steps(pg, pk, 16, st, 4), 0);
    MW_CHECK_INT(mw_tlb_steps(pg, pk, 1, st, 4), 0);
    MW_CHECK_INT(mw_tlb_steps(pg, pk, 0, st, 4), 0);
#undef SET
}

int main(void)
{
    test_triad_bytes();
    test_delay_grid();
    test_thread_grid();
    test_sattolo();
    test_page_local();
    test_stats();
    test_cache_info();
    test_ladder_detect();
    test_ladder_real_curve();
    test_ladder_tlb_reach();
    test_mlp_analyse();
    test_mixes();
    test_mix_delay_grid();
    test_struct_arith();
    test_tlb_steps();
    return mw_test_done();
}
