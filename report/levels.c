/*
 * report/levels.c: memory-load levels of an interval from its process's
 * META (include/memwatch/levels.h; docs/saturation.md, "Levels and the
 * band"): the META values parsed, the inverse lookup of a latency on the
 * calibrated latency-bandwidth curve, the level and the band.
 *
 * May call: libc. Pure: no I/O, no allocation, no global state.
 */
#include <memwatch/levels.h>
#include <memwatch/meta_keys.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void mw_lvl_meta_init(mw_lvl_meta *m)
{
    memset(m, 0, sizeof *m);
    m->saturable = -1;
}

/* A finite number >= 0 at *p, which moves past it; -1 when there is none. */
static double nonneg(const char **p)
{
    char *e;
    double v = strtod(*p, &e);
    if (e == *p || !isfinite(v) || v < 0)
        return -1;
    *p = e;
    return v;
}

/* The rest of the text is only blanks. */
static int blank_rest(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return *p == 0;
}

int mw_lat_curve_parse(const char *text, double *bw, double *ns, int max)
{
    const char *p = text;
    int n = 0;
    if (!p)
        return -EINVAL;
    for (;;) {
        if (n == max)
            return -EINVAL; /* more points than the format allows */
        double b = nonneg(&p);
        if (b < 0 || *p++ != ':')
            return -EINVAL;
        double t = nonneg(&p);
        if (t < 0 || (n > 0 && (b < bw[n - 1] || t < ns[n - 1])))
            return -EINVAL; /* not a monotone envelope */
        bw[n] = b;
        ns[n] = t;
        n++;
        if (*p != ',')
            break;
        p++;
    }
    return blank_rest(p) ? n : -EINVAL;
}

/* "LO,HI" with 0 <= LO <= HI. */
static int parse_band(const char *v, double *lo, double *hi)
{
    const char *p = v;
    double a = nonneg(&p);
    if (a < 0 || *p++ != ',')
        return -EINVAL;
    double b = nonneg(&p);
    if (b < a || !blank_rest(p))
        return -EINVAL;
    *lo = a;
    *hi = b;
    return 0;
}

int mw_lvl_meta_set(mw_lvl_meta *m, const char *key, const char *value)
{
    if (!key || !value)
        return -EINVAL;
    const char *p = value;
    if (!strcmp(key, mw_meta_key(MW_META_SATURABLE))) {
        if ((value[0] != '0' && value[0] != '1') || !blank_rest(value + 1))
            return -EINVAL;
        m->saturable = value[0] == '1';
    } else if (!strcmp(key, mw_meta_key(MW_META_THRESHOLD_BAND_NS))) {
        if (parse_band(value, &m->band_lo, &m->band_hi))
            return -EINVAL;
        m->have_band = 1;
    } else if (!strcmp(key, mw_meta_key(MW_META_LAT_CURVE))) {
        double bw[MW_LAT_CURVE_MAX], ns[MW_LAT_CURVE_MAX];
        int n = mw_lat_curve_parse(value, bw, ns, MW_LAT_CURVE_MAX);
        if (n <= 0)
            return -EINVAL;
        memcpy(m->curve_bw, bw, sizeof bw);
        memcpy(m->curve_ns, ns, sizeof ns);
        m->ncurve = n;
    } else if (!strcmp(key, mw_meta_key(MW_META_PEAK_BW))) {
        double v = nonneg(&p);
        if (v <= 0 || !blank_rest(p))
            return -EINVAL;
        m->peak_bw = v;
    } else {
        return 1;
    }
    return 0;
}

/* The curve's bandwidth (GB/s) at lat: the contract of mw_lvl_interval. */
static double curve_bw_at(const mw_lvl_meta *m, double lat)
{
    int n = m->ncurve, k = -1;
    for (int i = 0; i < n && m->curve_ns[i] <= lat; i++)
        k = i; /* the last point at or below lat */
    if (k < 0)
        return m->curve_bw[0];
    if (k == n - 1)
        return m->curve_bw[n - 1];
    /* curve_ns[k] <= lat < curve_ns[k + 1]: a rising segment */
    double f = (lat - m->curve_ns[k]) / (m->curve_ns[k + 1] - m->curve_ns[k]);
    return m->curve_bw[k] + f * (m->curve_bw[k + 1] - m->curve_bw[k]);
}

mw_iv_level mw_lvl_interval(const mw_lvl_meta *m, int has_lat, double lat_ns, int flagged)
{
    mw_iv_level r = {-1, MW_LEVEL_NONE, -1};
    has_lat = has_lat && isfinite(lat_ns);
    if (has_lat && m->ncurve > 0) {
        double peak = m->peak_bw > 0 ? m->peak_bw : m->curve_bw[m->ncurve - 1] * 1e9;
        if (peak > 0) {
            double s = curve_bw_at(m, lat_ns) * 1e9 / peak;
            r.share = s > 1 ? 1 : s;
        }
    }
    if (flagged && m->saturable != 0)
        r.level = MW_LEVEL_BOUND;
    else if (r.share >= MW_LEVEL_HIGH_SHARE)
        r.level = MW_LEVEL_HIGH;
    else if (r.share >= MW_LEVEL_MEDIUM_SHARE)
        r.level = MW_LEVEL_MEDIUM;
    else if (r.share >= 0)
        r.level = MW_LEVEL_LOW;
    if (has_lat && m->have_band)
        r.in_band = lat_ns >= m->band_lo && lat_ns <= m->band_hi;
    return r;
}

const char *mw_level_name(mw_level l)
{
    static const char *const names[MW_LEVEL_COUNT] = {"low", "medium", "high", "bound"};
    return l >= 0 && l < MW_LEVEL_COUNT ? names[l] : NULL;
}
