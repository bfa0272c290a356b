/*
 * report/ingest.h: the parts of mw_report_ingest (raw files -> SQLite),
 * private to report/. docs/architecture.md describes the data path.
 *
 * Parts, each with its own state:
 *   ingest_db.c       ing_db: the database, its prepared statements and one
 *                     insert function per table (rows in, ids out)
 *   ingest_code.c     ing_code: the code index: module files (across
 *                     processes), one process's mappings, code address ->
 *                     pcs row, call chain -> stacks trie, offline unwinding
 *   ingest_objects.c  ing_objects: allocation lifetimes and the data-object
 *                     match (heap by address and lifetime, static data by ELF
 *                     data symbols, stacks by the stack pointer or [stack])
 *   ingest_records.c  ing_file: the record switch of one file (every record
 *                     decoded through report/reader.c), the kernel records,
 *                     threads, intervals and the samples' rows
 *   ingest_levels.c   the intervals' memory-load columns (bw_share, level,
 *                     in_band) from the process's META (report/levels.c)
 *   ingest.c          mw_report_ingest: the run, the per-file transaction,
 *                     the precise-sample threshold of each process
 * Threading: one ingest per database at a time; no global state.
 */
#ifndef MW_REPORT_INGEST_H
#define MW_REPORT_INGEST_H

#include <memwatch/decode.h>
#include <memwatch/mwr_gpu.h>
#include <memwatch/mwr_reader.h>
#include <memwatch/report.h>
#include <memwatch/symbolize.h>

#include <errno.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- a small hash map: (u64, u64) -> i64 (ingest_db.c) ---- */
typedef struct ing_hent {
    uint64_t a, b;
    int64_t v;
    int used;
} ing_hent;
typedef struct ing_hmap {
    ing_hent *t;
    size_t cap, n;
} ing_hmap;

int64_t *ing_hmap_get(ing_hmap *m, uint64_t a, uint64_t b);
int ing_hmap_put(ing_hmap *m, uint64_t a, uint64_t b, int64_t v);
void ing_hmap_free(ing_hmap *m);

/* ---- growable arrays ---- */
#define ING_VEC(T)                                                                             \
    struct {                                                                                   \
        T *v;                                                                                  \
        size_t n, cap;                                                                         \
    }
#define ING_VEC_PUSH(vec, item)                                                                \
    (((vec).n == (vec).cap &&                                                                  \
      !(ing_vec_grow((void **)&(vec).v, &(vec).cap, sizeof *(vec).v)))                         \
         ? -ENOMEM                                                                             \
         : ((vec).v[(vec).n++] = (item), 0))
#define ING_VEC_FREE(vec)                                                                      \
    do {                                                                                       \
        free((vec).v);                                                                         \
        memset(&(vec), 0, sizeof(vec));                                                        \
    } while (0)

static inline int ing_vec_grow(void **v, size_t *cap, size_t sz)
{
    size_t nc = *cap ? *cap * 2 : 64;
    void *p = realloc(*v, nc * sz);
    if (!p)
        return 0;
    *v = p;
    *cap = nc;
    return 1;
}

typedef struct ing_thr ing_thr;

/* ---- ing_db: the database and its statements (ingest_db.c) ---- */
typedef struct ing_db {
    sqlite3 *db;
    sqlite3_stmt *s_sample, *s_mem, *s_pc, *s_frame, *s_stack, *s_alloc, *s_obj, *s_loss, *s_iv,
        *s_meta, *s_thread, *s_event, *s_module, *s_pmod, *s_counter, *s_log, *s_gk, *s_gs,
        *s_gp, *s_acc;
    /* The rows of the process being ingested come after these rowids (one
     * file at a time, in one transaction): its per-process queries start
     * there instead of scanning every earlier process's rows. */
    int64_t meta0, iv0, smp0;
    struct {
        const char *sql;
        sqlite3_stmt *s;
    } cache[12];                  /* ing_db_prep */
    int ncache;
} ing_db;

/* Create the database at path (replacing a file there): schema, value
 * tables, prepared statements. */
int ing_db_open(ing_db *d, const char *path);
int ing_db_indexes(ing_db *d); /* after the bulk insert */
void ing_db_close(ing_db *d);
int ing_db_exec(ing_db *d, const char *sql);
/* A row (process_id, note) of the notes table `table` (region_notes,
 * name_notes), through a statement of its own; 0 or -EIO. */
