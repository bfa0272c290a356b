/*
 * counters/profile.c: the machine profile reader (include/memwatch/profile.h):
 * the machine identity a profile is keyed by, the default path, and a loader
 * that refuses damaged or foreign files with a logged reason. The writer lives
 * in calibrate/profile_write.c; the format is docs/profile-format.md.
 *
 * May call: libc (open/read, no stdio), cJSON, mw_cpu_identify, mw_log.
 * Threading: no shared state; every function is safe from any thread. Not
 * async-signal-safe (malloc through cJSON, mw_log): the preload library calls
 * mw_profile_load once at start-up, never from a hook.
 *
 * Robustness: the file is read with a size cap (MW_PROFILE_MAX_BYTES), parsed
 * with a length bound, and every field is type-checked before it is copied;
 * strings that do not fit their field make the profile corrupt rather than
 * being cut silently. No input can make the loader read out of bounds.
 */
#include <memwatch/catalogue.h>
#include <memwatch/pmu.h>
#include <memwatch/profile.h>

#include "envval.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

#define MW_PROFILE_MAX_BYTES (8u << 20)

static void pf_trim(char *s)
{
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
}

/* Counts "processor" lines of cpuinfo and finds MemTotal in meminfo. */
static unsigned pf_count_cpus(const char *proc)
{
    char path[512];
    snprintf(path, sizeof path, "%s/cpuinfo", proc);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    char line[512];
    unsigned n = 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "processor", 9) && (line[9] == ' ' || line[9] == '\t' || line[9] == ':'))
            n++;
    fclose(f);
    return n;
}

static unsigned long long pf_mem_total_kib(const char *proc)
{
    char path[512], buf[4096];
    snprintf(path, sizeof path, "%s/meminfo", proc);
    if (mw_read_small(path, buf, sizeof buf) <= 0)
        return 0;
    const char *p = strstr(buf, "MemTotal:");
    return p ? strtoull(p + 9, NULL, 10) : 0;
}

/* Calls fn (where not NULL) with each entry of the folder dir named prefix
 * and a digit ("node0", "mc1"); returns how many there are (0 where the
 * folder cannot be read). */
static unsigned pf_numbered(const char *dir, const char *prefix,
                            void (*fn)(const char *dir, const char *name, void *arg), void *arg)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t l = strlen(prefix);
    unsigned n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, l) && isdigit((unsigned char)e->d_name[l])) {
            n++;
            if (fn)
                fn(dir, e->d_name, arg);
        }
    closedir(d);
    return n;
}

static unsigned pf_count_nodes(const char *sys)
{
    char path[512];
    snprintf(path, sizeof path, "%s/devices/system/node", sys);
    return pf_numbered(path, "node", NULL, NULL);
}

struct pf_dimms {
    unsigned n;
    unsigned long long mib;
};

/* The DIMMs of one memory controller mc of the EDAC folder dir. */
static void pf_mc_dimms(const char *dir, const char *mc, void *arg)
{
    struct pf_dimms *t = arg;
    char path[768], buf[64];
    for (unsigned k = 0; k < 64; k++) {
        snprintf(path, sizeof path, "%s/%s/dimm%u/size", dir, mc, k);
        if (mw_read_small(path, buf, sizeof buf) <= 0)
            continue;
        unsigned long long mib = strtoull(buf, NULL, 10);
        if (mib) {
            t->n++;
            t->mib += mib;
        }
    }
}

/* DIMMs the EDAC driver describes (rarely visible in VMs): count and total MiB. */
static unsigned pf_count_dimms(const char *sys, unsigned long long *total_mib)
{
    char path[768];
    struct pf_dimms t = {0, 0};
    snprintf(path, sizeof path, "%s/devices/system/edac/mc", sys);
    pf_numbered(path, "mc", pf_mc_dimms, &t);
    *total_mib = t.mib;
    return t.n;
}

