/*
 * counters/catalogue.c: the method catalogue as data. Owns the table of
 * microarchitectures (names, libpfm4 PMU names), the per-microarchitecture
 * method tables (counters/tables/<uarch>.h) and the prefetcher MSR table.
 *
 * May call: nothing but libc and mw_log. Encoding the core events goes through
 * counters/pfm.c; resolving sysfs events is the job of the PMU discovery code.
 * Thread safety: everything here reads constant tables; safe from any thread,
 * allocates nothing. Not async-signal-safe only because mw_log is not (the
 * lookups themselves are).
 */
#include <memwatch/catalogue.h>
#include <memwatch/encode.h>

#include <errno.h>
#include <string.h>

#include "tables/adl.h"
#include "tables/bdw_ep.h"
#include "tables/gnr.h"
#include "tables/hsw_ep.h"
#include "tables/icl.h"
#include "tables/icx.h"
#include "tables/knl.h"
#include "tables/skl.h"
#include "tables/skx.h"
#include "tables/spr.h"
#include "tables/zen2.h"
#include "tables/zen3.h"
#include "tables/zen4.h"
#include "tables/zen5.h"

/* Every method name, in the fixed order of docs/methods.md. */
static const char *const mw_method_name_list[] = {
    "imc_cas",     "ocr_dram", "amd_umc", "amd_df",    "lmrl",
    "l1_miss_lat", "pebs_lat", "ibs_lat", "probe_lat",
};

/* A CPU memwatch does not know still gets the software probe. */
static const mw_method_def mw_tab_unknown[] = {MW_METHOD_PROBE_LAT};

typedef struct mw_uarch_info {
    const char *name; /* short name, as in profiles and `memwatch probe` */
    const char *long_name;
    const char *pfm_pmu; /* libpfm4 core PMU name (NULL: none) */
    const mw_method_def *methods;
    size_t n_methods;
} mw_uarch_info;

#define MW_UA(n, l, p, t)                                                                          \
    {                                                                                              \
        n, l, p, t, MW_NEV(t)                                                                      \
    }
static const mw_uarch_info mw_uarchs[MW_UARCH_COUNT] = {
    [MW_UARCH_UNKNOWN] =
        MW_UA("unknown", "unknown CPU (software probe only)", NULL, mw_tab_unknown),
    [MW_UARCH_HSW_EP] = MW_UA("hsw_ep", "Intel Haswell-EP", "hsw_ep", mw_tab_hsw_ep),
    [MW_UARCH_BDW_EP] = MW_UA("bdw_ep", "Intel Broadwell-EP", "bdw_ep", mw_tab_bdw_ep),
    [MW_UARCH_SKX] = MW_UA("skx", "Intel Skylake-SP / Cascade Lake-SP", "skx", mw_tab_skx),
    [MW_UARCH_ICX] = MW_UA("icx", "Intel Ice Lake-SP", "icx", mw_tab_icx),
    [MW_UARCH_SPR] = MW_UA("spr", "Intel Sapphire Rapids / Emerald Rapids", "spr", mw_tab_spr),
    [MW_UARCH_GNR] = MW_UA("gnr", "Intel Granite Rapids", "gnr", mw_tab_gnr),
    [MW_UARCH_SKL] = MW_UA("skl", "Intel client Skylake..Comet Lake", "skl", mw_tab_skl),
    [MW_UARCH_ICL] = MW_UA("icl", "Intel client Ice Lake", "icl", mw_tab_icl),
    [MW_UARCH_ADL] =
        MW_UA("adl", "Intel Alder Lake / Raptor Lake (P-cores)", "adl_glc", mw_tab_adl),
    [MW_UARCH_KNL] = MW_UA("knl", "Intel Knights Landing / Knights Mill", "knl", mw_tab_knl),
    [MW_UARCH_ZEN2] = MW_UA("zen2", "AMD Zen 2", "amd64_fam17h_zen2", mw_tab_zen2),
    [MW_UARCH_ZEN3] = MW_UA("zen3", "AMD Zen 3", "amd64_fam19h_zen3", mw_tab_zen3),
    [MW_UARCH_ZEN4] = MW_UA("zen4", "AMD Zen 4", "amd64_fam19h_zen4", mw_tab_zen4),
    [MW_UARCH_ZEN5] = MW_UA("zen5", "AMD Zen 5", "amd64_fam1ah_zen5", mw_tab_zen5),
};

/* Other spellings accepted by mw_uarch_from_name. */
static const struct {
    const char *alias;
    mw_uarch u;
} mw_uarch_aliases[] = {
    {"clx", MW_UARCH_SKX},
    {"cpx", MW_UARCH_SKX},
    {"emr", MW_UARCH_SPR},
    {"rpl", MW_UARCH_ADL},
    {"knm", MW_UARCH_KNL},
    {"haswell-ep", MW_UARCH_HSW_EP},
    {"broadwell-ep", MW_UARCH_BDW_EP},
};

/*
 * Prefetcher control MSRs (docs/sources.md §2; 1 = prefetcher disabled).
 * Intel: MSR 0x1A4 MISC_FEATURE_CONTROL (Intel SDM vol. 4 and Intel's
 * "Disclosure of H/W prefetcher control on some Intel processors"); Sapphire
 * Rapids adds bit 6 (L2 AMP). Knights Landing/Mill: bits 0 (DCU) and 1 (L2).
 * AMD Zen 3/4/5: MSR 0xC000_0108 PrefetchControl (AMD PPR 19h/1Ah). Zen 2 has no
 * documented prefetcher control MSR.
 */
