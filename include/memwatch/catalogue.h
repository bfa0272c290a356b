/*
 * The method catalogue: every way memwatch knows to measure DRAM bandwidth or
 * loaded memory latency, per microarchitecture, as data.
 *
 * A method (imc_cas, ocr_dram, amd_umc, amd_df, lmrl, l1_miss_lat, pebs_lat,
 * ibs_lat, probe_lat) names the quantity it measures, its scope, the events it
 * needs and the formula that turns readings into the quantity. The tables live
 * in counters/tables/; this header is the small interface in front of them.
 *
 * Thread safety: all functions here read constant tables and are safe from any
 * thread; none allocates.
 */
#ifndef MEMWATCH_CATALOGUE_H
#define MEMWATCH_CATALOGUE_H

#include <memwatch/memwatch.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mw_uarch {
    MW_UARCH_UNKNOWN = 0,
    MW_UARCH_HSW_EP,   /* Haswell-EP */
    MW_UARCH_BDW_EP,   /* Broadwell-EP */
    MW_UARCH_SKX,      /* Skylake-SP / Cascade Lake-SP */
    MW_UARCH_ICX,      /* Ice Lake-SP */
    MW_UARCH_SPR,      /* Sapphire Rapids / Emerald Rapids */
    MW_UARCH_GNR,      /* Granite Rapids */
    MW_UARCH_SKL,      /* client Skylake-class (Skylake..Comet Lake, uncore_imc data_reads) */
    MW_UARCH_ICL,      /* client Ice Lake */
    MW_UARCH_ADL,      /* Alder Lake / Raptor Lake (P-cores) */
    MW_UARCH_KNL,      /* Knights Landing / Mill */
    MW_UARCH_ZEN2,     /* AMD Zen 2 */
    MW_UARCH_ZEN3,     /* AMD Zen 3 */
    MW_UARCH_ZEN4,     /* AMD Zen 4 */
    MW_UARCH_ZEN5,     /* AMD Zen 5 */
    MW_UARCH_ZEN1,     /* AMD Zen 1 / Zen+ (added last: the numbers above stay) */
    MW_UARCH_COUNT
} mw_uarch;

typedef enum mw_quantity { MW_Q_DRAM_BYTES = 1, MW_Q_LATENCY = 2 } mw_quantity;

typedef enum mw_scope {
    MW_SCOPE_SYSTEM = 1, /* all traffic of the machine (memory controller) */
    MW_SCOPE_SOCKET = 2,
    MW_SCOPE_CORE = 3,
    MW_SCOPE_THREAD = 4, /* follows a thread (core PMU, per-task) */
} mw_scope;

/* What a method needs from the machine; availability checks test these. */
enum mw_need {
    MW_NEED_NOTHING = 0,
    MW_NEED_CORE_PMU = 1u << 0,   /* a hardware core PMU ("cpu", "cpu_core", or type 4 on AMD) */
    MW_NEED_UNCORE = 1u << 1,     /* the sysfs PMU named in mw_event_spec.pmu */
    MW_NEED_SYSTEMWIDE = 1u << 2, /* per-CPU counting: paranoid <= 0 or CAP_PERFMON */
    MW_NEED_PRECISE = 1u << 3,    /* PEBS load latency (precise_ip, ldlat) */
    MW_NEED_IBS = 1u << 4,        /* the ibs_op PMU */
    MW_NEED_OFFCORE = 1u << 5,    /* offcore-response extra MSRs (config1) */
    MW_NEED_X86_CLFLUSH = 1u << 6 /* clflushopt or clflush and a TSC (probe_lat) */
};

/* One event a method reads. Core events are named for libpfm4 and carry the
 * encoding memwatch expects; uncore events are named by kernel sysfs alias or
 * raw fields and resolved against /sys/bus/event_source/devices at run time. */
typedef struct mw_event_spec {
    const char *role;    /* what the formula calls it: "rd", "wr", "pending", "loads" */
    const char *pmu;     /* "cpu", "uncore_imc_*", "amd_umc_*", "amd_df", "ibs_op" */
    const char *pfm;     /* libpfm4 event string for core events, else NULL */
    const char *sysfs;   /* kernel alias or raw terms, e.g. "event=0x04,umask=0x03" */
    uint64_t config;     /* expected perf_event_attr.config (core events) */
    uint64_t config1;    /* expected config1 (offcore response, ldlat) */
    double scale;        /* multiplier to the quantity's unit (64 bytes per CAS) */
    const char *source;  /* where the encoding comes from (file, table, paper) */
} mw_event_spec;

