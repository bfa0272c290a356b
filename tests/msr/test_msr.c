/*
 * tests/msr/test_msr.c: prefetcher control against regular files standing in
 * for /dev/cpu/N/msr (pread/pwrite of 8 bytes at the MSR's offset): read-modify-
 * write of the known bits only; the state file written before any change; the
 * restore on every exit path (guard end, exit(), SIGTERM, a crash); a child
 * SIGKILLed in the middle of a change followed by a restore from the state file
 * (through the library and through `memwatch prefetch --restore`); and the
 * reasons given when there is no device.
 */
#include "mw_test.h"

#include <errno.h>
#include <fcntl.h>
#include <memwatch/msr.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NCPU 4
static char dir[256], prefix[300], state[300];
/* bits outside the prefetcher mask that must survive every change */
static const uint64_t orig[NCPU] = {0x0000000000400000ull, 0x0000000000400001ull,
                                    0xF000000000000004ull, 0x0000000000000008ull};

static void put_msr(unsigned cpu, uint32_t msr, uint64_t v)
{
    char p[400];
    snprintf(p, sizeof p, "%s/%u", prefix, cpu);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/%u/msr", prefix, cpu);
    int fd = open(p, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || pwrite(fd, &v, 8, (off_t)msr) != 8) {
        perror(p);
        exit(1);
    }
    close(fd);
}

static uint64_t get_msr(unsigned cpu, uint32_t msr)
{
    uint64_t v = 0;
    MW_CHECK_INT(mw_msr_read(prefix, cpu, msr, &v), 0);
    return v;
}

static void reset(uint32_t msr)
{
    for (unsigned c = 0; c < NCPU; c++) {
        char p[400];
        snprintf(p, sizeof p, "%s/%u/msr", prefix, c);
        unlink(p); /* a fresh file: no bytes but the register's */
        put_msr(c, msr, orig[c]);
    }
    unlink(state);
}

static void check_all_orig(uint32_t msr, const char *when)
{
    for (unsigned c = 0; c < NCPU; c++) {
        uint64_t v = get_msr(c, msr);
        MW_CHECK(v == orig[c], "%s: cpu %u = 0x%llx, expected 0x%llx", when, c,
                 (unsigned long long)v, (unsigned long long)orig[c]);
    }
}

static void test_set_restore(uint32_t msr, uint64_t mask)
{
    reset(msr);
    mw_prefetch_ctl c = {.prefix = prefix, .state_path = state, .msr = msr, .mask = mask};
    int cpus[8];
    uint64_t vals[8];
    MW_CHECK_INT(mw_prefetch_show(&c, cpus, vals, 8), NCPU);
    MW_CHECK(cpus[0] == 0 && cpus[3] == 3 && vals[2] == orig[2], "show");
    MW_CHECK_INT(mw_prefetch_set(&c, 1), 0);
    for (unsigned i = 0; i < NCPU; i++)
        MW_CHECK_U64(get_msr(i, msr), orig[i] | mask);
    MW_CHECK(access(state, F_OK) == 0, "state file written before the change");
    /* on: clears only the known bits; the file keeps the first originals */
    MW_CHECK_INT(mw_prefetch_set(&c, 0), 0);
    for (unsigned i = 0; i < NCPU; i++)
        MW_CHECK_U64(get_msr(i, msr), orig[i] & ~mask);
    MW_CHECK_INT(mw_prefetch_set(&c, 1), 0);
    /* someone changes an unrelated bit meanwhile: the restore keeps it */
    put_msr(1, msr, get_msr(1, msr) | (1ull << 40));
    MW_CHECK_INT(mw_prefetch_restore(&c), 0);
    MW_CHECK_U64(get_msr(0, msr), orig[0]);
    MW_CHECK_U64(get_msr(1, msr), orig[1] | (1ull << 40));
    MW_CHECK_U64(get_msr(2, msr), orig[2]);
    MW_CHECK_U64(get_msr(3, msr), orig[3]);
    MW_CHECK(access(state, F_OK) != 0, "state file removed after the restore");
    MW_CHECK_INT(mw_prefetch_restore(&c), -ENOENT);
    MW_CHECK(strstr(mw_msr_why(), "nothing to restore") != NULL, "why: %s", mw_msr_why());
}

