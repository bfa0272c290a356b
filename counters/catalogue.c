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
 *
 * Two builds of this file. With MW_CATALOGUE_GEN it is the build-time program
 * mw_catalogue_gen: the tables as written (pointers to strings and rows) and a
 * main() that prints them as catalogue_data.h, the same rows with offsets into
 * one string pool and indexes into one array per kind. The library includes
 * catalogue_data.h instead: data without pointers needs no relocation when
 * libmemwatch.so is loaded (the tables as written took 1,000 of its 1,053 and
 * wrote 5 pages in every process it is preloaded into, docs/overhead.md).
 * The first lookup lays the rows out once as the public structures
 * (mw_method_def, ...) in memory of its own.
 */
#include <memwatch/catalogue.h>
#include <memwatch/encode.h>

#include <errno.h>
#include <signal.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef MW_CATALOGUE_GEN
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
#include "tables/zen1.h"
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
#define MW_METHOD_INFO(n, q, h, u) {#n, q, h, u},
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
    [MW_UARCH_ZEN5] = &mw_desc_zen5,       [MW_UARCH_ZEN1] = &mw_desc_zen1,
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

#include <stdio.h>

/* ---- mw_catalogue_gen: print the tables as catalogue_data.h ---- */

static char gen_pool[1 << 18];
static size_t gen_pool_len = 1; /* offset 0: NULL */

/* The offset of s in the pool (each distinct text once), 0 for NULL. */
static unsigned long gen_str(const char *s)
{
    if (!s)
        return 0;
    size_t l = strlen(s);
    for (size_t o = 1; o + l < gen_pool_len; o += strlen(gen_pool + o) + 1)
        if (!strcmp(gen_pool + o, s))
            return (unsigned long)o;
    if (gen_pool_len + l + 1 > sizeof gen_pool) {
        fprintf(stderr, "mw_catalogue_gen: string pool full\n");
        exit(1);
    }
    memcpy(gen_pool + gen_pool_len, s, l + 1);
    size_t o = gen_pool_len;
    gen_pool_len += l + 1;
    return (unsigned long)o;
}

/* Distinct row arrays (by address), each given a first index. */
struct gen_arr {
    const void *p;
    size_t n, first;
};
static size_t gen_find(struct gen_arr *a, size_t *na, size_t *total, const void *p, size_t n)
{
    for (size_t i = 0; i < *na; i++)
        if (a[i].p == p && a[i].n == n)
            return a[i].first;
    a[*na] = (struct gen_arr){p, n, *total};
    *total += n;
    return a[(*na)++].first;
}

