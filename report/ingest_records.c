/*
 * report/ingest_records.c: the records of one raw file (report/ingest.h).
 *
 * Owns: the record switch (every record decoded through report/reader.c's
 * typed accessors), the kernel records inside PERF_DATA (sampling/decode.c),
 * the threads of the file, its intervals, and the samples' rows: call chain
 * (or offline unwinding), interval and hybrid selection, data object.
 * May call: mwr_reader, decode, ing_db, ing_code, ing_objects, libc.
 */
#include "ingest.h"

#include <memwatch/meta_keys.h>

#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>

static ing_thr *thread_get(ing_file *f, uint32_t tid)
{
    int64_t *i = ing_hmap_get(&f->thr_idx, tid, 0);
    if (i)
        return &f->thrs.v[*i];
    ing_thr t = {0};
    t.tid = tid;
    if (ING_VEC_PUSH(f->thrs, t))
        return NULL;
    ing_hmap_put(&f->thr_idx, tid, 0, (int64_t)f->thrs.n - 1);
    return &f->thrs.v[f->thrs.n - 1];
}

/* An interval without a latency reading written with threshold 0 (the
 * last, partial interval of a process and the waiting interval of inline
 * intervals, in files from recorders that left the threshold out there)
 * gets the threshold in force: that of the interval before it (prev, this
 * file's; its flags stay as written), so that the threshold does not fall
 * to 0 at a process's end. Where none had a threshold yet, 0 stays.
 * 0, or -1 on a database error. */
static int threshold_in_force(ing_file *f, int64_t prev, mwr_interval *iv)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(f->db->db, "SELECT threshold_ns FROM intervals WHERE id = ?", -1, &s,
                           NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(s, 1, prev);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW && sqlite3_column_double(s, 0) > 0)
        iv->threshold_ns = sqlite3_column_double(s, 0);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

static int loss(ing_file *f, uint64_t t, uint32_t tid, int64_t ev, const char *kind, uint64_t n)
{
    f->st->losses++;
    return ing_db_loss(f->db, f->proc, t, tid, ev, kind, n);
}

/* A kernel sample, kept until the file's intervals and allocations are known. */
static int on_sample(ing_file *f, const ing_attr *a, const mwr_perf_data *pd, const mw_sample *s)
{
    ing_smp x = {0};
    x.time = (s->present & PERF_SAMPLE_TIME) ? s->time : pd->time_ns;
    x.ip = s->ip;
    x.addr = s->addr;
    x.weight = s->weight;
    x.data_src = s->data_src;
    x.period = s->period;
    x.phys = s->phys_addr;
    x.chain = s->callchain;
    x.chain_nr = s->callchain_nr > 0xffff ? 0xffff : (uint32_t)s->callchain_nr;
    x.tid = (s->present & PERF_SAMPLE_TID) ? s->tid : pd->tid;
    x.cpu = (s->present & PERF_SAMPLE_CPU) ? s->cpu : UINT32_MAX;
    x.attr_idx = (uint32_t)(a - f->attrs.v);
    /* x86-64 user SP is register 7 (PERF_REG_X86_SP) */
    if (s->regs_user_abi && (a->fmt.regs_user_mask >> 7 & 1)) {
        unsigned idx = (unsigned)__builtin_popcountll(a->fmt.regs_user_mask & 0x7f);
        if (idx < s->regs_user_nr)
            x.sp = mw_u64_at(s->regs_user, idx);
        if (s->regs_user_nr == (uint32_t)__builtin_popcountll(a->fmt.regs_user_mask)) {
            x.regs = s->regs_user;
            x.regs_nr = s->regs_user_nr;
            if (s->stack_user_dyn_size) {
                x.stack = s->stack_user;
                x.stack_size = (uint32_t)s->stack_user_dyn_size;
            }
        }
    }
    return ING_VEC_PUSH(f->smps, x);
}

