/*
 * counters/pmu_parse.c: the text side of the generic event encoder (pmu.h):
 * the parsers of format fields ("config:0-7,32-35"), event terms
 * ("event=0x04,umask=0x03") and cpu lists ("0-3,8"), and the encoder that
 * places an event's terms into config/config1/config2/config3 through a PMU's
 * format fields. PMU discovery in sysfs is counters/pmu_sysfs.c.
 * May call libc and the PMU set's lookups only.
 * Threading: pure functions (the encoders only read an immutable set). Not
 * async-signal-safe (vsnprintf).
 */
#include "pmu_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void why_set(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void why_set(char *why, size_t len, const char *fmt, ...)
{
    if (!why || !len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
}

/* ---- number and string helpers ---- */

/* Parse an unsigned number (decimal or 0x hex) at *p, advancing *p.
 * Returns 0, MW_ERR_PARSE (no digits) or MW_ERR_TOOBIG (overflow). */
int mw_pmu_parse_u64(const char **p, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    int base = 10, digits = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    for (;; s++) {
        int d;
        if (*s >= '0' && *s <= '9')
            d = *s - '0';
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = *s - 'a' + 10;
        else if (base == 16 && *s >= 'A' && *s <= 'F')
            d = *s - 'A' + 10;
        else
            break;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return MW_ERR_TOOBIG;
        v = v * (uint64_t)base + (uint64_t)d;
        digits++;
    }
    if (!digits)
        return MW_ERR_PARSE;
    *p = s;
    *out = v;
    return 0;
}

const char *mw_pmu_skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    return s;
}

static int is_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

/* Length of a printable excerpt for messages (stops at newline, max 40). */
static int excerpt_len(const char *s)
{
    int n = 0;
    while (s[n] && s[n] != '\n' && n < 40)
        n++;
    return n;
}

/* ---- format strings ---- */

MW_API int mw_format_parse(const char *s, mw_format_field *out, char *why, size_t why_len)
{
    if (!s || !out) {
        why_set(why, why_len, "no format string");
        return MW_ERR_PARSE;
    }
    const char *p = mw_pmu_skip_ws(s);
    unsigned word;
    if (strncmp(p, "config", 6)) {
        why_set(why, why_len, "format \"%.*s\" does not start with config, config1, config2 or config3",
                excerpt_len(s), s);
        return MW_ERR_PARSE;
    }
    p += 6;
    if (*p == ':') {
        word = 0;
    } else if (*p >= '1' && *p <= '3' && p[1] == ':') {
        word = (unsigned)(*p - '0');
        p++;
    } else {
        why_set(why, why_len, "format \"%.*s\": expected config, config1, config2 or config3 then ':'",
                excerpt_len(s), s);
        return MW_ERR_PARSE;
    }
    p++; /* ':' */
    uint64_t mask = 0;
    for (;;) {
        uint64_t lo, hi;
        if (mw_pmu_parse_u64(&p, &lo) || lo > 63) {
            why_set(why, why_len, "format \"%.*s\": bit numbers must be 0..63", excerpt_len(s), s);
            return MW_ERR_PARSE;
        }
        hi = lo;
        if (*p == '-') {
            p++;
            if (mw_pmu_parse_u64(&p, &hi) || hi > 63) {
                why_set(why, why_len, "format \"%.*s\": bit numbers must be 0..63", excerpt_len(s),
                        s);
                return MW_ERR_PARSE;
            }
            if (hi < lo) {
                why_set(why, why_len, "format \"%.*s\": range %u-%u runs backwards",
                        excerpt_len(s), s, (unsigned)lo, (unsigned)hi);
                return MW_ERR_PARSE;
            }
        }
        uint64_t m = (hi == 63 ? ~0ull : ((1ull << (hi + 1)) - 1)) & ~((1ull << lo) - 1);
        if (mask & m) {
            why_set(why, why_len, "format \"%.*s\": ranges overlap", excerpt_len(s), s);
            return MW_ERR_PARSE;
        }
        mask |= m;
        if (*p != ',')
            break;
        p++;
    }
    p = mw_pmu_skip_ws(p);
    if (*p) {
        why_set(why, why_len, "format \"%.*s\": unexpected \"%.*s\"", excerpt_len(s), s,
                excerpt_len(p), p);
        return MW_ERR_PARSE;
    }
    out->name[0] = 0;
    out->word = word;
    out->mask = mask;
    out->width = (unsigned)__builtin_popcountll(mask);
    return 0;
}

/* ---- alias strings ---- */

