/*
 * tests/counters_sysfs/test_sysfs_discover.c: PMU discovery and the generic
 * encoder on sysfs fixture trees laid out as the kernel lays them out
 * (tests/fixtures/sysfs/<machine>/bus/event_source/devices), plus broken trees
 * built at run time (malformed type, format, alias, scale and cpumask files,
 * unreadable entries). Expected encodings are the kernel's own: the alias
 * strings in the fixtures come from arch/x86/events/intel/uncore_snbep.c
 * (skx/spr cas_count_*), uncore_snb.c (client data_reads) and amd/uncore.c.
 */
#include <memwatch/pmu.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mw_test.h"

static mw_pmu_set *load(const char *name)
{
    char root[1024];
    snprintf(root, sizeof root, "%s/sysfs/%s", MW_FIXTURES, name);
    mw_pmu_set *s = NULL;
    int rc = mw_pmus_discover(root, &s);
    MW_CHECK(rc == 0 && s, "discover %s: %s", name, mw_strerror(rc));
    if (s) {
        const char *const *msgs;
        size_t np = mw_pmus_problems(s, &msgs);
        MW_CHECK(np == 0, "%s: %zu problems, first: %s", name, np, np ? msgs[0] : "");
    }
    return s;
}

/* Encode spec and compare; line is the caller's row. */
static void enc_at(int line, const mw_pmu_set *s, const char *spec, int rc_want, uint32_t type,
                   uint64_t c0, uint64_t c1, double scale, const char *unit)
{
    mw_pmu_encoding e;
    char why[256] = "";
    int rc = mw_pmus_encode(s, spec, &e, why, sizeof why);
    MW_CHECK_AT(__FILE__, line, rc == rc_want, "%s: rc %d (%s), expected %d", spec, rc, why,
                rc_want);
    if (rc || rc_want) {
        MW_CHECK_AT(__FILE__, line, rc == 0 || why[0], "%s: no reason given", spec);
        return;
    }
    MW_CHECK_AT(__FILE__, line, e.type == type && e.config[0] == c0 && e.config[1] == c1,
                "%s: type %u config 0x%llx config1 0x%llx, expected %u 0x%llx 0x%llx", spec,
                e.type, (unsigned long long)e.config[0], (unsigned long long)e.config[1], type,
                (unsigned long long)c0, (unsigned long long)c1);
    MW_CHECK_AT(__FILE__, line, e.scale == scale && !strcmp(e.unit, unit),
                "%s: scale %g unit \"%s\", expected %g \"%s\"", spec, e.scale, e.unit, scale, unit);
}
#define ENC(...) enc_at(__LINE__, __VA_ARGS__)

static const double MIB = 6.103515625e-5;

static void names_are(int line, const mw_pmu_set *s, const char *const *want, size_t n)
{
    MW_CHECK_AT(__FILE__, line, mw_pmus_count(s) == n, "%zu PMUs, expected %zu",
                mw_pmus_count(s), n);
    for (size_t i = 0; i < n && i < mw_pmus_count(s); i++)
        MW_CHECK_AT(__FILE__, line, !strcmp(mw_pmus_get(s, i)->name, want[i]),
                    "PMU %zu is %s, expected %s", i, mw_pmus_get(s, i)->name, want[i]);
}

