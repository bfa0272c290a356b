/*
 * cli/cmd_calibrate.c: `memwatch calibrate`: runs the ground-truth
 * microbenchmarks of calibrate/ (include/memwatch/bench.h), prints a table,
 * writes every raw figure as JSON (docs/calibrate-json.md) and, on request,
 * SVG plots. `--gpu` never reaches this file (cli/main.c hands it to
 * memwatch-gpu). Progress goes to stderr only when stderr is a terminal.
 * Single-threaded itself; the benchmarks create their own threads.
 */
#include "cli.h"
#include "opts.h"

#include <memwatch/profile.h>

#include <memwatch/bench.h>
#include <memwatch/profile.h>
#include <memwatch/views.h>
#include <memwatch/validate.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct calib_opts {
    unsigned what;          /* MW_CALIB_* */
    int quick;
    unsigned threads;       /* 0: all allowed CPUs */
    size_t triad_bytes;     /* per array; 0: 4 x LLC */
    unsigned repeats;       /* triad; 0: 10 */
    const char *isa;
    unsigned max_delay;     /* 0: default */
    double duration;        /* per sweep / loaded point; 0: default */
    size_t ladder_max;      /* 0: default */
    unsigned mlp_chains;    /* 0: 32 */
    int free_running;       /* triad without a barrier between repetitions */
    const char *json;       /* NULL: default path; "-" stdout */
    int no_json;
    const char *plot_dir;
    const char *html;       /* --html FILE */
    int progress;           /* -1 auto, 0 off, 1 on */
    const char *profile;    /* machine profile path (issue 4); NULL: XDG default */
    int no_validate;
    unsigned mixes;         /* read/write mixes validated (bits of mw_read_mix); 0: all */
};

enum {
    CO_HELP, CO_QUICK, CO_BENCH, CO_THREADS, CO_TRIAD_SIZE, CO_REPEATS, CO_ISA, CO_FREE_RUNNING,
    CO_MAX_DELAY, CO_DURATION, CO_LADDER_MAX, CO_MLP_CHAINS, CO_JSON, CO_NO_JSON, CO_PLOT,
    CO_HTML, CO_PROGRESS, CO_NO_PROGRESS, CO_PROFILE, CO_NO_VALIDATE, CO_MIX, CO_GPU
};
#define CO_STR_(x) #x
#define CO_STR(x) CO_STR_(x)
static const mw_opt calibrate_opts[] = {
    {NULL, "--quick", NULL, CO_QUICK, "shorter runs (a full calibration in well under a minute)"},
    {NULL, "--bench", "LIST", CO_BENCH,
     "benchmarks to run, comma-separated: triad, sweep, ladder,\nloaded, mlp, struct "
     "(prefetchers, TLBs, associativity),\nall (default: all)"},
    {NULL, "--threads", "N", CO_THREADS,
     "threads for triad and sweep (default: every allowed CPU)"},
    {NULL, "--triad-size", "SIZE", CO_TRIAD_SIZE,
     "bytes per triad array, e.g. 512M (default: 4 x LLC)"},
    {NULL, "--repeats", "N", CO_REPEATS,
     "triad repetitions, best reported (default 10, max " CO_STR(MW_BENCH_MAX_REPEATS) ")"},
    {NULL, "--isa", "NAME", CO_ISA, "triad kernel: auto, avx512, avx2, sse2, scalar"},
    {NULL, "--free-running", NULL, CO_FREE_RUNNING,
     "triad repetitions back to back without a barrier (as\nlikwid-bench); the whole-run figure "
     "is then comparable"},
    {NULL, "--max-delay", "N", CO_MAX_DELAY, "largest NOP delay of the read sweep (default 4096)"},
    {NULL, "--duration", "SEC", CO_DURATION, "seconds per sweep / loaded-latency point"},
    {NULL, "--ladder-max", "SIZE", CO_LADDER_MAX,
     "largest ladder footprint (default: max(4 x LLC, 128M))"},
    {NULL, "--mlp-chains", "K", CO_MLP_CHAINS,
     "largest number of independent chains (default 32, max 64)"},
    {NULL, "--json", "PATH", CO_JSON,
     "where to write the JSON ('-' for stdout;\ndefault: memwatch-calibrate.json)"},
    {NULL, "--no-json", NULL, CO_NO_JSON, "write no JSON"},
    {NULL, "--plot", "DIR", CO_PLOT, "write sweep.svg, loaded.svg, mlp.svg, ladder.svg into DIR"},
    {NULL, "--html", "FILE", CO_HTML,
     "one self-contained page: the profile's latency curve,\nthreshold and method verdicts, and "
     "the plots (docs/html.md)"},
    {NULL, "--progress", NULL, CO_PROGRESS, "progress output on stderr, even where it is no tty"},
    {NULL, "--no-progress", NULL, CO_NO_PROGRESS, "no progress output on stderr"},
    {NULL, "--profile", "PATH", CO_PROFILE,
     "machine profile to write (default:\n$XDG_DATA_HOME/memwatch/profile.json; "
     "docs/profile-format.md)"},
    {NULL, "--no-validate", NULL, CO_NO_VALIDATE, "skip method validation and the machine profile"},
    {NULL, "--mix", "LIST", CO_MIX,
     "read/write mixes whose saturation curves are measured:\nreads100, reads75, reads50, nt50 "
     "(or 100, 75, 50, nt),\nall (default: all; reads100 is always measured)"},
    /* cli/main.c hands --gpu to memwatch-gpu before this table is read */
    {NULL, "--gpu", NULL, CO_GPU,
     "the GPU calibration, memwatch-gpu's options after it\n(see docs/gpu.md)"},
    {"-h", "--help", NULL, CO_HELP, "this text"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: memwatch calibrate [options]\n"
               "\n"
               "Runs memwatch's ground-truth microbenchmarks (STREAM triad, delay-regulated read\n"
               "sweep, latency ladder, loaded latency, memory-level parallelism), prints a table\n"
               "and writes every raw figure as JSON (docs/calibrate-json.md).\n"
               "\n"
               "options:\n");
    mw_opt_usage(f, calibrate_opts, MW_OPT_N(calibrate_opts));
}

