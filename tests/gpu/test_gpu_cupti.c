/*
 * tests/gpu/test_gpu_cupti.c (gpu): CUPTI Range Profiler bytes of the triad
 * against its known volume. DRAM reads must be within 3 %; DRAM writes within
 * 3 % or short by no more than the L2 size (dirty lines still in the L2, said
 * in the verdict). Skips without a GPU; a privilege or busy refusal is a skip
 * that quotes what to do.
 */
#include <stdio.h>
#include <string.h>

#include "gpu_skip.h"
#include "memwatch/memwatch.h"

int main(void)
{
    mw_gpu_require();
    static mw_gpu_cupti c;
    int rc = mw_gpu_cupti_check(0, (size_t)1 << 27, &c);
    if (rc == MW_ERR_PRIV || rc == MW_ERR_UNSUPPORTED) {
        char msg[400];
        snprintf(msg, sizeof msg, "CUPTI refused: %s", c.status_text);
        mw_test_skip(msg);
    }
    MW_CHECK(rc == 0, "CUPTI check failed: %s", c.status_text);
    MW_CHECK_INT(c.n, 4);
    for (unsigned i = 0; i < c.n; i++)
        printf("%-24s %.6g known %.6g ratio %.4f %s: %s\n", c.m[i].metric, c.m[i].value,
               c.m[i].expected, c.m[i].ratio, c.m[i].verdict, c.m[i].reason);
    MW_CHECK_STR(c.m[0].metric, "dram__bytes_read.sum");
    MW_CHECK_STR(c.m[0].verdict, "accurate");
    MW_CHECK(!strcmp(c.m[1].verdict, "accurate") || !strcmp(c.m[1].verdict, "accurate-within-l2"),
             "dram__bytes_write.sum verdict %s ratio %.4f", c.m[1].verdict, c.m[1].ratio);
    MW_CHECK(c.m[2].value > 0, "lts__t_bytes.sum is zero");
    MW_CHECK(c.m[3].ratio > 0.5 && c.m[3].ratio < 2, "gpu__time_duration ratio %.3f",
             c.m[3].ratio);
    return mw_test_done();
}
