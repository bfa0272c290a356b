/*
 * tests/counters_encode/test_catalogue.c: integrity of the method catalogue
 * (counters/catalogue.c, counters/tables/). Every method of every
 * microarchitecture has a formula that names each of its events, events with a
 * source, a positive scale and exactly one way to be encoded; core events carry
 * the libpfm4 PMU of their microarchitecture; sysfs raw terms agree with the
 * config the table states (checked with the kernel's format layouts, written
 * out here); the method sets per microarchitecture are the documented ones;
 * bad names give MW_ERR_NOEVENT; the prefetcher MSR table is docs/sources.md §2.
 */
#include <memwatch/catalogue.h>
#include <memwatch/encode.h>

#include <errno.h>
#include <stdbool.h>

#include "mw_test.h"

static void quiet(int level, const char *msg, void *user)
{
    (void)level;
    (void)msg;
    (void)user;
}

/* Which methods exist where (docs/methods.md). */
typedef struct set_row {
    mw_uarch u;
    const char *methods; /* space-separated, catalogue order */
    int line;
} set_row;
#define SET(u, m)                                                                                  \
    {                                                                                              \
        u, m, __LINE__                                                                             \
    }
static const set_row sets[] = {
    SET(MW_UARCH_UNKNOWN, "probe_lat"),
    SET(MW_UARCH_HSW_EP, "imc_cas ocr_dram lmrl l1_miss_lat pebs_lat probe_lat"),
    SET(MW_UARCH_BDW_EP, "imc_cas ocr_dram lmrl l1_miss_lat pebs_lat probe_lat"),
    SET(MW_UARCH_SKX, "imc_cas ocr_dram lmrl l1_miss_lat pebs_lat probe_lat"),
    SET(MW_UARCH_ICX, "imc_cas ocr_dram lmrl l1_miss_lat pebs_lat probe_lat"),
    SET(MW_UARCH_SPR, "imc_cas ocr_dram lmrl l1_miss_lat pebs_lat probe_lat"),
    SET(MW_UARCH_GNR, "imc_cas ocr_dram lmrl l1_miss_lat pebs_lat probe_lat"),
    SET(MW_UARCH_SKL, "imc_cas ocr_dram lmrl l1_miss_lat pebs_lat probe_lat"),
    SET(MW_UARCH_ICL, "imc_cas ocr_dram lmrl l1_miss_lat pebs_lat probe_lat"),
    SET(MW_UARCH_ADL, "imc_cas lmrl l1_miss_lat pebs_lat probe_lat"),
    SET(MW_UARCH_KNL, "imc_cas ocr_dram probe_lat"),
    SET(MW_UARCH_ZEN2, "amd_df ibs_lat probe_lat"),
    SET(MW_UARCH_ZEN3, "amd_df lmrl ibs_lat probe_lat"),
    SET(MW_UARCH_ZEN4, "amd_umc lmrl ibs_lat probe_lat"),
    SET(MW_UARCH_ZEN5, "amd_umc lmrl ibs_lat probe_lat"),
    SET(MW_UARCH_ZEN1, "amd_df ibs_lat probe_lat"),
};

/*
 * Raw-term encoding with the kernel's sysfs format layouts, to check the config
 * each sysfs row states. Layouts (Linux arch/x86/events/...):
 *   Intel uncore IMC: event config:0-7, umask config:8-15 (uncore_snbep.c)
 *   Intel core (cpu/cpu_core): event config:0-7, umask config:8-15 (core.c)
 *   amd_df: event config:0-7,32-35, umask config:8-15 (amd/uncore.c, pre-PerfMonV2)
 *   amd_umc: event config:0-7, rdwrmask config:8-9 (amd/uncore.c)
 *   ibs_op: cnt_ctl config:19, l3missonly config:16 (amd/ibs.c)
 * Aliases are the kernel's event strings: data_reads event=0x01, data_writes
 * event=0x02 (uncore_snb.c snb_uncore_imc_events), data_read event=0xff,umask=0x20,
 * data_write event=0xff,umask=0x30 (tgl_uncore_imc_events, used by Alder Lake).
 */
