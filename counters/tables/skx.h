/* counters/tables/skx.h: Intel Skylake-SP / Cascade Lake-SP / Cooper Lake (family 6
 * model 0x55); libpfm4 PMU "skx" (4.13 has no separate Cascade Lake model). */
#ifndef MW_TABLES_SKX_H
#define MW_TABLES_SKX_H
#include "common.h"

static const mw_event_spec mw_skx_imc_cas[] = {
    MW_SYSFS(
        "rd", "uncore_imc_*", "event=0x04,umask=0x03", 0x0304, 0, 64.0,
        "kernel arch/x86/events/intel/uncore_snbep.c hswep_uncore_imc_events "
        "cas_count_read (skx_uncore_imc uses them); Intel Xeon SP uncore guide UNC_M_CAS_COUNT.RD"),
    MW_SYSFS("wr", "uncore_imc_*", "event=0x04,umask=0x0c", 0x0c04, 0, 64.0,
             "kernel uncore_snbep.c hswep_uncore_imc_events cas_count_write; libpfm4 "
             "intel_skx_unc_imc_events.h UNC_M_CAS_COUNT.WR"),
};
/*
 * All reads that missed L3 and hit local DRAM, any snoop (0x3F84000000).
 * DISAGREEMENT: the kernel's pmu-events x86/cascadelakex (and skylakex)
 * OCR.ALL_READS.L3_MISS_LOCAL_DRAM.ANY_SNOOP uses MSRValue 0x3F840007F7, whose
 * request bits 6 and 9 (PF_L2_CODE_RD / PF_L3_CODE_RD on Haswell) are not defined
 * for Skylake-SP in libpfm4 lib/events/intel_skl_events.h (skx), so libpfm4 can only
 * express 0x3F840005B7. memwatch uses the libpfm4 value; the two differ by 0x240
 * (reserved request bits; code-read prefetches are not counted). The encoding test
 * checks exactly this difference.
 */
#define MW_SKX_OCR_KERNEL_MSRVALUE 0x3F840007F7ull
static const mw_event_spec mw_skx_ocr[] = {
    MW_CORE("rd", "cpu",
            "skx::OFFCORE_RESPONSE_0:DMND_DATA_RD:DMND_RFO:DMND_CODE_RD:PF_L2_DATA_RD:PF_L2_RFO:"
            "PF_L3_DATA_RD:PF_L3_RFO:PF_L1D_AND_SW:L3_MISS_LOCAL:SNP_ANY",
            0x01b7, 0x3F840005B7ull, 64.0,
            "libpfm4 lib/events/intel_skl_events.h (skx) OFFCORE_RESPONSE_0 (request 0x5B7, "
            "L3_MISS_LOCAL bit 26, SNP_ANY); kernel pmu-events x86/cascadelakex "
            "OCR.ALL_READS.L3_MISS_LOCAL_DRAM.ANY_SNOOP says 0x3F840007F7 (see comment)"),
};
static const mw_event_spec mw_skx_lmrl[] = {
    MW_CORE("pending", "cpu", "skx::L1D_PEND_MISS:PENDING", 0x0148, 0, 1.0,
            "libpfm4 intel_skl_events.h (skx) L1D_PEND_MISS.PENDING 0x48/0x01; kernel pmu-events "
            "skylakex"),
    MW_CORE("l1_miss", "cpu", "skx::MEM_LOAD_RETIRED:L1_MISS", 0x08d1, 0, 1.0,
            "libpfm4 intel_skl_events.h (skx) MEM_LOAD_RETIRED.L1_MISS 0xD1/0x08"),
    MW_CORE("fb_hit", "cpu", "skx::MEM_LOAD_RETIRED:FB_HIT", 0x40d1, 0, 1.0,
            "libpfm4 intel_skl_events.h (skx) MEM_LOAD_RETIRED.FB_HIT 0xD1/0x40"),
};
static const mw_event_spec mw_skx_l1ml[] = {
    MW_CORE("pending", "cpu", "skx::L1D_PEND_MISS:PENDING", 0x0148, 0, 1.0,
            "libpfm4 intel_skl_events.h (skx) L1D_PEND_MISS.PENDING 0x48/0x01"),
    MW_CORE("l1_miss", "cpu", "skx::MEM_LOAD_RETIRED:L1_MISS", 0x08d1, 0, 1.0,
            "libpfm4 intel_skl_events.h (skx) MEM_LOAD_RETIRED.L1_MISS 0xD1/0x08"),
};
static const mw_event_spec mw_skx_pebs[] = {
    MW_CORE("loads", "cpu", "skx::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=64:precise=2", 0x01cd, 64,
            1.0,
            "libpfm4 intel_skl_events.h (skx) MEM_TRANS_RETIRED.LOAD_LATENCY 0xCD/0x01, ldlat in "
            "config1; kernel mem-loads alias event=0xcd,umask=0x1,ldlat=3"),
};
static const mw_method_def mw_tab_skx[] = {
    MW_METHOD("imc_cas", MW_Q_DRAM_BYTES, MW_SCOPE_SYSTEM, MW_NEED_UNCORE | MW_NEED_SYSTEMWIDE,
              MW_F_IMC_CAS, MW_N_IMC_CAS, mw_skx_imc_cas),
    MW_METHOD("ocr_dram", MW_Q_DRAM_BYTES, MW_SCOPE_THREAD, MW_NEED_CORE_PMU | MW_NEED_OFFCORE,
              MW_F_OCR, MW_N_OCR, mw_skx_ocr),
    MW_METHOD("lmrl", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_LMRL, MW_N_LMRL,
              mw_skx_lmrl),
    MW_METHOD("l1_miss_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_L1ML, MW_N_L1ML,
              mw_skx_l1ml),
    MW_METHOD("pebs_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU | MW_NEED_PRECISE,
              MW_F_PEBS, MW_N_PEBS, mw_skx_pebs),
    MW_METHOD_PROBE_LAT,
};
static const mw_cpu_model mw_models_skx[] = {
    {"GenuineIntel", 6, 0x55, 0x55}, /* SKYLAKE_X: SKX, CLX, CPX */
};
static const mw_uarch_desc mw_desc_skx =
    MW_UARCH_DESC(MW_UARCH_SKX, "skx", "Intel Skylake-SP / Cascade Lake-SP", "skx",
                  mw_models_skx, mw_tab_skx, &mw_pf_intel, NULL);
#endif
