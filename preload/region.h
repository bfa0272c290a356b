/*
 * preload/region.h: the buffers behind memwatch_region_begin/end
 * (include/memwatch/region.h, docs/regions.md): what the rest of
 * libmemwatch.so asks of them. Owner: region.c.
 */
#ifndef MW_PRELOAD_REGION_H
#define MW_PRELOAD_REGION_H

struct mwp_thr;
struct mwp_rgn;

/* Write t's buffered region events (consumer side: hold t->busy, or be t).
 * [AS-safe] */
void mwp_region_drain(struct mwp_thr *t);
/* A registry slot taken by a new thread: its region state starts empty.
 * [AS-safe] */
void mwp_region_reset(struct mwp_rgn *r);
/* Fork child: names are written again, open regions begin anew. [AS-safe]
 * (fork child). */
void mwp_region_child(void);
/* META region_notes at the end of the image. [AS-safe] */
void mwp_region_finish(void);
/* 1: t has region events not yet written. [AS-safe] */
int mwp_region_pending(const struct mwp_thr *t);

#endif
