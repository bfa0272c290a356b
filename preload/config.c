/*
 * preload/config.c: libmemwatch.so's configuration, read once from MEMWATCH_*
 * environment variables (the full list with defaults: docs/config.md). An
 * invalid value gives exactly one line on stderr naming the variable, the
 * value and the default used instead. Runs in the constructor only.
 */
#include "config.h"

#include "base.h"
#include "env.h"
#include "sys.h"
#include "util.h"
#include "envval.h" /* counters/ */
#include "jobid.h" /* the run id of an MPI or Slurm job */

#include <memwatch/attrs.h>
#include <memwatch/memwatch.h>
#include <memwatch/probe_lat.h>
#include <memwatch/profile.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct mwp_config mwp_cfg = {
    .enabled = 1,
    .interval_ns = 10000000ull,
    .method = "auto",
    .method_choice = MW_ENV_METHOD_AUTO,
    .rate = 250,
    .fault_period = 61, /* a prime: docs/config.md, MEMWATCH_FAULT_PERIOD */
    .alloc_threshold = 64u << 10,
    .alloc_frames = 16,
    .stack_depth = 64,
    .unwind = MWP_UNWIND_AUTO,
    .unwind_stack = MW_UNWIND_STACK_DEFAULT,
    .ring_pages = 8,
    .inherit = 1,
    .probe_share = 1,
    .inline_iv = 1,
    .inline_cpu_ns = 2000000000ull,
    .follow = 1,
    .verbose = 1,
    .threshold_factor = 1.35,
    .gpu = 1,
    .precise = 1,
    .ldlat = 0, /* the machine profile's idle latency, else MWP_LDLAT_DEFAULT */
};

static void cfg_bad(const char *var, const char *val, const char *why, const char *dflt)
{
    char buf[512];
    struct mwp_str s = {buf, sizeof buf, 0};
    mwp_s_str(&s, var);
    mwp_s_str(&s, "='");
    mwp_s_str(&s, val);
    mwp_s_str(&s, "' is invalid (");
    mwp_s_str(&s, why);
    mwp_s_str(&s, "); using ");
    mwp_s_str(&s, dflt);
    mwp_say(1, buf, NULL, NULL);
    /* said once for the process tree: the children take the default
     * without a word (the constructor runs before any other thread) */
    unsetenv(var);
    mwp_env_drop(var);
}

/* The per-process choice of how stacks are taken (META unwind). DWARF needs
 * memwatch's offline unwinder, which exists for x86-64 builds with
 * libunwind; frame-pointer chains are what the kernel walks by itself and
 * stop early in code built without frame pointers (most distribution
 * binaries), where they also pick up stray words as return addresses. */
MWP_HOT static void unwind_choose(struct mwp_config *c)
{
    const char *why = NULL;
#if !defined(__x86_64__)
    why = "no DWARF unwinder for this architecture in memwatch";
#elif !defined(MW_HAVE_LIBUNWIND)
    why = "this memwatch was built without libunwind, which the report needs to unwind";
#endif
    struct mwp_str s = {c->unwind_note, sizeof c->unwind_note, 0};
    if (c->unwind == MWP_UNWIND_FP) {
        mwp_s_str(&s, "fp (MEMWATCH_UNWIND=fp): frame-pointer chains walked by the kernel");
        return;
    }
    /* Each sample copies the stack in the timer interrupt: at high rates that
     * copy outlasts the sampling period and the program stops progressing. */
    if (!why && c->unwind == MWP_UNWIND_AUTO && c->rate > MWP_UNWIND_MAX_RATE)
        why = "MEMWATCH_RATE above 4000/s, where copying user stacks in every timer "
              "interrupt costs too much (MEMWATCH_UNWIND=dwarf lowers the rate instead)";
    if (!why && c->rate > MWP_UNWIND_MAX_RATE) {
        cfg_bad("MEMWATCH_RATE", "above 4000 with MEMWATCH_UNWIND=dwarf",
                "each sample copies the user stack in the timer interrupt", "4000");
        c->rate = MWP_UNWIND_MAX_RATE;
    }
    if (why) {
        if (c->unwind == MWP_UNWIND_DWARF)
            cfg_bad("MEMWATCH_UNWIND", "dwarf", why, "fp");
        c->unwind = MWP_UNWIND_FP;
        mwp_s_str(&s, "fp: ");
        mwp_s_str(&s, why);
        return;
    }
    mwp_s_str(&s, c->unwind == MWP_UNWIND_DWARF ? "dwarf (MEMWATCH_UNWIND=dwarf): "
                                                 : "dwarf (auto): ");
    c->unwind = MWP_UNWIND_DWARF;
    mwp_s_str(&s, "registers and ");
    mwp_s_u64(&s, c->unwind_stack);
    mwp_s_str(&s, " bytes of user stack per sample and allocation, unwound at report time");
}