static int bad(const char *opt, const char *val, const char *want)
{
    fprintf(stderr, "memwatch calibrate: %s: expected %s, got '%s'\n", opt, want, val);
    fprintf(stderr, "Try 'memwatch calibrate --help'.\n");
    return 2;
}

static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    char *end;
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* "4096", "64K", "1M", "2G", "512MiB" (binary multiples). */
static int parse_size(const char *s, size_t *out)
{
    char *end;
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v > 0))
        return -1;
    double mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1024.0; end++; break;
    case 'm': case 'M': mul = 1024.0 * 1024; end++; break;
    case 'g': case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
    default: break;
    }
    if (mul > 1 && (!strcmp(end, "iB") || !strcmp(end, "B") || !strcmp(end, "ib")))
        end += strlen(end);
    else if (mul == 1 && !strcmp(end, "B"))
        end++;
    if (*end)
        return -1;
    v *= mul;
    if (v < 4096 || v > 1e13)
        return -1;
    *out = (size_t)v;
    return 0;
}

static int parse_bench_list(const char *s, unsigned *what)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"triad", MW_CALIB_TRIAD},   {"sweep", MW_CALIB_SWEEP},
                 {"ladder", MW_CALIB_LADDER}, {"loaded", MW_CALIB_LOADED},
                 {"mlp", MW_CALIB_MLP},       {"struct", MW_CALIB_STRUCT},
                 {"all", MW_CALIB_ALL}};
    unsigned w = 0;
    if (!s || !*s)
        return -1;
    const char *p = s;
    while (*p) {
        size_t len = strcspn(p, ",");
        size_t i;
        for (i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == len && !strncmp(p, names[i].name, len))
                break;
        if (i == sizeof names / sizeof names[0])
            return -1;
        w |= names[i].bit;
        p += len;
        if (*p == ',')
            p++;
    }
    if (!w)
        return -1;
    *what = w;
    return 0;
}

