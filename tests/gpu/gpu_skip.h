/*
 * tests/gpu/gpu_skip.h: every GPU test starts with mw_gpu_require(), which
 * prints "SKIP: no CUDA device: <cudaGetDeviceCount's words>" and exits 77
 * where there is no GPU (the CI machine).
 */
#ifndef MW_TEST_GPU_SKIP_H
#define MW_TEST_GPU_SKIP_H

#include <stdio.h>
#include "memwatch/gpu.h"
#include "mw_test.h"

static inline void mw_gpu_require(void)
{
    char why[256] = "", msg[320];
    int n = mw_gpu_count(why, sizeof why);
    if (n <= 0) {
        snprintf(msg, sizeof msg, "no CUDA device: %s", why);
        mw_test_skip(msg);
    }
}

#endif
