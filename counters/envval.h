/*
 * The values of memwatch's MEMWATCH_* variables (docs/config.md), parsed one
 * way for libmemwatch.so, which reads them in every recorded process
 * (preload/config.c), and for `memwatch record`, which checks them before it
 * starts the program (cli/check.c).
 *
 * Internal to memwatch (counters/ is not an exported include folder). Pure
 * functions: no allocation, no state; safe from any thread (not from a
 * signal handler: strtod).
 */
#ifndef MW_COUNTERS_ENVVAL_H
#define MW_COUNTERS_ENVVAL_H

#include <stddef.h>
#include <stdint.h>

/* A non-negative number with an optional unit from suf (NULL-ended,
 * case-insensitive, blanks before it allowed), times mul[i] for suf[i] or
 * dmul without a unit, rounded: "10ms", "2.5 MiB". Returns 0 with *out set,
 * -1 when v is not such a number or the product passes 1.8e19. */
int mw_env_scaled(const char *v, const char *const *suf, const uint64_t *mul, uint64_t dmul,
                  uint64_t *out);

/* 1/yes/true/on and 0/no/false/off (any case). Returns 0 with *out set to
 * 1 or 0, -1 for anything else. */
int mw_env_bool(const char *v, int *out);

/* What MEMWATCH_METHOD (or record's -m) asks for: the keywords auto and
 * none, or a method by name. */
enum mw_env_method {
    MW_ENV_METHOD_BAD = -1, /* none of these */
    MW_ENV_METHOD_AUTO,     /* the machine profile's choice, else the probe */
    MW_ENV_METHOD_NONE,     /* no latency or bandwidth measurement */
    MW_ENV_METHOD_NAMED,    /* a method of the catalogue that the interval thread
                               can read (the probe or a counting method) */
};
enum mw_env_method mw_env_method(const char *v);

/* MEMWATCH_METHOD: 1 where mw_env_method(v) is not MW_ENV_METHOD_BAD. */
int mw_env_method_ok(const char *v);

/* The values mw_env_method_ok takes, for a message: "auto, probe_lat, none,
 * imc_cas, ... or amd_df" (the probe first, then none, then the counting
 * methods in catalogue order), cut to fit buf of n bytes. */
void mw_env_method_choices(char *buf, size_t n);

/* getenv(name), or in libmemwatch.so while its constructor runs the value
 * the constructor found in its one pass over the environment (preload/env.c
 * defines mwp_env_answer; elsewhere it is absent). For the variables the
 * counters library reads itself (the probe's, the profile path's). */
const char *mw_getenv(const char *name);

#endif
