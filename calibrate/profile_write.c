/*
 * calibrate/profile_write.c: writes the machine profile (validate.h,
 * mw_profile_write) in the format of docs/profile-format.md, which
 * counters/profile.c reads back.
 *
 * Owns: the JSON layout of the profile. May call: cJSON, libc, mw_cpu_identify,
 * mw_machine_identity, mw_mkdir_parents (counters/dirs.h). Threading: no
 * shared state; not for signal handlers.
 * The file is written to "<path>.tmp.<pid>", flushed with fsync and renamed over
 * <path>, so a reader sees either the old profile or the new one, never half.
 */
#include "bench_int.h"
#include "dirs.h"

#include <memwatch/bench.h>
#include <memwatch/catalogue.h>
#include <memwatch/validate.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

/* Adds a number only when it is finite (JSON has no NaN; cJSON would write null). */
/* cJSON prints a double with 15 digits whenever that reads back "almost"
 * equal, which loses the last bits: a profile must read back exactly what was
 * written, so numbers go out with 17 significant digits (null if not finite). */
static cJSON *pw_exact(cJSON *o, const char *k, double v)
{
    char b[40];
    if (!isfinite(v))
        return cJSON_AddNullToObject(o, k);
    snprintf(b, sizeof b, "%.17g", v);
    return cJSON_AddRawToObject(o, k, b);
}

static void pw_num(cJSON *o, const char *k, double v)
{
    if (isfinite(v))
        pw_exact(o, k, v);
}

static cJSON *pw_machine(void)
{
    cJSON *m = cJSON_CreateObject();
    if (!m)
        return NULL;
    mw_cpu_id cpu;
    if (mw_cpu_identify(NULL, &cpu) == 0) {
        cJSON_AddStringToObject(m, "vendor", cpu.vendor);
        cJSON_AddStringToObject(m, "cpu_model", cpu.model_name);
        pw_exact(m, "family", cpu.family);
        pw_exact(m, "model", cpu.model);
        pw_exact(m, "stepping", cpu.stepping);
        cJSON_AddStringToObject(m, "microcode", cpu.microcode);
        cJSON_AddStringToObject(m, "uarch", mw_uarch_name(cpu.uarch));
    }
    struct utsname u;
    if (uname(&u) == 0) {
        cJSON_AddStringToObject(m, "kernel", u.release);
        cJSON_AddStringToObject(m, "arch", u.machine);
    }
    pw_exact(m, "cpus", (double)sysconf(_SC_NPROCESSORS_CONF));
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psz > 0)
        pw_exact(m, "mem_total_bytes", (double)pages * (double)psz);
    return m;
}

static cJSON *pw_hierarchy(const mw_calib_results *c)
{
    cJSON *h = cJSON_CreateObject();
    if (!h)
        return NULL;
    mw_cache_info_json(h, "caches", &c->cache);
    if (c->ran & MW_CALIB_LADDER) {
        cJSON *lv = cJSON_AddArrayToObject(h, "latency_levels");
        for (unsigned i = 0; lv && i < c->ladder.nlevels && i < MW_LADDER_MAX_LEVELS; i++) {
            const mw_ladder_level *l = &c->ladder.level[i];
            cJSON *o = cJSON_CreateObject();
            if (!o)
                break;
            pw_exact(o, "level", l->level);
            cJSON_AddBoolToObject(o, "memory", l->is_memory);
            pw_num(o, "ns", l->ns);
            pw_num(o, "cycles", l->cycles);
            pw_exact(o, "size", (double)l->size);
            cJSON_AddItemToArray(lv, o);
        }
        pw_num(h, "dram_ns", c->ladder.dram_ns);
    }
    if (c->ran & MW_CALIB_TRIAD) {
        pw_num(h, "triad_bw", c->triad[MW_TRIAD_NORMAL].bw_stats.best);
        pw_num(h, "triad_nt_bw", c->triad[MW_TRIAD_NT].bw_stats.best);
    }
    if (c->ran & MW_CALIB_SWEEP)
        pw_num(h, "read_sweep_peak_bw", c->sweep.peak_bw);
    if (c->ran & MW_CALIB_LOADED)
        pw_num(h, "loaded_idle_ns", c->loaded.idle_ns);
    if (c->ran & MW_CALIB_MLP)
        pw_num(h, "outstanding_misses", c->mlp.outstanding);
    return h;
}

