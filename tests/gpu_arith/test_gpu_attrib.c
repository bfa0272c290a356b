/*
 * tests/gpu_arith/test_gpu_attrib.c (unit): per-launch DRAM bytes from
 * PM-sampling windows (gpu/attrib.c) on synthetic time lines whose truth is
 * known: windows integrate a piecewise-constant byte rate; each launch's bytes
 * must come back within 1 % whatever the windows' phase, beside idle time,
 * beside compute launches and across batches; devices stay apart. Also the
 * PC-sample-to-line aggregation (gpu/pclines.c) with a fixture line table.
 */
#include "../../gpu/attrib.h"
#include "../../gpu/pclines.h"
#include "mw_test.h"

typedef struct seg {
    uint64_t s, e;
    double rate; /* bytes/ns */
} seg;

/* Windows of len ns from t0 to t1 over the segments (rate 0 elsewhere). */
static void windows(mw_ga_dev *d, const seg *sg, size_t n, uint64_t t0, uint64_t t1, uint64_t len)
{
    for (uint64_t w = t0; w < t1; w += len) {
        double b = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t a = sg[i].s > w ? sg[i].s : w, z = sg[i].e < w + len ? sg[i].e : w + len;
            if (z > a)
                b += sg[i].rate * (double)(z - a);
        }
        mw_ga_push(d, w, w + len, b, 0);
    }
}

/* n launches of dur ns separated by gap ns; every other one at rate2 when alt. */
static size_t timeline(seg *sg, size_t n, uint64_t t, uint64_t dur, uint64_t gap, double rate,
                       double rate2, int alt)
{
    for (size_t i = 0; i < n; i++) {
        sg[i] = (seg){t, t + dur, alt && (i % 2) ? rate2 : rate};
        t += dur + gap;
    }
    return n;
}

static void check_case(const char *what, uint64_t dur, uint64_t gap, int alt, uint64_t phase,
                       uint64_t wlen, double tol)
{
    enum { N = 60 };
    seg sg[N];
    const double fast = 4.3, slow = 0.002; /* 4.3 TB/s and 2 GB/s */
    uint64_t t0 = 1000000000ull;
    size_t n = timeline(sg, N, t0, dur, gap, fast, slow, alt);
    mw_ga_dev d = {0};
    windows(&d, sg, n, t0 - 10 * wlen + phase, sg[n - 1].e + 10 * wlen, wlen);
    mw_ga_kernel ks[N];
    for (size_t i = 0; i < n; i++)
        ks[i] = (mw_ga_kernel){.s = sg[i].s, .e = sg[i].e};
    mw_ga_attribute(&d, ks, n);
    double worst = 0, worst_slow = 0;
    for (size_t i = 0; i < n; i++) {
        double truth = sg[i].rate * (double)(sg[i].e - sg[i].s);
        if (sg[i].rate == fast) {
            double err = fabs(ks[i].bytes / truth - 1);
            if (err > worst)
                worst = err;
            MW_CHECK_NEAR(ks[i].covered, (double)dur, 1e-9);
        } else if (ks[i].rate / fast > worst_slow) {
            worst_slow = ks[i].rate / fast;
        }
    }
    MW_CHECK(worst <= tol, "%s: worst streaming launch off by %.4f (allowed %.3f)", what, worst, tol);
    MW_CHECK(worst_slow < 0.05, "%s: a compute launch got %.3f of the streaming rate", what,
             worst_slow);
    mw_ga_free(&d);
}

