/*
 * sampling/datasrc.c: union perf_mem_data_src -> where a sampled access was
 * served from (memory level, hit/miss, remote, hops), TLB, snoop and lock.
 *
 * Owns: the bit layout of perf_mem_data_src (kernel ABI, little-endian
 * bitfields: op 0-4, lvl 5-18, snoop 19-23, lock 24-25, dtlb 26-32,
 * lvl_num 33-36, remote 37, snoopx 38-39, blk 40-42, hops 43-45) as tables.
 * The newer composite fields (lvl_num, remote, snoopx, hops) win over the
 * older PERF_MEM_LVL_* bits when the kernel fills them.
 * May call: libc. Threading: pure, reentrant.
 */
#include <memwatch/decode.h>

#include <stdio.h>

#define BITS(v, shift, width) ((unsigned)(((v) >> (shift)) & ((1u << (width)) - 1)))

static const char *const level_names[MW_MEM_LEVEL_COUNT] = {
    [MW_MEM_NA] = "n/a",
    [MW_MEM_L1] = "L1",
    [MW_MEM_LFB] = "LFB",
    [MW_MEM_L2] = "L2",
    [MW_MEM_L3] = "L3",
    [MW_MEM_L4] = "L4",
    [MW_MEM_ANY_CACHE] = "any cache",
    [MW_MEM_LOCAL_DRAM] = "local DRAM",
    [MW_MEM_REMOTE_DRAM] = "remote DRAM",
    [MW_MEM_REMOTE_CACHE] = "remote cache",
    [MW_MEM_PMEM] = "PMEM",
    [MW_MEM_CXL] = "CXL",
    [MW_MEM_IO] = "I/O",
    [MW_MEM_UNCACHED] = "uncached",
};
static const char *const tlb_names[MW_TLB_COUNT] = {
    [MW_TLB_NA] = "n/a",     [MW_TLB_L1_HIT] = "L1 hit", [MW_TLB_L2_HIT] = "L2 hit",
    [MW_TLB_HIT] = "hit",    [MW_TLB_WALK] = "walk",     [MW_TLB_OS] = "OS fault",
    [MW_TLB_MISS] = "miss",
};
static const char *const snoop_names[MW_SNOOP_COUNT] = {
    [MW_SNOOP_NA] = "n/a",   [MW_SNOOP_NONE] = "none", [MW_SNOOP_HIT] = "hit",
    [MW_SNOOP_MISS] = "miss", [MW_SNOOP_HITM] = "HITM", [MW_SNOOP_FWD] = "forward",
    [MW_SNOOP_PEER] = "peer",
};
static const char *const op_names[MW_OP_COUNT] = {
    [MW_OP_NA] = "n/a", [MW_OP_LOAD] = "load", [MW_OP_STORE] = "store",
    [MW_OP_PREFETCH] = "prefetch", [MW_OP_EXEC] = "exec",
};

/* mem_lvl_num value -> level (0 = not set by the kernel). */
static const uint8_t lvlnum_map[16] = {
    [0x0] = MW_MEM_NA,        [0x1] = MW_MEM_L1,        [0x2] = MW_MEM_L2,
    [0x3] = MW_MEM_L3,        [0x4] = MW_MEM_L4,        [0x9] = MW_MEM_CXL,
    [0xa] = MW_MEM_IO,        [0xb] = MW_MEM_ANY_CACHE, [0xc] = MW_MEM_LFB,
    [0xd] = MW_MEM_LOCAL_DRAM, [0xe] = MW_MEM_PMEM,     [0xf] = MW_MEM_NA,
};

/* Old PERF_MEM_LVL_* bits, most distant level first (one wins). */
static const struct {
    unsigned bit;
    uint8_t level, remote, hops;
} lvl_bits[] = {
    {0x0200, MW_MEM_REMOTE_DRAM, 1, 3},  /* REM_RAM2 */
    {0x0100, MW_MEM_REMOTE_DRAM, 1, 2},  /* REM_RAM1 */
    {0x0800, MW_MEM_REMOTE_CACHE, 1, 3}, /* REM_CCE2 */
    {0x0400, MW_MEM_REMOTE_CACHE, 1, 2}, /* REM_CCE1 */
    {0x0080, MW_MEM_LOCAL_DRAM, 0, 0},   /* LOC_RAM */
    {0x1000, MW_MEM_IO, 0, 0},           /* IO */
    {0x2000, MW_MEM_UNCACHED, 0, 0},     /* UNC */
    {0x0040, MW_MEM_L3, 0, 0},
    {0x0020, MW_MEM_L2, 0, 0},
    {0x0010, MW_MEM_LFB, 0, 0},
    {0x0008, MW_MEM_L1, 0, 0},
};

