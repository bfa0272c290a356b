/*
 * counters/probe.c: the machine probe (probe.h, `memwatch probe`): what this
 * machine offers. Combines the CPU identity and method catalogue
 * (catalogue.h), the PMUs found in sysfs (pmu_sysfs.c), the privileges
 * (privs.c) and the cpuinfo flags into one verdict per method: available,
 * or unavailable with the precise reason. Also decides whether the
 * prefetcher MSRs are reachable. Opens no perf event; reads only
 * files under the given sysfs, procfs and /dev roots (and one MSR through
 * <dev>/cpu/0/msr when that node exists).
 * Threading: mw_probe_run allocates; its result is immutable. Not
 * async-signal-safe.
 */
#include <memwatch/encode.h>
#include <memwatch/probe.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

/* snprintf that accepts truncation: reasons are cut, never overflow. */
static void setf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void setf(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* Append to a reason buffer, "; "-separated. */
static void add(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *buf, size_t len, const char *fmt, ...)
{
    size_t off = strlen(buf);
    if (off && off + 2 < len) {
        memcpy(buf + off, "; ", 3);
        off += 2;
    }
    if (off + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + off, len - off, fmt, ap);
    va_end(ap);
}

/* "uncore_imc_*" -> "uncore_imc" for messages. */
static void pattern_base(const char *pattern, char *out, size_t len)
{
    setf(out, len, "%s", pattern);
    size_t n = strlen(out);
    if (n >= 2 && !strcmp(out + n - 2, "_*"))
        out[n - 2] = 0;
    else if (n >= 1 && out[n - 1] == '*')
        out[n - 1] = 0;
}

static int is_core_name(const char *pmu)
{
    return !pmu || !strcmp(pmu, "cpu") || !strcmp(pmu, "cpu_core") || !strcmp(pmu, "cpu_atom");
}

/* "a, b, c" of every PMU (all of them, or only hardware ones), numbered
 * families folded: "uncore_imc_0..uncore_imc_5". */
static void list_pmus(const mw_pmu_set *pmus, int hw_only, char *buf, size_t len)
{
    size_t n = mw_pmus_count(pmus);
    buf[0] = 0;
    for (size_t i = 0; i < n; i++) {
        const mw_pmu *p = mw_pmus_get(pmus, i);
        if (hw_only && !mw_pmu_is_hardware(p))
            continue;
        /* fold pmu_N, pmu_N+1, ... */
        const char *us = strrchr(p->name, '_');
        size_t j = i;
        if (us && us[1] >= '0' && us[1] <= '9') {
            size_t blen = (size_t)(us - p->name) + 1;
            while (j + 1 < n && !strncmp(mw_pmus_get(pmus, j + 1)->name, p->name, blen) &&
                   mw_pmus_get(pmus, j + 1)->name[blen] >= '0' &&
                   mw_pmus_get(pmus, j + 1)->name[blen] <= '9' &&
                   !strchr(mw_pmus_get(pmus, j + 1)->name + blen, '_'))
                j++;
        }
        size_t off = strlen(buf);
        if (j > i)
            setf(buf + off, len - off, "%s%s..%s", off ? ", " : "", p->name,
                     mw_pmus_get(pmus, j)->name);
        else
            setf(buf + off, len - off, "%s%s", off ? ", " : "", p->name);
        i = j;
    }
}

/* The union of the cpumasks of some PMUs: "0,28". */
static void cpus_str(const mw_pmu *const *m, size_t nm, char *buf, size_t len)
{
    int u[64];
    size_t nu = 0, total = 0;
    buf[0] = 0;
    for (size_t k = 0; k < nm; k++)
        for (size_t i = 0; i < m[k]->n_cpus; i++) {
            size_t j = 0;
            while (j < nu && u[j] != m[k]->cpus[i])
                j++;
            if (j < nu)
                continue;
            total++;
            if (nu < 64)
                u[nu++] = m[k]->cpus[i];
        }
    for (size_t i = 0; i < nu && i < 8; i++) {
        size_t off = strlen(buf);
        setf(buf + off, len - off, "%s%d", i ? "," : "", u[i]);
    }
    if (total > 8) {
        size_t off = strlen(buf);
        setf(buf + off, len - off, ",... (%zu CPUs)", total);
    }
}

static void no_hw_sentence(const mw_pmu_set *pmus, char *buf, size_t len)
{
    char list[400];
    list_pmus(pmus, 0, list, sizeof list);
    setf(buf, len, "the kernel exposes no hardware PMU: only %s",
             list[0] ? list : "no PMU at all");
}

static void privs_sentence(const mw_privs *p, char *buf, size_t len)
{
    char par[32];
    if (p->paranoid == MW_PARANOID_UNKNOWN)
        setf(par, sizeof par, "unreadable");
    else
        setf(par, sizeof par, "%d", p->paranoid);
    setf(buf, len,
             "needs perf_event_paranoid <= 0 or CAP_PERFMON (perf_event_paranoid is %s and this "
             "process has neither CAP_PERFMON nor CAP_SYS_ADMIN)",
             par);
}

MW_API void mw_method_check(const mw_method_def *def, const mw_pmu_set *pmus,
                            const mw_privs *privs, int have_clflush, int have_tsc,
                            mw_method_avail *a)
{
    char why[sizeof a->reason] = "", uses[sizeof a->reason] = "", tmp[400];
    int err = 0;
    const mw_pmu *core = mw_pmus_core(pmus);
    int have_hw = mw_pmus_have_hardware(pmus);
    unsigned needs = def->needs;
#define FAIL(code, ...)                                                                        \
    do {                                                                                       \
        if (!err)                                                                              \
            err = (code);                                                                      \
        add(why, sizeof why, __VA_ARGS__);                                                     \
    } while (0)

    memset(a, 0, sizeof *a);
    a->name = def->name;
    a->def = def;

    if (needs & MW_NEED_X86_CLFLUSH) {
        if (!have_clflush || !have_tsc)
            FAIL(MW_ERR_UNSUPPORTED, "needs x86 clflush and a TSC: the CPU flags lack %s",
                 !have_clflush && !have_tsc ? "clflush and tsc" : !have_clflush ? "clflush" : "tsc");
        else
            add(uses, sizeof uses, "needs no PMU: timed dependent loads of flushed lines "
                                   "(clflush, TSC)");
    }
    if (needs & (MW_NEED_CORE_PMU | MW_NEED_PRECISE | MW_NEED_OFFCORE)) {
        if (!core) {
            if (!have_hw) {
                no_hw_sentence(pmus, tmp, sizeof tmp);
                FAIL(MW_ERR_NOPMU, "%s", tmp);
            } else {
                list_pmus(pmus, 1, tmp, sizeof tmp);
                FAIL(MW_ERR_NOPMU, "no core PMU (cpu): the kernel exposes only %s", tmp);
            }
        } else {
            add(uses, sizeof uses, "core PMU %s (type %u)", core->name, (unsigned)core->type);
        }
    }
    if ((needs & MW_NEED_PRECISE) && core) {
        if (!mw_pmu_format(core, "ldlat") && !mw_pmu_event_find(core, "mem-loads"))
            FAIL(MW_ERR_UNSUPPORTED, "the %s PMU offers no load-latency sampling (no ldlat "
                                     "format, no mem-loads event)", core->name);
    }
    if ((needs & MW_NEED_OFFCORE) && core) {
        if (!mw_pmu_format(core, "offcore_rsp"))
            FAIL(MW_ERR_UNSUPPORTED, "the %s PMU has no offcore_rsp format (offcore response "
                                     "needs config1)", core->name);
    }
    if (needs & MW_NEED_IBS) {
        const mw_pmu *ibs = mw_pmus_find(pmus, "ibs_op");
        if (!ibs) {
            if (!have_hw) {
                no_hw_sentence(pmus, tmp, sizeof tmp);
                FAIL(MW_ERR_NOPMU, "no ibs_op PMU (%s)", tmp);
            } else {
                FAIL(MW_ERR_NOPMU, "no ibs_op PMU");
            }
        } else {
            add(uses, sizeof uses, "ibs_op PMU (type %u)", (unsigned)ibs->type);
        }
    }
    /* Every event that lives on a named (non-core) PMU, and every sysfs event
     * of the core PMU: the PMU must exist and its terms must encode. */
    const char *seen[16] = {0};
    size_t n_seen = 0;
    if (needs & MW_NEED_IBS)
        seen[n_seen++] = "ibs_op"; /* already decided above */
    for (size_t i = 0; i < def->n_events; i++) {
        const mw_event_spec *ev = &def->events[i];
        if (is_core_name(ev->pmu)) {
            if (ev->sysfs && core) {
                mw_pmu_encoding enc;
                char ew[200];
                if (mw_pmu_encode(core, ev->sysfs, &enc, ew, sizeof ew))
                    FAIL(MW_ERR_NOEVENT, "%s event \"%s\" (%s): %s", core->name, ev->role,
                         ev->sysfs, ew);
            }
            continue;
        }
        const mw_pmu *m[64];
        size_t nm = mw_pmus_match(pmus, ev->pmu, m, 64);
        char base[MW_PMU_NAME_MAX];
        pattern_base(ev->pmu, base, sizeof base);
        int dup = 0;
        for (size_t k = 0; k < n_seen; k++)
            dup |= !strcmp(seen[k], ev->pmu);
        if (!nm) {
            if (!dup) {
                if (!have_hw) {
                    no_hw_sentence(pmus, tmp, sizeof tmp);
                    FAIL(MW_ERR_NOPMU, "no %s PMU (%s)", base, tmp);
                } else {
                    FAIL(MW_ERR_NOPMU, "no %s PMU", base);
                }
            }
        } else if (ev->sysfs) {
            for (size_t k = 0; k < nm && k < 64; k++) {
                mw_pmu_encoding enc;
                char ew[200];
                if (mw_pmu_encode(m[k], ev->sysfs, &enc, ew, sizeof ew)) {
                    FAIL(MW_ERR_NOEVENT, "event \"%s\" (%s): %s", ev->role, ev->sysfs, ew);
                    break;
                }
            }
        }
        if (nm && !dup) {
            char cpus[96];
            cpus_str(m, nm > 64 ? 64 : nm, cpus, sizeof cpus);
            if (nm > 1)
                add(uses, sizeof uses, "%zu %s PMUs (%s..%s)%s%s", nm, base, m[0]->name,
                    m[nm > 64 ? 63 : nm - 1]->name, cpus[0] ? " on CPUs " : "", cpus);
            else
                add(uses, sizeof uses, "%s PMU%s%s", m[0]->name, cpus[0] ? " on CPUs " : "",
                    cpus);
        }
        if (!dup && n_seen < 16)
            seen[n_seen++] = ev->pmu;
    }
    if (needs & MW_NEED_SYSTEMWIDE) {
        if (!privs || !mw_privs_can_cpu_wide(privs)) {
            if (privs)
                privs_sentence(privs, tmp, sizeof tmp);
            else
                setf(tmp, sizeof tmp, "needs perf_event_paranoid <= 0 or CAP_PERFMON "
                                          "(privileges unknown)");
            FAIL(MW_ERR_PARANOID, "%s", tmp);
        } else {
            add(uses, sizeof uses, "system-wide counting allowed (%s)",
                privs->cap_perfmon    ? "CAP_PERFMON"
                : privs->cap_sys_admin ? "CAP_SYS_ADMIN"
                                       : "perf_event_paranoid <= 0");
        }
    }
#undef FAIL
    a->available = err == 0;
    a->err = err;
    setf(a->reason, sizeof a->reason, "%s", err ? why : uses);
}

/* ---- the whole probe ---- */

static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    int rc = fgets(buf, (int)len, f) ? 0 : -EIO;
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
    return rc;
}