MW_API int mw_machine_identity(const char *proc_root, const char *sys_root, char *buf, size_t n)
{
    if (!buf || n == 0)
        return -EINVAL;
    const char *proc = proc_root ? proc_root : "/proc";
    const char *sys = sys_root ? sys_root : "/sys";
    mw_cpu_id cpu;
    int rc = mw_cpu_identify(proc, &cpu);
    if (rc < 0) {
        mw_log(MW_LOG_WARN, "machine identity: cannot identify the CPU from %s/cpuinfo: %s", proc,
               mw_strerror(rc));
        return rc;
    }
    char kernel[96] = "";
    char path[512];
    snprintf(path, sizeof path, "%s/sys/kernel/osrelease", proc);
    if (mw_read_small(path, kernel, sizeof kernel) <= 0)
        snprintf(kernel, sizeof kernel, "?");
    unsigned cpus = pf_count_cpus(proc);
    unsigned long long mem_gib = (pf_mem_total_kib(proc) + (1u << 19)) >> 20; /* rounded */
    unsigned nodes = pf_count_nodes(sys);
    unsigned long long dimm_mib;
    unsigned dimms = pf_count_dimms(sys, &dimm_mib);
    char model[72];
    snprintf(model, sizeof model, "%.71s", cpu.model_name[0] ? cpu.model_name : cpu.vendor);
    pf_trim(model);
    char memdesc[64];
    if (dimms)
        snprintf(memdesc, sizeof memdesc, "%lluGiB,%u dimms %lluMiB", mem_gib, dimms, dimm_mib);
    else
        snprintf(memdesc, sizeof memdesc, "%lluGiB", mem_gib);
    int w = snprintf(buf, n, "cpu=%s;fms=%u/%u/%u;ucode=%s;kernel=%s;cpus=%u;nodes=%u;mem=%s",
                     model, cpu.family, cpu.model, cpu.stepping,
                     cpu.microcode[0] ? cpu.microcode : "?", kernel, cpus, nodes, memdesc);
    if (w < 0)
        return -EINVAL;
    if ((size_t)w >= n)
        return MW_ERR_TOOBIG;
    return w;
}

MW_API void mw_host_name(char *buf, size_t n)
{
    if (!buf || n == 0)
        return;
    struct utsname u;
    if (uname(&u) < 0)
        snprintf(buf, n, "unknown");
    else
        snprintf(buf, n < 128 ? n : 128, "%s", u.nodename);
    for (char *p = buf; *p; p++)
        if (*p == '/' || *p == ' ')
            *p = '_';
}

MW_API int mw_handed_elsewhere(void)
{
    const char *h = mw_getenv("MEMWATCH_HANDED");
    if (!h)
        return 0;
    char here[128];
    mw_host_name(here, sizeof here);
    return strcmp(h, here) != 0;
}

MW_API int mw_machine_identity_taken(char *buf, size_t n)
{
    if (!buf || n == 0)
        return -EINVAL;
    const char *e = mw_handed_elsewhere() ? NULL : mw_getenv("MEMWATCH_MACHINE");
    size_t len = e ? strlen(e) : 0;
    if (len && len < n && !strchr(e, '\n')) {
        memcpy(buf, e, len + 1);
        return (int)len;
    }
    return mw_machine_identity(NULL, NULL, buf, n);
}

__attribute__((hot)) MW_API int mw_profile_default_path(char *buf, size_t n)
{
    if (!buf || n == 0)
        return -EINVAL;
    const char *xdg = mw_getenv("XDG_DATA_HOME");
    const char *base, *tail;
    if (xdg && xdg[0] == '/') { /* the XDG spec ignores relative values */
        base = xdg;
        tail = "/memwatch/profile.json";
    } else {
        base = mw_getenv("HOME");
        if (!base || !base[0]) {
            mw_log(MW_LOG_WARN, "profile: neither XDG_DATA_HOME nor HOME is set");
            return -ENOENT;
        }
        tail = "/.local/share/memwatch/profile.json";
    }
    /* concatenated by hand: every process under libmemwatch.so asks for
     * this path, and snprintf's first call faults in pages of libc */
    size_t lb = strlen(base), lt = strlen(tail);
    if (lb + lt >= n)
        return MW_ERR_TOOBIG;
    memcpy(buf, base, lb);
    memcpy(buf + lb, tail, lt + 1);
    return 0;
}

/* ---------------------------------------------------------------- loading */

typedef struct pf_ctx {
    const char *path;
    char why[480];
} pf_ctx;

static int pf_bad(pf_ctx *c, int err, const char *fmt, const char *a, const char *b)
{
    /* a long reason is cut at the end of why[]: that is fine for a log line */
    if (!c->why[0] && snprintf(c->why, sizeof c->why, fmt, a ? a : "", b ? b : "") < 0)
        c->why[0] = 0;
    return err;
}

static int pf_num(pf_ctx *c, const cJSON *o, const char *key, int required, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) {
        if (!required)
            return 0;
        return pf_bad(c, MW_ERR_CORRUPT, "missing number \"%s\"%s", key, NULL);
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return pf_bad(c, MW_ERR_CORRUPT, "\"%s\" is not a finite number%s", key, NULL);
    *out = v->valuedouble;
    return 0;
}

