/*
 * tests/probe/test_probe_pfm.c: with pfm_check on, a method that reads core
 * events is available only where this libpfm4 encodes them as the catalogue
 * expects. Run twice by ctest on the Skylake-SP fixture tree:
 *   - plain: libpfm4 does not detect a Skylake-SP here, so ocr_dram, lmrl,
 *     l1_miss_lat and pebs_lat must be unavailable with MW_ERR_PFM and say so;
 *     imc_cas (uncore, sysfs only) stays available;
 *   - with LIBPFM_FORCE_PMU=skx: the same methods encode and are available.
 */
#include "mw_test.h"

#include <memwatch/probe.h>

int main(void)
{
    const char *forced = getenv("LIBPFM_FORCE_PMU");
    int want_avail = forced && !strcmp(forced, "skx");
    mw_probe_opts o = {MW_FIXTURES "/sysfs/skx", MW_FIXTURES "/proc/skx", "/nonexistent/dev", 1};
    mw_probe *p = NULL;
    int rc = mw_probe_run(&o, &p);
    MW_CHECK(rc == 0 && p, "probe skx: %s", mw_strerror(rc));
    if (!p)
        return mw_test_done();
    static const char *const core_methods[] = {"ocr_dram", "lmrl", "l1_miss_lat", "pebs_lat"};
    for (size_t i = 0; i < sizeof core_methods / sizeof core_methods[0]; i++) {
        const mw_method_avail *a = mw_probe_method(p, core_methods[i]);
        MW_CHECK(a != NULL, "%s missing from the skx catalogue", core_methods[i]);
        if (!a)
            continue;
        if (want_avail) {
            MW_CHECK(a->available && a->err == 0, "%s with libpfm4 forced to skx: %s",
                     a->name, a->reason);
        } else {
            MW_CHECK(!a->available && a->err == MW_ERR_PFM, "%s: available %d err %d (%s)",
                     a->name, a->available, a->err, a->reason);
            MW_CHECK(strstr(a->reason, "did not detect") && strstr(a->reason, "skx::"),
                     "%s: reason names the libpfm4 model and event: %s", a->name, a->reason);
        }
    }
    const mw_method_avail *imc = mw_probe_method(p, "imc_cas");
    MW_CHECK(imc && imc->available, "imc_cas needs no libpfm4: %s", imc ? imc->reason : "missing");
    mw_probe_free(p);
    return mw_test_done();
}
