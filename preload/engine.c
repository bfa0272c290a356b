/*
 * preload/engine.c: the interval thread.
 *
 * Every MEMWATCH_INTERVAL (default 10 ms) it measures the loaded latency
 * (memwatch's software probe, counters/probe_lat.c), drains every thread's
 * sampling rings and allocation buffer, notices newly loaded modules and
 * writes one MWR_INTERVAL record with the latency, the threshold in force and
 * the bandwidth-bound flag.
 *
 * The thread has every signal blocked, opens no perf event of its own and
 * sets mwp_in_hook permanently, so it never appears in the samples or the
 * allocation records. Threshold, in this order: MEMWATCH_THRESHOLD_NS; the
 * machine profile's threshold for the latency method in use (calibrated);
 * else MEMWATCH_THRESHOLD_FACTOR x the baseline (MEMWATCH_BASELINE_NS, or the
 * median of 7 probe measurements at the first interval in which the process
 * ran), flagged MWR_IV_UNCALIBRATED in every interval that carries it.
 *
 * Counter methods (counters/method_read.c): where the latency method chosen
 * (the profile's validated lat_method under MEMWATCH_METHOD=auto, or the one
 * MEMWATCH_METHOD names) is lmrl or l1_miss_lat, its events are opened on
 * every thread of the process (inherited by threads created later; this
 * thread is not counted) and each interval's latency is the delta's pending
 * cycles / misses, core cycles per miss, written in ns at the TSC rate with
 * the profile's threshold converted alike. The profile's validated bw_method
 * (or one MEMWATCH_METHOD names) is read the same way into iv.bytes
 * (MWR_IV_BW_VALID); uncore methods count the whole machine system-wide.
 * What cannot be opened is said in META method_note / bw_method_note, and
 * the probe runs instead; nothing is guessed.
 *
 * Cost: the probe (its 2 MiB region) is created, the counters opened (PMU
 * discovery in sysfs, one group per thread) and the baseline measured, at the
 * first interval in which the process ran (had a timer sample); a process
 * that only waits for its children never does any of it. Process exit
 * never waits for this thread (no join on the exit path).
 */
#include "engine.h"

#include "base.h"
#include "config.h"
#include "modules.h"
#include "precise.h"
#include "probe_share.h"
#include "process.h"
#include "real.h"
#include "threads.h"
#include "util.h"
#include "writer.h"

#include <memwatch/attrs.h>
#include <memwatch/catalogue.h>
#include <memwatch/memwatch.h>
#include <memwatch/method_read.h>
#include <memwatch/mwr.h>
#include <memwatch/pmu.h>
#include <memwatch/probe_lat.h>
#include <memwatch/profile.h>

#include "envval.h" /* counters/: MW_ENV_METHOD_* */
#include "tsc.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

/* The end of the last interval written (the interval thread, or the
 * inline tick; a fork child restarts it). */
static uint64_t eng_iv_last_end;
/* The TSC rate, and how it was found (NULL until the set-up: children are
 * handed MEMWATCH_TSC once it is known). */
static double eng_tsc_hz;
static const char *_Atomic eng_tsc_how;
/* The machine profile used: path and state (META profile; a fork child's
 * first META repeats it). */
static char eng_profile_desc[PATH_MAX + 160] = "pending (see the later META record)";
static mw_probe_lat *eng_probe;
MWP_HOT_DATA static int eng_setup_done;
static double eng_threshold;
static int eng_calibrated;
static char eng_lat_method[16];
static char eng_bw_method[16];
static uint64_t eng_carry_s, eng_carry_l;
static _Atomic int eng_stop;
static pthread_t eng_th;
static int eng_have;
static double eng_baseline;
MWP_HOT_DATA static const char *eng_tsrc = ""; /* relocated at load (base.h) */
static int eng_probe_pending; /* method chosen, probe not created yet */
static int eng_thr_done;      /* threshold fixed and noted in META */
MWP_COLD static mw_profile eng_prof; /* the machine profile (eng_have_prof) */
static int eng_have_prof;
/* Counter methods wanted, why, and their readers once open (interval thread). */
static char eng_ctr_lat[16], eng_ctr_bw[16];
MWP_HOT_DATA static const char *eng_ctr_lat_src = "", *eng_ctr_bw_src = "";
static mw_method_reader *eng_lat_rd, *eng_bw_rd;
static double eng_cyc_ns;       /* ns per core cycle at the TSC rate (counter latencies) */
static double eng_bw_factor = 1; /* a "biased" bandwidth method's counted / true ratio */
static _Atomic int eng_ctr_reopen; /* fork child: the parent's readers count the parent */
/* 1: the intervals run on the program's thread ("inline intervals") */
MWP_HOT_DATA static int eng_inline;

static void eng_note_num(const char *k, double v)
{
    char b[64];
    struct mwp_str s = {b, sizeof b, 0};
    mwp_s_dbl(&s, v);
    mwp_meta_note_kv(k, b);
}

/* Why the threshold is the one it is (META mix_curve): the words of
 * mw_profile_lat_threshold (docs/saturation.md, "Read/write mixes"). */
static char eng_mix_note[200];

/* The profile's claims for the threshold in force (docs/saturation.md):
 * saturable, the band, the curve for levels and the note, as META keys
 * (saturable, threshold_band_ns, lat_curve, peak_bw, threshold_note). */
static int eng_saturable; /* the profile's mw_saturable: MW_SAT_NO flags nothing */

