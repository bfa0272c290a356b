/*
 * tests/symbolize/uwfuncs.c: a call chain built without frame pointers
 * (-fomit-frame-pointer), whose innermost function captures its registers
 * (getcontext) and copies its stack, as PERF_SAMPLE_REGS_USER and
 * PERF_SAMPLE_STACK_USER would. test_unwind unwinds it offline.
 */
#include "uwfuncs.h"

#include <stdint.h>
#include <string.h>
#include <ucontext.h>

/* Copies live stack bytes (other frames' red zones included under ASan), as
 * the kernel does for PERF_SAMPLE_STACK_USER: not instrumented. */
__attribute__((noinline, no_sanitize("address"))) static void copy_stack(unsigned char *dst,
                                                                       uintptr_t src, size_t n)
{
    const volatile unsigned char *p = (const volatile unsigned char *)src;
    for (size_t i = 0; i < n; i++)
        dst[i] = p[i];
}

__attribute__((noinline)) int uw_f3(struct uw_capture *c, int x)
{
    volatile int pad[8];
    for (int i = 0; i < 8; i++)
        pad[i] = x + i;
    getcontext(&c->uc);
    uintptr_t sp = (uintptr_t)c->uc.uc_mcontext.gregs[REG_RSP];
    size_t n = c->stack_top > sp ? c->stack_top - sp : 0;
    if (n > sizeof c->stack)
        n = sizeof c->stack;
    copy_stack(c->stack, sp, n);
    c->stack_size = n;
    return pad[3] + 1;
}

__attribute__((noinline)) int uw_f2(struct uw_capture *c, int x)
{
    volatile int k = uw_f3(c, x * 2);
    return k + 3;
}

__attribute__((noinline)) int uw_f1(struct uw_capture *c, int x)
{
    volatile int k = uw_f2(c, x + 1);
    return k * 5;
}
