/*
 * sampling/insn.c: memwatch/insn.h, the data address of a sampled
 * instruction, decoded with Zydis (Debian's libzydis-dev). Without Zydis at
 * build time every entry says so (mw_insn_available) and decodes nothing.
 */
#include <memwatch/insn.h>

#include <string.h>

void mw_insn_regs_from(mw_insn_regs *r, uint64_t mask, const void *values, uint32_t n)
{
    memset(r, 0, sizeof *r);
    const unsigned char *p = values;
    uint32_t k = 0;
    for (unsigned i = 0; i < 24 && k < n; i++)
        if (mask >> i & 1) {
            memcpy(&r->v[i], p + 8 * k, 8);
            r->mask |= 1u << i;
            k++;
        }
}

static uint64_t width(uint64_t v, unsigned bits)
{
    return bits == 32 ? v & 0xffffffffu : bits == 16 ? v & 0xffffu : v;
}

int mw_insn_address(const mw_insn *in, uint64_t ip, const mw_insn_regs *r, uint64_t *addr)
{
    if (in->kind == MW_INSN_NO_MEM)
        return MW_INSN_NO_MEM;
    uint64_t a = (uint64_t)in->disp;
    if (in->base == 8) {
        a += ip + in->length;
    } else if (in->base >= 0) {
        if (!r || !(r->mask >> in->base & 1))
            return MW_INSN_MEM_UNKNOWN;
        a += width(r->v[in->base], in->base_bits);
    }
    if (in->index >= 0) {
        if (!r || !(r->mask >> in->index & 1))
            return MW_INSN_MEM_UNKNOWN;
        a += width(r->v[in->index], in->index_bits) * (in->scale ? in->scale : 1);
    }
    if (in->seg == 1) {
        if (!r || !r->have_fs_base)
            return MW_INSN_MEM_UNKNOWN;
        a += r->fs_base;
    } else if (in->seg == 2) {
        return MW_INSN_MEM_UNKNOWN; /* user space GS base: not known */
    }
    *addr = a;
    return MW_INSN_MEM;
}

#ifdef MW_HAVE_ZYDIS
#include <Zydis/Zydis.h>

int mw_insn_available(const char **why)
{
    if (why)
        *why = NULL;
    return 1;
}

/* perf_event's x86-64 register number of a general-purpose register (any
 * width), or -1 */
static int perf_reg(ZydisRegister reg)
{
    static const ZydisRegister order[24] = {
        ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RBX, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RDX,
        ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI, ZYDIS_REGISTER_RBP, ZYDIS_REGISTER_RSP,
        ZYDIS_REGISTER_RIP, ZYDIS_REGISTER_NONE, ZYDIS_REGISTER_NONE, ZYDIS_REGISTER_NONE,
        ZYDIS_REGISTER_NONE, ZYDIS_REGISTER_NONE, ZYDIS_REGISTER_NONE, ZYDIS_REGISTER_NONE,
        ZYDIS_REGISTER_R8,  ZYDIS_REGISTER_R9,  ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R11,
        ZYDIS_REGISTER_R12, ZYDIS_REGISTER_R13, ZYDIS_REGISTER_R14, ZYDIS_REGISTER_R15};
    if (reg == ZYDIS_REGISTER_NONE)
        return -1;
    ZydisRegister big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg);
    for (int i = 0; i < 24; i++)
        if (order[i] != ZYDIS_REGISTER_NONE && order[i] == big)
            return i;
    return -1;
}

static int ends_flow(ZydisMnemonic m)
{
    return m == ZYDIS_MNEMONIC_JMP || m == ZYDIS_MNEMONIC_RET || m == ZYDIS_MNEMONIC_UD2 ||
           m == ZYDIS_MNEMONIC_HLT || m == ZYDIS_MNEMONIC_IRETQ || m == ZYDIS_MNEMONIC_SYSRET;
}

/* The stores that bypass the caches (no read for ownership of the line) */
static int nontemporal(ZydisMnemonic m)
{
    switch (m) {
    case ZYDIS_MNEMONIC_MOVNTI:
    case ZYDIS_MNEMONIC_MOVNTDQ:
    case ZYDIS_MNEMONIC_MOVNTPD:
    case ZYDIS_MNEMONIC_MOVNTPS:
    case ZYDIS_MNEMONIC_MOVNTQ:
    case ZYDIS_MNEMONIC_MOVNTSD:
    case ZYDIS_MNEMONIC_MOVNTSS:
    case ZYDIS_MNEMONIC_VMOVNTDQ:
    case ZYDIS_MNEMONIC_VMOVNTPD:
    case ZYDIS_MNEMONIC_VMOVNTPS:
    case ZYDIS_MNEMONIC_MASKMOVDQU:
    case ZYDIS_MNEMONIC_VMASKMOVDQU:
        return 1;
    default:
        return 0;
    }
}