/* The counters library's log lines (the probe's, the profile reader's) go
 * out as memwatch's own: MEMWATCH_VERBOSE applies to them too. */
static void cfg_log(int level, const char *msg, void *user)
{
    (void)user;
    if (level == MW_LOG_ERROR)
        mwp_say(1, "error: ", msg, NULL);
    else
        mwp_say(level < 1 ? 1 : level, msg, NULL, NULL);
}

/* strtod for the decimals memwatch hands down ("135.515", "2596120000.000
 * kernel ..."): digits, a point and digits, at most 15 digits in all, is an
 * integer below 2^53 divided by a power of ten at most 10^15, both exact, so
 * the one rounding of the division gives strtod's (correctly rounded)
 * value. Anything else goes to strtod, whose first call in a process faults
 * in four pages of libc (its code and tables). */
MWP_HOT static double cfg_strtod(const char *v, char **end)
{
    static const double p10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    uint64_t m = 0;
    int digits = 0, frac = 0;
    const char *p = v;
    for (; *p >= '0' && *p <= '9'; p++, digits++)
        m = m * 10 + (uint64_t)(*p - '0');
    if (digits && *p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, digits++, frac++)
            m = m * 10 + (uint64_t)(*p - '0');
    if (!digits || digits > 15 || *p == 'e' || *p == 'E' || *p == 'x' || *p == 'X' ||
        *p == 'p' || *p == 'P')
        return strtod(v, end);
    *end = (char *)p;
    return (double)m / p10[frac];
}

/* The run and its files: MEMWATCH_RUN_ID (else the job's or a new one, handed to the
 * children), _GROUP_READABLE, _STATUS. */
MWP_HOT static void cfg_load_run(struct mwp_config *c)
{
    const char *v;
    if ((v = mwp_env.val[MWP_ENV_RUN_ID]) && *v) {
        size_t l = 0; /* letters, digits, '.', '_', '-' (a loop: strspn's page of libc is
                       * one more page fault in every process) */
        while ((v[l] >= 'a' && v[l] <= 'z') || (v[l] >= 'A' && v[l] <= 'Z') ||
               (v[l] >= '0' && v[l] <= '9') || v[l] == '.' || v[l] == '_' || v[l] == '-')
            l++;
        if (v[l] || l >= sizeof c->run_id)
            cfg_bad("MEMWATCH_RUN_ID", v, "expected up to 63 letters, digits, '.', '_', '-'",
                    "a run id of this process tree");
        else
            mwp_strcpy(c->run_id, v);
    }
    if (!c->run_id[0] && c->enabled && mw_job_run_id(c->run_id, sizeof c->run_id)) {
        /* A rank of an MPI or Slurm job: the job's identity names the run,
         * the same in every rank (preload/jobid.h, docs/jobs.md) */
        setenv("MEMWATCH_RUN_ID", c->run_id, 1);
    } else if (!c->run_id[0] && c->enabled) {
        /* The first process of a tree names the run (UTC start and pid) and
         * hands the name to its children. */
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        snprintf(c->run_id, sizeof c->run_id, "%04d%02d%02d-%02d%02d%02d-%ld", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)getpid());
        setenv("MEMWATCH_RUN_ID", c->run_id, 1);
    }
    if ((v = mwp_env.val[MWP_ENV_GROUP_READABLE]) && *v && mw_env_bool(v, &c->group_readable)) {
        c->group_readable = 0;
        cfg_bad("MEMWATCH_GROUP_READABLE", v, "expected 0 or 1", "0 (owner only)");
    }
    if ((v = mwp_env.val[MWP_ENV_STATUS]) && *v && v[0] == '/' && mwp_len(v) < PATH_MAX)
        c->status = v;
}

