/*
 * tests/counters_sysfs/test_perf_explain.c: every errno of perf_event_open
 * becomes a sentence (mw_perf_explain), table-driven over privileges, targets
 * and the PMU sets of the fixture machines. Each row records its line.
 */
#include <memwatch/perf.h>
#include <memwatch/pmu.h>

#include <errno.h>
#include <linux/perf_event.h>

#include "mw_test.h"

static const mw_privs ROOT = {1, 1, 1, 2, 1}, USER2 = {0, 0, 0, 2, 1}, USER1 = {0, 0, 0, 1, 1},
                      USER3 = {0, 0, 0, 3, 1}, PERFMON = {0, 1, 0, 2, 1},
                      NOPERF = {0, 0, 0, MW_PARANOID_UNKNOWN, 0};

#define THREAD {MW_PERF_THREAD, 0, 0, NULL, 0}
#define OTHER {MW_PERF_THREAD, 1, 0, NULL, 0} /* pid 1: another process */
#define CPU0 {MW_PERF_CPU, 0, 0, NULL, 0}
#define SYSTEM {MW_PERF_SYSTEM, 0, 0, NULL, 0}

static const struct row {
    int line;
    int err;
    mw_perf_event ev;
    mw_perf_target t;
    unsigned flags;
    const mw_privs *p;
    const char *machine; /* fixture whose PMUs are present; NULL: none known */
    int rc;
    const char *says;
} rows[] = {
    /* one row a case, aligned by hand */
    /* clang-format off */
    {__LINE__, EACCES, {"uncore_imc_0/cas_count_read/", 13, 0x304, 0, 0, 1}, CPU0, 0, &USER2,
     "skx", MW_ERR_PARANOID,
     "per-CPU and system-wide counting needs perf_event_paranoid <= 0 or CAP_PERFMON; "
     "kernel.perf_event_paranoid is 2 here"},
    {__LINE__, EACCES, {"uncore_imc_0/cas_count_read/", 13, 0x304, 0, 0, 1}, SYSTEM, 0, &USER1,
     "skx", MW_ERR_PARANOID, "sysctl -w kernel.perf_event_paranoid=0"},
    {__LINE__, EACCES, {"task-clock", 1, 1, 0, 0, 1}, THREAD, 0, &USER2, "vm",
     MW_ERR_PARANOID, "counting kernel mode needs perf_event_paranoid <= 1 or CAP_PERFMON; "
                      "kernel.perf_event_paranoid is 2 here: count user mode only"},
    {__LINE__, EACCES, {"task-clock", 1, 1, 0, 0, 1}, THREAD, MW_PERF_USER_ONLY, &USER3, "vm",
     MW_ERR_PARANOID, "kernel.perf_event_paranoid is 3, which forbids perf_event_open"},
    {__LINE__, EACCES, {"task-clock", 1, 1, 0, 0, 1}, OTHER, MW_PERF_USER_ONLY, &USER2, "vm",
     MW_ERR_PRIV, "counting another process needs ptrace access"},
    /* the advice leaves out the capability the process has, and names it where it has not */
    {__LINE__, EPERM, {"task-clock", 1, 1, 0, 0, 1}, THREAD, MW_PERF_USER_ONLY, &PERFMON, "vm",
     MW_ERR_PRIV, "and this process has CAP_PERFMON: a security policy (seccomp in a container, "
                  "SELinux, AppArmor, lockdown) forbids perf_event_open; run outside the "
                  "container, or give it a seccomp profile that allows perf_event_open"},
    {__LINE__, EACCES, {"cpu-clock", 1, 0, 0, 0, 1}, THREAD, MW_PERF_USER_ONLY, &USER2, "vm",
     MW_ERR_PRIV, "run outside the container, or give it CAP_PERFMON (docker run --cap-add "
                  "PERFMON) or a seccomp profile that allows perf_event_open"},
    {__LINE__, EACCES, {"task-clock", 1, 1, 0, 0, 1}, CPU0, 0, &NOPERF, NULL, MW_ERR_PARANOID,
     "kernel.perf_event_paranoid is unknown"},
    {__LINE__, ENOENT, {"cycles", PERF_TYPE_HARDWARE, 0, 0, 0, 1}, THREAD, 0, &ROOT, "vm",
     MW_ERR_NOPMU, "cycles: hardware events are not supported here: the kernel exposes no "
                   "hardware PMU: only breakpoint, msr, software, tracepoint, uprobe"},
    {__LINE__, EOPNOTSUPP, {"L1-dcache-loads", PERF_TYPE_HW_CACHE, 0, 0, 0, 1}, THREAD, 0, &ROOT,
     "vm", MW_ERR_NOPMU, "hardware cache events are not supported here"},
    {__LINE__, ENOENT, {"cpu/event=0x3c/", PERF_TYPE_RAW, 0x3c, 0, 0, 1}, THREAD, 0, &ROOT, NULL,
     MW_ERR_NOPMU, "raw core PMU events are not supported here: the kernel exposes no hardware "
                   "PMU: only no PMU at all"},
    {__LINE__, ENOENT, {"cpu/event=0xff/", PERF_TYPE_RAW, 0xff, 0, 0, 1}, THREAD, 0, &ROOT, "skx",
     MW_ERR_UNSUPPORTED, "the cpu PMU does not support this event (config=0xff"},
    {__LINE__, ENOENT, {"x", 77, 0, 0, 0, 1}, THREAD, 0, &ROOT, "skx", MW_ERR_NOPMU,
     "no PMU of type 77 on this machine (PMUs: breakpoint, cpu, cstate_core"},
    {__LINE__, EOPNOTSUPP, {"uncore_imc_0/cas_count_read/", 13, 0x304, 0, 0, 1}, THREAD, 0,
     &ROOT, "skx", MW_ERR_UNSUPPORTED, "uncore_imc_0 counts only per CPU, not per thread"},
    {__LINE__, EINVAL, {"uncore_imc_0/cas_count_read/", 13, 0x304, 0, 0, 1}, THREAD, 0, &ROOT,
     "skx", MW_ERR_UNSUPPORTED, "uncore_imc_0 counts only per CPU (uncore), not per thread"},
    {__LINE__, EINVAL, {"cpu/event=0x3c,any/", 4, 0x20003c, 0, 0, 1}, THREAD, 0, &ROOT, "spr",
     MW_ERR_UNSUPPORTED, "config bits 0x200000 are outside every format field of the cpu PMU"},
    {__LINE__, EINVAL, {"cpu/event=0x3c,any/", 4, 0x20003c, 0, 0, 1}, THREAD, 0, &ROOT, "skx",
     MW_ERR_UNSUPPORTED, "a config bit the cpu PMU does not support (config=0x20003c"},
    {__LINE__, EINVAL, {"cpu/config=0x1000000000000/", 4, 1ull << 48, 0, 0, 1}, THREAD, 0, &ROOT,
     "skx", MW_ERR_UNSUPPORTED,
     "config bits 0x1000000000000 are outside every format field of the cpu PMU"},
    {__LINE__, EINVAL, {"uncore_imc_0/config1=1/", 13, 0x304, 1, 0, 1}, CPU0, 0, &ROOT, "skx",
     MW_ERR_UNSUPPORTED, "config1 bits 0x1 are outside every format field of the uncore_imc_0"},
    {__LINE__, EMFILE, {"task-clock", 1, 1, 0, 0, 1}, SYSTEM, 0, &ROOT, "vm", -EMFILE,
     "too many open files (EMFILE): memwatch needs one descriptor per event and CPU; the limit "
     "is "},
    {__LINE__, ENFILE, {"task-clock", 1, 1, 0, 0, 1}, THREAD, 0, &ROOT, "vm", -ENFILE,
     "file table is full"},
    {__LINE__, EBUSY, {"cpu/event=0x3c/", 4, 0x3c, 0, 0, 1}, CPU0, 0, &ROOT, "skx", -EBUSY,
     "the counter is busy (EBUSY): another user holds it exclusively"},
    {__LINE__, ENOSPC, {"breakpoint", PERF_TYPE_BREAKPOINT, 0, 0, 0, 1}, THREAD, 0, &ROOT, "vm",
     -ENOSPC, "no free counter or breakpoint slot"},
    {__LINE__, ESRCH, {"task-clock", 1, 1, 0, 0, 1}, OTHER, 0, &ROOT, "vm", -ESRCH,
     "on thread 1: no such thread (ESRCH)"},
    {__LINE__, ENOSYS, {"task-clock", 1, 1, 0, 0, 1}, THREAD, 0, &ROOT, NULL,
     MW_ERR_UNSUPPORTED, "this kernel has no perf_event_open"},
    {__LINE__, E2BIG, {"task-clock", 1, 1, 0, 0, 1}, THREAD, 0, &ROOT, "vm", MW_ERR_UNSUPPORTED,
     "older than memwatch's perf_event_attr"},
    {__LINE__, EFAULT, {"task-clock", 1, 1, 0, 0, 1}, THREAD, 0, &ROOT, "vm", -EFAULT,
     "perf_event_open failed: Bad address"},
    {__LINE__, EINVAL, {"task-clock", 1, 1, 0, 0, 1}, {MW_PERF_CPU, 0, 100000, NULL, 0}, 0,
     &ROOT, "vm", -ENODEV, "on CPU 100000: that CPU does not exist"},
    {__LINE__, EACCES, {NULL, 1, 1, 0, 0, 1}, THREAD, 0, NULL, NULL, MW_ERR_PARANOID,
     "event on this thread: counting kernel mode"},
    /* clang-format on */
};