static void pw_lat(cJSON *o, const mw_lat_verdict *v)
{
    pw_num(o, "idle_ns", v->th.idle_ns);
    pw_num(o, "knee_ns", v->th.knee_ns);
    pw_num(o, "separator_ns", v->th.sep_ns);
    pw_num(o, "peak_ns", v->th.peak_ns);
    pw_num(o, "peak_bw", v->th.peak_bw);
    pw_num(o, "rise", v->th.rise);
    cJSON_AddBoolToObject(o, "saturated", v->th.saturated);
    cJSON_AddStringToObject(o, "threshold_rule", v->th.rule);
    pw_num(o, "cv_max", v->cv_max);
    pw_exact(o, "n_low", v->n_low);
    pw_exact(o, "n_high", v->n_high);
    pw_num(o, "direct_ratio", v->direct_ratio);
    cJSON *s = cJSON_AddObjectToObject(o, "separation");
    if (s) {
        pw_exact(s, "idle_n", v->n_idle);
        pw_num(s, "idle_min_ns", v->idle_min);
        pw_num(s, "idle_max_ns", v->idle_max);
        pw_exact(s, "saturated_n", v->n_sat);
        pw_num(s, "saturated_min_ns", v->sat_min);
        pw_num(s, "saturated_max_ns", v->sat_max);
        cJSON_AddBoolToObject(s, "overlap", v->overlap);
    }
}

static void pw_bw(cJSON *o, const mw_bw_verdict *v)
{
    pw_exact(o, "runs", v->n);
    pw_num(o, "ratio", v->ratio);
    pw_num(o, "ratio_prefetch_on", v->ratio_on);
    pw_num(o, "ratio_prefetch_off", v->ratio_off);
    pw_num(o, "ratio_min", v->lo);
    pw_num(o, "ratio_max", v->hi);
    pw_num(o, "missed", v->missed);
}