int ing_db_note(sqlite3 *db, const char *table, int64_t proc_id, const char *note);
int ing_db_err(ing_db *d, const char *what); /* logs sqlite's message, -EIO */
int ing_db_step(ing_db *d, sqlite3_stmt *s); /* step, reset, clear bindings */
int ing_db_step_all_bound(ing_db *d, sqlite3_stmt *s); /* step, reset */
int64_t ing_db_last_id(ing_db *d);
/* A statement run once per process, prepared once per ingest: sql is a
 * string constant (cached by its address); the statement comes back reset,
 * with no bindings; the caller resets it after use and never finalizes it.
 * NULL on error. */
sqlite3_stmt *ing_db_prep(ing_db *d, const char *sql);
/* The newest META value of a process ("" when absent); proc is the process
 * being ingested (its rows are after d->meta0). */
void ing_db_meta_value(ing_db *d, int64_t proc, const char *key, char *buf, size_t n);
/* ingest_levels.c: the SQL functions of the intervals' memory-load columns
 * (once per database), and those columns of the process being ingested
 * (its intervals after d->iv0) from its META keys, after its records. */
int ing_levels_register(ing_db *d);
int ing_levels(ing_db *d, int64_t proc);

static inline void ing_bind_text_n(sqlite3_stmt *s, int i, const char *t, size_t n)
{
    if (t)
        sqlite3_bind_text(s, i, t, (int)n, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, i);
}
static inline void ing_bind_text(sqlite3_stmt *s, int i, const char *t)
{
    ing_bind_text_n(s, i, t, t ? strlen(t) : 0);
}
static inline void ing_bind_u64(sqlite3_stmt *s, int i, uint64_t v)
{
    sqlite3_bind_int64(s, i, (int64_t)v);
}
static inline void ing_bind_id(sqlite3_stmt *s, int i, int64_t v)
{
    if (v > 0)
        sqlite3_bind_int64(s, i, v);
    else
        sqlite3_bind_null(s, i);
}

/* Rows. Each returns 0 or -EIO; the *_id ones the new row id or -1. */
int ing_db_run(ing_db *d, const char *inputs, size_t nfiles, double threshold,
               const char *thr_src, int64_t *run_id);
int ing_db_meta(ing_db *d, int64_t proc, const char *text, size_t n); /* "k=v\n" lines */
int ing_db_log(ing_db *d, int64_t proc, const char *text, size_t n);
int64_t ing_db_event_id(ing_db *d, int64_t proc, const mwr_perf_attr *pa, const char *source,
                        const mw_sample_fmt *fmt);
int64_t ing_db_interval_id(ing_db *d, int64_t proc, const mwr_interval *iv);
int ing_db_process_module(ing_db *d, int64_t proc, int64_t module_id, const mwr_module *m);
int ing_db_counters(ing_db *d, int64_t proc, const mwr_counters *k, const void *values);
int ing_db_gpu_kernel(ing_db *d, int64_t proc, const mwr_gpu_kernel *k, const char *name);
int ing_db_gpu_sample(ing_db *d, int64_t proc, const mwr_gpu_sample *g);
int ing_db_gpu_pc(ing_db *d, int64_t proc, const mwr_gpu_pc *g, const char *file,
                  const char *func, const char *stalls, size_t stalls_len);
int ing_db_loss(ing_db *d, int64_t proc, uint64_t t, uint32_t tid, int64_t event,
                const char *kind, uint64_t n);
int ing_db_thread(ing_db *d, int64_t proc, const ing_thr *t);
int ing_db_module_id(ing_db *d, const char *path, const char *build_id_hex,
                     const char *debug_file, int quality, int64_t *id);
int ing_db_pc(ing_db *d, int64_t id, int64_t module_id, uint64_t rel, const mw_sym_result *r,
              const char *function, const char *nearest);
int ing_db_frame(ing_db *d, int64_t pc, unsigned depth, const mw_sym_frame *f,
                 const char *function);
int ing_db_stack(ing_db *d, int64_t id, int64_t parent, int64_t pc, int64_t depth);
int64_t ing_db_object_id(ing_db *d, int64_t proc, const char *kind, const char *name,
                         uint64_t addr, uint64_t size, int64_t alloc_id, int64_t module_id,
                         int64_t site);

