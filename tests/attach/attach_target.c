/*
 * tests/attach/attach_target.c: a program to attach to (test_attach.sh).
 *
 * attach_target DIR: prints "ready PID MONO_NS" (CLOCK_MONOTONIC), starts a
 * worker thread, and both spin until DIR/go exists. When DIR/more appears
 * first, a late thread starts, spins until it has used 300 ms of CPU time,
 * prints "late TID" and spins on until DIR/go. When DIR/fork appears, the
 * main thread forks a child that spins in child_work until it has used
 * 400 ms of CPU time, prints "child PID" and exits 0 (reaped before the
 * end). Then the main thread does a
 * fixed computation and prints "result HEX": the same in every run, so a
 * test can tell the program's output was left unchanged.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char go_path[4096], more_path[4096], fork_path[4096];
static volatile double sink;

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin(void)
{
    double x = 0;
    for (int i = 0; i < 200000; i++)
        x += (double)i * 1e-9;
    sink = x;
}

static void *worker(void *arg)
{
    (void)arg;
    while (!exists(go_path))
        spin();
    return NULL;
}

static void *late(void *arg)
{
    (void)arg;
    double t0 = thread_cpu_s();
    while (thread_cpu_s() - t0 < 0.3)
        spin();
    printf("late %ld\n", (long)gettid());
    fflush(stdout);
    while (!exists(go_path))
        spin();
    return NULL;
}

__attribute__((noinline)) static void child_work(void)
{
    double t0 = thread_cpu_s();
    while (thread_cpu_s() - t0 < 0.4)
        spin();
    printf("child %ld\n", (long)getpid());
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: attach_target DIR\n");
        return 2;
    }
    snprintf(go_path, sizeof go_path, "%s/go", argv[1]);
    snprintf(more_path, sizeof more_path, "%s/more", argv[1]);
    snprintf(fork_path, sizeof fork_path, "%s/fork", argv[1]);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    printf("ready %ld %llu\n", (long)getpid(),
           (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
    fflush(stdout);
    pthread_t w, l;
    int have_late = 0;
    pid_t child = 0;
    pthread_create(&w, NULL, worker, NULL);
    while (!exists(go_path)) {
        spin();
        if (!have_late && exists(more_path))
            have_late = pthread_create(&l, NULL, late, NULL) == 0;
        if (!child && exists(fork_path)) {
            fflush(stdout);
            child = fork();
            if (child == 0) {
                child_work();
                _exit(0);
            }
        }
    }
    if (child > 0)
        waitpid(child, NULL, 0);
    pthread_join(w, NULL);
    if (have_late)
        pthread_join(l, NULL);
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the first 2e7 integers */
    for (uint64_t i = 0; i < 20000000; i++)
        h = (h ^ i) * 1099511628211ull;
    printf("result %016llx\n", (unsigned long long)h);
    return 0;
}
