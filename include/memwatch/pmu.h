/*
 * PMU discovery from sysfs and the generic event encoder.
 *
 * The kernel describes every PMU it exposes under
 * <sysfs_root>/bus/event_source/devices/<pmu>/: `type` (perf_event_attr.type),
 * `format/<field>` ("config:0-7", "config1:0-63", "config:0-7,32-35"),
 * `events/<alias>` ("event=0x04,umask=0x03") with optional `<alias>.scale` and
 * `<alias>.unit`, `cpumask` ("0,28") and `caps/<name>`. memwatch reads all of it
 * into a read-only set and encodes any event of any PMU (uncore_imc_N,
 * amd_umc_N, amd_df, msr, power, ibs_op, cpu, ...) through one path: the
 * alias's terms, placed bit by bit into config/config1/config2/config3 through
 * the PMU's format fields.
 *
 * Errors: MW_ERR_PARSE (malformed string), MW_ERR_NOEVENT (unknown term or
 * alias), MW_ERR_TOOBIG (a value wider than its field), MW_ERR_NOPMU (no such
 * PMU), -errno (unreadable directory). Every failure also logs the reason
 * (mw_log, MW_LOG_INFO) and, where a caller passes a buffer, writes it there.
 *
 * Thread safety: a set is immutable after mw_pmus_discover() and may be read
 * from any thread; the parsers are pure functions. Nothing here is
 * async-signal-safe (discovery allocates).
 */
#ifndef MEMWATCH_PMU_H
#define MEMWATCH_PMU_H

#include <memwatch/memwatch.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MW_PMU_NAME_MAX 64
#define MW_PMU_CONFIG_WORDS 4 /* config, config1, config2, config3 */

/* ---- the two parsers (pure; exposed for tests and fuzzing) ---- */

/* One format field: which config word and which bits. A split field
 * ("config:0-7,32-35") has several bits set in mask; a value's bits fill the
 * mask's bits from the lowest upwards, as the kernel's perf tool does. */
typedef struct mw_format_field {
    char name[MW_PMU_NAME_MAX]; /* "event", "umask", "ldlat" */
    unsigned word;              /* 0 = config, 1 = config1, 2 = config2, 3 = config3 */
    uint64_t mask;              /* bits of that word the field occupies */
    unsigned width;             /* number of bits in mask */
} mw_format_field;

/* Parse the contents of a format file ("config:0-7", "config1:0-63",
 * "config:8", "config:0-7,32-35"; trailing newline allowed) into *out
 * (out->name is left empty). Returns 0 or MW_ERR_PARSE; why (may be NULL)
 * receives the reason. */
MW_API int mw_format_parse(const char *s, mw_format_field *out, char *why, size_t why_len);

/* One term of an alias or user event string. "umask=0x03" -> value 3;
 * a term without value ("edge") means 1; "ldlat=?" means the user must supply
 * the value (needs_value = 1). */
typedef struct mw_alias_term {
    char name[MW_PMU_NAME_MAX];
    uint64_t value;
    int has_value;   /* "name=..." rather than a bare "name" */
    int needs_value; /* "name=?" */
} mw_alias_term;

#define MW_ALIAS_MAX_TERMS 16

/* Parse "event=0x04,umask=0x03" (decimal, 0x hex, spaces around terms and a
 * trailing newline allowed) into terms[0..*n). Returns 0, MW_ERR_PARSE or
 * MW_ERR_TOOBIG (more than max terms, or a number above 2^64-1). */
MW_API int mw_alias_parse(const char *s, mw_alias_term *terms, size_t max, size_t *n, char *why,
                          size_t why_len);

/* "0-3,8,10-11\n" -> sorted CPU numbers. Returns the count, or MW_ERR_PARSE,
 * or MW_ERR_TOOBIG when more than max CPUs are listed. */
MW_API int mw_cpulist_parse(const char *s, int *cpus, size_t max);

/* Reads at most len-1 bytes of a small text file (sysfs, procfs) into buf,
 * NUL-terminated, trailing whitespace cut. Returns the length left, or
 * -errno. open/read only: no stdio, no allocation. */
MW_API int mw_read_small(const char *path, char *buf, size_t len);

/* ---- discovery ---- */

typedef struct mw_pmu_event {
    const char *name;  /* "cas_count_read" */
    const char *terms; /* the alias file's contents, trimmed: "event=0x04,umask=0x03" */
    double scale;      /* from <name>.scale, 1.0 when absent */
    const char *unit;  /* from <name>.unit, "" when absent ("MiB", "Joules") */
} mw_pmu_event;

