/*
 * tests/counters_sysfs/test_sysfs_parse.c: table-driven tests of the sysfs
 * format-string, alias-string and cpu-list parsers (counters/pmu_parse.c). Each
 * row records its own source line so a failure names the row. The expected
 * layouts are those the kernel publishes (see tests/fixtures/sysfs).
 */
#include <memwatch/pmu.h>

#include "mw_test.h"

static const struct fmt_row {
    int line;
    const char *in;
    int rc;
    unsigned word;
    uint64_t mask;
    unsigned width;
} fmt_rows[] = {
    {__LINE__, "config:0-7", 0, 0, 0xff, 8},                     /* event, intel/uncore */
    {__LINE__, "config:0-7\n", 0, 0, 0xff, 8},                   /* as read from sysfs */
    {__LINE__, "config1:0-63", 0, 1, ~0ull, 64},                 /* offcore_rsp */
    {__LINE__, "config:8", 0, 0, 0x100, 1},                      /* single bit */
    {__LINE__, "config:0-7,32-35", 0, 0, 0xf000000ffull, 12},    /* AMD core event */
    {__LINE__, "config:0-7,32-37", 0, 0, 0x3f000000ffull, 14},   /* amd_df event, Zen 4 */
    {__LINE__, "config:8-15,24-27", 0, 0, 0xf00ff00ull, 12},     /* amd_df umask, Zen 4 */
    {__LINE__, "config2:0-31", 0, 2, 0xffffffffull, 32},         /* ARM SPE min_latency */
    {__LINE__, "config3:1", 0, 3, 0x2, 1},
    {__LINE__, "config:63", 0, 0, 1ull << 63, 1},
    {__LINE__, "config:32-63", 0, 0, 0xffffffff00000000ull, 32}, /* uprobe ref_ctr_offset */
    {__LINE__, "  config:18  ", 0, 0, 1u << 18, 1},
    {__LINE__, "", MW_ERR_PARSE, 0, 0, 0},
    {__LINE__, "config", MW_ERR_PARSE, 0, 0, 0},
    {__LINE__, "config:", MW_ERR_PARSE, 0, 0, 0},
    {__LINE__, "config4:0-7", MW_ERR_PARSE, 0, 0, 0},
    {__LINE__, "conf:0-7", MW_ERR_PARSE, 0, 0, 0},
    {__LINE__, "config:7-0", MW_ERR_PARSE, 0, 0, 0},
    {__LINE__, "config:0-64", MW_ERR_PARSE, 0, 0, 0},
    {__LINE__, "config:64", MW_ERR_PARSE, 0, 0, 0},
    {__LINE__, "config:0-7,", MW_ERR_PARSE, 0, 0, 0},
    {__LINE__, "config:0-7,4-9", MW_ERR_PARSE, 0, 0, 0},          /* overlap */
    {__LINE__, "config:0-7 junk", MW_ERR_PARSE, 0, 0, 0},
    {__LINE__, "config:-1", MW_ERR_PARSE, 0, 0, 0},
    {__LINE__, "config:99999999999999999999999", MW_ERR_PARSE, 0, 0, 0},
    {__LINE__, "config1:0x3", 0, 1, 0x8, 1}, /* hex bit numbers are accepted */
};

static const struct alias_row {
    int line;
    const char *in;
    int rc;
    size_t n;
    const char *name[3];
    uint64_t value[3];
    int has_value[3];
    int needs[3];
} alias_rows[] = {
    {__LINE__, "event=0x04,umask=0x03", 0, 2, {"event", "umask"}, {4, 3}, {1, 1}, {0, 0}},
    {__LINE__, "umask=0x0c,event=0x04\n", 0, 2, {"umask", "event"}, {0xc, 4}, {1, 1}, {0, 0}},
    {__LINE__, "event=0xcd,umask=0x1,ldlat=3", 0, 3, {"event", "umask", "ldlat"}, {0xcd, 1, 3},
     {1, 1, 1}, {0, 0, 0}},
    {__LINE__, "edge", 0, 1, {"edge"}, {1}, {0}, {0}},
    {__LINE__, "event=0x3c,edge,inv", 0, 3, {"event", "edge", "inv"}, {0x3c, 1, 1}, {1, 0, 0},
     {0, 0, 0}},
    {__LINE__, "ldlat=?", 0, 1, {"ldlat"}, {0}, {1}, {1}},
    {__LINE__, " event = 0x05 , umask = 0xcf ", 0, 2, {"event", "umask"}, {5, 0xcf}, {1, 1},
     {0, 0}},
    {__LINE__, "event=0x0a,rdwrmask=0x1", 0, 2, {"event", "rdwrmask"}, {0xa, 1}, {1, 1}, {0, 0}},
    {__LINE__, "config=0xffffffffffffffff", 0, 1, {"config"}, {~0ull}, {1}, {0}},
    {__LINE__, "event=10", 0, 1, {"event"}, {10}, {1}, {0}},
    {__LINE__, "umc_cas_cmd.rd", 0, 1, {"umc_cas_cmd.rd"}, {1}, {0}, {0}},
    {__LINE__, "", 0, 0, {0}, {0}, {0}, {0}},
    {__LINE__, "event=", MW_ERR_PARSE, 0, {0}, {0}, {0}, {0}},
    {__LINE__, "event=0x", MW_ERR_PARSE, 0, {0}, {0}, {0}, {0}},
    {__LINE__, "event=zz", MW_ERR_PARSE, 0, {0}, {0}, {0}, {0}},
    {__LINE__, "event=0x04,,umask=3", MW_ERR_PARSE, 0, {0}, {0}, {0}, {0}},
    {__LINE__, "event=0x04,", MW_ERR_PARSE, 0, {0}, {0}, {0}, {0}},
    {__LINE__, "=3", MW_ERR_PARSE, 0, {0}, {0}, {0}, {0}},
    {__LINE__, "event=0x04 umask=3", MW_ERR_PARSE, 0, {0}, {0}, {0}, {0}},
    {__LINE__, "event/0x04", MW_ERR_PARSE, 0, {0}, {0}, {0}, {0}},
    {__LINE__, "event=0x10000000000000000", MW_ERR_TOOBIG, 0, {0}, {0}, {0}, {0}},
    {__LINE__, "event=18446744073709551616", MW_ERR_TOOBIG, 0, {0}, {0}, {0}, {0}},
    {__LINE__, "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q", MW_ERR_TOOBIG, 0, {0}, {0}, {0}, {0}},
};

