/* counters/tables/icl.h: Intel client Ice Lake (family 6 models 0x7D, 0x7E); libpfm4
 * PMU "icl". The kernel drives its IMC with the same client uncore_imc driver as
 * Skylake (data_reads / data_writes). */
#ifndef MW_TABLES_ICL_H
#define MW_TABLES_ICL_H
#include "common.h"

MW_IMC_CLIENT_EVENTS(icl, "kernel arch/x86/events/intel/uncore_snb.c snb_uncore_imc_events "
                          "data_reads (used for Ice Lake client through skl_uncore_pci_init); "
                          "docs/sources.md §1");
/* Ice Lake's OCR events carry a whole response value per umask, so reads and RFOs
 * take the two offcore counters (0xB7 and 0xBB). */
static const mw_event_spec mw_icl_ocr[] = {
    MW_CORE("rd", "cpu", "icl::OCR:DEMAND_DATA_RD_DRAM", 0x01b7, 0x184000001ull, 64.0,
            "libpfm4 lib/events/intel_icl_events.h OCR.DEMAND_DATA_RD_DRAM; kernel "
            "pmu-events x86/icelake OCR.DEMAND_DATA_RD.DRAM MSRValue 0x184000001"),
    MW_CORE("rfo", "cpu", "icl::OFFCORE_RESPONSE_1:DEMAND_RFO_DRAM", 0x01bb, 0x184000002ull, 64.0,
            "libpfm4 intel_icl_events.h OFFCORE_RESPONSE_1 (event 0xBB) DEMAND_RFO_DRAM; "
            "kernel pmu-events x86/icelake OCR.DEMAND_RFO.DRAM MSRValue 0x184000002"),
};
MW_INTEL_CORE_EVENTS(icl, MEM_LOAD_RETIRED, FB_HIT, "libpfm4 intel_icl_events.h ",
                     "; kernel pmu-events icelake", "");
static const mw_method_def mw_tab_icl[] = {MW_METHODS_INTEL(
    icl, MW_F_IMC_FREE, MW_N_IMC_FREE,
    "(rd + rfo) * 64 bytes (demand data reads and RFOs served by DRAM)",
    MW_N_OCR "; demand requests only (no prefetches at all)", MW_F_LMRL, MW_N_LMRL, MW_F_PEBS)};
MW_UARCH(icl, MW_UARCH_ICL, "Intel client Ice Lake", "icl", &mw_pf_intel, NULL,
         MW_INTEL_MODEL(0x7D),  /* ICELAKE */
         MW_INTEL_MODEL(0x7E)); /* ICELAKE_L */
#endif
