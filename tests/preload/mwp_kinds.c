/*
 * tests/preload/mwp_kinds.c: programs memwatch used to record wrongly
 * (issue 37, "Programs"), for tests/preload/cases.sh:
 *
 *   mwp_kinds rawexit MS [begun]  MS ms of CPU ("begun": and on while
 *                              memwatch has not begun recording: a loaded
 *                              machine's CPU-time timers fire late), then a
 *                              raw exit_group(3) system call: no libc exit,
 *                              no destructor (as Go programs end)
 *   mwp_kinds blocksig MS [PRE]  PRE ms of CPU (default 0; "begun": as
 *                              long as memwatch has not begun recording),
 *                              then every signal blocked (sigprocmask), MS
 *                              ms of CPU and on while no signal is pending
 *                              (a loaded machine's CPU-time timers fire
 *                              late), then exit(0); with a fourth word
 *                              "count" it then takes memwatch's pending
 *                              SIGRTMAX-3 signals itself and prints how
 *                              many were queued ("blocksig: N queued")
 *   mwp_kinds threads N US     N threads one after another, each US us of
 *                              CPU, then exit(0)
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mwp_begun.h"

static double cpu_us(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* us microseconds of this thread's CPU time */
static void spin(double us)
{
    volatile unsigned long x = 0;
    double t0 = cpu_us(CLOCK_THREAD_CPUTIME_ID);
    while (cpu_us(CLOCK_THREAD_CPUTIME_ID) - t0 < us)
        for (int i = 0; i < 2000; i++)
            x += (unsigned long)i;
}

static void *thr(void *a)
{
    spin(*(double *)a);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "rawexit")) {
        spin(atof(argv[2]) * 1e3);
        for (int i = 0; argc >= 4 && !strcmp(argv[3], "begun") && i < 1000 && !recording_begun(); i++)
            spin(5e3);
        syscall(SYS_exit_group, 3);
    } else if (argc >= 3 && !strcmp(argv[1], "blocksig")) {
        sigset_t all, pend;
        if (argc >= 4 && !strcmp(argv[3], "begun")) {
            for (int i = 0; i < 1000 && !recording_begun(); i++)
                spin(5e3);
        } else {
            spin(argc >= 4 ? atof(argv[3]) * 1e3 : 0);
        }
        sigfillset(&all);
        sigprocmask(SIG_BLOCK, &all, NULL);
        spin(atof(argv[2]) * 1e3);
        for (int i = 0; atof(argv[2]) > 0 && i < 1000; i++) {
            int any = 0;
            sigemptyset(&pend);
            sigpending(&pend);
            for (int k = 1; k < NSIG; k++) /* (glibc's sigisemptyset sees no real-time signal) */
                any |= sigismember(&pend, k) == 1;
            if (any)
                break;
            spin(5e3);
        }
        if (argc >= 5 && !strcmp(argv[4], "count")) {
            sigset_t one;
            sigemptyset(&one);
            sigaddset(&one, SIGRTMAX - 3);
            struct timespec zero = {0, 0};
            int n = 0;
            while (n < 100000 && sigtimedwait(&one, NULL, &zero) > 0)
                n++;
            printf("blocksig: %d queued\n", n);
        }
        return 0;
    } else if (argc >= 4 && !strcmp(argv[1], "threads")) {
        int n = atoi(argv[2]);
        double us = atof(argv[3]);
        for (int i = 0; i < n; i++) {
            pthread_t t;
            if (pthread_create(&t, NULL, thr, &us)) {
                perror("pthread_create");
                return 1;
            }
            pthread_join(t, NULL);
        }
        return 0;
    }
    fprintf(stderr, "usage: mwp_kinds rawexit MS | blocksig MS [PRE] | threads N US\n");
    return 2;
}
