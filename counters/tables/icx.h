/* counters/tables/icx.h: Intel Ice Lake-SP / Ice Lake-D (family 6 models 0x6A, 0x6C);
 * libpfm4 PMU "icx". */
#ifndef MW_TABLES_ICX_H
#define MW_TABLES_ICX_H
#include "common.h"

/* Ice Lake-SP changed the CAS umasks: reads 0x0f, writes 0x30 (docs/sources.md §1).
 * DISAGREEMENT (kernel history): Ice Lake-SP support first shipped with the
 * Haswell-EP aliases (cas_count_read = umask 0x03), corrected later to
 * snr_uncore_imc_events (umask 0x0f / 0x30) by the fix of commit 2b3b76b5ec67.
 * memwatch gives raw terms, not the alias, so an unfixed kernel's wrong alias
 * does not matter; libpfm4 intel_icx_unc_imc_events.h agrees (RD = 0x0f). */
static const mw_event_spec mw_icx_imc_cas[] = {
    MW_SYSFS("rd", "uncore_imc_*", "event=0x04,umask=0x0f", 0x0f04, 0, 64.0,
             "kernel arch/x86/events/intel/uncore_snbep.c snr_uncore_imc_events "
             "cas_count_read (used by ICX); kernel pmu-events x86/icelakex UNC_M_CAS_COUNT.RD"),
    MW_SYSFS("wr", "uncore_imc_*", "event=0x04,umask=0x30", 0x3004, 0, 64.0,
             "kernel uncore_snbep.c snr_uncore_imc_events cas_count_write; "
             "UNC_M_CAS_COUNT.WR"),
};
static const mw_event_spec mw_icx_ocr[] = {
    MW_CORE("rd", "cpu", "icx::OCR:READS_TO_CORE_LOCAL_DRAM", 0x01b7, 0x104000477ull, 64.0,
            "libpfm4 lib/events/intel_icl_events.h (icx) OCR.READS_TO_CORE_LOCAL_DRAM; kernel "
            "pmu-events x86/icelakex OCR.READS_TO_CORE.LOCAL_DRAM MSRValue 0x104000477"),
};
static const mw_event_spec mw_icx_lmrl[] = {
    MW_CORE("pending", "cpu", "icx::L1D_PEND_MISS:PENDING", 0x0148, 0, 1.0,
            "libpfm4 intel_icl_events.h (icx) L1D_PEND_MISS.PENDING 0x48/0x01; kernel pmu-events "
            "icelakex"),
    MW_CORE("l1_miss", "cpu", "icx::MEM_LOAD_RETIRED:L1_MISS", 0x08d1, 0, 1.0,
            "libpfm4 intel_icl_events.h (icx) MEM_LOAD_RETIRED.L1_MISS 0xD1/0x08"),
    MW_CORE("fb_hit", "cpu", "icx::MEM_LOAD_RETIRED:FB_HIT", 0x40d1, 0, 1.0,
            "libpfm4 intel_icl_events.h (icx) MEM_LOAD_RETIRED.FB_HIT 0xD1/0x40"),
};
static const mw_event_spec mw_icx_l1ml[] = {
    MW_CORE("pending", "cpu", "icx::L1D_PEND_MISS:PENDING", 0x0148, 0, 1.0,
            "libpfm4 intel_icl_events.h (icx) L1D_PEND_MISS.PENDING 0x48/0x01"),
    MW_CORE("l1_miss", "cpu", "icx::MEM_LOAD_RETIRED:L1_MISS", 0x08d1, 0, 1.0,
            "libpfm4 intel_icl_events.h (icx) MEM_LOAD_RETIRED.L1_MISS 0xD1/0x08"),
};
static const mw_event_spec mw_icx_pebs[] = {
    MW_CORE("loads", "cpu", "icx::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=64:precise=2", 0x01cd, 64,
            1.0,
            "libpfm4 intel_icl_events.h (icx) MEM_TRANS_RETIRED.LOAD_LATENCY 0xCD/0x01, ldlat in "
            "config1; kernel mem-loads alias event=0xcd,umask=0x1,ldlat=3"),
};
static const mw_method_def mw_tab_icx[] = {
    MW_METHOD("imc_cas", MW_Q_DRAM_BYTES, MW_SCOPE_SYSTEM, MW_NEED_UNCORE | MW_NEED_SYSTEMWIDE,
              MW_F_IMC_CAS, MW_N_IMC_CAS, mw_icx_imc_cas),
    MW_METHOD("ocr_dram", MW_Q_DRAM_BYTES, MW_SCOPE_THREAD, MW_NEED_CORE_PMU | MW_NEED_OFFCORE,
              MW_F_OCR, MW_N_OCR, mw_icx_ocr),
    MW_METHOD("lmrl", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_LMRL, MW_N_LMRL,
              mw_icx_lmrl),
    MW_METHOD("l1_miss_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_L1ML, MW_N_L1ML,
              mw_icx_l1ml),
    MW_METHOD("pebs_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU | MW_NEED_PRECISE,
              MW_F_PEBS, MW_N_PEBS, mw_icx_pebs),
    MW_METHOD_PROBE_LAT,
};
static const mw_cpu_model mw_models_icx[] = {
    {"GenuineIntel", 6, 0x6A, 0x6A}, /* ICELAKE_X */
    {"GenuineIntel", 6, 0x6C, 0x6C}, /* ICELAKE_D */
};
static const mw_uarch_desc mw_desc_icx =
    MW_UARCH_DESC(MW_UARCH_ICX, "icx", "Intel Ice Lake-SP", "icx",
                  mw_models_icx, mw_tab_icx, &mw_pf_intel, NULL);
#endif
