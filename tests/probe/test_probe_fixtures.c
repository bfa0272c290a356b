/*
 * tests/probe/test_probe_fixtures.c: method availability (counters/probe.c)
 * on the sysfs + procfs fixture trees of tests/fixtures. For each machine the
 * catalogue's methods for its CPU must come out exactly as listed here:
 * available, or unavailable with the expected error and reason. Then the same
 * decision logic is crossed with other PMU sets and privileges
 * (mw_method_check), and the prefetcher MSR check runs on fake /dev trees.
 */
#include <memwatch/probe.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mw_test.h"

#define NOHW "the kernel exposes no hardware PMU: only breakpoint, msr, software, tracepoint, uprobe"
#define PARANOID "needs perf_event_paranoid <= 0 or CAP_PERFMON"

typedef struct want {
    const char *method;
    int available;
    int err;
    const char *reason; /* substring of the reason */
} want;

static mw_probe *run(const char *name, const char *dev)
{
    char sys[1024], proc[1024];
    snprintf(sys, sizeof sys, "%s/sysfs/%s", MW_FIXTURES, name);
    snprintf(proc, sizeof proc, "%s/proc/%s", MW_FIXTURES, name);
    mw_probe_opts o = {sys, proc, dev ? dev : "/nonexistent/dev", -1};
    mw_probe *p = NULL;
    int rc = mw_probe_run(&o, &p);
    MW_CHECK(rc == 0 && p, "probe %s: %s", name, mw_strerror(rc));
    return p;
}

static void expect(int line, const char *name, mw_uarch uarch, const want *w, size_t n)
{
    mw_probe *p = run(name, NULL);
    if (!p)
        return;
    MW_CHECK_AT(__FILE__, line, p->cpu.uarch == uarch, "%s: uarch %s, expected %s", name,
                mw_uarch_name(p->cpu.uarch), mw_uarch_name(uarch));
    MW_CHECK_AT(__FILE__, line, p->n_methods == n, "%s: %zu methods, expected %zu", name,
                p->n_methods, n);
    for (size_t i = 0; i < n && i < p->n_methods; i++) {
        const mw_method_avail *a = &p->methods[i];
        MW_CHECK_AT(__FILE__, line, !strcmp(a->name, w[i].method), "%s: method %zu is %s, expected %s",
                    name, i, a->name, w[i].method);
        MW_CHECK_AT(__FILE__, line, a->available == w[i].available && a->err == w[i].err,
                    "%s/%s: available %d err %d, expected %d %d (%s)", name, a->name, a->available,
                    a->err, w[i].available, w[i].err, a->reason);
        MW_CHECK_AT(__FILE__, line, strstr(a->reason, w[i].reason) != NULL,
                    "%s/%s: reason \"%s\" lacks \"%s\"", name, a->name, a->reason, w[i].reason);
    }
    mw_probe_free(p);
}
#define EXPECT(name, uarch, arr) expect(__LINE__, name, uarch, arr, sizeof arr / sizeof arr[0])

static const want skx[] = {
    {"imc_cas", 1, 0, "6 uncore_imc PMUs (uncore_imc_0..uncore_imc_5) on CPUs 0,28"},
    {"ocr_dram", 1, 0, "core PMU cpu (type 4)"},
    {"lmrl", 1, 0, "core PMU cpu"},
    {"l1_miss_lat", 1, 0, "core PMU cpu"},
    {"pebs_lat", 1, 0, "core PMU cpu"},
    {"probe_lat", 1, 0, "needs no PMU"},
};
static const want spr[] = { /* user without capabilities, paranoid 2 */
    {"imc_cas", 0, MW_ERR_PARANOID, PARANOID " (perf_event_paranoid is 2"},
    {"ocr_dram", 1, 0, "core PMU cpu"},
    {"lmrl", 1, 0, "core PMU cpu"},
    {"l1_miss_lat", 1, 0, "core PMU cpu"},
    {"pebs_lat", 1, 0, "core PMU cpu"},
    {"probe_lat", 1, 0, "needs no PMU"},
};
static const want skl[] = {
    {"imc_cas", 0, MW_ERR_PARANOID, PARANOID},
    {"ocr_dram", 1, 0, "core PMU cpu"},
    {"lmrl", 1, 0, "core PMU cpu"},
    {"l1_miss_lat", 1, 0, "core PMU cpu"},
    {"pebs_lat", 1, 0, "core PMU cpu"},
    {"probe_lat", 1, 0, "needs no PMU"},
};
static const want zen4[] = {
    {"amd_umc", 1, 0, "2 amd_umc PMUs (amd_umc_0..amd_umc_1) on CPUs 0,96"},
    {"lmrl", 1, 0, "core PMU cpu"},
    {"ibs_lat", 1, 0, "ibs_op PMU (type 11)"},
    {"probe_lat", 1, 0, "needs no PMU"},
};
static const want vm[] = {
    {"amd_umc", 0, MW_ERR_NOPMU, "no amd_umc PMU (" NOHW ")"},
    {"lmrl", 0, MW_ERR_NOPMU, NOHW},
    {"ibs_lat", 0, MW_ERR_NOPMU, "no ibs_op PMU (" NOHW ")"},
    {"probe_lat", 1, 0, "needs no PMU"},
};