static int encode_terms(const char *pmu, const char *terms, uint64_t *cfg)
{
    static const struct {
        const char *alias, *terms;
    } aliases[] = {
        {"data_reads", "event=0x01"},
        {"data_writes", "event=0x02"},
        {"data_read", "event=0xff,umask=0x20"},
        {"data_write", "event=0xff,umask=0x30"},
    };
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(terms, aliases[i].alias))
            terms = aliases[i].terms;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", terms);
    *cfg = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        if (!eq)
            return -1;
        *eq = '\0';
        uint64_t v = strtoull(eq + 1, NULL, 0);
        if (!strcmp(t, "event")) {
            if (!strcmp(pmu, "amd_df"))
                *cfg |= (v & 0xff) | (((v >> 8) & 0xf) << 32);
            else if (v > 0xff)
                return -1;
            else
                *cfg |= v;
        } else if (!strcmp(t, "umask")) {
            *cfg |= (v & 0xff) << 8;
        } else if (!strcmp(t, "rdwrmask") && !strncmp(pmu, "amd_umc", 7)) {
            *cfg |= (v & 0x3) << 8;
        } else if (!strcmp(t, "cnt_ctl") && !strcmp(pmu, "ibs_op")) {
            *cfg |= (v & 1) << 19;
        } else if (!strcmp(t, "l3missonly") && !strcmp(pmu, "ibs_op")) {
            *cfg |= (v & 1) << 16;
        } else {
            return -1;
        }
    }
    return 0;
}

