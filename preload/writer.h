/*
 * preload/writer.h: the process's raw file (include/memwatch/mwr.h,
 * docs/raw-format.md): its one descriptor, META, the trailer and the
 * counters that end up in it. Owner: writer.c. The write path is system
 * calls only: records are written from hooks, signal handlers, the interval
 * thread and the program's threads alike.
 */
#ifndef MW_PRELOAD_WRITER_H
#define MW_PRELOAD_WRITER_H

#include "util.h"

#include <memwatch/meta_keys.h>

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/uio.h>

/* What ends up in the trailer and the end's META. Owner: writer.c (reset in
 * a fork child, read at the end). Added to with atomics by whoever drains the
 * rings and buffers (threads.c: the interval thread, an inline tick, the end
 * of the process, possibly in a signal handler) and by writer.c's failed
 * writes. size_capped is set by writer.c (any writing thread) and read by the
 * allocation hooks (alloc.c). */
struct mwp_writer_stats {
    _Atomic uint64_t lost;          /* samples the kernel lost (its LOST records) */
    _Atomic uint64_t throttled;     /* the kernel's throttling of the samplers */
    _Atomic uint64_t dropped;       /* records not written (rings skipped, writes failed) */
    _Atomic uint64_t alloc_dropped; /* allocation records not written */
    _Atomic uint64_t samples;       /* samples drained */
    _Atomic int size_capped;        /* memwatch record --max-size reached (the run's page) */
};
extern struct mwp_writer_stats mwp_wstat;

/* When the file is created: on the first record written directly (fork
 * children), or later (a process that begins recording: its batch is held
 * and the interval thread, or whatever writes first, creates the file; the
 * directory is checked now). Returns 0 or -errno (after one warning on
 * stderr). [AS-safe] (system calls only): the lazy start's begin, a fork
 * child. */
enum { MWP_W_FIRST_RECORD = 0, MWP_W_LATER = 1 };
int mwp_writer_start(int when);
/* The constructor's check of MEMWATCH_DIR (one warning where it cannot be
 * used). 0 or -errno. [AS-safe] (constructor). */
int mwp_writer_dir_check(void);
/* A process that ends before it began (lazy start): its segment of the
 * shared file of short processes is META with the end note, the records in
 * recs (nrecs whole records: allocation records and the modules they name,
 * or none), its CPU record and the trailer, written with one system call.
 * [AS-safe] */
void mwp_writer_summary(int32_t status, const char *how, const struct iovec *recs, int nv,
                        uint64_t nrecs);
/* A child whose own code wrote no end: a signal memwatch does not catch
 * (SIGKILL) ended it (status -signal), or it exited (status 0..255) by a raw
 * exit_group system call that bypasses libc's exit (Go programs). Its
 * parent, reaping it, writes its segment (reap.c). [AS-safe] (called from
 * the parent's wait, outside any handler). */
void mwp_writer_reaped(pid_t child, int32_t status, int core, const struct rusage *ru);
/* 1 where the child wrote its end itself: the newest file of its own ends
 * in a trailer, or (no file of its own) one of the last 8 segments of the
 * shared file of short processes is its (pid and this process as ppid).
 * 0 otherwise, also where that cannot be read. [AS-safe] */
int mwp_writer_child_ended(pid_t child);
/* Create the file if it is still to come (the interval thread's first act).
 * [AS-safe] */
void mwp_writer_create_now(void);
/* Wait while another thread creates the file (its descriptor is briefly a
 * low number): called before the program closes or replaces descriptors,
 * and before fork. [AS-safe] */
void mwp_writer_settle(void);
/* Write one record: type + payload pieces; pads to 8. [AS-safe]
 * thread-safe. 0 or -errno. */
int mwp_write(uint32_t type, const struct iovec *iov, int n);
/* Write already-framed records (nrec whole mwr records) as one piece.
 * [AS-safe] */
int mwp_write_raw(const struct iovec *iov, int n, uint64_t nrec);
/* The end's META (end, fault, samples_dropped) and the trailer; once.
 * [AS-safe] */
