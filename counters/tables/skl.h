/* counters/tables/skl.h: Intel client Skylake-class cores with the client IMC
 * (Skylake 0x4E/0x5E, Kaby/Coffee/Whiskey/Amber Lake 0x8E/0x9E, Comet Lake
 * 0xA5/0xA6); libpfm4 PMU "skl". */
#ifndef MW_TABLES_SKL_H
#define MW_TABLES_SKL_H
#include "common.h"

/* The client IMC exposes two free-running counters as one "uncore_imc" PMU with
 * the aliases data_reads (event=0x01) and data_writes (event=0x02), 64 bytes each
 * (sysfs .scale 6.103515625e-5 MiB). */
static const mw_event_spec mw_skl_imc[] = {
    MW_SYSFS("rd", "uncore_imc", "data_reads", 0x01, 0, 64.0,
             "kernel arch/x86/events/intel/uncore_snb.c snb_uncore_imc_events data_reads "
             "event=0x01, scale 6.103515625e-5 MiB"),
    MW_SYSFS("wr", "uncore_imc", "data_writes", 0x02, 0, 64.0,
             "kernel uncore_snb.c snb_uncore_imc_events data_writes event=0x02"),
};
/* libpfm4 4.13's skl table names only demand request bits for offcore response,
 * so this counts demand data reads and RFOs that missed L3 (on a client part an
 * L3 miss is a DRAM access). */
static const mw_event_spec mw_skl_ocr[] = {
    MW_CORE("rd", "cpu", "skl::OFFCORE_RESPONSE_0:DMND_DATA_RD:DMND_RFO:L3_MISS:SNP_ANY", 0x01b7,
            0x3F84000003ull, 64.0,
            "libpfm4 lib/events/intel_skl_events.h OFFCORE_RESPONSE_0 DMND_DATA_RD|DMND_RFO "
            "(0x3), L3_MISS (bit 26), SNP_ANY (0x3F80000000)"),
};
static const mw_event_spec mw_skl_lmrl[] = {
    MW_CORE("pending", "cpu", "skl::L1D_PEND_MISS:PENDING", 0x0148, 0, 1.0,
            "libpfm4 intel_skl_events.h L1D_PEND_MISS.PENDING 0x48/0x01; kernel pmu-events "
            "skylake"),
    MW_CORE("l1_miss", "cpu", "skl::MEM_LOAD_RETIRED:L1_MISS", 0x08d1, 0, 1.0,
            "libpfm4 intel_skl_events.h MEM_LOAD_RETIRED.L1_MISS 0xD1/0x08"),
    MW_CORE("fb_hit", "cpu", "skl::MEM_LOAD_RETIRED:FB_HIT", 0x40d1, 0, 1.0,
            "libpfm4 intel_skl_events.h MEM_LOAD_RETIRED.FB_HIT 0xD1/0x40"),
};
static const mw_event_spec mw_skl_l1ml[] = {
    MW_CORE("pending", "cpu", "skl::L1D_PEND_MISS:PENDING", 0x0148, 0, 1.0,
            "libpfm4 intel_skl_events.h L1D_PEND_MISS.PENDING 0x48/0x01"),
    MW_CORE("l1_miss", "cpu", "skl::MEM_LOAD_RETIRED:L1_MISS", 0x08d1, 0, 1.0,
            "libpfm4 intel_skl_events.h MEM_LOAD_RETIRED.L1_MISS 0xD1/0x08"),
};
static const mw_event_spec mw_skl_pebs[] = {
    MW_CORE("loads", "cpu", "skl::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=64:precise=2", 0x01cd, 64,
            1.0,
            "libpfm4 intel_skl_events.h MEM_TRANS_RETIRED.LOAD_LATENCY 0xCD/0x01, ldlat in "
            "config1; kernel mem-loads alias event=0xcd,umask=0x1,ldlat=3"),
};
static const mw_method_def mw_tab_skl[] = {
    MW_METHOD("imc_cas", MW_Q_DRAM_BYTES, MW_SCOPE_SYSTEM, MW_NEED_UNCORE | MW_NEED_SYSTEMWIDE,
              MW_F_IMC_FREE, MW_N_IMC_FREE, mw_skl_imc),
    MW_METHOD("ocr_dram", MW_Q_DRAM_BYTES, MW_SCOPE_THREAD, MW_NEED_CORE_PMU | MW_NEED_OFFCORE,
              "rd * 64 bytes (demand data reads and RFOs that missed L3)",
              MW_N_OCR "; demand requests only (no prefetches at all)", mw_skl_ocr),
    MW_METHOD("lmrl", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_LMRL, MW_N_LMRL,
              mw_skl_lmrl),
    MW_METHOD("l1_miss_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_L1ML, MW_N_L1ML,
              mw_skl_l1ml),
    MW_METHOD("pebs_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU | MW_NEED_PRECISE,
              MW_F_PEBS, MW_N_PEBS, mw_skl_pebs),
    MW_METHOD_PROBE_LAT,
};
static const mw_cpu_model mw_models_skl[] = {
    {"GenuineIntel", 6, 0x4E, 0x4E}, /* SKYLAKE_L */
    {"GenuineIntel", 6, 0x5E, 0x5E}, /* SKYLAKE */
    {"GenuineIntel", 6, 0x8E, 0x8E}, /* KABYLAKE_L (also Whiskey/Amber/Coffee-U) */
    {"GenuineIntel", 6, 0x9E, 0x9E}, /* KABYLAKE (also Coffee Lake) */
    {"GenuineIntel", 6, 0xA5, 0xA5}, /* COMETLAKE */
    {"GenuineIntel", 6, 0xA6, 0xA6}, /* COMETLAKE_L */
};
static const mw_uarch_desc mw_desc_skl =
    MW_UARCH_DESC(MW_UARCH_SKL, "skl", "Intel client Skylake..Comet Lake", "skl",
                  mw_models_skl, mw_tab_skl, &mw_pf_intel, NULL);
#endif
