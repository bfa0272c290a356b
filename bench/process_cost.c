/*
 * bench/process_cost.c: what a preload library costs each process's start
 * and end, measured from outside. Built and run by bench/process_cost.
 *
 *   process_cost ROUNDS CFG... -- runs, per round and configuration (every
 *   other round in reverse order), the program itself as a child
 *   ("child" mode: it reports CLOCK_MONOTONIC at the start of main on
 *   descriptor 3 and ends), and prints per configuration the medians of
 *   spawn -> main ("to main": the loader and every constructor) and
 *   main -> reaped ("to end": destructors, exit, the kernel's teardown), in
 *   microseconds, the child's CPU time and its page faults (rusage: the
 *   minor faults, a count that the machine's load does not change), and
 *   the CPU time the parent's thread spent on the child from the spawn to
 *   the reaping (a recorded parent looks whether the child wrote its end,
 *   preload/reap.c).
 *
 * A configuration is "NAME" then "VAR=VAL,VAR=VAL" or "-" for none, e.g.
 * "memwatch LD_PRELOAD=/x/libmemwatch.so,MEMWATCH_DIR=/tmp/o". The parent's
 * own LD_PRELOAD and MEMWATCH_* variables are not handed to the children.
 */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static long long thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long long median(long long *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_ll);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "child")) {
        char b[32];
        int k = snprintf(b, sizeof b, "%lld\n", now_ns());
        return write(3, b, (size_t)k) == k ? 0 : 1;
    }
    if (argc < 4 || argc % 2) {
        fprintf(stderr, "usage: %s ROUNDS NAME VARS [NAME VARS]...\n", argv[0]);
        return 2;
    }
    int rounds = atoi(argv[1]), ncfg = (argc - 2) / 2;
    if (rounds < 1)
        return 2;
    char *self = realpath("/proc/self/exe", NULL);
    size_t nenv = 0;
    while (environ[nenv])
        nenv++;
    char ***envs = calloc((size_t)ncfg, sizeof *envs);
    long long *pre = calloc((size_t)ncfg * rounds, sizeof *pre);
    long long *post = calloc((size_t)ncfg * rounds, sizeof *post);
    long long *cpu = calloc((size_t)ncfg * rounds, sizeof *cpu);
    long long *flt = calloc((size_t)ncfg * rounds, sizeof *flt);
    long long *par = calloc((size_t)ncfg * rounds, sizeof *par);
    if (!self || !envs || !pre || !post || !cpu || !flt || !par)
        return 1;
    for (int c = 0; c < ncfg; c++) {
        char *vars = strdup(argv[3 + 2 * c]);
        size_t extra = 1;
        for (char *p = vars; *p; p++)
            extra += *p == ',';
        char **e = calloc(nenv + extra + 1, sizeof *e);
        size_t k = 0;
        for (size_t i = 0; i < nenv; i++)
            if (strncmp(environ[i], "LD_PRELOAD=", 11) && strncmp(environ[i], "MEMWATCH_", 9))
                e[k++] = environ[i];
        if (strcmp(vars, "-"))
            for (char *s = strtok(vars, ","); s; s = strtok(NULL, ","))
                e[k++] = s;
        e[k] = NULL;
        envs[c] = e;
    }
    char *cargv[] = {self, "child", NULL};
    for (int r = 0; r < rounds; r++) {
        for (int j = 0; j < ncfg; j++) {
            int c = r % 2 ? ncfg - 1 - j : j;
            int pf[2];
            if (pipe(pf))
                return 1;
            posix_spawn_file_actions_t fa;
            posix_spawn_file_actions_init(&fa);
            posix_spawn_file_actions_adddup2(&fa, pf[1], 3);
            pid_t pid;
            long long c0 = thread_cpu_ns(), t0 = now_ns();
            if (posix_spawn(&pid, self, &fa, NULL, cargv, envs[c])) {
                perror("posix_spawn");
                return 1;
            }
            close(pf[1]);
            int st;
            struct rusage ru;
            wait4(pid, &st, 0, &ru);
            long long t2 = now_ns(), c2 = thread_cpu_ns();
            char b[32] = {0};
            ssize_t n = read(pf[0], b, sizeof b - 1);
            close(pf[0]);
            posix_spawn_file_actions_destroy(&fa);
            if (n <= 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
                fprintf(stderr, "process_cost: the child of '%s' failed\n", argv[2 + 2 * c]);
                return 1;
            }
            long long t1 = atoll(b);
            size_t i = (size_t)c * rounds + r;
            pre[i] = t1 - t0;
            post[i] = t2 - t1;
            cpu[i] = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL + ru.ru_utime.tv_usec +
                     ru.ru_stime.tv_usec;
            flt[i] = ru.ru_minflt + ru.ru_majflt;
            par[i] = c2 - c0;
        }
    }
    for (int c = 0; c < ncfg; c++) {
        size_t o = (size_t)c * rounds;
        printf("%s %.1f %.1f %.1f %lld %.1f\n", argv[2 + 2 * c], median(pre + o, rounds) / 1e3,
               median(post + o, rounds) / 1e3, (double)median(cpu + o, rounds), median(flt + o, rounds),
               median(par + o, rounds) / 1e3);
    }
    return 0;
}
