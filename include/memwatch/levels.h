/*
 * memwatch memory-load levels (docs/saturation.md, "Levels and the band").
 *
 * The preload library writes per process META keys that describe the
 * machine profile's calibration: `saturable` (1 or 0), `threshold_band_ns`
 * (LO,HI), `lat_curve` (BW:NS,... in GB/s and ns, non-decreasing) and
 * `peak_bw` (bytes/s). From them and an interval's loaded latency come:
 *   - its share of the peak bandwidth (inverse lookup of the latency on the
 *     curve, linear in ns between the two points around it),
 *   - its level: bound (flagged, on a profile that could saturate memory),
 *     else high (share >= 0.8), medium (>= 0.5) or low,
 *   - whether its latency lies in the threshold's uncertainty band.
 * Pure functions: no I/O, no allocation, no global state; thread-safe.
 * A malformed value is ignored (the key counts as absent), never a crash.
 */
#ifndef MEMWATCH_LEVELS_H
#define MEMWATCH_LEVELS_H

#include <memwatch/memwatch.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MW_LAT_CURVE_MAX 24       /* points of META lat_curve */
#define MW_LEVEL_HIGH_SHARE 0.8   /* share of the peak from which an interval is high */
#define MW_LEVEL_MEDIUM_SHARE 0.5 /* ... medium; below: low */

typedef enum mw_level {
    MW_LEVEL_NONE = -1, /* neither flagged nor a share known */
    MW_LEVEL_LOW = 0,
    MW_LEVEL_MEDIUM,
    MW_LEVEL_HIGH,
    MW_LEVEL_BOUND,
    MW_LEVEL_COUNT
} mw_level;

/* What one process's META says (absent keys: the init values). */
typedef struct mw_lvl_meta {
    int saturable;                     /* 1, 0; -1 unknown */
    int have_band;                     /* band_lo <= band_hi, both >= 0 */
    double band_lo, band_hi;           /* ns */
    int ncurve;                        /* 0: no curve */
    double curve_bw[MW_LAT_CURVE_MAX]; /* GB/s (1e9 bytes/s), non-decreasing */
    double curve_ns[MW_LAT_CURVE_MAX]; /* ns, non-decreasing */
    double peak_bw;                    /* bytes/s; 0 unknown */
} mw_lvl_meta;

/* One interval's columns (report database: intervals.bw_share, level,
 * in_band). */
typedef struct mw_iv_level {
    double share;   /* [0, 1]; < 0: unknown (no curve, no latency) */
    mw_level level; /* MW_LEVEL_NONE: unknown */
    int in_band;    /* 1, 0; -1 unknown (no band, no latency) */
} mw_iv_level;

MW_API void mw_lvl_meta_init(mw_lvl_meta *m);
/* Take one META key: 0 taken, 1 not a key of the levels, -EINVAL a
 * malformed value (ignored: m keeps what it had for that key). */
MW_API int mw_lvl_meta_set(mw_lvl_meta *m, const char *key, const char *value);
/* Parse "BW:NS,BW:NS,..." (1 to max points, finite, >= 0, both columns
 * non-decreasing): the number of points, or -EINVAL (bw and ns then
 * undefined). */
MW_API int mw_lat_curve_parse(const char *text, double *bw, double *ns, int max);
/* The interval's share, level and band from m (has_lat: it has a latency
 * reading lat_ns; flagged: MWR_IV_BW_BOUND). The share is the curve's
 * bandwidth at lat_ns over peak_bw (the curve's last point where peak_bw is
 * unknown), capped at 1: below the first point the first point's
 * bandwidth, at or above the last the last's, else linear in ns between the
 * last point at or below lat_ns and the next (points of equal ns: the
 * highest bandwidth among them). */
MW_API mw_iv_level mw_lvl_interval(const mw_lvl_meta *m, int has_lat, double lat_ns, int flagged);
/* "low", "medium", "high", "bound"; NULL for MW_LEVEL_NONE. */
MW_API const char *mw_level_name(mw_level l);

/* The META values the preload engine writes for a machine profile
 * (preload/engine.c eng_note_claims), taken from the profile directly:
 * saturable where known, the band where it has one, the curve (bytes/s ->
 * GB/s) and peak_bw (the curve's last point). For readers of the live
 * probe that hold a profile but no raw file (memwatch monitor).
 * Implemented in report/levels_profile.c. Pure. */
struct mw_profile;
MW_API void mw_lvl_meta_from_profile(mw_lvl_meta *m, const struct mw_profile *p);

#ifdef __cplusplus
}
#endif
#endif
