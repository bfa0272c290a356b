/* counters/tables/adl.h: Intel Alder Lake / Raptor Lake P-cores (family 6 models
 * 0x97, 0x9A, 0xB7, 0xBA, 0xBF). The kernel splits the hybrid core PMU into
 * cpu_core (Golden Cove / Raptor Cove) and cpu_atom; memwatch uses cpu_core only.
 * libpfm4 names the P-core PMU "adl_glc" after release 4.13 (upstream git); 4.13 (Debian 12)
 * has no Alder Lake model, so these core rows are reported unavailable there. */
#ifndef MW_TABLES_ADL_H
#define MW_TABLES_ADL_H
#include "common.h"

/* Alder Lake's client IMC exposes free-running counters as
 * uncore_imc_free_running_0/1 with data_read (event=0xff,umask=0x20) and
 * data_write (event=0xff,umask=0x30), 64 bytes per count: the kernel's
 * adl_uncore_imc_free_running uses tgl_uncore_imc_events (free-running umask =
 * (type + 1) << 4: data_total 0x10, data_read 0x20, data_write 0x30). */
static const mw_event_spec mw_adl_imc[] = {
    MW_SYSFS("rd", "uncore_imc_free_running_*", "data_read", 0x20ff, 0, 64.0,
             "kernel arch/x86/events/intel/uncore_snb.c tgl_uncore_imc_events data_read "
             "event=0xff,umask=0x20 (adl_uncore_imc_free_running), scale 6.103515625e-5 MiB"),
    MW_SYSFS("wr", "uncore_imc_free_running_*", "data_write", 0x30ff, 0, 64.0,
             "kernel uncore_snb.c tgl_uncore_imc_events data_write event=0xff,umask=0x30"),
};
static const mw_event_spec mw_adl_lmrl[] = {
    MW_CORE("pending", "cpu_core", "adl_glc::L1D_PEND_MISS:PENDING", 0x0148, 0, 1.0,
            "docs/sources.md §1 L1D_PEND_MISS.PENDING 0x48/0x01; kernel pmu-events alderlake; "
            "not in libpfm4 4.13"),
    MW_CORE("l1_miss_any", "cpu_core", "adl_glc::MEM_LOAD_COMPLETED:L1_MISS_ANY", 0xfd43, 0, 1.0,
            "docs/sources.md §1 MEM_LOAD_COMPLETED.L1_MISS_ANY 0x43/0xfd (TMA for ADL); not in "
            "libpfm4 4.13"),
};
static const mw_event_spec mw_adl_l1ml[] = {
    MW_CORE("pending", "cpu_core", "adl_glc::L1D_PEND_MISS:PENDING", 0x0148, 0, 1.0,
            "docs/sources.md §1 L1D_PEND_MISS.PENDING 0x48/0x01; not in libpfm4 4.13"),
    MW_CORE("l1_miss", "cpu_core", "adl_glc::MEM_LOAD_RETIRED:L1_MISS", 0x08d1, 0, 1.0,
            "kernel pmu-events alderlake MEM_LOAD_RETIRED.L1_MISS 0xD1/0x08; not in "
            "libpfm4 4.13"),
};
static const mw_event_spec mw_adl_pebs[] = {
    MW_SYSFS("aux", "cpu_core", "event=0x03,umask=0x82", 0x8203, 0, 1.0,
             "kernel arch/x86/events/intel/core.c mem-loads-aux alias event=0x03,umask=0x82 "
             "(Golden Cove needs it as group leader)"),
    MW_CORE("loads", "cpu_core", "adl_glc::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=64:precise=2",
            0x01cd, 64, 1.0,
            "kernel pmu-events alderlake MEM_TRANS_RETIRED.LOAD_LATENCY_GT_* 0xCD/0x01, ldlat "
            "in config1; not in libpfm4 4.13"),
};
static const mw_method_def mw_tab_adl[] = {
    MW_METHOD("imc_cas", MW_Q_DRAM_BYTES, MW_SCOPE_SYSTEM, MW_NEED_UNCORE | MW_NEED_SYSTEMWIDE,
              MW_F_IMC_FREE, MW_N_IMC_FREE, mw_adl_imc),
    MW_METHOD("lmrl", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_LMRL_NEW,
              MW_N_LMRL "; P-cores only (threads on E-cores are not counted)", mw_adl_lmrl),
    MW_METHOD("l1_miss_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_L1ML,
              MW_N_L1ML "; P-cores only", mw_adl_l1ml),
    MW_METHOD("pebs_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU | MW_NEED_PRECISE,
              MW_F_PEBS_AUX, MW_N_PEBS "; P-cores only", mw_adl_pebs),
    MW_METHOD_PROBE_LAT,
};
static const mw_cpu_model mw_models_adl[] = {
    {"GenuineIntel", 6, 0x97, 0x97}, /* ALDERLAKE */
    {"GenuineIntel", 6, 0x9A, 0x9A}, /* ALDERLAKE_L */
    {"GenuineIntel", 6, 0xB7, 0xB7}, /* RAPTORLAKE */
    {"GenuineIntel", 6, 0xBA, 0xBA}, /* RAPTORLAKE_P */
    {"GenuineIntel", 6, 0xBF, 0xBF}, /* RAPTORLAKE_S */
};
static const mw_uarch_desc mw_desc_adl =
    MW_UARCH_DESC(MW_UARCH_ADL, "adl", "Intel Alder Lake / Raptor Lake (P-cores)", "adl_glc",
                  mw_models_adl, mw_tab_adl, &mw_pf_intel, NULL);
#endif
