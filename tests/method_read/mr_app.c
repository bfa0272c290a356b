/*
 * tests/method_read/mr_app.c: a program for test_record_counters.sh that
 * lives through several profiling intervals before doing what it is asked:
 *   mr_app fork       work 80 ms, fork a child that works 120 ms and exits 3,
 *                     work on, wait; exit 0 when the child's status was 3
 *   mr_app takefds    work 80 ms, close every descriptor >= 3 (as closefrom
 *                     would), take the numbers back with 32 non-blocking pipes
 *                     holding 8 bytes each, work 80 ms, then check that every
 *                     pipe still holds its bytes; exit 0 when all do
 * Work: streaming over 16 MiB, timed by CLOCK_MONOTONIC.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static void work(unsigned ms)
{
    static unsigned long *a;
    const size_t n = (16u << 20) / sizeof *a;
    if (!a && !(a = calloc(n, sizeof *a)))
        abort();
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned long s = 0;
    do {
        for (size_t i = 0; i < n; i += 8)
            s += a[i]++;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) * 1e3 + (double)(t.tv_nsec - t0.tv_nsec) / 1e6 < ms);
    sink = s;
}

static int take_fds(void)
{
    long max = sysconf(_SC_OPEN_MAX);
    for (long fd = 3; fd < max && fd < 4096; fd++)
        close((int)fd);
    int p[32][2];
    for (int i = 0; i < 32; i++) {
        if (pipe2(p[i], O_NONBLOCK) < 0 || write(p[i][1], "program!", 8) != 8)
            return 1;
    }
    work(80);
    int bad = 0;
    for (int i = 0; i < 32; i++) {
        char b[16];
        ssize_t n = read(p[i][0], b, sizeof b);
        if (n != 8 || memcmp(b, "program!", 8)) {
            fprintf(stderr, "takefds: pipe %d (fd %d) lost its data (%zd)\n", i, p[i][0], n);
            bad = 1;
        }
    }
    return bad;
}

static void *nothing(void *arg)
{
    return arg;
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "";
    /* one thread started and joined first: under memwatch a program's first
     * pthread_create begins its recording at once, whatever the load (the
     * lazy start's CPU-time timer can come late on a loaded machine), so the
     * counters are open during the work below */
    pthread_t th;
    if (pthread_create(&th, NULL, nothing, NULL) == 0)
        pthread_join(th, NULL);
    work(80);
    if (!strcmp(m, "fork")) {
        pid_t c = fork();
        if (c < 0)
            return 1;
        if (c == 0) {
            /* the child begins its own recording at once too */
            if (pthread_create(&th, NULL, nothing, NULL) == 0)
                pthread_join(th, NULL);
            work(120);
            exit(3);
        }
        work(20);
        int st;
        if (waitpid(c, &st, 0) != c)
            return 1;
        return WIFEXITED(st) && WEXITSTATUS(st) == 3 ? 0 : 1;
    }
    if (!strcmp(m, "takefds"))
        return take_fds();
    fprintf(stderr, "usage: mr_app fork|takefds\n");
    return 2;
}
