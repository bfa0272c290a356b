/*
 * report/ingest.c: raw files -> SQLite (mw_report_ingest).
 *
 * Owns: the per-file pass over the records (reader), decoding of the kernel
 * records (sampling/decode.c), interval assignment and hybrid selection,
 * symbolization with caches (code address -> pcs row, call chain -> stacks
 * trie), allocation lifetimes and the data-object match (heap allocation by
 * address and lifetime, static data by ELF data symbols, stacks by the
 * sampled stack pointer or a [stack] mapping), and the SQL inserts (prepared
 * statements, one transaction per file).
 * May call: mwr_reader, decode, symbolize, SQLite, libc. Prints nothing.
 * Threading: one ingest per database at a time; no global state.
 */
#include <memwatch/decode.h>
#include <memwatch/mwr_gpu.h>
#include <memwatch/mwr_reader.h>
#include <memwatch/profile.h>
#include <memwatch/report.h>
#include <memwatch/symbolize.h>

#include "region.h"
#include "schema.h"

#include <errno.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- a small hash map: (u64, u64) -> i64 ---- */
typedef struct hent {
    uint64_t a, b;
    int64_t v;
    int used;
} hent;
typedef struct hmap {
    hent *t;
    size_t cap, n;
} hmap;

static uint64_t hmix(uint64_t a, uint64_t b)
{
    uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull + (a << 6) + (a >> 2));
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 29);
}

static int hmap_grow(hmap *m)
{
    size_t nc = m->cap ? m->cap * 2 : 1024;
    hent *nt = calloc(nc, sizeof *nt);
    if (!nt)
        return -ENOMEM;
    for (size_t i = 0; i < m->cap; i++)
        if (m->t[i].used) {
            size_t j = hmix(m->t[i].a, m->t[i].b) & (nc - 1);
            while (nt[j].used)
                j = (j + 1) & (nc - 1);
            nt[j] = m->t[i];
        }
    free(m->t);
    m->t = nt;
    m->cap = nc;
    return 0;
}

static int64_t *hmap_get(hmap *m, uint64_t a, uint64_t b)
{
    if (!m->cap)
        return NULL;
    size_t j = hmix(a, b) & (m->cap - 1);
    while (m->t[j].used) {
        if (m->t[j].a == a && m->t[j].b == b)
            return &m->t[j].v;
        j = (j + 1) & (m->cap - 1);
    }
    return NULL;
}

static int hmap_put(hmap *m, uint64_t a, uint64_t b, int64_t v)
{
    if ((m->n + 1) * 2 > m->cap && hmap_grow(m))
        return -ENOMEM;
    size_t j = hmix(a, b) & (m->cap - 1);
    while (m->t[j].used) {
        if (m->t[j].a == a && m->t[j].b == b) {
            m->t[j].v = v;
            return 0;
        }
        j = (j + 1) & (m->cap - 1);
    }
    m->t[j] = (hent){a, b, v, 1};
    m->n++;
    return 0;
}

static void hmap_free(hmap *m)
{
    free(m->t);
    memset(m, 0, sizeof *m);
}

/* ---- growable arrays ---- */
#define VEC(T)                                                                                 \
    struct {                                                                                   \
        T *v;                                                                                  \
        size_t n, cap;                                                                         \
    }
#define VEC_PUSH(vec, item)                                                                    \
    (((vec).n == (vec).cap &&                                                                  \
      !(vec_grow((void **)&(vec).v, &(vec).cap, sizeof *(vec).v)))                             \
         ? -ENOMEM                                                                             \
         : ((vec).v[(vec).n++] = (item), 0))

static int vec_grow(void **v, size_t *cap, size_t sz)
{
    size_t nc = *cap ? *cap * 2 : 64;
    void *p = realloc(*v, nc * sz);
    if (!p)
        return 0;
    *v = p;
    *cap = nc;
    return 1;
}

/* ---- per-ingest state ---- */
typedef struct gmod {             /* one module file (global across processes) */
    char *path;
    uint8_t bid[20];
    size_t bidlen;
    int64_t db_id;
    mw_symmod *sm;
} gmod;

typedef struct pmod {             /* a module mapped in one process */
    uint64_t start, end, base;
    size_t gi;                    /* index in ctx.gmods */
    int is_stack;                 /* a [stack] mapping from MMAP2 */
} pmod;

typedef struct attr_ent {
    uint32_t attr_id;
    mw_sample_fmt fmt;
    int source;
    int64_t event_id;
} attr_ent;

typedef struct smp {
    uint64_t time, ip, addr, weight, data_src, period, phys, sp;
    const void *chain;
    const void *regs, *stack;     /* REGS_USER / STACK_USER, into the mapped file */
    uint32_t chain_nr, tid, cpu, attr_idx;
    uint32_t stack_size;
} smp;

typedef struct alloc_ent {
    uint64_t addr, size, t_alloc, t_free;
    const void *frames;
    uint32_t tid, nframes;
    uint16_t kind;
    int64_t db_id, object_id, site_pc;
} alloc_ent;

typedef struct free_ent {
    uint64_t addr, time;
} free_ent;

typedef struct thr {
    uint32_t tid;
    char name[32];
    uint64_t t_start, t_end;
} thr;

typedef struct ctx {
    sqlite3 *db;
    const mw_report_opts *o;
    mw_report_stats *st;
    mw_symbolizer *sym;
    char *dm_buf; /* mw_sym_demangle's buffer: names are stored demangled */
    size_t dm_cap;
    double proc_threshold;     /* this process's precise-sample threshold */
    const char *proc_thr_src;
    mw_rgn *rgn;               /* regions of the file (ingest_region.c) */
    mw_unwinder *unw;          /* lazily created for samples with regs + stack */
    int unw_failed;
    double threshold;
    int have_run_profile;      /* threshold came from a profile or the option */
    const char *run_thr_src;
    int64_t run_id, proc_id;
    VEC(gmod) gmods;
    hmap pcs;      /* (gmod index + 1 or 0, rel addr or abs addr) -> pc id */
    hmap stacks;   /* (parent, pc) -> stack id */
    hmap statics;  /* (gmod index, symbol start) -> object id */
    int64_t next_pc, next_stack;
    uint64_t bytes_done, bytes_total, cur_base, cur_size;
    size_t files_opened;
    /* per file */
    VEC(pmod) pmods;
    VEC(attr_ent) attrs;
    VEC(smp) smps;
    VEC(alloc_ent) allocs;
    VEC(free_ent) frees;
    VEC(mw_hybrid_iv) ivs;
    VEC(thr) thrs;
    hmap thr_idx;
    hmap stack_objs; /* tid -> object id */
    /* statements */
    sqlite3_stmt *s_sample, *s_mem, *s_pc, *s_frame, *s_stack, *s_alloc, *s_obj, *s_loss, *s_iv,
        *s_meta, *s_thread, *s_event, *s_module, *s_pmod, *s_counter, *s_log, *s_gk, *s_gs,
        *s_gp;
} ctx;

/* The errno behind a failed SQLite call where the system gave one (a full
 * disk is named as such, not as an I/O error); else -EIO. */
static int sql_errno(sqlite3 *db)
{
    int e = sqlite3_system_errno(db);
    if (sqlite3_errcode(db) == SQLITE_FULL)
        return -ENOSPC;
    return e > 0 ? -e : -EIO;
}

static int sql_err(ctx *c, const char *what)
{
    mw_log(MW_LOG_ERROR, "report database: %s: %s", what, sqlite3_errmsg(c->db));
    return sql_errno(c->db);
}

static int step(ctx *c, sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return rc == SQLITE_DONE ? 0 : sql_err(c, "insert");
}

/* For statements whose every column is bound on every row: no clear. */
static int step_all_bound(ctx *c, sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : sql_err(c, "insert");
}

static void bind_text_n(sqlite3_stmt *s, int i, const char *t, size_t n)
{
    if (t)
        sqlite3_bind_text(s, i, t, (int)n, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, i);
}
static void bind_text(sqlite3_stmt *s, int i, const char *t)
{
    bind_text_n(s, i, t, t ? strlen(t) : 0);
}
static void bind_u64(sqlite3_stmt *s, int i, uint64_t v) { sqlite3_bind_int64(s, i, (int64_t)v); }
static void bind_id(sqlite3_stmt *s, int i, int64_t v)
{
    if (v > 0)
        sqlite3_bind_int64(s, i, v);
    else
        sqlite3_bind_null(s, i);
}

