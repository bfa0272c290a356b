/* counters/tables/zen2.h: AMD Zen 2 (family 0x17 models 0x30-0x4F, 0x60-0x7F,
 * 0x90-0x91, 0xA0-0xAF); libpfm4 PMU "amd64_fam17h_zen2". Zen 2 has no MAB
 * occupancy event (libpfm4 4.13's zen2 table and the Zen 2 PPR define no
 * ALLOC_MAB_COUNT), so lmrl is absent; it has no offcore response either. */
#ifndef MW_TABLES_ZEN2_H
#define MW_TABLES_ZEN2_H
#include "amd_common.h"

static const mw_event_spec mw_zen2_df[] = {MW_DF_CHANNELS};
static const mw_event_spec mw_zen2_ibs[] = {
    MW_SYSFS("ops", "ibs_op", "cnt_ctl=1", 0x80000ull, 0, 1.0,
             "kernel arch/x86/events/amd/ibs.c PMU_FORMAT_ATTR(cnt_ctl, \"config:19\") (shown "
             "when IBS_CAPS_OPCNT); AMD PPR 17h IBS_OP_CTL IbsOpCntCtl bit 19"),
};
static const mw_method_def mw_tab_zen2[] = {
    MW_METHOD("amd_df", MW_Q_DRAM_BYTES, MW_SCOPE_SYSTEM, MW_NEED_UNCORE | MW_NEED_SYSTEMWIDE,
              MW_F_DF, MW_N_DF, mw_zen2_df),
    MW_METHOD("ibs_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_IBS, MW_F_IBS,
              MW_N_IBS "; Zen 2 has no L3-miss-only filter, so most samples hit caches",
              mw_zen2_ibs),
    MW_METHOD_PROBE_LAT,
};
static const mw_cpu_model mw_models_zen2[] = {
    {"AuthenticAMD", 0x17, 0x30, 0x4F}, /* Rome 0x31, Renoir..0x4x */
    {"AuthenticAMD", 0x17, 0x60, 0x7F}, /* Renoir/Lucienne 0x60, Matisse 0x71 */
    {"AuthenticAMD", 0x17, 0x90, 0x91}, /* Van Gogh */
    {"AuthenticAMD", 0x17, 0xA0, 0xAF}, /* Mendocino */
};
static const mw_uarch_desc mw_desc_zen2 =
    MW_UARCH_DESC(MW_UARCH_ZEN2, "zen2", "AMD Zen 2", "amd64_fam17h_zen2",
                  mw_models_zen2, mw_tab_zen2, NULL,
                  "no documented prefetcher control MSR (docs/sources.md §2)");
#endif
