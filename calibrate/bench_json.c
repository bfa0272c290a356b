/*
 * calibrate/bench_json.c: writes mw_calib_results as JSON with every raw
 * figure (schema: docs/calibrate-json.md, "memwatch-calibrate" version 1).
 * May call: cJSON, libc. Threading: reentrant; prints nothing itself.
 */
#include "bench_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CALIB_SCHEMA "memwatch-calibrate"
#define CALIB_VERSION 1

static cJSON *stats_json(const mw_stats *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "n", s->n);
    cJSON_AddNumberToObject(o, "best", s->best);
    cJSON_AddNumberToObject(o, "median", s->median);
    cJSON_AddNumberToObject(o, "mean", s->mean);
    cJSON_AddNumberToObject(o, "worst", s->worst);
    cJSON_AddNumberToObject(o, "cv", s->cv);
    return o;
}

cJSON *mw_cache_info_json(cJSON *parent, const char *key, const mw_cache_info *ci)
{
    cJSON *caches = cJSON_AddArrayToObject(parent, key);
    for (unsigned i = 0; caches && i < ci->n && i < MW_CACHE_MAX_LEVELS; i++) {
        const mw_cache_level *c = &ci->level[i];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            return NULL;
        cJSON_AddNumberToObject(o, "level", c->level);
        cJSON_AddStringToObject(o, "type", c->type);
        cJSON_AddNumberToObject(o, "size", (double)c->size);
        cJSON_AddNumberToObject(o, "line", c->line);
        cJSON_AddNumberToObject(o, "ways", c->ways);
        cJSON_AddNumberToObject(o, "sharing_cpus", c->sharing);
        cJSON_AddItemToArray(caches, o);
    }
    return caches;
}

static cJSON *triad_json(const mw_triad_result *t)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "stores", t->store == MW_TRIAD_NT ? "non-temporal" : "normal");
    cJSON_AddStringToObject(o, "isa", t->isa);
    cJSON_AddNumberToObject(o, "threads", t->threads);
    cJSON_AddNumberToObject(o, "elements", (double)t->elems);
    cJSON_AddNumberToObject(o, "array_bytes", (double)t->array_bytes);
    cJSON_AddNumberToObject(o, "bytes_per_iter", t->bytes_per_iter);
    cJSON_AddNumberToObject(o, "explicit_bytes_per_iter", 24);
    cJSON_AddNumberToObject(o, "bytes_per_repeat", t->bytes);
    cJSON_AddBoolToObject(o, "huge_pages", t->huge_pages);
    cJSON_AddBoolToObject(o, "verified", t->verified);
    cJSON *sec = cJSON_AddArrayToObject(o, "seconds");
    cJSON *bw = cJSON_AddArrayToObject(o, "bytes_per_s");
    for (unsigned r = 0; r < t->repeats; r++) {
        cJSON_AddItemToArray(sec, cJSON_CreateNumber(t->seconds[r]));
        cJSON_AddItemToArray(bw, cJSON_CreateNumber(t->bw[r]));
    }
    cJSON_AddItemToObject(o, "bw", stats_json(&t->bw_stats));
    cJSON_AddNumberToObject(o, "explicit_bw_best", t->explicit_bw_best);
    cJSON_AddBoolToObject(o, "free_running", t->free_running);
    cJSON_AddNumberToObject(o, "run_seconds", t->run_seconds);
    cJSON_AddNumberToObject(o, "run_bw", t->run_bw);
    return o;
}

static cJSON *sweep_point_json(const mw_sweep_point *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "threads", p->threads);
    cJSON_AddNumberToObject(o, "delay", p->delay);
    cJSON_AddNumberToObject(o, "lines", (double)p->lines);
    cJSON_AddNumberToObject(o, "bytes", p->bytes);
    cJSON_AddNumberToObject(o, "seconds", p->seconds);
    cJSON_AddNumberToObject(o, "bw", p->bw);
    cJSON_AddNumberToObject(o, "bw_window", p->bw_window);
    cJSON_AddNumberToObject(o, "windows", p->windows);
    cJSON_AddNumberToObject(o, "bw_median", p->bw_median);
    cJSON_AddNumberToObject(o, "bw_cv", p->bw_cv);
    return o;
}

static cJSON *curve_json(const mw_curve *c, const char *xname)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *x = cJSON_AddArrayToObject(o, xname), *y = cJSON_AddArrayToObject(o, "ns");
    for (unsigned i = 0; i < c->n && i < MW_CURVE_MAX; i++) {
        cJSON_AddItemToArray(x, cJSON_CreateNumber(c->x[i]));
        cJSON_AddItemToArray(y, cJSON_CreateNumber(c->ns[i]));
    }
    return o;
}