#define EMR_NOHW                                                                               \
    "the kernel exposes no hardware PMU: only breakpoint, kprobe, msr, power, software, "      \
    "tracepoint, uprobe"
static const want emr_vm[] = { /* the GPU machine: RAPL power, no event counters */
    {"imc_cas", 0, MW_ERR_NOPMU, "no uncore_imc PMU (" EMR_NOHW ")"},
    {"ocr_dram", 0, MW_ERR_NOPMU, EMR_NOHW},
    {"lmrl", 0, MW_ERR_NOPMU, EMR_NOHW},
    {"l1_miss_lat", 0, MW_ERR_NOPMU, EMR_NOHW},
    {"pebs_lat", 0, MW_ERR_NOPMU, EMR_NOHW},
    {"probe_lat", 1, 0, "needs no PMU"},
};

static const want icx[] = { /* user with paranoid 0: system-wide allowed */
    {"imc_cas", 1, 0, "12 uncore_imc PMUs (uncore_imc_0..uncore_imc_11) on CPUs 0,40; "
                      "system-wide counting allowed (perf_event_paranoid <= 0)"},
    {"ocr_dram", 1, 0, "core PMU cpu"},
    {"lmrl", 1, 0, "core PMU cpu"},
    {"l1_miss_lat", 1, 0, "core PMU cpu"},
    {"pebs_lat", 1, 0, "core PMU cpu"},
    {"probe_lat", 1, 0, "needs no PMU"},
};
static const want zen3[] = {
    {"amd_df", 1, 0, "amd_df PMU on CPUs 0,64"},
    {"lmrl", 1, 0, "core PMU cpu"},
    {"ibs_lat", 1, 0, "ibs_op PMU (type 11)"},
    {"probe_lat", 1, 0, "needs no PMU"},
};
static const want adl[] = {
    {"imc_cas", 1, 0, "2 uncore_imc_free_running PMUs"},
    {"lmrl", 1, 0, "core PMU cpu_core (type 4)"},
    {"l1_miss_lat", 1, 0, "core PMU cpu_core"},
    {"pebs_lat", 1, 0, "core PMU cpu_core"},
    {"probe_lat", 1, 0, "needs no PMU"},
};

static mw_pmu_set *pmus_of(const char *name)
{
    char sys[1024];
    snprintf(sys, sizeof sys, "%s/sysfs/%s", MW_FIXTURES, name);
    mw_pmu_set *s = NULL;
    MW_CHECK_INT(mw_pmus_discover(sys, &s), 0);
    return s;
}

/* One method of one uarch checked against another machine's PMUs. */
static void cross(int line, mw_uarch u, const char *method, const char *pmus_name,
                  const mw_privs *pr, int clflush, int avail, int err, const char *reason)
{
    const mw_method_def *def;
    if (mw_catalogue_find(u, method, &def)) {
        MW_CHECK_AT(__FILE__, line, 0, "catalogue has no %s for %s", method, mw_uarch_name(u));
        return;
    }
    mw_pmu_set *s = pmus_of(pmus_name);
    mw_method_avail a;
    mw_method_check(def, s, pr, clflush, 1, &a);
    MW_CHECK_AT(__FILE__, line, a.available == avail && a.err == err,
                "%s/%s on %s: available %d err %d (%s)", mw_uarch_name(u), method, pmus_name,
                a.available, a.err, a.reason);
    MW_CHECK_AT(__FILE__, line, strstr(a.reason, reason) != NULL, "reason \"%s\" lacks \"%s\"",
                a.reason, reason);
    mw_pmus_free(s);
}
#define CROSS(...) cross(__LINE__, __VA_ARGS__)

