/* counters/tables/spr.h: Intel Sapphire Rapids (family 6 model 0x8F) and Emerald
 * Rapids (0xCF), which share the core and IMC event lists; libpfm4 PMU "spr". */
#ifndef MW_TABLES_SPR_H
#define MW_TABLES_SPR_H
#include "common.h"

/* Sapphire Rapids moved CAS counting to event 0x05: reads umask 0xcf, writes 0xf0. */
MW_IMC_CAS_EVENTS(spr, 0x05, 0xcf, 0xf0, "spr_uncore_imc_events",
                  "; kernel pmu-events x86/sapphirerapids UNC_M_CAS_COUNT.RD",
                  "; UNC_M_CAS_COUNT.WR");
/* Sapphire Rapids moved offcore response to events 0x2A/0x2B (was 0xB7/0xBB). */
MW_OCR_EVENTS(spr, "spr::OCR:READS_TO_CORE_LOCAL_DRAM", 0x012a, 0x104004477ull,
              "libpfm4 lib/events/intel_spr_events.h OCR.READS_TO_CORE_LOCAL_DRAM (event "
              "0x2A); kernel pmu-events x86/sapphirerapids OCR.READS_TO_CORE.LOCAL_DRAM "
              "MSRValue 0x104004477");
#define MW_SPR_SRC "libpfm4 intel_spr_events.h "
static const mw_event_spec mw_spr_lmrl[] = {
    MW_INTEL_PENDING("cpu", spr, MW_SPR_SRC, "; kernel pmu-events sapphirerapids"),
    MW_INTEL_L1_MISS_ANY("cpu", spr, MW_SPR_SRC, "; TMA Load_Miss_Real_Latency for SPR"),
};
MW_INTEL_L1ML_EVENTS(spr, MEM_LOAD_RETIRED, MW_SPR_SRC, "");
/* On Sapphire Rapids the load-latency event must be grouped behind the auxiliary
 * event mem-loads-aux (the kernel refuses it alone); libpfm4 does not know the aux
 * event, so it is taken from the cpu PMU's sysfs alias / raw terms. */
static const mw_event_spec mw_spr_pebs[] = {
    MW_INTEL_AUX("cpu", " (group leader, not sampled)"),
    MW_INTEL_LOADS(spr, MW_SPR_SRC, ""),
};
static const mw_method_def mw_tab_spr[] = {MW_METHODS_INTEL(
    spr, MW_F_IMC_CAS, MW_N_IMC_CAS, MW_F_OCR, MW_N_OCR, MW_F_LMRL_NEW, MW_N_LMRL, MW_F_PEBS_AUX)};
MW_UARCH(spr, MW_UARCH_SPR, "Intel Sapphire Rapids / Emerald Rapids", "spr", &mw_pf_spr, NULL,
         MW_INTEL_MODEL(0x8F),  /* SAPPHIRERAPIDS_X */
         MW_INTEL_MODEL(0xCF)); /* EMERALDRAPIDS_X */
#endif
