/*
 * tests/report/test_levels.c: the pure computation of the memory-load
 * levels (include/memwatch/levels.h, report/levels.c): META values parsed
 * (malformed ones ignored), the inverse lookup of a latency on the
 * calibrated curve (below the first point, above the last, between points,
 * points of equal latency), the cap at the peak, the level (bound only where
 * the profile could saturate memory) and the band (inclusive edges).
 */
#include "mw_test.h"

#include <memwatch/levels.h>

#include <errno.h>

/* m from META lines "key=value" (NULL-terminated pairs) */
static void meta(mw_lvl_meta *m, const char *const *kv)
{
    mw_lvl_meta_init(m);
    for (; kv[0]; kv += 2)
        mw_lvl_meta_set(m, kv[0], kv[1]);
}

static double share(const mw_lvl_meta *m, double lat)
{
    return mw_lvl_interval(m, 1, lat, 0).share;
}

static void curve_lookup(void)
{
    /* GB/s : ns; peak 35 GB/s */
    static const char *const kv[] = {"lat_curve", "0:100,10:110,20:130,30:160,35:200", "peak_bw",
                                     "35e9", NULL};
    mw_lvl_meta m;
    meta(&m, kv);
    MW_CHECK_INT(m.ncurve, 5);
    MW_CHECK_NEAR(share(&m, 90), 0, 0);            /* below the first point: its bandwidth, 0 */
    MW_CHECK_NEAR(share(&m, 100), 0, 0);           /* at the first point */
    MW_CHECK_NEAR(share(&m, 105), 5.0 / 35, 1e-9); /* half-way to 10 GB/s */
    MW_CHECK_NEAR(share(&m, 145), 25.0 / 35, 1e-9);
    MW_CHECK_NEAR(share(&m, 190), 33.75 / 35, 1e-9);
    MW_CHECK_NEAR(share(&m, 200), 1, 1e-12); /* at the last point */
    MW_CHECK_NEAR(share(&m, 900), 1, 1e-12); /* above it */
    MW_CHECK_INT(mw_lvl_interval(&m, 1, 105, 0).level, MW_LEVEL_LOW);
    MW_CHECK_INT(mw_lvl_interval(&m, 1, 145, 0).level, MW_LEVEL_MEDIUM);
    MW_CHECK_INT(mw_lvl_interval(&m, 1, 190, 0).level, MW_LEVEL_HIGH);
    /* the edges of the levels: 0.5 and 0.8 of the peak exactly */
    static const char *const edge[] = {"lat_curve", "0:100,10:200", "peak_bw", "10e9", NULL};
    meta(&m, edge);
    MW_CHECK_INT(mw_lvl_interval(&m, 1, 149.999, 0).level, MW_LEVEL_LOW);
    MW_CHECK_INT(mw_lvl_interval(&m, 1, 150, 0).level, MW_LEVEL_MEDIUM);
    MW_CHECK_INT(mw_lvl_interval(&m, 1, 179.999, 0).level, MW_LEVEL_MEDIUM);
    MW_CHECK_INT(mw_lvl_interval(&m, 1, 180, 0).level, MW_LEVEL_HIGH);
    /* a peak below the curve's top: capped at 1 */
    static const char *const low_peak[] = {"lat_curve", "0:100,40:200", "peak_bw", "20e9", NULL};
    meta(&m, low_peak);
    MW_CHECK_NEAR(share(&m, 190), 1, 1e-12);
    /* no peak_bw: the curve's last point is the peak */
    static const char *const no_peak[] = {"lat_curve", "0:100,40:200", NULL};
    meta(&m, no_peak);
    MW_CHECK_NEAR(share(&m, 150), 0.5, 1e-12);
}

