/*
 * preload/internal.h: state shared by the parts of libmemwatch.so.
 *
 * Parts: util.c (async-signal-safe formatting, raw logger, real-function
 * table), config.c (MEMWATCH_* variables), writer.c (the raw file),
 * threads.c (per-thread sampling and allocation buffers), alloc.c (allocation
 * hooks), engine.c (the interval thread), modules.c (loaded objects),
 * signals.c (fatal-signal flush and the application's dispositions),
 * process.c (constructor, fork, lazy start, exit), exec.c (exec, spawn and
 * the environment children get), guard.c (memwatch's descriptor, namespace
 * calls).
 *
 * Conventions: nothing here is exported except the interposed symbols and
 * mw_preload_emit (preload/libmemwatch.map). Hook and signal paths use only
 * raw syscalls, atomics and memwatch's own spin flags; never malloc, stdio or
 * a lock the application could hold.
 */
#ifndef MW_PRELOAD_INTERNAL_H
#define MW_PRELOAD_INTERNAL_H

#include <memwatch/memwatch.h>
#include <memwatch/mwr.h>
#include <memwatch/mwr_frame.h>
#include <memwatch/probe_lat.h>
#include <memwatch/ring.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MWP_TLS __thread __attribute__((tls_model("initial-exec")))
#define MWP_EXPORT __attribute__((visibility("default")))
/* The code every process runs (constructor, the end of a process that
 * never began): GCC places hot functions together (.text.hot, next to the
 * constructor's .text.startup), so that a short process faults in one
 * window of the library's text instead of three (docs/overhead.md). */
#define MWP_HOT __attribute__((hot))
/* Large zero-initialised buffers that a short process touches little or
 * not at all: in .lbss, which the linker places after .bss, so that the
 * small variables every process touches share a few pages instead of lying
 * between the buffers (each page a process touches is a page fault;
 * docs/overhead.md, "lazy start"). Elsewhere than x86-64 .lbss is not a
 * zero-filled section: plain .bss there. */
#if defined(__x86_64__)
#define MWP_COLD __attribute__((section(".lbss.memwatch")))
#else
#define MWP_COLD
#endif

/* ---- configuration (config.c) ---- */
struct mwp_config {
    int enabled;               /* MEMWATCH_ENABLE (default 1) */
    uint64_t interval_ns;      /* MEMWATCH_INTERVAL */
    char method[24];           /* MEMWATCH_METHOD: auto, probe_lat, none, or a counter method */
    int method_choice;         /* what method asks for: MW_ENV_METHOD_AUTO, _NONE or _NAMED
                                  (counters/envval.h) */
    unsigned long rate;        /* MEMWATCH_RATE, samples/s per thread (0: off) */
    int rate_clamped;
    unsigned long fault_period;/* MEMWATCH_FAULT_PERIOD (0: off) */
    uint64_t alloc_threshold;  /* MEMWATCH_ALLOC_THRESHOLD (bytes; UINT64_MAX: off) */
    unsigned alloc_frames;     /* MEMWATCH_ALLOC_FRAMES */
    unsigned stack_depth;      /* MEMWATCH_STACK_DEPTH (cpu-clock call chains) */
    int unwind;                /* MEMWATCH_UNWIND: MWP_UNWIND_AUTO, _FP or _DWARF; after
                                  mwp_config_load never AUTO */
    unsigned unwind_stack;     /* MEMWATCH_UNWIND_STACK: bytes of user stack per sample */
    char unwind_note[160];     /* META unwind: the choice and why */
    unsigned ring_pages;       /* MEMWATCH_RING_PAGES (cpu-clock; page faults get a quarter) */
    int follow;                /* MEMWATCH_FOLLOW */
    int verbose;               /* MEMWATCH_VERBOSE 0..3 */
    int profile_set;           /* MEMWATCH_PROFILE was given: say why it cannot be used */
    double threshold_ns;       /* MEMWATCH_THRESHOLD_NS (0: not set) */
    double threshold_factor;   /* MEMWATCH_THRESHOLD_FACTOR (uncalibrated default) */
    char mix[16];              /* MEMWATCH_MIX: the profile's read/write curve ("" default) */
    double baseline_ns;        /* MEMWATCH_BASELINE_NS (set by memwatch record; 0: measure) */
    double tsc_hz;             /* MEMWATCH_TSC's frequency (0: not given; determine it) */
    char tsc_src[160];         /* and how the process that determined it did so */
    int gpu;                   /* MEMWATCH_GPU */
    int precise;               /* MEMWATCH_PRECISE: 1 auto (default), 0 off */
    unsigned ldlat;            /* MEMWATCH_LDLAT, cycles (0: machine profile, else default) */
    int inherit;               /* MEMWATCH_INHERIT: 1 (default) per-CPU events inherited by
                                  threads once a process starts its second thread */
    int inline_iv;             /* MEMWATCH_INLINE: 1 (default) a single-threaded process's
                                  intervals run on its own thread, without an interval thread */
    uint64_t inline_cpu_ns;    /* ... for this much of its CPU time (0: for good; default 2 s) */
    int probe_share;           /* MEMWATCH_PROBE_SHARE: 1 (default) one probe measurement per
                                  interval for the machine; 0 off */
    char run_id[64];           /* MEMWATCH_RUN_ID: the run this process belongs to (set by
                                  memwatch record, else made by the tree's first process) */
    int group_readable;        /* MEMWATCH_GROUP_READABLE: raw files 0640 instead of 0600 */
    /* The latency probe's settings, environment applied (MW_PROBE_LAT_NO_ENV):
     * the interval thread creates the probe without calling getenv. */
    mw_probe_lat_config probe;
    /* The long paths last: a process writes the first bytes of dir and
     * profile, the small fields above share their page (fewer pages of
     * .data copied on write in every process; docs/overhead.md). */
    char dir[PATH_MAX];        /* MEMWATCH_DIR */
    char profile[PATH_MAX];    /* MEMWATCH_PROFILE, else the default path ("" none known), "none" */
    char sysfs[256];           /* MEMWATCH_SYSFS: PMU descriptions ("" = /sys; tests) */
    char proc[256];            /* MEMWATCH_PROC: the CPU's cpuinfo ("" = /proc; tests) */
    char probe_share_dir[256]; /* MEMWATCH_PROBE_SHARE given as a directory ("" = /dev/shm) */
    char status[PATH_MAX];     /* MEMWATCH_STATUS: memwatch record's status file ("" none) */
};
extern struct mwp_config mwp_cfg;
enum { MWP_UNWIND_AUTO = -1, MWP_UNWIND_FP = 0, MWP_UNWIND_DWARF = 1 };
#define MWP_UNWIND_MAX_RATE 4000ul /* cpu-clock samples/s with DWARF stacks at most */
/* Reads every MEMWATCH_* variable; invalid values give one stderr line and
 * the default. Not a hook path (constructor only). Everything the interval
 * thread needs from the environment is read here (the default profile path
 * too): that thread never calls getenv, because the application may change
 * its environment at any moment (setenv, putenv, setproctitle). */