static void test_skx(void)
{
    mw_pmu_set *s = load("skx");
    if (!s)
        return;
    static const char *const want[] = {
        "breakpoint",   "cpu",          "cstate_core",  "kprobe",       "msr",
        "power",        "software",     "tracepoint",   "uncore_imc_0", "uncore_imc_1",
        "uncore_imc_2", "uncore_imc_3", "uncore_imc_4", "uncore_imc_5", "uprobe"};
    names_are(__LINE__, s, want, sizeof want / sizeof want[0]);
    const mw_pmu *imc[8];
    MW_CHECK_INT(mw_pmus_match(s, "uncore_imc_*", imc, 8), 6);
    MW_CHECK_INT(mw_pmus_match(s, "uncore_imc", NULL, 0), 6);
    MW_CHECK_INT(imc[0]->n_cpus, 2);
    MW_CHECK(imc[0]->n_cpus == 2 && imc[0]->cpus[0] == 0 && imc[0]->cpus[1] == 28,
             "uncore_imc_0 cpumask");
    MW_CHECK_INT(imc[5]->type, 18);
    MW_CHECK(mw_pmus_have_hardware(s), "skx has hardware PMUs");
    MW_CHECK(mw_pmus_core(s) && !strcmp(mw_pmus_core(s)->name, "cpu"), "core PMU is cpu");
    MW_CHECK_STR(mw_pmu_cap_get(mw_pmus_find(s, "cpu"), "max_precise"), "3");
    const mw_pmu_event *ev = mw_pmu_event_find(imc[0], "cas_count_read");
    MW_CHECK(ev && ev->scale == MIB && !strcmp(ev->unit, "MiB") &&
                 !strcmp(ev->terms, "event=0x04,umask=0x03"),
             "cas_count_read alias, scale and unit");
    ENC(s, "uncore_imc_0/cas_count_read/", 0, 13, 0x0304, 0, MIB, "MiB");
    ENC(s, "uncore_imc_5/cas_count_write/", 0, 18, 0x0c04, 0, MIB, "MiB");
    ENC(s, "uncore_imc_3/event=0x04,umask=0x03/", 0, 16, 0x0304, 0, 1.0, "");
    ENC(s, "uncore_imc_3/umask=0x03,event=0x04/", 0, 16, 0x0304, 0, 1.0, "");
    ENC(s, "uncore_imc_0/event=0x01,edge,thresh=3/", 0, 13, 0x03040001, 0, 1.0, "");
    ENC(s, "cpu/mem-loads/", 0, 4, 0x01cd, 3, 1.0, "");
    ENC(s, "cpu/mem-loads,ldlat=64/", 0, 4, 0x01cd, 64, 1.0, "");
    ENC(s, "cpu/event=0xb7,umask=0x01,offcore_rsp=0x3F840007F7/", 0, 4, 0x01b7, 0x3F840007F7ull,
        1.0, "");
    ENC(s, "cpu/config=0x1234,config1=7/", 0, 4, 0x1234, 7, 1.0, "");
    ENC(s, "power/energy-pkg/", 0, 11, 0x02, 0, 2.3283064365386962890625e-10, "Joules");
    ENC(s, "msr/tsc/", 0, 8, 0, 0, 1.0, "");
    /* Bad input: each gives its code and a reason. */
    ENC(s, "uncore_imc_0/event=0x100/", MW_ERR_TOOBIG, 0, 0, 0, 0, "");
    ENC(s, "uncore_imc_0/edge=2/", MW_ERR_TOOBIG, 0, 0, 0, 0, "");
    ENC(s, "uncore_imc_0/bogus=1/", MW_ERR_NOEVENT, 0, 0, 0, 0, "");
    ENC(s, "uncore_imc_0/cas_count_reed/", MW_ERR_NOEVENT, 0, 0, 0, 0, "");
    ENC(s, "uncore_imc_9/cas_count_read/", MW_ERR_NOPMU, 0, 0, 0, 0, "");
    ENC(s, "uncore_imc_0/cas_count_read", MW_ERR_PARSE, 0, 0, 0, 0, "");
    ENC(s, "uncore_imc_0//", MW_ERR_PARSE, 0, 0, 0, 0, "");
    ENC(s, "/cas_count_read/", MW_ERR_PARSE, 0, 0, 0, 0, "");
    ENC(s, "cas_count_read", MW_ERR_PARSE, 0, 0, 0, 0, "");
    ENC(s, "uncore_imc_0/event=0x04,,/", MW_ERR_PARSE, 0, 0, 0, 0, "");
    ENC(s, "cpu/ldlat=?/", MW_ERR_PARSE, 0, 0, 0, 0, "");
    /* The reason names the unknown term and the PMU's fields. */
    {
        mw_pmu_encoding e;
        char why[256];
        mw_pmus_encode(s, "uncore_imc_0/bogus=1/", &e, why, sizeof why);
        MW_CHECK(strstr(why, "bogus") && strstr(why, "umask"), "reason: %s", why);
        mw_pmus_encode(s, "uncore_imc_0/event=0x100/", &e, why, sizeof why);
        MW_CHECK(strstr(why, "event") && strstr(why, "8 bits"), "reason: %s", why);
    }
    /* IMC scale gives bytes: counts * 6.103515625e-5 MiB * 2^20 = 64 bytes per CAS. */
    {
        mw_pmu_encoding e;
        MW_CHECK_INT(mw_pmus_encode(s, "uncore_imc_2/cas_count_read/", &e, NULL, 0), 0);
        uint64_t counts = 1000003;
        double bytes = (double)counts * e.scale * 1048576.0;
        MW_CHECK(bytes == 64.0 * (double)counts, "%llu CAS -> %.1f bytes, expected %.1f",
                 (unsigned long long)counts, bytes, 64.0 * (double)counts);
    }
    mw_pmus_free(s);
}