static cJSON *struct_json(const mw_struct_result *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *pf = cJSON_AddObjectToObject(o, "prefetch");
    cJSON_AddNumberToObject(pf, "random_ns", s->pf.random_ns);
    cJSON_AddNumberToObject(pf, "pair_same_ns", s->pf.pair_same_ns);
    cJSON_AddNumberToObject(pf, "pair_other_ns", s->pf.pair_other_ns);
    cJSON_AddBoolToObject(pf, "adjacent_line", s->pf.adjacent_line);
    cJSON_AddItemToObject(pf, "stride", curve_json(&s->pf.stride, "bytes"));
    cJSON_AddNumberToObject(pf, "stride_covered", (double)s->pf.stride_covered);
    cJSON_AddBoolToObject(pf, "stride_prefetch", s->pf.stride_prefetch);
    cJSON_AddItemToObject(pf, "distance", curve_json(&s->pf.distance, "lines_ahead"));
    cJSON_AddNumberToObject(pf, "distance_lines", s->pf.distance_lines);
    cJSON_AddNumberToObject(pf, "hit_ns", s->pf.hit_ns);
    cJSON *tl = cJSON_AddArrayToObject(o, "tlb");
    for (int t = 0; t < 2; t++) {
        const mw_tlb_curve *c = &s->tlb[t];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "page", (double)c->page);
        cJSON_AddItemToObject(e, "pages", curve_json(&c->pages, "pages"));
        cJSON_AddItemToObject(e, "packed", curve_json(&c->control, "lines"));
        cJSON *lv = cJSON_AddArrayToObject(e, "levels");
        for (unsigned l = 0; l < c->nlevels; l++) {
            cJSON *q = cJSON_CreateObject();
            cJSON_AddNumberToObject(q, "entries", c->level[l].entries);
            cJSON_AddNumberToObject(q, "first_miss", c->level[l].first_miss);
            cJSON_AddNumberToObject(q, "reach", (double)c->level[l].reach);
            cJSON_AddNumberToObject(q, "extra_ns", c->level[l].extra_ns);
            cJSON_AddNumberToObject(q, "rise_from", c->level[l].rise_from);
            cJSON_AddNumberToObject(q, "rise_to", c->level[l].rise_to);
            cJSON_AddItemToArray(lv, q);
        }
        if (c->page != 4096)
            cJSON_AddNumberToObject(e, "huge_fraction", c->huge_fraction);
        cJSON_AddStringToObject(e, "note", c->note);
        cJSON_AddItemToArray(tl, e);
    }
    cJSON *as = cJSON_AddObjectToObject(o, "assoc");
    cJSON_AddNumberToObject(as, "stride", (double)s->assoc.stride);
    cJSON_AddBoolToObject(as, "huge", s->assoc.huge);
    cJSON_AddItemToObject(as, "curve", curve_json(&s->assoc.curve, "lines"));
    cJSON *w = cJSON_AddArrayToObject(as, "ways");
    for (unsigned i = 0; i < s->assoc.nsteps; i++)
        cJSON_AddItemToArray(w, cJSON_CreateNumber(s->assoc.ways[i]));
    return o;
}

/* The read sweep's section: its grids, peak and least bandwidth, and points. */
static void sweep_section(cJSON *root, const mw_sweep_result *s)
{
    cJSON *o = cJSON_AddObjectToObject(root, "read_sweep");
    cJSON *tg = cJSON_AddArrayToObject(o, "thread_grid");
    cJSON *dg = cJSON_AddArrayToObject(o, "delay_grid");
    for (unsigned i = 0; i < s->nthreads; i++)
        cJSON_AddItemToArray(tg, cJSON_CreateNumber(s->thread_grid[i]));
    for (unsigned i = 0; i < s->ndelays; i++)
        cJSON_AddItemToArray(dg, cJSON_CreateNumber(s->delay_grid[i]));
    cJSON_AddNumberToObject(o, "line_bytes", MW_LINE);
    cJSON_AddNumberToObject(o, "peak_bw", s->peak_bw);
    cJSON_AddNumberToObject(o, "min_bw", s->min_bw);
    cJSON *pts = cJSON_AddArrayToObject(o, "points");
    for (unsigned t = 0; t < s->nthreads; t++)
        for (unsigned d = 0; d < s->ndelays; d++)
            cJSON_AddItemToArray(pts, sweep_point_json(&s->point[t][d]));
}

/* The latency ladder's section: points, levels, DRAM latency and, from the
 * page-local curve, the TLB's reach and the full-random curve's levels. */
