/*
 * tests/preload/mwp_store.c: a write-heavy program, the kind that
 * docs/saturation.md judges against the reads50 curve. THREADS threads each
 * store over their own part of one array for SECONDS and read nothing back:
 * with plain stores every line is first read for ownership and then written
 * back (half the memory traffic reads, the reads50 mix); with `nt` the stores
 * are non-temporal (streaming, no read for ownership; the nt50 curve is the
 * closest). The array is MIB MiB in all (default 256), far past the caches.
 *
 * usage: mwp_store THREADS SECONDS [MIB] [plain|nt]
 * prints one line: threads=N seconds=S mib=M mode=plain|nt passes=P gbs=G
 * (G: bytes stored per second, all threads; the read-for-ownership traffic
 * of plain stores comes on top). Exit 0, or 2 on bad arguments.
 * Used by tests/preload/cases.sh (case mixstore) and docs/saturation.md.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

struct part {
    uint64_t *p;
    size_t words;
    double until;
    int nt;
    unsigned long passes;
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *storer(void *arg)
{
    struct part *w = arg;
    uint64_t v = 1;
    while (now_s() < w->until) {
#if defined(__x86_64__)
        if (w->nt) {
            for (size_t i = 0; i < w->words; i++)
                _mm_stream_si64((long long *)&w->p[i], (long long)(v + i));
            _mm_sfence();
        } else
#endif
        {
            volatile uint64_t *q = w->p; /* one 8-byte store each, not a memset call */
            for (size_t i = 0; i < w->words; i++)
                q[i] = v + i;
        }
        v++;
        w->passes++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: mwp_store THREADS SECONDS [MIB] [plain|nt]\n");
        return 2;
    }
    char *e;
    long nth = strtol(argv[1], &e, 10);
    if (*e || nth < 1 || nth > 256) {
        fprintf(stderr, "mwp_store: THREADS must be 1 to 256, not '%s'\n", argv[1]);
        return 2;
    }
    double secs = strtod(argv[2], &e);
    if (*e || !(secs > 0 && secs <= 3600)) {
        fprintf(stderr, "mwp_store: SECONDS must be above 0 and at most 3600, not '%s'\n",
                argv[2]);
        return 2;
    }
    long mib = 256;
    if (argc > 3) {
        mib = strtol(argv[3], &e, 10);
        if (*e || mib < 1 || mib > (1L << 20)) {
            fprintf(stderr, "mwp_store: MIB must be 1 to 1048576, not '%s'\n", argv[3]);
            return 2;
        }
    }
    int nt = 0;
    if (argc > 4) {
        if (!strcmp(argv[4], "nt"))
            nt = 1;
        else if (strcmp(argv[4], "plain")) {
            fprintf(stderr, "mwp_store: mode must be plain or nt, not '%s'\n", argv[4]);
            return 2;
        }
    }
#if !defined(__x86_64__)
    if (nt) {
        fprintf(stderr, "mwp_store: non-temporal stores need x86-64\n");
        return 2;
    }
#endif
    size_t bytes = (size_t)mib << 20;
    uint64_t *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED) {
        perror("mwp_store: mmap");
        return 1;
    }
    size_t words = bytes / 8, per = words / (size_t)nth / 8 * 8; /* whole lines */
    if (!per) {
        fprintf(stderr, "mwp_store: %ld MiB is too small for %ld threads\n", mib, nth);
        return 2;
    }
    struct part *w = calloc((size_t)nth, sizeof *w);
    pthread_t *t = calloc((size_t)nth, sizeof *t);
    if (!w || !t)
        return 1;
    double t0 = now_s();
    for (long i = 0; i < nth; i++) {
        w[i] = (struct part){.p = a + (size_t)i * per, .words = per, .until = t0 + secs, .nt = nt};
        if (pthread_create(&t[i], NULL, storer, &w[i])) {
            perror("mwp_store: pthread_create");
            return 1;
        }
    }
    unsigned long passes = 0;
    for (long i = 0; i < nth; i++) {
        pthread_join(t[i], NULL);
        passes += w[i].passes;
    }
    double el = now_s() - t0;
    printf("threads=%ld seconds=%.2f mib=%ld mode=%s passes=%lu gbs=%.2f\n", nth, el, mib,
           nt ? "nt" : "plain", passes, (double)passes * (double)per * 8 / el / 1e9);
    free(w);
    free(t);
    munmap(a, bytes);
    return 0;
}