static int prepare_all(ctx *c)
{
    static const struct {
        size_t off;
        const char *sql;
    } q[] = {
#define Q(f, s) {offsetof(ctx, f), s}
        Q(s_sample, "INSERT INTO samples(process_id,event_id,source,tid,time_ns,cpu,period,ip,"
                    "pc_id,stack_id,addr,weight,interval_id,in_flagged,selected,object_id)"
                    " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"),
        Q(s_mem, "INSERT INTO sample_mem(sample_id,phys_addr,data_src,mem_op,mem_level,mem_hit,"
                 "mem_remote,mem_hops,mem_tlb,mem_snoop,mem_lock) VALUES(?,?,?,?,?,?,?,?,?,?,?)"),
        Q(s_pc, "INSERT INTO pcs(id,module_id,rel_addr,symbol,symbol_offset,function,file,line,"
                "quality) VALUES(?,?,?,?,?,?,?,?,?)"),
        Q(s_frame, "INSERT INTO frames(pc_id,depth,function,file,line,column,inlined) "
                   "VALUES(?,?,?,?,?,?,?)"),
        Q(s_stack, "INSERT INTO stacks(id,parent_id,pc_id,depth) VALUES(?,?,?,?)"),
        Q(s_alloc, "INSERT INTO allocations(process_id,tid,kind,addr,size,t_alloc,t_free,"
                   "stack_id,site_pc_id) VALUES(?,?,?,?,?,?,?,?,?)"),
        Q(s_obj, "INSERT INTO objects(process_id,kind,name,addr,size,allocation_id,module_id,"
                 "site_pc_id) VALUES(?,?,?,?,?,?,?,?)"),
        Q(s_loss, "INSERT INTO losses(process_id,time_ns,tid,event_id,kind,count) "
                  "VALUES(?,?,?,?,?,?)"),
        Q(s_iv, "INSERT INTO intervals(process_id,t_start,t_end,flags,bw_bound,latency_ns,"
                "threshold_ns,bytes,nthreads,samples,lost,lat_method,bw_method) "
                "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)"),
        Q(s_meta, "INSERT INTO meta(process_id,key,value) VALUES(?,?,?)"),
        Q(s_thread, "INSERT INTO threads(process_id,tid,name,t_start,t_end) VALUES(?,?,?,?,?)"),
        Q(s_event, "INSERT INTO events(process_id,attr_id,name,source,type,config,sample_type,"
                   "precise_ip) VALUES(?,?,?,?,?,?,?,?)"),
        Q(s_module, "INSERT INTO modules(path,build_id,debug_file,symbols) VALUES(?,?,?,?)"),
        Q(s_pmod, "INSERT INTO process_modules(process_id,module_id,base,start,end,time_ns) "
                  "VALUES(?,?,?,?,?,?)"),
        Q(s_counter, "INSERT INTO counters(process_id,time_ns,group_id,time_enabled,"
                     "time_running,idx,value) VALUES(?,?,?,?,?,?,?)"),
        Q(s_log, "INSERT INTO logs(process_id,text) VALUES(?,?)"),
        Q(s_gk, "INSERT INTO gpu_kernels(process_id,start_ns,end_ns,device,stream,correlation,"
                "flags,bw_bound,dram_bytes,dram_bw,threshold_bw,peak_bw,name) "
                "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)"),
        Q(s_gs, "INSERT INTO gpu_samples(process_id,start_ns,end_ns,device,flags,"
                "dram_read_bytes,dram_write_bytes,dram_bw,threshold_bw) "
                "VALUES(?,?,?,?,?,?,?,?,?)"),
        Q(s_gp, "INSERT INTO gpu_pcs(process_id,correlation,file,function,line,pc_offset,"
                "samples,stall_memory) VALUES(?,?,?,?,?,?,?,?)"),
#undef Q
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        sqlite3_stmt **sp = (sqlite3_stmt **)((char *)c + q[i].off);
        if (sqlite3_prepare_v3(c->db, q[i].sql, -1, SQLITE_PREPARE_PERSISTENT, sp, NULL) !=
            SQLITE_OK)
            return sql_err(c, q[i].sql);
    }
    return 0;
}

static void finalize_all(ctx *c)
{
    sqlite3_stmt **all[] = {&c->s_sample, &c->s_mem, &c->s_pc,    &c->s_frame, &c->s_stack, &c->s_alloc,
                            &c->s_obj,    &c->s_loss,  &c->s_iv,    &c->s_meta,  &c->s_thread,
                            &c->s_event,  &c->s_module, &c->s_pmod, &c->s_counter, &c->s_log,
                            &c->s_gk,     &c->s_gs,    &c->s_gp};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        sqlite3_finalize(*all[i]);
        *all[i] = NULL;
    }
}

static int exec(ctx *c, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(c->db, sql, NULL, NULL, &err) != SQLITE_OK) {
        mw_log(MW_LOG_ERROR, "report database: %s", err ? err : "?");
        sqlite3_free(err);
        return sql_errno(c->db);
    }
    return 0;
}

/* ---- modules and symbolization ---- */
static const char *quality_name(int q)
{
    return q == MW_SYMQ_DWARF ? "dwarf" : q == MW_SYMQ_SYMTAB ? "symtab" : "none";
}

static int gmod_get(ctx *c, const char *path, size_t plen, const uint8_t *bid, size_t bidlen,
                    size_t *gi)
{
    if (bidlen > 20)
        bidlen = 20;
    for (size_t i = 0; i < c->gmods.n; i++) {
        gmod *g = &c->gmods.v[i];
        if (strlen(g->path) == plen && !memcmp(g->path, path, plen) && g->bidlen == bidlen &&
            !memcmp(g->bid, bid, bidlen)) {
            *gi = i;
            return 0;
        }
    }
    gmod g = {0};
    g.path = strndup(path, plen);
    if (!g.path)
        return -ENOMEM;
    memcpy(g.bid, bid, bidlen);
    g.bidlen = bidlen;
    if (c->sym && !c->o->no_symbols)
        mw_symbolizer_module(c->sym, g.path, bidlen ? g.bid : NULL, bidlen, &g.sm);
    char hex[41] = "";
    for (size_t i = 0; i < bidlen; i++)
        snprintf(hex + 2 * i, 3, "%02x", g.bid[i]);
    bind_text(c->s_module, 1, g.path);
    bind_text(c->s_module, 2, bidlen ? hex : NULL);
    bind_text(c->s_module, 3, g.sm ? mw_symmod_debug_file(g.sm) : NULL);
    bind_text(c->s_module, 4, quality_name(g.sm ? mw_symmod_quality(g.sm) : MW_SYMQ_NONE));
    int rc = step(c, c->s_module);
    if (rc) {
        free(g.path);
        return rc;
    }
    g.db_id = sqlite3_last_insert_rowid(c->db);
    if (VEC_PUSH(c->gmods, g)) {
        free(g.path);
        return -ENOMEM;
    }
    *gi = c->gmods.n - 1;
    return 0;
}

static int pmod_cmp(const void *a, const void *b)
{
    const pmod *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Module of a runtime address in this process, or NULL. */
static const pmod *pmod_find(const ctx *c, uint64_t a)
{
    size_t lo = 0, hi = c->pmods.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->pmods.v[mid].start <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo, tries = 0; k > 0 && tries < 4; k--, tries++) {
        const pmod *p = &c->pmods.v[k - 1];
        if (a >= p->start && a < p->end && !p->is_stack)
            return p;
    }
    return NULL;
}

