/*
 * tests/fuzz/fuzz_alias.c: libFuzzer target for the sysfs event-alias parser
 * (mw_alias_parse) and the encoder behind it (mw_pmu_encode) on a PMU with
 * split, single-bit, config1 and 64-bit fields and aliases with "?" terms.
 * Any input must give 0 or a negative code with a reason, never a crash; a
 * successful encoding sets only bits that the PMU's fields (or whole config
 * words) allow.
 */
#include <memwatch/pmu.h>

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const mw_format_field formats[] = {
    {"event", 0, 0x3f000000ffull, 14},   /* config:0-7,32-37 (amd_df, Zen 4) */
    {"umask", 0, 0x0f00ff00ull, 12},     /* config:8-15,24-27 */
    {"edge", 0, 1ull << 18, 1},          /* config:18 */
    {"ldlat", 1, 0xffffull, 16},         /* config1:0-15 */
    {"offcore_rsp", 2, ~0ull, 64},       /* config2:0-63 (a full word) */
};
static const mw_pmu_event events[] = {
    {"mem-loads", "event=0xcd,umask=0x1,ldlat=3", 1.0, ""},
    {"needs", "event=0x2e,ldlat=?", 1.0, ""},
    {"cas_count_read", "event=0x04,umask=0x03", 6.103515625e-5, "MiB"},
    {"broken", "event=0x04,,", 1.0, ""},
    {"wide", "event=0xfffff", 1.0, ""},
};
static const mw_pmu pmu = {"fuzz", 42, 5, formats, 5, events, 0, NULL, 0, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;

    mw_alias_term t[MW_ALIAS_MAX_TERMS];
    size_t n = 0;
    char why[160];
    why[0] = 0;
    int rc = mw_alias_parse(s, t, MW_ALIAS_MAX_TERMS, &n, why, sizeof why);
    if (rc == 0) {
        if (n > MW_ALIAS_MAX_TERMS)
            abort();
        for (size_t i = 0; i < n; i++)
            if (!t[i].name[0] || strlen(t[i].name) >= MW_PMU_NAME_MAX)
                abort();
    } else if ((rc != MW_ERR_PARSE && rc != MW_ERR_TOOBIG) || !why[0]) {
        abort();
    }

    mw_pmu_encoding e;
    why[0] = 0;
    rc = mw_pmu_encode(&pmu, s, &e, why, sizeof why);
    if (rc == 0) {
        int whole_words = strstr(s, "config") != NULL; /* config=, config1= set any bit */
        if (!whole_words && ((e.config[0] & ~(0x3f000000ffull | 0x0f00ff00ull | (1ull << 18))) ||
                             (e.config[1] & ~0xffffull) || e.config[3]))
            abort();
        if (e.type != 42)
            abort();
    } else if (!why[0] || (rc != MW_ERR_PARSE && rc != MW_ERR_TOOBIG && rc != MW_ERR_NOEVENT)) {
        abort();
    }
    free(s);
    return 0;
}