static void test_msr(void)
{
    char dev[] = "/tmp/mw_dev_XXXXXX", path[256];
    MW_CHECK(mkdtemp(dev) != NULL, "mkdtemp");
    mw_probe *p = run("skx", dev);
    if (p) {
        MW_CHECK_INT(p->msr.msr, 0x1a4);
        MW_CHECK_INT(p->msr.reachable, 0);
        MW_CHECK(strstr(p->msr.reason, "the msr driver is not loaded (modprobe msr"),
                 "no msr node: %s", p->msr.reason);
        mw_probe_free(p);
    }
    /* A node whose read at offset 0x1a4 succeeds (a regular file stands in). */
    snprintf(path, sizeof path, "%s/cpu", dev);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/cpu/0", dev);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/cpu/0/msr", dev);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
    uint64_t v = 0x5;
    MW_CHECK(fd >= 0 && pwrite(fd, &v, 8, 0x1a4) == 8, "write fake msr");
    close(fd);
    p = run("skx", dev);
    if (p) {
        MW_CHECK_INT(p->msr.reachable, 1);
        MW_CHECK(strstr(p->msr.reason, "MSR 0x1a4 reads through") && strstr(p->msr.reason, "0x5"),
                 "reachable: %s", p->msr.reason);
        mw_probe_free(p);
    }
    /* Too short to hold MSR 0xc0000108 (Zen 4): the read fails, with the reason. */
    p = run("zen4", dev);
    if (p) {
        MW_CHECK_INT(p->msr.msr, 0xc0000108u);
        MW_CHECK_INT(p->msr.reachable, 0);
        MW_CHECK(strstr(p->msr.reason, "reading MSR 0xc0000108") != NULL, "%s", p->msr.reason);
        mw_probe_free(p);
    }
    unlink(path);
    snprintf(path, sizeof path, "%s/cpu/0", dev);
    rmdir(path);
    snprintf(path, sizeof path, "%s/cpu", dev);
    rmdir(path);
    rmdir(dev);
}

