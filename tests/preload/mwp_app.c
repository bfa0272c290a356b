/*
 * tests/preload/mwp_app.c: the application the preload tests run under
 * libmemwatch.so, one behaviour per mode (argv[1]). It checks its own
 * behaviour too (handlers called, descriptors intact) and says so in its
 * exit status, so a test sees both "the program ran unchanged" and "memwatch
 * recorded it".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "memwatch/mwr.h"
#include "mwp_begun.h"

extern char **environ;
static const char *self;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile uint64_t sink;
static volatile int *volatile bad_ptr = (volatile int *)(uintptr_t)8;

/* Touch a few MiB for ms milliseconds. */
static void work(int ms)
{
    static uint64_t buf[1 << 19];
    double end = now() + ms / 1000.0;
    uint64_t s = 0;
    while (now() < end)
        for (size_t i = 0; i < sizeof buf / sizeof buf[0]; i += 8)
            s += buf[i] += i;
    sink = s;
}

/* The same for ms milliseconds of this thread's CPU time: as many samples
 * however busy the machine is (memwatch samples a process from its first
 * interval of CPU time on: docs/overhead.md, "lazy start"). */
/* "rings: N N ...": the data pages of each perf ring mapped here (the
 * mapping less its metadata page), largest first */
static void print_rings(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    unsigned long pages[64];
    int n = 0;
    while (f && fgets(line, sizeof line, f) && n < 64) {
        unsigned long lo, hi;
        if (strstr(line, "[perf_event]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
            pages[n++] = (hi - lo) / 4096 - 1;
    }
    if (f)
        fclose(f);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (pages[j] > pages[i]) {
                unsigned long t = pages[i];
                pages[i] = pages[j];
                pages[j] = t;
            }
    printf("rings:");
    for (int i = 0; i < n; i++)
        printf(" %lu", pages[i]);
    printf("\n");
    fflush(stdout);
}

static void cpuwork(int ms)
{
    static uint64_t buf[1 << 19];
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    double end = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + ms / 1000.0;
    uint64_t s = 0;
    for (;;) {
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        if ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9 >= end)
            break;
        for (size_t i = 0; i < sizeof buf / sizeof buf[0]; i += 8)
            s += buf[i] += i;
    }
    sink = s;
}

/* Works until memwatch began recording, at most 5 s of CPU time: the
 * CPU-time timer that begins it fires late on a loaded machine
 * (docs/overhead.md, "Lazy start"). */
static void wait_begun(void)
{
    const char *pre = getenv("LD_PRELOAD");
    if (!pre || !strstr(pre, "memwatch")) /* not preloaded: nothing to wait for */
        return;
    for (int i = 0; i < 1000 && !recording_begun(); i++)
        cpuwork(5);
    if (!recording_begun())
        fprintf(stderr, "mwp_app: recording did not begin in 5 s of CPU time\n");
}

static void *thr_nothing(void *arg)
{
    return arg;
}

/* A first thread begins the recording at once (lazy start), however late a
 * loaded machine's CPU-time timer comes: for the cases that count samples
 * taken before a fatal signal. */
static void begin_now(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, thr_nothing, NULL) == 0)
        pthread_join(t, NULL);
}

