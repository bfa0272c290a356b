/* counters/tables/bdw_ep.h: Intel Broadwell-EP (family 6 models 0x4F, 0x56);
 * libpfm4 PMU "bdw_ep". */
#ifndef MW_TABLES_BDW_EP_H
#define MW_TABLES_BDW_EP_H
#include "common.h"

MW_IMC_CAS_EVENTS(bdw_ep, 0x04, 0x03, 0x0c, "hswep_uncore_imc_events (shared by bdx)",
                  "; Intel Xeon E5 v4 uncore guide UNC_M_CAS_COUNT.RD", "; UNC_M_CAS_COUNT.WR");
/* All reads (0x7F7) that missed L3 and hit local DRAM. Broadwell moved the local
 * DRAM response bit from 22 (Haswell) to 26, hence 0x6040007F7 vs 0x6004007F7. */
MW_OCR_EVENTS(bdw_ep,
              "bdw_ep::OFFCORE_RESPONSE_0:DMND_DATA_RD:DMND_RFO:DMND_CODE_RD:PF_DATA_RD:PF_RFO:"
              "PF_IFETCH:PF_LLC_DATA_RD:PF_LLC_RFO:PF_LLC_IFETCH:BUS_LOCKS:LLC_MISS_LOCAL:"
              "SNP_MISS:SNP_NO_FWD",
              0x01b7, 0x6040007F7ull,
              "libpfm4 lib/events/intel_bdw_events.h OFFCORE_RESPONSE_0 (bdw_ep); kernel "
              "pmu-events x86/broadwellx OFFCORE_RESPONSE.ALL_READS.LLC_MISS.LOCAL_DRAM "
              "MSRValue 0x6040007f7");
MW_INTEL_CORE_EVENTS(bdw_ep, MEM_LOAD_UOPS_RETIRED, HIT_LFB, "libpfm4 intel_bdw_events.h ",
                     " ; kernel pmu-events broadwellx", " (MSR 0x3F6)");
static const mw_method_def mw_tab_bdw_ep[] = {MW_METHODS_INTEL_SERVER(bdw_ep)};
MW_UARCH(bdw_ep, MW_UARCH_BDW_EP, "Intel Broadwell-EP", "bdw_ep", &mw_pf_intel, NULL,
         MW_INTEL_MODEL(0x4F),  /* BROADWELL_X */
         MW_INTEL_MODEL(0x56)); /* BROADWELL_D (Xeon D-1500) */
#endif
