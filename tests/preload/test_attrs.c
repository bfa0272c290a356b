/*
 * tests/preload/test_attrs.c: the sampler attributes (unit: fields, rate
 * clamping, precise-load detection against fixture sysfs trees) and, live,
 * what the kernel of this machine does with them: cpu-clock samples arrive in
 * a mapped ring with this thread's tid and CLOCK_MONOTONIC times, an
 * inherited per-task event cannot be mapped (why memwatch opens events per
 * thread), and precise load sampling is either built or reported
 * unavailable with a reason. The profiler's precise-load attributes
 * (preload/precise_attr.c) are checked against the fixture trees of
 * tests/fixtures/sysfs/ (skx, spr, zen4, vm), with the expected config and
 * ldlat placement computed here from each fixture's format/ files.
 */
#include "mw_test.h"

#include "../../preload/precise.h" /* mwp_precise_attrs (preload/precise_attr.c) */

#include <memwatch/attrs.h>
#include <memwatch/profile.h>
#include <memwatch/ring.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void put_file(const char *root, const char *rel, const char *text)
{
    char p[512], d[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    snprintf(d, sizeof d, "%s", p);
    for (char *s = d + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            mkdir(d, 0755);
            *s = '/';
        }
    FILE *f = fopen(p, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void unit(void)
{
    struct perf_event_attr a;
    mw_attr_cpu_clock(&a, 1000, 32);
    MW_CHECK_INT(a.type, PERF_TYPE_SOFTWARE);
    MW_CHECK_INT(a.config, PERF_COUNT_SW_CPU_CLOCK);
    MW_CHECK_INT(a.sample_period, 1000000);
    MW_CHECK_INT(a.sample_type, MW_CPUCLOCK_SAMPLE_TYPE);
    MW_CHECK(a.sample_type & PERF_SAMPLE_CALLCHAIN, "no call chains");
    MW_CHECK_INT(a.exclude_kernel, 1);
    MW_CHECK_INT(a.exclude_callchain_kernel, 1);
    MW_CHECK_INT(a.inherit, 0);
    MW_CHECK_INT(a.use_clockid, 1);
    MW_CHECK_INT(a.clockid, CLOCK_MONOTONIC);
    MW_CHECK_INT(a.sample_max_stack, 32);
    MW_CHECK_INT(a.size, sizeof a);

    mw_attr_page_faults(&a, 16, 24);
    MW_CHECK_INT(a.config, PERF_COUNT_SW_PAGE_FAULTS);
    MW_CHECK_INT(a.sample_period, 16);
    MW_CHECK(a.sample_type & PERF_SAMPLE_ADDR, "page faults without data addresses");
    MW_CHECK(a.sample_type & PERF_SAMPLE_CALLCHAIN, "page faults without their call chain");
    MW_CHECK_INT(a.exclude_callchain_kernel, 1);
    MW_CHECK_INT(a.sample_max_stack, 24);

    int c = -1;
    MW_CHECK_INT(mw_attr_clamp_rate(200000, 100000, &c), 100000);
    MW_CHECK_INT(c, 1);
    MW_CHECK_INT(mw_attr_clamp_rate(1000, 100000, &c), 1000);
    MW_CHECK_INT(c, 0);
    MW_CHECK_INT(mw_attr_clamp_rate(0, 100000, &c), 1);
    MW_CHECK_INT(mw_attr_clamp_rate(5000, 0, &c), 5000);

    /* Fixture sysfs trees. */
    char root[] = "/tmp/mw_attrs_XXXXXX";
    if (!mkdtemp(root))
        return;
    char sys[600], why[300];
    struct perf_event_attr pa[4];
    size_t n;

    snprintf(sys, sizeof sys, "%s/skx", root);
    put_file(sys, "bus/event_source/devices/cpu/type", "4\n");
    put_file(sys, "bus/event_source/devices/cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
    n = 4;
    MW_CHECK_INT(mw_attr_precise_loads(sys, 30, 1000, pa, &n, why, sizeof why), 0);
    MW_CHECK_INT(n, 1);
    MW_CHECK_INT(pa[0].type, 4);
    MW_CHECK_U64(pa[0].config, 0x1cd);
    MW_CHECK_INT(pa[0].config1, 30);
    MW_CHECK_INT(pa[0].precise_ip, 2);
    MW_CHECK(pa[0].sample_type & PERF_SAMPLE_WEIGHT, "no weight");
    MW_CHECK(pa[0].sample_type & PERF_SAMPLE_DATA_SRC, "no data source");

    snprintf(sys, sizeof sys, "%s/spr", root);
    put_file(sys, "bus/event_source/devices/cpu/type", "4\n");
    put_file(sys, "bus/event_source/devices/cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
    put_file(sys, "bus/event_source/devices/cpu/events/mem-loads-aux", "event=0x03,umask=0x82\n");
    n = 4;
    MW_CHECK_INT(mw_attr_precise_loads(sys, 30, 1000, pa, &n, why, sizeof why), 0);
    MW_CHECK_INT(n, 2);
    MW_CHECK_U64(pa[0].config, 0x8203);
    MW_CHECK_U64(pa[1].config, 0x1cd);
    n = 1;
    MW_CHECK_INT(mw_attr_precise_loads(sys, 30, 1000, pa, &n, why, sizeof why), MW_ERR_TOOBIG);

    snprintf(sys, sizeof sys, "%s/zen", root);
    put_file(sys, "bus/event_source/devices/ibs_op/type", "11\n");
    n = 4;
    MW_CHECK_INT(mw_attr_precise_loads(sys, 30, 1000, pa, &n, why, sizeof why), 0);
    MW_CHECK_INT(n, 1);
    MW_CHECK_INT(pa[0].type, 11);

    snprintf(sys, sizeof sys, "%s/vm", root);
    put_file(sys, "bus/event_source/devices/software/type", "1\n");
    n = 4;
    MW_CHECK_INT(mw_attr_precise_loads(sys, 30, 1000, pa, &n, why, sizeof why), MW_ERR_NOPMU);
    MW_CHECK_INT(n, 0);
    MW_CHECK(strstr(why, "mem-loads") && strstr(why, "ibs_op"), "reason: %s", why);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd)) {
    }
}

static void live(void)
{
    char why[300];
    struct perf_event_attr pa[4];
    size_t n = 4;
    int rc = mw_attr_precise_loads(NULL, 30, 1000, pa, &n, why, sizeof why);
    printf("precise load sampling here: %s (%s)\n", rc == 0 ? "available" : "unavailable", why);
    MW_CHECK(rc == 0 || (rc == MW_ERR_NOPMU && why[0]), "rc %d without a reason", rc);

    struct perf_event_attr a;
    mw_attr_cpu_clock(&a, 2000, 16);
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    if (fd < 0) {
        printf("cpu-clock sampling unavailable here: %s\n", strerror(errno));
        return;
    }
    mw_ring r;
    MW_CHECK_INT(mw_ring_map(&r, fd, 8), 0);
    uint64_t t0 = mono_ns();
    volatile uint64_t s = 0;
    struct timespec c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    do { /* 60 ms of this thread's CPU time (the machine may be busy) */
        for (int i = 0; i < 1000; i++)
            s += (uint64_t)i;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    } while ((c1.tv_sec - c0.tv_sec) * 1000000000ll + (c1.tv_nsec - c0.tv_nsec) < 60000000ll &&
             mono_ns() - t0 < 5000000000ull);
    uint64_t t1 = mono_ns();
    static unsigned char buf[1 << 16];
    mw_ring_stats st = {0, 0, 0, 0};
    size_t got = mw_ring_read(&r, buf, sizeof buf, &st);
    MW_CHECK(st.samples >= 30, "only %llu samples in 60 ms of CPU time at 2000/s", (unsigned long long)st.samples);
    /* first sample: ip, pid/tid, time */
    size_t off = 0;
    int checked = 0;
    while (off + 8 <= got && !checked) {
        struct perf_event_header h;
        memcpy(&h, buf + off, sizeof h);
        if (h.type == PERF_RECORD_SAMPLE) {
            uint64_t ip, time;
            uint32_t pid, tid;
            memcpy(&ip, buf + off + 8, 8);
            memcpy(&pid, buf + off + 16, 4);
            memcpy(&tid, buf + off + 20, 4);
            memcpy(&time, buf + off + 24, 8);
            MW_CHECK_INT(pid, getpid());
            MW_CHECK_INT(tid, syscall(SYS_gettid));
            MW_CHECK(time >= t0 - 1000000 && time <= t1 + 1000000, "sample time not CLOCK_MONOTONIC");
            MW_CHECK(ip != 0, "no ip");
            checked = 1;
        }
        off += h.size;
    }
    MW_CHECK(checked, "no sample record");
    mw_ring_unmap(&r);
    close(fd);

    /* The kernel refuses to map an inherited per-task event. */
    mw_attr_cpu_clock(&a, 1000, 16);
    a.inherit = 1;
    fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    MW_CHECK(fd >= 0, "inherited cpu-clock: %s", strerror(errno));
    if (fd >= 0) {
        rc = mw_ring_map(&r, fd, 8);
        MW_CHECK_INT(rc, -EINVAL);
        if (rc == 0)
            mw_ring_unmap(&r);
        close(fd);
    }
}

/* ---- the profiler's precise-load attributes on the fixture trees ---- */

static int fx_read(const char *root, const char *rel, char *buf, size_t n)
{
    char p[700];
    snprintf(p, sizeof p, "%s/bus/event_source/devices/%s", root, rel);
    FILE *f = fopen(p, "r");
    if (!f)
        return -1;
    size_t k = fread(buf, 1, n - 1, f);
    fclose(f);
    buf[k] = 0;
    while (k && (buf[k - 1] == '\n' || buf[k - 1] == ' '))
        buf[--k] = 0;
    return 0;
}

/* Place value v into the field named by pmu/format/<term> ("configN:lo-hi"). */
static int fx_place(const char *root, const char *pmu, const char *term, uint64_t v,
                    uint64_t cfg[3])
{
    char rel[200], f[64];
    snprintf(rel, sizeof rel, "%s/format/%s", pmu, term);
    if (fx_read(root, rel, f, sizeof f))
        return -1;
    int w = 0;
    unsigned lo, hi;
    const char *c = f + 6;
    if (*c >= '1' && *c <= '2')
        w = *c++ - '0';
    if (sscanf(c, ":%u-%u", &lo, &hi) != 2) {
        if (sscanf(c, ":%u", &lo) != 1)
            return -1;
        hi = lo;
    }
    uint64_t mask = (hi - lo >= 63 ? ~0ull : (1ull << (hi - lo + 1)) - 1);
    cfg[w] |= (v & mask) << lo;
    return 0;
}

/* Generic encoding of pmu/events/<ev> through pmu/format/ (ldlat left out). */
static int fx_encode(const char *root, const char *pmu, const char *ev, uint64_t cfg[3])
{
    char rel[200], terms[256];
    snprintf(rel, sizeof rel, "%s/events/%s", pmu, ev);
    if (fx_read(root, rel, terms, sizeof terms))
        return -1;
    cfg[0] = cfg[1] = cfg[2] = 0;
    for (char *sv = NULL, *t = strtok_r(terms, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
        char *eq = strchr(t, '=');
        uint64_t v = eq ? strtoull(eq + 1, NULL, 0) : 1;
        if (eq)
            *eq = 0;
        if (strcmp(t, "ldlat") && fx_place(root, pmu, t, v, cfg))
            return -1;
    }
    return 0;
}

static void fixtures(void)
{
    char root[600], why[300], name[32], buf[64];
    struct perf_event_attr pa[2];
    size_t n;
    const unsigned ldlat = 200;

    /* Skylake-SP: one PEBS load-latency event on the core PMU. */
    snprintf(root, sizeof root, "%s/tests/fixtures/sysfs/skx", MW_SOURCE_DIR);
    uint64_t cfg[3], ld[3] = {0, 0, 0};
    MW_CHECK_INT(fx_encode(root, "cpu", "mem-loads", cfg), 0);
    MW_CHECK_INT(fx_place(root, "cpu", "ldlat", ldlat, ld), 0);
    MW_CHECK_INT(fx_read(root, "cpu/type", buf, sizeof buf), 0);
    n = 2;
    MW_CHECK_INT(mwp_precise_attrs(root, ldlat, 4000, 32, pa, &n, name, sizeof name, why,
                                   sizeof why), 0);
    MW_CHECK_INT(n, 1);
    MW_CHECK(!strcmp(name, "mem-loads"), "name %s", name);
    MW_CHECK_INT(pa[0].type, strtoul(buf, NULL, 0));
    MW_CHECK_U64(pa[0].config, cfg[0] | ld[0]);
    MW_CHECK_U64(pa[0].config1, ld[1]);
    MW_CHECK_U64(pa[0].config1, ldlat); /* format/ldlat is config1:0-15 on skx */
    MW_CHECK_INT(pa[0].precise_ip, 2);
    MW_CHECK_U64(pa[0].sample_type & (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                       PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT |
                                       PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_CALLCHAIN),
                 PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
                     PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_CALLCHAIN);
    MW_CHECK_INT(pa[0].freq, 1);
    MW_CHECK_U64(pa[0].sample_freq, 4000);
    MW_CHECK_INT(pa[0].sample_max_stack, 32);
    MW_CHECK_INT(pa[0].exclude_kernel, 1);
    MW_CHECK_INT(pa[0].exclude_callchain_kernel, 1);
    MW_CHECK_INT(pa[0].disabled, 0);
    MW_CHECK_INT(pa[0].inherit, 0);
    MW_CHECK_INT(pa[0].use_clockid, 1);

    /* Sapphire Rapids: {mem-loads-aux, mem-loads}, leader first and enabled. */
    snprintf(root, sizeof root, "%s/tests/fixtures/sysfs/spr", MW_SOURCE_DIR);
    uint64_t aux[3];
    memset(ld, 0, sizeof ld);
    MW_CHECK_INT(fx_encode(root, "cpu", "mem-loads", cfg), 0);
    MW_CHECK_INT(fx_encode(root, "cpu", "mem-loads-aux", aux), 0);
    MW_CHECK_INT(fx_place(root, "cpu", "ldlat", ldlat, ld), 0);
    MW_CHECK_INT(fx_read(root, "cpu/type", buf, sizeof buf), 0);
    n = 2;
    MW_CHECK_INT(mwp_precise_attrs(root, ldlat, 4000, 32, pa, &n, name, sizeof name, why,
                                   sizeof why), 0);
    MW_CHECK_INT(n, 2);
    MW_CHECK(!strcmp(name, "mem-loads"), "name %s", name);
    MW_CHECK_INT(pa[0].type, strtoul(buf, NULL, 0));
    MW_CHECK_INT(pa[1].type, strtoul(buf, NULL, 0));
    MW_CHECK_U64(pa[0].config, aux[0]);
    MW_CHECK_INT(pa[0].sample_period, 0); /* the leader counts, never samples */
    MW_CHECK_INT(pa[0].disabled, 0);
    MW_CHECK_U64(pa[1].config, cfg[0] | ld[0]);
    MW_CHECK_U64(pa[1].config1, ld[1]);
    MW_CHECK_U64(pa[1].config1, ldlat);
    MW_CHECK_INT(pa[1].precise_ip, 2);
    MW_CHECK(pa[1].sample_type & PERF_SAMPLE_CALLCHAIN, "no call chains");
    n = 1;
    MW_CHECK(mwp_precise_attrs(root, ldlat, 4000, 32, pa, &n, name, sizeof name, why,
                               sizeof why) < 0, "a group in one attribute");

    /* Zen 4: IBS op, the type of its own PMU, no hardware latency filter. */
    snprintf(root, sizeof root, "%s/tests/fixtures/sysfs/zen4", MW_SOURCE_DIR);
    MW_CHECK_INT(fx_read(root, "ibs_op/type", buf, sizeof buf), 0);
    n = 2;
    MW_CHECK_INT(mwp_precise_attrs(root, ldlat, 4000, 32, pa, &n, name, sizeof name, why,
                                   sizeof why), 0);
    MW_CHECK_INT(n, 1);
    MW_CHECK(!strcmp(name, "ibs_op"), "name %s", name);
    MW_CHECK_INT(pa[0].type, strtoul(buf, NULL, 0));
    MW_CHECK_INT(pa[0].precise_ip, 0);
    MW_CHECK_U64(pa[0].config1, 0);
    MW_CHECK(pa[0].sample_type & PERF_SAMPLE_DATA_SRC, "no data source");
    MW_CHECK(pa[0].sample_type & PERF_SAMPLE_CALLCHAIN, "no call chains");

    /* The ldlat threshold: user value, else the profile's idle latency in
     * cycles (TSC rate), else the default; clamped to what ldlat holds. */
    const char *src = NULL;
    mw_profile prof;
    memset(&prof, 0, sizeof prof);
    prof.idle_latency_ns = 100;
    prof.tsc_hz = 3e9;
    MW_CHECK_INT(mwp_precise_ldlat(0, &prof, &src), 300);
    MW_CHECK(src && strstr(src, "profile"), "source %s", src ? src : "(null)");
    MW_CHECK_INT(mwp_precise_ldlat(500, &prof, &src), 500);
    MW_CHECK(!strcmp(src, "MEMWATCH_LDLAT"), "source %s", src);
    MW_CHECK_INT(mwp_precise_ldlat(0, NULL, &src), MWP_LDLAT_DEFAULT);
    MW_CHECK(!strcmp(src, "default"), "source %s", src);
    prof.tsc_hz = 0; /* no clock rate: the latency cannot be converted */
    MW_CHECK_INT(mwp_precise_ldlat(0, &prof, &src), MWP_LDLAT_DEFAULT);
    prof.tsc_hz = 1e6;
    MW_CHECK_INT(mwp_precise_ldlat(0, &prof, &src), 3);
    prof.tsc_hz = 1e12;
    MW_CHECK_INT(mwp_precise_ldlat(0, &prof, &src), 65535);

    /* A virtual machine without a PMU: unavailable, with the reason. */
    snprintf(root, sizeof root, "%s/tests/fixtures/sysfs/vm", MW_SOURCE_DIR);
    n = 2;
    MW_CHECK_INT(mwp_precise_attrs(root, ldlat, 4000, 32, pa, &n, name, sizeof name, why,
                                   sizeof why), MW_ERR_NOPMU);
    MW_CHECK_INT(n, 0);
    MW_CHECK(strstr(why, "mem-loads") && strstr(why, "ibs_op"), "reason: %s", why);
}

int main(void)
{
    unit();
    fixtures();
    live();
    return mw_test_done();
}