static void *thr_short(void *arg)
{
    char name[16];
    snprintf(name, sizeof name, "short-%d", (int)(intptr_t)arg % 1000);
    pthread_setname_np(pthread_self(), name);
    uint64_t s = 0;
    for (int i = 0; i < 20000; i++)
        s += (uint64_t)i * i;
    sink = s;
    return NULL;
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A thread that computes (no shared memory) for the milliseconds of its own
 * CPU time in arg: the same work however busy the machine is. */
static void *thr_busy(void *arg)
{
    double end = thread_cpu() + (double)(intptr_t)arg / 1000.0;
    uint64_t s = 1;
    while (thread_cpu() < end)
        for (int i = 0; i < 10000; i++)
            s = s * 6364136223846793005ull + 1442695040888963407ull;
    sink = s;
    return NULL;
}

/* 4 threads, each busy for ms milliseconds of CPU time, at the same time. */
static int mode_busythreads(int ms)
{
    pthread_t t[4];
    for (int k = 0; k < 4; k++)
        if (pthread_create(&t[k], NULL, thr_busy, (void *)(intptr_t)ms))
            return 1;
    for (int k = 0; k < 4; k++)
        pthread_join(t[k], NULL);
    return 0;
}

/* A fork child that starts threads (after the parent started its own). */
static int mode_forkthreads(int ms)
{
    if (mode_busythreads(ms / 2))
        return 1;
    pid_t p = fork();
    if (p == 0)
        _exit(mode_busythreads(ms));
    int st = 0;
    if (p < 0 || waitpid(p, &st, 0) != p)
        return 1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static int mode_threads(int n)
{
    for (int i = 0; i < n; i += 8) {
        pthread_t t[8];
        int k = 0;
        for (; k < 8 && i + k < n; k++)
            if (pthread_create(&t[k], NULL, thr_short, (void *)(intptr_t)(i + k)))
                return 1;
        for (int j = 0; j < k; j++)
            pthread_join(t[j], NULL);
    }
    return 0;
}

static int run_self(const char *how)
{
    char *argv[] = {(char *)self, "work", "30", NULL};
    int st = 0;
    pid_t p = -1;
    if (!strcmp(how, "fork")) {
        p = fork();
        if (p == 0) {
            begin_now(); /* a loaded machine's CPU-time timer may come late */
            cpuwork(30);
            exit(7);
        }
    } else if (!strcmp(how, "forkexec")) {
        p = fork();
        if (p == 0) {
            execv(self, argv);
            _exit(127);
        }
    } else if (!strcmp(how, "vfork")) {
        p = vfork();
        if (p == 0) {
            execve(self, argv, environ);
            _exit(127);
        }
    } else if (!strcmp(how, "spawn")) {
        if (posix_spawn(&p, self, NULL, NULL, argv, environ))
            return 1;
    } else if (!strcmp(how, "system")) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "'%s' work 30", self);
        st = system(cmd);
        work(20);
        return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
    }
    if (p < 0)
        return 1;
    work(20);
    if (waitpid(p, &st, 0) != p)
        return 1;
    int want = !strcmp(how, "fork") ? 7 : 0;
    return WIFEXITED(st) && WEXITSTATUS(st) == want ? 0 : 1;
}

static sigjmp_buf segv_jmp;
static volatile sig_atomic_t got_segv, got_term, got_prof;
static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)si;
    (void)uc;
    got_segv++;
    siglongjmp(segv_jmp, 1);
}
static void on_term(int sig)
{
    (void)sig;
    got_term++;
}
static void on_prof(int sig)
{
    (void)sig;
    got_prof++;
}

static int mode_handlers(void)
{
    struct sigaction a, q;
    memset(&a, 0, sizeof a);
    a.sa_sigaction = on_segv;
    a.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &a, NULL);
    signal(SIGTERM, on_term);
    signal(SIGPROF, on_prof);
    /* The program reads back what it set. */
    if (sigaction(SIGSEGV, NULL, &q) || q.sa_sigaction != on_segv) {
        fprintf(stderr, "sigaction(SIGSEGV) read back a foreign handler\n");
        return 1;
    }
    if (sigaction(SIGTERM, NULL, &q) || q.sa_handler != on_term) {
        fprintf(stderr, "sigaction(SIGTERM) read back a foreign handler\n");
        return 1;
    }
    for (int i = 0; i < 3; i++)
        if (!sigsetjmp(segv_jmp, 1))
            *bad_ptr = 1;
    raise(SIGTERM);
    raise(SIGTERM);
    struct itimerval it = {{0, 2000}, {0, 2000}};
    setitimer(ITIMER_PROF, &it, NULL);
    for (int i = 0; i < 300 && got_prof < 5; i++)
        work(10); /* CPU time, not wall time, drives ITIMER_PROF */
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    if (got_segv != 3 || got_term != 2 || got_prof < 3) {
        fprintf(stderr, "handlers: segv %d term %d prof %d\n", (int)got_segv, (int)got_term,
                (int)got_prof);
        return 1;
    }
    /* SIG_IGN is honoured too. */
    signal(SIGTERM, SIG_IGN);
    raise(SIGTERM);
    printf("handlers ok: segv %d term %d prof %d\n", (int)got_segv, (int)got_term, (int)got_prof);
    return 0;
}