static bool word_in(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

/* A role must appear in the formula as a whole word. */
static bool role_in_formula(const char *formula, const char *role)
{
    size_t n = strlen(role);
    for (const char *p = formula; (p = strstr(p, role)) != NULL; p += n) {
        bool left = p == formula || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') ||
                                      (p[-1] >= '0' && p[-1] <= '9'));
        char c = p[n];
        bool right = !(c == '_' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'));
        if (left && right)
            return true;
    }
    return false;
}

static void check_uarch(mw_uarch u)
{
    const char *un = mw_uarch_name(u);
    const mw_method_def *defs = NULL;
    size_t n = 0;
    const char *const *names;
    size_t nnames = mw_method_names(&names);
    int rc = mw_catalogue_methods(u, &defs, &n);
    MW_CHECK(rc == 0 && defs && n > 0, "%s: mw_catalogue_methods rc %d n %zu", un, rc, n);
    if (rc != 0)
        return;
    bool has_probe = false;
    for (size_t i = 0; i < n; i++) {
        const mw_method_def *m = &defs[i];
        bool known = false;
        for (size_t k = 0; k < nnames; k++)
            known |= !strcmp(names[k], m->name);
        MW_CHECK(known, "%s: method '%s' is not in mw_method_names", un, m->name);
        for (size_t j = 0; j < i; j++)
            MW_CHECK(strcmp(defs[j].name, m->name) != 0, "%s: method %s twice", un, m->name);
        MW_CHECK(m->quantity == MW_Q_DRAM_BYTES || m->quantity == MW_Q_LATENCY, "%s/%s quantity",
                 un, m->name);
        MW_CHECK(m->scope >= MW_SCOPE_SYSTEM && m->scope <= MW_SCOPE_THREAD, "%s/%s scope", un,
                 m->name);
        MW_CHECK(m->formula && strlen(m->formula) > 10, "%s/%s: no formula", un, m->name);
        MW_CHECK(m->notes && strlen(m->notes) > 10, "%s/%s: no notes", un, m->name);
        const mw_method_def *found = NULL;
        MW_CHECK(mw_catalogue_find(u, m->name, &found) == 0 && found == m, "%s/%s: find", un,
                 m->name);
        if (!strcmp(m->name, "probe_lat")) {
            has_probe = true;
            MW_CHECK(m->n_events == 0 && m->needs == MW_NEED_X86_CLFLUSH,
                     "%s/probe_lat must need no PMU", un);
            continue;
        }
        MW_CHECK(m->n_events > 0 && m->events, "%s/%s: no events", un, m->name);
        bool any_core = false, any_sysfs_uncore = false;
        for (size_t e = 0; e < m->n_events; e++) {
            const mw_event_spec *ev = &m->events[e];
            const char *role = ev->role ? ev->role : "(null)";
            MW_CHECK(ev->role && *ev->role, "%s/%s[%zu]: no role", un, m->name, e);
            MW_CHECK(ev->pmu && *ev->pmu, "%s/%s/%s: no pmu", un, m->name, role);
            MW_CHECK(ev->source && strlen(ev->source) > 10, "%s/%s/%s: no source", un, m->name,
                     role);
            MW_CHECK(ev->scale > 0, "%s/%s/%s: scale %g", un, m->name, role, ev->scale);
            MW_CHECK((ev->pfm != NULL) != (ev->sysfs != NULL),
                     "%s/%s/%s: needs exactly one of pfm and sysfs", un, m->name, role);
            if (m->quantity == MW_Q_DRAM_BYTES)
                MW_CHECK(ev->scale == 64.0,
                         "%s/%s/%s: DRAM byte events count 64-byte lines, "
                         "scale %g",
                         un, m->name, role, ev->scale);
            else
                MW_CHECK(ev->scale == 1.0, "%s/%s/%s: latency events count cycles, scale %g", un,
                         m->name, role, ev->scale);
            if (ev->role)
                MW_CHECK(role_in_formula(m->formula, ev->role),
                         "%s/%s: formula \"%s\" does not use role %s", un, m->name, m->formula,
                         role);
            for (size_t j = 0; j < e; j++)
                MW_CHECK(strcmp(m->events[j].role, role) != 0, "%s/%s: role %s twice", un, m->name,
                         role);
            if (ev->pfm) {
                any_core = true;
                const char *pp = mw_uarch_pfm_pmu(u);
                size_t pl = pp ? strlen(pp) : 0;
                MW_CHECK(pp && !strncmp(ev->pfm, pp, pl) && !strncmp(ev->pfm + pl, "::", 2),
                         "%s/%s/%s: '%s' lacks the prefix %s::", un, m->name, role, ev->pfm,
                         pp ? pp : "?");
                MW_CHECK(!strcmp(ev->pmu, "cpu") || !strcmp(ev->pmu, "cpu_core"),
                         "%s/%s/%s: core event on pmu %s", un, m->name, role, ev->pmu);
                MW_CHECK(ev->config != 0, "%s/%s/%s: no expected config", un, m->name, role);
            } else if (ev->sysfs && ev->pmu) {
                uint64_t cfg = ~0ull;
                int trc = encode_terms(ev->pmu, ev->sysfs, &cfg);
                MW_CHECK(trc == 0 && cfg == ev->config,
                         "%s/%s/%s: terms '%s' on %s give 0x%" PRIx64 ", table says 0x%" PRIx64, un,
                         m->name, role, ev->sysfs, ev->pmu, cfg, ev->config);
                if (strcmp(ev->pmu, "cpu") && strcmp(ev->pmu, "cpu_core") &&
                    strcmp(ev->pmu, "ibs_op"))
                    any_sysfs_uncore = true;
            }
        }
        if (any_core)
            MW_CHECK(m->needs & MW_NEED_CORE_PMU, "%s/%s: core events without MW_NEED_CORE_PMU", un,
                     m->name);
        if (any_sysfs_uncore)
            MW_CHECK((m->needs & MW_NEED_UNCORE) && (m->needs & MW_NEED_SYSTEMWIDE),
                     "%s/%s: uncore events need UNCORE and SYSTEMWIDE", un, m->name);
        if (!strcmp(m->name, "ocr_dram"))
            MW_CHECK(m->needs & MW_NEED_OFFCORE, "%s/ocr_dram needs OFFCORE", un);
        if (!strcmp(m->name, "pebs_lat"))
            MW_CHECK(m->needs & MW_NEED_PRECISE, "%s/pebs_lat needs PRECISE", un);
        if (!strcmp(m->name, "ibs_lat"))
            MW_CHECK(m->needs & MW_NEED_IBS, "%s/ibs_lat needs IBS", un);
        if (m->quantity == MW_Q_LATENCY && m->scope == MW_SCOPE_THREAD)
            MW_CHECK(!any_sysfs_uncore, "%s/%s: per-thread latency from uncore events", un,
                     m->name);
    }
    MW_CHECK(has_probe, "%s: probe_lat missing", un);
}

/* docs/methods.md must list every microarchitecture and every event string. */
static void check_docs(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/docs/methods.md", MW_SOURCE_DIR);
    FILE *f = fopen(path, "r");
    MW_CHECK(f != NULL, "cannot open %s", path);
    if (!f)
        return;
    static char doc[1 << 18];
    size_t len = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    doc[len] = '\0';
    MW_CHECK(len > 1000 && len < sizeof doc - 1, "docs/methods.md size %zu", len);
    for (int u = 0; u < MW_UARCH_COUNT; u++) {
        const mw_method_def *defs;
        size_t n;
        char needle[512];
        snprintf(needle, sizeof needle, "### %s", mw_uarch_long_name((mw_uarch)u));
        MW_CHECK(strstr(doc, needle) != NULL, "docs/methods.md lacks \"%s\"", needle);
        if (mw_catalogue_methods((mw_uarch)u, &defs, &n) != 0)
            continue;
        for (size_t i = 0; i < n; i++)
            for (size_t e = 0; e < defs[i].n_events; e++) {
                const mw_event_spec *ev = &defs[i].events[e];
                snprintf(needle, sizeof needle,
                         "| %s | %s | `%s` | `%s` | 0x%" PRIx64 " | 0x%" PRIx64 " |", defs[i].name,
                         ev->role, ev->pmu, ev->pfm ? ev->pfm : ev->sysfs, ev->config, ev->config1);
                MW_CHECK(strstr(doc, needle) != NULL, "docs/methods.md lacks the row \"%s\"",
                         needle);
            }
    }
}

/*
 * Completeness of the microarchitecture descriptors (docs/architecture.md,
 * "Adding a CPU model"): every uarch number has its own descriptor whose name
 * comes back through mw_uarch_from_name, CPU models that identify as it (and
 * as nothing else), probe_lat and only method names the catalogue knows, a
 * prefetcher MSR or the reason for none, a libpfm4 PMU, and its row in sets.
 */
static void test_uarch_complete(void)
{
    for (int u = 0; u < MW_UARCH_COUNT; u++) {
        const mw_uarch_desc *d = mw_uarch_desc_of((mw_uarch)u);
        MW_CHECK(d != NULL, "uarch %d has no descriptor", u);
        if (!d)
            continue;
        MW_CHECK_INT(d->id, u);
        MW_CHECK(d->name && d->name[0] && d->long_name && d->long_name[0], "uarch %d names", u);
        if (u != MW_UARCH_UNKNOWN)
            MW_CHECK_INT(mw_uarch_from_name(d->name), u);
        MW_CHECK(d->prefetch || (d->no_prefetch && d->no_prefetch[0]),
                 "%s: neither a prefetcher MSR nor why it has none", d->name);
        if (u != MW_UARCH_UNKNOWN) {
            MW_CHECK(d->pfm_pmu && d->pfm_pmu[0], "%s: no libpfm4 PMU", d->name);
            MW_CHECK(d->n_models > 0, "%s: no CPU model", d->name);
        }
        for (size_t i = 0; i < d->n_models; i++) {
            const mw_cpu_model *m = &d->models[i];
            MW_CHECK(m->model_lo <= m->model_hi, "%s: model range %#x-%#x", d->name, m->model_lo,
                     m->model_hi);
            MW_CHECK_INT(mw_uarch_from_cpuid(m->vendor, m->family, m->model_lo), u);
            MW_CHECK_INT(mw_uarch_from_cpuid(m->vendor, m->family, m->model_hi), u);
        }
        int probe = 0;
        for (size_t i = 0; i < d->n_methods; i++) {
            const mw_method_info *mi = mw_method_lookup(d->methods[i].name);
            MW_CHECK(mi != NULL, "%s: method %s unknown to the catalogue", d->name,
                     d->methods[i].name);
            if (mi) {
                MW_CHECK_INT(mi->quantity, d->methods[i].quantity);
                probe |= mi->how == MW_HOW_PROBE;
            }
        }
        MW_CHECK(probe, "%s: no probe_lat", d->name);
        int row = 0;
        for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
            row += sets[i].u == (mw_uarch)u;
        MW_CHECK_INT(row, 1);
    }
    MW_CHECK(mw_uarch_desc_of(MW_UARCH_COUNT) == NULL, "descriptor past the end");
    /* what the catalogue says of a method, by name */
    const mw_method_info *mi = mw_method_lookup("lmrl");
    MW_CHECK(mi && mi->quantity == MW_Q_LATENCY && mi->how == MW_HOW_COUNT &&
                 mi->unit == MW_UNIT_CYCLES,
             "lmrl info");
    MW_CHECK(mw_method_is("probe_lat", MW_Q_LATENCY, MW_HOW_PROBE), "probe_lat is the probe");
    MW_CHECK(mw_method_is("ibs_lat", MW_Q_LATENCY, MW_HOW_SAMPLE), "ibs_lat is sampled");
    MW_CHECK(mw_method_is("amd_df", MW_Q_DRAM_BYTES, MW_HOW_COUNT), "amd_df counts bytes");
    MW_CHECK(!mw_method_is("imc_cas", MW_Q_LATENCY, MW_HOW_COUNT), "imc_cas is no latency");
    MW_CHECK(mw_method_lookup("magic") == NULL && mw_method_lookup(NULL) == NULL, "unknown");
    const char *const *names;
    size_t nn = mw_method_names(&names);
    for (size_t i = 0; i < nn; i++)
        MW_CHECK(mw_method_lookup(names[i]) != NULL, "%s has no info", names[i]);
}

int main(void)
{
    mw_set_log(quiet, NULL, MW_LOG_DEBUG);

    const char *const *names = NULL;
    size_t nn = mw_method_names(&names);
    MW_CHECK_INT(nn, 9);
    MW_CHECK_INT(mw_method_names(NULL), 9);
    static const char *const expect_names[] = {"imc_cas",  "ocr_dram", "amd_umc",
                                               "amd_df",   "lmrl",     "l1_miss_lat",
                                               "pebs_lat", "ibs_lat",  "probe_lat"};
    for (size_t i = 0; i < nn && i < 9; i++)
        MW_CHECK_STR(names[i], expect_names[i]);

    for (int u = 0; u < MW_UARCH_COUNT; u++)
        check_uarch((mw_uarch)u);
    check_docs();
    test_uarch_complete();

    /* Method sets, in catalogue order. */
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        const set_row *s = &sets[i];
        const mw_method_def *defs;
        size_t n;
        char got[256] = "";
        if (mw_catalogue_methods(s->u, &defs, &n) != 0)
            continue;
        for (size_t k = 0; k < n; k++) {
            if (k)
                strcat(got, " ");
            strcat(got, defs[k].name);
        }
        MW_CHECK_AT(__FILE__, s->line, !strcmp(got, s->methods),
                    "%s: methods \"%s\", expected "
                    "\"%s\"",
                    mw_uarch_name(s->u), got, s->methods);
        /* Absent methods are MW_ERR_NOEVENT. */
        for (size_t k = 0; k < nn; k++) {
            const mw_method_def *d = (const mw_method_def *)&d;
            int rc = mw_catalogue_find(s->u, names[k], &d);
            if (word_in(s->methods, names[k]))
                MW_CHECK_AT(__FILE__, s->line, rc == 0 && d, "%s/%s: rc %d", mw_uarch_name(s->u),
                            names[k], rc);
            else
                MW_CHECK_AT(__FILE__, s->line, rc == MW_ERR_NOEVENT && d == NULL,
                            "%s/%s absent: rc %d", mw_uarch_name(s->u), names[k], rc);
        }
    }
    MW_CHECK_INT(sizeof sets / sizeof sets[0], MW_UARCH_COUNT);

    /* Every method exists on at least one microarchitecture. */
    for (size_t k = 0; k < nn; k++) {
        int where = 0;
        for (int u = 0; u < MW_UARCH_COUNT; u++) {
            const mw_method_def *d;
            where += mw_catalogue_find((mw_uarch)u, names[k], &d) == 0;
        }
        MW_CHECK(where > 0, "method %s exists nowhere", names[k]);
    }

    /* Bad input. */
    const mw_method_def *d = NULL;
    MW_CHECK_INT(mw_catalogue_find(MW_UARCH_SKX, "imc", &d), MW_ERR_NOEVENT);
    MW_CHECK_INT(mw_catalogue_find(MW_UARCH_SKX, "", &d), MW_ERR_NOEVENT);
    MW_CHECK_INT(mw_catalogue_find(MW_UARCH_SKX, "IMC_CAS", &d), MW_ERR_NOEVENT);
    MW_CHECK_INT(mw_catalogue_find(MW_UARCH_SKX, "imc_cas ", &d), MW_ERR_NOEVENT);
    MW_CHECK_INT(mw_catalogue_find(MW_UARCH_ZEN4, "pebs_lat", &d), MW_ERR_NOEVENT);
    MW_CHECK_INT(mw_catalogue_find(MW_UARCH_SKX, NULL, &d), -EINVAL);
    MW_CHECK_INT(mw_catalogue_find(MW_UARCH_COUNT, "lmrl", &d), -EINVAL);
    MW_CHECK_INT(mw_catalogue_find((mw_uarch)-1, "lmrl", &d), -EINVAL);
    const mw_method_def *defs;
    size_t n;
    MW_CHECK_INT(mw_catalogue_methods(MW_UARCH_COUNT, &defs, &n), -EINVAL);
    MW_CHECK_INT(mw_catalogue_methods(MW_UARCH_SKX, NULL, &n), -EINVAL);
    MW_CHECK(strcmp(mw_strerror(MW_ERR_NOEVENT), "") != 0, "strerror");

    /* Names round-trip; aliases; unknown names. */
    for (int u = 0; u < MW_UARCH_COUNT; u++) {
        MW_CHECK(mw_uarch_from_name(mw_uarch_name((mw_uarch)u)) == (mw_uarch)u, "name of %d", u);
        MW_CHECK(strlen(mw_uarch_long_name((mw_uarch)u)) > 5, "long name of %d", u);
        MW_CHECK((mw_uarch_pfm_pmu((mw_uarch)u) == NULL) == (u == MW_UARCH_UNKNOWN),
                 "pfm pmu of %s", mw_uarch_name((mw_uarch)u));
    }
    MW_CHECK_INT(mw_uarch_from_name("emr"), MW_UARCH_SPR);
    MW_CHECK_INT(mw_uarch_from_name("clx"), MW_UARCH_SKX);
    MW_CHECK_INT(mw_uarch_from_name("knm"), MW_UARCH_KNL);
    MW_CHECK_INT(mw_uarch_from_name("zen9"), MW_UARCH_UNKNOWN);
    MW_CHECK_INT(mw_uarch_from_name(NULL), MW_UARCH_UNKNOWN);
    MW_CHECK_STR(mw_uarch_name(MW_UARCH_COUNT), "invalid");
    MW_CHECK_STR(mw_uarch_name(MW_UARCH_SPR), "spr");
    MW_CHECK_STR(mw_uarch_pfm_pmu(MW_UARCH_ZEN4), "amd64_fam19h_zen4");
    MW_CHECK_STR(mw_uarch_name(MW_UARCH_ZEN1), "zen1");
    MW_CHECK_STR(mw_uarch_pfm_pmu(MW_UARCH_ZEN1), "amd64_fam17h_zen1");

    /* Prefetcher MSRs (docs/sources.md §2). */
    static const struct {
        mw_uarch u;
        int rc;
        uint32_t msr;
        uint64_t mask;
        int line;
    } pf[] = {
        {MW_UARCH_HSW_EP, 0, 0x1A4, 0xF, __LINE__},
        {MW_UARCH_SKX, 0, 0x1A4, 0xF, __LINE__},
        {MW_UARCH_ICX, 0, 0x1A4, 0xF, __LINE__},
        {MW_UARCH_SPR, 0, 0x1A4, 0x4F, __LINE__}, /* bit 6: L2 AMP */
        {MW_UARCH_SKL, 0, 0x1A4, 0xF, __LINE__},
        {MW_UARCH_KNL, 0, 0x1A4, 0x3, __LINE__},
        {MW_UARCH_ZEN3, 0, 0xC0000108u, 0x2F, __LINE__},
        {MW_UARCH_ZEN4, 0, 0xC0000108u, 0x2F, __LINE__},
        {MW_UARCH_ZEN5, 0, 0xC0000108u, 0x2F, __LINE__},
        {MW_UARCH_ZEN2, MW_ERR_UNSUPPORTED, 0, 0, __LINE__},
        {MW_UARCH_ZEN1, MW_ERR_UNSUPPORTED, 0, 0, __LINE__},
        {MW_UARCH_UNKNOWN, MW_ERR_UNSUPPORTED, 0, 0, __LINE__},
        {MW_UARCH_COUNT, -EINVAL, 0, 0, __LINE__},
    };
    for (size_t i = 0; i < sizeof pf / sizeof pf[0]; i++) {
        const mw_prefetch_msr *m = (const mw_prefetch_msr *)&m;
        int rc = mw_catalogue_prefetch_msr(pf[i].u, &m);
        MW_CHECK_AT(__FILE__, pf[i].line, rc == pf[i].rc, "prefetch msr of %s: rc %d",
                    mw_uarch_name(pf[i].u), rc);
        if (rc == 0)
            MW_CHECK_AT(__FILE__, pf[i].line,
                        m && m->msr == pf[i].msr && m->mask == pf[i].mask && m->bits && *m->bits,
                        "prefetch msr of %s", mw_uarch_name(pf[i].u));
        else
            MW_CHECK_AT(__FILE__, pf[i].line, m == NULL, "out pointer not cleared");
    }
    return mw_test_done();
}
