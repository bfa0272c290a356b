/*
 * tests/mw_test.h: memwatch's tiny test harness. Each check records its source
 * line; a table-driven test passes the table row's line with MW_CHECK_AT.
 * main() ends with `return mw_test_done();`, which prints
 * "<name>: N passed, N failed" and returns 0 or 1. mw_test_skip() prints
 * "SKIP: reason" and exits 77 (ctest counts the test as skipped).
 */
#ifndef MW_TEST_H
#define MW_TEST_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mw_t_pass, mw_t_fail;

#define MW_CHECK_AT(file, line, cond, ...)                                                     \
    do {                                                                                       \
        if (cond) {                                                                            \
            mw_t_pass++;                                                                       \
        } else {                                                                               \
            mw_t_fail++;                                                                       \
            fprintf(stderr, "%s:%d: FAILED: %s: ", file, line, #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fputc('\n', stderr);                                                               \
        }                                                                                      \
    } while (0)

#define MW_CHECK(cond, ...) MW_CHECK_AT(__FILE__, __LINE__, cond, __VA_ARGS__)
#define MW_CHECK_INT(a, b)                                                                     \
    do {                                                                                       \
        long long mw_a_ = (long long)(a), mw_b_ = (long long)(b);                              \
        MW_CHECK(mw_a_ == mw_b_, "%s = %lld, expected %lld", #a, mw_a_, mw_b_);                \
    } while (0)
#define MW_CHECK_U64(a, b)                                                                     \
    do {                                                                                       \
        uint64_t mw_a_ = (uint64_t)(a), mw_b_ = (uint64_t)(b);                                 \
        MW_CHECK(mw_a_ == mw_b_, "%s = 0x%" PRIx64 ", expected 0x%" PRIx64, #a, mw_a_, mw_b_); \
    } while (0)
#define MW_CHECK_STR(a, b)                                                                     \
    do {                                                                                       \
        const char *mw_a_ = (a), *mw_b_ = (b);                                                 \
        MW_CHECK(mw_a_ && mw_b_ && !strcmp(mw_a_, mw_b_), "%s = \"%s\", expected \"%s\"", #a,  \
                 mw_a_ ? mw_a_ : "(null)", mw_b_ ? mw_b_ : "(null)");                          \
    } while (0)
#define MW_CHECK_NEAR(a, b, rel)                                                               \
    do {                                                                                       \
        double mw_a_ = (double)(a), mw_b_ = (double)(b);                                       \
        MW_CHECK(fabs(mw_a_ - mw_b_) <= (rel) * fabs(mw_b_), "%s = %g, expected %g within %g", \
                 #a, mw_a_, mw_b_, (double)(rel));                                             \
    } while (0)

static inline void mw_test_skip(const char *reason)
{
    printf("SKIP: %s\n", reason);
    fflush(stdout);
    exit(77);
}

static inline int mw_test_done_named(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, mw_t_pass, mw_t_fail);
    if (mw_t_pass + mw_t_fail == 0) {
        fprintf(stderr, "%s: no check ran\n", name);
        return 1;
    }
    return mw_t_fail ? 1 : 0;
}
#define mw_test_done() mw_test_done_named(__FILE__)

#endif