static void test_spr(void)
{
    mw_pmu_set *s = load("spr");
    if (!s)
        return;
    MW_CHECK_INT(mw_pmus_match(s, "uncore_imc_*", NULL, 0), 8);
    ENC(s, "uncore_imc_0/cas_count_read/", 0, 40, 0xcf05, 0, MIB, "MiB");
    ENC(s, "uncore_imc_7/cas_count_write/", 0, 47, 0xf005, 0, MIB, "MiB");
    ENC(s, "cpu/mem-loads-aux/", 0, 4, 0x8203, 0, 1.0, "");
    ENC(s, "cpu/any=1/", MW_ERR_NOEVENT, 0, 0, 0, 0, ""); /* SPR has no AnyThread bit */
    mw_pmus_free(s);
}

static void test_skl(void)
{
    mw_pmu_set *s = load("skl");
    if (!s)
        return;
    const mw_pmu *imc[2];
    MW_CHECK_INT(mw_pmus_match(s, "uncore_imc_*", imc, 2), 1);
    MW_CHECK_STR(imc[0]->name, "uncore_imc");
    MW_CHECK_INT(mw_pmus_match(s, "uncore_imc", NULL, 0), 1);
    ENC(s, "uncore_imc/data_reads/", 0, 12, 0x01, 0, MIB, "MiB");
    ENC(s, "uncore_imc/data_writes/", 0, 12, 0x02, 0, MIB, "MiB");
    ENC(s, "uncore_imc/umask=1/", MW_ERR_NOEVENT, 0, 0, 0, 0, "");
    mw_pmu_encoding e;
    MW_CHECK_INT(mw_pmus_encode(s, "uncore_imc/data_writes/", &e, NULL, 0), 0);
    MW_CHECK_NEAR(4096.0 * e.scale * 1048576.0, 4096.0 * 64, 0.0);
    mw_pmus_free(s);
}

static void test_zen4(void)
{
    mw_pmu_set *s = load("zen4");
    if (!s)
        return;
    MW_CHECK_INT(mw_pmus_match(s, "amd_umc_*", NULL, 0), 2);
    MW_CHECK_INT(mw_pmus_match(s, "amd_df", NULL, 0), 1);
    MW_CHECK(mw_pmus_core(s) && mw_pmus_core(s)->type == 4, "AMD core PMU");
    MW_CHECK_STR(mw_pmu_cap_get(mw_pmus_find(s, "ibs_op"), "zen4_ibs_extensions"), "1");
    MW_CHECK_INT(mw_pmus_find(s, "amd_l3")->n_cpus, 24);
    ENC(s, "amd_umc_0/event=0x0a,rdwrmask=0x1/", 0, 20, 0x10a, 0, 1.0, "");
    ENC(s, "amd_umc_1/event=0x0a,rdwrmask=0x2/", 0, 21, 0x20a, 0, 1.0, "");
    ENC(s, "amd_umc_0/event=0x0a,rdwrmask=0x4/", MW_ERR_TOOBIG, 0, 0, 0, 0, "");
    /* Split fields: event config:0-7,32-37 and umask config:8-15,24-27. */
    ENC(s, "amd_df/event=0x107,umask=0xf38/", 0, 14, 0x10f003807ull, 0, 1.0, "");
    ENC(s, "amd_df/event=0x3fff/", 0, 14, 0x3f000000ffull, 0, 1.0, "");
    ENC(s, "amd_df/event=0x4000/", MW_ERR_TOOBIG, 0, 0, 0, 0, "");
    ENC(s, "cpu/event=0x1c0/", 0, 4, 0x1000000c0ull, 0, 1.0, "");
    ENC(s, "ibs_op/cnt_ctl=1,l3missonly/", 0, 11, (1u << 19) | (1u << 16), 0, 1.0, "");
    ENC(s, "msr/irperf/", 0, 8, 5, 0, 1.0, "");
    mw_pmus_free(s);
}