/* META key id = "LO,HI" */
static void eng_note_band(enum mw_meta_id id, double lo, double hi)
{
    char b[64];
    struct mwp_str s = {b, sizeof b - 1, 0};
    mwp_s_dbl(&s, lo);
    mwp_s_str(&s, ",");
    mwp_s_dbl(&s, hi);
    b[s.len < sizeof b ? s.len : sizeof b - 1] = 0;
    mwp_meta_note(id, b);
}
static void eng_note_claims(const mw_profile *prof)
{
    eng_saturable = prof->saturable;
    if (prof->saturable != MW_SAT_UNKNOWN)
        mwp_meta_note(MW_META_SATURABLE, prof->saturable == MW_SAT_YES ? "1" : "0");
    char b[1024];
    struct mwp_str s = {b, sizeof b, 0};
    if (prof->band_hi_ns > 0)
        eng_note_band(MW_META_THRESHOLD_BAND_NS, prof->band_lo_ns, prof->band_hi_ns);
    if (prof->n_curve) {
        s.len = 0;
        for (unsigned i = 0; i < prof->n_curve && i < MW_PROFILE_MAX_CURVE; i++) {
            if (i)
                mwp_s_str(&s, ",");
            mwp_s_dbl(&s, prof->curve[i].bw / 1e9);
            mwp_s_str(&s, ":");
            mwp_s_dbl(&s, prof->curve[i].ns);
        }
        b[s.len < sizeof b ? s.len : sizeof b - 1] = 0;
        mwp_meta_note(MW_META_LAT_CURVE, b);
        /* levels are shares of the curve's own peak (bandwidth read back
         * from latency cannot exceed it) */
        eng_note_num(mw_meta_key(MW_META_PEAK_BW), prof->curve[prof->n_curve - 1].bw);
    }
    if (prof->threshold_note[0])
        mwp_meta_note(MW_META_THRESHOLD_NOTE, prof->threshold_note);
    /* the shapes' threshold for loads that write, where the shapes'
     * threshold is the one in force: memwatch report judges a process whose
     * sampled loops write by it (docs/saturation.md, "Loads that write") */
    if (prof->writes_threshold_ns > 0 && prof->from_shapes && !mwp_cfg.mix[0] &&
        !strcmp(prof->lat_method, eng_lat_method)) {
        eng_note_num(mw_meta_key(MW_META_THRESHOLD_WRITES_NS), prof->writes_threshold_ns);
        eng_note_band(MW_META_THRESHOLD_WRITES_BAND_NS, prof->writes_band_lo_ns,
                      prof->writes_band_hi_ns);
    }
}

/* Threshold from the machine profile for the latency method in use
 * (mw_profile_lat_threshold: the rule memwatch record's external sampler
 * shares). */
static int eng_threshold_from_profile(const mw_profile *prof, int have_prof)
{
    if (mwp_cfg.threshold_ns > 0 || !have_prof || !eng_lat_method[0])
        return 0;
    int in_ns = 1;
    double t = mw_profile_lat_threshold(prof, eng_lat_method, mwp_cfg.mix, &in_ns, eng_mix_note,
                                        sizeof eng_mix_note);
    if (t <= 0)
        return 0;
    if (!in_ns && eng_lat_rd)
        t *= eng_cyc_ns; /* counting methods' thresholds are in core cycles per miss */
    eng_threshold = t;
    eng_calibrated = 1;
    return 1;
}

/* Fix the threshold (measuring the baseline with the probe when nothing
 * else gives one) and note it in META. Runs once, on the interval thread. */
static void eng_threshold_final(void)
{
    const char *tsrc = "none";
    int usable = eng_probe || eng_probe_pending;
    if (mwp_cfg.threshold_ns > 0) {
        eng_threshold = mwp_cfg.threshold_ns;
        tsrc = "user (MEMWATCH_THRESHOLD_NS)";
    } else if (eng_calibrated && eng_threshold > 0) {
        tsrc = "profile";
    } else if (eng_lat_rd) {
        tsrc = "none: the machine profile holds no threshold validated for this counter method "
               "(MEMWATCH_THRESHOLD_NS sets one)";
    } else if (usable && mwp_cfg.baseline_ns > 0) {
        eng_baseline = mwp_cfg.baseline_ns;
        eng_threshold = eng_baseline * mwp_cfg.threshold_factor;
        tsrc = "uncalibrated default: MEMWATCH_THRESHOLD_FACTOR x MEMWATCH_BASELINE_NS (measured by "
               "memwatch record or a parent process)";
    } else if (eng_probe) {
        /* Median of 7 probe measurements, at the first interval the process ran. */
        double base = mw_probe_lat_baseline(eng_probe);
        if (base > 0) {
            eng_baseline = base;
            eng_threshold = eng_baseline * mwp_cfg.threshold_factor;
            tsrc = "uncalibrated default: MEMWATCH_THRESHOLD_FACTOR x baseline probe latency "
                   "measured at the first interval in which the process ran";
        }
    }
    eng_tsrc = tsrc;
    if (eng_baseline > 0)
        eng_note_num(mw_meta_key(MW_META_BASELINE_NS), eng_baseline);
    mwp_meta_note(MW_META_LAT_METHOD, eng_lat_method[0] ? eng_lat_method : "none");
    eng_note_num(mw_meta_key(MW_META_THRESHOLD_NS), eng_threshold);
    mwp_meta_note(MW_META_THRESHOLD_SOURCE, tsrc);
    if (eng_mix_note[0] && eng_calibrated)
        mwp_meta_note(MW_META_MIX_CURVE, eng_mix_note);
    if (eng_calibrated && mwp_cfg.threshold_ns <= 0)
        eng_note_claims(&eng_prof);
    else if (eng_have_prof && eng_prof.threshold_note[0])
        mwp_meta_note(MW_META_THRESHOLD_NOTE, eng_prof.threshold_note);
    eng_thr_done = 1;
}

/* Join the machine's shared probe readings (probe_share.c); META says
 * whether this process shares and, if not, why. */
static void eng_share_open(void)
{
    if (!mwp_cfg.probe_share) {
        mwp_meta_note(MW_META_PROBE_SHARE, "off (MEMWATCH_PROBE_SHARE=0)");
        return;
    }
    char path[400], why[600], note[700];
    int rc = mwp_pshare_open(mwp_cfg.probe_share_dir[0] ? mwp_cfg.probe_share_dir : NULL,
                             &mwp_cfg.probe, path, sizeof path, why, sizeof why);
    if (rc < 0) {
        snprintf(note, sizeof note, "off: %s; this process measures every interval itself", why);
        mwp_say(2, "probe sharing ", note, NULL);
    } else {
        snprintf(note, sizeof note, "on: %s", path);
    }
    mwp_meta_note(MW_META_PROBE_SHARE, note);
}

