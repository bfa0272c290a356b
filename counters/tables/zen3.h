/* counters/tables/zen3.h: AMD Zen 3 (family 0x19 models 0x00-0x0F, 0x20-0x5F);
 * libpfm4 PMU "amd64_fam19h_zen3". */
#ifndef MW_TABLES_ZEN3_H
#define MW_TABLES_ZEN3_H
#include "amd_common.h"

/* Zen 3 keeps the Zen 2 data-fabric DRAM channel events (docs/sources.md §1). */
static const mw_event_spec mw_zen3_df[] = {MW_DF_CHANNELS};
static const mw_event_spec mw_zen3_lmrl[] = {
    MW_CORE("pending", "cpu", "amd64_fam19h_zen3::ALLOC_MAB_COUNT", 0x5f, 0, 1.0,
            "libpfm4 lib/events/amd64_events_fam19h_zen3.h ALLOC_MAB_COUNT 0x5f; kernel "
            "pmu-events x86/amdzen3 ls_alloc_mab_count"),
    MW_CORE("mab_alloc", "cpu", "amd64_fam19h_zen3::MAB_ALLOCATION_BY_TYPE:LS", 0x3f41, 0, 1.0,
            "libpfm4 amd64_events_fam19h_zen3.h MAB_ALLOCATION_BY_TYPE.LS 0x41/0x3f; kernel "
            "pmu-events amdzen3 ls_mab_alloc.load_store_allocations"),
};
static const mw_event_spec mw_zen3_ibs[] = {
    MW_SYSFS("ops", "ibs_op", "cnt_ctl=1", 0x80000ull, 0, 1.0,
             "kernel arch/x86/events/amd/ibs.c PMU_FORMAT_ATTR(cnt_ctl, \"config:19\") (shown "
             "when IBS_CAPS_OPCNT); AMD PPR 19h IBS_OP_CTL IbsOpCntCtl bit 19"),
};
static const mw_method_def mw_tab_zen3[] = {
    MW_METHOD("amd_df", MW_Q_DRAM_BYTES, MW_SCOPE_SYSTEM, MW_NEED_UNCORE | MW_NEED_SYSTEMWIDE,
              MW_F_DF, MW_N_DF, mw_zen3_df),
    MW_METHOD("lmrl", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_AMD_LMRL, MW_N_AMD_LMRL,
              mw_zen3_lmrl),
    MW_METHOD("ibs_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_IBS, MW_F_IBS,
              MW_N_IBS "; Zen 3 has no L3-miss-only filter", mw_zen3_ibs),
    MW_METHOD_PROBE_LAT,
};
static const mw_cpu_model mw_models_zen3[] = {
    {"AuthenticAMD", 0x19, 0x00, 0x0F}, /* Milan 0x01 */
    {"AuthenticAMD", 0x19, 0x20, 0x5F}, /* Vermeer 0x21, Cezanne 0x50 */
};
static const mw_uarch_desc mw_desc_zen3 =
    MW_UARCH_DESC(MW_UARCH_ZEN3, "zen3", "AMD Zen 3", "amd64_fam19h_zen3",
                  mw_models_zen3, mw_tab_zen3, &mw_pf_amd, NULL);
#endif
