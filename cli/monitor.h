/*
 * cli/monitor.h: `memwatch monitor`, the node agent (docs/monitor.md),
 * private to cli/. Its parts:
 *   - cli/cmd_monitor.c: options, the interval loop (the latency probe of
 *     counters/probe_lat.c once per interval, the machine profile's
 *     threshold, the levels of report/levels.c), signals;
 *   - cli/monitor_metrics.c: the state the loop keeps and its rendering as
 *     OpenMetrics 1.0.0 (or Prometheus text 0.0.4 for a client that asks);
 *   - cli/monitor_procs.c: CPU time of processes in bound intervals, from
 *     /proc, in a table of fixed size;
 *   - cli/monitor_http.c: the HTTP server (libmicrohttpd), or, in a build
 *     without it, the reason.
 *
 * Threading: the interval loop runs on the main thread, the HTTP server on
 * libmicrohttpd's one internal thread. Everything in mon_state below the
 * lock is written by the loop under the lock and read by the renderer under
 * it; the HTTP counters are atomics written by the server's thread.
 */
#ifndef MW_CLI_MONITOR_H
#define MW_CLI_MONITOR_H

#include <memwatch/levels.h>

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Level slots of the seconds counters: MW_LEVEL_LOW..MW_LEVEL_BOUND, then
 * unknown (no reading, or nothing to judge it by). */
#define MON_LEVEL_UNKNOWN MW_LEVEL_COUNT
#define MON_NLEVELS (MW_LEVEL_COUNT + 1)

/* Loaded-latency histogram: upper bounds in ns (the last bucket is +Inf). */
#define MON_NBUCKETS 22

#define MON_TOP 10          /* processes served */
#define MON_PROCS_MAX 1024  /* processes remembered */
#define MON_PROC_KEEP_S 600 /* an exited process stays served this long */

enum mon_prof_status {
    MON_PROF_PRESENT,
    MON_PROF_MISSING,  /* no file */
    MON_PROF_UNUSABLE, /* unreadable, damaged, another format */
    MON_PROF_FOREIGN,  /* another machine's */
    MON_PROF_OFF,      /* MEMWATCH_PROFILE=none */
};

/* One process as served: CPU time it used during bound intervals. */
typedef struct mon_proc {
    int32_t pid;
    uint32_t uid;
    uint64_t start;     /* start time, clock ticks after boot: with pid, its identity */
    uint64_t last;      /* utime + stime at the last scan that saw it, ticks */
    double bound;       /* ticks counted in bound intervals */
    uint64_t seen;      /* the last scan that saw it */
    double gone;        /* CLOCK_MONOTONIC s it was first missed; 0 alive */
    char comm[16];
    char user[32];
    char cgroup[128];
    int16_t cg;         /* its row in mon_procs.cg; -1 none */
} mon_proc;

/* One cgroup as served: the bound CPU time of every process seen in it, kept
 * while a process of it is tracked and MON_PROC_KEEP_S after (a counter that
 * never falls while it is served). */
typedef struct mon_cgroup {
    char path[128];
    double bound;       /* ticks */
    double gone;        /* CLOCK_MONOTONIC s its last process left the table; 0 live */
} mon_cgroup;
#define MON_CGROUPS_MAX 256

typedef struct mon_procs {
    mon_proc *v; /* MON_PROCS_MAX, allocated once */
    size_t n;
    uint64_t scan;      /* scans made */
    double scan_t;      /* CLOCK_MONOTONIC s of the last scan */
    double scan_cpu_s;  /* CPU time the scans took */
    uint64_t dropped;   /* processes not remembered: the table was full */
    long hz;            /* clock ticks per second */
    mon_cgroup *cg;      /* MON_CGROUPS_MAX, allocated once */
    size_t ncg;
    uint64_t cg_dropped; /* processes whose cgroup found the cgroup table full */
} mon_procs;

/* The GPUs (monitor_gpu.c): NVML's readings, about once a second */
#define MON_GPUS_MAX 16
typedef struct mon_gpu_dev {
    int index;             /* NVML's */
    char name[96];
    char uuid[96];
    int ok, mem_ok;        /* the last read's utilization, memory readings held */
    double busy;           /* share of the last sample period a kernel ran */
    double mem_busy;       /* share of it device memory was read or written */
    double mem_used, mem_total; /* bytes */
} mon_gpu_dev;
typedef struct mon_gpu {
    int available;         /* NVML opened and lists a GPU */
    char why[320];         /* else why not */
    int n;
    mon_gpu_dev dev[MON_GPUS_MAX];
    uint64_t reads;
} mon_gpu;