/* One latency reading for an interval in which the process ran: the median
 * of the shared window when another process measured within it (*shared=1),
 * else this process measures (and publishes for the others). 0 or -1. */
static int eng_probe_latency(double *lat, int *shared)
{
    mw_probe_lat_result r;
    *shared = 0;
    if (!mwp_pshare_on()) {
        if (mw_probe_lat_measure(eng_probe, &r) || !(r.median_ns > 0))
            return -1;
        *lat = r.median_ns;
        return 0;
    }
    uint64_t now = mwp_now_ns();
    unsigned node = mwp_pshare_node();
    int mine = mwp_pshare_claim(now, node, mwp_cfg.interval_ns);
    if (!mine && mwp_pshare_reading(now, node, 2 * mwp_cfg.interval_ns, lat)) {
        *shared = 1;
        return 0;
    }
    /* ours to measure, or nothing fresh yet (the claimant is still at it) */
    if (mw_probe_lat_measure(eng_probe, &r) || !(r.this_ns > 0))
        return -1;
    mwp_pshare_publish(now, node, r.this_ns);
    if (!mwp_pshare_reading(mwp_now_ns(), node, 2 * mwp_cfg.interval_ns, lat))
        *lat = r.median_ns;
    return *lat > 0 ? 0 : -1;
}

/* Create the probe (first interval in which the process ran). */
static void eng_probe_create(void)
{
    eng_probe_pending = 0;
    mw_probe_lat_config pc = mwp_cfg.probe; /* environment applied in the constructor */
    int rc = mw_probe_lat_create(&pc, &eng_probe);
    if (rc < 0) {
        char why[200];
        snprintf(why, sizeof why, "probe_lat unavailable: %s", mw_strerror(rc));
        mwp_meta_note(MW_META_METHOD_NOTE, why);
        mwp_say(1, why, "; intervals carry no latency", NULL);
        eng_probe = NULL;
        eng_lat_method[0] = 0;
    }
    if (eng_probe)
        eng_share_open();
    if (!eng_thr_done)
        eng_threshold_final();
}

/* The catalogue says what a method is: counting methods are read here every
 * interval; the probe is the other latency source. */
static int eng_is_lat_counter(const char *m)
{
    return mw_method_is(m, MW_Q_LATENCY, MW_HOW_COUNT);
}

static int eng_is_bw_counter(const char *m)
{
    return mw_method_is(m, MW_Q_DRAM_BYTES, MW_HOW_COUNT);
}

static int eng_is_probe(const char *m)
{
    return mw_method_is(m, MW_Q_LATENCY, MW_HOW_PROBE);
}

/* The profile entry of a method, or NULL. */
static const mw_profile_method *eng_prof_method(const char *name)
{
    for (unsigned i = 0; eng_have_prof && i < eng_prof.n_methods && i < MW_PROFILE_MAX_METHODS; i++)
        if (!strcmp(eng_prof.methods[i].name, name))
            return &eng_prof.methods[i];
    return NULL;
}

/* Open one counter method on this process; *why says why not. A failure
 * before it (prior < 0, the PMU discovery's or the CPU's, said in
 * prior_why) is its failure too. */
static int eng_reader_open(int prior, const char *prior_why, const char *name,
                           const mw_pmu_set *pmus, mw_uarch u, mw_method_reader **out, char *why,
                           size_t wn)
{
    if (prior < 0) {
        snprintf(why, wn, "%s", prior_why);
        return prior;
    }
    const mw_method_def *def = NULL;
    if (mw_catalogue_find(u, name, &def) < 0 || !def) {
        snprintf(why, wn, "memwatch's catalogue has no %s for this CPU (%s)", name,
                 mw_uarch_long_name(u));
        return MW_ERR_NOEVENT;
    }
    /* the interval thread leaves itself out; inline intervals run on the
     * program's thread, which is counted */
    mw_mread_opts o = {.core_target = MW_MREAD_CORE_PROCESS,
                       .skip_tid = eng_inline ? 0 : mwp_gettid()};
    int rc = mw_method_reader_open(def, pmus, &o, out, why, wn);
    if (rc == 0 && (rc = mw_method_reader_start(*out)) < 0) {
        snprintf(why, wn, "its counters opened but could not be started: %s", mw_strerror(rc));
        mw_method_reader_close(*out);
        *out = NULL;
    }
    return rc;
}

/* Open the counter methods wanted (first interval in which the process ran,
 * on this thread): PMU discovery (MEMWATCH_SYSFS), the CPU's catalogue
 * (MEMWATCH_PROC's cpuinfo, else /proc's), the
 * readers. Every failure is said in META; the caller falls back to the probe. */
