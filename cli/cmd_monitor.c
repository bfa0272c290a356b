/*
 * cli/cmd_monitor.c: `memwatch monitor`, the node agent (docs/monitor.md;
 * the parts: cli/monitor.h).
 *
 * Once per interval (default 100 ms) the main thread takes one measurement
 * of memwatch's software latency probe (counters/probe_lat.c, the probe
 * memwatch record's processes use), for the whole machine: a reading is the
 * median of the bursts of the last 8 measurements, the 40 bursts the
 * profiler's reading pools, spread over 8 intervals instead of 80 ms. It
 * judges the reading as the recorder and the report do: bound where it lies
 * above the machine profile's threshold for probe_lat
 * (mw_profile_lat_threshold) on a machine whose memory could saturate (the
 * flag of preload/engine.c), and the level of report/levels.c
 * (mw_lvl_interval) from the profile's curve and band otherwise. Without a
 * usable profile every interval is of level unknown, and a metric says why;
 * the profile is looked at again every 10 s and on SIGHUP, so a later
 * `memwatch calibrate` takes effect without a restart.
 *
 * While intervals are bound it reads /proc about once a second
 * (monitor_procs.c). The HTTP
 * server (monitor_http.c) runs on a thread of its own and renders the state
 * at each scrape (monitor_metrics.c). SIGINT and SIGTERM stop the agent
 * cleanly (it waits for them with sigtimedwait between intervals; every
 * thread has them blocked), SIGHUP reloads the profile.
 *
 * Runs unprivileged: the probe needs no privilege, /proc/PID/stat and
 * /proc/PID/cgroup are readable by anyone, the default port is above 1024.
 */
#include "cli.h"
#include "monitor.h"
#include "opts.h"

#include <memwatch/levels.h>
#include <memwatch/probe_lat.h>
#include <memwatch/profile.h>

#include "envval.h" /* counters/: mw_env_scaled */

#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MON_DEFAULT_LISTEN "127.0.0.1:9464"
#define MON_DEFAULT_INTERVAL_NS 100000000ull
#define MON_WINDOW_MEASUREMENTS 8
#define MON_PROFILE_RECHECK_S 10.0

enum {
    MO_HELP,
    MO_VERBOSE,
    MO_LISTEN,
    MO_PROFILE,
    MO_INTERVAL,
    MO_MAX_CONNS,
    MO_MAX_IP,
    MO_HTTP_TIMEOUT
};
static const mw_opt monitor_opts[] = {
    {NULL, "--listen", "ADDR:PORT", MO_LISTEN,
     "where to serve (default " MON_DEFAULT_LISTEN "; [::1]:PORT\nfor IPv6; port 0: any free "
     "port, printed at start)"},
    {"-i", "--interval", "T", MO_INTERVAL,
     "measurement interval, e.g. 100ms (default), 10ms..10s"},
    {NULL, "--profile", "PATH", MO_PROFILE,
     "machine profile (default $MEMWATCH_PROFILE, else the\none 'memwatch calibrate' writes); "
     "none: no profile"},
    {NULL, "--max-connections", "N", MO_MAX_CONNS, "HTTP connections at once (default 64)"},
    {NULL, "--max-per-ip", "N", MO_MAX_IP,
     "HTTP connections at once from one address (default 8)"},
    {NULL, "--http-timeout", "S", MO_HTTP_TIMEOUT,
     "close an HTTP connection idle this long (default 10)"},
    {"-v", "--verbose", NULL, MO_VERBOSE, "one line per interval on stderr"},
    {"-h", "--help", NULL, MO_HELP, "this text"},
};

static void monitor_usage(FILE *f)
{
    fprintf(f, "usage: memwatch monitor [options]\n"
               "\n"
               "Measures this machine's loaded memory latency once per interval, judges it\n"
               "against the machine profile (bound, high, medium, low) and serves the result\n"
               "for Prometheus at http://ADDR:PORT/metrics (OpenMetrics). Runs until SIGINT or\n"
               "SIGTERM; SIGHUP reads the profile again. See docs/monitor.md.\n"
               "\n");
    mw_opt_usage(f, monitor_opts, MW_OPT_N(monitor_opts));
}

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* ADDR:PORT (ADDR a name or a numeric address, [V6]:PORT) to a listening
 * socket; the socket, or -1 with why filled. */
