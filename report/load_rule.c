/*
 * report/load_rule.c: the rule that names other processes as the likely
 * source of the flagged intervals (report/load.h; docs/saturation.md,
 * "Whose load is it").
 *
 * Owns: nothing but the rule. Pure: no I/O, no state.
 */
#include "load.h"

int mw_load_slot_loaded(const mw_load_slot *s)
{
    double rec =
        s->recorded_cpus > MW_LOAD_RECORDED_FLOOR ? s->recorded_cpus : MW_LOAD_RECORDED_FLOOR;
    return s->outside_cpus >= MW_LOAD_OUTSIDE_MIN && s->outside_cpus >= MW_LOAD_RATIO * rec;
}

void mw_load_judge(const mw_load_slot *s, size_t n, mw_load_verdict *v)
{
    double fl = 0, ld = 0, rec = 0, wait = 0, out = 0;
    for (size_t i = 0; i < n; i++) {
        double f = s[i].flagged_ns < s[i].len_ns ? s[i].flagged_ns : s[i].len_ns;
        if (!(f > 0))
            continue;
        fl += f;
        if (!mw_load_slot_loaded(&s[i]))
            continue;
        ld += f;
        rec += f * s[i].recorded_cpus;
        wait += f * s[i].recorded_wait_cpus;
        out += f * s[i].outside_cpus;
    }
    v->flagged_ns = fl;
    v->loaded_ns = ld;
    v->share = fl > 0 ? ld / fl : 0;
    v->recorded_cpus = ld > 0 ? rec / ld : 0;
    v->recorded_wait_cpus = ld > 0 ? wait / ld : 0;
    v->outside_cpus = ld > 0 ? out / ld : 0;
    v->others = fl > 0 && v->share >= MW_LOAD_SHARE;
}