/* An MMAP or MMAP2 record: a [stack] mapping or an executable file mapping. */
static int on_mmap(ing_file *f, const mw_perf_record *r)
{
    const char *fn = r->u.mmap2.filename;
    ing_pmod pm = {r->u.mmap2.addr, r->u.mmap2.addr + r->u.mmap2.len, 0, 0, 0};
    if (!strncmp(fn, "[stack", 6)) {
        pm.is_stack = 1;
        return ing_code_map(f->code, &pm);
    }
    if (fn[0] == '/' && (r->u.mmap2.prot & 4 /* PROT_EXEC */ || r->type == PERF_RECORD_MMAP)) {
        /* bias = map start - file offset: exact for the usual layouts where
         * the first PT_LOAD has p_vaddr == p_offset */
        pm.base = r->u.mmap2.addr - r->u.mmap2.pgoff;
        size_t gi;
        if (ing_code_module(f->code, fn, strlen(fn), r->u.mmap2.build_id,
                            r->u.mmap2.build_id_size, &gi) == 0) {
            pm.gi = gi;
            return ing_code_map(f->code, &pm);
        }
    }
    return 0;
}

static int on_perf_data(ing_file *f, const mwr_perf_data *pd, const unsigned char *p, size_t len)
{
    ing_attr *a = NULL;
    for (size_t i = 0; i < f->attrs.n; i++)
        if (f->attrs.v[i].attr_id == pd->attr_id)
            a = &f->attrs.v[i];
    if (!a) {
        f->st->bad_perf_records++;
        mw_log(MW_LOG_WARN, "perf data for unknown attr %u skipped", pd->attr_id);
        return 0;
    }
    size_t off = 0;
    while (off + 8 <= len) {
        mw_perf_record r;
        int rc = mw_perf_record_decode(&a->fmt, p + off, len - off, &r);
        if (rc <= 0) {
            f->st->bad_perf_records++;
            return 0; /* cannot resynchronize inside this block */
        }
        off += (size_t)rc;
        f->st->perf_records++;
        uint32_t tid = r.has_sample_id && r.sid.tid ? r.sid.tid : pd->tid;
        uint64_t t = r.has_sample_id ? r.sid.time : pd->time_ns;
        switch (r.type) {
        case PERF_RECORD_SAMPLE:
            if (on_sample(f, a, pd, &r.u.sample))
                return -ENOMEM;
            break;
        case PERF_RECORD_LOST:
            if (loss(f, t, tid, a->event_id, "lost", r.u.lost.lost))
                return -EIO;
            break;
        case PERF_RECORD_LOST_SAMPLES:
            if (loss(f, t, tid, a->event_id, "lost_samples", r.u.lost_samples.lost))
                return -EIO;
            break;
        case PERF_RECORD_THROTTLE:
        case PERF_RECORD_UNTHROTTLE:
            if (loss(f, r.u.throttle.time, tid, a->event_id,
                     r.type == PERF_RECORD_THROTTLE ? "throttle" : "unthrottle", 1))
                return -EIO;
            break;
        case PERF_RECORD_COMM: {
            ing_thr *th = thread_get(f, r.u.comm.tid);
            if (th)
                snprintf(th->name, sizeof th->name, "%s", r.u.comm.comm);
            break;
        }
        case PERF_RECORD_FORK:
        case PERF_RECORD_EXIT: {
            ing_thr *th = thread_get(f, r.u.task.tid);
            if (th) {
                if (r.type == PERF_RECORD_FORK)
                    th->t_start = r.u.task.time;
                else
                    th->t_end = r.u.task.time;
            }
            break;
        }
        case PERF_RECORD_MMAP:
        case PERF_RECORD_MMAP2:
            if (on_mmap(f, &r))
                return -ENOMEM;
            break;
        default:
            break;
        }
    }
    if (off != len)
        f->st->bad_perf_records++;
    return 0;
}

static int on_perf_attr(ing_file *f, const mw_record *rec)
{
    mwr_perf_attr pa;
    const void *ab;
    ing_attr a = {0};
    if (mw_rec_perf_attr(rec, &pa, &ab) || mw_sample_fmt_from_attr(ab, pa.attr_size, &a.fmt))
        return MW_ERR_CORRUPT;
    a.attr_id = pa.attr_id;
    a.source = mw_sample_source_of(&a.fmt, pa.name);
    a.event_id = ing_db_event_id(f->db, f->proc, &pa, mw_sample_source_name(a.source), &a.fmt);
    if (a.event_id < 0)
        return -EIO;
    return ING_VEC_PUSH(f->attrs, a);
}

