/*
 * tests/names/pytramp.c: an interpreter in miniature that publishes its
 * functions as Python 3.12 does with -X perf. Each "Python function" gets a
 * trampoline of its own, copied into anonymous memory made executable with
 * mprotect, and a line "START SIZE py::NAME:FILE" in /tmp/perf-PID.map; the
 * trampoline (the bytes of CPython's Python/asm_trampoline.S: push %rbp;
 * mov %rsp,%rbp; call *%rcx; pop %rbp; ret) calls the interpreter's C
 * function eval_frame, where the CPU time goes. So a sample's leaf is
 * eval_frame (or its helper long_from), and the function being interpreted is
 * the innermost trampoline on the stack, as under python3.12 -X perf.
 *
 * pytramp SECONDS SCRIPT: py::<module>:SCRIPT calls py::hot_loop:SCRIPT
 * (about 90 % of the time) and py::cold_path:SCRIPT (about 10 %) until
 * SECONDS of CPU time have passed. Prints the perf map's path.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef double (*tramp)(long, long, long, void *);

static const unsigned char tramp_code[] = {0x55, 0x48, 0x89, 0xe5, 0xff, 0xd1, 0x5d, 0xc3};
static unsigned char *arena;
static tramp t_module, t_hot, t_cold;
static double stop_at;
static volatile double sink;

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* an object allocator's part of the work: a function of its own, as
 * PyLong_FromLongLong is beside _PyEval_EvalFrameDefault */
__attribute__((noinline)) double long_from(long i)
{
    double x = (double)i;
    for (int k = 0; k < 16; k++)
        x = x * 1.0000001 + 0.5;
    return x;
}

/* the interpreter loop: what a Python frame of kind `what` runs */
__attribute__((noinline)) double eval_frame(long what, long n, long depth, void *self)
{
    double s = 0;
    if (what == 0) { /* <module>: call hot_loop 9 times, cold_path once, till the end */
        while (cpu_now() < stop_at)
            for (int k = 0; k < 10; k++)
                s += k < 9 ? t_hot(1, 20000, depth + 1, self) : t_cold(2, 20000, depth + 1, self);
        return s;
    }
    for (long i = 0; i < n; i++) {
        s += (double)(i * 7 % 13) * 1.000001;
        if ((i & 7) == 0)
            s += long_from(i);
    }
    return s;
}

static tramp make_tramp(size_t slot, const char *name, const char *script, FILE *map)
{
    unsigned char *p = arena + slot * 16;
    memcpy(p, tramp_code, sizeof tramp_code);
    fprintf(map, "%lx %zx py::%s:%s\n", (unsigned long)(uintptr_t)p, sizeof tramp_code, name,
            script);
    return (tramp)(void *)p;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1;
    const char *script = argc > 2 ? argv[2] : "/tmp/x.py";
    long pg = sysconf(_SC_PAGESIZE);
    arena = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (arena == MAP_FAILED)
        return perror("mmap"), 1;
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)getpid());
    FILE *map = fopen(path, "w");
    if (!map)
        return perror(path), 1;
    t_module = make_tramp(0, "<module>", script, map);
    t_hot = make_tramp(1, "hot_loop", script, map);
    t_cold = make_tramp(2, "cold_path", script, map);
    fclose(map);
    if (mprotect(arena, (size_t)pg, PROT_READ | PROT_EXEC))
        return perror("mprotect"), 1;
    printf("%s\n", path);
    fflush(stdout);
    stop_at = cpu_now() + secs;
    sink = t_module(0, 0, 0, (void *)eval_frame);
    return 0;
}
