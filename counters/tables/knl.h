/* counters/tables/knl.h: Intel Xeon Phi Knights Landing (0x57) and Knights Mill
 * (0x85); libpfm4 PMU "knl" (and "knm", same event list). The Phi cores have no
 * L1D_PEND_MISS and no load-latency PEBS, so lmrl, l1_miss_lat and pebs_lat are
 * absent. */
#ifndef MW_TABLES_KNL_H
#define MW_TABLES_KNL_H
#include "common.h"

/* DDR4 channels only; MCDRAM traffic goes through the EDC PMUs and is not counted. */
MW_IMC_CAS_EVENTS(knl, 0x03, 0x01, 0x02, "knl_uncore_imc_events",
                  "; libpfm4 intel_knl_unc_imc_events.h UNC_M_CAS_COUNT:RD",
                  "; UNC_M_CAS_COUNT:WR");
MW_OCR_EVENTS(knl, "knl::OFFCORE_RESPONSE_0:ANY_READ:DDR", 0x01b7, 0x1818032e7ull,
              "libpfm4 lib/events/intel_knl_events.h OFFCORE_RESPONSE_0 ANY_READ (0x32e7) | "
              "DDR (0x181800000: DDR_NEAR and DDR_FAR)");
static const mw_method_def mw_tab_knl[] = {
    MW_M_IMC_CAS(knl, MW_F_IMC_CAS, MW_N_IMC_CAS "; DDR only, MCDRAM not counted"),
    MW_M_OCR_DRAM(knl, "rd * 64 bytes (reads served by DDR, near or far)",
                  MW_N_OCR "; MCDRAM not counted"),
    MW_METHOD_PROBE_LAT,
};
MW_UARCH(knl, MW_UARCH_KNL, "Intel Knights Landing / Knights Mill", "knl", &mw_pf_knl, NULL,
         MW_INTEL_MODEL(0x57),  /* XEON_PHI_KNL */
         MW_INTEL_MODEL(0x85)); /* XEON_PHI_KNM */
#endif