static int on_thread(ing_file *f, const mwr_thread *t)
{
    ing_thr *th = thread_get(f, t->tid);
    if (!th)
        return -ENOMEM;
    if (t->event == MWR_THREAD_START)
        th->t_start = t->time_ns;
    else if (t->event == MWR_THREAD_EXIT)
        th->t_end = t->time_ns;
    if (t->name[0])
        snprintf(th->name, sizeof th->name, "%s", t->name);
    if (t->fs_base)
        th->fs_base = t->fs_base;
    return 0;
}

static int on_module(ing_file *f, const mwr_module *m, const char *path)
{
    size_t plen = strnlen(path, m->path_len);
    if (m->flags & (MWR_MODULE_DATA_FILE | MWR_MODULE_DATA_ANON))
        return ing_objects_data_file(f->objs, m, path, plen);
    size_t gi;
    int rc = ing_code_module(f->code, path, plen, m->build_id, m->build_id_size, &gi);
    if (rc)
        return rc;
    ing_pmod pm = {m->start, m->end > m->start ? m->end : m->start + 1, m->base, gi, 0};
    if (ing_db_process_module(f->db, f->proc, f->code->gmods.v[gi].db_id, m))
        return -EIO;
    return ing_code_map(f->code, &pm);
}

/* META and GPU_META: the text into meta; the size cap's and short threads' losses. */
static int on_meta(ing_file *f, const mw_record *rec)
{
    const char *t;
    size_t n;
    mw_rec_text(rec, &t, &n);
    int e = ing_db_meta(f->db, f->proc, t, n);
    /* samples memwatch record's size cap kept out (--max-size): a loss */
    const char *k = rec->type == MWR_META ? memmem(t, n, "samples_dropped=", 16) : NULL;
    if (!e && k && (k == t || k[-1] == '\n')) {
        unsigned long long dropped = strtoull(k + 16, NULL, 10);
        if (dropped)
            e = loss(f, 0, 0, 0, "size_cap", dropped);
    }
    /* samples threads shorter than one sampling period never got
     * (preload/threads.c): a loss of that many samples */
    k = rec->type == MWR_META ? memmem(t, n, "samples_short_threads=", 22) : NULL;
    if (!e && k && (k == t || k[-1] == '\n')) {
        unsigned long long missed = strtoull(k + 22, NULL, 10);
        if (missed)
            e = loss(f, 0, 0, 0, "short_threads", missed);
    }
    return e;
}

/* An interval: its row, the threshold in force, and its place for the samples. */
static int on_interval(ing_file *f, const mw_record *rec)
{
    mwr_interval iv;
    if (mw_rec_interval(rec, &iv))
        return MW_ERR_CORRUPT;
    if (iv.threshold_ns <= 0 && !(iv.flags & MWR_IV_LAT_VALID) && f->ivs.n > 0 &&
        threshold_in_force(f, f->ivs.v[f->ivs.n - 1].id, &iv))
        return -EIO;
    int64_t id = ing_db_interval_id(f->db, f->proc, &iv);
    if (id < 0)
        return -EIO;
    mw_hybrid_iv h = {iv.t_start_ns, iv.t_end_ns, iv.flags, id};
    f->st->intervals++;
    double lat = (iv.flags & MWR_IV_LAT_VALID) ? iv.latency_ns : NAN;
    if (ING_VEC_PUSH(f->ivlat, lat))
        return -ENOMEM;
    return ING_VEC_PUSH(f->ivs, h);
}

/* CPU time: the process's (tid 0) or a thread's. */
static int on_cpu(ing_file *f, const mw_record *rec)
{
    mwr_cpu u;
    if (mw_rec_cpu(rec, &u))
        return MW_ERR_CORRUPT;
    if (u.tid == 0) {
        f->cpu = u;
        f->have_cpu = 1;
        return 0;
    }
    ing_thr *th = thread_get(f, u.tid);
    if (!th)
        return -ENOMEM;
    th->have_cpu = 1;
    th->user_ns = u.user_ns;
    th->system_ns = u.system_ns;
    return 0;
}

