/* counters/tables/zen4.h: AMD Zen 4 (family 0x19 models 0x10-0x1F, 0x60-0xAF);
 * libpfm4 PMU "amd64_fam19h_zen4". */
#ifndef MW_TABLES_ZEN4_H
#define MW_TABLES_ZEN4_H
#include "amd_common.h"

MW_UMC_EVENTS(zen4);
MW_AMD_LMRL_EVENTS(zen4, amd64_fam19h_zen4, 0x3f,
                   "libpfm4 lib/events/amd64_events_fam19h_zen4.h ALLOC_MAB_COUNT 0x5f; "
                   "docs/sources.md §1 ls_alloc_mab_count (0x5f)",
                   "libpfm4 amd64_events_fam19h_zen4.h MAB_ALLOCATION_BY_TYPE.LS 0x41/0x3f; "
                   "docs/sources.md §1 ls_mab_alloc.load_store_allocations");
MW_IBS_L3MISS_EVENTS(zen4, " and l3missonly config:16 (Zen 4 IbsOpL3MissOnly)");
static const mw_method_def mw_tab_zen4[] = {
    MW_METHODS_ZEN(zen4, MW_M_AMD_UMC(zen4), "", "; l3missonly keeps only L3-missing ops")};
MW_UARCH(zen4, MW_UARCH_ZEN4, "AMD Zen 4", "amd64_fam19h_zen4", &mw_pf_amd, NULL,
         MW_AMD_MODELS(0x19, 0x10, 0x1F),  /* Genoa 0x11, Bergamo... */
         MW_AMD_MODELS(0x19, 0x60, 0xAF)); /* Raphael 0x61, Phoenix 0x74, Siena 0xA0 */
#endif
