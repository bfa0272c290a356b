/* counters/tables/knl.h: Intel Xeon Phi Knights Landing (0x57) and Knights Mill
 * (0x85); libpfm4 PMU "knl" (and "knm", same event list). The Phi cores have no
 * L1D_PEND_MISS and no load-latency PEBS, so lmrl, l1_miss_lat and pebs_lat are
 * absent. */
#ifndef MW_TABLES_KNL_H
#define MW_TABLES_KNL_H
#include "common.h"

/* DDR4 channels only; MCDRAM traffic goes through the EDC PMUs and is not counted. */
static const mw_event_spec mw_knl_imc_cas[] = {
    MW_SYSFS("rd", "uncore_imc_*", "event=0x03,umask=0x01", 0x0103, 0, 64.0,
             "kernel arch/x86/events/intel/uncore_snbep.c knl_uncore_imc_events "
             "cas_count_read; libpfm4 intel_knl_unc_imc_events.h UNC_M_CAS_COUNT:RD"),
    MW_SYSFS("wr", "uncore_imc_*", "event=0x03,umask=0x02", 0x0203, 0, 64.0,
             "kernel uncore_snbep.c knl_uncore_imc_events cas_count_write; "
             "UNC_M_CAS_COUNT:WR"),
};
static const mw_event_spec mw_knl_ocr[] = {
    MW_CORE("rd", "cpu", "knl::OFFCORE_RESPONSE_0:ANY_READ:DDR", 0x01b7, 0x1818032e7ull, 64.0,
            "libpfm4 lib/events/intel_knl_events.h OFFCORE_RESPONSE_0 ANY_READ (0x32e7) | "
            "DDR (0x181800000: DDR_NEAR and DDR_FAR)"),
};
static const mw_method_def mw_tab_knl[] = {
    MW_METHOD("imc_cas", MW_Q_DRAM_BYTES, MW_SCOPE_SYSTEM, MW_NEED_UNCORE | MW_NEED_SYSTEMWIDE,
              MW_F_IMC_CAS, MW_N_IMC_CAS "; DDR only, MCDRAM not counted", mw_knl_imc_cas),
    MW_METHOD("ocr_dram", MW_Q_DRAM_BYTES, MW_SCOPE_THREAD, MW_NEED_CORE_PMU | MW_NEED_OFFCORE,
              "rd * 64 bytes (reads served by DDR, near or far)", MW_N_OCR "; MCDRAM not counted",
              mw_knl_ocr),
    MW_METHOD_PROBE_LAT,
};
static const mw_cpu_model mw_models_knl[] = {
    {"GenuineIntel", 6, 0x57, 0x57}, /* XEON_PHI_KNL */
    {"GenuineIntel", 6, 0x85, 0x85}, /* XEON_PHI_KNM */
};
static const mw_uarch_desc mw_desc_knl =
    MW_UARCH_DESC(MW_UARCH_KNL, "knl", "Intel Knights Landing / Knights Mill", "knl",
                  mw_models_knl, mw_tab_knl, &mw_pf_knl, NULL);
#endif