/* An allocation, with its stack copy where recorded. */
static int on_alloc(ing_file *f, const mw_record *rec)
{
    mwr_alloc a;
    const void *fr, *regs = NULL, *copy = NULL;
    mwr_alloc_stack as;
    if (mw_rec_alloc(rec, &a, &fr))
        return MW_ERR_CORRUPT;
    if ((a.kind & MWR_A_STACK) && mw_rec_alloc_stack(rec, &a, &as, &regs, &copy))
        return MW_ERR_CORRUPT;
    f->st->allocations++;
    return ing_objects_alloc(f->objs, &a, fr, regs ? &as : NULL, regs, copy);
}

/* A GPU kernel, its name stored demangled. */
static int on_gpu_kernel(ing_file *f, const mw_record *rec)
{
    mwr_gpu_kernel k;
    const char *name;
    if (mw_rec_gpu_kernel(rec, &k, &name))
        return MW_ERR_CORRUPT;
    /* stored whole and demangled (C++ templates: docs/gpu.md) */
    char *nm = strndup(name, k.name_len);
    if (!nm)
        return -ENOMEM;
    const char *dn = ing_code_demangle(f->code, nm);
    mwr_gpu_kernel k2 = k;
    k2.name_len = (uint32_t)strlen(dn);
    int e = ing_db_gpu_kernel(f->db, f->proc, &k2, dn);
    free(nm);
    return e;
}

/* A GPU source line with its top stall reasons. */
static int on_gpu_pc(ing_file *f, const mw_record *rec)
{
    mwr_gpu_pc g;
    const char *file, *func;
    if (mw_rec_gpu_pc(rec, &g, &file, &func))
        return MW_ERR_CORRUPT;
    /* The line's top stall reasons follow the strings as text, up to the
     * framing's NUL padding (include/memwatch/mwr_gpu.h). */
    const char *stalls = func + g.func_len;
    size_t sl = rec->payload_len - sizeof g - g.file_len - g.func_len;
    while (sl && !stalls[sl - 1])
        sl--;
    return ing_db_gpu_pc(f->db, f->proc, &g, file, func, stalls, sl);
}

int ing_file_record(ing_file *f, const mw_record *rec)
{
    switch (rec->type) {
    case MWR_META:
    case MWR_GPU_META:
        return on_meta(f, rec);
    case MWR_LOG: {
        const char *t;
        size_t n;
        mw_rec_text(rec, &t, &n);
        return ing_db_log(f->db, f->proc, t, n);
    }
    case MWR_PERF_ATTR:
        return on_perf_attr(f, rec);
    case MWR_PERF_DATA: {
        mwr_perf_data pd;
        const void *d;
        size_t n;
        if (mw_rec_perf_data(rec, &pd, &d, &n))
            return MW_ERR_CORRUPT;
        return on_perf_data(f, &pd, d, n);
    }
    case MWR_INTERVAL:
        return on_interval(f, rec);
    case MWR_THREAD: {
        mwr_thread t;
        if (mw_rec_thread(rec, &t))
            return MW_ERR_CORRUPT;
        return on_thread(f, &t);
    }
    case MWR_CPU:
        return on_cpu(f, rec);
    case MWR_ALLOC:
        return on_alloc(f, rec);
    case MWR_FREE: {
        mwr_free fr;
        if (mw_rec_free(rec, &fr))
            return MW_ERR_CORRUPT;
        return ing_objects_free(f->objs, &fr);
    }
    case MWR_ALLOC_SITE: {
        mwr_alloc_site as;
        if (mw_rec_alloc_site(rec, &as))
            return MW_ERR_CORRUPT;
        return ing_objects_site(f->objs, &as);
    }
    case MWR_MODULE: {
        mwr_module m;
        const char *path;
        if (mw_rec_module(rec, &m, &path))
            return MW_ERR_CORRUPT;
        return on_module(f, &m, path);
    }
    case MWR_COUNTERS: {
        mwr_counters k;
        const void *vals;
        if (mw_rec_counters(rec, &k, &vals))
            return MW_ERR_CORRUPT;
        return ing_db_counters(f->db, f->proc, &k, vals);
    }
    case MWR_GPU_KERNEL:
        return on_gpu_kernel(f, rec);
    case MWR_GPU_SAMPLE: {
        mwr_gpu_sample g;
        if (mw_rec_gpu_sample(rec, &g))
            return MW_ERR_CORRUPT;
        return ing_db_gpu_sample(f->db, f->proc, &g);
    }
    case MWR_GPU_PC:
        return on_gpu_pc(f, rec);
    default:
        return 0; /* unknown types are skipped (mwr.h compatibility rule) */
    }
}

