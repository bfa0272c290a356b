/*
 * tests/method_read/mwr_bw_fixture.c: writes a raw file whose intervals carry
 * a counting latency method (lmrl) and DRAM bytes from a bandwidth method
 * (imc_cas), as the profiler writes them where the counters open, for the
 * report test (test_report_bw.sh). Five intervals of 10 ms: bytes 1e8, 2e8,
 * 0 (a reading of zero), one without MWR_IV_BW_VALID (no reading), 5e7.
 *   usage: mwr_bw_fixture OUT.mwr
 */
#include "mwr_build.h"

#define MS 1000000ull

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mwr_bw_fixture OUT.mwr\n");
        return 2;
    }
    static const double bytes[5] = {1e8, 2e8, 0, 7e9, 5e7};
    mwb w;
    mwb_init(&w);
    mwb_meta(&w, "pid=78\nrank=0\nhost=fixture\nexe=/bin/fixture\ncmdline=fixture bw\n"
                 "lat_method=lmrl\nbw_counters=imc_cas (test)\n");
    for (int i = 0; i < 5; i++) {
        mwr_interval iv;
        memset(&iv, 0, sizeof iv);
        iv.t_start_ns = (uint64_t)i * 10 * MS;
        iv.t_end_ns = (uint64_t)(i + 1) * 10 * MS;
        iv.flags = MWR_IV_LAT_VALID | (i == 3 ? 0 : MWR_IV_BW_VALID);
        iv.nthreads = 1;
        iv.latency_ns = 120;
        iv.threshold_ns = 150;
        iv.bytes = bytes[i]; /* the one without BW_VALID must be ignored */
        snprintf(iv.lat_method, sizeof iv.lat_method, "lmrl");
        snprintf(iv.bw_method, sizeof iv.bw_method, "imc_cas");
        mwb_rec(&w, MWR_INTERVAL, &iv, sizeof iv, 0, 0);
    }
    mwb_trailer(&w, 50 * MS, 0);
    int rc = mwb_write(&w, argv[1], w.n);
    free(w.b);
    return rc ? 1 : 0;
}