static cJSON *pw_methods(const mw_profile *p, const mw_validation *v)
{
    cJSON *arr = cJSON_CreateArray();
    if (!arr)
        return NULL;
    for (unsigned i = 0; i < p->n_methods && i < MW_PROFILE_MAX_METHODS; i++) {
        const mw_profile_method *m = &p->methods[i];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddStringToObject(o, "name", m->name);
        cJSON_AddStringToObject(o, "verdict", m->verdict);
        pw_num(o, "factor", m->factor);
        pw_num(o, "cv", m->cv);
        pw_num(o, "false_pos", m->false_pos);
        pw_num(o, "false_neg", m->false_neg);
        pw_num(o, "threshold_ns", m->threshold);
        cJSON_AddStringToObject(o, "reason", m->reason);
        for (unsigned k = 0; v && k < v->nmethods; k++) {
            const mw_val_method *vm = &v->method[k];
            if (strcmp(vm->name, m->name))
                continue;
            cJSON_AddStringToObject(o, "quantity", vm->latency ? "latency" : "dram_bytes");
            cJSON_AddBoolToObject(o, "available", vm->available);
            if (vm->available && vm->latency && vm->lat.verdict != MW_VERDICT_UNAVAILABLE)
                pw_lat(o, &vm->lat);
            if (vm->available && !vm->latency && vm->bw.verdict != MW_VERDICT_UNAVAILABLE)
                pw_bw(o, &vm->bw);
        }
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static cJSON *pw_evidence(const mw_validation *v)
{
    cJSON *e = cJSON_CreateObject();
    if (!e)
        return NULL;
    cJSON_AddStringToObject(e, "hardware", v->hw_note);
    cJSON_AddStringToObject(e, "prefetchers", v->prefetch_note);
    cJSON *pl = cJSON_AddObjectToObject(e, "probe_lat");
    if (!pl)
        return e;
    pw_exact(pl, "lines", v->probe_lines);
    pw_exact(pl, "bursts", v->probe_bursts);
    pw_num(pl, "cost_ns", v->probe_cost_ns);
    pw_exact(pl, "cpu", v->probe_cpu);
    cJSON *pts = cJSON_AddArrayToObject(pl, "points");
    for (unsigned i = 0; pts && i < v->npoints && i < MW_VAL_MAX_POINTS; i++) {
        const mw_val_point *p = &v->point[i];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        pw_exact(o, "threads", p->threads);
        pw_exact(o, "delay", p->delay);
        pw_num(o, "bw", p->bw);
        if (p->mix) { /* points of the other read/write mixes (reads100 has no key) */
            cJSON_AddStringToObject(o, "mix", mw_mix_name((mw_read_mix)p->mix));
            pw_num(o, "read_bw", p->read_bw);
            pw_num(o, "write_bw", p->write_bw);
        }
        if (p->direct_ns > 0)
            pw_num(o, "direct_ns", p->direct_ns);
        cJSON *ns = cJSON_AddArrayToObject(o, "ns");
        for (unsigned k = 0; ns && k < p->n && k < MW_VAL_MAX_SAMPLES; k++)
            cJSON_AddItemToArray(ns, cJSON_CreateNumber(round(p->ns[k] * 10) / 10));
        cJSON_AddItemToArray(pts, o);
    }
    return e;
}

/* "mixes": one saturation curve per read/write mix (docs/profile-format.md) */
static cJSON *pw_mixes(const mw_profile *p)
{
    if (!p->n_mixes)
        return NULL;
    cJSON *arr = cJSON_CreateArray();
    for (unsigned i = 0; arr && i < p->n_mixes && i < MW_PROFILE_MAX_MIXES; i++) {
        const mw_profile_mix *m = &p->mixes[i];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddStringToObject(o, "name", m->name);
        pw_exact(o, "read_share", m->read_share);
        cJSON_AddBoolToObject(o, "nontemporal", m->nontemporal);
        pw_exact(o, "threshold_ns", m->threshold_ns);
        pw_exact(o, "peak_bw", m->peak_bw);
        pw_exact(o, "peak_ns", m->peak_ns);
        cJSON_AddBoolToObject(o, "saturated", m->saturated);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

/* What the flag can claim: saturable, the band, where the threshold comes
 * from, the curve and the note (docs/profile-format.md). */
static void pw_claims(cJSON *root, const mw_profile *p)
{
    if (p->saturable != MW_SAT_UNKNOWN)
        cJSON_AddBoolToObject(root, "saturable", p->saturable == MW_SAT_YES);
    if (p->band_hi_ns > 0 && isfinite(p->band_lo_ns) && isfinite(p->band_hi_ns)) {
        cJSON *b = cJSON_AddArrayToObject(root, "threshold_band_ns");
        if (b) {
            cJSON_AddItemToArray(b, cJSON_CreateNumber(p->band_lo_ns));
            cJSON_AddItemToArray(b, cJSON_CreateNumber(p->band_hi_ns));
        }
    }
    if (p->lat_method[0])
        cJSON_AddStringToObject(root, "threshold_from", p->from_shapes ? "shapes" : "sweep");
    if (p->writes_threshold_ns > 0 && isfinite(p->writes_threshold_ns)) {
        cJSON_AddNumberToObject(root, "writes_threshold_ns", p->writes_threshold_ns);
        cJSON *b = cJSON_AddArrayToObject(root, "writes_band_ns");
        if (b) {
            cJSON_AddItemToArray(b, cJSON_CreateNumber(p->writes_band_lo_ns));
            cJSON_AddItemToArray(b, cJSON_CreateNumber(p->writes_band_hi_ns));
        }
    }
    if (p->threshold_note[0])
        cJSON_AddStringToObject(root, "threshold_note", p->threshold_note);
    if (!p->n_curve)
        return;
    cJSON *c = cJSON_AddArrayToObject(root, "curve");
    for (unsigned i = 0; c && i < p->n_curve && i < MW_PROFILE_MAX_CURVE; i++) {
        cJSON *pt = cJSON_CreateArray();
        if (!pt)
            break;
        cJSON_AddItemToArray(pt, cJSON_CreateNumber(p->curve[i].bw));
        cJSON_AddItemToArray(pt, cJSON_CreateNumber(p->curve[i].ns));
        cJSON_AddItemToArray(c, pt);
    }
}

/* The load shapes' table: what calibrate printed, with the rule's result. */
static cJSON *pw_shapes(const mw_validation *v)
{
    const mw_shapes_threshold *t = &v->shapes;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "rule", t->rule);
    pw_num(o, "idle_ns", t->idle_ns);
    pw_num(o, "saturating_ns", t->sat_ns);
    pw_num(o, "rise", t->rise);
    cJSON_AddBoolToObject(o, "saturated", t->saturated);
    pw_num(o, "threshold_ns", t->threshold_ns);
    pw_num(o, "band_lo_ns", t->band_lo);
    pw_num(o, "band_hi_ns", t->band_hi);
    pw_num(o, "worst_rate", t->worst_rate);
    cJSON_AddBoolToObject(o, "feasible", t->feasible);
    pw_exact(o, "rounds", v->shape_rounds);
    pw_num(o, "seconds", v->shape_s);
    if (v->shape_note[0])
        cJSON_AddStringToObject(o, "note", v->shape_note);
    cJSON *arr = cJSON_AddArrayToObject(o, "loads");
    for (unsigned i = 0; arr && i < v->nshapes; i++) {
        const struct mw_val_shape *s = &v->shape[i];
        const mw_shape_stat *st = &t->stat[i];
        cJSON *e = cJSON_CreateObject();
        if (!e)
            break;
        cJSON_AddStringToObject(e, "name", s->name);
        cJSON_AddStringToObject(e, "mode", s->mode);
        cJSON_AddStringToObject(e, "class", st->cls == MW_SHAPE_SATURATING ? "saturating"
                                            : st->cls == MW_SHAPE_LIGHT  ? "light"
                                                                         : "neither");
        pw_exact(e, "threads", s->threads);
        pw_exact(e, "processes", s->procs);
        pw_num(e, "bw", s->bw);
        pw_num(e, "share_of_mode_peak", st->share);
        pw_exact(e, "readings", s->n);
        pw_num(e, "p5_ns", st->p5);
        pw_num(e, "p50_ns", st->p50);
        pw_num(e, "p95_ns", st->p95);
        pw_num(e, "flagged", st->flagged);
        cJSON_AddItemToArray(arr, e);
    }
    return o;
}

MW_API int mw_profile_write(const char *path, const mw_profile *p, const mw_validation *v,
                            const struct mw_calib_results *calib)
{
    if (!path || !p)
        return -EINVAL;
    if (!p->identity[0] || !isfinite(p->peak_bw) || !isfinite(p->idle_latency_ns) ||
        !isfinite(p->lat_threshold_ns) || !isfinite(p->bw_factor)) {
        mw_log(MW_LOG_ERROR, "profile: refusing to write a profile without identity or with a "
                             "non-finite figure");
        return -EINVAL;
    }
    int rc = 0;
    char *text = NULL, tmp[PATH_MAX];
    tmp[0] = 0;
    int fd = -1;
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return -ENOMEM;
    cJSON_AddStringToObject(root, "schema", MW_PROFILE_SCHEMA);
    pw_exact(root, "version", MW_PROFILE_VERSION);
    cJSON_AddStringToObject(root, "identity", p->identity);
    cJSON_AddStringToObject(root, "created", p->created);
    cJSON_AddStringToObject(root, "memwatch_version", mw_version());
    pw_num(root, "tsc_hz", p->tsc_hz);
    pw_exact(root, "peak_bw", p->peak_bw);
    pw_exact(root, "idle_latency_ns", p->idle_latency_ns);
    cJSON_AddStringToObject(root, "lat_method", p->lat_method);
    pw_exact(root, "lat_threshold_ns", p->lat_threshold_ns);
    cJSON_AddStringToObject(root, "bw_method", p->bw_method);
    pw_exact(root, "bw_factor", p->bw_factor);
    cJSON *item = pw_methods(p, v);
    if (item)
        cJSON_AddItemToObject(root, "methods", item);
    if ((item = pw_mixes(p)))
        cJSON_AddItemToObject(root, "mixes", item);
    pw_claims(root, p);
    if (v && v->nshapes && (item = pw_shapes(v)))
        cJSON_AddItemToObject(root, "shapes", item);
    if ((item = pw_machine()))
        cJSON_AddItemToObject(root, "machine", item);
    if (calib && (item = pw_hierarchy(calib)))
        cJSON_AddItemToObject(root, "hierarchy", item);
    if (v && (item = pw_evidence(v)))
        cJSON_AddItemToObject(root, "evidence", item);
    text = cJSON_Print(root);
    if (!text) {
        rc = -ENOMEM;
        goto out;
    }
    if ((rc = mw_mkdir_parents(path)) < 0) {
        mw_log(MW_LOG_ERROR, "profile: cannot create the directory of %s: %s", path,
               mw_strerror(rc));
        goto out;
    }
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        rc = -ENAMETOOLONG;
        goto out;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600); /* the owner's only */
    if (fd >= 0)
        (void)fchmod(fd, 0600);
    if (fd < 0) {
        rc = -errno;
        mw_log(MW_LOG_ERROR, "profile: cannot create %s: %s", tmp, mw_strerror(rc));
        goto out;
    }
    size_t len = strlen(text), off = 0;
    text[len] = '\n'; /* replace the NUL: the file ends with a newline */
    len++;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            rc = -errno;
            goto out;
        }
        off += (size_t)w;
    }
    if (fsync(fd) < 0 || close(fd) < 0) {
        rc = -errno;
        fd = -1;
        goto out;
    }
    fd = -1;
    if (rename(tmp, path) < 0) {
        rc = -errno;
        mw_log(MW_LOG_ERROR, "profile: cannot rename %s to %s: %s", tmp, path, mw_strerror(rc));
        goto out;
    }
out:
    if (fd >= 0)
        close(fd);
    if (rc < 0 && tmp[0])
        unlink(tmp);
    if (text)
        cJSON_free(text);
    cJSON_Delete(root);
    return rc;
}
