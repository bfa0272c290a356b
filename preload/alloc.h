/*
 * preload/alloc.h: allocation tracking: the hooks (alloc.c) and what
 * allocation churn costs, per site, with the blocks recorded (alloc_sites.c,
 * alloc.c's helper). Owners: alloc.c, alloc_sites.c.
 */
#ifndef MW_PRELOAD_ALLOC_H
#define MW_PRELOAD_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* 1 where global, malloc as another file of this library reaches it (its
 * global offset table: the first definition in the process's scope), is
 * this library's own; 0 where the executable or a library loaded before
 * libmemwatch.so defines the program's allocator. [AS-safe] */
int mwp_alloc_ours(void *(*global)(size_t));
/* The allocator behind the hooks is glibc's: free reads its chunk headers
 * first. [AS-safe] (the lazy start's begin, process.c's allocation note,
 * before the hooks record anything). */
void mwp_alloc_glibc_set(void);

/* Every allocation of a site up to MWP_SITE_FULL is recorded; later ones about
 * 1 in mwp_alloc_sample_period(ordinal), at most 1 in MWP_SITE_MAXPER: each
 * recorded one draws the ordinal of the next (mwp_alloc_sample_next). */
#define MWP_SITE_FULL 32u
#define MWP_SITE_MAXPER 1024u
uint64_t mwp_alloc_sample_period(uint64_t n);        /* pure. [AS-safe] */
uint64_t mwp_alloc_sample_next(uint64_t key, uint64_t n); /* pure; after recorded n. [AS-safe] */
int mwp_alloc_site_take(uint64_t pc, size_t n);      /* count; 1: record. [AS-safe] */
/* MWR_ALLOC_SITE records and META alloc_live_overflow (mwp_finish).
 * [AS-safe] */
void mwp_alloc_sites_emit(void);
void mwp_alloc_live_add(const void *p); /* a recorded block. [AS-safe] */
int mwp_alloc_live_take(const void *p); /* 1: write its FREE. [AS-safe] */

#endif