MW_API int mw_alias_parse(const char *s, mw_alias_term *terms, size_t max, size_t *n, char *why,
                          size_t why_len)
{
    size_t k = 0;
    if (n)
        *n = 0;
    if (!s || !n) {
        why_set(why, why_len, "no event string");
        return MW_ERR_PARSE;
    }
    const char *p = mw_pmu_skip_ws(s);
    if (!*p)
        return 0;
    for (;;) {
        p = mw_pmu_skip_ws(p);
        const char *name = p;
        while (is_name_char(*p))
            p++;
        size_t len = (size_t)(p - name);
        if (!len) {
            why_set(why, why_len, "event terms \"%.*s\": expected a term name at \"%.*s\"",
                    excerpt_len(s), s, excerpt_len(name), name);
            return MW_ERR_PARSE;
        }
        if (len >= MW_PMU_NAME_MAX) {
            why_set(why, why_len, "event terms \"%.*s\": term name longer than %d characters",
                    excerpt_len(s), s, MW_PMU_NAME_MAX - 1);
            return MW_ERR_PARSE;
        }
        if (k >= max) {
            why_set(why, why_len, "event terms \"%.*s\": more than %zu terms", excerpt_len(s), s,
                    max);
            return MW_ERR_TOOBIG;
        }
        mw_alias_term *t = &terms[k];
        memcpy(t->name, name, len);
        t->name[len] = 0;
        t->value = 1;
        t->has_value = 0;
        t->needs_value = 0;
        p = mw_pmu_skip_ws(p);
        if (*p == '=') {
            p = mw_pmu_skip_ws(p + 1);
            t->has_value = 1;
            if (*p == '?') {
                t->needs_value = 1;
                t->value = 0;
                p++;
            } else {
                int rc = mw_pmu_parse_u64(&p, &t->value);
                if (rc == MW_ERR_TOOBIG) {
                    why_set(why, why_len, "event terms \"%.*s\": value of %s exceeds 64 bits",
                            excerpt_len(s), s, t->name);
                    return rc;
                }
                if (rc) {
                    why_set(why, why_len, "event terms \"%.*s\": %s= needs a number or ?",
                            excerpt_len(s), s, t->name);
                    return rc;
                }
            }
            p = mw_pmu_skip_ws(p);
        }
        k++;
        if (!*p)
            break;
        if (*p != ',') {
            why_set(why, why_len, "event terms \"%.*s\": expected ',' at \"%.*s\"", excerpt_len(s),
                    s, excerpt_len(p), p);
            return MW_ERR_PARSE;
        }
        p++;
    }
    *n = k;
    return 0;
}

/* ---- cpu lists ---- */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

MW_API int mw_cpulist_parse(const char *s, int *cpus, size_t max)
{
    size_t k = 0;
    if (!s)
        return MW_ERR_PARSE;
    const char *p = mw_pmu_skip_ws(s);
    if (!*p)
        return 0;
    for (;;) {
        uint64_t lo, hi;
        if (mw_pmu_parse_u64(&p, &lo) || lo > INT_MAX)
            return MW_ERR_PARSE;
        hi = lo;
        if (*p == '-') {
            p++;
            if (mw_pmu_parse_u64(&p, &hi) || hi > INT_MAX || hi < lo)
                return MW_ERR_PARSE;
        }
        for (uint64_t c = lo; c <= hi; c++) {
            if (k >= max)
                return MW_ERR_TOOBIG;
            cpus[k++] = (int)c;
        }
        if (*p != ',')
            break;
        p++;
    }
    if (*mw_pmu_skip_ws(p))
        return MW_ERR_PARSE;
    qsort(cpus, k, sizeof *cpus, cmp_int);
    return (int)k;
}

/* ---- encoding ---- */

/* Deposit the low bits of v into the set bits of mask, lowest first. */
static uint64_t deposit(uint64_t v, uint64_t mask)
{
    uint64_t r = 0;
    for (int b = 0; b < 64 && mask; b++) {
        if (mask & (1ull << b)) {
            if (v & 1)
                r |= 1ull << b;
            v >>= 1;
            mask &= ~(1ull << b);
        }
    }
    return r;
}

/* List the PMU's fields for an "unknown term" message. */
static void list_fields(const mw_pmu *pmu, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = 0;
    for (size_t i = 0; i < pmu->n_formats && off + 1 < len; i++) {
        int w = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", pmu->formats[i].name);
        if (w < 0)
            break;
        off += (size_t)w;
    }
    if (!pmu->n_formats)
        snprintf(buf, len, "none");
}

/* Apply one term (not an alias) to enc. pending: names of "?" fields. */
static int apply_term(const mw_pmu *pmu, const mw_alias_term *t, mw_pmu_encoding *enc,
                      char *why, size_t why_len)
{
    static const char *const words[] = {"config", "config1", "config2", "config3"};
    for (unsigned w = 0; w < MW_PMU_CONFIG_WORDS; w++)
        if (!strcmp(t->name, words[w])) {
            enc->config[w] = t->value;
            return 0;
        }
    const mw_format_field *f = mw_pmu_format(pmu, t->name);
    if (!f) {
        char fields[256];
        list_fields(pmu, fields, sizeof fields);
        why_set(why, why_len, "%s has no event or format field \"%s\" (fields: %s)", pmu->name,
                t->name, fields);
        return MW_ERR_NOEVENT;
    }
    if (f->width < 64 && (t->value >> f->width)) {
        why_set(why, why_len, "%s: %s=0x%llx does not fit the field's %u bits (max 0x%llx)",
                pmu->name, t->name, (unsigned long long)t->value, f->width,
                (unsigned long long)((1ull << f->width) - 1));
        return MW_ERR_TOOBIG;
    }
    enc->config[f->word] = (enc->config[f->word] & ~f->mask) | deposit(t->value, f->mask);
    return 0;
}

