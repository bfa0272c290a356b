/*
 * tests/report/test_report_ingest.c: a raw file with intervals of known flags,
 * timer / page-fault / precise samples at known times and addresses, and
 * allocations with known lifetimes (one address reused), ingested into SQLite
 * and checked through SQL:
 *  - "inside flagged intervals" selects exactly the samples whose time lies
 *    in a flagged interval; precise samples also need weight >= threshold;
 *  - the code addresses (functions of this test program, built with -g)
 *    symbolize to their function and source file;
 *  - fault addresses match the allocation live at the sample's time (address
 *    reuse), static data through the ELF symbol table;
 *  - LOST and THROTTLE records land in losses; the summary states the
 *    bandwidth-bound share; a truncated copy ingests up to the damage.
 */
#include "mw_test.h"
#include "mwr_build.h"
#include "report_test.h"
#include "symbolize/uwfuncs.h"

#include <memwatch/mwr_gpu.h>
#include <memwatch/report.h>

#include <link.h>
#include <pthread.h>
#include <sqlite3.h>
#include <ucontext.h>
#include <unistd.h>

static struct uw_capture cap;
static __attribute__((noinline)) void *uw_thread(void *arg)
{
    /* the copy ends a little above this frame, not at the top of the
     * thread's stack memory: glibc keeps the thread's static TLS there, and
     * its size depends on what the program links */
    cap.stack_top = (uintptr_t)__builtin_frame_address(0) + 512;
    volatile int r = uw_f1(&cap, 5);
    (void)arg;
    return (void *)(intptr_t)r;
}

#define MS 1000000ull

/* Code the samples point into. noinline + used so each has its own address. */
__attribute__((noinline, used)) int flagged_work(volatile int *x)
{
    for (int i = 0; i < 100; i++)
        *x += i;
    return *x;
}
__attribute__((noinline, used)) int calm_work(volatile int *x)
{
    for (int i = 0; i < 100; i++)
        *x *= 3;
    return *x;
}
__attribute__((noinline, used)) void *alloc_site(size_t n) { return malloc(n); }

int mw_static_table[4096]; /* a static data object (STT_OBJECT) */

static const char *qs(sqlite3 *db, const char *sql, char *buf, size_t n)
{
    sqlite3_stmt *s;
    buf[0] = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW &&
        sqlite3_column_text(s, 0))
        snprintf(buf, n, "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    return buf;
}

/* The threshold of a process's precise samples comes from the machine profile
 * its recording used: META profile_path, or the older "profile=PATH (created
 * ...)" prose; without a usable one, from baseline_ns; no profile is found at
 * report time (XDG_DATA_HOME points into dir). */
/* The stack whose id `stack_sql` selects is uw_f3 < uw_f2 < uw_f1 <
 * uw_thread, innermost first (unwound from its registers and stack copy). */
static void check_uw_chain(sqlite3 *d, const char *stack_sql, const char *what)
{
    const char *want[] = {"uw_f3", "uw_f2", "uw_f1", "uw_thread"};
    char *q = sqlite3_mprintf("WITH RECURSIVE ch(id, parent_id, pc_id, k) AS ("
                              " SELECT st.id, st.parent_id, st.pc_id, 0 FROM stacks st"
                              " WHERE st.id = (%s)"
                              " UNION ALL SELECT s.id, s.parent_id, s.pc_id, ch.k + 1"
                              " FROM stacks s JOIN ch ON s.id = ch.parent_id)"
                              " SELECT p.symbol FROM ch JOIN pcs p ON p.id = ch.pc_id"
                              " ORDER BY ch.k",
                              stack_sql);
    sqlite3_stmt *cs;
    MW_CHECK_INT(sqlite3_prepare_v2(d, q, -1, &cs, NULL), SQLITE_OK);
    sqlite3_free(q);
    int k = 0;
    while (sqlite3_step(cs) == SQLITE_ROW && k < 4) {
        const char *fn = (const char *)sqlite3_column_text(cs, 0);
        MW_CHECK(fn && !strcmp(fn, want[k]), "%s %d: %s, expected %s", what, k,
                 fn ? fn : "(null)", want[k]);
        k++;
    }
    MW_CHECK_INT(k, 4);
    sqlite3_finalize(cs);
}