unsigned mw_insn_decode(const uint8_t *code, size_t len, uint64_t ip, const mw_insn_regs *r,
                        mw_insn *out)
{
    static __thread int ready;
    static __thread ZydisDecoder dec;
    memset(out, 0, sizeof *out);
    if (!ready) {
        if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
            return 0;
        ready = 1;
    }
    ZydisDecodedInstruction in;
    ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
    if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code, len, &in, op)))
        return 0;
    out->length = in.length;
    out->ends_flow = ends_flow(in.mnemonic);
    out->branch = in.meta.category == ZYDIS_CATEGORY_COND_BR ||
                  in.meta.category == ZYDIS_CATEGORY_UNCOND_BR ||
                  in.meta.category == ZYDIS_CATEGORY_CALL || in.meta.category == ZYDIS_CATEGORY_RET ||
                  in.meta.category == ZYDIS_CATEGORY_SYSCALL || out->ends_flow;
    for (unsigned i = 0; i < in.operand_count; i++) {
        const ZydisDecodedOperand *o = &op[i];
        if (o->type == ZYDIS_OPERAND_TYPE_REGISTER && (o->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)) {
            int w = perf_reg(o->reg.value);
            if (w >= 0 && w != 8) /* a jump's RIP is no data register */
                out->writes |= 1u << w;
        }
        if (out->branch && o->type == ZYDIS_OPERAND_TYPE_IMMEDIATE && o->imm.is_relative) {
            out->has_target = 1;
            out->target = ip + in.length + (uint64_t)o->imm.value.s;
        }
    }
    const ZydisDecodedOperand *m = NULL;
    for (unsigned i = 0; i < in.operand_count; i++) {
        const ZydisDecodedOperand *o = &op[i];
        if (o->type != ZYDIS_OPERAND_TYPE_MEMORY || o->mem.type == ZYDIS_MEMOP_TYPE_AGEN ||
            o->mem.type == ZYDIS_MEMOP_TYPE_MIB)
            continue;
        /* the stack slots of push, pop, call and ret are the stack's own
         * traffic, not the program's data; a string instruction's hidden
         * operands are */
        if (o->visibility == ZYDIS_OPERAND_VISIBILITY_HIDDEN &&
            perf_reg(o->mem.base) == 7 /* SP */)
            continue;
        /* every data operand's direction (movs reads one and writes one;
         * add [m], r reads and writes the same) */
        out->mem_reads += (o->actions & ZYDIS_OPERAND_ACTION_MASK_READ) != 0;
        out->mem_writes += (o->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) != 0;
        if (!m)
            m = o;
    }
    out->nontemporal = nontemporal(in.mnemonic);
    if (!m)
        return out->length;
    out->kind = MW_INSN_MEM;
    out->size = m->size / 8;
    out->write = (m->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) != 0;
    out->gather = m->mem.type == ZYDIS_MEMOP_TYPE_VSIB;
    /* does the instruction write a register its address is made of? */
    int bi = perf_reg(m->mem.base), xi = out->gather ? -1 : perf_reg(m->mem.index);
    if (bi >= 0 && bi != 8) /* RIP-relative: the instruction's own address */
        out->addr_regs |= 1u << bi;
    if (xi >= 0)
        out->addr_regs |= 1u << xi;
    for (unsigned i = 0; i < in.operand_count; i++) {
        const ZydisDecodedOperand *o = &op[i];
        if (o->type == ZYDIS_OPERAND_TYPE_REGISTER &&
            (o->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)) {
            int w = perf_reg(o->reg.value);
            out->clobbers |= w >= 0 && (w == bi || w == xi);
        }
    }
    out->base = (int8_t)(m->mem.base == ZYDIS_REGISTER_RIP ? 8 : bi);
    out->index = (int8_t)xi;
    out->base_bits = (uint8_t)(bi >= 0 ? ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, m->mem.base) : 0);
    out->index_bits =
        (uint8_t)(xi >= 0 ? ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, m->mem.index) : 0);
    out->scale = m->mem.scale;
    out->seg = m->mem.segment == ZYDIS_REGISTER_FS ? 1 : m->mem.segment == ZYDIS_REGISTER_GS ? 2 : 0;
    out->disp = m->mem.disp.value;
    uint64_t a = 0;
    out->kind = r ? mw_insn_address(out, ip, r, &a) : MW_INSN_MEM_UNKNOWN;
    if (out->kind == MW_INSN_MEM)
        out->addr = a;
    return out->length;
}

#else /* !MW_HAVE_ZYDIS */

int mw_insn_available(const char **why)
{
    if (why)
        *why = "this memwatch was built without Zydis (libzydis-dev), which decodes the "
               "sampled instructions";
    return 0;
}

unsigned mw_insn_decode(const uint8_t *code, size_t len, uint64_t ip, const mw_insn_regs *r,
                        mw_insn *out)
{
    (void)code;
    (void)len;
    (void)ip;
    (void)r;
    memset(out, 0, sizeof *out);
    return 0;
}
#endif
