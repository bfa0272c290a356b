/* counters/tables/zen5.h: AMD Zen 5 (family 0x1A models 0x00-0x4F, 0x60-0x7F).
 * libpfm4 names this PMU "amd64_fam1ah_zen5" after release 4.13 (upstream git); Debian 12's
 * 4.13 has no Zen 5 model, so the core rows are reported unavailable there. */
#ifndef MW_TABLES_ZEN5_H
#define MW_TABLES_ZEN5_H
#include "amd_common.h"

MW_UMC_EVENTS(zen5);
/*
 * DISAGREEMENT: ls_mab_alloc.load_store_allocations first shipped in the kernel's
 * pmu-events x86/amdzen5 with UMask 0x3f (copied from Zen 4); a later kernel fix
 * changed it to 0x07, which is what libpfm4's amd64_events_fam1ah_zen5.h
 * (MAB_ALLOCATION_BY_TYPE.LS) says. memwatch uses 0x07 (config 0x0741).
 */
MW_AMD_LMRL_EVENTS(zen5, amd64_fam1ah_zen5, 0x07,
                   "libpfm4 (after 4.13) lib/events/amd64_events_fam1ah_zen5.h ALLOC_MAB_COUNT "
                   "0x5f; kernel pmu-events x86/amdzen5 ls_alloc_mab_count",
                   "libpfm4 (after 4.13) amd64_events_fam1ah_zen5.h MAB_ALLOCATION_BY_TYPE.LS "
                   "0x41/0x07; kernel amdzen5 load-store.json after its fix (was 0x3f)");
MW_IBS_L3MISS_EVENTS(zen5, ", l3missonly config:16; Zen 5 also offers a hardware ldlat "
                           "filter (ibs_op/caps/ldlat)");
static const mw_method_def mw_tab_zen5[] = {
    MW_METHODS_ZEN(zen5, MW_M_AMD_UMC(zen5), "; Zen 5 encodings not checkable with libpfm4 4.13",
                   "; l3missonly keeps only L3-missing ops")};
MW_UARCH(zen5, MW_UARCH_ZEN5, "AMD Zen 5", "amd64_fam1ah_zen5", &mw_pf_amd, NULL,
         MW_AMD_MODELS(0x1A, 0x00, 0x4F),  /* Turin 0x02, Turin dense 0x11 */
         MW_AMD_MODELS(0x1A, 0x60, 0x7F)); /* Strix/Granite Ridge */
#endif