static void eng_counters_open(void)
{
    const char *root = mwp_cfg.sysfs[0] ? mwp_cfg.sysfs : NULL;
    char why[520] = "", note[700];
    mw_pmu_set *pmus = NULL;
    mw_cpu_id cpu;
    int rc = mw_pmus_discover(root, &pmus);
    if (rc < 0)
        snprintf(why, sizeof why,
                 "cannot read the PMU descriptions in %s/bus/event_source/devices: %s",
                 root ? root : "/sys", mw_strerror(rc));
    else if ((rc = mw_cpu_identify(mwp_cfg.proc[0] ? mwp_cfg.proc : NULL, &cpu)) < 0)
        snprintf(why, sizeof why, "cannot identify the CPU from %s/cpuinfo: %s",
                 mwp_cfg.proc[0] ? mwp_cfg.proc : "/proc", mw_strerror(rc));
    double hz = eng_have_prof && eng_prof.tsc_hz > 0 ? eng_prof.tsc_hz : eng_tsc_hz;
    if (eng_ctr_lat[0]) {
        /* only the latency method turns core cycles into ns */
        int prior = rc;
        const char *prior_why = why;
        if (rc == 0 && !(hz > 0)) {
            prior = MW_ERR_NODATA;
            prior_why = "no TSC rate to turn core cycles into ns";
        }
        char lwhy[520];
        int lrc = eng_reader_open(prior, prior_why, eng_ctr_lat, pmus, cpu.uarch, &eng_lat_rd,
                                  lwhy, sizeof lwhy);
        if (lrc == 0) {
            eng_cyc_ns = 1e9 / hz;
            snprintf(eng_lat_method, sizeof eng_lat_method, "%.15s", eng_ctr_lat);
            snprintf(note, sizeof note,
                     "%s (%s): pending-miss cycles / misses of every thread of the process, core "
                     "cycles per miss x 1e9 / %.6g Hz (TSC rate; the threshold is converted alike)",
                     eng_ctr_lat, eng_ctr_lat_src, hz);
            mwp_meta_note(MW_META_LAT_COUNTERS, note);
        } else {
            snprintf(note, sizeof note, "%s %s but cannot be opened here: %s; using probe_lat",
                     eng_ctr_lat, eng_ctr_lat_src, lwhy);
            mwp_meta_note(MW_META_METHOD_NOTE, note);
            mwp_say(2, note, NULL, NULL);
        }
    }
    if (eng_ctr_bw[0]) {
        char bwhy[520];
        int brc = eng_reader_open(rc, why, eng_ctr_bw, pmus, cpu.uarch, &eng_bw_rd, bwhy,
                                  sizeof bwhy);
        if (brc == 0) {
            snprintf(eng_bw_method, sizeof eng_bw_method, "%.15s", eng_ctr_bw);
            snprintf(note, sizeof note, "%s (%s)%s%s", eng_ctr_bw, eng_ctr_bw_src,
                     mw_method_reader_threads(eng_bw_rd)
                         ? ": DRAM reads of this process's threads"
                         : ": all DRAM traffic of the machine, every process (system-wide)",
                     eng_bw_factor != 1 ? ", divided by the profile's factor" : "");
            mwp_meta_note(MW_META_BW_COUNTERS, note);
            if (eng_bw_factor != 1)
                eng_note_num(mw_meta_key(MW_META_BW_FACTOR), eng_bw_factor);
        } else {
            snprintf(note, sizeof note,
                     "%s %s but cannot be opened here: %s; intervals carry no DRAM bytes",
                     eng_ctr_bw, eng_ctr_bw_src, bwhy);
            mwp_meta_note(MW_META_BW_METHOD_NOTE, note);
            mwp_say(2, note, NULL, NULL);
        }
    }
    mw_pmus_free(pmus);
}

/* The latency and bandwidth sources, at the first interval in which the
 * process ran: counter methods where wanted and they open, else the probe. */
static void eng_sources_create(void)
{
    eng_probe_pending = 0;
    if (eng_ctr_lat[0] || eng_ctr_bw[0])
        eng_counters_open();
    if (eng_lat_rd) {
        if (mwp_cfg.threshold_ns <= 0) {
            eng_calibrated = 0;
            eng_threshold = 0;
            eng_threshold_from_profile(&eng_prof, eng_have_prof);
        }
        if (!eng_thr_done)
            eng_threshold_final();
        return;
    }
    if (eng_ctr_lat[0]) { /* fell back: the probe's threshold, as without counters */
        snprintf(eng_lat_method, sizeof eng_lat_method, "probe_lat");
        if (mwp_cfg.threshold_ns <= 0 && !eng_calibrated)
            eng_threshold_from_profile(&eng_prof, eng_have_prof);
    }
    if (eng_lat_method[0] && !eng_probe)
        eng_probe_create();
    else if (!eng_thr_done)
        eng_threshold_final();
}

/* Fork child (its own interval thread): the inherited readers' descriptors
 * count the parent's threads; close them and open this process's own. */
static void eng_counters_child(void)
{
    atomic_store(&eng_ctr_reopen, 0);
    mw_method_reader_close(eng_lat_rd);
    mw_method_reader_close(eng_bw_rd);
    eng_lat_rd = eng_bw_rd = NULL;
    eng_bw_method[0] = 0;
    if (eng_ctr_lat[0] && !eng_probe) {
        /* the parent ran the counter method: decide again here */
        eng_thr_done = 0;
        eng_calibrated = 0;
        eng_threshold = 0;
        eng_probe_pending = 1;
    } else {
        eng_ctr_lat[0] = 0; /* the parent fell back to the probe: so would this one */
    }
    if (eng_ctr_bw[0])
        eng_probe_pending = 1;
}

/* A reader that failed for good (its descriptors closed by the program, a
 * read error): close it, say so once, carry no value from here on. */
static void eng_reader_lost(mw_method_reader **rd, const char *key, const char *name,
                            const char *why, const char *what)
{
    char note[400];
    snprintf(note, sizeof note, "%s stopped: %s; intervals carry no %s from here on", name,
             why[0] ? why : "reading failed", what);
    mw_method_reader_close(*rd);
    *rd = NULL;
    mwp_meta_note_kv(key, note);
    mwp_say(1, note, NULL, NULL);
}