static void equal_points(void)
{
    /* two points of equal latency: the highest bandwidth among them */
    static const char *const kv[] = {"lat_curve", "0:100,10:100,20:150", "peak_bw", "20e9", NULL};
    mw_lvl_meta m;
    meta(&m, kv);
    MW_CHECK_NEAR(share(&m, 99.9), 0, 0);
    MW_CHECK_NEAR(share(&m, 100), 0.5, 1e-12);
    MW_CHECK_NEAR(share(&m, 125), 0.75, 1e-12);
    /* a plateau of equal bandwidth: latency rises, the share stays */
    static const char *const plateau[] = {"lat_curve", "0:100,30:150,30:200", "peak_bw", "30e9",
                                          NULL};
    meta(&m, plateau);
    MW_CHECK_NEAR(share(&m, 175), 1, 1e-12);
    /* the last points equal: at or above them, the last point's bandwidth */
    static const char *const tail[] = {"lat_curve", "0:100,20:150,30:150", "peak_bw", "30e9", NULL};
    meta(&m, tail);
    MW_CHECK_NEAR(share(&m, 150), 1, 1e-12);
    /* one point: below, at and above it */
    static const char *const one[] = {"lat_curve", "0:120", "peak_bw", "30e9", NULL};
    meta(&m, one);
    MW_CHECK_NEAR(share(&m, 100), 0, 0);
    MW_CHECK_NEAR(share(&m, 500), 0, 0);
    /* one point of 0 GB/s and no peak: no share can be told */
    static const char *const zero[] = {"lat_curve", "0:120", NULL};
    meta(&m, zero);
    MW_CHECK(share(&m, 500) < 0, "share %g without a peak", share(&m, 500));
    MW_CHECK_INT(mw_lvl_interval(&m, 1, 500, 0).level, MW_LEVEL_NONE);
}

