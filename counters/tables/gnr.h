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
#define MW_GNR_CAS(role_, alias, ev, um)                                                           \
    MW_IMC_CAS(role_, ev, um,                                                                      \
               "kernel uncore_snbep.c gnr_uncore_imc_events cas_count_" alias " event=" #ev        \
               ",umask=" #um "; docs/sources.md §1")
static const mw_event_spec mw_gnr_imc_cas[] = {
    MW_GNR_CAS("rd_sch0", "read_sch0", 0x05, 0xcf),
    MW_GNR_CAS("rd_sch1", "read_sch1", 0x06, 0xcf),
    MW_GNR_CAS("wr_sch0", "write_sch0", 0x05, 0xf0),
    MW_GNR_CAS("wr_sch1", "write_sch1", 0x06, 0xf0),
};
MW_OCR_EVENTS(gnr, "gnr::OCR:READS_TO_CORE_LOCAL_DRAM", 0x012a, 0x104004477ull,
              "docs/sources.md §1 (SPR and later: event 0x2A, rsp 0x104004477); Intel perfmon "
              "GNR OCR.READS_TO_CORE.LOCAL_DRAM; upstream libpfm4 intel_gnr_events.h; not in 4.13");
#define MW_GNR_SRC "docs/sources.md §1 "
#define MW_GNR_NOT "; not in libpfm4 4.13"
static const mw_event_spec mw_gnr_lmrl[] = {
    MW_INTEL_PENDING("cpu", gnr, MW_GNR_SRC, MW_GNR_NOT),
    MW_INTEL_L1_MISS_ANY("cpu", gnr, MW_GNR_SRC, MW_GNR_NOT),
};
static const mw_event_spec mw_gnr_l1ml[] = {
    MW_INTEL_PENDING("cpu", gnr, MW_GNR_SRC, MW_GNR_NOT),
    MW_INTEL_L1_MISS("cpu", gnr, MEM_LOAD_RETIRED, "Intel perfmon GNR ", MW_GNR_NOT),
};
static const mw_event_spec mw_gnr_pebs[] = {
    MW_INTEL_AUX("cpu", ""),
    MW_CORE("loads", "cpu", "gnr::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=64:precise=2", 0x01cd, 64,
            1.0, MW_GNR_SRC "MEM_TRANS_RETIRED.LOAD_LATENCY 0xCD/0x01" MW_GNR_NOT),
};
static const mw_method_def mw_tab_gnr[] = {
    MW_METHODS_INTEL(gnr,
                     "(rd_sch0 + rd_sch1 + wr_sch0 + wr_sch1) * 64 bytes, summed over every "
                     "uncore_imc PMU",
                     MW_N_IMC_CAS, MW_F_OCR, MW_N_OCR, MW_F_LMRL_NEW, MW_N_LMRL, MW_F_PEBS_AUX)};
MW_UARCH(gnr, MW_UARCH_GNR, "Intel Granite Rapids", "gnr", &mw_pf_intel, NULL,
         MW_INTEL_MODEL(0xAD),  /* GRANITERAPIDS_X */
         MW_INTEL_MODEL(0xAE)); /* GRANITERAPIDS_D */
#endif