/* Runs once per process tree (fork children inherit the result). */
static void eng_setup(void)
{
    /* A handed-down frequency is the one the whole process uses (the probe
     * converts its cycles with mw_tsc_hz too); children get its original
     * source, so the note does not grow down the tree. */
    static char handed[sizeof mwp_cfg.tsc_src + 40];
    if (mwp_cfg.tsc_hz > 0) {
        snprintf(handed, sizeof handed, "%s; handed down (MEMWATCH_TSC)", mwp_cfg.tsc_src);
        mw_tsc_seed(mwp_cfg.tsc_hz, handed);
    } else if (mwp_proc.tsc_mark) {
        /* the start's reading (the constructor's, or a fork child's) */
        mw_tsc_reference(mwp_proc.tsc_mark, mwp_proc.start_mono_ns, CLOCK_MONOTONIC);
    }
    const char *src = "";
    eng_tsc_hz = mw_tsc_hz(&src);
    eng_tsc_how = mwp_cfg.tsc_hz > 0 ? mwp_cfg.tsc_src : src;
    eng_note_num(mw_meta_key(MW_META_TSC_HZ), eng_tsc_hz);
    mwp_meta_note(MW_META_TSC_SOURCE, src);

    /* The machine profile. */
    int have_prof = 0;
    char desc[PATH_MAX + 160];
    if (!strcmp(mwp_cfg.profile, "none")) {
        snprintf(desc, sizeof desc, "none (MEMWATCH_PROFILE=none)");
    } else {
        /* resolved in the constructor; "" when there is no default path */
        const char *path = mwp_cfg.profile;
        /* The identity check compares with the identity the constructor
         * computed or inherited (MEMWATCH_MACHINE), instead of reading
         * /proc and /sys again in every process. */
        int rc = path[0] ? mwp_profile_read(path, &eng_prof) : -ENOENT;
        if (rc == 0 && (!mwp_proc.identity[0] || !strcmp(mwp_proc.identity, "unknown") ||
                        strcmp(eng_prof.identity, mwp_proc.identity))) {
            rc = MW_ERR_FOREIGN;
            memset(&eng_prof, 0, sizeof eng_prof);
        }
        if (rc == 0) {
            have_prof = 1;
            snprintf(desc, sizeof desc, "%s (created %s)", path, eng_prof.created);
        } else {
            snprintf(desc, sizeof desc, "none: %s: %s", path[0] ? path : "(no default path)",
                     mw_strerror(rc));
            /* Only a profile asked for by name is worth a line on the
             * program's stderr; that the default one does not exist yet is
             * in the META (and memwatch record's summary). */
            if (mwp_cfg.profile_set) {
                char why[PATH_MAX + 120];
                snprintf(why, sizeof why, "%s: %s", path, mw_strerror(rc));
                mwp_say(1, "cannot use MEMWATCH_PROFILE=", why, "; the threshold is uncalibrated");
            }
        }
    }
    snprintf(eng_profile_desc, sizeof eng_profile_desc, "%s", desc);
    mwp_meta_note(MW_META_PROFILE, desc);
    if (have_prof)
        mwp_meta_note(MW_META_PROFILE_PATH, mwp_cfg.profile); /* a key for `memwatch report` */
    eng_have_prof = have_prof;

    /* Latency and bandwidth methods. A counter method is opened at the first
     * interval in which the process ran (eng_sources_create); until then,
     * and wherever it cannot be opened, the latency method is probe_lat. */
    int none = mwp_cfg.method_choice == MW_ENV_METHOD_NONE;
    const char *want = mwp_cfg.method_choice == MW_ENV_METHOD_NAMED ? mwp_cfg.method : NULL,
               *wsrc = "requested by MEMWATCH_METHOD";
    eng_ctr_lat[0] = eng_ctr_bw[0] = 0;
    if (want && eng_is_bw_counter(want)) {
        snprintf(eng_ctr_bw, sizeof eng_ctr_bw, "%.15s", want);
        eng_ctr_bw_src = "requested by MEMWATCH_METHOD";
        want = NULL; /* the latency method as with auto */
    }
    if (!want && !none) {
        want = have_prof && eng_prof.lat_method[0] ? eng_prof.lat_method : "probe_lat";
        wsrc = "validated in the machine profile";
    }
    if (!none && !eng_is_probe(want)) {
        if (eng_is_lat_counter(want)) {
            snprintf(eng_ctr_lat, sizeof eng_ctr_lat, "%.15s", want);
            eng_ctr_lat_src = wsrc;
        } else {
            char why[200];
            snprintf(why, sizeof why,
                     "%s is not available in the profiler (it is not a counting method); using "
                     "probe_lat",
                     want);
            mwp_meta_note(MW_META_METHOD_NOTE, why);
            mwp_say(2, why, NULL, NULL);
        }
        want = "probe_lat";
    }
    snprintf(eng_lat_method, sizeof eng_lat_method, "%.15s", none ? "" : want);
    if (have_prof && eng_prof.bw_method[0])
        mwp_meta_note(MW_META_PROFILE_BW_METHOD, eng_prof.bw_method);
    eng_bw_method[0] = 0;
    eng_bw_factor = 1;
    if (!eng_ctr_bw[0] && have_prof && eng_prof.bw_method[0] && !none) {
        /* calibrate names only an accurate or biased method; its entry, where
         * there is one, must say so too */
        const mw_profile_method *m = eng_prof_method(eng_prof.bw_method);
        int biased = m && m->vd == MW_VERDICT_BIASED;
        if (!m || biased || m->vd == MW_VERDICT_ACCURATE) {
            snprintf(eng_ctr_bw, sizeof eng_ctr_bw, "%.15s", eng_prof.bw_method);
            eng_ctr_bw_src = "validated in the machine profile";
            double f = biased ? m->factor : m ? 1 : eng_prof.bw_factor;
            eng_bw_factor = f > 0 ? f : 1;
        }
    }

    /* Precise load sampling: recorded, off, or why not (preload/precise.c). */
    mwp_meta_note(MW_META_PRECISE_LOADS, mwp_precise_note());
    if (mwp_precise_unopened()) {
        char b[24];
        struct mwp_str s = {b, sizeof b, 0};
        mwp_s_u64(&s, mwp_precise_unopened());
        b[s.len] = 0;
        mwp_meta_note(MW_META_PRECISE_UNOPENED_THREADS, b);
    }
    /* The probe (a 2 MiB region whose pages are touched, then measurements)
     * is created at the first interval in which the process ran: a process
     * that only waits (make, a shell, a compiler driver) never pays for it.
     * A threshold that needs no probe measurement is known now. */
    eng_probe_pending = eng_lat_method[0] != 0 || eng_ctr_bw[0] != 0;
    if (!eng_ctr_lat[0] &&
        (mwp_cfg.threshold_ns > 0 || eng_threshold_from_profile(&eng_prof, have_prof) ||
         !eng_lat_method[0] || mwp_cfg.baseline_ns > 0))
        eng_threshold_final();
    __atomic_store_n(&eng_setup_done, 1, __ATOMIC_RELEASE);
}

