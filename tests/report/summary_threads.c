/*
 * summary_threads: a program with a main thread that does most of the work
 * and two named helper threads, for the summary's thread list
 * (tests/report/test_summary_threads.sh).
 *
 *   usage: summary_threads [main ms of CPU time (600)] [helper ms (150)] [exit]
 *
 * With "exit", helper-b ends the process (exit after helper-a is done) while
 * the main thread waits in pthread_join: the main thread gets no CPU record
 * of its own.
 *
 * The main thread works first alone, then starts the helpers ("helper-a",
 * "helper-b"), each working its own ms of CPU time, and joins them. All work
 * is counted in the thread's own CPU time, so the split is the same however
 * busy the machine is.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static double thread_cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static __attribute__((noinline)) void spin(int ms)
{
    double end = thread_cpu_ms() + ms;
    uint64_t s = 1;
    while (thread_cpu_ms() < end)
        for (int i = 0; i < 20000; i++)
            s = s * 6364136223846793005ull + 1442695040888963407ull;
    sink = s;
}

static int helper_ms, exit_from_helper;
static pthread_t ta, tb;
static char name_a[] = "helper-a", name_b[] = "helper-b";

static void *helper(void *arg)
{
    pthread_setname_np(pthread_self(), (const char *)arg);
    spin(helper_ms);
    if (exit_from_helper && arg == name_b) {
        pthread_join(ta, NULL);
        printf("done\n");
        exit(0);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int main_ms = argc > 1 ? atoi(argv[1]) : 600;
    helper_ms = argc > 2 ? atoi(argv[2]) : 150;
    exit_from_helper = argc > 3;
    spin(main_ms);
    if (pthread_create(&ta, NULL, helper, name_a) || pthread_create(&tb, NULL, helper, name_b))
        return 1;
    if (!exit_from_helper)
        pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    printf("done\n");
    return 0;
}