int main(void)
{
    static struct gen_arr ev[1024], me[256], mo[256], pf[64];
    size_t nev = 0, nme = 0, nmo = 0, npf = 0, tev = 0, tme = 0, tmo = 0, tpf = 0;
    size_t d_me[MW_UARCH_COUNT], d_mo[MW_UARCH_COUNT], d_pf[MW_UARCH_COUNT];
    for (int u = 0; u < MW_UARCH_COUNT; u++) {
        const mw_uarch_desc *d = mw_descs[u];
        d_me[u] = gen_find(me, &nme, &tme, d->methods, d->n_methods);
        d_mo[u] = d->models ? gen_find(mo, &nmo, &tmo, d->models, d->n_models) : (size_t)-1;
        d_pf[u] = d->prefetch ? gen_find(pf, &npf, &tpf, d->prefetch, 1) : (size_t)-1;
    }
    printf("/* catalogue_data.h: generated by mw_catalogue_gen from counters/tables/ "
           "(counters/catalogue.c); do not edit. */\n");
    /* events, in the order of the methods that use them */
    size_t *m_ev = calloc(tme, sizeof *m_ev);
    for (size_t a = 0; a < nme; a++) {
        const mw_method_def *m = me[a].p;
        for (size_t i = 0; i < me[a].n; i++)
            m_ev[me[a].first + i] =
                m[i].events ? gen_find(ev, &nev, &tev, m[i].events, m[i].n_events) : (size_t)-1;
    }
    printf("static const struct mwc_event mwc_events[%zu] = {\n", tev);
    for (size_t a = 0; a < nev; a++)
        for (size_t i = 0; i < ev[a].n; i++) {
            const mw_event_spec *e = (const mw_event_spec *)ev[a].p + i;
            printf("    {%lu, %lu, %lu, %lu, %lu, 0x%llxull, 0x%llxull, %a},\n", gen_str(e->role),
                   gen_str(e->pmu), gen_str(e->pfm), gen_str(e->sysfs), gen_str(e->source),
                   (unsigned long long)e->config, (unsigned long long)e->config1, e->scale);
        }
    printf("};\nstatic const struct mwc_method mwc_methods[%zu] = {\n", tme);
    for (size_t a = 0; a < nme; a++)
        for (size_t i = 0; i < me[a].n; i++) {
            const mw_method_def *m = (const mw_method_def *)me[a].p + i;
            printf("    {%lu, %d, %d, 0x%xu, %lu, %lu, %zu, %ld},\n", gen_str(m->name),
                   (int)m->quantity, (int)m->scope, m->needs, gen_str(m->formula),
                   gen_str(m->notes), m->n_events, (long)m_ev[me[a].first + i]);
        }
    printf("};\nstatic const struct mwc_model mwc_models[%zu] = {\n", tmo ? tmo : 1);
    for (size_t a = 0; a < nmo; a++)
        for (size_t i = 0; i < mo[a].n; i++) {
            const mw_cpu_model *m = (const mw_cpu_model *)mo[a].p + i;
            printf("    {%lu, 0x%x, 0x%x, 0x%x},\n", gen_str(m->vendor), m->family, m->model_lo,
                   m->model_hi);
        }
    printf("};\nstatic const struct mwc_prefetch mwc_prefetch[%zu] = {\n", tpf ? tpf : 1);
    for (size_t a = 0; a < npf; a++) {
        const mw_prefetch_msr *m = pf[a].p;
        printf("    {0x%xu, 0x%llxull, %lu},\n", m->msr, (unsigned long long)m->mask,
               gen_str(m->bits));
    }
    printf("};\nstatic const struct mwc_desc mwc_descs[%d] = {\n", (int)MW_UARCH_COUNT);
    for (int u = 0; u < MW_UARCH_COUNT; u++) {
        const mw_uarch_desc *d = mw_descs[u];
        printf("    {%d, %lu, %lu, %lu, %ld, %zu, %zu, %zu, %ld, %lu},\n", (int)d->id,
               gen_str(d->name), gen_str(d->long_name), gen_str(d->pfm_pmu), (long)d_mo[u],
               d->n_models, d_me[u], d->n_methods, (long)d_pf[u], gen_str(d->no_prefetch));
    }
    printf("};\nstatic const struct mwc_info mwc_info[%zu] = {\n", MW_NEV(mw_method_info_list));
    for (size_t i = 0; i < MW_NEV(mw_method_info_list); i++) {
        const mw_method_info *m = &mw_method_info_list[i];
        printf("    {%lu, %d, %d, %d},\n", gen_str(m->name), (int)m->quantity, (int)m->how,
               (int)m->unit);
    }
    printf("};\nstatic const struct mwc_alias mwc_aliases[%zu] = {\n", MW_NEV(mw_uarch_aliases));
    for (size_t i = 0; i < MW_NEV(mw_uarch_aliases); i++)
        printf("    {%lu, %d},\n", gen_str(mw_uarch_aliases[i].alias), (int)mw_uarch_aliases[i].u);
    printf("};\n");
    /* the pool last: every text is in it now */
    printf("static const char mwc_pool[%zu] =", gen_pool_len);
    for (size_t o = 0; o < gen_pool_len;) {
        printf("\n    \"");
        size_t l = strlen(gen_pool + o);
        for (size_t k = 0; k < l; k++) {
            unsigned char c = (unsigned char)gen_pool[o + k];
            if (c == '"' || c == '\\')
                printf("\\%c", c);
            else if (c < 0x20 || c >= 0x7f)
                printf("\\%03o", c);
            else
                putchar(c);
        }
        o += l + 1;
        printf(o < gen_pool_len ? "\\0\"" : "\"");
    }
    printf(";\n");
    return 0;
}

#else /* the library */
/* The rows of catalogue_data.h: texts as offsets into mwc_pool (0: NULL),
 * rows of other kinds as indexes into their arrays (-1: none). */
struct mwc_event {
    uint32_t role, pmu, pfm, sysfs, source;
    uint64_t config, config1;
    double scale;
};
struct mwc_method {
    uint32_t name;
    int quantity, scope;
    unsigned needs;
    uint32_t formula, notes, n_events;
    int32_t events;
};
struct mwc_model {
    uint32_t vendor;
    unsigned family, model_lo, model_hi;
};
struct mwc_prefetch {
    uint32_t msr;
    uint64_t mask;
    uint32_t bits;
};
struct mwc_desc {
    int id;
    uint32_t name, long_name, pfm_pmu;
    int32_t models;
    uint32_t n_models, methods, n_methods;
    int32_t prefetch;
    uint32_t no_prefetch;
};
struct mwc_info {
    uint32_t name;
    int quantity, how, unit;
};
struct mwc_alias {
    uint32_t alias;
    int u;
};
#include "catalogue_data.h" /* generated in the build directory */

#define MW_NEV(a) (sizeof(a) / sizeof((a)[0]))
_Static_assert(MW_NEV(mwc_descs) == MW_UARCH_COUNT,
               "every microarchitecture needs its descriptor in mw_descs");

/* The public structures, laid out from the rows at the first lookup. */
static mw_event_spec rt_events[MW_NEV(mwc_events)];
static mw_method_def rt_methods[MW_NEV(mwc_methods)];
static mw_cpu_model rt_models[MW_NEV(mwc_models)];
static mw_prefetch_msr rt_prefetch[MW_NEV(mwc_prefetch)];
static mw_uarch_desc rt_descs[MW_UARCH_COUNT];
static mw_method_info mw_method_info_list[MW_NEV(mwc_info)];
static const char *mw_method_name_list[MW_NEV(mwc_info)];
static const char *rt_aliases[MW_NEV(mwc_aliases)];
static const mw_uarch_desc *mw_descs[MW_UARCH_COUNT];
static _Atomic int rt_state; /* 0 not laid out, 1 being laid out, 2 ready */