static const struct cpu_row {
    int line;
    const char *in;
    int rc;
    int first, last;
} cpu_rows[] = {
    {__LINE__, "0,28\n", 2, 0, 28},
    {__LINE__, "0-3", 4, 0, 3},
    {__LINE__, "0-3,8,10-11", 7, 0, 11},
    {__LINE__, "96,0", 2, 0, 96},
    {__LINE__, "", 0, 0, 0},
    {__LINE__, "0-", MW_ERR_PARSE, 0, 0},
    {__LINE__, "3-1", MW_ERR_PARSE, 0, 0},
    {__LINE__, "a", MW_ERR_PARSE, 0, 0},
    {__LINE__, "0-100000", MW_ERR_TOOBIG, 0, 0},
};

int main(void)
{
    char why[256];
    for (size_t i = 0; i < sizeof fmt_rows / sizeof fmt_rows[0]; i++) {
        const struct fmt_row *r = &fmt_rows[i];
        mw_format_field f;
        why[0] = 0;
        int rc = mw_format_parse(r->in, &f, why, sizeof why);
        MW_CHECK_AT(__FILE__, r->line, rc == r->rc, "format \"%s\": rc %d, expected %d (%s)",
                    r->in, rc, r->rc, why);
        if (rc == 0 && r->rc == 0) {
            MW_CHECK_AT(__FILE__, r->line, f.word == r->word && f.mask == r->mask &&
                        f.width == r->width,
                        "format \"%s\": word %u mask 0x%llx width %u", r->in, f.word,
                        (unsigned long long)f.mask, f.width);
        } else if (rc) {
            MW_CHECK_AT(__FILE__, r->line, why[0] != 0, "format \"%s\": no reason given", r->in);
        }
    }
    for (size_t i = 0; i < sizeof alias_rows / sizeof alias_rows[0]; i++) {
        const struct alias_row *r = &alias_rows[i];
        mw_alias_term t[MW_ALIAS_MAX_TERMS];
        size_t n = 99;
        why[0] = 0;
        int rc = mw_alias_parse(r->in, t, MW_ALIAS_MAX_TERMS, &n, why, sizeof why);
        MW_CHECK_AT(__FILE__, r->line, rc == r->rc, "alias \"%s\": rc %d, expected %d (%s)",
                    r->in, rc, r->rc, why);
        if (rc || r->rc) {
            MW_CHECK_AT(__FILE__, r->line, rc == 0 || why[0], "alias \"%s\": no reason", r->in);
            continue;
        }
        MW_CHECK_AT(__FILE__, r->line, n == r->n, "alias \"%s\": %zu terms, expected %zu", r->in,
                    n, r->n);
        for (size_t k = 0; k < n && k < 3; k++)
            MW_CHECK_AT(__FILE__, r->line,
                        !strcmp(t[k].name, r->name[k]) && t[k].value == r->value[k] &&
                            t[k].has_value == r->has_value[k] && t[k].needs_value == r->needs[k],
                        "alias \"%s\" term %zu: %s=0x%llx has %d needs %d", r->in, k, t[k].name,
                        (unsigned long long)t[k].value, t[k].has_value, t[k].needs_value);
    }
    /* A term name of 63 characters fits, 64 does not. */
    {
        char name[80];
        mw_alias_term t[1];
        size_t n;
        memset(name, 'a', 63);
        name[63] = 0;
        MW_CHECK_INT(mw_alias_parse(name, t, 1, &n, why, sizeof why), 0);
        memset(name, 'a', 64);
        name[64] = 0;
        MW_CHECK_INT(mw_alias_parse(name, t, 1, &n, why, sizeof why), MW_ERR_PARSE);
        MW_CHECK_INT(mw_alias_parse(NULL, t, 1, &n, why, sizeof why), MW_ERR_PARSE);
        MW_CHECK_INT(mw_format_parse(NULL, &(mw_format_field){0}, NULL, 0), MW_ERR_PARSE);
    }
    for (size_t i = 0; i < sizeof cpu_rows / sizeof cpu_rows[0]; i++) {
        const struct cpu_row *r = &cpu_rows[i];
        int cpus[4096];
        int rc = mw_cpulist_parse(r->in, cpus, 4096);
        MW_CHECK_AT(__FILE__, r->line, rc == r->rc, "cpulist \"%s\": %d, expected %d", r->in, rc,
                    r->rc);
        if (rc > 0 && rc == r->rc)
            MW_CHECK_AT(__FILE__, r->line, cpus[0] == r->first && cpus[rc - 1] == r->last,
                        "cpulist \"%s\": %d..%d", r->in, cpus[0], cpus[rc - 1]);
    }
    return mw_test_done();
}
