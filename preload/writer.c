/*
 * preload/writer.c: the process's raw file (include/memwatch/mwr.h,
 * docs/raw-format.md).
 *
 * Owns: the one descriptor of the file, its name, the META text and the
 * counters that end up in the trailer. Every write(2)/writev(2) on the
 * O_APPEND descriptor carries whole records (one, or an interval's worth
 * from the interval thread, or the constructor's batch): records of
 * different threads never interleave, and a process killed by SIGKILL leaves
 * a file that reads up to its last whole record.
 * Calls: raw syscalls only on the write path, so mwp_write is
 * async-signal-safe and needs no lock. File creation may be deferred and
 * then happens on the first record, at most once (CAS): in a fork child,
 * and in every process started by exec, whose constructor gathers its first
 * records in memory (mwp_writer_start(MWP_W_LATER)) and leaves creating the
 * file to the interval thread, so that the program does not wait for the
 * file system before main (docs/overhead.md). Whatever comes first creates
 * it: the interval thread, a record written directly, exit, exec, a fatal
 * signal.
 */
#include "writer.h"

#include "base.h"
#include "config.h"
#include "engine.h"
#include "lazy.h"
#include "process.h"
#include "signals.h"
#include "status.h"
#include "sys.h"
#include "threads.h"
#include "util.h"

#include <memwatch/memwatch.h>
#include <memwatch/mwr_frame.h>

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { W_NONE = 0, W_PENDING, W_CREATING, W_OPEN, W_CLOSED, W_FAILED };
MWP_HOT_DATA static _Atomic int w_state;
MWP_HOT_DATA static _Atomic int w_fd = -1;
static _Atomic int w_inflight;
static _Atomic uint64_t w_records, w_bytes;
MWP_HOT_DATA struct mwp_writer_stats mwp_wstat;
MWP_COLD static char w_path[PATH_MAX];
static int w_warned;
/* The constructor's batch (below), kept until the file exists: written right
 * after the header by whoever creates the file, before any other record. */
static int w_held;

/* The command line's copy (mwp_writer_cmdline) and META's text (meta_len
 * bytes at META_BUF) share one buffer, the copy first, which preload/hot.ld
 * places right behind mwp_hot: the rest of that page, which every process
 * has touched, holds both where the command line is short, and a process
 * that ends before it began writes no page of its own for them
 * (docs/overhead.md, "Lazy start"). */
#define WR_CMDLINE_MAX 4096
static char wr_text[WR_CMDLINE_MAX + 16384] __attribute__((section(".bss.mwp_hot_tail")));
MWP_HOT_DATA static ssize_t wr_cmdline_n = -1; /* bytes of the copy; -1: no vector */
MWP_HOT_DATA static size_t meta_len;
#define META_AT (wr_cmdline_n > 0 ? ((size_t)wr_cmdline_n + 15) & ~(size_t)15 : 0)
#define META_BUF (wr_text + META_AT)
#define META_CAP (sizeof wr_text - META_AT)

int mwp_writer_fd(void)
{
    return atomic_load(&w_fd);
}

/* Lowest descriptor memwatch uses: high, so that programs which dup2 onto
 * small numbers (shells: `exec 3>file`) never meet it. */
int mwp_fd_base(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        if (rl.rlim_cur > 1100)
            return 1000;
        if (rl.rlim_cur > 200)
            return (int)rl.rlim_cur - 100;
        return 10;
    }
    return 1000;
}

int mwp_fd_move_high(int fd)
{
    int hi = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, mwp_fd_base());
    if (hi < 0)
        return fd;
    mwp_sys_close(fd);
    return hi;
}

int mwp_fd_dup_high(int fd)
{
    int nfd = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, mwp_fd_base());
    if (nfd < 0)
        nfd = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 3);
    return nfd < 0 ? -errno : nfd;
}

void mwp_fd_step_aside(_Atomic int *slot)
{
    int fd = atomic_load(slot);
    if (fd < 0)
        return;
    int nfd = mwp_fd_dup_high(fd);
    if (nfd >= 0)
        atomic_store(slot, nfd); /* the old number is the program's dup2's to replace */
}

void mwp_writer_relocate(void)
{
    /* Writers that still hold the old number finish on the old descriptor,
     * which stays valid until the application's dup2 replaces it. */
    mwp_fd_step_aside(&w_fd);
}

/* ---- the run's size cap (memwatch record --max-size) ----
 * `memwatch record --max-size SIZE` creates, before it starts the program,
 * the file MEMWATCH_DIR/.memwatch-size: a page shared by every recorded
 * process of the run on this machine (mapped MAP_SHARED), with the cap and
 * the bytes the run's raw files hold so far. Every process that creates a
 * file of its own maps it and adds what it writes; once the bytes reach the
 * cap, cpu-clock, page-fault and precise samples are no longer written
 * (counted instead: META samples_dropped, the page's total for record's
 * last line), while intervals, threads, allocations (without their stack
 * copies: alloc.c), modules, CPU records and trailers still are. Without the
 * file (LD_PRELOAD alone, no cap) nothing is counted: one failed openat per
 * process that creates a file. */
struct mwp_size_page {
    uint64_t magic;           /* MWP_SIZE_MAGIC */
    uint64_t cap;             /* bytes */
    _Atomic uint64_t used;    /* bytes the processes wrote to their files */
    _Atomic uint64_t dropped; /* samples not written since the cap was reached */
};
#define MWP_SIZE_MAGIC 0x3170616373776d00ull /* "\0mwscap1" */
static struct mwp_size_page *w_cap;
static _Atomic uint64_t w_cap_dropped; /* this process's */

