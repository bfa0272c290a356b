/*
 * tests/dataaddr/test_insn.c: memwatch/insn.h on instruction bytes whose
 * operands are known (encodings from the Intel SDM, checked against
 * objdump): base + index * scale + displacement, RIP-relative, FS-relative
 * with and without the thread's FS base, 32-bit registers, string and
 * vector-indexed operands, the stack's own slots, lea, registers an
 * instruction writes, branches and their targets. Without a decoder the
 * test checks that memwatch says why.
 */
#include "mw_test.h"

#include <memwatch/insn.h>

static mw_insn_regs regs(void)
{
    mw_insn_regs r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < 24; i++)
        r.v[i] = 0x100000ull * (uint64_t)(i + 1); /* AX 0x100000, BX 0x200000, ... */
    r.mask = 0xff01ff;                             /* memwatch's sampled registers */
    return r;
}
#define AX 0x100000ull
#define DX 0x400000ull
#define SI 0x500000ull
#define R8 0x1100000ull

static const uint8_t MOVUPD_RDX_RAX[] = {0x66, 0x0f, 0x10, 0x04, 0x02}; /* movupd (%rdx,%rax,1),%xmm0 */
static const uint8_t MOVUPS_STORE[] = {0x0f, 0x11, 0x04, 0xc7};      /* movups %xmm0,(%rdi,%rax,8) */
static const uint8_t MOV_RAX_RAX[] = {0x48, 0x8b, 0x00};             /* mov (%rax),%rax */
static const uint8_t LEA[] = {0x48, 0x8d, 0x04, 0x02};               /* lea (%rdx,%rax,1),%rax */
static const uint8_t MOVSD_RIP[] = {0xf2, 0x0f, 0x10, 0x0d, 0x48, 0x07, 0x00, 0x00}; /* movsd 0x748(%rip),%xmm1 */
static const uint8_t MOV_FS[] = {0x64, 0x48, 0x8b, 0x04, 0x25, 0xf8, 0xff, 0xff, 0xff}; /* mov %fs:-8,%rax */
static const uint8_t MOV_E8D[] = {0x41, 0x8b, 0x40, 0x10};           /* mov 0x10(%r8),%eax */
static const uint8_t MOV_32BIT_ADDR[] = {0x67, 0x8b, 0x02};          /* mov (%edx),%eax */
static const uint8_t REP_MOVSB[] = {0xf3, 0xa4};                     /* rep movsb */
static const uint8_t PUSH_RBX[] = {0x53};                            /* push %rbx */
static const uint8_t ADD_RAX[] = {0x48, 0x83, 0xc0, 0x10};           /* add $0x10,%rax */
static const uint8_t JNE_BACK[] = {0x75, 0xde};                      /* jne .-0x20 */
static const uint8_t JMP[] = {0xeb, 0x00};                           /* jmp .+2 */
static const uint8_t RET[] = {0xc3};
static const uint8_t GATHER[] = {0xc4, 0xe2, 0xe9, 0x92, 0x04, 0xc8}; /* vgatherdpd %xmm2,(%rax,%xmm1,8),%xmm0 */