static void test_vm(void)
{
    mw_pmu_set *s = load("vm");
    if (!s)
        return;
    static const char *const want[] = {"breakpoint", "msr", "software", "tracepoint", "uprobe"};
    names_are(__LINE__, s, want, 5);
    MW_CHECK(!mw_pmus_have_hardware(s), "the VM has no hardware PMU");
    MW_CHECK(mw_pmus_core(s) == NULL, "the VM has no core PMU");
    MW_CHECK_INT(mw_pmus_match(s, "uncore_imc_*", NULL, 0), 0);
    ENC(s, "msr/tsc/", 0, 9, 0, 0, 1.0, "");
    ENC(s, "uprobe/retprobe,ref_ctr_offset=0x10/", 0, 8, 0x1000000001ull, 0, 1.0, "");
    ENC(s, "cpu/cycles/", MW_ERR_NOPMU, 0, 0, 0, 0, "");
    ENC(s, "software/event=1/", MW_ERR_NOEVENT, 0, 0, 0, 0, ""); /* no format fields */
    mw_pmus_free(s);
}

static void test_icx_adl(void)
{
    mw_pmu_set *s = load("icx");
    if (s) {
        /* "uncore_imc_*" is uncore_imc_<N>, never uncore_imc_free_running_<N>. */
        MW_CHECK_INT(mw_pmus_match(s, "uncore_imc_*", NULL, 0), 12);
        MW_CHECK_INT(mw_pmus_match(s, "uncore_imc", NULL, 0), 12);
        MW_CHECK_INT(mw_pmus_match(s, "uncore_imc_free_running_*", NULL, 0), 4);
        MW_CHECK_INT(mw_pmus_match(s, "uncore_imc_free*", NULL, 0), 4); /* a shell pattern */
        MW_CHECK_INT(mw_pmus_match(s, "uncore_imc_1?", NULL, 0), 2);
        MW_CHECK_INT(mw_pmus_match(s, "uncore_im", NULL, 0), 0);
        ENC(s, "uncore_imc_11/cas_count_read/", 0, 41, 0x0f04, 0, MIB, "MiB");
        ENC(s, "uncore_imc_free_running_0/read/", 0, 50, 0x20ff, 0, MIB, "MiB");
        mw_pmus_free(s);
    }
    s = load("adl");
    if (s) {
        const mw_pmu *core = mw_pmus_core(s);
        MW_CHECK(core && !strcmp(core->name, "cpu_core") && core->n_cpus == 16 &&
                     core->cpus[15] == 15,
                 "hybrid core PMU with its cpus file");
        const mw_pmu *atom = mw_pmus_find(s, "cpu_atom");
        MW_CHECK(atom && atom->type == 10 && atom->n_cpus == 8 && atom->cpus[0] == 16, "cpu_atom");
        ENC(s, "cpu_atom/mem-loads,ldlat=5/", 0, 10, 0x05d0, 5, 1.0, "");
        ENC(s, "uncore_imc_free_running_1/data_write/", 0, 13, 0x30ff, 0, MIB, "MiB");
        mw_pmus_free(s);
    }
    s = load("zen3");
    if (s) {
        ENC(s, "amd_df/event=0x1c7,umask=0x38/", 0, 13, 0x1000038c7ull, 0, 1.0, "");
        ENC(s, "amd_df/event=0xfff/", 0, 13, 0xf000000ffull, 0, 1.0, "");
        ENC(s, "amd_df/event=0x1000/", MW_ERR_TOOBIG, 0, 0, 0, 0, "");
        ENC(s, "ibs_op/l3missonly/", MW_ERR_NOEVENT, 0, 0, 0, 0, ""); /* Zen 4 and later */
        mw_pmus_free(s);
    }
}

