/*
 * cli/monitor_metrics.c: what memwatch monitor serves (cli/monitor.h;
 * every metric is described in docs/monitor.md): the state the interval
 * loop keeps, rendered as OpenMetrics 1.0.0 text, or as Prometheus text
 * 0.0.4 for a client whose Accept header asks for text/plain only (the
 * two differ only in how counters and info metrics are named in the
 * HELP/TYPE lines, in UNIT lines and in the closing "# EOF").
 *
 * May call: libc, monitor_procs.c. Threading: mon_render takes the
 * state's lock while it copies what it prints; the text is built after.
 */
#include "monitor.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define OUT_MAX (1u << 20) /* a rendering never grows past this */

const double mon_buckets_ns[MON_NBUCKETS] = {60,  70,  80,  90,  100, 110, 120, 130,
                                             140, 150, 160, 180, 200, 225, 250, 300,
                                             350, 400, 500, 700, 1000, 2000};

typedef struct obuf {
    char *b;
    size_t len, cap;
    int oom;
} obuf;

static void put(obuf *o, const char *fmt, ...)
{
    if (o->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(o->b + o->len, o->cap - o->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            o->oom = 1;
            return;
        }
        if ((size_t)n < o->cap - o->len) {
            o->len += (size_t)n;
            return;
        }
        size_t want = o->cap * 2;
        while (want < o->len + (size_t)n + 1)
            want *= 2;
        char *nb = want <= OUT_MAX ? realloc(o->b, want) : NULL;
        if (!nb) {
            o->oom = 1;
            return;
        }
        o->b = nb;
        o->cap = want;
    }
}

/* A label value: backslash, quote and newline escaped; bytes that are
 * not printable ASCII (a process may name itself anything) become '?',
 * so the text stays UTF-8. */
static void esc(char *out, size_t n, const char *s)
{
    size_t k = 0;
    for (; *s && k + 3 < n; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\\' || c == '"') {
            out[k++] = '\\';
            out[k++] = (char)c;
        } else if (c == '\n') {
            out[k++] = '\\';
            out[k++] = 'n';
        } else {
            out[k++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
        }
    }
    out[k] = 0;
}

/* A number as OpenMetrics writes it. */
static const char *num(char *b, size_t n, double v)
{
    if (isnan(v))
        snprintf(b, n, "NaN");
    else if (isinf(v))
        snprintf(b, n, v > 0 ? "+Inf" : "-Inf");
    else
        snprintf(b, n, "%.10g", v);
    return b;
}

enum fam_type { F_GAUGE, F_COUNTER, F_HISTOGRAM, F_INFO };

/* A family's metadata. Counters are named without _total and info
 * metrics without _info in OpenMetrics; the 0.0.4 text format names the
 * sample (and knows no info type: a gauge of value 1). */
static void fam(obuf *o, int om, const char *name, enum fam_type t, const char *unit,
                const char *help)
{
    static const char *const tn[] = {"gauge", "counter", "histogram", "info"};
    const char *suf = "", *type = tn[t];
    if (!om && t == F_COUNTER)
        suf = "_total";
    if (!om && t == F_INFO) {
        suf = "_info";
        type = "gauge";
    }
    put(o, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suf, help, name, suf, type);
    if (om && unit)
        put(o, "# UNIT %s %s\n", name, unit);
}

/* One sample: name, the base labels, more labels (may be ""), value. */
static void sample(obuf *o, const char *name, const char *base, const char *more, double v)
{
    char b[40];
    put(o, "%s{%s%s%s} %s\n", name, base, more[0] ? "," : "", more, num(b, sizeof b, v));
}

static const char *const level_names[MON_NLEVELS] = {"low", "medium", "high", "bound",
                                                      "unknown"};

static const char *const prof_names[] = {"present", "missing", "unusable", "foreign", "off"};

/* The process's CPU seconds and resident bytes. */
static void self_cost(double *cpu_s, double *rss)
{
    struct rusage ru;
    *cpu_s = 0;
    *rss = 0;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        *cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
                 ru.ru_stime.tv_usec / 1e6;
    FILE *f = fopen("/proc/self/statm", "re");
    unsigned long long size, res;
    if (f) {
        if (fscanf(f, "%llu %llu", &size, &res) == 2)
            *rss = (double)res * (double)sysconf(_SC_PAGESIZE);
        fclose(f);
    }
}

