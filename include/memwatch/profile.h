/*
 * The machine profile: what `memwatch calibrate` learned about this machine and
 * what `record` uses. Stored as JSON (schema: docs/profile-format.md), keyed by
 * the machine identity. Implemented in counters/profile.c (reading needs only
 * cJSON, so the preload library can load it at start-up; writing happens in
 * calibrate/).
 *
 * The fields below are the contract the profiler relies on; the JSON holds much
 * more (verdicts with numbers, raw evidence, the hierarchy).
 */
#ifndef MEMWATCH_PROFILE_H
#define MEMWATCH_PROFILE_H

#include <memwatch/memwatch.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MW_PROFILE_SCHEMA "memwatch-profile"
#define MW_PROFILE_VERSION 1
#define MW_PROFILE_MAX_METHODS 16
#define MW_PROFILE_MAX_CURVE 24

/* A method's verdict from validation (calibrate/verdict.c decides it). */
typedef enum mw_verdict {
    MW_VERDICT_UNAVAILABLE = 0,
    MW_VERDICT_ACCURATE,
    MW_VERDICT_BIASED,          /* a stable factor off; corrected by dividing by it */
    MW_VERDICT_MISSES_PREFETCH, /* matches with prefetchers off, counts too little with them on */
    MW_VERDICT_NOISY,
} mw_verdict;

/* Whether calibration saw memory saturate (profile "saturable"); zero, the
 * value of a profile that predates the key, is unknown. */
typedef enum mw_saturable {
    MW_SAT_UNKNOWN = 0,
    MW_SAT_YES = 1,
    MW_SAT_NO = 2, /* it could not: nothing is called bandwidth-bound */
} mw_saturable;

typedef struct mw_profile_method {
    char name[24];          /* "probe_lat", "imc_cas", ... */
    char verdict[24];       /* "accurate", "biased", "misses_prefetch", "noisy", "unavailable" */
    mw_verdict vd;          /* verdict, parsed once when the profile is loaded (a string
                               memwatch does not know reads as unavailable) */
    double factor;          /* correction factor for "biased" (1.0 otherwise) */
    double cv;              /* coefficient of variation measured */
    double false_pos, false_neg; /* latency methods: rates over the read-sweep grid */
    double threshold;       /* latency methods: saturation threshold (0 if none), in ns for
                               probe_lat, core cycles per miss for lmrl/l1_miss_lat */
    char reason[200];       /* why, in words */
} mw_profile_method;

/* One read/write mix's saturation curve (docs/profile-format.md, "mixes"):
 * probe_lat's threshold measured while the load read and wrote in this
 * proportion. Optional: profiles written before mixes have none. */
#define MW_PROFILE_MAX_MIXES 8
typedef struct mw_profile_mix {
    char name[16];          /* "reads100", "reads75", "reads50", "nt50" */
    double read_share;      /* reads / all traffic, 0..1 */
    int nontemporal;        /* the stores bypassed the caches */
    double threshold_ns;    /* probe_lat's saturation threshold under this mix */
    double peak_bw;         /* bytes/s (reads + writes) at the curve's peak */
    double peak_ns;         /* median latency there */
    int saturated;
} mw_profile_mix;

typedef struct mw_profile {
    int version;
    char identity[192];     /* machine identity string the profile is keyed by */
    char created[32];       /* ISO 8601 time of calibration */
    double tsc_hz;
    double peak_bw;         /* bytes/s, best measured */
    double idle_latency_ns;
    char lat_method[24];    /* best validated latency method ("" if none) */
    double lat_threshold_ns;/* its saturation threshold, in the method's unit (see threshold) */
    char bw_method[24];     /* best validated bandwidth method ("" if none) */
    double bw_factor;       /* its correction factor */
    unsigned n_methods;
    mw_profile_method methods[MW_PROFILE_MAX_METHODS];
    unsigned n_mixes;       /* 0: the profile predates mixes (reads100 only) */
    mw_profile_mix mixes[MW_PROFILE_MAX_MIXES];
    /* What the flag can claim here (docs/saturation.md; all optional, absent
     * in profiles written before them): */
    int saturable;          /* mw_saturable: MW_SAT_NO flags nothing bandwidth-bound */
    double band_lo_ns, band_hi_ns; /* lat_threshold_ns's uncertainty band (0: none) */
    int from_shapes;        /* lat_threshold_ns was placed on the load shapes */
    /* The load shapes' threshold for a program whose own loops write
     * (copy, triad, non-temporal stores: docs/saturation.md, "Loads that
     * write"), placed on those shapes alone, and its band; 0: none */
    double writes_threshold_ns, writes_band_lo_ns, writes_band_hi_ns;
    unsigned n_curve;       /* the latency-bandwidth curve, bandwidth and latency both
                               non-decreasing: levels by inverse lookup */
    struct { double bw, ns; } curve[MW_PROFILE_MAX_CURVE];
    char threshold_note[240]; /* why the threshold is a fallback, or "" */
} mw_profile;

/* The mix whose read share is nearest read_share (0..1), among the
 * temporal ones unless nontemporal; ties go to the more reads. -1 when the
 * profile holds none. */
MW_API int mw_profile_mix_pick(const mw_profile *p, double read_share, int nontemporal);
/* The mix called name ("reads50", "50", "nt50", "nt"...); -1 if absent. */
MW_API int mw_profile_mix_find(const mw_profile *p, const char *name);

