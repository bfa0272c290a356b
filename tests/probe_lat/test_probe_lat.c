/*
 * tests/probe_lat/test_probe_lat.c: the software latency probe on this machine.
 * Checks the contract (argument checks, result fields consistent with each
 * other, config honoured, handles independent), not speed: timing goals live in
 * bench/probe_separation. Prints the measured figures for the log.
 * The window (a reading pools the bursts of the recent measurements) is checked
 * by its counts, which depend on the configuration only, never on speed: the
 * windows used are a minute (everything pooled), 1 ns (nothing pooled) or off.
 */
#include "mw_test.h"

#include <errno.h>
#include <stdlib.h>
#include <memwatch/probe_lat.h>

static void check_result(const mw_probe_lat_result *r, unsigned bursts, const char *what)
{
    MW_CHECK(r->bursts == bursts, "%s: bursts %u, expected %u", what, r->bursts, bursts);
    MW_CHECK(isfinite(r->median_ns) && r->median_ns > 0, "%s: median %g ns", what, r->median_ns);
    MW_CHECK(r->median_cycles > 0, "%s: median %g cycles", what, r->median_cycles);
    MW_CHECK(r->min_ns <= r->median_ns && r->median_ns <= r->max_ns, "%s: min %g median %g max %g",
             what, r->min_ns, r->median_ns, r->max_ns);
    MW_CHECK(r->cost_ns > 0, "%s: cost %llu ns", what, (unsigned long long)r->cost_ns);
    MW_CHECK(r->window_measurements >= 1 && r->window_measurements <= MW_PROBE_LAT_MAX_WINDOW,
             "%s: window of %u measurements", what, r->window_measurements);
    MW_CHECK(r->window_bursts == r->window_measurements * bursts, "%s: %u bursts in the window",
             what, r->window_bursts);
    MW_CHECK(r->min_ns <= r->this_ns && r->this_ns <= r->max_ns, "%s: this %g outside %g..%g",
             what, r->this_ns, r->min_ns, r->max_ns);
    /* a DRAM load cannot take a microsecond on average over a burst of 32 */
    MW_CHECK(r->median_ns < 100000, "%s: median %g ns is not a memory latency", what, r->median_ns);
}

