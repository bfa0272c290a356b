/*
 * report/ingest_objects.c: allocations and data objects of one process
 * (report/ingest.h).
 *
 * Owns: the allocation and free records of a process, their lifetimes, the
 * allocations rows (stack and allocation site through the code index), and
 * the match of a sampled data address to an object: a heap allocation live
 * at the sample's time, the sampling thread's stack (near the sampled stack
 * pointer or inside a [stack] mapping), or static data named by an ELF data
 * symbol of the module it falls in.
 * May call: ing_code, ing_db, symbolize (data symbols), libc.
 */
#include "ingest.h"

#include <memwatch/meta_keys.h>

#include <stdio.h>
#include <stdlib.h>

int ing_objects_alloc(ing_objects *o, const mwr_alloc *a, const void *frames,
                      const mwr_alloc_stack *stack, const void *regs, const void *copy)
{
    ing_alloc e = {a->addr, a->size, a->time_ns, UINT64_MAX, frames, a->tid, a->nframes,
                   (uint16_t)(a->kind & ~MWR_A_STACK), 0, 0, 0, NULL, NULL, 0, 0, 0, 0};
    if (stack) {
        e.regs = regs;
        e.stack = copy;
        e.regs_mask = stack->regs_mask;
        e.stack_size = stack->stack_size;
    }
    return ING_VEC_PUSH(o->allocs, e);
}

int ing_objects_free(ing_objects *o, const mwr_free *f)
{
    ing_free e = {f->addr, f->time_ns};
    return ING_VEC_PUSH(o->frees, e);
}

/* A sampled site's totals: a later record of the same pc replaces one. */
int ing_objects_site(ing_objects *o, const mwr_alloc_site *s)
{
    for (size_t i = 0; i < o->sites.n; i++)
        if (o->sites.v[i].pc == s->pc) {
            o->sites.v[i] = *s;
            return 0;
        }
    return ING_VEC_PUSH(o->sites, *s);
}

/* alloc_sites rows: each sampled site under the site of its recorded
 * allocations (those whose innermost frame outside memwatch is the site's
 * pc), else the pc's own line. After insert_allocations. */
static int insert_sites(ing_objects *o)
{
    for (size_t i = 0; i < o->sites.n; i++) {
        const mwr_alloc_site *s = &o->sites.v[i];
        int64_t site = 0;
        for (size_t k = 0; k < o->allocs.n && !site; k++)
            if (o->allocs.v[k].first_pc == s->pc)
                site = o->allocs.v[k].site_pc;
        if (!site)
            site = ing_code_pc(o->code, s->pc, 1);
        if (site < 0 || ing_db_alloc_site(o->db, o->proc, s, site))
            return -EIO;
    }
    return 0;
}

static int alloc_cmp(const void *a, const void *b)
{
    const ing_alloc *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return x->t_alloc < y->t_alloc ? -1 : x->t_alloc > y->t_alloc;
}