typedef struct ing_sample_row {   /* one samples row (+ sample_mem) */
    int64_t event_id, pc, stack, interval_id, object; /* ids: <= 0 for none */
    const char *source;           /* a static string */
    uint64_t sample_type;         /* the event's: which columns it samples */
    uint64_t time, period, ip, addr, weight, phys, data_src;
    uint32_t tid, cpu;            /* cpu UINT32_MAX: not sampled */
    int flagged, selected;
    int truncated;                /* the call chain was cut short */
    const char *addr_source;      /* "precise", "decoded", "fault" or NULL: how addr came */
    int at_memory;                /* 1 at a memory instruction, 0 not, -1 not decoded */
} ing_sample_row;
int ing_db_sample(ing_db *d, int64_t proc, const ing_sample_row *r);
/* a sample_accesses row: one data access of a decoded timer sample */
int ing_db_sample_access(ing_db *d, int64_t sample, uint64_t addr, int64_t object, double share,
                         int write);

/* ---- ing_code: the code index (ingest_code.c) ---- */
typedef struct ing_gmod {         /* one module file (global across processes) */
    char *path;
    uint8_t bid[20];
    size_t bidlen;
    int64_t db_id;
    mw_symmod *sm;
    int unwind_ok;                /* the file on disk is the one recorded (build-id): 1 yes,
                                     0 no, -1 not looked at yet */
    char *unwind_path;            /* where it is not: a copy with the recorded build-id
                                     (debug_dirs' .build-id trees), or NULL */
} ing_gmod;

typedef struct ing_pmod {         /* a module mapped in one process */
    uint64_t start, end, base;
    size_t gi;                    /* index in ing_code.gmods */
    int is_stack;                 /* a [stack] mapping from MMAP2 */
} ing_pmod;

typedef struct ing_code {
    ing_db *db;
    mw_report_stats *st;
    mw_symbolizer *sym;           /* NULL: no symbols */
    const char *debug_dirs;       /* ':'-separated .build-id roots: the user's (or
                                     /usr/lib/debug) and the raw files' directories */
    char *dm_buf;                 /* mw_sym_demangle's buffer: names are stored demangled */
    size_t dm_cap;
    mw_unwinder *unw;             /* lazily created for samples with regs + stack */
    int unw_failed;
    ING_VEC(ing_gmod) gmods;
    ing_hmap pcs;                 /* (gmod index + 1 or 0, rel addr or abs addr) -> pc id */
    ing_hmap stacks;              /* (parent, pc) -> stack id */
    int64_t next_pc, next_stack;
    ING_VEC(ing_pmod) pmods;      /* this process's mappings (sorted by ing_code_sort) */
    /* code in no loaded object: the process's perf map (perfmap.c) */
    int64_t proc;                 /* this process's processes row */
    const char *raw_path;         /* its raw file */
    struct mw_perfmap *pmap;      /* looked for at the first such address */
    int pmap_tried;
    uint64_t anon_pcs, anon_named;/* such addresses; named from the map */
    char pmap_why[600];
    uint64_t cut_nocode;             /* stacks ended at a return address in no code */
    uint64_t cut_first;              /* the first such address */
    ING_VEC(mw_unwind_module) umods; /* pmods for the unwinder, built at its first use */
    int umods_ok;
    int leaf_only;                /* mw_report_opts.leaf_only: no unwinding */
    uint64_t unw_calls, unw_timed; /* ing_code_unwind calls, those timed (every 8th) */
    double unw_timed_s;           /* their CPU time */
    struct ing_decoder *dec;      /* timer samples' data addresses (ingest_decode.c), lazily */
} ing_code;

/* The module file of (path, build id): found or added (a modules row). */
int ing_code_module(ing_code *c, const char *path, size_t plen, const uint8_t *bid,
                    size_t bidlen, size_t *gi);
