/* counters/tables/hsw_ep.h: Intel Haswell-EP (family 6 model 0x3F); libpfm4 PMU "hsw_ep". */
#ifndef MW_TABLES_HSW_EP_H
#define MW_TABLES_HSW_EP_H
#include "common.h"

static const mw_event_spec mw_hsw_ep_imc_cas[] = {
    MW_SYSFS("rd", "uncore_imc_*", "event=0x04,umask=0x03", 0x0304, 0, 64.0,
             "kernel arch/x86/events/intel/uncore_snbep.c hswep_uncore_imc_events "
             "cas_count_read; Intel Xeon E5 v3 uncore guide UNC_M_CAS_COUNT.RD"),
    MW_SYSFS("wr", "uncore_imc_*", "event=0x04,umask=0x0c", 0x0c04, 0, 64.0,
             "kernel uncore_snbep.c hswep_uncore_imc_events cas_count_write; "
             "UNC_M_CAS_COUNT.WR"),
};
/* All reads (0x7F7: demand data/RFO/code, L2 and L3 prefetches, lock) that missed
 * L3 and hit local DRAM (bit 22) with snoop miss / no forward (bits 33-34). */
static const mw_event_spec mw_hsw_ep_ocr[] = {
    MW_CORE("rd", "cpu",
            "hsw_ep::OFFCORE_RESPONSE_0:DMND_DATA_RD:DMND_RFO:DMND_CODE_RD:PF_DATA_RD:PF_RFO:"
            "PF_CODE_RD:PF_L3_DATA_RD:PF_L3_RFO:PF_L3_CODE_RD:SPLIT_LOCK_UC_LOCK:L3_MISS_LOCAL:"
            "SNP_MISS:SNP_NO_FWD",
            0x01b7, 0x6004007F7ull, 64.0,
            "libpfm4 lib/events/intel_hsw_events.h OFFCORE_RESPONSE_0 (hsw_ep); kernel "
            "pmu-events x86/haswellx OFFCORE_RESPONSE.ALL_READS.LLC_MISS.LOCAL_DRAM "
            "MSRValue 0x6004007f7"),
};
static const mw_event_spec mw_hsw_ep_lmrl[] = {
    MW_CORE("pending", "cpu", "hsw_ep::L1D_PEND_MISS:PENDING", 0x0148, 0, 1.0,
            "libpfm4 intel_hsw_events.h L1D_PEND_MISS.PENDING 0x48/0x01 (counter 2 only); "
            "kernel pmu-events haswellx"),
    MW_CORE("l1_miss", "cpu", "hsw_ep::MEM_LOAD_UOPS_RETIRED:L1_MISS", 0x08d1, 0, 1.0,
            "libpfm4 intel_hsw_events.h MEM_LOAD_UOPS_RETIRED.L1_MISS 0xD1/0x08"),
    MW_CORE("fb_hit", "cpu", "hsw_ep::MEM_LOAD_UOPS_RETIRED:HIT_LFB", 0x40d1, 0, 1.0,
            "libpfm4 intel_hsw_events.h MEM_LOAD_UOPS_RETIRED.HIT_LFB 0xD1/0x40"),
};
static const mw_event_spec mw_hsw_ep_l1ml[] = {
    MW_CORE("pending", "cpu", "hsw_ep::L1D_PEND_MISS:PENDING", 0x0148, 0, 1.0,
            "libpfm4 intel_hsw_events.h L1D_PEND_MISS.PENDING 0x48/0x01"),
    MW_CORE("l1_miss", "cpu", "hsw_ep::MEM_LOAD_UOPS_RETIRED:L1_MISS", 0x08d1, 0, 1.0,
            "libpfm4 intel_hsw_events.h MEM_LOAD_UOPS_RETIRED.L1_MISS 0xD1/0x08"),
};
static const mw_event_spec mw_hsw_ep_pebs[] = {
    MW_CORE("loads", "cpu", "hsw_ep::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=64:precise=2", 0x01cd, 64,
            1.0,
            "libpfm4 intel_hsw_events.h MEM_TRANS_RETIRED.LOAD_LATENCY 0xCD/0x01, ldlat in "
            "config1 (MSR 0x3F6); kernel mem-loads alias event=0xcd,umask=0x1,ldlat=3"),
};
static const mw_method_def mw_tab_hsw_ep[] = {
    MW_METHOD("imc_cas", MW_Q_DRAM_BYTES, MW_SCOPE_SYSTEM, MW_NEED_UNCORE | MW_NEED_SYSTEMWIDE,
              MW_F_IMC_CAS, MW_N_IMC_CAS, mw_hsw_ep_imc_cas),
    MW_METHOD("ocr_dram", MW_Q_DRAM_BYTES, MW_SCOPE_THREAD, MW_NEED_CORE_PMU | MW_NEED_OFFCORE,
              MW_F_OCR, MW_N_OCR, mw_hsw_ep_ocr),
    MW_METHOD("lmrl", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_LMRL,
              MW_N_LMRL "; L1D_PEND_MISS.PENDING runs on counter 2 only on Haswell",
              mw_hsw_ep_lmrl),
    MW_METHOD("l1_miss_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_L1ML, MW_N_L1ML,
              mw_hsw_ep_l1ml),
    MW_METHOD("pebs_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU | MW_NEED_PRECISE,
              MW_F_PEBS, MW_N_PEBS, mw_hsw_ep_pebs),
    MW_METHOD_PROBE_LAT,
};
static const mw_cpu_model mw_models_hsw_ep[] = {
    {"GenuineIntel", 6, 0x3F, 0x3F}, /* HASWELL_X */
};
static const mw_uarch_desc mw_desc_hsw_ep =
    MW_UARCH_DESC(MW_UARCH_HSW_EP, "hsw_ep", "Intel Haswell-EP", "hsw_ep",
                  mw_models_hsw_ep, mw_tab_hsw_ep, &mw_pf_intel, NULL);
#endif