static void writer_cap_open(void)
{
    if (w_cap)
        return; /* a fork child keeps its parent's mapping: the same page */
    char path[PATH_MAX];
    struct mwp_str s = {path, sizeof path, 0};
    mwp_s_str(&s, mwp_cfg.dir[0] ? mwp_cfg.dir : ".");
    mwp_s_str(&s, "/.memwatch-size");
    if (s.len >= sizeof path)
        return;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    void *m = (void *)-1;
    long size = syscall(SYS_lseek, fd, 0, SEEK_END); /* the page is 4096 bytes */
    if (size >= 4096)
        m = (void *)syscall(SYS_mmap, NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    mwp_sys_close(fd);
    if ((uintptr_t)m >= (uintptr_t)-4095)
        return;
    struct mwp_size_page *pg = m;
    if (pg->magic != MWP_SIZE_MAGIC || !pg->cap) {
        syscall(SYS_munmap, m, 4096);
        return;
    }
    w_cap = pg;
}

static void writer_cap_add(uint64_t n)
{
    struct mwp_size_page *pg = w_cap;
    if (pg && atomic_fetch_add(&pg->used, n) + n >= pg->cap)
        atomic_store_explicit(&mwp_wstat.size_capped, 1, memory_order_relaxed);
}

/* Kernel samples among the n bytes of whole kernel records at p. */
static uint64_t perf_samples_in(const unsigned char *p, size_t n)
{
    uint64_t k = 0;
    for (size_t o = 0; o + 8 <= n;) {
        struct perf_event_header h;
        memcpy(&h, p + o, sizeof h);
        if (h.size < 8 || h.size > n - o)
            break;
        k += h.type == PERF_RECORD_SAMPLE;
        o += h.size;
    }
    return k;
}

/* ---- the user-stack copies of DWARF samples ----
 * The kernel writes sample_stack_user bytes (MEMWATCH_UNWIND_STACK) into
 * every sample, however few of them it could copy: past the top of the
 * stack it leaves the rest as it was and says how much it copied in
 * dyn_size. Before a PERF_DATA record is written each copy is cut to what
 * the report's unwinder can use: dyn_size, and on the main thread the bytes
 * up to the loader's frame (__libc_stack_end, above which lie only the
 * arguments, the environment and the auxiliary vector: no frame). The
 * sample's size field says the new length, so readers need nothing new
 * (docs/raw-format.md; docs/overhead.md, "Raw data per second"). Only sample
 * layouts whose fields before the stack are all known here are cut. */
extern void *__libc_stack_end;
#define STACK_TOP_SLACK 128u /* bytes kept above __libc_stack_end (argc, argv[0]) */
#define ST_KNOWN                                                                                   \
    (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |      \
     PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |        \
     PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

static size_t stack_cut(unsigned char *p, size_t n, uint64_t st, uint64_t regs_mask)
{
    const uint64_t fixed = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
                           PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
                           PERF_SAMPLE_PERIOD;
    /* the fields up to PERF_SAMPLE_STACK_USER must all be known (later
     * ones, WEIGHT, DATA_SRC, ..., move along with the record's tail) */
    if (!(st & PERF_SAMPLE_STACK_USER) || (st & (PERF_SAMPLE_STACK_USER - 1) & ~ST_KNOWN) ||
        (st & PERF_SAMPLE_IDENTIFIER))
        return n;
    size_t head = 8 * (size_t)__builtin_popcountll(st & fixed);
    size_t tid_at = (st & PERF_SAMPLE_IP) ? 20 : 12; /* header, ip, u32 pid, u32 tid */
    int sp_idx = (regs_mask >> 7) & 1 ? __builtin_popcountll(regs_mask & 0x7f) : -1; /* SP: 7 */
    uintptr_t top = (uintptr_t)__libc_stack_end;
    size_t in = 0, out = 0;
    while (in + 8 <= n) {
        struct perf_event_header h;
        memcpy(&h, p + in, sizeof h);
        if (h.size < 8 || h.size > n - in)
            break;
        size_t sz = h.size, cut = 0, data_at = 0, keep = 0;
        if (h.type == PERF_RECORD_SAMPLE && head + 8 <= sz) {
            size_t q = 8 + head;
            uint64_t v, sp = 0;
            int ok = 1;
            if (st & PERF_SAMPLE_CALLCHAIN) {
                memcpy(&v, p + in + q, 8);
                ok = v < 4096 && q + 8 + 8 * v + 8 <= sz;
                q += 8 + 8 * (ok ? v : 0);
            }
            if (ok && (st & PERF_SAMPLE_REGS_USER)) {
                memcpy(&v, p + in + q, 8); /* abi: 0 no registers */
                size_t nr = v ? (size_t)__builtin_popcountll(regs_mask) : 0;
                ok = q + 8 + 8 * nr + 8 <= sz;
                if (ok && v && sp_idx >= 0)
                    memcpy(&sp, p + in + q + 8 + 8 * (size_t)sp_idx, 8);
                q += 8 + 8 * nr;
            }
            uint64_t size = 0, dyn = 0;
            if (ok) {
                memcpy(&size, p + in + q, 8);
                ok = size && !(size & 7) && q + 16 + size <= sz;
            }
            if (ok) {
                memcpy(&dyn, p + in + q + 8 + size, 8);
                keep = dyn < size ? (size_t)dyn : (size_t)size;
                uint32_t tid;
                memcpy(&tid, p + in + tid_at, 4);
                if ((st & PERF_SAMPLE_TID) && (pid_t)tid == mwp_proc.pid && sp && top > sp &&
                    top - sp + STACK_TOP_SLACK < keep)
                    keep = (size_t)(top - sp) + STACK_TOP_SLACK;
                keep = (keep + 7) & ~(size_t)7;
                if (keep < size) {
                    cut = (size_t)size - keep;
                    data_at = q;
                }
            }
        }
        if (!cut) {
            if (out != in)
                memmove(p + out, p + in, sz);
        } else {
            /* head and stack size, the kept bytes, then dyn_size and the rest */
            unsigned char *r = p + in;
            uint64_t k = keep;
            memmove(p + out, r, data_at);
            memcpy(p + out + data_at, &k, 8);
            memmove(p + out + data_at + 8, r + data_at + 8, keep);
            size_t rest_at = data_at + 8 + keep + cut; /* dyn_size and what follows */
            memmove(p + out + data_at + 8 + keep, r + rest_at, sz - rest_at);
            uint64_t d;
            memcpy(&d, p + out + data_at + 8 + keep, 8);
            if (d > keep)
                d = keep;
            memcpy(p + out + data_at + 8 + keep, &d, 8);
            h.size = (uint16_t)(sz - cut);
            memcpy(p + out, &h, sizeof h);
        }
        out += sz - cut;
        in += sz;
    }
    if (in < n) { /* a damaged tail: kept as it was */
        if (out != in)
            memmove(p + out, p + in, n - in);
        out += n - in;
    }
    return out;
}

static size_t writer_name_of(char *out, size_t cap, pid_t pid, unsigned seq)
{
    struct mwp_str s = {out, cap, 0};
    mwp_s_str(&s, mwp_cfg.dir[0] ? mwp_cfg.dir : ".");
    mwp_s_str(&s, "/memwatch-");
    mwp_s_str(&s, mwp_proc.host);
    mwp_s_str(&s, "-");
    mwp_s_i64(&s, mwp_proc.rank);
    mwp_s_str(&s, "-");
    mwp_s_i64(&s, (int64_t)pid);
    if (seq) {
        mwp_s_str(&s, ".");
        mwp_s_u64(&s, seq);
    }
    mwp_s_str(&s, ".mwr");
    return s.len;
}

static size_t writer_name(char *out, size_t cap, unsigned seq)
{
    return writer_name_of(out, cap, mwp_proc.pid, seq);
}

static void writer_attrs(void)
{
    for (int i = 0; i < MWP_NATTR; i++) {
        if (!mwp_attrs.size || !mwp_attrs.bytes[i][0])
            continue;
        mwr_perf_attr pa;
        memset(&pa, 0, sizeof pa);
        pa.attr_id = (uint32_t)(i + 1);
        pa.attr_size = mwp_attrs.size;
        strncpy(pa.name, mwp_attr_name((unsigned)i), sizeof pa.name - 1);
        struct iovec iov[2] = {{&pa, sizeof pa}, {mwp_attrs.bytes[i], mwp_attrs.size}};
        mwp_write(MWR_PERF_ATTR, iov, 2);
    }
}

/* Start-up batch: the records a process writes in its constructor (perf
 * attributes, its first thread, its modules) are gathered and written with
 * one system call instead of one each. Only the constructor's thread fills
 * it, before any other memwatch thread or signal handler exists. Where the
 * file does not exist yet when the constructor ends, the batch is held
 * (w_held) and written by the thread that creates the file, under
 * W_CREATING. */
MWP_COLD static char w_batch[32768];
static size_t w_batch_len;
static uint64_t w_batch_nrec;
static int w_batching;

static int writer_put(const struct iovec *iov, int n, uint64_t nrec);
static int writer_ready(void);

/* The interval thread's gather: what that thread writes in one interval (the
 * samples and allocation records it drains, then the interval record) goes
 * out as one writev at the interval's end instead of one per ring and
 * buffer (3-4 per interval). Each write to a file system that keeps
 * modification times dirties the inode (ext4: file_update_time, a quarter of
 * the interval thread's time on the development VM), and on a network file
 * system it may be a round trip. Only that thread gathers (w_gather_mine is
 * thread-local, and it blocks every signal, so no handler runs there).
 * w_gather_busy is 1 from the interval's start to its flush: the end of the
 * process (mwp_finish) waits for it before its last drain and the trailer,
 * so a SIGKILL still loses at most the interval in progress and nothing
 * gathered is lost at exit, exec or a fatal signal. */
static MWP_TLS int w_gather_mine;
MWP_COLD static char w_gather[160 << 10];
static size_t w_gather_len;
static uint64_t w_gather_nrec;
static _Atomic int w_gather_busy;

static void writer_warn(int err)
{
    if (w_warned)
        return;
    w_warned = 1;
    char why[256];
    struct mwp_str s = {why, sizeof why, 0};
    mwp_s_str(&s, ": ");
    mwp_s_str(&s, mw_strerror(err));
    mwp_s_str(&s, " (MEMWATCH_DIR); the program runs without memwatch");
    mwp_say(1, "cannot create ", w_path, why);
}

/* The thread creating the file (W_CREATING), for mwp_writer_settle. */
static _Atomic pid_t w_creator;

/* Leave W_CREATING and wake whoever waits for the file (writer_wait). */
static void writer_settled(int state)
{
    atomic_store(&w_state, state);
    syscall(SYS_futex, &w_state, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Wait while another thread creates the file, at most 200 ms: asleep on the
 * state word, not spinning, so that a short process ending while its
 * interval thread creates the file does not burn a CPU meanwhile. Never
 * waits for itself (a signal handler that interrupted the creation). */
static void writer_wait(void)
{
    if (atomic_load(&w_creator) == mwp_gettid())
        return;
    uint64_t until = mwp_now_ns() + 200000000ull;
    while (atomic_load(&w_state) == W_CREATING) {
        uint64_t t = mwp_now_ns();
        if (t >= until)
            break;
        uint64_t left = until - t < 10000000ull ? until - t : 10000000ull;
        struct timespec ts = {0, (long)left};
        syscall(SYS_futex, &w_state, FUTEX_WAIT_PRIVATE, W_CREATING, &ts, NULL, 0);
    }
}

/* Create the file. Called with w_state == W_CREATING held by this thread. */
static int writer_create(void)
{
    int fd = -1, err = 0;
    atomic_store(&w_creator, mwp_gettid());
    for (unsigned seq = 0; seq < 100; seq++) {
        writer_name(w_path, sizeof w_path, seq);
        fd = (int)syscall(SYS_openat, AT_FDCWD, w_path,
                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_APPEND,
                          mwp_cfg.group_readable ? 0640 : 0600);
        if (fd >= 0 || errno != EEXIST)
            break;
    }
    /* the umask may have taken the group bit (MEMWATCH_GROUP_READABLE=1
     * under umask 077): the mode asked for, whatever the umask */
    if (fd >= 0 && mwp_cfg.group_readable)
        syscall(SYS_fchmod, fd, 0640);
    if (fd < 0) {
        err = -errno;
        if (mwp_write_error_is_fatal(-err))
            mwp_write_failed(-err, w_path, 0);
        else
            writer_warn(err);
        writer_settled(W_FAILED);
        return err;
    }
    fd = mwp_fd_move_high(fd);
    atomic_store(&w_fd, fd);
    mwr_file_header h;
    mwr_file_header_init(&h);
    mwr_rec_hdr mh = mwr_rec_hdr_make(MWR_META, meta_len);
    static const char zero[8];
    /* a held batch already holds the perf attributes (mwp_writer_start) */
    int held = w_held;
    uint64_t held_nrec = held ? w_batch_nrec : 0;
    struct iovec iov[5] = {{&h, sizeof h},
                           {&mh, sizeof mh},
                           {META_BUF, meta_len},
                           {(void *)zero, mwr_pad_len(meta_len)},
                           {w_batch, held ? w_batch_len : 0}};
    ssize_t want = (ssize_t)(sizeof h + mh.size + iov[4].iov_len);
    ssize_t w = (ssize_t)syscall(SYS_writev, fd, iov, 5);
    w_held = 0;
    w_batch_len = 0;
    w_batch_nrec = 0;
    if (w != want) {
        int e = w < 0 ? errno : mwp_write_short_errno(fd);
        /* no file without its header (a 0-byte file reads as damaged) */
        (void)syscall(SYS_unlinkat, AT_FDCWD, w_path, 0);
        atomic_store(&w_fd, -1);
        mwp_sys_close(fd);
        writer_settled(W_FAILED);
        mwp_write_failed(e, w_path, 0);
        return -e;
    }
    atomic_fetch_add(&w_records, 1 + held_nrec);
    atomic_fetch_add(&w_bytes, (uint64_t)w);
    writer_cap_open();
    writer_cap_add((uint64_t)w);
    writer_settled(W_OPEN);
    mwp_say(2, "recording to ", w_path, NULL);
    if (!held)
        writer_attrs();
    return 0;
}

/* The directory, checked where the process starts: an unusable one gives
 * its one warning before main and the program's children stay out of the
 * way (process.c); creating the file can then only fail for a reason that
 * came later, which is reported when it does. dfd_out: an O_PATH descriptor
 * of it (the caller closes it), or NULL. */
static int writer_dir(int *dfd_out)
{
    const char *dir = mwp_cfg.dir[0] ? mwp_cfg.dir : ".";
    int dfd = (int)syscall(SYS_openat, AT_FDCWD, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || syscall(SYS_faccessat, AT_FDCWD, dir, W_OK | X_OK, 0) < 0) {
        int err = -errno;
        if (dfd >= 0)
            mwp_sys_close(dfd);
        writer_name(w_path, sizeof w_path, 0);
        writer_warn(err);
        atomic_store(&w_state, W_FAILED);
        return err;
    }
    if (dfd_out)
        *dfd_out = dfd;
    else
        mwp_sys_close(dfd);
    return 0;
}

int mwp_writer_dir_check(void)
{
    return writer_dir(NULL);
}

int mwp_writer_start(int when)
{
    atomic_store(&w_records, 0);
    atomic_store(&w_bytes, 0);
    w_held = 0;
    w_batch_len = 0;
    w_batch_nrec = 0;
    if (when == MWP_W_FIRST_RECORD) {
        atomic_store(&w_state, W_PENDING);
        return 0;
    }
    /* MWP_W_LATER (lazy start: the process has run for an interval). */
    int dfd = -1, err = writer_dir(&dfd);
    if (err)
        return err;
    /* Grow the descriptor table up to the number the file will take
     * (mwp_fd_base) now, while the process has one thread: grown later,
     * with the interval thread running, the kernel waits for an RCU grace
     * period (8-22 ms on the development VM) before the file is written. The
     * table never shrinks. */
    int hi = (int)syscall(SYS_fcntl, dfd, F_DUPFD_CLOEXEC, mwp_fd_base());
    if (hi >= 0)
        mwp_sys_close(hi);
    mwp_sys_close(dfd);
    atomic_store(&w_state, W_PENDING);
    writer_attrs(); /* into the batch, which is held for the file */
    return 0;
}

/* Lazy start: a process that ends before it began leaves no file of its
 * own. Its META (command line, parent, start, how it ended) and its trailer
 * (exit status, end time) go, with one writev, to the end of the directory's
 * shared file of short processes, memwatch-HOST-RUN-short.mwr (RUN:
 * MEMWATCH_RUN_ID, so one per run): a file header,
 * then one META and one TRAILER record per process (docs/raw-format.md).
 * Appending to a file that exists costs a fraction of creating one (ext4:
 * about 7 against 80 us of CPU on the development VM); O_APPEND keeps the
 * processes' records whole and apart (one write each, on a local file
 * system). The first process creates the file under a name of its own,
 * writes the header and links it into place, so that nobody appends before
 * the header. */
MWP_HOT static size_t writer_short_name(char *out, size_t cap, const char *tmp_pid)
{
    struct mwp_str s = {out, cap, 0};
    mwp_s_str(&s, mwp_cfg.dir[0] ? mwp_cfg.dir : ".");
    mwp_s_str(&s, tmp_pid ? "/.memwatch-" : "/memwatch-");
    mwp_s_str(&s, mwp_proc.host);
    if (mwp_cfg.run_id[0]) { /* one per run (MEMWATCH_RUN_ID) */
        mwp_s_str(&s, "-");
        mwp_s_str(&s, mwp_cfg.run_id);
    }
    mwp_s_str(&s, "-short.mwr");
    if (tmp_pid) {
        mwp_s_str(&s, ".");
        mwp_s_str(&s, tmp_pid);
    }
    return s.len;
}

static int writer_short_create(const char *path);

MWP_HOT static int writer_short_open(void)
{
    char path[PATH_MAX];
    writer_short_name(path, sizeof path, NULL);
    int fd = (int)mwp_syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 || errno != ENOENT)
        return fd >= 0 ? fd : -errno;
    return writer_short_create(path);
}

/* The first process of the run: out of line, so that the others' frames
 * stay small (each page of stack a frame reaches is a page fault). */
__attribute__((noinline)) static int writer_short_create(const char *path)
{
    char tmp[PATH_MAX];
    char pid[24];
    struct mwp_str ps = {pid, sizeof pid, 0};
    mwp_s_i64(&ps, mwp_proc.pid);
    writer_short_name(tmp, sizeof tmp, pid);
    int t = (int)syscall(SYS_openat, AT_FDCWD, tmp,
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                         mwp_cfg.group_readable ? 0640 : 0600);
    if (t < 0)
        return -errno;
    if (mwp_cfg.group_readable)
        syscall(SYS_fchmod, t, 0640); /* whatever the umask, as writer_create */
    mwr_file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, MWR_MAGIC, 8);
    h.version_major = MWR_VERSION_MAJOR;
    h.version_minor = MWR_VERSION_MINOR;
    h.header_size = sizeof h;
    ssize_t w = (ssize_t)syscall(SYS_write, t, &h, sizeof h);
    mwp_sys_close(t);
    if (w == (ssize_t)sizeof h)
        syscall(SYS_linkat, AT_FDCWD, tmp, AT_FDCWD, path, 0); /* EEXIST: another was first */
    syscall(SYS_unlinkat, AT_FDCWD, tmp, 0);
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

/* One process's segment of the shared file of short processes, appended
 * with one writev: META (meta, mlen bytes), the whole records in recs (nv
 * pieces, at most 3, nrecs records), the CPU record where cpu is not NULL,
 * and the trailer t, whose records and bytes are counted here. Returns 0 or
 * the open's -errno. */
MWP_HOT static int short_append(const char *meta, size_t mlen, const struct iovec *recs, int nv,
                                uint64_t nrecs, const mwr_cpu *cpu, mwr_trailer *t)
{
    int fd = writer_short_open();
    if (fd < 0)
        return fd;
    static const char zero[8];
    mwr_rec_hdr mh = mwr_rec_hdr_make(MWR_META, mlen);
    mwr_rec_hdr ch = mwr_rec_hdr_make(MWR_CPU, sizeof *cpu);
    mwr_rec_hdr th = mwr_rec_hdr_make(MWR_TRAILER, sizeof *t);
    t->records = 1 + nrecs + (cpu ? 1 : 0);
    t->bytes = mh.size + (cpu ? ch.size : 0);
    struct iovec iov[7 + 3] = {{&mh, sizeof mh}, {(void *)meta, mlen}, {(void *)zero, mwr_pad_len(mlen)}};
    int k = 3;
    for (int i = 0; i < nv && i < 3; i++) {
        iov[k++] = recs[i];
        t->bytes += recs[i].iov_len;
    }
    if (cpu) {
        iov[k++] = (struct iovec){&ch, sizeof ch};
        iov[k++] = (struct iovec){(void *)cpu, sizeof *cpu};
    }
    iov[k++] = (struct iovec){&th, sizeof th};
    iov[k++] = (struct iovec){t, sizeof *t};
    ssize_t w = (ssize_t)mwp_syscall(SYS_writev, fd, iov, k);
    (void)w;
    mwp_sys_close(fd);
    return 0;
}

/* META's first keys, the same in every record memwatch's library writes. */
#define MWP_STR_(x) #x
#define MWP_STR(x) MWP_STR_(x)
MWP_HOT static void meta_head(struct mwp_str *s)
{
    mwp_s_meta(s, MW_META_FORMAT, MWP_STR(MWR_VERSION_MAJOR) "." MWP_STR(MWR_VERSION_MINOR));
    mwp_s_meta(s, MW_META_MEMWATCH_VERSION, MW_VERSION);
    mwp_s_meta(s, MW_META_WRITER, "libmemwatch.so");
    mwp_s_meta(s, MW_META_MACHINE, mwp_proc.identity);
    mwp_s_meta(s, MW_META_CLOCK, "CLOCK_MONOTONIC");
}

MWP_HOT void mwp_writer_summary(int32_t status, const char *how, const struct iovec *recs, int nv,
                                uint64_t nrecs)
{
    if (atomic_load(&w_state) != W_NONE)
        return;
    mwp_meta_build();
    mwr_trailer t;
    memset(&t, 0, sizeof t);
    t.time_ns = mwp_clock_sys_ns(CLOCK_MONOTONIC);
    t.lost_samples = atomic_load(&mwp_wstat.lost);
    t.dropped_records = atomic_load(&mwp_wstat.dropped);
    t.alloc_dropped = atomic_load(&mwp_wstat.alloc_dropped);
    t.exit_status = status;
    /* its CPU time and page faults, as a longer process's end writes them */
    mwr_cpu c;
    int have_cpu = mwp_cpu_fill(1, t.time_ns, &c) == 0;
    struct mwp_str ms = {META_BUF, META_CAP, meta_len};
    mwp_s_meta(&ms, MW_META_END, how);
    if (mwp_fault.text[0])
        mwp_s_meta(&ms, MW_META_FAULT, mwp_fault.text);
    char blk[400]; /* a process that ran a lazy delay and never began: was it kept from it? */
    if (have_cpu && mwp_lazy_blocked(blk, sizeof blk, c.user_ns + c.system_ns, 0))
        mwp_s_meta(&ms, MW_META_SIGNALS_BLOCKED, blk);
    else if (have_cpu && mwp_lazy_late(blk, sizeof blk, c.user_ns + c.system_ns))
        mwp_s_meta(&ms, MW_META_NEVER_BEGAN, blk);
    meta_len = ms.len;
    int rc = short_append(META_BUF, meta_len, recs, nv, nrecs, have_cpu ? &c : NULL, &t);
    if (rc < 0) {
        writer_short_name(w_path, sizeof w_path, NULL);
        writer_warn(rc);
        atomic_store(&w_state, W_FAILED);
        return;
    }
    atomic_store(&w_state, W_CLOSED);
}

/* A child whose own code wrote no end: a signal memwatch does not catch
 * (SIGKILL: no code of its own ran) ended it, or it left by a raw
 * exit_group system call, past libc's exit and memwatch's destructor (Go
 * programs end so). Before it began recording it wrote no record at all;
 * after, a file without trailer. Its parent, reaping it, appends one for it
 * to the shared file of short processes: META with the child's pid, this
 * process as its parent, how it ended and who wrote it (reported_by=parent;
 * no command line, executable or start, which only the child knew), the
 * kernel's accounting of its CPU time where the wait returned it, and a
 * trailer with the exit status or minus the signal (the end's time is the
 * reaping's). The report makes it the end of the child's own file where
 * there is one (report/ingest.c, merge_reaped). */
void mwp_writer_reaped(pid_t child, int32_t status, int core, const struct rusage *ru)
{
    char path[PATH_MAX];
    writer_name_of(path, sizeof path, child, 0);
    int began = mwp_syscall(SYS_faccessat, AT_FDCWD, path, F_OK) == 0;
    char meta[1024];
    struct mwp_str s = {meta, sizeof meta, 0};
    meta_head(&s);
    mwp_s_metau(&s, MW_META_PID, (uint64_t)child);
    mwp_s_metau(&s, MW_META_PPID, (uint64_t)mwp_proc.pid);
    mwp_s_metau(&s, MW_META_RANK, (uint64_t)mwp_proc.rank);
    mwp_s_meta(&s, MW_META_HOST, mwp_proc.host);
    mwp_s_meta(&s, MW_META_RUN_ID, mwp_cfg.run_id);
    mwp_s_meta(&s, MW_META_END, status < 0 ? "signal" : "exit");
    mwp_s_meta(&s, MW_META_REPORTED_BY, "parent");
    static const char *const note[2][2] = {
        {"killed by a signal memwatch does not catch, before memwatch recorded it; written by "
         "its parent when it reaped it",
         "killed by a signal memwatch does not catch, after it began recording (its file has "
         "no trailer); written by its parent when it reaped it"},
        {"exited without memwatch's exit path (a raw exit_group system call, as Go programs end, "
         "or a last image libmemwatch.so was not loaded into), before memwatch recorded it; "
         "written by its parent when it reaped it",
         "exited without memwatch's exit path (a raw exit_group system call, as Go programs end, "
         "or a last image libmemwatch.so was not loaded into), after it began recording (its "
         "file has no trailer); written by its parent when it reaped it"}};
    mwp_s_meta(&s, MW_META_NOTE, note[status >= 0][began]);
    if (core)
        mwp_s_meta(&s, MW_META_CORE_DUMPED, "1");
    mwr_trailer t;
    memset(&t, 0, sizeof t);
    t.time_ns = mwp_clock_sys_ns(CLOCK_MONOTONIC);
    t.exit_status = status;
    mwr_cpu c;
    memset(&c, 0, sizeof c);
    c.time_ns = t.time_ns;
    if (ru)
        mwr_cpu_from_rusage(ru, &c);
    /* a directory that cannot be written: the parent's own records say so */
    (void)short_append(meta, s.len, NULL, 0, 0, ru ? &c : NULL, &t);
}

/* A trailer record (header and trailer) as it lies in a file. */
#define WR_TRAILER_LEN (sizeof(mwr_rec_hdr) + sizeof(mwr_trailer))

/* b, WR_TRAILER_LEN bytes, is a trailer record: 1 and *t, else 0. */
static int writer_trailer_in(const void *b, mwr_trailer *t)
{
    mwr_rec_hdr h;
    memcpy(&h, b, sizeof h);
    if (h.type != MWR_TRAILER || h.size != WR_TRAILER_LEN)
        return 0;
    memcpy(t, (const char *)b + sizeof h, sizeof *t);
    return 1;
}

/* The trailer that ends a file or segment at byte end of fd, if that is
 * one: 1 and *t, else 0. */
static int writer_trailer_at(int fd, uint64_t end, mwr_trailer *t)
{
    unsigned char b[WR_TRAILER_LEN];
    return end >= sizeof(mwr_file_header) + sizeof b &&
           mwp_syscall(SYS_pread64, fd, b, sizeof b, (off_t)(end - sizeof b)) == (long)sizeof b &&
           writer_trailer_in(b, t);
}

/* The bytes [lo, hi) of fd in the window *w (one read of up to its size
 * where they are not there yet; the window is read from lo): a pointer to
 * byte lo, or NULL. */
struct short_win {
    char b[2048];
    uint64_t at, len; /* the file's bytes [at, at + len) are in b */
};

static const char *short_span(int fd, struct short_win *w, uint64_t lo, uint64_t hi)
{
    if (hi - lo > sizeof w->b)
        return NULL;
    if (lo < w->at || hi > w->at + w->len) {
        long n = (long)mwp_syscall(SYS_pread64, fd, w->b, sizeof w->b, (off_t)lo);
        if (n < 0)
            return NULL;
        w->at = lo;
        w->len = (uint64_t)n;
        if (hi > w->at + w->len)
            return NULL;
    }
    return w->b + (lo - w->at);
}

/* The shared file, open for reading in a process that reaps children (a
 * shell, make): opened at its first look and kept, close-on-exec and at
 * mwp_fd_base or above like memwatch's other descriptors (guard.c), so that
 * each later look is an fstat and a pread, without a walk of the file's
 * path, an open and a close. The inode is compared at every look: a
 * descriptor the program took over by raw system calls is left to it, and
 * the file opened again. *st: the file's status. */
MWP_HOT_DATA static _Atomic int w_short_rd = -1;
MWP_HOT_DATA static uint64_t w_short_rd_dev, w_short_rd_ino;

int mwp_writer_short_rd_fd(void)
{
    return atomic_load(&w_short_rd);
}

void mwp_writer_short_rd_relocate(void)
{
    mwp_fd_step_aside(&w_short_rd);
}

static int writer_short_reader(struct stat *st)
{
    int fd = atomic_load(&w_short_rd);
    if (fd >= 0) {
        if (mwp_syscall(SYS_fstat, fd, st) == 0 && (uint64_t)st->st_dev == w_short_rd_dev &&
            (uint64_t)st->st_ino == w_short_rd_ino)
            return fd;
        atomic_compare_exchange_strong(&w_short_rd, &fd, -1); /* the program's now */
    }
    char path[PATH_MAX];
    writer_short_name(path, sizeof path, NULL);
    /* O_NOATIME: each read of a file written since would update its access
     * time, an inode write the file system journals (only its owner may
     * ask; another user's file is read as before) */
    fd =
        (int)mwp_syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOATIME);
    if (fd < 0 && errno == EPERM)
        fd = (int)mwp_syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (mwp_syscall(SYS_fstat, fd, st) != 0) {
        mwp_sys_close(fd);
        return -1;
    }
    fd = mwp_fd_move_high(fd);
    w_short_rd_dev = (uint64_t)st->st_dev;
    w_short_rd_ino = (uint64_t)st->st_ino;
    int none = -1;
    if (!atomic_compare_exchange_strong(&w_short_rd, &none, fd)) {
        mwp_sys_close(fd); /* another thread's came first: the same file */
        return none;
    }
    return fd;
}

/* Is one of the last 8 segments of the shared file of short processes the
 * child's (its META's "pid=CHILD" followed by "ppid=" this process)? Each
 * segment ends in a trailer whose bytes field is the segment's size before
 * it, so the walk goes back from the end. The file's last 2 KiB are read at
 * once: a child's segment is some 700 bytes and the reaping comes soon
 * after its end, so one read usually holds it (a recorded shell pays this
 * for every child it reaps; docs/overhead.md). */
static int writer_short_has(pid_t child)
{
    char want[64];
    struct mwp_str w = {want, sizeof want, 0};
    mwp_s_str(&w, "\n");
    mwp_s_str(&w, mw_meta_key(MW_META_PID));
    mwp_s_str(&w, "=");
    mwp_s_i64(&w, child);
    mwp_s_str(&w, "\n");
    mwp_s_str(&w, mw_meta_key(MW_META_PPID));
    mwp_s_str(&w, "=");
    mwp_s_i64(&w, mwp_proc.pid);
    mwp_s_str(&w, "\n");
    struct stat st;
    int fd = writer_short_reader(&st);
    if (fd < 0)
        return 0;
    int found = 0;
    uint64_t end = (uint64_t)st.st_size;
    struct short_win win;
    win.at = win.len = 0;
    /* the tail, in one read (the whole file where it is shorter) */
    (void)short_span(fd, &win, end > sizeof win.b ? end - sizeof win.b : 0, end);
    for (int k = 0; k < 8 && !found; k++) {
        if (end < sizeof(mwr_file_header) + WR_TRAILER_LEN)
            break;
        const char *tb = short_span(fd, &win, end - WR_TRAILER_LEN, end);
        mwr_trailer t;
        if (!tb || !writer_trailer_in(tb, &t))
            break;
        uint64_t tr = end - WR_TRAILER_LEN;
        if (t.bytes > tr - sizeof(mwr_file_header))
            break;
        end = tr - t.bytes; /* the segment's first record: its META */
        uint64_t mlen = t.bytes < 768 ? t.bytes : 768;
        const char *m = short_span(fd, &win, end, end + mlen);
        /* memmem, not a compare at every offset (a compare per byte took a
         * make's shell some 20 us per child) */
        found = m && mlen > w.len && memmem(m, (size_t)mlen, want, w.len) != NULL;
    }
    return found;
}

int mwp_writer_child_ended(pid_t child)
{
    /* most children a shell or make reaps never began: their segment first */
    if (writer_short_has(child))
        return 1;
    char path[PATH_MAX];
    writer_name_of(path, sizeof path, child, 0);
    if (mwp_syscall(SYS_faccessat, AT_FDCWD, path, F_OK) != 0)
        return 0; /* it never began and wrote no segment */
    /* it began: its newest image's file (an exec'ed image's comes next) */
    for (unsigned seq = 1; seq < 100; seq++) {
        char next[PATH_MAX];
        writer_name_of(next, sizeof next, child, seq);
        if (mwp_syscall(SYS_faccessat, AT_FDCWD, next, F_OK) != 0)
            break;
        memcpy(path, next, sizeof path);
    }
    int fd = (int)mwp_syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    mwr_trailer t;
    int ended = mwp_syscall(SYS_fstat, fd, &st) == 0 && writer_trailer_at(fd, (uint64_t)st.st_size, &t);
    mwp_sys_close(fd);
    return ended;
}

void mwp_writer_create_now(void)
{
    (void)writer_ready();
}

/* The file is opened at the lowest free descriptor and then moved up to
 * mwp_fd_base: for those few microseconds it holds a low number that
 * nothing marks as memwatch's. With creation now on the interval thread,
 * while the program runs, a program that closes descriptors at start (or
 * dup2s onto them) could close it, open its own at that number and have
 * memwatch move and close the program's. So the program's close, close_range,
 * closefrom, dup2, dup3 and fork wait here until the creation is over
 * (bounded, as writer_ready's wait; a signal handler on the creating thread
 * itself does not wait). */
void mwp_writer_settle(void)
{
    if (atomic_load_explicit(&w_state, memory_order_acquire) == W_CREATING)
        writer_wait();
}

/* Make sure the file exists; 1 when records may be written. */
static int writer_ready(void)
{
    int s = atomic_load(&w_state);
    if (s == W_OPEN)
        return 1;
    if (s == W_PENDING || s == W_CREATING) {
        int exp = W_PENDING;
        if (s == W_PENDING && atomic_compare_exchange_strong(&w_state, &exp, W_CREATING))
            return writer_create() == 0;
        writer_wait(); /* someone else creates it */
        return atomic_load(&w_state) == W_OPEN;
    }
    return 0;
}

void mwp_writer_batch(int on)
{
    if (on) {
        w_batch_len = 0;
        w_batch_nrec = 0;
        w_batching = 1;
        return;
    }
    w_batching = 0;
    if (atomic_load(&w_state) == W_PENDING) {
        w_held = 1; /* for writer_create */
        return;
    }
    if (w_batch_len) {
        struct iovec v = {w_batch, w_batch_len};
        w_batch_len = 0;
        writer_put(&v, 1, w_batch_nrec);
    }
}

static int writer_write(const struct iovec *iov, int n, size_t want, uint64_t nrec);

static void writer_gather_flush(void)
{
    if (!w_gather_len)
        return;
    struct iovec v = {w_gather, w_gather_len};
    uint64_t nrec = w_gather_nrec;
    w_gather_len = 0;
    w_gather_nrec = 0;
    writer_write(&v, 1, v.iov_len, nrec);
}

int mwp_writer_gather(int on)
{
    if (on) {
        atomic_store(&w_gather_busy, 1);
        /* the other side of mwp_writer_gather_wait: the process's end sets
         * mwp_proc.state, then reads w_gather_busy; this sets w_gather_busy, then
         * reads mwp_proc.state (both sequentially consistent), so one of the two
         * sees the other */
        if (atomic_load(&mwp_proc.state) != MWP_RUNNING) {
            atomic_store(&w_gather_busy, 0);
            return 0;
        }
        w_gather_mine = 1;
        return 1;
    }
    if (w_gather_mine)
        writer_gather_flush();
    w_gather_mine = 0;
    atomic_store(&w_gather_busy, 0);
    return 0;
}

void mwp_writer_gather_wait(void)
{
    if (w_gather_mine) {
        /* the interval thread ends the process itself (its last application
         * thread is gone: engine.c, eng_check_orphaned): its own gather first */
        mwp_writer_gather(0);
        return;
    }
    /* Up to 500 ms: on a loaded machine the interval thread may wait a
     * hundred milliseconds and more for a CPU before it can write what it
     * gathered (a gather itself takes microseconds). The first millisecond
     * yields; after that this thread sleeps in 1 ms steps, so that it does
     * not take the CPU from the thread it waits for. */
    uint64_t start = mwp_now_ns(), now = start;
    while (atomic_load(&w_gather_busy) && now - start < 500000000ull) {
        if (now - start < 1000000ull) {
            syscall(SYS_sched_yield);
        } else {
            struct timespec ms = {0, 1000000};
            syscall(SYS_nanosleep, &ms, NULL);
        }
        now = mwp_now_ns();
    }
}

/* Copy the pieces to buf at *len (the caller checked that they fit). */
static void writer_append(char *buf, size_t *len, const struct iovec *iov, int n)
{
    for (int i = 0; i < n; i++) {
        memcpy(buf + *len, iov[i].iov_base, iov[i].iov_len);
        *len += iov[i].iov_len;
    }
}

static int writer_put(const struct iovec *iov, int n, uint64_t nrec)
{
    size_t want = 0;
    for (int i = 0; i < n; i++)
        want += iov[i].iov_len;
    if (w_gather_mine) {
        if (w_gather_len + want > sizeof w_gather)
            writer_gather_flush();
        if (want <= sizeof w_gather) {
            writer_append(w_gather, &w_gather_len, iov, n);
            w_gather_nrec += nrec;
            return 0;
        }
        /* larger than the whole gather: written as it is, after what was
         * gathered before it */
    }
    if (w_batching) {
        if (w_batch_len + want > sizeof w_batch) {
            /* full: flush (creating the file now if it is still to come),
             * then go on gathering */
            w_batching = 0;
            if (atomic_load(&w_state) == W_PENDING) {
                w_held = 1;
                if (!writer_ready())
                    return -EBADF;
            }
            mwp_writer_batch(0);
            w_batching = 1;
        }
        if (atomic_load(&w_state) != W_PENDING && !writer_ready())
            return -EBADF;
        if (want <= sizeof w_batch) {
            writer_append(w_batch, &w_batch_len, iov, n);
            w_batch_nrec += nrec;
            return 0;
        }
    }
    return writer_write(iov, n, want, nrec);
}

/* One writev of whole records (want bytes), creating the file first where
 * it is still to come. */
static int writer_write(const struct iovec *iov, int n, size_t want, uint64_t nrec)
{
    if (!writer_ready())
        return -EBADF;
    atomic_fetch_add(&w_inflight, 1);
    int ret = 0;
    if (atomic_load(&w_state) != W_OPEN) {
        ret = -EBADF;
        goto out;
    }
    int fd = atomic_load(&w_fd);
    ssize_t w = (ssize_t)syscall(SYS_writev, fd, iov, n);
    if (w < 0 || (size_t)w != want) {
        atomic_fetch_add(&mwp_wstat.dropped, nrec);
        int e = w < 0 ? errno : mwp_write_short_errno(fd);
        ret = -e;
        /* a short write leaves a partial record, a full disk or an I/O error
         * ends the recording: stop writing, and say why once */
        if (w > 0 || mwp_write_error_is_fatal(e)) {
            atomic_store(&w_state, W_FAILED);
            mwp_write_failed(e, w_path, 1);
        }
        goto out;
    }
    atomic_fetch_add(&w_records, nrec);
    atomic_fetch_add(&w_bytes, (uint64_t)w);
    writer_cap_add((uint64_t)w);
out:
    atomic_fetch_sub(&w_inflight, 1);
    return ret;
}

int mwp_write(uint32_t type, const struct iovec *iov, int n)
{
    if (n > 6)
        return -EINVAL;
    struct iovec v[8];
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        v[i + 1] = iov[i];
        len += iov[i].iov_len;
    }
    if (len > 0xffffff00u)
        return -EMSGSIZE;
    static const char zero[8];
    mwr_rec_hdr h = mwr_rec_hdr_make(type, len);
    v[0].iov_base = &h;
    v[0].iov_len = sizeof h;
    int k = n + 1;
    if (mwr_pad_len(len)) {
        v[k].iov_base = (void *)zero;
        v[k].iov_len = mwr_pad_len(len);
        k++;
    }
    return writer_put(v, k, 1);
}

/* A PERF_DATA record from a ring's drain (buf: the drainer's own memory,
 * len its whole size): not written once the run reached its size cap (its
 * samples counted), else written with its samples' stack copies cut
 * (stack_cut). */
static int writer_perf_data(unsigned char *buf, size_t len)
{
    const size_t hdr = sizeof(mwr_rec_hdr) + sizeof(mwr_perf_data);
    mwr_perf_data d;
    memcpy(&d, buf + sizeof(mwr_rec_hdr), sizeof d);
    if (atomic_load_explicit(&mwp_wstat.size_capped, memory_order_relaxed)) {
        uint64_t k = perf_samples_in(buf + hdr, len - hdr);
        atomic_fetch_add(&w_cap_dropped, k);
        if (w_cap)
            atomic_fetch_add(&w_cap->dropped, k);
        return 0;
    }
    if (d.attr_id >= 1 && d.attr_id <= MWP_NATTR && mwp_attrs.size >= 88) {
        uint64_t st, regs;
        memcpy(&st, mwp_attrs.bytes[d.attr_id - 1] + 24, 8);   /* sample_type */
        memcpy(&regs, mwp_attrs.bytes[d.attr_id - 1] + 80, 8); /* sample_regs_user */
        if (st & PERF_SAMPLE_STACK_USER) {
            size_t n = stack_cut(buf + hdr, len - hdr, st, regs);
            if (n != len - hdr) {
                mwr_rec_hdr h = mwr_rec_hdr_make(MWR_PERF_DATA, sizeof d + n);
                memcpy(buf, &h, sizeof h);
                len = hdr + n;
            }
        }
    }
    struct iovec v = {buf, len};
    return writer_put(&v, 1, 1);
}

int mwp_write_raw(const struct iovec *iov, int n, uint64_t nrec)
{
    if (n == 1 && nrec == 1 && iov[0].iov_len >= sizeof(mwr_rec_hdr) + sizeof(mwr_perf_data)) {
        mwr_rec_hdr h;
        memcpy(&h, iov[0].iov_base, sizeof h);
        if (h.type == MWR_PERF_DATA && h.size == iov[0].iov_len)
            return writer_perf_data(iov[0].iov_base, h.size);
    }
    return writer_put(iov, n, nrec);
}

void mwp_writer_trailer(int32_t status, const char *how)
{
    int s = atomic_load(&w_state);
    if (s == W_PENDING && !w_held && !strcmp(how, "exec"))
        return; /* a fork child that execs before its first record: the new image records */
    if ((s == W_PENDING || s == W_CREATING) && !writer_ready())
        return; /* (waits for another thread's creation to complete) */
    if (atomic_load(&w_state) != W_OPEN)
        return;
    mwp_meta_note(MW_META_END, how);
    if (mwp_fault.text[0])
        mwp_meta_note(MW_META_FAULT, mwp_fault.text);
    uint64_t capped = atomic_load(&w_cap_dropped);
    if (capped && w_cap) {
        char note[160];
        struct mwp_str ns = {note, sizeof note, 0};
        mwp_s_u64(&ns, capped);
        mwp_s_str(&ns, " samples dropped: the size cap of ");
        mwp_s_u64(&ns, w_cap->cap);
        mwp_s_str(&ns, " bytes was reached");
        note[ns.len < sizeof note ? ns.len : sizeof note - 1] = 0;
        mwp_meta_note(MW_META_SAMPLES_DROPPED, note);
    }
    int exp = W_OPEN;
    if (!atomic_compare_exchange_strong(&w_state, &exp, W_CLOSED))
        return;
    uint64_t until = mwp_now_ns() + 100000000ull;
    while (atomic_load(&w_inflight) > 0 && mwp_now_ns() < until)
        syscall(SYS_sched_yield);
    mwr_trailer t;
    memset(&t, 0, sizeof t);
    t.time_ns = mwp_now_ns();
    t.records = atomic_load(&w_records);
    t.bytes = atomic_load(&w_bytes);
    t.lost_samples = atomic_load(&mwp_wstat.lost);
    t.throttled = atomic_load(&mwp_wstat.throttled);
    t.dropped_records = atomic_load(&mwp_wstat.dropped);
    t.alloc_dropped = atomic_load(&mwp_wstat.alloc_dropped);
    t.exit_status = status;
    mwr_rec_hdr h = mwr_rec_hdr_make(MWR_TRAILER, sizeof t);
    struct iovec v[2] = {{&h, sizeof h}, {&t, sizeof t}};
    ssize_t w = (ssize_t)syscall(SYS_writev, atomic_load(&w_fd), v, 2);
    (void)w;
}

void mwp_writer_reopen_after_exec_failure(int err)
{
    int exp = W_CLOSED;
    if (atomic_compare_exchange_strong(&w_state, &exp, W_OPEN)) {
        char buf[32];
        struct mwp_str s = {buf, sizeof buf, 0};
        mwp_s_i64(&s, err);
        mwp_meta_note(MW_META_EXEC_FAILED_ERRNO, buf);
    }
}

void mwp_writer_child(void)
{
    int fd = atomic_exchange(&w_fd, -1);
    if (fd >= 0)
        mwp_sys_close(fd);
    atomic_store(&w_state, W_NONE);
    w_held = 0; /* the parent's batch, for the parent's file */
    w_batch_len = 0;
    w_gather_len = 0; /* what the parent's interval thread was gathering */
    w_gather_nrec = 0;
    atomic_store(&w_gather_busy, 0);
    atomic_store(&w_inflight, 0);
    atomic_store(&mwp_wstat.lost, 0);
    atomic_store(&mwp_wstat.throttled, 0);
    atomic_store(&mwp_wstat.dropped, 0);
    atomic_store(&mwp_wstat.alloc_dropped, 0);
    atomic_store(&mwp_wstat.samples, 0);
    atomic_store(&w_cap_dropped, 0); /* the run's page (w_cap) stays: the child adds to it */
    w_path[0] = 0;
}

void mwp_meta_note_kv(const char *key, const char *val)
{
    char buf[1024];
    struct mwp_str s = {buf, sizeof buf, 0};
    mwp_s_kv(&s, key, val);
    struct iovec v = {buf, s.len};
    mwp_write(MWR_META, &v, 1);
}

/* ---- the META text ---- */

/* The command line: a copy of the argument vector the loader handed to the
 * constructor (mwp_writer_cmdline), which costs no system call, so that it
 * is the command as started, however the program rewrites argv later (a fork
 * child inherits its parent's: the same command); /proc/self/cmdline only
 * where no vector was handed over. */
MWP_HOT void mwp_writer_cmdline(int argc, char **argv)
{
    ssize_t n = 0;
    for (int i = 0; argv && i < argc && argv[i]; i++) {
        size_t l = mwp_len(argv[i]) + 1;
        if ((size_t)n + l > WR_CMDLINE_MAX) {
            l = WR_CMDLINE_MAX - (size_t)n;
            mwp_copy(wr_text + n, argv[i], l);
            n += (ssize_t)l;
            break;
        }
        mwp_copy(wr_text + n, argv[i], l);
        n += (ssize_t)l;
    }
    wr_cmdline_n = argv && argc > 0 ? n : -1;
}

/* /proc/self/cmdline into buf (where no vector was handed over): its length */
static ssize_t meta_cmdline_proc(char *buf, size_t cap)
{
    ssize_t n = 0;
    int fd = (int)mwp_syscall(SYS_openat, AT_FDCWD, "/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        n = (ssize_t)mwp_syscall(SYS_read, fd, buf, cap);
        mwp_sys_close(fd);
    }
    return n < 0 ? 0 : n;
}

/* META's cmdline: the arguments separated by spaces, newlines made spaces,
 * "..." where the copy was cut at WR_CMDLINE_MAX bytes. Copied from the
 * copy straight into the text (no buffer on the stack: a page of it costs a
 * process that ends at once a page fault). */
MWP_HOT static void meta_cmdline(struct mwp_str *s)
{
    mwp_s_str(s, mw_meta_key(MW_META_CMDLINE));
    mwp_s_ch(s, '=');
    size_t at = s->len;
    ssize_t n = wr_cmdline_n;
    if (n >= 0) {
        mwp_s_mem(s, wr_text, (size_t)n);
    } else if (s->cap > s->len + 1) {
        size_t room = s->cap - s->len - 1;
        n = meta_cmdline_proc(s->p + s->len, room < WR_CMDLINE_MAX ? room : WR_CMDLINE_MAX);
        s->len += (size_t)n;
        s->p[s->len] = 0;
    }
    if (s->len > at && !s->p[s->len - 1]) /* the last argument's end */
        s->p[--s->len] = 0;
    for (char *p = s->p + at; p < s->p + s->len; p++)
        if (!*p || *p == '\n')
            *p = ' ';
    if (n == WR_CMDLINE_MAX)
        mwp_s_str(s, "...");
    mwp_s_ch(s, '\n');
}

MWP_HOT void mwp_meta_build(void)
{
    struct mwp_str s = {META_BUF, META_CAP, 0};
    meta_head(&s);
    mwp_s_metau(&s, MW_META_START_MONOTONIC_NS, mwp_proc.start_mono_ns);
    mwp_s_metau(&s, MW_META_START_REALTIME_NS, mwp_proc.start_real_ns);
    mwp_s_metau(&s, MW_META_PID, (uint64_t)mwp_proc.pid);
    mwp_s_metau(&s, MW_META_PPID, (uint64_t)mwp_syscall(SYS_getppid));
    mwp_s_metau(&s, MW_META_RANK, (uint64_t)mwp_proc.rank);
    if (mwp_proc.rank_from)
        mwp_s_meta(&s, MW_META_RANK_FROM, mwp_proc.rank_from);
    mwp_s_meta(&s, MW_META_HOST, mwp_proc.host);
    mwp_s_meta(&s, MW_META_EXE, mwp_proc.exe ? mwp_proc.exe : "");
    meta_cmdline(&s);
    mwp_s_meta(&s, MW_META_ORIGIN, mwp_proc.is_fork_child ? "fork" : "exec");
    if (mwp_proc.forked_ns &&
        !mwp_proc.is_fork_child) /* the lazy fork child this image continues */
        mwp_s_metau(&s, MW_META_FORK_MONOTONIC_NS, mwp_proc.forked_ns);
    mwp_s_metau(&s, MW_META_INTERVAL_NS, mwp_cfg.interval_ns);
    mwp_s_metau(&s, MW_META_SAMPLE_RATE, mwp_cfg.rate);
    mwp_s_metau(&s, MW_META_SAMPLE_RATE_CLAMPED, (uint64_t)mwp_cfg.rate_clamped);
    mwp_s_metau(&s, MW_META_FAULT_PERIOD, mwp_cfg.fault_period);
    mwp_s_metau(&s, MW_META_STACK_DEPTH, mwp_cfg.stack_depth);
    mwp_s_meta(&s, MW_META_UNWIND, mwp_cfg.unwind_note);
    if (mwp_cfg.alloc_threshold == UINT64_MAX)
        mwp_s_meta(&s, MW_META_ALLOC_THRESHOLD, "off");
    else
        mwp_s_metau(&s, MW_META_ALLOC_THRESHOLD, mwp_cfg.alloc_threshold);
    mwp_s_metau(&s, MW_META_ALLOC_FRAMES, mwp_cfg.alloc_frames);
    mwp_s_metau(&s, MW_META_FOLLOW, (uint64_t)mwp_cfg.follow);
    mwp_s_meta(&s, MW_META_METHOD, mwp_cfg.method);
    mwp_s_meta(&s, MW_META_RUN_ID, mwp_cfg.run_id);
    mwp_engine_meta(&s); /* fork children: what the parent's interval thread found */
    meta_len = s.len;
}
