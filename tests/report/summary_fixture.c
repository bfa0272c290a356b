/*
 * tests/report/summary_fixture.c: writes a raw file (mwr_build.h) for the
 * summary's thread list and its data objects (test_summary_fixture.sh):
 * process 77 with its main thread (77, no CPU record of its own: another
 * thread ended the process), a helper "worker" (78, 0.30 s user CPU), and
 * memwatch's own interval thread (79, named "memwatch", 0.05 s); the process
 * used 1.00 s user and 0.10 s system CPU. Four intervals of 10 ms, the first
 * and third flagged; timer samples: 30 of the main thread, 10 of the worker.
 * Page faults: 12 on object A (8 MiB) outside flagged intervals, 4 on object
 * B (4 MiB) inside them.
 *   usage: summary_fixture OUT.mwr
 */
#include "mwr_build.h"

#include <link.h>
#include <unistd.h>

#define MS 1000000ull

__attribute__((noinline, used)) int fixture_main_work(volatile int *x)
{
    return *x * 3;
}
__attribute__((noinline, used)) int fixture_worker(volatile int *x)
{
    return *x + 3;
}

static int first_cb(struct dl_phdr_info *i, size_t n, void *d)
{
    (void)n;
    uint64_t *r = d;
    r[0] = i->dlpi_addr;
    r[1] = UINT64_MAX;
    for (int k = 0; k < i->dlpi_phnum; k++)
        if (i->dlpi_phdr[k].p_type == PT_LOAD) {
            uint64_t a = i->dlpi_addr + i->dlpi_phdr[k].p_vaddr;
            r[1] = a < r[1] ? a : r[1];
            r[2] = a + i->dlpi_phdr[k].p_memsz > r[2] ? a + i->dlpi_phdr[k].p_memsz : r[2];
        }
    return 1;
}

static void thread(mwb *w, uint64_t t, uint32_t tid, uint32_t ev, const char *name)
{
    mwr_thread r;
    memset(&r, 0, sizeof r);
    r.time_ns = t;
    r.tid = tid;
    r.event = ev;
    snprintf(r.name, sizeof r.name, "%s", name);
    mwb_rec(w, MWR_THREAD, &r, sizeof r, NULL, 0);
}

static void cpu(mwb *w, uint64_t t, uint32_t tid, uint64_t user, uint64_t sys)
{
    mwr_cpu c;
    memset(&c, 0, sizeof c);
    c.time_ns = t;
    c.tid = tid;
    c.user_ns = user;
    c.system_ns = sys;
    mwb_rec(w, MWR_CPU, &c, sizeof c, NULL, 0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: summary_fixture OUT.mwr\n");
        return 2;
    }
    uint64_t me[3] = {0, 0, 0};
    dl_iterate_phdr(first_cb, me);
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    mwb w;
    mwb_init(&w);
    mwb_meta(&w, "pid=77\nhost=fixture\nexe=/bin/threaded\ncmdline=threaded run\n");
    mwb_module(&w, exe, me[0], me[1], me[2]);
    const uint64_t st_t = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    const uint64_t st_f = st_t | PERF_SAMPLE_ADDR;
    mwb_attr(&w, 1, "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, st_t);
    mwb_attr(&w, 2, "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, st_f);
    thread(&w, 0, 77, MWR_THREAD_START, "threaded");
    thread(&w, 1 * MS, 78, MWR_THREAD_START, "worker");
    thread(&w, 1 * MS, 79, MWR_THREAD_NAME, "memwatch");
    uint64_t site = (uint64_t)(uintptr_t)&fixture_worker + 4;
    mwb_alloc(&w, 0, 0x40000000, 8 << 20, &site, 1); /* A */
    mwb_alloc(&w, 0, 0x50000000, 4 << 20, &site, 1); /* B */
    for (int i = 0; i < 4; i++)
        mwb_interval(&w, (uint64_t)i * 10 * MS, (uint64_t)(i + 1) * 10 * MS,
                     i % 2 ? 0 : MWR_IV_BW_BOUND, i % 2 ? 100 : 300);
    unsigned char recs[16384];
    size_t k = 0;
    for (int i = 0; i < 40; i++) {
        uint64_t t = (uint64_t)i * MS;
        int main_thread = i % 4 != 3; /* 30 of the main thread, 10 of the worker */
        mwb_sample s = {(uint64_t)(uintptr_t)(main_thread ? (void *)&fixture_main_work
                                                          : (void *)&fixture_worker) +
                            2,
                        t,
                        0,
                        0,
                        0,
                        77,
                        main_thread ? 77 : 78,
                        NULL,
                        0};
        k += mwb_kernel_sample(recs + k, st_t, &s);
    }
    mwb_perf_data(&w, 1, 77, 40 * MS, recs, k);
    k = 0;
    for (int i = 0; i < 16; i++) {
        /* A: 12 in the unflagged intervals (10-20, 30-40 ms); B: 4 in flagged ones */
        int b = i >= 12;
        uint64_t t =
            b ? (uint64_t)(i - 12) * MS : (10 + (uint64_t)(i % 10) + (i >= 10 ? 20 : 0)) * MS;
        mwb_sample s = {(uint64_t)(uintptr_t)&fixture_main_work,
                        t,
                        (b ? 0x50000000u : 0x40000000u) + 4096u * (uint64_t)i,
                        0,
                        0,
                        77,
                        77,
                        NULL,
                        0};
        k += mwb_kernel_sample(recs + k, st_f, &s);
    }
    mwb_perf_data(&w, 2, 77, 40 * MS, recs, k);
    cpu(&w, 39 * MS, 78, 300 * MS, 0);
    cpu(&w, 40 * MS, 79, 50 * MS, 0);
    cpu(&w, 40 * MS, 0, 1000 * MS, 100 * MS);
    mwb_trailer(&w, 40 * MS, 0);
    int rc = mwb_write(&w, argv[1], w.n);
    free(w.b);
    return rc ? 1 : 0;
}