/* Returns -1 when parsing succeeded, else the exit status to return. */
static int parse_opts(int argc, char **argv, struct calib_opts *o)
{
    memset(o, 0, sizeof *o);
    o->what = MW_CALIB_ALL;
    o->progress = -1;
    for (int i = 1; i < argc;) {
        const char *val;
        int rc;
        const mw_opt *op = mw_opt_next("calibrate", calibrate_opts, MW_OPT_N(calibrate_opts),
                                       argc, argv, &i, &val, &rc);
        if (!op) {
            if (rc != 2)
                fprintf(stderr, "memwatch calibrate: unexpected argument '%s'\n", argv[i]);
            fprintf(stderr, "Try 'memwatch calibrate --help'.\n");
            return 2;
        }
        const char *name = op->l;
        switch (op->id) {
        case CO_HELP:
            usage(stdout);
            return 0;
        case CO_QUICK:
            o->quick = 1;
            break;
        case CO_BENCH:
            if (parse_bench_list(val, &o->what) < 0)
                return bad(name, val, "a comma-separated list of triad, sweep, ladder, loaded, "
                                      "mlp, struct, all");
            break;
        case CO_THREADS:
            if (parse_uint(val, 1, MW_BENCH_MAX_CPUS, &o->threads) < 0)
                return bad(name, val, "a whole number from 1 to 256");
            break;
        case CO_TRIAD_SIZE:
            if (parse_size(val, &o->triad_bytes) < 0)
                return bad(name, val, "a size of at least 4096 bytes such as 512M or 2G");
            break;
        case CO_REPEATS:
            if (parse_uint(val, 1, MW_BENCH_MAX_REPEATS, &o->repeats) < 0)
                return bad(name, val, "a whole number from 1 to 64");
            break;
        case CO_ISA:
            if (strcmp(val, "auto") && strcmp(val, "avx512") && strcmp(val, "avx2") &&
                strcmp(val, "sse2") && strcmp(val, "scalar"))
                return bad(name, val, "one of auto, avx512, avx2, sse2, scalar");
            o->isa = val;
            break;
        case CO_MAX_DELAY:
            if (parse_uint(val, 1, 8192, &o->max_delay) < 0)
                return bad(name, val, "a whole number from 1 to 8192");
            break;
        case CO_DURATION: {
            char *end;
            errno = 0;
            double d = strtod(val, &end);
            if (errno || end == val || *end || !(d >= 0.01 && d <= 60))
                return bad(name, val, "seconds from 0.01 to 60");
            o->duration = d;
            break;
        }
        case CO_LADDER_MAX:
            if (parse_size(val, &o->ladder_max) < 0 || o->ladder_max < 65536)
                return bad(name, val, "a size of at least 64K such as 256M");
            break;
        case CO_MLP_CHAINS:
            if (parse_uint(val, 2, MW_MLP_MAX_CHAINS, &o->mlp_chains) < 0)
                return bad(name, val, "a whole number from 2 to 64");
            break;
        case CO_JSON:
            if (!*val)
                return bad(name, val, "a file name or '-'");
            o->json = val;
            break;
        case CO_FREE_RUNNING:
            o->free_running = 1;
            break;
        case CO_NO_JSON:
            o->no_json = 1;
            break;
        case CO_PLOT:
            if (!*val)
                return bad(name, val, "a directory");
            o->plot_dir = val;
            break;
        case CO_HTML:
            if (!*val)
                return bad(name, val, "a file name");
            o->html = val;
            break;
        case CO_PROFILE:
            if (!*val)
                return bad(name, val, "a file name");
            o->profile = val;
            break;
        case CO_MIX:
            if (mw_mix_parse_list(val, &o->mixes) < 0)
                return bad(name, val, "a comma-separated list of reads100, reads75, reads50, "
                                      "nt50 (or 100, 75, 50, nt), all");
            o->mixes |= 1u << MW_MIX_R100;
            break;
        case CO_NO_VALIDATE:
            o->no_validate = 1;
            break;
        case CO_PROGRESS:
            o->progress = 1;
            break;
        case CO_NO_PROGRESS:
            o->progress = 0;
            break;
        case CO_GPU: /* not reached: cli/main.c runs memwatch-gpu for it */
            return 2;
        }
    }
    if (o->mixes && o->no_validate) {
        fprintf(stderr, "memwatch calibrate: --mix needs the validation: it contradicts "
                        "--no-validate\n");
        return 2;
    }
    if (o->json && o->no_json) {
        fprintf(stderr, "memwatch calibrate: --json and --no-json contradict each other\n");
        return 2;
    }
    return -1;
}