static int free_cmp(const void *a, const void *b)
{
    const ing_free *x = a, *y = b;
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
static void close_lifetimes(ing_objects *o)
{
    if (o->allocs.n > 1)
        qsort(o->allocs.v, o->allocs.n, sizeof *o->allocs.v, alloc_cmp);
    if (o->frees.n > 1)
        qsort(o->frees.v, o->frees.n, sizeof *o->frees.v, free_cmp);
    size_t i = 0, j = 0;
    while (i < o->allocs.n && j < o->frees.n) {
        ing_alloc *a = &o->allocs.v[i];
        ing_free *f = &o->frees.v[j];
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
        if (i + 1 < o->allocs.n && o->allocs.v[i + 1].addr == a->addr &&
            o->allocs.v[i + 1].t_alloc <= f->time) {
            i++;
            continue;
        }
        a->t_free = f->time;
        i++;
        j++;
    }
}

/* Allocation live at time t containing addr, or -1. */
static long alloc_find(const ing_objects *o, uint64_t addr, uint64_t t)
{
    const uint64_t *prefix_end = o->prefix_end;
    size_t lo = 0, hi = o->allocs.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->allocs.v[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    long best = -1;
    for (size_t k = lo; k > 0; k--) {
        if (prefix_end[k - 1] <= addr)
            break;
        const ing_alloc *a = &o->allocs.v[k - 1];
        if (addr < a->addr + a->size && t >= a->t_alloc && t < a->t_free) {
            if (best < 0 || a->t_alloc > o->allocs.v[best].t_alloc)
                best = (long)(k - 1);
        }
    }
    /* a sample stamped just before the allocation record (clock skew between
     * the kernel and the hook) still belongs to it if nothing else does */
    if (best < 0)
        for (size_t k = lo; k > 0; k--) {
            if (prefix_end[k - 1] <= addr)
                break;
            const ing_alloc *a = &o->allocs.v[k - 1];
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

/* The frame limit of the process's frame-pointer allocation stacks: META
 * alloc_frames (MEMWATCH_ALLOC_FRAMES, default 16), at most the 64 the
 * library takes; 64 for a file without the key. A stack of that many frames
 * was cut there (one that ends exactly at the limit is counted cut too). */
static uint32_t alloc_frame_limit(ing_objects *o)
{
    char v[32];
    ing_db_meta_value(o->db, o->proc, mw_meta_key(MW_META_ALLOC_FRAMES), v, sizeof v);
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    if (!v[0] || *end || n == 0 || n > 64)
        return 64;
    return (uint32_t)n;
}

static int insert_allocations(ing_objects *o)
{
    ing_code *c = o->code;
    uint32_t limit = o->allocs.n ? alloc_frame_limit(o) : 64;
    for (size_t i = 0; i < o->allocs.n; i++) {
        ing_alloc *a = &o->allocs.v[i];
        uint64_t fr[128];
        size_t n = a->nframes < 128 ? a->nframes : 128;
        for (size_t k = 0; k < n; k++)
            fr[k] = mw_u64_at(a->frames, k);
        a->truncated = a->nframes >= limit;
        if (a->regs) {
            /* a DWARF stack taken inside libmemwatch.so: unwind, then drop
             * memwatch's own frames (the hook and its helpers) */
            int complete;
            n = ing_code_unwind(c, a->regs_mask, a->regs, a->stack, a->stack_size, fr, 128,
                                &complete);
            a->truncated = !complete;
            size_t skip = 0;
            while (skip < n) {
                const ing_pmod *pm = ing_code_find(c, fr[skip]);
                const char *path = pm ? c->gmods.v[pm->gi].path : NULL;
                const char *b = path ? strrchr(path, '/') : NULL;
                b = b ? b + 1 : path;
                if (!b || strncmp(b, "libmemwatch", 11))
                    break;
                skip++;
            }
            if (skip == n)
                skip = 0; /* nothing outside memwatch: keep what there is */
            memmove(fr, fr + skip, (n - skip) * sizeof *fr);
            n -= skip;
        }
        /* memwatch's frames out; a frame in no code ends the chain (truncated) */
        n = ing_code_trim(c, fr, n, 0, &a->truncated);
        c->st->truncated += a->truncated;
        a->first_pc = n ? fr[0] : 0;
        int64_t leaf = 0, sid = n ? ing_code_stack(c, fr, n, 0, &leaf) : 0;
        if (sid < 0)
            return -EIO;
        /* allocation site: the first frame outside memwatch and libc */
        int64_t site = 0;
        for (size_t k = 0; k < n && !site; k++) {
            const ing_pmod *pm = ing_code_find(c, fr[k]);
            if (pm && is_runtime_module(c->gmods.v[pm->gi].path))
                continue;
            site = ing_code_pc(c, fr[k], 1);
        }
        if (!site && n)
            site = leaf;
        a->site_pc = site;
        a->db_id = ing_db_alloc_id(o->db, o->proc, a, alloc_kind_name(a->kind), sid, site);
        if (a->db_id < 0)
            return -EIO;
    }
    return 0;
}

int ing_objects_finish(ing_objects *o)
{
    close_lifetimes(o);
    int rc = insert_allocations(o);
    if (!rc)
        rc = insert_sites(o);
    if (rc || !o->allocs.n)
        return rc;
    o->prefix_end = malloc(o->allocs.n * sizeof *o->prefix_end);
    if (!o->prefix_end)
        return -ENOMEM;
    uint64_t m = 0;
    for (size_t i = 0; i < o->allocs.n; i++) {
        uint64_t e = o->allocs.v[i].addr + o->allocs.v[i].size;
        m = e > m ? e : m;
        o->prefix_end[i] = m;
    }
    return 0;
}

/* The main program's TLS block (x86-64, variant II: right below the thread
 * pointer, its size rounded up to its alignment), once per process */
static void tls_find(ing_objects *o)
{
    o->tls_state = -1;
    ing_code *c = o->code;
    for (size_t i = 0; i < c->pmods.n; i++) {
        if (c->pmods.v[i].is_stack)
            continue;
        ing_gmod *g = &c->gmods.v[c->pmods.v[i].gi];
        uint64_t memsz, align;
        int main_program;
        if (g->sm && mw_symmod_tls_segment(g->sm, &memsz, &align, &main_program) &&
            main_program) {
            o->tls_state = 1;
            o->tls_gi = c->pmods.v[i].gi;
            o->tls_block = (memsz + align - 1) / align * align;
            return;
        }
    }
}

/* Thread-local storage: the main program's variables by name, the rest of
 * the static TLS area (libraries' blocks, the thread control block) as one
 * object. 0 where addr is not in it. */
static int64_t tls_object(ing_objects *o, uint64_t addr, uint64_t fs_base)
{
    if (!fs_base || addr >= fs_base + 4096 || addr + (1u << 20) < fs_base)
        return 0;
    if (!o->tls_state)
        tls_find(o);
    uint64_t key = 0, start = 0, size = 0;
    const char *name = NULL;
    if (o->tls_state > 0 && addr < fs_base && addr >= fs_base - o->tls_block) {
        ing_gmod *g = &o->code->gmods.v[o->tls_gi];
        if (mw_symmod_tls_symbol(g->sm, addr - (fs_base - o->tls_block), &name, &start, &size))
            key = start + 1;
    }
    int64_t *hit = ing_hmap_get(&o->tls_objs, key, 0);
    if (hit)
        return *hit;
    char buf[300];
    if (key)
        snprintf(buf, sizeof buf, "%s (thread-local)", ing_code_demangle(o->code, name));
    else
        snprintf(buf, sizeof buf, "thread-local storage");
    int64_t id = ing_db_object_id(o->db, o->proc, "tls", buf, 0, key ? size : 0, 0,
                                  key ? o->code->gmods.v[o->tls_gi].db_id : 0, 0);
    ing_hmap_put(&o->tls_objs, key, 0, id);
    return id;
}

int ing_objects_data_file(ing_objects *o, const mwr_module *m, const char *path, size_t plen)
{
    ing_dfile d = {m->start, m->end, m->time_ns, strndup(path, plen),
                   (m->flags & MWR_MODULE_DATA_ANON) != 0, 0};
    if (!d.path || ING_VEC_PUSH(o->dfiles, d)) {
        free(d.path);
        return -ENOMEM;
    }
    return 0;
}

/* The file mapped as data (anon 0) or the anonymous mapping (anon 1) at
 * addr: the latest mapping there before time */
static int64_t data_file_object(ing_objects *o, uint64_t addr, uint64_t time, int anon)
{
    ing_dfile *best = NULL;
    for (size_t i = 0; i < o->dfiles.n; i++) {
        ing_dfile *d = &o->dfiles.v[i];
        if (d->anon == anon && addr >= d->start && addr < d->end &&
            (!best || (d->time <= time && d->time > best->time)))
            best = d;
    }
    if (!best)
        return 0;
    if (!best->object_id) {
        char name[160];
        if (anon)
            snprintf(name, sizeof name, "%s mapping at 0x%llx",
                     best->path[0] ? best->path : "anonymous", (unsigned long long)best->start);
        best->object_id = ing_db_object_id(o->db, o->proc, anon ? "anon" : "file",
                                           anon ? name : best->path, best->start,
                                           best->end - best->start, 0, 0, 0);
    }
    return best->object_id;
}

int64_t ing_objects_of(ing_objects *o, uint64_t addr, uint64_t time, uint64_t sp, uint32_t tid,
                       uint64_t fs_base)
{
    if (!addr)
        return 0;
    ing_code *c = o->code;
    int64_t file = o->dfiles.n ? data_file_object(o, addr, time, 0) : 0;
    if (file)
        return file;
    long ai = o->allocs.n ? alloc_find(o, addr, time) : -1;
    if (ai >= 0) {
        ing_alloc *a = &o->allocs.v[ai];
        if (!a->object_id) {
            char name[96];
            snprintf(name, sizeof name, "%s(%llu)", alloc_kind_name(a->kind),
                     (unsigned long long)a->size);
            a->object_id = ing_db_object_id(o->db, o->proc, "heap", name, a->addr, a->size,
                                            a->db_id, 0, a->site_pc);
        }
        return a->object_id;
    }
    /* thread-local storage (a thread's, above its stack) */
    int64_t tls = tls_object(o, addr, fs_base);
    if (tls)
        return tls;
    /* stack: near the sampled stack pointer, or inside a [stack] mapping */
    int on_stack = sp && addr + 65536 >= sp && addr < sp + (8u << 20);
    for (size_t i = 0; !on_stack && i < c->pmods.n; i++)
        on_stack = c->pmods.v[i].is_stack && addr >= c->pmods.v[i].start &&
                   addr < c->pmods.v[i].end;
    if (on_stack) {
        int64_t *hit = ing_hmap_get(&o->stack_objs, tid, 0);
        if (hit)
            return *hit;
        char name[48];
        snprintf(name, sizeof name, "stack of thread %u", tid);
        int64_t id = ing_db_object_id(o->db, o->proc, "stack", name, 0, 0, 0, 0, 0);
        ing_hmap_put(&o->stack_objs, tid, 0, id);
        return id;
    }
    const ing_pmod *pm = ing_code_find(c, addr);
    if (pm) {
        ing_gmod *g = &c->gmods.v[pm->gi];
        const char *name, *base = g->path ? strrchr(g->path, '/') : NULL;
        uint64_t start, size;
        /* memwatch's own data (its signal buffers, region slots) is not the
         * program's: such addresses stay unattributed */
        base = base ? base + 1 : g->path;
        if (base && !strncmp(base, "libmemwatch", 11))
            return 0;
        if (g->sm && mw_symmod_data_symbol(g->sm, addr - pm->base, &name, &start, &size)) {
            int64_t *hit = ing_hmap_get(&o->statics, pm->gi, start);
            if (hit)
                return *hit;
            int64_t id = ing_db_object_id(o->db, o->proc, "static", ing_code_demangle(c, name),
                                          start + pm->base, size, 0, g->db_id, 0);
            ing_hmap_put(&o->statics, pm->gi, start, id);
            return id;
        }
    }
    /* last: anonymous memory, where no allocation record names it (the
     * external sampler's only data objects) */
    return o->dfiles.n ? data_file_object(o, addr, time, 1) : 0;
}

void ing_objects_end_process(ing_objects *o)
{
    ING_VEC_FREE(o->allocs);
    ING_VEC_FREE(o->frees);
    ING_VEC_FREE(o->sites);
    free(o->prefix_end);
    o->prefix_end = NULL;
    ing_hmap_free(&o->stack_objs);
    ing_hmap_free(&o->tls_objs);
    o->tls_state = 0;
    for (size_t i = 0; i < o->dfiles.n; i++)
        free(o->dfiles.v[i].path);
    ING_VEC_FREE(o->dfiles);
    /* statics are keyed by module and address: only valid within a process */
    ing_hmap_free(&o->statics);
}
