/*
 * bench/views_synth.c: raw files of a large synthetic job for bench/views,
 * written with the report tests' builder (tests/report/mwr_build.h):
 * NPROC processes (ranks 0.., eight per host), SECONDS of 10 ms intervals each
 * (latency, threshold, DRAM bytes; rank r is bound in a share of its time
 * growing with r, in phases of 20 s), and SAMPLES cpu-clock samples in all,
 * spread over the run, each with a 3-5 frame call chain in this program's own
 * functions (so that the ingest symbolizes real lines).
 *   usage: views_synth OUTDIR [NPROC=16] [SECONDS=3600] [SAMPLES=1000000]
 */
#include "mwr_build.h"

#include <link.h>
#include <unistd.h>

#define MS 1000000ull

__attribute__((noinline, used)) int synth_triad(volatile int *x) { return *x * 3; }
__attribute__((noinline, used)) int synth_copy(volatile int *x) { return *x + 7; }
__attribute__((noinline, used)) int synth_compute(volatile int *x) { return *x ^ 5; }
__attribute__((noinline, used)) int synth_phase_mem(volatile int *x) { return synth_triad(x) + 1; }
__attribute__((noinline, used)) int synth_phase_cpu(volatile int *x) { return synth_compute(x) + 2; }
__attribute__((noinline, used)) int synth_solver(volatile int *x) { return synth_phase_mem(x) + 3; }

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

static uint64_t rng = 88172645463325252ull;
static uint64_t xr(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: views_synth OUTDIR [NPROC] [SECONDS] [SAMPLES]\n");
        return 2;
    }
    int nproc = argc > 2 ? atoi(argv[2]) : 16;
    double secs = argc > 3 ? atof(argv[3]) : 3600;
    long total = argc > 4 ? atol(argv[4]) : 1000000;
    uint64_t me[3] = {0, 0, 0};
    dl_iterate_phdr(first_cb, me);
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    const uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
    uint64_t niv = (uint64_t)(secs * 100);
    uint64_t t0 = 1000 * MS;
    uint64_t f_triad = (uint64_t)(uintptr_t)&synth_triad + 2,
             f_copy = (uint64_t)(uintptr_t)&synth_copy + 2,
             f_comp = (uint64_t)(uintptr_t)&synth_compute + 2,
             f_pmem = (uint64_t)(uintptr_t)&synth_phase_mem + 6,
             f_pcpu = (uint64_t)(uintptr_t)&synth_phase_cpu + 6,
             f_solv = (uint64_t)(uintptr_t)&synth_solver + 6, f_main = (uint64_t)(uintptr_t)&main + 40;
    for (int p = 0; p < nproc; p++) {
        mwb w;
        mwb_init(&w);
        char meta[512];
        int pid = 4000 + p;
        snprintf(meta, sizeof meta,
                 "pid=%d\nrank=%d\nhost=node%c\nexe=/opt/app/solver\ncmdline=solver --big\n"
                 "start_monotonic_ns=%llu\nstart_realtime_ns=%llu\n",
                 pid, p, 'A' + p / 8, (unsigned long long)t0,
                 (unsigned long long)(1700000000000000000ull + t0 + (uint64_t)(p / 8) * 1234567));
        mwb_meta(&w, meta);
        mwb_module(&w, exe, me[0], me[1], me[2]);
        mwb_attr(&w, 1, "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, st);
        /* rank p bound in phases: 20 s periods, bound for a share growing with p */
        double share = 0.1 + 0.7 * p / (nproc > 1 ? nproc - 1 : 1);
        for (uint64_t i = 0; i < niv; i++) {
            mwr_interval iv;
            memset(&iv, 0, sizeof iv);
            iv.t_start_ns = t0 + i * 10 * MS;
            iv.t_end_ns = iv.t_start_ns + 10 * MS;
            double ph = (double)(i % 2000) / 2000.0;
            int bound = ph < share;
            iv.latency_ns = (bound ? 210 : 120) + (double)(xr() % 40);
            iv.threshold_ns = 185;
            iv.flags = MWR_IV_LAT_VALID | (iv.latency_ns > iv.threshold_ns ? MWR_IV_BW_BOUND : 0);
            if (p % 2 == 0) {
                iv.flags |= MWR_IV_BW_VALID;
                iv.bytes = (bound ? 9e8 : 2e8) * (0.8 + (double)(xr() % 40) / 100);
                snprintf(iv.bw_method, sizeof iv.bw_method, "imc_cas");
            }
            iv.nthreads = 1;
            snprintf(iv.lat_method, sizeof iv.lat_method, "probe_lat");
            mwb_rec(&w, MWR_INTERVAL, &iv, sizeof iv, 0, 0);
        }
        long ns = total / nproc + (p < total % nproc);
        unsigned char recs[60000];
        size_t k = 0;
        for (long s = 0; s < ns; s++) {
            uint64_t t = t0 + (uint64_t)((double)s / (double)ns * (double)niv * 10 * MS);
            uint64_t i = (t - t0) / (10 * MS);
            int bound = (double)(i % 2000) / 2000.0 < share;
            uint64_t chain[5];
            uint32_t nc;
            uint64_t r = xr() % 10;
            if (bound && r < 8) {
                chain[0] = r < 6 ? f_triad : f_copy;
                chain[1] = f_pmem;
                chain[2] = f_solv;
                chain[3] = f_main;
                nc = 4;
            } else {
                chain[0] = f_comp;
                chain[1] = f_pcpu;
                chain[2] = f_main;
                nc = 3;
            }
            mwb_sample sm = {chain[0], t, 0, 0, 0, (uint32_t)pid, (uint32_t)pid, chain, nc};
            k += mwb_kernel_sample(recs + k, st, &sm);
            if (k > sizeof recs - 200) {
                mwb_perf_data(&w, 1, (uint32_t)pid, t, recs, k);
                k = 0;
            }
        }
        if (k)
            mwb_perf_data(&w, 1, (uint32_t)pid, t0 + niv * 10 * MS, recs, k);
        mwb_trailer(&w, t0 + niv * 10 * MS, 0);
        char path[4096];
        snprintf(path, sizeof path, "%s/memwatch-node%c-%d-%d.mwr", argv[1], 'A' + p / 8, p, pid);
        if (mwb_write(&w, path, w.n)) {
            perror(path);
            return 1;
        }
        free(w.b);
    }
    return 0;
}
