/* tests/names/hotapp.c: calls libhot's hot_run for argv[1] seconds. */
#include <stdio.h>
#include <stdlib.h>

double hot_run(double *a, size_t n, double seconds);

int main(int argc, char **argv)
{
    size_t n = 4096;
    double *a = calloc(n, sizeof *a);
    double s = hot_run(a, n, argc > 1 ? atof(argv[1]) : 0.5);
    printf("%s\n", s >= 0 ? "done" : "?");
    return 0;
}