/* ------------------------------------------------------------ progress */
struct progress {
    int on;
    const char *what;
    double t0;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void progress_cb(void *user, unsigned done, unsigned total)
{
    struct progress *p = user;
    if (!p->on)
        return;
    fprintf(stderr, "\r  %-8s %3u/%-3u  %5.1f s", p->what, done, total, now_s() - p->t0);
    fflush(stderr);
}

static void progress_begin(struct progress *p, const char *what)
{
    p->what = what;
    if (p->on) {
        fprintf(stderr, "\r  %-8s ...", what);
        fflush(stderr);
    }
}

static void progress_end(struct progress *p)
{
    if (p->on) {
        fprintf(stderr, "\r%60s\r", "");
        fflush(stderr);
    }
}

/* --------------------------------------------------------------- table */
static const char *human_bytes(size_t b, char *buf, size_t n)
{
    if (b >= ((size_t)1 << 30) && b % ((size_t)1 << 30) == 0)
        snprintf(buf, n, "%zu GiB", b >> 30);
    else if (b >= ((size_t)1 << 20))
        snprintf(buf, n, "%.3g MiB", (double)b / (1 << 20));
    else
        snprintf(buf, n, "%.3g KiB", (double)b / 1024);
    return buf;
}

static void print_struct(const mw_struct_result *s)
{
    char b1[32];
    const mw_prefetch_result *p = &s->pf;
    printf("\nprefetchers  (latency curves, flushed memory; random lines %.1f ns)\n", p->random_ns);
    printf("  adjacent line: a line then its 128-byte buddy %.1f ns/load, then another pair's "
           "%.1f ns/load: %s\n",
           p->pair_same_ns, p->pair_other_ns,
           p->adjacent_line ? "the buddy comes with the line (adjacent-line prefetch)"
                            : "no adjacent-line prefetch seen");
    printf("  stride  ");
    for (unsigned i = 0; i < p->stride.n; i++)
        printf(" %6.0f", p->stride.x[i]);
    printf("\n  ns/load ");
    for (unsigned i = 0; i < p->stride.n; i++)
        printf(" %6.1f", p->stride.ns[i]);
    printf("\n  strides prefetched (under half the random latency): %s\n",
           p->stride_covered ? human_bytes(p->stride_covered, b1, sizeof b1) : "none");
    printf("  distance: 4 lines streamed, one load d lines on (hit %.1f ns):", p->hit_ns);
    for (unsigned i = 0; i < p->distance.n; i++)
        printf(" %.0f:%.0f", p->distance.x[i], p->distance.ns[i]);
    printf("\n  served up to %u lines ahead of the stream\n", p->distance_lines);
    for (int t = 0; t < 2; t++) {
        const mw_tlb_curve *c = &s->tlb[t];
        printf("\nTLB, %s pages  (one line per page against the same lines packed)%s%s\n",
               t ? "2 MiB" : "4 KiB", c->note[0] ? ": " : "", c->note);
        printf("  pages    ");
        for (unsigned i = 0; i < c->pages.n; i++)
            printf(" %6.0f", c->pages.x[i]);
        printf("\n  ns       ");
        for (unsigned i = 0; i < c->pages.n; i++)
            printf(" %6.1f", c->pages.ns[i]);
        printf("\n  packed   ");
        for (unsigned i = 0; i < c->control.n; i++)
            printf(" %6.1f", c->control.ns[i]);
        printf("\n");
        for (unsigned l = 0; l < c->nlevels; l++) {
            const mw_tlb_level *lv = &c->level[l];
            printf("  level %u: %u entries (steps by %u), reach %s, +%.1f ns past it", l + 1,
                   lv->entries, lv->first_miss, human_bytes(lv->reach, b1, sizeof b1),
                   lv->extra_ns);
            if (lv->rise_from != lv->entries || lv->rise_to != lv->first_miss)
                printf(" (rises between %u and %u pages; entries: the last below half the rise)",
                       lv->rise_from, lv->rise_to);
            printf("\n");
        }
        if (!c->nlevels)
            printf("  no step up to %.0f pages\n", c->pages.n ? c->pages.x[c->pages.n - 1] : 0);
    }
    const mw_assoc_result *a = &s->assoc;
    printf("\nassociativity  (k lines %s apart, random cycle%s)\n  k  ",
           human_bytes(a->stride, b1, sizeof b1),
           a->huge ? "; 2 MiB pages: one L1 and one L2 set"
                   : "; no 2 MiB pages: one L1 set only");
    for (unsigned i = 0; i < a->curve.n; i++)
        printf(" %5.0f", a->curve.x[i]);
    printf("\n  ns ");
    for (unsigned i = 0; i < a->curve.n; i++)
        printf(" %5.1f", a->curve.ns[i]);
    printf("\n");
    static const char *const lvl[] = {"L1", "L2", "L3"};
    for (unsigned i = 0; i < a->nsteps; i++)
        printf("  %s: %u ways (%.1f ns, then %.1f ns)\n", lvl[i], a->ways[i], a->level_ns[i],
               a->level_ns[i + 1]);
    if (!a->nsteps)
        printf("  no step up to %u lines\n", a->curve.n);
}

static void print_table(const mw_calib_results *r)
{
    char b1[32], b2[32];
    printf("memwatch calibrate: %u threads; TSC %.4f GHz (%s; CLOCK_MONOTONIC_RAW differs by "
           "%+.3f %%), timer overhead %.0f cycles; transparent huge pages '%s'%s%s\n",
           r->threads, r->timer.tsc_hz / 1e9, r->timer.tsc_source,
           100 * r->timer.tsc_clock_diff, r->timer.overhead_cycles, r->timer.thp,
           r->timer.note[0] ? ": " : "", r->timer.note);
    printf("caches (sysfs):");
    for (unsigned i = 0; i < r->cache.n; i++)
        printf(" L%d %s%s", r->cache.level[i].level, human_bytes(r->cache.level[i].size, b1, sizeof b1),
               i + 1 < r->cache.n ? "," : "\n");
    if (!r->cache.n)
        printf(" none found\n");

    if (r->ran & MW_CALIB_TRIAD) {
        printf("\nSTREAM triad  (arrays of %s, %s kernel, best of %u)\n",
               human_bytes(r->triad[0].array_bytes, b1, sizeof b1), r->triad[0].isa,
               r->triad[0].repeats);
        printf("  %-24s %6s %12s %12s %8s %12s %14s\n", "stores", "B/iter", "best GB/s",
               "median GB/s", "CV", "run GB/s", "STREAM GB/s");
        for (int s = 0; s < 2; s++) {
            const mw_triad_result *t = &r->triad[s];
            if (!t->repeats)
                continue;
            printf("  %-24s %6u %12.2f %12.2f %7.1f%% %12.2f %14.2f\n",
                   s ? "non-temporal" : "normal (write-allocate)", t->bytes_per_iter,
                   t->bw_stats.best / 1e9, t->bw_stats.median / 1e9, 100 * t->bw_stats.cv,
                   t->run_bw / 1e9, t->explicit_bw_best / 1e9);
        }
        printf("  (B/iter: bytes that really move; 'run': all repetitions' bytes / their whole "
               "time%s;\n   'STREAM GB/s': the best in STREAM's 24 B/iter)\n",
               r->triad[0].free_running ? ", free-running" : "");
    }
    if (r->ran & MW_CALIB_SWEEP) {
        const mw_sweep_result *s = &r->sweep;
        printf("\nread sweep  (GB/s; one load per 64-byte line, NOPs after every four loads)\n");
        printf("  %8s", "delay");
        for (unsigned t = 0; t < s->nthreads; t++)
            printf(" %7u thr", s->thread_grid[t]);
        printf("\n");
        for (unsigned d = 0; d < s->ndelays; d++) {
            printf("  %8u", s->delay_grid[d]);
            for (unsigned t = 0; t < s->nthreads; t++)
                printf(" %11.2f", s->point[t][d].bw / 1e9);
            printf("\n");
        }
        printf("  range %.2f .. %.2f GB/s\n", s->min_bw / 1e9, s->peak_bw / 1e9);
    }
    if (r->ran & MW_CALIB_LADDER) {
        const mw_ladder_result *l = &r->ladder;
        printf("\nlatency ladder  (%u footprints, %s pages; cycles are TSC cycles)\n", l->npoints,
               l->huge_pages ? "2 MiB" : "4 KiB");
        printf("  %-7s %10s %9s %12s %12s %s\n", "level", "ns", "cycles", "detected", "sysfs",
               "within one step");
        for (unsigned i = 0; i < l->nlevels; i++) {
            const mw_ladder_level *v = &l->level[i];
            char lname[16];
            if (v->is_memory)
                snprintf(lname, sizeof lname, "memory");
            else
                snprintf(lname, sizeof lname, "L%d", v->level);
            printf("  %-7s %10.2f %9.1f %12s %12s %s\n", lname, v->ns, v->cycles,
                   v->is_memory ? "-" : human_bytes(v->size, b1, sizeof b1),
                   v->sysfs_size ? human_bytes(v->sysfs_size, b2, sizeof b2) : "-",
                   v->is_memory ? "" : (v->sysfs_size ? (v->within_one_step ? "yes" : "NO") : "?"));
        }
        if (l->npoints)
            printf("  idle memory latency %.1f ns (%.0f cycles) at %s%s\n", l->dram_ns,
                   l->dram_cycles,
                   human_bytes(l->point[l->npoints - 1].bytes, b1, sizeof b1),
                   l->levels_from_local ? ", full-random chase" : "");
        if (l->levels_from_local) {
            printf("  sizes from the page-local chase (%d lines of a page back to back), ns and "
                   "cycles\n  from the full-random one over the same plateau; the full-random "
                   "chase steps at\n ",
                   MW_LADDER_GROUP_LINES);
            for (unsigned i = 0; i < l->full_nlevels; i++)
                if (!l->full_level[i].is_memory)
                    printf(" %s (%.1f ns)", human_bytes(l->full_level[i].size, b1, sizeof b1),
                           l->full_level[i].ns);
            printf("\n");
            if (l->tlb_reach)
                printf("  TLB reach %s: past it the full-random chase steps up where the "
                       "page-local\n  one does not\n",
                       human_bytes(l->tlb_reach, b1, sizeof b1));
            else
                printf("  TLB reach: no step of its own (every full-random step is a cache "
                       "step too)\n");
            printf("  full-random / page-local at %s: %.2fx\n",
                   human_bytes(l->point[l->npoints - 1].bytes, b1, sizeof b1), l->tlb_ratio);
        }
        for (unsigned i = 0; i < l->nlevels; i++)
            if (!l->level[i].is_memory && !l->level[i].sysfs_size) {
                printf("  ?: no cache in the kernel's list matches this step (a TLB running out "
                       "of reach\n  inside a cache level looks like this)\n");
                break;
            }
        for (unsigned i = 0; i < l->nlevels; i++)
            if (!l->level[i].is_memory && l->level[i].sysfs_size && !l->level[i].within_one_step) {
                printf("  NO: the step lies more than one footprint step from the kernel's size; "
                       "the cache this\n  program really gets differs (a host that partitions "
                       "or shares the cache with\n  other guests, or other programs using it; "
                       "see docs/calibrate.md)\n");
                break;
            }
    }
    if (r->ran & MW_CALIB_LOADED) {
        const mw_loaded_result *L = &r->loaded;
        printf("\nloaded latency  (chaser on CPU %u, %u load threads; idle %.1f ns)\n",
               L->chase_cpu, L->load_threads, L->idle_ns);
        printf("  %8s %12s %12s\n", "delay", "load GB/s", "latency ns");
        for (unsigned i = 0; i < L->npoints; i++)
            printf("  %8u %12.2f %12.1f\n", L->point[i].delay, L->point[i].bw / 1e9,
                   L->point[i].ns);
    }
    if (r->ran & MW_CALIB_MLP) {
        const mw_mlp_result *m = &r->mlp;
        printf("\nmemory-level parallelism  (k independent chains)\n  k        ");
        for (unsigned k = 0; k < m->n; k++)
            if (k < 8 || (k + 1) % 4 == 0)
                printf(" %5u", k + 1);
        printf("\n  ns/load  ");
        for (unsigned k = 0; k < m->n; k++)
            if (k < 8 || (k + 1) % 4 == 0)
                printf(" %5.1f", m->ns_per_load[k]);
        printf("\n  speed-up ");
        for (unsigned k = 0; k < m->n; k++)
            if (k < 8 || (k + 1) % 4 == 0)
                printf(" %5.1f", m->parallelism[k]);
        if (m->saturated)
            printf("\n  sustained outstanding misses per core: %.1f (95 %% of it reached at k = %u)\n",
                   m->outstanding, m->saturation_k);
        else
            printf("\n  sustained outstanding misses per core: at least %.1f (still rising at k = %u)\n",
                   m->outstanding, m->n);
    }
    if (r->ran & MW_CALIB_STRUCT)
        print_struct(&r->structure);
    fflush(stdout);
}

static int bench_failed(const char *what, int rc)
{
    fprintf(stderr, "memwatch calibrate: %s: %s\n", what, mw_strerror(rc));
    return 1;
}

/* Every file calibrate will write, checked before the benchmarks run (they
 * take minutes): 0, or -1 after one line. */
static int check_outputs(const struct calib_opts *o)
{
    if (!o->no_json && (!o->json || strcmp(o->json, "-")) &&
        mw_cli_check_out_file("calibrate", "--json",
                              o->json ? o->json : "memwatch-calibrate.json"))
        return -1;
    if (o->plot_dir && mw_cli_check_out_dir("calibrate", "--plot", o->plot_dir))
        return -1;
    if (!o->no_validate) {
        char def[4096];
        const char *p = o->profile;
        if (!p && mw_profile_default_path(def, sizeof def) == 0)
            p = def;
        if (p) {
            /* its directory is created when missing (profile_write.c) */
            char dir[4096];
            snprintf(dir, sizeof dir, "%s", p);
            char *sl = strrchr(dir, '/');
            if (sl && sl != dir)
                *sl = 0;
            else
                snprintf(dir, sizeof dir, "%s", sl ? "/" : ".");
            struct stat st;
            if (stat(p, &st) == 0 ? mw_cli_check_out_file("calibrate", "--profile", p)
                                  : mw_cli_check_out_dir("calibrate", "--profile's directory", dir))
                return -1;
        }
    }
    return 0;
}

/* The files asked for: the raw figures as JSON, the plots, the HTML page; status, or 1
 * where one could not be written (status kept when it is not 0). */
static int cal_write_outputs(const struct calib_opts *o, mw_calib_results *r, int json_stdout,
                             int status)
{
    int rc;
    if (!o->no_json) {
        const char *path = o->json ? o->json : "memwatch-calibrate.json";
        rc = mw_calib_results_write_json(r, json_stdout ? NULL : path);
        if (rc < 0) {
            fprintf(stderr, "memwatch calibrate: cannot write %s: %s\n", path, mw_strerror(rc));
            status = status ? status : 1;
        } else if (!json_stdout) {
            printf("\nraw figures: %s\n", path);
        }
    }
    if (o->plot_dir) {
        rc = mw_calib_results_write_plots(r, o->plot_dir);
        if (rc < 0) {
            fprintf(stderr, "memwatch calibrate: cannot write plots into %s: %s\n", o->plot_dir,
                    mw_strerror(rc));
            status = status ? status : 1;
        } else if (!json_stdout) {
            printf("plots: %s/{sweep,loaded,mlp,ladder%s}.svg\n", o->plot_dir,
                   o->no_validate ? "" : ",mixes");
        }
    }
    if (o->html) {
        /* the plots into --plot's folder, or a temporary one, inlined */
        char tmpdir[] = "/tmp/memwatch-calib-html.XXXXXX", prof[4096] = "";
        const char *dir = o->plot_dir;
        if (!dir && mkdtemp(tmpdir) && mw_calib_results_write_plots(r, tmpdir) >= 0)
            dir = tmpdir;
        if (o->profile)
            snprintf(prof, sizeof prof, "%s", o->profile);
        else
            mw_profile_default_path(prof, sizeof prof);
        rc = mw_calib_html(o->html, o->no_validate ? NULL : prof, dir);
        if (!o->plot_dir) {
            static const char *const names[] = {"sweep.svg",    "loaded.svg",
                                                "mlp.svg",      "ladder.svg",
                                                "prefetch.svg", "prefetch_distance.svg",
                                                "tlb.svg",      "assoc.svg"};
            for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
                char p[sizeof tmpdir + 16];
                snprintf(p, sizeof p, "%s/%s", tmpdir, names[i]);
                unlink(p);
            }
            rmdir(tmpdir);
        }
        if (rc < 0) {
            fprintf(stderr, "memwatch calibrate: cannot write %s: %s\n", o->html, mw_strerror(rc));
            status = status ? status : 1;
        } else if (!json_stdout) {
            printf("HTML: %s\n", o->html);
        }
    }
    return status;
}