static int mode_closefds(int delay_ms)
{
    if (delay_ms)
        cpuwork(delay_ms); /* (closefds_late) while memwatch is creating its file: it
                            * begins after one interval of CPU time (lazy start) */
    long max = sysconf(_SC_OPEN_MAX);
    for (long fd = 3; fd < max && fd < 65536; fd++)
        close((int)fd);
    closefrom(3);
    work(40);
    /* The program's own files must stay intact: memwatch writes none of them. */
    char path[] = "/tmp/mwp_closefds_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    for (int i = 0; i < 100; i++) {
        if (write(fd, "0123456789abcdef", 16) != 16)
            return 1;
        work(1);
    }
    for (int k = 0; k < 4; k++) { /* onto the numbers memwatch may use (its file, its tick) */
        dup2(fd, 1000 + k);
        close(1000 + k);
    }
    off_t size = lseek(fd, 0, SEEK_END);
    close(fd);
    unlink(path);
    if (size != 1600) {
        fprintf(stderr, "closefds: file has %lld bytes, expected 1600\n", (long long)size);
        return 1;
    }
    work(30);
    /* and until memwatch has written four more intervals, that the test
     * sees it recording after the closes (at most 5 s: an interval thread
     * of a loaded machine writes fewer per second) */
    long from = own_raw_records(MWR_INTERVAL);
    double end = now() + 5;
    while (from >= 0 && own_raw_records(MWR_INTERVAL) < from + 4 && now() < end)
        work(5);
    return 0;
}

/* reapdup: reap a child (memwatch keeps the shared file of short processes
 * open for the next look, writer.c), dup2 a file of our own onto that
 * descriptor, reap two more children. Our file must get our bytes, and one
 * descriptor of the shared file must remain (memwatch's, moved). */
static int short_fds(int *first)
{
    int n = 0;
    *first = -1;
    for (int fd = 3; fd < 4096; fd++) {
        char l[64], t[4096];
        snprintf(l, sizeof l, "/proc/self/fd/%d", fd);
        ssize_t k = readlink(l, t, sizeof t - 1);
        if (k <= 0)
            continue;
        t[k] = 0;
        if (k > 10 && !strcmp(t + k - 10, "-short.mwr")) {
            if (*first < 0)
                *first = fd;
            n++;
        }
    }
    return n;
}

static int spawn_true(void)
{
    pid_t p;
    char *argv[] = {"/bin/true", NULL};
    extern char **environ;
    if (posix_spawn(&p, "/bin/true", NULL, NULL, argv, environ) != 0)
        return -1;
    int st;
    return waitpid(p, &st, 0) == p && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

static int mode_reapdup(void)
{
    if (spawn_true())
        return 2;
    int fd;
    if (short_fds(&fd) != 1 || fd < 0) {
        fprintf(stderr, "reapdup: no descriptor of the shared file after a reaping\n");
        return 1;
    }
    char path[] = "/tmp/mwp_reapdup_XXXXXX";
    int mine = mkstemp(path);
    if (mine < 0 || dup2(mine, fd) != fd)
        return 2;
    if (spawn_true() || write(fd, "0123456789abcdef", 16) != 16 || spawn_true())
        return 2;
    off_t size = lseek(mine, 0, SEEK_END);
    int other, n = short_fds(&other);
    close(fd);
    close(mine);
    unlink(path);
    printf("reapdup: descriptor %d, our file %lld bytes, descriptors of the shared file %d\n", fd,
           (long long)size, n);
    return size == 16 && n == 1 ? 0 : 1;
}

/* inlibc: arg memsets of 8 MiB (warm: no faults), all but all of its CPU
 * time in libc, where the lazy start may not begin; then the perf events the
 * process holds (the lazy start's retry, preload/lazy.c: lazy_retry) */
static int mode_inlibc(int n)
{
    static char buf[8 << 20];
    for (int i = 0; i < n; i++)
        memset(buf, i, sizeof buf);
    /* the open descriptors only (a walk of all 4096 numbers spent some
     * 10 ms in this function's own loop, where a lazy-start signal may
     * begin recording: the lazyretry case expects none to) */
    int k = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char t[256];
        ssize_t r = readlinkat(dirfd(d), e->d_name, t, sizeof t - 1);
        if (r > 0 && (t[r] = 0, !strcmp(t, "anon_inode:[perf_event]")))
            k++;
    }
    if (d)
        closedir(d);
    printf("inlibc: perf_fds=%d %d\n", k, buf[12345]);
    return 0;
}

static void *thr_exit(void *arg)
{
    (void)arg;
    work(40);
    exit(9);
}

static void *thr_sleepy(void *arg)
{
    (void)arg;
    for (;;) {
        work(2);
        usleep(1000); /* cancellation point */
    }
    return NULL;
}

