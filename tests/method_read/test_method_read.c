/*
 * tests/method_read/test_method_read.c: counters/method_read.c.
 *
 *   (no argument, unit) the arithmetic of a window with crafted counts
 *       (multiplexed and not, zero denominators, events never on the PMU) for
 *       imc_cas, amd_umc, lmrl and l1_miss_lat; the plan of imc_cas/lmrl on
 *       the skx fixture tree and amd_umc/lmrl on zen4 (attr type and config
 *       per PMU instance, cpumask, scale), and the reasons on the vm tree;
 *   live: the reader on this kernel with software events standing in for core
 *       events (task-clock): per-thread inherited groups count threads created
 *       later and ended threads, skip the thread they are told to skip and not
 *       fork children; the catalogue's hardware methods fail to open here with
 *       the reason, never with a value.
 */
#include "mw_test.h"

#include <memwatch/catalogue.h>
#include <memwatch/method_read.h>
#include <memwatch/pmu.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ arithmetic */

#define C(raw, en, run, scale, num)                                                                \
    {                                                                                              \
        (raw), (en), (run), (scale), (num)                                                         \
    }

static void test_value(void)
{
    double v = -1;
    char why[200];
    /* imc_cas on 6 instances x rd/wr, not multiplexed: 64 bytes per CAS */
    mw_mread_count imc[12];
    uint64_t sum = 0;
    for (int i = 0; i < 12; i++) {
        imc[i] = (mw_mread_count)C(1000 + 10 * (uint64_t)i, 10000000, 10000000, 64.0, 0);
        sum += 1000 + 10 * (uint64_t)i;
    }
    MW_CHECK_INT(mw_method_reader_value(MW_Q_DRAM_BYTES, imc, 12, &v, why, sizeof why), 0);
    MW_CHECK_NEAR(v, 64.0 * (double)sum, 1e-12);
    /* one instance multiplexed half the time: its count doubles */
    imc[3].running_ns = imc[3].enabled_ns / 2;
    MW_CHECK_INT(mw_method_reader_value(MW_Q_DRAM_BYTES, imc, 12, &v, why, sizeof why), 0);
    MW_CHECK_NEAR(v, 64.0 * (double)(sum + 1030), 1e-12);
    /* an instance enabled but never counting: no value, and why says so */
    imc[5].running_ns = 0;
    v = -1;
    MW_CHECK_INT(mw_method_reader_value(MW_Q_DRAM_BYTES, imc, 12, &v, why, sizeof why),
                 MW_ERR_NODATA);
    MW_CHECK(strstr(why, "never on the PMU") != NULL, "why: %s", why);
    MW_CHECK(v == -1, "no value written on error: %g", v);
    /* zero CAS in a window is a reading of zero bytes */
    mw_mread_count idle[2] = {C(0, 5000000, 5000000, 64, 0), C(0, 5000000, 5000000, 64, 0)};
    MW_CHECK_INT(mw_method_reader_value(MW_Q_DRAM_BYTES, idle, 2, &v, why, sizeof why), 0);
    MW_CHECK(v == 0, "zero bytes: %g", v);
    /* per-thread counters of threads that did not run: counted nothing */
    mw_mread_count none[2] = {C(0, 0, 0, 64, 0), C(0, 0, 0, 64, 0)};
    v = -1;
    MW_CHECK_INT(mw_method_reader_value(MW_Q_DRAM_BYTES, none, 2, &v, why, sizeof why), 0);
    MW_CHECK(v == 0, "bytes of threads that did not run: %g", v);
    MW_CHECK_INT(mw_method_reader_value(MW_Q_DRAM_BYTES, NULL, 0, &v, why, sizeof why),
                 MW_ERR_NODATA);

    /* amd_umc on 2 controllers, rd and wr; one multiplexed to a third */
    mw_mread_count umc[4] = {C(300, 900, 900, 64, 0), C(100, 900, 900, 64, 0),
                             C(100, 900, 300, 64, 0), C(50, 900, 900, 64, 0)};
    MW_CHECK_INT(mw_method_reader_value(MW_Q_DRAM_BYTES, umc, 4, &v, why, sizeof why), 0);
    MW_CHECK_NEAR(v, 64.0 * (300 + 100 + 300 + 50), 1e-12);

    /* lmrl: pending / (l1_miss + fb_hit) */
    mw_mread_count lmrl[3] = {C(30000, 1000, 1000, 1, 1), C(200, 1000, 1000, 1, 0),
                              C(100, 1000, 1000, 1, 0)};
    MW_CHECK_INT(mw_method_reader_value(MW_Q_LATENCY, lmrl, 3, &v, why, sizeof why), 0);
    MW_CHECK_NEAR(v, 100.0, 1e-12);
    /* the numerator multiplexed half the time: 60000 pending cycles */
    lmrl[0].running_ns = 500;
    MW_CHECK_INT(mw_method_reader_value(MW_Q_LATENCY, lmrl, 3, &v, why, sizeof why), 0);
    MW_CHECK_NEAR(v, 200.0, 1e-12);
    /* per-thread groups: two threads, scaled each, then summed */
    mw_mread_count two[6] = {C(1000, 10, 10, 1, 1), C(10, 10, 10, 1, 0), C(0, 10, 10, 1, 0),
                             C(2000, 20, 10, 1, 1), C(10, 20, 10, 1, 0), C(10, 20, 10, 1, 0)};
    MW_CHECK_INT(mw_method_reader_value(MW_Q_LATENCY, two, 6, &v, why, sizeof why), 0);
    MW_CHECK_NEAR(v, (1000.0 + 4000.0) / (10 + 0 + 20 + 20), 1e-12);
    /* no L1-missing loads: no latency, not 0 and not infinity */
    mw_mread_count nomiss[3] = {C(5000, 1000, 1000, 1, 1), C(0, 1000, 1000, 1, 0),
                                C(0, 1000, 1000, 1, 0)};
    v = -1;
    MW_CHECK_INT(mw_method_reader_value(MW_Q_LATENCY, nomiss, 3, &v, why, sizeof why),
                 MW_ERR_NODATA);
    MW_CHECK(strstr(why, "no L1-missing loads") != NULL, "why: %s", why);
    MW_CHECK(v == -1, "no value: %g", v);
    /* a waiting thread (nothing enabled) beside a running one is fine */
    mw_mread_count wait[4] = {C(0, 0, 0, 1, 1), C(0, 0, 0, 1, 0), C(900, 50, 50, 1, 1),
                              C(3, 50, 50, 1, 0)};
    MW_CHECK_INT(mw_method_reader_value(MW_Q_LATENCY, wait, 4, &v, why, sizeof why), 0);
    MW_CHECK_NEAR(v, 300.0, 1e-12);
    /* l1_miss_lat: pending / l1_miss; the miss counter multiplexed out */
    mw_mread_count l1ml[2] = {C(8000, 100, 100, 1, 1), C(40, 100, 50, 1, 0)};
    MW_CHECK_INT(mw_method_reader_value(MW_Q_LATENCY, l1ml, 2, &v, why, sizeof why), 0);
    MW_CHECK_NEAR(v, 100.0, 1e-12);
    l1ml[1].running_ns = 0;
    MW_CHECK_INT(mw_method_reader_value(MW_Q_LATENCY, l1ml, 2, &v, why, sizeof why), MW_ERR_NODATA);
    /* a latency without numerator or without denominator */
    mw_mread_count half[1] = {C(8000, 100, 100, 1, 1)};
    MW_CHECK_INT(mw_method_reader_value(MW_Q_LATENCY, half, 1, &v, why, sizeof why),
                 MW_ERR_NOEVENT);
    half[0].numerator = 0;
    MW_CHECK_INT(mw_method_reader_value(MW_Q_LATENCY, half, 1, &v, why, sizeof why),
                 MW_ERR_NOEVENT);
}