/* The time each part took, and the total since t0. */
static void cal_print_times(const mw_calib_results *r, double t0)
{
    static const char *const names[6] = {"triad", "sweep", "ladder", "loaded", "mlp",
                                         "validation"};
    printf("\ntime per part:");
    for (int i = 0; i < 6; i++)
        if (r->part_s[i] > 0) {
            printf(" %s %.1f s,", names[i], r->part_s[i]);
        }
    if (r->struct_s > 0)
        printf(" structure %.1f s,", r->struct_s);
    printf(" total %.1f s\n", now_s() - t0);
}

/* The latency benchmarks, each timed into r->part_s: the ladder, loaded latency, memory-
 * level parallelism, the structure probes; 0, or the status of the first that failed. */
static int cal_run_latency(const struct calib_opts *o, mw_calib_results *r,
                           struct progress *pg, const int *cpus, double *tp)
{
    int status = 0, rc;
    double tpart = *tp;
    if ((o->what & MW_CALIB_LADDER) && status == 0) {
        progress_begin(pg, "ladder");
        /* --quick: to 2x the last-level cache (at least 128 MiB), past it
         * far enough for the memory plateau, 3 footprints an octave instead
         * of 4; the largest footprints cost most */
        mw_ladder_config c = {.max_bytes = o->ladder_max,
                              .llc_times = o->quick ? 2 : 4,
                              .steps_per_octave = o->quick ? 3 : 4,
                              .repeats = o->quick ? 2 : 3,
                              .min_loads = (uint64_t)1 << 17,
                              .cpu = cpus[0],
                              .progress = progress_cb,
                              .user = pg};
        rc = mw_bench_ladder(&c, &r->ladder);
        if (rc < 0)
            status = bench_failed("latency ladder", rc);
        else
            r->ran |= MW_CALIB_LADDER;
        progress_end(pg);
        r->part_s[2] = now_s() - tpart;
        tpart = now_s();
    }
    if ((o->what & MW_CALIB_LOADED) && status == 0) {
        progress_begin(pg, "loaded");
        mw_loaded_config c = {.load_threads = r->threads > 1 ? r->threads - 1 : 0,
                              .max_delay = o->max_delay,
                              .duration_s = o->duration > 0 ? o->duration : (o->quick ? 0.15 : 0.3),
                              .progress = progress_cb,
                              .user = pg};
        rc = mw_bench_loaded_latency(&c, &r->loaded);
        if (rc == MW_ERR_UNSUPPORTED)
            fprintf(stderr, "memwatch calibrate: loaded latency skipped: it needs two CPUs\n");
        else if (rc < 0)
            status = bench_failed("loaded latency", rc);
        else
            r->ran |= MW_CALIB_LOADED;
        progress_end(pg);
        r->part_s[3] = now_s() - tpart;
        tpart = now_s();
    }
    if ((o->what & MW_CALIB_MLP) && status == 0) {
        progress_begin(pg, "mlp");
        /* --quick: the cycle over 2x the last-level cache (at least 128
         * MiB) instead of 4x: its serial shuffle costs most */
        mw_mlp_config c = {.max_chains = o->mlp_chains,
                           .llc_times = o->quick ? 2 : 4,
                           .loads = o->quick ? ((uint64_t)1 << 18) : 0,
                           .cpu = cpus[0],
                           .progress = progress_cb,
                           .user = pg};
        rc = mw_bench_mlp(&c, &r->mlp);
        if (rc < 0)
            status = bench_failed("memory-level parallelism", rc);
        else
            r->ran |= MW_CALIB_MLP;
        progress_end(pg);
        r->part_s[4] = now_s() - tpart;
        tpart = now_s();
    }