static int pf_str(pf_ctx *c, const cJSON *o, const char *key, int required, char *out, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) {
        if (!required)
            return 0;
        return pf_bad(c, MW_ERR_CORRUPT, "missing string \"%s\"%s", key, NULL);
    }
    if (!cJSON_IsString(v) || !v->valuestring)
        return pf_bad(c, MW_ERR_CORRUPT, "\"%s\" is not a string%s", key, NULL);
    size_t len = strlen(v->valuestring);
    if (len >= n)
        return pf_bad(c, MW_ERR_CORRUPT, "\"%s\" is longer than the profile format allows%s", key,
                      NULL);
    memcpy(out, v->valuestring, len + 1);
    return 0;
}

MW_API mw_verdict mw_verdict_parse(const char *s)
{
    static const struct {
        const char *name;
        mw_verdict v;
    } t[] = {{"accurate", MW_VERDICT_ACCURATE},
             {"biased", MW_VERDICT_BIASED},
             {"misses_prefetch", MW_VERDICT_MISSES_PREFETCH},
             {"noisy", MW_VERDICT_NOISY}};
    for (size_t i = 0; s && i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(s, t[i].name))
            return t[i].v;
    return MW_VERDICT_UNAVAILABLE;
}

/* The array `key` of the profile into *arr (NULL where it has none); 0, or
 * the error where it is no array. */
static int pf_array(pf_ctx *c, const cJSON *root, const char *key, const cJSON **arr)
{
    *arr = cJSON_GetObjectItemCaseSensitive(root, key);
    if (*arr && !cJSON_IsArray(*arr))
        return pf_bad(c, MW_ERR_CORRUPT, "\"%s\" is not an array%s", key, NULL);
    return 0;
}

/* An entry m of the array `key`: out (size bytes) zeroed where it is an
 * object; 0, or the error. */
static int pf_entry(pf_ctx *c, const cJSON *m, const char *key, void *out, size_t size)
{
    if (!cJSON_IsObject(m))
        return pf_bad(c, MW_ERR_CORRUPT, "an entry of \"%s\" is not an object%s", key, NULL);
    memset(out, 0, size);
    return 0;
}

static int pf_method(pf_ctx *c, const cJSON *m, mw_profile_method *out)
{
    int rc = pf_entry(c, m, "methods", out, sizeof *out);
    if (rc < 0)
        return rc;
    out->factor = 1.0;
    if ((rc = pf_str(c, m, "name", 1, out->name, sizeof out->name)) < 0 ||
        (rc = pf_str(c, m, "verdict", 1, out->verdict, sizeof out->verdict)) < 0 ||
        (rc = pf_str(c, m, "reason", 0, out->reason, sizeof out->reason)) < 0 ||
        (rc = pf_num(c, m, "factor", 0, &out->factor)) < 0 ||
        (rc = pf_num(c, m, "cv", 0, &out->cv)) < 0 ||
        (rc = pf_num(c, m, "false_pos", 0, &out->false_pos)) < 0 ||
        (rc = pf_num(c, m, "false_neg", 0, &out->false_neg)) < 0 ||
        (rc = pf_num(c, m, "threshold_ns", 0, &out->threshold)) < 0)
        return rc;
    out->vd = mw_verdict_parse(out->verdict);
    return 0;
}

/* An entry of "mixes" (optional; profiles before mixes have none). */
/* 1 true, 0 false, -1 not a boolean: read from the item's type, so that the
 * preload library's cJSON shim (preload/cjson_dl.c) needs no more symbols */
static int pf_bool_of(const cJSON *b)
{
    if (!b)
        return 0;
    int t = b->type & 0xff;
    return t == cJSON_True ? 1 : t == cJSON_False ? 0 : -1;
}

