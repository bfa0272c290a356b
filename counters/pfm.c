/*
 * counters/pfm.c: core-event encoding through libpfm4 (include/memwatch/encode.h).
 * Owns the one-time pfm_initialize() and turns libpfm4's answers and errors into
 * perf_event_attr fields and sentences: which PMU model the installed libpfm4
 * lacks, which one it knows but did not detect, which event or modifier is
 * unknown.
 *
 * libpfm4 is loaded with dlopen at the first call that needs it (MW_PFM_SONAME,
 * read from the library when the build is configured): its 41,000 load-time
 * relocations cost every memwatch command about 1 ms of CPU when it was
 * linked, and most commands (record on a machine without a PMU, report)
 * never encode an event (docs/overhead.md, "memwatch record's own cost").
 *
 * May call: libpfm4, libc, mw_log. Thread safety: initialisation through
 * pthread_once; encoding serialised by a mutex (libpfm4 does not promise
 * reentrant encoding). Not async-signal-safe: never call from a hook path.
 */
#include <memwatch/encode.h>

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* linux/perf_event.h (through encode.h) comes first, so libpfm4's header uses
 * the kernel's struct perf_event_attr instead of its own copy. */
#include <perfmon/pfmlib_perf_event.h>

/* The libpfm4 functions used, resolved once by mw_pfm_init_once; why says
 * what was missing where they are not. */
static struct mw_lp {
    int (*initialize)(void);
    const char *(*strerror)(int);
    int (*get_version)(void);
    pfm_err_t (*get_pmu_info)(pfm_pmu_t, pfm_pmu_info_t *);
    int (*get_os_event_encoding)(const char *, int, pfm_os_t, void *);
    char why[320];
} lp;

/* libpfm4's sentence for rc, or why it could not be loaded. */
static const char *mw_pfm_err(int rc)
{
    return lp.strerror ? lp.strerror(rc) : lp.why;
}

/* 0, or -1 with lp.why set. */
static int mw_pfm_load(void)
{
    void *h = dlopen(MW_PFM_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(lp.why, sizeof lp.why, "cannot load libpfm4 (%s): %s", MW_PFM_SONAME,
                 e ? e : "dlopen failed");
        return -1;
    }
    static const struct {
        const char *name;
        size_t off;
    } fn[] = {
        {"pfm_initialize", offsetof(struct mw_lp, initialize)},
        {"pfm_strerror", offsetof(struct mw_lp, strerror)},
        {"pfm_get_version", offsetof(struct mw_lp, get_version)},
        {"pfm_get_pmu_info", offsetof(struct mw_lp, get_pmu_info)},
        {"pfm_get_os_event_encoding", offsetof(struct mw_lp, get_os_event_encoding)},
    };
    for (size_t i = 0; i < sizeof fn / sizeof fn[0]; i++) {
        void *f = dlsym(h, fn[i].name);
        if (!f) {
            snprintf(lp.why, sizeof lp.why, "%s has no %s", MW_PFM_SONAME, fn[i].name);
            memset(&lp, 0, offsetof(struct mw_lp, why));
            dlclose(h);
            return -1;
        }
        memcpy((char *)&lp + fn[i].off, &f, sizeof f);
    }
    return 0;
}

static pthread_once_t mw_pfm_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t mw_pfm_lock = PTHREAD_MUTEX_INITIALIZER;
static int mw_pfm_init_rc; /* pfm_initialize()'s result */
static char mw_pfm_version_str[16] = "unknown";

static void mw_pfm_init_once(void)
{
    if (mw_pfm_load() < 0) {
        mw_pfm_init_rc = PFM_ERR_NOINIT;
        mw_log(MW_LOG_WARN, "libpfm4: %s", lp.why);
        return;
    }
    mw_pfm_init_rc = lp.initialize();
    if (mw_pfm_init_rc != PFM_SUCCESS) {
        mw_log(MW_LOG_WARN, "libpfm4: pfm_initialize failed: %s", mw_pfm_err(mw_pfm_init_rc));
        return;
    }
    /* pfm_get_version() gives the API version (4.0), not the release. The release
     * is in the name of the shared object the dynamic linker resolved
     * (libpfm.so.4.13.0); a static or renamed libpfm4 leaves "4.x". */
    int v = lp.get_version();
    if (v >= 0)
        snprintf(mw_pfm_version_str, sizeof mw_pfm_version_str, "%d.x", PFM_MAJ_VERSION(v));
    Dl_info dli;
    char real[PATH_MAX];
    unsigned maj, min;
    if (dladdr((void *)lp.initialize, &dli) && dli.dli_fname && realpath(dli.dli_fname, real)) {
        const char *so = strstr(real, ".so.");
        if (so && sscanf(so + 4, "%u.%u", &maj, &min) == 2)
            snprintf(mw_pfm_version_str, sizeof mw_pfm_version_str, "%u.%u", maj, min);
    }
}

