/*
 * tests/report/report_test.h: what test_report_ingest and test_stack_limits
 * both need besides mwr_build.h: the load range of the test program itself
 * (for the mmap records of its synthetic raw files), a sample record with the
 * registers and stack copy of a capture (tests/symbolize/uwfuncs.h) and a
 * one-number query of the report database.
 */
#ifndef MW_TEST_REPORT_TEST_H
#define MW_TEST_REPORT_TEST_H

#include "symbolize/uwfuncs.h"

#include <linux/perf_event.h>
#include <link.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The main program's load bias and the span of its PT_LOAD segments. */
struct self {
    uint64_t base, start, end;
};
/* dl_iterate_phdr callback filling a struct self (data) from the main program
 * (the object with an empty name). */
static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct self *s = data;
    if (info->dlpi_name && info->dlpi_name[0])
        return 0;
    s->base = info->dlpi_addr;
    s->start = UINT64_MAX;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type != PT_LOAD)
            continue;
        uint64_t lo = info->dlpi_addr + p->p_vaddr, hi = lo + p->p_memsz;
        s->start = lo < s->start ? lo : s->start;
        s->end = hi > s->end ? hi : s->end;
    }
    return 1;
}

/* A perf sample record at time t (pid and tid 4242) with the user registers of
 * uc and the stack copy stack[0..stack_size) in whole words, no call chain:
 * sample_type IP | TID | TIME | REGS_USER | STACK_USER. Returns its size. */
static size_t regs_stack_sample(unsigned char *buf, uint64_t t, const ucontext_t *uc,
                                const unsigned char *stack, size_t stack_size)
{
    uint64_t regs[17];
    uw_perf_regs(uc, regs);
    size_t n = 8, dyn = stack_size & ~(size_t)7;
    uint64_t v;
#define P64(x)                                                                                     \
    do {                                                                                           \
        v = (x);                                                                                   \
        memcpy(buf + n, &v, 8);                                                                    \
        n += 8;                                                                                    \
    } while (0)
    P64(regs[8]);                 /* ip */
    P64(4242ull | 4242ull << 32); /* pid, tid */
    P64(t);                       /* time */
    P64(2);                       /* regs abi 64 */
    for (int i = 0; i < 17; i++)
        P64(regs[i]);
    P64(dyn); /* stack size */
    memcpy(buf + n, stack, dyn);
    n += dyn;
    P64(dyn); /* dyn size */
#undef P64
    struct perf_event_header h = {PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, (uint16_t)n};
    memcpy(buf, &h, sizeof h);
    return n;
}

/* The first column of the first row of sql: -1 without a row, -2 when sql
 * does not prepare (said on stderr), -3 for NULL. */
static int64_t q1(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *s;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
        fprintf(stderr, "sql: %s: %s\n", sql, sqlite3_errmsg(db));
        return -2;
    }
    if (sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_type(s, 0) == SQLITE_NULL ? -3 : sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

#endif