static const char *rt_str(uint32_t o)
{
    return o ? mwc_pool + o : NULL;
}

static void rt_layout(void)
{
    for (size_t i = 0; i < MW_NEV(mwc_events); i++) {
        const struct mwc_event *e = &mwc_events[i];
        rt_events[i] = (mw_event_spec){rt_str(e->role),   rt_str(e->pmu),    rt_str(e->pfm),
                                       rt_str(e->sysfs),  e->config,         e->config1,
                                       e->scale,          rt_str(e->source)};
    }
    for (size_t i = 0; i < MW_NEV(mwc_methods); i++) {
        const struct mwc_method *m = &mwc_methods[i];
        rt_methods[i] = (mw_method_def){rt_str(m->name),     (mw_quantity)m->quantity,
                                        (mw_scope)m->scope,  m->needs,
                                        rt_str(m->formula),  rt_str(m->notes),
                                        m->n_events,         m->events < 0 ? NULL : &rt_events[m->events]};
    }
    for (size_t i = 0; i < MW_NEV(mwc_models); i++)
        rt_models[i] = (mw_cpu_model){rt_str(mwc_models[i].vendor), mwc_models[i].family,
                                      mwc_models[i].model_lo, mwc_models[i].model_hi};
    for (size_t i = 0; i < MW_NEV(mwc_prefetch); i++)
        rt_prefetch[i] = (mw_prefetch_msr){mwc_prefetch[i].msr, mwc_prefetch[i].mask,
                                           rt_str(mwc_prefetch[i].bits)};
    for (size_t u = 0; u < MW_UARCH_COUNT; u++) {
        const struct mwc_desc *d = &mwc_descs[u];
        rt_descs[u] = (mw_uarch_desc){(mw_uarch)d->id,
                                      rt_str(d->name),
                                      rt_str(d->long_name),
                                      rt_str(d->pfm_pmu),
                                      d->models < 0 ? NULL : &rt_models[d->models],
                                      d->n_models,
                                      &rt_methods[d->methods],
                                      d->n_methods,
                                      d->prefetch < 0 ? NULL : &rt_prefetch[d->prefetch],
                                      rt_str(d->no_prefetch)};
        mw_descs[u] = &rt_descs[u];
    }
    for (size_t i = 0; i < MW_NEV(mwc_info); i++) {
        mw_method_info_list[i] = (mw_method_info){rt_str(mwc_info[i].name),
                                                  (mw_quantity)mwc_info[i].quantity,
                                                  (mw_method_how)mwc_info[i].how,
                                                  (mw_method_unit)mwc_info[i].unit};
        mw_method_name_list[i] = mw_method_info_list[i].name;
    }
    for (size_t i = 0; i < MW_NEV(mwc_aliases); i++)
        rt_aliases[i] = rt_str(mwc_aliases[i].alias);
}

/* Once per process, by the first caller; the others wait the few
 * microseconds it takes. Signals are blocked meanwhile, so that a handler
 * that looks something up cannot wait for the thread it interrupted. */
static void rt_ready(void)
{
    if (atomic_load_explicit(&rt_state, memory_order_acquire) == 2)
        return;
    int expect = 0;
    if (atomic_compare_exchange_strong(&rt_state, &expect, 1)) {
        sigset_t all, old;
        sigfillset(&all);
        syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof(uint64_t));
        rt_layout();
        atomic_store_explicit(&rt_state, 2, memory_order_release);
        syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(uint64_t));
        return;
    }
    while (atomic_load_explicit(&rt_state, memory_order_acquire) != 2)
        sched_yield();
}

static int mw_uarch_valid(mw_uarch u)
{
    rt_ready();
    return (int)u >= 0 && u < MW_UARCH_COUNT && mw_descs[u];
}

MW_API const mw_uarch_desc *mw_uarch_desc_of(mw_uarch u)
{
    return mw_uarch_valid(u) ? mw_descs[u] : NULL;
}

MW_API size_t mw_method_names(const char *const **names)
{
    rt_ready();
    if (names)
        *names = (const char *const *)mw_method_name_list;
    return MW_NEV(mw_method_name_list);
}

MW_API const mw_method_info *mw_method_lookup(const char *name)
{
    rt_ready();
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
    rt_ready();
    for (int u = 0; u < MW_UARCH_COUNT; u++)
        if (strcmp(mw_descs[u]->name, name) == 0)
            return (mw_uarch)u;
    for (size_t i = 0; i < MW_NEV(mwc_aliases); i++)
        if (strcmp(rt_aliases[i], name) == 0)
            return (mw_uarch)mwc_aliases[i].u;
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
#endif /* MW_CATALOGUE_GEN */