static void recorded_profile_case(const char *dir)
{
    char prof[300], xdg[300], db[300];
    snprintf(prof, sizeof prof, "%s/prof.json", dir);
    snprintf(xdg, sizeof xdg, "%s/xdg", dir);
    snprintf(db, sizeof db, "%s/thr.db", dir);
    setenv("XDG_DATA_HOME", xdg, 1);
    FILE *f = fopen(prof, "w");
    MW_CHECK(f != NULL, "profile file");
    if (!f)
        return;
    fprintf(f, "{\"schema\": \"memwatch-profile\", \"version\": 1, \"identity\": \"test\","
               " \"tsc_hz\": 2e9, \"peak_bw\": 1e10, \"idle_latency_ns\": 100,"
               " \"lat_method\": \"probe_lat\", \"lat_threshold_ns\": 150,"
               " \"bw_method\": \"\", \"bw_factor\": 1, \"methods\": []}\n");
    fclose(f);
    const char *metas[] = {"profile_path=%s\nprofile=none: moved\ntsc_hz=3e9\n",
                           "profile=%s (created 2026-11-24T09:00:00Z)\ntsc_hz=3e9\n",
                           "profile_path=%s.missing\nbaseline_ns=50\ntsc_hz=3e9\n",
                           "baseline_ns=50\ntsc_hz=3e9\n"};
    char files[4][300];
    const char *names[4];
    for (int i = 0; i < 4; i++) {
        mwb w;
        mwb_init(&w);
        char meta[700];
        snprintf(meta, sizeof meta, metas[i], prof);
        mwb_meta(&w, meta);
        mwb_trailer(&w, 1000, 0);
        snprintf(files[i], sizeof files[i], "%s/thr%d.mwr", dir, i);
        MW_CHECK_INT(mwb_write(&w, files[i], w.n), 0);
        names[i] = files[i];
        free(w.b);
    }
    mw_report_opts o = {0};
    o.db_path = db;
    mw_report_stats st;
    MW_CHECK_INT(mw_report_ingest(names, 4, &o, &st), 0);
    sqlite3 *d;
    MW_CHECK_INT(sqlite3_open(db, &d), SQLITE_OK);
    char buf[200];
    /* the profile's idle latency (100 ns) at its own TSC rate (2 GHz) */
    MW_CHECK_INT(q1(d, "SELECT threshold FROM processes WHERE id=1"), 200);
    MW_CHECK_STR(qs(d, "SELECT threshold_source FROM processes WHERE id=1", buf, sizeof buf),
                 "machine profile of the recording (cycles)");
    MW_CHECK_INT(q1(d, "SELECT threshold FROM processes WHERE id=2"), 200);
    /* no usable profile: 50 ns at the recorded 3 GHz */
    MW_CHECK_INT(q1(d, "SELECT threshold FROM processes WHERE id=3"), 150);
    MW_CHECK_STR(qs(d, "SELECT threshold_source FROM processes WHERE id=4", buf, sizeof buf),
                 "idle latency measured at record time (baseline_ns, cycles)");
    sqlite3_close(d);
    unsetenv("XDG_DATA_HOME");
}