/* The machine's memory: latency histogram, threshold and band, peak and
 * share, seconds per level, intervals and the probe's failures. */
static void render_memory(obuf *o, int om, const mon_state *c, const char *base)
{
    char more[1024], b1[40];
    fam(o, om, "memwatch_latency_seconds", F_HISTOGRAM, "seconds",
        "Loaded memory latency read by memwatch's software latency probe, one reading per "
        "interval (median of the bursts of the last 8 measurements).");
    uint64_t cum = 0;
    for (int i = 0; i <= MON_NBUCKETS; i++) {
        cum += c->hist[i];
        snprintf(more, sizeof more, "le=\"%s\"",
                 i < MON_NBUCKETS ? num(b1, sizeof b1, mon_buckets_ns[i] * 1e-9) : "+Inf");
        sample(o, "memwatch_latency_seconds_bucket", base, more, (double)cum);
    }
    sample(o, "memwatch_latency_seconds_count", base, "", (double)c->readings);
    sample(o, "memwatch_latency_seconds_sum", base, "", c->lat_sum_ns * 1e-9);

    if (c->last_ns > 0) {
        fam(o, om, "memwatch_latency_last_seconds", F_GAUGE, "seconds",
            "The last interval's loaded memory latency reading.");
        sample(o, "memwatch_latency_last_seconds", base, "", c->last_ns * 1e-9);
    }
    if (c->threshold_ns > 0) {
        fam(o, om, "memwatch_threshold_seconds", F_GAUGE, "seconds",
            "Saturation threshold of the machine profile: an interval whose latency lies "
            "above it is bound.");
        sample(o, "memwatch_threshold_seconds", base, "", c->threshold_ns * 1e-9);
    }
    if (c->meta.have_band) {
        fam(o, om, "memwatch_threshold_band_seconds", F_GAUGE, "seconds",
            "The threshold's uncertainty band from the machine profile (edge low, high).");
        sample(o, "memwatch_threshold_band_seconds", base, "edge=\"low\"", c->meta.band_lo * 1e-9);
        sample(o, "memwatch_threshold_band_seconds", base, "edge=\"high\"", c->meta.band_hi * 1e-9);
    }
    if (c->meta.ncurve > 0) {
        double peak = c->meta.peak_bw > 0 ? c->meta.peak_bw : c->meta.curve_bw[c->meta.ncurve - 1] * 1e9;
        fam(o, om, "memwatch_bandwidth_peak_bytes_per_second", F_GAUGE, "bytes_per_second",
            "The highest bandwidth of the machine profile's latency-bandwidth curve: the "
            "peak that shares are relative to.");
        sample(o, "memwatch_bandwidth_peak_bytes_per_second", base, "", peak);
        if (c->last_share >= 0) {
            fam(o, om, "memwatch_bandwidth_share_ratio", F_GAUGE, "ratio",
                "Estimated share of the peak bandwidth in the last interval: its latency read "
                "back on the profile's latency-bandwidth curve (an estimate, not a count).");
            sample(o, "memwatch_bandwidth_share_ratio", base, "", c->last_share);
        }
    }
    fam(o, om, "memwatch_level_seconds", F_COUNTER, "seconds",
        "Seconds per memory-load level: bound (latency above the threshold, on a machine "
        "whose memory can saturate), high (>= 80 % of the peak bandwidth), medium (>= 50 %), "
        "low, unknown (no reading, or no profile to judge it by).");
    for (int l = 0; l < MON_NLEVELS; l++) {
        snprintf(more, sizeof more, "level=\"%s\"", level_names[l]);
        sample(o, "memwatch_level_seconds_total", base, more, c->level_s[l]);
    }
    if (c->meta.have_band) {
        fam(o, om, "memwatch_band_seconds", F_COUNTER, "seconds",
            "Seconds whose latency lay within the threshold's uncertainty band (possibly bound).");
        sample(o, "memwatch_band_seconds_total", base, "", c->band_s);
    }
    fam(o, om, "memwatch_measured_seconds", F_COUNTER, "seconds",
        "Seconds the agent has judged: the sum of memwatch_level_seconds over the levels.");
    sample(o, "memwatch_measured_seconds_total", base, "", c->measured_s);
    fam(o, om, "memwatch_intervals", F_COUNTER, NULL, "Intervals ended.");
    sample(o, "memwatch_intervals_total", base, "", (double)c->intervals);
    fam(o, om, "memwatch_probe_failures", F_COUNTER, NULL,
        "Intervals whose latency measurement failed.");
    sample(o, "memwatch_probe_failures_total", base, "", (double)c->failures);
    fam(o, om, "memwatch_interval_seconds", F_GAUGE, "seconds",
        "The measurement interval (--interval).");
    sample(o, "memwatch_interval_seconds", base, "", c->interval_ns * 1e-9);

}

