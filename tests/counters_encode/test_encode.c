/*
 * tests/counters_encode/test_encode.c: every core event of every method of the
 * catalogue, encoded through libpfm4 for a forced PMU model, gives the expected
 * perf_event_attr.config / config1 / precise_ip. The expected values below are
 * written out independently of the catalogue, each with its source; the test
 * checks (1) the catalogue states the same values, (2) libpfm4 encodes the
 * catalogue's event string to them, (3) no core event of the catalogue lacks a
 * row here.
 *
 * LIBPFM_FORCE_PMU is read by pfm_initialize() only, so the test runs itself
 * once per model in a fresh process (fork + exec of /proc/self/exe with the
 * variable set). A model the installed libpfm4 does not have (gnr, adl_glc,
 * amd64_fam1ah_zen5 on 4.13) is checked to be reported as such
 * (MW_ERR_NOPMU, "has no PMU model") instead of being encoded by guess.
 *
 * The same binary checks a newer libpfm4 when run with LD_LIBRARY_PATH pointing
 * at it; with upstream libpfm4 git 91970fe (after 4.13) every row here, gnr,
 * adl_glc, amd64_fam1ah_zen5 and emr included, encodes as expected.
 */
#include <memwatch/catalogue.h>
#include <memwatch/encode.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mw_test.h"

typedef struct enc_row {
    mw_uarch u;
    const char *method, *role;
    uint64_t config, config1;
    unsigned precise;
    const char *source;
    int line;
} enc_row;
#define ROW(u, m, r, c, c1, p, s)                                                                  \
    {                                                                                              \
        MW_UARCH_##u, m, r, c, c1, p, s, __LINE__                                                  \
    }

/* Intel codes: config = umask << 8 | event; config1 = offcore response MSR value
 * (0x1A6/0x1A7) or the PEBS load-latency threshold (MSR 0x3F6, ldlat=64). */
#define PEND "Intel perfmon / kernel pmu-events L1D_PEND_MISS.PENDING EventCode 0x48 UMask 0x01"
#define L1MU "kernel pmu-events MEM_LOAD_UOPS_RETIRED.L1_MISS EventCode 0xD1 UMask 0x08"
#define LFBU "kernel pmu-events MEM_LOAD_UOPS_RETIRED.HIT_LFB EventCode 0xD1 UMask 0x40"
#define L1M "kernel pmu-events MEM_LOAD_RETIRED.L1_MISS EventCode 0xD1 UMask 0x08"
#define FBH "kernel pmu-events MEM_LOAD_RETIRED.FB_HIT EventCode 0xD1 UMask 0x40"
#define LMA "docs/sources.md §1: MEM_LOAD_COMPLETED.L1_MISS_ANY 0x43/0xfd"
#define LAT                                                                                        \
    "kernel mem-loads: MEM_TRANS_RETIRED.LOAD_LATENCY 0xCD/0x01, ldlat=64 in config1, precise 2"
#define MAB "docs/sources.md §1: ls_alloc_mab_count event 0x5f"
#define MABA "docs/sources.md §1: ls_mab_alloc.load_store_allocations 0x41/0x3f"

/* The latency rows every Intel core with them shares: lmrl's pending, l1_miss
 * and fb_hit (l1, fb: where the last two codes come from) up to Ice Lake, its
 * pending and l1_miss_any from Golden Cove on; l1_miss_lat's pending and
 * l1_miss; pebs_lat's loads. AMD's lmrl: pending and mab_alloc (config c). */
#define LMRL_ROWS(u, l1, fb)                                                                       \
    ROW(u, "lmrl", "pending", 0x0148, 0, 0, PEND), ROW(u, "lmrl", "l1_miss", 0x08d1, 0, 0, l1),    \
        ROW(u, "lmrl", "fb_hit", 0x40d1, 0, 0, fb)
#define LMRL_ANY_ROWS(u)                                                                           \
    ROW(u, "lmrl", "pending", 0x0148, 0, 0, PEND), ROW(u, "lmrl", "l1_miss_any", 0xfd43, 0, 0, LMA)
#define LAT_ROWS(u, l1)                                                                            \
    ROW(u, "l1_miss_lat", "pending", 0x0148, 0, 0, PEND),                                          \
        ROW(u, "l1_miss_lat", "l1_miss", 0x08d1, 0, 0, l1),                                        \
        ROW(u, "pebs_lat", "loads", 0x01cd, 64, 2, LAT)
