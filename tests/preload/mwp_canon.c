/*
 * tests/preload/mwp_canon.c: a program built without PIE that takes
 * malloc's address (as Debian's python3 does): the loader gives malloc its
 * canonical address in this executable's PLT, an undefined symbol with a
 * value, and calls through it reach libmemwatch.so's malloc. The "canon"
 * case checks that memwatch does not take it for an allocator of the
 * program's own. Usage: mwp_canon MS (ms of CPU time, then exit).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void *(*volatile mwp_canon_malloc)(size_t);

int main(int argc, char **argv)
{
    /* in code built without PIE: an absolute address in an instruction,
     * which only a canonical PLT entry can give */
    mwp_canon_malloc = malloc;
    double ms = argc > 1 ? atof(argv[1]) : 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    uint64_t s = 0;
    do {
        char *p = mwp_canon_malloc(100 + (s & 63));
        if (!p)
            return 1;
        p[0] = (char)s;
        s += (uint64_t)p[0] + 1;
        free(p);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) * 1e3 + (double)(t.tv_nsec - t0.tv_nsec) / 1e6 < ms);
    printf("%llu\n", (unsigned long long)s);
    return 0;
}