/* pcs row of a code address (runtime); `ret` = it is a return address. */
static int64_t pc_of(ctx *c, uint64_t addr, int ret)
{
    const pmod *pm = pmod_find(c, addr);
    uint64_t key_mod = pm ? pm->gi + 1 : 0;
    uint64_t rel = pm ? addr - pm->base : addr;
    if (ret && rel)
        rel -= 1; /* inside the call instruction */
    int64_t *hit = hmap_get(&c->pcs, key_mod, rel);
    if (hit)
        return *hit;
    int64_t id = ++c->next_pc;
    mw_sym_result r;
    memset(&r, 0, sizeof r);
    gmod *g = pm ? &c->gmods.v[pm->gi] : NULL;
    if (g && g->sm)
        mw_symmod_lookup(g->sm, rel, &r);
    const mw_sym_frame *f0 = r.nframes ? &r.frames[0] : NULL;
    char fallback[64];
    const char *fn = f0 ? f0->function : NULL;
    if (!fn && !g && (addr >> 63))
        fn = "[kernel]";
    if (!fn) {
        snprintf(fallback, sizeof fallback, "%s+0x%llx", g ? "" : "[unknown]",
                 (unsigned long long)rel);
        if (g) {
            const char *b = strrchr(g->path, '/');
            snprintf(fallback, sizeof fallback, "%.40s+0x%llx", b ? b + 1 : g->path,
                     (unsigned long long)rel);
        }
        fn = fallback;
    }
    sqlite3_stmt *s = c->s_pc;
    sqlite3_bind_int64(s, 1, id);
    bind_id(s, 2, g ? g->db_id : 0);
    bind_u64(s, 3, rel);
    bind_text(s, 4, r.symbol);
    if (r.symbol)
        bind_u64(s, 5, r.symbol_offset);
    bind_text(s, 6, mw_sym_demangle(fn, &c->dm_buf, &c->dm_cap));
    bind_text(s, 7, f0 ? f0->file : NULL);
    if (f0 && f0->line)
        sqlite3_bind_int(s, 8, f0->line);
    bind_text(s, 9, quality_name(r.quality));
    if (step(c, s))
        return -1;
    for (unsigned i = 0; i < r.nframes; i++) {
        const mw_sym_frame *f = &r.frames[i];
        s = c->s_frame;
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_int(s, 2, (int)i);
        bind_text(s, 3, mw_sym_demangle(f->function, &c->dm_buf, &c->dm_cap));
        bind_text(s, 4, f->file);
        if (f->line)
            sqlite3_bind_int(s, 5, f->line);
        if (f->column)
            sqlite3_bind_int(s, 6, f->column);
        sqlite3_bind_int(s, 7, f->inlined);
        if (step(c, s))
            return -1;
    }
    hmap_put(&c->pcs, key_mod, rel, id);
    c->st->pcs++;
    return id;
}

/* Stack id for addresses innermost first; addrs[0] is exact when exact0. */
static int64_t stack_of(ctx *c, const uint64_t *addrs, size_t n, int exact0, int64_t *leaf_pc)
{
    int64_t parent = 0;
    *leaf_pc = 0;
    for (size_t k = n; k-- > 0;) {
        int64_t pc = pc_of(c, addrs[k], !(k == 0 && exact0));
        if (pc < 0)
            return -1;
        int64_t *hit = hmap_get(&c->stacks, (uint64_t)parent, (uint64_t)pc);
        int64_t sid;
        if (hit) {
            sid = *hit;
        } else {
            sid = ++c->next_stack;
            sqlite3_stmt *s = c->s_stack;
            sqlite3_bind_int64(s, 1, sid);
            bind_id(s, 2, parent);
            sqlite3_bind_int64(s, 3, pc);
            sqlite3_bind_int64(s, 4, (int64_t)(n - 1 - k));
            if (step(c, s))
                return -1;
            hmap_put(&c->stacks, (uint64_t)parent, (uint64_t)pc, sid);
        }
        parent = sid;
        if (k == 0)
            *leaf_pc = pc;
    }
    return parent;
}

/* ---- per-record handlers ---- */
static thr *thread_get(ctx *c, uint32_t tid)
{
    int64_t *i = hmap_get(&c->thr_idx, tid, 0);
    if (i)
        return &c->thrs.v[*i];
    thr t = {0};
    t.tid = tid;
    if (VEC_PUSH(c->thrs, t))
        return NULL;
    hmap_put(&c->thr_idx, tid, 0, (int64_t)c->thrs.n - 1);
    return &c->thrs.v[c->thrs.n - 1];
}

static int loss(ctx *c, uint64_t t, uint32_t tid, int64_t ev, const char *kind, uint64_t n)
{
    sqlite3_stmt *s = c->s_loss;
    sqlite3_bind_int64(s, 1, c->proc_id);
    bind_u64(s, 2, t);
    if (tid)
        sqlite3_bind_int64(s, 3, tid);
    bind_id(s, 4, ev);
    bind_text(s, 5, kind);
    bind_u64(s, 6, n);
    c->st->losses++;
    return step(c, s);
}

static int on_meta(ctx *c, const char *t, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && t[j] != '\n')
            j++;
        const char *eq = memchr(t + i, '=', j - i);
        if (eq) {
            size_t kl = (size_t)(eq - (t + i));
            sqlite3_bind_int64(c->s_meta, 1, c->proc_id);
            bind_text_n(c->s_meta, 2, t + i, kl);
            bind_text_n(c->s_meta, 3, eq + 1, j - i - kl - 1);
            if (step(c, c->s_meta))
                return -EIO;
        }
        i = j + 1;
    }
    return 0;
}

static int on_perf_data(ctx *c, const mwr_perf_data *pd, const unsigned char *p, size_t len)
{
    attr_ent *a = NULL;
    for (size_t i = 0; i < c->attrs.n; i++)
        if (c->attrs.v[i].attr_id == pd->attr_id)
            a = &c->attrs.v[i];
    if (!a) {
        c->st->bad_perf_records++;
        mw_log(MW_LOG_WARN, "perf data for unknown attr %u skipped", pd->attr_id);
        return 0;
    }
    size_t off = 0;
    while (off + 8 <= len) {
        mw_perf_record r;
        int rc = mw_perf_record_decode(&a->fmt, p + off, len - off, &r);
        if (rc <= 0) {
            c->st->bad_perf_records++;
            return 0; /* cannot resynchronize inside this block */
        }
        off += (size_t)rc;
        c->st->perf_records++;
        uint32_t tid = r.has_sample_id && r.sid.tid ? r.sid.tid : pd->tid;
        uint64_t t = r.has_sample_id ? r.sid.time : pd->time_ns;
        switch (r.type) {
        case PERF_RECORD_SAMPLE: {
            const mw_sample *s = &r.u.sample;
            smp x = {0};
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
            x.attr_idx = (uint32_t)(a - c->attrs.v);
            /* x86-64 user SP is register 7 (PERF_REG_X86_SP) */
            if (s->regs_user_abi && (a->fmt.regs_user_mask >> 7 & 1)) {
                unsigned idx = (unsigned)__builtin_popcountll(a->fmt.regs_user_mask & 0x7f);
                if (idx < s->regs_user_nr)
                    x.sp = mw_u64_at(s->regs_user, idx);
                if (s->stack_user_dyn_size && s->regs_user_nr ==
                                                  (uint32_t)__builtin_popcountll(
                                                      a->fmt.regs_user_mask)) {
                    x.regs = s->regs_user;
                    x.stack = s->stack_user;
                    x.stack_size = (uint32_t)s->stack_user_dyn_size;
                }
            }
            if (VEC_PUSH(c->smps, x))
                return -ENOMEM;
            break;
        }
        case PERF_RECORD_LOST:
            if (loss(c, t, tid, a->event_id, "lost", r.u.lost.lost))
                return -EIO;
            break;
        case PERF_RECORD_LOST_SAMPLES:
            if (loss(c, t, tid, a->event_id, "lost_samples", r.u.lost_samples.lost))
                return -EIO;
            break;
        case PERF_RECORD_THROTTLE:
        case PERF_RECORD_UNTHROTTLE:
            if (loss(c, r.u.throttle.time, tid, a->event_id,
                     r.type == PERF_RECORD_THROTTLE ? "throttle" : "unthrottle", 1))
                return -EIO;
            break;
        case PERF_RECORD_COMM: {
            thr *th = thread_get(c, r.u.comm.tid);
            if (th)
                snprintf(th->name, sizeof th->name, "%s", r.u.comm.comm);
            break;
        }
        case PERF_RECORD_FORK:
        case PERF_RECORD_EXIT: {
            thr *th = thread_get(c, r.u.task.tid);
            if (th) {
                if (r.type == PERF_RECORD_FORK)
                    th->t_start = r.u.task.time;
                else
                    th->t_end = r.u.task.time;
            }
            break;
        }
        case PERF_RECORD_MMAP:
        case PERF_RECORD_MMAP2: {
            const char *fn = r.u.mmap2.filename;
            pmod pm = {r.u.mmap2.addr, r.u.mmap2.addr + r.u.mmap2.len, 0, 0, 0};
            if (!strncmp(fn, "[stack", 6)) {
                pm.is_stack = 1;
                if (VEC_PUSH(c->pmods, pm))
                    return -ENOMEM;
            } else if (fn[0] == '/' && (r.u.mmap2.prot & 4 /* PROT_EXEC */ ||
                                        r.type == PERF_RECORD_MMAP)) {
                /* bias = map start - file offset: exact for the usual layouts where
                 * the first PT_LOAD has p_vaddr == p_offset */
                pm.base = r.u.mmap2.addr - r.u.mmap2.pgoff;
                size_t gi;
                if (gmod_get(c, fn, strlen(fn), r.u.mmap2.build_id, r.u.mmap2.build_id_size,
                             &gi) == 0) {
                    pm.gi = gi;
                    if (VEC_PUSH(c->pmods, pm))
                        return -ENOMEM;
                }
            }
            break;
        }
        default:
            break;
        }
    }
    if (off != len)
        c->st->bad_perf_records++;
    return 0;
}