static int pf_mix(pf_ctx *c, const cJSON *m, mw_profile_mix *out)
{
    int rc = pf_entry(c, m, "mixes", out, sizeof *out);
    if (rc < 0)
        return rc;
    int sat, nt;
    if ((rc = pf_str(c, m, "name", 1, out->name, sizeof out->name)) < 0 ||
        (rc = pf_num(c, m, "read_share", 1, &out->read_share)) < 0 ||
        (rc = pf_num(c, m, "threshold_ns", 1, &out->threshold_ns)) < 0 ||
        (rc = pf_num(c, m, "peak_bw", 0, &out->peak_bw)) < 0 ||
        (rc = pf_num(c, m, "peak_ns", 0, &out->peak_ns)) < 0)
        return rc;
    nt = pf_bool_of(cJSON_GetObjectItemCaseSensitive(m, "nontemporal"));
    if (nt < 0)
        return pf_bad(c, MW_ERR_CORRUPT, "\"nontemporal\" of a mix is not true or false%s%s",
                      NULL, NULL);
    sat = pf_bool_of(cJSON_GetObjectItemCaseSensitive(m, "saturated"));
    if (sat < 0)
        return pf_bad(c, MW_ERR_CORRUPT, "\"saturated\" of a mix is not true or false%s%s",
                      NULL, NULL);
    out->nontemporal = nt != 0;
    out->saturated = sat != 0;
    if (!(out->read_share >= 0 && out->read_share <= 1) || out->threshold_ns < 0 ||
        out->peak_bw < 0 || out->peak_ns < 0)
        return pf_bad(c, MW_ERR_CORRUPT, "mix \"%s\": a share outside 0..1 or a negative "
                                         "figure%s", out->name, NULL);
    return 0;
}

MW_API int mw_profile_mix_pick(const mw_profile *p, double read_share, int nontemporal)
{
    int best = -1;
    double bd = INFINITY;
    for (unsigned i = 0; p && i < p->n_mixes && i < MW_PROFILE_MAX_MIXES; i++) {
        const mw_profile_mix *m = &p->mixes[i];
        if (!(m->threshold_ns > 0) || (m->nontemporal != 0) != (nontemporal != 0))
            continue;
        double d = fabs(m->read_share - read_share);
        if (d < bd - 1e-9 || (fabs(d - bd) <= 1e-9 && best >= 0 &&
                              m->read_share > p->mixes[best].read_share)) {
            bd = d;
            best = (int)i;
        }
    }
    return best;
}

MW_API int mw_profile_mix_find(const mw_profile *p, const char *name)
{
    static const char *const alias[][2] = {
        {"100", "reads100"}, {"75", "reads75"}, {"50", "reads50"}, {"nt", "nt50"}};
    if (!p || !name)
        return -1;
    for (size_t a = 0; a < sizeof alias / sizeof alias[0]; a++)
        if (!strcmp(name, alias[a][0]))
            name = alias[a][1];
    for (unsigned i = 0; i < p->n_mixes && i < MW_PROFILE_MAX_MIXES; i++)
        if (!strcmp(p->mixes[i].name, name))
            return (int)i;
    return -1;
}

MW_API int mw_profile_mix_choose(const mw_profile *p, const char *forced, double read_bytes,
                                 double write_bytes, int nontemporal, char *why, size_t whylen)
{
    char dummy[8];
    if (!why || !whylen) {
        why = dummy;
        whylen = sizeof dummy;
    }
    why[0] = 0;
    if (forced && forced[0]) {
        int k = mw_profile_mix_find(p, forced);
        if (k >= 0 && p->mixes[k].threshold_ns > 0) {
            snprintf(why, whylen, "%s (MEMWATCH_MIX)", p->mixes[k].name);
            return k;
        }
        if (k >= 0) {
            snprintf(why, whylen,
                     "reads100: MEMWATCH_MIX=%.15s names a curve without a threshold (it did not "
                     "saturate)", forced);
            return -1;
        }
        snprintf(why, whylen,
                 "reads100: MEMWATCH_MIX=%.15s names a curve the profile lacks (memwatch "
                 "calibrate --mix)", forced);
        return -1;
    }
    double all = read_bytes + write_bytes;
    if (read_bytes >= 0 && write_bytes >= 0 && all > 0) {
        double share = read_bytes / all;
        int k = mw_profile_mix_pick(p, share, nontemporal);
        if (k >= 0) {
            snprintf(why, whylen, "%s: the nearest curve to the measured read share, %.0f %%",
                     p->mixes[k].name, 100 * share);
            return k;
        }
        snprintf(why, whylen,
                 "reads100: the profile has no %scurve for the measured read share, %.0f %%",
                 nontemporal ? "non-temporal " : "", 100 * share);
        return -1;
    }
    snprintf(why, whylen,
             "reads100: no method in use measures an interval's read/write split "
             "(MEMWATCH_MIX chooses another curve)");
    return -1;
}