    if ((o->what & MW_CALIB_STRUCT) && status == 0) {
        progress_begin(pg, "struct");
        mw_struct_config c = {.cpu = cpus[0], .quick = o->quick};
        rc = mw_bench_struct(&c, &r->structure);
        if (rc == MW_ERR_UNSUPPORTED)
            fprintf(stderr, "memwatch calibrate: structure probes skipped: they need x86-64\n");
        else if (rc < 0)
            status = bench_failed("structure probes", rc);
        else
            r->ran |= MW_CALIB_STRUCT;
        progress_end(pg);
        r->struct_s = now_s() - tpart;
        tpart = now_s();
    }
    *tp = tpart;
return status;
}

/* The bandwidth benchmarks, each timed into r->part_s: the triad (cached and non-temporal
 * stores), the read sweep; 0, or the status of the first that failed. */
static int cal_run_bandwidth(const struct calib_opts *o, mw_calib_results *r,
                             struct progress *pg, double *tp)
{
    int status = 0, rc;
    double tpart = *tp;
    if (o->what & MW_CALIB_TRIAD) {
        progress_begin(pg, "triad");
        for (int s = 0; s < 2 && status == 0; s++) {
            mw_triad_config c = {.threads = r->threads,
                                 .elems = o->triad_bytes / sizeof(double),
                                 .repeats = o->repeats,
                                 .store = (mw_triad_store)s,
                                 .isa = o->isa,
                                 .free_running = o->free_running};
            rc = mw_bench_triad(&c, &r->triad[s]);
            if (rc == MW_ERR_UNSUPPORTED && s == MW_TRIAD_NT) {
                fprintf(stderr, "memwatch calibrate: triad: no non-temporal kernel for ISA '%s'\n",
                        o->isa ? o->isa : "auto");
                continue;
            }
            if (rc < 0)
                status = bench_failed("triad", rc);
            progress_cb(pg, (unsigned)s + 1, 2);
        }
        if (status == 0)
            r->ran |= MW_CALIB_TRIAD;
        progress_end(pg);
        r->part_s[0] = now_s() - tpart;
        tpart = now_s();
    }
    if ((o->what & MW_CALIB_SWEEP) && status == 0) {
        progress_begin(pg, "sweep");
        mw_sweep_config c = {.max_threads = r->threads,
                             .max_delay = o->max_delay,
                             .duration_s = o->duration > 0 ? o->duration : (o->quick ? 0.02 : 0.04),
                             .windows = o->quick ? 3 : 5,
                             .delay_stride = o->quick ? 2 : 0,
                             .min_windows = 2,
                             .cv_target = 0.02,
                             .progress = progress_cb,
                             .user = pg};
        rc = mw_bench_read_sweep(&c, &r->sweep);
        if (rc < 0)
            status = bench_failed("read sweep", rc);
        else
            r->ran |= MW_CALIB_SWEEP;
        progress_end(pg);
        r->part_s[1] = now_s() - tpart;
        tpart = now_s();
    }
    *tp = tpart;
return status;
}