static int on_record(ctx *c, const mw_record *rec)
{
    if (rec->type == MWR_REGION || rec->type == MWR_REGION_NAME || rec->type == MWR_THREAD) {
        int e = mw_rgn_record(c->rgn, rec->type, rec->payload, rec->payload_len);
        if (e || rec->type != MWR_THREAD)
            return e;
    }
    switch (rec->type) {
    case MWR_META: {
        const char *t;
        size_t n;
        mw_rec_text(rec, &t, &n);
        return on_meta(c, t, n);
    }
    case MWR_LOG: {
        const char *t;
        size_t n;
        mw_rec_text(rec, &t, &n);
        sqlite3_bind_int64(c->s_log, 1, c->proc_id);
        bind_text_n(c->s_log, 2, t, n);
        return step(c, c->s_log);
    }
    case MWR_PERF_ATTR: {
        mwr_perf_attr pa;
        const void *ab;
        attr_ent a = {0};
        if (mw_rec_perf_attr(rec, &pa, &ab) || mw_sample_fmt_from_attr(ab, pa.attr_size, &a.fmt))
            return MW_ERR_CORRUPT;
        a.attr_id = pa.attr_id;
        a.source = mw_sample_source_of(&a.fmt, pa.name);
        sqlite3_stmt *s = c->s_event;
        sqlite3_bind_int64(s, 1, c->proc_id);
        sqlite3_bind_int64(s, 2, pa.attr_id);
        bind_text(s, 3, pa.name);
        bind_text(s, 4, mw_sample_source_name(a.source));
        sqlite3_bind_int64(s, 5, a.fmt.type);
        bind_u64(s, 6, a.fmt.config);
        bind_u64(s, 7, a.fmt.sample_type);
        sqlite3_bind_int(s, 8, (int)a.fmt.precise_ip);
        if (step(c, s))
            return -EIO;
        a.event_id = sqlite3_last_insert_rowid(c->db);
        return VEC_PUSH(c->attrs, a);
    }
    case MWR_PERF_DATA: {
        mwr_perf_data pd;
        const void *d;
        size_t n;
        if (mw_rec_perf_data(rec, &pd, &d, &n))
            return MW_ERR_CORRUPT;
        return on_perf_data(c, &pd, d, n);
    }
    case MWR_INTERVAL: {
        mwr_interval iv;
        if (mw_rec_interval(rec, &iv))
            return MW_ERR_CORRUPT;
        iv.lat_method[15] = iv.bw_method[15] = 0;
        sqlite3_stmt *s = c->s_iv;
        sqlite3_bind_int64(s, 1, c->proc_id);
        bind_u64(s, 2, iv.t_start_ns);
        bind_u64(s, 3, iv.t_end_ns);
        sqlite3_bind_int64(s, 4, iv.flags);
        sqlite3_bind_int(s, 5, !!(iv.flags & MWR_IV_BW_BOUND));
        if (iv.flags & MWR_IV_LAT_VALID)
            sqlite3_bind_double(s, 6, iv.latency_ns);
        sqlite3_bind_double(s, 7, iv.threshold_ns);
        if (iv.flags & MWR_IV_BW_VALID)
            sqlite3_bind_double(s, 8, iv.bytes);
        sqlite3_bind_int64(s, 9, iv.nthreads);
        bind_u64(s, 10, iv.samples);
        bind_u64(s, 11, iv.lost);
        bind_text(s, 12, iv.lat_method);
        bind_text(s, 13, iv.bw_method);
        if (step(c, s))
            return -EIO;
        mw_hybrid_iv h = {iv.t_start_ns, iv.t_end_ns, iv.flags, sqlite3_last_insert_rowid(c->db)};
        c->st->intervals++;
        return VEC_PUSH(c->ivs, h);
    }
    case MWR_THREAD: {
        mwr_thread t;
        if (mw_rec_thread(rec, &t))
            return MW_ERR_CORRUPT;
        thr *th = thread_get(c, t.tid);
        if (!th)
            return -ENOMEM;
        if (t.event == MWR_THREAD_START)
            th->t_start = t.time_ns;
        else if (t.event == MWR_THREAD_EXIT)
            th->t_end = t.time_ns;
        if (t.name[0])
            snprintf(th->name, sizeof th->name, "%s", t.name);
        return 0;
    }
    case MWR_ALLOC: {
        mwr_alloc a;
        const void *fr;
        if (mw_rec_alloc(rec, &a, &fr))
            return MW_ERR_CORRUPT;
        alloc_ent e = {a.addr, a.size, a.time_ns, UINT64_MAX, fr, a.tid, a.nframes, a.kind,
                       0, 0, 0};
        c->st->allocations++;
        return VEC_PUSH(c->allocs, e);
    }
    case MWR_FREE: {
        mwr_free f;
        if (mw_rec_free(rec, &f))
            return MW_ERR_CORRUPT;
        free_ent e = {f.addr, f.time_ns};
        return VEC_PUSH(c->frees, e);
    }
    case MWR_MODULE: {
        mwr_module m;
        const char *path;
        if (mw_rec_module(rec, &m, &path))
            return MW_ERR_CORRUPT;
        size_t plen = strnlen(path, m.path_len);
        size_t gi;
        int rc = gmod_get(c, path, plen, m.build_id, m.build_id_size, &gi);
        if (rc)
            return rc;
        pmod pm = {m.start, m.end > m.start ? m.end : m.start + 1, m.base, gi, 0};
        sqlite3_stmt *s = c->s_pmod;
        sqlite3_bind_int64(s, 1, c->proc_id);
        sqlite3_bind_int64(s, 2, c->gmods.v[gi].db_id);
        bind_u64(s, 3, m.base);
        bind_u64(s, 4, m.start);
        bind_u64(s, 5, m.end);
        bind_u64(s, 6, m.time_ns);
        if (step(c, s))
            return -EIO;
        return VEC_PUSH(c->pmods, pm);
    }
    case MWR_COUNTERS: {
        mwr_counters k;
        const void *vals;
        if (mw_rec_counters(rec, &k, &vals))
            return MW_ERR_CORRUPT;
        for (uint32_t i = 0; i < k.nvalues; i++) {
            sqlite3_stmt *s = c->s_counter;
            sqlite3_bind_int64(s, 1, c->proc_id);
            bind_u64(s, 2, k.time_ns);
            sqlite3_bind_int64(s, 3, k.group_id);
            bind_u64(s, 4, k.time_enabled);
            bind_u64(s, 5, k.time_running);
            sqlite3_bind_int64(s, 6, i);
            bind_u64(s, 7, mw_u64_at(vals, i));
            if (step(c, s))
                return -EIO;
        }
        return 0;
    }
    case MWR_GPU_KERNEL: {
        mwr_gpu_kernel k;
        if (rec->payload_len < sizeof k)
            return MW_ERR_CORRUPT;
        memcpy(&k, rec->payload, sizeof k);
        if (k.name_len > rec->payload_len - sizeof k)
            return MW_ERR_CORRUPT;
        sqlite3_stmt *s = c->s_gk;
        sqlite3_bind_int64(s, 1, c->proc_id);
        bind_u64(s, 2, k.start_ns);
        bind_u64(s, 3, k.end_ns);
        sqlite3_bind_int64(s, 4, k.device);
        sqlite3_bind_int64(s, 5, k.stream);
        sqlite3_bind_int64(s, 6, k.correlation);
        sqlite3_bind_int64(s, 7, k.flags);
        sqlite3_bind_int(s, 8, !!(k.flags & MWR_GPU_BW_BOUND));
        sqlite3_bind_double(s, 9, k.dram_bytes);
        sqlite3_bind_double(s, 10, k.dram_bw);
        sqlite3_bind_double(s, 11, k.threshold_bw);
        sqlite3_bind_double(s, 12, k.peak_bw);
        bind_text_n(s, 13, (const char *)rec->payload + sizeof k, k.name_len);
        return step(c, s);
    }
    case MWR_GPU_SAMPLE: {
        mwr_gpu_sample g;
        if (rec->payload_len < sizeof g)
            return MW_ERR_CORRUPT;
        memcpy(&g, rec->payload, sizeof g);
        sqlite3_stmt *s = c->s_gs;
        sqlite3_bind_int64(s, 1, c->proc_id);
        bind_u64(s, 2, g.start_ns);
        bind_u64(s, 3, g.end_ns);
        sqlite3_bind_int64(s, 4, g.device);
        sqlite3_bind_int64(s, 5, g.flags);
        sqlite3_bind_double(s, 6, g.dram_read_bytes);
        sqlite3_bind_double(s, 7, g.dram_write_bytes);
        sqlite3_bind_double(s, 8, g.dram_bw);
        sqlite3_bind_double(s, 9, g.threshold_bw);
        return step(c, s);
    }
    case MWR_GPU_PC: {
        mwr_gpu_pc g;
        if (rec->payload_len < sizeof g)
            return MW_ERR_CORRUPT;
        memcpy(&g, rec->payload, sizeof g);
        if ((uint64_t)g.file_len + g.func_len > rec->payload_len - sizeof g)
            return MW_ERR_CORRUPT;
        const char *str = (const char *)rec->payload + sizeof g;
        sqlite3_stmt *s = c->s_gp;
        sqlite3_bind_int64(s, 1, c->proc_id);
        sqlite3_bind_int64(s, 2, g.correlation);
        bind_text_n(s, 3, str, g.file_len);
        bind_text_n(s, 4, str + g.file_len, g.func_len);
        sqlite3_bind_int64(s, 5, g.line);
        bind_u64(s, 6, g.pc_offset);
        bind_u64(s, 7, g.samples);
        bind_u64(s, 8, g.stall_memory);
        return step(c, s);
    }
    case MWR_GPU_META: {
        const char *t;
        size_t n;
        mw_rec_text(rec, &t, &n);
        return on_meta(c, t, n);
    }
    default:
        return 0; /* unknown types are skipped (mwr.h compatibility rule) */
    }
}

