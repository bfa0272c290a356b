/*
 * counters/envval.c: the values of MEMWATCH_* variables (envval.h), one
 * parser for libmemwatch.so and the memwatch command. May call libc and the
 * catalogue. Threading: pure functions.
 */
#include <memwatch/catalogue.h>

#include "envval.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int mw_env_scaled(const char *v, const char *const *suf, const uint64_t *mul, uint64_t dmul,
                  uint64_t *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || errno || d < 0 || !isfinite(d))
        return -1;
    while (*end == ' ')
        end++;
    uint64_t m = dmul;
    if (*end) {
        int found = 0;
        for (int i = 0; suf[i]; i++)
            if (!strcasecmp(end, suf[i])) {
                m = mul[i];
                found = 1;
                break;
            }
        if (!found)
            return -1;
    }
    double r = d * (double)m;
    if (r > 1.8e19)
        return -1;
    *out = (uint64_t)(r + 0.5);
    return 0;
}

int mw_env_bool(const char *v, int *out)
{
    static const char *const yes[] = {"1", "yes", "true", "on", NULL};
    static const char *const no[] = {"0", "no", "false", "off", NULL};
    for (int i = 0; yes[i]; i++)
        if (!strcasecmp(v, yes[i]))
            return *out = 1, 0;
    for (int i = 0; no[i]; i++)
        if (!strcasecmp(v, no[i]))
            return *out = 0, 0;
    return -1;
}

static int method_is_how(const char *name, mw_method_how how)
{
    const mw_method_info *m = mw_method_lookup(name);
    return m && m->how == how;
}

enum mw_env_method mw_env_method(const char *v)
{
    if (!strcmp(v, "auto"))
        return MW_ENV_METHOD_AUTO;
    if (!strcmp(v, "none"))
        return MW_ENV_METHOD_NONE;
    return method_is_how(v, MW_HOW_PROBE) || method_is_how(v, MW_HOW_COUNT) ? MW_ENV_METHOD_NAMED
                                                                            : MW_ENV_METHOD_BAD;
}

int mw_env_method_ok(const char *v)
{
    return mw_env_method(v) != MW_ENV_METHOD_BAD;
}

/* Appends str to buf (capacity n, *len used), cutting at the end. */
static void put(char *buf, size_t n, size_t *len, const char *str)
{
    size_t k = strlen(str);
    if (k > n - 1 - *len)
        k = n - 1 - *len;
    memcpy(buf + *len, str, k);
    *len += k;
    buf[*len] = 0;
}

void mw_env_method_choices(char *buf, size_t n)
{
    if (!n)
        return;
    const char *const *names;
    size_t k = mw_method_names(&names), m = 0, len = 0;
    const char *list[72];
    /* auto, the probe, none, then the counting methods in catalogue order */
    list[m++] = "auto";
    for (size_t i = 0; i < k && m < 70; i++)
        if (method_is_how(names[i], MW_HOW_PROBE))
            list[m++] = names[i];
    list[m++] = "none";
    for (size_t i = 0; i < k && m < 72; i++)
        if (method_is_how(names[i], MW_HOW_COUNT))
            list[m++] = names[i];
    buf[0] = 0;
    for (size_t i = 0; i < m; i++) {
        if (i)
            put(buf, n, &len, i + 1 == m ? " or " : ", ");
        put(buf, n, &len, list[i]);
    }
}

/* Defined by libmemwatch.so (preload/env.c); a null address elsewhere. */
extern int mwp_env_answer(const char *name, const char **value) __attribute__((weak));

__attribute__((hot)) const char *mw_getenv(const char *name)
{
    const char *v;
    if (mwp_env_answer && mwp_env_answer(name, &v))
        return v;
    return getenv(name);
}
