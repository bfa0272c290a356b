/*
 * report/ingest_code.c: the code index of an ingest (report/ingest.h).
 *
 * Owns: the module files seen in any process (one modules row each, with
 * their symbolizer handles), one process's mappings (MODULE records and
 * MMAP/MMAP2 kernel records), code address -> pcs row (+ frames rows for
 * inlined calls), call chain -> stacks trie, and offline unwinding of
 * samples that carry registers and a stack copy.
 * May call: symbolize (mw_symbolizer, mw_unwinder), ing_db, libc.
 */
#include "ingest.h"
#include "perfmap.h"

#include <stdio.h>
#include <time.h>

const char *ing_code_demangle(ing_code *c, const char *name)
{
    return mw_sym_demangle(name, &c->dm_buf, &c->dm_cap);
}

int ing_code_module(ing_code *c, const char *path, size_t plen, const uint8_t *bid,
                    size_t bidlen, size_t *gi)
{
    if (bidlen > 20)
        bidlen = 20;
    for (size_t i = 0; i < c->gmods.n; i++) {
        ing_gmod *g = &c->gmods.v[i];
        if (strlen(g->path) == plen && !memcmp(g->path, path, plen) && g->bidlen == bidlen &&
            !memcmp(g->bid, bid, bidlen)) {
            *gi = i;
            return 0;
        }
    }
    ing_gmod g = {0};
    g.unwind_ok = -1;
    g.path = strndup(path, plen);
    if (!g.path)
        return -ENOMEM;
    memcpy(g.bid, bid, bidlen);
    g.bidlen = bidlen;
    if (c->sym)
        mw_symbolizer_module(c->sym, g.path, bidlen ? g.bid : NULL, bidlen, &g.sm);
    char hex[41] = "";
    for (size_t i = 0; i < bidlen; i++)
        snprintf(hex + 2 * i, 3, "%02x", g.bid[i]);
    int rc = ing_db_module_id(c->db, g.path, bidlen ? hex : NULL,
                              g.sm ? mw_symmod_debug_file(g.sm) : NULL,
                              g.sm ? mw_symmod_quality(g.sm) : MW_SYMQ_NONE, &g.db_id);
    if (rc) {
        free(g.path);
        return rc;
    }
    if (ING_VEC_PUSH(c->gmods, g)) {
        free(g.path);
        return -ENOMEM;
    }
    *gi = c->gmods.n - 1;
    return 0;
}

int ing_code_map(ing_code *c, const ing_pmod *pm) { return ING_VEC_PUSH(c->pmods, *pm); }

static int pmod_cmp(const void *a, const void *b)
{
    const ing_pmod *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

void ing_code_sort(ing_code *c)
{
    if (c->pmods.n > 1)
        qsort(c->pmods.v, c->pmods.n, sizeof *c->pmods.v, pmod_cmp);
}

/* Module of a runtime address in this process, or NULL. */
const ing_pmod *ing_code_find(const ing_code *c, uint64_t a)
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
        const ing_pmod *p = &c->pmods.v[k - 1];
        if (a >= p->start && a < p->end && !p->is_stack)
            return p;
    }
    return NULL;
}

/* The perf map's name for code in no loaded object (JIT-compiled code,
 * interpreter trampolines), or NULL. */
static const char *jit_name(ing_code *c, uint64_t addr)
{
    if (!c->pmap_tried) {
        c->pmap_tried = 1;
        char pid[32], rt[32];
        ing_db_meta_value(c->db, c->proc, "pid", pid, sizeof pid);
        ing_db_meta_value(c->db, c->proc, "start_realtime_ns", rt, sizeof rt);
        if (atol(pid) > 0)
            mw_perfmap_open(c->raw_path, atol(pid), strtoull(rt, NULL, 10), &c->pmap,
                            c->pmap_why, sizeof c->pmap_why);
        else
            snprintf(c->pmap_why, sizeof c->pmap_why, "the file has no pid");
    }
    return mw_perfmap_find(c->pmap, addr);
}