MW_API double mw_profile_lat_threshold(const mw_profile *p, const char *lat_method,
                                      const char *mix, int *in_ns, char *why, size_t whylen)
{
    char dummy[8];
    if (!why || !whylen) {
        why = dummy;
        whylen = sizeof dummy;
    }
    why[0] = 0;
    *in_ns = 1;
    if (!lat_method || !lat_method[0])
        return 0;
    /* the load shapes' threshold transfers across read, copy, triad and
     * non-temporal loads; MEMWATCH_MIX still picks a read/write curve */
    if (p->from_shapes && !(mix && mix[0]) && !strcmp(p->lat_method, lat_method) &&
        p->lat_threshold_ns > 0) {
        snprintf(why, whylen, "%s",
                 p->writes_threshold_ns > 0
                     ? "shapes: placed on the loads that only read, with idle and compute "
                       "(a process whose loops write is judged by the copy, triad and "
                       "non-temporal loads' threshold; MEMWATCH_MIX chooses a read/write curve "
                       "instead)"
                     : "shapes: placed on read, copy, triad and non-temporal loads "
                       "(MEMWATCH_MIX chooses a read/write curve instead)");
        return p->lat_threshold_ns;
    }
    if (!p->n_mixes) {
        snprintf(why, whylen,
                 "reads100: the machine profile has no read/write curves (calibrated before "
                 "they existed)");
    } else if (!mw_method_is(lat_method, MW_Q_LATENCY, MW_HOW_PROBE)) {
        snprintf(why, whylen,
                 "reads100: the read/write curves are measured for probe_lat only, not %.15s",
                 lat_method);
    } else {
        int k = mw_profile_mix_choose(p, mix, 0, 0, 0, why, whylen);
        if (k >= 0 && p->mixes[k].threshold_ns > 0)
            return p->mixes[k].threshold_ns;
    }
    double t = 0;
    for (unsigned i = 0; i < p->n_methods && i < MW_PROFILE_MAX_METHODS; i++)
        if (!strcmp(p->methods[i].name, lat_method) && p->methods[i].threshold > 0 &&
            (p->methods[i].vd == MW_VERDICT_ACCURATE || p->methods[i].vd == MW_VERDICT_BIASED))
            t = p->methods[i].threshold; /* only a threshold its validation passed */
    if (t <= 0 && !strcmp(p->lat_method, lat_method))
        t = p->lat_threshold_ns;
    *in_ns = 0;
    return t > 0 ? t : 0;
}

/* What the flag can claim (optional keys: docs/profile-format.md):
 * "saturable", "threshold_band_ns", "threshold_from", "curve",
 * "threshold_note". */
/* Item k of an array (NULL past its end or for a non-array), by walking
 * the children: the preload library reaches cJSON through a few dlsym'd
 * functions only (preload/cjson_dl.c). */
static const cJSON *pf_item(const cJSON *a, int k)
{
    if (!cJSON_IsArray(a))
        return NULL;
    const cJSON *e = a->child;
    while (e && k-- > 0)
        e = e->next;
    return e;
}

/* An optional band [low, high] in ns under key: 0 (absent: *lo, *hi left
 * as they are) or MW_ERR_CORRUPT */
static int pf_band(pf_ctx *c, const cJSON *root, const char *key, double *lo_out, double *hi_out)
{
    const cJSON *band = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!band)
        return 0;
    const cJSON *lo = pf_item(band, 0), *hi = pf_item(band, 1);
    if (!cJSON_IsArray(band) || !hi || hi->next || !cJSON_IsNumber(lo) || !cJSON_IsNumber(hi) ||
        !isfinite(lo->valuedouble) || !isfinite(hi->valuedouble) || lo->valuedouble < 0 ||
        hi->valuedouble < lo->valuedouble)
        return pf_bad(c, MW_ERR_CORRUPT, "\"%s\" is not [low, high] in ns%s", key, "");
    *lo_out = lo->valuedouble;
    *hi_out = hi->valuedouble;
    return 0;
}