/* ---- after the last record ---- */
static int iv_cmp(const void *a, const void *b)
{
    const mw_hybrid_iv *x = a, *y = b;
    return x->t_start < y->t_start ? -1 : x->t_start > y->t_start;
}

/* ---- loads that write (docs/saturation.md, "Loads that write") ----
 * A load that writes raises the latency memwatch reads long before it
 * saturates memory (the bus turns around between reads and writes): three
 * threads copying read as high as every CPU streaming reads. Where the
 * recording holds the profile's threshold for such loads (META
 * threshold_writes_ns), a process whose sampled loops write is judged by
 * it. Its loops' direction comes from the timer samples' straight-line runs
 * (ingest_decode.c): each sample with memory operands adds its run's share
 * of operands read, written with normal stores (each of which also reads the
 * line first, then writes it back) and written bypassing the caches; the
 * traffic's read share is reads / (reads + writes). At most 85 % reads, over
 * at least 20 such samples: its intervals' flags, threshold and band become
 * the writes' (the database's intervals and the META rows of the newest
 * threshold_ns, threshold_band_ns and mix_curve), before its samples are
 * placed in them. */
#define WR_MIN_SAMPLES 20
#define WR_MAX_READ_SHARE 0.85

static int writes_reflag(ing_file *f, double thr, double share, unsigned n)
{
    for (size_t i = 0; i < f->ivs.n && i < f->ivlat.n; i++) {
        double lat = f->ivlat.v[i];
        if (isnan(lat))
            continue;
        if (lat > thr)
            f->ivs.v[i].flags |= MWR_IV_BW_BOUND;
        else
            f->ivs.v[i].flags &= ~(uint32_t)MWR_IV_BW_BOUND;
    }
    sqlite3_stmt *s = ing_db_prep(f->db,
                                  "UPDATE intervals SET threshold_ns = ?1,"
                                  " bw_bound = (latency_ns > ?1),"
                                  " flags = (flags & ~1) | (latency_ns > ?1)"
                                  " WHERE id > ?2 AND process_id = ?3 AND latency_ns IS NOT NULL");
    if (!s)
        return -EIO;
    sqlite3_bind_double(s, 1, thr);
    sqlite3_bind_int64(s, 2, f->db->iv0);
    sqlite3_bind_int64(s, 3, f->proc);
    int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : ing_db_err(f->db, "intervals of a load that writes");
    sqlite3_reset(s);
    if (rc)
        return rc;
    char band[128] = "", m[768];
    ing_db_meta_value(f->db, f->proc, mw_meta_key(MW_META_THRESHOLD_WRITES_BAND_NS), band,
                      sizeof band);
    int k = snprintf(m, sizeof m,
                     "%s=%.3f\n%s%s%s%s%s=shapes: for loads that write, placed on the copy, triad "
                     "and non-temporal shapes: this process's sampled loops move %.0f %% of their "
                     "traffic as reads (%u samples in runs with memory operands)\n",
                     mw_meta_key(MW_META_THRESHOLD_NS), thr,
                     band[0] ? mw_meta_key(MW_META_THRESHOLD_BAND_NS) : "", band[0] ? "=" : "",
                     band, band[0] ? "\n" : "", mw_meta_key(MW_META_MIX_CURVE), 100 * share, n);
    return ing_db_meta(f->db, f->proc, m, k > 0 && (size_t)k < sizeof m ? (size_t)k : 0);
}