static void put(const char *dir, const char *rel, const char *text)
{
    char path[1024], tmp[1024];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    /* make parent directories */
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + strlen(dir) + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(tmp, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    MW_CHECK(f != NULL, "create %s", path);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_broken(void)
{
    char root[] = "/tmp/mw_sysfs_broken_XXXXXX";
    MW_CHECK(mkdtemp(root) != NULL, "mkdtemp");
    char dev[1100];
    snprintf(dev, sizeof dev, "%s/bus/event_source/devices", root);
    put(root, "bus/event_source/devices/good/type", "20\n");
    put(root, "bus/event_source/devices/good/format/event", "config:0-7\n");
    put(root, "bus/event_source/devices/badtype/type", "abc\n");
    put(root, "bus/event_source/devices/hugetype/type", "99999999999\n");
    put(root, "bus/event_source/devices/notype/format/event", "config:0-7\n");
    put(root, "bus/event_source/devices/dirtype/type/x", "1\n"); /* type is a directory */
    put(root, "bus/event_source/devices/broken/type", "21\n");
    put(root, "bus/event_source/devices/broken/format/event", "config:9-3\n");
    put(root, "bus/event_source/devices/broken/format/umask", "config:8-15\n");
    put(root, "bus/event_source/devices/broken/events/x", "event=0x1,umask=0x2\n");
    put(root, "bus/event_source/devices/broken/events/y", "event=,\n");
    put(root, "bus/event_source/devices/broken/events/z", "umask=1\n");
    put(root, "bus/event_source/devices/broken/events/z.scale", "abc\n");
    put(root, "bus/event_source/devices/broken/events/w", "umask=2\n");
    put(root, "bus/event_source/devices/broken/events/w.unit/x", "dir\n"); /* unreadable unit */
    put(root, "bus/event_source/devices/broken/events/v/x", "dir\n");       /* unreadable alias */
    put(root, "bus/event_source/devices/broken/cpumask", "zz\n");
    mw_pmu_set *s = NULL;
    int rc = mw_pmus_discover(root, &s);
    MW_CHECK(rc == 0 && s, "discover broken tree: %s", mw_strerror(rc));
    if (s) {
        static const char *const want[] = {"broken", "good"};
        names_are(__LINE__, s, want, 2);
        const char *const *msgs;
        size_t np = mw_pmus_problems(s, &msgs);
        MW_CHECK_INT(np, 10);
        const char *must[] = {"badtype", "hugetype", "notype", "dirtype", "field event",
                              "event y", "event z", "event v", "w.unit", "cpumask"};
        for (size_t k = 0; k < sizeof must / sizeof must[0]; k++) {
            int found = 0;
            for (size_t i = 0; i < np; i++)
                found |= strstr(msgs[i], must[k]) != NULL;
            MW_CHECK(found, "a problem mentions \"%s\"", must[k]);
        }
        const mw_pmu *b = mw_pmus_find(s, "broken");
        MW_CHECK(b && b->n_formats == 1 && b->n_events == 2 && b->n_cpus == 0,
                 "broken keeps umask, aliases w and x, no cpumask");
        ENC(s, "broken/x/", MW_ERR_NOEVENT, 0, 0, 0, 0, ""); /* its event field was bad */
        ENC(s, "broken/w/", 0, 21, 0x200, 0, 1.0, "");
        ENC(s, "good/event=0xff/", 0, 20, 0xff, 0, 1.0, "");
        mw_pmus_free(s);
    }
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    MW_CHECK_INT(system(cmd), 0);
    /* A root without the devices directory fails with -ENOENT. */
    s = (mw_pmu_set *)1;
    MW_CHECK_INT(mw_pmus_discover("/nonexistent/memwatch", &s), -ENOENT);
    MW_CHECK(s == NULL, "no set on failure");
}

int main(void)
{
    test_skx();
    test_spr();
    test_skl();
    test_zen4();
    test_vm();
    test_icx_adl();
    test_broken();
    return mw_test_done();
}