static void ladder_section(cJSON *root, const mw_ladder_result *l)
{
    cJSON *o = cJSON_AddObjectToObject(root, "ladder");
    cJSON_AddNumberToObject(o, "step_ratio", l->step_ratio);
    cJSON_AddBoolToObject(o, "huge_pages", l->huge_pages);
    cJSON_AddStringToObject(o, "cycles_unit", "tsc");
    cJSON *pts = cJSON_AddArrayToObject(o, "points");
    for (unsigned i = 0; i < l->npoints; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "bytes", (double)l->point[i].bytes);
        cJSON_AddNumberToObject(p, "ns", l->point[i].ns);
        cJSON_AddNumberToObject(p, "cycles", l->point[i].cycles);
        cJSON_AddNumberToObject(p, "cv", l->point[i].cv);
        if (l->levels_from_local) {
            cJSON_AddNumberToObject(p, "local_ns", l->point[i].local_ns);
            cJSON_AddNumberToObject(p, "local_cycles", l->point[i].local_cycles);
            cJSON_AddNumberToObject(p, "local_cv", l->point[i].local_cv);
        }
        cJSON_AddItemToArray(pts, p);
    }
    cJSON *lv = cJSON_AddArrayToObject(o, "levels");
    for (unsigned i = 0; i < l->nlevels; i++) {
        const mw_ladder_level *v = &l->level[i];
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "level", v->level);
        cJSON_AddBoolToObject(p, "memory", v->is_memory);
        cJSON_AddNumberToObject(p, "ns", v->ns);
        cJSON_AddNumberToObject(p, "cycles", v->cycles);
        cJSON_AddNumberToObject(p, "size", (double)v->size);
        cJSON_AddNumberToObject(p, "plateau_end", (double)v->plateau_end);
        cJSON_AddNumberToObject(p, "sysfs_size", (double)v->sysfs_size);
        cJSON_AddBoolToObject(p, "within_one_step", v->within_one_step);
        cJSON_AddNumberToObject(p, "plateau_start", (double)v->plateau_start);
        if (l->levels_from_local)
            cJSON_AddNumberToObject(p, "local_ns", v->local_ns);
        cJSON_AddItemToArray(lv, p);
    }
    cJSON_AddNumberToObject(o, "dram_ns", l->dram_ns);
    cJSON_AddNumberToObject(o, "dram_cycles", l->dram_cycles);
    cJSON_AddStringToObject(o, "levels_from", l->levels_from_local ? "page_local" : "random");
    cJSON_AddStringToObject(o, "dram_from", "random");
    if (l->levels_from_local) {
        cJSON_AddNumberToObject(o, "group_lines", MW_LADDER_GROUP_LINES);
        cJSON_AddNumberToObject(o, "tlb_reach", (double)l->tlb_reach);
        cJSON_AddNumberToObject(o, "tlb_ratio", l->tlb_ratio);
        cJSON *fl = cJSON_AddArrayToObject(o, "random_levels");
        for (unsigned i = 0; i < l->full_nlevels && i < MW_LADDER_MAX_LEVELS; i++) {
            const mw_ladder_level *v = &l->full_level[i];
            cJSON *p = cJSON_CreateObject();
            cJSON_AddNumberToObject(p, "level", v->level);
            cJSON_AddBoolToObject(p, "memory", v->is_memory);
            cJSON_AddNumberToObject(p, "ns", v->ns);
            cJSON_AddNumberToObject(p, "size", (double)v->size);
            cJSON_AddNumberToObject(p, "plateau_end", (double)v->plateau_end);
            cJSON_AddItemToArray(fl, p);
        }
    }
}

