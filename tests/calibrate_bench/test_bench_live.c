/*
 * tests/calibrate_bench/test_bench_live.c: the benchmarks run for real on
 * tiny sizes (real threads, pinning, huge-page advice) and their bookkeeping
 * is checked: triad results verified and byte counts exact, the read load
 * counts whole blocks of lines, start/stop misuse is refused, ladder and MLP
 * grids have the promised shape. No timing is asserted (speed lives in bench/).
 */
#include "mw_test.h"

#include <memwatch/bench.h>

#include <errno.h>
#include <time.h>

static void test_triad(void)
{
    static const char *const isas[] = {"auto", "scalar"};
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < 4; k++) {
            mw_triad_config c = {.threads = 2, .elems = 1000000, .repeats = 3,
                                 .store = (mw_triad_store)s, .isa = isas[k % 2],
                                 .free_running = k >= 2};
            mw_triad_result r;
            int rc = mw_bench_triad(&c, &r);
            if (rc == MW_ERR_UNSUPPORTED && s == MW_TRIAD_NT && k % 2 == 1)
                continue; /* no scalar non-temporal kernel: reported, not faked */
            MW_CHECK(rc == 0, "triad store=%d isa=%s: %s", s, isas[k % 2], mw_strerror(rc));
            if (rc)
                continue;
            MW_CHECK(r.verified, "triad results wrong (store=%d isa=%s)", s, isas[k % 2]);
            MW_CHECK(r.elems >= 1000000 && r.elems % (64 * 2) == 0, "elems %zu", r.elems);
            MW_CHECK_INT(r.bytes_per_iter, s ? 24 : 32);
            MW_CHECK_NEAR(r.bytes, (double)r.bytes_per_iter * (double)r.elems, 0);
            MW_CHECK_INT(r.array_bytes, r.elems * 8);
            MW_CHECK_INT(r.repeats, 3);
            MW_CHECK_INT(r.bw_stats.n, 3);
            for (unsigned i = 0; i < r.repeats; i++)
                MW_CHECK_NEAR(r.bw[i] * r.seconds[i], r.bytes, 1e-9);
            MW_CHECK_NEAR(r.explicit_bw_best, r.bw_stats.best * 24 / r.bytes_per_iter, 1e-12);
            MW_CHECK_INT(r.free_running, k >= 2);
            MW_CHECK_NEAR(r.run_bw * r.run_seconds, r.bytes * r.repeats, 1e-9);
            for (unsigned i = 0; i < r.repeats; i++)
                MW_CHECK(r.seconds[i] <= r.run_seconds * (1 + 1e-12),
                         "repetition %u (%g s) longer than the run (%g s)", i, r.seconds[i],
                         r.run_seconds);
        }
    mw_triad_config bad = {.threads = 1, .elems = 4096, .isa = "vax"};
    mw_triad_result r;
    MW_CHECK_INT(mw_bench_triad(&bad, &r), MW_ERR_UNSUPPORTED);
    bad.isa = NULL;
    bad.repeats = MW_BENCH_MAX_REPEATS + 1;
    MW_CHECK_INT(mw_bench_triad(&bad, &r), MW_ERR_TOOBIG);
}

static void test_read_load(void)
{
    mw_read_load_config c = {.threads = 2, .bytes_per_thread = 2 << 20};
    mw_read_load *l;
    MW_CHECK_INT(mw_read_load_create(&c, &l), 0);
    mw_sweep_point p;
    MW_CHECK_INT(mw_read_load_stop(l, &p), -EINVAL); /* not started */
    static const unsigned delays[] = {0, 3, 64, 1000};
    for (unsigned i = 0; i < 4; i++) {
        MW_CHECK_INT(mw_read_load_start(l, delays[i]), 0);
        MW_CHECK_INT(mw_read_load_start(l, delays[i]), -EBUSY);
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
        MW_CHECK_INT(mw_read_load_stop(l, &p), 0);
        MW_CHECK_INT(p.threads, 2);
        MW_CHECK_INT(p.delay, delays[i]);
        MW_CHECK(p.lines > 0 && p.lines % 384 == 0, "lines %llu", (unsigned long long)p.lines);
        MW_CHECK_NEAR(p.bytes, (double)p.lines * 64, 0);
        MW_CHECK(p.seconds > 0 && p.bw > 0, "no time or bandwidth");
        MW_CHECK_NEAR(p.bw_window, p.bytes / p.seconds, 1e-9);
    }
    mw_read_load_destroy(l);
    /* every read/write mix runs and counts its traffic exactly */
    for (unsigned m = 0; m < MW_MIX_COUNT; m++) {
        mw_read_load_config mc = {.threads = 1, .bytes_per_thread = 2 << 20,
                                  .mix = (mw_read_mix)m};
        MW_CHECK_INT(mw_read_load_create(&mc, &l), 0);
        for (unsigned d = 0; d < 2; d++) {
            MW_CHECK_INT(mw_read_load_start(l, d ? 5 : 16), 0);
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
            MW_CHECK_INT(mw_read_load_stop(l, &p), 0);
            MW_CHECK_INT(p.mix, m);
            double r, w;
            MW_CHECK_INT(mw_mix_traffic((mw_read_mix)m, p.lines, &r, &w), 0);
            MW_CHECK_NEAR(p.read_bytes, r, 0);
            MW_CHECK_NEAR(p.write_bytes, w, 0);
            MW_CHECK_NEAR(p.bytes, r + w, 0);
            MW_CHECK(p.bw > 0, "mix %u: no bandwidth", m);
        }
        mw_read_load_destroy(l);
    }
    mw_read_load_config z = {.threads = 0};
    MW_CHECK_INT(mw_read_load_create(&z, &l), -EINVAL);
}

