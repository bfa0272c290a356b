/*
 * gpu/inject_out.c: where libmemwatch_cuda.so's records go: through
 * mw_preload_emit() of libmemwatch.so when it is loaded, else its own raw file
 * ($MEMWATCH_GPU_OUT, default ./memwatch-gpu.<pid>.mwr), framed by mwr_frame.h; and
 * the diagnostics of MEMWATCH_GPU_DEBUG=1 (stderr).
 * Threading: mw_cuda_emit and mw_cuda_meta with g.mu held.
 */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inject.h"
#include "memwatch/mwr_frame.h"

void mw_cuda_dbg(const char *fmt, ...)
{
    if (!g.debug)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "memwatch-cuda: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* MEMWATCH_GPU_DEBUG=1 only: a backtrace on SIGSEGV, to stderr. */
void mw_cuda_on_segv(int sig)
{
    void *f[32];
    int n = backtrace(f, 32);
    static const char m[] = "memwatch-cuda: SIGSEGV, backtrace:\n";
    if (write(2, m, sizeof m - 1) < 0)
        _exit(128 + sig);
    backtrace_symbols_fd(f, n, 2);
    signal(sig, SIG_DFL);
    raise(sig);
}

uint64_t mw_cuda_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

void mw_cuda_emit(uint32_t type, const void *a, uint32_t alen, const void *b, uint32_t blen)
{
    uint8_t buf[sizeof(mwr_rec_hdr) + 4096];
    uint32_t len = alen + blen;
    if (len > 4096) {
        g.dropped++;
        return;
    }
    if (g.emit) {
        memcpy(buf, a, alen);
        if (blen)
            memcpy(buf + alen, b, blen);
        if (g.emit(type, buf, len) < 0)
            g.dropped++;
        else
            g.records++;
        return;
    }
    if (g.fd < 0)
        return;
    size_t size = mwr_frame(buf, type, a, alen, b, blen);
    if (write_all(g.fd, buf, size))
        g.dropped++;
    else {
        g.records++;
        g.bytes += size;
    }
}

void mw_cuda_meta(const char *fmt, ...)
{
    char t[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t, sizeof t, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof t)
        n = sizeof t - 1;
    mw_cuda_emit(MWR_GPU_META, t, (uint32_t)n, NULL, 0);
}

void mw_cuda_open_own_file(void)
{
    char path[4096];
    const char *e = getenv("MEMWATCH_GPU_OUT");
    if (e && *e)
        snprintf(path, sizeof path, "%s", e);
    else
        snprintf(path, sizeof path, "memwatch-gpu.%d.mwr", (int)getpid());
    g.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (g.fd < 0)
        return;
    mwr_file_header fh;
    mwr_file_header_init(&fh);
    if (write_all(g.fd, &fh, sizeof fh)) {
        close(g.fd);
        g.fd = -1;
        return;
    }
    char meta[256];
    int n = snprintf(meta, sizeof meta, "%s=libmemwatch_cuda\n%s=%d\n",
                     mw_meta_key(MW_META_WRITER), mw_meta_key(MW_META_PID), (int)getpid());
    mw_cuda_emit(MWR_META, meta, (uint32_t)n, NULL, 0);
}

void mw_cuda_close_own_file(void)
{
    if (g.fd < 0)
        return;
    mwr_trailer t;
    memset(&t, 0, sizeof t);
    t.time_ns = mw_cuda_mono_ns();
    t.records = g.records;
    t.bytes = g.bytes + sizeof(mwr_file_header);
    t.dropped_records = g.dropped;
    mw_cuda_emit(MWR_TRAILER, &t, sizeof t, NULL, 0);
    close(g.fd);
    g.fd = -1;
}