static cJSON *build(const mw_calib_results *r)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", CALIB_SCHEMA);
    cJSON_AddNumberToObject(root, "version", CALIB_VERSION);
    cJSON_AddStringToObject(root, "memwatch", MW_VERSION);
    char ts[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    cJSON_AddStringToObject(root, "created", ts);
    cJSON_AddNumberToObject(root, "threads", r->threads);
    cJSON_AddNumberToObject(root, "loadavg_before", r->loadavg_before);
    cJSON_AddNumberToObject(root, "loadavg_after", r->loadavg_after);
    static const char *const parts[6] = {"triad", "sweep", "ladder", "loaded", "mlp",
                                         "validation"};
    cJSON *secs = cJSON_AddObjectToObject(root, "seconds");
    for (int i = 0; i < 6; i++)
        if (r->part_s[i] > 0)
            cJSON_AddNumberToObject(secs, parts[i], r->part_s[i]);
    if (r->struct_s > 0)
        cJSON_AddNumberToObject(secs, "structure", r->struct_s);

    cJSON *tm_ = cJSON_AddObjectToObject(root, "timer");
    cJSON_AddBoolToObject(tm_, "have_tsc", r->timer.have_tsc);
    cJSON_AddNumberToObject(tm_, "tsc_hz", r->timer.tsc_hz);
    cJSON_AddStringToObject(tm_, "tsc_source", r->timer.tsc_source);
    cJSON_AddNumberToObject(tm_, "clock_hz", r->timer.clock_hz);
    cJSON_AddNumberToObject(tm_, "tsc_clock_diff", r->timer.tsc_clock_diff);
    cJSON_AddNumberToObject(tm_, "overhead_cycles", r->timer.overhead_cycles);
    cJSON_AddStringToObject(tm_, "thp", r->timer.thp);
    cJSON_AddBoolToObject(tm_, "huge_pages", r->timer.huge_pages);
    cJSON_AddStringToObject(tm_, "note", r->timer.note);

    mw_cache_info_json(root, "caches", &r->cache);

    if (r->ran & MW_CALIB_TRIAD) {
        cJSON *t = cJSON_AddObjectToObject(root, "triad");
        if (r->triad[MW_TRIAD_NORMAL].repeats)
            cJSON_AddItemToObject(t, "normal", triad_json(&r->triad[MW_TRIAD_NORMAL]));
        if (r->triad[MW_TRIAD_NT].repeats)
            cJSON_AddItemToObject(t, "nontemporal", triad_json(&r->triad[MW_TRIAD_NT]));
    }
    if (r->ran & MW_CALIB_SWEEP)
        sweep_section(root, &r->sweep);
    if (r->ran & MW_CALIB_LADDER)
        ladder_section(root, &r->ladder);
    if (r->ran & MW_CALIB_LOADED) {
        const mw_loaded_result *L = &r->loaded;
        cJSON *o = cJSON_AddObjectToObject(root, "loaded_latency");
        cJSON_AddNumberToObject(o, "chase_cpu", L->chase_cpu);
        cJSON_AddNumberToObject(o, "load_threads", L->load_threads);
        cJSON_AddNumberToObject(o, "idle_ns", L->idle_ns);
        cJSON *pts = cJSON_AddArrayToObject(o, "points");
        for (unsigned i = 0; i < L->npoints; i++) {
            cJSON *p = cJSON_CreateObject();
            cJSON_AddNumberToObject(p, "delay", L->point[i].delay);
            cJSON_AddNumberToObject(p, "bw", L->point[i].bw);
            cJSON_AddNumberToObject(p, "ns", L->point[i].ns);
            cJSON_AddNumberToObject(p, "cycles", L->point[i].cycles);
            cJSON_AddItemToArray(pts, p);
        }
    }
    if (r->ran & MW_CALIB_MLP) {
        const mw_mlp_result *m = &r->mlp;
        cJSON *o = cJSON_AddObjectToObject(root, "mlp");
        cJSON *a = cJSON_AddArrayToObject(o, "ns_per_load");
        cJSON *b = cJSON_AddArrayToObject(o, "parallelism");
        for (unsigned k = 0; k < m->n; k++) {
            cJSON_AddItemToArray(a, cJSON_CreateNumber(m->ns_per_load[k]));
            cJSON_AddItemToArray(b, cJSON_CreateNumber(m->parallelism[k]));
        }
        cJSON_AddNumberToObject(o, "max_parallelism", m->max_parallelism);
        cJSON_AddNumberToObject(o, "saturation_k", m->saturation_k);
        cJSON_AddNumberToObject(o, "outstanding", m->outstanding);
    cJSON_AddBoolToObject(o, "saturated", m->saturated);
    }
    if (r->ran & MW_CALIB_STRUCT)
        cJSON_AddItemToObject(root, "structure", struct_json(&r->structure));
    return root;
}

MW_API int mw_calib_results_write_json(const mw_calib_results *r, const char *path)
{
    cJSON *root = build(r);
    if (!root)
        return -ENOMEM;
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return -ENOMEM;
    int rc = 0;
    if (!path || !strcmp(path, "-")) {
        if (fputs(text, stdout) < 0 || fputc('\n', stdout) < 0)
            rc = -EIO;
        fflush(stdout);
    } else {
        /* the owner's only, whatever the umask (also a file written before) */
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd >= 0)
            (void)fchmod(fd, 0600);
        FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
        if (!f) {
            rc = -errno;
            if (fd >= 0)
                close(fd);
        } else {
            if (fputs(text, f) < 0 || fputc('\n', f) < 0)
                rc = -EIO;
            if (fclose(f) != 0 && !rc)
                rc = -errno;
        }
    }
    free(text);
    return rc;
}