static void cpu_flags(const char *proc, int *clflush, int *tsc)
{
    char path[PATH_MAX], line[8192];
    *clflush = *tsc = 0;
    setf(path, sizeof path, "%s/cpuinfo", proc);
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5))
            continue;
        char *save = NULL, *colon = strchr(line, ':');
        if (!colon)
            continue;
        for (char *t = strtok_r(colon + 1, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
            if (!strcmp(t, "clflush"))
                *clflush = 1;
            else if (!strcmp(t, "tsc"))
                *tsc = 1;
        }
        break;
    }
    fclose(f);
}

static void msr_check(const mw_probe_opts *o, mw_probe *p)
{
    char path[PATH_MAX], mod[PATH_MAX];
    const mw_prefetch_msr *pm = NULL;
    mw_msr_access *m = &p->msr;
    const char *dev = o->dev_root ? o->dev_root : "/dev";
    const char *sys = o->sysfs_root ? o->sysfs_root : "/sys";
    if (mw_catalogue_prefetch_msr(p->cpu.uarch, &pm) || !pm) {
        setf(m->reason, sizeof m->reason, "memwatch knows no prefetcher MSR for %s",
                 mw_uarch_long_name(p->cpu.uarch));
        return;
    }
    m->msr = pm->msr;
    setf(path, sizeof path, "%s/cpu/0/msr", dev);
    struct stat st;
    if (stat(path, &st)) {
        setf(mod, sizeof mod, "%s/module/msr", sys);
        if (!stat(mod, &st))
            setf(m->reason, sizeof m->reason,
                     "no %s although the msr driver is loaded (no device node: is devtmpfs "
                     "mounted?)", path);
        else
            setf(m->reason, sizeof m->reason,
                     "no %s: the msr driver is not loaded (modprobe msr; it may be absent "
                     "from this kernel)", path);
        return;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        setf(m->reason, sizeof m->reason, "cannot open %s: %s%s", path, strerror(e),
                 e == EACCES || e == EPERM ? " (needs root with CAP_SYS_RAWIO)" : "");
        return;
    }
    uint64_t v;
    ssize_t r = pread(fd, &v, sizeof v, (off_t)pm->msr);
    int e = errno;
    close(fd);
    if (r != (ssize_t)sizeof v) {
        setf(m->reason, sizeof m->reason,
                 "reading MSR 0x%x through %s failed: %s (the CPU or the hypervisor does not "
                 "expose it)",
                 (unsigned)pm->msr, path, r < 0 ? strerror(e) : "short read");
        return;
    }
    m->reachable = 1;
    setf(m->reason, sizeof m->reason,
             "MSR 0x%x reads through %s (value 0x%llx; bits: %s); writing may also need "
             "msr.allow_writes=on",
             (unsigned)pm->msr, path, (unsigned long long)v, pm->bits ? pm->bits : "?");
}

