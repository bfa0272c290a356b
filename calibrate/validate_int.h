/* calibrate/validate_int.h: statistics helpers shared by verdict.c, threshold.c
 * and validate.c (internal to calibrate/; pure, thread-safe). */
#ifndef MW_CALIBRATE_VALIDATE_INT_H
#define MW_CALIBRATE_VALIDATE_INT_H

#include <stddef.h>

/* Median of v[0..n-1]; sorts v in place. NAN for n == 0. */
double mw_val_median_inplace(double *v, size_t n);
/* Median of v without changing it (copies; NAN on n == 0 or no memory). */
double mw_val_median(const double *v, size_t n);
/* Mean and sample standard deviation (sd 0 for n < 2). */
void mw_val_mean_sd(const double *v, size_t n, double *mean, double *sd);

#endif
