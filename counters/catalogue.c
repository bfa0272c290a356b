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

/* Every method, in the fixed order of docs/methods.md: name, quantity, how it
 * is read, its unit. The one list of method names; the per-microarchitecture
 * tables may only use these names (test_catalogue checks). */
#define MW_METHOD_LIST(X)                                                                          \
    X(imc_cas, MW_Q_DRAM_BYTES, MW_HOW_COUNT, MW_UNIT_BYTES)                                       \
    X(ocr_dram, MW_Q_DRAM_BYTES, MW_HOW_COUNT, MW_UNIT_BYTES)                                      \
    X(amd_umc, MW_Q_DRAM_BYTES, MW_HOW_COUNT, MW_UNIT_BYTES)                                       \
    X(amd_df, MW_Q_DRAM_BYTES, MW_HOW_COUNT, MW_UNIT_BYTES)                                        \
    X(lmrl, MW_Q_LATENCY, MW_HOW_COUNT, MW_UNIT_CYCLES)                                            \
    X(l1_miss_lat, MW_Q_LATENCY, MW_HOW_COUNT, MW_UNIT_CYCLES)                                     \
    X(pebs_lat, MW_Q_LATENCY, MW_HOW_SAMPLE, MW_UNIT_CYCLES)                                       \
    X(ibs_lat, MW_Q_LATENCY, MW_HOW_SAMPLE, MW_UNIT_CYCLES)                                        \
    X(probe_lat, MW_Q_LATENCY, MW_HOW_PROBE, MW_UNIT_NS)
#define MW_METHOD_NAME(n, q, h, u) #n,
#define MW_METHOD_INFO(n, q, h, u) {#n, q, h, u},
static const char *const mw_method_name_list[] = {MW_METHOD_LIST(MW_METHOD_NAME)};
static const mw_method_info mw_method_info_list[] = {MW_METHOD_LIST(MW_METHOD_INFO)};

/* A CPU memwatch does not know still gets the software probe. */
static const mw_method_def mw_tab_unknown[] = {MW_METHOD_PROBE_LAT};
static const mw_uarch_desc mw_desc_unknown = {
    MW_UARCH_UNKNOWN, "unknown", "unknown CPU (software probe only)", NULL, NULL, 0,
    mw_tab_unknown, MW_NEV(mw_tab_unknown), NULL, "unknown CPU"};

/* The descriptors, one per microarchitecture (counters/tables/<name>.h). */
static const mw_uarch_desc *const mw_descs[] = {
    [MW_UARCH_UNKNOWN] = &mw_desc_unknown, [MW_UARCH_HSW_EP] = &mw_desc_hsw_ep,
    [MW_UARCH_BDW_EP] = &mw_desc_bdw_ep,   [MW_UARCH_SKX] = &mw_desc_skx,
    [MW_UARCH_ICX] = &mw_desc_icx,         [MW_UARCH_SPR] = &mw_desc_spr,
    [MW_UARCH_GNR] = &mw_desc_gnr,         [MW_UARCH_SKL] = &mw_desc_skl,
    [MW_UARCH_ICL] = &mw_desc_icl,         [MW_UARCH_ADL] = &mw_desc_adl,
    [MW_UARCH_KNL] = &mw_desc_knl,         [MW_UARCH_ZEN2] = &mw_desc_zen2,
    [MW_UARCH_ZEN3] = &mw_desc_zen3,       [MW_UARCH_ZEN4] = &mw_desc_zen4,
    [MW_UARCH_ZEN5] = &mw_desc_zen5,
};
_Static_assert(MW_NEV(mw_descs) == MW_UARCH_COUNT,
               "every microarchitecture needs its descriptor in mw_descs");

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

static int mw_uarch_valid(mw_uarch u)
{
    return (int)u >= 0 && u < MW_UARCH_COUNT && mw_descs[u];
}

MW_API const mw_uarch_desc *mw_uarch_desc_of(mw_uarch u)
{
    return mw_uarch_valid(u) ? mw_descs[u] : NULL;
}

MW_API size_t mw_method_names(const char *const **names)
{
    if (names)
        *names = mw_method_name_list;
    return MW_NEV(mw_method_name_list);
}

MW_API const mw_method_info *mw_method_lookup(const char *name)
{
    for (size_t i = 0; name && i < MW_NEV(mw_method_info_list); i++)
        if (strcmp(mw_method_info_list[i].name, name) == 0)
            return &mw_method_info_list[i];
    return NULL;
}

MW_API int mw_method_is(const char *name, mw_quantity q, mw_method_how how)
{
    const mw_method_info *m = mw_method_lookup(name);
    return m && m->quantity == q && m->how == how;
}

MW_API int mw_catalogue_methods(mw_uarch u, const mw_method_def **defs, size_t *n)
{
    if (!defs || !n)
        return -EINVAL;
    if (!mw_uarch_valid(u)) {
        mw_log(MW_LOG_WARN, "catalogue: no microarchitecture number %d", (int)u);
        return -EINVAL;
    }
    *defs = mw_descs[u]->methods;
    *n = mw_descs[u]->n_methods;
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
    const mw_uarch_desc *ui = mw_descs[u];
    for (size_t i = 0; i < ui->n_methods; i++) {
        if (strcmp(ui->methods[i].name, method) == 0) {
            *def = &ui->methods[i];
            return 0;
        }
    }
    if (mw_method_lookup(method))
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
    return mw_uarch_valid(u) ? mw_descs[u]->name : "invalid";
}

MW_API const char *mw_uarch_long_name(mw_uarch u)
{
    return mw_uarch_valid(u) ? mw_descs[u]->long_name : "invalid microarchitecture";
}

MW_API mw_uarch mw_uarch_from_name(const char *name)
{
    if (!name)
        return MW_UARCH_UNKNOWN;
    for (int u = 0; u < MW_UARCH_COUNT; u++)
        if (strcmp(mw_descs[u]->name, name) == 0)
            return (mw_uarch)u;
    for (size_t i = 0; i < MW_NEV(mw_uarch_aliases); i++)
        if (strcmp(mw_uarch_aliases[i].alias, name) == 0)
            return mw_uarch_aliases[i].u;
    return MW_UARCH_UNKNOWN;
}

MW_API const char *mw_uarch_pfm_pmu(mw_uarch u)
{
    return mw_uarch_valid(u) ? mw_descs[u]->pfm_pmu : NULL;
}

MW_API int mw_catalogue_prefetch_msr(mw_uarch u, const mw_prefetch_msr **out)
{
    if (!out)
        return -EINVAL;
    *out = NULL;
    if (!mw_uarch_valid(u))
        return -EINVAL;
    if (!mw_descs[u]->prefetch) {
        mw_log(MW_LOG_DEBUG, "catalogue: no documented prefetcher control MSR for %s",
               mw_descs[u]->long_name);
        return MW_ERR_UNSUPPORTED;
    }
    *out = mw_descs[u]->prefetch;
    return 0;
}
