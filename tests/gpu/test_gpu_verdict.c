/*
 * tests/gpu/test_gpu_verdict.c (unit): the verdict rule CUPTI metrics get
 * against a known volume, and the layout of the GPU raw records.
 */
#include "memwatch/gpu.h"
#include "memwatch/mwr_gpu.h"
#include "mw_test.h"

_Static_assert(sizeof(mwr_gpu_kernel) == 104, "mwr_gpu_kernel layout");
_Static_assert(sizeof(mwr_gpu_sample) == 56, "mwr_gpu_sample layout");
_Static_assert(sizeof(mwr_gpu_pc) == 40, "mwr_gpu_pc layout");

int main(void)
{
    MW_CHECK_STR(mw_gpu_verdict(100, 100), "accurate");
    MW_CHECK_STR(mw_gpu_verdict(102.9, 100), "accurate");
    MW_CHECK_STR(mw_gpu_verdict(97.1, 100), "accurate");
    MW_CHECK_STR(mw_gpu_verdict(96.9, 100), "biased");
    MW_CHECK_STR(mw_gpu_verdict(124, 100), "biased");
    MW_CHECK_STR(mw_gpu_verdict(200, 100), "wrong");
    MW_CHECK_STR(mw_gpu_verdict(0, 100), "wrong");
    MW_CHECK_STR(mw_gpu_verdict(5, 0), "unavailable");
    MW_CHECK_STR(mw_gpu_verdict(-1, 10), "unavailable");
    return mw_test_done();
}
