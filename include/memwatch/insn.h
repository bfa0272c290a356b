/*
 * memwatch/insn.h: the data address of a sampled instruction, from its
 * bytes and the user registers sampled with it (x86-64, decoded with
 * Zydis). Offline only: memwatch report decodes; the profiled program pays
 * nothing. The rule that picks the sampled instruction or the one before
 * it is in docs/data-addresses.md.
 */
#ifndef MEMWATCH_INSN_H
#define MEMWATCH_INSN_H

#include <stddef.h>
#include <stdint.h>

#include <memwatch/memwatch.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The user registers of a sample in perf_event's x86-64 order (AX BX CX DX
 * SI DI BP SP IP FLAGS CS SS DS ES FS GS R8..R15: bit i of the mask is
 * value i), and the thread's FS and GS bases where known (the segment
 * registers perf samples are selectors, not bases). */
typedef struct mw_insn_regs {
    uint64_t v[24];
    uint32_t mask;            /* which of v are known */
    int have_fs_base;
    uint64_t fs_base;
} mw_insn_regs;

/* Fill r from a sample's register dump: mask as in the attribute's
 * sample_regs_user, values in its order (popcount(mask) of them). */
MW_API void mw_insn_regs_from(mw_insn_regs *r, uint64_t mask, const void *values, uint32_t n);

enum mw_insn_mem_kind {
    MW_INSN_NO_MEM = 0,       /* no memory operand (lea's address computation is none) */
    MW_INSN_MEM = 1,          /* addr holds the operand's address */
    MW_INSN_MEM_UNKNOWN = 2,  /* a memory operand whose address the registers cannot give
                                 (a register not sampled, an unknown FS base) */
};

typedef struct mw_insn {
    unsigned length;          /* bytes; 0: the bytes do not decode */
    int kind;                 /* enum mw_insn_mem_kind */
    uint64_t addr;            /* MW_INSN_MEM: the effective address */
    unsigned size;            /* bytes the operand accesses (0: not known) */
    int write;                /* the memory operand is written */
    uint8_t mem_reads;        /* data memory operands read (all of them: movs has two) */
    uint8_t mem_writes;       /* ... written (add [m], r both reads and writes its one) */
    uint8_t nontemporal;      /* a store that bypasses the caches (movnt*, maskmovdqu) */
    int gather;               /* a vector-indexed (gather/scatter) operand: addr is its
                                 base + displacement, the lanes' indices are not sampled */
    int clobbers;             /* the instruction writes a register its address uses (so
                                 registers sampled after it do not give its address) */
    int ends_flow;            /* jmp, ret, ud2...: the next instruction is not reached from
                                 it, so it is no predecessor of the one after it */
    int branch;               /* any jump, call or return: it ends a straight-line run */
    int has_target;           /* a relative jump: target holds where it goes */
    uint64_t target;
    uint32_t writes;          /* the general-purpose registers it writes (perf_event
                                 numbering, bit i: v[i]) */
    uint32_t addr_regs;       /* those its memory operand's address is made of */
    /* the memory operand's recipe, for mw_insn_address: disp + base + index
     * x scale (+ the FS base) */
    int8_t base, index;       /* perf_event register numbers, -1: none; base 8: RIP-relative
                                 (the address of the instruction after it) */
    uint8_t base_bits, index_bits; /* their width: 64, 32 or 16 */
    uint8_t scale;
    uint8_t seg;              /* 0 none, 1 FS, 2 GS */
    int64_t disp;
} mw_insn;

/* The address of a decoded instruction's memory operand (in: from
 * mw_insn_decode, at runtime address ip) under the registers r: its kind
 * (MW_INSN_MEM: *addr set; MW_INSN_MEM_UNKNOWN: a register not sampled, an
 * unknown FS or GS base; MW_INSN_NO_MEM). Arithmetic only: a report
 * decodes an instruction once and computes this for every sample at it. */
MW_API int mw_insn_address(const mw_insn *in, uint64_t ip, const mw_insn_regs *r, uint64_t *addr);

/* 1 when this memwatch decodes instructions, else 0 and *why. */
MW_API int mw_insn_available(const char **why);

/* Decode the instruction at code[0..len), which sits at runtime address
 * ip, computing its memory operand's address from r (r may be NULL: only
 * the length and the kinds). The first explicit memory operand is the one
 * taken (a string instruction's: its source). Returns out->length. */
MW_API unsigned mw_insn_decode(const uint8_t *code, size_t len, uint64_t ip,
                               const mw_insn_regs *r, mw_insn *out);

#ifdef __cplusplus
}
#endif
#endif