/* The machine profile the threshold and levels come from, and the metrics
 * left out for want of it. */
static void render_profile(obuf *o, int om, const mon_state *c, const char *hbase)
{
    char more[1024];
    fam(o, om, "memwatch_profile", F_INFO, NULL,
        "The machine profile the threshold and levels come from: status present, missing, "
        "unusable, foreign (another machine's) or off, and why.");
    {
        char path[PATH_MAX * 2], why[700], src[500];
        esc(path, sizeof path, c->prof_path);
        esc(why, sizeof why, c->prof_why);
        esc(src, sizeof src, c->thr_source);
        snprintf(more, sizeof more, "status=\"%s\",path=\"%.300s\",created=\"%.31s\","
                 "saturable=\"%s\",threshold_source=\"%.300s\",note=\"%.300s\"",
                 prof_names[c->prof_status], path, c->prof_created,
                 c->saturable == 1 ? "yes" : c->saturable == 2 ? "no" : "unknown", src, why);
        sample(o, "memwatch_profile_info", hbase, more, 1);
    }
}

/* The metrics left out, each with its reason (one family) */
static void render_omitted(obuf *o, int om, const mon_state *c, const char *hbase)
{
    int share = c->meta.ncurve <= 0 || c->last_share < 0, gpu = !c->gpu.available;
    if (!share && !gpu)
        return;
    char more[1024];
    fam(o, om, "memwatch_omitted", F_INFO, NULL, "A metric left out, and why.");
    if (share) {
        const char *why = c->prof_status != MON_PROF_PRESENT
                              ? "no machine profile (see memwatch_profile_info)"
                          : c->meta.ncurve <= 0
                              ? "the machine profile has no latency-bandwidth curve "
                                "(calibrated before curves existed: run memwatch calibrate)"
                              : "no latency reading yet";
        snprintf(more, sizeof more, "metric=\"memwatch_bandwidth_share_ratio\",reason=\"%s\"",
                 why);
        sample(o, "memwatch_omitted_info", hbase, more, 1);
    }
    if (gpu) {
        char why[700];
        esc(why, sizeof why, c->gpu.why);
        snprintf(more, sizeof more, "metric=\"memwatch_gpu_memory_busy_ratio\",reason=\"%.600s\"",
                 why);
        sample(o, "memwatch_omitted_info", hbase, more, 1);
    }
}

/* Each GPU NVML lists: its name, the share of NVML's last sample period in
 * which its device memory was read or written (the streaming kernels' load),
 * in which a kernel ran, and the device memory in use. A GPU whose reading
 * failed this time has no sample. */
static void render_gpu(obuf *o, int om, const mon_state *c, const char *hbase)
{
    const mon_gpu *g = &c->gpu;
    if (!g->available)
        return;
    char more[512], name[200], uuid[200];
    fam(o, om, "memwatch_gpu", F_INFO, NULL, "A GPU memwatch monitor reads (NVML): its model and UUID.");
    for (int i = 0; i < g->n; i++) {
        esc(name, sizeof name, g->dev[i].name);
        esc(uuid, sizeof uuid, g->dev[i].uuid);
        snprintf(more, sizeof more, "gpu=\"%d\",name=\"%s\",uuid=\"%s\"", g->dev[i].index, name, uuid);
        sample(o, "memwatch_gpu_info", hbase, more, 1);
    }
    static const struct {
        const char *name, *unit, *help;
        int which; /* 0 memory busy, 1 busy, 2 memory used */
    } m[] = {
        {"memwatch_gpu_memory_busy_ratio", "ratio",
         "Share of NVML's last sample period (1/6 s to 1 s) in which the GPU's device memory "
         "was read or written.", 0},
        {"memwatch_gpu_busy_ratio", "ratio",
         "Share of NVML's last sample period in which a kernel ran on the GPU.", 1},
        {"memwatch_gpu_memory_used_bytes", "bytes", "Device memory in use.", 2},
    };
    for (size_t k = 0; k < sizeof m / sizeof *m; k++) {
        fam(o, om, m[k].name, F_GAUGE, m[k].unit, m[k].help);
        for (int i = 0; i < g->n; i++) {
            const mon_gpu_dev *d = &g->dev[i];
            if (m[k].which < 2 ? !d->ok : !d->mem_ok)
                continue;
            snprintf(more, sizeof more, "gpu=\"%d\"", d->index);
            sample(o, m[k].name, hbase, more,
                   m[k].which == 0 ? d->mem_busy : m[k].which == 1 ? d->busy : d->mem_used);
        }
    }
}