static void *thr_worker(void *arg)
{
    (void)arg;
    work(200);
    return NULL;
}

/* Allocation churn: n malloc(100 KiB)/free pairs from one site, then one
 * long-lived 8 MiB array from another, worked on for ms of CPU time. */
__attribute__((noinline)) static int mode_churn(int n, int ms)
{
    for (int i = 0; i < n; i++) {
        volatile char *p = malloc(100 * 1024);
        if (!p)
            return 1;
        p[0] = 1;
        free((void *)p);
    }
    size_t len = 8u << 20;
    volatile char *a = malloc(len);
    if (!a)
        return 1;
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    double t, end = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + ms / 1000.0;
    unsigned s = 0;
    do {
        for (size_t i = 0; i < len; i += 64)
            s += a[i]++;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    } while (t < end);
    sink = s;
    free((void *)a);
    return 0;
}

static int mode_alloc(int ms)
{
    void *p[8];
    p[0] = malloc(1 << 20);
    p[1] = calloc(1, 200000);
    p[2] = realloc(NULL, 100000);
    p[2] = realloc(p[2], 300000);
    if (posix_memalign(&p[3], 4096, 1 << 18))
        return 1;
    p[4] = aligned_alloc(64, 1 << 17);
    p[5] = malloc(100); /* below the threshold: not recorded */
    void *m = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 1;
    memset(m, 1, 4 << 20);
    memset(p[0], 1, 1 << 20);
    work(ms); /* 0: the process ends before it begins recording (lazy start) */
    munmap(m, 4 << 20);
    for (int i = 0; i < 6; i++)
        free(p[i]);
    return 0;
}

