/*
 * tests/names/test_kernel_name.c: GPU kernel names as the text summary shows
 * them (report/kernel_name.c): demangled (mw_sym_demangle), then return type,
 * parameters and namespaces dropped, long template arguments folded with "…".
 */
#include "mw_test.h"
#include "region.h"

#include <memwatch/symbolize.h>

#include <stdlib.h>
#include <string.h>

static char *demangled(const char *m)
{
    char *buf = NULL;
    size_t cap = 0;
    const char *d = mw_sym_demangle(m, &buf, &cap);
    char *r = strdup(d);
    free(buf);
    return r;
}

int main(void)
{
    char out[128];
    mw_kernel_short("simple_kernel(float*, int)", out, 40);
    MW_CHECK(!strcmp(out, "simple_kernel"), "plain kernel: %s", out);
    mw_kernel_short("void ns::inner::triad<double>(double*, double const*, double const*, double)", out, 40);
    MW_CHECK(!strcmp(out, "triad<double>"), "namespaces, return type and parameters go: %s", out);
    mw_kernel_short("bw_kernel", out, 40);
    MW_CHECK(!strcmp(out, "bw_kernel"), "a C name stays: %s", out);
    if (mw_sym_demangler(NULL)) {
        char *d = demangled("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_");
        MW_CHECK(strstr(d, "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>") == d + 5,
                 "demangled whole: %s", d);
        mw_kernel_short(d, out, 40);
        MW_CHECK(!strncmp(out, "vectorized_elementwise_kernel<4, at::n", 38) &&
                     !strcmp(out + strlen(out) - 4, "\xe2\x80\xa6>"),
                 "template arguments folded: %s", out);
        free(d);
        d = demangled("_Z15for_each_kernelIN10CUDAStreamIdE3addEEvT_");
        mw_kernel_short(d, out, 40);
        MW_CHECK(!strcmp(out, "for_each_kernel<CUDAStream<double>::add>"), "fits: %s (from %s)", out, d);
        free(d);
    } else {
        printf("note: no C++ demangler in this process; demangling not checked\n");
    }
    return mw_test_done();
}
