/*
 * tests/report/mwr_build.h: a small in-memory .mwr writer for tests, built
 * from include/memwatch/mwr.h alone (so report tests do not depend on the
 * preload library). Records are appended to a growable buffer and can be
 * written to a file. Perf samples are laid out per the kernel ABI for the
 * sample_type given to mwb_attr.
 */
#ifndef MW_TEST_MWR_BUILD_H
#define MW_TEST_MWR_BUILD_H

#include <memwatch/mwr_frame.h>

#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Not every test uses every helper. */
#define MWB_FN static __attribute__((unused))

typedef struct mwb {
    unsigned char *b;
    size_t n, cap;
    uint64_t records;
} mwb;

MWB_FN void mwb_put(mwb *w, const void *p, size_t n)
{
    if (w->n + n + 8 > w->cap) {
        w->cap = (w->n + n + 8) * 2 + 4096;
        w->b = realloc(w->b, w->cap);
    }
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

MWB_FN void mwb_pad(mwb *w)
{
    static const unsigned char z[8];
    if (w->n & 7)
        mwb_put(w, z, 8 - (w->n & 7));
}

MWB_FN void mwb_init(mwb *w)
{
    memset(w, 0, sizeof *w);
    mwr_file_header h;
    mwr_file_header_init(&h);
    mwb_put(w, &h, sizeof h);
}

/* A record from up to two parts (fixed struct + variable bytes). */
MWB_FN void mwb_rec(mwb *w, uint32_t type, const void *a, size_t an, const void *b, size_t bn)
{
    mwr_rec_hdr h = mwr_rec_hdr_make(type, an + bn);
    mwb_put(w, &h, sizeof h);
    if (an)
        mwb_put(w, a, an);
    if (bn)
        mwb_put(w, b, bn);
    mwb_pad(w);
    w->records++;
}

MWB_FN void mwb_meta(mwb *w, const char *text) { mwb_rec(w, MWR_META, text, strlen(text), 0, 0); }

MWB_FN void mwb_attr_regs(mwb *w, uint32_t id, const char *name, uint32_t type, uint64_t config,
                          uint64_t sample_type, uint64_t regs_user, uint32_t stack_user);

MWB_FN void mwb_attr(mwb *w, uint32_t id, const char *name, uint32_t type, uint64_t config,
                     uint64_t sample_type)
{
    mwb_attr_regs(w, id, name, type, config, sample_type, 0, 0);
}

MWB_FN void mwb_attr_regs(mwb *w, uint32_t id, const char *name, uint32_t type, uint64_t config,
                          uint64_t sample_type, uint64_t regs_user, uint32_t stack_user)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = type;
    a.config = config;
    a.sample_type = sample_type;
    a.use_clockid = 1;
    a.clockid = 1;
    a.sample_regs_user = regs_user;
    a.sample_stack_user = stack_user;
    mwr_perf_attr pa;
    memset(&pa, 0, sizeof pa);
    pa.attr_id = id;
    pa.attr_size = sizeof a;
    snprintf(pa.name, sizeof pa.name, "%s", name);
    mwb_rec(w, MWR_PERF_ATTR, &pa, sizeof pa, &a, sizeof a);
}

/* A kernel sample record for sample_type IP|TID|TIME[|ADDR][|CALLCHAIN]
 * [|WEIGHT][|DATA_SRC] (in ABI order) appended to buf. */
typedef struct mwb_sample {
    uint64_t ip, time, addr, weight, data_src;
    uint32_t pid, tid;
    const uint64_t *chain;
    uint32_t chain_nr;
} mwb_sample;