void mwp_config_load(struct mwp_config *c);

/* The raw system call, inline, for the calls every process makes (its
 * constructor, the end of a process that never began): libc's syscall() is
 * one more lazy binding of the loader in every process (docs/overhead.md).
 * As syscall(): -1 with errno set on failure; every argument passed as a
 * long. The calls of a recording process (perf_event_open, its files, the
 * interval thread's writes) keep libc's syscall(), which the test suite's
 * mwp_syscallspy watches. */
#if defined(__x86_64__)
static inline long mwp_sys6(long n, long a, long b, long c, long d, long e, long f)
{
    long r;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    if ((unsigned long)r > -4096ul) {
        errno = (int)-r;
        return -1;
    }
    return r;
}
#define MWP_SYS_(n, a, b, c, d, e, f, ...)                                                         \
    mwp_sys6((long)(n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#define mwp_syscall(...) MWP_SYS_(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0)
#else
#define mwp_syscall syscall
#endif

/* String helpers for the path every process takes (constructor, end of a
 * short process): inline, where the libc function would be one more lazy
 * binding of the loader (some 700 instructions and a save of the vector
 * registers, once per function and process) for a few bytes of work. */
static inline int mwp_streq(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}
static inline void mwp_strcpy(char *d, const char *s)
{
    while ((*d++ = *s++))
        ;
}
/* sigfillset as glibc 2.34+ fills a set: every signal but its internal
 * SIGCANCEL (32) and SIGSETXID (33) */
static inline void mwp_sigfill(sigset_t *set)
{
    memset(set, 0xff, sizeof *set);
    set->__val[0] &= ~((1ul << 31) | (1ul << 32));
}
/* The lower-case hex number at *p (before end), *p moved past it: the
 * fields of /proc/self/maps. Async-signal-safe. */
static inline uint64_t mwp_parse_hex(const char **p, const char *end)
{
    uint64_t v = 0;
    for (; *p < end; (*p)++) {
        char c = **p;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            break;
        v = v << 4 | (uint64_t)d;
    }
    return v;
}
static inline int mwp_has_char(const char *s, char c)
{
    for (; *s; s++)
        if (*s == c)
            return 1;
    return 0;
}

/* ---- env.c: the constructor's environment, read in one pass ---- */
#define MWP_ENV_LIST(X)                                                                            \
    X(VERBOSE, "MEMWATCH_VERBOSE")                                                                 \
    X(ENABLE, "MEMWATCH_ENABLE")                                                                   \
    X(DIR, "MEMWATCH_DIR")                                                                         \
    X(DIR_OK, "MEMWATCH_DIR_OK")                                                                   \
    X(INTERVAL, "MEMWATCH_INTERVAL")                                                               \
    X(METHOD, "MEMWATCH_METHOD")                                                                   \
    X(RATE, "MEMWATCH_RATE")                                                                       \
    X(FAULT_PERIOD, "MEMWATCH_FAULT_PERIOD")                                                       \
    X(ALLOC_THRESHOLD, "MEMWATCH_ALLOC_THRESHOLD")                                                 \
    X(ALLOC_FRAMES, "MEMWATCH_ALLOC_FRAMES")                                                       \
    X(STACK_DEPTH, "MEMWATCH_STACK_DEPTH")                                                         \
    X(UNWIND, "MEMWATCH_UNWIND")                                                                   \
    X(UNWIND_STACK, "MEMWATCH_UNWIND_STACK")                                                       \
    X(RING_PAGES, "MEMWATCH_RING_PAGES")                                                           \
    X(INHERIT, "MEMWATCH_INHERIT")                                                                 \
    X(PROBE_SHARE, "MEMWATCH_PROBE_SHARE")                                                         \
    X(INLINE, "MEMWATCH_INLINE")                                                                   \
    X(FOLLOW, "MEMWATCH_FOLLOW")                                                                   \
    X(PROFILE, "MEMWATCH_PROFILE")                                                                 \
    X(THRESHOLD_NS, "MEMWATCH_THRESHOLD_NS")                                                       \
    X(THRESHOLD_FACTOR, "MEMWATCH_THRESHOLD_FACTOR")                                               \
    X(MIX, "MEMWATCH_MIX")                                                                         \
    X(BASELINE_NS, "MEMWATCH_BASELINE_NS")                                                         \
    X(TSC, "MEMWATCH_TSC")                                                                         \
    X(PRECISE, "MEMWATCH_PRECISE")                                                                 \
    X(SYSFS, "MEMWATCH_SYSFS")                                                                     \
    X(PROC, "MEMWATCH_PROC")                                                                       \
    X(LDLAT, "MEMWATCH_LDLAT")                                                                     \
    X(GPU, "MEMWATCH_GPU")                                                                         \
    X(RUN_ID, "MEMWATCH_RUN_ID")                                                                   \
    X(GROUP_READABLE, "MEMWATCH_GROUP_READABLE")                                                   \
    X(STATUS, "MEMWATCH_STATUS")                                                                   \
    X(FORKED, "MEMWATCH_FORKED")                                                                   \
    X(MACHINE, "MEMWATCH_MACHINE")                                                                 \
    X(PROBE_LINES, "MEMWATCH_PROBE_LINES")                                                         \
    X(PROBE_BURSTS, "MEMWATCH_PROBE_BURSTS")                                                       \
    X(PROBE_WINDOW, "MEMWATCH_PROBE_WINDOW")                                                       \
    X(PROBE_LAYOUT, "MEMWATCH_PROBE_LAYOUT")                                                       \
    X(OMPI_RANK, "OMPI_COMM_WORLD_RANK")                                                           \
    X(PMIX_RANK, "PMIX_RANK")                                                                      \
    X(PMI_RANK, "PMI_RANK")                                                                        \
    X(SLURM_PROCID, "SLURM_PROCID")                                                                \
    X(CUDA_INJECTION, "CUDA_INJECTION64_PATH")                                                     \
    X(XDG_DATA_HOME, "XDG_DATA_HOME")                                                              \
    X(HOME, "HOME")
#define MWP_ENV_ENUM(id, name) MWP_ENV_##id,
enum { MWP_ENV_LIST(MWP_ENV_ENUM) MWP_ENV_COUNT };
#define MWP_ENV_FIRST_OTHER MWP_ENV_OMPI_RANK /* the MEMWATCH_ names come before */
/* getenv's answers for the names above at the scan (NULL: not set) */
extern const char *mwp_env[MWP_ENV_COUNT];
/* One pass over environ; the constructor's first step after MEMWATCH_ENABLE. */
void mwp_env_scan(void);
/* The constructor unset name: forget its value (the constructor's own
 * setenv calls are not reflected; nothing reads those variables after). */
void mwp_env_drop(const char *name);
/* The counters library's getenv (mw_getenv) answered from the table: on
 * while the constructor runs, off after. */
void mwp_env_lookup_on(int on);
int mwp_env_answer(const char *name, const char **value); /* for mw_getenv */

/* ---- status.c: a write failure named once for the process tree ---- */
/* 1 for the errors that end the recording (ENOSPC, EDQUOT, EIO, EROFS,
 * EFBIG) */
int mwp_write_error_is_fatal(int err);
/* The errno behind a short write: ENOSPC when the file system is full, else
 * EIO */
int mwp_write_short_errno(int fd);
/* Says once (per process; per tree through memwatch record's status file)
 * why the raw file cannot be written and what was kept. created: the file
 * exists (else it could not be created). */
void mwp_write_failed(int err, const char *path, int created);

/* ---- probe_share.c: probe_lat measurements shared by the recorded processes
 * of this user on this machine (interval thread only) ---- */
int mwp_pshare_open(const char *dir, const mw_probe_lat_config *pc, char *path, size_t pathsz,
                    char *why, size_t whysz);
int mwp_pshare_on(void);
unsigned mwp_pshare_node(void);
int mwp_pshare_claim(uint64_t now, unsigned node, uint64_t iv_ns);
void mwp_pshare_publish(uint64_t t_ns, unsigned node, double lat_ns);
unsigned mwp_pshare_reading(uint64_t now, unsigned node, uint64_t fresh_ns, double *lat_ns);
uint64_t mwp_pshare_pack(uint64_t t_ns, unsigned node, double lat_ns);
void mwp_pshare_unpack(uint64_t w, uint64_t *t_ns, unsigned *node, double *lat_ns);

/* ---- util.c ---- */
struct mwp_str {
    char *p;
    size_t cap, len;
};
void mwp_s_str(struct mwp_str *s, const char *t);
void mwp_s_mem(struct mwp_str *s, const char *t, size_t n);
void mwp_s_u64(struct mwp_str *s, uint64_t v);
void mwp_s_hex(struct mwp_str *s, uint64_t v); /* 0x..., lower case, AS-safe */
void mwp_s_i64(struct mwp_str *s, int64_t v);
void mwp_s_dbl(struct mwp_str *s, double v); /* %.3f-like, async-signal-safe */
void mwp_s_kv(struct mwp_str *s, const char *k, const char *v);
void mwp_s_kvu(struct mwp_str *s, const char *k, uint64_t v);
/* One line "memwatch: <a><b><c>\n" on stderr when level <= verbosity (AS-safe). */
void mwp_say(int level, const char *a, const char *b, const char *c);
uint64_t mwp_clock_sys_ns(clockid_t c);
uint64_t mwp_now_ns(void); /* CLOCK_MONOTONIC */
uint64_t mwp_clock_ns(clockid_t c); /* any clock, in ns; 0 where it cannot be read */
pid_t mwp_gettid(void);
int mwp_sys_close(int fd);

/* The next definitions of what libmemwatch.so interposes. */
struct mwp_real {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    size_t (*usable)(void *);
    void *(*mmap)(void *, size_t, int, int, int, off_t);
    int (*munmap)(void *, size_t);
    void *(*mremap)(void *, size_t, size_t, int, ...);
    int (*pthread_create)(void *, const void *, void *(*)(void *), void *);
    int (*pthread_setname_np)(unsigned long, const char *);
    int (*sigaction)(int, const struct sigaction *, struct sigaction *);
    int (*execve)(const char *, char *const[], char *const[]);
    int (*execvpe)(const char *, char *const[], char *const[]);
    int (*execveat)(int, const char *, char *const[], char *const[], int);
    int (*fexecve)(int, char *const[], char *const[]);
    int (*posix_spawn)(pid_t *, const char *, const void *, const void *, char *const[],
                       char *const[]);
    int (*posix_spawnp)(pid_t *, const char *, const void *, const void *, char *const[],
                        char *const[]);
    void (*exit)(int) __attribute__((noreturn));
    void (*_exit)(int) __attribute__((noreturn));
    int (*close_range)(unsigned, unsigned, int);
    int (*dup2)(int, int);
    int (*dup3)(int, int, int);
    pid_t (*wait4)(pid_t, int *, int, struct rusage *);
    int (*waitid)(int, unsigned, siginfo_t *, int);
};
extern struct mwp_real mwp_real;
/* Resolve all (idempotent). Allocation during dlsym is served by a static arena. */
void mwp_resolve(void);
/* Resolve one entry (slot: &mwp_real.x) by its symbol name. */
void mwp_resolve_one(void **slot, const char *name);
/* A hook's own next definition: the whole table is resolved by the
 * constructor of a recorded process; a process with MEMWATCH_ENABLE=0 (or
 * not recorded for another reason) resolves only what it calls. */
#define MWP_NEED(field, name)                                                                   \
    do {                                                                                        \
        if (__builtin_expect(!mwp_real.field, 0))                                               \
            mwp_resolve_one((void **)&mwp_real.field, name);                                    \
    } while (0)
extern MWP_TLS int mwp_in_hook;   /* >0: memwatch code is running on this thread */
extern MWP_TLS int mwp_resolving; /* dlsym in progress on this thread */

/* ---- process-wide state (process.c) ---- */
enum mwp_state { MWP_OFF = 0, MWP_RUNNING = 1, MWP_ENDING = 2, MWP_ENDED = 3 };
extern _Atomic int mwp_state;
extern pid_t mwp_pid;
extern int mwp_is_fork_child;
extern char mwp_host[128];
extern int mwp_rank;
extern const char *mwp_rank_from; /* the variable the rank came from; NULL: none */
extern _Atomic int mwp_exit_known;
extern _Atomic int mwp_exit_status;
/* META facts the start-up finds and the engine and the writer report */
extern char mwp_identity[256];                  /* the machine's identity */
extern char mwp_profile_desc[PATH_MAX + 160];   /* the machine profile: path and state */
extern char mwp_exe[PATH_MAX];                  /* the program's path */
extern double mwp_tsc_hz_val;                   /* the TSC rate, 0: unknown */
/* How mwp_tsc_hz_val was determined (NULL until the interval thread knows):
 * with it, children are handed MEMWATCH_TSC. */
extern const char *_Atomic mwp_tsc_src;
/* Flush everything and write the trailer. how: "exit", "signal", "_exit",
 * "exec". Async-signal-safe when in_signal is set. Idempotent. */
void mwp_finish(int32_t status, const char *how, int in_signal);
/* Lazy start (process.c): 1 once the process set up its interval thread and
 * file (mwp_begin, at a safe point after one interval of CPU time, the first
 * pthread_create, ...). mwp_begin is idempotent; not async-signal-safe. */
extern _Atomic int mwp_begun;
void mwp_begin(void);
/* Begin with an interval thread, or leave inline intervals for one (the
 * program's first pthread_create, its claim of the timer's signal). */
void mwp_begin_threaded(void);
/* Inline intervals (process.c, engine.c): the lazy start's timer made
 * periodic again after a failed exec (while mwp_engine_inline) */
void mwp_inline_rearm(void);
/* sigaction on memwatch's lazy-start signal: the program claims it */
void mwp_lazy_claimed(int sig);
/* Begin now, or at the timer's next safe point where this may run inside
 * the program's allocator (where pthread_create must not): for the
 * allocation hooks (process.c, "lazy start"). */
void mwp_lazy_soon(void);
/* 1 where global, malloc as another file of this library reaches it (its
 * global offset table: the first definition in the process's scope), is
 * this library's own; 0 where the executable or a library loaded before
 * libmemwatch.so defines the program's allocator */
int mwp_alloc_ours(void *(*global)(size_t));
/* The TSC beside mwp_start_mono_ns's reading (process.c; 0: a parent handed
 * the rate down): the engine measures the rate from it (mw_tsc_reference). */
extern uint64_t mwp_tsc_mark_tsc;
/* the lazy fork child this image continues (MEMWATCH_FORKED), 0: none */
extern uint64_t mwp_forked_ns;
/* Lazy start around an exec (exec.c): the timer is stopped before it and
 * armed again where it fails. */
void mwp_lazy_disarm(void);
void mwp_lazy_rearm(void);

/* ---- exec.c ---- */
/* LD_PRELOAD without libmemwatch.so in this process's environment, so that
 * children do not load it (MEMWATCH_FOLLOW=0, MEMWATCH_ENABLE=0). */
void mwp_env_unfollow_self(void);

/* ---- alloc.c ---- */
/* 1 when the allocator behind the hooks is glibc's (set in the constructor) */
extern int mwp_alloc_glibc;

/* ---- alloc_sites.c: allocation churn (alloc.c's helper) ---- */
/* Every allocation of a site up to MWP_SITE_FULL is recorded; later ones 1 in
 * mwp_alloc_sample_period(ordinal), at most 1 in MWP_SITE_MAXPER. */
#define MWP_SITE_FULL 32u
#define MWP_SITE_MAXPER 1024u
uint64_t mwp_alloc_sample_period(uint64_t n);      /* pure */
int mwp_alloc_sample_rule(uint64_t key, uint64_t n); /* pure; 1: record */
int mwp_alloc_site_take(uint64_t pc, size_t n);    /* count; 1: record. AS-safe */
void mwp_alloc_sites_emit(void);                   /* MWR_ALLOC_SITE records (mwp_finish). AS-safe */
void mwp_alloc_live_add(const void *p);            /* a recorded block. AS-safe */
int mwp_alloc_live_take(const void *p);            /* 1: write its FREE. AS-safe */
extern _Atomic int mwp_alloc_live_overflow;

/* ---- writer.c ---- */
/* When the file is created: on the first record written directly (fork
 * children), or later (the constructor of a process started by exec: its
 * batch is held and the interval thread, or whatever writes first, creates
 * the file; the directory is checked now). Returns 0 or -errno (after one
 * warning on stderr). */
enum { MWP_W_FIRST_RECORD = 0, MWP_W_LATER = 1 };
int mwp_writer_start(int when);
/* The constructor's check of MEMWATCH_DIR (one warning where it cannot be
 * used). 0 or -errno. */
int mwp_writer_dir_check(void);
/* A process that ends before it began (lazy start): its segment of the
 * shared file of short processes is META with the end note, the records in
 * recs (nrecs whole records: allocation records and the modules they name,
 * or none), its CPU record and the trailer, written with one system call. */
void mwp_writer_summary(int32_t status, const char *how, const struct iovec *recs, int nv,
                        uint64_t nrecs);
/* META signals_blocked (process.c): where the program's signal mask kept
 * memwatch's timer signal from it (or, before the lazy start, was not the
 * mask it started with), the signals and what that cost, into out; its
 * length, 0 where nothing was kept. begun 0: a process that never began,
 * with its CPU time (below one lazy delay no system call is made). */
size_t mwp_lazy_blocked(char *out, size_t cap, uint64_t cpu_ns, int begun);
/* A child whose own code wrote no end: a signal memwatch does not catch
 * (SIGKILL) ended it (status -signal), or it exited (status 0..255) by a raw
 * exit_group system call that bypasses libc's exit (Go programs). Its
 * parent, reaping it, writes its segment (reap.c). Not signal-safe-relevant:
 * called from the parent's wait, outside any handler. */
void mwp_writer_reaped(pid_t child, int32_t status, int core, const struct rusage *ru);
/* 1 where the child wrote its end itself: the newest file of its own ends
 * in a trailer, or (no file of its own) one of the last 8 segments of the
 * shared file of short processes is its (pid and this process as ppid).
 * 0 otherwise, also where that cannot be read. System calls only. */
int mwp_writer_child_ended(pid_t child);
/* Create the file if it is still to come (the interval thread's first act). */
void mwp_writer_create_now(void);
/* Wait while another thread creates the file (its descriptor is briefly a
 * low number): called before the program closes or replaces descriptors. */
void mwp_writer_settle(void);
/* Write one record: type + payload pieces; pads to 8. AS-safe; thread-safe. */
int mwp_write(uint32_t type, const struct iovec *iov, int n);
/* Write already-framed records (whole mwr records) as one piece. */
int mwp_write_raw(const struct iovec *iov, int n, uint64_t nrec);
void mwp_writer_trailer(int32_t status, const char *how);
void mwp_writer_reopen_after_exec_failure(int err);
void mwp_writer_child(void); /* in a fork child: forget the parent's file */
int mwp_writer_fd(void);
int mwp_writer_relocate(void); /* move the fd elsewhere (dup2 onto it) */
const char *mwp_writer_path(void);
extern _Atomic uint64_t mwp_stat_lost, mwp_stat_throttled, mwp_stat_dropped,
    mwp_stat_alloc_dropped, mwp_stat_samples;
/* META text the writer puts at the start of every file (built once). */
void mwp_meta_build(void);
/* 1: gather the constructor's records; 0: write them (one system call) */
void mwp_writer_batch(int on);
/* Interval thread only: 1 starts gathering the interval's records (returns 0,
 * gathering nothing, once the process is ending); 0 writes them with one
 * system call. mwp_writer_gather_wait: another thread waits (at most 500 ms)
 * until an interval in progress has written what it gathered. */
int mwp_writer_gather(int on);
void mwp_writer_gather_wait(void);
/* Keep a copy of the command line as the program was started (writer.c):
 * META cmdline says that, not what the program made of argv later (GNU
 * getopt permutes it, head rewrites "-5"). Constructor only; no system call. */
void mwp_writer_cmdline(int argc, char **argv);
void mwp_meta_note(const char *key, const char *val); /* later META record */
/* Where a fault that ends the process happened (preload/signals.c), empty
 * otherwise: its record's META "fault". */
extern char mwp_fault_text[320];

/* ---- threads.c ---- */
struct mwp_thr {
    struct mwp_thr *_Atomic next; /* registry */
    struct mwp_thr *free_next;
    _Atomic int state;            /* enum mwp_thr_state */
    atomic_flag busy;             /* one consumer at a time */
    pid_t tid;
    mw_ring ring[3];              /* 0 cpu-clock, 1 page-faults, 2 precise loads */
    int aux_fd;                   /* precise-load group leader (mem-loads-aux) or -1 */
    uintptr_t stk_lo, stk_hi;
    uint64_t fs_base;             /* the thread's FS base (its TLS), 0: not known */
    void *(*start)(void *);
    void *arg;
    char *abuf;                   /* allocation records (SPSC ring), abuf_size bytes */
    _Atomic uint64_t ahead, atail;
    uint64_t start_ns;
    int cpu_ring;                 /* >= 0: not a thread but the per-CPU rings of CPU cpu_ring
                                     (inherited sampling); -1: an application thread */
    _Atomic int pend;             /* enum mwp_thr_pend: its samplers left to the interval thread */
    struct mwp_rgn *rgn;          /* region events (region.c), made at the thread's first region;
                                     stays with the slot like abuf */
};
/* MWP_PEND_WAIT: the thread's samplers are to be opened by the interval
 * thread (constructor, fork child); MWP_PEND_OPENING: someone is opening
 * them now (futex word: waiters sleep on it until it becomes MWP_PEND_NONE). */
enum mwp_thr_pend { MWP_PEND_NONE = 0, MWP_PEND_WAIT, MWP_PEND_OPENING };
/* How long after a process starts the interval thread opens the deferred
 * samplers. A fork child that execs, or a process that ends, within it never
 * opens any (and never waits for the kernel at exec or exit); at 250
 * samples/s a thread's first cpu-clock sample comes after 4 ms of its CPU time
 * at the earliest, so the grace costs half a sample's expectation. */
#define MWP_OPEN_GRACE_NS 2000000ull
enum mwp_thr_state { MWP_T_FREE = 0, MWP_T_STARTING, MWP_T_LIVE, MWP_T_DEAD };
#define MWP_ABUF_SIZE (256u << 10)
#define MWP_ATTR_CLOCK 1
#define MWP_ATTR_FAULT 2
extern MWP_TLS struct mwp_thr *mwp_self;
extern uint64_t mwp_start_mono_ns, mwp_start_real_ns; /* process.c: this process's start */
int mwp_threads_init(int defer);      /* main thread (constructor); defer: samplers left to the interval thread */
/* Open the samplers left to the interval thread (mwp_threads_init, fork
 * child); returns how many threads got them. Interval thread, or the
 * constructor where that thread could not be started. */
unsigned mwp_threads_open_deferred(void);
void mwp_threads_child(void);         /* fork child: only the calling thread remains */
/* Drain every live thread; reap dead ones when reap is set (engine only).
 * Returns the live threads and adds to the samples and lost counts. */
unsigned mwp_threads_drain(int reap, int in_signal, uint64_t *samples, uint64_t *lost);
/* META samples_short_threads at the end: the samples threads shorter than
 * one sampling period never got (threads.c). Async-signal-safe. */
void mwp_threads_short_note(void);
void mwp_thread_emit(const struct mwp_thr *t, uint32_t ev);
/* MWR_CPU: the calling thread's CPU time (whole = 0) or the process image's
 * since mwp_cpu_base (whole = 1). Async-signal-safe. */
void mwp_cpu_emit(int whole);
/* the kernel's accounting of this image or thread, at now_ns (0: read now) */
int mwp_cpu_fill(int whole, uint64_t now_ns, mwr_cpu *out);
void mwp_cpu_base_take(void); /* constructor, fork child: what came before this image */
#define MWP_NATTR 3
extern char mwp_attr_bytes[MWP_NATTR][256];
extern unsigned mwp_attr_size;
extern const char *mwp_attr_names[MWP_NATTR];
extern _Atomic uint64_t mwp_threads_unsampled;
/* An inline interval's tick on the program's thread began at t0 (t1 = 0) or
 * ran from t0 to t1: its samples are memwatch's own, left out at the drain
 * and counted in mwp_stat_own. */
void mwp_threads_own_time(uint64_t t0, uint64_t t1);
extern _Atomic uint64_t mwp_stat_own;
/* Buffer one framed record in the calling thread's allocation buffer (or
 * write it directly). */
void mwp_emit_buffered(uint32_t type, const void *a, size_t alen, const void *b, size_t blen);
int mwp_abuf_take(struct iovec v[2], uint64_t *nrec); /* the calling thread's records, taken */

/* ---- region.c: memwatch_region_begin/end (include/memwatch/region.h) ---- */
/* Write t's buffered region events (consumer side: hold t->busy, or be t). */
void mwp_region_drain(struct mwp_thr *t);
void mwp_region_reset(struct mwp_rgn *r); /* a slot taken by a new thread */
void mwp_region_child(void);  /* fork child: names again, open regions begin anew */
void mwp_region_finish(void); /* META region_notes, at the end of the image */
int mwp_region_pending(const struct mwp_thr *t); /* events not yet written */

/* ---- precise load sampling (precise.c: set-up; precise_attr.c: attributes) ---- */
struct perf_event_attr;
#define MWP_LDLAT_DEFAULT 64u
/* Precise-load attributes for one thread: mw_attr_precise_loads() plus what
 * the profiler needs (call chains, frequency mode at `freq` samples/s, ldlat
 * placed per the PMU's format/ldlat field, an enabled group leader). Fills
 * a[0..*n) (leader first), the MWR_PERF_ATTR name ("mem-loads" or "ibs_op").
 * Returns 0, or MW_ERR_* with the reason in why. Pure (reads sysfs only). */
int mwp_precise_attrs(const char *sysfs_root, unsigned ldlat, unsigned long freq,
                      unsigned max_stack, struct perf_event_attr *a, size_t *n, char *name,
                      size_t name_len, char *why, size_t why_len);
/* The ldlat threshold in cycles: the user's value when set (non-zero); else
 * the profile's idle latency converted with its TSC rate (PEBS weights count
 * core cycles; the TSC rate stands in for the core clock); else
 * MWP_LDLAT_DEFAULT. Clamped to 3..65535. *src says which. p may be NULL. */
struct mw_profile;
unsigned mwp_precise_ldlat(unsigned user, const struct mw_profile *p, const char **src);
/* Constructor: decide from MEMWATCH_PRECISE and the hardware; fills
 * mwp_attr_bytes[2] (and the leader) when precise sampling will be tried. */
void mwp_precise_setup(void);
/* This thread: open the precise sampler (leader kept in t->aux_fd) and map
 * its ring. Returns 0 or -errno; reports the first failure once. */
int mwp_precise_open(struct mwp_thr *t);
extern char mwp_precise_note[400]; /* META precise_loads value */
extern _Atomic uint64_t mwp_precise_unopened; /* threads whose precise sampler failed */

/* ---- engine.c ---- */
int mwp_engine_start(void);
/* Inline intervals: the process's start-up work here (a safe point on the
 * program's one thread); then mwp_engine_tick from the timer's handler every
 * interval of CPU time (safe: it interrupted the program's own code), until
 * mwp_engine_inline_stop and an interval thread take over. */
void mwp_engine_inline_start(void);
void mwp_engine_inline_stop(void);
/* 1 from mwp_engine_inline_start to _stop (a fork child starts at 0): the
 * lazy start's timer is periodic and its handler runs the intervals */
int mwp_engine_inline(void);
int mwp_engine_inline_due(void); /* 1: inline for MEMWATCH_INLINE's CPU time: a thread now */
int mwp_engine_tick(int safe); /* 0: it interrupted memwatch's own code, did nothing */
void mwp_engine_meta(struct mwp_str *s); /* method and threshold keys, once known */
double mwp_engine_baseline(void);          /* 0 until known */
/* The saturation threshold in force, ns (0 until known): every interval
 * record carries it, the last, partial one at the process's end
 * (process.c) too, whose flags stay 0 (docs/raw-format.md). */
double mwp_engine_threshold(void);
/* 1 while the interval thread exists and has not finished its set-up (the
 * threshold and methods in META); 0 on the interval thread itself */
int mwp_engine_setting_up(void);
int mwp_engine_stop(void); /* 1 when a running interval thread was stopped */
void mwp_engine_child(void);
extern uint64_t mwp_iv_last_end;

/* ---- modules.c ---- */
void mwp_modules_scan(int force);   /* not AS-safe (dl_iterate_phdr) */
long mwp_modules_collect(char *buf, size_t cap, uint64_t *nrec); /* not AS-safe either */
/* Files mapped as data (MWR_MODULE_DATA_FILE records), for the report's
 * data objects: every one in /proc/self/maps (at the start of recording),
 * and one that mmap just mapped (fd, its address, length and offset). */
void mwp_maps_scan(void);
void mwp_maps_note(int fd, const void *addr, size_t len, long off);
void mwp_modules_child(void);
/* The path of the loaded object that holds addr ("" for the program), or
 * NULL: dladdr's answer without its walk of that object's symbol table
 * (tens of µs for libc in a VM, paid by every process). Not AS-safe. */
const char *mwp_object_of(const void *addr);

/* ---- signals.c ---- */
/* installs memwatch's dispositions; *mask_out: the signal mask it found */
void mwp_signals_install(sigset_t *mask_out);
int mwp_signal_caught(int sig); /* memwatch's handler ends a recorded process killed by sig */
void mwp_signals_child(void);

/* ---- fd guard (guard.c) ---- */
int mwp_fd_is_ours(int fd);

#endif