static void test_batches(void)
{
    /* Attributing in two batches gives what one batch gives, when the first
     * batch includes the launch after it (as the library does: a launch is
     * final once a later one is known, and that one takes part unretired). */
    enum { N = 40 };
    seg sg[N];
    size_t n = timeline(sg, N, 5000000, 100000, 0, 4.0, 0.001, 1);
    mw_ga_dev a = {0}, b = {0};
    windows(&a, sg, n, 4000000 + 17000, sg[n - 1].e + 500000, 50000);
    windows(&b, sg, n, 4000000 + 17000, sg[n - 1].e + 500000, 50000);
    mw_ga_kernel one[N], two[N];
    for (size_t i = 0; i < n; i++)
        one[i] = two[i] = (mw_ga_kernel){.s = sg[i].s, .e = sg[i].e};
    mw_ga_attribute(&a, one, n);
    mw_ga_attribute(&b, two, N / 2 + 1);
    mw_ga_retire(&b, two, N / 2);
    two[N / 2] = (mw_ga_kernel){.s = sg[N / 2].s, .e = sg[N / 2].e};
    mw_ga_attribute(&b, two + N / 2, N / 2);
    for (size_t i = 0; i < n; i++)
        MW_CHECK(fabs(one[i].bytes - two[i].bytes) <= 0.01 * (one[i].bytes + 1e3),
                 "launch %zu: %g in one batch, %g in two", i, one[i].bytes, two[i].bytes);
    mw_ga_free(&a);
    mw_ga_free(&b);
}

static void test_devices_and_store(void)
{
    /* Windows of one device give nothing to a launch on another; a launch
     * before every window is uncovered; the store drops the oldest quarter at
     * its cap and trim drops what ended before t. */
    mw_ga_dev d0 = {0}, d1 = {0};
    seg s0 = {1000, 2000000, 3.0};
    windows(&d0, &s0, 1, 0, 2000000, 50000);
    mw_ga_kernel k = {.s = 1000, .e = 2000000};
    mw_ga_attribute(&d1, &k, 1);
    MW_CHECK(k.bytes == 0 && k.covered == 0, "device 1 got %g bytes from device 0", k.bytes);
    mw_ga_attribute(&d0, &k, 1);
    MW_CHECK_NEAR(k.bytes, 3.0 * (2000000 - 1000), 1e-9);
    mw_ga_kernel early = {.s = 0, .e = 0 + 500};
    mw_ga_dev late = {0};
    mw_ga_push(&late, 1000, 2000, 5, 0);
    mw_ga_attribute(&late, &early, 1);
    MW_CHECK(early.covered == 0, "a launch before every window covered %g ns", early.covered);
    /* overlapping windows are made disjoint */
    mw_ga_push(&late, 1500, 3000, 5, 0);
    MW_CHECK_INT(late.nsmp, 2);
    MW_CHECK_U64(late.smp[1].s, 2000);
    mw_ga_dev cap = {.maxsmp = 8};
    for (int i = 0; i < 20; i++)
        mw_ga_push(&cap, (uint64_t)i * 10, (uint64_t)i * 10 + 10, 1, 0);
    MW_CHECK(cap.nsmp <= 8 && cap.lost == 20 - cap.nsmp, "cap: %zu kept, %llu lost", cap.nsmp,
             (unsigned long long)cap.lost);
    MW_CHECK_U64(cap.last_end, 200);
    mw_ga_trim(&d0, 1000000, 0);
    MW_CHECK(d0.nsmp > 0 && d0.smp[0].s + d0.smp[0].len > 1000000, "trim kept a window ending at %llu",
             (unsigned long long)(d0.smp[0].s + d0.smp[0].len));
    mw_ga_free(&d0);
    mw_ga_free(&d1);
    mw_ga_free(&late);
    mw_ga_free(&cap);
}

/* Fixture line table: function "k", offsets 0x00-0x3f line 10, 0x40-0x7f
 * line 12 (the load), else unknown. */
static int fixture_lookup(uint64_t crc, const char *func, uint64_t pc, char *file, size_t fsz,
                          uint32_t *line, void *user)
{
    (void)user;
    if (crc != 7 || strcmp(func, "k") || pc >= 0x80)
        return -1;
    snprintf(file, fsz, "/src/k.cu");
    *line = pc < 0x40 ? 10 : 12;
    return 0;
}

