/* counters/tables/amd_common.h: rows shared by the AMD Zen tables. */
#ifndef MW_TABLES_AMD_COMMON_H
#define MW_TABLES_AMD_COMMON_H
#include "common.h"

/*
 * Data-fabric DRAM channel events of Zen 1-3: dram_channel_data_controller_N is
 * event 0x07 + 0x40*N with umask 0x38 (64-byte beats, reads and writes). The
 * kernel's amd_df format puts event bits 0-7 in config 0-7 and bits 8-11 in
 * config 32-35, umask in config 8-15, hence the config values below.
 * Sources: kernel tools/perf/pmu-events/arch/x86/amdzen2/data-fabric.json
 * (dram_channel_data_controller_0..7; amdzen1/data-fabric.json lists the same
 * codes), arch/x86/events/amd/uncore.c (amd_df format "event:0-7,32-35",
 * "umask:8-15" on every family from 0x17 without PerfMonV2), docs/sources.md §1.
 * MW_DF_EVENTS_FROM(u, dir) cites the pmu-events directory dir ("amdzen1");
 * MW_DF_EVENTS(u) cites amdzen2's.
 */
#define MW_DF_SRC_IN(dir)                                                                          \
    "kernel pmu-events x86/" dir " data-fabric.json dram_channel_data_controller_"