typedef struct mon_state {
    /* fixed at start */
    char host[256];
    int numa;             /* node the probe measures on; -1 unknown */
    uint64_t interval_ns;
    double start_unix;    /* wall clock at start */
    pthread_mutex_t lock;
    /* the profile in force (cmd_monitor.c) */
    int prof_status;      /* enum mon_prof_status */
    char prof_path[PATH_MAX];
    char prof_why[320];   /* what was wrong, or what the profile says */
    char prof_created[32];
    double threshold_ns;  /* 0: none */
    char thr_source[240];
    int saturable;        /* mw_saturable */
    mw_lvl_meta meta;     /* levels: saturable, band, curve */
    /* measurement */
    uint64_t intervals;   /* intervals ended */
    uint64_t readings;    /* with a latency reading */
    uint64_t failures;    /* probe measurement failed */
    double level_s[MON_NLEVELS];
    double band_s;        /* seconds whose latency lay in the threshold's band */
    double measured_s;    /* sum of level_s */
    uint64_t hist[MON_NBUCKETS + 1];
    double lat_sum_ns;
    double last_ns;       /* the last reading; 0 none */
    double last_share;    /* its share of the peak; < 0 unknown */
    int last_level;       /* MW_LEVEL_* or MON_LEVEL_UNKNOWN */
    double probe_s;       /* wall time the measurements took */
    double bound_unscanned; /* bound seconds since the last read of /proc */
    mon_gpu gpu;          /* a copy of the loop's last GPU read */
    mon_procs procs;
    /* HTTP (monitor_http.c's thread) */
    _Atomic uint64_t scrapes, not_found, bad_method, conns, rejected_limit, rejected_ip;
    _Atomic unsigned open_conns;
    int http_max_conns, http_max_per_ip, http_timeout_s;
} mon_state;

extern const double mon_buckets_ns[MON_NBUCKETS];

/* monitor_metrics.c. Renders the state as OpenMetrics text (om 1) or
 * Prometheus text 0.0.4 (om 0) into a malloc'ed buffer; its length, or 0
 * (out NULL) when out of memory. Takes the lock. */
size_t mon_render(mon_state *s, int om, char **out);

/* monitor_gpu.c. mon_gpu_open: 0, or -1 with why set (no NVML, no GPU);
 * mon_gpu_read: one reading of every GPU; both on the loop's thread. */
int mon_gpu_open(mon_gpu *g);
void mon_gpu_read(mon_gpu *g);
void mon_gpu_close(mon_gpu *g);

/* monitor_procs.c. */
int mon_procs_init(mon_procs *p);
void mon_procs_free(mon_procs *p);
/* Reads /proc: each process's CPU time since the previous read, times
 * share (the part of the time since then that was bound), counts as bound;
 * share 0: this read is a baseline only. Call with the state's lock held. */
void mon_procs_scan(mon_procs *p, double share, double now_s);
#define MON_SCAN_EVERY_S 1.0 /* while bound, /proc is read at most this often */
#define MON_SCAN_GAP_S 2.5   /* a read older than this is no baseline */
/* The n (<= MON_TOP) processes with the most bound CPU time, most first,
 * into top; returns n. Call with the lock held. */
size_t mon_procs_top(const mon_procs *p, mon_proc *top);
/* The n (<= MON_TOP) cgroups with the most bound CPU time, most first. */
size_t mon_cgroups_top(const mon_procs *p, mon_cgroup *top);

/* monitor_http.c. */
typedef struct mon_http mon_http;
/* NULL where this build can serve HTTP; else why not (one sentence). */
const char *mon_http_unavailable(void);
/* Serves GET /metrics on the listening socket fd (taken over: closed by
 * mon_http_stop) on a thread of its own. NULL with why filled on failure. */
mon_http *mon_http_start(mon_state *s, int fd, char *why, size_t n);
/* Stops the server: closes every connection, joins its thread. NULL ignored. */
void mon_http_stop(mon_http *h);

#endif
