/*
 * tests/decode/test_datasrc.c: union perf_mem_data_src values built from the
 * kernel's PERF_MEM_* constants, decoded to memory level, hit/miss, remote and
 * hops, TLB, snoop and lock (table-driven; each row names its line).
 */
#include "mw_test.h"

#include <memwatch/decode.h>

#include <linux/perf_event.h>

#define S(a, s) PERF_MEM_S(a, s)

static const struct row {
    int line;
    uint64_t ds;
    int op, level, hit, remote, hops, tlb, snoop, lock;
    const char *text;
} rows[] = {
    {__LINE__, S(OP, LOAD) | S(LVL, HIT) | S(LVL, L1) | S(LVLNUM, L1) | S(TLB, HIT) | S(TLB, L1) |
                   S(SNOOP, NONE) | S(LOCK, NA),
     MW_OP_LOAD, MW_MEM_L1, 1, 0, 0, MW_TLB_L1_HIT, MW_SNOOP_NONE, -1, "load, L1 hit, TLB L1 hit, snoop none"},
    {__LINE__, S(OP, LOAD) | S(LVL, HIT) | S(LVL, LFB) | S(LVLNUM, LFB) | S(TLB, HIT) | S(TLB, L2),
     MW_OP_LOAD, MW_MEM_LFB, 1, 0, 0, MW_TLB_L2_HIT, MW_SNOOP_NA, -1, NULL},
    {__LINE__, S(OP, LOAD) | S(LVL, HIT) | S(LVL, L2) | S(LVLNUM, L2) | S(SNOOP, HIT),
     MW_OP_LOAD, MW_MEM_L2, 1, 0, 0, MW_TLB_NA, MW_SNOOP_HIT, -1, NULL},
    {__LINE__, S(OP, LOAD) | S(LVL, HIT) | S(LVL, L3) | S(LVLNUM, L3) | S(SNOOP, HITM) | S(LOCK, LOCKED),
     MW_OP_LOAD, MW_MEM_L3, 1, 0, 0, MW_TLB_NA, MW_SNOOP_HITM, 1, "load, L3 hit, TLB n/a, snoop HITM, locked"},
    {__LINE__, S(OP, LOAD) | S(LVL, MISS) | S(LVL, L3) | S(LVLNUM, RAM) | S(SNOOP, MISS) |
                   S(TLB, MISS) | S(TLB, WK),
     MW_OP_LOAD, MW_MEM_LOCAL_DRAM, 0, 0, 0, MW_TLB_WALK, MW_SNOOP_MISS, -1, NULL},
    {__LINE__, S(OP, LOAD) | S(LVL, HIT) | S(LVLNUM, RAM) | S(REMOTE, REMOTE) | S(HOPS, 2),
     MW_OP_LOAD, MW_MEM_REMOTE_DRAM, 1, 1, 3, MW_TLB_NA, MW_SNOOP_NA, -1,
     "load, remote DRAM hit (remote socket), TLB n/a, snoop n/a"},
    {__LINE__, S(OP, LOAD) | S(LVL, HIT) | S(LVLNUM, ANY_CACHE) | S(REMOTE, REMOTE) | S(HOPS, 1) |
                   S(SNOOPX, FWD),
     MW_OP_LOAD, MW_MEM_REMOTE_CACHE, 1, 1, 2, MW_TLB_NA, MW_SNOOP_FWD, -1, NULL},
    {__LINE__, S(OP, LOAD) | S(LVL, HIT) | S(LVLNUM, PMEM), MW_OP_LOAD, MW_MEM_PMEM, 1, 0, 0,
     MW_TLB_NA, MW_SNOOP_NA, -1, NULL},
    {__LINE__, S(OP, STORE) | S(LVL, HIT) | S(LVLNUM, CXL) | S(SNOOPX, PEER), MW_OP_STORE,
     MW_MEM_CXL, 1, 0, 0, MW_TLB_NA, MW_SNOOP_PEER, -1, NULL},
    /* old kernels: only the PERF_MEM_LVL_* bits */
    {__LINE__, S(OP, LOAD) | S(LVL, HIT) | S(LVL, LOC_RAM), MW_OP_LOAD, MW_MEM_LOCAL_DRAM, 1, 0,
     0, MW_TLB_NA, MW_SNOOP_NA, -1, NULL},
    {__LINE__, S(OP, LOAD) | S(LVL, HIT) | S(LVL, REM_RAM2), MW_OP_LOAD, MW_MEM_REMOTE_DRAM, 1, 1,
     3, MW_TLB_NA, MW_SNOOP_NA, -1, NULL},
    {__LINE__, S(OP, LOAD) | S(LVL, HIT) | S(LVL, REM_CCE1), MW_OP_LOAD, MW_MEM_REMOTE_CACHE, 1,
     1, 2, MW_TLB_NA, MW_SNOOP_NA, -1, NULL},
    {__LINE__, S(OP, LOAD) | S(LVL, MISS) | S(LVL, UNC), MW_OP_LOAD, MW_MEM_UNCACHED, 0, 0, 0,
     MW_TLB_NA, MW_SNOOP_NA, -1, NULL},
    {__LINE__, S(OP, PFETCH) | S(LVL, NA) | S(TLB, OS), MW_OP_PREFETCH, MW_MEM_NA, -1, 0, 0,
     MW_TLB_OS, MW_SNOOP_NA, -1, NULL},
    {__LINE__, S(OP, EXEC) | S(LVL, HIT) | S(LVL, IO) | S(LVLNUM, IO), MW_OP_EXEC, MW_MEM_IO, 1, 0,
     0, MW_TLB_NA, MW_SNOOP_NA, -1, NULL},
    {__LINE__, 0, MW_OP_NA, MW_MEM_NA, -1, 0, 0, MW_TLB_NA, MW_SNOOP_NA, -1,
     "n/a, n/a, TLB n/a, snoop n/a"},
};