/* The processes with the most CPU time in bound intervals, and the /proc
 * reads behind them. */
static void render_procs(obuf *o, int om, const mon_proc *top, size_t ntop, const mon_procs *pc,
                         const char *hbase)
{
    char more[1024];
    fam(o, om, "memwatch_process_bound_cpu_seconds", F_COUNTER, "seconds",
        "CPU time (user + system) a process used during bound intervals, read from /proc; the "
        "10 processes with the most. CPU time while memory was saturated, not a count of "
        "memory instructions.");
    for (size_t i = 0; i < ntop; i++) {
        char comm[64], user[100], cg[400];
        esc(comm, sizeof comm, top[i].comm);
        esc(user, sizeof user, top[i].user);
        esc(cg, sizeof cg, top[i].cgroup);
        snprintf(more, sizeof more, "pid=\"%d\",comm=\"%s\",user=\"%s\",cgroup=\"%s\"",
                 top[i].pid, comm, user, cg);
        sample(o, "memwatch_process_bound_cpu_seconds_total", hbase, more,
               top[i].bound / (double)pc->hz);
    }
    fam(o, om, "memwatch_proc_scans", F_COUNTER, NULL,
        "Reads of /proc (about one a second while intervals are bound).");
    sample(o, "memwatch_proc_scans_total", hbase, "", (double)pc->scan);
    fam(o, om, "memwatch_proc_untracked", F_COUNTER, NULL,
        "Processes not tracked because the table of 1024 was full of live ones.");
    sample(o, "memwatch_proc_untracked_total", hbase, "", (double)pc->dropped);

}

/* The cgroups (containers, systemd units, Slurm jobs) with the most CPU time
 * in bound intervals: every process ever seen in them, not only the top
 * processes. */
static void render_cgroups(obuf *o, int om, const mon_cgroup *top, size_t ntop,
                           const mon_procs *pc, const char *hbase)
{
    char more[1024];
    fam(o, om, "memwatch_cgroup_bound_cpu_seconds", F_COUNTER, "seconds",
        "CPU time (user + system) the processes of a cgroup used during bound intervals, read "
        "from /proc; the 10 cgroups with the most. A cgroup's series ends some minutes after "
        "its last process.");
    for (size_t i = 0; i < ntop; i++) {
        char cg[400];
        esc(cg, sizeof cg, top[i].path);
        snprintf(more, sizeof more, "cgroup=\"%s\"", cg);
        sample(o, "memwatch_cgroup_bound_cpu_seconds_total", hbase, more,
               top[i].bound / (double)pc->hz);
    }
    fam(o, om, "memwatch_cgroup_untracked", F_COUNTER, NULL,
        "Processes whose cgroup was not tracked because the table of 256 cgroups was full.");
    sample(o, "memwatch_cgroup_untracked_total", hbase, "", (double)pc->cg_dropped);
}