MW_API int mw_pfm_init(void)
{
    pthread_once(&mw_pfm_once, mw_pfm_init_once);
    return mw_pfm_init_rc == PFM_SUCCESS ? 0 : MW_ERR_PFM;
}

MW_API const char *mw_pfm_version(void)
{
    mw_pfm_init();
    return mw_pfm_version_str;
}

/*
 * PMU identifiers are stable across libpfm4 releases and new models are added at
 * the end, so a libpfm4 newer than the headers memwatch was built with knows ids
 * at or above the header's PFM_PMU_MAX (pfm_for_all_pmus would never see them).
 * Scan up to this bound instead; pfm_get_pmu_info refuses ids it does not know.
 */
#define MW_PFM_PMU_SCAN_MAX 4096

/* Finds a PMU model by libpfm4 name; fills *info. 0 or MW_ERR_NOPMU. */
static int mw_pfm_find_pmu(const char *name, pfm_pmu_info_t *info)
{
    for (int p = PFM_PMU_NONE; p < MW_PFM_PMU_SCAN_MAX; p++) {
        memset(info, 0, sizeof *info);
        info->size = sizeof *info;
        if (lp.get_pmu_info((pfm_pmu_t)p, info) != PFM_SUCCESS || !info->name)
            continue;
        if (strcmp(info->name, name) == 0)
            return 0;
    }
    return MW_ERR_NOPMU;
}

MW_API int mw_pfm_pmu_status(const char *pfm_pmu)
{
    pfm_pmu_info_t info;
    if (!pfm_pmu || !*pfm_pmu)
        return -EINVAL;
    if (mw_pfm_init() < 0)
        return MW_ERR_PFM;
    int rc = mw_pfm_find_pmu(pfm_pmu, &info);
    if (rc < 0)
        return rc;
    return info.is_present ? 1 : 0;
}

MW_API int mw_pfm_host_pmu(char *buf, size_t cap)
{
    pfm_pmu_info_t info;
    if (!buf || cap == 0)
        return -EINVAL;
    buf[0] = '\0';
    if (mw_pfm_init() < 0)
        return MW_ERR_PFM;
    for (int p = PFM_PMU_NONE; p < MW_PFM_PMU_SCAN_MAX; p++) {
        memset(&info, 0, sizeof info);
        info.size = sizeof info;
        if (lp.get_pmu_info((pfm_pmu_t)p, &info) != PFM_SUCCESS || !info.is_present)
            continue;
        if (info.type != PFM_PMU_TYPE_CORE)
            continue;
        snprintf(buf, cap, "%s", info.name);
        return 0;
    }
    return MW_ERR_NOPMU;
}

/*
 * PMU models that libpfm4 encodes from one and the same event table but detects
 * under different names: Emerald Rapids ("emr", libpfm4 after 4.13) uses
 * intel_spr_events.h like "spr"; Knights Mill ("knm") uses intel_knl_events.h
 * like "knl" (libpfm4 lib/pfmlib_intel_spr.c, lib/pfmlib_intel_knl.c). The
 * catalogue names the first; when it is not active but its twin is, the event
 * is encoded through the twin.
 */
static const struct {
    const char *table, *twin;
} mw_pfm_twins[] = {
    {"spr", "emr"},
    {"knl", "knm"},
};

/* Rewrites "pmu::rest" to "twin::rest" in out when pmu is inactive and its twin
 * active here; returns out, or event unchanged. */
static const char *mw_pfm_twin_event(const char *event, char *out, size_t cap)
{
    const char *sep = strstr(event, "::");
    if (!sep)
        return event;
    size_t n = (size_t)(sep - event);
    for (size_t i = 0; i < sizeof mw_pfm_twins / sizeof mw_pfm_twins[0]; i++) {
        const char *t = mw_pfm_twins[i].table;
        if (strlen(t) != n || strncmp(event, t, n) != 0)
            continue;
        if (mw_pfm_pmu_status(t) == 1 || mw_pfm_pmu_status(mw_pfm_twins[i].twin) != 1)
            return event;
        if ((size_t)snprintf(out, cap, "%s%s", mw_pfm_twins[i].twin, sep) >= cap)
            return event;
        return out;
    }
    return event;
}