/* When the main thread called pthread_exit, glibc ends the process as its
 * last thread exits; memwatch's own thread would keep it alive forever. So
 * when no application thread memwatch knows of is alive, look at the kernel's
 * list: if only this thread (and zombies) remain, end the process the way
 * glibc would have: exit(0). */
static void eng_check_orphaned(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    pid_t self = mwp_gettid();
    int others = 0;
    struct dirent *e;
    while (!others && (e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9' || atoi(e->d_name) == self)
            continue;
        char path[300], buf[256];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        const char *r = strrchr(buf, ')');
        if (r && r[1] == ' ' && r[2] != 'Z' && r[2] != 'X')
            others = 1;
    }
    closedir(d);
    if (!others)
        exit(0);
}

/* CPU time of the application's threads since the last call, in ns: the
 * process's CPU clock less this thread's own (exited threads included, so a
 * thread that ran and ended within the interval counts). UINT64_MAX where the
 * process's clock cannot be read. */
static uint64_t eng_app_cpu_last;
static uint64_t eng_app_cpu_delta(void)
{
    uint64_t a = mwp_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    uint64_t e = eng_inline ? 0 : mwp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    if (!a)
        return UINT64_MAX;
    a = a > e ? a - e : 0;
    uint64_t d = a > eng_app_cpu_last ? a - eng_app_cpu_last : 0;
    eng_app_cpu_last = a;
    return d;
}

/* safe: the work that is not async-signal-safe may run (always on the
 * interval thread; in an inline interval, where the timer's handler
 * interrupted the program's own code: lazy.h) */
static int eng_interval_records(uint64_t t0, int safe, uint64_t cpu)
{
    mwr_interval iv;
    memset(&iv, 0, sizeof iv);
    iv.t_start_ns = t0;
    mwp_threads_clock_jitter(); /* a new sampling period: none in step with the program */
    if (safe)
        mwp_modules_scan(0);
    uint64_t s = 0, l = 0;
    iv.nthreads = mwp_threads_drain(1, 0, &s, &l);
    /* Did the application run in this interval (cpu: its CPU time in it,
     * eng_app_cpu_delta)? At least 1/20 of the interval's time on a CPU,
     * whatever the sampling rate (0 included). A process that only waits (a
     * shell, make, a compiler driver) has nothing to be bandwidth-bound
     * about: it skips the probe, which keeps process trees cheap. */
    int ran = cpu >= mwp_cfg.interval_ns / 20;
    s += eng_carry_s;
    l += eng_carry_l;
    eng_carry_s = eng_carry_l = 0;
    if (iv.nthreads == 0 && !eng_inline)
        eng_check_orphaned();
    iv.samples = s;
    iv.lost = l;
    if (safe && atomic_load(&eng_ctr_reopen))
        eng_counters_child();
    /* Creating the probe (and measuring a baseline without a profile) asks
     * for more: a quarter of the interval, so that what is left of a
     * waiting program's start-up in its first interval does not count. */
    if (safe && eng_probe_pending && cpu >= mwp_cfg.interval_ns / 4) {
        /* the first perf event may wait for the kernel for tens of ms: write
         * what was gathered first, so that the end of the process, which
         * waits for a gathering interval, does not wait for this */
        mwp_writer_gather(0);
        eng_sources_create();
        mwp_writer_gather(1);
    }
    /* Counter readers, once open, are read every interval (a few read(2)
     * calls): a window left out would add its counts to the next one. A
     * window without L1-missing loads has no latency. */
    char why[200];
    if (eng_lat_rd) {
        double cyc = 0;
        int rc = mw_method_reader_read(eng_lat_rd, &cyc, why, sizeof why);
        if (rc == 0 && cyc > 0) {
            iv.latency_ns = cyc * eng_cyc_ns;
            iv.flags |= MWR_IV_LAT_VALID;
        } else if (rc < 0 && rc != MW_ERR_NODATA && safe) {
            eng_reader_lost(&eng_lat_rd, mw_meta_key(MW_META_METHOD_NOTE), eng_lat_method, why,
                            "latency");
        }
    } else if (eng_probe && ran) {
        double lat = 0;
        int shared = 0;
        if (eng_probe_latency(&lat, &shared) == 0) {
            iv.latency_ns = lat;
            iv.flags |= MWR_IV_LAT_VALID | (shared ? MWR_IV_LAT_SHARED : 0);
        }
    }
    if (eng_bw_rd) {
        double b = 0;
        int rc = mw_method_reader_read(eng_bw_rd, &b, why, sizeof why);
        if (rc == 0) {
            iv.bytes = b / eng_bw_factor;
            iv.flags |= MWR_IV_BW_VALID;
        } else if (rc != MW_ERR_NODATA && safe) {
            eng_reader_lost(&eng_bw_rd, mw_meta_key(MW_META_BW_METHOD_NOTE), eng_bw_method, why,
                            "DRAM bytes");
        }
    }
    iv.threshold_ns = eng_threshold;
    if (eng_threshold > 0 && !eng_calibrated)
        iv.flags |= MWR_IV_UNCALIBRATED;
    /* a profile whose calibration could not saturate memory calls nothing
     * bandwidth-bound (the report gives levels instead) */
    if ((iv.flags & MWR_IV_LAT_VALID) && eng_threshold > 0 && iv.latency_ns > eng_threshold &&
        !(eng_calibrated && eng_saturable == MW_SAT_NO))
        iv.flags |= MWR_IV_BW_BOUND;
    memcpy(iv.lat_method, eng_lat_method, sizeof iv.lat_method);
    memcpy(iv.bw_method, eng_bw_method, sizeof iv.bw_method);
    iv.t_end_ns = mwp_now_ns();
    if (atomic_load(&mwp_proc.state) != MWP_RUNNING)
        return ran;
    struct iovec v = {&iv, sizeof iv};
    mwp_write(MWR_INTERVAL, &v, 1);
    eng_iv_last_end = iv.t_end_ns;
    return ran;
}

/* One interval: its records are gathered and written with one system call
 * (preload/writer.c, "the interval thread's gather"). */
static int eng_interval(uint64_t t0, int safe)
{
    if (!mwp_writer_gather(1))
        return 0; /* the process is ending: its last drain is mwp_finish's */
    int ran = eng_interval_records(t0, safe, eng_app_cpu_delta());
    mwp_writer_gather(0);
    return ran;
}

#define MWP_IDLE_AFTER 3  /* intervals without the application on a CPU */
#define MWP_IDLE_STRIDE 5 /* then one look every 5 intervals (50 ms at the default) */

/* Sleep until CLOCK_MONOTONIC reads ns (signals are blocked here; EINTR
 * only from a debugger). */
static void eng_sleep_until(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* What a process does once when it begins, on the interval thread or, for
 * inline intervals, on the program's thread at a safe point: the file, which
 * the process's start left to this moment (writer.c), the loaded objects
 * (one write), the application thread's samplers (preload/threads.c,
 * "deferred samplers"; the process has run for an interval by now: lazy
 * start, lazy.h) and the set-up that a fork child inherits. */
static int eng_started; /* this image did it (a fork child does it again) */
static void eng_start_work(int gathered)
{
    eng_started = 1;
    mwp_writer_create_now();
    if (gathered) {
        mwp_modules_scan(1);
    } else if (mwp_writer_gather(1)) {
        mwp_modules_scan(1);
        mwp_writer_gather(0);
    }
    mwp_threads_open_deferred();
    eng_iv_last_end = mwp_now_ns();
    eng_app_cpu_last = 0;
    eng_app_cpu_delta(); /* what the process used before */
    if (!eng_setup_done) {
        /* keep the rings from overflowing meanwhile; counted in the next interval */
        mwp_threads_drain(1, 0, &eng_carry_s, &eng_carry_l);
        eng_setup();
    }
}

static void *eng_main(void *arg)
{
    (void)arg;
    mwp_in_hook = 1; /* forever: nothing this thread does is recorded */
    prctl(PR_SET_NAME, "memwatch", 0, 0, 0);
    /* Let the kernel end this thread's sleeps up to 1/20 of an interval late
     * (0.5 ms at 10 ms; the default slack is 50 us), so that on a busy CPU
     * the wake-up rides on an interrupt that happens anyway (the scheduler
     * tick) instead of taking one of its own: in a VM each is an exit to the
     * hypervisor. Interval records carry their real start and end. */
    unsigned long slack = (unsigned long)(mwp_cfg.interval_ns / 20);
    prctl(PR_SET_TIMERSLACK, slack > 50000 ? slack : 50000ul, 0, 0, 0);
    if (!eng_started) {
        eng_start_work(0);
    } else {
        /* the program's thread ran the intervals so far (inline): from here
         * on this thread's own CPU time is left out of the program's */
        eng_app_cpu_last = 0;
        eng_app_cpu_delta();
    }
    uint64_t iv = mwp_cfg.interval_ns;
    uint64_t next = mwp_now_ns() + iv;
    unsigned idle = 0;
    for (;;) {
        eng_sleep_until(next);
        if (atomic_load(&eng_stop))
            break;
        int st = atomic_load(&mwp_proc.state);
        if (st == MWP_RUNNING)
            idle = eng_interval(eng_iv_last_end, 1) ? 0 : idle + 1;
        uint64_t now = mwp_now_ns();
        /* A process that has not run for MWP_IDLE_AFTER intervals (make, a
         * shell, a compiler driver waiting for its children) is looked at
         * every MWP_IDLE_STRIDE intervals until it runs again: one longer
         * interval record instead of several empty ones, and fewer wake-ups
         * taken from the processes that do run. */
        uint64_t step = idle >= MWP_IDLE_AFTER ? iv * MWP_IDLE_STRIDE : iv;
        next += step;
        if (next <= now)
            next = now + step; /* fell behind: skip, never burst */
        if (st == MWP_OFF)
            break;
    }
    return NULL;
}

/* ---- inline intervals ----
 * While the program has one thread, its intervals run in the handler of the
 * lazy start's timer on that thread (lazy.c), every interval of its CPU
 * time, instead of on an interval thread of their own: a second thread
 * switches glibc to its locked stdio and malloc paths for good (pthread_create
 * calls _IO_enable_locks), which a build's compilers paid on every getc and
 * malloc (docs/overhead.md). The thread comes when the program creates its
 * first thread (pthread_create), claims the timer's signal, or has run for
 * MEMWATCH_INLINE's CPU time (mwp_engine_inline_due).
 *
 * A tick does what the interval thread does, in the same order, with one
 * difference: the work that is not async-signal-safe (listing newly loaded
 * objects, creating the probe, opening counter methods) waits for a tick that
 * interrupted the program's own code (safe); draining the rings and buffers,
 * the probe's measurement, reading counters and the one write are
 * async-signal-safe. A tick that interrupted memwatch's own code (a hook)
 * does nothing: the next one takes the interval. The program's samples taken
 * while a tick runs are memwatch's, and left out (preload/threads.c,
 * "memwatch's own time"). The probe then measures while the program's thread
 * waits: the latency it sees is the machine's, without this thread's own
 * misses of that moment; one thread alone does not saturate a server's
 * memory (docs/overhead.md, "inline intervals"). */
void mwp_engine_inline_start(void)
{
    uint64_t t0 = mwp_now_ns();
    mwp_threads_own_time(t0, 0); /* the samplers opened here see memwatch's work first */
    eng_inline = 1;
    /* one write for all of it: nothing waits for it meanwhile (the
     * program's one thread runs this) */
    int g = mwp_writer_gather(1);
    if (!eng_started)
        eng_start_work(g);
    /* The latency sources now, at this safe point, rather than at a later
     * tick that may not come at one (a program that runs in libc's memcpy):
     * the process has run for an interval of CPU time to begin. */
    if (atomic_load(&eng_ctr_reopen))
        eng_counters_child();
    if (eng_probe_pending)
        eng_sources_create();
    if (g)
        mwp_writer_gather(0);
    eng_app_cpu_delta(); /* the first tick counts from here */
    mwp_threads_own_time(t0, mwp_now_ns());
}

/* The program has run inline for MEMWATCH_INLINE's CPU time: a long run
 * (a simulation, an MPI rank) is worth an interval thread, whose probe
 * measures while the program's thread goes on (an inline probe pauses it:
 * 16 single-threaded triads on the GPU machine read some 17 ns less inline
 * than with threads, docs/overhead.md), and the single-threaded libc matters
 * little beside its run. */
int mwp_engine_inline_due(void)
{
    /* inline, eng_app_cpu_last is the process's CPU time at the last tick */
    return eng_inline && mwp_cfg.inline_cpu_ns && eng_app_cpu_last >= mwp_cfg.inline_cpu_ns;
}

void mwp_engine_inline_stop(void)
{
    eng_inline = 0;
}

int mwp_engine_inline(void)
{
    return eng_inline;
}

int mwp_engine_tick(int safe)
{
    if (!eng_inline || atomic_load(&mwp_proc.state) != MWP_RUNNING)
        return 1;
    if (mwp_in_hook)
        return 0; /* memwatch's own code was interrupted: soon again */
    mwp_in_hook++;
    uint64_t t0 = mwp_now_ns();
    /* Where the process waited (a sleep, its children, input) since the
     * last interval: that time is an interval of its own without a
     * reading, and the interval measured is the CPU time just run (as the
     * interval thread's records of a waiting process carry no reading). */
    uint64_t last = eng_iv_last_end, ran = eng_app_cpu_delta();
    if (mwp_writer_gather(1)) { /* else the process is ending: its last drain is mwp_finish's */
        if (ran != UINT64_MAX && ran && last && t0 > last + ran + mwp_cfg.interval_ns) {
            mwr_interval w;
            memset(&w, 0, sizeof w);
            w.t_start_ns = last;
            w.t_end_ns = t0 - ran;
            w.nthreads = 1;
            w.threshold_ns = eng_threshold; /* no reading, but the threshold in force */
            struct iovec v = {&w, sizeof w};
            mwp_write(MWR_INTERVAL, &v, 1);
            last = w.t_end_ns;
        }
        eng_interval_records(last, safe, ran); /* both in the interval's one write */
        mwp_writer_gather(0);
    }
    mwp_in_hook--;
    return 1;
}

int mwp_engine_start(void)
{
    pthread_t th;
    pthread_attr_t at;
    sigset_t all, old;
    sigfillset(&all);
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 256 << 10);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    mwp_in_hook++;
    atomic_store(&eng_stop, 0);
    /* Through the global symbol, not mwp_real: where a sanitizer runtime is
     * loaded ahead of libmemwatch.so its interceptor must see this thread too
     * (it then reaches memwatch's own pthread_create, which passes the call
     * straight on while mwp_in_hook is set, as it does without a sanitizer). */
    int rc = pthread_create(&th, &at, eng_main, NULL);
    if (rc == 0) {
        eng_th = th;
        eng_have = 1;
    }
    mwp_in_hook--;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&at);
    if (rc) {
        mwp_threads_open_deferred(); /* nobody else will */
        mwp_say(1, "cannot start the interval thread: ", mw_strerror(-rc),
                "; only samples and allocations are recorded");
        mwp_meta_note(MW_META_ENGINE_ERROR, mw_strerror(-rc));
        return -rc;
    }
    return 0;
}

