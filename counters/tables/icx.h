/* counters/tables/icx.h: Intel Ice Lake-SP / Ice Lake-D (family 6 models 0x6A, 0x6C);
 * libpfm4 PMU "icx". */
#ifndef MW_TABLES_ICX_H
#define MW_TABLES_ICX_H
#include "common.h"

/* Ice Lake-SP changed the CAS umasks: reads 0x0f, writes 0x30 (docs/sources.md §1).
 * DISAGREEMENT (kernel history): Ice Lake-SP support first shipped with the
 * Haswell-EP aliases (cas_count_read = umask 0x03), corrected later to
 * snr_uncore_imc_events (umask 0x0f / 0x30) by the fix of commit 2b3b76b5ec67.
 * memwatch gives raw terms, not the alias, so an unfixed kernel's wrong alias
 * does not matter; libpfm4 intel_icx_unc_imc_events.h agrees (RD = 0x0f). */
MW_IMC_CAS_EVENTS(icx, 0x04, 0x0f, 0x30, "snr_uncore_imc_events",
                  " (used by ICX); kernel pmu-events x86/icelakex UNC_M_CAS_COUNT.RD",
                  "; UNC_M_CAS_COUNT.WR");
MW_OCR_EVENTS(icx, "icx::OCR:READS_TO_CORE_LOCAL_DRAM", 0x01b7, 0x104000477ull,
              "libpfm4 lib/events/intel_icl_events.h (icx) OCR.READS_TO_CORE_LOCAL_DRAM; kernel "
              "pmu-events x86/icelakex OCR.READS_TO_CORE.LOCAL_DRAM MSRValue 0x104000477");
MW_INTEL_CORE_EVENTS(icx, MEM_LOAD_RETIRED, FB_HIT, "libpfm4 intel_icl_events.h (icx) ",
                     "; kernel pmu-events icelakex", "");
static const mw_method_def mw_tab_icx[] = {MW_METHODS_INTEL_SERVER(icx)};
MW_UARCH(icx, MW_UARCH_ICX, "Intel Ice Lake-SP", "icx", &mw_pf_intel, NULL,
         MW_INTEL_MODEL(0x6A),  /* ICELAKE_X */
         MW_INTEL_MODEL(0x6C)); /* ICELAKE_D */
#endif
