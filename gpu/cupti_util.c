/*
 * gpu/cupti_util.c: explanations of CUPTI failures (see cupti_util.h).
 * May call: libcupti's cuptiGetResultString only. No state; thread-safe.
 */
#include "cupti_util.h"

#include <stdio.h>

static const char *advice(CUptiResult r)
{
    switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
        return "the driver restricts GPU performance counters to administrators: run as root "
               "or with CAP_SYS_ADMIN, or load the driver with "
               "NVreg_RestrictProfilingToAdminUsers=0 (options nvidia in /etc/modprobe.d, then "
               "reload the module); in a VM the host must enable profiling for this vGPU";
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
        return "another tool holds the GPU counters or the CUPTI subscriber slot (ncu, nsys, "
               "compute-sanitizer, DCGM profiling, or a second injection library): stop it, "
               "pause DCGM with 'dcgmi profile --pause', or unset CUDA_INJECTION64_PATH";
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_SUPPORTED:
        return "this device or configuration does not support the profiling API (vGPU without "
               "profiling, MIG, confidential computing, or a too-old architecture)";
    case CUPTI_ERROR_INVALID_METRIC_NAME:
        return "the metric does not exist on this chip (or not for this profiler type)";
    case CUPTI_ERROR_NOT_INITIALIZED:
        return "CUPTI could not initialize; check that libcupti matches the driver";
    default:
        return "see the CUPTI documentation for this code";
    }
}

void mw_cupti_explain(const char *call, CUptiResult r, char *buf, size_t n)
{
    const char *s = NULL;
    if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
        s = "unknown CUPTI error";
    snprintf(buf, n, "%s: %s (code %d): %s", call, s, (int)r, advice(r));
}

int mw_cupti_is_access_error(CUptiResult r)
{
    return r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ||
           r == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES ||
           r == CUPTI_ERROR_HARDWARE_BUSY || r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ||
           r == CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED;
}
