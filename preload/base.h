/*
 * preload/base.h: what every part of libmemwatch.so shares: the attributes
 * that place its code and data, and the words its headers use.
 *
 * libmemwatch.so's internal headers, one per owner (each .c includes those
 * it calls):
 *   base.h         this file: attributes, the contract tags
 *   sys.h          raw system calls and string helpers, inline (no owner: header only)
 *   util.h         util.c: async-signal-safe formatting, the raw logger, clocks
 *   real.h         real.c: the next definitions of the interposed functions, the hook guard
 *   config.h       config.c: MEMWATCH_* settings (mwp_cfg)
 *   env.h          env.c: the constructor's environment, read in one pass
 *   process.h      process.c: process-wide state (mwp_proc), the end of a process image
 *   lazy.h         lazy.c: the lazy start's state machine, inline intervals' timer
 *   exec.h         exec.c: the environment children get
 *   writer.h       writer.c: the raw file, META, the trailer's counters
 *   status.h       status.c: a write failure, named once for the process tree
 *   threads.h      threads.c: the thread registry, rings, sampler attributes, CPU records
 *   region.h       region.c: region events' buffers
 *   precise.h      precise.c, precise_attr.c: precise load sampling
 *   engine.h       engine.c: the interval engine (thread or inline)
 *   probe_share.h  probe_share.c: probe_lat readings shared between processes
 *   modules.h      modules.c: loaded objects and mapped files
 *   signals.h      signals.c: memwatch's dispositions, the fault text
 *   alloc.h        alloc.c, alloc_sites.c: allocation hooks and their sampling
 *   jobid.h        the run id of an MPI or Slurm job (header only; memwatch record's too)
 * guard.c (memwatch's descriptor, namespace calls) and reap.c (the wait
 * calls) only interpose: no header.
 *
 * Contracts. Every prototype's comment carries one of these tags:
 *   [AS-safe]          async-signal-safe: raw system calls, atomics and
 *                      memwatch's own flags only; may run in a signal handler
 *                      or an interposed function (a hook), on any thread
 *   [not AS-safe]      may allocate, lock or call libc functions that do: the
 *                      constructor, the interval thread, or the program's
 *                      thread at a safe point (a hook, the lazy start's
 *                      handler where lazy.h allows it); never a signal handler
 *   [interval thread]  only the interval thread, or the inline tick that
 *                      stands in for it on the program's one thread (engine.h)
 * and, where it matters, who calls it (constructor, fork child, ...).
 * State shared between files lives in structs named after their owner
 * (mwp_cfg, mwp_env, mwp_proc, mwp_exe, mwp_lazy, mwp_wstat, mwp_attrs,
 * mwp_fault, mwp_real):
 * each member's comment says who may write it. Everything else is
 * file-static, behind functions.
 *
 * Nothing is exported except the interposed symbols, mw_preload_emit and
 * the region API (preload/libmemwatch.map). Hook and signal paths use only
 * raw syscalls, atomics and memwatch's own spin flags; never malloc, stdio or
 * a lock the application could hold.
 */
#ifndef MW_PRELOAD_BASE_H
#define MW_PRELOAD_BASE_H

#define MWP_TLS __thread __attribute__((tls_model("initial-exec")))
#define MWP_EXPORT __attribute__((visibility("default")))
/* The code every process runs (constructor, the end of a process that
 * never began): GCC places hot functions together (.text.hot, next to the
 * constructor's .text.startup), so that a short process faults in one
 * window of the library's text instead of three (docs/overhead.md). */
#define MWP_HOT __attribute__((hot))
/* The small variables every process reads or writes, whether or not it
 * begins: one section of their own ("mwp_hot", placed by the linker after
 * .data, before .bss), so that they lie in the page the loader already
 * wrote when it cleared the start of .bss instead of in three or four
 * pages among the rest (docs/overhead.md, "Lazy start"). */
#define MWP_HOT_DATA __attribute__((section("mwp_hot")))
/* Large zero-initialised buffers that a short process touches little or
 * not at all: in .lbss, which the linker places after .bss, so that the
 * small variables every process touches share a few pages instead of lying
 * between the buffers (each page a process touches is a page fault;
 * docs/overhead.md, "lazy start"). Elsewhere than x86-64 .lbss is not a
 * zero-filled section: plain .bss there. */
#if defined(__x86_64__)
#define MWP_COLD __attribute__((section(".lbss.memwatch")))
#else
#define MWP_COLD
#endif

#endif
