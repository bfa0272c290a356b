/*
 * counters/error.c: the error convention shared by every module (mw_strerror)
 * and the library logger. Owns no state but the logging callback.
 * Thread safety: mw_strerror is reentrant for MW_ERR_* codes and uses
 * strerror_r into a thread-local buffer for errno values.
 */
#include <memwatch/memwatch.h>

#include <stdio.h>
#include <string.h>

static const char *const mw_err_text[] = {
    [-(MW_ERR_NOPMU - MW_ERR_BASE)] = "the PMU this needs does not exist on this machine",
    [-(MW_ERR_NOEVENT - MW_ERR_BASE)] = "unknown event or method name",
    [-(MW_ERR_PARSE - MW_ERR_BASE)] = "malformed input",
    [-(MW_ERR_UNSUPPORTED - MW_ERR_BASE)] = "not supported on this machine or build",
    [-(MW_ERR_PARANOID - MW_ERR_BASE)] =
        "forbidden by kernel.perf_event_paranoid for this user",
    [-(MW_ERR_PRIV - MW_ERR_BASE)] = "needs root, CAP_PERFMON or CAP_SYS_ADMIN",
    [-(MW_ERR_CORRUPT - MW_ERR_BASE)] = "the file is damaged or truncated",
    [-(MW_ERR_FOREIGN - MW_ERR_BASE)] =
        "the file belongs to another machine, schema or format version",
    [-(MW_ERR_PFM - MW_ERR_BASE)] = "libpfm4 could not encode the event",
    [-(MW_ERR_TOOBIG - MW_ERR_BASE)] = "a value exceeds its limit",
    [-(MW_ERR_NODATA - MW_ERR_BASE)] = "nothing to measure or report",
    [-(MW_ERR_GPU - MW_ERR_BASE)] = "the CUDA driver or CUPTI failed",
};

MW_API const char *mw_strerror(int err)
{
    static __thread char buf[128];
    if (err == 0)
        return "success";
    if (err < MW_ERR_BASE && err > MW_ERR_LAST) {
        const char *t = mw_err_text[-(err - MW_ERR_BASE)];
        return t ? t : "unknown memwatch error";
    }
    if (err < 0 && err > MW_ERR_BASE) {
        /* GNU strerror_r returns the string, which may not be buf. */
        return strerror_r(-err, buf, sizeof buf);
    }
    snprintf(buf, sizeof buf, "unknown error %d", err);
    return buf;
}

MW_API const char *mw_version(void)
{
    return MW_VERSION;
}

/* One object that libmemwatch.so sets in every process's constructor: in
 * the section of the library's variables every process touches ("mwp_hot",
 * placed by preload/hot.ld on a page the loader writes anyway; elsewhere a
 * section like any other). */
static __attribute__((section("mwp_hot"))) struct {
    int max;
    mw_log_fn fn;
    void *user;
} mw_logcfg = {MW_LOG_WARN, NULL, NULL};
#define log_fn mw_logcfg.fn
#define log_user mw_logcfg.user
#define log_max mw_logcfg.max

__attribute__((hot)) MW_API void mw_set_log(mw_log_fn fn, void *user, int max_level)
{
    log_fn = fn;
    log_user = user;
    log_max = max_level;
}

MW_API void mw_vlog(int level, const char *fmt, va_list ap)
{
    if (level > log_max)
        return;
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (log_fn)
        log_fn(level, msg, log_user);
    else
        fprintf(stderr, "memwatch: %s%s\n", level == MW_LOG_ERROR ? "error: " : "", msg);
}

MW_API void mw_log(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mw_vlog(level, fmt, ap);
    va_end(ap);
}