void mw_mem_src_decode(uint64_t d, mw_mem_src *m)
{
    unsigned op = BITS(d, 0, 5), lvl = BITS(d, 5, 14), snoop = BITS(d, 19, 5),
             lock = BITS(d, 24, 2), tlb = BITS(d, 26, 7), lvlnum = BITS(d, 33, 4),
             remote = BITS(d, 37, 1), snoopx = BITS(d, 38, 2), blk = BITS(d, 40, 3),
             hops = BITS(d, 43, 3);
    memset(m, 0, sizeof *m);

    m->op = op & 0x02 ? MW_OP_LOAD : op & 0x04 ? MW_OP_STORE : op & 0x08 ? MW_OP_PREFETCH
          : op & 0x10 ? MW_OP_EXEC : MW_OP_NA;

    m->hit = lvl & 0x02 ? 1 : lvl & 0x04 ? 0 : -1;
    m->level = lvlnum_map[lvlnum];
    m->remote = (uint8_t)remote;
    m->hops = (uint8_t)hops;
    if (m->level != MW_MEM_NA) {
        if (remote) {
            if (m->level == MW_MEM_LOCAL_DRAM)
                m->level = MW_MEM_REMOTE_DRAM;
            else if (m->level <= MW_MEM_ANY_CACHE)
                m->level = MW_MEM_REMOTE_CACHE;
        }
    } else if (!(lvl & 0x01)) {
        for (size_t i = 0; i < sizeof lvl_bits / sizeof lvl_bits[0]; i++)
            if (lvl & lvl_bits[i].bit) {
                m->level = lvl_bits[i].level;
                if (lvl_bits[i].remote)
                    m->remote = 1;
                if (!m->hops)
                    m->hops = lvl_bits[i].hops;
                break;
            }
    }

    if (tlb & 0x01 || tlb == 0)
        m->tlb = MW_TLB_NA;
    else if (tlb & 0x40)
        m->tlb = MW_TLB_OS;
    else if (tlb & 0x02)
        m->tlb = tlb & 0x08 ? MW_TLB_L1_HIT : tlb & 0x10 ? MW_TLB_L2_HIT : tlb & 0x20 ? MW_TLB_WALK
                                                                                   : MW_TLB_HIT;
    else if (tlb & 0x04)
        m->tlb = tlb & 0x20 ? MW_TLB_WALK : MW_TLB_MISS;
    else
        m->tlb = MW_TLB_NA;

    if (snoopx & 0x01)
        m->snoop = MW_SNOOP_FWD;
    else if (snoopx & 0x02)
        m->snoop = MW_SNOOP_PEER;
    else if (snoop & 0x10)
        m->snoop = MW_SNOOP_HITM;
    else if (snoop & 0x04)
        m->snoop = MW_SNOOP_HIT;
    else if (snoop & 0x08)
        m->snoop = MW_SNOOP_MISS;
    else if (snoop & 0x02)
        m->snoop = MW_SNOOP_NONE;
    else
        m->snoop = MW_SNOOP_NA;

    m->lock = lock & 0x02 ? 1 : (lock & 0x01 || lock == 0) ? -1 : 0;
    m->blk = (uint8_t)blk;
}

const char *mw_mem_level_name(unsigned level)
{
    return level < MW_MEM_LEVEL_COUNT ? level_names[level] : "?";
}
const char *mw_mem_tlb_name(unsigned tlb) { return tlb < MW_TLB_COUNT ? tlb_names[tlb] : "?"; }
const char *mw_mem_snoop_name(unsigned s) { return s < MW_SNOOP_COUNT ? snoop_names[s] : "?"; }
const char *mw_mem_op_name(unsigned op) { return op < MW_OP_COUNT ? op_names[op] : "?"; }

int mw_mem_level_is_memory(unsigned level)
{
    return level == MW_MEM_LOCAL_DRAM || level == MW_MEM_REMOTE_DRAM || level == MW_MEM_PMEM ||
           level == MW_MEM_CXL;
}

static const char *const hop_names[8] = {"", "remote core", "remote node", "remote socket",
                                         "remote board", "hop 5", "hop 6", "hop 7"};

int mw_mem_src_format(const mw_mem_src *m, char *buf, size_t n)
{
    int k = snprintf(buf, n, "%s, %s%s%s%s%s", mw_mem_op_name(m->op), mw_mem_level_name(m->level),
                     m->hit == 1 ? " hit" : m->hit == 0 ? " miss" : "",
                     m->hops ? " (" : "", m->hops < 8 ? hop_names[m->hops] : "", m->hops ? ")" : "");
    if (k < 0 || (size_t)k >= n)
        return k;
    k += snprintf(buf + k, n - (size_t)k, ", TLB %s, snoop %s%s", mw_mem_tlb_name(m->tlb),
                  mw_mem_snoop_name(m->snoop), m->lock == 1 ? ", locked" : "");
    return k;
}