static void malformed(void)
{
    double bw[MW_LAT_CURVE_MAX + 1], ns[MW_LAT_CURVE_MAX + 1];
    static const char *const bad[] = {
        "",       "abc",           "0:100,",   "0:100;10:110",   "10:100,5:110", "0:100,10:90",
        "-1:100", "nan:100",       "0:inf",    "0:100,10:110 x", "0:100:5",      ":100",
        "0:",     "0:100,,10:110", "1e400:100"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        MW_CHECK(mw_lat_curve_parse(bad[i], bw, ns, MW_LAT_CURVE_MAX) == -EINVAL,
                 "curve \"%s\" taken", bad[i]);
    MW_CHECK_INT(mw_lat_curve_parse(NULL, bw, ns, MW_LAT_CURVE_MAX), -EINVAL);
    /* 24 points are the most */
    char c[1024];
    size_t k = 0;
    for (int i = 0; i < MW_LAT_CURVE_MAX + 1; i++)
        k += (size_t)snprintf(c + k, sizeof c - k, "%s%d:%d", i ? "," : "", i, 100 + i);
    MW_CHECK_INT(mw_lat_curve_parse(c, bw, ns, MW_LAT_CURVE_MAX), -EINVAL);
    *strrchr(c, ',') = 0;
    MW_CHECK_INT(mw_lat_curve_parse(c, bw, ns, MW_LAT_CURVE_MAX), MW_LAT_CURVE_MAX);
    MW_CHECK_INT(mw_lat_curve_parse(" 1.5:100, 2:110 ", bw, ns, MW_LAT_CURVE_MAX), 2);
    MW_CHECK_NEAR(bw[0], 1.5, 0);

    /* META values: malformed ones leave what was there */
    mw_lvl_meta m;
    mw_lvl_meta_init(&m);
    MW_CHECK_INT(m.saturable, -1);
    MW_CHECK_INT(mw_lvl_meta_set(&m, "saturable", "1"), 0);
    MW_CHECK_INT(m.saturable, 1);
    static const char *const bad_sat[] = {"2", "yes", "", " 1", "10", "1x", "-1"};
    for (size_t i = 0; i < sizeof bad_sat / sizeof bad_sat[0]; i++)
        MW_CHECK(mw_lvl_meta_set(&m, "saturable", bad_sat[i]) == -EINVAL && m.saturable == 1,
                 "saturable=\"%s\" taken", bad_sat[i]);
    MW_CHECK_INT(mw_lvl_meta_set(&m, "saturable", "0"), 0);
    MW_CHECK_INT(m.saturable, 0);
    MW_CHECK_INT(mw_lvl_meta_set(&m, "threshold_band_ns", "150.5,170"), 0);
    static const char *const bad_band[] = {"170,150", "150",  "a,b",         "150,",
                                           ",170",    "-1,5", "150,170,190", "150;170"};
    for (size_t i = 0; i < sizeof bad_band / sizeof bad_band[0]; i++)
        MW_CHECK(mw_lvl_meta_set(&m, "threshold_band_ns", bad_band[i]) == -EINVAL &&
                     m.band_lo == 150.5 && m.band_hi == 170,
                 "band \"%s\" taken", bad_band[i]);
    MW_CHECK_INT(mw_lvl_meta_set(&m, "lat_curve", "0:100,10:200"), 0);
    MW_CHECK_INT(mw_lvl_meta_set(&m, "lat_curve", "garbage"), -EINVAL);
    MW_CHECK_INT(m.ncurve, 2);
    MW_CHECK_INT(mw_lvl_meta_set(&m, "peak_bw", "1e10"), 0);
    static const char *const bad_peak[] = {"0", "-5", "x", "", "1e10 GB"};
    for (size_t i = 0; i < sizeof bad_peak / sizeof bad_peak[0]; i++)
        MW_CHECK(mw_lvl_meta_set(&m, "peak_bw", bad_peak[i]) == -EINVAL && m.peak_bw == 1e10,
                 "peak_bw \"%s\" taken", bad_peak[i]);
    MW_CHECK_INT(mw_lvl_meta_set(&m, "threshold_ns", "150"), 1); /* not a key of the levels */
    MW_CHECK_INT(mw_lvl_meta_set(&m, NULL, "1"), -EINVAL);
    MW_CHECK_INT(mw_lvl_meta_set(&m, "saturable", NULL), -EINVAL);
}

static void level_and_band(void)
{
    mw_lvl_meta m;
    mw_lvl_meta_init(&m);
    /* nothing known: nothing said */
    mw_iv_level r = mw_lvl_interval(&m, 1, 150, 0);
    MW_CHECK(r.share < 0 && r.level == MW_LEVEL_NONE && r.in_band == -1, "empty META");
    /* flagged: bound where saturable is 1 or unknown, never where it is 0 */
    MW_CHECK_INT(mw_lvl_interval(&m, 1, 150, 1).level, MW_LEVEL_BOUND);
    m.saturable = 1;
    MW_CHECK_INT(mw_lvl_interval(&m, 1, 150, 1).level, MW_LEVEL_BOUND);
    m.saturable = 0;
    MW_CHECK_INT(mw_lvl_interval(&m, 1, 150, 1).level, MW_LEVEL_NONE);
    mw_lvl_meta_set(&m, "lat_curve", "0:100,10:200");
    mw_lvl_meta_set(&m, "peak_bw", "10e9");
    MW_CHECK_INT(mw_lvl_interval(&m, 1, 195, 1).level, MW_LEVEL_HIGH);
    m.saturable = 1;
    MW_CHECK_INT(mw_lvl_interval(&m, 1, 105, 1).level, MW_LEVEL_BOUND);
    /* no latency: no share, no band */
    r = mw_lvl_interval(&m, 0, 195, 0);
    MW_CHECK(r.share < 0 && r.level == MW_LEVEL_NONE && r.in_band == -1, "no latency");
    /* the band, edges included */
    mw_lvl_meta_set(&m, "threshold_band_ns", "150,170");
    MW_CHECK_INT(mw_lvl_interval(&m, 1, 149.9, 0).in_band, 0);
    MW_CHECK_INT(mw_lvl_interval(&m, 1, 150, 0).in_band, 1);
    MW_CHECK_INT(mw_lvl_interval(&m, 1, 170, 0).in_band, 1);
    MW_CHECK_INT(mw_lvl_interval(&m, 1, 170.1, 0).in_band, 0);
    MW_CHECK_INT(mw_lvl_interval(&m, 0, 160, 0).in_band, -1);
    MW_CHECK_STR(mw_level_name(MW_LEVEL_LOW), "low");
    MW_CHECK_STR(mw_level_name(MW_LEVEL_MEDIUM), "medium");
    MW_CHECK_STR(mw_level_name(MW_LEVEL_HIGH), "high");
    MW_CHECK_STR(mw_level_name(MW_LEVEL_BOUND), "bound");
    MW_CHECK(mw_level_name(MW_LEVEL_NONE) == NULL, "a name for no level");
}

int main(void)
{
    curve_lookup();
    equal_points();
    malformed();
    level_and_band();
    return mw_test_done();
}
