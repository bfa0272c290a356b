/*
 * gpu/pcsamp.h: PC sampling and SASS-to-source correlation for the injected
 * library (gpu/pcsamp.c). Internal to gpu/. All calls under the caller's lock.
 */
#ifndef MW_GPU_PCSAMP_H
#define MW_GPU_PCSAMP_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

/* NULL while PC sampling works, else why it does not. */
const char *mw_pcs_status(void);
/* Keep a copy of a module's cubin (by CRC) for the source correlation. */
void mw_pcs_module_loaded(const void *image, size_t size);
/* Enable and configure PC sampling on a new context (a sample every
 * 2^period_log2 cycles), started at once when start_now. 0 or -1. */
int mw_pcs_context_created(CUcontext ctx, unsigned period_log2, int start_now);
/* Start / stop sampling on a context: 0, or the CUPTI error of the start. */
int mw_pcs_start(CUcontext ctx);
int mw_pcs_stop(CUcontext ctx);
/* Move what CUPTI has collected into the per-PC table. */
void mw_pcs_drain(CUcontext ctx);
void mw_pcs_drain_all(void);
/* Stop, drain and disable every context (at exit). */
void mw_pcs_stop_all(void);
/* Stop, drain and disable before the context goes. */
void mw_pcs_context_ending(CUcontext ctx);
/* Samples seen and lost, PCs kept. */
void mw_pcs_counts(uint64_t *total, uint64_t *dropped, uint64_t *pcs);

typedef void (*mw_pcs_line_fn)(const char *func, const char *file, uint32_t line, uint64_t pc,
                               uint64_t samples, uint64_t stall_mem, const char *stalls,
                               void *user);
/* Source lines of the functions want() accepts, most sampled first, one call
 * of out() per line with its top stall reasons ("reason=count,..."). Returns
 * the number of lines. */
int mw_pcs_report(int (*want)(const char *func, void *user), mw_pcs_line_fn out, void *user);

#endif