#define MAB_ROWS(u, c, src)                                                                        \
    ROW(u, "lmrl", "pending", 0x5f, 0, 0, MAB), ROW(u, "lmrl", "mab_alloc", c, 0, 0, src)

static const enc_row rows[] = {
    ROW(HSW_EP, "ocr_dram", "rd", 0x01b7, 0x6004007F7ull, 0,
        "docs/sources.md §1: Haswell-EP 0xB7 rsp 0x6004007F7 (kernel haswellx "
        "OFFCORE_RESPONSE.ALL_READS.LLC_MISS.LOCAL_DRAM)"),
    LMRL_ROWS(HSW_EP, L1MU, LFBU),
    LAT_ROWS(HSW_EP, L1MU),

    ROW(BDW_EP, "ocr_dram", "rd", 0x01b7, 0x6040007F7ull, 0,
        "docs/sources.md §1: Broadwell-EP rsp 0x6040007F7 (local DRAM bit moved 22 -> 26)"),
    LMRL_ROWS(BDW_EP, L1MU, LFBU),
    LAT_ROWS(BDW_EP, L1MU),

    /* docs/sources.md §1 / kernel cascadelakex say 0x3F840007F7; libpfm4 cannot set the
     * reserved request bits 6 and 9 on skx (see counters/tables/skx.h and the
     * check in check_skx_disagreement). */
    ROW(SKX, "ocr_dram", "rd", 0x01b7, 0x3F840005B7ull, 0,
        "docs/sources.md §1 Cascade Lake 0x3F840007F7 less request bits 6 and 9 (0x240)"),
    LMRL_ROWS(SKX, L1M, FBH),
    LAT_ROWS(SKX, L1M),

    ROW(ICX, "ocr_dram", "rd", 0x01b7, 0x104000477ull, 0,
        "docs/sources.md §1: Ice Lake-SP OCR.READS_TO_CORE.LOCAL_DRAM 0x104000477"),
    LMRL_ROWS(ICX, L1M, FBH),
    LAT_ROWS(ICX, L1M),

    ROW(SPR, "ocr_dram", "rd", 0x012a, 0x104004477ull, 0,
        "docs/sources.md §1: Sapphire Rapids OCR event 0x2A, rsp 0x104004477"),
    LMRL_ANY_ROWS(SPR),
    LAT_ROWS(SPR, L1M),

    ROW(GNR, "ocr_dram", "rd", 0x012a, 0x104004477ull, 0,
        "docs/sources.md §1: SPR and later OCR 0x2A, rsp 0x104004477"),
    LMRL_ANY_ROWS(GNR),
    LAT_ROWS(GNR, L1M),

    ROW(SKL, "ocr_dram", "rd", 0x01b7, 0x3F84000003ull, 0,
        "Intel SDM offcore response layout: DMND_DATA_RD|DMND_RFO bits 0-1, L3 miss bit 26, "
        "any snoop bits 31-37"),
    LMRL_ROWS(SKL, L1M, FBH),
    LAT_ROWS(SKL, L1M),

    ROW(ICL, "ocr_dram", "rd", 0x01b7, 0x184000001ull, 0,
        "kernel pmu-events icelake OCR.DEMAND_DATA_RD.DRAM MSRValue 0x184000001"),
    ROW(ICL, "ocr_dram", "rfo", 0x01bb, 0x184000002ull, 0,
        "kernel pmu-events icelake OCR.DEMAND_RFO.DRAM MSRValue 0x184000002 on counter 0xBB"),
    LMRL_ROWS(ICL, L1M, FBH),
    LAT_ROWS(ICL, L1M),

    LMRL_ANY_ROWS(ADL),
    LAT_ROWS(ADL, L1M),

    ROW(KNL, "ocr_dram", "rd", 0x01b7, 0x1818032e7ull, 0,
        "libpfm4 intel_knl_events.h umask codes ANY_READ 0x32e7 | DDR 0x181800000 (not "
        "cross-checked against Intel's KNL list)"),

    MAB_ROWS(ZEN3, 0x3f41, MABA),
    MAB_ROWS(ZEN4, 0x3f41, MABA),
    /* Not 0x3f41: Zen 5 narrowed the umask (kernel amdzen5 load-store.json fix). */
    MAB_ROWS(ZEN5, 0x0741,
             "kernel pmu-events amdzen5 ls_mab_alloc.load_store_allocations UMask 0x07 (fixed "
             "from 0x3f)"),
};