static int pf_claims(pf_ctx *c, const cJSON *root, mw_profile *out)
{
    int rc;
    const cJSON *sat = cJSON_GetObjectItemCaseSensitive(root, "saturable");
    if (sat && !(sat->type & (cJSON_True | cJSON_False)))
        return pf_bad(c, MW_ERR_CORRUPT, "\"saturable\" is not true or false%s%s", NULL, NULL);
    if (sat)
        out->saturable = (sat->type & cJSON_True) ? MW_SAT_YES : MW_SAT_NO;
    if ((rc = pf_band(c, root, "threshold_band_ns", &out->band_lo_ns, &out->band_hi_ns)) < 0 ||
        (rc = pf_band(c, root, "writes_band_ns", &out->writes_band_lo_ns,
                      &out->writes_band_hi_ns)) < 0)
        return rc;
    const cJSON *wt = cJSON_GetObjectItemCaseSensitive(root, "writes_threshold_ns");
    if (wt && (!cJSON_IsNumber(wt) || !isfinite(wt->valuedouble) || wt->valuedouble <= 0))
        return pf_bad(c, MW_ERR_CORRUPT, "\"writes_threshold_ns\" is not a latency in ns%s%s",
                      NULL, NULL);
    if (wt)
        out->writes_threshold_ns = wt->valuedouble;
    char from[16] = "";
    if ((rc = pf_str(c, root, "threshold_from", 0, from, sizeof from)) < 0 ||
        (rc = pf_str(c, root, "threshold_note", 0, out->threshold_note,
                     sizeof out->threshold_note)) < 0)
        return rc;
    out->from_shapes = !strcmp(from, "shapes");
    const cJSON *curve = cJSON_GetObjectItemCaseSensitive(root, "curve"), *pt;
    if (curve && !cJSON_IsArray(curve))
        return pf_bad(c, MW_ERR_CORRUPT, "\"curve\" is not an array%s%s", NULL, NULL);
    cJSON_ArrayForEach(pt, curve)
    {
        const cJSON *b = pf_item(pt, 0), *l = pf_item(pt, 1);
        if (!cJSON_IsArray(pt) || !cJSON_IsNumber(b) || !cJSON_IsNumber(l) ||
            !isfinite(b->valuedouble) || !isfinite(l->valuedouble) || b->valuedouble < 0 ||
            l->valuedouble <= 0)
            return pf_bad(c, MW_ERR_CORRUPT,
                          "an entry of \"curve\" is not [bytes/s, ns]%s%s", NULL, NULL);
        if (out->n_curve == MW_PROFILE_MAX_CURVE)
            break;
        unsigned k = out->n_curve;
        if (k && (b->valuedouble < out->curve[k - 1].bw || l->valuedouble < out->curve[k - 1].ns))
            return pf_bad(c, MW_ERR_CORRUPT,
                          "\"curve\" is not non-decreasing in bandwidth and latency%s%s", NULL,
                          NULL);
        out->curve[k].bw = b->valuedouble;
        out->curve[k].ns = l->valuedouble;
        out->n_curve++;
    }
    return 0;
}

