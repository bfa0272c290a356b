/*
 * tests/symbolize/symhelper.c: the program test_symbolize symbolizes (built
 * PIE and non-PIE, then stripped with separate debug files). Run, it prints
 * the addresses of its functions relative to its load bias and the source
 * lines they span, so the test knows the truth without parsing DWARF itself.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <link.h>
#include <stdint.h>
#include <stdio.h>

static uint64_t bias;
static int main_cb(struct dl_phdr_info *i, size_t n, void *d)
{
    (void)n;
    (void)d;
    bias = i->dlpi_addr; /* the first entry is the main program */
    return 1;
}

enum { TARGET_LO = __LINE__ };
__attribute__((noinline)) int helper_target(volatile int *x)
{
    int s = 0;
    for (int i = 0; i < *x; i++)
        s += i * *x;
    return s;
}
enum { TARGET_HI = __LINE__ };

enum { INL_LO = __LINE__ };
static inline __attribute__((always_inline)) int helper_inl(volatile int *x)
{
    unsigned s = (unsigned)*x;
    for (int i = 0; i < 10; i++)
        s = s * 31u + (unsigned)*x;
    return (int)(s & 0x7fffffff);
}
enum { INL_HI = __LINE__ };

int helper_call_line;
__attribute__((noinline)) int helper_inl_caller(volatile int *x)
{
    helper_call_line = __LINE__ + 1;
    int r = helper_inl(x) + 1;
    return r;
}
__attribute__((noinline)) int helper_after(volatile int *x) { return *x + 1; }

int main(void)
{
    dl_iterate_phdr(main_cb, NULL);
    volatile int v = 3;
    helper_target(&v);
    helper_inl_caller(&v);
    printf("target 0x%llx %d %d\n", (unsigned long long)((uintptr_t)&helper_target - bias),
           TARGET_LO, TARGET_HI);
    printf("inl 0x%llx 0x%llx %d %d %d\n",
           (unsigned long long)((uintptr_t)&helper_inl_caller - bias),
           (unsigned long long)((uintptr_t)&helper_after - bias), INL_LO, INL_HI, helper_call_line);
    return 0;
}
