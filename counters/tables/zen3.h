/* counters/tables/zen3.h: AMD Zen 3 (family 0x19 models 0x00-0x0F, 0x20-0x5F);
 * libpfm4 PMU "amd64_fam19h_zen3". */
#ifndef MW_TABLES_ZEN3_H
#define MW_TABLES_ZEN3_H
#include "amd_common.h"

/* Zen 3 keeps the Zen 2 data-fabric DRAM channel events (docs/sources.md §1). */
MW_DF_EVENTS(zen3);
MW_AMD_LMRL_EVENTS(zen3, amd64_fam19h_zen3, 0x3f,
                   "libpfm4 lib/events/amd64_events_fam19h_zen3.h ALLOC_MAB_COUNT 0x5f; kernel "
                   "pmu-events x86/amdzen3 ls_alloc_mab_count",
                   "libpfm4 amd64_events_fam19h_zen3.h MAB_ALLOCATION_BY_TYPE.LS 0x41/0x3f; "
                   "kernel pmu-events amdzen3 ls_mab_alloc.load_store_allocations");
MW_IBS_OPS_EVENTS(zen3, "19h");
static const mw_method_def mw_tab_zen3[] = {
    MW_METHODS_ZEN(zen3, MW_M_AMD_DF(zen3), "", "; Zen 3 has no L3-miss-only filter")};
MW_UARCH(zen3, MW_UARCH_ZEN3, "AMD Zen 3", "amd64_fam19h_zen3", &mw_pf_amd, NULL,
         MW_AMD_MODELS(0x19, 0x00, 0x0F),  /* Milan 0x01 */
         MW_AMD_MODELS(0x19, 0x20, 0x5F)); /* Vermeer 0x21, Cezanne 0x50 */
#endif
