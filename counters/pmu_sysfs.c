/*
 * counters/pmu_sysfs.c: PMU discovery from <sysfs>/bus/event_source/devices
 * (pmu.h): each PMU's type, format fields, event aliases, caps and cpumask
 * read into the immutable mw_pmu_set, and the set's lookups. The parsers and
 * the encoder are counters/pmu_parse.c. May call libc and mw_log only.
 * Threading: a set is read-only once built. Not async-signal-safe
 * (allocates, uses stdio).
 */
#include "pmu_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct mw_pmu_set {
    size_t n;
    mw_pmu *pmus;
    size_t n_problems;
    char **problems;
};

/* PMUs that count time, energy, residency or software events, never
 * hardware events that memwatch's methods could use. */
static const char *const mw_soft_pmus[] = {
    "software", "tracepoint", "breakpoint", "kprobe", "uprobe",
    "msr",      "power",      "cstate_core", "cstate_pkg",
};

/* ---- discovery ---- */

MW_API int mw_read_small(const char *path, char *buf, size_t len)
{
    if (!path || !buf || !len)
        return -EINVAL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t got = 0;
    while (got + 1 < len) {
        ssize_t r = read(fd, buf + got, len - 1 - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = -errno;
            close(fd);
            return e;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = 0;
    while (got && isspace((unsigned char)buf[got - 1]))
        buf[--got] = 0;
    return (int)got;
}

/* mw_read_small with 0 for success, as discovery's callers test it. */
static int read_small(const char *path, char *buf, size_t len)
{
    int r = mw_read_small(path, buf, len);
    return r < 0 ? r : 0;
}

static int problem(mw_pmu_set *set, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int problem(mw_pmu_set *set, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mw_log(MW_LOG_INFO, "%s", msg);
    char **np = realloc(set->problems, (set->n_problems + 1) * sizeof *np);
    if (!np)
        return -ENOMEM;
    set->problems = np;
    if (!(np[set->n_problems] = strdup(msg)))
        return -ENOMEM;
    set->n_problems++;
    return 0;
}

/* Natural order: "uncore_imc_2" < "uncore_imc_10". */
static int natcmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            unsigned long x = strtoul(a, (char **)&a, 10), y = strtoul(b, (char **)&b, 10);
            if (x != y)
                return x < y ? -1 : 1;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a - (unsigned char)*b;
        a++;
        b++;
    }
    return (unsigned char)*a - (unsigned char)*b;
}

static int cmp_name(const void *a, const void *b)
{
    return natcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_pmu(const void *a, const void *b)
{
    return natcmp(((const mw_pmu *)a)->name, ((const mw_pmu *)b)->name);
}

/* Sorted list of the regular entries of a directory (no dot files).
 * Returns the count, 0 when the directory does not exist, or -errno. */
static int list_dir(const char *path, char ***out)
{
    *out = NULL;
    DIR *d = opendir(path);
    if (!d)
        return errno == ENOENT ? 0 : -errno;
    char **v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nv = realloc(v, cap * sizeof *nv);
            if (!nv) {
                rc = -ENOMEM;
                goto out;
            }
            v = nv;
        }
        if (!(v[n] = strdup(e->d_name))) {
            rc = -ENOMEM;
            goto out;
        }
        n++;
    }
    qsort(v, n, sizeof *v, cmp_name);
out:
    closedir(d);
    if (rc) {
        for (size_t i = 0; i < n; i++)
            free(v[i]);
        free(v);
        return rc;
    }
    *out = v;
    return (int)n;
}

