/*
 * tests/symbolize/test_unwind.c: offline unwinding with libunwind
 * (mw_unwind_sample) of a real stack copy: uw_f1 -> uw_f2 -> uw_f3 built
 * without frame pointers run on a thread with a known stack; uw_f3 captures
 * its registers and stack. The unwound program counters must symbolize to
 * uw_f3, uw_f2, uw_f1 and the thread function, in that order. Also: missing
 * registers are refused, a stack copy cut short ends the chain early without
 * a crash.
 */
#include "mw_test.h"
#include "uwfuncs.h"

#include <memwatch/symbolize.h>

#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

static struct uw_capture cap;

static __attribute__((noinline)) void *thread_main(void *arg)
{
    volatile int r = uw_f1(&cap, 5);
    (void)arg;
    return (void *)(intptr_t)r;
}

static mw_unwind_module mods[64];
static char paths[64][4096];
static size_t nmods;

static int phdr_cb(struct dl_phdr_info *i, size_t size, void *d)
{
    (void)size;
    (void)d;
    if (nmods >= 64)
        return 1;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int k = 0; k < i->dlpi_phnum; k++)
        if (i->dlpi_phdr[k].p_type == PT_LOAD) {
            uint64_t a = i->dlpi_addr + i->dlpi_phdr[k].p_vaddr;
            lo = a < lo ? a : lo;
            hi = a + i->dlpi_phdr[k].p_memsz > hi ? a + i->dlpi_phdr[k].p_memsz : hi;
        }
    if (i->dlpi_name && i->dlpi_name[0]) {
        snprintf(paths[nmods], sizeof paths[nmods], "%s", i->dlpi_name);
    } else if (nmods == 0) {
        ssize_t n = readlink("/proc/self/exe", paths[0], sizeof paths[0] - 1);
        paths[0][n > 0 ? n : 0] = 0;
    } else {
        return 0; /* vdso */
    }
    mods[nmods] = (mw_unwind_module){lo, hi, i->dlpi_addr, paths[nmods]};
    nmods++;
    return 0;
}

int main(void)
{
    mw_unwinder *u;
    int rc = mw_unwinder_new(&u);
    if (rc == MW_ERR_UNSUPPORTED)
        mw_test_skip("memwatch was built without libunwind: offline unwinding unavailable");
    MW_CHECK_INT(rc, 0);

    static unsigned char tstack[1 << 20] __attribute__((aligned(4096)));
    cap.stack_top = (uintptr_t)tstack + sizeof tstack;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstack(&at, tstack, sizeof tstack);
    pthread_t t;
    MW_CHECK_INT(pthread_create(&t, &at, thread_main, NULL), 0);
    pthread_join(t, NULL);
    MW_CHECK(cap.stack_size > 0 && cap.stack_size < sizeof cap.stack, "stack copied: %zu bytes",
             cap.stack_size);

    dl_iterate_phdr(phdr_cb, NULL);
    /* registers in perf_event x86-64 order: AX BX CX DX SI DI BP SP IP, R8..R15 */
    uint64_t regs[17];
    uw_perf_regs(&cap.uc, regs);
    uint64_t mask = 0x1ffull | 0xffull << 16;
    uint64_t pcs[32];
    int n = mw_unwind_sample(u, mods, nmods, mask, regs, cap.stack, cap.stack_size, pcs, 32);
    MW_CHECK(n >= 4, "unwound %d frames", n);

    mw_symbolizer *s;
    MW_CHECK_INT(mw_symbolizer_new(NULL, &s), 0);
    mw_symmod *m;
    MW_CHECK_INT(mw_symbolizer_module(s, paths[0], NULL, 0, &m), 0);
    const char *want[] = {"uw_f3", "uw_f2", "uw_f1", "thread_main"};
    for (int i = 0; i < 4 && i < n; i++) {
        mw_sym_result r;
        mw_symmod_lookup(m, pcs[i] - mods[0].base - (i ? 1 : 0), &r);
        const char *fn = r.nframes ? r.frames[r.nframes - 1].function : NULL;
        MW_CHECK(fn && !strcmp(fn, want[i]), "frame %d: %s, expected %s", i, fn ? fn : "(null)",
                 want[i]);
    }
    /* the chain is deeper than frame pointers could give: the functions were
     * built with -fomit-frame-pointer, rbp holds no frame link */

    /* SP missing from the mask: refused */
    MW_CHECK_INT(mw_unwind_sample(u, mods, nmods, mask & ~(1ull << 7), regs, cap.stack,
                                  cap.stack_size, pcs, 32),
                 MW_ERR_NODATA);
    /* a stack copy of 64 bytes: stops early, no crash */
    int short_n = mw_unwind_sample(u, mods, nmods, mask, regs, cap.stack, 64, pcs, 32);
    MW_CHECK(short_n >= 1 && short_n < n, "short stack: %d frames (full %d)", short_n, n);
    /* no modules at all (no unwind tables): the sampled IP, at most a guess or
     * two from libunwind's fallbacks, no crash */
    int bare = mw_unwind_sample(u, NULL, 0, mask, regs, cap.stack, cap.stack_size, pcs, 32);
    MW_CHECK(bare >= 1 && pcs[0] == regs[8], "no modules: %d frames", bare);
    /* the program's own module withheld (path NULL: the file was rebuilt):
     * the chain ends at its first frame, not complete, instead of going on
     * with libunwind's frame-pointer guesses */
    mw_unwind_module wm[64];
    memcpy(wm, mods, nmods * sizeof *wm);
    wm[0].path = NULL;
    int wn = mw_unwind_sample(u, wm, nmods, mask, regs, cap.stack, cap.stack_size, pcs, 32);
    MW_CHECK(wn == 1 && pcs[0] == regs[8], "withheld module: %d frames, expected 1", wn);
    MW_CHECK(!mw_unwind_last_complete(u), "withheld module: chain marked complete");
    /* sigprocmask outside unwinding (memwatch's own definition, which spares
     * libunwind's calls the system call while it unwinds) still blocks and
     * unblocks, and unwinding left the mask as it was */
    sigset_t one, now;
    sigemptyset(&one);
    sigaddset(&one, SIGUSR2);
    pthread_sigmask(SIG_SETMASK, NULL, &now);
    MW_CHECK(!sigismember(&now, SIGUSR2), "SIGUSR2 blocked after unwinding");
    MW_CHECK_INT(sigprocmask(SIG_BLOCK, &one, NULL), 0);
    pthread_sigmask(SIG_SETMASK, NULL, &now);
    MW_CHECK(sigismember(&now, SIGUSR2), "sigprocmask did not block SIGUSR2");
    MW_CHECK_INT(sigprocmask(SIG_UNBLOCK, &one, NULL), 0);
    pthread_sigmask(SIG_SETMASK, NULL, &now);
    MW_CHECK(!sigismember(&now, SIGUSR2), "sigprocmask did not unblock SIGUSR2");
    mw_symbolizer_free(s);
    mw_unwinder_free(u);
    return mw_test_done();
}