#define MW_DF_SRC MW_DF_SRC_IN("amdzen2")
#define MW_DF_CH(src, n, terms, cfg)                                                               \
    MW_SYSFS("ch" #n, "amd_df", terms, cfg, 0, 64.0,                                               \
             src #n "; amd_df format event:0-7,32-35 umask:8-15 (arch/x86/events/amd/uncore.c)")
#define MW_DF_CHANNELS(src)                                                                        \
    MW_DF_CH(src, 0, "event=0x07,umask=0x38", 0x3807ull),                                          \
        MW_DF_CH(src, 1, "event=0x47,umask=0x38", 0x3847ull),                                      \
        MW_DF_CH(src, 2, "event=0x87,umask=0x38", 0x3887ull),                                      \
        MW_DF_CH(src, 3, "event=0xc7,umask=0x38", 0x38c7ull),                                      \
        MW_DF_CH(src, 4, "event=0x107,umask=0x38", 0x100003807ull),                                \
        MW_DF_CH(src, 5, "event=0x147,umask=0x38", 0x100003847ull),                                \
        MW_DF_CH(src, 6, "event=0x187,umask=0x38", 0x100003887ull),                                \
        MW_DF_CH(src, 7, "event=0x1c7,umask=0x38", 0x1000038c7ull)
#define MW_DF_EVENTS_FROM(u, dir)                                                                  \
    static const mw_event_spec mw_##u##_df[] = {MW_DF_CHANNELS(MW_DF_SRC_IN(dir))}
#define MW_DF_EVENTS(u) MW_DF_EVENTS_FROM(u, "amdzen2")
#define MW_F_DF                                                                                    \
    "(ch0 + ch1 + ch2 + ch3 + ch4 + ch5 + ch6 + ch7) * 64 bytes (DRAM reads and writes of "        \
    "the socket)"
#define MW_N_DF                                                                                    \
    "system-wide data-fabric counters; users report Zen 2 DF counts about 3x high and NPS "        \
    "modes off by 2x, so calibrate before trusting it; channels a part lacks count 0"

/* Zen 4 and later: one amd_umc_N PMU per memory controller, event 0x0a
 * (umc_cas_cmd) with rdwrmask 1 (reads) or 2 (writes); kernel format
 * "event:0-7", "rdwrmask:8-9". */
#define MW_UMC_EVENTS(u)                                                                           \
    static const mw_event_spec mw_##u##_umc[] = {                                                  \
        MW_SYSFS("rd", "amd_umc_*", "event=0x0a,rdwrmask=0x1", 0x010aull, 0, 64.0,                 \
                 "kernel pmu-events x86/amd" #u " umc_cas_cmd.rd (EventCode 0x0a, RdWrMask 1); "   \
                 "arch/x86/events/amd/uncore.c amd_umc format rdwrmask:8-9"),                      \
        MW_SYSFS("wr", "amd_umc_*", "event=0x0a,rdwrmask=0x2", 0x020aull, 0, 64.0,                 \
                 "kernel pmu-events x86/amd" #u " umc_cas_cmd.wr (EventCode 0x0a, RdWrMask 2)")}
#define MW_F_UMC "(rd + wr) * 64 bytes, summed over every amd_umc PMU"
#define MW_N_UMC                                                                                   \
    "system-wide memory-controller CAS commands (every process, prefetches included); "            \
    "needs Linux 6.9+ amd_umc PMU and system-wide counting"

/* IBS op sampling: cnt_ctl=1 counts dispatched ops (IBS_OP_CTL bit 19) rather than
 * cycles; l3missonly (bit 16, Zen 4+) keeps only ops that missed L3. */
#define MW_F_IBS                                                                                   \
    "mean DcMissLat (sample weight) of the sampled ops whose data_src says DRAM, in core "         \
    "cycles"
#define MW_N_IBS                                                                                   \
    "samples one op in N; DcMissLat is the miss latency from allocation to fill; kernels "         \
    "before the IBS software filter (ibs_op format swfilt, config2:0) cannot exclude the "         \
    "kernel, so it needs perf_event_paranoid <= 1"

#define MW_F_AMD_LMRL "pending / mab_alloc core cycles per L1-missing load (MAB occupancy)"
#define MW_N_AMD_LMRL                                                                              \
    "AMD analogue of Intel's load-miss real latency (docs/sources.md §1: to be validated); "      \
    "ALLOC_MAB_COUNT is the MAB occupancy summed per cycle"

/* The AMD methods by name (common.h's MW_M_ rows: the events are mw_<uarch>_df,
 * _umc, _lmrl, _ibs). */
#define MW_M_AMD_DF(u)                                                                             \
    MW_METHOD("amd_df", MW_Q_DRAM_BYTES, MW_SCOPE_SYSTEM, MW_NEED_UNCORE | MW_NEED_SYSTEMWIDE,     \
              MW_F_DF, MW_N_DF, mw_##u##_df)
#define MW_M_AMD_UMC(u)                                                                            \
    MW_METHOD("amd_umc", MW_Q_DRAM_BYTES, MW_SCOPE_SYSTEM, MW_NEED_UNCORE | MW_NEED_SYSTEMWIDE,    \
              MW_F_UMC, MW_N_UMC, mw_##u##_umc)
#define MW_M_IBS(u, n_)                                                                            \
    MW_METHOD("ibs_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_IBS, MW_F_IBS, n_, mw_##u##_ibs)

/* lmrl's events on Zen 3 and later (libpfm4 PMU pfx, a token): ALLOC_MAB_COUNT
 * 0x5f and MAB_ALLOCATION_BY_TYPE.LS, event 0x41 with umask um. */
#define MW_AMD_LMRL_EVENTS(u, pfx, um, pending_src, alloc_src)                                     \
    static const mw_event_spec mw_##u##_lmrl[] = {                                                 \
        MW_CORE("pending", "cpu", #pfx "::ALLOC_MAB_COUNT", 0x5f, 0, 1.0, pending_src),            \
        MW_CORE("mab_alloc", "cpu", #pfx "::MAB_ALLOCATION_BY_TYPE:LS", ((um) << 8) | 0x41, 0,     \
                1.0, alloc_src)}
/* ibs_lat's one event, IBS op sampling: counting dispatched ops (cnt_ctl=1,
 * config bit 19) on Zen 1, 2 and 3, whose PPR (ppr: "19h") defines the bit; only
 * the ops that missed L3 as well (l3missonly=1, bit 16) from Zen 4 on, cited as
 * the kernel's ibs_op format and more. */
#define MW_IBS_SRC "kernel arch/x86/events/amd/ibs.c "
#define MW_IBS_EVENTS(u, terms, cfg, src)                                                          \
    static const mw_event_spec mw_##u##_ibs[] = {MW_SYSFS("ops", "ibs_op", terms, cfg, 0, 1.0, src)}
#define MW_IBS_OPS_EVENTS(u, ppr)                                                                  \
    MW_IBS_EVENTS(u, "cnt_ctl=1", 0x80000ull,                                                      \
                  MW_IBS_SRC "PMU_FORMAT_ATTR(cnt_ctl, \"config:19\") (shown when "                \
                             "IBS_CAPS_OPCNT); AMD PPR " ppr " IBS_OP_CTL IbsOpCntCtl bit 19")
#define MW_IBS_L3MISS_EVENTS(u, more)                                                              \
    MW_IBS_EVENTS(u, "cnt_ctl=1,l3missonly=1", 0x90000ull,                                         \
                  MW_IBS_SRC "ibs_op format cnt_ctl config:19" more)

/* The methods of Zen 3 and later: the DRAM bandwidth method's row (dram), lmrl
 * and ibs_lat with what their notes add, the probe. */
#define MW_METHODS_ZEN(u, dram, lmrl_more, ibs_more)                                               \
    dram, MW_M_LMRL(u, MW_F_AMD_LMRL, MW_N_AMD_LMRL lmrl_more), MW_M_IBS(u, MW_N_IBS ibs_more),    \
        MW_METHOD_PROBE_LAT

#endif
