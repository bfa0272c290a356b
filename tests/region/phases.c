/*
 * tests/region/phases.c: a program with three marked phases per thread:
 * "triad" (a[i] = b[i] + s*c[i] over arrays far larger than the caches:
 * bandwidth-bound on a machine with enough cores), "compute" (a dependent
 * floating-point chain: no memory traffic), "chase" (a pointer chase through
 * a random cycle: latency-bound, one miss at a time, little bandwidth).
 *
 *   phases [threads] [rounds] [MiB per array] [ms per phase]
 *
 * Built twice from this source: with the regions (phases) and with
 * -DMW_REGIONS_OFF (phases_unmarked); both print the same checksums, and
 * neither needs libmemwatch.so.
 *
 * "phases bad" exercises bad region input instead (docs/regions.md):
 * unbalanced begins and ends, 10,000 distinct names, control characters, a
 * 1 MB name, an end without a begin, regions open across fork and exec.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <memwatch/region.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static size_t n_el;
static int rounds = 3;
static double phase_ms = 300;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

__attribute__((noinline)) static double phase_triad(double *a, const double *b, const double *c)
{
    double end = now_ms() + phase_ms, s = 0;
    while (now_ms() < end) {
        for (size_t i = 0; i < n_el; i++)
            a[i] = b[i] + 1.5 * c[i];
        s += a[n_el / 2];
    }
    return s > 0; /* the number of passes depends on the speed: print none of it */
}

__attribute__((noinline)) static double phase_compute(uint64_t seed)
{
    double end = now_ms() + phase_ms, x = 1.0 + (double)(seed % 7) / 100;
    while (now_ms() < end)
        for (int i = 0; i < 100000; i++)
            x = x * 1.0000001 + 1e-9 / x;
    return x > 0;
}

__attribute__((noinline)) static double phase_chase(const uint32_t *next)
{
    double end = now_ms() + phase_ms;
    uint32_t p = 0;
    uint64_t steps = 0;
    while (now_ms() < end) {
        for (int i = 0; i < 10000; i++)
            p = next[p];
        steps += 10000;
    }
    return steps > 0 && p < n_el;
}

struct arg {
    int id;
    double sum;
};

static void *worker(void *vp)
{
    struct arg *w = vp;
    double *a = malloc(n_el * sizeof *a), *b = malloc(n_el * sizeof *b),
           *c = malloc(n_el * sizeof *c);
    uint32_t *next = malloc(n_el * sizeof *next);
    if (!a || !b || !c || !next)
        exit(2);
    for (size_t i = 0; i < n_el; i++) {
        a[i] = 0;
        b[i] = (double)(i % 100);
        c[i] = (double)(i % 7);
        next[i] = (uint32_t)i;
    }
    /* one random cycle (Sattolo) */
    uint64_t r = 88172645463325252ull + (uint64_t)w->id;
    for (size_t i = n_el - 1; i > 0; i--) {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        size_t j = r % i;
        uint32_t t = next[i];
        next[i] = next[j];
        next[j] = t;
    }
    for (int k = 0; k < rounds; k++) {
        mw_region_begin("triad");
        w->sum += phase_triad(a, b, c);
        mw_region_end("triad");
        mw_region_begin("compute");
        w->sum += phase_compute((uint64_t)w->id);
        mw_region_end("compute");
        mw_region_begin("chase");
        w->sum += phase_chase(next);
        mw_region_end("chase");
    }
    free(a);
    free(b);
    free(c);
    free(next);
    return NULL;
}

static int bad(const char *self)
{
    /* unbalanced: begins never ended, ends never begun, crossed nesting */
    mw_region_begin("outer");
    mw_region_begin("inner");
    mw_region_end("outer"); /* ends inner too */
    mw_region_end("never-begun");
    mw_region_end(NULL);
    mw_region_begin(NULL);
    mw_region_end(NULL);
    /* control characters */
    mw_region_begin("tab\there\nnewline\x01");
    mw_region_end("tab\there\nnewline\x01");
    /* a 1 MB name */
    size_t big = 1u << 20;
    char *name = malloc(big + 1);
    if (!name)
        return 2;
    memset(name, 'x', big);
    name[big] = 0;
    mw_region_begin(name);
    mw_region_end(name);
    free(name);
    /* deep nesting */
    for (int i = 0; i < 100; i++)
        mw_region_begin("deep");
    for (int i = 0; i < 100; i++)
        mw_region_end("deep");
    /* a region open across fork: the child ends it, and opens one it never ends */
    mw_region_begin("across-fork");
    pid_t pid = fork();
    if (pid == 0) {
        mw_region_end("across-fork");
        mw_region_begin("child-open");
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    mw_region_end("across-fork");
    /* 60 ms of computing before the exec: the program's own intervals are
     * recorded (one ends every 10 ms) however loaded the machine */
    phase_ms = 60;
    (void)phase_compute(1);
    /* a region open across exec (the new image runs "phases execd"), with
     * 10,000 distinct names inside it */
    mw_region_begin("across-exec");
    char nm[32];
    for (int i = 0; i < 10000; i++) {
        snprintf(nm, sizeof nm, "name-%d", i);
        mw_region_begin(nm);
        mw_region_end(nm);
    }
    fflush(stdout);
    execl(self, self, "execd", (char *)NULL);
    perror("execl");
    return 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "bad"))
        return bad(argv[0]);
    if (argc > 1 && !strcmp(argv[1], "execd")) {
        mw_region_end("across-exec"); /* begun in the old image: an end without a begin here */
        printf("exec'ed image done\n");
        return 0;
    }
    int nthr = argc > 1 ? atoi(argv[1]) : 2;
    rounds = argc > 2 ? atoi(argv[2]) : 3;
    size_t mib = argc > 3 ? (size_t)atoi(argv[3]) : 32;
    phase_ms = argc > 4 ? atof(argv[4]) : 300;
    if (nthr < 1 || nthr > 1024 || rounds < 1 || mib < 1)
        return 2;
    n_el = mib * 1024 * 1024 / sizeof(double);
    pthread_t *t = calloc((size_t)nthr, sizeof *t);
    struct arg *w = calloc((size_t)nthr, sizeof *w);
    for (int i = 0; i < nthr; i++) {
        w[i].id = i;
        pthread_create(&t[i], NULL, worker, &w[i]);
    }
    double sum = 0;
    for (int i = 0; i < nthr; i++) {
        pthread_join(t[i], NULL);
        sum += w[i].sum;
    }
    printf("threads %d rounds %d checksum %.0f\n", nthr, rounds, sum);
    return 0;
}