int64_t ing_code_pc(ing_code *c, uint64_t addr, int ret)
{
    const ing_pmod *pm = ing_code_find(c, addr);
    /* addresses in no loaded object are the process's own (JIT code differs
     * between processes) */
    uint64_t key_mod = pm ? pm->gi + 1 : (addr >> 63) ? 0 : (1ull << 62) + (uint64_t)c->proc;
    uint64_t rel = pm ? addr - pm->base : addr;
    if (ret && rel)
        rel -= 1; /* inside the call instruction */
    int64_t *hit = ing_hmap_get(&c->pcs, key_mod, rel);
    if (hit)
        return *hit;
    int64_t id = ++c->next_pc;
    mw_sym_result r;
    memset(&r, 0, sizeof r);
    ing_gmod *g = pm ? &c->gmods.v[pm->gi] : NULL;
    if (g && g->sm)
        mw_symmod_lookup(g->sm, rel, &r);
    const mw_sym_frame *f0 = r.nframes ? &r.frames[0] : NULL;
    char fallback[64];
    const char *fn = f0 ? f0->function : NULL;
    if (!fn && !g && (addr >> 63))
        fn = "[kernel]";
    if (!fn && !g && addr) {
        c->anon_pcs++;
        if ((fn = jit_name(c, rel))) {
            c->anon_named++;
            r.quality = MW_SYMQ_PERFMAP;
        }
    }
    if (!fn) {
        /* a module that could not be read: module@0xADDR, as perf names unknown code */
        snprintf(fallback, sizeof fallback, "%s+0x%llx", g ? "" : "[unknown]",
                 (unsigned long long)rel);
        if (g) {
            const char *b = strrchr(g->path, '/');
            snprintf(fallback, sizeof fallback, "%.40s@0x%llx", b ? b + 1 : g->path,
                     (unsigned long long)rel);
        }
        fn = fallback;
    }
    char nearest[600];
    if (r.nearest)
        snprintf(nearest, sizeof nearest, "%s", ing_code_demangle(c, r.nearest));
    if (ing_db_pc(c->db, id, g ? g->db_id : 0, rel, &r, ing_code_demangle(c, fn),
                  r.nearest ? nearest : NULL))
        return -1;
    for (unsigned i = 0; i < r.nframes; i++)
        if (ing_db_frame(c->db, id, i, &r.frames[i], ing_code_demangle(c, r.frames[i].function)))
            return -1;
    ing_hmap_put(&c->pcs, key_mod, rel, id);
    c->st->pcs++;
    return id;
}

/* libmemwatch.so (or a copy named so): memwatch's own code */
static int is_memwatch(const char *path)
{
    const char *b = strrchr(path, '/');
    return !strncmp(b ? b + 1 : path, "libmemwatch", 11);
}

/* A return address inside a loaded object but in none of its executable
 * segments (its data: a pointer on the stack read as a return address) */
static int in_data(ing_code *c, const ing_pmod *pm, uint64_t ret)
{
    ing_gmod *g = &c->gmods.v[pm->gi];
    return g->sm && ret > pm->base && mw_symmod_in_code(g->sm, ret - 1 - pm->base) == 0;
}

size_t ing_code_trim(ing_code *c, uint64_t *a, size_t n, int exact0, int *cut)
{
    size_t keep = 0, own = 0, end = n;
    for (size_t k = 0; k < n; k++) {
        const ing_pmod *pm = ing_code_find(c, a[k]);
        if (pm && !(k == 0 && exact0) && in_data(c, pm, a[k])) {
            end = k; /* a loaded object's data, no code: a word of a damaged stack */
            *cut = 1;
            if (!c->cut_nocode++)
                c->cut_first = a[k];
            break;
        }
        if (pm) {
            own += is_memwatch(c->gmods.v[pm->gi].path);
            keep += !is_memwatch(c->gmods.v[pm->gi].path);
        } else if ((k == 0 && exact0) || (a[k] >> 63) || jit_name(c, a[k] - 1)) {
            keep++; /* the sampled address, the kernel, or code a perf map names */
        } else {
            end = k; /* no code there: a word of a damaged stack */
            *cut = 1;
            if (!c->cut_nocode++)
                c->cut_first = a[k];
            break;
        }
    }
    if (!keep && own)
        return end; /* memwatch's own thread: nothing of the program's to name */
    size_t out = 0;
    for (size_t k = 0; k < end; k++) {
        const ing_pmod *pm = ing_code_find(c, a[k]);
        if (!pm || !is_memwatch(c->gmods.v[pm->gi].path))
            a[out++] = a[k];
    }
    return out;
}

