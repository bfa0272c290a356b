/* counters/tables/skl.h: Intel client Skylake-class cores with the client IMC
 * (Skylake 0x4E/0x5E, Kaby/Coffee/Whiskey/Amber Lake 0x8E/0x9E, Comet Lake
 * 0xA5/0xA6); libpfm4 PMU "skl". */
#ifndef MW_TABLES_SKL_H
#define MW_TABLES_SKL_H
#include "common.h"

/* The client IMC exposes two free-running counters as one "uncore_imc" PMU with
 * the aliases data_reads (event=0x01) and data_writes (event=0x02), 64 bytes each
 * (sysfs .scale 6.103515625e-5 MiB). */
MW_IMC_CLIENT_EVENTS(skl, "kernel arch/x86/events/intel/uncore_snb.c snb_uncore_imc_events "
                          "data_reads event=0x01, scale 6.103515625e-5 MiB");
/* libpfm4 4.13's skl table names only demand request bits for offcore response,
 * so this counts demand data reads and RFOs that missed L3 (on a client part an
 * L3 miss is a DRAM access). */
MW_OCR_EVENTS(skl, "skl::OFFCORE_RESPONSE_0:DMND_DATA_RD:DMND_RFO:L3_MISS:SNP_ANY", 0x01b7,
              0x3F84000003ull,
              "libpfm4 lib/events/intel_skl_events.h OFFCORE_RESPONSE_0 DMND_DATA_RD|DMND_RFO "
              "(0x3), L3_MISS (bit 26), SNP_ANY (0x3F80000000)");
MW_INTEL_CORE_EVENTS(skl, MEM_LOAD_RETIRED, FB_HIT, "libpfm4 intel_skl_events.h ",
                     "; kernel pmu-events skylake", "");
static const mw_method_def mw_tab_skl[] = {MW_METHODS_INTEL(
    skl, MW_F_IMC_FREE, MW_N_IMC_FREE, "rd * 64 bytes (demand data reads and RFOs that missed L3)",
    MW_N_OCR "; demand requests only (no prefetches at all)", MW_F_LMRL, MW_N_LMRL, MW_F_PEBS)};
MW_UARCH(skl, MW_UARCH_SKL, "Intel client Skylake..Comet Lake", "skl", &mw_pf_intel, NULL,
         MW_INTEL_MODEL(0x4E),  /* SKYLAKE_L */
         MW_INTEL_MODEL(0x5E),  /* SKYLAKE */
         MW_INTEL_MODEL(0x8E),  /* KABYLAKE_L (also Whiskey/Amber/Coffee-U) */
         MW_INTEL_MODEL(0x9E),  /* KABYLAKE (also Coffee Lake) */
         MW_INTEL_MODEL(0xA5),  /* COMETLAKE */
         MW_INTEL_MODEL(0xA6)); /* COMETLAKE_L */
#endif
