/*
 * preload/lazy.h: the lazy start: when a process image begins recording,
 * and the timer and perf event that tick inline intervals. Owner: lazy.c.
 *
 * Most processes of a build, a configure script or a shell pipeline live a
 * few milliseconds. Each pays, under memwatch, for what it sets up before it
 * ends; so a process sets up nothing that can wait until it has run for
 * about one interval of CPU time (docs/overhead.md, "Lazy start"): no
 * interval thread, no perf event, no file. One CPU-time timer on the main
 * thread (SIGRTMAX-3, after min(MEMWATCH_INTERVAL, 10 ms) of its CPU time)
 * says when; with MEMWATCH_LAZY=tick a task-clock event beside it, whose
 * overflow sends the same signal.
 *
 *         constructor, fork child
 *                   |
 *                   v           begin, MEMWATCH_INLINE=1 and a timer
 *              +--------+ ----------------------------------> +--------+
 *              |  LAZY  |                                     | INLINE |
 *              +--------+ ----+                               +--------+
 *                |    |       | begin_threaded, or begin          |
 *                |    |       | without inline intervals          | inline_to_thread
 *                |    |       v                                   |
 *                |    |   +----------+ <--------------------------+
 *                |    |   | THREADED |
 *                |    |   +----------+
 *                |    +---> not recorded (MWP_OFF): begin's writer cannot start
 *                +--------> ended: mwp_lazy_end, or an exec (the new image records)
 *
 * Transitions (each on the program's one thread; lazy.c):
 *   LAZY   the timer at a safe point, mw_preload_emit, the first region, a
 *          buffer of allocation records half full where the allocator is
 *          libc's (mwp_lazy_soon), the constructor where the program has an
 *          allocator of its own: begin (mwp_begin) -> INLINE or THREADED
 *   LAZY   the timer or the tick at an unsafe point: the timer armed again
 *          for 2 ms of CPU time, the tick's event opened (the first time,
 *          lazy_retry) or refreshed for 2 ms of user time
 *   LAZY   the program's first pthread_create, its sigaction of the timer's
 *          signal (mwp_lazy_claimed): mwp_begin_threaded -> THREADED
 *   LAZY   exit, _exit, a fatal signal: mwp_lazy_end writes the process's
 *          segment of the shared file of short processes; one with records
 *          that segment cannot hold begins and ends as a recording one
 *   LAZY   exec: the timer deleted, nothing written; where the exec fails,
 *          armed again (mwp_lazy_rearm) -> LAZY
 *   INLINE every expiry of the timer or overflow of the tick's task-clock
 *          event (both periodic, MEMWATCH_INTERVAL of CPU time), the first
 *          after 3/4 of it: the interval engine's tick (engine.h)
 *   INLINE the program's first pthread_create, its claim of the signal, or
 *          MEMWATCH_INLINE's CPU time run: inline_to_thread -> THREADED
 *   INLINE exec: the timer and the tick deleted; where the exec fails,
 *          periodic again (mwp_inline_rearm) -> INLINE
 *   any    fork: the child starts LAZY (mwp_lazy_child, mwp_lazy_rearm)
 *
 * Invariants:
 * - mwp_lazy.begun is 0 in LAZY and 1 in INLINE and THREADED. It goes from
 *   0 to 1 once per image: a compare and swap in begin, or the end of a
 *   process that keeps records (mwp_lazy_end); back to 0 only in a fork
 *   child, which starts LAZY again with a timer of its own (timers are not
 *   inherited).
 * - A timer exists (lz_timer >= 0) only in LAZY (one-shot) and INLINE
 *   (periodic, every MEMWATCH_INTERVAL of CPU time; where timer_create
 *   failed, neither has one), never in THREADED, and never across an
 *   exec: exec.c disarms it first (a pending signal would kill the new
 *   image) and rearms it where the exec fails.
 * - The tick's event (lz_tick >= 0) exists, where perf_event_open allows
 *   it and beside the timer, in INLINE, and in LAZY once a signal of the
 *   lazy start found no safe point (or from the start with
 *   MEMWATCH_LAZY=tick); INLINE takes that one over with the interval's
 *   period. At most one of its signals is queued (it stops at each
 *   overflow until the handler refreshes it). A fork child closes its copy
 *   of the parent's descriptor; exec closes it.
 * - Until begun, the process has one thread: the program's first
 *   pthread_create begins it first, so the main thread's CPU time is the
 *   process's, and the timer's thread is the only one.
 * - begin runs on the program's one thread, at a safe point only: in the
 *   timer's handler where the interrupted code is neither libc's, the
 *   loader's, memwatch's nor the allocator's behind memwatch's malloc, and
 *   the signal mask is the one the program started with (lazy_safe); or in
 *   a hook (pthread_create, sigaction, mw_preload_emit, a region, an
 *   allocation hook where the allocator is libc's); or in the constructor.
 *   There nothing that pthread_create, malloc or the loader's lock needs
 *   can be half done.
 * - mwp_in_hook is raised around begin and every tick; the handler does
 *   nothing while it is raised (memwatch's own code was interrupted: the
 *   next expiry retries).
 * - The program's sigaction of the timer's signal makes the signal the
 *   program's: the process begins with an interval thread (THREADED) and
 *   its timer is deleted.
 */