static int writes_class(ing_file *f)
{
    char v[64];
    ing_db_meta_value(f->db, f->proc, mw_meta_key(MW_META_THRESHOLD_WRITES_NS), v, sizeof v);
    double thr = v[0] ? strtod(v, NULL) : 0;
    if (!(thr > 0) || !isfinite(thr) || !f->ivs.n)
        return 0;
    double rd = 0, wr = 0, nt = 0;
    unsigned n = 0;
    for (size_t i = 0; i < f->smps.n; i++) {
        const ing_smp *x = &f->smps.v[i];
        if (f->attrs.v[x->attr_idx].source != MW_SRC_TIMER || !x->regs)
            continue;
        if (!f->code->dec && !(f->code->dec = ing_decoder_new()))
            return -ENOMEM;
        unsigned r, w, t;
        int rc = ing_run_dirs(f, x, &r, &w, &t);
        if (rc)
            return rc;
        if (!r && !w)
            continue;
        rd += (double)r / (r + w);
        wr += (double)(w - t) / (r + w);
        nt += (double)t / (r + w);
        n++;
    }
    /* normal stores read the line first: their bytes cross the bus twice */
    double traffic = rd + 2 * wr + nt, share = traffic > 0 ? (rd + wr) / traffic : 1;
    if (n < WR_MIN_SAMPLES || share > WR_MAX_READ_SHARE)
        return 0;
    return writes_reflag(f, thr, share, n);
}

