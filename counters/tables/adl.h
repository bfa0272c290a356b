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
static const mw_event_spec mw_adl_imc_cas[] = {
    MW_SYSFS("rd", "uncore_imc_free_running_*", "data_read", 0x20ff, 0, 64.0,
             "kernel arch/x86/events/intel/uncore_snb.c tgl_uncore_imc_events data_read "
             "event=0xff,umask=0x20 (adl_uncore_imc_free_running), scale 6.103515625e-5 MiB"),
    MW_SYSFS("wr", "uncore_imc_free_running_*", "data_write", 0x30ff, 0, 64.0,
             "kernel uncore_snb.c tgl_uncore_imc_events data_write event=0xff,umask=0x30"),
};
#define MW_ADL_SRC "docs/sources.md §1 "
#define MW_ADL_NOT "; not in libpfm4 4.13"
static const mw_event_spec mw_adl_lmrl[] = {
    MW_INTEL_PENDING("cpu_core", adl_glc, MW_ADL_SRC, "; kernel pmu-events alderlake" MW_ADL_NOT),
    MW_INTEL_L1_MISS_ANY("cpu_core", adl_glc, MW_ADL_SRC, " (TMA for ADL)" MW_ADL_NOT),
};
static const mw_event_spec mw_adl_l1ml[] = {
    MW_INTEL_PENDING("cpu_core", adl_glc, MW_ADL_SRC, MW_ADL_NOT),
    MW_INTEL_L1_MISS("cpu_core", adl_glc, MEM_LOAD_RETIRED, "kernel pmu-events alderlake ",
                     MW_ADL_NOT),
};
static const mw_event_spec mw_adl_pebs[] = {
    MW_INTEL_AUX("cpu_core", " (Golden Cove needs it as group leader)"),
    MW_CORE("loads", "cpu_core", "adl_glc::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=64:precise=2",
            0x01cd, 64, 1.0,
            "kernel pmu-events alderlake MEM_TRANS_RETIRED.LOAD_LATENCY_GT_* 0xCD/0x01, ldlat "
            "in config1" MW_ADL_NOT),
};
static const mw_method_def mw_tab_adl[] = {
    MW_M_IMC_CAS(adl, MW_F_IMC_FREE, MW_N_IMC_FREE),
    MW_M_LMRL(adl, MW_F_LMRL_NEW, MW_N_LMRL "; P-cores only (threads on E-cores are not counted)"),
    MW_M_L1ML(adl, MW_N_L1ML "; P-cores only"),
    MW_M_PEBS(adl, MW_F_PEBS_AUX, MW_N_PEBS "; P-cores only"),
    MW_METHOD_PROBE_LAT,
};
MW_UARCH(adl, MW_UARCH_ADL, "Intel Alder Lake / Raptor Lake (P-cores)", "adl_glc", &mw_pf_intel,
         NULL, MW_INTEL_MODEL(0x97), /* ALDERLAKE */
         MW_INTEL_MODEL(0x9A),       /* ALDERLAKE_L */
         MW_INTEL_MODEL(0xB7),       /* RAPTORLAKE */
         MW_INTEL_MODEL(0xBA),       /* RAPTORLAKE_P */
         MW_INTEL_MODEL(0xBF));      /* RAPTORLAKE_S */
#endif
