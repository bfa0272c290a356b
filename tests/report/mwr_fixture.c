/*
 * tests/report/mwr_fixture.c: writes a small raw file (mwr_build.h) for the
 * CLI tests: 4 intervals of 10 ms, two flagged; timer samples in this
 * program's own functions; page faults on one recorded allocation; a trailer.
 *   usage: mwr_fixture OUT.mwr [regions|regions-packed|gpu]
 * With "regions", thread 77 also marks regions (docs/regions.md): "load"
 * from 0.5 to 19.5 ms with "inner" nested in it from 2.5 to 7.5 ms, and
 * "store" from 20.5 to 38.5 ms, as a REGION record; "regions-packed" writes
 * the same events as a REGION_PACKED record (ticks of 0.5 ns) followed by a
 * malformed one (its events run past its bytes). With "gpu", the process
 * drove two GPUs (docs/gpu.md): 8 launches of stream_triad on device 0, all
 * flagged, and at the same times 8 of fma_chain on device 1, none flagged,
 * each 3 ms long from 1 ms on, every 5 ms; the GPU clock is CLOCK_MONOTONIC.
 */
#include "mwr_build.h"

#include <memwatch/mwr_gpu.h>

#include <link.h>
#include <unistd.h>

#define MS 1000000ull

__attribute__((noinline, used)) int fixture_hot(volatile int *x) { return *x * 3; }
__attribute__((noinline, used)) int fixture_cold(volatile int *x) { return *x + 3; }

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