MWB_FN size_t mwb_kernel_sample(unsigned char *buf, uint64_t st, const mwb_sample *s)
{
    size_t n = 8;
#define P64(v)                                                                                 \
    do {                                                                                       \
        uint64_t v_ = (v);                                                                     \
        memcpy(buf + n, &v_, 8);                                                               \
        n += 8;                                                                                \
    } while (0)
    if (st & PERF_SAMPLE_IP)
        P64(s->ip);
    if (st & PERF_SAMPLE_TID)
        P64((uint64_t)s->pid | (uint64_t)s->tid << 32);
    if (st & PERF_SAMPLE_TIME)
        P64(s->time);
    if (st & PERF_SAMPLE_ADDR)
        P64(s->addr);
    if (st & PERF_SAMPLE_PERIOD)
        P64(1);
    if (st & PERF_SAMPLE_CALLCHAIN) {
        P64(s->chain_nr + 1);
        P64((uint64_t)PERF_CONTEXT_USER);
        for (uint32_t i = 0; i < s->chain_nr; i++)
            P64(s->chain[i]);
    }
    if (st & PERF_SAMPLE_WEIGHT)
        P64(s->weight);
    if (st & PERF_SAMPLE_DATA_SRC)
        P64(s->data_src);
#undef P64
    struct perf_event_header h = {PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, (uint16_t)n};
    memcpy(buf, &h, sizeof h);
    return n;
}

MWB_FN void mwb_perf_data(mwb *w, uint32_t attr_id, uint32_t tid, uint64_t t,
                          const unsigned char *recs, size_t n)
{
    mwr_perf_data pd = {attr_id, tid, t};
    mwb_rec(w, MWR_PERF_DATA, &pd, sizeof pd, recs, n);
}

MWB_FN void mwb_interval(mwb *w, uint64_t t0, uint64_t t1, uint32_t flags, double lat)
{
    mwr_interval iv;
    memset(&iv, 0, sizeof iv);
    iv.t_start_ns = t0;
    iv.t_end_ns = t1;
    iv.flags = flags | MWR_IV_LAT_VALID;
    iv.nthreads = 1;
    iv.latency_ns = lat;
    iv.threshold_ns = 150;
    snprintf(iv.lat_method, sizeof iv.lat_method, "probe_lat");
    mwb_rec(w, MWR_INTERVAL, &iv, sizeof iv, 0, 0);
}

MWB_FN void mwb_alloc(mwb *w, uint64_t t, uint64_t addr, uint64_t size, const uint64_t *frames,
                      uint16_t nframes)
{
    mwr_alloc a;
    memset(&a, 0, sizeof a);
    a.time_ns = t;
    a.addr = addr;
    a.size = size;
    a.tid = 1;
    a.kind = MWR_A_MALLOC;
    a.nframes = nframes;
    mwb_rec(w, MWR_ALLOC, &a, sizeof a, frames, 8u * nframes);
}

MWB_FN void mwb_free(mwb *w, uint64_t t, uint64_t addr)
{
    mwr_free f;
    memset(&f, 0, sizeof f);
    f.time_ns = t;
    f.addr = addr;
    f.tid = 1;
    f.kind = 1;
    mwb_rec(w, MWR_FREE, &f, sizeof f, 0, 0);
}

MWB_FN void mwb_module(mwb *w, const char *path, uint64_t base, uint64_t start, uint64_t end)
{
    mwr_module m;
    memset(&m, 0, sizeof m);
    m.base = base;
    m.start = start;
    m.end = end;
    m.path_len = (uint32_t)strlen(path);
    mwb_rec(w, MWR_MODULE, &m, sizeof m, path, strlen(path));
}

MWB_FN void mwb_trailer(mwb *w, uint64_t t, uint64_t lost)
{
    mwr_trailer tr;
    memset(&tr, 0, sizeof tr);
    tr.time_ns = t;
    tr.records = w->records;
    tr.bytes = w->n;
    tr.lost_samples = lost;
    mwb_rec(w, MWR_TRAILER, &tr, sizeof tr, 0, 0);
}

MWB_FN int mwb_write(const mwb *w, const char *path, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t k = fwrite(w->b, 1, n, f);
    fclose(f);
    return k == n ? 0 : -1;
}

#endif
