/*
 * bench/prim_cost.c: what the primitives a process start is made of cost on
 * this machine (docs/overhead.md, "lazy start"): a system call, a page
 * fault, an append to a file that exists, loading an empty shared library,
 * and a sampling event with its ring of 16 or 128 data pages (the cpu-clock
 * ring with DWARF stacks of an inline process and of one with an interval
 * thread: preload/threads.c).
 * Built and run by bench/prim_cost. Best of 7 runs of N each, CPU time of
 * the thread, in microseconds.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <linux/perf_event.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define N 2000

static char path[4200], rec[600];
static const char *lib;
static char *pages;

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void op_syscall(int i)
{
    (void)i;
    syscall(SYS_getppid);
}

static void op_sigaction(int i)
{
    (void)i;
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_handler = SIG_DFL;
    sigaction(SIGUSR1, &a, NULL);
}

static void pages_map(void)
{
    pages = mmap(NULL, (size_t)N * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    madvise(pages, (size_t)N * 4096, MADV_NOHUGEPAGE);
}

static void pages_unmap(void)
{
    munmap(pages, (size_t)N * 4096);
}

static void op_fault(int i)
{
    pages[(size_t)i * 4096] = 1;
}

static void op_append(int i)
{
    (void)i;
    int f = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (f >= 0 && write(f, rec, sizeof rec) == (ssize_t)sizeof rec)
        close(f);
}

static void file_empty(void)
{
    if (truncate(path, 0) != 0)
        perror(path);
}

static void op_dlopen(int i)
{
    (void)i;
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (h)
        dlclose(h);
}

/* A user-only cpu-clock sampling event on this thread with a ring of
 * ring_pages data pages: opened, mapped, closed, unmapped (the kernel
 * allocates, zeroes and frees the pages). */
static unsigned ring_pages;
static int ring_ok = 1;
static void op_ring(int i)
{
    (void)i;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.sample_period = 4000000;
    a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        ring_ok = 0;
        return;
    }
    size_t len = (size_t)(ring_pages + 1) * 4096;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        ring_ok = 0;
    else
        munmap(m, len);
}

static void best(const char *name, void (*setup)(void), void (*op)(int), void (*teardown)(void))
{
    double b = 1e30;
    for (int r = 0; r < 7; r++) {
        if (setup)
            setup();
        double t0 = now_us();
        for (int i = 0; i < N; i++)
            op(i);
        double d = (now_us() - t0) / N;
        if (teardown)
            teardown();
        if (d < b)
            b = d;
    }
    printf("%-44s %8.2f us\n", name, b);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    lib = argc > 2 ? argv[2] : NULL;
    snprintf(path, sizeof path, "%s/prim_cost.%d", dir, (int)getpid());
    memset(rec, 'x', sizeof rec);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd < 0) {
        perror(path);
        return 1;
    }
    close(fd);
    best("system call (getppid)", NULL, op_syscall, NULL);
    best("sigaction", NULL, op_sigaction, NULL);
    best("page fault (anonymous, first write)", pages_map, op_fault, pages_unmap);
    best("append: open + 600-byte write + close", file_empty, op_append, file_empty);
    if (lib)
        best("dlopen + dlclose of an empty library", NULL, op_dlopen, NULL);
    ring_pages = 16;
    best("sampling event + ring of 16 data pages", NULL, op_ring, NULL);
    ring_pages = 128;
    best("sampling event + ring of 128 data pages", NULL, op_ring, NULL);
    if (!ring_ok)
        printf("(the rings: no perf event or mapping here; those lines time the failures)\n");
    unlink(path);
    return 0;
}