/* Marks an available method unavailable when one of its libpfm4 events does
 * not encode here (unknown model, libpfm4 too old, table disagreement). */
static void pfm_check(mw_method_avail *a)
{
    if (!a->available || !a->def)
        return;
    for (size_t e = 0; e < a->def->n_events; e++) {
        const mw_event_spec *ev = &a->def->events[e];
        if (!ev->pfm || !is_core_name(ev->pmu))
            continue;
        struct perf_event_attr attr;
        char why[240];
        if (mw_pfm_encode_spec(ev, 0, &attr, why, sizeof why) < 0) {
            a->available = 0;
            a->err = MW_ERR_PFM;
            setf(a->reason, sizeof a->reason, "core event \"%s\" (%s): %s", ev->role, ev->pfm,
                 why);
            return;
        }
    }
}

MW_API int mw_probe_run(const mw_probe_opts *opts, mw_probe **out)
{
    mw_probe_opts none = {NULL, NULL, NULL, 0};
    const mw_probe_opts *o = opts ? opts : &none;
    const char *proc = o->proc_root ? o->proc_root : "/proc";
    char path[PATH_MAX], a[64], b[96];
    *out = NULL;
    mw_probe *p = calloc(1, sizeof *p);
    if (!p)
        return -ENOMEM;

    p->cpu_err = mw_cpu_identify(proc, &p->cpu);
    if (p->cpu_err)
        p->cpu.uarch = MW_UARCH_UNKNOWN;
    cpu_flags(proc, &p->have_clflush, &p->have_tsc);

    setf(path, sizeof path, "%s/sys/kernel/ostype", proc);
    if (read_line(path, a, sizeof a))
        setf(a, sizeof a, "Linux");
    setf(path, sizeof path, "%s/sys/kernel/osrelease", proc);
    if (!read_line(path, b, sizeof b)) {
        setf(p->kernel, sizeof p->kernel, "%s %s", a, b);
    } else {
        struct utsname u;
        if (!uname(&u))
            setf(p->kernel, sizeof p->kernel, "%s %s", u.sysname, u.release);
        else
            setf(p->kernel, sizeof p->kernel, "unknown");
    }

    p->privs_err = mw_privs_read(proc, &p->privs);
    p->pmus_err = mw_pmus_discover(o->sysfs_root, &p->pmus);
    p->have_hardware = p->pmus && mw_pmus_have_hardware(p->pmus);
    if (p->pmus_err) {
        setf(p->summary, sizeof p->summary,
                 "cannot read %s/bus/event_source/devices: %s: no PMU can be used",
                 o->sysfs_root ? o->sysfs_root : "/sys", mw_strerror(p->pmus_err));
    } else if (!p->have_hardware) {
        no_hw_sentence(p->pmus, p->summary, sizeof p->summary);
    } else {
        char list[300];
        list_pmus(p->pmus, 1, list, sizeof list);
        setf(p->summary, sizeof p->summary, "hardware PMUs: %s", list);
    }

    const mw_method_def *defs = NULL;
    size_t n = 0;
    if (mw_catalogue_methods(p->cpu.uarch, &defs, &n))
        n = 0;
    if (n) {
        p->methods = calloc(n, sizeof *p->methods);
        if (!p->methods) {
            mw_probe_free(p);
            return -ENOMEM;
        }
    }
    for (size_t i = 0; i < n; i++)
        mw_method_check(&defs[i], p->pmus, p->privs_err ? NULL : &p->privs, p->have_clflush,
                        p->have_tsc, &p->methods[i]);
    /* On the live system (not a fixture tree, which describes another CPU) a
     * method that reads core events also needs this libpfm4 to encode them as
     * the catalogue expects. */
    int want_pfm = o->pfm_check > 0 || (o->pfm_check == 0 && !o->sysfs_root);
    for (size_t i = 0; i < n && want_pfm; i++)
        pfm_check(&p->methods[i]);
    p->n_methods = n;
    msr_check(o, p);
    *out = p;
    return 0;
}

MW_API void mw_probe_free(mw_probe *p)
{
    if (!p)
        return;
    mw_pmus_free(p->pmus);
    free(p->methods);
    free(p);
}

MW_API const mw_method_avail *mw_probe_method(const mw_probe *p, const char *name)
{
    for (size_t i = 0; p && name && i < p->n_methods; i++)
        if (!strcmp(p->methods[i].name, name))
            return &p->methods[i];
    return NULL;
}