static int insert_samples(ing_file *f)
{
    int wrc = writes_class(f);
    if (wrc)
        return wrc;
    if (f->ivs.n > 1)
        qsort(f->ivs.v, f->ivs.n, sizeof *f->ivs.v, iv_cmp);
    int rc = 0;
    for (size_t i = 0; i < f->smps.n; i++) {
        const ing_smp *x = &f->smps.v[i];
        const ing_attr *a = &f->attrs.v[x->attr_idx];
        uint64_t chain[128];
        size_t n = 0;
        if (x->chain_nr) {
            mw_sample tmp = {0};
            tmp.callchain = x->chain;
            tmp.callchain_nr = x->chain_nr;
            n = mw_callchain_user(&tmp, chain, 128);
        }
        /* The kernel's chain is only as good as the frame pointers (in code
         * built without them it stops early or takes stray words for return
         * addresses); where registers and the stack were sampled the DWARF
         * unwind replaces it. A chain that fills the kernel's limit
         * (MEMWATCH_STACK_DEPTH) or ours was cut short. */
        size_t maxk = a->fmt.max_stack ? a->fmt.max_stack : 127;
        int truncated = n >= maxk || n >= 128;
        if (x->regs && x->stack_size) {
            uint64_t dw[128];
            int complete;
            size_t d = ing_code_unwind(f->code, a->fmt.regs_user_mask, x->regs, x->stack,
                                       x->stack_size, dw, 128, &complete);
            if (d >= 2 || (d && n <= 1)) {
                memcpy(chain, dw, d * sizeof *dw);
                n = d;
                truncated = !complete;
            }
        }
        if (n == 0 || chain[0] != x->ip) {
            /* the chain starts at the caller: put the sample ip in front */
            if (n == 128)
                n--;
            memmove(chain + 1, chain, n * sizeof *chain);
            chain[0] = x->ip;
            n++;
        }
        /* memwatch's frames out; a frame in no code ends the chain (truncated) */
        n = ing_code_trim(f->code, chain, n, 1, &truncated);
        f->st->truncated += truncated;
        ing_sample_row row = {0};
        row.truncated = truncated;
        row.stack = ing_code_stack(f->code, chain, n, 1, &row.pc);
        if (row.stack < 0) {
            rc = -EIO;
            break;
        }
        long ivi = mw_hybrid_find(f->ivs.v, f->ivs.n, x->time);
        row.flagged = ivi >= 0 && (f->ivs.v[ivi].flags & MWR_IV_BW_BOUND);
        row.selected = mw_hybrid_keep(a->source, row.flagged, x->weight, f->threshold);
        /* the data address: the event's (precise, fault), else decoded
         * from the timer sample's instruction and registers */
        uint64_t addr = x->addr;
        row.at_memory = -1;
        if (a->source == MW_SRC_PRECISE && (a->fmt.sample_type & PERF_SAMPLE_ADDR))
            row.addr_source = "precise";
        else if (a->source == MW_SRC_FAULT)
            row.addr_source = "fault";
        uint64_t fs_base = 0;
        int64_t *ti = ing_hmap_get(&f->thr_idx, x->tid, 0);
        if (ti)
            fs_base = f->thrs.v[*ti].fs_base;
        ing_decoded dd;
        dd.how = ING_ADDR_NONE;
        dd.n = 0;
        if (a->source == MW_SRC_TIMER && x->regs) {
            if (!f->code->dec && !(f->code->dec = ing_decoder_new())) {
                rc = -ENOMEM;
                break;
            }
            if ((rc = ing_decode(f, x, fs_base, &dd)) != 0)
                break;
            if (dd.how != ING_ADDR_NONE) {
                row.at_memory = dd.how != ING_ADDR_NOMEM;
                f->st->decoded++;
                f->st->decoded_mem += (uint64_t)row.at_memory;
            }
            if (dd.how == ING_ADDR_DECODED) {
                addr = dd.acc[0].addr;
                row.addr_source = "decoded";
                f->st->decoded_addr++;
            }
        }
        int64_t objs[ING_DEC_MAX];
        for (unsigned k = 0; k < dd.n; k++)
            if ((objs[k] = ing_objects_of(f->objs, dd.acc[k].addr, x->time, x->sp, x->tid,
                                          fs_base)) < 0) {
                rc = -EIO;
                break;
            }
        if (rc)
            break;
        row.object = dd.n ? objs[0]
                   : row.addr_source ? ing_objects_of(f->objs, addr, x->time, x->sp, x->tid, fs_base)
                                     : 0;
        if (row.object < 0) {
            rc = -EIO;
            break;
        }
        row.event_id = a->event_id;
        row.interval_id = ivi >= 0 ? f->ivs.v[ivi].id : 0;
        row.source = mw_sample_source_name(a->source);
        row.sample_type = a->fmt.sample_type;
        row.time = x->time;
        row.period = x->period;
        row.ip = x->ip;
        row.addr = addr;
        row.weight = x->weight;
        row.phys = x->phys;
        row.data_src = x->data_src;
        row.tid = x->tid;
        row.cpu = x->cpu;
        if ((rc = ing_db_sample(f->db, f->proc, &row)) != 0)
            break;
        if (dd.n) {
            int64_t sid = sqlite3_last_insert_rowid(f->db->db);
            for (unsigned k = 0; k < dd.n && !rc; k++)
                rc = ing_db_sample_access(f->db, sid, dd.acc[k].addr, objs[k], 1.0 / dd.nmem,
                                          dd.acc[k].write);
            if (rc)
                break;
        }
        f->st->samples++;
        if (f->o->progress && (i & 0xffff) == 0xffff)
            f->o->progress(f->cur_base + f->cur_size / 5 +
                               (uint64_t)((double)f->cur_size * 0.8 * (double)i /
                                          (double)f->smps.n),
                           f->bytes_total, NULL, f->o->progress_user);
    }
    return rc;
}

static int insert_threads(ing_file *f)
{
    for (size_t i = 0; i < f->thrs.n; i++) {
        ing_thr *t = &f->thrs.v[i];
        if (ing_db_thread(f->db, f->proc, t))
            return -EIO;
    }
    return 0;
}

int ing_file_finish(ing_file *f)
{
    int rc;
    ing_code_sort(f->code);
    if ((rc = ing_objects_finish(f->objs)) || (rc = insert_samples(f)) ||
        (rc = insert_threads(f)))
        return rc;
    return 0;
}

void ing_file_end(ing_file *f)
{
    ING_VEC_FREE(f->attrs);
    ING_VEC_FREE(f->smps);
    ING_VEC_FREE(f->ivs);
    ING_VEC_FREE(f->ivlat);
    ING_VEC_FREE(f->thrs);
    ing_hmap_free(&f->thr_idx);
    f->have_cpu = 0;
    ing_objects_end_process(f->objs);
    ing_code_end_process(f->code);
}