/* The read/write curve whose threshold judges latency (docs/saturation.md,
 * "Read/write mixes"): the one `forced` names (MEMWATCH_MIX; NULL or "" for
 * none) where the profile has it; else, where a method measured the traffic's
 * read and write bytes (read_bytes + write_bytes > 0), the curve nearest its
 * read share (mw_profile_mix_pick; non-temporal curves where nontemporal);
 * else none. Returns the curve's index in p->mixes, or -1 where none is
 * chosen (the latency method's own threshold, the reads100 curve's, applies).
 * why (may be NULL) gets the choice in META mix_curve's words, e.g.
 * "reads50 (MEMWATCH_MIX)", "reads50: the nearest curve to the measured read
 * share, 50 %", "reads100: no method in use measures an interval's read/write
 * split (MEMWATCH_MIX chooses another curve)". Pure. */
MW_API int mw_profile_mix_choose(const mw_profile *p, const char *forced, double read_bytes,
                                 double write_bytes, int nontemporal, char *why, size_t whylen);

/* The saturation threshold the profile gives the latency method lat_method
 * (docs/saturation.md), 0 when it gives none: the load shapes' threshold
 * (unless mix, MEMWATCH_MIX, names a curve), else the read/write curve
 * mw_profile_mix_choose picks (probe_lat only), else the threshold the
 * method's validation passed, else the profile's lat_threshold_ns where
 * lat_method is the profile's own. *in_ns is 1 where the value is in ns
 * (shapes, curves) and 0 where it is in the method's own unit (a counting
 * method's core cycles per miss). why (may be NULL) gets META mix_curve's
 * words. Pure; shared by the preload engine and memwatch record's external
 * sampler. */
MW_API double mw_profile_lat_threshold(const mw_profile *p, const char *lat_method,
                                      const char *mix, int *in_ns, char *why, size_t whylen);

/* This machine's identity: CPU model, microcode, kernel release, cores, memory.
 * proc_root/sys_root may be NULL for "/proc" and "/sys". */
MW_API int mw_machine_identity(const char *proc_root, const char *sys_root, char *buf, size_t n);
/* The identity the processes under libmemwatch.so take (preload/process.c):
 * MEMWATCH_MACHINE where it is set, fits in n, holds no newline and was not
 * handed down on another host (mw_handed_elsewhere), else
 * mw_machine_identity's. Returns its length, or a negative error where
 * neither is had. */
MW_API int mw_machine_identity_taken(char *buf, size_t n);
/* This host's name as memwatch writes it (uname's nodename, '/' and ' ' as
 * '_', at most 127 bytes; "unknown" where uname fails). libmemwatch.so's
 * constructor writes the same without libc (preload/process.c, ctor_host). */
MW_API void mw_host_name(char *buf, size_t n);
/* 1 where MEMWATCH_HANDED names another host than this one: the values
 * memwatch hands down about a machine (MEMWATCH_BASELINE_NS, _MACHINE, _TSC,
 * _DIR_OK, _FORKED, _PROFILE_SNAPSHOT) came with the environment a launcher
 * (srun, mpiexec) carried from there, and describe that machine
 * (docs/config.md). */
MW_API int mw_handed_elsewhere(void);
/* Those variables, and MEMWATCH_HANDED itself: what a process (or memwatch
 * record) on another host forgets (preload/process.c, cli/cmd_record.c). */
#define MW_HANDED_VARS                                                                             \
    "MEMWATCH_BASELINE_NS", "MEMWATCH_MACHINE", "MEMWATCH_TSC", "MEMWATCH_DIR_OK",                 \
        "MEMWATCH_FORKED", "MEMWATCH_PROFILE_SNAPSHOT", "MEMWATCH_HANDED"

/* $XDG_DATA_HOME/memwatch/profile.json (or ~/.local/share/...). */
MW_API int mw_profile_default_path(char *buf, size_t n);

/* Read a profile. MW_ERR_CORRUPT for malformed JSON or missing fields,
 * MW_ERR_FOREIGN for another schema, version or machine (identity compared when
 * check_identity is non-zero). Never crashes on any input. */
MW_API int mw_profile_load(const char *path, int check_identity, mw_profile *out);

/* The snapshot of a loaded profile that memwatch record hands down to the
 * processes it records (MEMWATCH_PROFILE_SNAPSHOT, docs/profile-format.md,
 * "The snapshot"): the parsed structure as this build lays it out, with the
 * path of the profile it was read from. Reading it costs one read instead
 * of the JSON parse (some 2 million instructions per process that begins
 * recording, docs/overhead.md). mw_profile_snapshot_write: 0, or -errno
 * (the file is not left behind). Not for a profile path of 1024 bytes or
 * more (-ENAMETOOLONG). */
MW_API int mw_profile_snapshot_write(const char *snap_path, const char *profile_path,
                                     const mw_profile *p);
/* The snapshot at snap_path into *out where it was written from the profile
 * at profile_path by a build that lays the structure out as this one does:
 * 0; else MW_ERR_FOREIGN (another profile or build), MW_ERR_CORRUPT (a
 * damaged file: a size, count or string out of bounds) or -errno, and *out
 * zeroed. Never reads past the file or the structure; no malloc, no log:
 * safe where mw_profile_load is, and cheaper. */
MW_API int mw_profile_snapshot_read(const char *snap_path, const char *profile_path,
                                    mw_profile *out);

/* A verdict string of the profile as the enum ("unavailable" for one memwatch
 * does not know). */
MW_API mw_verdict mw_verdict_parse(const char *s);

#ifdef __cplusplus
}
#endif
#endif