int main(void)
{
    EXPECT("skx", MW_UARCH_SKX, skx);
    EXPECT("spr", MW_UARCH_SPR, spr);
    EXPECT("skl", MW_UARCH_SKL, skl);
    EXPECT("zen4", MW_UARCH_ZEN4, zen4);
    EXPECT("vm", MW_UARCH_ZEN4, vm);
    EXPECT("emr_vm", MW_UARCH_SPR, emr_vm);
    EXPECT("icx", MW_UARCH_ICX, icx);
    EXPECT("zen3", MW_UARCH_ZEN3, zen3);
    EXPECT("adl", MW_UARCH_ADL, adl);

    /* The VM's summary and the probe's other facts. */
    mw_probe *p = run("vm", NULL);
    if (p) {
        MW_CHECK_STR(p->summary, NOHW);
        MW_CHECK_INT(p->have_hardware, 0);
        MW_CHECK_STR(p->kernel, "Linux 6.18.44-fc-v669");
        MW_CHECK(p->privs.is_root && p->privs.cap_perfmon && p->privs.paranoid == 2, "vm privs");
        MW_CHECK(p->have_clflush && p->have_tsc, "vm flags");
        MW_CHECK(mw_probe_method(p, "probe_lat") && !mw_probe_method(p, "imc_cas"),
                 "mw_probe_method");
        mw_probe_free(p);
    }
    p = run("skx", NULL);
    if (p) {
        MW_CHECK_STR(p->summary, "hardware PMUs: cpu, uncore_imc_0..uncore_imc_5");
        mw_probe_free(p);
    }

    mw_privs root = {1, 1, 1, 2, 1}, user2 = {0, 0, 0, 2, 1}, user0 = {0, 0, 0, 0, 1},
             perfmon = {0, 1, 0, 3, 1}, user_1 = {0, 0, 0, -1, 1};
    /* Skylake-SP's imc_cas against other machines' PMUs and other privileges. */
    CROSS(MW_UARCH_SKX, "imc_cas", "vm", &root, 1, 0, MW_ERR_NOPMU, "no uncore_imc PMU (" NOHW ")");
    CROSS(MW_UARCH_SKX, "imc_cas", "zen4", &root, 1, 0, MW_ERR_NOPMU, "no uncore_imc PMU");
    CROSS(MW_UARCH_SKX, "imc_cas", "skx", &user2, 1, 0, MW_ERR_PARANOID,
          PARANOID " (perf_event_paranoid is 2 and this process has neither");
    CROSS(MW_UARCH_SKX, "imc_cas", "skx", &user0, 1, 1, 0, "perf_event_paranoid <= 0");
    CROSS(MW_UARCH_SKX, "imc_cas", "skx", &user_1, 1, 1, 0, "perf_event_paranoid <= 0");
    CROSS(MW_UARCH_SKX, "imc_cas", "skx", &perfmon, 1, 1, 0, "CAP_PERFMON");
    CROSS(MW_UARCH_SKX, "imc_cas", "skx", NULL, 1, 0, MW_ERR_PARANOID, "privileges unknown");
    /* Missing PMU and missing privileges are both named. */
    CROSS(MW_UARCH_SKX, "imc_cas", "vm", &user2, 1, 0, MW_ERR_NOPMU, "; " PARANOID);
    /* Sapphire Rapids IMC encodings exist on the SPR tree but SKX's aliases map too;
     * the client IMC's aliases (data_reads) do not exist on a server IMC. */
    CROSS(MW_UARCH_SPR, "imc_cas", "spr", &root, 1, 1, 0, "8 uncore_imc PMUs");
    CROSS(MW_UARCH_SKL, "imc_cas", "skl", &root, 1, 1, 0, "uncore_imc PMU on CPUs 0");
    CROSS(MW_UARCH_SKL, "imc_cas", "skx", &root, 1, 0, MW_ERR_NOEVENT, "data_reads");
    /* Core methods: no core PMU; a core PMU without offcore_rsp / ldlat (AMD's). */
    CROSS(MW_UARCH_SKX, "lmrl", "vm", &root, 1, 0, MW_ERR_NOPMU, NOHW);
    CROSS(MW_UARCH_SKX, "ocr_dram", "zen4", &root, 1, 0, MW_ERR_UNSUPPORTED, "no offcore_rsp format");
    CROSS(MW_UARCH_SKX, "pebs_lat", "zen4", &root, 1, 0, MW_ERR_UNSUPPORTED,
          "no load-latency sampling");
    CROSS(MW_UARCH_ZEN4, "ibs_lat", "skx", &root, 1, 0, MW_ERR_NOPMU, "no ibs_op PMU");
    /* Zen 4's IBS filter (l3missonly) does not exist on a Zen 3 ibs_op. */
    CROSS(MW_UARCH_ZEN4, "ibs_lat", "zen3", &root, 1, 0, MW_ERR_NOEVENT,
          "ibs_op has no event or format field \"l3missonly\"");
    /* A server IMC method on a client with only free-running IMC counters. */
    CROSS(MW_UARCH_SKX, "imc_cas", "adl", &root, 1, 0, MW_ERR_NOPMU, "no uncore_imc PMU");
    CROSS(MW_UARCH_ZEN4, "amd_umc", "skx", &user2, 1, 0, MW_ERR_NOPMU, "no amd_umc PMU");
    /* probe_lat needs clflush and a TSC, nothing else. */
    CROSS(MW_UARCH_ZEN4, "probe_lat", "vm", &user2, 1, 1, 0, "needs no PMU");
    CROSS(MW_UARCH_ZEN4, "probe_lat", "vm", &user2, 0, 0, MW_ERR_UNSUPPORTED,
          "needs x86 clflush and a TSC: the CPU flags lack clflush");

    /* A sysfs root that does not exist: every PMU method unavailable, probe_lat not. */
    mw_probe_opts o = {"/nonexistent/sys", NULL, "/nonexistent/dev", -1};
    char proc[1024];
    snprintf(proc, sizeof proc, "%s/proc/skx", MW_FIXTURES);
    o.proc_root = proc;
    if (mw_probe_run(&o, &p) == 0) {
        MW_CHECK(p->pmus_err == -ENOENT && strstr(p->summary, "cannot read /nonexistent/sys"),
                 "summary: %s", p->summary);
        MW_CHECK(!mw_probe_method(p, "imc_cas")->available &&
                     mw_probe_method(p, "probe_lat")->available,
                 "no sysfs");
        mw_probe_free(p);
    }
    /* Privileges from fixture procfs trees. */
    {
        mw_privs pr;
        char path[1024];
        snprintf(path, sizeof path, "%s/proc/spr", MW_FIXTURES);
        MW_CHECK_INT(mw_privs_read(path, &pr), 0);
        MW_CHECK(!pr.is_root && !pr.cap_perfmon && !pr.cap_sys_admin && pr.paranoid == 2 &&
                     pr.have_perf && !mw_privs_can_cpu_wide(&pr) && !mw_privs_can_kernel(&pr),
                 "spr user privileges");
        snprintf(path, sizeof path, "%s/proc/skx", MW_FIXTURES);
        MW_CHECK_INT(mw_privs_read(path, &pr), 0);
        MW_CHECK(pr.is_root && pr.cap_perfmon && pr.cap_sys_admin && pr.paranoid == 0,
                 "skx root privileges");
        MW_CHECK_INT(mw_privs_read("/nonexistent/proc", &pr), -ENOENT);
        MW_CHECK(pr.paranoid == MW_PARANOID_UNKNOWN && !pr.have_perf && !pr.is_root,
                 "unreadable procfs");
        mw_privs unknown = {0, 0, 0, MW_PARANOID_UNKNOWN, 0};
        MW_CHECK(!mw_privs_can_cpu_wide(&unknown) && !mw_privs_can_kernel(&unknown),
                 "unknown paranoid allows nothing");
    }
    test_msr();
    return mw_test_done();
}
