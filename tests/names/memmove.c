/*
 * tests/names/memmove.c: a thread that copies 64 MiB buffers with libc's
 * memmove for argv[1] seconds of CPU time. Built stripped: its own function
 * has no name, libc's are named from libc6-dbg's debug file (test_names.sh,
 * NAMES_CASE=libcdbg).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *copier(void *arg)
{
    size_t n = (size_t)64 << 20;
    char *a = malloc(n), *b = malloc(n);
    if (!a || !b)
        return NULL;
    memset(a, 1, n);
    memset(b, 2, n);
    double end = cpu_now() + *(double *)arg;
    while (cpu_now() < end) {
        memmove(b, a, n);
        memmove(a + 1, a, n - 1);
    }
    return (void *)(long)b[5];
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1;
    pthread_t t;
    if (pthread_create(&t, NULL, copier, &secs))
        return 1;
    pthread_join(t, NULL);
    return 0;
}
