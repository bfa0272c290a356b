/*
 * gpu/gpu_profile.c: where the GPU profile lives and the two numbers the
 * injected library needs from it (the flagging threshold and the peak).
 * Also the verdict rule for a metric against a known volume.
 * memwatch-gpu writes the file (gpu/main.c); docs/gpu.md gives its schema.
 * May call: libc only (the injected library links no JSON library).
 * Threading: no state; safe from any thread. Prints nothing.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memwatch/gpu.h"
#include "memwatch/memwatch.h"

int mw_gpu_profile_path(char *buf, size_t n)
{
    const char *e = getenv("MEMWATCH_GPU_PROFILE");
    int w;
    if (e && *e)
        w = snprintf(buf, n, "%s", e);
    else if ((e = getenv("XDG_DATA_HOME")) && *e)
        w = snprintf(buf, n, "%s/memwatch/gpu-profile.json", e);
    else if ((e = getenv("HOME")) && *e)
        w = snprintf(buf, n, "%s/.local/share/memwatch/gpu-profile.json", e);
    else
        return -ENOENT;
    return w < 0 || (size_t)w >= n ? MW_ERR_TOOBIG : 0;
}

int mw_gpu_json_number(const char *json, const char *key, double *out)
{
    size_t kl = strlen(key);
    const char *p = json;
    while ((p = strchr(p, '"'))) {
        p++;
        if (strncmp(p, key, kl) || p[kl] != '"') {
            /* Skip to the end of this string, honouring escapes. */
            while (*p && *p != '"')
                p += (*p == '\\' && p[1]) ? 2 : 1;
            if (!*p)
                break;
            p++;
            continue;
        }
        p += kl + 1;
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (*p != ':')
            continue;
        p++;
        char *end = NULL;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno)
            return MW_ERR_PARSE;
        *out = v;
        return 0;
    }
    return MW_ERR_NODATA;
}

int mw_gpu_profile_threshold(const char *path, double *threshold_bw, double *peak_bw)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? MW_ERR_NODATA : -errno;
    char *buf = malloc(1 << 20);
    if (!buf) {
        fclose(f);
        return -ENOMEM;
    }
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    buf[n] = 0;
    int rc = 0;
    if (!strstr(buf, "\"" MW_GPU_PROFILE_SCHEMA "\"")) {
        rc = MW_ERR_FOREIGN;
        goto out;
    }
    double t = 0, p = 0;
    if (mw_gpu_json_number(buf, "threshold_bw", &t) || mw_gpu_json_number(buf, "peak_bw", &p) ||
        !(t > 0) || !(p > 0)) {
        rc = MW_ERR_CORRUPT;
        goto out;
    }
    *threshold_bw = t;
    *peak_bw = p;
out:
    free(buf);
    return rc;
}

const char *mw_gpu_verdict(double value, double expected)
{
    if (!(expected > 0) || !(value >= 0))
        return "unavailable";
    double r = value / expected;
    if (fabs(r - 1) <= 0.03)
        return "accurate";
    if (fabs(r - 1) <= 0.25)
        return "biased";
    return "wrong";
}
