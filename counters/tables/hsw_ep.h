/* counters/tables/hsw_ep.h: Intel Haswell-EP (family 6 model 0x3F); libpfm4 PMU "hsw_ep". */
#ifndef MW_TABLES_HSW_EP_H
#define MW_TABLES_HSW_EP_H
#include "common.h"

MW_IMC_CAS_EVENTS(hsw_ep, 0x04, 0x03, 0x0c, "hswep_uncore_imc_events",
                  "; Intel Xeon E5 v3 uncore guide UNC_M_CAS_COUNT.RD", "; UNC_M_CAS_COUNT.WR");
/* All reads (0x7F7: demand data/RFO/code, L2 and L3 prefetches, lock) that missed
 * L3 and hit local DRAM (bit 22) with snoop miss / no forward (bits 33-34). */
MW_OCR_EVENTS(hsw_ep,
              "hsw_ep::OFFCORE_RESPONSE_0:DMND_DATA_RD:DMND_RFO:DMND_CODE_RD:PF_DATA_RD:PF_RFO:"
              "PF_CODE_RD:PF_L3_DATA_RD:PF_L3_RFO:PF_L3_CODE_RD:SPLIT_LOCK_UC_LOCK:L3_MISS_LOCAL:"
              "SNP_MISS:SNP_NO_FWD",
              0x01b7, 0x6004007F7ull,
              "libpfm4 lib/events/intel_hsw_events.h OFFCORE_RESPONSE_0 (hsw_ep); kernel "
              "pmu-events x86/haswellx OFFCORE_RESPONSE.ALL_READS.LLC_MISS.LOCAL_DRAM "
              "MSRValue 0x6004007f7");
MW_INTEL_CORE_EVENTS(hsw_ep, MEM_LOAD_UOPS_RETIRED, HIT_LFB, "libpfm4 intel_hsw_events.h ",
                     " (counter 2 only); kernel pmu-events haswellx", " (MSR 0x3F6)");
static const mw_method_def mw_tab_hsw_ep[] = {MW_METHODS_INTEL(
    hsw_ep, MW_F_IMC_CAS, MW_N_IMC_CAS, MW_F_OCR, MW_N_OCR, MW_F_LMRL,
    MW_N_LMRL "; L1D_PEND_MISS.PENDING runs on counter 2 only on Haswell", MW_F_PEBS)};
MW_UARCH(hsw_ep, MW_UARCH_HSW_EP, "Intel Haswell-EP", "hsw_ep", &mw_pf_intel, NULL,
         MW_INTEL_MODEL(0x3F)); /* HASWELL_X */
#endif
