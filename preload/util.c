/*
 * preload/util.c: async-signal-safe string building, the raw stderr logger
 * used on hook and signal paths, clocks and small system calls (util.h).
 * Threading: reentrant; no state of its own.
 */
#include "util.h"

#include "base.h"
#include "config.h"
#include "sys.h"

#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Byte loops for the text of the constructor and of a process's end: the
 * first call of each of libc's string functions costs a lazy binding in the
 * loader (some 800 instructions), more than the tens of bytes copied here.
 * The attribute keeps GCC from making the loops calls again. */
#if defined(__GNUC__) && !defined(__clang__)
#define MWP_NO_LIBCALL __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define MWP_NO_LIBCALL
#endif

MWP_HOT MWP_NO_LIBCALL size_t mwp_len(const char *t)
{
    size_t n = 0;
    while (t[n])
        n++;
    return n;
}

MWP_HOT MWP_NO_LIBCALL void mwp_copy(char *d, const char *t, size_t n)
{
    for (; n >= 8; n -= 8, d += 8, t += 8) {
        uint64_t w;
        __builtin_memcpy(&w, t, 8); /* one load and one store */
        __builtin_memcpy(d, &w, 8);
    }
    while (n--)
        *d++ = *t++;
}

MWP_HOT void mwp_s_mem(struct mwp_str *s, const char *t, size_t n)
{
    if (!s->cap)
        return;
    /* as much of t as fits before the last byte, which holds the 0 */
    size_t room = s->len + 1 < s->cap ? s->cap - 1 - s->len : 0;
    if (n > room)
        n = room;
    mwp_copy(s->p + s->len, t, n);
    s->len += n;
    s->p[s->len] = 0;
}

/* One character, from a register: a one-byte string literal may be merged
 * into the tail of any string of the library, in a page of its own. */
MWP_HOT void mwp_s_ch(struct mwp_str *s, char c)
{
    mwp_s_mem(s, &c, 1);
}

MWP_HOT void mwp_s_str(struct mwp_str *s, const char *t)
{
    mwp_s_mem(s, t ? t : "(null)", mwp_len(t ? t : "(null)"));
}

/* v in decimal, its last digit just before end: where its first is */
MWP_HOT static char *s_dec(char *end, uint64_t v)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return end;
}

MWP_HOT void mwp_s_u64(struct mwp_str *s, uint64_t v)
{
    char b[24], *d = s_dec(b + sizeof b, v);
    mwp_s_mem(s, d, (size_t)(b + sizeof b - d));
}

void mwp_s_hex(struct mwp_str *s, uint64_t v)
{
    char b[16];
    int i = sizeof b;
    do {
        b[--i] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    mwp_s_mem(s, "0x", 2);
    mwp_s_mem(s, b + i, sizeof b - (size_t)i);
}

MWP_HOT void mwp_s_i64(struct mwp_str *s, int64_t v)
{
    if (v < 0) {
        mwp_s_ch(s, '-');
        mwp_s_u64(s, (uint64_t)0 - (uint64_t)v);
    } else {
        mwp_s_u64(s, (uint64_t)v);
    }
}

void mwp_s_dbl(struct mwp_str *s, double v)
{
    if (v != v) {
        mwp_s_str(s, "nan");
        return;
    }
    if (v < 0) {
        mwp_s_ch(s, '-');
        v = -v;
    }
    if (v > 1e18) {
        mwp_s_str(s, "inf");
        return;
    }
    uint64_t ip = (uint64_t)v;
    uint64_t frac = (uint64_t)((v - (double)ip) * 1000.0 + 0.5);
    if (frac >= 1000) {
        ip++;
        frac -= 1000;
    }
    mwp_s_u64(s, ip);
    char f[5] = {'.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
                 (char)('0' + frac % 10), 0};
    mwp_s_mem(s, f, 4);
}

/* "k=" and the n bytes of t then "\n", where all of it fits (one check of
 * the room, the common case): 1, else 0 and nothing written */
MWP_HOT static int s_kv_fits(struct mwp_str *s, const char *k, size_t kl, const char *t, size_t n)
{
    if (!s->cap || s->len + kl + n + 2 >= s->cap)
        return 0;
    char *d = s->p + s->len;
    mwp_copy(d, k, kl);
    d[kl] = '=';
    mwp_copy(d + kl + 1, t, n);
    d[kl + 1 + n] = '\n';
    s->len += kl + n + 2;
    s->p[s->len] = 0;
    return 1;
}

MWP_HOT void mwp_s_kvn(struct mwp_str *s, const char *k, size_t kl, const char *v, size_t vl)
{
    size_t at, end;
    if (s_kv_fits(s, k, kl, v, vl)) {
        end = s->len - 1;
        at = end - vl;
    } else { /* cut at the end of the buffer */
        mwp_s_mem(s, k, kl);
        mwp_s_ch(s, '=');
        at = s->len;
        if (v)
            mwp_s_mem(s, v, vl);
        end = s->len;
        mwp_s_ch(s, '\n');
    }
    /* values are one line: newlines become spaces */
    for (char *p = s->p + at; p < s->p + end; p++)
        if (*p == '\n')
            *p = ' ';
}

MWP_HOT void mwp_s_kvun(struct mwp_str *s, const char *k, size_t kl, uint64_t v)
{
    char b[24], *d = s_dec(b + sizeof b, v);
    size_t n = (size_t)(b + sizeof b - d);
    if (!s_kv_fits(s, k, kl, d, n)) {
        mwp_s_mem(s, k, kl);
        mwp_s_ch(s, '=');
        mwp_s_mem(s, d, n);
        mwp_s_ch(s, '\n');
    }
}

void mwp_s_kvd(struct mwp_str *s, const char *k, double v)
{
    mwp_s_str(s, k);
    mwp_s_ch(s, '=');
    mwp_s_dbl(s, v);
    mwp_s_ch(s, '\n');
}

void mwp_say(int level, const char *a, const char *b, const char *c)
{
    if (level > mwp_cfg.verbose)
        return;
    char buf[1024];
    struct mwp_str s = {buf, sizeof buf, 0};
    mwp_s_str(&s, "memwatch: ");
    if (a)
        mwp_s_str(&s, a);
    if (b)
        mwp_s_str(&s, b);
    if (c)
        mwp_s_str(&s, c);
    if (s.len + 1 >= s.cap)
        s.len = s.cap - 2;
    buf[s.len++] = '\n';
    ssize_t r = write(2, buf, s.len);
    (void)r;
}

uint64_t mwp_clock_ns(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts))
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The same through the system call: the vDSO's first use faults in two
 * pages (its data and the clock page), more than a system call costs; for
 * the constructor and the end of a process that never began, which read
 * the clock once or twice. */
MWP_HOT uint64_t mwp_clock_sys_ns(clockid_t c)
{
    struct timespec ts;
    if (mwp_syscall(SYS_clock_gettime, c, &ts))
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t mwp_now_ns(void)
{
    return mwp_clock_ns(CLOCK_MONOTONIC);
}

MWP_HOT pid_t mwp_gettid(void)
{
    return (pid_t)mwp_syscall(SYS_gettid);
}

MWP_HOT int mwp_sys_close(int fd)
{
    return (int)mwp_syscall(SYS_close, fd);
}