int64_t ing_code_stack(ing_code *c, const uint64_t *addrs, size_t n, int exact0,
                       int64_t *leaf_pc)
{
    int64_t parent = 0;
    *leaf_pc = 0;
    for (size_t k = n; k-- > 0;) {
        int64_t pc = ing_code_pc(c, addrs[k], !(k == 0 && exact0));
        if (pc < 0)
            return -1;
        int64_t *hit = ing_hmap_get(&c->stacks, (uint64_t)parent, (uint64_t)pc);
        int64_t sid;
        if (hit) {
            sid = *hit;
        } else {
            sid = ++c->next_stack;
            if (ing_db_stack(c->db, sid, parent, pc, (int64_t)(n - 1 - k)))
                return -1;
            ing_hmap_put(&c->stacks, (uint64_t)parent, (uint64_t)pc, sid);
        }
        parent = sid;
        if (k == 0)
            *leaf_pc = pc;
    }
    return parent;
}

size_t ing_code_unwind(ing_code *c, uint64_t regs_mask, const void *regs, const void *stack,
                       uint32_t stack_size, uint64_t *chain, size_t max, int *complete)
{
    *complete = 0;
    if (c->leaf_only)
        return 0;
    if (!c->unw && !c->unw_failed && mw_unwinder_new(&c->unw) != 0)
        c->unw_failed = 1;
    if (!c->unw)
        return 0;
    if (!c->umods_ok) {
        c->umods.n = 0;
        for (size_t i = 0; i < c->pmods.n; i++)
            if (!c->pmods.v[i].is_stack) {
                ing_gmod *g = &c->gmods.v[c->pmods.v[i].gi];
                if (g->unwind_ok < 0) {
                    /* another build of the file at that path would unwind
                     * into nonsense: such frames end the chain (truncated) */
                    uint8_t bid[20];
                    int n = mw_sym_file_build_id(g->path, bid, sizeof bid);
                    g->unwind_ok = n >= 0 && (!g->bidlen || ((size_t)n == g->bidlen &&
                                                             !memcmp(bid, g->bid, g->bidlen)));
                    /* a copy by its build-id: memwatch record keeps one of
                     * libmemwatch.so beside the raw files, where every
                     * allocation stack begins */
                    char alt[4096];
                    if (!g->unwind_ok && g->bidlen &&
                        mw_sym_find_build_id(c->debug_dirs, g->bid, g->bidlen, alt, sizeof alt) &&
                        (g->unwind_path = strdup(alt)))
                        g->unwind_ok = 1;
                }
                mw_unwind_module m = {c->pmods.v[i].start, c->pmods.v[i].end, c->pmods.v[i].base,
                                      g->unwind_ok ? (g->unwind_path ? g->unwind_path : g->path)
                                                   : NULL};
                if (ING_VEC_PUSH(c->umods, m))
                    return 0;
            }
        c->umods_ok = 1;
    }
    /* the CPU time of one unwind (memwatch report prints it): the mean of
     * every 8th (two clock reads around each were 5% of a build's report) */
    int timed = (c->unw_calls++ & 7) == 0;
    struct timespec t0, t1;
    if (timed)
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    int got = mw_unwind_sample(c->unw, c->umods.v, c->umods.n, regs_mask, regs, stack,
                               stack_size, chain, max);
    if (timed) {
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
        c->unw_timed_s += (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        c->unw_timed++;
    }
    if (got <= 0)
        return 0;
    *complete = mw_unwind_last_complete(c->unw);
    c->st->unwound++;
    c->st->unwind_seconds = c->unw_timed_s / (double)c->unw_timed * (double)c->st->unwound;
    return (size_t)got;
}

void ing_code_end_process(ing_code *c)
{
    ING_VEC_FREE(c->pmods);
    mw_perfmap_free(c->pmap);
    c->pmap = NULL;
    c->pmap_tried = 0;
    c->anon_pcs = c->anon_named = 0;
    c->pmap_why[0] = 0;
    c->cut_nocode = c->cut_first = 0;
    ING_VEC_FREE(c->umods);
    c->umods_ok = 0;
    mw_unwinder_flush(c->unw); /* another process: other code at the same addresses */
}

void ing_code_free(ing_code *c)
{
    for (size_t i = 0; i < c->gmods.n; i++) {
        free(c->gmods.v[i].path);
        free(c->gmods.v[i].unwind_path);
    }
    ING_VEC_FREE(c->gmods);
    ing_hmap_free(&c->pcs);
    ing_hmap_free(&c->stacks);
    ing_code_end_process(c);
    mw_unwinder_free(c->unw);
    c->unw = NULL;
    ing_decoder_free(c->dec);
    c->dec = NULL;
    free(c->dm_buf);
    c->dm_buf = NULL;
}