int main(void)
{
    static const char *const machines[] = {"skx", "spr", "vm"};
    mw_pmu_set *sets[3] = {0};
    for (int i = 0; i < 3; i++) {
        char root[1024];
        snprintf(root, sizeof root, "%s/sysfs/%s", MW_FIXTURES, machines[i]);
        MW_CHECK_INT(mw_pmus_discover(root, &sets[i]), 0);
    }
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct row *r = &rows[i];
        const mw_pmu_set *s = NULL;
        for (int k = 0; r->machine && k < 3; k++)
            if (!strcmp(r->machine, machines[k]))
                s = sets[k];
        char buf[512] = "";
        int rc = mw_perf_explain(r->err, &r->ev, &r->t, r->flags, r->p, s, buf, sizeof buf);
        MW_CHECK_AT(__FILE__, r->line, rc == r->rc, "errno %d: rc %d (%s), expected %d", r->err,
                    rc, mw_strerror(rc), r->rc);
        MW_CHECK_AT(__FILE__, r->line, strstr(buf, r->says) != NULL,
                    "errno %d: \"%s\" lacks \"%s\"", r->err, buf, r->says);
    }
    /* Resolving user event names. */
    {
        mw_perf_event ev;
        char why[256];
        MW_CHECK_INT(mw_perf_event_parse(sets[0], "uncore_imc_0/cas_count_read/", &ev, why,
                                         sizeof why), 0);
        MW_CHECK(ev.type == 13 && ev.config == 0x304 && ev.scale == 6.103515625e-5 &&
                     !strcmp(ev.name, "uncore_imc_0/cas_count_read/"),
                 "imc event: type %u config 0x%llx scale %g", ev.type,
                 (unsigned long long)ev.config, ev.scale);
        MW_CHECK_INT(mw_perf_event_parse(sets[0], "cpu/mem-loads,ldlat=64/", &ev, why, sizeof why),
                     0);
        MW_CHECK(ev.type == 4 && ev.config == 0x1cd && ev.config1 == 64, "mem-loads");
        MW_CHECK_INT(mw_perf_event_parse(sets[2], "context-switches", &ev, why, sizeof why), 0);
        MW_CHECK(ev.type == PERF_TYPE_SOFTWARE && ev.config == PERF_COUNT_SW_CONTEXT_SWITCHES,
                 "context-switches");
        MW_CHECK_INT(mw_perf_event_parse(sets[2], "task-clocks", &ev, why, sizeof why),
                     MW_ERR_NOEVENT);
        MW_CHECK(strstr(why, "unknown event \"task-clocks\"") != NULL, "%s", why);
        MW_CHECK_INT(mw_perf_event_parse(sets[2], "uncore_imc_0/cas_count_read/", &ev, why,
                                         sizeof why), MW_ERR_NOPMU);
        MW_CHECK(strstr(why, "no PMU named uncore_imc_0") != NULL, "%s", why);
        MW_CHECK_INT(mw_perf_event_parse(sets[0], "uncore_imc_0/event=0x1ff/", &ev, why,
                                         sizeof why), MW_ERR_TOOBIG);
        MW_CHECK_INT(mw_perf_event_parse(sets[0], "uncore_imc_0/event=0x1", &ev, why, sizeof why),
                     MW_ERR_PARSE);
        MW_CHECK_INT(mw_perf_event_parse(sets[0], NULL, &ev, why, sizeof why), MW_ERR_PARSE);
    }
    /* Multiplexing: a counter that ran a quarter of the time it was enabled
     * counted a quarter of the events. */
    static const struct {
        int line;
        uint64_t raw, en, run;
        double scale, want;
    } sc[] = {
        {__LINE__, 1000, 100, 100, 1.0, 1000.0},
        {__LINE__, 1000, 100, 25, 1.0, 4000.0},
        {__LINE__, 1000, 300, 100, 0.0, 3000.0},            /* scale 0 means 1 */
        {__LINE__, 1000, 100, 0, 1.0, 0.0},                 /* never ran */
        {__LINE__, 1000, 100, 50, 6.103515625e-5, 0.1220703125}, /* MiB from an IMC */
        {__LINE__, 1ull << 40, 7, 7, 64.0, 70368744177664.0},
        {__LINE__, 3, 100, 200, 1.0, 3.0},                  /* running > enabled: exact */
    };
    for (size_t i = 0; i < sizeof sc / sizeof sc[0]; i++) {
        double v = mw_perf_scaled(sc[i].raw, sc[i].en, sc[i].run, sc[i].scale);
        MW_CHECK_AT(__FILE__, sc[i].line, fabs(v - sc[i].want) <= 1e-12 * fabs(sc[i].want),
                    "scaled %g, expected %g", v, sc[i].want);
    }
    /* A tiny buffer is cut, never overflowed. */
    char tiny[8];
    memset(tiny, 'x', sizeof tiny);
    mw_perf_explain(EBUSY, &rows[0].ev, NULL, 0, &ROOT, NULL, tiny, 6);
    MW_CHECK(tiny[5] == 0 && tiny[6] == 'x', "truncation");
    for (int i = 0; i < 3; i++)
        mw_pmus_free(sets[i]);
    return mw_test_done();
}
