/*
 * preload/process.h: the process image's life cycle: its constructor, fork,
 * the end of the image (exit, _exit, a fatal signal, exec) and the
 * process-wide state every part reads. Owner: process.c. The lazy start,
 * which decides when a process begins recording, is lazy.h's.
 */
#ifndef MW_PRELOAD_PROCESS_H
#define MW_PRELOAD_PROCESS_H

#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

/* MWP_OFF: not recorded (disabled, or recording could not go on);
 * MWP_RUNNING: recorded; MWP_ENDING: mwp_finish is writing the end;
 * MWP_ENDED: the end is written (an exec that fails runs again). */
enum mwp_state { MWP_OFF = 0, MWP_RUNNING = 1, MWP_ENDING = 2, MWP_ENDED = 3 };

/* Owner: process.c. */
struct mwp_proc {
    /* enum mwp_state. Written by the constructor (MWP_RUNNING), mwp_finish
     * (MWP_ENDING, MWP_ENDED: any thread, a signal handler; compare and
     * swap), the fork child handler and the lazy start (MWP_OFF where
     * recording cannot go on), exec.c (MWP_RUNNING again after a failed
     * exec); read everywhere, the hooks first. */
    _Atomic int state;
    /* The rest is written by the constructor and the fork child handler
     * only, before any other memwatch thread of the image exists: read-only
     * for every part after that. */
    pid_t pid;             /* getpid() at the start: a vfork child differs */
    int is_fork_child;     /* the image is a fork child of a recorded process */
    int rank;              /* the MPI rank (0: none) */
    const char *rank_from; /* the variable the rank came from; NULL: none */
    uint64_t start_mono_ns, start_real_ns; /* this image's start, both clocks */
    /* The TSC beside start_mono_ns's reading (0: a parent handed the rate
     * down): the engine measures the rate from it (mw_tsc_reference). */
    uint64_t tsc_mark;
    /* the lazy fork child this image continues (MEMWATCH_FORKED), 0: none */
    uint64_t forked_ns;
    char host[128];     /* uname's nodename, '/' and ' ' as '_' */
    char identity[256]; /* the machine's identity (MEMWATCH_MACHINE or computed) */
    /* META exe: the path the image was executed by (the kernel's AT_EXECFN,
     * in the initial stack for the image's life; made absolute against the
     * directory it started in, in mwp_exe.run, where it was relative). */
    const char *exe;
};
extern struct mwp_proc mwp_proc;

/* The program's paths. Owner: process.c. A page's worth that a short
 * process does not touch: in .lbss (MWP_COLD), apart from mwp_proc.
 * run: AT_EXECFN made absolute, where it was relative (the constructor).
 * file: the executable file (/proc/self/exe), read where the main
 * program's module is listed (mwp_exe_file): a process that ends before it
 * begins never reads it. Reading /proc/self/exe makes the kernel build the
 * process's /proc entries, and its parent pays again to drop them when it
 * reaps it (docs/overhead.md, "Lazy start"). */
struct mwp_exe {
    char run[PATH_MAX];
    char file[PATH_MAX];
};
extern struct mwp_exe mwp_exe;
/* mwp_exe.file, read on the first call. [AS-safe] */
const char *mwp_exe_file(void);
/* Flush everything and write the trailer. how: "exit", "signal", "_exit",
 * "exec". Idempotent. [AS-safe] when in_signal is set; [not AS-safe]
 * otherwise (the modules' scan). */
void mwp_finish(int32_t status, const char *how, int in_signal);
/* The steps of the start-up that wait for the process to begin recording
 * (lazy.c, begin): the samplers' attributes (MEMWATCH_RATE clamped to the
 * kernel's maximum, precise loads) into mwp_attrs; and the note of where the
 * program's allocations go (META allocations where memwatch's hooks do not
 * see them; mwp_alloc_glibc_set). [not AS-safe] (safe points only). */
void mwp_proc_attrs(void);
void mwp_proc_alloc_note(void);

#endif