int main(int argc, char **argv)
{
    if (argc != 2 &&
        !(argc == 3 && (!strcmp(argv[2], "regions") || !strcmp(argv[2], "regions-packed") ||
                        !strcmp(argv[2], "gpu")))) {
        fprintf(stderr, "usage: mwr_fixture OUT.mwr [regions|regions-packed|gpu]\n");
        return 2;
    }
    uint64_t me[3] = {0, 0, 0};
    dl_iterate_phdr(first_cb, me);
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    mwb w;
    mwb_init(&w);
    mwb_meta(&w, "pid=77\nrank=0\nhost=fixture\nexe=/bin/fixture\ncmdline=fixture run\n");
    mwb_module(&w, exe, me[0], me[1], me[2]);
    const uint64_t st_t = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    const uint64_t st_f = st_t | PERF_SAMPLE_ADDR;
    mwb_attr(&w, 1, "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, st_t);
    mwb_attr(&w, 2, "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, st_f);
    uint64_t site = (uint64_t)(uintptr_t)&fixture_cold + 4;
    mwb_alloc(&w, 0, 0x40000000, 8 << 20, &site, 1);
    for (int i = 0; i < 4; i++)
        mwb_interval(&w, (uint64_t)i * 10 * MS, (uint64_t)(i + 1) * 10 * MS,
                     i % 2 ? 0 : MWR_IV_BW_BOUND, i % 2 ? 100 : 300);
    unsigned char recs[16384];
    size_t k = 0;
    for (uint64_t t = 0; t < 40 * MS; t += MS) {
        int hot = (t / (10 * MS)) % 2 == 0;
        mwb_sample s = {(uint64_t)(uintptr_t)(hot ? (void *)&fixture_hot : (void *)&fixture_cold) + 2,
                        t, 0, 0, 0, 77, 77, NULL, 0};
        k += mwb_kernel_sample(recs + k, st_t, &s);
    }
    mwb_perf_data(&w, 1, 77, 40 * MS, recs, k);
    k = 0;
    for (int i = 0; i < 8; i++) {
        mwb_sample s = {(uint64_t)(uintptr_t)&fixture_hot, (uint64_t)i * MS, 0x40000000 + 4096u * (uint64_t)i,
                        0, 0, 77, 77, NULL, 0};
        k += mwb_kernel_sample(recs + k, st_f, &s);
    }
    mwb_perf_data(&w, 2, 77, 40 * MS, recs, k);
    if (argc == 3 && !strcmp(argv[2], "gpu")) {
        static const char gmeta[] = "gpu.device=0\ngpu.name=Fixture GPU\ngpu.cc=9.0\n"
                                    "gpu.device=1\ngpu.name=Fixture GPU\ngpu.cc=9.0\n"
                                    "gpu.clock=0 0\n";
        mwb_rec(&w, MWR_GPU_META, gmeta, sizeof gmeta - 1, NULL, 0);
        for (int i = 0; i < 16; i++) {
            int dev = i % 2;
            const char *nm = dev ? "fma_chain" : "stream_triad";
            mwr_gpu_kernel gk;
            memset(&gk, 0, sizeof gk);
            gk.start_ns = (1 + 5 * (uint64_t)(i / 2)) * MS;
            gk.end_ns = gk.start_ns + 3 * MS;
            gk.device = (uint32_t)dev;
            gk.correlation = 100 + (uint32_t)i;
            gk.flags = MWR_GPU_BW_VALID | (dev ? 0 : MWR_GPU_BW_BOUND);
            gk.dram_bytes = dev ? 1e6 : 9e9;
            gk.dram_bw = gk.dram_bytes / 3e-3;
            gk.threshold_bw = 1.5e12;
            gk.peak_bw = 4.8e12;
            gk.name_len = (uint32_t)strlen(nm);
            mwb_rec(&w, MWR_GPU_KERNEL, &gk, sizeof gk, nm, gk.name_len);
        }
    } else if (argc == 3) {
        static const char *const names[] = {"load", "inner", "store"};
        for (uint32_t id = 1; id <= 3; id++) {
            mwr_region_name rn = {id, 0, (uint16_t)strlen(names[id - 1])};
            mwb_rec(&w, MWR_REGION_NAME, &rn, sizeof rn, names[id - 1], rn.len);
        }
        const uint64_t us = 1000;
        mwr_region_ev ev[] = {
            {500 * us, 1, MWR_RG_BEGIN, 0, 0, 0},   {2500 * us, 2, MWR_RG_BEGIN, 1, 0, 0},
            {7500 * us, 2, MWR_RG_END, 1, 0, 0},    {19500 * us, 1, MWR_RG_END, 0, 0, 0},
            {20500 * us, 3, MWR_RG_BEGIN, 0, 0, 0}, {38500 * us, 3, MWR_RG_END, 0, 0, 0},
        };
        uint32_t nev = (uint32_t)(sizeof ev / sizeof ev[0]);
        if (!strcmp(argv[2], "regions")) {
            mwr_region rh = {77, nev};
            mwb_rec(&w, MWR_REGION, &rh, sizeof rh, ev, sizeof ev);
        } else {
            /* ticks of 0.5 ns from 1 us before the first event */
            mwr_region_packed ph = {77, nev, ev[0].time_ns - 1000, 0.5, 0, 0};
            unsigned char pk[256], *q = pk;
            int64_t last = 0;
            for (uint32_t i = 0; i < nev; i++) {
                int64_t tk = (int64_t)(ev[i].time_ns - ph.t0_ns) * 2, d = tk - last;
                uint64_t v[4] = {((uint64_t)d << 1) ^ (uint64_t)(d >> 63), ev[i].id,
                                 (uint64_t)ev[i].depth << 3 | ev[i].kind, ev[i].merged};
                last = tk;
                for (int j = 0; j < 4; j++) {
                    while (v[j] >= 0x80) {
                        *q++ = (unsigned char)(v[j] | 0x80);
                        v[j] >>= 7;
                    }
                    *q++ = (unsigned char)v[j];
                }
            }
            ph.nbytes = (uint32_t)(q - pk);
            mwb_rec(&w, MWR_REGION_PACKED, &ph, sizeof ph, pk, ph.nbytes);
            ph.nevents = nev + 1; /* one more event than its bytes hold */
            mwb_rec(&w, MWR_REGION_PACKED, &ph, sizeof ph, pk, ph.nbytes);
        }
    }
    mwb_trailer(&w, 40 * MS, 0);
    int rc = mwb_write(&w, argv[1], w.n);
    free(w.b);
    return rc ? 1 : 0;
}