void mwp_writer_trailer(int32_t status, const char *how);
/* An exec memwatch ended the file for failed: open it again, with META
 * exec_failed_errno. [AS-safe] */
void mwp_writer_reopen_after_exec_failure(int err);
/* In a fork child: forget the parent's file and counters. [AS-safe] */
void mwp_writer_child(void);
/* memwatch's descriptor of the file (-1: none); move it elsewhere where
 * the program dup2s onto it (guard.c). [AS-safe] */
int mwp_writer_fd(void);
/* The lowest descriptor memwatch moves its own to: high, so that programs
 * which dup2 onto small numbers (shells: `exec 3>file`) never meet them.
 * [AS-safe] */
int mwp_fd_base(void);
/* fd moved to mwp_fd_base or above (a duplicate there, fd closed): the
 * descriptor to use, fd itself where none is free up there. [AS-safe] */
int mwp_fd_move_high(int fd);
/* A duplicate of fd at mwp_fd_base or above, else at 3 or above, fd kept
 * (the program's dup2 onto it replaces it): the new descriptor, or -errno.
 * [AS-safe] */
int mwp_fd_dup_high(int fd);
/* The program dup2s onto the descriptor in *slot (guard.c): *slot becomes a
 * duplicate elsewhere (mwp_fd_dup_high); a reader between the two stores
 * still finds a valid descriptor. [AS-safe] */
void mwp_fd_step_aside(_Atomic int *slot);
void mwp_writer_relocate(void);
/* The shared file of short processes, kept open for reading by a process
 * that reaps children (-1: none), and its move where the program dup2s onto
 * it (guard.c). [AS-safe] */
int mwp_writer_short_rd_fd(void);
void mwp_writer_short_rd_relocate(void);
/* The META text every file of this process begins with (built when the
 * process begins recording, again in a fork child). [AS-safe] */
void mwp_meta_build(void);
/* 1: gather the start-up's records in memory; 0: write them (one system
 * call, or held until the file is created). [AS-safe] (the program's one
 * thread at the lazy start's begin). */
void mwp_writer_batch(int on);
/* 1 starts gathering the interval's records (returns 0, gathering nothing,
 * once the process is ending); 0 writes them with one system call.
 * [interval thread] [AS-safe] */
int mwp_writer_gather(int on);
/* Another thread waits (at most 500 ms) until an interval in progress has
 * written what it gathered. [AS-safe] (the end of the process). */
void mwp_writer_gather_wait(void);
/* Keep a copy of the command line as the program was started: META cmdline
 * says that, not what the program made of argv later (GNU getopt permutes
 * it, head rewrites "-5"). [AS-safe] (constructor; no system call). */
void mwp_writer_cmdline(int argc, char **argv);

/* A later META record "key=val": key is a row of include/memwatch/meta_keys.h
 * (MW_META_<ID>). [AS-safe] */
void mwp_meta_note_kv(const char *key, const char *val);
static inline __attribute__((always_inline)) void mwp_meta_note(enum mw_meta_id key,
                                                                const char *val)
{
    mwp_meta_note_kv(mw_meta_key(key), val);
}
/* "key=v\n", "key=N\n" and "key=V\n" (a double) of a META key into s
 * (util.h's mwp_s_kv, mwp_s_kvu, mwp_s_kvd). [AS-safe] */
static inline __attribute__((always_inline)) void mwp_s_meta(struct mwp_str *s,
                                                             enum mw_meta_id key, const char *v)
{
    mwp_s_kvn(s, mw_meta_key(key), mw_meta_key_len(key), v, v ? MWP_KLEN(v) : 0);
}
static inline __attribute__((always_inline)) void mwp_s_metau(struct mwp_str *s,
                                                              enum mw_meta_id key, uint64_t v)
{
    mwp_s_kvun(s, mw_meta_key(key), mw_meta_key_len(key), v);
}
static inline __attribute__((always_inline)) void mwp_s_metad(struct mwp_str *s,
                                                              enum mw_meta_id key, double v)
{
    mwp_s_kvd(s, mw_meta_key(key), v);
}

#endif
