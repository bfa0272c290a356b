/*
 * tests/validate/test_validate_live.c: a short validation run on this machine
 * (tiny grid: one load thread, delays 0..4, 20 ms per point). Checks the
 * contract, not the figures: every method the counters core finds unusable is
 * reported unavailable with its reason; probe_lat is measured at every grid
 * point and gets a verdict, rates and a threshold; the profile derived from it
 * is consistent, written, read back and matched to this machine; the table
 * names the probe's separation groups.
 */
#include "mw_test.h"

#include <memwatch/bench.h>
#include <memwatch/validate.h>
#include <math.h>
#include <unistd.h>

int main(void)
{
    mw_validation *v = calloc(1, sizeof *v);
    if (!v)
        return 1;
    mw_validate_config cfg = {.point_s = 0.02, .max_delay = 4, .max_threads = 1,
                              .mixes = 0xf};
    int rc = mw_validate_run(&cfg, NULL, v);
    MW_CHECK_INT(rc, 0);
    MW_CHECK(v->nmethods >= 1, "methods %u", v->nmethods);
    const mw_val_method *pl = NULL;
    for (unsigned i = 0; i < v->nmethods; i++) {
        const mw_val_method *m = &v->method[i];
        if (!strcmp(m->name, "probe_lat"))
            pl = m;
        else if (!m->available)
            MW_CHECK(m->reason[0] != 0, "%s: unavailable without a reason", m->name);
        if (strstr(v->hw_note, "no hardware PMU") && strcmp(m->name, "probe_lat"))
            MW_CHECK(!m->available, "%s available on a machine without hardware PMU", m->name);
    }
    MW_CHECK(pl != NULL, "probe_lat is always reported");
#if defined(__x86_64__)
    if (pl && pl->available) {
        /* idle + delays 0, 1, 2, 4; then each of 3 mixes at delays 0, 1, 4 */
        MW_CHECK_INT(v->npoints, 5 + 3 * 3);
        MW_CHECK_INT(v->nmix, 3);
        for (unsigned k = 0; k < v->nmix && k < 3; k++) {
            const mw_val_mix *vm = &v->mix[k];
            MW_CHECK_INT(vm->mix, (int)k + 1);
            MW_CHECK_INT(vm->n, 3);
            MW_CHECK(vm->th.threshold_ns >= vm->th.idle_ns * 1.25 - 1e-9, "mix %u threshold", k);
            for (unsigned i = vm->first; i < vm->first + vm->n && i < v->npoints; i++) {
                const mw_val_point *q = &v->point[i];
                MW_CHECK_INT(q->mix, vm->mix);
                MW_CHECK(q->bw > 0 && fabs(q->read_bw + q->write_bw - q->bw) <= 1e-6 * q->bw,
                         "mix point %u: %g + %g != %g", i, q->read_bw, q->write_bw, q->bw);
                MW_CHECK(fabs(q->read_bw / q->bw - vm->read_share) < 1e-9, "mix point %u share",
                         i);
            }
        }
        MW_CHECK_INT(v->profile.n_mixes, 4);
        MW_CHECK_STR(v->profile.mixes[0].name, "reads100");
        MW_CHECK(v->profile.mixes[0].threshold_ns == pl->lat.th.threshold_ns, "reads100 = grid");
        for (unsigned i = 0; i < 5; i++) {
            /* the idle point takes every reading; the others stop once steady */
            if (i == 0)
                MW_CHECK_INT(v->point[i].n, MW_VAL_MAX_SAMPLES);
            else
                MW_CHECK(v->point[i].n >= 16 && v->point[i].n <= MW_VAL_MAX_SAMPLES,
                         "point %u: %u readings", i, v->point[i].n);
            MW_CHECK(i == 0 ? v->point[i].threads == 0 : v->point[i].bw > 0, "point %u bw %g", i,
                     v->point[i].bw);
        }
        MW_CHECK(pl->lat.verdict != MW_VERDICT_UNAVAILABLE, "probe_lat verdict");
        MW_CHECK(pl->lat.th.threshold_ns >= pl->lat.th.idle_ns * 1.25 - 1e-9,
                 "threshold %g idle %g", pl->lat.th.threshold_ns, pl->lat.th.idle_ns);
        MW_CHECK(pl->lat.false_pos >= 0 && pl->lat.false_pos <= 1 && pl->lat.false_neg >= 0 &&
                     pl->lat.false_neg <= 1, "rates %g %g", pl->lat.false_pos, pl->lat.false_neg);
        MW_CHECK(v->probe_cost_ns > 0, "cost %g", v->probe_cost_ns);
        printf("probe_lat here: %s, idle %.1f ns, threshold %.1f ns, FP %.1f %%, FN %.1f %%, "
               "cost %.1f us\n",
               mw_verdict_name(pl->lat.verdict), pl->lat.th.idle_ns, pl->lat.th.threshold_ns,
               100 * pl->lat.false_pos, 100 * pl->lat.false_neg, v->probe_cost_ns / 1e3);
    }
#endif
    /* the profile follows from the verdicts */
    const mw_profile *p = &v->profile;
    MW_CHECK(p->identity[0] != 0, "identity");
    if (pl && pl->available && pl->lat.verdict == MW_VERDICT_ACCURATE) {
        MW_CHECK_STR(p->lat_method, "probe_lat");
        MW_CHECK(p->lat_threshold_ns == pl->lat.th.threshold_ns, "threshold in profile");
    }
    if (!p->lat_method[0])
        MW_CHECK(p->lat_threshold_ns == 0, "no method, no threshold");
    MW_CHECK(p->n_methods == v->nmethods, "profile methods %u", p->n_methods);

    char dir[] = "/tmp/mw-test-validate-XXXXXX", path[128];
    MW_CHECK(mkdtemp(dir) != NULL, "tmpdir");
    snprintf(path, sizeof path, "%s/profile.json", dir);
    MW_CHECK_INT(mw_profile_write(path, p, v, NULL), 0);
    mw_profile back;
    MW_CHECK_INT(mw_profile_load(path, 1, &back), 0);
    MW_CHECK_STR(back.lat_method, p->lat_method);
    MW_CHECK(back.lat_threshold_ns == p->lat_threshold_ns, "threshold read back");
    MW_CHECK_INT(back.n_mixes, p->n_mixes);
    unlink(path);
    rmdir(dir);

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    MW_CHECK_INT(mw_validate_write_table(v, f), 0);
    fclose(f);
    MW_CHECK(buf && strstr(buf, "probe_lat"), "table names probe_lat");
    if (pl && pl->available)
        MW_CHECK(strstr(buf, "separation: idle end") != NULL, "table shows the separation");
    free(buf);
#if defined(__x86_64__)
    /* the load shapes, with a chase that claims a 1 ns idle latency: the
     * probe's idle reading is far above it, so the shapes are measured twice
     * and the profile says the validation was disturbed */
    if (pl && pl->available) {
        mw_calib_results *cr = calloc(1, sizeof *cr);
        MW_CHECK(cr != NULL, "calloc");
        cr->ran = MW_CALIB_LADDER;
        cr->ladder.dram_ns = 1.0;
        mw_validate_config sc = {.point_s = 0.02, .max_delay = 4, .max_threads = 1,
                                 .shapes_s = 0.03, .shape_rounds = 1};
        MW_CHECK_INT(mw_validate_run(&sc, cr, v), 0);
        MW_CHECK(v->nshapes >= 12, "shapes %u", v->nshapes);
        for (unsigned i = 0; i < v->nshapes; i++)
            MW_CHECK(v->shape[i].n >= 1 && (v->shape[i].procs == 0 || !strcmp(v->shape[i].mode, "compute") || v->shape[i].bw > 0),
                     "shape %s: %u readings, %g B/s", v->shape[i].name, v->shape[i].n, v->shape[i].bw);
        MW_CHECK_INT(v->shape_disturbed, 1);
        MW_CHECK(strstr(v->shape_note, "disturbed the validation (measured twice)") != NULL,
                 "note: %s", v->shape_note);
        MW_CHECK(strstr(v->profile.threshold_note, "calibrate again") != NULL,
                 "profile note: %s", v->profile.threshold_note);
        MW_CHECK_INT(v->profile.from_shapes, 1);
        MW_CHECK(v->profile.lat_threshold_ns == v->shapes.threshold_ns, "the shapes' threshold");
        MW_CHECK(v->profile.saturable != MW_SAT_UNKNOWN, "saturable decided");
        free(cr);
    }
#endif
    free(v);
    return mw_test_done();
}