/* ------------------------------------------------------------------ plan */

static mw_pmu_set *fixture(const char *name)
{
    char root[512];
    snprintf(root, sizeof root, "%s/sysfs/%s", MW_FIXTURES, name);
    mw_pmu_set *s = NULL;
    int rc = mw_pmus_discover(root, &s);
    MW_CHECK(rc == 0 && s, "discover %s: %s", root, mw_strerror(rc));
    return s;
}

static const mw_method_def *def_of(mw_uarch u, const char *m)
{
    const mw_method_def *d = NULL;
    MW_CHECK_INT(mw_catalogue_find(u, m, &d), 0);
    return d;
}

static void test_plan(void)
{
    static mw_mread_plan p;
    char why[300];
    mw_pmu_set *skx = fixture("skx"), *zen4 = fixture("zen4"), *vm = fixture("vm");
    if (!skx || !zen4 || !vm)
        goto out;

    /* skx imc_cas: rd and wr on each of the 6 uncore_imc PMUs (types 13..18),
     * counted on the cpumask (one CPU per socket: 0,28) */
    const mw_method_def *d = def_of(MW_UARCH_SKX, "imc_cas");
    MW_CHECK_INT(mw_method_reader_plan(d, skx, &p, why, sizeof why), 0);
    MW_CHECK_INT(p.n, 12);
    for (size_t i = 0; i < p.n && i < 12; i++) {
        const mw_mread_event *e = &p.ev[i];
        int inst = (int)(i % 6), wr = i >= 6;
        char name[64];
        snprintf(name, sizeof name, "uncore_imc_%d/event=0x04,umask=0x%s/", inst, wr ? "0c" : "03");
        MW_CHECK_STR(e->name, name);
        MW_CHECK_INT(e->type, 13 + inst);
        MW_CHECK_U64(e->config, wr ? 0x0c04 : 0x0304);
        MW_CHECK_U64(e->config, d->events[wr].config); /* what the catalogue expects */
        MW_CHECK_STR(e->role, wr ? "wr" : "rd");
        MW_CHECK(e->scale == 64.0, "scale %g", e->scale);
        MW_CHECK(!e->core && !e->numerator, "uncore event %zu", i);
        MW_CHECK(e->n_cpus == 2 && e->cpus && e->cpus[0] == 0 && e->cpus[1] == 28,
                 "cpumask of %s: %zu cpus", e->name, e->n_cpus);
    }
    /* skx lmrl: three core events on cpu (type 4), pending the numerator */
    d = def_of(MW_UARCH_SKX, "lmrl");
    MW_CHECK_INT(mw_method_reader_plan(d, skx, &p, why, sizeof why), 0);
    MW_CHECK_INT(p.n, 3);
    static const uint64_t lmrl_cfg[3] = {0x0148, 0x08d1, 0x40d1};
    for (size_t i = 0; i < p.n && i < 3; i++) {
        MW_CHECK_INT(p.ev[i].type, 4);
        MW_CHECK_U64(p.ev[i].config, lmrl_cfg[i]);
        MW_CHECK_INT(p.ev[i].core, 1);
        MW_CHECK_INT(p.ev[i].numerator, i == 0);
        MW_CHECK(p.ev[i].scale == 1.0, "scale %g", p.ev[i].scale);
    }
    MW_CHECK_STR(p.ev[0].name, "cpu/pending (config 0x148)");
    /* skx ocr_dram: the offcore response value travels in config1 */
    d = def_of(MW_UARCH_SKX, "ocr_dram");
    MW_CHECK_INT(mw_method_reader_plan(d, skx, &p, why, sizeof why), 0);
    MW_CHECK_INT(p.n, 1);
    MW_CHECK_U64(p.ev[0].config, 0x01b7);
    MW_CHECK_U64(p.ev[0].config1, 0x3F840005B7ull);
    /* pebs_lat and probe_lat are not counting methods */
    MW_CHECK_INT(mw_method_reader_plan(def_of(MW_UARCH_SKX, "pebs_lat"), skx, &p, why, sizeof why),
                 MW_ERR_UNSUPPORTED);
    MW_CHECK_INT(mw_method_reader_plan(def_of(MW_UARCH_SKX, "probe_lat"), skx, &p, why, sizeof why),
                 MW_ERR_UNSUPPORTED);
    MW_CHECK(strstr(why, "reads no counter") != NULL, "why: %s", why);

    /* zen4 amd_umc: event 0x0a with rdwrmask 1 / 2 on amd_umc_0 and _1 */
    d = def_of(MW_UARCH_ZEN4, "amd_umc");
    MW_CHECK_INT(mw_method_reader_plan(d, zen4, &p, why, sizeof why), 0);
    MW_CHECK_INT(p.n, 4);
    const mw_pmu *u0 = mw_pmus_find(zen4, "amd_umc_0"), *u1 = mw_pmus_find(zen4, "amd_umc_1");
    MW_CHECK(u0 && u1, "amd_umc PMUs in the zen4 fixture");
    for (size_t i = 0; u0 && u1 && i < p.n && i < 4; i++) {
        int wr = i >= 2;
        MW_CHECK_INT(p.ev[i].type, (i % 2 ? u1 : u0)->type);
        MW_CHECK_U64(p.ev[i].config, wr ? 0x020a : 0x010a);
        MW_CHECK_U64(p.ev[i].config, d->events[wr].config);
        MW_CHECK(p.ev[i].scale == 64.0, "scale %g", p.ev[i].scale);
        MW_CHECK_INT(p.ev[i].n_cpus, (i % 2 ? u1 : u0)->n_cpus);
    }
    /* zen4 lmrl: MAB occupancy / MAB allocations */
    d = def_of(MW_UARCH_ZEN4, "lmrl");
    MW_CHECK_INT(mw_method_reader_plan(d, zen4, &p, why, sizeof why), 0);
    MW_CHECK_INT(p.n, 2);
    MW_CHECK_U64(p.ev[0].config, 0x5f);
    MW_CHECK_U64(p.ev[1].config, 0x3f41);
    MW_CHECK_INT(p.ev[0].numerator + p.ev[1].numerator, 1);

    /* a VM without hardware PMUs: the reasons */
    MW_CHECK_INT(mw_method_reader_plan(def_of(MW_UARCH_SKX, "imc_cas"), vm, &p, why, sizeof why),
                 MW_ERR_NOPMU);
    MW_CHECK_STR(why, "no PMU matches uncore_imc_*");
    MW_CHECK_INT(mw_method_reader_plan(def_of(MW_UARCH_ZEN4, "amd_umc"), vm, &p, why, sizeof why),
                 MW_ERR_NOPMU);
    MW_CHECK_INT(mw_method_reader_plan(def_of(MW_UARCH_ZEN4, "lmrl"), vm, &p, why, sizeof why),
                 MW_ERR_NOPMU);
    MW_CHECK(strstr(why, "no core PMU") != NULL, "why: %s", why);
out:
    mw_pmus_free(skx);
    mw_pmus_free(zen4);
    mw_pmus_free(vm);
}