/* The models to force, and the microarchitecture whose table they check. A twin
 * model ("knm", "emr") is encoded from the same libpfm4 event table as the
 * catalogue's prefix ("knl", "spr"); counters/pfm.c switches to the twin when
 * only the twin is active. */
static const struct {
    const char *model;
    mw_uarch u;
} models[] = {
    {"hsw_ep", MW_UARCH_HSW_EP},
    {"bdw_ep", MW_UARCH_BDW_EP},
    {"skx", MW_UARCH_SKX},
    {"icx", MW_UARCH_ICX},
    {"spr", MW_UARCH_SPR},
    {"skl", MW_UARCH_SKL},
    {"icl", MW_UARCH_ICL},
    {"knl", MW_UARCH_KNL},
    {"knm", MW_UARCH_KNL},
    {"amd64_fam17h_zen1", MW_UARCH_ZEN1},
    {"amd64_fam17h_zen2", MW_UARCH_ZEN2},
    {"amd64_fam19h_zen3", MW_UARCH_ZEN3},
    {"amd64_fam19h_zen4", MW_UARCH_ZEN4},
    {"gnr", MW_UARCH_GNR},
    {"adl_glc", MW_UARCH_ADL},
    {"amd64_fam1ah_zen5", MW_UARCH_ZEN5},
    {"emr", MW_UARCH_SPR},
};
#define NMODELS (sizeof models / sizeof models[0])

static void quiet(int level, const char *msg, void *user)
{
    (void)level;
    (void)msg;
    (void)user;
}

static const mw_event_spec *find_event(mw_uarch u, const char *method, const char *role)
{
    const mw_method_def *m;
    if (mw_catalogue_find(u, method, &m) != 0)
        return NULL;
    for (size_t i = 0; i < m->n_events; i++)
        if (!strcmp(m->events[i].role, role))
            return &m->events[i];
    return NULL;
}

/* Catalogue core events without a row here are a test failure. */
static void check_coverage(mw_uarch u)
{
    const mw_method_def *defs;
    size_t n;
    if (mw_catalogue_methods(u, &defs, &n) != 0)
        return;
    for (size_t i = 0; i < n; i++)
        for (size_t e = 0; e < defs[i].n_events; e++) {
            const mw_event_spec *ev = &defs[i].events[e];
            if (!ev->pfm)
                continue;
            bool found = false;
            for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
                found |= rows[r].u == u && !strcmp(rows[r].method, defs[i].name) &&
                         !strcmp(rows[r].role, ev->role);
            MW_CHECK(found, "%s/%s/%s (%s) has no expected value in this test", mw_uarch_name(u),
                     defs[i].name, ev->role, ev->pfm);
        }
}

static int rows_checked;

static void check_row(const enc_row *r)
{
    const char *un = mw_uarch_name(r->u);
    const mw_event_spec *ev = find_event(r->u, r->method, r->role);
    MW_CHECK_AT(__FILE__, r->line, ev && ev->pfm, "%s/%s/%s: not a core event of the catalogue", un,
                r->method, r->role);
    if (!ev || !ev->pfm)
        return;
    MW_CHECK_AT(__FILE__, r->line, ev->config == r->config && ev->config1 == r->config1,
                "%s/%s/%s: catalogue says config=0x%" PRIx64 " config1=0x%" PRIx64
                ", expected 0x%" PRIx64 "/0x%" PRIx64 " (%s)",
                un, r->method, r->role, ev->config, ev->config1, r->config, r->config1, r->source);
    struct perf_event_attr a;
    char why[512];
    int rc = mw_pfm_encode_ex(ev->pfm, 0, &a, why, sizeof why);
    MW_CHECK_AT(__FILE__, r->line, rc == 0, "%s: %s", ev->pfm, why);
    if (rc != 0)
        return;
    rows_checked++;
    MW_CHECK_AT(__FILE__, r->line, a.type == PERF_TYPE_RAW, "%s: type %u", ev->pfm, a.type);
    MW_CHECK_AT(__FILE__, r->line, a.config == r->config,
                "%s: config 0x%" PRIx64 ", expected 0x%" PRIx64 " (%s)", ev->pfm,
                (uint64_t)a.config, r->config, r->source);
    MW_CHECK_AT(__FILE__, r->line, a.config1 == r->config1,
                "%s: config1 0x%" PRIx64 ", expected 0x%" PRIx64 " (%s)", ev->pfm,
                (uint64_t)a.config1, r->config1, r->source);
    MW_CHECK_AT(__FILE__, r->line, a.precise_ip == r->precise, "%s: precise_ip %u, expected %u",
                ev->pfm, (unsigned)a.precise_ip, r->precise);
    MW_CHECK_AT(__FILE__, r->line, !a.exclude_user && !a.exclude_kernel,
                "%s: default counts user and kernel", ev->pfm);
    MW_CHECK_AT(__FILE__, r->line, a.size == sizeof a, "%s: attr size", ev->pfm);
    rc = mw_pfm_encode_spec(ev, 0, &a, why, sizeof why);
    MW_CHECK_AT(__FILE__, r->line, rc == 0, "encode_spec %s: %s", ev->pfm, why);
}

