/*
 * Core-event encoding through libpfm4.
 *
 * memwatch names core events the way libpfm4 does ("skx::L1D_PEND_MISS:PENDING"),
 * always with the PMU prefix, and turns them into a perf_event_attr with
 * pfm_get_os_event_encoding(PFM_OS_PERF_EVENT_EXT). Uncore and other sysfs
 * events do not come through here: they are resolved against
 * /sys/bus/event_source/devices by the PMU discovery code.
 *
 * libpfm4 reads LIBPFM_FORCE_PMU (and its other environment switches) once,
 * in pfm_initialize(); set them before the first call into this header.
 *
 * Thread safety: every function is safe from any thread (initialisation runs
 * once through pthread_once; encoding is serialised by a mutex). None is
 * async-signal-safe; none belongs on a hook path.
 */
#ifndef MEMWATCH_ENCODE_H
#define MEMWATCH_ENCODE_H

#include <linux/perf_event.h>
#include <memwatch/catalogue.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Privilege levels to count (flags of mw_pfm_encode). 0 means both. */
enum mw_enc_flag {
    MW_ENC_USER = 1u << 0,   /* count user space (exclude_kernel when alone) */
    MW_ENC_KERNEL = 1u << 1, /* count the kernel (exclude_user when alone) */
};

/* Initialises libpfm4 once (idempotent). 0, or MW_ERR_PFM with the libpfm4
 * message logged. Every other function here calls it. */
MW_API int mw_pfm_init(void);

/* The installed libpfm4 release, "4.13" (from the name of the loaded shared object;
 * "4.x" when that cannot be read, "unknown" when libpfm4 cannot start). */
MW_API const char *mw_pfm_version(void);

/* libpfm4's core PMU name for a microarchitecture ("skx", "amd64_fam19h_zen4");
 * NULL for MW_UARCH_UNKNOWN. A name may be one the installed libpfm4 lacks
 * ("gnr", "adl_glc", "amd64_fam1ah_zen5" on 4.13): see mw_pfm_pmu_status. */
MW_API const char *mw_uarch_pfm_pmu(mw_uarch u);

/* What the installed libpfm4 makes of a PMU name:
 *   1             it knows the model and it is active (detected on this CPU, or
 *                 forced with LIBPFM_FORCE_PMU);
 *   0             it knows the model but did not detect it here;
 *   MW_ERR_NOPMU  this libpfm4 has no such model;
 *   MW_ERR_PFM    libpfm4 failed to start. */
MW_API int mw_pfm_pmu_status(const char *pfm_pmu);

/* Whether the core events of microarchitecture u can be encoded here: 1 when
 * its libpfm4 PMU (or a twin with the same event table, e.g. "emr" for "spr") is
 * active; otherwise the reason goes into why and the result is MW_ERR_NOPMU
 * (this libpfm4 lacks the model, or did not detect it on this CPU),
 * MW_ERR_UNSUPPORTED (memwatch has no core table for u: MW_UARCH_UNKNOWN) or
 * MW_ERR_PFM. This is the check `memwatch probe` reports per method. */
MW_API int mw_pfm_uarch_status(mw_uarch u, char *why, size_t why_cap);

/* The core PMU libpfm4 detected on this CPU (its default PMU of type "core"),
 * copied into buf; MW_ERR_NOPMU when it recognises none. */
MW_API int mw_pfm_host_pmu(char *buf, size_t cap);

/*
 * mw_pfm_encode_ex: encodes `event` (a libpfm4 event string, with or without
 * "pmu::" prefix, with modifiers such as ":ldlat=64:precise=2") into *attr.
 * *attr is zeroed first, then type, config, config1, config2, precise_ip and the
 * exclude_* bits are set from libpfm4's answer; size is sizeof(*attr); all other
 * fields (sample period, read format, ...) are left 0 for the caller.
 * Returns 0; MW_ERR_NOPMU when the prefixed PMU is unknown to this libpfm4 or not
 * active on this CPU; MW_ERR_NOEVENT for an event or modifier libpfm4 does not
 * know; MW_ERR_PFM for other libpfm4 failures. On failure the reason, in words,
 * goes to the log and, when why != NULL, into why (NUL-terminated).
 */
MW_API int mw_pfm_encode_ex(const char *event, unsigned flags, struct perf_event_attr *attr,
                            char *why, size_t why_cap);
MW_API int mw_pfm_encode(const char *event, unsigned flags, struct perf_event_attr *attr);

/*
 * mw_pfm_encode_spec: encodes a catalogue event (ev->pfm must be set; a sysfs
 * event gives -EINVAL) and checks the result against the catalogue's expected
 * ev->config / ev->config1: a difference gives MW_ERR_PFM with both values in
 * the reason, because it means the installed libpfm4 disagrees with the table.
 */
MW_API int mw_pfm_encode_spec(const mw_event_spec *ev, unsigned flags, struct perf_event_attr *attr,
                              char *why, size_t why_cap);

#ifdef __cplusplus
}
#endif
#endif
