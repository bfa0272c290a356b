/*
 * counters/tables/common.h: helpers shared by the per-microarchitecture method
 * tables. Included only by counters/catalogue.c; every table is constant data.
 *
 * Conventions of every row:
 *  - core events carry the libpfm4 string (with its PMU prefix, so a table can
 *    never be encoded against another model's event list) and the perf_event
 *    attr.config / attr.config1 that the event must encode to;
 *  - uncore and other sysfs events carry kernel alias names or raw terms that
 *    counters core resolves against /sys/bus/event_source/devices/<pmu>/format;
 *    their config is what those terms give with the kernel's format layout;
 *  - every row names its source; tests/counters_encode checks the core rows
 *    against libpfm4 and the integrity of all rows.
 */
#ifndef MW_TABLES_COMMON_H
#define MW_TABLES_COMMON_H

#include <memwatch/catalogue.h>

#define MW_NEV(a) (sizeof(a) / sizeof((a)[0]))

/* One microarchitecture's descriptor (mw_uarch_desc): each table file ends
 * with one. prefetch NULL needs a reason in no_prefetch. */
#define MW_UARCH_DESC(id_, name_, long_, pfm_, models_, methods_, pf_, nopf_)                       \
    {                                                                                              \
        .id = (id_), .name = (name_), .long_name = (long_), .pfm_pmu = (pfm_),                     \
        .models = (models_), .n_models = MW_NEV(models_), .methods = (methods_),                   \
        .n_methods = MW_NEV(methods_), .prefetch = (pf_), .no_prefetch = (nopf_)                   \
    }

/*
 * Prefetcher control MSRs (docs/sources.md §2; 1 = prefetcher disabled).
 * Intel: MSR 0x1A4 MISC_FEATURE_CONTROL (Intel SDM vol. 4 and Intel's
 * "Disclosure of H/W prefetcher control on some Intel processors"); Sapphire
 * Rapids adds bit 6 (L2 AMP). Knights Landing/Mill: bits 0 (DCU) and 1 (L2).
 * AMD Zen 3/4/5: MSR 0xC000_0108 PrefetchControl (AMD PPR 19h/1Ah). Zen 2 has no
 * documented prefetcher control MSR.
 */
static const mw_prefetch_msr mw_pf_intel = {
    0x1A4, 0xFull, "0 L2 streamer, 1 L2 adjacent line, 2 DCU next-line, 3 DCU IP"};
static const mw_prefetch_msr mw_pf_spr = {
    0x1A4, 0x4Full, "0 L2 streamer, 1 L2 adjacent line, 2 DCU next-line, 3 DCU IP, 6 L2 AMP"};
static const mw_prefetch_msr mw_pf_knl = {0x1A4, 0x3ull, "0 DCU, 1 L2"};
static const mw_prefetch_msr mw_pf_amd = {
    0xC0000108u, 0x2Full, "0 L1 stream, 1 L1 stride, 2 L1 region, 3 L2 stream, 5 L2 up/down"};

/* A core event encoded through libpfm4. */
#define MW_CORE(role_, pmu_, pfm_, cfg_, cfg1_, scale_, src_)                                      \
    {                                                                                              \
        .role = (role_), .pmu = (pmu_), .pfm = (pfm_), .sysfs = NULL, .config = (cfg_),            \
        .config1 = (cfg1_), .scale = (scale_), .source = (src_)                                    \
    }

/* An event resolved through sysfs (uncore alias or raw terms, or a core alias
 * libpfm4 does not know, such as mem-loads-aux). */
#define MW_SYSFS(role_, pmu_, terms_, cfg_, cfg1_, scale_, src_)                                   \
    {                                                                                              \
        .role = (role_), .pmu = (pmu_), .pfm = NULL, .sysfs = (terms_), .config = (cfg_),          \
        .config1 = (cfg1_), .scale = (scale_), .source = (src_)                                    \
    }

#define MW_METHOD(name_, q_, scope_, needs_, formula_, notes_, evs_)                               \
    {                                                                                              \
        .name = (name_), .quantity = (q_), .scope = (scope_), .needs = (needs_),                   \
        .formula = (formula_), .notes = (notes_), .n_events = MW_NEV(evs_), .events = (evs_)       \
    }

/* The software probe needs no PMU at all: it exists for every x86-64 CPU. */
#define MW_METHOD_PROBE_LAT                                                                        \
    {                                                                                              \
        .name = "probe_lat", .quantity = MW_Q_LATENCY, .scope = MW_SCOPE_SOCKET,                   \
        .needs = MW_NEED_X86_CLFLUSH,                                                              \
        .formula = "median TSC cycles per dependent load of clflushopt-flushed lines "             \
                   "(rdtscp around each burst)",                                                   \
        .notes = "memwatch's own probe; reads no counter, so it works in VMs without a PMU. "      \
                 "It adds a little memory traffic of its own and sees the latency of the "         \
                 "socket it runs on.",                                                             \
        .n_events = 0, .events = NULL                                                              \
    }

/* Method texts shared by several tables. */
#define MW_F_IMC_CAS "(rd + wr) * 64 bytes, summed over every uncore_imc PMU of every socket"
#define MW_N_IMC_CAS                                                                               \
    "counts all DRAM traffic of the socket (every process, prefetches and writebacks "             \
    "included); needs system-wide counting; the IMC PMU is missing in many cloud VMs"
#define MW_F_OCR "rd * 64 bytes (reads that missed L3 and were served by local DRAM)"
#define MW_N_OCR                                                                                   \
    "per thread; counts no writebacks; Helm & Taura found it misses hardware-prefetch "            \
    "traffic with prefetchers on despite the documentation; remote DRAM not included"
#define MW_F_LMRL "pending / (l1_miss + fb_hit) core cycles per L1-missing load"
#define MW_F_LMRL_NEW "pending / l1_miss_any core cycles per L1-missing load"
#define MW_N_LMRL                                                                                  \
    "load-miss real latency (TMA); rises only near the bandwidth limit; low noise "                \
    "(Helm & Taura: CV <= 6.6 %)"
#define MW_F_L1ML "pending / l1_miss core cycles per retired L1-missing load"
#define MW_N_L1ML                                                                                  \
    "pending counts every outstanding L1D miss (prefetches too) but the denominator only "         \
    "retired demand loads, so it reads high when prefetching is heavy"
#define MW_F_PEBS                                                                                  \
    "mean weight of the precise samples of loads whose data_src says DRAM, in core cycles"
#define MW_N_PEBS                                                                                  \
    "precise sampling with a load-latency threshold (ldlat, MSR 0x3F6); weight is the use "        \
    "latency; Helm & Taura saw false positives (CV up to 33 %); ~200-300 ns per record"
#define MW_F_IMC_FREE "(rd + wr) * 64 bytes (client IMC free-running counters)"
#define MW_F_PEBS_AUX                                                                              \
    "mean weight of the precise samples of loads (grouped behind aux) whose data_src says "        \
    "DRAM, in core cycles"
#define MW_N_IMC_FREE                                                                              \
    "client memory controller counters count all DRAM traffic of the package, GPU "                \
    "included; need system-wide counting"

#endif
