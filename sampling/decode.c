/*
 * sampling/decode.c: kernel perf records -> mw_perf_record, offline.
 *
 * Owns: the PERF_RECORD_SAMPLE field walk in the kernel ABI order of
 * include/uapi/linux/perf_event.h, the struct sample_id trailer of other
 * records, and the non-sample records memwatch uses (LOST, THROTTLE,
 * UNTHROTTLE, MMAP/MMAP2, COMM, EXIT, FORK, LOST_SAMPLES).
 * May call: libc only. Every read goes through a cursor that checks the bytes
 * left first, so a record that lies about its size stops with MW_ERR_CORRUPT.
 * Threading: pure functions, reentrant, no allocation.
 */
#include <memwatch/decode.h>

#include <linux/perf_event.h>
#include <string.h>

#ifndef PERF_SAMPLE_BRANCH_COUNTERS
#define PERF_SAMPLE_BRANCH_COUNTERS (1ULL << 19)
#endif

/* A bounded reader over [p, end). */
typedef struct cur {
    const unsigned char *p, *end;
} cur;

static int cur_u64(cur *c, uint64_t *v)
{
    if ((size_t)(c->end - c->p) < 8)
        return MW_ERR_CORRUPT;
    memcpy(v, c->p, 8);
    c->p += 8;
    return 0;
}

static int cur_u32(cur *c, uint32_t *v)
{
    if ((size_t)(c->end - c->p) < 4)
        return MW_ERR_CORRUPT;
    memcpy(v, c->p, 4);
    c->p += 4;
    return 0;
}

/* Take n bytes (n may be huge when a field lies): returns their start. */
static int cur_take(cur *c, uint64_t n, const void **out)
{
    if (n > (uint64_t)(c->end - c->p))
        return MW_ERR_CORRUPT;
    *out = c->p;
    c->p += n;
    return 0;
}

/* n u64 entries, with overflow-safe size. */
static int cur_u64s(cur *c, uint64_t n, const void **out)
{
    if (n > (uint64_t)(c->end - c->p) / 8)
        return MW_ERR_CORRUPT;
    return cur_take(c, n * 8, out);
}

int mw_sample_fmt_from_attr(const void *attr, size_t n, mw_sample_fmt *out)
{
    struct perf_event_attr a;
    if (!attr || !out || n < PERF_ATTR_SIZE_VER0)
        return MW_ERR_CORRUPT;
    memset(&a, 0, sizeof a);
    memcpy(&a, attr, n < sizeof a ? n : sizeof a);
    memset(out, 0, sizeof *out);
    out->type = a.type;
    out->config = a.config;
    out->sample_type = a.sample_type;
    out->read_format = a.read_format;
    /* Fields beyond the attr's own size were not given: zero them. */
    size_t have = n < sizeof a ? n : sizeof a;
    if (have >= PERF_ATTR_SIZE_VER2)
        out->branch_sample_type = a.branch_sample_type;
    if (have >= PERF_ATTR_SIZE_VER3) {
        out->regs_user_mask = a.sample_regs_user;
        out->use_clockid = a.use_clockid;
        out->clockid = a.use_clockid ? a.clockid : -1;
    } else {
        out->clockid = -1;
    }
    if (have >= PERF_ATTR_SIZE_VER4)
        out->regs_intr_mask = a.sample_regs_intr;
    if (have >= PERF_ATTR_SIZE_VER5)
        out->max_stack = a.sample_max_stack;
    out->sample_id_all = a.sample_id_all;
    out->precise_ip = a.precise_ip;
    return 0;
}

size_t mw_sample_id_size(const mw_sample_fmt *f)
{
    if (!f->sample_id_all)
        return 0;
    uint64_t t = f->sample_type;
    size_t n = 0;
    if (t & PERF_SAMPLE_TID)
        n += 8;
    if (t & PERF_SAMPLE_TIME)
        n += 8;
    if (t & PERF_SAMPLE_ID)
        n += 8;
    if (t & PERF_SAMPLE_STREAM_ID)
        n += 8;
    if (t & PERF_SAMPLE_CPU)
        n += 8;
    if (t & PERF_SAMPLE_IDENTIFIER)
        n += 8;
    return n;
}

