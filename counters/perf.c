/*
 * counters/perf.c: perf_event counting groups (perf.h) and the sentences that
 * explain why perf_event_open refused. Owns the group handles; calls the
 * kernel (perf_event_open, ioctl, read), privs.c and pmu_sysfs.c (only to explain
 * a failure), and mw_log.
 * Threading: a group belongs to one thread at a time. mw_perf_group_read()
 * uses only read(2) and arithmetic (async-signal-safe); open/close allocate.
 * mw_perf_why() is per thread.
 */
#include <memwatch/perf.h>
#include <memwatch/pmu.h>

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MW_PERF_MAX_EVENTS 64

struct mw_perf_group {
    size_t n_ev;       /* events per instance */
    size_t n_inst;     /* CPUs (system-wide) or 1 */
    int *fds;          /* [n_inst][n_ev] */
    uint64_t *ids;     /* [n_inst][n_ev] kernel ids, for mapping group reads */
    double *scale;     /* [n_ev] */
};

static __thread char mw_why[512];

MW_API const char *mw_perf_why(void)
{
    return mw_why;
}

/* ---- generic names ---- */

static const struct {
    const char *name;
    uint32_t type;
    uint64_t config;
} mw_generic[] = {
    {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS},
    {"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS},
    {"dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY},
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES},
    {"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES},
};

MW_API int mw_perf_event_generic(const char *name, mw_perf_event *out)
{
    for (size_t i = 0; name && i < sizeof mw_generic / sizeof mw_generic[0]; i++)
        if (!strcmp(name, mw_generic[i].name)) {
            memset(out, 0, sizeof *out);
            out->name = mw_generic[i].name;
            out->type = mw_generic[i].type;
            out->config = mw_generic[i].config;
            out->scale = 1.0;
            return 0;
        }
    return MW_ERR_NOEVENT;
}

MW_API int mw_perf_event_parse(const struct mw_pmu_set *pmus, const char *spec,
                               mw_perf_event *out, char *why, size_t why_len)
{
    if (!spec || !out) {
        if (why && why_len)
            snprintf(why, why_len, "no event name");
        return MW_ERR_PARSE;
    }
    if (!strchr(spec, '/')) {
        if (mw_perf_event_generic(spec, out) == 0) {
            out->name = spec;
            return 0;
        }
        if (why && why_len)
            snprintf(why, why_len,
                     "unknown event \"%.64s\": use a generic name (task-clock, page-faults, "
                     "context-switches, cycles, instructions, ...) or pmu/terms/ (msr/tsc/)",
                     spec);
        mw_log(MW_LOG_INFO, "unknown event \"%.64s\"", spec);
        return MW_ERR_NOEVENT;
    }
    mw_pmu_encoding e;
    int rc = mw_pmus_encode(pmus, spec, &e, why, why_len);
    if (rc)
        return rc;
    if (e.config[3]) {
        if (why && why_len)
            snprintf(why, why_len, "%.64s: config3 is not supported by memwatch", spec);
        return MW_ERR_UNSUPPORTED;
    }
    memset(out, 0, sizeof *out);
    out->name = spec;
    out->type = e.type;
    out->config = e.config[0];
    out->config1 = e.config[1];
    out->config2 = e.config[2];
    out->scale = e.scale;
    return 0;
}

/* ---- explaining failures ---- */

static const char *type_name(uint32_t type)
{
    switch (type) {
    case PERF_TYPE_HARDWARE: return "hardware";
    case PERF_TYPE_SOFTWARE: return "software";
    case PERF_TYPE_TRACEPOINT: return "tracepoint";
    case PERF_TYPE_HW_CACHE: return "hardware cache";
    case PERF_TYPE_RAW: return "raw core PMU";
    case PERF_TYPE_BREAKPOINT: return "breakpoint";
    default: return NULL;
    }
}

static const mw_pmu *pmu_of_type(const mw_pmu_set *pmus, uint32_t type)
{
    for (size_t i = 0; i < mw_pmus_count(pmus); i++)
        if (mw_pmus_get(pmus, i)->type == type)
            return mw_pmus_get(pmus, i);
    return NULL;
}

/* "software, msr, breakpoint, ..." : the PMUs the kernel has. */
static void pmu_list(const mw_pmu_set *pmus, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = 0;
    for (size_t i = 0; i < mw_pmus_count(pmus) && off + 1 < len; i++) {
        int w = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", mw_pmus_get(pmus, i)->name);
        if (w < 0)
            break;
        off += (size_t)w;
    }
}

static const char *paranoid_str(const mw_privs *p, char *buf, size_t len)
{
    if (p->paranoid == MW_PARANOID_UNKNOWN)
        snprintf(buf, len, "unknown (cannot read /proc/sys/kernel/perf_event_paranoid)");
    else
        snprintf(buf, len, "%d", p->paranoid);
    return buf;
}

static const char *target_str(const mw_perf_target *t, char *buf, size_t len)
{
    if (!t)
        snprintf(buf, len, "this thread");
    else if (t->kind == MW_PERF_THREAD)
        snprintf(buf, len, t->tid ? "thread %d" : "this thread", (int)t->tid);
    else if (t->kind == MW_PERF_CPU)
        snprintf(buf, len, "CPU %d", t->cpu);
    else
        snprintf(buf, len, "every CPU (system-wide)");
    return buf;
}

/* mw_perf_explain's facts about the failed open, shared by its per-errno helpers. */
typedef struct perf_why {
    int err;
    const mw_perf_event *ev;
    const mw_perf_target *t;
    unsigned flags;
    const mw_privs *p;
    const struct mw_pmu_set *pmus;
    const char *name, *tn;
    const mw_pmu *pmu;
    uint32_t type;
    int cpu_wide, uncore, hw;
    const char *par, *tgt, *list;
    char *buf;
    size_t len;
} perf_why;

/* EACCES, EPERM: which privilege is missing (paranoid level, capability, ptrace). */
static int perf_why_denied(const perf_why *pw)
{
    const char *name = pw->name, *tgt = pw->tgt, *par = pw->par;
    const mw_perf_target *t = pw->t;
    const mw_privs *p = pw->p;
    unsigned flags = pw->flags;
    int cpu_wide = pw->cpu_wide, err = pw->err;
    char *buf = pw->buf;
    size_t len = pw->len;
    if (p->paranoid >= 3 && !p->cap_perfmon && !p->cap_sys_admin) {
        snprintf(buf, len,
                 "%s on %s: permission denied: kernel.perf_event_paranoid is %s, which "
                 "forbids perf_event_open to users without CAP_PERFMON; set "
                 "`sysctl -w kernel.perf_event_paranoid=1` (or 0 for per-CPU counting), "
                 "or run as root / with CAP_PERFMON",
                 name, tgt, par);
        return MW_ERR_PARANOID;
    }
    if (cpu_wide && !mw_privs_can_cpu_wide(p)) {
        snprintf(buf, len,
                 "%s on %s: per-CPU and system-wide counting needs perf_event_paranoid <= 0 "
                 "or CAP_PERFMON; kernel.perf_event_paranoid is %s here and this user has "
                 "neither CAP_PERFMON nor CAP_SYS_ADMIN: run as root, grant CAP_PERFMON "
                 "(setcap cap_perfmon+ep), or set `sysctl -w kernel.perf_event_paranoid=0`",
                 name, tgt, par);
        return MW_ERR_PARANOID;
    }
    if (!(flags & MW_PERF_USER_ONLY) && !mw_privs_can_kernel(p)) {
        snprintf(buf, len,
                 "%s on %s: counting kernel mode needs perf_event_paranoid <= 1 or "
                 "CAP_PERFMON; kernel.perf_event_paranoid is %s here: count user mode only "
                 "(MW_PERF_USER_ONLY), or set `sysctl -w kernel.perf_event_paranoid=1`, or "
                 "grant CAP_PERFMON",
                 name, tgt, par);
        return MW_ERR_PARANOID;
    }
    if (t && t->kind == MW_PERF_THREAD && t->tid && t->tid != getpid()) {
        snprintf(buf, len,
                 "%s on %s: permission denied: counting another process needs ptrace "
                 "access to it (same user and kernel.yama.ptrace_scope 0, or "
                 "CAP_PERFMON / CAP_SYS_PTRACE)",
                 name, tgt);
        return MW_ERR_PRIV;
    }
    /* the advice leaves out what the process already has */
    snprintf(buf, len,
             "%s on %s: permission denied (%s) although perf_event_paranoid is %s%s: a "
             "security policy (seccomp in a container, SELinux, AppArmor, lockdown) forbids "
             "perf_event_open; run outside the container, or give it %sa seccomp profile that "
             "allows perf_event_open",
             name, tgt, err == EACCES ? "EACCES" : "EPERM", par,
             p->cap_perfmon ? " and this process has CAP_PERFMON" : "",
             p->cap_perfmon || p->cap_sys_admin ? ""
                                                : "CAP_PERFMON (docker run --cap-add PERFMON) or ");
    return MW_ERR_PRIV;
}

/* ENOENT, EOPNOTSUPP, ENODEV: no PMU, a per-CPU-only PMU, or an event it lacks. */
static int perf_why_unsupported(const perf_why *pw)
{
    const char *name = pw->name, *tgt = pw->tgt, *tn = pw->tn, *list = pw->list;
    const mw_perf_event *ev = pw->ev;
    const mw_perf_target *t = pw->t;
    const struct mw_pmu_set *pmus = pw->pmus;
    const mw_pmu *pmu = pw->pmu;
    uint32_t type = pw->type;
    int cpu_wide = pw->cpu_wide, uncore = pw->uncore, hw = pw->hw, err = pw->err;
    char *buf = pw->buf;
    size_t len = pw->len;
    if (hw && !mw_pmus_core(pmus)) {
        snprintf(buf, len,
                 "%s: %s events are not supported here: the kernel exposes no hardware PMU: "
                 "only %s (virtual machines often hide the PMU from guests)",
                 name, tn, list[0] ? list : "no PMU at all");
        return MW_ERR_NOPMU;
    }
    if (!tn && !pmu) {
        snprintf(buf, len, "%s: no PMU of type %u on this machine (PMUs: %s)", name,
                 (unsigned)type, list[0] ? list : "none");
        return MW_ERR_NOPMU;
    }
    if (err == EOPNOTSUPP && uncore && !cpu_wide) {
        snprintf(buf, len,
                 "%s: %s counts only per CPU, not per thread: open it system-wide on its "
                 "cpumask",
                 name, pmu->name);
        return MW_ERR_UNSUPPORTED;
    }
    if (err == ENODEV && t && t->kind != MW_PERF_THREAD) {
        snprintf(buf, len, "%s on %s: that CPU does not exist or is offline (ENODEV)", name,
                 tgt);
        return -ENODEV;
    }
    snprintf(buf, len,
             "%s: the %s PMU does not support this event (config=0x%llx config1=0x%llx, "
             "%s)%s",
             name, pmu ? pmu->name : (tn ? tn : "?"),
             (unsigned long long)(ev ? ev->config : 0),
             (unsigned long long)(ev ? ev->config1 : 0),
             err == ENOENT ? "ENOENT" : err == ENODEV ? "ENODEV" : "EOPNOTSUPP",
             err == EOPNOTSUPP ? "; it may not support sampling, exclude_* bits or per-task "
                                 "counting"
                               : "");
    return MW_ERR_UNSUPPORTED;
}

/* EINVAL: a per-CPU-only PMU, config bits outside its formats, or attributes in general. */
static int perf_why_invalid(const perf_why *pw)
{
    const char *name = pw->name, *tgt = pw->tgt, *tn = pw->tn;
    const mw_perf_event *ev = pw->ev;
    const mw_pmu *pmu = pw->pmu;
    int cpu_wide = pw->cpu_wide, uncore = pw->uncore;
    char *buf = pw->buf;
    size_t len = pw->len;
    if (uncore && !cpu_wide) {
        snprintf(buf, len,
                 "%s: %s counts only per CPU (uncore), not per thread: open it system-wide "
                 "on its cpumask",
                 name, pmu->name);
        return MW_ERR_UNSUPPORTED;
    }
    if (pmu && pmu->n_formats && ev) {
        /* Bits outside every format field of the PMU name themselves. */
        uint64_t known[3] = {0, 0, 0}, cfg[3] = {ev->config, ev->config1, ev->config2};
        for (size_t i = 0; i < pmu->n_formats; i++)
            if (pmu->formats[i].word < 3)
                known[pmu->formats[i].word] |= pmu->formats[i].mask;
        for (int w = 0; w < 3; w++)
            if (cfg[w] & ~known[w]) {
                snprintf(buf, len,
                         "%s on %s: the kernel rejected the event (EINVAL): config%s bits "
                         "0x%llx are outside every format field of the %s PMU",
                         name, tgt, w ? (w == 1 ? "1" : "2") : "",
                         (unsigned long long)(cfg[w] & ~known[w]), pmu->name);
                return MW_ERR_UNSUPPORTED;
            }
    }
    snprintf(buf, len,
             "%s on %s: the kernel rejected the event's attributes (EINVAL): a config bit the "
             "%s PMU does not support (config=0x%llx config1=0x%llx config2=0x%llx), a CPU "
             "outside the PMU's cpumask, or an option this kernel lacks",
             name, tgt, pmu ? pmu->name : (tn ? tn : "?"),
             (unsigned long long)(ev ? ev->config : 0),
             (unsigned long long)(ev ? ev->config1 : 0),
             (unsigned long long)(ev ? ev->config2 : 0));
    return MW_ERR_UNSUPPORTED;
}

MW_API int mw_perf_explain(int err, const mw_perf_event *ev, const mw_perf_target *t,
                           unsigned flags, const mw_privs *p, const struct mw_pmu_set *pmus,
                           char *buf, size_t len)
{
    char par[96], tgt[64], list[512];
    const char *name = ev && ev->name ? ev->name : "event";
    uint32_t type = ev ? ev->type : 0;
    const char *tn = type_name(type);
    const mw_pmu *pmu = pmus ? pmu_of_type(pmus, type) : NULL;
    int cpu_wide = t && t->kind != MW_PERF_THREAD;
    /* An uncore-style PMU: it publishes a cpumask and is not a (hybrid) core PMU. */
    int uncore = pmu && pmu->n_cpus && strncmp(pmu->name, "cpu", 3);
    int hw = type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE || type == PERF_TYPE_RAW;
    mw_privs none = {0, 0, 0, MW_PARANOID_UNKNOWN, 0};
    if (!p)
        p = &none;
    paranoid_str(p, par, sizeof par);
    target_str(t, tgt, sizeof tgt);
    pmu_list(pmus, list, sizeof list);

    if ((err == EINVAL || err == ENODEV) && t && t->kind == MW_PERF_CPU && t->cpu >= 0) {
        long ncpu = sysconf(_SC_NPROCESSORS_CONF);
        if (ncpu > 0 && t->cpu >= ncpu) {
            snprintf(buf, len, "%s on %s: that CPU does not exist (this machine has CPUs 0-%ld)",
                     name, tgt, ncpu - 1);
            return -ENODEV;
        }
    }
    perf_why w = {.err = err, .ev = ev, .t = t, .flags = flags, .p = p, .pmus = pmus,
                  .name = name, .tn = tn, .pmu = pmu, .type = type, .cpu_wide = cpu_wide,
                  .uncore = uncore, .hw = hw, .par = par, .tgt = tgt, .list = list,
                  .buf = buf, .len = len};
    switch (err) {
    case EACCES:
    case EPERM:
        return perf_why_denied(&w);
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
        return perf_why_unsupported(&w);
    case EINVAL:
        return perf_why_invalid(&w);
    case EMFILE: {
        struct rlimit rl = {0, 0};
        getrlimit(RLIMIT_NOFILE, &rl);
        snprintf(buf, len,
                 "%s: too many open files (EMFILE): memwatch needs one descriptor per event and "
                 "CPU; the limit is %llu here: raise it with `ulimit -n %llu` (hard limit %llu) "
                 "or count fewer events or CPUs",
                 name, (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_cur * 4,
                 (unsigned long long)rl.rlim_max);
        return -EMFILE;
    }
    case ENFILE:
        snprintf(buf, len, "%s: the system's file table is full (ENFILE, fs.file-max)", name);
        return -ENFILE;
    case EBUSY:
        snprintf(buf, len,
                 "%s on %s: the counter is busy (EBUSY): another user holds it exclusively "
                 "(perf, likwid, VTune, a pinned event or the NMI watchdog); stop the other tool "
                 "or set `sysctl -w kernel.nmi_watchdog=0`",
                 name, tgt);
        return -EBUSY;
    case ENOSPC:
        snprintf(buf, len,
                 "%s: no free counter or breakpoint slot (ENOSPC): the group needs more "
                 "hardware counters than the PMU has",
                 name);
        return -ENOSPC;
    case ESRCH:
        snprintf(buf, len, "%s on %s: no such thread (ESRCH): it has exited", name, tgt);
        return -ESRCH;
    case ENOSYS:
        snprintf(buf, len,
                 "%s: this kernel has no perf_event_open (ENOSYS: built without "
                 "CONFIG_PERF_EVENTS, or blocked by seccomp)",
                 name);
        return MW_ERR_UNSUPPORTED;
    case E2BIG:
        snprintf(buf, len, "%s: the kernel is older than memwatch's perf_event_attr (E2BIG)",
                 name);
        return MW_ERR_UNSUPPORTED;
    default:
        snprintf(buf, len, "%s on %s: perf_event_open failed: %s", name, tgt, strerror(err));
        return -err;
    }
}

/* ---- groups ---- */

static int perf_open(struct perf_event_attr *a, pid_t pid, int cpu, int group)
{
    return (int)syscall(SYS_perf_event_open, a, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

static int online_cpus(int **out, size_t *n)
{
    char buf[4096];
    int tmp[4096], k = -1;
    FILE *f = fopen("/sys/devices/system/cpu/online", "re");
    if (f) {
        if (fgets(buf, sizeof buf, f))
            k = mw_cpulist_parse(buf, tmp, sizeof tmp / sizeof tmp[0]);
        fclose(f);
    }
    if (k <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        k = c > 0 && c <= 4096 ? (int)c : 1;
        for (int i = 0; i < k; i++)
            tmp[i] = i;
    }
    *out = malloc((size_t)k * sizeof **out);
    if (!*out)
        return -ENOMEM;
    memcpy(*out, tmp, (size_t)k * sizeof **out);
    *n = (size_t)k;
    return 0;
}

MW_API void mw_perf_group_close(mw_perf_group *g)
{
    if (!g)
        return;
    for (size_t i = 0; g->fds && i < g->n_inst * g->n_ev; i++)
        if (g->fds[i] >= 0)
            close(g->fds[i]);
    free(g->fds);
    free(g->ids);
    free(g->scale);
    free(g);
}

static int fail_open(int err, const mw_perf_event *ev, const mw_perf_target *t, unsigned flags)
{
    mw_privs p;
    mw_pmu_set *pmus = NULL;
    if (mw_privs_read(NULL, &p))
        p = (mw_privs){0, 0, 0, MW_PARANOID_UNKNOWN, 0};
    mw_pmus_discover(NULL, &pmus);
    int rc = mw_perf_explain(err, ev, t, flags, &p, pmus, mw_why, sizeof mw_why);
    mw_pmus_free(pmus);
    mw_log(MW_LOG_INFO, "%s", mw_why);
    return rc;
}

MW_API int mw_perf_group_open(const mw_perf_event *ev, size_t n, const mw_perf_target *t,
                              unsigned flags, mw_perf_group **out)
{
    int rc = 0, *cpus = NULL;
    size_t n_cpus = 0;
    mw_perf_group *g = NULL;
    *out = NULL;
    mw_why[0] = 0;
    if (!ev || !t || n == 0 || n > MW_PERF_MAX_EVENTS) {
        snprintf(mw_why, sizeof mw_why, "a group holds 1 to %d events, not %zu",
                 MW_PERF_MAX_EVENTS, n);
        return MW_ERR_TOOBIG;
    }
    switch (t->kind) {
    case MW_PERF_THREAD:
    case MW_PERF_CPU:
        n_cpus = 1;
        break;
    case MW_PERF_SYSTEM:
        if (t->cpus && t->n_cpus) {
            n_cpus = t->n_cpus;
        } else if ((rc = online_cpus(&cpus, &n_cpus))) {
            goto fail;
        }
        break;
    default:
        snprintf(mw_why, sizeof mw_why, "unknown target kind %d", (int)t->kind);
        return MW_ERR_PARSE;
    }
    g = calloc(1, sizeof *g);
    if (!g) {
        rc = -ENOMEM;
        goto fail;
    }
    g->n_ev = n;
    g->n_inst = n_cpus;
    g->fds = malloc(n * n_cpus * sizeof *g->fds);
    g->ids = calloc(n * n_cpus, sizeof *g->ids);
    g->scale = malloc(n * sizeof *g->scale);
    if (!g->fds || !g->ids || !g->scale) {
        rc = -ENOMEM;
        goto fail;
    }
    for (size_t i = 0; i < n * n_cpus; i++)
        g->fds[i] = -1;
    for (size_t e = 0; e < n; e++)
        g->scale[e] = ev[e].scale > 0 ? ev[e].scale : 1.0;
    for (size_t c = 0; c < n_cpus; c++) {
        pid_t pid = -1;
        int cpu = -1;
        if (t->kind == MW_PERF_THREAD)
            pid = t->tid;
        else if (t->kind == MW_PERF_CPU)
            cpu = t->cpu;
        else
            cpu = cpus ? cpus[c] : t->cpus[c];
        for (size_t e = 0; e < n; e++) {
            struct perf_event_attr a;
            memset(&a, 0, sizeof a);
            a.size = sizeof a;
            a.type = ev[e].type;
            a.config = ev[e].config;
            a.config1 = ev[e].config1;
            a.config2 = ev[e].config2;
            a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                            PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
            if (e == 0) {
                a.disabled = 1;
                a.pinned = (flags & MW_PERF_PINNED) ? 1 : 0;
            }
            if (flags & MW_PERF_USER_ONLY) {
                a.exclude_kernel = 1;
                a.exclude_hv = 1;
            }
            int leader = e ? g->fds[c * n] : -1;
            int fd = perf_open(&a, pid, cpu, leader);
            if (fd < 0) {
                int err = errno;
                mw_perf_target one = *t;
                if (t->kind == MW_PERF_SYSTEM) {
                    one.kind = MW_PERF_CPU;
                    one.cpu = cpu;
                }
                rc = fail_open(err, &ev[e], &one, flags);
                goto fail;
            }
            g->fds[c * n + e] = fd;
            if (ioctl(fd, PERF_EVENT_IOC_ID, &g->ids[c * n + e]) < 0) {
                rc = -errno;
                snprintf(mw_why, sizeof mw_why, "%s: PERF_EVENT_IOC_ID failed: %s",
                         ev[e].name ? ev[e].name : "event", strerror(errno));
                goto fail;
            }
        }
    }
    free(cpus);
    *out = g;
    return 0;
fail:
    if (!mw_why[0])
        snprintf(mw_why, sizeof mw_why, "%s", mw_strerror(rc));
    free(cpus);
    mw_perf_group_close(g);
    return rc;
}

static int group_ioctl(mw_perf_group *g, unsigned long req)
{
    if (!g)
        return -EINVAL;
    for (size_t c = 0; c < g->n_inst; c++)
        if (ioctl(g->fds[c * g->n_ev], req, PERF_IOC_FLAG_GROUP) < 0)
            return -errno;
    return 0;
}

MW_API int mw_perf_group_enable(mw_perf_group *g)
{
    return group_ioctl(g, PERF_EVENT_IOC_ENABLE);
}

MW_API int mw_perf_group_disable(mw_perf_group *g)
{
    return group_ioctl(g, PERF_EVENT_IOC_DISABLE);
}

MW_API int mw_perf_group_reset(mw_perf_group *g)
{
    return group_ioctl(g, PERF_EVENT_IOC_RESET);
}

MW_API double mw_perf_scaled(uint64_t raw, uint64_t enabled_ns, uint64_t running_ns, double scale)
{
    if (!running_ns)
        return 0.0;
    if (!(scale > 0))
        scale = 1.0;
    if (running_ns >= enabled_ns) /* not multiplexed: exact */
        return (double)raw * scale;
    return (double)raw * ((double)enabled_ns / (double)running_ns) * scale;
}

MW_API int mw_perf_group_read(mw_perf_group *g, mw_perf_value *vals, size_t n)
{
    uint64_t buf[3 + 2 * MW_PERF_MAX_EVENTS];
    if (!g || !vals || n != g->n_ev)
        return -EINVAL;
    for (size_t e = 0; e < n; e++)
        vals[e] = (mw_perf_value){0, 0, 0, 0.0};
    for (size_t c = 0; c < g->n_inst; c++) {
        size_t want = (3 + 2 * n) * sizeof(uint64_t);
        ssize_t r;
        do
            r = read(g->fds[c * n], buf, want);
        while (r < 0 && errno == EINTR);
        if (r < 0)
            return -errno;
        if ((size_t)r < 3 * sizeof(uint64_t) || buf[0] != n ||
            (size_t)r < (3 + 2 * buf[0]) * sizeof(uint64_t))
            return -EIO;
        uint64_t en = buf[1], run = buf[2];
        for (size_t k = 0; k < n; k++) {
            uint64_t value = buf[3 + 2 * k], id = buf[4 + 2 * k];
            size_t e = k;
            if (g->ids[c * n + k] != id) /* the kernel keeps creation order; map anyway */
                for (e = 0; e < n && g->ids[c * n + e] != id; e++)
                    ;
            if (e == n)
                return -EIO;
            vals[e].raw += value;
            vals[e].enabled_ns += en;
            vals[e].running_ns += run;
            vals[e].scaled += mw_perf_scaled(value, en, run, g->scale[e]);
        }
    }
    return 0;
}

MW_API size_t mw_perf_group_instances(const mw_perf_group *g)
{
    return g ? g->n_inst : 0;
}

MW_API int mw_perf_group_fd(const mw_perf_group *g, size_t instance, size_t ev)
{
    if (!g || instance >= g->n_inst || ev >= g->n_ev)
        return -EINVAL;
    return g->fds[instance * g->n_ev + ev];
}