/* ------------------------------------------------------------------ live */

static void burn_ms(unsigned ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 100000; i++)
            x += (unsigned long)i;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) * 1e3 + (double)(t.tv_nsec - t0.tv_nsec) / 1e6 < ms);
}

static void *burner(void *arg)
{
    burn_ms((unsigned)(uintptr_t)arg);
    return NULL;
}

/* A helper thread that, when told, starts a burner of its own (a thread
 * created by a counted thread other than the one that opened the reader). */
static pthread_mutex_t h_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t h_cv = PTHREAD_COND_INITIALIZER;
static int h_go, h_done;

static void *helper(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&h_mu);
    while (!h_go)
        pthread_cond_wait(&h_cv, &h_mu);
    pthread_mutex_unlock(&h_mu);
    pthread_t t;
    if (pthread_create(&t, NULL, burner, (void *)(uintptr_t)150) == 0)
        pthread_join(t, NULL);
    pthread_mutex_lock(&h_mu);
    h_done = 1;
    pthread_cond_broadcast(&h_cv);
    pthread_mutex_unlock(&h_mu);
    return NULL;
}

static int open_fds(int *fds, int max)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d)) && n < max)
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && atoi(e->d_name) != dirfd(d))
            fds[n++] = atoi(e->d_name);
    if (d)
        closedir(d);
    return n;
}