static int pf_parse(pf_ctx *c, const char *text, size_t len, int check_identity, mw_profile *out)
{
    int rc = 0;
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root)
        return pf_bad(c, MW_ERR_CORRUPT, "not valid JSON%s%s", NULL, NULL);
    if (!cJSON_IsObject(root)) {
        rc = pf_bad(c, MW_ERR_CORRUPT, "the top level is not a JSON object%s%s", NULL, NULL);
        goto out;
    }
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, MW_PROFILE_SCHEMA)) {
        rc = pf_bad(c, MW_ERR_FOREIGN, "not a memwatch profile (schema \"%s\", expected \"%s\")",
                    cJSON_IsString(schema) ? schema->valuestring : "(none)", MW_PROFILE_SCHEMA);
        goto out;
    }
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    if (!cJSON_IsNumber(ver)) {
        rc = pf_bad(c, MW_ERR_CORRUPT, "\"version\" is missing or not a number%s%s", NULL, NULL);
        goto out;
    }
    if (ver->valuedouble != (double)MW_PROFILE_VERSION) {
        char got[32], want[32];
        snprintf(got, sizeof got, "%g", ver->valuedouble);
        snprintf(want, sizeof want, "%d", MW_PROFILE_VERSION);
        rc = pf_bad(c, MW_ERR_FOREIGN,
                    "profile format version %s; this memwatch reads version %s "
                    "(run `memwatch calibrate` again)", got, want);
        goto out;
    }
    out->version = MW_PROFILE_VERSION;
    if ((rc = pf_str(c, root, "identity", 1, out->identity, sizeof out->identity)) < 0 ||
        (rc = pf_str(c, root, "created", 0, out->created, sizeof out->created)) < 0 ||
        (rc = pf_num(c, root, "tsc_hz", 0, &out->tsc_hz)) < 0 ||
        (rc = pf_num(c, root, "peak_bw", 1, &out->peak_bw)) < 0 ||
        (rc = pf_num(c, root, "idle_latency_ns", 1, &out->idle_latency_ns)) < 0 ||
        (rc = pf_str(c, root, "lat_method", 1, out->lat_method, sizeof out->lat_method)) < 0 ||
        (rc = pf_num(c, root, "lat_threshold_ns", 1, &out->lat_threshold_ns)) < 0 ||
        (rc = pf_str(c, root, "bw_method", 1, out->bw_method, sizeof out->bw_method)) < 0 ||
        (rc = pf_num(c, root, "bw_factor", 1, &out->bw_factor)) < 0)
        goto out;
    if (out->peak_bw < 0 || out->idle_latency_ns < 0 || out->lat_threshold_ns < 0 ||
        out->bw_factor < 0) {
        rc = pf_bad(c, MW_ERR_CORRUPT, "a bandwidth, latency or factor is negative%s%s", NULL,
                    NULL);
        goto out;
    }
    if (out->lat_method[0] && !(out->lat_threshold_ns > 0)) {
        rc = pf_bad(c, MW_ERR_CORRUPT, "lat_method \"%s\" has no positive threshold%s",
                    out->lat_method, NULL);
        goto out;
    }
    const cJSON *methods, *mixes, *m;
    if ((rc = pf_array(c, root, "methods", &methods)) < 0)
        goto out;
    cJSON_ArrayForEach(m, methods)
    {
        if (out->n_methods == MW_PROFILE_MAX_METHODS) {
            mw_log(MW_LOG_WARN, "profile %s: more than %d methods; the rest are ignored", c->path,
                   MW_PROFILE_MAX_METHODS);
            break;
        }
        if ((rc = pf_method(c, m, &out->methods[out->n_methods])) < 0)
            goto out;
        out->n_methods++;
    }
    if ((rc = pf_array(c, root, "mixes", &mixes)) < 0)
        goto out;
    cJSON_ArrayForEach(m, mixes)
    {
        if (out->n_mixes == MW_PROFILE_MAX_MIXES)
            break; /* later formats may add mixes: the first ones are read */
        if ((rc = pf_mix(c, m, &out->mixes[out->n_mixes])) < 0)
            goto out;
        out->n_mixes++;
    }
    if ((rc = pf_claims(c, root, out)) < 0)
        goto out;
    if (check_identity) {
        char here[sizeof out->identity];
        int ir = mw_machine_identity(NULL, NULL, here, sizeof here);
        if (ir < 0) {
            rc = pf_bad(c, MW_ERR_FOREIGN,
                        "this machine's identity cannot be read, so the profile cannot be "
                        "matched to it%s%s", NULL, NULL);
            goto out;
        }
        if (strcmp(here, out->identity)) {
            rc = pf_bad(c, MW_ERR_FOREIGN,
                        "calibrated on another machine or configuration (profile: %s; here: %s)",
                        out->identity, here);
            goto out;
        }
    }
out:
    cJSON_Delete(root);
    return rc;
}

MW_API int mw_profile_load(const char *path, int check_identity, mw_profile *out)
{
    if (!path || !out)
        return -EINVAL;
    memset(out, 0, sizeof *out);
    pf_ctx c = {.path = path};
    int rc = 0;
    char *text = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = -errno;
        mw_log(MW_LOG_INFO, "profile %s: %s", path, mw_strerror(rc));
        return rc;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        rc = -errno;
        goto done;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = pf_bad(&c, MW_ERR_CORRUPT, "not a regular file%s%s", NULL, NULL);
        goto done;
    }
    if ((unsigned long long)st.st_size > MW_PROFILE_MAX_BYTES) {
        rc = pf_bad(&c, MW_ERR_CORRUPT, "larger than any profile memwatch writes%s%s", NULL, NULL);
        goto done;
    }
    size_t cap = (size_t)st.st_size + 1, len = 0;
    text = malloc(cap);
    if (!text) {
        rc = -ENOMEM;
        goto done;
    }
    while (len < cap - 1) {
        ssize_t r = read(fd, text + len, cap - 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = -errno;
            goto done;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    text[len] = 0;
    if (len == 0) {
        rc = pf_bad(&c, MW_ERR_CORRUPT, "empty file%s%s", NULL, NULL);
        goto done;
    }
    rc = pf_parse(&c, text, len, check_identity, out);
done:
    if (fd >= 0)
        close(fd);
    free(text);
    if (rc < 0) {
        mw_log(MW_LOG_ERROR, "profile %s refused: %s (%s)", path,
               c.why[0] ? c.why : mw_strerror(rc), mw_strerror(rc));
        int v = out->version;
        memset(out, 0, sizeof *out);
        out->version = v;
    }
    return rc;
}

/* ---- the snapshot memwatch record hands down ----
 * The header, then the structure as this build lays it out. The sizes tell a
 * build that lays it out otherwise; PF_SNAP_REV changes where a field's
 * meaning changes without its size. */
#define PF_SNAP_MAGIC "MWPSNAP"
#define PF_SNAP_REV 1u
typedef struct pf_snap_head {
    char magic[8];
    uint32_t rev, size, method_size, mix_size;
    char path[1024]; /* the profile it was read from, NUL-terminated */
} pf_snap_head;

static void pf_snap_head_init(pf_snap_head *h)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, PF_SNAP_MAGIC, sizeof PF_SNAP_MAGIC);
    h->rev = PF_SNAP_REV;
    h->size = (uint32_t)sizeof(mw_profile);
    h->method_size = (uint32_t)sizeof(mw_profile_method);
    h->mix_size = (uint32_t)sizeof(mw_profile_mix);
}

