/* calibrate/validate_int.h: statistics helpers shared by verdict.c, threshold.c
 * and validate.c (internal to calibrate/; pure, thread-safe). */
#ifndef MW_CALIBRATE_VALIDATE_INT_H
#define MW_CALIBRATE_VALIDATE_INT_H

#include <stddef.h>

#include <memwatch/validate.h>

/* mw_val_median_inplace: include/memwatch/validate.h */
/* Median of v without changing it (copies; NAN on n == 0 or no memory). */
double mw_val_median(const double *v, size_t n);
/* Mean and sample standard deviation (sd 0 for n < 2). */
void mw_val_mean_sd(const double *v, size_t n, double *mean, double *sd);

/* (max - min) / median of v (NAN for n == 0 or a median <= 0). */
double mw_val_rel_spread(const double *v, size_t n);
/* A grid point's readings look disturbed by a load the validation did not
 * start (another process, another tenant of the host) when they spread more
 * than MW_VAL_DISTURBED_FACTOR times the idle point's relative spread
 * (ref_spread, floored at MW_VAL_SPREAD_FLOOR). validate.c measures such a
 * point again (at most MW_VAL_RETRIES times, keeping the last attempt) and says
 * how many it measured again. */
#define MW_VAL_DISTURBED_FACTOR 3.0
#define MW_VAL_SPREAD_FLOOR 0.05
#define MW_VAL_RETRIES 2
int mw_val_point_disturbed(const double *ns, size_t n, double ref_spread);

struct mw_verdict_rules;
/* The start of every verdict (mw_verdict_bw, mw_verdict_lat,
 * mw_threshold_compute): -EINVAL without out, or without items when n > 0;
 * else out (out_size bytes) zeroed and *rules the rules to apply: the defaults,
 * written into *def, where it is NULL. */
int mw_val_verdict_begin(const void *items, size_t n, void *out, size_t out_size,
                         const struct mw_verdict_rules **rules, struct mw_verdict_rules *def);

struct mw_method_def;
struct mw_probe;
struct mw_validate_config;
struct mw_validation;
struct mw_val_method;

/* Measure one available bandwidth method against the read load's exact volume
 * (calibrate/validate_bw.c): fills m->bw and m->reason; prefetchers off and on
 * where the MSR is reachable. Returns 0, or a negative code when the method
 * could not be measured after all (m->reason says why). */
int mw_val_bw_method(const struct mw_method_def *def, const struct mw_probe *pr,
                     const struct mw_validate_config *cfg, const int *cpus, int ncpus,
                     struct mw_validation *v, struct mw_val_method *m);

/* Measure one counting latency method (lmrl, l1_miss_lat) over the read-sweep
 * grid on the load threads' CPUs (calibrate/validate_bw.c): fills m->lat and
 * m->reason; readings in core cycles per miss. */
int mw_val_lat_counter_method(const struct mw_method_def *def, const struct mw_probe *pr,
                              const struct mw_validate_config *cfg, const int *cpus, int ncpus,
                              struct mw_validation *v, struct mw_val_method *m);

/* The load shapes (calibrate/shapes.c): fills v->shape, v->shapes (and
 * the classes' shapes_reads, shapes_writes) and v->shape_note; ncpu CPUs'
 * worth of workers; progress counts one per shape of the first rounds into
 * *done of total. 0 or a negative code. */
int mw_val_shapes(const struct mw_validate_config *cfg, unsigned ncpu, struct mw_validation *v,
                  unsigned *done, unsigned total);
/* Whether a shape's mode writes memory (copy, triad, nt): its threshold
 * class (docs/saturation.md, "Loads that write"). */
int mw_val_shape_writes(const char *mode);
/* Whether both classes' thresholds were placed (memory saturated): then the
 * profile's threshold is the read-only loads' and it has a writes' one. */
int mw_val_shape_classes(const struct mw_validation *v);

#endif