int mw_cmd_calibrate(int argc, char **argv)
{
    struct calib_opts o;
    int st = parse_opts(argc, argv, &o);
    if (st >= 0)
        return st;
    if (check_outputs(&o))
        return 2;
    /* every file and directory calibrate writes (the JSON, the plots and
     * their directory, the HTML, the profile) is the owner's only, whatever
     * the umask: the writers give explicit modes, and this covers the rest */
    umask(077);
    int status = 0;
    mw_calib_results *r = calloc(1, sizeof *r);
    if (!r) {
        fprintf(stderr, "memwatch calibrate: out of memory\n");
        return 1;
    }
    struct progress pg = {.on = o.progress >= 0 ? o.progress : isatty(STDERR_FILENO),
                          .t0 = now_s()};
    int cpus[MW_BENCH_MAX_CPUS];
    int ncpus = mw_bench_cpus(cpus, MW_BENCH_MAX_CPUS);
    if (ncpus <= 0) {
        fprintf(stderr, "memwatch calibrate: cannot list the CPUs this process may use\n");
        free(r);
        return 1;
    }
    if (o.threads > (unsigned)ncpus)
        fprintf(stderr,
                "memwatch calibrate: warning: %u threads on %d CPUs: threads will share CPUs\n",
                o.threads, ncpus);
    r->threads = o.threads ? o.threads : (unsigned)ncpus;
    r->loadavg_before = mw_bench_loadavg();
    if (r->loadavg_before > 0.5 * ncpus)
        fprintf(stderr,
                "memwatch calibrate: warning: the machine is busy (load average %.1f on %d CPUs): "
                "other programs will disturb the figures\n",
                r->loadavg_before, ncpus);
    int rc = mw_timer_info_get(&r->timer);
    if (rc < 0) {
        fprintf(stderr, "memwatch calibrate: no usable time-stamp counter: %s\n", mw_strerror(rc));
        free(r);
        return 1;
    }
    if (mw_cache_info_read(NULL, cpus[0], &r->cache) < 0)
        fprintf(stderr, "memwatch calibrate: warning: no cache information in sysfs; assuming "
                        "a 32 MiB last-level cache\n");

    double tpart = now_s();
    status = cal_run_bandwidth(&o, r, &pg, &tpart);
    if (status == 0)
        status = cal_run_latency(&o, r, &pg, cpus, &tpart);
    r->loadavg_after = mw_bench_loadavg();
    int json_stdout = o.json && !strcmp(o.json, "-");
    if (!json_stdout)
        print_table(r);

    /* validation and machine profile (issue 4): the collected results are in
     * *r (mw_calib_results, include/memwatch/bench.h); validation runs here,
     * after the benchmarks and before the JSON is written. */
    if (!o.no_validate &&
        mw_validate_calibrate_mixes(r, o.profile, o.quick, pg.on, o.mixes, o.plot_dir,
                                    &r->part_s[5], json_stdout ? stderr : stdout, stderr) < 0)
        status = status ? status : 1; /* runs even after a benchmark failed: it measures its own */
    if (!json_stdout)
        cal_print_times(r, pg.t0);

    status = cal_write_outputs(&o, r, json_stdout, status);
    if (pg.on)
        fprintf(stderr, "memwatch calibrate: done in %.1f s\n", now_s() - pg.t0);
    free(r);
    return status;
}
