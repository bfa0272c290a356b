/*
 * tests/symbolize/uwfuncs.h: the frame-pointer-less call chain of
 * tests/symbolize/uwfuncs.c, whose innermost function captures its registers
 * and copies its stack (as PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER
 * would), and the registers of such a capture in perf_event's order. Used by
 * test_unwind, test_report_ingest and test_stack_limits.
 */
#ifndef MW_TEST_UWFUNCS_H
#define MW_TEST_UWFUNCS_H

#include <stdint.h>
#include <ucontext.h>

struct uw_capture {
    ucontext_t uc;
    unsigned char stack[32768];
    size_t stack_size;
    uintptr_t stack_top; /* the copy ends here (set before the call) */
};
int uw_f1(struct uw_capture *c, int x);

/* The registers of uc in perf_event x86-64 order: AX BX CX DX SI DI BP SP IP,
 * R8..R15 (sample_regs_user 0x1ff | 0xff << 16). */
static inline void uw_perf_regs(const ucontext_t *uc, uint64_t regs[17])
{
    const greg_t *g = uc->uc_mcontext.gregs;
    static const int order[17] = {REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI,
                                  REG_RBP, REG_RSP, REG_RIP, REG_R8,  REG_R9,  REG_R10,
                                  REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};
    for (int i = 0; i < 17; i++)
        regs[i] = (uint64_t)g[order[i]];
}

#endif
