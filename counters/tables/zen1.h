/* counters/tables/zen1.h: AMD Zen 1 and Zen+ (family 0x17 models 0x00-0x2F and
 * 0x50-0x5F, the kernel's X86_FEATURE_ZEN1 ranges in arch/x86/kernel/cpu/amd.c
 * bsp_init_amd: Naples and Summit Ridge 0x01, Pinnacle Ridge 0x08, Raven Ridge
 * 0x11, Picasso 0x18, Dali 0x20, Fenghuang 0x50); libpfm4 PMU
 * "amd64_fam17h_zen1".
 *
 * Zen 1 reads the same two things as Zen 2, and no core event:
 *  - amd_df: the kernel's pmu-events x86/amdzen1/data-fabric.json (added with
 *    amdzen2's in Linux 5.10, "perf vendor events amd: Add recommended events",
 *    which cites the family 17h model 31h PPR, AMD 55803) lists
 *    dram_channel_data_controller_0..7 with amdzen2's codes (event 0x07 +
 *    0x40*N, umask 0x38); the kernel exposes amd_df with the format
 *    event:0-7,32-35 on every family from 0x17 (arch/x86/events/amd/uncore.c),
 *    so the configs are Zen 2's.
 *  - ibs_lat: IBS op sampling counting dispatched ops (IBS_OP_CTL
 *    MSRC001_1033 IbsOpCntCtl, bit 19: AMD PPR for family 17h models 00h-0Fh,
 *    document 54945; the kernel's ibs_op format cnt_ctl, config:19); no
 *    L3-miss-only filter (IbsOpL3MissOnly is Zen 4's).
 *  - no lmrl: libpfm4 4.13's amd64_fam17h_zen1 table (lib/events/
 *    amd64_events_fam17h_zen1.h) has no ALLOC_MAB_COUNT (0x5f), only
 *    MAB_ALLOCATION_BY_PIPE (0x41), so no MAB occupancy; no offcore response.
 * libpfm4 4.13 detects family 0x17 models below 0x30 as amd64_fam17h_zen1 and
 * 0x50-0x5F as amd64_fam17h_zen2 (pfmlib_amd64.c); with no core event here
 * that changes nothing. */
#ifndef MW_TABLES_ZEN1_H
#define MW_TABLES_ZEN1_H
#include "amd_common.h"

MW_DF_EVENTS_FROM(zen1, "amdzen1");
MW_IBS_EVENTS(zen1, "cnt_ctl=1", 0x80000ull,
              MW_IBS_SRC "PMU_FORMAT_ATTR(cnt_ctl, \"config:19\") (shown when IBS_CAPS_OPCNT); "
                         "AMD PPR 17h models 00h-0Fh (54945) IBS_OP_CTL MSRC001_1033 "
                         "IbsOpCntCtl bit 19");
static const mw_method_def mw_tab_zen1[] = {
    MW_M_AMD_DF(zen1),
    MW_M_IBS(zen1, MW_N_IBS "; Zen 1 has no L3-miss-only filter, so most samples hit caches"),
    MW_METHOD_PROBE_LAT,
};
MW_UARCH(zen1, MW_UARCH_ZEN1, "AMD Zen 1 / Zen+", "amd64_fam17h_zen1", NULL,
         "no documented prefetcher control MSR (docs/sources.md §2)",
         MW_AMD_MODELS(0x17, 0x00, 0x2F),  /* Naples 0x01 ... Dali 0x20 */
         MW_AMD_MODELS(0x17, 0x50, 0x5F)); /* Fenghuang */
#endif