/* A model the installed libpfm4 lacks: every core row must say so. For the
 * catalogue's own PMU that is "has no PMU model"; for a twin (emr on 4.13) the
 * catalogue's PMU exists but is not active: "did not detect". */
static void check_missing_model(const char *model, mw_uarch u)
{
    const char *table = mw_uarch_pfm_pmu(u);
    const char *reason = table && !strcmp(table, model) ? "has no PMU model" : "did not detect";
    char swhy[512];
    int src = mw_pfm_uarch_status(u, swhy, sizeof swhy);
    MW_CHECK(src == MW_ERR_NOPMU && strstr(swhy, reason) && strstr(swhy, table) &&
                 !strstr(swhy, "cannot encode"),
             "uarch status of %s: rc %d \"%s\"", mw_uarch_name(u), src, swhy);
    printf("%s: %s\n", model, swhy);
    printf("note: libpfm4 %s has no model %s: checking that %s's core events are reported "
           "unavailable\n",
           mw_pfm_version(), model, mw_uarch_name(u));
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        if (rows[r].u != u)
            continue;
        const mw_event_spec *ev = find_event(u, rows[r].method, rows[r].role);
        MW_CHECK_AT(__FILE__, rows[r].line, ev && ev->pfm, "%s/%s/%s missing", mw_uarch_name(u),
                    rows[r].method, rows[r].role);
        if (!ev || !ev->pfm)
            continue;
        MW_CHECK_AT(__FILE__, rows[r].line,
                    ev->config == rows[r].config && ev->config1 == rows[r].config1,
                    "%s/%s/%s: catalogue config differs (%s)", mw_uarch_name(u), rows[r].method,
                    rows[r].role, rows[r].source);
        struct perf_event_attr a;
        char why[512];
        int rc = mw_pfm_encode_spec(ev, 0, &a, why, sizeof why);
        MW_CHECK_AT(__FILE__, rows[r].line, rc == MW_ERR_NOPMU && strstr(why, reason),
                    "%s: rc %d, reason \"%s\"", ev->pfm, rc, why);
        if (!strcmp(model, "emr"))
            MW_CHECK_AT(__FILE__, rows[r].line, strstr(why, "Emerald Rapids") != NULL,
                        "no Emerald Rapids hint: \"%s\"", why);
    }
}

/* Several threads encoding at once (libpfm4 calls are serialised inside). */
static void *encode_many(void *arg)
{
    const char *ev = arg;
    long bad = 0;
    for (int i = 0; i < 200; i++) {
        struct perf_event_attr a;
        if (mw_pfm_encode(ev, 0, &a) != 0 || a.config != 0x0148)
            bad++;
    }
    return (void *)bad;
}

