/*
 * perf_event_attr builders for memwatch's samplers. Implemented in
 * sampling/attrs.c; used by libmemwatch.so (per-thread sampling) and tests.
 *
 *  - cpu-clock: timer sampling that works on every Linux machine (software
 *    event), user-space call chains, CLOCK_MONOTONIC time stamps.
 *  - page-faults: software page-fault sampling with the faulting data
 *    address (PERF_SAMPLE_ADDR): real data addresses without any PMU.
 *  - precise loads: Intel mem-loads with a latency threshold (ldlat; on
 *    Sapphire Rapids and later as the group {mem-loads-aux, mem-loads}), AMD
 *    ibs_op. Where the hardware lacks them the builder returns MW_ERR_NOPMU
 *    and says why in `why`.
 *
 * All builders produce attributes for one thread (pid = tid, cpu = -1),
 * without inherit: the kernel refuses to mmap an inherited per-task event
 * (perf_mmap: EINVAL for cpu == -1 && inherit), so memwatch opens the events
 * on every new thread instead. Threading: pure functions except that the
 * sysfs probes read files; none is async-signal-safe.
 */
#ifndef MEMWATCH_ATTRS_H
#define MEMWATCH_ATTRS_H

#include <memwatch/memwatch.h>

#include <linux/perf_event.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sample layout shared by memwatch's samplers (documented in docs/raw-format.md). */
#define MW_CPUCLOCK_SAMPLE_TYPE                                                                 \
    (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |                 \
     PERF_SAMPLE_CALLCHAIN)
/* No PERF_SAMPLE_PERIOD for page faults: with it the kernel samples every
 * software event regardless of sample_period (perf_swevent_event). Their
 * call chain (user space, frame pointers) says which code first touched
 * the data. */
#define MW_FAULT_SAMPLE_TYPE                                                                    \
    (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |                   \
     PERF_SAMPLE_CALLCHAIN)
#define MW_LOAD_SAMPLE_TYPE                                                                     \
    (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |                   \
     PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_PERIOD)

/* DWARF unwinding of cpu-clock samples (MEMWATCH_UNWIND): the user registers
 * the unwinder needs (perf_event x86-64 order: AX BX CX DX SI DI BP SP IP,
 * R8..R15; no flags or segment registers) and a copy of the user stack
 * from the sampled stack pointer, unwound at report time with the modules'
 * .eh_frame (sampling/unwind.c), as `perf record --call-graph dwarf` does. */
#define MW_UNWIND_REGS_MASK 0xff01ffull
#define MW_UNWIND_STACK_DEFAULT 8192u
#define MW_UNWIND_STACK_MAX 32768u

/* The highest sampling rate the kernel allows (perf_event_max_sample_rate),
 * or 0 when it cannot be read. */
MW_API unsigned long mw_attr_max_rate(void);

/* Clamp a rate in samples per second to [1, max] (max 0: no clamp). Sets
 * *clamped to 1 when the value changed. */
MW_API unsigned long mw_attr_clamp_rate(unsigned long rate, unsigned long max, int *clamped);

/* cpu-clock sampling of one thread every 1e9/rate ns of its CPU time, user
 * space only, call chains of at most max_stack frames (0: kernel default). */
MW_API void mw_attr_cpu_clock(struct perf_event_attr *a, unsigned long rate,
                              unsigned max_stack);

/* Add the user registers and `stack_bytes` (rounded down to 8, at most
 * MW_UNWIND_STACK_MAX) of user stack to a sampler's attribute. */
MW_API void mw_attr_user_stack(struct perf_event_attr *a, unsigned stack_bytes);

/* Add the user registers alone (MW_UNWIND_REGS_MASK, 136 bytes a sample):
 * the report decodes the sampled instruction and computes its data
 * address from them (memwatch/insn.h, docs/data-addresses.md). */
MW_API void mw_attr_user_regs(struct perf_event_attr *a);

/* Page-fault sampling of one thread, one sample every `period` faults,
 * with its user call chain (at most max_stack frames, 0: the kernel's
 * default). */
MW_API void mw_attr_page_faults(struct perf_event_attr *a, unsigned long period,
                                unsigned max_stack);

/* Precise load sampling. Fills up to *n attributes (a group leader first) for
 * loads slower than ldlat_cycles, sets *n and returns 0; else returns
 * MW_ERR_NOPMU or MW_ERR_UNSUPPORTED and writes the reason into why.
 * sysfs_root may be NULL for "/sys". */
MW_API int mw_attr_precise_loads(const char *sysfs_root, unsigned ldlat_cycles,
                                 unsigned long period, struct perf_event_attr *a, size_t *n,
                                 char *why, size_t why_len);

#ifdef __cplusplus
}
#endif
#endif