static int mode_emit(void)
{
    int (*emit)(uint32_t, const void *, uint32_t);
    *(void **)&emit = dlsym(RTLD_DEFAULT, "mw_preload_emit");
    if (!emit) {
        printf("no mw_preload_emit\n");
        return 3;
    }
    char payload[13] = "gpu-test-rec";
    int rc = emit(23, payload, sizeof payload);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    self = argv[0];
    const char *m = argc > 1 ? argv[1] : "work";
    int arg = argc > 2 ? atoi(argv[2]) : 30;
    if (getenv("MWP_WAIT_BEGUN")) /* any mode, once memwatch began recording */
        wait_begun();
    if (!strcmp(m, "work")) {
        work(arg);
        return 0;
    }
    if (!strcmp(m, "cpuwork")) {
        cpuwork(arg);
        return 0;
    }
    if (!strcmp(m, "rings")) {
        /* once recording began, the data pages of this process's perf
         * rings (/proc/self/maps, largest first); then ms of CPU time and
         * the same again */
        wait_begun();
        print_rings();
        cpuwork(arg);
        print_rings();
        return 0;
    }
    if (!strcmp(m, "cpuwork_now")) { /* recording begun at once, then work */
        begin_now();
        cpuwork(arg);
        return 0;
    }
    if (!strcmp(m, "begunwork") || !strcmp(m, "begunsleep")) {
        /* work until memwatch began recording (it holds a perf event), at
         * most 5 s of CPU time, then ms more; begunsleep then waits: the
         * CPU-time timer that begins recording fires late on a loaded
         * machine (docs/overhead.md, "Lazy start") */
        wait_begun();
        cpuwork(arg);
        if (!strcmp(m, "begunwork"))
            return 0;
        int ms = argc > 3 ? atoi(argv[3]) : 100;
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) && errno == EINTR)
            ;
        return 0;
    }
    if (!strcmp(m, "worksleep")) { /* work ms of CPU time, then wait */
        cpuwork(arg);
        int ms = argc > 3 ? atoi(argv[3]) : 100;
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) && errno == EINTR)
            ;
        return 0;
    }
    if (!strcmp(m, "threads"))
        return mode_threads(arg);
    if (!strcmp(m, "busythreads"))
        return mode_busythreads(arg);
    if (!strcmp(m, "triad")) { /* arg ms of a single-threaded STREAM triad over 3 x 64 MiB */
        size_t n = (64u << 20) / sizeof(double);
        double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
        if (!a || !b || !c)
            return 1;
        for (size_t i = 0; i < n; i++)
            b[i] = 1, c[i] = 2;
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
            for (size_t i = 0; i < n; i++)
                a[i] = b[i] + 3.0 * c[i];
            clock_gettime(CLOCK_MONOTONIC, &t);
        } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < arg);
        return a[n / 2] == 7.0 ? 0 : 1;
    }
    if (!strcmp(m, "workexec")) { /* arg ms of work (recording begins), then exec cpuwork 300 */
        cpuwork(arg);
        char *args[] = {(char *)self, "cpuwork", "300", NULL};
        execv(self, args);
        return 1;
    }
    if (!strcmp(m, "workthreads")) { /* arg ms alone, then 4 threads of arg ms, then arg ms */
        cpuwork(arg);
        if (mode_busythreads(arg))
            return 1;
        cpuwork(arg);
        return 0;
    }
    if (!strcmp(m, "forkthreads"))
        return mode_forkthreads(arg);
    if (!strcmp(m, "fork") || !strcmp(m, "forkexec") || !strcmp(m, "vfork") ||
        !strcmp(m, "spawn") || !strcmp(m, "system"))
        return run_self(m);
    if (!strcmp(m, "handlers"))
        return mode_handlers();
    if (!strcmp(m, "closefds"))
        return mode_closefds(0);
    if (!strcmp(m, "reapdup"))
        return mode_reapdup();
    if (!strcmp(m, "inlibc"))
        return mode_inlibc(arg);
    if (!strcmp(m, "closefds_late"))
        return mode_closefds(20);
    if (!strcmp(m, "abort")) {
        begin_now();
        cpuwork(80);
        abort();
    }
    if (!strcmp(m, "_exit")) {
        work(30);
        _exit(5);
    }
    if (!strcmp(m, "segv_now")) { /* a fault before the first interval */
        *bad_ptr = 1;
        return 0;
    }
    if (!strcmp(m, "segv")) {
        begin_now();
        cpuwork(80);
        *bad_ptr = 1;
        return 0;
    }
    if (!strcmp(m, "term")) {
        begin_now();
        cpuwork(80);
        raise(SIGTERM);
        return 0;
    }
    if (!strcmp(m, "threadexit")) {
        pthread_t t;
        pthread_create(&t, NULL, thr_exit, NULL);
        for (;;)
            work(10);
    }
    if (!strcmp(m, "waitidkill")) { /* a child that waits, SIGKILLed, reaped with waitid */
        pid_t c = fork();
        if (c == 0) {
            execlp("sleep", "sleep", "5", (char *)NULL);
            _exit(127);
        }
        struct timespec ts = {0, 300 * 1000000};
        nanosleep(&ts, NULL);
        kill(c, SIGKILL);
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)c, &si, WEXITED))
            return 1;
        printf("waitid: %d %d\n", si.si_code == CLD_KILLED, si.si_status);
        return 0;
    }
    if (!strcmp(m, "spin")) {
        printf("ready\n");
        fflush(stdout);
        for (;;)
            work(10);
    }
    if (!strcmp(m, "alloc"))
        return mode_alloc(arg);
    if (!strcmp(m, "churn"))
        return mode_churn(arg, argc > 3 ? atoi(argv[3]) : 0);
    if (!strcmp(m, "cancel")) {
        pthread_t t;
        pthread_create(&t, NULL, thr_sleepy, NULL);
        work(40);
        pthread_cancel(t);
        void *r;
        pthread_join(t, &r);
        work(20);
        return r == PTHREAD_CANCELED ? 0 : 1;
    }
    if (!strcmp(m, "mainexit")) {
        pthread_t t;
        pthread_create(&t, NULL, thr_worker, NULL);
        work(20);
        pthread_exit(NULL);
    }
    if (!strcmp(m, "emit"))
        return mode_emit();
    if (!strcmp(m, "dlclose") && argc > 2) {
        /* dlopen and dlclose argv[2] for 30 ms of CPU time: the lazy start's
         * timer comes in the middle of the loader's work */
        struct timespec a, b;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
        do {
            void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
            if (!h) {
                fprintf(stderr, "mwp_app: %s\n", dlerror());
                return 3;
            }
            dlclose(h);
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
        } while ((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec) < 30000000LL);
        return 0;
    }
    if (!strcmp(m, "dlopen")) {
        work(30);
        static const char *const libs[] = {"libsqlite3.so.0", "libz.so.1", "libelf.so.1"};
        for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++)
            if (dlopen(libs[i], RTLD_NOW)) {
                printf("%s\n", libs[i]);
                work(50);
                return 0;
            }
        return 3;
    }
    fprintf(stderr, "mwp_app: unknown mode %s\n", m);
    return 2;
}
