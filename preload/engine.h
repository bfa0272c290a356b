/*
 * preload/engine.h: the interval engine: every interval, the latency
 * reading, the threshold, the drain of every thread's rings and buffers and
 * one MWR_INTERVAL record. It runs on an interval thread of its own, or,
 * while the program has one thread, in the lazy start's timer handler on
 * that thread ("inline intervals": lazy.h). Owner: engine.c.
 */
#ifndef MW_PRELOAD_ENGINE_H
#define MW_PRELOAD_ENGINE_H

#include <stdint.h>

struct mwp_str;

/* Start the interval thread (the start-up work then runs on it). 0 or the
 * error, after META engine_error. [not AS-safe] (pthread_create): the lazy
 * start's begin, guard.c after a namespace call. */
int mwp_engine_start(void);
/* Stop the interval thread and wait until it is gone (unshare/setns need a
 * single-threaded process): 1 when a running one was stopped. [not AS-safe]
 * (pthread_join). */
int mwp_engine_stop(void);
/* Inline intervals: the process's start-up work here (a safe point on the
 * program's one thread); then mwp_engine_tick from the timer's handler every
 * interval of CPU time, until mwp_engine_inline_stop and an interval thread
 * take over. [not AS-safe] (safe points only: the lazy start's begin). */
void mwp_engine_inline_start(void);
/* [AS-safe] (the program's one thread, before an interval thread starts). */
void mwp_engine_inline_stop(void);
/* 1 from mwp_engine_inline_start to _stop (a fork child starts at 0): the
 * lazy start's timer is periodic and its handler runs the intervals.
 * [AS-safe] */
int mwp_engine_inline(void);
/* 1: inline for MEMWATCH_INLINE's CPU time: an interval thread now.
 * [AS-safe] */
int mwp_engine_inline_due(void);
/* One inline interval, in the timer's handler. safe: it interrupted the
 * program's own code, so the not async-signal-safe part may run; else only
 * the async-signal-safe part does. 0: it interrupted memwatch's own code and
 * did nothing. [AS-safe] with safe = 0. */
int mwp_engine_tick(int safe);
/* The method and threshold keys the interval thread found, for the first
 * META of a fork child. [AS-safe] */
void mwp_engine_meta(struct mwp_str *s);
/* The baseline latency, ns (0 until known). [AS-safe] */
double mwp_engine_baseline(void);
/* The saturation threshold in force, ns (0 until known): every interval
 * record carries it, the last, partial one at the process's end
 * (process.c) too, whose flags stay 0 (docs/raw-format.md). [AS-safe] */
double mwp_engine_threshold(void);
/* The end of the last interval written (CLOCK_MONOTONIC ns): where the
 * last, partial interval at the end begins. [AS-safe] */
uint64_t mwp_engine_last_end(void);
/* The TSC rate the interval thread determined (0 until then), and in *src
 * how (NULL until then): children are handed MEMWATCH_TSC with it.
 * [AS-safe] */
double mwp_engine_tsc_hz(const char **src);
/* 1 while the interval thread exists and has not finished its set-up (the
 * threshold and methods in META); 0 on the interval thread itself.
 * [AS-safe] */
int mwp_engine_setting_up(void);
/* Fork child: the parent's interval thread does not exist here; the child's
 * comes with its own lazy start. [AS-safe] (fork child). */
void mwp_engine_child(void);

#endif