MW_API int mw_profile_snapshot_write(const char *snap_path, const char *profile_path,
                                     const mw_profile *p)
{
    if (!snap_path || !profile_path || !p)
        return -EINVAL;
    pf_snap_head h;
    pf_snap_head_init(&h);
    size_t pl = strlen(profile_path);
    if (pl >= sizeof h.path)
        return -ENAMETOOLONG;
    memcpy(h.path, profile_path, pl);
    int fd = open(snap_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    struct iovec v[2] = {{&h, sizeof h}, {(void *)p, sizeof *p}};
    ssize_t w = writev(fd, v, 2);
    int rc = w < 0 ? -errno : (size_t)w != sizeof h + sizeof *p ? -ENOSPC : 0;
    if (close(fd) < 0 && !rc)
        rc = -errno;
    if (rc)
        unlink(snap_path);
    return rc;
}

/* A string field ends within it. */
#define PF_SNAP_STR(s) (memchr((s), 0, sizeof(s)) != NULL)

/* What the loader guarantees of a structure it fills, checked again: counts
 * within their arrays, strings terminated, verdicts known. */
static int pf_snap_sane(const mw_profile *p)
{
    if (p->n_methods > MW_PROFILE_MAX_METHODS || p->n_mixes > MW_PROFILE_MAX_MIXES ||
        p->n_curve > MW_PROFILE_MAX_CURVE || !PF_SNAP_STR(p->identity) ||
        !PF_SNAP_STR(p->created) || !PF_SNAP_STR(p->lat_method) || !PF_SNAP_STR(p->bw_method) ||
        !PF_SNAP_STR(p->threshold_note))
        return 0;
    for (unsigned i = 0; i < p->n_methods; i++) {
        const mw_profile_method *m = &p->methods[i];
        if (!PF_SNAP_STR(m->name) || !PF_SNAP_STR(m->verdict) || !PF_SNAP_STR(m->reason) ||
            m->vd < MW_VERDICT_UNAVAILABLE || m->vd > MW_VERDICT_NOISY)
            return 0;
    }
    for (unsigned i = 0; i < p->n_mixes; i++)
        if (!PF_SNAP_STR(p->mixes[i].name))
            return 0;
    return 1;
}

MW_API int mw_profile_snapshot_read(const char *snap_path, const char *profile_path,
                                    mw_profile *out)
{
    if (!snap_path || !profile_path || !out)
        return -EINVAL;
    int fd = open(snap_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        memset(out, 0, sizeof *out);
        return -errno;
    }
    pf_snap_head h, want;
    char extra;
    struct iovec v[3] = {{&h, sizeof h}, {out, sizeof *out}, {&extra, 1}};
    ssize_t r = readv(fd, v, 3);
    int rc = r < 0 ? -errno : 0;
    close(fd);
    pf_snap_head_init(&want);
    if (!rc && (size_t)r != sizeof h + sizeof *out)
        rc = MW_ERR_CORRUPT; /* cut short, or longer than any snapshot */
    else if (!rc && (memcmp(h.magic, want.magic, sizeof h.magic) || h.rev != want.rev ||
                     h.size != want.size || h.method_size != want.method_size ||
                     h.mix_size != want.mix_size))
        rc = MW_ERR_FOREIGN; /* another build's layout */
    else if (!rc && (!PF_SNAP_STR(h.path) || strcmp(h.path, profile_path)))
        rc = MW_ERR_FOREIGN; /* another profile's */
    else if (!rc && !pf_snap_sane(out))
        rc = MW_ERR_CORRUPT;
    if (rc)
        memset(out, 0, sizeof *out);
    return rc;
}