static void free_list(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* snprintf for paths; a truncated path simply fails to open later. */
static void mkpath(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void mkpath(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* Alias names may hold dots ("umc_cas_cmd.rd"); these suffixes do not. */
static int is_attr_file(const char *nm)
{
    static const char *const sfx[] = {".scale", ".unit", ".per-pkg", ".snapshot"};
    size_t a = strlen(nm);
    for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
        size_t b = strlen(sfx[i]);
        if (a > b && !strcmp(nm + a - b, sfx[i]))
            return 1;
    }
    return 0;
}

static void pmu_free_fields(mw_pmu *p)
{
    free((char *)p->name);
    free((mw_format_field *)p->formats);
    for (size_t i = 0; i < p->n_events; i++) {
        free((char *)p->events[i].name);
        free((char *)p->events[i].terms);
        free((char *)p->events[i].unit);
    }
    free((mw_pmu_event *)p->events);
    for (size_t i = 0; i < p->n_caps; i++) {
        free((char *)p->caps[i].name);
        free((char *)p->caps[i].value);
    }
    free((mw_pmu_cap *)p->caps);
    free((int *)p->cpus);
}

/* Reads the entry `name` of a PMU's folder into *out, an element of the
 * array load_dir fills: 0 kept, 1 left out (a problem noted, or no entry of
 * this kind), -ENOMEM. */
typedef int (*load_entry_fn)(mw_pmu_set *set, const mw_pmu *pmu, const char *dir, const char *name,
                             void *out);

/* The entries of dir/sub, read by fn into an array of n + 1 zeroed elements
 * of `size` bytes (n: the entries), *k of them kept; *rc 0 or -ENOMEM. The
 * array is returned also when reading stopped at -ENOMEM, with the element
 * fn stopped in counted, so that what it holds is freed with the set. A
 * folder that cannot be listed is a problem noted, and no array (NULL). */
static void *load_dir(mw_pmu_set *set, const mw_pmu *pmu, const char *dir, const char *sub,
                      size_t size, load_entry_fn fn, size_t *k, int *rc)
{
    char path[PATH_MAX];
    mkpath(path, sizeof path, "%s/%s", dir, sub);
    char **names;
    int n = list_dir(path, &names);
    *k = 0;
    if (n < 0) {
        *rc = problem(set, "%s: cannot list %s: %s", pmu->name, path, mw_strerror(n)) ? -ENOMEM : 0;
        return NULL;
    }
    char *a = calloc((size_t)n + 1, size);
    *rc = a ? 0 : -ENOMEM;
    for (int i = 0; i < n && !*rc; i++) {
        int r = fn(set, pmu, dir, names[i], a + *k * size);
        if (r <= 0)
            ++*k;
        if (r < 0)
            *rc = r;
    }
    free_list(names, n);
    return a;
}

static int format_entry(mw_pmu_set *set, const mw_pmu *pmu, const char *dir, const char *name,
                        void *out)
{
    mw_format_field *f = out;
    char path[PATH_MAX], buf[256], why[200];
    mkpath(path, sizeof path, "%s/format/%s", dir, name);
    int r = read_small(path, buf, sizeof buf);
    if (!r && strlen(name) >= MW_PMU_NAME_MAX)
        r = MW_ERR_TOOBIG;
    if (!r)
        r = mw_format_parse(buf, f, why, sizeof why);
    else
        snprintf(why, sizeof why, "%s", mw_strerror(r));
    if (r)
        return problem(set, "%s: format field %s left out: %s", pmu->name, name, why) ? -ENOMEM : 1;
    snprintf(f->name, sizeof f->name, "%s", name);
    return 0;
}

static int event_entry(mw_pmu_set *set, const mw_pmu *pmu, const char *dir, const char *nm,
                       void *out)
{
    mw_pmu_event *ev = out;
    char path[PATH_MAX], buf[1024], why[200];
    if (is_attr_file(nm)) /* .scale, .unit, .per-pkg, .snapshot: attributes of an alias */
        return 1;
    mkpath(path, sizeof path, "%s/events/%s", dir, nm);
    int r = read_small(path, buf, sizeof buf);
    if (r)
        return problem(set, "%s: event %s left out: cannot read %s: %s", pmu->name, nm, path,
                       mw_strerror(r))
                   ? -ENOMEM
                   : 1;
    mw_alias_term terms[MW_ALIAS_MAX_TERMS];
    size_t nt;
    r = mw_alias_parse(buf, terms, MW_ALIAS_MAX_TERMS, &nt, why, sizeof why);
    if (r)
        return problem(set, "%s: event %s left out: %s", pmu->name, nm, why) ? -ENOMEM : 1;
    double scale = 1.0;
    char unit[64] = "";
    mkpath(path, sizeof path, "%s/events/%s.scale", dir, nm);
    char sbuf[64];
    r = read_small(path, sbuf, sizeof sbuf);
    if (!r) {
        char *end;
        errno = 0;
        double v = strtod(sbuf, &end);
        if (end == sbuf || *end || errno || !(v > 0))
            return problem(set, "%s: event %s left out: %s holds \"%.40s\", not a positive number",
                           pmu->name, nm, path, sbuf)
                       ? -ENOMEM
                       : 1;
        scale = v;
    } else if (r != -ENOENT) {
        return problem(set, "%s: event %s left out: cannot read %s: %s", pmu->name, nm, path,
                       mw_strerror(r))
                   ? -ENOMEM
                   : 1;
    }
    mkpath(path, sizeof path, "%s/events/%s.unit", dir, nm);
    r = read_small(path, unit, sizeof unit);
    if (r) {
        unit[0] = 0;
        if (r != -ENOENT && problem(set, "%s: event %s: unit ignored: cannot read %s: %s",
                                    pmu->name, nm, path, mw_strerror(r)))
            return -ENOMEM;
    }
    ev->name = strdup(nm);
    ev->terms = strdup(mw_pmu_skip_ws(buf));
    ev->unit = strdup(unit);
    ev->scale = scale;
    return ev->name && ev->terms && ev->unit ? 0 : -ENOMEM;
}

static int cap_entry(mw_pmu_set *set, const mw_pmu *pmu, const char *dir, const char *name,
                     void *out)
{
    mw_pmu_cap *c = out;
    char path[PATH_MAX], buf[256];
    mkpath(path, sizeof path, "%s/caps/%s", dir, name);
    int r = read_small(path, buf, sizeof buf);
    if (r)
        return problem(set, "%s: capability %s left out: %s", pmu->name, name, mw_strerror(r))
                   ? -ENOMEM
                   : 1;
    c->name = strdup(name);
    c->value = strdup(buf);
    return c->name && c->value ? 0 : -ENOMEM;
}

static int load_cpumask(mw_pmu_set *set, mw_pmu *pmu, const char *dir)
{
    char path[PATH_MAX], buf[4096];
    /* Uncore PMUs publish cpumask; hybrid core PMUs publish cpus. */
    mkpath(path, sizeof path, "%s/cpumask", dir);
    int r = read_small(path, buf, sizeof buf);
    if (r == -ENOENT) {
        mkpath(path, sizeof path, "%s/cpus", dir);
        r = read_small(path, buf, sizeof buf);
    }
    if (r == -ENOENT)
        return 0;
    if (r)
        return problem(set, "%s: cpumask ignored: cannot read %s: %s", pmu->name, path,
                       mw_strerror(r));
    int tmp[4096];
    int n = mw_cpulist_parse(buf, tmp, sizeof tmp / sizeof tmp[0]);
    if (n < 0)
        return problem(set, "%s: cpumask ignored: %s holds \"%.40s\", not a CPU list", pmu->name,
                       path, buf);
    if (n == 0)
        return 0;
    int *c = malloc((size_t)n * sizeof *c);
    if (!c)
        return -ENOMEM;
    memcpy(c, tmp, (size_t)n * sizeof *c);
    pmu->cpus = c;
    pmu->n_cpus = (size_t)n;
    return 0;
}

MW_API int mw_pmus_discover(const char *sysfs_root, mw_pmu_set **out)
{
    char devdir[PATH_MAX], dir[PATH_MAX], buf[64];
    *out = NULL;
    mkpath(devdir, sizeof devdir, "%s/bus/event_source/devices", sysfs_root ? sysfs_root : "/sys");
    mw_pmu_set *set = calloc(1, sizeof *set);
    if (!set)
        return -ENOMEM;
    DIR *probe = opendir(devdir);
    if (!probe) {
        int e = -errno;
        mw_log(MW_LOG_INFO, "cannot read %s: %s%s", devdir, mw_strerror(e),
               e == -ENOENT ? " (kernel without perf events, or sysfs not mounted)" : "");
        free(set);
        return e;
    }
    closedir(probe);
    char **names;
    int n = list_dir(devdir, &names);
    if (n < 0) {
        free(set);
        return n;
    }
    int rc = 0;
    set->pmus = calloc((size_t)n + 1, sizeof *set->pmus);
    if (!set->pmus) {
        rc = -ENOMEM;
        goto out;
    }
    for (int i = 0; i < n; i++) {
        mkpath(dir, sizeof dir, "%s/%s", devdir, names[i]);
        char path[PATH_MAX];
        mkpath(path, sizeof path, "%s/type", dir);
        int r = read_small(path, buf, sizeof buf);
        const char *q = buf;
        uint64_t type = 0;
        if (r) {
            if ((rc = problem(set, "PMU %s left out: cannot read %s: %s", names[i], path,
                              mw_strerror(r))))
                goto out;
            continue;
        }
        if (mw_pmu_parse_u64(&q, &type) || *q || type > UINT32_MAX) {
            if ((rc = problem(set, "PMU %s left out: %s holds \"%.40s\", not a PMU type number",
                              names[i], path, buf)))
                goto out;
            continue;
        }
        mw_pmu *p = &set->pmus[set->n];
        p->name = names[i];
        names[i] = NULL;
        p->type = (uint32_t)type;
        set->n++;
        p->formats =
            load_dir(set, p, dir, "format", sizeof *p->formats, format_entry, &p->n_formats, &rc);
        if (!rc)
            p->events =
                load_dir(set, p, dir, "events", sizeof *p->events, event_entry, &p->n_events, &rc);
        if (!rc)
            p->caps = load_dir(set, p, dir, "caps", sizeof *p->caps, cap_entry, &p->n_caps, &rc);
        if (rc || (rc = load_cpumask(set, p, dir)))
            goto out;
    }
    qsort(set->pmus, set->n, sizeof *set->pmus, cmp_pmu);
out:
    free_list(names, n);
    if (rc) {
        mw_pmus_free(set);
        return rc;
    }
    *out = set;
    return 0;
}

MW_API void mw_pmus_free(mw_pmu_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->n; i++)
        pmu_free_fields(&set->pmus[i]);
    free(set->pmus);
    for (size_t i = 0; i < set->n_problems; i++)
        free(set->problems[i]);
    free(set->problems);
    free(set);
}

MW_API size_t mw_pmus_count(const mw_pmu_set *set)
{
    return set ? set->n : 0;
}

MW_API const mw_pmu *mw_pmus_get(const mw_pmu_set *set, size_t i)
{
    return set && i < set->n ? &set->pmus[i] : NULL;
}

MW_API const mw_pmu *mw_pmus_find(const mw_pmu_set *set, const char *name)
{
    for (size_t i = 0; set && name && i < set->n; i++)
        if (!strcmp(set->pmus[i].name, name))
            return &set->pmus[i];
    return NULL;
}

/* "<base>_N" for a base name and a PMU name. */
static int is_numbered(const char *pmu, const char *base, size_t blen)
{
    if (strncmp(pmu, base, blen) || pmu[blen] != '_' || !pmu[blen + 1])
        return 0;
    for (const char *c = pmu + blen + 1; *c; c++)
        if (!isdigit((unsigned char)*c))
            return 0;
    return 1;
}

MW_API size_t mw_pmus_match(const mw_pmu_set *set, const char *pattern, const mw_pmu **out,
                            size_t max)
{
    size_t k = 0;
    if (!set || !pattern)
        return 0;
    size_t plen = strlen(pattern);
    /* "base_*" (the catalogue's form) means base itself or base_<number>: it
     * must not take uncore_imc_free_running_0 for an uncore_imc_N. Other
     * patterns with wildcards are shell patterns; a plain name also matches
     * name_<number>. */
    int numbered = plen >= 2 && !strcmp(pattern + plen - 2, "_*") &&
                   !strpbrk(pattern, "?[") && strchr(pattern, '*') == pattern + plen - 1;
    int glob = !numbered && strpbrk(pattern, "*?[") != NULL;
    size_t blen = numbered ? plen - 2 : plen;
    for (size_t i = 0; i < set->n; i++) {
        const char *nm = set->pmus[i].name;
        int m;
        if (glob)
            m = !fnmatch(pattern, nm, 0);
        else
            m = (strlen(nm) == blen && !strncmp(nm, pattern, blen)) ||
                is_numbered(nm, pattern, blen);
        if (!m)
            continue;
        if (out && k < max)
            out[k] = &set->pmus[i];
        k++;
    }
    return k;
}

MW_API size_t mw_pmus_problems(const mw_pmu_set *set, const char *const **msgs)
{
    if (msgs)
        *msgs = set ? (const char *const *)set->problems : NULL;
    return set ? set->n_problems : 0;
}

MW_API int mw_pmu_is_hardware(const mw_pmu *pmu)
{
    if (!pmu)
        return 0;
    for (size_t j = 0; j < sizeof mw_soft_pmus / sizeof mw_soft_pmus[0]; j++)
        if (!strcmp(pmu->name, mw_soft_pmus[j]))
            return 0;
    return 1;
}

MW_API int mw_pmus_have_hardware(const mw_pmu_set *set)
{
    for (size_t i = 0; set && i < set->n; i++)
        if (mw_pmu_is_hardware(&set->pmus[i]))
            return 1;
    return 0;
}

MW_API const mw_pmu *mw_pmus_core(const mw_pmu_set *set)
{
    static const char *const core_names[] = {"cpu", "cpu_core"};
    for (size_t j = 0; j < 2; j++) {
        const mw_pmu *p = mw_pmus_find(set, core_names[j]);
        if (p)
            return p;
    }
    for (size_t i = 0; set && i < set->n; i++)
        if (set->pmus[i].type == 4 /* PERF_TYPE_RAW */)
            return &set->pmus[i];
    return NULL;
}

MW_API const mw_format_field *mw_pmu_format(const mw_pmu *pmu, const char *name)
{
    for (size_t i = 0; pmu && name && i < pmu->n_formats; i++)
        if (!strcmp(pmu->formats[i].name, name))
            return &pmu->formats[i];
    return NULL;
}

MW_API const mw_pmu_event *mw_pmu_event_find(const mw_pmu *pmu, const char *name)
{
    for (size_t i = 0; pmu && name && i < pmu->n_events; i++)
        if (!strcmp(pmu->events[i].name, name))
            return &pmu->events[i];
    return NULL;
}

MW_API const char *mw_pmu_cap_get(const mw_pmu *pmu, const char *name)
{
    for (size_t i = 0; pmu && name && i < pmu->n_caps; i++)
        if (!strcmp(pmu->caps[i].name, name))
            return pmu->caps[i].value;
    return NULL;
}
