/*
 * tests/dataaddr/mwd_data.c: a program whose data accesses are known, for
 * the data addresses memwatch decodes from timer samples
 * (docs/data-addresses.md, tests/dataaddr/test_dataaddr.sh):
 *
 *   mwd_data triad MS     a = b + s * c over three 32 MiB heap arrays (a
 *                         written; b, c read) for MS ms of CPU time
 *   mwd_data chase MS     a pointer chase through a 64 MiB node array
 *   mwd_data compute MS   arithmetic on registers only
 *   mwd_data kinds MS     by turns: a thread-local array, a static array,
 *                         a stack array and an mmap'd file (path argv[3])
 *   mwd_data touch4 MS    after MS ms of arithmetic, the first touch of four
 *                         64 MiB heap arrays by turns, a page of each (page
 *                         faults in a period of four)
 *
 * Each phase is a function of its own, so that the tests find its samples
 * by function name.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define N (4u << 20) /* doubles per triad array: 32 MiB */

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

volatile double sink;

__attribute__((noinline)) static void triad(double *restrict a, const double *restrict b,
                                            const double *restrict c, double s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + s * c[i];
}

struct node {
    struct node *next;
    uint64_t pad[7];
};

__attribute__((noinline)) static struct node *chase(struct node *p, long steps)
{
    while (steps-- > 0)
        p = p->next;
    return p;
}

__attribute__((noinline)) static double compute(long iters)
{
    double x = 1.0, y = 0.5, z = 0.25;
    for (long i = 0; i < iters; i++) {
        x = x * 1.0000001 + y;
        y = y * 0.9999999 + z;
        z = z * 1.0000002 - x * 1e-9;
    }
    return x + y + z;
}

/* The first touch of four arrays by turns, a page of each. */
__attribute__((noinline)) static void touch4(char **arr, size_t len, size_t page)
{
    for (size_t off = 0; off < len; off += page)
        for (int k = 0; k < 4; k++)
            arr[k][off] = 1;
}

#define KB 4096
static __thread double tls_arr[KB];
static double static_arr[KB];

__attribute__((noinline)) static double sum_tls(int reps)
{
    double s = 0;
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < KB; i++)
            s += tls_arr[i] * (double)r;
    return s;
}

__attribute__((noinline)) static double sum_static(int reps)
{
    double s = 0;
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < KB; i++)
            s += static_arr[i] * (double)r;
    return s;
}

__attribute__((noinline)) static double sum_stack(int reps)
{
    volatile double stack_arr[KB];
    for (int i = 0; i < KB; i++)
        stack_arr[i] = i;
    double s = 0;
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < KB; i++)
            s += stack_arr[i];
    return s;
}

__attribute__((noinline)) static double sum_file(const double *f, int reps)
{
    double s = 0;
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < KB; i++)
            s += f[i] * (double)r;
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: mwd_data triad|chase|compute|kinds|touch4 MS [FILE]\n");
        return 2;
    }
    double ms = atof(argv[2]), t0 = cpu_ms();
    if (!strcmp(argv[1], "triad")) {
        double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c);
        if (!a || !b || !c)
            return 1;
        for (size_t i = 0; i < N; i++) {
            a[i] = 0;
            b[i] = 1;
            c[i] = 2;
        }
        t0 = cpu_ms();
        while (cpu_ms() - t0 < ms)
            triad(a, b, c, 3.0, N);
        sink = a[N / 2];
    } else if (!strcmp(argv[1], "chase")) {
        size_t n = (64u << 20) / sizeof(struct node);
        struct node *nodes = malloc(n * sizeof *nodes);
        size_t *perm = malloc(n * sizeof *perm);
        if (!nodes || !perm)
            return 1;
        for (size_t i = 0; i < n; i++)
            perm[i] = i;
        srand(7);
        for (size_t i = n - 1; i > 0; i--) {
            size_t j = (size_t)rand() % (i + 1), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        for (size_t i = 0; i < n; i++)
            nodes[perm[i]].next = &nodes[perm[(i + 1) % n]];
        free(perm);
        struct node *p = nodes;
        t0 = cpu_ms();
        while (cpu_ms() - t0 < ms)
            p = chase(p, 100000);
        sink = (double)(uintptr_t)p;
    } else if (!strcmp(argv[1], "compute")) {
        double s = 0;
        while (cpu_ms() - t0 < ms)
            s += compute(1000000);
        sink = s;
    } else if (!strcmp(argv[1], "touch4")) {
        double s = 0;
        while (cpu_ms() - t0 < ms)
            s += compute(1000000);
        sink = s;
        size_t len = 64u << 20, page = (size_t)sysconf(_SC_PAGESIZE);
        char *arr[4];
        for (int k = 0; k < 4; k++) {
            if (!(arr[k] = malloc(len)))
                return 1;
            /* one fault per small page, whatever the transparent huge
             * page setting (the start is page-aligned inward) */
            uintptr_t b = ((uintptr_t)arr[k] + page - 1) & ~(uintptr_t)(page - 1);
            madvise((void *)b, len - page, MADV_NOHUGEPAGE);
        }
        touch4(arr, len, page);
        sink += arr[0][len / 2] + arr[3][len / 3];
    } else if (!strcmp(argv[1], "kinds") && argc > 3) {
        int fd = open(argv[3], O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || ftruncate(fd, KB * sizeof(double)) != 0)
            return 1;
        double *f = mmap(NULL, KB * sizeof(double), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (f == MAP_FAILED)
            return 1;
        for (int i = 0; i < KB; i++)
            f[i] = tls_arr[i] = static_arr[i] = i;
        double s = 0;
        while (cpu_ms() - t0 < ms) {
            s += sum_tls(50);
            s += sum_static(50);
            s += sum_stack(50);
            s += sum_file(f, 50);
        }
        sink = s;
        munmap(f, KB * sizeof(double));
        close(fd);
    } else {
        fprintf(stderr, "mwd_data: unknown phase %s\n", argv[1]);
        return 2;
    }
    return 0;
}
