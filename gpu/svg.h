/*
 * gpu/svg.h: small line plots as SVG for memwatch-gpu's calibration curves.
 * Internal to gpu/; plain C; no state.
 */
#ifndef MW_GPU_SVG_H
#define MW_GPU_SVG_H

#include "memwatch/gpu.h"

/* Plot curves (x, y) into an SVG file; a vertical marker at mark_x when > 0.
 * Returns 0 or -errno. */
int mw_svg_plot(const char *path, const char *title, const char *xlabel, const char *ylabel,
                const mw_gpu_curve *const *curves, int ncurves, int logx, double mark_x,
                const char *mark_label);

#endif
