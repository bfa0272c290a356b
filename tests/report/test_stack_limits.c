/*
 * tests/report/test_stack_limits.c: stacks at their limits, through the
 * ingest (synthetic raw files from mwr_build.h):
 *   - frame-pointer allocation stacks cut at the limit the process recorded
 *     with (META alloc_frames, MEMWATCH_ALLOC_FRAMES, default 16) are marked
 *     truncated; shorter ones are not; a file without the key keeps the old
 *     limit (64);
 *   - timer samples whose kernel call chain is at the 127-frame limit, or
 *     claims more frames than that (a recursion deeper than the limit), decode
 *     without a crash and are marked truncated; a 20-frame chain is not;
 *   - a DWARF stack (registers and a stack copy) of a recursion 300 deep,
 *     built without frame pointers, unwinds to the 128-frame limit and is
 *     marked truncated;
 *   - a chain through a word in no code ends there (truncated, no JIT note,
 *     a note that says why: the stack word, text here); so does a chain
 *     through a "return address" in the program's own data (a pointer to a
 *     static variable), which no function is named after; a sampled ip in no
 *     module is kept (and the JIT note given).
 */
#include "mw_test.h"
#include "mwr_build.h"
#include "report_test.h"
#include "symbolize/uwfuncs.h"

#include <memwatch/report.h>

#include <link.h>
#include <sqlite3.h>
#include <ucontext.h>
#include <unistd.h>

#define MS 1000000ull

/* ---- a recursion deeper than the limits, captured at its bottom ---- */
static struct {
    ucontext_t uc;
    unsigned char stack[60000];
    size_t stack_size;
    uintptr_t stack_top;
} cap;

__attribute__((noinline, no_sanitize("address"))) static void copy_stack(unsigned char *dst,
                                                                       uintptr_t src, size_t n)
{
    const volatile unsigned char *p = (const volatile unsigned char *)src;
    for (size_t i = 0; i < n; i++)
        dst[i] = p[i];
}

/* built with -fomit-frame-pointer (tests/report/CMakeLists.txt) */
__attribute__((noinline)) int deep_rec(int d)
{
    volatile int pad[4] = {d, d + 1, d + 2, d + 3};
    if (d == 0) {
        getcontext(&cap.uc);
        uintptr_t sp = (uintptr_t)cap.uc.uc_mcontext.gregs[REG_RSP];
        size_t n = cap.stack_top > sp ? cap.stack_top - sp : 0;
        if (n > sizeof cap.stack)
            n = sizeof cap.stack;
        copy_stack(cap.stack, sp, n);
        cap.stack_size = n;
        return pad[1];
    }
    volatile int r = deep_rec(d - 1);
    return r + pad[2];
}

__attribute__((noinline, used)) int leaf_work(volatile int *x)
{
    for (int i = 0; i < 10; i++)
        *x += i;
    return *x;
}

/* Write the raw file w built as DIR/NAME.mwr (w's buffer is freed),
 * ingest it into DIR/NAME.db and open that. */
static sqlite3 *ingest(mwb *w, const char *dir, const char *name)
{
    char raw[300], db[300];
    snprintf(raw, sizeof raw, "%s/%s.mwr", dir, name);
    snprintf(db, sizeof db, "%s/%s.db", dir, name);
    MW_CHECK_INT(mwb_write(w, raw, w->n), 0);
    free(w->b);
    const char *files[1] = {raw};
    mw_report_opts o = {0};
    o.db_path = db;
    mw_report_stats st;
    MW_CHECK_INT(mw_report_ingest(files, 1, &o, &st), 0);
    sqlite3 *d = NULL;
    MW_CHECK_INT(sqlite3_open(db, &d), SQLITE_OK);
    return d;
}