MW_API int mw_pmu_encode(const mw_pmu *pmu, const char *terms, mw_pmu_encoding *out, char *why,
                         size_t why_len)
{
    mw_alias_term user[MW_ALIAS_MAX_TERMS], at[MW_ALIAS_MAX_TERMS];
    char pending[MW_ALIAS_MAX_TERMS][MW_PMU_NAME_MAX];
    size_t nu, npend = 0;
    int rc;
    char lwhy[256];
    if (!why || !why_len) {
        why = lwhy;
        why_len = sizeof lwhy;
    }
    why[0] = 0;
    if (!pmu || !out) {
        why_set(why, why_len, "no PMU");
        return MW_ERR_NOPMU;
    }
    memset(out, 0, sizeof *out);
    out->type = pmu->type;
    out->scale = 1.0;
    if ((rc = mw_alias_parse(terms, user, MW_ALIAS_MAX_TERMS, &nu, why, why_len)))
        goto fail;
    if (!nu) {
        why_set(why, why_len, "%s: no event given", pmu->name);
        rc = MW_ERR_PARSE;
        goto fail;
    }
    for (size_t i = 0; i < nu; i++) {
        const mw_alias_term *t = &user[i];
        const mw_pmu_event *ev = t->has_value ? NULL : mw_pmu_event_find(pmu, t->name);
        if (t->needs_value) {
            why_set(why, why_len, "%s: \"%s=?\": give a number", pmu->name, t->name);
            rc = MW_ERR_PARSE;
            goto fail;
        }
        if (ev) {
            size_t na;
            char sub[200];
            if ((rc = mw_alias_parse(ev->terms, at, MW_ALIAS_MAX_TERMS, &na, sub, sizeof sub))) {
                why_set(why, why_len, "%s/%s: %s", pmu->name, ev->name, sub);
                goto fail;
            }
            for (size_t j = 0; j < na; j++) {
                if (at[j].needs_value) {
                    if (npend < MW_ALIAS_MAX_TERMS)
                        memcpy(pending[npend++], at[j].name, MW_PMU_NAME_MAX);
                    continue;
                }
                if ((rc = apply_term(pmu, &at[j], out, sub, sizeof sub))) {
                    why_set(why, why_len, "alias %s=\"%s\": %s", ev->name, ev->terms, sub);
                    goto fail;
                }
            }
            out->scale = ev->scale;
            snprintf(out->unit, sizeof out->unit, "%s", ev->unit);
            continue;
        }
        if ((rc = apply_term(pmu, t, out, why, why_len)))
            goto fail;
        for (size_t j = 0; j < npend; j++)
            if (!strcmp(pending[j], t->name))
                pending[j][0] = 0;
    }
    for (size_t j = 0; j < npend; j++)
        if (pending[j][0]) {
            why_set(why, why_len, "%s: the event needs a value for %s (add %s=N)", pmu->name,
                    pending[j], pending[j]);
            rc = MW_ERR_PARSE;
            goto fail;
        }
    return 0;
fail:
    mw_log(MW_LOG_INFO, "%s", why);
    return rc;
}

MW_API int mw_pmus_encode(const mw_pmu_set *set, const char *spec, mw_pmu_encoding *out,
                          char *why, size_t why_len)
{
    char name[MW_PMU_NAME_MAX], terms[512];
    const char *slash = spec ? strchr(spec, '/') : NULL;
    if (!slash || (size_t)(slash - spec) >= sizeof name || slash == spec) {
        why_set(why, why_len, "event \"%.*s\": expected pmu/terms/ (e.g. msr/tsc/)",
                spec ? excerpt_len(spec) : 0, spec ? spec : "");
        return MW_ERR_PARSE;
    }
    memcpy(name, spec, (size_t)(slash - spec));
    name[slash - spec] = 0;
    const char *end = strrchr(slash + 1, '/');
    if (!end || end[1] || (size_t)(end - slash - 1) >= sizeof terms) {
        why_set(why, why_len, "event \"%.*s\": expected pmu/terms/ ending in '/'",
                excerpt_len(spec), spec);
        return MW_ERR_PARSE;
    }
    memcpy(terms, slash + 1, (size_t)(end - slash - 1));
    terms[end - slash - 1] = 0;
    const mw_pmu *pmu = mw_pmus_find(set, name);
    if (!pmu) {
        why_set(why, why_len, "event \"%s\": no PMU named %s on this machine", spec, name);
        mw_log(MW_LOG_INFO, "event \"%s\": no PMU named %s on this machine", spec, name);
        return MW_ERR_NOPMU;
    }
    return mw_pmu_encode(pmu, terms, out, why, why_len);
}