int main(void)
{
#if !defined(__x86_64__)
    mw_probe_lat *u = NULL;
    int ru = mw_probe_lat_create(NULL, &u);
    MW_CHECK_INT(ru, MW_ERR_UNSUPPORTED);
    return mw_test_done();
#else
    mw_probe_lat *p = NULL;
    MW_CHECK_INT(mw_probe_lat_create(NULL, NULL), -EINVAL);
    mw_probe_lat_config bad = {.lines = 64, .region_bytes = 16 * 4096};
    MW_CHECK_INT(mw_probe_lat_create(&bad, &p), -EINVAL);
    MW_CHECK(p == NULL, "no handle on error");
    mw_probe_lat_config bad2 = {.lines = 1};
    MW_CHECK_INT(mw_probe_lat_create(&bad2, &p), -EINVAL);

    int rc = mw_probe_lat_create(NULL, &p);
    if (rc == MW_ERR_UNSUPPORTED)
        mw_test_skip("probe_lat unsupported on this CPU (see the log for the reason)");
    MW_CHECK_INT(rc, 0);
    if (!p)
        return mw_test_done();
    MW_CHECK_INT(mw_probe_lat_measure(p, NULL), -EINVAL);
    mw_probe_lat_result r;
    for (int i = 0; i < 5; i++) {
        memset(&r, 0, sizeof r);
        MW_CHECK_INT(mw_probe_lat_measure(p, &r), 0);
        check_result(&r, 5, "default");
        printf("default: median %.1f ns (%.1f cycles) min %.1f max %.1f, cost %llu ns\n",
               r.median_ns, r.median_cycles, r.min_ns, r.max_ns, (unsigned long long)r.cost_ns);
    }

    /* the idle baseline: the median of 7 readings, a latency like theirs */
    MW_CHECK(mw_probe_lat_baseline(NULL) == 0, "baseline of no probe");
    double base = mw_probe_lat_baseline(p);
    MW_CHECK(base > 0 && base < 1e5, "baseline %.1f ns", base);
    printf("baseline: %.1f ns\n", base);

    /* a second handle with its own configuration, used interleaved */
    mw_probe_lat *q = NULL;
    mw_probe_lat_config c = {.lines = 16, .bursts = 4, .region_bytes = 64 * 4096};
    MW_CHECK_INT(mw_probe_lat_create(&c, &q), 0);
    if (q) {
        MW_CHECK_INT(mw_probe_lat_measure(q, &r), 0);
        check_result(&r, 4, "16 lines, 4 bursts");
        MW_CHECK_INT(mw_probe_lat_measure(p, &r), 0);
        check_result(&r, 5, "default after other");
        mw_probe_lat_destroy(q);
    }
    /* the cpuid-serialized timer (counters/tsc.h) measures the same way */
    mw_probe_lat *s = NULL;
    mw_probe_lat_config cc = {.bursts = 3, .flags = MW_PROBE_LAT_CPUID};
    MW_CHECK_INT(mw_probe_lat_create(&cc, &s), 0);
    if (s) {
        MW_CHECK_INT(mw_probe_lat_measure(s, &r), 0);
        check_result(&r, 3, "cpuid timer");
        mw_probe_lat_destroy(s);
    }
    mw_probe_lat_destroy(p);
    mw_probe_lat_destroy(NULL);
    mw_probe_lat_reset(NULL);

    /* The window, by its counts. A minute: every measurement is pooled, up to
     * the ring's size; reset forgets them. */
    mw_probe_lat_config wc = {.bursts = 3, .window_ns = 60000000000ull};
    MW_CHECK_INT(mw_probe_lat_create(&wc, &p), 0);
    if (p) {
        for (unsigned i = 1; i <= MW_PROBE_LAT_MAX_WINDOW + 3; i++) {
            MW_CHECK_INT(mw_probe_lat_measure(p, &r), 0);
            check_result(&r, 3, "minute window");
            unsigned want = i < MW_PROBE_LAT_MAX_WINDOW ? i : MW_PROBE_LAT_MAX_WINDOW;
            MW_CHECK(r.window_measurements == want, "measurement %u: window of %u, expected %u",
                     i, r.window_measurements, want);
        }
        mw_probe_lat_reset(p);
        MW_CHECK_INT(mw_probe_lat_measure(p, &r), 0);
        MW_CHECK(r.window_measurements == 1 && r.window_bursts == 3,
                 "after reset: window of %u measurements, %u bursts", r.window_measurements,
                 r.window_bursts);
        MW_CHECK_INT(mw_probe_lat_measure(p, &r), 0);
        MW_CHECK(r.window_measurements == 2, "after reset, second: %u", r.window_measurements);
        mw_probe_lat_destroy(p);
    }
    /* 1 ns: the previous measurement always started longer ago; off: the
     * reading is this measurement's own median. Many bursts: the pool's sort. */
    mw_probe_lat_config tiny = {.bursts = 3, .window_ns = 1};
    mw_probe_lat_config off = {.bursts = 301, .flags = MW_PROBE_LAT_NO_WINDOW};
    mw_probe_lat_config *cs[2] = {&tiny, &off};
    for (int k = 0; k < 2; k++) {
        MW_CHECK_INT(mw_probe_lat_create(cs[k], &p), 0);
        if (!p)
            continue;
        for (int i = 0; i < 4; i++) {
            MW_CHECK_INT(mw_probe_lat_measure(p, &r), 0);
            check_result(&r, cs[k]->bursts, k ? "no window" : "1 ns window");
            MW_CHECK(r.window_measurements == 1, "window of %u", r.window_measurements);
            MW_CHECK(r.median_ns == r.this_ns, "median %g, this measurement's %g", r.median_ns,
                     r.this_ns);
        }
        mw_probe_lat_destroy(p);
    }
    /* the huge-page layout still measures */
    mw_probe_lat_config hc = {.flags = MW_PROBE_LAT_HUGE};
    MW_CHECK_INT(mw_probe_lat_create(&hc, &p), 0);
    if (p) {
        MW_CHECK_INT(mw_probe_lat_measure(p, &r), 0);
        check_result(&r, 5, "huge page");
        mw_probe_lat_destroy(p);
    }
    /* the variables fill what the configuration leaves at its default */
    setenv("MEMWATCH_PROBE_WINDOW", "0", 1);
    setenv("MEMWATCH_PROBE_LAYOUT", "huge", 1);
    MW_CHECK_INT(mw_probe_lat_create(NULL, &p), 0);
    if (p) {
        for (int i = 0; i < 3; i++) {
            MW_CHECK_INT(mw_probe_lat_measure(p, &r), 0);
            MW_CHECK(r.window_measurements == 1, "MEMWATCH_PROBE_WINDOW=0: window of %u",
                     r.window_measurements);
        }
        mw_probe_lat_destroy(p);
    }
    MW_CHECK_INT(mw_probe_lat_create(&wc, &p), 0); /* an explicit window wins */
    if (p) {
        MW_CHECK_INT(mw_probe_lat_measure(p, &r), 0);
        MW_CHECK_INT(mw_probe_lat_measure(p, &r), 0);
        MW_CHECK(r.window_measurements == 2, "explicit window: %u", r.window_measurements);
        mw_probe_lat_destroy(p);
    }
    setenv("MEMWATCH_PROBE_LINES", "16", 1);
    setenv("MEMWATCH_PROBE_BURSTS", "7", 1);
    MW_CHECK_INT(mw_probe_lat_create(NULL, &p), 0);
    if (p) {
        MW_CHECK_INT(mw_probe_lat_measure(p, &r), 0);
        MW_CHECK(r.lines == 16 && r.bursts == 7, "variables: %u lines, %u bursts", r.lines,
                 r.bursts);
        mw_probe_lat_destroy(p);
    }
    mw_probe_lat_config eb = {.lines = 8, .bursts = 2}; /* explicit values win */
    MW_CHECK_INT(mw_probe_lat_create(&eb, &p), 0);
    if (p) {
        MW_CHECK_INT(mw_probe_lat_measure(p, &r), 0);
        MW_CHECK(r.lines == 8 && r.bursts == 2, "explicit: %u lines, %u bursts", r.lines,
                 r.bursts);
        mw_probe_lat_destroy(p);
    }
    setenv("MEMWATCH_PROBE_BURSTS", "0", 1); /* out of range: the default */
    unsetenv("MEMWATCH_PROBE_LINES");
    MW_CHECK_INT(mw_probe_lat_create(NULL, &p), 0);
    if (p) {
        MW_CHECK_INT(mw_probe_lat_measure(p, &r), 0);
        MW_CHECK(r.lines == 32 && r.bursts == 5, "defaults: %u lines, %u bursts", r.lines,
                 r.bursts);
        mw_probe_lat_destroy(p);
    }
    unsetenv("MEMWATCH_PROBE_BURSTS");
    setenv("MEMWATCH_PROBE_WINDOW", "60000000", 1); /* out of range: the default */
    setenv("MEMWATCH_PROBE_LAYOUT", "bogus", 1);
    MW_CHECK_INT(mw_probe_lat_create(NULL, &p), 0);
    mw_probe_lat_destroy(p);
    unsetenv("MEMWATCH_PROBE_WINDOW");
    unsetenv("MEMWATCH_PROBE_LAYOUT");
    /* raw bursts */
    mw_probe_lat_config rc1 = {.bursts = 1};
    MW_CHECK_INT(mw_probe_lat_create(&rc1, &p), 0);
    if (p) {
        double ns[7];
        MW_CHECK_INT(mw_probe_lat_bursts(p, NULL, 3), -EINVAL);
        MW_CHECK_INT(mw_probe_lat_bursts(p, ns, 7), 0);
        for (int i = 0; i < 7; i++)
            MW_CHECK(isfinite(ns[i]) && ns[i] >= 0 && ns[i] < 100000, "burst %d: %g ns", i, ns[i]);
        mw_probe_lat_destroy(p);
    }
    return mw_test_done();
#endif
}