/* The hardware's parts: MEMWATCH_PRECISE, _SYSFS, _PROC, _LDLAT, _GPU. */
MWP_HOT static void cfg_load_hardware(struct mwp_config *c)
{
    const char *v;
    if ((v = mwp_env.val[MWP_ENV_PRECISE]) && *v) {
        if (!strcmp(v, "auto"))
            c->precise = 1;
        else if (!strcmp(v, "off"))
            c->precise = 0;
        else
            cfg_bad("MEMWATCH_PRECISE", v, "expected auto or off", "auto");
    }
    if ((v = mwp_env.val[MWP_ENV_SYSFS]) && *v) {
        if (strlen(v) >= sizeof c->sysfs)
            cfg_bad("MEMWATCH_SYSFS", v, "path too long", "/sys");
        else
            mwp_strcpy(c->sysfs, v);
    }
    if ((v = mwp_env.val[MWP_ENV_PROC]) && *v) {
        if (strlen(v) >= sizeof c->proc)
            cfg_bad("MEMWATCH_PROC", v, "path too long", "/proc");
        else
            mwp_strcpy(c->proc, v);
    }
    if ((v = mwp_env.val[MWP_ENV_LDLAT]) && *v) {
        char *end;
        unsigned long n = strtoul(v, &end, 10);
        if (*end || *v == '-' || n < 3 || n > 65535)
            cfg_bad("MEMWATCH_LDLAT", v, "expected a load latency threshold of 3..65535 cycles",
                    "the machine profile's idle latency, else 64");
        else
            c->ldlat = (unsigned)n;
    }
    if ((v = mwp_env.val[MWP_ENV_GPU]) && *v && mw_env_bool(v, &c->gpu)) {
        c->gpu = 1;
        cfg_bad("MEMWATCH_GPU", v, "expected 0 or 1", "1");
    }
}

/* What flags an interval: MEMWATCH_PROFILE, _THRESHOLD_NS, _THRESHOLD_FACTOR, _MIX,
 * _BASELINE_NS, _TSC. */
MWP_HOT static void cfg_load_thresholds(struct mwp_config *c)
{
    const char *v;
    if ((v = mwp_env.val[MWP_ENV_PROFILE]) && *v) {
        if (strlen(v) >= sizeof c->profile)
            cfg_bad("MEMWATCH_PROFILE", v, "path too long", "the default profile");
        else {
            mwp_strcpy(c->profile, v);
            c->profile_set = 1;
        }
    }
    if ((v = mwp_env.val[MWP_ENV_THRESHOLD_NS]) && *v) {
        char *end;
        double d = cfg_strtod(v, &end);
        if (*end || !(d > 0) || d > 1e6)
            cfg_bad("MEMWATCH_THRESHOLD_NS", v, "expected a latency in ns, > 0",
                    "the profile's or the default threshold");
        else
            c->threshold_ns = d;
    }
    if ((v = mwp_env.val[MWP_ENV_THRESHOLD_FACTOR]) && *v) {
        char *end;
        double d = cfg_strtod(v, &end);
        if (*end || !(d > 1.0) || d > 100)
            cfg_bad("MEMWATCH_THRESHOLD_FACTOR", v, "expected a factor > 1", "1.35");
        else
            c->threshold_factor = d;
    }
    if ((v = mwp_env.val[MWP_ENV_MIX]) && *v) {
        static const char *const ok[] = {"reads100", "reads75", "reads50", "nt50",
                                         "100",      "75",      "50",      "nt"};
        size_t k = 0;
        while (k < sizeof ok / sizeof ok[0] && strcmp(v, ok[k]))
            k++;
        if (k == sizeof ok / sizeof ok[0])
            cfg_bad("MEMWATCH_MIX", v, "expected reads100, reads75, reads50 or nt50",
                    "the curve of the interval's read/write split, else reads100");
        else
            mwp_strcpy(c->mix, ok[k % 4]); /* at most 8 characters */
    }
    if ((v = mwp_env.val[MWP_ENV_BASELINE_NS]) && *v) {
        char *end;
        double d = cfg_strtod(v, &end);
        if (*end || !(d > 0) || d > 1e6)
            cfg_bad("MEMWATCH_BASELINE_NS", v, "expected a latency in ns, > 0",
                    "a baseline measured by this process");
        else
            c->baseline_ns = d;
    }
    /* "HZ HOW": the TSC frequency and how it was determined, handed down by
     * a recorded parent (or memwatch record), so that each process does not
     * determine it again: that takes a perf event, CPUID and, in a virtual
     * machine, /proc/cpuinfo and a 20 ms measurement on the interval thread. */
    if ((v = mwp_env.val[MWP_ENV_TSC]) && *v) {
        char *end;
        double d = cfg_strtod(v, &end);
        if (!(d >= 1e6 && d <= 1e11) || *end != ' ' || !end[1] || mwp_has_char(end, '\n'))
            cfg_bad("MEMWATCH_TSC", v,
                    "expected a frequency in Hz (1e6..1e11), a space, and how it was determined",
                    "the frequency determined by this process");
        else {
            c->tsc_hz = d;
            size_t l = 0;
            while (l < sizeof c->tsc_src - 1 && end[1 + l])
                l++;
            mwp_copy(c->tsc_src, end + 1, l);
            c->tsc_src[l] = 0;
        }
    }
}

