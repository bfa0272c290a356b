/*
 * tests/validate/test_validate_fixture.c: validation against the Skylake-SP
 * fixture trees (tests/fixtures/sysfs/skx, proc/skx), where the counters core
 * lists imc_cas, ocr_dram, lmrl, l1_miss_lat and pebs_lat as available. On a
 * machine whose kernel has none of those PMUs the bandwidth methods must come
 * and the counting latency methods (lmrl, l1_miss_lat) out unavailable with the
 * reason the open failed, the sampled one (pebs_lat) with the reason this
 * version does not validate it, and the profile must
 * name no bandwidth method. Where the events really open (a root shell on a
 * Skylake-SP) those methods get a measured verdict instead.
 */
#include "mw_test.h"

#include <memwatch/validate.h>

int main(void)
{
    mw_validation *v = calloc(1, sizeof *v);
    if (!v)
        return 1;
    mw_validate_config cfg = {.point_s = 0.02, .max_delay = 2, .max_threads = 1,
                              .sys_root = MW_FIXTURES "/sysfs/skx",
                              .proc_root = MW_FIXTURES "/proc/skx"};
    MW_CHECK_INT(mw_validate_run(&cfg, NULL, v), 0);
    static const char *const expect[] = {"imc_cas", "ocr_dram", "lmrl", "l1_miss_lat",
                                         "pebs_lat", "probe_lat"};
    for (size_t e = 0; e < sizeof expect / sizeof expect[0]; e++) {
        const mw_val_method *m = NULL;
        for (unsigned i = 0; i < v->nmethods; i++)
            if (!strcmp(v->method[i].name, expect[e]))
                m = &v->method[i];
        MW_CHECK(m != NULL, "%s listed", expect[e]);
        if (!m || !strcmp(m->name, "probe_lat"))
            continue;
        int sampled = !strcmp(m->name, "pebs_lat");
        if (m->available && !sampled) {
            /* the events really opened: then it was measured */
            MW_CHECK(m->latency ? m->lat.verdict != MW_VERDICT_UNAVAILABLE
                                : m->bw.verdict != MW_VERDICT_UNAVAILABLE && m->bw.n > 0,
                     "%s measured", m->name);
            continue;
        }
        MW_CHECK(!m->available, "%s", m->name);
        if (!sampled)
            MW_CHECK(strstr(m->reason, "listed as available, but cannot open") != NULL, "%s: %s",
                     m->name, m->reason);
        else
            MW_CHECK(strstr(m->reason, "not validated") != NULL, "%s: %s", m->name, m->reason);
        printf("%-12s %s\n", m->name, m->reason);
    }
    for (unsigned i = 0; i < v->profile.n_methods; i++)
        if (strcmp(v->profile.methods[i].name, "probe_lat") &&
            !strcmp(v->profile.methods[i].verdict, "unavailable"))
            MW_CHECK(v->profile.methods[i].reason[0] != 0, "%s has a reason",
                     v->profile.methods[i].name);
    int any_bw = 0;
    for (unsigned i = 0; i < v->nmethods; i++)
        any_bw |= !v->method[i].latency && v->method[i].available;
    if (!any_bw)
        MW_CHECK_STR(v->profile.bw_method, "");
    MW_CHECK(strstr(v->hw_note, "uncore_imc") != NULL, "hardware note: %s", v->hw_note);
    free(v);
    return mw_test_done();
}