int main(void)
{
    char dir[] = "/tmp/mw_stack_limits.XXXXXX";
    MW_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char exe[4096];
    ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    MW_CHECK(el > 0, "readlink");
    exe[el > 0 ? el : 0] = 0;
    struct self me = {0};
    dl_iterate_phdr(phdr_cb, &me);
    const uint64_t ip = (uint64_t)(uintptr_t)&leaf_work + 4;
    const uint64_t ra = (uint64_t)(uintptr_t)&deep_rec + 16; /* a "return address" */
    static uint64_t fr[400];
    for (int i = 0; i < 400; i++)
        fr[i] = ra;

    /* 1. frame-pointer allocation stacks against the recorded limit */
    static const struct {
        const char *meta; /* alloc_frames line, or "" */
        uint16_t nframes;
        int truncated;
    } ac[] = {
        {"alloc_frames=16\n", 16, 1}, /* the default limit, reached: cut */
        {"alloc_frames=16\n", 5, 0},
        {"alloc_frames=8\n", 8, 1},
        {"alloc_frames=8\n", 7, 0},
        {"alloc_frames=64\n", 64, 1},
        {"", 16, 0}, /* a file without the key: the old limit, 64 */
        {"", 64, 1},
    };
    for (size_t i = 0; i < sizeof ac / sizeof ac[0]; i++) {
        mwb w;
        mwb_init(&w);
        char meta[200];
        snprintf(meta, sizeof meta, "pid=%zu\nexe=/bin/alloc\nunwind=fp\n%s", 100 + i, ac[i].meta);
        mwb_meta(&w, meta);
        mwb_module(&w, exe, me.base, me.start, me.end);
        mwb_alloc(&w, MS, 0x10000000, 1 << 20, fr, ac[i].nframes);
        mwb_trailer(&w, 2 * MS, 0);
        char name[32];
        snprintf(name, sizeof name, "alloc%zu", i);
        sqlite3 *d = ingest(&w, dir, name);
        MW_CHECK(q1(d, "SELECT truncated FROM allocations") == ac[i].truncated,
                 "allocation of %u frames, META '%.*s': truncated %lld, expected %d",
                 ac[i].nframes, (int)strcspn(ac[i].meta, "\n"), ac[i].meta,
                 (long long)q1(d, "SELECT truncated FROM allocations"), ac[i].truncated);
        sqlite3_close(d);
    }

    /* 2. kernel call chains (frame pointers) at and beyond the 127 limit */
    {
        mwb w;
        mwb_init(&w);
        mwb_meta(&w, "pid=4242\nexe=/bin/deep\nunwind=fp\nstack_depth=127\n");
        mwb_module(&w, exe, me.base, me.start, me.end);
        const uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                            PERF_SAMPLE_CALLCHAIN;
        mwb_attr(&w, 1, "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, st);
        static unsigned char recs[16384];
        size_t n = 0;
        const uint32_t lens[] = {20, 126, 127, 300};
        for (int k = 0; k < 4; k++) {
            fr[0] = ip; /* the chain starts at the sampled ip, as the kernel's does */
            mwb_sample s = {ip, (uint64_t)(k + 1) * MS, 0, 0, 0, 4242, 4242, fr, lens[k]};
            n += mwb_kernel_sample(recs + n, st, &s);
        }
        mwb_perf_data(&w, 1, 4242, 5 * MS, recs, n);
        mwb_trailer(&w, 6 * MS, 0);
        sqlite3 *d = ingest(&w, dir, "fp");
        fr[0] = ra;
        MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM samples"), 4);
        /* stack depth: the leaf node's depth + 1 */
        MW_CHECK_INT(q1(d, "SELECT s.depth + 1 FROM samples x JOIN stacks s ON s.id = x.stack_id"
                           " WHERE x.time_ns = 1000000"),
                     20);
        MW_CHECK_INT(q1(d, "SELECT truncated FROM samples WHERE time_ns = 1000000"), 0);
        MW_CHECK_INT(q1(d, "SELECT truncated FROM samples WHERE time_ns = 2000000"), 0);
        MW_CHECK_INT(q1(d, "SELECT s.depth + 1 FROM samples x JOIN stacks s ON s.id = x.stack_id"
                           " WHERE x.time_ns = 3000000"),
                     127);
        MW_CHECK_INT(q1(d, "SELECT truncated FROM samples WHERE time_ns = 3000000"), 1);
        MW_CHECK_INT(q1(d, "SELECT truncated FROM samples WHERE time_ns = 4000000"), 1);
        MW_CHECK(q1(d, "SELECT s.depth + 1 FROM samples x JOIN stacks s ON s.id = x.stack_id"
                       " WHERE x.time_ns = 4000000") <= 128,
                 "a 300-frame chain kept at most 128 frames");
        sqlite3_close(d);
    }

    /* 3. a DWARF stack of a recursion 300 deep (no frame pointers) */
    {
        cap.stack_top = (uintptr_t)__builtin_frame_address(0);
        volatile int r = deep_rec(300);
        (void)r;
        MW_CHECK(cap.stack_size > 4096 && cap.stack_size < sizeof cap.stack,
                 "recursion's stack copied: %zu bytes", cap.stack_size);
        mwb w;
        mwb_init(&w);
        mwb_meta(&w, "pid=4242\nexe=/bin/deep\nunwind=dwarf\n");
        mwb_module(&w, exe, me.base, me.start, me.end);
        const uint64_t mask = 0x1ffull | 0xffull << 16;
        mwb_attr_regs(&w, 1, "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK,
                      PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                          PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
                      mask, 65000);
        static unsigned char recs[65536];
        size_t n = regs_stack_sample(recs, MS, &cap.uc, cap.stack, cap.stack_size);
        mwb_perf_data(&w, 1, 4242, 2 * MS, recs, n);
        mwb_trailer(&w, 3 * MS, 0);
        sqlite3 *d = ingest(&w, dir, "dwarf");
        MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM samples"), 1);
        MW_CHECK_INT(q1(d, "SELECT s.depth + 1 FROM samples x JOIN stacks s ON s.id = x.stack_id"),
                     128);
        MW_CHECK_INT(q1(d, "SELECT truncated FROM samples"), 1);
        /* the frames are the recursion's */
        MW_CHECK(q1(d, "SELECT COUNT(*) FROM stacks s JOIN pcs p ON p.id = s.pc_id WHERE"
                       " p.function = 'deep_rec'") >= 120,
                 "deep_rec frames: %lld",
                 (long long)q1(d, "SELECT COUNT(*) FROM stacks s JOIN pcs p ON p.id = s.pc_id"
                                  " WHERE p.function = 'deep_rec'"));
        sqlite3_close(d);
    }

    /* 4. a chain through a word that lies in no code (ASCII taken for a
     * return address): it ends there, truncated, and is no caller; no JIT
     * note. A sampled ip in no module (anonymous executable memory) is
     * kept, and then the note is given. */
    {
        mwb w;
        mwb_init(&w);
        mwb_meta(&w, "pid=4243\nexe=/bin/junk\nunwind=fp\n");
        mwb_module(&w, exe, me.base, me.start, me.end);
        const uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                            PERF_SAMPLE_CALLCHAIN;
        mwb_attr(&w, 1, "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, st);
        static unsigned char recs[4096];
        uint64_t junk[6] = {ip, ra, ra, 0x202020005153414eull, ra, ra};
        mwb_sample s = {ip, MS, 0, 0, 0, 4243, 4243, junk, 6};
        size_t n = mwb_kernel_sample(recs, st, &s);
        mwb_perf_data(&w, 1, 4243, 2 * MS, recs, n);
        mwb_trailer(&w, 3 * MS, 0);
        sqlite3 *d = ingest(&w, dir, "junk");
        MW_CHECK_INT(q1(d, "SELECT s.depth + 1 FROM samples x JOIN stacks s ON s.id = x.stack_id"),
                     3);
        MW_CHECK_INT(q1(d, "SELECT truncated FROM samples"), 1);
        MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM pcs WHERE module_id IS NULL"), 0);
        MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM name_notes WHERE note LIKE '%JIT%'"), 0);
        /* the reason: one stack cut at that word, whose bytes are text */
        MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM name_notes WHERE note LIKE '1 stack(s) reached a"
                           " return address where no code lies%0x202020005153414e, bytes of"
                           " text%counts as truncated%'"),
                     1);
        sqlite3_close(d);

        /* a "return address" in the program's own data (the address of a
         * static array, as a pointer on the stack reads): cut there, no
         * caller named after the data object */
        static volatile uint64_t data_word[4] = {1, 2, 3, 4};
        const uint64_t dra = (uint64_t)(uintptr_t)&data_word[2];
        mwb_init(&w);
        mwb_meta(&w, "pid=4245\nexe=/bin/data\nunwind=fp\n");
        mwb_module(&w, exe, me.base, me.start, me.end);
        mwb_attr(&w, 1, "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, st);
        uint64_t dchain[5] = {ip, ra, dra, ra, ra};
        mwb_sample s3 = {ip, MS, 0, 0, 0, 4245, 4245, dchain, 5};
        n = mwb_kernel_sample(recs, st, &s3);
        mwb_perf_data(&w, 1, 4245, 2 * MS, recs, n);
        mwb_trailer(&w, 3 * MS, 0);
        d = ingest(&w, dir, "data");
        MW_CHECK_INT(q1(d, "SELECT s.depth + 1 FROM samples x JOIN stacks s ON s.id = x.stack_id"),
                     2);
        MW_CHECK_INT(q1(d, "SELECT truncated FROM samples"), 1);
        MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM pcs WHERE function LIKE '%data_word%'"), 0);
        MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM name_notes WHERE note LIKE '1 stack(s) reached a"
                           " return address where no code lies%'"),
                     1);
        sqlite3_close(d);

        mwb_init(&w);
        mwb_meta(&w, "pid=4244\nexe=/bin/jit\nunwind=fp\n");
        mwb_module(&w, exe, me.base, me.start, me.end);
        mwb_attr(&w, 1, "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, st);
        uint64_t anon[3] = {0x7f0000001000ull, ra, ra};
        mwb_sample s2 = {anon[0], MS, 0, 0, 0, 4244, 4244, anon, 3};
        n = mwb_kernel_sample(recs, st, &s2);
        mwb_perf_data(&w, 1, 4244, 2 * MS, recs, n);
        mwb_trailer(&w, 3 * MS, 0);
        d = ingest(&w, dir, "anon");
        MW_CHECK_INT(q1(d, "SELECT s.depth + 1 FROM samples x JOIN stacks s ON s.id = x.stack_id"),
                     3);
        MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM name_notes WHERE note LIKE '%JIT%'"), 1);
        MW_CHECK_INT(q1(d, "SELECT COUNT(*) FROM name_notes WHERE note LIKE '%no code lies%'"), 0);
        sqlite3_close(d);
    }
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return mw_test_done();
}