/* The process and its children: MEMWATCH_RING_PAGES, _INHERIT, _INLINE, _LAZY,
 * _PROBE_SHARE, _FOLLOW. */
MWP_HOT static void cfg_load_process(struct mwp_config *c)
{
    const char *v;
    if ((v = mwp_env.val[MWP_ENV_RING_PAGES]) && *v) {
        char *end;
        unsigned long n = strtoul(v, &end, 10);
        if (*end || n < 4 || n > 1024 || (n & (n - 1)))
            cfg_bad("MEMWATCH_RING_PAGES", v, "expected a power of two in 4..1024", "8");
        else
            c->ring_pages = (unsigned)n;
    }
    if ((v = mwp_env.val[MWP_ENV_INHERIT]) && *v && mw_env_bool(v, &c->inherit)) {
        c->inherit = 1;
        cfg_bad("MEMWATCH_INHERIT", v, "expected 0 or 1", "1");
    }
    if ((v = mwp_env.val[MWP_ENV_INLINE]) && *v) {
        static const char *const suf[] = {"ms", "s", NULL};
        static const uint64_t mul[] = {1000000, 1000000000};
        uint64_t ns;
        size_t l = strlen(v);
        if (!strcmp(v, "always")) {
            c->inline_iv = 1;
            c->inline_cpu_ns = 0;
        } else if (!mw_env_bool(v, &c->inline_iv)) {
            /* 0 or 1 (the default limit) */
        } else if (l > 1 && (v[l - 1] == 's') && !mw_env_scaled(v, suf, mul, 0, &ns) && ns >= 10000000ull) {
            c->inline_iv = 1;
            c->inline_cpu_ns = ns;
        } else {
            c->inline_iv = 1;
            cfg_bad("MEMWATCH_INLINE", v, "expected 0, 1, always or a CPU time of 10ms or more, e.g. 5s", "1 (2s)");
        }
    }
    if ((v = mwp_env.val[MWP_ENV_LAZY]) && *v) {
        if (mwp_streq(v, "tick"))
            c->lazy_tick = 1;
        else if (mwp_streq(v, "timer"))
            c->lazy_tick = 0;
        else
            cfg_bad("MEMWATCH_LAZY", v, "expected timer or tick", "timer");
    }
    if ((v = mwp_env.val[MWP_ENV_PROBE_SHARE]) && *v) {
        if (v[0] == '/' && strlen(v) < sizeof c->probe_share_dir) {
            mwp_strcpy(c->probe_share_dir, v);
        } else if (mw_env_bool(v, &c->probe_share)) {
            c->probe_share = 1;
            cfg_bad("MEMWATCH_PROBE_SHARE", v, "expected 0, 1 or an absolute directory", "1");
        }
    }
    if ((v = mwp_env.val[MWP_ENV_FOLLOW]) && *v && mw_env_bool(v, &c->follow)) {
        c->follow = 1;
        cfg_bad("MEMWATCH_FOLLOW", v, "expected 0 or 1", "1");
    }
}

/* Allocations and stacks: MEMWATCH_ALLOC_THRESHOLD, _ALLOC_FRAMES, _STACK_DEPTH, _UNWIND,
 * _UNWIND_STACK. */
