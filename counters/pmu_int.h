/*
 * counters/pmu_int.h: what the two halves of the PMU code share (internal to
 * counters/): the number and blank parsers of pmu_parse.c, used again by the
 * discovery in pmu_sysfs.c for the files it reads. Public interface: pmu.h.
 */
#ifndef MW_COUNTERS_PMU_INT_H
#define MW_COUNTERS_PMU_INT_H

#include <memwatch/pmu.h>

#include <stdint.h>

/* An unsigned number (decimal or 0x hex) at *p, advancing *p. Returns 0,
 * MW_ERR_PARSE (no digits) or MW_ERR_TOOBIG (overflow). */
int mw_pmu_parse_u64(const char **p, uint64_t *out);

/* s past its leading blanks. */
const char *mw_pmu_skip_ws(const char *s);

#endif
