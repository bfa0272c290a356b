/*
 * report/levels_profile.c: the memory-load levels' inputs (mw_lvl_meta,
 * include/memwatch/levels.h) from a machine profile, as the preload engine
 * writes them into META (preload/engine.c, eng_note_claims) and
 * mw_lvl_meta_set reads them back: for a reader of live probe readings
 * that holds the profile itself (memwatch monitor, cli/cmd_monitor.c).
 *
 * May call: libc. Pure: no I/O, no allocation, no global state.
 */
#include <memwatch/levels.h>
#include <memwatch/profile.h>

void mw_lvl_meta_from_profile(mw_lvl_meta *m, const mw_profile *p)
{
    mw_lvl_meta_init(m);
    if (!p)
        return;
    if (p->saturable != MW_SAT_UNKNOWN)
        m->saturable = p->saturable == MW_SAT_YES;
    if (p->band_hi_ns > 0 && p->band_lo_ns >= 0 && p->band_lo_ns <= p->band_hi_ns) {
        m->have_band = 1;
        m->band_lo = p->band_lo_ns;
        m->band_hi = p->band_hi_ns;
    }
    /* a curve that is not a monotone envelope is ignored, as
     * mw_lat_curve_parse refuses it in META */
    unsigned n = p->n_curve < MW_LAT_CURVE_MAX ? p->n_curve : MW_LAT_CURVE_MAX;
    for (unsigned i = 0; i < n; i++) {
        double bw = p->curve[i].bw / 1e9, ns = p->curve[i].ns;
        if (!(bw >= 0) || !(ns >= 0) ||
            (i > 0 && (bw < m->curve_bw[i - 1] || ns < m->curve_ns[i - 1]))) {
            m->ncurve = 0;
            return;
        }
        m->curve_bw[i] = bw;
        m->curve_ns[i] = ns;
        m->ncurve = (int)i + 1;
    }
    /* levels are shares of the curve's own peak (engine.c: peak_bw) */
    if (m->ncurve > 0 && p->curve[n - 1].bw > 0)
        m->peak_bw = p->curve[n - 1].bw;
}