MWP_HOT static void cfg_load_stacks(struct mwp_config *c)
{
    const char *v;
    if ((v = mwp_env.val[MWP_ENV_ALLOC_THRESHOLD]) && *v) {
        static const char *const suf[] = {"b",  "k", "kib", "kb", "m", "mib",
                                          "mb", "g", "gib", "gb", NULL};
        static const uint64_t mul[] = {1,       1024,    1024,    1024,    1 << 20,
                                       1 << 20, 1 << 20, 1 << 30, 1 << 30, 1 << 30};
        uint64_t t;
        if (!strcasecmp(v, "off"))
            c->alloc_threshold = UINT64_MAX;
        else if (mw_env_scaled(v, suf, mul, 1, &t))
            cfg_bad("MEMWATCH_ALLOC_THRESHOLD", v, "expected bytes with K/M/G, or off", "64K");
        else
            c->alloc_threshold = t;
    }
    if ((v = mwp_env.val[MWP_ENV_ALLOC_FRAMES]) && *v) {
        char *end;
        unsigned long n = strtoul(v, &end, 10);
        if (*end || *v == '-' || n > 64)
            cfg_bad("MEMWATCH_ALLOC_FRAMES", v, "expected 0..64", "16");
        else
            c->alloc_frames = (unsigned)n;
    }
    if ((v = mwp_env.val[MWP_ENV_STACK_DEPTH]) && *v) {
        char *end;
        unsigned long n = strtoul(v, &end, 10);
        if (*end || *v == '-' || n < 1 || n > 127)
            cfg_bad("MEMWATCH_STACK_DEPTH", v, "expected 1..127", "64");
        else
            c->stack_depth = (unsigned)n;
    }
    if ((v = mwp_env.val[MWP_ENV_UNWIND]) && *v) {
        if (!strcmp(v, "auto"))
            c->unwind = MWP_UNWIND_AUTO;
        else if (!strcmp(v, "fp"))
            c->unwind = MWP_UNWIND_FP;
        else if (!strcmp(v, "dwarf"))
            c->unwind = MWP_UNWIND_DWARF;
        else
            cfg_bad("MEMWATCH_UNWIND", v, "expected auto, dwarf or fp", "auto");
    }
    if ((v = mwp_env.val[MWP_ENV_UNWIND_STACK]) && *v) {
        static const char *const suf[] = {"b", "k", "kib", "kb", NULL};
        static const uint64_t mul[] = {1, 1024, 1024, 1024};
        uint64_t b;
        if (mw_env_scaled(v, suf, mul, 1, &b) || b < 512 || b > MW_UNWIND_STACK_MAX)
            cfg_bad("MEMWATCH_UNWIND_STACK", v, "expected 512..32768 bytes (K allowed)", "8192");
        else
            c->unwind_stack = (unsigned)b & ~7u;
    }
}

/* Whether, where and how often: MEMWATCH_ENABLE, _DIR, _INTERVAL, _METHOD, _RATE,
 * _FAULT_PERIOD. */
MWP_HOT static void cfg_load_sampling(struct mwp_config *c)
{
    const char *v;
    if ((v = mwp_env.val[MWP_ENV_ENABLE]) && *v && mw_env_bool(v, &c->enabled)) {
        c->enabled = 1;
        cfg_bad("MEMWATCH_ENABLE", v, "expected 0 or 1", "1");
    }
    if ((v = mwp_env.val[MWP_ENV_DIR]) && *v) {
        if (mwp_len(v) >= sizeof c->dir - 80)
            cfg_bad("MEMWATCH_DIR", v, "path too long", "the current directory");
        else
            mwp_strcpy(c->dir, v);
    }
    if ((v = mwp_env.val[MWP_ENV_INTERVAL]) && *v) {
        static const char *const suf[] = {"ns", "us", "ms", "s", NULL};
        static const uint64_t mul[] = {1, 1000, 1000000, 1000000000};
        uint64_t ns;
        if (mw_env_scaled(v, suf, mul, 1000000, &ns) || ns < 1000000 || ns > 60000000000ull)
            cfg_bad("MEMWATCH_INTERVAL", v, "expected 1ms..60s, e.g. 10ms", "10ms");
        else
            c->interval_ns = ns;
    }
    if ((v = mwp_env.val[MWP_ENV_METHOD]) && *v) {
        if (!mw_env_method_ok(v) || strlen(v) >= sizeof c->method) {
            char expected[200] = "expected ";
            mw_env_method_choices(expected + 9, sizeof expected - 9);
            cfg_bad("MEMWATCH_METHOD", v, expected, "auto");
        } else {
            mwp_strcpy(c->method, v);
            c->method_choice = mw_env_method(v);
        }
    }
    if ((v = mwp_env.val[MWP_ENV_RATE]) && *v) {
        static const char *const suf[] = {"hz", "khz", NULL};
        static const uint64_t mul[] = {1, 1000};
        uint64_t r;
        if (mw_env_scaled(v, suf, mul, 1, &r) || r > 1000000)
            cfg_bad("MEMWATCH_RATE", v, "expected 0 (off) .. 1000000 samples/s", "250");
        else
            c->rate = (unsigned long)r;
    }
    if ((v = mwp_env.val[MWP_ENV_FAULT_PERIOD]) && *v) {
        char *end;
        unsigned long p = strtoul(v, &end, 10);
        if (*end || *v == '-' || p > 1000000000ul)
            cfg_bad("MEMWATCH_FAULT_PERIOD", v, "expected 0 (off) or faults per sample", "61");
        else
            c->fault_period = p;
    }
}