/* ---- post-processing of one file ---- */
static int iv_cmp(const void *a, const void *b)
{
    const mw_hybrid_iv *x = a, *y = b;
    return x->t_start < y->t_start ? -1 : x->t_start > y->t_start;
}

static int alloc_cmp(const void *a, const void *b)
{
    const alloc_ent *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return x->t_alloc < y->t_alloc ? -1 : x->t_alloc > y->t_alloc;
}

static int free_cmp(const void *a, const void *b)
{
    const free_ent *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return x->time < y->time ? -1 : x->time > y->time;
}

static const char *alloc_kind_name(unsigned k)
{
    static const char *const n[] = {"?", "malloc", "calloc", "realloc", "posix_memalign",
                                    "aligned_alloc", "memalign", "valloc", "mmap", "mremap",
                                    "pvalloc"};
    return k < sizeof n / sizeof n[0] ? n[k] : "?";
}

/* Lifetimes: each free ends the allocation at its address that started last
 * before it. Both lists sorted by (addr, time). */
static void close_lifetimes(ctx *c)
{
    if (c->allocs.n > 1)
        qsort(c->allocs.v, c->allocs.n, sizeof *c->allocs.v, alloc_cmp);
    if (c->frees.n > 1)
        qsort(c->frees.v, c->frees.n, sizeof *c->frees.v, free_cmp);
    size_t i = 0, j = 0;
    while (i < c->allocs.n && j < c->frees.n) {
        alloc_ent *a = &c->allocs.v[i];
        free_ent *f = &c->frees.v[j];
        if (f->addr < a->addr) {
            j++;
            continue;
        }
        if (f->addr > a->addr) {
            i++;
            continue;
        }
        if (f->time < a->t_alloc) { /* a free of an earlier, unrecorded allocation */
            j++;
            continue;
        }
        /* the next allocation at this address must start after this free */
        if (i + 1 < c->allocs.n && c->allocs.v[i + 1].addr == a->addr &&
            c->allocs.v[i + 1].t_alloc <= f->time) {
            i++;
            continue;
        }
        a->t_free = f->time;
        i++;
        j++;
    }
}

/* Allocation live at time t containing addr, or -1. prefix_end[i] = max end
 * of allocs[0..i]. */