int main(void)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct row *r = &rows[i];
        mw_mem_src m;
        mw_mem_src_decode(r->ds, &m);
        MW_CHECK_AT(__FILE__, r->line, m.op == r->op, "op %d, expected %d", m.op, r->op);
        MW_CHECK_AT(__FILE__, r->line, m.level == r->level, "level %s, expected %s",
                    mw_mem_level_name(m.level), mw_mem_level_name((unsigned)r->level));
        MW_CHECK_AT(__FILE__, r->line, m.hit == r->hit, "hit %d, expected %d", m.hit, r->hit);
        MW_CHECK_AT(__FILE__, r->line, m.remote == r->remote, "remote %d", m.remote);
        MW_CHECK_AT(__FILE__, r->line, m.hops == r->hops, "hops %d, expected %d", m.hops, r->hops);
        MW_CHECK_AT(__FILE__, r->line, m.tlb == r->tlb, "tlb %s, expected %s",
                    mw_mem_tlb_name(m.tlb), mw_mem_tlb_name((unsigned)r->tlb));
        MW_CHECK_AT(__FILE__, r->line, m.snoop == r->snoop, "snoop %s, expected %s",
                    mw_mem_snoop_name(m.snoop), mw_mem_snoop_name((unsigned)r->snoop));
        MW_CHECK_AT(__FILE__, r->line, m.lock == r->lock, "lock %d, expected %d", m.lock, r->lock);
        if (r->text) {
            char buf[200];
            mw_mem_src_format(&m, buf, sizeof buf);
            MW_CHECK_AT(__FILE__, r->line, !strcmp(buf, r->text), "text \"%s\", expected \"%s\"",
                        buf, r->text);
        }
    }
    MW_CHECK(mw_mem_level_is_memory(MW_MEM_LOCAL_DRAM) && !mw_mem_level_is_memory(MW_MEM_L3),
             "memory levels");
    MW_CHECK_STR(mw_mem_level_name(99), "?");
    return mw_test_done();
}