/* Bad input, privilege flags and the catalogue/kernel disagreement on skx. */
static void check_skx_extras(void)
{
    struct perf_event_attr a;
    char why[512];
    static const struct {
        const char *ev;
        int rc;
        const char *reason;
        int line;
    } bad[] = {
        {"skx::NO_SUCH_EVENT", MW_ERR_NOEVENT, "has no event", __LINE__},
        {"skx::L1D_PEND_MISS:NO_SUCH_UMASK", MW_ERR_NOEVENT, "rejects", __LINE__},
        {"skx::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=zz", MW_ERR_NOEVENT, "rejects", __LINE__},
        {"skx::L1D_PEND_MISS:PENDING:nosuchmod=1", MW_ERR_NOEVENT, "rejects", __LINE__},
        {"nosuchpmu::CYCLES", MW_ERR_NOPMU, "has no PMU model", __LINE__},
        {"hsw_ep::L1D_PEND_MISS:PENDING", MW_ERR_NOPMU, "did not detect", __LINE__},
        {"NO_SUCH_EVENT_ANYWHERE", MW_ERR_NOEVENT, "no PMU active", __LINE__},
        {"", -EINVAL, "no event", __LINE__},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&a, 0x5a, sizeof a);
        int rc = mw_pfm_encode_ex(bad[i].ev, 0, &a, why, sizeof why);
        MW_CHECK_AT(__FILE__, bad[i].line, rc == bad[i].rc && strstr(why, bad[i].reason),
                    "'%s': rc %d (%s), reason \"%s\"", bad[i].ev, rc, mw_strerror(rc), why);
    }
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        MW_CHECK(pthread_create(&th[i], NULL, encode_many, "skx::L1D_PEND_MISS:PENDING") == 0,
                 "pthread_create");
    for (int i = 0; i < 4; i++) {
        void *nbad = (void *)1;
        pthread_join(th[i], &nbad);
        MW_CHECK(nbad == NULL, "thread %d: %ld bad encodings", i, (long)nbad);
    }
    MW_CHECK_INT(mw_pfm_encode(NULL, 0, &a), -EINVAL);
    MW_CHECK_INT(mw_pfm_encode("skx::L1D_PEND_MISS:PENDING", 0, NULL), -EINVAL);

    /* Privilege levels become exclude bits. */
    MW_CHECK_INT(mw_pfm_encode("skx::L1D_PEND_MISS:PENDING", MW_ENC_USER, &a), 0);
    MW_CHECK(!a.exclude_user && a.exclude_kernel, "user only: exclude_user %u exclude_kernel %u",
             (unsigned)a.exclude_user, (unsigned)a.exclude_kernel);
    MW_CHECK_INT(mw_pfm_encode("skx::L1D_PEND_MISS:PENDING", MW_ENC_KERNEL, &a), 0);
    MW_CHECK(a.exclude_user && !a.exclude_kernel, "kernel only: exclude_user %u exclude_kernel %u",
             (unsigned)a.exclude_user, (unsigned)a.exclude_kernel);
    MW_CHECK_INT(mw_pfm_encode("skx::L1D_PEND_MISS:PENDING", MW_ENC_USER | MW_ENC_KERNEL, &a), 0);
    MW_CHECK(!a.exclude_user && !a.exclude_kernel, "both levels");
    /* Without prefix the forced model answers. */
    MW_CHECK_INT(mw_pfm_encode("L1D_PEND_MISS:PENDING", 0, &a), 0);
    MW_CHECK_U64(a.config, 0x0148);

    /* A catalogue row that disagrees with libpfm4 is reported, with both values. */
    const mw_event_spec *ev = find_event(MW_UARCH_SKX, "lmrl", "pending");
    MW_CHECK(ev != NULL, "skx lmrl pending");
    if (ev) {
        mw_event_spec wrong = *ev;
        wrong.config = 0x0248;
        int rc = mw_pfm_encode_spec(&wrong, 0, &a, why, sizeof why);
        MW_CHECK(rc == MW_ERR_PFM && strstr(why, "expects config=0x248"), "mismatch: rc %d \"%s\"",
                 rc, why);
    }
    /* A sysfs event is not libpfm4's to encode. */
    ev = find_event(MW_UARCH_SKX, "imc_cas", "rd");
    MW_CHECK(ev && !ev->pfm, "skx imc_cas rd is a sysfs event");
    if (ev)
        MW_CHECK_INT(mw_pfm_encode_spec(ev, 0, &a, why, sizeof why), -EINVAL);

    /* The kernel's JSON (cascadelakex OCR.ALL_READS.L3_MISS_LOCAL_DRAM.ANY_SNOOP,
     * MSRValue 0x3F840007F7) sets request bits 6 and 9, which libpfm4's skx table
     * does not define; memwatch uses libpfm4's value. Pin the exact difference. */
    ev = find_event(MW_UARCH_SKX, "ocr_dram", "rd");
    MW_CHECK(ev != NULL, "skx ocr_dram");
    if (ev) {
        MW_CHECK_U64(ev->config1 ^ 0x3F840007F7ull, 0x240);
        MW_CHECK_INT(mw_pfm_encode(ev->pfm, 0, &a), 0);
        MW_CHECK_U64(a.config1 & 0x240, 0);
    }
    MW_CHECK_INT(mw_pfm_encode("skx::OFFCORE_RESPONSE_0:PF_L2_CODE_RD:L3_MISS_LOCAL", 0, &a),
                 MW_ERR_NOEVENT);
}