static unsigned hook_stop_after;
static int hook_fd = -1;
static void stop_hook(unsigned index, int cpu, void *user)
{
    (void)cpu;
    (void)user;
    if (index + 1 == hook_stop_after) {
        char x = 'x';
        if (write(hook_fd, &x, 1) != 1)
            _exit(9);
        for (;;)
            pause();
    }
}

/* Fork a child that changes the registers through a guard (guard = 1) or a
 * plain set, stops after `after` CPUs, and gets `sig` from the parent. */
static int child_killed(int guard, unsigned after, int sig)
{
    int fds[2];
    if (pipe(fds) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        hook_fd = fds[1];
        hook_stop_after = after;
        mw_prefetch_set_hook(stop_hook, NULL);
        mw_prefetch_ctl c = {.prefix = prefix, .state_path = state, .msr = 0x1A4, .mask = 0xF};
        int rc = guard ? mw_prefetch_guard_begin(&c, 1) : mw_prefetch_set(&c, 1);
        _exit(rc == 0 ? 3 : 4); /* not reached while the hook holds it */
    }
    close(fds[1]);
    char x;
    MW_CHECK(read(fds[0], &x, 1) == 1, "child reached the middle of the change");
    close(fds[0]);
    kill(pid, sig);
    int st = 0;
    waitpid(pid, &st, 0);
    return st;
}

static void test_kill_mid_change(void)
{
    reset(0x1A4);
    /* SIGKILL cannot be caught: two of four CPUs changed, the rest not */
    int st = child_killed(1, 2, SIGKILL);
    MW_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "child killed (status 0x%x)", st);
    MW_CHECK_U64(get_msr(0, 0x1A4), orig[0] | 0xF);
    MW_CHECK_U64(get_msr(1, 0x1A4), orig[1] | 0xF);
    MW_CHECK_U64(get_msr(2, 0x1A4), orig[2]);
    MW_CHECK(access(state, F_OK) == 0, "the state file survives the kill");
    mw_prefetch_ctl c = {.prefix = prefix, .state_path = state};
    MW_CHECK_INT(mw_prefetch_restore(&c), 0);
    check_all_orig(0x1A4, "library restore after SIGKILL");

    /* the same through the command line, as a user would after a hard kill */
    char tool[512];
    snprintf(tool, sizeof tool, "%s/memwatch", MW_BUILD_DIR);
    if (access(tool, X_OK) == 0) {
        reset(0x1A4);
        st = child_killed(0, 3, SIGKILL);
        MW_CHECK_U64(get_msr(2, 0x1A4), orig[2] | 0xF);
        char cmd[1400];
        snprintf(cmd, sizeof cmd, "'%s' prefetch --restore --msr-dir '%s' --state '%s'", tool,
                 prefix, state);
        int rc = system(cmd);
        MW_CHECK(rc == 0, "`%s` exit status %d", cmd, rc);
        check_all_orig(0x1A4, "memwatch prefetch --restore after SIGKILL");
        MW_CHECK(access(state, F_OK) != 0, "state removed by --restore");
        rc = system(cmd);
        MW_CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) != 0, "--restore with nothing saved fails: %d", rc);
    } else {
        printf("note: %s not built, the command-line restore was not exercised\n", tool);
    }
}