/* Formats the reason of a failure into why (when given) and the log. */
static int mw_pfm_fail(int rc, int level, char *why, size_t why_cap, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int mw_pfm_fail(int rc, int level, char *why, size_t why_cap, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mw_log(level, "libpfm4: %s", msg);
    if (why && why_cap)
        snprintf(why, why_cap, "%s", msg);
    return rc;
}

/* Explains PFM_ERR_NOTFOUND for `event`: a PMU model missing from this libpfm4, a
 * model not detected here, or an event the model does not have. */
static int mw_pfm_explain_notfound(const char *event, char *why, size_t why_cap)
{
    const char *sep = strstr(event, "::");
    if (!sep)
        return mw_pfm_fail(MW_ERR_NOEVENT, MW_LOG_WARN, why, why_cap,
                           "no PMU active on this CPU knows event '%s' (libpfm4 %s)", event,
                           mw_pfm_version_str);
    char pmu[64];
    size_t n = (size_t)(sep - event);
    if (n >= sizeof pmu)
        n = sizeof pmu - 1;
    memcpy(pmu, event, n);
    pmu[n] = '\0';
    /* "pmu::" alone asks about the PMU as a whole (mw_pfm_uarch_status). */
    char what[320] = "";
    if (sep[2])
        snprintf(what, sizeof what, ", so it cannot encode '%s'", event);
    int st = mw_pfm_pmu_status(pmu);
    if (st == MW_ERR_NOPMU)
        return mw_pfm_fail(MW_ERR_NOPMU, MW_LOG_INFO, why, why_cap,
                           "the installed libpfm4 %s has no PMU model '%s'%s; a newer libpfm4 "
                           "is needed",
                           mw_pfm_version_str, pmu, what);
    if (st == 0) {
        const char *hint = "";
        if (!strcmp(pmu, "spr"))
            hint = "; Emerald Rapids needs a libpfm4 with the 'emr' model (after 4.13), "
                   "or LIBPFM_FORCE_PMU=spr, since both share one event table";
        return mw_pfm_fail(MW_ERR_NOPMU, MW_LOG_INFO, why, why_cap,
                           "libpfm4 %s knows PMU model '%s' but did not detect it on this "
                           "CPU (LIBPFM_FORCE_PMU=%s forces it)%s%s",
                           mw_pfm_version_str, pmu, pmu, what, hint);
    }
    return mw_pfm_fail(MW_ERR_NOEVENT, MW_LOG_WARN, why, why_cap,
                       "libpfm4 %s PMU '%s' has no event '%s'", mw_pfm_version_str, pmu, sep + 2);
}

MW_API int mw_pfm_uarch_status(mw_uarch u, char *why, size_t why_cap)
{
    if (why && why_cap)
        why[0] = '\0';
    const char *pmu = mw_uarch_pfm_pmu(u);
    if (!pmu)
        return mw_pfm_fail(MW_ERR_UNSUPPORTED, MW_LOG_INFO, why, why_cap,
                           "memwatch has no core event table for %s", mw_uarch_long_name(u));
    if (mw_pfm_init() < 0)
        return mw_pfm_fail(MW_ERR_PFM, MW_LOG_WARN, why, why_cap,
                           "libpfm4 failed to initialise: %s", mw_pfm_err(mw_pfm_init_rc));
    char probe[96], twin[128];
    snprintf(probe, sizeof probe, "%s::", pmu);
    if (mw_pfm_pmu_status(pmu) == 1 || mw_pfm_twin_event(probe, twin, sizeof twin) != probe)
        return 1;
    /* Same sentences as for a single event, about the PMU as a whole. */
    int rc = mw_pfm_explain_notfound(probe, why, why_cap);
    return rc == MW_ERR_NOEVENT ? MW_ERR_PFM : rc;
}

MW_API int mw_pfm_encode_ex(const char *event, unsigned flags, struct perf_event_attr *attr,
                            char *why, size_t why_cap)
{
    /* libpfm4 may know a longer perf_event_attr than the kernel headers memwatch
     * builds with; give it room and copy the fields memwatch uses. */
    union {
        struct perf_event_attr a;
        unsigned char room[1024];
    } u;
    pfm_perf_encode_arg_t arg;
    char *fstr = NULL;
    int plm, ret, rc;

    if (why && why_cap)
        why[0] = '\0';
    if (!event || !*event || !attr)
        return mw_pfm_fail(-EINVAL, MW_LOG_WARN, why, why_cap, "no event to encode");
    if (mw_pfm_init() < 0)
        return mw_pfm_fail(MW_ERR_PFM, MW_LOG_WARN, why, why_cap,
                           "libpfm4 failed to initialise: %s", mw_pfm_err(mw_pfm_init_rc));

    switch (flags & (MW_ENC_USER | MW_ENC_KERNEL)) {
    case MW_ENC_USER:
        plm = PFM_PLM3;
        break;
    case MW_ENC_KERNEL:
        plm = PFM_PLM0;
        break;
    default:
        plm = PFM_PLM0 | PFM_PLM3;
        break;
    }

    memset(&u, 0, sizeof u);
    u.a.size = sizeof u.a;
    memset(&arg, 0, sizeof arg);
    arg.size = sizeof arg;
    arg.attr = &u.a;
    arg.fstr = &fstr;

    char twin[256];
    const char *enc = mw_pfm_twin_event(event, twin, sizeof twin);

    pthread_mutex_lock(&mw_pfm_lock);
    ret = lp.get_os_event_encoding(enc, plm, PFM_OS_PERF_EVENT_EXT, &arg);
    pthread_mutex_unlock(&mw_pfm_lock);

    switch (ret) {
    case PFM_SUCCESS:
        break;
    case PFM_ERR_NOTFOUND:
        rc = mw_pfm_explain_notfound(event, why, why_cap);
        goto out;
    case PFM_ERR_ATTR:
    case PFM_ERR_ATTR_VAL:
    case PFM_ERR_ATTR_SET:
    case PFM_ERR_UMASK:
        rc = mw_pfm_fail(MW_ERR_NOEVENT, MW_LOG_WARN, why, why_cap, "libpfm4 %s rejects '%s': %s",
                         mw_pfm_version_str, event, mw_pfm_err(ret));
        goto out;
    default:
        rc = mw_pfm_fail(MW_ERR_PFM, MW_LOG_WARN, why, why_cap, "libpfm4 %s cannot encode '%s': %s",
                         mw_pfm_version_str, event, mw_pfm_err(ret));
        goto out;
    }

    memset(attr, 0, sizeof *attr);
    attr->size = sizeof *attr;
    attr->type = u.a.type;
    attr->config = u.a.config;
    attr->config1 = u.a.config1;
    attr->config2 = u.a.config2;
    attr->precise_ip = u.a.precise_ip;
    attr->exclude_user = u.a.exclude_user;
    attr->exclude_kernel = u.a.exclude_kernel;
    attr->exclude_hv = u.a.exclude_hv;
    attr->exclude_host = u.a.exclude_host;
    attr->exclude_guest = u.a.exclude_guest;
    attr->sample_period = u.a.sample_period;
    attr->freq = u.a.freq;
    mw_log(MW_LOG_DEBUG,
           "libpfm4: %s -> %s type=%u config=0x%" PRIx64 " config1=0x%" PRIx64 " precise=%u", event,
           fstr ? fstr : "?", attr->type, (uint64_t)attr->config, (uint64_t)attr->config1,
           (unsigned)attr->precise_ip);
    rc = 0;
out:
    free(fstr);
    return rc;
}

MW_API int mw_pfm_encode(const char *event, unsigned flags, struct perf_event_attr *attr)
{
    return mw_pfm_encode_ex(event, flags, attr, NULL, 0);
}

MW_API int mw_pfm_encode_spec(const mw_event_spec *ev, unsigned flags, struct perf_event_attr *attr,
                              char *why, size_t why_cap)
{
    if (why && why_cap)
        why[0] = '\0';
    if (!ev || !attr)
        return -EINVAL;
    if (!ev->pfm)
        return mw_pfm_fail(-EINVAL, MW_LOG_WARN, why, why_cap,
                           "event '%s' on PMU %s is a sysfs event, not a libpfm4 one",
                           ev->role ? ev->role : "?", ev->pmu ? ev->pmu : "?");
    int rc = mw_pfm_encode_ex(ev->pfm, flags, attr, why, why_cap);
    if (rc < 0)
        return rc;
    if (attr->config != ev->config || attr->config1 != ev->config1)
        return mw_pfm_fail(
            MW_ERR_PFM, MW_LOG_WARN, why, why_cap,
            "libpfm4 %s encodes '%s' as config=0x%" PRIx64 " config1=0x%" PRIx64
            " but the catalogue expects config=0x%" PRIx64 " config1=0x%" PRIx64 " (%s)",
            mw_pfm_version_str, ev->pfm, (uint64_t)attr->config, (uint64_t)attr->config1,
            ev->config, ev->config1, ev->source ? ev->source : "no source");
    return 0;
}