int main(void)
{
    static unsigned char tstack[1 << 20] __attribute__((aligned(4096)));
    pthread_attr_t pat;
    pthread_attr_init(&pat);
    pthread_attr_setstack(&pat, tstack, sizeof tstack);
    pthread_t uwt;
    MW_CHECK_INT(pthread_create(&uwt, &pat, uw_thread, NULL), 0);
    pthread_join(uwt, NULL);
    MW_CHECK(cap.stack_size > 64 && cap.stack_size < 16384, "stack captured: %zu", cap.stack_size);

    struct self me = {0};
    dl_iterate_phdr(phdr_cb, &me);
    char exe[4096];
    ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    MW_CHECK(el > 0, "readlink");
    exe[el > 0 ? el : 0] = 0;

    const uint64_t ipA = (uint64_t)(uintptr_t)&flagged_work + 8;
    const uint64_t ipB = (uint64_t)(uintptr_t)&calm_work + 8;
    const uint64_t site = (uint64_t)(uintptr_t)&alloc_site + 8; /* a "return address" */
    const uint64_t X = 0x10000000, Y = 0x20000000; /* heap arrays */
    const uint64_t stat = (uint64_t)(uintptr_t)&mw_static_table[100];

    mwb w;
    mwb_init(&w);
    mwb_meta(&w, "pid=4242\nexe=/bin/synthetic\nhostname=testhost\n");
    mwb_meta(&w, "tsc_hz=2000000000\nbaseline_ns=100\nprofile=none: /nonexistent: no profile\n");
    mwb_module(&w, exe, me.base, me.start, me.end);
    /* memwatch's own data: a copy of this program named as libmemwatch.so's
     * file, mapped elsewhere; a fault in its mw_static_table is not the
     * program's object */
    const uint64_t OWN = 0x100000000000ull;
    char own[4200];
    snprintf(own, sizeof own, "/tmp/libmemwatch-ingest-test-%d.so", (int)getpid());
    char cp[8500];
    snprintf(cp, sizeof cp, "cp '%s' '%s'", exe, own);
    MW_CHECK_INT(system(cp), 0);
    mwb_module(&w, own, me.base + OWN, me.start + OWN, me.end + OWN);
    const uint64_t st_timer = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                              PERF_SAMPLE_CALLCHAIN;
    const uint64_t st_fault = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                              PERF_SAMPLE_ADDR;
    const uint64_t st_load = st_fault | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC;
    mwb_attr(&w, 1, "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, st_timer);
    mwb_attr(&w, 2, "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, st_fault);
    mwb_attr(&w, 3, "mem-loads", PERF_TYPE_RAW, 0x1cd, st_load);

    /* allocations: X lives throughout; Y lives [0, 15 ms), then the same
     * address is handed out again at 16 ms (Y2) */
    uint64_t fr[2] = {site, site};
    mwb_alloc(&w, 0, X, 64 << 20, fr, 1);
    mwb_alloc(&w, 0, Y, 1 << 20, fr, 1);
    mwb_free(&w, 15 * MS, Y);
    mwb_alloc(&w, 16 * MS, Y, 2 << 20, fr, 2);
    /* an allocation with registers and a stack copy instead of return
     * addresses (MWR_A_STACK, DWARF stacks): its stack comes from the
     * offline unwinder */
    {
        const greg_t *g = cap.uc.uc_mcontext.gregs;
        struct {
            mwr_alloc a;
            mwr_alloc_stack h;
            uint64_t regs[8];
        } as;
        memset(&as, 0, sizeof as);
        as.a.time_ns = 1 * MS;
        as.a.addr = 0x30000000;
        as.a.size = 3 << 20;
        as.a.tid = 4242;
        as.a.kind = MWR_A_MALLOC | MWR_A_STACK;
        as.h.regs_mask = (1ull << 1) | (1ull << 6) | (1ull << 7) | (1ull << 8) | (0xfull << 20);
        uint64_t rv[8] = {(uint64_t)g[REG_RBX], (uint64_t)g[REG_RBP], (uint64_t)g[REG_RSP],
                          (uint64_t)g[REG_RIP], (uint64_t)g[REG_R12], (uint64_t)g[REG_R13],
                          (uint64_t)g[REG_R14], (uint64_t)g[REG_R15]};
        memcpy(as.regs, rv, sizeof rv);
        as.h.stack_size = (uint32_t)(cap.stack_size & ~(size_t)7);
        mwb_rec(&w, MWR_ALLOC, &as, sizeof as, cap.stack, as.h.stack_size);
    }

    /* intervals: flagged [0,10) and [20,30) ms; calm [10,20) and [30,40) */
    mwb_interval(&w, 0, 10 * MS, MWR_IV_BW_BOUND, 300);
    mwb_interval(&w, 10 * MS, 20 * MS, 0, 100);
    mwb_interval(&w, 20 * MS, 30 * MS, MWR_IV_BW_BOUND, 320);
    mwb_interval(&w, 30 * MS, 40 * MS, 0, 90);

    /* timer samples every 0.5 ms from 0 to 44.5 ms: A in flagged, B elsewhere */
    unsigned char recs[65536];
    size_t n = 0;
    int expect_flagged_timer = 0, expect_timer = 0;
    for (uint64_t t = 0; t < 45 * MS; t += MS / 2) {
        int fl = t < 10 * MS || (t >= 20 * MS && t < 30 * MS);
        uint64_t chain[2] = {fl ? ipA : ipB, site};
        mwb_sample s = {chain[0], t, 0, 0, 0, 4242, 4242, chain, 2};
        n += mwb_kernel_sample(recs + n, st_timer, &s);
        expect_flagged_timer += fl;
        expect_timer++;
    }
    /* a LOST and a THROTTLE record among them */
    uint64_t lost[3] = {0, 1, 7};
    struct perf_event_header lh = {PERF_RECORD_LOST, 0, 24};
    memcpy(lost, &lh, 8);
    memcpy(recs + n, lost, 24);
    n += 24;
    uint64_t thr[4] = {0, 12 * MS, 1, 1};
    struct perf_event_header th = {PERF_RECORD_THROTTLE, 0, 32};
    memcpy(thr, &th, 8);
    memcpy(recs + n, thr, 32);
    n += 32;
    mwb_perf_data(&w, 1, 4242, 45 * MS, recs, n);

    /* page faults: X at 5 ms (flagged), Y at 5 ms (flagged), Y2 at 25 ms
     * (flagged), X at 12 ms (calm), static data at 22 ms, unknown at 23 ms */
    struct {
        uint64_t t, addr;
    } faults[] = {{5 * MS, X + 4096}, {5 * MS + 1, Y + 100}, {25 * MS, Y + (1 << 20) + 8},
                  {12 * MS, X + 8192}, {22 * MS, stat}, {23 * MS, 0x7e0000000000ull},
                  {24 * MS, stat + OWN}};
    n = 0;
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
        mwb_sample s = {ipA, faults[i].t, faults[i].addr, 0, 0, 4242, 4242, NULL, 0};
        n += mwb_kernel_sample(recs + n, st_fault, &s);
    }
    mwb_perf_data(&w, 2, 4242, 45 * MS, recs, n);

    /* precise loads: weights 100 and 500 in a flagged interval, 500 in a calm one */
    uint64_t ds_dram = 0x02 | (uint64_t)(0x02 | 0x80) << 5 | (uint64_t)0x0d << 33;
    struct {
        uint64_t t, w;
    } loads[] = {{3 * MS, 100}, {4 * MS, 500}, {14 * MS, 500}, {21 * MS, 300}};
    n = 0;
    for (size_t i = 0; i < sizeof loads / sizeof loads[0]; i++) {
        mwb_sample s = {ipA, loads[i].t, X + 64, loads[i].w, ds_dram, 4242, 4242, NULL, 0};
        n += mwb_kernel_sample(recs + n, st_load, &s);
    }
    mwb_perf_data(&w, 3, 4242, 45 * MS, recs, n);
    /* a sample with registers and a stack copy but no call chain, in a calm
     * interval at 35 ms: its chain must come from the offline unwinder */
    const uint64_t mask = 0x1ffull | 0xffull << 16;
    mwb_attr_regs(&w, 4, "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK,
                  PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER |
                      PERF_SAMPLE_STACK_USER,
                  mask, 16384);
    n = regs_stack_sample(recs, 35 * MS, &cap.uc, cap.stack, cap.stack_size);
    mwb_perf_data(&w, 4, 4242, 45 * MS, recs, n);
    size_t before_gpu = w.n;
    /* GPU records (gpu/inject.c's layouts): two launches of one kernel on
     * device 0, one flagged, one on device 1, a PM sample and a PC-sampling line */
    for (int k = 0; k < 3; k++) {
        mwr_gpu_kernel gk;
        memset(&gk, 0, sizeof gk);
        gk.start_ns = 1000 + 100 * (uint64_t)k;
        gk.end_ns = gk.start_ns + 50;
        gk.correlation = 7 + (uint32_t)k;
        gk.flags = MWR_GPU_BW_VALID | (k == 1 ? MWR_GPU_BW_BOUND : 0);
        gk.dram_bytes = 1e9;
        gk.dram_bw = 2e12;
        gk.threshold_bw = 1.5e12;
        gk.device = k == 2;
        if (k == 2)
            gk.dram_bytes = 3e8;
        gk.name_len = 10;
        mwb_rec(&w, MWR_GPU_KERNEL, &gk, sizeof gk, "triad_kern", 10);
    }
    mwr_gpu_sample gs;
    memset(&gs, 0, sizeof gs);
    gs.end_ns = 100;
    gs.dram_bw = 1e12;
    mwb_rec(&w, MWR_GPU_SAMPLE, &gs, sizeof gs, 0, 0);
    mwr_gpu_pc gp;
    memset(&gp, 0, sizeof gp);
    gp.correlation = 8;
    gp.line = 12;
    gp.samples = 99;
    gp.file_len = 7;
    gp.func_len = 4;
    mwb_rec(&w, MWR_GPU_PC, &gp, sizeof gp, "k.cu" "\0\0\0" "kern" "long_scoreboard=5", 28);
    size_t before_trailer = w.n;
    mwb_trailer(&w, 45 * MS, 7);

    char dir[] = "/tmp/mw_ingest_XXXXXX";
    MW_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char file[300], db[300], cut[300];
    snprintf(file, sizeof file, "%s/p1.mwr", dir);
    snprintf(db, sizeof db, "%s/memwatch.db", dir);
    snprintf(cut, sizeof cut, "%s/cut.mwr", dir);
    MW_CHECK_INT(mwb_write(&w, file, w.n), 0);

    mw_report_opts o = {0};
    o.db_path = db;
    o.threshold = 300;
    o.profile_path = "";
    mw_report_stats st;
    const char *files[] = {file};
    MW_CHECK_INT(mw_report_ingest(files, 1, &o, &st), 0);
    MW_CHECK_INT(st.files, 1);
    MW_CHECK_INT(st.files_damaged, 0);
    MW_CHECK_INT(st.samples, expect_timer + 7 + 4 + 1);
    MW_CHECK_INT(st.intervals, 4);

    sqlite3 *d;
    MW_CHECK_INT(sqlite3_open(db, &d), SQLITE_OK);
    char buf[512];
    /* exactly the samples in flagged intervals are in_flagged */
    MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM samples WHERE source='timer' AND in_flagged=1"),
                 expect_flagged_timer);
    MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM samples s WHERE in_flagged != EXISTS(SELECT 1 FROM"
                       " intervals i WHERE i.bw_bound=1 AND s.time_ns >= i.t_start AND"
                       " s.time_ns < i.t_end)"),
                 0);
    MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM samples WHERE in_flagged=1 AND (time_ns >= 10000000"
                       " AND time_ns < 20000000 OR time_ns >= 30000000)"),
                 0);
    MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM samples WHERE interval_id IS NULL"), 10);
    /* hybrid selection: precise samples need weight >= 300 inside flagged */
    MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM samples WHERE source='precise' AND selected=1"), 2);
    MW_CHECK_INT(q1(d, "SELECT MIN(weight) FROM samples WHERE source='precise' AND selected=1"),
                 300);
    MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM samples WHERE source='timer' AND selected=1"),
                 expect_flagged_timer);
    MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM sample_mem"), 4);
    MW_CHECK_INT(q1(d, "SELECT mem_level FROM samples_mem WHERE source='precise' LIMIT 1"),
                 7 /* MW_MEM_LOCAL_DRAM */);
    /* symbolization of the sample addresses */
    MW_CHECK_STR(qs(d, "SELECT p.function FROM samples s JOIN pcs p ON p.id=s.pc_id WHERE"
                       " s.source='timer' AND s.selected=1 GROUP BY p.function", buf, sizeof buf),
                 "flagged_work");
    MW_CHECK_STR(qs(d, "SELECT p.function FROM samples s JOIN pcs p ON p.id=s.pc_id WHERE"
                       " s.source='timer' AND s.in_flagged=0 GROUP BY p.function", buf, sizeof buf),
                 "calm_work");
    MW_CHECK(strstr(qs(d, "SELECT file FROM pcs WHERE function='flagged_work'", buf, sizeof buf),
                    "test_report_ingest.c") != NULL,
             "file of flagged_work: %s", buf);
    MW_CHECK(q1(d, "SELECT line FROM pcs WHERE function='flagged_work'") > 20, "line");
    /* call chains: the caller frame is alloc_site (return address - 1) */
    MW_CHECK_STR(qs(d, "SELECT p.function FROM stacks c JOIN stacks par ON par.id=c.parent_id"
                       " JOIN pcs p ON p.id=par.pc_id JOIN samples s ON s.stack_id=c.id LIMIT 1",
                    buf, sizeof buf),
                 "alloc_site");
    /* data objects: address reuse resolved by lifetime */
    MW_CHECK_INT(q1(d, "SELECT o.size FROM samples s JOIN objects o ON o.id=s.object_id WHERE"
                       " s.time_ns=5000001"),
                 1 << 20);
    MW_CHECK_INT(q1(d, "SELECT o.size FROM samples s JOIN objects o ON o.id=s.object_id WHERE"
                       " s.time_ns=25000000"),
                 2 << 20);
    MW_CHECK_INT(q1(d, "SELECT COUNT(DISTINCT object_id) FROM samples WHERE addr >= 268435456"
                       " AND addr < 268435456 + 67108864"),
                 1);
    MW_CHECK_STR(qs(d, "SELECT p.function FROM objects o JOIN pcs p ON p.id=o.site_pc_id WHERE"
                       " o.kind='heap' LIMIT 1", buf, sizeof buf),
                 "alloc_site");
    MW_CHECK_STR(qs(d, "SELECT o.name FROM samples s JOIN objects o ON o.id=s.object_id WHERE"
                       " s.time_ns=22000000", buf, sizeof buf),
                 "mw_static_table");
    MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM samples WHERE time_ns=23000000 AND source='fault' AND object_id IS NULL"),
                 1);
    MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM samples WHERE time_ns=24000000 AND source='fault' AND object_id IS NULL"),
                 1);
    MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM objects o JOIN modules m ON m.id = o.module_id WHERE"
                       " m.path LIKE '%libmemwatch%'"),
                 0);
    MW_CHECK_INT(q1(d, "SELECT t_free FROM allocations WHERE addr=536870912 ORDER BY t_alloc"
                       " LIMIT 1"),
                 15 * MS);
    /* the unwound chain of the regs + stack sample */
    check_uw_chain(d,
                   "SELECT stack_id FROM samples WHERE time_ns = 35000000 AND event_id ="
                   " (SELECT id FROM events WHERE attr_id = 4)",
                   "unwound frame");

    /* the unwound stack of the allocation with a stack copy */
    check_uw_chain(d, "SELECT stack_id FROM allocations WHERE addr = 805306368",
                   "allocation frame");
    MW_CHECK_INT(q1(d, "SELECT kind = 'malloc' FROM allocations WHERE addr = 805306368"), 1);

    /* GPU records */
    MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM gpu_kernels WHERE name='triad_kern'"), 3);
    MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM gpu_kernels WHERE device=1"), 1);
    MW_CHECK_INT(q1(d, "SELECT SUM(bw_bound) FROM gpu_kernels"), 1);
    MW_CHECK_INT(q1(d, "SELECT samples FROM gpu_pcs WHERE line=12 AND function='kern'"), 99);
    MW_CHECK_STR(qs(d, "SELECT stalls FROM gpu_pcs", buf, sizeof buf), "long_scoreboard=5");
    MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM gpu_samples"), 1);

    /* losses and process */
    MW_CHECK_INT(q1(d, "SELECT SUM(count) FROM losses WHERE kind='lost'"), 7);
    MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM losses WHERE kind='throttle'"), 1);
    MW_CHECK_INT(q1(d, "SELECT pid FROM processes"), 4242);
    MW_CHECK_INT(q1(d, "SELECT clean_exit FROM processes"), 1);
    MW_CHECK_STR(qs(d, "SELECT hostname FROM processes", buf, sizeof buf), "testhost");
    MW_CHECK_INT(q1(d, "SELECT CAST(threshold AS INTEGER) FROM processes"), 300);
    MW_CHECK_STR(qs(d, "SELECT threshold_source FROM processes", buf, sizeof buf), "option");
    sqlite3_close(d);

    /* the summary: 50% bandwidth-bound, flagged code = flagged_work */
    FILE *sf = tmpfile();
    MW_CHECK_INT(mw_report_summary(db, sf, 0, 5), 0);
    rewind(sf);
    char text[16384];
    size_t tl = fread(text, 1, sizeof text - 1, sf);
    text[tl] = 0;
    fclose(sf);
    MW_CHECK(strstr(text, "Bandwidth-bound: 50.0%") != NULL, "summary:\n%s", text);
    MW_CHECK(strstr(text, "local DRAM") != NULL, "memory levels listed");
    MW_CHECK(strstr(text, "GPU kernels") && strstr(text, "triad_kern"), "GPU kernels listed");
    /* per-device rows: device 0 with 2 launches (one flagged), device 1 with one */
    MW_CHECK(strstr(text, "testhost device 0: 2 launches, 1 bandwidth-bound") &&
                 strstr(text, "testhost device 1: 1 launches, 0 bandwidth-bound"),
             "GPU device rows:\n%s", strstr(text, "GPU devices") ? strstr(text, "GPU devices") : text);
    MW_CHECK(strstr(text, "\n  1   triad_kern") && strstr(text, "\n  0   triad_kern"),
             "a kernel row per device");
    /* one process on two devices: a row per process and device */
    MW_CHECK(strstr(text, "GPU launches per rank (process) and device") &&
                 strstr(text, "\n  -     4242     testhost         0           2        1") &&
                 strstr(text, "\n  -     4242     testhost         1           1        0"),
             "rank-and-device rows:\n%s", strstr(text, "GPU launches") ? strstr(text, "GPU launches") : text);
    MW_CHECK(strstr(text, "GPU source lines") && strstr(text, "k.cu") && strstr(text, ":12") &&
                 strstr(text, "long_scoreboard=5"),
             "GPU source lines listed with their stall reasons");
    const char *fl = strstr(text, "Top code inside flagged intervals");
    MW_CHECK(fl && strstr(fl, "flagged_work") && strstr(fl, "flagged_work") <
                 strstr(fl, "Top code overall"),
             "flagged section names flagged_work");
    sf = tmpfile();
    MW_CHECK_INT(mw_report_summary(db, sf, 1, 5), 0);
    rewind(sf);
    tl = fread(text, 1, sizeof text - 1, sf);
    text[tl] = 0;
    fclose(sf);
    MW_CHECK(strstr(text, "\"share\":\t0.5") != NULL, "json share: %.300s", text);

    /* truncated inside the last record (a GPU one): everything before it remains */
    MW_CHECK_INT(mwb_write(&w, cut, before_trailer - 20), 0);
    snprintf(db, sizeof db, "%s/cut.db", dir);
    const char *cfiles[] = {cut};
    MW_CHECK_INT(mw_report_ingest(cfiles, 1, &o, &st), 0);
    MW_CHECK_INT(st.files_damaged, 1);
    MW_CHECK_INT(st.samples, expect_timer + 7 + 4 + 1);
    MW_CHECK_INT(sqlite3_open(db, &d), SQLITE_OK);
    MW_CHECK(strstr(qs(d, "SELECT status FROM processes", buf, sizeof buf), "truncated at byte"),
             "status: %s", buf);
    MW_CHECK_INT(q1(d, "SELECT clean_exit FROM processes"), 0);
    sqlite3_close(d);
    /* truncated inside a perf-data block: the samples before that block remain.
     * No threshold given and no profile: the idle latency measured at record
     * time (META baseline_ns 100 ns at 2 GHz = 200 cycles) is the threshold */
    MW_CHECK_INT(mwb_write(&w, cut, before_gpu - 20), 0);
    o.threshold = 0;
    MW_CHECK_INT(mw_report_ingest(cfiles, 1, &o, &st), 0);
    o.threshold = 300;
    MW_CHECK_INT(st.files_damaged, 1);
    MW_CHECK_INT(st.samples, expect_timer + 7 + 4);
    MW_CHECK_INT(sqlite3_open(db, &d), SQLITE_OK);
    MW_CHECK_INT(q1(d, "SELECT CAST(threshold AS INTEGER) FROM processes"), 200);
    MW_CHECK(strstr(qs(d, "SELECT threshold_source FROM processes", buf, sizeof buf),
                    "baseline_ns") != NULL,
             "threshold source: %s", buf);
    MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM samples WHERE source='precise' AND selected=1"), 2);
    sqlite3_close(d);

    /* several processes (an MPI job: one file per rank) in one database */
    snprintf(db, sizeof db, "%s/two.db", dir);
    const char *two[] = {file, file};
    MW_CHECK_INT(mw_report_ingest(two, 2, &o, &st), 0);
    MW_CHECK_INT(st.files, 2);
    MW_CHECK_INT(st.samples, 2 * (expect_timer + 7 + 4 + 1));
    MW_CHECK_INT(sqlite3_open(db, &d), SQLITE_OK);
    MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM processes"), 2);
    MW_CHECK_INT(q1(d, "SELECT COUNT(DISTINCT process_id) FROM samples"), 2);
    MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM modules"), 2); /* two files, symbolized once */
    sqlite3_close(d);

    /* random byte flips through the whole ingest (decode, symbolize, unwind,
     * SQL): every run ends with 0 or "no data", never a crash */
    {
        srand(4242);
        unsigned char *orig = malloc(w.n);
        memcpy(orig, w.b, w.n);
        snprintf(db, sizeof db, "%s/flip.db", dir);
        const char *ff[] = {cut};
        int odd = 0;
        mw_set_log(NULL, NULL, MW_LOG_ERROR); /* the damage warnings are expected */
        for (int it = 0; it < 100; it++) {
            memcpy(w.b, orig, w.n);
            int flips = 1 + rand() % 8;
            for (int k = 0; k < flips; k++)
                w.b[32 + (size_t)rand() % (w.n - 32)] ^= (unsigned char)(1 + rand() % 255);
            mwb_write(&w, cut, w.n);
            int frc = mw_report_ingest(ff, 1, &o, &st);
            odd += frc != 0 && frc != MW_ERR_NODATA;
        }
        mw_set_log(NULL, NULL, MW_LOG_WARN);
        MW_CHECK(odd == 0, "%d flipped files failed the ingest itself", odd);
        memcpy(w.b, orig, w.n);
        free(orig);
    }

    recorded_profile_case(dir);

    /* a missing file is an error, a non-mwr file is recorded as unreadable */
    const char *nofiles[] = {"/nonexistent.mwr"};
    MW_CHECK(mw_report_ingest(nofiles, 1, &o, &st) != 0, "missing file");
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    MW_CHECK_INT(system(cmd), 0);
    free(w.b);
    unlink(own);
    return mw_test_done();
}