typedef struct mw_pmu_cap {
    const char *name;  /* "max_precise", "zen4_ibs_extensions" */
    const char *value; /* file contents, trimmed */
} mw_pmu_cap;

typedef struct mw_pmu {
    const char *name;             /* directory name: "uncore_imc_0" */
    uint32_t type;                /* perf_event_attr.type */
    size_t n_formats;
    const mw_format_field *formats;
    size_t n_events;
    const mw_pmu_event *events;
    size_t n_caps;
    const mw_pmu_cap *caps;
    size_t n_cpus;                /* 0: no cpumask file (per-task PMU, any CPU) */
    const int *cpus;              /* from cpumask */
} mw_pmu;

typedef struct mw_pmu_set mw_pmu_set;

/* Read every PMU under <sysfs_root>/bus/event_source/devices ("/sys" when
 * sysfs_root is NULL). A PMU whose `type` is missing or malformed is left out;
 * an unreadable or malformed format, alias, scale or cpumask file is left out
 * of its PMU; each such problem is logged and listed by mw_pmus_problems().
 * Fails only when the devices directory cannot be read (-errno) or memory
 * runs out (-ENOMEM). PMUs are sorted by name (natural order: imc_2 < imc_10). */
MW_API int mw_pmus_discover(const char *sysfs_root, mw_pmu_set **out);
MW_API void mw_pmus_free(mw_pmu_set *set);

MW_API size_t mw_pmus_count(const mw_pmu_set *set);
MW_API const mw_pmu *mw_pmus_get(const mw_pmu_set *set, size_t i);
/* Exact name, or NULL. */
MW_API const mw_pmu *mw_pmus_find(const mw_pmu_set *set, const char *name);
/* PMUs whose name matches a pattern: "uncore_imc_*" means uncore_imc itself
 * or uncore_imc_<number> (never uncore_imc_free_running_0); a plain name also
 * matches <name>_<number>; other patterns with * ? [ are shell patterns.
 * Fills up to max pointers; returns the count of all matches. */
MW_API size_t mw_pmus_match(const mw_pmu_set *set, const char *pattern, const mw_pmu **out,
                            size_t max);
/* The problems met during discovery, one sentence each. */
MW_API size_t mw_pmus_problems(const mw_pmu_set *set, const char *const **msgs);

/* True when the kernel exposes hardware event counters: any PMU other than
 * software, tracepoint, breakpoint, kprobe, uprobe, msr, power, cstate_core
 * and cstate_pkg (which count time, energy and residency, never events). */
MW_API int mw_pmus_have_hardware(const mw_pmu_set *set);
/* True for a PMU with hardware event counters (not one of the list above). */
MW_API int mw_pmu_is_hardware(const mw_pmu *pmu);
/* The core PMU (cpu, cpu_core, or the one of type PERF_TYPE_RAW), or NULL. */
MW_API const mw_pmu *mw_pmus_core(const mw_pmu_set *set);

MW_API const mw_format_field *mw_pmu_format(const mw_pmu *pmu, const char *name);
MW_API const mw_pmu_event *mw_pmu_event_find(const mw_pmu *pmu, const char *name);
MW_API const char *mw_pmu_cap_get(const mw_pmu *pmu, const char *name);

/* ---- encoding ---- */

typedef struct mw_pmu_encoding {
    uint32_t type;
    uint64_t config[MW_PMU_CONFIG_WORDS]; /* config, config1, config2, config3 */
    double scale;                         /* alias .scale, else 1.0 */
    char unit[16];                        /* alias .unit, else "" */
} mw_pmu_encoding;

/* Encode a term list against one PMU: each term is either an alias of the PMU
 * ("cas_count_read", expanded to its terms), a format field ("umask=0x03",
 * "edge"), or a whole config word ("config=0x1234", "config1=..."). Later terms
 * override earlier ones, so "mem-loads,ldlat=3" works. The alias's scale/unit
 * are carried over. Errors: MW_ERR_NOEVENT (unknown term: the reason names it
 * and the PMU's fields), MW_ERR_TOOBIG (value wider than the field),
 * MW_ERR_PARSE (malformed, or a "?" term left without value). */
MW_API int mw_pmu_encode(const mw_pmu *pmu, const char *terms, mw_pmu_encoding *out, char *why,
                         size_t why_len);

/* Encode "pmu/terms/" (perf syntax: "msr/tsc/", "uncore_imc_0/cas_count_read/",
 * "cpu/event=0x3c/") against a set. Returns MW_ERR_NOPMU when the PMU is absent. */
MW_API int mw_pmus_encode(const mw_pmu_set *set, const char *spec, mw_pmu_encoding *out,
                          char *why, size_t why_len);

#ifdef __cplusplus
}
#endif
#endif
