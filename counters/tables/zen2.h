/* counters/tables/zen2.h: AMD Zen 2 (family 0x17 models 0x30-0x4F, 0x60-0x7F,
 * 0x90-0x91, 0xA0-0xAF); libpfm4 PMU "amd64_fam17h_zen2". Zen 2 has no MAB
 * occupancy event (libpfm4 4.13's zen2 table and the Zen 2 PPR define no
 * ALLOC_MAB_COUNT), so lmrl is absent; it has no offcore response either. */
#ifndef MW_TABLES_ZEN2_H
#define MW_TABLES_ZEN2_H
#include "amd_common.h"

MW_DF_EVENTS(zen2);
MW_IBS_OPS_EVENTS(zen2, "17h");
static const mw_method_def mw_tab_zen2[] = {
    MW_M_AMD_DF(zen2),
    MW_M_IBS(zen2, MW_N_IBS "; Zen 2 has no L3-miss-only filter, so most samples hit caches"),
    MW_METHOD_PROBE_LAT,
};
MW_UARCH(zen2, MW_UARCH_ZEN2, "AMD Zen 2", "amd64_fam17h_zen2", NULL,
         "no documented prefetcher control MSR (docs/sources.md §2)",
         MW_AMD_MODELS(0x17, 0x30, 0x4F),  /* Rome 0x31, Renoir..0x4x */
         MW_AMD_MODELS(0x17, 0x60, 0x7F),  /* Renoir/Lucienne 0x60, Matisse 0x71 */
         MW_AMD_MODELS(0x17, 0x90, 0x91),  /* Van Gogh */
         MW_AMD_MODELS(0x17, 0xA0, 0xAF)); /* Mendocino */
#endif
