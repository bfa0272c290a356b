/*
 * tests/counters_encode/test_envval.c: the MEMWATCH_* value parsers
 * (counters/envval.c) shared by libmemwatch.so's configuration and the
 * memwatch command's checks: numbers with units, booleans, and the methods
 * MEMWATCH_METHOD takes (auto, none, and the catalogue's probe and counting
 * methods; never a sampling method or an unknown name).
 */
#include <memwatch/catalogue.h>

#include "envval.h"
#include "mw_test.h"

static const char *const dur_suf[] = {"ns", "us", "ms", "s", NULL};
static const uint64_t dur_mul[] = {1, 1000, 1000000, 1000000000};

typedef struct scaled_row {
    const char *v;
    int rc;
    uint64_t out;
    int line;
} scaled_row;

static const scaled_row scaled_rows[] = {
    {"10ms", 0, 10000000, __LINE__},
    {"10", 0, 10000000, __LINE__}, /* no unit: the default multiplier (ms) */
    {"10MS", 0, 10000000, __LINE__},
    {"2.5 us", 0, 2500, __LINE__}, /* blanks before the unit */
    {"0.5ns", 0, 1, __LINE__},     /* rounded to the nearest */
    {"0.4ns", 0, 0, __LINE__},
    {"60s", 0, 60000000000ull, __LINE__},
    {"0", 0, 0, __LINE__},
    {"", -1, 0, __LINE__},
    {"ms", -1, 0, __LINE__},
    {"-1ms", -1, 0, __LINE__},
    {"10 xs", -1, 0, __LINE__},
    {"10ms ", -1, 0, __LINE__}, /* nothing after the unit */
    {"10 ms s", -1, 0, __LINE__},
    {"nan", -1, 0, __LINE__},
    {"inf", -1, 0, __LINE__},
    {"1e300", -1, 0, __LINE__},
    {"1e10s", 0, 10000000000000000000ull, __LINE__}, /* 1e19 ns: under the 1.8e19 limit */
    {"2e10s", -1, 0, __LINE__},                      /* 2e19 ns: over it */
};

int main(void)
{
    for (size_t i = 0; i < sizeof scaled_rows / sizeof *scaled_rows; i++) {
        const scaled_row *r = &scaled_rows[i];
        uint64_t out = 12345;
        int rc = mw_env_scaled(r->v, dur_suf, dur_mul, 1000000, &out);
        MW_CHECK_AT(__FILE__, r->line, rc == r->rc && (rc || out == r->out),
                    "'%s': rc %d out %" PRIu64 ", expected rc %d out %" PRIu64, r->v, rc, out,
                    r->rc, r->out);
    }
    /* The byte units of MEMWATCH_ALLOC_THRESHOLD. */
    static const char *const b_suf[] = {"b", "k", "kib", "m", NULL};
    static const uint64_t b_mul[] = {1, 1024, 1024, 1 << 20};
    uint64_t u = 0;
    MW_CHECK(!mw_env_scaled("64K", b_suf, b_mul, 1, &u) && u == 65536, "64K = %" PRIu64, u);
    MW_CHECK(mw_env_scaled("1.5 MiB", b_suf, b_mul, 1, &u) == -1, "MiB is not in this table");
    MW_CHECK(!mw_env_scaled("1.5 m", b_suf, b_mul, 1, &u) && u == 1572864, "1.5m = %" PRIu64, u);
    MW_CHECK(!mw_env_scaled("7", b_suf, b_mul, 1, &u) && u == 7, "7 = %" PRIu64, u);

    /* Booleans: four spellings each way, any case; anything else refused and
     * *out left alone. */
    static const char *const yes[] = {"1", "yes", "true", "on", "YES", "True", "oN"};
    static const char *const no[] = {"0", "no", "false", "off", "NO", "False", "OFF"};
    static const char *const bad[] = {"", "2", "y", "n", "enable", "1 ", " 0", "offf"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        int b = -7;
        MW_CHECK(mw_env_bool(yes[i], &b) == 0 && b == 1, "'%s' -> %d", yes[i], b);
    }
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        int b = -7;
        MW_CHECK(mw_env_bool(no[i], &b) == 0 && b == 0, "'%s' -> %d", no[i], b);
    }
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int b = -7;
        MW_CHECK(mw_env_bool(bad[i], &b) == -1 && b == -7, "'%s' accepted (%d)", bad[i], b);
    }

    /* Methods: auto and none, then exactly the catalogue's probe and
     * counting methods; at least one of each kind exists. */
    MW_CHECK_INT(mw_env_method("auto"), MW_ENV_METHOD_AUTO);
    MW_CHECK_INT(mw_env_method("none"), MW_ENV_METHOD_NONE);
    MW_CHECK_INT(mw_env_method("probe_lat"), MW_ENV_METHOD_NAMED);
    MW_CHECK_INT(mw_env_method("None"), MW_ENV_METHOD_BAD);
    MW_CHECK(mw_env_method_ok("auto"), "auto");
    MW_CHECK(mw_env_method_ok("none"), "none");
    MW_CHECK(mw_env_method_ok("probe_lat"), "probe_lat");
    MW_CHECK(!mw_env_method_ok("AUTO"), "names are case-sensitive");
    MW_CHECK(!mw_env_method_ok(""), "empty");
    MW_CHECK(!mw_env_method_ok("no_such_method"), "unknown");
    const char *const *names;
    size_t k = mw_method_names(&names);
    int n_ok = 0, n_sample = 0;
    for (size_t i = 0; i < k; i++) {
        const mw_method_info *m = mw_method_lookup(names[i]);
        MW_CHECK(m != NULL, "%s not found", names[i]);
        if (!m)
            continue;
        int want = m->how == MW_HOW_PROBE || m->how == MW_HOW_COUNT;
        MW_CHECK(mw_env_method_ok(names[i]) == want, "%s: %d, expected %d", names[i],
                 mw_env_method_ok(names[i]), want);
        n_ok += want;
        n_sample += m->how == MW_HOW_SAMPLE;
    }
    MW_CHECK(n_ok >= 2 && n_sample >= 1, "%d accepted, %d sampling methods", n_ok, n_sample);

    /* The list for messages: auto, probe_lat, none first, "or" before the
     * last, every accepted method once, no sampling method; cut when short. */
    char list[512];
    mw_env_method_choices(list, sizeof list);
    MW_CHECK(!strncmp(list, "auto, probe_lat, none, ", 23), "list '%s'", list);
    MW_CHECK(strstr(list, " or ") && !strstr(strstr(list, " or ") + 4, ","), "list '%s'", list);
    int listed = 2; /* auto, none */
    for (size_t i = 0; i < k; i++) {
        const char *at = list;
        size_t len = strlen(names[i]);
        int found = 0;
        while ((at = strstr(at, names[i]))) {
            found |=
                (at == list || at[-1] == ' ') && (at[len] == ',' || at[len] == ' ' || at[len] == 0);
            at += len;
        }
        MW_CHECK(found == mw_env_method_ok(names[i]), "%s listed %d in '%s'", names[i], found,
                 list);
        listed += found;
    }
    MW_CHECK_INT(listed, n_ok + 2);
    char small[10];
    mw_env_method_choices(small, sizeof small);
    MW_CHECK(!strcmp(small, "auto, pro"), "cut to '%s'", small);
    return mw_test_done();
}