/* Zen 2 has no MAB occupancy event, which is why its table has no lmrl. */
static void check_zen2_extras(void)
{
    struct perf_event_attr a;
    char why[256];
    int rc = mw_pfm_encode_ex("amd64_fam17h_zen2::ALLOC_MAB_COUNT", 0, &a, why, sizeof why);
    MW_CHECK(rc == MW_ERR_NOEVENT, "zen2 ALLOC_MAB_COUNT: rc %d \"%s\"", rc, why);
    const mw_method_def *m;
    MW_CHECK_INT(mw_catalogue_find(MW_UARCH_ZEN2, "lmrl", &m), MW_ERR_NOEVENT);
}

/*
 * Zen 1 reads no core event, so it has no row above: its events are sysfs
 * events, written out here from their sources rather than from
 * counters/tables/amd_common.h. amd_df: the kernel's pmu-events
 * x86/amdzen1/data-fabric.json dram_channel_data_controller_N, EventCode
 * 0x07 + 0x40*N, UMask 0x38, with the amd_df format of arch/x86/events/amd/
 * uncore.c (event:0-7,32-35, umask:8-15): event bits 8-11 go to config 32-35.
 * ibs_op: cnt_ctl is config:19 (arch/x86/events/amd/ibs.c; IbsOpCntCtl, bit 19
 * of IBS_OP_CTL in AMD's PPR 54945). The catalogue must state exactly these,
 * and no other event.
 */
typedef struct sysfs_row {
    const char *method, *role, *pmu, *terms;
    uint64_t config;
    double scale;
    int line;
} sysfs_row;
#define DF1(n, ev, cfg)                                                                            \
    {                                                                                              \
        "amd_df", "ch" #n, "amd_df", "event=" #ev ",umask=0x38", cfg, 64.0, __LINE__               \
    }
static const sysfs_row zen1_rows[] = {
    DF1(0, 0x07, 0x3807),
    DF1(1, 0x47, 0x3847),
    DF1(2, 0x87, 0x3887),
    DF1(3, 0xc7, 0x38c7),
    DF1(4, 0x107, 0x100003807ull), /* event bit 8 -> config bit 32 */
    DF1(5, 0x147, 0x100003847ull),
    DF1(6, 0x187, 0x100003887ull),
    DF1(7, 0x1c7, 0x1000038c7ull),
    {"ibs_lat", "ops", "ibs_op", "cnt_ctl=1", 0x80000, 1.0, __LINE__}, /* config bit 19 */
};

/* Zen 1: the sysfs rows above; libpfm4's zen1 table has no MAB occupancy event
 * (ALLOC_MAB_COUNT), which is why there is no lmrl, and the catalogue names no
 * core event for libpfm4 to encode. */
