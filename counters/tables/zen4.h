/* counters/tables/zen4.h: AMD Zen 4 (family 0x19 models 0x10-0x1F, 0x60-0xAF);
 * libpfm4 PMU "amd64_fam19h_zen4". */
#ifndef MW_TABLES_ZEN4_H
#define MW_TABLES_ZEN4_H
#include "amd_common.h"

static const mw_event_spec mw_zen4_umc[] = {MW_UMC_EVENTS("amdzen4")};
static const mw_event_spec mw_zen4_lmrl[] = {
    MW_CORE("pending", "cpu", "amd64_fam19h_zen4::ALLOC_MAB_COUNT", 0x5f, 0, 1.0,
            "libpfm4 lib/events/amd64_events_fam19h_zen4.h ALLOC_MAB_COUNT 0x5f; "
            "docs/sources.md §1 ls_alloc_mab_count (0x5f)"),
    MW_CORE("mab_alloc", "cpu", "amd64_fam19h_zen4::MAB_ALLOCATION_BY_TYPE:LS", 0x3f41, 0, 1.0,
            "libpfm4 amd64_events_fam19h_zen4.h MAB_ALLOCATION_BY_TYPE.LS 0x41/0x3f; "
            "docs/sources.md §1 ls_mab_alloc.load_store_allocations"),
};
static const mw_event_spec mw_zen4_ibs[] = {
    MW_SYSFS("ops", "ibs_op", "cnt_ctl=1,l3missonly=1", 0x90000ull, 0, 1.0,
             "kernel arch/x86/events/amd/ibs.c ibs_op format cnt_ctl config:19 and "
             "l3missonly config:16 (Zen 4 IbsOpL3MissOnly)"),
};
static const mw_method_def mw_tab_zen4[] = {
    MW_METHOD("amd_umc", MW_Q_DRAM_BYTES, MW_SCOPE_SYSTEM, MW_NEED_UNCORE | MW_NEED_SYSTEMWIDE,
              MW_F_UMC, MW_N_UMC, mw_zen4_umc),
    MW_METHOD("lmrl", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_AMD_LMRL, MW_N_AMD_LMRL,
              mw_zen4_lmrl),
    MW_METHOD("ibs_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_IBS, MW_F_IBS,
              MW_N_IBS "; l3missonly keeps only L3-missing ops", mw_zen4_ibs),
    MW_METHOD_PROBE_LAT,
};
static const mw_cpu_model mw_models_zen4[] = {
    {"AuthenticAMD", 0x19, 0x10, 0x1F}, /* Genoa 0x11, Bergamo... */
    {"AuthenticAMD", 0x19, 0x60, 0xAF}, /* Raphael 0x61, Phoenix 0x74, Siena 0xA0 */
};
static const mw_uarch_desc mw_desc_zen4 =
    MW_UARCH_DESC(MW_UARCH_ZEN4, "zen4", "AMD Zen 4", "amd64_fam19h_zen4",
                  mw_models_zen4, mw_tab_zen4, &mw_pf_amd, NULL);
#endif
