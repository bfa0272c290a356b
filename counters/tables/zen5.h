/* counters/tables/zen5.h: AMD Zen 5 (family 0x1A models 0x00-0x4F, 0x60-0x7F).
 * libpfm4 names this PMU "amd64_fam1ah_zen5" after release 4.13 (upstream git); Debian 12's
 * 4.13 has no Zen 5 model, so the core rows are reported unavailable there. */
#ifndef MW_TABLES_ZEN5_H
#define MW_TABLES_ZEN5_H
#include "amd_common.h"

static const mw_event_spec mw_zen5_umc[] = {MW_UMC_EVENTS("amdzen5")};
/*
 * DISAGREEMENT: ls_mab_alloc.load_store_allocations first shipped in the kernel's
 * pmu-events x86/amdzen5 with UMask 0x3f (copied from Zen 4); a later kernel fix
 * changed it to 0x07, which is what libpfm4's amd64_events_fam1ah_zen5.h
 * (MAB_ALLOCATION_BY_TYPE.LS) says. memwatch uses 0x07 (config 0x0741).
 */
static const mw_event_spec mw_zen5_lmrl[] = {
    MW_CORE("pending", "cpu", "amd64_fam1ah_zen5::ALLOC_MAB_COUNT", 0x5f, 0, 1.0,
            "libpfm4 (after 4.13) lib/events/amd64_events_fam1ah_zen5.h ALLOC_MAB_COUNT "
            "0x5f; kernel pmu-events x86/amdzen5 ls_alloc_mab_count"),
    MW_CORE("mab_alloc", "cpu", "amd64_fam1ah_zen5::MAB_ALLOCATION_BY_TYPE:LS", 0x0741, 0, 1.0,
            "libpfm4 (after 4.13) amd64_events_fam1ah_zen5.h MAB_ALLOCATION_BY_TYPE.LS "
            "0x41/0x07; kernel amdzen5 load-store.json after its fix (was 0x3f)"),
};
static const mw_event_spec mw_zen5_ibs[] = {
    MW_SYSFS("ops", "ibs_op", "cnt_ctl=1,l3missonly=1", 0x90000ull, 0, 1.0,
             "kernel arch/x86/events/amd/ibs.c ibs_op format cnt_ctl config:19, l3missonly "
             "config:16; Zen 5 also offers a hardware ldlat filter (ibs_op/caps/ldlat)"),
};
static const mw_method_def mw_tab_zen5[] = {
    MW_METHOD("amd_umc", MW_Q_DRAM_BYTES, MW_SCOPE_SYSTEM, MW_NEED_UNCORE | MW_NEED_SYSTEMWIDE,
              MW_F_UMC, MW_N_UMC, mw_zen5_umc),
    MW_METHOD("lmrl", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_AMD_LMRL,
              MW_N_AMD_LMRL "; Zen 5 encodings not checkable with libpfm4 4.13", mw_zen5_lmrl),
    MW_METHOD("ibs_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_IBS, MW_F_IBS,
              MW_N_IBS "; l3missonly keeps only L3-missing ops", mw_zen5_ibs),
    MW_METHOD_PROBE_LAT,
};
static const mw_cpu_model mw_models_zen5[] = {
    {"AuthenticAMD", 0x1A, 0x00, 0x4F}, /* Turin 0x02, Turin dense 0x11 */
    {"AuthenticAMD", 0x1A, 0x60, 0x7F}, /* Strix/Granite Ridge */
};
static const mw_uarch_desc mw_desc_zen5 =
    MW_UARCH_DESC(MW_UARCH_ZEN5, "zen5", "AMD Zen 5", "amd64_fam1ah_zen5",
                  mw_models_zen5, mw_tab_zen5, &mw_pf_amd, NULL);
#endif