int ing_code_map(ing_code *c, const ing_pmod *pm);
void ing_code_sort(ing_code *c);  /* once the process's records were read */
const ing_pmod *ing_code_find(const ing_code *c, uint64_t addr); /* code mapping or NULL */
/* pcs row of a runtime code address (`ret`: a return address), -1 on error */
int64_t ing_code_pc(ing_code *c, uint64_t addr, int ret);
/* The frames a report keeps of a call chain (innermost first, in place; the
 * new count): memwatch's own frames (libmemwatch*.so: the interposers,
 * mwp_main) are dropped and their callers kept; a frame in no loaded object
 * that no perf map names, or in a loaded object's data (no executable
 * segment of its file holds it), ends the chain there and sets *cut (a word
 * of a damaged stack taken for a return address; counted in cut_nocode). The
 * sampled address (addrs[0] when exact0) is kept wherever it lies: the CPU
 * ran there (JIT code). A chain of memwatch's frames only (its own thread)
 * is kept as it is. */
size_t ing_code_trim(ing_code *c, uint64_t *addrs, size_t n, int exact0, int *cut);
/* stacks row of addresses innermost first (addrs[0] exact when exact0) */
int64_t ing_code_stack(ing_code *c, const uint64_t *addrs, size_t n, int exact0,
                       int64_t *leaf_pc);
/* A chain unwound from sampled registers and stack (0 when it could not
 * start); *complete is set when it reached the outermost frame. */
size_t ing_code_unwind(ing_code *c, uint64_t regs_mask, const void *regs, const void *stack,
                       uint32_t stack_size, uint64_t *chain, size_t max, int *complete);
const char *ing_code_demangle(ing_code *c, const char *name);
void ing_code_end_process(ing_code *c);
void ing_code_free(ing_code *c);

/* ---- ing_objects: allocations and data objects (ingest_objects.c) ---- */
typedef struct ing_alloc {
    uint64_t addr, size, t_alloc, t_free;
    const void *frames;
    uint32_t tid, nframes;
    uint16_t kind;                /* MWR_A_STACK taken off */
    int64_t db_id, object_id, site_pc;
    const void *regs, *stack;     /* DWARF stack (MWR_A_STACK), into the mapped file */
    uint64_t regs_mask;
    uint32_t stack_size;
    int truncated;
    uint64_t first_pc;            /* innermost frame outside memwatch (an MWR_ALLOC_SITE's pc) */
} ing_alloc;

typedef struct ing_free {
    uint64_t addr, time;
} ing_free;

typedef struct ing_dfile {        /* a file mapped as data, or anonymous memory, in this process */
    uint64_t start, end, time;
    char *path;
    int anon;                     /* MWR_MODULE_DATA_ANON: named only where no allocation is */
    int64_t object_id;            /* 0 until a sample hits it */
} ing_dfile;

typedef struct ing_objects {
    ing_db *db;
    ing_code *code;
    int64_t proc;
    ING_VEC(ing_alloc) allocs;
    ING_VEC(ing_free) frees;
    ING_VEC(mwr_alloc_site) sites; /* sampled sites' totals (MWR_ALLOC_SITE), last per pc */
    uint64_t *prefix_end;         /* max end of allocs[0..i] (after ing_objects_finish) */
    ing_hmap statics;             /* (gmod index, symbol start) -> object id */
    ing_hmap stack_objs;          /* tid -> object id */
    ing_hmap tls_objs;            /* (symbol start + 1 or 0, 0) -> object id */
    ING_VEC(ing_dfile) dfiles;    /* files mapped as data (MWR_MODULE_DATA_FILE) */
    int tls_state;                /* 0 not looked at, 1 the program's TLS block known, -1 none */
    size_t tls_gi;                /* the program's module */
    uint64_t tls_block;           /* its TLS block's size below the thread pointer */
} ing_objects;

int64_t ing_db_alloc_id(ing_db *d, int64_t proc, const ing_alloc *a, const char *kind,
                        int64_t stack, int64_t site);

/* stack: the MWR_A_STACK part (NULL without), its registers and stack copy */
int ing_objects_alloc(ing_objects *o, const mwr_alloc *a, const void *frames,
                      const mwr_alloc_stack *stack, const void *regs, const void *copy);
int ing_objects_free(ing_objects *o, const mwr_free *f);
int ing_objects_site(ing_objects *o, const mwr_alloc_site *s);
/* an alloc_sites row: a sampled site's totals (site: its pcs id) */
int ing_db_alloc_site(ing_db *d, int64_t proc, const mwr_alloc_site *s, int64_t site);
/* Lifetimes closed, allocations rows written with their stacks and sites. */
int ing_objects_finish(ing_objects *o);
/* objects row of a sampled data address (0 none, -1 error) */
int64_t ing_objects_of(ing_objects *o, uint64_t addr, uint64_t time, uint64_t sp,
                       uint32_t tid, uint64_t fs_base);
