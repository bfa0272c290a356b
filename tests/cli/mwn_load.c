/*
 * tests/cli/mwn_load.c: CPU loads for tests/cli/test_record_neighbours.sh.
 *
 *   mwn_load spin SECONDS [THREADS]   THREADS (default 1) busy loops
 *   mwn_load hog SECONDS [THREADS]    the same, named mwn_hog: the neighbour
 *   mwn_load light SECONDS            2 ms of CPU every 20 ms (about 0.1 CPU)
 *
 * Exits 0 after SECONDS of wall time; 2 on bad arguments.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

static double now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double end_at;

static void *spin(void *arg)
{
    (void)arg;
    volatile unsigned long x = 0;
    while (now(CLOCK_MONOTONIC) < end_at)
        for (int i = 0; i < 100000; i++)
            x += (unsigned long)i;
    return NULL;
}

/* A little CPU, mostly asleep: the program that does little memory work. */
static void light(void)
{
    while (now(CLOCK_MONOTONIC) < end_at) {
        double c0 = now(CLOCK_THREAD_CPUTIME_ID);
        volatile unsigned long x = 0;
        while (now(CLOCK_THREAD_CPUTIME_ID) - c0 < 0.002)
            for (int i = 0; i < 1000; i++)
                x += (unsigned long)i;
        struct timespec ts = {0, 18000000};
        nanosleep(&ts, NULL);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: mwn_load spin|hog|light SECONDS [THREADS]\n");
        return 2;
    }
    double secs = atof(argv[2]);
    int threads = argc > 3 ? atoi(argv[3]) : 1;
    if (!(secs > 0) || threads < 1 || threads > 64) {
        fprintf(stderr, "mwn_load: bad SECONDS or THREADS\n");
        return 2;
    }
    end_at = now(CLOCK_MONOTONIC) + secs;
    if (!strcmp(argv[1], "light")) {
        light();
        return 0;
    }
    if (strcmp(argv[1], "spin") && strcmp(argv[1], "hog")) {
        fprintf(stderr, "mwn_load: unknown mode %s\n", argv[1]);
        return 2;
    }
    if (!strcmp(argv[1], "hog"))
        prctl(PR_SET_NAME, "mwn_hog", 0, 0, 0);
    pthread_t t[64];
    for (int i = 1; i < threads; i++)
        pthread_create(&t[i], NULL, spin, NULL);
    spin(NULL);
    for (int i = 1; i < threads; i++)
        pthread_join(t[i], NULL);
    return 0;
}