/* The agent's own cost: CPU, memory, probe and /proc time, HTTP counts. */
static void render_self(obuf *o, int om, mon_state *s, const mon_state *c, const mon_procs *pc,
                        const char *hbase)
{
    double cpu_s, rss;
    self_cost(&cpu_s, &rss);
    fam(o, om, "process_cpu_seconds", F_COUNTER, "seconds",
        "CPU time (user + system) of the agent itself.");
    sample(o, "process_cpu_seconds_total", hbase, "", cpu_s);
    fam(o, om, "process_resident_memory_bytes", F_GAUGE, "bytes",
        "Resident memory of the agent itself.");
    sample(o, "process_resident_memory_bytes", hbase, "", rss);
    fam(o, om, "process_start_time_seconds", F_GAUGE, "seconds",
        "When the agent started, seconds since the Unix epoch.");
    sample(o, "process_start_time_seconds", hbase, "", c->start_unix);
    fam(o, om, "memwatch_probe_seconds", F_COUNTER, "seconds",
        "Wall time the latency measurements took.");
    sample(o, "memwatch_probe_seconds_total", hbase, "", c->probe_s);
    fam(o, om, "memwatch_proc_scan_cpu_seconds", F_COUNTER, "seconds",
        "CPU time the reads of /proc took.");
    sample(o, "memwatch_proc_scan_cpu_seconds_total", hbase, "", pc->scan_cpu_s);
    uint64_t scrapes = atomic_load(&s->scrapes) + 1; /* this one */
    fam(o, om, "memwatch_scrapes", F_COUNTER, NULL, "Requests of /metrics served.");
    sample(o, "memwatch_scrapes_total", hbase, "", (double)scrapes);
    fam(o, om, "memwatch_http_errors", F_COUNTER, NULL,
        "Requests answered with an error: not_found (another path), method (not GET or HEAD).");
    sample(o, "memwatch_http_errors_total", hbase, "reason=\"not_found\"",
           (double)atomic_load(&s->not_found));
    sample(o, "memwatch_http_errors_total", hbase, "reason=\"method\"",
           (double)atomic_load(&s->bad_method));
    fam(o, om, "memwatch_http_connections", F_COUNTER, NULL, "Connections accepted.");
    sample(o, "memwatch_http_connections_total", hbase, "", (double)atomic_load(&s->conns));
    fam(o, om, "memwatch_http_rejected_connections", F_COUNTER, NULL,
        "Connections closed at once: limit (the agent's connection limit was reached), "
        "per_ip (that address's limit was).");
    sample(o, "memwatch_http_rejected_connections_total", hbase, "reason=\"limit\"",
           (double)atomic_load(&s->rejected_limit));
    sample(o, "memwatch_http_rejected_connections_total", hbase, "reason=\"per_ip\"",
           (double)atomic_load(&s->rejected_ip));
    fam(o, om, "memwatch_http_open_connections", F_GAUGE, NULL, "Connections open now.");
    sample(o, "memwatch_http_open_connections", hbase, "",
           (double)atomic_load(&s->open_conns));
}

size_t mon_render(mon_state *s, int om, char **out)
{
    /* a copy of what is printed, taken under the lock */
    mon_state c;
    mon_proc top[MON_TOP];
    mon_cgroup cgtop[MON_TOP];
    size_t ntop, ncg;
    pthread_mutex_lock(&s->lock);
    memcpy(&c, s, offsetof(mon_state, procs));
    mon_procs pc = s->procs;
    ntop = mon_procs_top(&s->procs, top);
    ncg = mon_cgroups_top(&s->procs, cgtop);
    pthread_mutex_unlock(&s->lock);
    pc.v = NULL; /* the tables are the agent's: read only under the lock */
    pc.cg = NULL;

    obuf o = {malloc(16384), 0, 16384, 0};
    if (!o.b) {
        *out = NULL;
        return 0;
    }
    char host[600], base[700], hbase[700];
    esc(host, sizeof host, c.host);
    snprintf(hbase, sizeof hbase, "host=\"%s\"", host);
    if (c.numa >= 0)
        snprintf(base, sizeof base, "host=\"%s\",numa=\"%d\"", host, c.numa);
    else
        snprintf(base, sizeof base, "host=\"%s\"", host);
    render_memory(&o, om, &c, base);
    render_profile(&o, om, &c, hbase);
    render_omitted(&o, om, &c, hbase);
    render_gpu(&o, om, &c, hbase);
    render_procs(&o, om, top, ntop, &pc, hbase);
    render_cgroups(&o, om, cgtop, ncg, &pc, hbase);
    render_self(&o, om, s, &c, &pc, hbase);
    if (om)
        put(&o, "# EOF\n");
    if (o.oom) {
        free(o.b);
        *out = NULL;
        return 0;
    }
    *out = o.b;
    return o.len;
}