static void test_lines(void)
{
    /* stall reasons: 0 long_scoreboard (memory), 1 math, 2 lg_throttle (memory) */
    char *names[3] = {"smsp__pcsamp_warps_issue_stalled_long_scoreboard",
                      "smsp__pcsamp_warps_issue_stalled_math_pipe_throttle",
                      "smsp__pcsamp_warps_issue_stalled_lg_throttle"};
    unsigned char mem[3];
    for (int i = 0; i < 3; i++)
        mem[i] = (unsigned char)mw_pcl_is_mem_stall(names[i]);
    MW_CHECK(mem[0] && !mem[1] && mem[2], "memory stall classes %d %d %d", mem[0], mem[1], mem[2]);
    uint64_t a[3] = {1, 5, 0}, b[3] = {40, 1, 9}, c[3] = {30, 0, 0}, z[3] = {0, 0, 0},
             u[3] = {2, 0, 0};
    mw_pcl_hit h[] = {{7, 0x10, "k", a}, {7, 0x40, "k", b}, {7, 0x50, "k", c},
                      {7, 0x60, "k", z}, {7, 0x90, "k", u}};
    mw_pcl_line *l = NULL;
    long n = mw_pcl_aggregate(h, 5, 3, mem, fixture_lookup, NULL, &l);
    MW_CHECK_INT(n, 3);
    if (n == 3) {
        MW_CHECK_INT(l[0].line, 12); /* the load line first: 80 samples */
        MW_CHECK_U64(l[0].samples, 80);
        MW_CHECK_U64(l[0].stall_mem, 79);
        MW_CHECK_U64(l[0].pc, 0x40);
        MW_CHECK_STR(l[0].file, "/src/k.cu");
        MW_CHECK_INT(l[1].line, 10);
        MW_CHECK_U64(l[1].samples, 6);
        MW_CHECK_U64(l[1].stall_mem, 1);
        MW_CHECK_INT(l[2].line, 0); /* no line for 0x90 */
        MW_CHECK_STR(l[2].file, "?");
        char t[128];
        mw_pcl_stall_text(&l[0], 3, names, 2, t, sizeof t);
        MW_CHECK_STR(t, "long_scoreboard=70,lg_throttle=9");
        mw_pcl_stall_text(&l[1], 3, names, 4, t, sizeof t);
        MW_CHECK_STR(t, "math_pipe_throttle=5,long_scoreboard=1");
    }
    mw_pcl_free(l, n, 3);
    n = mw_pcl_aggregate(h, 5, 3, mem, NULL, NULL, &l);
    MW_CHECK_INT(n, 1); /* without a line table everything is "?":0 */
    mw_pcl_free(l, n, 3);
}

int main(void)
{
    /* 0.1, 1 and 10 ms launches, 50 us windows at several phases */
    static const uint64_t durs[] = {100000, 1000000, 10000000};
    static const uint64_t phases[] = {0, 13000, 25000, 49000};
    for (size_t i = 0; i < 3; i++)
        for (size_t p = 0; p < 4; p++) {
            check_case("back to back", durs[i], 0, 0, phases[p], 50000, 0.01);
            check_case("idle gaps", durs[i], 30000, 0, phases[p], 50000, 0.01);
            check_case("beside compute", durs[i], 0, 1, phases[p], 50000, 0.01);
            check_case("beside compute, gaps", durs[i], 7000, 1, phases[p], 50000, 0.01);
        }
    /* launches shorter than a window: one rate throughout is recovered; beside
     * compute launches it takes windows shorter than the launches */
    check_case("20 us launches", 20000, 0, 0, 9000, 50000, 0.01);
    check_case("20 us launches beside compute, 10 us windows", 20000, 0, 1, 3000, 10000, 0.03);
    test_batches();
    test_devices_and_store();
    test_lines();
    return mw_test_done();
}