static void cfg_load_probe(struct mwp_config *c);

MWP_HOT void mwp_config_load(struct mwp_config *c)
{
    const char *v;
    /* Verbosity first so that the other warnings obey it. */
    if ((v = mwp_env.val[MWP_ENV_VERBOSE]) && *v) {
        char *end;
        long n = strtol(v, &end, 10);
        if (*end || n < 0 || n > 3) {
            c->verbose = 1;
            cfg_bad("MEMWATCH_VERBOSE", v, "expected 0..3", "1");
        } else {
            c->verbose = (int)n;
        }
    }
    mw_set_log(cfg_log, NULL, MW_LOG_DEBUG);
    cfg_load_sampling(c);
    cfg_load_stacks(c);
    unwind_choose(c);
    cfg_load_process(c);
    cfg_load_thresholds(c);
    cfg_load_hardware(c);
    cfg_load_run(c);
    /* A probe setting given: read (and an invalid one refused, with one
     * line) here, as every other variable is, whether or not the process
     * begins; without one, the defaults wait for the lazy start. */
    if (mwp_env.val[MWP_ENV_PROBE_LINES] || mwp_env.val[MWP_ENV_PROBE_BURSTS] ||
        mwp_env.val[MWP_ENV_PROBE_WINDOW] || mwp_env.val[MWP_ENV_PROBE_LAYOUT])
        cfg_load_probe(c);
}

/* MEMWATCH_PROBE_LINES, _BURSTS, _WINDOW, _LAYOUT: read (and refused with
 * one line) by the probe's own code, as for the validation. */
static void cfg_load_probe(struct mwp_config *c)
{
    memset(&c->probe, 0, sizeof c->probe);
    mw_probe_lat_config_env(&c->probe);
    c->probe_loaded = 1;
}

/* What only recording needs: the default profile path and, where no
 * variable set them, the probe's settings, from the environment as the
 * constructor saw it (mwp_env), when the process begins (lazy.c): code and
 * pages of the counters library that a process ending before then never
 * touches (docs/overhead.md). */
void mwp_config_load_late(struct mwp_config *c)
{
    if (c->late_loaded)
        return; /* a fork child's, or the image's second begin */
    c->late_loaded = 1;
    mwp_env_lookup_on(1);
    /* What the interval thread would otherwise ask the environment for. */
    if (!c->profile[0] && mw_profile_default_path(c->profile, sizeof c->profile) < 0)
        c->profile[0] = 0; /* neither XDG_DATA_HOME nor HOME: no profile */
    c->profile_snapshot = mwp_env.val[MWP_ENV_PROFILE_SNAPSHOT];
    if (!c->probe_loaded)
        cfg_load_probe(c);
    mwp_env_lookup_on(0);
}

int mwp_profile_read(const char *path, struct mw_profile *out)
{
    const char *snap = mwp_cfg.profile_snapshot;
    if (snap && *snap && mw_profile_snapshot_read(snap, path, out) == 0)
        return 0;
    return mw_profile_load(path, 0, out);
}
