/*
 * tests/export/mwr_exit_fixture.c: a raw file as recorders that left the
 * threshold out of a process's last, partial interval wrote it, for
 * test_exports_threshold.sh. Its host and command line are not UTF-8.
 *
 *   usage: mwr_exit_fixture OUT.mwr
 *
 * Intervals (10 ms each, probe_lat): 0-10 ms latency 300 (flagged), 10-20 ms
 * 100, both with threshold 150; 20-30 ms without a reading (threshold 150);
 * 30-34 ms the last, partial interval: no reading, threshold 0. Timer
 * samples, one per ms, at fixture_work.
 */
#include "../report/mwr_build.h"

#include <link.h>
#include <unistd.h>

#define MS 1000000ull

__attribute__((noinline)) void fixture_work(void)
{
    __asm__ volatile("" ::: "memory");
}

static int first_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uint64_t *me = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type == PT_LOAD && (p->p_flags & PF_X)) {
            me[0] = info->dlpi_addr;
            me[1] = info->dlpi_addr + p->p_vaddr;
            me[2] = me[1] + p->p_memsz;
            return 1;
        }
    }
    return 1;
}

static void interval(mwb *w, uint64_t t0, uint64_t t1, uint32_t flags, double lat, double thr)
{
    mwr_interval iv;
    memset(&iv, 0, sizeof iv);
    iv.t_start_ns = t0;
    iv.t_end_ns = t1;
    iv.flags = flags;
    iv.nthreads = 1;
    iv.latency_ns = lat;
    iv.threshold_ns = thr;
    snprintf(iv.lat_method, sizeof iv.lat_method, "probe_lat");
    mwb_rec(w, MWR_INTERVAL, &iv, sizeof iv, 0, 0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mwr_exit_fixture OUT.mwr\n");
        return 2;
    }
    uint64_t me[3] = {0, 0, 0};
    dl_iterate_phdr(first_cb, me);
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    mwb w;
    mwb_init(&w);
    mwb_meta(&w, "pid=88\nhost=node\xff\xfe\nexe=/bin/exit\xc3(\ncmdline=exit\xe2\x82 run\n"
                 "sample_rate=500\nfault_period=16\n");
    mwb_module(&w, exe, me[0], me[1], me[2]);
    const uint64_t st_t = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    mwb_attr(&w, 1, "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, st_t);
    interval(&w, 0, 10 * MS, MWR_IV_LAT_VALID | MWR_IV_BW_BOUND, 300, 150);
    interval(&w, 10 * MS, 20 * MS, MWR_IV_LAT_VALID, 100, 150);
    interval(&w, 20 * MS, 30 * MS, 0, 0, 150);
    interval(&w, 30 * MS, 34 * MS, 0, 0, 0);
    unsigned char recs[8192];
    size_t k = 0;
    for (uint64_t t = 0; t < 34 * MS; t += MS) {
        mwb_sample s = {(uint64_t)(uintptr_t)&fixture_work + 1, t, 0, 0, 0, 88, 88, NULL, 0};
        k += mwb_kernel_sample(recs + k, st_t, &s);
    }
    mwb_perf_data(&w, 1, 88, 34 * MS, recs, k);
    mwb_trailer(&w, 34 * MS, 0);
    return mwb_write(&w, argv[1], w.n) ? 1 : 0;
}