static int read_sample_id(const mw_sample_fmt *f, const unsigned char *p, size_t n,
                          mw_sample_id *sid)
{
    cur c = {p, p + n};
    uint64_t t = f->sample_type, v = 0;
    uint32_t a = 0, b = 0;
    int rc = 0;
    memset(sid, 0, sizeof *sid);
    if (t & PERF_SAMPLE_TID) {
        rc |= cur_u32(&c, &a);
        rc |= cur_u32(&c, &b);
        sid->pid = a;
        sid->tid = b;
    }
    if (t & PERF_SAMPLE_TIME)
        rc |= cur_u64(&c, &sid->time);
    if (t & PERF_SAMPLE_ID)
        rc |= cur_u64(&c, &sid->id);
    if (t & PERF_SAMPLE_STREAM_ID)
        rc |= cur_u64(&c, &sid->stream_id);
    if (t & PERF_SAMPLE_CPU) {
        rc |= cur_u32(&c, &sid->cpu);
        rc |= cur_u32(&c, &a);
    }
    if (t & PERF_SAMPLE_IDENTIFIER) {
        rc |= cur_u64(&c, &v);
        sid->id = v;
    }
    return rc ? MW_ERR_CORRUPT : 0;
}

/* Size in bytes of a read_format block. */
static uint64_t read_block_size(uint64_t rf, uint64_t nr_group)
{
    uint64_t per = 8; /* value */
    if (rf & PERF_FORMAT_ID)
        per += 8;
    if (rf & PERF_FORMAT_LOST)
        per += 8;
    uint64_t hdr = 0;
    if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
        hdr += 8;
    if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
        hdr += 8;
    if (rf & PERF_FORMAT_GROUP)
        return 8 + hdr + nr_group * per;
    return hdr + per;
}

static int read_regs(cur *c, uint64_t mask, uint64_t *abi, uint32_t *nr, const void **regs)
{
    int rc = cur_u64(c, abi);
    if (rc)
        return rc;
    *nr = 0;
    *regs = NULL;
    if (*abi == PERF_SAMPLE_REGS_ABI_NONE)
        return 0;
    *nr = (uint32_t)__builtin_popcountll(mask);
    return cur_u64s(c, *nr, regs);
}

