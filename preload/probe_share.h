/*
 * preload/probe_share.h: probe_lat measurements shared by the recorded
 * processes of this user on this machine, through one page in /dev/shm.
 * Owner: probe_share.c. Every function is [interval thread] (or the inline
 * tick); the page is shared with other processes through atomics alone.
 */
#ifndef MW_PRELOAD_PROBE_SHARE_H
#define MW_PRELOAD_PROBE_SHARE_H

#include <memwatch/probe_lat.h>

#include <stddef.h>
#include <stdint.h>

/* Map the page for probe settings pc in dir (NULL: /dev/shm): 0 with its
 * path, or -errno with why. [interval thread] [not AS-safe] (open, mmap). */
int mwp_pshare_open(const char *dir, const mw_probe_lat_config *pc, char *path, size_t pathsz,
                    char *why, size_t whysz);
/* 1 once the page is mapped. [interval thread] [AS-safe] */
int mwp_pshare_on(void);
/* The NUMA node this thread runs on (getcpu). [interval thread] [AS-safe] */
unsigned mwp_pshare_node(void);
/* 1: this process measures now (the node's slot was free for most of an
 * interval of iv_ns and this process took it); 0: another one did or does.
 * [interval thread] [AS-safe] */
int mwp_pshare_claim(uint64_t now, unsigned node, uint64_t iv_ns);
/* Publish a measurement's median. [interval thread] [AS-safe] */
void mwp_pshare_publish(uint64_t t_ns, unsigned node, double lat_ns);
/* The median of the node's measurements of the last window, if the newest
 * is at most fresh_ns old. Returns how many were pooled (0: none fresh).
 * [interval thread] [AS-safe] */
unsigned mwp_pshare_reading(uint64_t now, unsigned node, uint64_t fresh_ns, double *lat_ns);
/* A measurement in one 64-bit word, and back. Pure. [AS-safe] */
uint64_t mwp_pshare_pack(uint64_t t_ns, unsigned node, double lat_ns);
void mwp_pshare_unpack(uint64_t w, uint64_t *t_ns, unsigned *node, double *lat_ns);

#endif
