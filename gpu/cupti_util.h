/*
 * gpu/cupti_util.h: CUPTI helpers shared by memwatch-gpu and the injected
 * library: a sentence for each CUPTI failure that says what to do about it,
 * and the chip name of a device. Internal to gpu/; plain C; thread-safe.
 */
#ifndef MW_GPU_CUPTI_UTIL_H
#define MW_GPU_CUPTI_UTIL_H

#include <stddef.h>
#include <cupti.h>

/* Writes "<call>: <CUPTI's words> (<name>): <what to do>" into buf. */
void mw_cupti_explain(const char *call, CUptiResult r, char *buf, size_t n);

/* 1 when r says the counters are refused (privileges) or taken (busy). */
int mw_cupti_is_access_error(CUptiResult r);

#endif
