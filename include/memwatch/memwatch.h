/*
 * memwatch public API: conventions shared by every module.
 *
 * Every function returns 0 (or a non-negative count) on success and a negative
 * value on failure: either -errno or one of the MW_ERR_* codes below, which all
 * lie below MW_ERR_BASE so they never collide with errno values.
 * mw_strerror() turns any of them into a sentence. The library never prints;
 * it reports through the logging callback set with mw_set_log().
 *
 * Thread safety: mw_strerror and mw_log are safe from any thread. mw_log is NOT
 * async-signal-safe (see preload/ for the raw write(2) logger used on hook paths).
 */
#ifndef MEMWATCH_MEMWATCH_H
#define MEMWATCH_MEMWATCH_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MW_API __attribute__((visibility("default")))

#ifndef MW_VERSION
#define MW_VERSION "0.1.0"
#endif

enum mw_error {
    MW_OK = 0,
    MW_ERR_BASE = -10000,
    MW_ERR_NOPMU = -10001,        /* the PMU an event needs does not exist here */
    MW_ERR_NOEVENT = -10002,      /* unknown event or method name */
    MW_ERR_PARSE = -10003,        /* malformed input (format string, alias, JSON, option) */
    MW_ERR_UNSUPPORTED = -10004,  /* the machine or build lacks the feature */
    MW_ERR_PARANOID = -10005,     /* perf_event_paranoid forbids it for this user */
    MW_ERR_PRIV = -10006,         /* needs root, CAP_PERFMON or CAP_SYS_ADMIN */
    MW_ERR_CORRUPT = -10007,      /* a file is damaged or truncated */
    MW_ERR_FOREIGN = -10008,      /* a file belongs to another machine or format version */
    MW_ERR_PFM = -10009,          /* libpfm4 failed; details in the log */
    MW_ERR_TOOBIG = -10010,       /* a value or record exceeds its limit */
    MW_ERR_NODATA = -10011,       /* nothing to measure or report */
    MW_ERR_GPU = -10012,          /* CUDA or CUPTI failed; details in the log */
    MW_ERR_LAST = -10013,
};

/* A sentence for a return code: -errno values and MW_ERR_* alike. Never NULL. */
MW_API const char *mw_strerror(int err);

/* Version string of the library, e.g. "0.1.0". */
MW_API const char *mw_version(void);

enum mw_log_level { MW_LOG_ERROR = 0, MW_LOG_WARN = 1, MW_LOG_INFO = 2, MW_LOG_DEBUG = 3 };

typedef void (*mw_log_fn)(int level, const char *msg, void *user);

/* Install a logging callback (NULL restores the default, which drops everything
 * above MW_LOG_WARN and writes the rest to stderr prefixed "memwatch: "). */
MW_API void mw_set_log(mw_log_fn fn, void *user, int max_level);

/* Log through the installed callback. printf-style. */
MW_API void mw_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
MW_API void mw_vlog(int level, const char *fmt, va_list ap);

#ifdef __cplusplus
}
#endif
#endif