static long alloc_find(const ctx *c, const uint64_t *prefix_end, uint64_t addr, uint64_t t)
{
    size_t lo = 0, hi = c->allocs.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->allocs.v[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    long best = -1;
    for (size_t k = lo; k > 0; k--) {
        if (prefix_end[k - 1] <= addr)
            break;
        const alloc_ent *a = &c->allocs.v[k - 1];
        if (addr < a->addr + a->size && t >= a->t_alloc && t < a->t_free) {
            if (best < 0 || a->t_alloc > c->allocs.v[best].t_alloc)
                best = (long)(k - 1);
        }
    }
    /* a sample stamped just before the allocation record (clock skew between
     * the kernel and the hook) still belongs to it if nothing else does */
    if (best < 0)
        for (size_t k = lo; k > 0; k--) {
            if (prefix_end[k - 1] <= addr)
                break;
            const alloc_ent *a = &c->allocs.v[k - 1];
            if (addr < a->addr + a->size && t < a->t_free) {
                best = (long)(k - 1);
                break;
            }
        }
    return best;
}

static int is_runtime_module(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    /* memwatch itself, the C library and the C++/Fortran allocation wrappers:
     * the allocation site is the first frame outside them */
    return !strncmp(b, "libmemwatch", 11) || !strncmp(b, "libc.so", 7) ||
           !strncmp(b, "libc-", 5) || !strncmp(b, "ld-linux", 8) ||
           !strncmp(b, "libstdc++", 9) || !strncmp(b, "libgfortran", 11) ||
           !strncmp(b, "libgcc_s", 8);
}

static int insert_allocations(ctx *c)
{
    for (size_t i = 0; i < c->allocs.n; i++) {
        alloc_ent *a = &c->allocs.v[i];
        uint64_t fr[128];
        size_t n = a->nframes < 128 ? a->nframes : 128;
        for (size_t k = 0; k < n; k++)
            fr[k] = mw_u64_at(a->frames, k);
        int64_t leaf = 0, sid = n ? stack_of(c, fr, n, 0, &leaf) : 0;
        if (sid < 0)
            return -EIO;
        /* allocation site: the first frame outside memwatch and libc */
        int64_t site = 0;
        for (size_t k = 0; k < n && !site; k++) {
            const pmod *pm = pmod_find(c, fr[k]);
            if (pm && is_runtime_module(c->gmods.v[pm->gi].path))
                continue;
            site = pc_of(c, fr[k], 1);
        }
        if (!site && n)
            site = leaf;
        a->site_pc = site;
        sqlite3_stmt *s = c->s_alloc;
        sqlite3_bind_int64(s, 1, c->proc_id);
        sqlite3_bind_int64(s, 2, a->tid);
        bind_text(s, 3, alloc_kind_name(a->kind));
        bind_u64(s, 4, a->addr);
        bind_u64(s, 5, a->size);
        bind_u64(s, 6, a->t_alloc);
        if (a->t_free != UINT64_MAX)
            bind_u64(s, 7, a->t_free);
        bind_id(s, 8, sid);
        bind_id(s, 9, site);
        if (step(c, s))
            return -EIO;
        a->db_id = sqlite3_last_insert_rowid(c->db);
    }
    return 0;
}

static int64_t object_new(ctx *c, const char *kind, const char *name, uint64_t addr,
                          uint64_t size, int64_t alloc_id, int64_t module_id, int64_t site)
{
    sqlite3_stmt *s = c->s_obj;
    sqlite3_bind_int64(s, 1, c->proc_id);
    bind_text(s, 2, kind);
    bind_text(s, 3, name);
    bind_u64(s, 4, addr);
    bind_u64(s, 5, size);
    bind_id(s, 6, alloc_id);
    bind_id(s, 7, module_id);
    bind_id(s, 8, site);
    if (step(c, s))
        return -1;
    return sqlite3_last_insert_rowid(c->db);
}

static int64_t data_object(ctx *c, const smp *x, const uint64_t *prefix_end)
{
    if (!x->addr)
        return 0;
    long ai = c->allocs.n ? alloc_find(c, prefix_end, x->addr, x->time) : -1;
    if (ai >= 0) {
        alloc_ent *a = &c->allocs.v[ai];
        if (!a->object_id) {
            char name[96];
            snprintf(name, sizeof name, "%s(%llu)", alloc_kind_name(a->kind),
                     (unsigned long long)a->size);
            a->object_id = object_new(c, "heap", name, a->addr, a->size, a->db_id, 0, a->site_pc);
        }
        return a->object_id;
    }
    /* stack: near the sampled stack pointer, or inside a [stack] mapping */
    int on_stack = x->sp && x->addr + 65536 >= x->sp && x->addr < x->sp + (8u << 20);
    for (size_t i = 0; !on_stack && i < c->pmods.n; i++)
        on_stack = c->pmods.v[i].is_stack && x->addr >= c->pmods.v[i].start &&
                   x->addr < c->pmods.v[i].end;
    if (on_stack) {
        int64_t *hit = hmap_get(&c->stack_objs, x->tid, 0);
        if (hit)
            return *hit;
        char name[48];
        snprintf(name, sizeof name, "stack of thread %u", x->tid);
        int64_t id = object_new(c, "stack", name, 0, 0, 0, 0, 0);
        hmap_put(&c->stack_objs, x->tid, 0, id);
        return id;
    }
    const pmod *pm = pmod_find(c, x->addr);
    if (pm) {
        gmod *g = &c->gmods.v[pm->gi];
        const char *name;
        uint64_t start, size;
        if (g->sm && mw_symmod_data_symbol(g->sm, x->addr - pm->base, &name, &start, &size)) {
            int64_t *hit = hmap_get(&c->statics, pm->gi, start);
            if (hit)
                return *hit;
            int64_t id = object_new(c, "static", mw_sym_demangle(name, &c->dm_buf, &c->dm_cap),
                                    start + pm->base, size, 0, g->db_id, 0);
            hmap_put(&c->statics, pm->gi, start, id);
            return id;
        }
    }
    return 0;
}

static size_t unwind_offline(ctx *c, const smp *x, const attr_ent *a, uint64_t *chain,
                             size_t max, size_t n_kernel)
{
    if (!c->unw && !c->unw_failed && mw_unwinder_new(&c->unw) != 0)
        c->unw_failed = 1;
    if (!c->unw)
        return n_kernel;
    mw_unwind_module mods[256];
    size_t nm = 0;
    for (size_t i = 0; i < c->pmods.n && nm < 256; i++)
        if (!c->pmods.v[i].is_stack)
            mods[nm++] = (mw_unwind_module){c->pmods.v[i].start, c->pmods.v[i].end,
                                            c->pmods.v[i].base,
                                            c->gmods.v[c->pmods.v[i].gi].path};
    int got = mw_unwind_sample(c->unw, mods, nm, a->fmt.regs_user_mask, x->regs, x->stack,
                               x->stack_size, chain, max);
    return got > (int)n_kernel ? (size_t)got : n_kernel;
}

static int insert_samples(ctx *c)
{
    if (c->ivs.n > 1)
        qsort(c->ivs.v, c->ivs.n, sizeof *c->ivs.v, iv_cmp);
    uint64_t *prefix_end = NULL;
    if (c->allocs.n) {
        prefix_end = malloc(c->allocs.n * sizeof *prefix_end);
        if (!prefix_end)
            return -ENOMEM;
        uint64_t m = 0;
        for (size_t i = 0; i < c->allocs.n; i++) {
            uint64_t e = c->allocs.v[i].addr + c->allocs.v[i].size;
            m = e > m ? e : m;
            prefix_end[i] = m;
        }
    }
    int rc = 0;
    for (size_t i = 0; i < c->smps.n; i++) {
        const smp *x = &c->smps.v[i];
        const attr_ent *a = &c->attrs.v[x->attr_idx];
        uint64_t chain[128];
        size_t n = 0;
        if (x->chain_nr) {
            mw_sample tmp = {0};
            tmp.callchain = x->chain;
            tmp.callchain_nr = x->chain_nr;
            n = mw_callchain_user(&tmp, chain, 128);
        }
        int exact0 = 1;
        /* no usable kernel chain (frame pointers missing) but regs + stack
         * were sampled: unwind offline */
        if (n <= 2 && x->regs && x->stack_size)
            n = unwind_offline(c, x, a, chain, 128, n);
        if (n == 0 || chain[0] != x->ip) {
            /* the chain starts at the caller: put the sample ip in front */
            if (n == 128)
                n--;
            memmove(chain + 1, chain, n * sizeof *chain);
            chain[0] = x->ip;
            n++;
        }
        int64_t leaf = 0, sid = stack_of(c, chain, n, exact0, &leaf);
        if (sid < 0) {
            rc = -EIO;
            break;
        }
        long ivi = mw_hybrid_find(c->ivs.v, c->ivs.n, x->time);
        int flagged = ivi >= 0 && (c->ivs.v[ivi].flags & MWR_IV_BW_BOUND);
        int sel = mw_hybrid_keep(a->source, flagged, x->weight, c->proc_threshold);
        int64_t obj = data_object(c, x, prefix_end);
        if (obj < 0) {
            rc = -EIO;
            break;
        }
        sqlite3_stmt *s = c->s_sample;
        const uint64_t st = a->fmt.sample_type;
#define BIND_IF(i, cond, v)                                                                    \
    do {                                                                                       \
        if (cond)                                                                              \
            sqlite3_bind_int64(s, i, (int64_t)(v));                                            \
        else                                                                                   \
            sqlite3_bind_null(s, i);                                                           \
    } while (0)
        sqlite3_bind_int64(s, 1, c->proc_id);
        sqlite3_bind_int64(s, 2, a->event_id);
        sqlite3_bind_text(s, 3, mw_sample_source_name(a->source), -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 4, x->tid);
        bind_u64(s, 5, x->time);
        BIND_IF(6, x->cpu != UINT32_MAX, x->cpu);
        bind_u64(s, 7, x->period);
        bind_u64(s, 8, x->ip);
        sqlite3_bind_int64(s, 9, leaf);
        sqlite3_bind_int64(s, 10, sid);
        BIND_IF(11, st & PERF_SAMPLE_ADDR, x->addr);
        BIND_IF(12, st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT), x->weight);
        BIND_IF(13, ivi >= 0, ivi >= 0 ? c->ivs.v[ivi].id : 0);
        sqlite3_bind_int(s, 14, flagged);
        sqlite3_bind_int(s, 15, sel);
        BIND_IF(16, obj > 0, obj);
        if ((rc = step_all_bound(c, s)) != 0)
            break;
        /* memory-access details only for events that sample them */
        int has_ds = (st & PERF_SAMPLE_DATA_SRC) != 0, has_pa = (st & PERF_SAMPLE_PHYS_ADDR) != 0;
        if (has_ds || has_pa) {
            mw_mem_src m;
            memset(&m, 0, sizeof m);
            if (has_ds)
                mw_mem_src_decode(x->data_src, &m);
            s = c->s_mem;
            sqlite3_bind_int64(s, 1, sqlite3_last_insert_rowid(c->db));
            BIND_IF(2, has_pa, x->phys);
            BIND_IF(3, has_ds, x->data_src);
            BIND_IF(4, has_ds, m.op);
            BIND_IF(5, has_ds, m.level);
            BIND_IF(6, has_ds && m.hit >= 0, m.hit);
            BIND_IF(7, has_ds, m.remote);
            BIND_IF(8, has_ds, m.hops);
            BIND_IF(9, has_ds, m.tlb);
            BIND_IF(10, has_ds, m.snoop);
            BIND_IF(11, has_ds && m.lock >= 0, m.lock);
            if ((rc = step_all_bound(c, s)) != 0)
                break;
        }
#undef BIND_IF
        c->st->samples++;
        if (c->o->progress && (i & 0xffff) == 0xffff)
            c->o->progress(c->cur_base + c->cur_size / 5 +
                               (uint64_t)((double)c->cur_size * 0.8 * (double)i / (double)c->smps.n),
                           c->bytes_total, NULL, c->o->progress_user);
    }
    free(prefix_end);
    return rc;
}

