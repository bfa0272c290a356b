/* counters/tables/spr.h: Intel Sapphire Rapids (family 6 model 0x8F) and Emerald
 * Rapids (0xCF), which share the core and IMC event lists; libpfm4 PMU "spr". */
#ifndef MW_TABLES_SPR_H
#define MW_TABLES_SPR_H
#include "common.h"

/* Sapphire Rapids moved CAS counting to event 0x05: reads umask 0xcf, writes 0xf0. */
static const mw_event_spec mw_spr_imc_cas[] = {
    MW_SYSFS("rd", "uncore_imc_*", "event=0x05,umask=0xcf", 0xcf05, 0, 64.0,
             "kernel arch/x86/events/intel/uncore_snbep.c spr_uncore_imc_events "
             "cas_count_read; kernel pmu-events x86/sapphirerapids UNC_M_CAS_COUNT.RD"),
    MW_SYSFS("wr", "uncore_imc_*", "event=0x05,umask=0xf0", 0xf005, 0, 64.0,
             "kernel uncore_snbep.c spr_uncore_imc_events cas_count_write; "
             "UNC_M_CAS_COUNT.WR"),
};
/* Sapphire Rapids moved offcore response to events 0x2A/0x2B (was 0xB7/0xBB). */
static const mw_event_spec mw_spr_ocr[] = {
    MW_CORE("rd", "cpu", "spr::OCR:READS_TO_CORE_LOCAL_DRAM", 0x012a, 0x104004477ull, 64.0,
            "libpfm4 lib/events/intel_spr_events.h OCR.READS_TO_CORE_LOCAL_DRAM (event "
            "0x2A); kernel pmu-events x86/sapphirerapids OCR.READS_TO_CORE.LOCAL_DRAM "
            "MSRValue 0x104004477"),
};
static const mw_event_spec mw_spr_lmrl[] = {
    MW_CORE("pending", "cpu", "spr::L1D_PEND_MISS:PENDING", 0x0148, 0, 1.0,
            "libpfm4 intel_spr_events.h L1D_PEND_MISS.PENDING 0x48/0x01; kernel pmu-events "
            "sapphirerapids"),
    MW_CORE("l1_miss_any", "cpu", "spr::MEM_LOAD_COMPLETED:L1_MISS_ANY", 0xfd43, 0, 1.0,
            "libpfm4 intel_spr_events.h MEM_LOAD_COMPLETED.L1_MISS_ANY 0x43/0xfd; TMA "
            "Load_Miss_Real_Latency for SPR"),
};
static const mw_event_spec mw_spr_l1ml[] = {
    MW_CORE("pending", "cpu", "spr::L1D_PEND_MISS:PENDING", 0x0148, 0, 1.0,
            "libpfm4 intel_spr_events.h L1D_PEND_MISS.PENDING 0x48/0x01"),
    MW_CORE("l1_miss", "cpu", "spr::MEM_LOAD_RETIRED:L1_MISS", 0x08d1, 0, 1.0,
            "libpfm4 intel_spr_events.h MEM_LOAD_RETIRED.L1_MISS 0xD1/0x08"),
};
/* On Sapphire Rapids the load-latency event must be grouped behind the auxiliary
 * event mem-loads-aux (the kernel refuses it alone); libpfm4 does not know the aux
 * event, so it is taken from the cpu PMU's sysfs alias / raw terms. */
static const mw_event_spec mw_spr_pebs[] = {
    MW_SYSFS("aux", "cpu", "event=0x03,umask=0x82", 0x8203, 0, 1.0,
             "kernel arch/x86/events/intel/core.c mem-loads-aux alias "
             "event=0x03,umask=0x82 (group leader, not sampled)"),
    MW_CORE("loads", "cpu", "spr::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=64:precise=2", 0x01cd, 64,
            1.0,
            "libpfm4 intel_spr_events.h MEM_TRANS_RETIRED.LOAD_LATENCY 0xCD/0x01, ldlat in "
            "config1; kernel mem-loads alias event=0xcd,umask=0x1,ldlat=3"),
};
static const mw_method_def mw_tab_spr[] = {
    MW_METHOD("imc_cas", MW_Q_DRAM_BYTES, MW_SCOPE_SYSTEM, MW_NEED_UNCORE | MW_NEED_SYSTEMWIDE,
              MW_F_IMC_CAS, MW_N_IMC_CAS, mw_spr_imc_cas),
    MW_METHOD("ocr_dram", MW_Q_DRAM_BYTES, MW_SCOPE_THREAD, MW_NEED_CORE_PMU | MW_NEED_OFFCORE,
              MW_F_OCR, MW_N_OCR, mw_spr_ocr),
    MW_METHOD("lmrl", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_LMRL_NEW, MW_N_LMRL,
              mw_spr_lmrl),
    MW_METHOD("l1_miss_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_L1ML, MW_N_L1ML,
              mw_spr_l1ml),
    MW_METHOD("pebs_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU | MW_NEED_PRECISE,
              MW_F_PEBS_AUX, MW_N_PEBS, mw_spr_pebs),
    MW_METHOD_PROBE_LAT,
};
static const mw_cpu_model mw_models_spr[] = {
    {"GenuineIntel", 6, 0x8F, 0x8F}, /* SAPPHIRERAPIDS_X */
    {"GenuineIntel", 6, 0xCF, 0xCF}, /* EMERALDRAPIDS_X */
};
static const mw_uarch_desc mw_desc_spr =
    MW_UARCH_DESC(MW_UARCH_SPR, "spr", "Intel Sapphire Rapids / Emerald Rapids", "spr",
                  mw_models_spr, mw_tab_spr, &mw_pf_spr, NULL);
#endif