static void test_exit_paths(void)
{
    /* SIGTERM mid-change: the guard's handler restores, then dies of it */
    reset(0x1A4);
    int st = child_killed(1, 3, SIGTERM);
    MW_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "SIGTERM re-raised (0x%x)", st);
    check_all_orig(0x1A4, "after SIGTERM");
    MW_CHECK(access(state, F_OK) != 0, "state removed by the handler");
    /* SIGINT after the whole change */
    reset(0x1A4);
    st = child_killed(1, NCPU, SIGINT);
    MW_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT, "SIGINT (0x%x)", st);
    check_all_orig(0x1A4, "after SIGINT");

    /* a crash, an exit() on an error path, and the normal end */
    for (int mode = 0; mode < 3; mode++) {
        reset(0x1A4);
        pid_t pid = fork();
        if (pid == 0) {
            mw_prefetch_ctl c = {.prefix = prefix, .state_path = state, .msr = 0x1A4, .mask = 0xF};
            if (mw_prefetch_guard_begin(&c, 1) != 0)
                _exit(5);
            uint64_t v = 0;
            if (mw_msr_read(prefix, 1, 0x1A4, &v) != 0 || v != (orig[1] | 0xF))
                _exit(6);
            if (mode == 0)
                raise(SIGSEGV);
            if (mode == 1)
                exit(2);
            _exit(mw_prefetch_guard_end() == 0 ? 0 : 7);
        }
        waitpid(pid, &st, 0);
        if (mode == 0)
            MW_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "crash status 0x%x", st);
        else
            MW_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == (mode == 1 ? 2 : 0), "mode %d status 0x%x",
                     mode, st);
        check_all_orig(0x1A4, mode == 0 ? "after a crash" : mode == 1 ? "after exit()" : "after guard_end");
        MW_CHECK(access(state, F_OK) != 0, "mode %d: state removed", mode);
    }

    /* a pending state refuses a new guard */
    reset(0x1A4);
    mw_prefetch_ctl c = {.prefix = prefix, .state_path = state, .msr = 0x1A4, .mask = 0xF};
    MW_CHECK_INT(mw_prefetch_set(&c, 1), 0);
    MW_CHECK_INT(mw_prefetch_guard_begin(&c, 1), -EEXIST);
    MW_CHECK(strstr(mw_msr_why(), "--restore") != NULL, "why: %s", mw_msr_why());
    MW_CHECK_INT(mw_prefetch_restore(&c), 0);
    check_all_orig(0x1A4, "after refusing");
}

static void test_reasons(void)
{
    char none[400];
    snprintf(none, sizeof none, "%s/no-such-dir", dir);
    uint64_t v;
    MW_CHECK_INT(mw_msr_read(none, 0, 0x1A4, &v), -ENOENT);
    MW_CHECK(strstr(mw_msr_why(), "msr driver") != NULL, "why: %s", mw_msr_why());
    mw_prefetch_ctl c = {.prefix = none, .state_path = state, .msr = 0x1A4, .mask = 0xF};
    MW_CHECK_INT(mw_prefetch_set(&c, 1), -ENOENT);
    MW_CHECK(access(state, F_OK) != 0, "no state file when nothing can be read");
    /* a register the CPU lacks: the file has no bytes there */
    reset(0x1A4);
    int rc = mw_msr_read(prefix, 0, 0x7FFFFFF0u, &v);
    MW_CHECK(rc == -EIO, "short read: %d", rc);
    MW_CHECK(strstr(mw_msr_why(), "no such register") != NULL, "why: %s", mw_msr_why());
    mw_prefetch_ctl unknown = {.prefix = prefix, .state_path = state};
    MW_CHECK_INT(mw_prefetch_set(&unknown, 1), MW_ERR_UNSUPPORTED);
    /* a damaged state file is refused and left in place */
    FILE *f = fopen(state, "w");
    fputs("memwatch-prefetch-state 1\nprefix /x\nmsr 0x1a4\nmask 0xf\ncpu 0 0x0\n", f);
    fclose(f);
    mw_prefetch_ctl r = {.prefix = prefix, .state_path = state};
    MW_CHECK_INT(mw_prefetch_restore(&r), MW_ERR_CORRUPT);
    MW_CHECK(access(state, F_OK) == 0, "damaged state kept");
    unlink(state);
    /* the real device, where there is one and we may not or cannot use it */
    if (access("/dev/cpu/0/msr", F_OK) != 0) {
        MW_CHECK(mw_msr_read(NULL, 0, 0x1A4, &v) == -ENOENT, "no /dev/cpu/0/msr here");
        MW_CHECK(strstr(mw_msr_why(), "/dev/cpu/0/msr") != NULL, "why: %s", mw_msr_why());
    }
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/mw-test-msr-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    snprintf(prefix, sizeof prefix, "%s/cpu", dir);
    snprintf(state, sizeof state, "%s/state/prefetch.state", dir);
    mkdir(prefix, 0755);
    test_set_restore(0x1A4, 0xF);        /* Intel MSR_MISC_FEATURE_CONTROL bits 0-3 */
    test_set_restore(0xC0000108u, 0x2F); /* AMD prefetch control bits 0-3 and 5 */
    test_kill_mid_change();
    test_exit_paths();
    test_reasons();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return mw_test_done();
}