static const mw_prefetch_msr mw_pf_intel = {
    0x1A4, 0xFull, "0 L2 streamer, 1 L2 adjacent line, 2 DCU next-line, 3 DCU IP"};
static const mw_prefetch_msr mw_pf_spr = {
    0x1A4, 0x4Full, "0 L2 streamer, 1 L2 adjacent line, 2 DCU next-line, 3 DCU IP, 6 L2 AMP"};
static const mw_prefetch_msr mw_pf_knl = {0x1A4, 0x3ull, "0 DCU, 1 L2"};
static const mw_prefetch_msr mw_pf_amd = {
    0xC0000108u, 0x2Full, "0 L1 stream, 1 L1 stride, 2 L1 region, 3 L2 stream, 5 L2 up/down"};

static const mw_prefetch_msr *const mw_pf_table[MW_UARCH_COUNT] = {
    [MW_UARCH_HSW_EP] = &mw_pf_intel, [MW_UARCH_BDW_EP] = &mw_pf_intel,
    [MW_UARCH_SKX] = &mw_pf_intel,    [MW_UARCH_ICX] = &mw_pf_intel,
    [MW_UARCH_SPR] = &mw_pf_spr,      [MW_UARCH_GNR] = &mw_pf_intel,
    [MW_UARCH_SKL] = &mw_pf_intel,    [MW_UARCH_ICL] = &mw_pf_intel,
    [MW_UARCH_ADL] = &mw_pf_intel,    [MW_UARCH_KNL] = &mw_pf_knl,
    [MW_UARCH_ZEN3] = &mw_pf_amd,     [MW_UARCH_ZEN4] = &mw_pf_amd,
    [MW_UARCH_ZEN5] = &mw_pf_amd,
};

static int mw_uarch_valid(mw_uarch u)
{
    return (int)u >= 0 && u < MW_UARCH_COUNT;
}

MW_API size_t mw_method_names(const char *const **names)
{
    if (names)
        *names = mw_method_name_list;
    return MW_NEV(mw_method_name_list);
}

MW_API int mw_catalogue_methods(mw_uarch u, const mw_method_def **defs, size_t *n)
{
    if (!defs || !n)
        return -EINVAL;
    if (!mw_uarch_valid(u)) {
        mw_log(MW_LOG_WARN, "catalogue: no microarchitecture number %d", (int)u);
        return -EINVAL;
    }
    *defs = mw_uarchs[u].methods;
    *n = mw_uarchs[u].n_methods;
    return 0;
}

/*
 * mw_catalogue_find: the method called `method` on microarchitecture u. Returns
 * MW_ERR_NOEVENT both for a name memwatch does not know and for a method that
 * does not exist on u; the log line says which.
 */
MW_API int mw_catalogue_find(mw_uarch u, const char *method, const mw_method_def **def)
{
    if (!method || !def)
        return -EINVAL;
    *def = NULL;
    if (!mw_uarch_valid(u)) {
        mw_log(MW_LOG_WARN, "catalogue: no microarchitecture number %d", (int)u);
        return -EINVAL;
    }
    const mw_uarch_info *ui = &mw_uarchs[u];
    for (size_t i = 0; i < ui->n_methods; i++) {
        if (strcmp(ui->methods[i].name, method) == 0) {
            *def = &ui->methods[i];
            return 0;
        }
    }
    int known = 0;
    for (size_t i = 0; i < MW_NEV(mw_method_name_list); i++)
        known |= strcmp(mw_method_name_list[i], method) == 0;
    if (known)
        mw_log(MW_LOG_DEBUG, "catalogue: method %s does not exist on %s", method, ui->long_name);
    else
        mw_log(MW_LOG_WARN,
               "catalogue: unknown method '%s' (known: imc_cas, ocr_dram, amd_umc, amd_df, "
               "lmrl, l1_miss_lat, pebs_lat, ibs_lat, probe_lat)",
               method);
    return MW_ERR_NOEVENT;
}

MW_API const char *mw_uarch_name(mw_uarch u)
{
    return mw_uarch_valid(u) ? mw_uarchs[u].name : "invalid";
}

MW_API const char *mw_uarch_long_name(mw_uarch u)
{
    return mw_uarch_valid(u) ? mw_uarchs[u].long_name : "invalid microarchitecture";
}

MW_API mw_uarch mw_uarch_from_name(const char *name)
{
    if (!name)
        return MW_UARCH_UNKNOWN;
    for (int u = 0; u < MW_UARCH_COUNT; u++)
        if (strcmp(mw_uarchs[u].name, name) == 0)
            return (mw_uarch)u;
    for (size_t i = 0; i < MW_NEV(mw_uarch_aliases); i++)
        if (strcmp(mw_uarch_aliases[i].alias, name) == 0)
            return mw_uarch_aliases[i].u;
    return MW_UARCH_UNKNOWN;
}

MW_API const char *mw_uarch_pfm_pmu(mw_uarch u)
{
    return mw_uarch_valid(u) ? mw_uarchs[u].pfm_pmu : NULL;
}

MW_API int mw_catalogue_prefetch_msr(mw_uarch u, const mw_prefetch_msr **out)
{
    if (!out)
        return -EINVAL;
    *out = NULL;
    if (!mw_uarch_valid(u))
        return -EINVAL;
    if (!mw_pf_table[u]) {
        mw_log(MW_LOG_DEBUG, "catalogue: no documented prefetcher control MSR for %s",
               mw_uarchs[u].long_name);
        return MW_ERR_UNSUPPORTED;
    }
    *out = mw_pf_table[u];
    return 0;
}
