/*
 * libmemwatch.so's one C entry point besides the interposed libc functions.
 *
 * mw_preload_emit writes one record of any MWR type (include/memwatch/mwr.h)
 * into the calling process's raw file. The memwatch CUDA library finds it
 * with dlsym(RTLD_DEFAULT, "mw_preload_emit"), so it needs no link-time
 * dependency on libmemwatch.so:
 *
 *     int (*emit)(uint32_t, const void *, uint32_t) = dlsym(RTLD_DEFAULT, "mw_preload_emit");
 *     if (emit) emit(MWR_GPU_KERNEL, &rec, sizeof rec);
 *
 * The payload is copied and written as one length-prefixed record (padded to
 * 8 bytes) with a single write(2): thread-safe, async-signal-safe, no lock,
 * no malloc. Returns 0, -ENODEV when memwatch is not recording in this
 * process (disabled, failed to create its file, already ended, or called in
 * a vfork child), -EMSGSIZE for payloads above MW_PRELOAD_EMIT_MAX, -EINVAL
 * for MWR_TRAILER (memwatch writes the trailer), or -errno of the write.
 */
#ifndef MEMWATCH_PRELOAD_H
#define MEMWATCH_PRELOAD_H

#include <memwatch/memwatch.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MW_PRELOAD_EMIT_MAX (16u << 20)

typedef int (*mw_preload_emit_fn)(uint32_t type, const void *payload, uint32_t len);

MW_API int mw_preload_emit(uint32_t type, const void *payload, uint32_t len);

#ifdef __cplusplus
}
#endif
#endif
