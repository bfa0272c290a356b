/* counters/tables/gnr.h: Intel Granite Rapids (family 6 models 0xAD, 0xAE). libpfm4
 * names this PMU "gnr" after release 4.13 (upstream lib/events/intel_gnr_events.h,
 * which has the codes below); Debian 12's libpfm4 4.13 has no Granite Rapids
 * model, so memwatch reports these core rows unavailable there ("the installed
 * libpfm4 4.13 has no PMU model 'gnr'") instead of guessing. Expected encodings:
 * docs/sources.md §1 (SPR and later share OCR 0x2A, L1_MISS_ANY 0x43/0xfd) and
 * upstream libpfm4's intel_gnr_events.h. */
#ifndef MW_TABLES_GNR_H
#define MW_TABLES_GNR_H
#include "common.h"

/* Granite Rapids splits each channel into two schedulers: SCH0 event 0x05, SCH1
 * event 0x06, both with umask 0xcf for reads and 0xf0 for writes. */
static const mw_event_spec mw_gnr_imc_cas[] = {
    MW_SYSFS("rd_sch0", "uncore_imc_*", "event=0x05,umask=0xcf", 0xcf05, 0, 64.0,
             "kernel uncore_snbep.c gnr_uncore_imc_events cas_count_read_sch0 "
             "event=0x05,umask=0xcf; docs/sources.md §1"),
    MW_SYSFS("rd_sch1", "uncore_imc_*", "event=0x06,umask=0xcf", 0xcf06, 0, 64.0,
             "kernel uncore_snbep.c gnr_uncore_imc_events cas_count_read_sch1 "
             "event=0x06,umask=0xcf; docs/sources.md §1"),
    MW_SYSFS("wr_sch0", "uncore_imc_*", "event=0x05,umask=0xf0", 0xf005, 0, 64.0,
             "kernel uncore_snbep.c gnr_uncore_imc_events cas_count_write_sch0 "
             "event=0x05,umask=0xf0; docs/sources.md §1"),
    MW_SYSFS("wr_sch1", "uncore_imc_*", "event=0x06,umask=0xf0", 0xf006, 0, 64.0,
             "kernel uncore_snbep.c gnr_uncore_imc_events cas_count_write_sch1 "
             "event=0x06,umask=0xf0; docs/sources.md §1"),
};
static const mw_event_spec mw_gnr_ocr[] = {
    MW_CORE("rd", "cpu", "gnr::OCR:READS_TO_CORE_LOCAL_DRAM", 0x012a, 0x104004477ull, 64.0,
            "docs/sources.md §1 (SPR and later: event 0x2A, rsp 0x104004477); Intel perfmon "
            "GNR OCR.READS_TO_CORE.LOCAL_DRAM; upstream libpfm4 intel_gnr_events.h; not in 4.13"),
};
static const mw_event_spec mw_gnr_lmrl[] = {
    MW_CORE("pending", "cpu", "gnr::L1D_PEND_MISS:PENDING", 0x0148, 0, 1.0,
            "docs/sources.md §1 L1D_PEND_MISS.PENDING 0x48/0x01; not in libpfm4 4.13"),
    MW_CORE("l1_miss_any", "cpu", "gnr::MEM_LOAD_COMPLETED:L1_MISS_ANY", 0xfd43, 0, 1.0,
            "docs/sources.md §1 MEM_LOAD_COMPLETED.L1_MISS_ANY 0x43/0xfd; not in libpfm4 4.13"),
};
static const mw_event_spec mw_gnr_l1ml[] = {
    MW_CORE("pending", "cpu", "gnr::L1D_PEND_MISS:PENDING", 0x0148, 0, 1.0,
            "docs/sources.md §1 L1D_PEND_MISS.PENDING 0x48/0x01; not in libpfm4 4.13"),
    MW_CORE("l1_miss", "cpu", "gnr::MEM_LOAD_RETIRED:L1_MISS", 0x08d1, 0, 1.0,
            "Intel perfmon GNR MEM_LOAD_RETIRED.L1_MISS 0xD1/0x08; not in libpfm4 4.13"),
};
static const mw_event_spec mw_gnr_pebs[] = {
    MW_SYSFS("aux", "cpu", "event=0x03,umask=0x82", 0x8203, 0, 1.0,
             "kernel arch/x86/events/intel/core.c mem-loads-aux alias event=0x03,umask=0x82"),
    MW_CORE("loads", "cpu", "gnr::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=64:precise=2", 0x01cd, 64,
            1.0, "docs/sources.md §1 MEM_TRANS_RETIRED.LOAD_LATENCY 0xCD/0x01; not in libpfm4 4.13"),
};
static const mw_method_def mw_tab_gnr[] = {
    MW_METHOD("imc_cas", MW_Q_DRAM_BYTES, MW_SCOPE_SYSTEM, MW_NEED_UNCORE | MW_NEED_SYSTEMWIDE,
              "(rd_sch0 + rd_sch1 + wr_sch0 + wr_sch1) * 64 bytes, summed over every "
              "uncore_imc PMU",
              MW_N_IMC_CAS, mw_gnr_imc_cas),
    MW_METHOD("ocr_dram", MW_Q_DRAM_BYTES, MW_SCOPE_THREAD, MW_NEED_CORE_PMU | MW_NEED_OFFCORE,
              MW_F_OCR, MW_N_OCR, mw_gnr_ocr),
    MW_METHOD("lmrl", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_LMRL_NEW, MW_N_LMRL,
              mw_gnr_lmrl),
    MW_METHOD("l1_miss_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_L1ML, MW_N_L1ML,
              mw_gnr_l1ml),
    MW_METHOD("pebs_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU | MW_NEED_PRECISE,
              MW_F_PEBS_AUX, MW_N_PEBS, mw_gnr_pebs),
    MW_METHOD_PROBE_LAT,
};
static const mw_cpu_model mw_models_gnr[] = {
    {"GenuineIntel", 6, 0xAD, 0xAD}, /* GRANITERAPIDS_X */
    {"GenuineIntel", 6, 0xAE, 0xAE}, /* GRANITERAPIDS_D */
};
static const mw_uarch_desc mw_desc_gnr =
    MW_UARCH_DESC(MW_UARCH_GNR, "gnr", "Intel Granite Rapids", "gnr",
                  mw_models_gnr, mw_tab_gnr, &mw_pf_intel, NULL);
#endif