static int insert_threads(ctx *c)
{
    for (size_t i = 0; i < c->thrs.n; i++) {
        thr *t = &c->thrs.v[i];
        sqlite3_stmt *s = c->s_thread;
        sqlite3_bind_int64(s, 1, c->proc_id);
        sqlite3_bind_int64(s, 2, t->tid);
        bind_text(s, 3, t->name[0] ? t->name : NULL);
        if (t->t_start)
            bind_u64(s, 4, t->t_start);
        if (t->t_end)
            bind_u64(s, 5, t->t_end);
        if (step(c, s))
            return -EIO;
    }
    return 0;
}

static void file_reset(ctx *c)
{
    free(c->pmods.v);
    free(c->attrs.v);
    free(c->smps.v);
    free(c->allocs.v);
    free(c->frees.v);
    free(c->ivs.v);
    free(c->thrs.v);
    memset(&c->pmods, 0, sizeof c->pmods);
    memset(&c->attrs, 0, sizeof c->attrs);
    memset(&c->smps, 0, sizeof c->smps);
    memset(&c->allocs, 0, sizeof c->allocs);
    memset(&c->frees, 0, sizeof c->frees);
    memset(&c->ivs, 0, sizeof c->ivs);
    memset(&c->thrs, 0, sizeof c->thrs);
    hmap_free(&c->thr_idx);
    hmap_free(&c->stack_objs);
    /* statics are keyed by module and address: only valid within a process */
    hmap_free(&c->statics);
}

