/*
 * bench/switch_cost.c: microseconds per round trip of a byte between two
 * threads (or, with "proc", two processes) pinned to one CPU through two
 * pipes: every round trip is two context switches. Built and run by
 * bench/switch_cost.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int p1[2], p2[2];

static void *peer(void *arg)
{
    char c;
    while (read(p1[0], &c, 1) == 1)
        if (write(p2[1], &c, 1) != 1)
            break;
    return arg;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int proc = argc > 2 && !strcmp(argv[2], "proc");
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(0, &s);
    sched_setaffinity(0, sizeof s, &s);
    if (pipe(p1) || pipe(p2))
        return 1;
    if (proc) {
        if (fork() == 0) {
            close(p1[1]);
            peer(NULL);
            _exit(0);
        }
    } else {
        pthread_t t;
        pthread_create(&t, NULL, peer, NULL);
    }
    struct timespec a, b;
    char c = 'x';
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++)
        if (write(p1[1], &c, 1) != 1 || read(p2[0], &c, 1) != 1)
            return 1;
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.2f\n", ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n / 1000);
    return 0;
}
