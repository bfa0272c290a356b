/*
 * tests/fuzz/fuzz_format.c: libFuzzer target for the sysfs format-string
 * parser (mw_format_parse) and the cpumask list parser (mw_cpulist_parse).
 * Any input must give 0 or a negative code with a reason, never a crash, and a
 * successful parse must be self-consistent (word 0..3, non-empty mask,
 * width == popcount(mask), sorted CPU list within bounds).
 */
#include <memwatch/pmu.h>

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;

    mw_format_field f;
    char why[128];
    why[0] = 0;
    int rc = mw_format_parse(s, &f, why, sizeof why);
    if (rc == 0) {
        if (f.word > 3 || f.mask == 0 || f.width != (unsigned)__builtin_popcountll(f.mask))
            abort();
    } else if (rc != MW_ERR_PARSE || !why[0] || !memchr(why, 0, sizeof why)) {
        abort();
    }

    int cpus[256];
    int n = mw_cpulist_parse(s, cpus, 256);
    if (n > 256)
        abort();
    for (int i = 1; i < n; i++)
        if (cpus[i] < cpus[i - 1] || cpus[i] < 0)
            abort();
    if (n < 0 && n != MW_ERR_PARSE && n != MW_ERR_TOOBIG)
        abort();
    free(s);
    return 0;
}
