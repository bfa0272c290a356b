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
#define MW_UARCH_DESC(id_, name_, long_, pfm_, models_, methods_, pf_, nopf_)                      \
    {                                                                                              \
        .id = (id_), .name = (name_), .long_name = (long_), .pfm_pmu = (pfm_),                     \
        .models = (models_), .n_models = MW_NEV(models_), .methods = (methods_),                   \
        .n_methods = MW_NEV(methods_), .prefetch = (pf_), .no_prefetch = (nopf_)                   \
    }
/* The end of a table file: the descriptor mw_desc_<u> named u's spelling ("icx"),
 * with the methods mw_tab_<u> and the CPU models that follow (mw_models_<u>). */
#define MW_UARCH(u, id_, long_, pfm_, pf_, nopf_, ...)                                             \
    static const mw_cpu_model mw_models_##u[] = {__VA_ARGS__};                                     \
    static const mw_uarch_desc mw_desc_##u =                                                       \
        MW_UARCH_DESC(id_, #u, long_, pfm_, mw_models_##u, mw_tab_##u, pf_, nopf_)
/* A CPU model: Intel family 6 model m; AMD family f models lo to hi. */
#define MW_INTEL_MODEL(m)                                                                          \
    {                                                                                              \
        "GenuineIntel", 6, m, m                                                                    \
    }
#define MW_AMD_MODELS(f, lo, hi)                                                                   \
    {                                                                                              \
        "AuthenticAMD", f, lo, hi                                                                  \
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

/*
 * Method rows by name. A method's quantity, scope and needs are the same on
 * every microarchitecture, so a table gives only its texts; the events are the
 * table's array named after the uarch and the method (token pasting:
 * MW_M_LMRL(icx, ...) reads mw_icx_lmrl).
 */
#define MW_M_IMC_CAS(u, f_, n_)                                                                    \
    MW_METHOD("imc_cas", MW_Q_DRAM_BYTES, MW_SCOPE_SYSTEM, MW_NEED_UNCORE | MW_NEED_SYSTEMWIDE,    \
              f_, n_, mw_##u##_imc_cas)
#define MW_M_OCR_DRAM(u, f_, n_)                                                                   \
    MW_METHOD("ocr_dram", MW_Q_DRAM_BYTES, MW_SCOPE_THREAD, MW_NEED_CORE_PMU | MW_NEED_OFFCORE,    \
              f_, n_, mw_##u##_ocr)
#define MW_M_LMRL(u, f_, n_)                                                                       \
    MW_METHOD("lmrl", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, f_, n_, mw_##u##_lmrl)
#define MW_M_L1ML(u, n_)                                                                           \
    MW_METHOD("l1_miss_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU, MW_F_L1ML, n_,       \
              mw_##u##_l1ml)
#define MW_M_PEBS(u, f_, n_)                                                                       \
    MW_METHOD("pebs_lat", MW_Q_LATENCY, MW_SCOPE_THREAD, MW_NEED_CORE_PMU | MW_NEED_PRECISE, f_,   \
              n_, mw_##u##_pebs)

/* The methods of an Intel core with a memory controller PMU, offcore response,
 * L1D_PEND_MISS and load-latency PEBS (Haswell-EP to Granite Rapids), the texts
 * that differ between families as arguments; ..._SERVER: the texts above. */
#define MW_METHODS_INTEL(u, imc_f, imc_n, ocr_f, ocr_n, lmrl_f, lmrl_n, pebs_f)                    \
    MW_M_IMC_CAS(u, imc_f, imc_n), MW_M_OCR_DRAM(u, ocr_f, ocr_n), MW_M_LMRL(u, lmrl_f, lmrl_n),   \
        MW_M_L1ML(u, MW_N_L1ML), MW_M_PEBS(u, pebs_f, MW_N_PEBS), MW_METHOD_PROBE_LAT
#define MW_METHODS_INTEL_SERVER(u)                                                                 \
    MW_METHODS_INTEL(u, MW_F_IMC_CAS, MW_N_IMC_CAS, MW_F_OCR, MW_N_OCR, MW_F_LMRL, MW_N_LMRL,      \
                     MW_F_PEBS)

/*
 * Intel event rows whose encoding is the same on every core that has them; a
 * table gives the libpfm4 PMU (u, a token: icx, adl_glc), the perf PMU where
 * it is not "cpu", and its citation: src, the source as it names the event,
 * then the event and its code as below, then more.
 *  - CAS counts of a server memory controller (one uncore_imc_N PMU per
 *    channel): event ev, umask um, config um << 8 | ev, 64 bytes each; the
 *    kernel's table of them (tab, "hswep_uncore_imc_events") is cited for the
 *    read and the write count, each followed by its own note;
 *  - ocr_dram's one event, rd: offcore response, 64 bytes a count;
 *  - pending: L1D_PEND_MISS.PENDING 0x48/0x01;
 *  - l1_miss: <ld>.L1_MISS 0xD1/0x08, ld MEM_LOAD_UOPS_RETIRED before Skylake,
 *    MEM_LOAD_RETIRED since; fb_hit: <ld>.<fb> 0xD1/0x40 (HIT_LFB, FB_HIT);
 *  - l1_miss_any: MEM_LOAD_COMPLETED.L1_MISS_ANY 0x43/0xfd (Golden Cove on);
 *  - loads: MEM_TRANS_RETIRED.LOAD_LATENCY 0xCD/0x01, ldlat 64 in config1;
 *  - aux: mem-loads-aux, the group leader the load-latency event needs from
 *    Golden Cove on (kernel arch/x86/events/intel/core.c; libpfm4 lacks it).
 */
#define MW_IMC_CAS(role_, ev, um, src)                                                             \
    MW_SYSFS(role_, "uncore_imc_*", "event=" #ev ",umask=" #um, ((um) << 8) | (ev), 0, 64.0, src)
#define MW_IMC_CAS_EVENTS(u, ev, rd, wr, tab, rd_note, wr_note)                                    \
    static const mw_event_spec mw_##u##_imc_cas[] = {                                              \
        MW_IMC_CAS("rd", ev, rd,                                                                   \
                   "kernel arch/x86/events/intel/uncore_snbep.c " tab " cas_count_read" rd_note),  \
        MW_IMC_CAS("wr", ev, wr, "kernel uncore_snbep.c " tab " cas_count_write" wr_note)}
#define MW_OCR_EVENTS(u, pfm_, cfg_, cfg1_, src)                                                   \
    static const mw_event_spec mw_##u##_ocr[] = {MW_CORE("rd", "cpu", pfm_, cfg_, cfg1_, 64.0, src)}
#define MW_INTEL_PENDING(pmu_, u, src, more)                                                       \
    MW_CORE("pending", pmu_, #u "::L1D_PEND_MISS:PENDING", 0x0148, 0, 1.0,                         \
            src "L1D_PEND_MISS.PENDING 0x48/0x01" more)
#define MW_INTEL_L1_MISS(pmu_, u, ld, src, more)                                                   \
    MW_CORE("l1_miss", pmu_, #u "::" #ld ":L1_MISS", 0x08d1, 0, 1.0,                               \
            src #ld ".L1_MISS 0xD1/0x08" more)
#define MW_INTEL_FB_HIT(u, ld, fb, src)                                                            \
    MW_CORE("fb_hit", "cpu", #u "::" #ld ":" #fb, 0x40d1, 0, 1.0, src #ld "." #fb " 0xD1/0x40")
#define MW_INTEL_L1_MISS_ANY(pmu_, u, src, more)                                                   \
    MW_CORE("l1_miss_any", pmu_, #u "::MEM_LOAD_COMPLETED:L1_MISS_ANY", 0xfd43, 0, 1.0,            \
            src "MEM_LOAD_COMPLETED.L1_MISS_ANY 0x43/0xfd" more)
#define MW_INTEL_LOADS(u, src, more)                                                               \
    MW_CORE("loads", "cpu", #u "::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=64:precise=2", 0x01cd, 64,  \
            1.0,                                                                                   \
            src "MEM_TRANS_RETIRED.LOAD_LATENCY 0xCD/0x01, ldlat in config1" more                  \
                "; kernel mem-loads alias event=0xcd,umask=0x1,ldlat=3")
#define MW_INTEL_AUX(pmu_, more)                                                                   \
    MW_SYSFS("aux", pmu_, "event=0x03,umask=0x82", 0x8203, 0, 1.0,                                 \
             "kernel arch/x86/events/intel/core.c mem-loads-aux alias event=0x03,umask=0x82" more)
/* The client memory controller (Skylake to Ice Lake): two free-running counters
 * as one uncore_imc PMU, aliases data_reads (event=0x01) and data_writes
 * (event=0x02), 64 bytes each. */
#define MW_IMC_CLIENT_EVENTS(u, rd_src)                                                            \
    static const mw_event_spec mw_##u##_imc_cas[] = {                                              \
        MW_SYSFS("rd", "uncore_imc", "data_reads", 0x01, 0, 64.0, rd_src),                         \
        MW_SYSFS("wr", "uncore_imc", "data_writes", 0x02, 0, 64.0,                                 \
                 "kernel uncore_snb.c snb_uncore_imc_events data_writes event=0x02")}
/* l1_miss_lat's events: pending and l1_miss, both cited as src ... more. */
#define MW_INTEL_L1ML_EVENTS(u, ld, src, more)                                                     \
    static const mw_event_spec mw_##u##_l1ml[] = {MW_INTEL_PENDING("cpu", u, src, more),           \
                                                  MW_INTEL_L1_MISS("cpu", u, ld, src, more)}
/* The lmrl, l1_miss_lat and pebs_lat events of a core from Haswell to Ice Lake,
 * all from one libpfm4 file (src); kern ends lmrl's pending row, msr the loads. */
#define MW_INTEL_CORE_EVENTS(u, ld, fb, src, kern, msr)                                            \
    static const mw_event_spec mw_##u##_lmrl[] = {MW_INTEL_PENDING("cpu", u, src, kern),           \
                                                  MW_INTEL_L1_MISS("cpu", u, ld, src, ""),         \
                                                  MW_INTEL_FB_HIT(u, ld, fb, src)};                \
    MW_INTEL_L1ML_EVENTS(u, ld, src, "");                                                          \
    static const mw_event_spec mw_##u##_pebs[] = {MW_INTEL_LOADS(u, src, msr)}

#endif