double mwp_engine_threshold(void)
{
    return eng_threshold;
}

double mwp_engine_baseline(void)
{
    return eng_baseline > 0 ? eng_baseline : mwp_cfg.baseline_ns;
}

uint64_t mwp_engine_last_end(void)
{
    return eng_iv_last_end;
}

double mwp_engine_tsc_hz(const char **src)
{
    *src = atomic_load(&eng_tsc_how);
    return eng_tsc_hz;
}

int mwp_engine_setting_up(void)
{
    return eng_have && !__atomic_load_n(&eng_setup_done, __ATOMIC_ACQUIRE) &&
           !pthread_equal(pthread_self(), eng_th);
}

/* For the META of fork children, which inherit the engine's set-up. */
MWP_HOT void mwp_engine_meta(struct mwp_str *s)
{
    if (!eng_setup_done)
        return;
    mwp_s_meta(s, MW_META_PROFILE, eng_profile_desc);
    if (eng_have_prof)
        mwp_s_meta(s, MW_META_PROFILE_PATH, mwp_cfg.profile);
    mwp_s_metad(s, MW_META_TSC_HZ, eng_tsc_hz);
    if (!eng_thr_done)
        return; /* the child notes them itself once its probe exists */
    mwp_s_meta(s, MW_META_LAT_METHOD, eng_lat_method[0] ? eng_lat_method : "none");
    mwp_s_metad(s, MW_META_THRESHOLD_NS, eng_threshold);
    mwp_s_meta(s, MW_META_THRESHOLD_SOURCE, eng_tsrc);
    if (eng_baseline > 0) {
        mwp_s_metad(s, MW_META_BASELINE_NS, eng_baseline);
    }
}

/* Stop the interval thread and wait until it is gone (for unshare/setns,
 * which need a single-threaded process). Not async-signal-safe. */
int mwp_engine_stop(void)
{
    if (!eng_have)
        return 0;
    atomic_store(&eng_stop, 1);
    pthread_join(eng_th, NULL);
    eng_have = 0;
    return 1;
}

void mwp_engine_child(void)
{
    eng_have = 0; /* the parent's thread does not exist here */
    eng_started = 0;
    eng_inline = 0;
    if (eng_lat_rd || eng_bw_rd)
        atomic_store(&eng_ctr_reopen, 1); /* closed on this process's interval thread */
    eng_iv_last_end = mwp_now_ns();
    /* the child's own thread comes with its lazy start (lazy.h) */
}