static void check_zen1_extras(void)
{
    size_t nrows = sizeof zen1_rows / sizeof zen1_rows[0];
    for (size_t r = 0; r < nrows; r++) {
        const sysfs_row *w = &zen1_rows[r];
        const mw_event_spec *ev = find_event(MW_UARCH_ZEN1, w->method, w->role);
        MW_CHECK_AT(__FILE__, w->line, ev && !ev->pfm && ev->sysfs,
                    "zen1/%s/%s: not a sysfs event of the catalogue", w->method, w->role);
        if (!ev || !ev->sysfs)
            continue;
        MW_CHECK_AT(__FILE__, w->line,
                    !strcmp(ev->pmu, w->pmu) && !strcmp(ev->sysfs, w->terms) &&
                        ev->config == w->config && ev->config1 == 0 && ev->scale == w->scale,
                    "zen1/%s/%s: catalogue says %s/%s/ config=0x%" PRIx64 " config1=0x%" PRIx64
                    " scale %g, expected %s/%s/ config=0x%" PRIx64 " config1=0x0 scale %g",
                    w->method, w->role, ev->pmu, ev->sysfs, ev->config, ev->config1, ev->scale,
                    w->pmu, w->terms, w->config, w->scale);
        MW_CHECK_AT(__FILE__, w->line,
                    strstr(ev->source, !strcmp(w->pmu, "amd_df") ? "amdzen1" : "54945") != NULL,
                    "zen1/%s/%s: source \"%s\" does not cite Zen 1's own", w->method, w->role,
                    ev->source);
    }
    /* No Zen 1 event beyond the rows above, and none of them a core event. */
    const mw_method_def *defs;
    size_t n, nev = 0;
    MW_CHECK_INT(mw_catalogue_methods(MW_UARCH_ZEN1, &defs, &n), 0);
    for (size_t i = 0; i < n; i++)
        for (size_t e = 0; e < defs[i].n_events; e++) {
            nev++;
            MW_CHECK(!defs[i].events[e].pfm, "zen1/%s/%s: core event %s has no row here",
                     defs[i].name, defs[i].events[e].role, defs[i].events[e].pfm);
        }
    MW_CHECK(nev == nrows, "zen1: %zu catalogue events, %zu rows here", nev, nrows);

    struct perf_event_attr a;
    char why[256];
    int rc = mw_pfm_encode_ex("amd64_fam17h_zen1::ALLOC_MAB_COUNT", 0, &a, why, sizeof why);
    MW_CHECK(rc == MW_ERR_NOEVENT, "zen1 ALLOC_MAB_COUNT: rc %d \"%s\"", rc, why);
    const mw_method_def *m;
    MW_CHECK_INT(mw_catalogue_find(MW_UARCH_ZEN1, "lmrl", &m), MW_ERR_NOEVENT);
    /* The table is there: its one MAB event, MAB_ALLOCATION_BY_PIPE (0x41), encodes. */
    rc = mw_pfm_encode_ex("amd64_fam17h_zen1::MAB_ALLOCATION_BY_PIPE:DATA_PIPE", 0, &a, why,
                          sizeof why);
    MW_CHECK(rc == 0 && a.type == PERF_TYPE_RAW && (a.config & 0xffff) == 0x0141,
             "zen1 MAB_ALLOCATION_BY_PIPE:DATA_PIPE: rc %d config 0x%" PRIx64 " \"%s\"", rc,
             (uint64_t)a.config, why);
    printf("amd64_fam17h_zen1: %zu sysfs events as expected, no core event\n", nrows);
}

static int run_model(const char *model)
{
    mw_uarch u = MW_UARCH_UNKNOWN;
    for (size_t i = 0; i < NMODELS; i++)
        if (!strcmp(models[i].model, model))
            u = models[i].u;
    MW_CHECK(u != MW_UARCH_UNKNOWN, "unknown model %s", model);
    MW_CHECK_INT(mw_pfm_init(), 0);
    MW_CHECK_INT(mw_pfm_init(), 0); /* idempotent */
    int st = mw_pfm_pmu_status(model);
    if (st == MW_ERR_NOPMU) {
        check_missing_model(model, u);
        return mw_test_done_named(model);
    }
    MW_CHECK(st == 1, "LIBPFM_FORCE_PMU=%s: status %d", model, st);
    char swhy[256];
    MW_CHECK(mw_pfm_uarch_status(u, swhy, sizeof swhy) == 1, "uarch status of %s: %s",
             mw_uarch_name(u), swhy);
    MW_CHECK(mw_pfm_uarch_status(MW_UARCH_UNKNOWN, swhy, sizeof swhy) == MW_ERR_UNSUPPORTED,
             "unknown uarch: %s", swhy);
    char host[64];
    MW_CHECK(mw_pfm_host_pmu(host, sizeof host) == 0 && !strcmp(host, model),
             "forced host pmu '%s'", host);
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        if (rows[r].u == u)
            check_row(&rows[r]);
    check_coverage(u);
    if (!strcmp(model, "skx"))
        check_skx_extras();
    if (!strcmp(model, "amd64_fam17h_zen2"))
        check_zen2_extras();
    if (!strcmp(model, "amd64_fam17h_zen1"))
        check_zen1_extras();
    printf("%s: libpfm4 %s, %d core events encoded as expected\n", model, mw_pfm_version(),
           rows_checked);
    return mw_test_done_named(model);
}

