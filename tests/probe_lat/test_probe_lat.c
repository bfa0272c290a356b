/*
 * tests/probe_lat/test_probe_lat.c: the software latency probe on this machine.
 * Checks the contract (argument checks, result fields consistent with each
 * other, config honoured, handles independent), not speed: timing goals live in
 * bench/probe_separation. Prints the measured figures for the log.
 */
#include "mw_test.h"

#include <errno.h>
#include <memwatch/probe_lat.h>

static void check_result(const mw_probe_lat_result *r, unsigned bursts, const char *what)
{
    MW_CHECK(r->bursts == bursts, "%s: bursts %u, expected %u", what, r->bursts, bursts);
    MW_CHECK(isfinite(r->median_ns) && r->median_ns > 0, "%s: median %g ns", what, r->median_ns);
    MW_CHECK(r->median_cycles > 0, "%s: median %g cycles", what, r->median_cycles);
    MW_CHECK(r->min_ns <= r->median_ns && r->median_ns <= r->max_ns, "%s: min %g median %g max %g",
             what, r->min_ns, r->median_ns, r->max_ns);
    MW_CHECK(r->cost_ns > 0, "%s: cost %llu ns", what, (unsigned long long)r->cost_ns);
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
        check_result(&r, 15, "default");
        printf("default: median %.1f ns (%.1f cycles) min %.1f max %.1f, cost %llu ns\n",
               r.median_ns, r.median_cycles, r.min_ns, r.max_ns, (unsigned long long)r.cost_ns);
    }

    /* a second handle with its own configuration, used interleaved */
    mw_probe_lat *q = NULL;
    mw_probe_lat_config c = {.lines = 16, .bursts = 4, .region_bytes = 64 * 4096};
    MW_CHECK_INT(mw_probe_lat_create(&c, &q), 0);
    if (q) {
        MW_CHECK_INT(mw_probe_lat_measure(q, &r), 0);
        check_result(&r, 4, "16 lines, 4 bursts");
        MW_CHECK_INT(mw_probe_lat_measure(p, &r), 0);
        check_result(&r, 15, "default after other");
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
    return mw_test_done();
#endif
}
