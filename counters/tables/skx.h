/* counters/tables/skx.h: Intel Skylake-SP / Cascade Lake-SP / Cooper Lake (family 6
 * model 0x55); libpfm4 PMU "skx" (4.13 has no separate Cascade Lake model). */
#ifndef MW_TABLES_SKX_H
#define MW_TABLES_SKX_H
#include "common.h"

MW_IMC_CAS_EVENTS(skx, 0x04, 0x03, 0x0c, "hswep_uncore_imc_events",
                  " (skx_uncore_imc uses them); Intel Xeon SP uncore guide UNC_M_CAS_COUNT.RD",
                  "; libpfm4 intel_skx_unc_imc_events.h UNC_M_CAS_COUNT.WR");
/*
 * All reads that missed L3 and hit local DRAM, any snoop (0x3F84000000).
 * DISAGREEMENT: the kernel's pmu-events x86/cascadelakex (and skylakex)
 * OCR.ALL_READS.L3_MISS_LOCAL_DRAM.ANY_SNOOP uses MSRValue 0x3F840007F7, whose
 * request bits 6 and 9 (PF_L2_CODE_RD / PF_L3_CODE_RD on Haswell) are not defined
 * for Skylake-SP in libpfm4 lib/events/intel_skl_events.h (skx), so libpfm4 can only
 * express 0x3F840005B7. memwatch uses the libpfm4 value; the two differ by 0x240
 * (reserved request bits; code-read prefetches are not counted). The encoding test
 * checks exactly this difference.
 */
#define MW_SKX_OCR_KERNEL_MSRVALUE 0x3F840007F7ull
MW_OCR_EVENTS(skx,
              "skx::OFFCORE_RESPONSE_0:DMND_DATA_RD:DMND_RFO:DMND_CODE_RD:PF_L2_DATA_RD:PF_L2_RFO:"
              "PF_L3_DATA_RD:PF_L3_RFO:PF_L1D_AND_SW:L3_MISS_LOCAL:SNP_ANY",
              0x01b7, 0x3F840005B7ull,
              "libpfm4 lib/events/intel_skl_events.h (skx) OFFCORE_RESPONSE_0 (request 0x5B7, "
              "L3_MISS_LOCAL bit 26, SNP_ANY); kernel pmu-events x86/cascadelakex "
              "OCR.ALL_READS.L3_MISS_LOCAL_DRAM.ANY_SNOOP says 0x3F840007F7 (see comment)");
MW_INTEL_CORE_EVENTS(skx, MEM_LOAD_RETIRED, FB_HIT, "libpfm4 intel_skl_events.h (skx) ",
                     "; kernel pmu-events skylakex", "");
static const mw_method_def mw_tab_skx[] = {MW_METHODS_INTEL_SERVER(skx)};
MW_UARCH(skx, MW_UARCH_SKX, "Intel Skylake-SP / Cascade Lake-SP", "skx", &mw_pf_intel, NULL,
         MW_INTEL_MODEL(0x55)); /* SKYLAKE_X: SKX, CLX, CPX */
#endif
