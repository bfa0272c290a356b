/*
 * tests/preload/test_attrs.c: the sampler attributes (unit: fields, rate
 * clamping, precise-load detection against fixture sysfs trees) and, live,
 * what the kernel of this machine does with them: cpu-clock samples arrive in
 * a mapped ring with this thread's tid and CLOCK_MONOTONIC times, an
 * inherited per-task event cannot be mapped (why memwatch opens events per
 * thread), and precise load sampling is either built or reported
 * unavailable with a reason.
 */
#include "mw_test.h"

#include <memwatch/attrs.h>
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

    mw_attr_page_faults(&a, 16);
    MW_CHECK_INT(a.config, PERF_COUNT_SW_PAGE_FAULTS);
    MW_CHECK_INT(a.sample_period, 16);
    MW_CHECK(a.sample_type & PERF_SAMPLE_ADDR, "page faults without data addresses");

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

int main(void)
{
    unit();
    live();
    return mw_test_done();
}