int mw_sample_decode(const mw_sample_fmt *f, const void *body, size_t len, mw_sample *s)
{
    cur c = {body, (const unsigned char *)body + len};
    uint64_t t = f->sample_type, v;
    uint32_t a, b;
    int rc;
#define TRY(x)                                                                                 \
    do {                                                                                       \
        if ((rc = (x)) != 0)                                                                   \
            return rc;                                                                         \
    } while (0)
    memset(s, 0, sizeof *s);
    s->present = t;
    if (t & PERF_SAMPLE_IDENTIFIER)
        TRY(cur_u64(&c, &s->id));
    if (t & PERF_SAMPLE_IP)
        TRY(cur_u64(&c, &s->ip));
    if (t & PERF_SAMPLE_TID) {
        TRY(cur_u32(&c, &a));
        TRY(cur_u32(&c, &b));
        s->pid = a;
        s->tid = b;
    }
    if (t & PERF_SAMPLE_TIME)
        TRY(cur_u64(&c, &s->time));
    if (t & PERF_SAMPLE_ADDR)
        TRY(cur_u64(&c, &s->addr));
    if (t & PERF_SAMPLE_ID)
        TRY(cur_u64(&c, &s->id));
    if (t & PERF_SAMPLE_STREAM_ID)
        TRY(cur_u64(&c, &s->stream_id));
    if (t & PERF_SAMPLE_CPU) {
        TRY(cur_u32(&c, &s->cpu));
        TRY(cur_u32(&c, &s->cpu_res));
    }
    if (t & PERF_SAMPLE_PERIOD)
        TRY(cur_u64(&c, &s->period));
    if (t & PERF_SAMPLE_READ) {
        uint64_t nr = 0;
        if (f->read_format & PERF_FORMAT_GROUP) {
            const unsigned char *save = c.p;
            TRY(cur_u64(&c, &nr));
            c.p = save;
            if (nr > len / 8)
                return MW_ERR_CORRUPT;
        }
        uint64_t sz = read_block_size(f->read_format, nr);
        TRY(cur_take(&c, sz, &s->read));
        s->read_size = (uint32_t)sz;
    }
    if (t & PERF_SAMPLE_CALLCHAIN) {
        TRY(cur_u64(&c, &s->callchain_nr));
        TRY(cur_u64s(&c, s->callchain_nr, &s->callchain));
    }
    if (t & PERF_SAMPLE_RAW) {
        TRY(cur_u32(&c, &s->raw_size));
        TRY(cur_take(&c, s->raw_size, &s->raw));
        /* The kernel pads u32 size + data to 8 bytes inside raw_size; be
         * tolerant of a writer that did not, and realign. */
        size_t off = (size_t)(c.p - (const unsigned char *)body);
        if (off & 7) {
            size_t pad = 8 - (off & 7);
            if ((size_t)(c.end - c.p) < pad)
                return MW_ERR_CORRUPT;
            c.p += pad;
        }
    }
    if (t & PERF_SAMPLE_BRANCH_STACK) {
        TRY(cur_u64(&c, &s->branch_nr));
        if (f->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
            TRY(cur_u64(&c, &s->branch_hw_idx));
        if (s->branch_nr > len / 24)
            return MW_ERR_CORRUPT;
        TRY(cur_take(&c, s->branch_nr * 24, &s->branches));
        if (f->branch_sample_type & PERF_SAMPLE_BRANCH_COUNTERS) {
            const void *cnt;
            TRY(cur_u64s(&c, s->branch_nr, &cnt));
        }
    }
    if (t & PERF_SAMPLE_REGS_USER)
        TRY(read_regs(&c, f->regs_user_mask, &s->regs_user_abi, &s->regs_user_nr, &s->regs_user));
    if (t & PERF_SAMPLE_STACK_USER) {
        TRY(cur_u64(&c, &s->stack_user_size));
        if (s->stack_user_size) {
            TRY(cur_take(&c, s->stack_user_size, &s->stack_user));
            TRY(cur_u64(&c, &s->stack_user_dyn_size));
            if (s->stack_user_dyn_size > s->stack_user_size)
                s->stack_user_dyn_size = s->stack_user_size; /* never trust beyond the copy */
        }
    }
    if (t & PERF_SAMPLE_WEIGHT_STRUCT) {
        TRY(cur_u64(&c, &v));
        s->weight_var1 = (uint32_t)v;
        s->weight_var2 = (uint16_t)(v >> 32);
        s->weight_var3 = (uint16_t)(v >> 48);
        s->weight = s->weight_var1;
    } else if (t & PERF_SAMPLE_WEIGHT) {
        TRY(cur_u64(&c, &s->weight));
        s->weight_var1 = (uint32_t)s->weight;
    }
    if (t & PERF_SAMPLE_DATA_SRC)
        TRY(cur_u64(&c, &s->data_src));
    if (t & PERF_SAMPLE_TRANSACTION)
        TRY(cur_u64(&c, &s->transaction));
    if (t & PERF_SAMPLE_REGS_INTR)
        TRY(read_regs(&c, f->regs_intr_mask, &s->regs_intr_abi, &s->regs_intr_nr, &s->regs_intr));
    if (t & PERF_SAMPLE_PHYS_ADDR)
        TRY(cur_u64(&c, &s->phys_addr));
    if (t & PERF_SAMPLE_CGROUP)
        TRY(cur_u64(&c, &s->cgroup));
    if (t & PERF_SAMPLE_DATA_PAGE_SIZE)
        TRY(cur_u64(&c, &s->data_page_size));
    if (t & PERF_SAMPLE_CODE_PAGE_SIZE)
        TRY(cur_u64(&c, &s->code_page_size));
    /* PERF_SAMPLE_AUX and later fields, if any, are left undecoded. */
#undef TRY
    return 0;
}

/* The body of a non-sample record, without its sample_id trailer. */
static int split_trailer(const mw_sample_fmt *f, const unsigned char *body, size_t blen,
                         mw_perf_record *r, size_t *fixed_len)
{
    size_t tl = mw_sample_id_size(f);
    if (tl == 0) {
        *fixed_len = blen;
        return 0;
    }
    if (blen < tl)
        return MW_ERR_CORRUPT;
    int rc = read_sample_id(f, body + blen - tl, tl, &r->sid);
    if (rc)
        return rc;
    r->has_sample_id = 1;
    *fixed_len = blen - tl;
    return 0;
}

int mw_perf_record_decode(const mw_sample_fmt *f, const void *buf, size_t len, mw_perf_record *r)
{
    struct perf_event_header h;
    if (!f || !buf || !r || len < sizeof h)
        return MW_ERR_CORRUPT;
    memcpy(&h, buf, sizeof h);
    if (h.size < sizeof h || h.size > len)
        return MW_ERR_CORRUPT;
    memset(r, 0, sizeof *r);
    r->type = h.type;
    r->misc = h.misc;
    r->size = h.size;
    const unsigned char *body = (const unsigned char *)buf + sizeof h;
    size_t blen = h.size - sizeof h, flen;
    cur c;
    int rc = 0;
    switch (h.type) {
    case PERF_RECORD_SAMPLE:
        rc = mw_sample_decode(f, body, blen, &r->u.sample);
        r->u.sample.misc = h.misc;
        break;
    case PERF_RECORD_LOST:
        if ((rc = split_trailer(f, body, blen, r, &flen)) != 0)
            break;
        c = (cur){body, body + flen};
        rc = cur_u64(&c, &r->u.lost.id) || cur_u64(&c, &r->u.lost.lost) ? MW_ERR_CORRUPT : 0;
        break;
    case PERF_RECORD_LOST_SAMPLES:
        if ((rc = split_trailer(f, body, blen, r, &flen)) != 0)
            break;
        c = (cur){body, body + flen};
        rc = cur_u64(&c, &r->u.lost_samples.lost) ? MW_ERR_CORRUPT : 0;
        break;
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE:
        if ((rc = split_trailer(f, body, blen, r, &flen)) != 0)
            break;
        c = (cur){body, body + flen};
        rc = cur_u64(&c, &r->u.throttle.time) || cur_u64(&c, &r->u.throttle.id) ||
                     cur_u64(&c, &r->u.throttle.stream_id)
                 ? MW_ERR_CORRUPT
                 : 0;
        break;
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT:
        if ((rc = split_trailer(f, body, blen, r, &flen)) != 0)
            break;
        c = (cur){body, body + flen};
        rc = cur_u32(&c, &r->u.task.pid) || cur_u32(&c, &r->u.task.ppid) ||
                     cur_u32(&c, &r->u.task.tid) || cur_u32(&c, &r->u.task.ptid) ||
                     cur_u64(&c, &r->u.task.time)
                 ? MW_ERR_CORRUPT
                 : 0;
        break;
    case PERF_RECORD_COMM: {
        if ((rc = split_trailer(f, body, blen, r, &flen)) != 0)
            break;
        c = (cur){body, body + flen};
        if (cur_u32(&c, &r->u.comm.pid) || cur_u32(&c, &r->u.comm.tid)) {
            rc = MW_ERR_CORRUPT;
            break;
        }
        size_t n = (size_t)(c.end - c.p);
        const unsigned char *z = memchr(c.p, 0, n);
        if (!z) {
            rc = MW_ERR_CORRUPT;
            break;
        }
        n = (size_t)(z - c.p);
        if (n > sizeof r->u.comm.comm - 1)
            n = sizeof r->u.comm.comm - 1;
        memcpy(r->u.comm.comm, c.p, n);
        r->u.comm.comm[n] = 0;
        break;
    }
    case PERF_RECORD_MMAP:
    case PERF_RECORD_MMAP2: {
        if ((rc = split_trailer(f, body, blen, r, &flen)) != 0)
            break;
        c = (cur){body, body + flen};
        if (cur_u32(&c, &r->u.mmap2.pid) || cur_u32(&c, &r->u.mmap2.tid) ||
            cur_u64(&c, &r->u.mmap2.addr) || cur_u64(&c, &r->u.mmap2.len) ||
            cur_u64(&c, &r->u.mmap2.pgoff)) {
            rc = MW_ERR_CORRUPT;
            break;
        }
        if (h.type == PERF_RECORD_MMAP2) {
            const void *u;
            if (cur_take(&c, 24, &u)) {
                rc = MW_ERR_CORRUPT;
                break;
            }
            const unsigned char *ub = u;
            if (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
                uint8_t n = ub[0];
                r->u.mmap2.build_id_size = n > 20 ? 20 : n;
                memcpy(r->u.mmap2.build_id, ub + 4, 20);
            } else {
                memcpy(&r->u.mmap2.maj, ub, 4);
                memcpy(&r->u.mmap2.min, ub + 4, 4);
                memcpy(&r->u.mmap2.ino, ub + 8, 8);
                memcpy(&r->u.mmap2.ino_generation, ub + 16, 8);
            }
            if (cur_u32(&c, &r->u.mmap2.prot) || cur_u32(&c, &r->u.mmap2.flags)) {
                rc = MW_ERR_CORRUPT;
                break;
            }
        }
        size_t n = (size_t)(c.end - c.p);
        if (!memchr(c.p, 0, n)) {
            rc = MW_ERR_CORRUPT;
            break;
        }
        r->u.mmap2.filename = (const char *)c.p;
        break;
    }
    default:
        break; /* known size, unknown body: the caller skips it */
    }
    return rc ? MW_ERR_CORRUPT : (int)h.size;
}

int mw_callchain_marker(uint64_t v)
{
    switch (v) {
    case PERF_CONTEXT_HV: return MW_CTX_HV;
    case PERF_CONTEXT_KERNEL: return MW_CTX_KERNEL;
    case PERF_CONTEXT_USER: return MW_CTX_USER;
    case PERF_CONTEXT_GUEST: return MW_CTX_GUEST_KERNEL;
    case PERF_CONTEXT_GUEST_KERNEL: return MW_CTX_GUEST_KERNEL;
    case PERF_CONTEXT_GUEST_USER: return MW_CTX_GUEST_USER;
    default: return v >= (uint64_t)PERF_CONTEXT_MAX ? MW_CTX_UNKNOWN : -1;
    }
}

size_t mw_callchain_user(const mw_sample *s, uint64_t *out, size_t max)
{
    size_t n = 0;
    int ctx = MW_CTX_UNKNOWN;
    for (uint64_t i = 0; i < s->callchain_nr && n < max; i++) {
        uint64_t v = mw_u64_at(s->callchain, i);
        int m = mw_callchain_marker(v);
        if (m >= 0) {
            ctx = m;
            continue;
        }
        /* Without a marker, treat addresses in the upper half as kernel. */
        int here = ctx != MW_CTX_UNKNOWN ? ctx : (v >> 63 ? MW_CTX_KERNEL : MW_CTX_USER);
        if (here == MW_CTX_USER)
            out[n++] = v;
    }
    return n;
}