static int mon_listen(const char *spec, char *shown, size_t shown_n, char *why, size_t n)
{
    char host[256];
    const char *port;
    if (spec[0] == '[') {
        const char *r = strchr(spec, ']');
        if (!r || r[1] != ':' || (size_t)(r - spec - 1) >= sizeof host) {
            snprintf(why, n, "'%s' is not [ADDRESS]:PORT", spec);
            return -1;
        }
        memcpy(host, spec + 1, (size_t)(r - spec - 1));
        host[r - spec - 1] = 0;
        port = r + 2;
    } else {
        const char *c = strrchr(spec, ':');
        if (!c || (size_t)(c - spec) >= sizeof host || strchr(spec, ':') != c) {
            snprintf(why, n, "'%s' is not ADDRESS:PORT (IPv6: [ADDRESS]:PORT)", spec);
            return -1;
        }
        memcpy(host, spec, (size_t)(c - spec));
        host[c - spec] = 0;
        port = c + 1;
    }
    long pv;
    if (mw_parse_long(port, &pv) || pv < 0 || pv > 65535) {
        snprintf(why, n, "'%s': the port is not a number from 0 to 65535", spec);
        return -1;
    }
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int g = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
    if (g) {
        snprintf(why, n, "'%s': %s", spec, gai_strerror(g));
        return -1;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0)
            break;
        err = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(why, n, "cannot listen on %s: %s", spec, strerror(err));
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char h[NI_MAXHOST], p[NI_MAXSERV];
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 &&
        getnameinfo((struct sockaddr *)&ss, sl, h, sizeof h, p, sizeof p,
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0)
        snprintf(shown, shown_n, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", h, p);
    else
        snprintf(shown, shown_n, "%s", spec);
    return fd;
}

/* The NUMA node the probe measures on: the node of the CPU the agent
 * starts on; with more than one node, the agent keeps to that node's CPUs
 * (its probe memory is that node's). -1 where unknown. */
static int mon_numa_pin(void)
{
    unsigned cpu = 0, node = 0;
    if (getcpu(&cpu, &node))
        return -1;
    char path[96], list[4096];
    snprintf(path, sizeof path, "/sys/devices/system/node/node%u/cpulist", node);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int ok = fgets(list, sizeof list, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    struct stat st;
    if (stat("/sys/devices/system/node/node1", &st)) /* one node: nothing to keep to */
        return (int)node;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (char *p = list; *p && *p != '\n';) {
        char *e;
        long a = strtol(p, &e, 10), b = a;
        if (e == p)
            break;
        if (*e == '-')
            b = strtol(e + 1, &e, 10);
        for (long c = a; c <= b && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, &set);
        p = *e == ',' ? e + 1 : e;
    }
    if (CPU_COUNT(&set))
        sched_setaffinity(0, sizeof set, &set);
    return (int)node;
}

static char mon_logged[240];
static void mon_log(int level, const char *msg, void *user)
{
    (void)level;
    (void)user;
    snprintf(mon_logged, sizeof mon_logged, "%s", msg);
}

/* Which profile, where it comes from. */
typedef struct mon_prof_src {
    char path[PATH_MAX];
    int off;          /* MEMWATCH_PROFILE=none or --profile none */
    struct timespec mtime;
    off_t size;
    int seen;         /* stat succeeded at the last look */
} mon_prof_src;

/* (Re)reads the profile into the state: status, threshold, levels. */
static void mon_profile_apply(mon_state *s, mon_prof_src *src)
{
    mw_profile *pf = calloc(1, sizeof *pf);
    int status = MON_PROF_MISSING, rc = 0;
    char why[320] = "", thr_why[240] = "";
    double thr = 0;
    mw_lvl_meta meta;
    mw_lvl_meta_init(&meta);
    if (src->off) {
        status = MON_PROF_OFF;
        snprintf(why, sizeof why, "MEMWATCH_PROFILE=none or --profile none: levels are unknown");
    } else if (!src->path[0]) {
        snprintf(why, sizeof why, "no default path (neither XDG_DATA_HOME nor HOME is set)");
    } else if (!pf) {
        status = MON_PROF_UNUSABLE;
        snprintf(why, sizeof why, "out of memory");
    } else if (access(src->path, R_OK)) {
        int e = errno;
        status = e == ENOENT ? MON_PROF_MISSING : MON_PROF_UNUSABLE;
        snprintf(why, sizeof why, "%s%s", strerror(e),
                 e == ENOENT ? ": run 'memwatch calibrate' to write it; levels are unknown until then"
                             : "");
    } else {
        mon_logged[0] = 0;
        mw_set_log(mon_log, NULL, MW_LOG_WARN);
        rc = mw_profile_load(src->path, 0, pf);
        mw_set_log(NULL, NULL, MW_LOG_WARN);
        char ident[256] = "";
        if (mw_machine_identity_taken(ident, sizeof ident) < 0)
            ident[0] = 0;
        if (rc < 0) {
            status = MON_PROF_UNUSABLE;
            snprintf(why, sizeof why, "%s", mon_logged[0] ? mon_logged : mw_strerror(rc));
        } else if (!ident[0] || strcmp(ident, pf->identity)) {
            status = MON_PROF_FOREIGN;
            snprintf(why, sizeof why,
                     "the profile was calibrated on another machine (or another kernel, "
                     "microcode or memory size): run 'memwatch calibrate' here");
        } else {
            status = MON_PROF_PRESENT;
            int in_ns = 1;
            thr = mw_profile_lat_threshold(pf, "probe_lat", NULL, &in_ns, thr_why,
                                           sizeof thr_why);
            (void)in_ns; /* probe_lat's own unit is ns as well */
            if (thr <= 0)
                snprintf(thr_why, sizeof thr_why,
                         "none: the profile holds no validated probe_lat threshold");
            mw_lvl_meta_from_profile(&meta, pf);
            if (pf->threshold_note[0])
                snprintf(why, sizeof why, "%s", pf->threshold_note);
        }
    }
    pthread_mutex_lock(&s->lock);
    s->prof_status = status;
    snprintf(s->prof_path, sizeof s->prof_path, "%s", src->path);
    snprintf(s->prof_why, sizeof s->prof_why, "%s", why);
    snprintf(s->prof_created, sizeof s->prof_created, "%s",
             status == MON_PROF_PRESENT ? pf->created : "");
    s->threshold_ns = thr;
    snprintf(s->thr_source, sizeof s->thr_source, "%s", thr_why);
    s->saturable = status == MON_PROF_PRESENT ? pf->saturable : MW_SAT_UNKNOWN;
    s->meta = meta;
    pthread_mutex_unlock(&s->lock);
    free(pf);
}

/* Whether the profile file changed (appeared, went, was rewritten) since
 * the last look. */
static int mon_profile_changed(mon_prof_src *src)
{
    if (src->off || !src->path[0])
        return 0;
    struct stat st;
    int seen = stat(src->path, &st) == 0;
    int changed = seen != src->seen ||
                  (seen && (st.st_mtim.tv_sec != src->mtime.tv_sec ||
                            st.st_mtim.tv_nsec != src->mtime.tv_nsec || st.st_size != src->size));
    src->seen = seen;
    if (seen) {
        src->mtime = st.st_mtim;
        src->size = st.st_size;
    }
    return changed;
}

/* One interval ended at now (dt seconds long): judge the reading, count. */
static void mon_interval(mon_state *s, int have, const mw_probe_lat_result *r, double dt,
                         double now, int verbose)
{
    pthread_mutex_lock(&s->lock);
    uint64_t iv = ++s->intervals;
    double lat = have ? r->median_ns : 0;
    int level = MON_LEVEL_UNKNOWN, flagged = 0;
    double share = -1;
    if (have) {
        s->readings++;
        s->lat_sum_ns += lat;
        int b = 0;
        while (b < MON_NBUCKETS && lat > mon_buckets_ns[b])
            b++;
        s->hist[b]++;
        s->last_ns = lat;
        /* the recorder's flag (preload/engine.c): above the threshold, unless
         * the profile says memory could not saturate here */
        flagged = s->prof_status == MON_PROF_PRESENT && s->threshold_ns > 0 &&
                  lat > s->threshold_ns && s->saturable != MW_SAT_NO;
        mw_iv_level l = mw_lvl_interval(&s->meta, 1, lat, flagged);
        if (s->prof_status == MON_PROF_PRESENT && l.level != MW_LEVEL_NONE)
            level = l.level;
        share = s->prof_status == MON_PROF_PRESENT ? l.share : -1;
        if (l.in_band == 1)
            s->band_s += dt;
    } else {
        s->failures++;
    }
    s->last_share = share;
    s->last_level = level;
    s->level_s[level] += dt;
    s->measured_s += dt;
    /* /proc while bound: about once a second, and once at the phase's end */
    mon_procs *pr = &s->procs;
    double since = now - pr->scan_t;
    if (level == MW_LEVEL_BOUND)
        s->bound_unscanned += dt;
    if (level == MW_LEVEL_BOUND && (!pr->scan || since > MON_SCAN_GAP_S)) {
        mon_procs_scan(pr, 0, now); /* a baseline */
        s->bound_unscanned = 0;
    } else if (s->bound_unscanned > 0 && since <= MON_SCAN_GAP_S &&
               (level != MW_LEVEL_BOUND || since >= MON_SCAN_EVERY_S)) {
        mon_procs_scan(pr, s->bound_unscanned / since, now);
        s->bound_unscanned = 0;
    }
    pthread_mutex_unlock(&s->lock);
    if (verbose)
        fprintf(stderr, "memwatch monitor: interval %llu  %.3f s  latency %.1f ns  %s%s\n",
                (unsigned long long)iv, dt, lat,
                level == MON_LEVEL_UNKNOWN ? "unknown" : mw_level_name((mw_level)level),
                flagged ? " (above the threshold)" : "");
}

/* memwatch monitor's command line */
typedef struct {
    const char *listen_spec, *prof_opt;
    uint64_t interval_ns;
    long max_conns, max_ip, timeout_s;
    int verbose;
} mon_args;

/* Parse the command line into *a. Returns -1 to go on, else the exit status
 * (0 after --help, 2 for a bad option, with its line on stderr). */
static int mon_parse_args(int argc, char **argv, mon_args *a_out)
{
    mon_args m = {MON_DEFAULT_LISTEN, NULL, MON_DEFAULT_INTERVAL_NS, 64, 8, 10, 0};
    for (int i = 1; i < argc;) {
        const char *v;
        int rc;
        const mw_opt *op = mw_opt_next("monitor", monitor_opts, MW_OPT_N(monitor_opts), argc, argv,
                                       &i, &v, &rc);
        if (!op) {
            if (rc != 2)
                fprintf(stderr, "memwatch monitor: unexpected argument '%s' (memwatch monitor "
                                "--help)\n", argv[i]);
            return 2;
        }
        const char *a = op->l;
        long n = 0;
        if ((op->id == MO_MAX_CONNS || op->id == MO_MAX_IP || op->id == MO_HTTP_TIMEOUT) &&
            (mw_parse_long(v, &n) || n < 1 || n > 100000)) {
            fprintf(stderr, "memwatch monitor: %s needs a whole number from 1 to 100000\n", a);
            return 2;
        }
        switch (op->id) {
        case MO_HELP:
            monitor_usage(stdout);
            return 0;
        case MO_VERBOSE:
            m.verbose = 1;
            break;
        case MO_LISTEN:
            m.listen_spec = v;
            break;
        case MO_PROFILE:
            m.prof_opt = v;
            break;
        case MO_INTERVAL: {
            static const char *const suf[] = {"ns", "us", "ms", "s", NULL};
            static const uint64_t mul[] = {1, 1000, 1000000, 1000000000};
            if (mw_env_scaled(v, suf, mul, 1000000, &m.interval_ns) ||
                m.interval_ns < 10000000ull || m.interval_ns > 10000000000ull) {
                fprintf(stderr, "memwatch monitor: %s needs a time from 10ms to 10s, e.g. "
                                "100ms (a number alone is in ms)\n", a);
                return 2;
            }
            break;
        }
        case MO_MAX_CONNS:
            m.max_conns = n;
            break;
        case MO_MAX_IP:
            m.max_ip = n;
            break;
        case MO_HTTP_TIMEOUT:
            m.timeout_s = n;
            break;
        }
    }
    *a_out = m;
    return -1;
}

/* The interval loop: a measurement every interval, SIGHUP rereads the
 * profile, SIGINT and SIGTERM end it. Returns the signal that ended it. */
/* NVML's utilization is over its own sample period (1/6 s to 1 s): read
 * about once a second */
#define MON_GPU_EVERY_S 1.0

static int mon_loop(mon_state *s, mw_probe_lat *probe, mon_prof_src *src, const sigset_t *set,
                    mon_gpu *gpu, uint64_t interval_ns, int verbose)
{
    double t_prev = mono_s(), next = t_prev + interval_ns / 1e9, last_check = t_prev;
    double last_gpu = 0;
    int sig = 0;
    for (;;) {
        double now = mono_s();
        if (next > now) {
            double d = next - now;
            struct timespec to = {(time_t)d, (long)((d - floor(d)) * 1e9)};
            siginfo_t si;
            int g = sigtimedwait(set, &si, &to);
            if (g == SIGHUP) {
                mon_profile_changed(src);
                mon_profile_apply(s, src);
                fprintf(stderr, "memwatch monitor: SIGHUP: profile %s: %s\n",
                        src->path[0] ? src->path : "none",
                        s->prof_status == MON_PROF_PRESENT ? "present" : s->prof_why);
                continue;
            }
            if (g == SIGINT || g == SIGTERM) {
                sig = g;
                break;
            }
            if (g < 0 && errno == EINTR)
                continue;
            if (mono_s() < next)
                continue;
        }
        double t0 = mono_s();
        mw_probe_lat_result r;
        int have = mw_probe_lat_measure(probe, &r) == 0 && r.median_ns > 0 && isfinite(r.median_ns);
        now = mono_s();
        pthread_mutex_lock(&s->lock);
        s->probe_s += now - t0;
        pthread_mutex_unlock(&s->lock);
        mon_interval(s, have, &r, now - t_prev, now, verbose);
        t_prev = now;
        next += interval_ns / 1e9;
        if (next < now) /* late (suspended, overloaded): start afresh */
            next = now + interval_ns / 1e9;
        if (gpu->available && now - last_gpu >= MON_GPU_EVERY_S) {
            /* NVML's calls outside the lock: they can take milliseconds */
            last_gpu = now;
            mon_gpu_read(gpu);
            pthread_mutex_lock(&s->lock);
            s->gpu = *gpu;
            pthread_mutex_unlock(&s->lock);
        }
        if (now - last_check >= MON_PROFILE_RECHECK_S) {
            last_check = now;
            if (mon_profile_changed(src))
                mon_profile_apply(s, src);
        }
    }
    return sig;
}

int mw_cmd_monitor(int argc, char **argv)
{
    mon_args a;
    int prc0 = mon_parse_args(argc, argv, &a);
    if (prc0 >= 0)
        return prc0;
    uint64_t interval_ns = a.interval_ns;
    const char *no_http = mon_http_unavailable();
    if (no_http) {
        fprintf(stderr, "memwatch monitor: not available: %s\n", no_http);
        return 1;
    }
    if (mw_cli_check_environment("monitor"))
        return 2;

    /* Signals: SIGINT, SIGTERM and SIGHUP are waited for, never delivered
     * (blocked before the server's thread exists, so it inherits the mask);
     * a client that goes away must not kill the agent. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    static mon_state st; /* large: not on the stack */
    mon_state *s = &st;
    pthread_mutex_init(&s->lock, NULL);
    s->interval_ns = interval_ns;
    s->http_max_conns = (int)a.max_conns;
    s->http_max_per_ip = (int)a.max_ip;
    s->http_timeout_s = (int)a.timeout_s;
    s->last_share = -1;
    s->last_level = MON_LEVEL_UNKNOWN;
    if (gethostname(s->host, sizeof s->host - 1))
        snprintf(s->host, sizeof s->host, "unknown");
    if (mon_procs_init(&s->procs)) {
        fprintf(stderr, "memwatch monitor: out of memory\n");
        return 1;
    }
    s->numa = mon_numa_pin();
    /* the GPUs: served where NVML is there, else the reason is */
    static mon_gpu gpu; /* the loop's; s->gpu is the served copy */
    mon_gpu_open(&gpu);
    mon_gpu_read(&gpu);
    s->gpu = gpu;

    mon_prof_src src = {0};
    const char *env = getenv("MEMWATCH_PROFILE");
    const char *named = a.prof_opt ? a.prof_opt : env && *env ? env : NULL;
    if (named && !strcmp(named, "none"))
        src.off = 1;
    else if (named)
        snprintf(src.path, sizeof src.path, "%s", named);
    else if (mw_profile_default_path(src.path, sizeof src.path))
        src.path[0] = 0;
    mon_profile_changed(&src);
    mon_profile_apply(s, &src);

    /* The probe: the profiler's settings (and MEMWATCH_PROBE_*), its
     * window spread over 8 intervals unless MEMWATCH_PROBE_WINDOW sets it. */
    mw_probe_lat_config pc = {0};
    const char *w = getenv("MEMWATCH_PROBE_WINDOW");
    if (!w || !*w)
        pc.window_ns = interval_ns * MON_WINDOW_MEASUREMENTS - interval_ns / 2;
    mw_probe_lat *probe = NULL;
    mon_logged[0] = 0;
    mw_set_log(mon_log, NULL, MW_LOG_WARN);
    int prc = mw_probe_lat_create(&pc, &probe);
    mw_set_log(NULL, NULL, MW_LOG_WARN);
    if (prc < 0) {
        fprintf(stderr, "memwatch monitor: the latency probe cannot run here: %s\n",
                mon_logged[0] ? mon_logged : mw_strerror(prc));
        mon_procs_free(&s->procs);
        return 1;
    }

    char why[400], shown[300];
    int fd = mon_listen(a.listen_spec, shown, sizeof shown, why, sizeof why);
    if (fd < 0) {
        fprintf(stderr, "memwatch monitor: %s\n", why);
        mw_probe_lat_destroy(probe);
        mon_procs_free(&s->procs);
        return 1;
    }
    mon_http *http = mon_http_start(s, fd, why, sizeof why);
    if (!http) {
        fprintf(stderr, "memwatch monitor: %s\n", why);
        close(fd);
        mw_probe_lat_destroy(probe);
        mon_procs_free(&s->procs);
        return 1;
    }
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    s->start_unix = (double)rt.tv_sec + rt.tv_nsec / 1e9;
    fprintf(stderr, "memwatch monitor: listening on http://%s/metrics, interval %.0f ms, profile %s%s%s\n",
            shown, interval_ns / 1e6, src.off ? "none" : src.path[0] ? src.path : "(no path)",
            s->prof_status == MON_PROF_PRESENT ? "" : ": ",
            s->prof_status == MON_PROF_PRESENT ? "" : s->prof_why);
    if (!gpu.available)
        fprintf(stderr, "memwatch monitor: no GPU metrics: %s\n", gpu.why);
    else
        fprintf(stderr, "memwatch monitor: %d GPU%s (NVML): %s%s\n", gpu.n, gpu.n > 1 ? "s" : "",
                gpu.dev[0].name, gpu.n > 1 ? ", ..." : "");
    fflush(stderr);

    int sig = mon_loop(s, probe, &src, &set, &gpu, interval_ns, a.verbose);
    mon_http_stop(http);
    mon_gpu_close(&gpu);
    mw_probe_lat_destroy(probe);
    fprintf(stderr, "memwatch monitor: %s: stopped after %llu intervals (%.1f s bound)\n",
            strsignal(sig), (unsigned long long)s->intervals, s->level_s[MW_LEVEL_BOUND]);
    mon_procs_free(&s->procs);
    pthread_mutex_destroy(&s->lock);
    return 0;
}