typedef struct mw_method_def {
    const char *name;        /* "imc_cas", "lmrl", ... */
    mw_quantity quantity;
    mw_scope scope;
    unsigned needs;          /* enum mw_need bits */
    const char *formula;     /* human-readable, e.g. "(rd + wr) * 64 bytes" */
    const char *notes;       /* known caveats (misses prefetches, 3x high on Zen 2, ...) */
    size_t n_events;
    const mw_event_spec *events;
} mw_method_def;

/* How a method's reading is obtained. */
typedef enum mw_method_how {
    MW_HOW_COUNT = 1,  /* counting events read every interval (method_read.c) */
    MW_HOW_SAMPLE = 2, /* precise samples whose weight is the latency (PEBS, IBS) */
    MW_HOW_PROBE = 3,  /* the software latency probe (probe_lat.c) */
} mw_method_how;

/* The unit of a latency method's saturation threshold (and of its readings). */
typedef enum mw_method_unit {
    MW_UNIT_BYTES = 0,  /* bandwidth methods: DRAM bytes, no threshold */
    MW_UNIT_NS = 1,     /* nanoseconds (probe_lat) */
    MW_UNIT_CYCLES = 2, /* core cycles per miss or per sampled load */
} mw_method_unit;

/* What a method is, whatever the microarchitecture: the questions other
 * modules ask instead of comparing names. */
typedef struct mw_method_info {
    const char *name;
    mw_quantity quantity;
    mw_method_how how;
    mw_method_unit unit;
} mw_method_info;

/* Names of every method memwatch knows, in a fixed order. */
MW_API size_t mw_method_names(const char *const **names);
/* The method called name, or NULL when memwatch knows no such method. */
MW_API const mw_method_info *mw_method_lookup(const char *name);
/* 1 when name is a method of quantity q obtained by how. */
MW_API int mw_method_is(const char *name, mw_quantity q, mw_method_how how);

/* The definitions of the methods that exist for a microarchitecture. A method
 * that does not exist there (pebs_lat on AMD) is simply absent. probe_lat exists
 * for every x86-64 microarchitecture, MW_UARCH_UNKNOWN included. */
MW_API int mw_catalogue_methods(mw_uarch u, const mw_method_def **defs, size_t *n);

/* One method of one microarchitecture, or MW_ERR_NOEVENT. */
MW_API int mw_catalogue_find(mw_uarch u, const char *method, const mw_method_def **def);

MW_API const char *mw_uarch_name(mw_uarch u);       /* "skx" */
MW_API const char *mw_uarch_long_name(mw_uarch u);  /* "Intel Skylake-SP / Cascade Lake-SP" */
MW_API mw_uarch mw_uarch_from_name(const char *name);

/* CPU identity from /proc/cpuinfo (procfs root is a parameter for tests). */
typedef struct mw_cpu_id {
    char vendor[16];      /* "GenuineIntel", "AuthenticAMD" */
    unsigned family, model, stepping;
    char model_name[96];
    char microcode[24];
    mw_uarch uarch;
} mw_cpu_id;

MW_API int mw_cpu_identify(const char *proc_root, mw_cpu_id *out);
MW_API mw_uarch mw_uarch_from_cpuid(const char *vendor, unsigned family, unsigned model);

/* Prefetcher control MSR of a microarchitecture (docs/sources.md §2). */
typedef struct mw_prefetch_msr {
    uint32_t msr;        /* 0x1A4, 0xC0000108 */
    uint64_t mask;       /* the known bits; only these are ever changed */
    const char *bits;    /* human-readable list of the bits */
} mw_prefetch_msr;

MW_API int mw_catalogue_prefetch_msr(mw_uarch u, const mw_prefetch_msr **out);

/* CPU models of a microarchitecture: vendor, family, a model range. */
typedef struct mw_cpu_model {
    const char *vendor;          /* "GenuineIntel", "AuthenticAMD" */
    unsigned family;
    unsigned model_lo, model_hi; /* inclusive */
} mw_cpu_model;

/* Everything memwatch knows about one microarchitecture, in one place (one
 * table file in counters/tables/; docs/architecture.md shows how to add one). */
typedef struct mw_uarch_desc {
    mw_uarch id;
    const char *name;            /* "skx", as in profiles and `memwatch probe` */
    const char *long_name;
    const char *pfm_pmu;         /* libpfm4 core PMU name, NULL: none */
    const mw_cpu_model *models;  /* the CPUs it covers (mw_uarch_from_cpuid) */
    size_t n_models;
    const mw_method_def *methods;
    size_t n_methods;
    const mw_prefetch_msr *prefetch; /* NULL: none documented ... */
    const char *no_prefetch;         /* ... and why */
} mw_uarch_desc;

/* The descriptor of u (NULL for an invalid number). */
MW_API const mw_uarch_desc *mw_uarch_desc_of(mw_uarch u);

#ifdef __cplusplus
}
#endif
#endif
