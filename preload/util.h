/*
 * preload/util.h: util.c's helpers for hook and signal paths: text built in
 * a caller's buffer, the raw stderr logger, clocks and small system calls.
 * No state of its own. Everything here is [AS-safe] and reentrant.
 */
#ifndef MW_PRELOAD_UTIL_H
#define MW_PRELOAD_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Text in a caller's buffer p of cap bytes, len used, always 0-terminated;
 * what does not fit is cut. */
struct mwp_str {
    char *p;
    size_t cap, len;
};
void mwp_s_str(struct mwp_str *s, const char *t);         /* [AS-safe] */
/* strlen and memcpy as byte loops, for a few bytes on the paths of a
 * process that ends at once (util.c says why). [AS-safe] */
size_t mwp_len(const char *t);
void mwp_copy(char *d, const char *t, size_t n);
void mwp_s_mem(struct mwp_str *s, const char *t, size_t n); /* [AS-safe] */
void mwp_s_ch(struct mwp_str *s, char c);                   /* [AS-safe] */
void mwp_s_u64(struct mwp_str *s, uint64_t v);            /* [AS-safe] */
void mwp_s_hex(struct mwp_str *s, uint64_t v);            /* 0x..., lower case. [AS-safe] */
void mwp_s_i64(struct mwp_str *s, int64_t v);             /* [AS-safe] */
void mwp_s_dbl(struct mwp_str *s, double v);              /* %.3f-like. [AS-safe] */
/* "k=v\n", newlines in v as spaces; "k=N\n"; "k=V\n", V as mwp_s_dbl
 * writes it. [AS-safe] The first two take the lengths of the key (kl) and
 * of the value (vl): a short process's META is some 25 of them, and a
 * literal's length is known when the library is compiled (MWP_KLEN). */
void mwp_s_kvn(struct mwp_str *s, const char *k, size_t kl, const char *v, size_t vl);
void mwp_s_kvun(struct mwp_str *s, const char *k, size_t kl, uint64_t v);
void mwp_s_kvd(struct mwp_str *s, const char *k, double v);
#define MWP_KLEN(k) (__builtin_constant_p(__builtin_strlen(k)) ? __builtin_strlen(k) : mwp_len(k))
#define mwp_s_kv(s, k, v) mwp_s_kvn((s), (k), MWP_KLEN(k), (v), (v) ? MWP_KLEN(v) : 0)
#define mwp_s_kvu(s, k, v) mwp_s_kvun((s), (k), MWP_KLEN(k), (v))
/* One line "memwatch: <a><b><c>\n" on stderr when level <= MEMWATCH_VERBOSE.
 * [AS-safe] */
void mwp_say(int level, const char *a, const char *b, const char *c);
/* Clocks in ns, 0 where the clock cannot be read: mwp_clock_ns through the
 * vDSO, mwp_clock_sys_ns through the system call (the constructor and the
 * end of a process that never began: the vDSO's first use faults in two
 * pages). mwp_now_ns: CLOCK_MONOTONIC. [AS-safe] */
uint64_t mwp_clock_ns(clockid_t c);
uint64_t mwp_clock_sys_ns(clockid_t c);
uint64_t mwp_now_ns(void);
pid_t mwp_gettid(void);   /* [AS-safe] */
int mwp_sys_close(int fd); /* close(2) past memwatch's own close hook. [AS-safe] */

#endif