int main(void)
{
    const char *why = NULL;
    if (!mw_insn_available(&why)) {
        MW_CHECK(why && strstr(why, "Zydis"), "no decoder, and why: %s", why ? why : "(none)");
        mw_insn in;
        MW_CHECK_INT(mw_insn_decode(MOV_RAX_RAX, sizeof MOV_RAX_RAX, 0x1000, NULL, &in), 0);
        return mw_test_done();
    }
    mw_insn_regs r = regs();
    mw_insn in;

    MW_CHECK_INT(mw_insn_decode(MOVUPD_RDX_RAX, sizeof MOVUPD_RDX_RAX, 0x1980, &r, &in), 5);
    MW_CHECK_INT(in.kind, MW_INSN_MEM);
    MW_CHECK_U64(in.addr, DX + AX);
    MW_CHECK_INT(in.size, 16);
    MW_CHECK_INT(in.write, 0);
    MW_CHECK_INT(in.clobbers, 0);
    MW_CHECK_U64(in.addr_regs, (1u << 0) | (1u << 3));
    MW_CHECK_INT(in.branch, 0);

    mw_insn_decode(MOVUPS_STORE, sizeof MOVUPS_STORE, 0x1992, &r, &in);
    MW_CHECK_INT(in.kind, MW_INSN_MEM);
    MW_CHECK_U64(in.addr, 0x600000ull /* DI */ + AX * 8);
    MW_CHECK_INT(in.write, 1);

    mw_insn_decode(MOV_RAX_RAX, sizeof MOV_RAX_RAX, 0x2000, &r, &in);
    MW_CHECK_U64(in.addr, AX);
    MW_CHECK_INT(in.clobbers, 1);
    MW_CHECK_U64(in.writes, 1u << 0);

    mw_insn_decode(LEA, sizeof LEA, 0x2000, &r, &in);
    MW_CHECK_INT(in.kind, MW_INSN_NO_MEM);
    MW_CHECK_U64(in.writes, 1u << 0);

    MW_CHECK_INT(mw_insn_decode(MOVSD_RIP, sizeof MOVSD_RIP, 0x1970, &r, &in), 8);
    MW_CHECK_U64(in.addr, 0x1970 + 8 + 0x748);
    MW_CHECK_U64(in.addr_regs, 0); /* RIP-relative: no sampled register */

    mw_insn_decode(MOV_FS, sizeof MOV_FS, 0x3000, &r, &in);
    MW_CHECK_INT(in.kind, MW_INSN_MEM_UNKNOWN); /* no FS base */
    r.have_fs_base = 1;
    r.fs_base = 0x7f0000001000ull;
    mw_insn_decode(MOV_FS, sizeof MOV_FS, 0x3000, &r, &in);
    MW_CHECK_INT(in.kind, MW_INSN_MEM);
    MW_CHECK_U64(in.addr, 0x7f0000001000ull - 8);

    mw_insn_decode(MOV_E8D, sizeof MOV_E8D, 0x3000, &r, &in);
    MW_CHECK_U64(in.addr, R8 + 0x10);
    MW_CHECK_INT(in.size, 4);

    r.v[3] = 0xffffffff00001234ull; /* a 32-bit address takes the low half */
    mw_insn_decode(MOV_32BIT_ADDR, sizeof MOV_32BIT_ADDR, 0x3000, &r, &in);
    MW_CHECK_U64(in.addr, 0x1234);
    r = regs();

    mw_insn_decode(REP_MOVSB, sizeof REP_MOVSB, 0x3000, &r, &in);
    MW_CHECK_INT(in.kind, MW_INSN_MEM);
    MW_CHECK(in.addr == SI || in.addr == 0x600000ull, "rep movsb at 0x%llx", (unsigned long long)in.addr);

    mw_insn_decode(PUSH_RBX, sizeof PUSH_RBX, 0x3000, &r, &in);
    MW_CHECK_INT(in.kind, MW_INSN_NO_MEM); /* the stack's own slot */

    mw_insn_decode(ADD_RAX, sizeof ADD_RAX, 0x3000, &r, &in);
    MW_CHECK_INT(in.kind, MW_INSN_NO_MEM);
    MW_CHECK_U64(in.writes, 1u << 0);

    mw_insn_decode(JNE_BACK, sizeof JNE_BACK, 0x19a0, &r, &in);
    MW_CHECK_INT(in.branch, 1);
    MW_CHECK_INT(in.ends_flow, 0);
    MW_CHECK_INT(in.has_target, 1);
    MW_CHECK_U64(in.target, 0x19a2 - 0x22);
    MW_CHECK_U64(in.writes, 0); /* RIP is no data register */

    mw_insn_decode(JMP, sizeof JMP, 0x19a0, &r, &in);
    MW_CHECK_INT(in.ends_flow, 1);
    mw_insn_decode(RET, sizeof RET, 0x19a0, &r, &in);
    MW_CHECK_INT(in.ends_flow, 1);
    MW_CHECK_INT(in.kind, MW_INSN_NO_MEM);

    mw_insn_decode(GATHER, sizeof GATHER, 0x4000, &r, &in);
    MW_CHECK_INT(in.gather, 1);
    MW_CHECK_INT(in.kind, MW_INSN_MEM);
    MW_CHECK_U64(in.addr, AX); /* base + displacement: the lanes' indices are not sampled */

    /* registers not sampled: the address is not known */
    r.mask = 1u << 7; /* SP only */
    mw_insn_decode(MOVUPD_RDX_RAX, sizeof MOVUPD_RDX_RAX, 0x1980, &r, &in);
    MW_CHECK_INT(in.kind, MW_INSN_MEM_UNKNOWN);
    /* bytes that do not decode */
    static const uint8_t bad[] = {0x0f, 0xff};
    MW_CHECK_INT(mw_insn_decode(bad, sizeof bad, 0, &r, &in), 0);
    /* an instruction cut short */
    MW_CHECK_INT(mw_insn_decode(MOVSD_RIP, 5, 0, &r, &in), 0);
    return mw_test_done();
}