static void test_ladder_shape(void)
{
    mw_ladder_config c = {.min_bytes = 4096, .max_bytes = 1 << 20, .steps_per_octave = 2,
                          .repeats = 1, .min_loads = 16384, .cpu = -1};
    mw_ladder_result *r = calloc(1, sizeof *r);
    MW_CHECK_INT(mw_bench_ladder(&c, r), 0);
    MW_CHECK_INT(r->npoints, 17); /* 4K .. 1M, two points per octave */
    MW_CHECK_NEAR(r->step_ratio, sqrt(2.0), 1e-12);
    for (unsigned i = 0; i < r->npoints; i++) {
        MW_CHECK(r->point[i].bytes % 64 == 0, "footprint %zu not whole lines", r->point[i].bytes);
        MW_CHECK(r->point[i].ns > 0, "no latency at %zu", r->point[i].bytes);
        MW_CHECK(r->point[i].local_ns > 0, "no page-local latency at %zu", r->point[i].bytes);
        if (i)
            MW_CHECK(r->point[i].bytes > r->point[i - 1].bytes, "footprints not increasing");
    }
    MW_CHECK_INT(r->point[0].bytes, 4096);
    MW_CHECK_INT(r->point[r->npoints - 1].bytes, 1 << 20);
    MW_CHECK(r->nlevels >= 1, "no level detected");
    MW_CHECK_INT(r->levels_from_local, 1);
    MW_CHECK(r->full_nlevels >= 1, "no level detected on the full-random curve");
    MW_CHECK(r->tlb_ratio > 0, "no full-random / page-local ratio");
    for (unsigned l = 0; l < r->nlevels; l++)
        MW_CHECK(r->level[l].local_ns > 0 && r->level[l].ns > 0, "level %u without latencies", l);
    c.max_bytes = 1024; /* below min */
    MW_CHECK_INT(mw_bench_ladder(&c, r), -EINVAL);
    free(r);
}

static void test_mlp_shape(void)
{
    mw_mlp_config c = {.max_chains = 6, .bytes = 16 << 20, .loads = 4096, .cpu = -1};
    mw_mlp_result r;
    MW_CHECK_INT(mw_bench_mlp(&c, &r), 0);
    MW_CHECK_INT(r.n, 6);
    MW_CHECK_NEAR(r.parallelism[0], 1.0, 1e-12);
    for (unsigned k = 0; k < r.n; k++)
        MW_CHECK(r.ns_per_load[k] > 0, "k=%u: no time", k + 1);
    c.max_chains = MW_MLP_MAX_CHAINS + 1;
    MW_CHECK_INT(mw_bench_mlp(&c, &r), MW_ERR_TOOBIG);
}

static void test_loaded_shape(void)
{
    int cpus[8];
    if (mw_bench_cpus(cpus, 8) < 2) {
        mw_loaded_result r;
        MW_CHECK_INT(mw_bench_loaded_latency(NULL, &r), MW_ERR_UNSUPPORTED);
        return;
    }
    mw_loaded_config c = {.load_threads = 1, .max_delay = 16, .duration_s = 0.02,
                          .chase_bytes = 8 << 20};
    mw_loaded_result r;
    MW_CHECK_INT(mw_bench_loaded_latency(&c, &r), 0);
    MW_CHECK_INT(r.npoints, 6); /* 0 1 2 4 8 16 */
    MW_CHECK_INT(r.load_threads, 1);
    MW_CHECK(r.idle_ns > 0, "no idle latency");
    for (unsigned i = 0; i < r.npoints; i++)
        MW_CHECK(r.point[i].ns > 0 && r.point[i].bw > 0, "point %u empty", i);
}

int main(void)
{
    mw_timer_info t;
    int rc = mw_timer_info_get(&t);
    if (rc == MW_ERR_UNSUPPORTED)
        mw_test_skip("no usable time-stamp counter on this machine");
    MW_CHECK(t.tsc_hz > 1e8, "TSC rate %g", t.tsc_hz);
    MW_CHECK(fabs(t.tsc_clock_diff) < 0.02, "TSC and CLOCK_MONOTONIC_RAW differ by %g",
             t.tsc_clock_diff);
    MW_CHECK(t.overhead_cycles > 0, "no timer overhead measured");
    test_triad();
    test_read_load();
    test_ladder_shape();
    test_mlp_shape();
    test_loaded_shape();
    return mw_test_done();
}
