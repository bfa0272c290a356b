/*
 * tests/preload/test_alloc_sample.c: the allocation sampling rule of
 * preload/alloc_sites.c (pure functions, compiled here alone): a site's
 * first MWP_SITE_FULL allocations are all recorded; then periods of 2, 4,
 * ... up to MWP_SITE_MAXPER, each recorded allocation drawing the ordinal of
 * the next (mwp_alloc_sample_next), as mwp_alloc_site_take applies it; the
 * expected number recorded of 300,000 and the bound the docs state
 * (docs/overhead.md, "Allocation churn").
 */
#define MWP_ALLOC_SITES_RULE_ONLY 1
#include "../../preload/alloc_sites.c"

#include "mw_test.h"

/* 1: the site's allocation of ordinal i is recorded, the allocations before
 * it having been offered in order (*next: the site's next recorded ordinal,
 * 0 for a new site), as mwp_alloc_site_take decides */
static int take(uint64_t key, uint64_t i, uint64_t *next)
{
    if (i < *next)
        return 0;
    uint64_t nx = mwp_alloc_sample_next(key, i);
    MW_CHECK(nx > i, "next %llu after %llu", (unsigned long long)nx, (unsigned long long)i);
    *next = nx;
    return 1;
}

static uint64_t recorded(uint64_t key, uint64_t n)
{
    uint64_t r = 0, next = 0;
    for (uint64_t i = 0; i < n; i++)
        r += (uint64_t)take(key, i, &next);
    return r;
}

int main(void)
{
    /* the first 32: every one */
    uint64_t next = 0;
    for (uint64_t i = 0; i < MWP_SITE_FULL; i++) {
        MW_CHECK_U64(mwp_alloc_sample_period(i), 1);
        MW_CHECK(take(0x401234, i, &next), "allocation %llu of a site not recorded",
                 (unsigned long long)i);
    }
    /* the gaps after: from 1 to 2p - 1, the period p at the next ordinal */
    for (uint64_t i = MWP_SITE_FULL - 1; i < 100000; i += 7) {
        uint64_t p = mwp_alloc_sample_period(i + 1), g = mwp_alloc_sample_next(0x401234, i) - i;
        MW_CHECK(g >= 1 && g <= 2 * p - 1, "gap %llu after %llu, period %llu",
                 (unsigned long long)g, (unsigned long long)i, (unsigned long long)p);
    }
    /* periods: 2 for [32, 64), 4 for [64, 128), ..., capped */
    MW_CHECK_U64(mwp_alloc_sample_period(32), 2);
    MW_CHECK_U64(mwp_alloc_sample_period(63), 2);
    MW_CHECK_U64(mwp_alloc_sample_period(64), 4);
    MW_CHECK_U64(mwp_alloc_sample_period(8191), 256);
    MW_CHECK_U64(mwp_alloc_sample_period(16384), MWP_SITE_MAXPER);
    MW_CHECK_U64(mwp_alloc_sample_period(UINT64_MAX), MWP_SITE_MAXPER);
    /* each doubling records about 16 more; 300,000 record about 32 + 9 * 16 +
     * 283,616 / 1024 = 453, for any site key */
    uint64_t keys[] = {0x401234, 0x7f0011223344, 1, 0xdeadbeef};
    for (unsigned k = 0; k < 4; k++) {
        uint64_t r = recorded(keys[k], 300000);
        MW_CHECK(r >= 380 && r <= 530, "key %llx: %llu of 300000 recorded, expected about 453",
                 (unsigned long long)keys[k], (unsigned long long)r);
        uint64_t r2 = recorded(keys[k], 64);
        MW_CHECK(r2 >= 40 && r2 <= 60, "key %llx: %llu of 64 recorded, expected about 48",
                 (unsigned long long)keys[k], (unsigned long long)r2);
    }
    /* no aliasing with a program's period: of every other allocation (the
     * long-lived one of a pair), about half of those recorded */
    uint64_t even = 0, all = 0;
    next = 16384;
    for (uint64_t i = 16384; i < 16384 + (1u << 20); i++)
        if (take(0x401234, i, &next)) {
            all++;
            even += (i & 1) == 0;
        }
    MW_CHECK(all > 800 && all < 1300, "%llu of 2^20 recorded at 1 in 1024",
             (unsigned long long)all);
    MW_CHECK(even * 10 > all * 4 && even * 10 < all * 6, "%llu of %llu recorded are even",
             (unsigned long long)even, (unsigned long long)all);
    return mw_test_done_named("test_alloc_sample");
}
