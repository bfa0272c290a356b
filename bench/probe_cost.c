/*
 * bench/probe_cost.c: cost and steadiness of one probe_lat measurement, side by
 * side for 5, 15 (default) and 31 bursts, with the lfence-serialized timer
 * (default) and the cpuid-serialized one (MW_PROBE_LAT_CPUID), 200 measurements
 * each, interleaved in one run. Built and run by bench/probe_cost.
 */
#include <memwatch/probe_lat.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 200

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    static const unsigned bursts[] = {5, 15, 31};
    mw_probe_lat *p[2][3];
    static double ns[2][3][N], cost[2][3][N];
    for (int f = 0; f < 2; f++)
        for (int b = 0; b < 3; b++) {
            mw_probe_lat_config c = {.bursts = bursts[b], .flags = f ? MW_PROBE_LAT_CPUID : 0};
            int rc = mw_probe_lat_create(&c, &p[f][b]);
            if (rc < 0) {
                fprintf(stderr, "probe_cost: %s\n", mw_strerror(rc));
                return 1;
            }
        }
    for (int k = 0; k < N; k++) /* interleaved: every variant sees the same machine */
        for (int f = 0; f < 2; f++)
            for (int b = 0; b < 3; b++) {
                mw_probe_lat_result r;
                if (mw_probe_lat_measure(p[f][b], &r) < 0)
                    return 1;
                ns[f][b][k] = r.median_ns;
                cost[f][b][k] = (double)r.cost_ns / 1e3;
            }
    double med_cost[2][3], ref;
    for (int f = 0; f < 2; f++)
        for (int b = 0; b < 3; b++) {
            qsort(cost[f][b], N, sizeof(double), cmp);
            med_cost[f][b] = cost[f][b][N / 2];
        }
    ref = med_cost[0][1];
    printf("%-7s %6s %10s %7s %10s %6s %16s\n", "timer", "bursts", "cost us", "x ref", "median ns",
           "CV", "p5..p95 ns");
    for (int f = 0; f < 2; f++)
        for (int b = 0; b < 3; b++) {
            double *m = ns[f][b], mean = 0, sd = 0;
            for (int k = 0; k < N; k++)
                mean += m[k] / N;
            for (int k = 0; k < N; k++)
                sd += (m[k] - mean) * (m[k] - mean) / (N - 1);
            qsort(m, N, sizeof *m, cmp);
            printf("%-7s %6u %10.1f %7.2f %10.1f %5.1f%% %8.1f..%.1f\n", f ? "cpuid" : "lfence",
                   bursts[b], med_cost[f][b], med_cost[f][b] / ref, m[N / 2],
                   100 * sqrt(sd) / mean, m[N / 20], m[N - N / 20]);
            mw_probe_lat_destroy(p[f][b]);
        }
    printf("reference (x ref): lfence, 15 bursts = %.1f us per measurement\n", ref);
    printf("cost at a 10 ms interval with the default: %.2f %% of one core\n", ref / 100.0);
    return 0;
}