void ing_objects_end_process(ing_objects *o);
/* a file mapped as data (MWR_MODULE with MWR_MODULE_DATA_FILE): 0 or -ENOMEM */
int ing_objects_data_file(ing_objects *o, const mwr_module *m, const char *path, size_t plen);

/* ---- ing_file: the records of one file (ingest_records.c) ---- */
typedef struct ing_attr {
    uint32_t attr_id;
    mw_sample_fmt fmt;
    int source;
    int64_t event_id;
} ing_attr;

typedef struct ing_smp {
    uint64_t time, ip, addr, weight, data_src, period, phys, sp;
    const void *chain;
    const void *regs, *stack;     /* REGS_USER / STACK_USER, into the mapped file */
    uint32_t regs_nr;             /* values at regs (popcount of the attribute's mask) */
    uint32_t chain_nr, tid, cpu, attr_idx;
    uint32_t stack_size;
} ing_smp;

struct ing_thr {
    uint32_t tid;
    char name[32];
    uint64_t t_start, t_end;
    int have_cpu;                 /* user_ns, system_ns from its MWR_CPU record */
    uint64_t user_ns, system_ns;
    uint64_t fs_base;             /* its TLS base (MWR_THREAD, format 1.3), 0: not known */
};

typedef struct ing_file {
    ing_db *db;
    ing_code *code;
    ing_objects *objs;
    mw_report_stats *st;
    const mw_report_opts *o;
    int64_t proc;
    double threshold;             /* this process's precise-sample threshold */
    uint64_t bytes_total, cur_base, cur_size; /* progress */
    ING_VEC(ing_attr) attrs;
    ING_VEC(ing_smp) smps;
    ING_VEC(mw_hybrid_iv) ivs;
    ING_VEC(double) ivlat;        /* ivs' latencies in the order read (NaN: none) */
    ING_VEC(ing_thr) thrs;
    ing_hmap thr_idx;
    mwr_cpu cpu;                  /* the process image's CPU time (MWR_CPU, tid 0) */
    int have_cpu;
} ing_file;

/* ---- ing_decode: timer samples' data addresses (ingest_decode.c) ---- */
typedef struct ing_decoder ing_decoder;
ing_decoder *ing_decoder_new(void);
void ing_decoder_free(ing_decoder *d);
enum ing_addr_how {
    ING_ADDR_NONE = 0,            /* not decoded: no registers, no code bytes, no decoder */
    ING_ADDR_NOMEM = 1,           /* in a run of instructions without memory operands */
    ING_ADDR_DECODED = 2,         /* in a run with memory operands, some addresses computed */
    ING_ADDR_UNKNOWN = 3,         /* in a run with memory operands, no address computed */
};
#define ING_DEC_MAX 32
typedef struct ing_decoded {
    int how;                      /* enum ing_addr_how */
    unsigned nmem;                /* memory operands of the sample's run: each has 1/nmem */
    unsigned n;                   /* those whose address was computed */
    struct {
        uint64_t addr;
        int write;
    } acc[ING_DEC_MAX];
} ing_decoded;
/* The data address of timer sample x (fs_base: its thread's, 0 unknown):
 * 0 (out filled), or -ENOMEM. */
int ing_decode(ing_file *f, const ing_smp *x, uint64_t fs_base, ing_decoded *out);
/* The directions of the memory operands of timer sample x's run (as
 * ing_decode finds it; all 0 where it does not): operands read, written,
 * and of those written the ones that bypass the caches. Decoded once per
 * run. 0, or -ENOMEM. */
int ing_run_dirs(ing_file *f, const ing_smp *x, unsigned *reads, unsigned *writes, unsigned *nt);

/* One record: 0, MW_ERR_CORRUPT (malformed, skipped) or an error. */
int ing_file_record(ing_file *f, const mw_record *rec);
/* After the last record: samples (intervals, selection, objects) and
 * threads written. */
int ing_file_finish(ing_file *f);
void ing_file_end(ing_file *f);

#endif