static void plan_task_clock(mw_mread_plan *p, int latency)
{
    memset(p, 0, sizeof *p);
    p->n = latency ? 2 : 1;
    for (size_t i = 0; i < p->n; i++) {
        mw_mread_event *e = &p->ev[i];
        snprintf(e->name, sizeof e->name, "task-clock");
        e->role = i ? "misses" : "pending";
        e->type = PERF_TYPE_SOFTWARE;
        e->config = PERF_COUNT_SW_TASK_CLOCK;
        e->scale = 1;
        e->numerator = latency && i == 0;
        e->core = 1;
    }
}

static void test_live(void)
{
    static mw_mread_plan p;
    char why[400];
    mw_method_reader *r = NULL;
    double v = 0;
    pid_t self = (pid_t)syscall(SYS_gettid);

    /* only the calling thread exists and it is skipped: nothing to count */
    plan_task_clock(&p, 0);
    mw_mread_opts o = {.core_target = MW_MREAD_CORE_PROCESS, .skip_tid = self};
    int rc = mw_method_reader_open_plan(&p, MW_Q_DRAM_BYTES, &o, &r, why, sizeof why);
    if (rc == -EACCES || rc == MW_ERR_PARANOID || rc == -ENOSYS) {
        printf("live part skipped: %s\n", why);
        return;
    }
    MW_CHECK_INT(rc, MW_ERR_NODATA);
    MW_CHECK(r == NULL && strstr(why, "no thread") != NULL, "why: %s", why);

    /* a helper thread exists; the caller is skipped: the caller's own work is
     * not counted, a thread the helper creates later is, also after it ended */
    pthread_t h;
    MW_CHECK_INT(pthread_create(&h, NULL, helper, NULL), 0);
    rc = mw_method_reader_open_plan(&p, MW_Q_DRAM_BYTES, &o, &r, why, sizeof why);
    MW_CHECK(rc == 0, "open per-thread inherited task-clock group: %s (%s)", mw_strerror(rc), why);
    if (rc == 0) {
        MW_CHECK_INT(mw_method_reader_threads(r), 1);
        MW_CHECK_INT(mw_method_reader_start(r), 0);
        burn_ms(150); /* the skipped caller */
        MW_CHECK_INT(mw_method_reader_read(r, &v, why, sizeof why), 0);
        printf("caller skipped: %.1f ms counted for 150 ms of the caller's work\n", v / 1e6);
        MW_CHECK(v < 50e6, "the skipped thread's work counted: %.1f ms", v / 1e6);
        pthread_mutex_lock(&h_mu);
        h_go = 1;
        pthread_cond_broadcast(&h_cv);
        while (!h_done)
            pthread_cond_wait(&h_cv, &h_mu);
        pthread_mutex_unlock(&h_mu);
        MW_CHECK_INT(mw_method_reader_read(r, &v, why, sizeof why), 0);
        printf("grandchild thread (created after open, ended): %.1f ms counted for 150 ms\n",
               v / 1e6);
        MW_CHECK(v > 120e6 && v < 400e6, "inherited thread counted: %.1f ms", v / 1e6);
        /* a fork child is not counted (inherit_thread) */
        pid_t c = fork();
        if (c == 0) {
            burn_ms(150);
            _exit(0);
        }
        int st;
        waitpid(c, &st, 0);
        rc = mw_method_reader_read(r, &v, why, sizeof why);
        MW_CHECK(rc == 0 || rc == MW_ERR_NODATA, "read: %s", mw_strerror(rc));
        printf("fork child: %.1f ms counted for 150 ms\n", rc == 0 ? v / 1e6 : 0.0);
        MW_CHECK(rc != 0 || v < 50e6, "the fork child's work counted: %.1f ms", v / 1e6);
        mw_method_reader_close(r);
        r = NULL;
    }
    pthread_join(h, NULL);

    /* not skipping the caller: threads it creates after open are counted;
     * task-clock over task-clock of the same groups comes out at 1 */
    plan_task_clock(&p, 1);
    o.skip_tid = 0;
    rc = mw_method_reader_open_plan(&p, MW_Q_LATENCY, &o, &r, why, sizeof why);
    MW_CHECK(rc == 0, "open: %s (%s)", mw_strerror(rc), why);
    if (rc == 0) {
        MW_CHECK_INT(mw_method_reader_start(r), 0);
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
            pthread_create(&t[i], NULL, burner, (void *)(uintptr_t)60);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        MW_CHECK_INT(mw_method_reader_read(r, &v, why, sizeof why), 0);
        printf("task-clock / task-clock over 2 threads: %.4f\n", v);
        MW_CHECK(v > 0.98 && v < 1.02, "ratio %.4f", v);
        mw_method_reader_close(r);
    }

    /* the program closes the reader's descriptors and gets the numbers back
     * for a pipe of its own: the reader reads nothing from the pipe, says so,
     * and its close leaves the program's descriptors alone */
    plan_task_clock(&p, 0);
    int before[256], nb = open_fds(before, 256);
    rc = mw_method_reader_open_plan(&p, MW_Q_DRAM_BYTES, &o, &r, why, sizeof why);
    MW_CHECK(rc == 0, "open: %s (%s)", mw_strerror(rc), why);
    if (rc == 0) {
        int after[256], na = open_fds(after, 256), pfd[2], taken[16], nt = 0;
        MW_CHECK_INT(pipe2(pfd, O_NONBLOCK), 0); /* a read that took its data must not block */
        MW_CHECK_INT(write(pfd[1], "program data", 12), 12);
        for (int i = 0; i < na && nt < 16; i++) {
            int old = 0;
            for (int j = 0; j < nb; j++)
                old |= before[j] == after[i];
            if (old || after[i] == pfd[0] || after[i] == pfd[1])
                continue;
            close(after[i]); /* as closefrom would */
            MW_CHECK_INT(dup2(pfd[0], after[i]), after[i]);
            taken[nt++] = after[i];
        }
        MW_CHECK(nt >= 1, "the reader's descriptors found: %d", nt);
        rc = mw_method_reader_read(r, &v, why, sizeof why);
        MW_CHECK_INT(rc, -EBADF);
        printf("descriptors taken over: %s\n", why);
        MW_CHECK(strstr(why, "closed or replaced") != NULL, "why: %s", why);
        MW_CHECK_INT(mw_method_reader_read(r, &v, why, sizeof why), -EBADF);
        mw_method_reader_close(r);
        for (int i = 0; i < nt; i++)
            MW_CHECK(fcntl(taken[i], F_GETFD) >= 0, "fd %d closed by the reader", taken[i]);
        char buf[32];
        MW_CHECK_INT(read(taken[0], buf, sizeof buf), 12); /* nothing was read away */
        for (int i = 0; i < nt; i++)
            close(taken[i]);
        close(pfd[0]);
        close(pfd[1]);
    }

    /* the catalogue's hardware methods on this kernel: opened, or refused
     * with the reason (this development VM has no hardware PMU) */
    mw_pmu_set *live = NULL;
    if (mw_pmus_discover(NULL, &live) == 0 && !mw_pmus_have_hardware(live)) {
        mw_pmu_set *skx = fixture("skx");
        static const char *const m[] = {"lmrl", "imc_cas"};
        for (int i = 0; skx && i < 2; i++) {
            r = NULL;
            why[0] = 0;
            rc = mw_method_reader_open(def_of(MW_UARCH_SKX, m[i]), skx, NULL, &r, why, sizeof why);
            printf("%s with the skx description on this kernel: %s\n", m[i], why);
            MW_CHECK(rc < 0 && r == NULL, "%s opened without a hardware PMU", m[i]);
            MW_CHECK(!strncmp(why, "cannot open ", 12) && strlen(why) > 30, "why: %s", why);
            MW_CHECK(strstr(why, i ? "uncore_imc_0/" : "cpu/pending") != NULL, "why: %s", why);
        }
        mw_pmus_free(skx);
    }
    mw_pmus_free(live);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "live")) {
        test_live();
        return mw_test_done_named("test_method_read live");
    }
    test_value();
    test_plan();
    return mw_test_done_named("test_method_read");
}
