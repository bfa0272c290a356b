/*
 * tests/probe/test_catalogue_sysfs.c: two independent sources must agree.
 * Every sysfs event of the method catalogue (counters/tables/, whose expected
 * config values were derived by hand from the kernel's format layouts) is
 * encoded by memwatch's generic sysfs encoder (counters/pmu_parse.c) through the
 * PMUs of a fixture tree with that microarchitecture's layout, and must give
 * exactly the catalogue's config and config1. Each row names the fixture whose
 * kernel layout applies to the microarchitecture.
 */
#include <memwatch/catalogue.h>
#include <memwatch/pmu.h>

#include "mw_test.h"

static const struct row {
    int line;
    mw_uarch u;
    const char *fixture; /* a tree with this uarch's PMU layout */
    int min_events;      /* sysfs events that must have been checked */
} rows[] = {
    {__LINE__, MW_UARCH_HSW_EP, "skx", 2}, /* hswep_uncore_imc: same format and aliases */
    {__LINE__, MW_UARCH_BDW_EP, "skx", 2},
    {__LINE__, MW_UARCH_SKX, "skx", 2},
    {__LINE__, MW_UARCH_ICX, "icx", 2},
    {__LINE__, MW_UARCH_SPR, "spr", 3},    /* imc rd/wr + mem-loads-aux on cpu */
    {__LINE__, MW_UARCH_GNR, "spr", 5},    /* uncore_imc format as SPR; sch0/sch1 raw terms */
    {__LINE__, MW_UARCH_SKL, "skl", 2},
    {__LINE__, MW_UARCH_ICL, "skl", 2},    /* snb_uncore_imc data_reads/data_writes */
    {__LINE__, MW_UARCH_ADL, "adl", 3},
    {__LINE__, MW_UARCH_KNL, "skx", 2},    /* uncore_imc event/umask layout */
    {__LINE__, MW_UARCH_ZEN1, "zen3", 9},  /* amd_df format as Zen 3's; ibs_op cnt_ctl */
    {__LINE__, MW_UARCH_ZEN2, "zen3", 9},  /* 8 amd_df channels + ibs_op */
    {__LINE__, MW_UARCH_ZEN3, "zen3", 9},
    {__LINE__, MW_UARCH_ZEN4, "zen4", 3},  /* amd_umc rd/wr + ibs_op */
    {__LINE__, MW_UARCH_ZEN5, "zen4", 3},
};

static int is_core(const char *pmu)
{
    return !strcmp(pmu, "cpu") || !strcmp(pmu, "cpu_core") || !strcmp(pmu, "cpu_atom");
}

int main(void)
{
    int total = 0;
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        const struct row *w = &rows[r];
        char root[1024];
        snprintf(root, sizeof root, "%s/sysfs/%s", MW_FIXTURES, w->fixture);
        mw_pmu_set *s = NULL;
        MW_CHECK_AT(__FILE__, w->line, mw_pmus_discover(root, &s) == 0, "fixture %s", w->fixture);
        const mw_method_def *defs;
        size_t n;
        MW_CHECK_AT(__FILE__, w->line, mw_catalogue_methods(w->u, &defs, &n) == 0 && n > 0,
                    "catalogue for %s", mw_uarch_name(w->u));
        int checked = 0;
        for (size_t i = 0; s && i < n; i++)
            for (size_t e = 0; e < defs[i].n_events; e++) {
                const mw_event_spec *ev = &defs[i].events[e];
                if (!ev->sysfs)
                    continue;
                const mw_pmu *m[64];
                size_t nm;
                if (is_core(ev->pmu)) {
                    m[0] = mw_pmus_find(s, ev->pmu);
                    if (!m[0])
                        m[0] = mw_pmus_core(s);
                    nm = m[0] ? 1 : 0;
                } else {
                    nm = mw_pmus_match(s, ev->pmu, m, 64);
                }
                MW_CHECK_AT(__FILE__, w->line, nm > 0, "%s/%s/%s: no %s PMU in fixture %s",
                            mw_uarch_name(w->u), defs[i].name, ev->role, ev->pmu, w->fixture);
                for (size_t k = 0; k < nm && k < 64; k++) {
                    mw_pmu_encoding enc;
                    char why[256] = "";
                    int rc = mw_pmu_encode(m[k], ev->sysfs, &enc, why, sizeof why);
                    MW_CHECK_AT(__FILE__, w->line,
                                rc == 0 && enc.config[0] == ev->config &&
                                    enc.config[1] == ev->config1,
                                "%s/%s/%s \"%s\" on %s: rc %d (%s) config 0x%llx config1 0x%llx, "
                                "catalogue says 0x%llx 0x%llx (%s)",
                                mw_uarch_name(w->u), defs[i].name, ev->role, ev->sysfs,
                                m[k]->name, rc, why, (unsigned long long)enc.config[0],
                                (unsigned long long)enc.config[1],
                                (unsigned long long)ev->config, (unsigned long long)ev->config1,
                                ev->source);
                }
                checked++;
            }
        MW_CHECK_AT(__FILE__, w->line, checked >= w->min_events,
                    "%s: %d sysfs events checked, expected at least %d", mw_uarch_name(w->u),
                    checked, w->min_events);
        total += checked;
        mw_pmus_free(s);
    }
    printf("%d catalogue sysfs events agree with the sysfs encoder\n", total);
    return mw_test_done();
}
