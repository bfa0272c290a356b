/*
 * tests/symbolize/test_demangle.c: names for display (mw_sym_demangle): C++
 * names demangled through the C++ runtime, everything else left as it is,
 * with or without an offset ("+0x30a0", kept after the name), one
 * caller-owned buffer reused and grown across calls. Skipped, with the
 * reason, where no C++ runtime (libstdc++.so.6) can be loaded.
 */
#include <memwatch/symbolize.h>

#include "../mw_test.h"

#define CHECK_NAME(in, want)                                                                   \
    do {                                                                                       \
        const char *got_ = mw_sym_demangle(in, &buf, &cap);                                    \
        MW_CHECK(got_ && !strcmp(got_, want), "%s -> '%s', expected '%s'", in,                 \
                 got_ ? got_ : "(null)", want);                                                \
    } while (0)

int main(void)
{
    const char *why = NULL;
    if (!mw_sym_demangler(&why))
        mw_test_skip(why ? why : "no C++ runtime");
    char *buf = NULL;
    size_t cap = 0;
    /* not mangled: the very same string, the buffer untouched */
    const char *plain = "main";
    MW_CHECK(mw_sym_demangle(plain, &buf, &cap) == plain, "a C name was changed");
    MW_CHECK(buf == NULL && cap == 0, "a C name allocated a buffer");
    MW_CHECK(mw_sym_demangle(NULL, &buf, &cap) == NULL, "NULL is not passed through");
    CHECK_NAME("_ZN2ns3hotEi", "ns::hot(int)");
    MW_CHECK(buf != NULL && cap > strlen("ns::hot(int)"), "buffer %p of %zu bytes", (void *)buf, cap);
    /* longer than the buffer so far: grown, and still right */
    CHECK_NAME("_ZNSt6vectorIiSaIiEE9push_backERKi",
               "std::vector<int, std::allocator<int> >::push_back(int const&)");
    size_t grown = cap;
    MW_CHECK(grown > strlen("std::vector<int, std::allocator<int> >::push_back(int const&)"),
             "buffer of %zu bytes after a longer name", grown);
    /* shorter again: the same buffer */
    char *before = buf;
    CHECK_NAME("_ZN6mwtest4Grid4fillEi", "mwtest::Grid::fill(int)");
    MW_CHECK(buf == before && cap == grown, "the buffer moved for a shorter name");
    /* a data symbol (a static member) and a Rust legacy name */
    CHECK_NAME("_ZN6mwtest4Grid5cellsE", "mwtest::Grid::cells");
    CHECK_NAME("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write::h0123456789abcdef");
    /* with an offset (a nearest-symbol hint, perf-map names): demangled, offset kept */
    CHECK_NAME("_Z14debug_df_chainP7df_link+0x30a0", "debug_df_chain(df_link*)+0x30a0");
    CHECK_NAME("_ZN2ns3hotEi+0x10", "ns::hot(int)+0x10");
    const char *badoff = "_Z_not_a_name+0x10";
    MW_CHECK(mw_sym_demangle(badoff, &buf, &cap) == badoff,
             "an invalid name with offset was changed");
    const char *notoff = "_ZN2ns3hotEi+0xzz";
    MW_CHECK(mw_sym_demangle(notoff, &buf, &cap) == notoff, "a name with a bad offset was changed");
    /* "_Z" that is not a valid mangled name: the string itself, nothing lost */
    const char *bad = "_Z_not_a_name";
    MW_CHECK(mw_sym_demangle(bad, &buf, &cap) == bad, "an invalid name was changed");
    CHECK_NAME("_ZN2ns3hotEi", "ns::hot(int)"); /* the buffer still works after a failure */
    free(buf);
    return mw_test_done();
}