/* Unforced: this machine. Whatever libpfm4 detects must agree with cpuinfo. */
static void check_host(void)
{
    mw_cpu_id id;
    char host[64] = "", why[512];
    MW_CHECK_INT(mw_pfm_init(), 0);
    const char *v = mw_pfm_version();
    unsigned maj = 0, min = 0;
    MW_CHECK(sscanf(v, "%u.%u", &maj, &min) == 2 && maj == 4, "libpfm4 version '%s'", v);
    if (mw_cpu_identify(NULL, &id) != 0)
        return;
    const char *want = mw_uarch_pfm_pmu(id.uarch);
    int hrc = mw_pfm_host_pmu(host, sizeof host);
    printf("host: %s, libpfm4 %s detects core PMU '%s' (rc %d), catalogue wants '%s'\n",
           mw_uarch_long_name(id.uarch), v, host, hrc, want ? want : "none");
    if (!want)
        return;
    int st = mw_pfm_pmu_status(want);
    int ust = mw_pfm_uarch_status(id.uarch, why, sizeof why);
    printf("host: core events of %s: %s\n", mw_uarch_name(id.uarch), ust == 1 ? "encodable" : why);
    MW_CHECK(ust == 1 || (ust == MW_ERR_NOPMU && *why), "uarch status %d", ust);
    if (st == 1) {
        MW_CHECK(hrc == 0 && !strcmp(host, want), "detected '%s', expected '%s'", host, want);
        return;
    }
    /* libpfm4 lacks or does not detect this CPU: the first core event of the
     * catalogue must say so, never be encoded by guess. */
    const mw_method_def *defs;
    size_t n;
    MW_CHECK_INT(mw_catalogue_methods(id.uarch, &defs, &n), 0);
    for (size_t i = 0; i < n; i++)
        for (size_t e = 0; e < defs[i].n_events; e++) {
            const mw_event_spec *ev = &defs[i].events[e];
            if (!ev->pfm)
                continue;
            struct perf_event_attr a;
            int rc = mw_pfm_encode_spec(ev, 0, &a, why, sizeof why);
            MW_CHECK(rc == MW_ERR_NOPMU && strstr(why, want), "%s on this host: rc %d \"%s\"",
                     ev->pfm, rc, why);
            printf("host: %s -> %s\n", ev->pfm, why);
            return;
        }
}

/* Run with LD_LIBRARY_PATH on MW_FAKE_PFM_DIR, whose libpfm.so.4 has no pfm_*
 * function: initialisation and encoding fail and say why; nothing crashes. */
static int run_nopfm(void)
{
    char why[240];
    struct perf_event_attr a;
    MW_CHECK(mw_pfm_init() == MW_ERR_PFM, "mw_pfm_init with a libpfm.so.4 that is not libpfm4");
    int rc = mw_pfm_encode_ex("INST_RETIRED:ANY_P", 0, &a, why, sizeof why);
    MW_CHECK(rc == MW_ERR_PFM && strstr(why, "libpfm.so.4 has no pfm_initialize"),
             "encode without libpfm4: rc %d \"%s\"", rc, why);
    MW_CHECK(mw_pfm_pmu_status("skx") == MW_ERR_PFM, "PMU status without libpfm4");
    printf("no libpfm4: %s\n", why);
    return mw_test_done();
}

int main(int argc, char **argv)
{
    mw_set_log(quiet, NULL, MW_LOG_DEBUG);
    if (argc == 3 && !strcmp(argv[1], "--model"))
        return run_model(argv[2]);
    if (argc == 2 && !strcmp(argv[1], "--nopfm"))
        return run_nopfm();

    if (getenv("LIBPFM_FORCE_PMU"))
        mw_test_skip("LIBPFM_FORCE_PMU is set in the environment; run without it");
    check_host();
    for (size_t i = 0; i < NMODELS; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            setenv("LIBPFM_FORCE_PMU", models[i].model, 1);
            execl("/proc/self/exe", argv[0], "--model", models[i].model, (char *)NULL);
            _exit(127);
        }
        int status = 0;
        MW_CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork/wait for %s", models[i].model);
        MW_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                 "model %s failed (status 0x%x); its failures are printed above", models[i].model,
                 status);
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("LD_LIBRARY_PATH", MW_FAKE_PFM_DIR, 1);
        execl("/proc/self/exe", argv[0], "--nopfm", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    MW_CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork/wait for --nopfm");
    MW_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
             "--nopfm failed (status 0x%x); its failures are printed above", status);
    return mw_test_done();
}