/* A META value of the current process ("" when absent). */
static void meta_value(ctx *c, const char *key, char *buf, size_t n)
{
    sqlite3_stmt *s;
    buf[0] = 0;
    if (sqlite3_prepare_v2(c->db, "SELECT value FROM meta WHERE process_id=? AND key=?"
                                  " ORDER BY rowid DESC LIMIT 1", -1, &s, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_int64(s, 1, c->proc_id);
    sqlite3_bind_text(s, 2, key, -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
        snprintf(buf, n, "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
}

/* The latency threshold (core cycles, the unit of PEBS/IBS weights) for this
 * process's precise samples: the user's value; else the machine profile the
 * recording used (META "profile"), its precise-latency method's threshold or
 * its idle DRAM latency; else the profile found when the report started;
 * else the idle probe latency measured at record time (META "baseline_ns");
 * else the run default. */
static void process_threshold(ctx *c)
{
    c->proc_threshold = c->threshold;
    c->proc_thr_src = c->o->threshold > 0 ? "option" : NULL;
    if (c->o->threshold > 0)
        return;
    char prof[4096], tsc[64], base[64];
    meta_value(c, "profile", prof, sizeof prof);
    meta_value(c, "tsc_hz", tsc, sizeof tsc);
    meta_value(c, "baseline_ns", base, sizeof base);
    double tsc_hz = atof(tsc);
    if (!c->o->profile_path && prof[0] == '/') {
        char *cut = strstr(prof, " (created");
        if (cut)
            *cut = 0;
        mw_profile p;
        if (mw_profile_load(prof, 0, &p) == 0) {
            double t = mw_hybrid_threshold(&p, 0);
            double hz = p.tsc_hz > 0 ? p.tsc_hz : tsc_hz;
            if (t > 0 && hz > 0) {
                c->proc_threshold = t * hz / 1e9;
                c->proc_thr_src = "machine profile of the recording (cycles)";
                return;
            }
        }
    }
    if (c->have_run_profile)
        return;
    double b = atof(base);
    if (b > 0 && tsc_hz > 0) {
        c->proc_threshold = b * tsc_hz / 1e9;
        c->proc_thr_src = "idle latency measured at record time (baseline_ns, cycles)";
    }
}

/* Fill processes columns from META keys once the file was read. */
static const char proc_from_meta[] =
    "UPDATE processes SET "
    " pid = (SELECT CAST(value AS INTEGER) FROM meta WHERE process_id=?1 AND key='pid'),"
    " ppid = (SELECT CAST(value AS INTEGER) FROM meta WHERE process_id=?1 AND key='ppid'),"
    " rank = (SELECT CAST(value AS INTEGER) FROM meta WHERE process_id=?1 AND key IN "
    "   ('rank','mpi.rank','mpi_rank') LIMIT 1),"
    " hostname = (SELECT value FROM meta WHERE process_id=?1 AND key IN ('hostname','host') LIMIT 1),"
    " exe = (SELECT value FROM meta WHERE process_id=?1 AND key IN ('exe','program') LIMIT 1),"
    " cmdline = (SELECT value FROM meta WHERE process_id=?1 AND key IN ('cmdline','argv','command') LIMIT 1),"
    " t_start = COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE process_id=?1 AND key IN "
    "   ('start_monotonic_ns','start_ns','t_start') LIMIT 1),"
    "   (SELECT MIN(t_start) FROM intervals WHERE process_id=?1),"
    "   (SELECT MIN(time_ns) FROM samples WHERE process_id=?1)),"
    " t_end = COALESCE((SELECT MAX(t_end) FROM intervals WHERE process_id=?1),"
    "   (SELECT MAX(time_ns) FROM samples WHERE process_id=?1))"
    " WHERE id=?1";

static int ingest_file(ctx *c, const char *path)
{
    mw_reader *r = NULL;
    int rc = mw_reader_open(path, &r);
    sqlite3_stmt *s = NULL;
    if (exec(c, "BEGIN"))
        return -EIO;
    if (sqlite3_prepare_v2(c->db,
                           "INSERT INTO processes(run_id,file,status,clean_exit) VALUES(?,?,?,0)",
                           -1, &s, NULL) != SQLITE_OK)
        return sql_err(c, "processes");
    sqlite3_bind_int64(s, 1, c->run_id);
    bind_text(s, 2, path);
    if (rc) {
        char msg[300];
        snprintf(msg, sizeof msg, "cannot read: %s", mw_strerror(rc));
        bind_text(s, 3, msg);
    }
    sqlite3_step(s);
    sqlite3_finalize(s);
    c->proc_id = sqlite3_last_insert_rowid(c->db);
    c->st->files++;
    if (rc) {
        c->st->files_damaged++;
        mw_log(MW_LOG_WARN, "%s: %s", path, mw_strerror(rc));
        return exec(c, "COMMIT") ? -EIO : 0;
    }
    mw_record rec;
    int n, damaged = 0;
    uint64_t last_prog = 0, base_done = c->bytes_done;
    c->files_opened++;
    c->cur_base = base_done;
    c->cur_size = mw_reader_size(r);
    while ((n = mw_reader_next(r, &rec)) == 1) {
        c->st->records++;
        int e = on_record(c, &rec);
        if (e == MW_ERR_CORRUPT) {
            mw_log(MW_LOG_WARN, "%s: record of type %u at byte %llu is malformed, skipped", path,
                   rec.type, (unsigned long long)rec.offset);
            continue;
        }
        if (e) {
            rc = e;
            goto out;
        }
        uint64_t pos = mw_reader_pos(r);
        if (c->o->progress && pos - last_prog > (8u << 20)) {
            last_prog = pos;
            c->o->progress(base_done + pos / 5, c->bytes_total, path, c->o->progress_user);
        }
    }
    if (n < 0) {
        damaged = 1;
        c->st->files_damaged++;
        mw_log(MW_LOG_WARN, "%s: %s", path, mw_reader_status(r));
    }
    mwr_trailer tr;
    int have_tr = mw_reader_trailer(r, &tr);
    if (!have_tr && !damaged)
        c->st->files_no_trailer++;
    process_threshold(c);
    close_lifetimes(c);
    if (c->pmods.n > 1)
        qsort(c->pmods.v, c->pmods.n, sizeof *c->pmods.v, pmod_cmp);
    if ((rc = insert_allocations(c)) || (rc = insert_samples(c)) || (rc = insert_threads(c)) ||
        (rc = mw_rgn_file_done(c->rgn, c->db, c->proc_id, have_tr ? tr.time_ns : 0)))
        goto out;
    if (have_tr) {
        if (tr.dropped_records &&
            loss(c, tr.time_ns, 0, 0, "dropped_records", tr.dropped_records))
            goto sqlfail;
        if (tr.alloc_dropped && loss(c, tr.time_ns, 0, 0, "alloc_dropped", tr.alloc_dropped))
            goto sqlfail;
    }
    if (sqlite3_prepare_v2(c->db,
                           "UPDATE processes SET clean_exit=?, exit_status=?, status=?, records=?,"
                           " bytes=?, trailer_lost=?, trailer_throttled=?, trailer_dropped=?,"
                           " trailer_alloc_dropped=?, threshold=?, threshold_source=? WHERE id=?",
                           -1, &s, NULL) != SQLITE_OK)
        goto sqlfail;
    sqlite3_bind_int(s, 1, have_tr);
    if (have_tr) {
        sqlite3_bind_int(s, 2, tr.exit_status);
        bind_u64(s, 6, tr.lost_samples);
        bind_u64(s, 7, tr.throttled);
        bind_u64(s, 8, tr.dropped_records);
        bind_u64(s, 9, tr.alloc_dropped);
    }
    bind_text(s, 3, mw_reader_status(r)[0] ? mw_reader_status(r) : "ok");
    bind_u64(s, 4, c->st->records);
    bind_u64(s, 5, mw_reader_pos(r));
    sqlite3_bind_double(s, 10, c->proc_threshold);
    bind_text(s, 11, c->proc_thr_src ? c->proc_thr_src : c->run_thr_src);
    sqlite3_bind_int64(s, 12, c->proc_id);
    if (sqlite3_step(s) != SQLITE_DONE)
        goto sqlfail;
    sqlite3_finalize(s);
    s = NULL;
    if (sqlite3_prepare_v2(c->db, proc_from_meta, -1, &s, NULL) != SQLITE_OK)
        goto sqlfail;
    sqlite3_bind_int64(s, 1, c->proc_id);
    if (sqlite3_step(s) != SQLITE_DONE)
        goto sqlfail;
    sqlite3_finalize(s);
    s = NULL;
    rc = exec(c, "COMMIT");
    c->bytes_done = base_done + mw_reader_size(r);
    goto out;
sqlfail:
    rc = sql_err(c, "process update");
    sqlite3_finalize(s);
out:
    file_reset(c);
    mw_reader_close(r);
    return rc;
}

int mw_report_ingest(const char *const *files, size_t nfiles, const mw_report_opts *o,
                     mw_report_stats *st)
{
    mw_report_stats dummy;
    if (!st)
        st = &dummy;
    memset(st, 0, sizeof *st);
    if (!o || !o->db_path || !nfiles)
        return -EINVAL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ctx c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.st = st;
    int rc = 0;
    if (!(c.rgn = mw_rgn_new()))
        return -ENOMEM;

    /* threshold for precise samples */
    const char *thr_src = "option";
    c.threshold = o->threshold;
    if (c.threshold <= 0) {
        char pp[4096] = "";
        mw_profile prof;
        const char *path = o->profile_path;
        if (!path && mw_profile_default_path(pp, sizeof pp) == 0)
            path = pp;
        if (path && path[0] && mw_profile_load(path, 0, &prof) == 0) {
            c.threshold = mw_hybrid_threshold(&prof, 0);
            /* precise weights count core cycles: convert with the TSC rate */
            if (prof.tsc_hz > 0)
                c.threshold *= prof.tsc_hz / 1e9;
            thr_src = "machine profile (cycles)";
            c.have_run_profile = c.threshold > 0;
        }
        if (c.threshold <= 0) {
            c.threshold = 300; /* cycles: about one idle DRAM access on current CPUs */
            thr_src = "default (no machine profile)";
        }
    }

    c.run_thr_src = thr_src;
    for (size_t i = 0; i < nfiles; i++) {
        FILE *f = fopen(files[i], "rb");
        if (f) {
            fseek(f, 0, SEEK_END);
            long sz = ftell(f);
            c.bytes_total += sz > 0 ? (uint64_t)sz : 0;
            fclose(f);
        }
    }

    unlink(o->db_path);
    if (sqlite3_open_v2(o->db_path, &c.db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        mw_log(MW_LOG_ERROR, "%s: %s", o->db_path, c.db ? sqlite3_errmsg(c.db) : "cannot open");
        rc = -EIO;
        goto out;
    }
    if ((rc = exec(&c, "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                       " PRAGMA locking_mode=EXCLUSIVE; PRAGMA temp_store=MEMORY;"
                       " PRAGMA cache_size=-65536;")) ||
        (rc = exec(&c, mw_report_schema)) || (rc = prepare_all(&c)))
        goto out;
    {
        char sql[256];
        snprintf(sql, sizeof sql, "INSERT INTO schema VALUES(%d)", MW_REPORT_SCHEMA_VERSION);
        if ((rc = exec(&c, sql)))
            goto out;
        static const char *const lv[] = {"mem_levels", "tlb_kinds", "snoop_kinds"};
        static const unsigned cnt[] = {MW_MEM_LEVEL_COUNT, MW_TLB_COUNT, MW_SNOOP_COUNT};
        for (int t = 0; t < 3; t++)
            for (unsigned k = 0; k < cnt[t]; k++) {
                const char *nm = t == 0 ? mw_mem_level_name(k)
                               : t == 1 ? mw_mem_tlb_name(k) : mw_mem_snoop_name(k);
                char *q = sqlite3_mprintf("INSERT INTO %s VALUES(%u,%Q)", lv[t], k, nm);
                rc = exec(&c, q);
                sqlite3_free(q);
                if (rc)
                    goto out;
            }
    }
    {
        sqlite3_stmt *s;
        if (sqlite3_prepare_v2(c.db,
                               "INSERT INTO runs(created,memwatch_version,inputs,nfiles,threshold,"
                               "threshold_source) VALUES(datetime('now'),?,?,?,?,?)",
                               -1, &s, NULL) != SQLITE_OK) {
            rc = sql_err(&c, "runs");
            goto out;
        }
        bind_text(s, 1, mw_version());
        bind_text(s, 2, o->inputs ? o->inputs : files[0]);
        sqlite3_bind_int64(s, 3, (int64_t)nfiles);
        sqlite3_bind_double(s, 4, c.threshold);
        bind_text(s, 5, thr_src);
        sqlite3_step(s);
        sqlite3_finalize(s);
        c.run_id = sqlite3_last_insert_rowid(c.db);
    }
    if (!o->no_symbols) {
        mw_symbolizer_opts so = {o->debug_dirs};
        if ((rc = mw_symbolizer_new(&so, &c.sym)))
            goto out;
    }
    for (size_t i = 0; i < nfiles; i++) {
        rc = ingest_file(&c, files[i]);
        if (rc) {
            exec(&c, "ROLLBACK");
            goto out;
        }
    }
    if (o->progress)
        o->progress(c.bytes_total, c.bytes_total, NULL, o->progress_user);
    rc = exec(&c, mw_report_indexes);
    if (!rc && !c.files_opened)
        rc = MW_ERR_NODATA;
out:
    finalize_all(&c);
    if (c.db)
        sqlite3_close(c.db);
    for (size_t i = 0; i < c.gmods.n; i++)
        free(c.gmods.v[i].path);
    free(c.gmods.v);
    hmap_free(&c.pcs);
    hmap_free(&c.stacks);
    file_reset(&c);
    mw_symbolizer_free(c.sym);
    mw_unwinder_free(c.unw);
    free(c.dm_buf);
    mw_rgn_free(c.rgn);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    st->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    return rc;
}
