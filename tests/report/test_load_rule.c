/*
 * tests/report/test_load_rule.c: the rule that names other processes as the
 * likely source of the flagged intervals (report/load_rule.c,
 * docs/saturation.md "Whose load is it"), on fixture slots: each side of
 * every threshold (outside CPUs 1, ratio 4, the recorded floor 0.125, the
 * share 0.5), flagged time capped at the slot, slots without flagged time
 * left out, the means over the loaded flagged time.
 */
#include "../../report/load.h"

#include <math.h>
#include <stdio.h>

static int fails;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fails++;                                                                               \
            printf("FAILED line %d: ", __LINE__);                                                  \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

#define MS 1e6

static mw_load_slot slot(double flagged_ms, double rec, double out)
{
    mw_load_slot s = {250 * MS, flagged_ms * MS, rec, 0, out};
    return s;
}

static mw_load_slot slot_w(double flagged_ms, double rec, double wait, double out)
{
    mw_load_slot s = {250 * MS, flagged_ms * MS, rec, wait, out};
    return s;
}

static void test_slot_thresholds(void)
{
    mw_load_slot s;
    s = slot(250, 0.1, 1.0);
    CHECK(mw_load_slot_loaded(&s), "0.1 recorded, 1.0 outside: loaded (the floor 0.125 x 4 = 0.5)");
    s = slot(250, 0.1, 0.99);
    CHECK(!mw_load_slot_loaded(&s), "outside below 1 CPU: not loaded");
    s = slot(250, 0.0, 1.0);
    CHECK(mw_load_slot_loaded(&s), "an idle recording, 1 CPU outside: loaded");
    s = slot(250, 0.5, 1.99);
    CHECK(!mw_load_slot_loaded(&s), "0.5 recorded, 1.99 outside: under 4 x");
    s = slot(250, 0.5, 2.0);
    CHECK(mw_load_slot_loaded(&s), "0.5 recorded, 2.0 outside: 4 x");
    s = slot(250, 1.0, 3.0);
    CHECK(!mw_load_slot_loaded(&s), "a busy recording (1 CPU) beside 3 CPUs: not loaded");
}

/* the time the recording waited for a CPU is said, not weighed: memory
 * traffic needs CPU time, and a program others keep off the CPUs makes
 * little of it */
static void test_wait(void)
{
    mw_load_slot s = slot_w(250, 0.2, 1.8, 3.0);
    CHECK(mw_load_slot_loaded(&s),
          "0.2 used, 1.8 waited, beside 3.0: loaded (the wait does not weigh)");
    s = slot_w(250, 0.6, 0.0, 2.0);
    CHECK(!mw_load_slot_loaded(&s), "0.6 used beside 2.0: under 4 x, however little it waited");
    mw_load_verdict v;
    mw_load_slot a[] = {slot_w(100, 0.1, 0.1, 3.0), slot_w(100, 0.1, 0.3, 3.0)};
    mw_load_judge(a, 2, &v);
    CHECK(v.others && fabs(v.recorded_wait_cpus - 0.2) < 1e-9, "mean wait %.3f",
          v.recorded_wait_cpus);
}

static void test_ratio_busy(void)
{
    mw_load_slot s = slot(250, 2.0, 14.9);
    CHECK(mw_load_slot_loaded(&s), "2 CPUs recorded beside 14.9 outside: 7.45 x, loaded");
    s = slot(250, 4.0, 15.9);
    CHECK(!mw_load_slot_loaded(&s), "4 CPUs recorded beside 15.9 outside: 3.98 x, not loaded");
}

static void test_share(void)
{
    mw_load_verdict v;
    /* half of the flagged time loaded: the verdict holds (>= 0.5) */
    mw_load_slot a[] = {slot(100, 0.1, 3.0), slot(100, 1.5, 0.5), slot(0, 0.0, 9.0)};
    mw_load_judge(a, 3, &v);
    CHECK(fabs(v.flagged_ns - 200 * MS) < 1, "flagged %.0f", v.flagged_ns);
    CHECK(fabs(v.loaded_ns - 100 * MS) < 1, "loaded %.0f", v.loaded_ns);
    CHECK(fabs(v.share - 0.5) < 1e-9 && v.others, "share %.3f others %d", v.share, v.others);
    CHECK(fabs(v.recorded_cpus - 0.1) < 1e-9 && fabs(v.outside_cpus - 3.0) < 1e-9,
          "means over the loaded flagged time: %.3f %.3f", v.recorded_cpus, v.outside_cpus);
    /* just under half: no verdict */
    mw_load_slot b[] = {slot(99, 0.1, 3.0), slot(101, 1.5, 0.5)};
    mw_load_judge(b, 2, &v);
    CHECK(!v.others && v.share < 0.5, "share %.3f others %d", v.share, v.others);
    /* weighted means: 200 ms at (0.1, 2.0), 50 ms at (0.2, 4.0) */
    mw_load_slot c[] = {slot(200, 0.1, 2.0), slot(50, 0.2, 4.0)};
    mw_load_judge(c, 2, &v);
    CHECK(v.others && fabs(v.share - 1) < 1e-9, "all loaded");
    CHECK(fabs(v.recorded_cpus - 0.12) < 1e-9 && fabs(v.outside_cpus - 2.4) < 1e-9,
          "weighted means %.3f %.3f", v.recorded_cpus, v.outside_cpus);
}

static void test_edges(void)
{
    mw_load_verdict v;
    /* no flagged time: nothing to judge, however loaded the machine */
    mw_load_slot a[] = {slot(0, 0.0, 16.0), slot(0, 0.0, 16.0)};
    mw_load_judge(a, 2, &v);
    CHECK(!v.others && v.share == 0 && v.flagged_ns == 0, "no flagged time: no verdict");
    mw_load_judge(a, 0, &v);
    CHECK(!v.others && v.flagged_ns == 0, "no slots: no verdict");
    /* flagged time beyond the slot (overlapping processes) counts as the slot */
    mw_load_slot b[] = {slot(900, 0.1, 3.0), slot(250, 2.0, 0.0)};
    mw_load_judge(b, 2, &v);
    CHECK(fabs(v.flagged_ns - 500 * MS) < 1 && fabs(v.share - 0.5) < 1e-9 && v.others,
          "flagged capped at the slot: flagged %.0f share %.3f", v.flagged_ns, v.share);
}

int main(void)
{
    test_slot_thresholds();
    test_ratio_busy();
    test_wait();
    test_share();
    test_edges();
    if (fails)
        printf("%d check(s) failed\n", fails);
    else
        printf("ok: the load rule\n");
    return fails ? 1 : 0;
}
