/*
 * tests/gpu_arith/ga_replay.c: replays a MEMWATCH_GPU_TRACE file (the raw PM
 * windows "W dev start end read write flags" and launches "K dev start end
 * correlation name" libmemwatch_cuda.so saw) through gpu/attrib.c, all launches
 * of a device in one batch, and prints per kernel name: launches, launches
 * over the threshold, and the bytes per launch against the known volume of
 * launch_app ("known kernel=NAME bytes=B" lines). Plain C; for looking at a
 * GPU machine's data anywhere.
 * Usage: ga_replay TRACE THRESHOLD_BYTES_PER_S [KNOWN_FILE] [WINDOW_SHIFT_NS]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../gpu/attrib.h"

typedef struct kr {
    unsigned dev;
    uint64_t s, e;
    char name[128];
} kr;

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: ga_replay TRACE THRESHOLD [KNOWN] [SHIFT_NS]\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    double thr = atof(argv[2]);
    long long shift = argc > 4 ? atoll(argv[4]) : 0;
    static mw_ga_dev dev[16];
    kr *K = NULL;
    size_t nk = 0, ck = 0;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        unsigned d;
        unsigned long long s, e, c;
        double rd, wr;
        unsigned fl;
        char nm[512];
        if (line[0] == 'W' && sscanf(line, "W %u %llu %llu %lf %lf %u", &d, &s, &e, &rd, &wr, &fl) == 6 && d < 16)
            mw_ga_push(&dev[d], (uint64_t)((long long)s + shift), (uint64_t)((long long)e + shift), rd + wr, fl);
        else if (line[0] == 'K' && sscanf(line, "K %u %llu %llu %llu %511s", &d, &s, &e, &c, nm) == 5 && d < 16) {
            if (nk == ck) {
                ck = ck ? 2 * ck : 1024;
                K = realloc(K, ck * sizeof *K);
            }
            K[nk].dev = d;
            K[nk].s = s;
            K[nk].e = e;
            snprintf(K[nk].name, sizeof K[nk].name, "%.127s", nm);
            nk++;
        }
    }
    fclose(f);
    mw_ga_kernel *ks = calloc(nk ? nk : 1, sizeof *ks);
    for (size_t i = 0; i < nk; i++)
        ks[i] = (mw_ga_kernel){.s = K[i].s, .e = K[i].e};
    for (unsigned d = 0; d < 16; d++) {
        size_t n = 0;
        size_t *ix = calloc(nk ? nk : 1, sizeof *ix);
        mw_ga_kernel *b = calloc(nk ? nk : 1, sizeof *b);
        for (size_t i = 0; i < nk; i++)
            if (K[i].dev == d) {
                ix[n] = i;
                b[n++] = ks[i];
            }
        if (n)
            mw_ga_attribute(&dev[d], b, n);
        for (size_t j = 0; j < n; j++)
            ks[ix[j]] = b[j];
        free(ix);
        free(b);
    }
    /* known volumes */
    char kn[16][128];
    double kb[16];
    int nkn = 0;
    if (argc > 3 && strcmp(argv[3], "-")) {
        FILE *k = fopen(argv[3], "r");
        while (k && fgets(line, sizeof line, k) && nkn < 16) {
            char nm[128];
            double by;
            if (sscanf(line, "known kernel=%127s bytes=%lf", nm, &by) == 2) {
                snprintf(kn[nkn], sizeof kn[nkn], "%s", nm);
                kb[nkn++] = by;
            }
        }
        if (k)
            fclose(k);
    }
    /* per name */
    char names[64][128];
    int nn = 0;
    for (size_t i = 0; i < nk; i++) {
        int j = 0;
        while (j < nn && strcmp(names[j], K[i].name))
            j++;
        if (j == nn && nn < 64)
            snprintf(names[nn++], 128, "%s", K[i].name);
    }
    printf("%-22s %4s %8s %8s %10s %12s %9s %9s %9s %8s\n", "kernel", "dev", "launches", "flagged",
           "no-window", "known MB", "med/known", "min/known", "max/known", "in 3%");
    for (int j = 0; j < nn; j++)
        for (unsigned d = 0; d < 16; d++) {
            double *r = malloc(nk * sizeof *r);
            size_t n = 0, fl = 0, nowin = 0, in3 = 0;
            double known = -1;
            for (int q = 0; q < nkn; q++)
                if (strstr(names[j], kn[q]))
                    known = kb[q];
            for (size_t i = 0; i < nk; i++) {
                if (K[i].dev != d || strcmp(K[i].name, names[j]))
                    continue;
                double dur = (double)(K[i].e - K[i].s);
                if (ks[i].covered <= 0) {
                    nowin++;
                    n++;
                    continue;
                }
                double bw = ks[i].bytes / (ks[i].covered * 1e-9);
                fl += bw > thr;
                double ratio = known > 0 ? ks[i].bytes * dur / ks[i].covered / known : ks[i].bytes;
                r[n - nowin] = ratio;
                n++;
                in3 += known > 0 && fabs(ratio - 1) <= 0.03;
            }
            size_t m = n - nowin;
            if (!n) {
                free(r);
                continue;
            }
            qsort(r, m, sizeof *r, dcmp);
            if (known > 0)
                printf("%-22.22s %4u %8zu %8zu %10zu %12.1f %9.4f %9.4f %9.4f %7.1f%%\n", names[j], d, n,
                       fl, nowin, known / 1e6, m ? r[m / 2] : 0, m ? r[0] : 0, m ? r[m - 1] : 0,
                       m ? 100.0 * in3 / m : 0);
            else
                printf("%-22.22s %4u %8zu %8zu %10zu %12s %9.4g %9.4g %9.4g (bytes)\n", names[j], d, n, fl,
                       nowin, "-", m ? r[m / 2] : 0, m ? r[0] : 0, m ? r[m - 1] : 0);
            free(r);
        }
    return 0;
}
