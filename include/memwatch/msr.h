/*
 * Model-specific registers through the Linux msr driver, and safe prefetcher
 * control on top of it (implemented in counters/msr.c; user guide docs/prefetch.md).
 *
 * The device path prefix is a parameter ("/dev/cpu" when NULL): the register of
 * CPU N is read and written with pread/pwrite of 8 bytes at offset <msr> in
 * <prefix>/N/msr, so tests use regular files standing in for the devices.
 *
 * Prefetcher changes are read-modify-write of the catalogue's known bits only
 * (mw_catalogue_prefetch_msr). Before the first change the original values are
 * saved to a state file (written to a temporary name, fsync'ed, renamed); they
 * are written back by mw_prefetch_restore (also after a hard kill, from the
 * file: `memwatch prefetch --restore`) and, inside a guard, on every exit path:
 * normal end, exit(), SIGINT/SIGTERM/SIGHUP/SIGQUIT, and crashes (SIGSEGV,
 * SIGBUS, SIGILL, SIGFPE, SIGABRT), whose handler uses only async-signal-safe
 * calls (open, pread, pwrite, close, unlink, sigaction, raise).
 *
 * Threading: the functions are not thread-safe with each other (one guard per
 * process); mw_msr_read/write are safe from any thread.
 */
#ifndef MEMWATCH_MSR_H
#define MEMWATCH_MSR_H

#include <memwatch/memwatch.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MW_MSR_MAX_CPUS 1024

/* One register of one CPU. Errors: -ENOENT (no device: msr module not loaded),
 * -EACCES/-EPERM (needs root / CAP_SYS_RAWIO; writes may need the kernel's
 * msr.allow_writes=on), -EIO (the CPU or hypervisor has no such register). */
MW_API int mw_msr_read(const char *prefix, unsigned cpu, uint32_t msr, uint64_t *val);
MW_API int mw_msr_write(const char *prefix, unsigned cpu, uint32_t msr, uint64_t val);

/* A sentence for the last failure of this thread's msr calls ("" when none). */
MW_API const char *mw_msr_why(void);

typedef struct mw_prefetch_ctl {
    const char *prefix;     /* NULL: "/dev/cpu" */
    const char *state_path; /* NULL: mw_prefetch_state_default_path() */
    uint32_t msr;           /* 0x1A4, 0xC0000108 (catalogue) */
    uint64_t mask;          /* the known prefetcher bits; 1 = that prefetcher disabled */
    const int *cpus;        /* NULL: every <prefix>/N/msr present, ascending */
    unsigned ncpus;
} mw_prefetch_ctl;

/* $MW_PREFETCH_STATE, else /run/memwatch/prefetch.state (cleared at reboot,
 * when the registers return to their firmware values anyway). */
MW_API int mw_prefetch_state_default_path(char *buf, size_t n);

/* The CPUs addressed (ctl->cpus, or those with a device), ascending; the count
 * or -errno. */
MW_API int mw_prefetch_cpus(const mw_prefetch_ctl *c, int *cpus, unsigned max);

/* Current register values of the CPUs (vals[i] for cpus[i]); the count. */
MW_API int mw_prefetch_show(const mw_prefetch_ctl *c, int *cpus, uint64_t *vals, unsigned max);

/* Switch the known prefetchers off (disable = 1) or on (0) on every CPU. Saves
 * the original values first unless a state file already holds them (so a later
 * --restore returns to the values before the first change). */
MW_API int mw_prefetch_set(const mw_prefetch_ctl *c, int disable);

/* Write the saved known bits back on every CPU of the state file and remove the
 * file. -ENOENT when there is no state file (nothing to restore); MW_ERR_CORRUPT
 * for a damaged one (left in place). A prefix given in c overrides the file's. */
MW_API int mw_prefetch_restore(const mw_prefetch_ctl *c);

/* For the duration of a calibration: saves, installs the exit-path handlers
 * and atexit restore, then switches. guard_end restores, removes the state
 * file and the handlers. One guard at a time (-EBUSY otherwise). */
MW_API int mw_prefetch_guard_begin(const mw_prefetch_ctl *c, int disable);
MW_API int mw_prefetch_guard_end(void);

/* Test hook: called after the register of CPU `cpu` (the index-th) was
 * written by mw_prefetch_set (NULL removes it). */
typedef void (*mw_prefetch_hook)(unsigned index, int cpu, void *user);
MW_API void mw_prefetch_set_hook(mw_prefetch_hook h, void *user);

#ifdef __cplusplus
}
#endif
#endif
