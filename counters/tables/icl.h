/* counters/tables/icl.h: Intel client Ice Lake (family 6 models 0x7D, 0x7E); libpfm4
 * PMU "icl". The kernel drives its IMC with the same client uncore_imc driver as
 * Skylake (data_reads / data_writes). */
#ifndef MW_TABLES_ICL_H
#define MW_TABLES_ICL_H
#include "common.h"

static const mw_event_spec mw_icl_imc[] = {
    MW_SYSFS("rd", "uncore_imc", "data_reads", 0x01, 0, 64.0,
             "kernel arch/x86/events/intel/uncore_snb.c snb_uncore_imc_events data_reads "
             "(used for Ice Lake client through skl_uncore_pci_init); docs/sources.md §1"),
    MW_SYSFS("wr", "uncore_imc", "data_writes", 0x02, 0, 64.0,
             "kernel uncore_snb.c snb_uncore_imc_events data_writes event=0x02"),
};
/* Ice Lake's OCR events carry a whole response value per umask, so reads and RFOs
 * take the two offcore counters (0xB7 and 0xBB). */
static const mw_event_spec mw_icl_ocr[] = {
    MW_CORE("rd", "cpu", "icl::OCR:DEMAND_DATA_RD_DRAM", 0x01b7, 0x184000001ull, 64.0,
            "libpfm4 lib/events/intel_icl_events.h OCR.DEMAND_DATA_RD_DRAM; kernel "
            "pmu-events x86/icelake OCR.DEMAND_DATA_RD.DRAM MSRValue 0x184000001"),
    MW_CORE("rfo", "cpu", "icl::OFFCORE_RESPONSE_1:DEMAND_RFO_DRAM", 0x01bb, 0x184000002ull, 64.0,
            "libpfm4 intel_icl_events.h OFFCORE_RESPONSE_1 (event 0xBB) DEMAND_RFO_DRAM; "
            "kernel pmu-events x86/icelake OCR.DEMAND_RFO.DRAM MSRValue 0x184000002"),
};
static const mw_event_spec mw_icl_lmrl[] = {
    MW_CORE("pending", "cpu", "icl::L1D_PEND_MISS:PENDING", 0x0148, 0, 1.0,
            "libpfm4 intel_icl_events.h L1D_PEND_MISS.PENDING 0x48/0x01; kernel pmu-events "
            "icelake"),
    MW_CORE("l1_miss", "cpu", "icl::MEM_LOAD_RETIRED:L1_MISS", 0x08d1, 0, 1.0,
            "libpfm4 intel_icl_events.h MEM_LOAD_RETIRED.L1_MISS 0xD1/0x08"),
    MW_CORE("fb_hit", "cpu", "icl::MEM_LOAD_RETIRED:FB_HIT", 0x40d1, 0, 1.0,
            "libpfm4 intel_icl_events.h MEM_LOAD_RETIRED.FB_HIT 0xD1/0x40"),
};
static const mw_event_spec mw_icl_l1ml[] = {
    MW_CORE("pending", "cpu", "icl::L1D_PEND_MISS:PENDING", 0x0148, 0, 1.0,
            "libpfm4 intel_icl_events.h L1D_PEND_MISS.PENDING 0x48/0x01"),
    MW_CORE("l1_miss", "cpu", "icl::MEM_LOAD_RETIRED:L1_MISS", 0x08d1, 0, 1.0,
            "libpfm4 intel_icl_events.h MEM_LOAD_RETIRED.L1_MISS 0xD1/0x08"),
};
static const mw_event_spec mw_icl_pebs[] = {
    MW_CORE("loads", "cpu", "icl::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=64:precise=2", 0x01cd, 64,
            1.0,
            "libpfm4 intel_icl_events.h MEM_TRANS_RETIRED.LOAD_LATENCY 0xCD/0x01, ldlat in "
            "config1; kernel mem-loads alias event=0xcd,umask=0x1,ldlat=3"),
};
static const mw_method_def mw_tab_icl[] = {
    MW_METHOD("imc_cas", MW_Q_DRAM_BYTES, MW_SCOPE_SYSTEM, MW_NEED_UNCORE | MW_NEED_SYSTEMWIDE,
              MW_F_IMC_FREE, MW_N_IMC_FREE, mw_icl_imc),
    MW_METHOD("ocr_dram", MW_Q_DRAM_BYTES, MW_SCOPE_THREAD, MW_NEED_CORE_PMU | MW_NEED_OFFCORE,
              "(rd + rfo) * 64 bytes (demand data reads and RFOs served by DRAM)",
              MW_N_OCR "; demand requests only (no prefetches at all)", mw_icl_ocr),
    MW_METHOD("lmrl", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_LMRL, MW_N_LMRL,
              mw_icl_lmrl),
    MW_METHOD("l1_miss_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_L1ML, MW_N_L1ML,
              mw_icl_l1ml),
    MW_METHOD("pebs_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU | MW_NEED_PRECISE,
              MW_F_PEBS, MW_N_PEBS, mw_icl_pebs),
    MW_METHOD_PROBE_LAT,
};
static const mw_cpu_model mw_models_icl[] = {
    {"GenuineIntel", 6, 0x7D, 0x7D}, /* ICELAKE */
    {"GenuineIntel", 6, 0x7E, 0x7E}, /* ICELAKE_L */
};
static const mw_uarch_desc mw_desc_icl =
    MW_UARCH_DESC(MW_UARCH_ICL, "icl", "Intel client Ice Lake", "icl",
                  mw_models_icl, mw_tab_icl, &mw_pf_intel, NULL);
#endif