#ifndef MW_PRELOAD_LAZY_H
#define MW_PRELOAD_LAZY_H

#include <stddef.h>
#include <stdint.h>

/* Owner: lazy.c. */
struct mwp_lazy {
    /* 0 while the process is lazy (LAZY above), 1 once it began. Written by
     * begin and mwp_lazy_end (the program's one thread; a fatal signal's
     * handler) and by the fork child handler (mwp_lazy_child); read by the
     * hooks, exec.c, modules.c, region.c, threads.c. */
    _Atomic int begun;
};
extern struct mwp_lazy mwp_lazy;

/* memwatch's signal dispositions (signals.c), keeping the signal mask the
 * program started with: the handler begins only where the mask is that
 * one. [not AS-safe] (constructor). */
void mwp_lazy_signals(void);
/* The timer, its handler and the text ranges the handler checks; own_alloc:
 * the program's malloc is not memwatch's (its executable's, or an earlier
 * preload's): such a process begins here. [not AS-safe] (constructor). */
void mwp_lazy_install(int own_alloc);
/* Begin now (LAZY -> INLINE or THREADED); idempotent. [not AS-safe] (safe
 * points only, see above). */
void mwp_begin(void);
/* Begin with an interval thread, or leave inline intervals for one (the
 * program's first pthread_create, its claim of the timer's signal).
 * [not AS-safe] (a hook). */
void mwp_begin_threaded(void);
/* Begin now, or at the timer's next safe point where this may run inside
 * the program's allocator (where pthread_create must not): for the
 * allocation hooks. [not AS-safe] (an allocation hook). */
void mwp_lazy_soon(void);
/* sigaction on memwatch's timer signal: the program claims it.
 * [not AS-safe] (the sigaction hook). */
void mwp_lazy_claimed(int sig);
/* Around an exec (exec.c): the timer deleted before it (a signal it left
 * pending taken back), armed again where the exec fails (LAZY: one lazy
 * delay; INLINE: periodic again, mwp_inline_rearm). [AS-safe] */
void mwp_lazy_disarm(void);
/* The inline tick's descriptor (a perf task-clock event, lazy.c "the inline
 * tick"), -1 where none: guard.c keeps the program's close and dup2 off it,
 * and moves it out of a dup2's way (mwp_lazy_tick_relocate). [AS-safe] */
int mwp_lazy_tick_fd(void);
void mwp_lazy_tick_relocate(void);
void mwp_lazy_rearm(void);
void mwp_inline_rearm(void);
/* Fork child: LAZY again; the parent's timer does not exist here. The
 * caller arms the child's (mwp_lazy_rearm) once its parts are reset.
 * [AS-safe] (fork child). */
void mwp_lazy_child(void);
/* The end of a process that never began (mwp_finish): its segment in the
 * shared file of short processes, or nothing for an exec (the new image
 * continues). Returns 1 when done, 0 when the process has records to keep
 * and ends as a recording one does (it begins now). [AS-safe] with
 * in_signal set, except where a process with records its segment cannot
 * hold begins here (mwp_resolve's dlsym, the attributes), as it would at
 * its next safe point. */
int mwp_lazy_end(int32_t status, const char *how, int in_signal);
/* META signals_blocked: where the program's signal mask kept memwatch's
 * timer signal from it (or, before the lazy start, was not the mask it
 * started with), the signals and what that cost, into out; its length, 0
 * where nothing was kept. begun 0: a process that never began, with its CPU
 * time (below one lazy delay no system call is made). [AS-safe] */
size_t mwp_lazy_blocked(char *out, size_t cap, uint64_t cpu_ns, int begun);
/* META never_began: a process that ran three lazy delays of CPU time, never
 * began, and was not kept from it by its mask: what the lazy start saw (the
 * timer never came, or came only where memwatch may not begin). 0 where
 * that does not hold. [AS-safe] */
size_t mwp_lazy_late(char *out, size_t cap, uint64_t cpu_ns);

#endif
