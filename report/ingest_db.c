/*
 * report/ingest_db.c: the report database of an ingest (report/ingest.h).
 *
 * Owns: creating the database (schema.h, the value tables), the prepared
 * statements, one insert function per table (rows in, ids out), and the
 * small (u64, u64) -> i64 hash map the other ingest parts index with.
 * May call: SQLite, libc. Prints nothing (mw_log for SQLite errors).
 */
#include "ingest.h"
#include "perfmap.h"
#include "schema.h"

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

/* ---- the hash map ---- */
static uint64_t hmix(uint64_t a, uint64_t b)
{
    uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull + (a << 6) + (a >> 2));
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 29);
}

static int hmap_grow(ing_hmap *m)
{
    size_t nc = m->cap ? m->cap * 2 : 1024;
    ing_hent *nt = calloc(nc, sizeof *nt);
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

int64_t *ing_hmap_get(ing_hmap *m, uint64_t a, uint64_t b)
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

int ing_hmap_put(ing_hmap *m, uint64_t a, uint64_t b, int64_t v)
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
    m->t[j] = (ing_hent){a, b, v, 1};
    m->n++;
    return 0;
}

void ing_hmap_free(ing_hmap *m)
{
    free(m->t);
    memset(m, 0, sizeof *m);
}

/* ---- statements ---- */
/* The errno behind a failed SQLite call where the system gave one (a full
 * disk is named as such, not as an I/O error); else -EIO. */
static int sql_errno(sqlite3 *db)
{
    int e = sqlite3_system_errno(db);
    if (sqlite3_errcode(db) == SQLITE_FULL)
        return -ENOSPC;
    return e > 0 ? -e : -EIO;
}

int ing_db_err(ing_db *d, const char *what)
{
    mw_log(MW_LOG_ERROR, "report database: %s: %s", what, sqlite3_errmsg(d->db));
    return sql_errno(d->db);
}

int ing_db_step(ing_db *d, sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return rc == SQLITE_DONE ? 0 : ing_db_err(d, "insert");
}

/* For statements whose every column is bound on every row: no clear. */
int ing_db_step_all_bound(ing_db *d, sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : ing_db_err(d, "insert");
}

int64_t ing_db_last_id(ing_db *d) { return sqlite3_last_insert_rowid(d->db); }

int ing_db_note(sqlite3 *db, const char *table, int64_t proc_id, const char *note)
{
    char sql[96];
    snprintf(sql, sizeof sql, "INSERT INTO %s(process_id, note) VALUES(?,?)", table);
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return -EIO;
    sqlite3_bind_int64(s, 1, proc_id);
    sqlite3_bind_text(s, 2, note, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -EIO;
    sqlite3_finalize(s);
    return rc;
}

int ing_db_exec(ing_db *d, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(d->db, sql, NULL, NULL, &err) != SQLITE_OK) {
        mw_log(MW_LOG_ERROR, "report database: %s", err ? err : "?");
        sqlite3_free(err);
        return sql_errno(d->db);
    }
    return 0;
}

static int prepare_all(ing_db *d)
{
    static const struct {
        size_t off;
        const char *sql;
    } q[] = {
#define Q(f, s) {offsetof(ing_db, f), s}
        Q(s_sample, "INSERT INTO samples(process_id,event_id,source,tid,time_ns,cpu,period,ip,"
                    "pc_id,stack_id,addr,weight,interval_id,in_flagged,selected,object_id,"
                    "truncated,addr_source,at_memory) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"),
        Q(s_mem, "INSERT INTO sample_mem(sample_id,phys_addr,data_src,mem_op,mem_level,mem_hit,"
                 "mem_remote,mem_hops,mem_tlb,mem_snoop,mem_lock) VALUES(?,?,?,?,?,?,?,?,?,?,?)"),
        Q(s_pc, "INSERT INTO pcs(id,module_id,rel_addr,symbol,symbol_offset,function,file,line,"
                "quality,nearest_symbol) VALUES(?,?,?,?,?,?,?,?,?,?)"),
        Q(s_frame, "INSERT INTO frames(pc_id,depth,function,file,line,column,inlined) "
                   "VALUES(?,?,?,?,?,?,?)"),
        Q(s_stack, "INSERT INTO stacks(id,parent_id,pc_id,depth) VALUES(?,?,?,?)"),
        Q(s_alloc, "INSERT INTO allocations(process_id,tid,kind,addr,size,t_alloc,t_free,"
                   "stack_id,site_pc_id,truncated) VALUES(?,?,?,?,?,?,?,?,?,?)"),
        Q(s_obj, "INSERT INTO objects(process_id,kind,name,addr,size,allocation_id,module_id,"
                 "site_pc_id) VALUES(?,?,?,?,?,?,?,?)"),
        Q(s_loss, "INSERT INTO losses(process_id,time_ns,tid,event_id,kind,count) "
                  "VALUES(?,?,?,?,?,?)"),
        Q(s_iv, "INSERT INTO intervals(process_id,t_start,t_end,flags,bw_bound,latency_ns,"
                "threshold_ns,bytes,nthreads,samples,lost,lat_method,bw_method) "
                "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)"),
        Q(s_meta, "INSERT INTO meta(process_id,key,value) VALUES(?,?,?)"),
        Q(s_thread, "INSERT INTO threads(process_id,tid,name,t_start,t_end,user_ns,system_ns)"
                    " VALUES(?,?,?,?,?,?,?)"),
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
                "samples,stall_memory,stalls) VALUES(?,?,?,?,?,?,?,?,?)"),
        Q(s_acc, "INSERT INTO sample_accesses(sample_id,addr,object_id,share,write) "
                 "VALUES(?,?,?,?,?)"),
#undef Q
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        sqlite3_stmt **sp = (sqlite3_stmt **)((char *)d + q[i].off);
        if (sqlite3_prepare_v3(d->db, q[i].sql, -1, SQLITE_PREPARE_PERSISTENT, sp, NULL) !=
            SQLITE_OK)
            return ing_db_err(d, q[i].sql);
    }
    return 0;
}

int ing_db_open(ing_db *d, const char *path)
{
    unlink(path);
    if (sqlite3_open_v2(path, &d->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        mw_log(MW_LOG_ERROR, "%s: %s", path, d->db ? sqlite3_errmsg(d->db) : "cannot open");
        return -EIO;
    }
    int rc;
    if ((rc = ing_db_exec(d, "PRAGMA page_size=65536; PRAGMA journal_mode=OFF;"
                             " PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;"
                             " PRAGMA temp_store=MEMORY; PRAGMA cache_size=-65536;")) ||
        (rc = ing_db_exec(d, mw_report_schema)) || (rc = prepare_all(d)) ||
        (rc = ing_levels_register(d)))
        return rc;
    char sql[256];
    snprintf(sql, sizeof sql, "INSERT INTO schema VALUES(%d)", MW_REPORT_SCHEMA_VERSION);
    if ((rc = ing_db_exec(d, sql)))
        return rc;
    static const char *const lv[] = {"mem_levels", "tlb_kinds", "snoop_kinds"};
    static const unsigned cnt[] = {MW_MEM_LEVEL_COUNT, MW_TLB_COUNT, MW_SNOOP_COUNT};
    for (int t = 0; t < 3; t++)
        for (unsigned k = 0; k < cnt[t]; k++) {
            const char *nm = t == 0   ? mw_mem_level_name(k)
                             : t == 1 ? mw_mem_tlb_name(k)
                                      : mw_mem_snoop_name(k);
            char *q = sqlite3_mprintf("INSERT INTO %s VALUES(%u,%Q)", lv[t], k, nm);
            rc = ing_db_exec(d, q);
            sqlite3_free(q);
            if (rc)
                return rc;
        }
    return 0;
}

/* After the bulk insert: indexes and views. */
int ing_db_indexes(ing_db *d) { return ing_db_exec(d, mw_report_indexes); }

void ing_db_close(ing_db *d)
{
    sqlite3_stmt **all[] = {&d->s_sample, &d->s_mem,    &d->s_pc,      &d->s_frame, &d->s_stack,
                            &d->s_alloc,  &d->s_obj,    &d->s_loss,    &d->s_iv,    &d->s_meta,
                            &d->s_thread, &d->s_event,  &d->s_module,  &d->s_pmod,  &d->s_counter,
                            &d->s_log,    &d->s_gk,     &d->s_gs,      &d->s_gp, &d->s_acc};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        sqlite3_finalize(*all[i]);
        *all[i] = NULL;
    }
    for (int i = 0; i < d->ncache; i++)
        sqlite3_finalize(d->cache[i].s);
    d->ncache = 0;
    if (d->db)
        sqlite3_close(d->db);
    d->db = NULL;
}

sqlite3_stmt *ing_db_prep(ing_db *d, const char *sql)
{
    for (int i = 0; i < d->ncache; i++)
        if (d->cache[i].sql == sql) {
            sqlite3_reset(d->cache[i].s);
            sqlite3_clear_bindings(d->cache[i].s);
            return d->cache[i].s;
        }
    sqlite3_stmt *s = NULL;
    if (d->ncache == (int)(sizeof d->cache / sizeof d->cache[0]) ||
        sqlite3_prepare_v3(d->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) != SQLITE_OK) {
        sqlite3_finalize(s);
        return NULL;
    }
    d->cache[d->ncache].sql = sql;
    d->cache[d->ncache++].s = s;
    return s;
}

void ing_db_meta_value(ing_db *d, int64_t proc, const char *key, char *buf, size_t n)
{
    static const char sql[] = "SELECT value FROM meta WHERE rowid > ? AND process_id=? AND"
                              " key=? ORDER BY rowid DESC LIMIT 1";
    sqlite3_stmt *s;
    buf[0] = 0;
    if (!(s = ing_db_prep(d, sql)))
        return;
    sqlite3_bind_int64(s, 1, d->meta0);
    sqlite3_bind_int64(s, 2, proc);
    sqlite3_bind_text(s, 3, key, -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
        snprintf(buf, n, "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_reset(s);
}

/* ---- rows ---- */
int ing_db_run(ing_db *d, const char *inputs, size_t nfiles, double threshold,
               const char *thr_src, int64_t *run_id)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(d->db,
                           "INSERT INTO runs(created,memwatch_version,inputs,nfiles,threshold,"
                           "threshold_source) VALUES(datetime('now'),?,?,?,?,?)",
                           -1, &s, NULL) != SQLITE_OK)
        return ing_db_err(d, "runs");
    ing_bind_text(s, 1, mw_version());
    ing_bind_text(s, 2, inputs);
    sqlite3_bind_int64(s, 3, (int64_t)nfiles);
    sqlite3_bind_double(s, 4, threshold);
    ing_bind_text(s, 5, thr_src);
    sqlite3_step(s);
    sqlite3_finalize(s);
    *run_id = sqlite3_last_insert_rowid(d->db);
    return 0;
}

int ing_db_meta(ing_db *d, int64_t proc, const char *t, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && t[j] != '\n')
            j++;
        const char *eq = memchr(t + i, '=', j - i);
        if (eq) {
            size_t kl = (size_t)(eq - (t + i));
            sqlite3_bind_int64(d->s_meta, 1, proc);
            ing_bind_text_n(d->s_meta, 2, t + i, kl);
            ing_bind_text_n(d->s_meta, 3, eq + 1, j - i - kl - 1);
            if (ing_db_step(d, d->s_meta))
                return -EIO;
        }
        i = j + 1;
    }
    return 0;
}

int ing_db_log(ing_db *d, int64_t proc, const char *t, size_t n)
{
    sqlite3_bind_int64(d->s_log, 1, proc);
    ing_bind_text_n(d->s_log, 2, t, n);
    return ing_db_step(d, d->s_log);
}

int64_t ing_db_event_id(ing_db *d, int64_t proc, const mwr_perf_attr *pa, const char *source,
                        const mw_sample_fmt *fmt)
{
    sqlite3_stmt *s = d->s_event;
    sqlite3_bind_int64(s, 1, proc);
    sqlite3_bind_int64(s, 2, pa->attr_id);
    ing_bind_text(s, 3, pa->name);
    ing_bind_text(s, 4, source);
    sqlite3_bind_int64(s, 5, fmt->type);
    ing_bind_u64(s, 6, fmt->config);
    ing_bind_u64(s, 7, fmt->sample_type);
    sqlite3_bind_int(s, 8, (int)fmt->precise_ip);
    if (ing_db_step(d, s))
        return -1;
    return sqlite3_last_insert_rowid(d->db);
}

int64_t ing_db_interval_id(ing_db *d, int64_t proc, const mwr_interval *iv)
{
    sqlite3_stmt *s = d->s_iv;
    sqlite3_bind_int64(s, 1, proc);
    ing_bind_u64(s, 2, iv->t_start_ns);
    ing_bind_u64(s, 3, iv->t_end_ns);
    sqlite3_bind_int64(s, 4, iv->flags);
    sqlite3_bind_int(s, 5, !!(iv->flags & MWR_IV_BW_BOUND));
    if (iv->flags & MWR_IV_LAT_VALID)
        sqlite3_bind_double(s, 6, iv->latency_ns);
    sqlite3_bind_double(s, 7, iv->threshold_ns);
    if (iv->flags & MWR_IV_BW_VALID)
        sqlite3_bind_double(s, 8, iv->bytes);
    sqlite3_bind_int64(s, 9, iv->nthreads);
    ing_bind_u64(s, 10, iv->samples);
    ing_bind_u64(s, 11, iv->lost);
    ing_bind_text(s, 12, iv->lat_method);
    ing_bind_text(s, 13, iv->bw_method);
    if (ing_db_step(d, s))
        return -1;
    return sqlite3_last_insert_rowid(d->db);
}

int ing_db_process_module(ing_db *d, int64_t proc, int64_t module_id, const mwr_module *m)
{
    sqlite3_stmt *s = d->s_pmod;
    sqlite3_bind_int64(s, 1, proc);
    sqlite3_bind_int64(s, 2, module_id);
    ing_bind_u64(s, 3, m->base);
    ing_bind_u64(s, 4, m->start);
    ing_bind_u64(s, 5, m->end);
    ing_bind_u64(s, 6, m->time_ns);
    return ing_db_step(d, s);
}

int ing_db_counters(ing_db *d, int64_t proc, const mwr_counters *k, const void *vals)
{
    for (uint32_t i = 0; i < k->nvalues; i++) {
        sqlite3_stmt *s = d->s_counter;
        sqlite3_bind_int64(s, 1, proc);
        ing_bind_u64(s, 2, k->time_ns);
        sqlite3_bind_int64(s, 3, k->group_id);
        ing_bind_u64(s, 4, k->time_enabled);
        ing_bind_u64(s, 5, k->time_running);
        sqlite3_bind_int64(s, 6, i);
        ing_bind_u64(s, 7, mw_u64_at(vals, i));
        if (ing_db_step(d, s))
            return -EIO;
    }
    return 0;
}

int ing_db_gpu_kernel(ing_db *d, int64_t proc, const mwr_gpu_kernel *k, const char *name)
{
    sqlite3_stmt *s = d->s_gk;
    sqlite3_bind_int64(s, 1, proc);
    ing_bind_u64(s, 2, k->start_ns);
    ing_bind_u64(s, 3, k->end_ns);
    sqlite3_bind_int64(s, 4, k->device);
    sqlite3_bind_int64(s, 5, k->stream);
    sqlite3_bind_int64(s, 6, k->correlation);
    sqlite3_bind_int64(s, 7, k->flags);
    sqlite3_bind_int(s, 8, !!(k->flags & MWR_GPU_BW_BOUND));
    sqlite3_bind_double(s, 9, k->dram_bytes);
    sqlite3_bind_double(s, 10, k->dram_bw);
    sqlite3_bind_double(s, 11, k->threshold_bw);
    sqlite3_bind_double(s, 12, k->peak_bw);
    ing_bind_text_n(s, 13, name, k->name_len);
    return ing_db_step(d, s);
}

int ing_db_gpu_sample(ing_db *d, int64_t proc, const mwr_gpu_sample *g)
{
    sqlite3_stmt *s = d->s_gs;
    sqlite3_bind_int64(s, 1, proc);
    ing_bind_u64(s, 2, g->start_ns);
    ing_bind_u64(s, 3, g->end_ns);
    sqlite3_bind_int64(s, 4, g->device);
    sqlite3_bind_int64(s, 5, g->flags);
    sqlite3_bind_double(s, 6, g->dram_read_bytes);
    sqlite3_bind_double(s, 7, g->dram_write_bytes);
    sqlite3_bind_double(s, 8, g->dram_bw);
    sqlite3_bind_double(s, 9, g->threshold_bw);
    return ing_db_step(d, s);
}

int ing_db_gpu_pc(ing_db *d, int64_t proc, const mwr_gpu_pc *g, const char *file,
                  const char *func, const char *stalls, size_t stalls_len)
{
    sqlite3_stmt *s = d->s_gp;
    sqlite3_bind_int64(s, 1, proc);
    sqlite3_bind_int64(s, 2, g->correlation);
    ing_bind_text_n(s, 3, file, g->file_len);
    ing_bind_text_n(s, 4, func, g->func_len);
    sqlite3_bind_int64(s, 5, g->line);
    ing_bind_u64(s, 6, g->pc_offset);
    ing_bind_u64(s, 7, g->samples);
    ing_bind_u64(s, 8, g->stall_memory);
    ing_bind_text_n(s, 9, stalls, stalls_len);
    return ing_db_step(d, s);
}

int ing_db_loss(ing_db *d, int64_t proc, uint64_t t, uint32_t tid, int64_t ev, const char *kind,
                uint64_t n)
{
    sqlite3_stmt *s = d->s_loss;
    sqlite3_bind_int64(s, 1, proc);
    ing_bind_u64(s, 2, t);
    if (tid)
        sqlite3_bind_int64(s, 3, tid);
    ing_bind_id(s, 4, ev);
    ing_bind_text(s, 5, kind);
    ing_bind_u64(s, 6, n);
    return ing_db_step(d, s);
}

int ing_db_thread(ing_db *d, int64_t proc, const ing_thr *t)
{
    sqlite3_stmt *s = d->s_thread;
    sqlite3_bind_int64(s, 1, proc);
    sqlite3_bind_int64(s, 2, t->tid);
    ing_bind_text(s, 3, t->name[0] ? t->name : NULL);
    if (t->t_start)
        ing_bind_u64(s, 4, t->t_start);
    if (t->t_end)
        ing_bind_u64(s, 5, t->t_end);
    if (t->have_cpu) {
        ing_bind_u64(s, 6, t->user_ns);
        ing_bind_u64(s, 7, t->system_ns);
    }
    return ing_db_step(d, s);
}

int64_t ing_db_object_id(ing_db *d, int64_t proc, const char *kind, const char *name,
                         uint64_t addr, uint64_t size, int64_t alloc_id, int64_t module_id,
                         int64_t site)
{
    sqlite3_stmt *s = d->s_obj;
    sqlite3_bind_int64(s, 1, proc);
    ing_bind_text(s, 2, kind);
    ing_bind_text(s, 3, name);
    ing_bind_u64(s, 4, addr);
    ing_bind_u64(s, 5, size);
    ing_bind_id(s, 6, alloc_id);
    ing_bind_id(s, 7, module_id);
    ing_bind_id(s, 8, site);
    if (ing_db_step(d, s))
        return -1;
    return sqlite3_last_insert_rowid(d->db);
}

int64_t ing_db_alloc_id(ing_db *d, int64_t proc, const ing_alloc *a, const char *kind,
                        int64_t stack, int64_t site)
{
    sqlite3_stmt *s = d->s_alloc;
    sqlite3_bind_int64(s, 1, proc);
    sqlite3_bind_int64(s, 2, a->tid);
    ing_bind_text(s, 3, kind);
    ing_bind_u64(s, 4, a->addr);
    ing_bind_u64(s, 5, a->size);
    ing_bind_u64(s, 6, a->t_alloc);
    if (a->t_free != UINT64_MAX)
        ing_bind_u64(s, 7, a->t_free);
    ing_bind_id(s, 8, stack);
    ing_bind_id(s, 9, site);
    sqlite3_bind_int(s, 10, a->truncated);
    if (ing_db_step(d, s))
        return -1;
    return sqlite3_last_insert_rowid(d->db);
}

/* A few rows per process: prepared each time. */
int ing_db_alloc_site(ing_db *d, int64_t proc, const mwr_alloc_site *a, int64_t site)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(d->db,
                           "INSERT INTO alloc_sites(process_id,site_pc_id,pc,count,bytes,recorded,"
                           "period) VALUES(?,?,?,?,?,?,?)",
                           -1, &s, NULL) != SQLITE_OK)
        return -EIO;
    sqlite3_bind_int64(s, 1, proc);
    ing_bind_id(s, 2, site);
    ing_bind_u64(s, 3, a->pc);
    ing_bind_u64(s, 4, a->count);
    ing_bind_u64(s, 5, a->bytes);
    ing_bind_u64(s, 6, a->recorded);
    sqlite3_bind_int64(s, 7, a->period);
    int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -EIO;
    sqlite3_finalize(s);
    return rc;
}

/* Every column is bound on every row (NULL where the event does not sample
 * it), so the statements are only reset. */
int ing_db_sample_access(ing_db *d, int64_t sample, uint64_t addr, int64_t object, double share,
                         int write)
{
    sqlite3_stmt *s = d->s_acc;
    sqlite3_bind_int64(s, 1, sample);
    ing_bind_u64(s, 2, addr);
    ing_bind_id(s, 3, object);
    sqlite3_bind_double(s, 4, share);
    sqlite3_bind_int(s, 5, write);
    return ing_db_step_all_bound(d, s);
}

int ing_db_sample(ing_db *d, int64_t proc, const ing_sample_row *r)
{
    sqlite3_stmt *s = d->s_sample;
    const uint64_t st = r->sample_type;
#define BIND_IF(i, cond, v)                                                                    \
    do {                                                                                       \
        if (cond)                                                                              \
            sqlite3_bind_int64(s, i, (int64_t)(v));                                            \
        else                                                                                   \
            sqlite3_bind_null(s, i);                                                           \
    } while (0)
    sqlite3_bind_int64(s, 1, proc);
    sqlite3_bind_int64(s, 2, r->event_id);
    sqlite3_bind_text(s, 3, r->source, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 4, r->tid);
    ing_bind_u64(s, 5, r->time);
    BIND_IF(6, r->cpu != UINT32_MAX, r->cpu);
    ing_bind_u64(s, 7, r->period);
    ing_bind_u64(s, 8, r->ip);
    sqlite3_bind_int64(s, 9, r->pc);
    sqlite3_bind_int64(s, 10, r->stack);
    BIND_IF(11, r->addr_source || (st & PERF_SAMPLE_ADDR), r->addr);
    BIND_IF(12, st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT), r->weight);
    BIND_IF(13, r->interval_id > 0, r->interval_id);
    sqlite3_bind_int(s, 14, r->flagged);
    sqlite3_bind_int(s, 15, r->selected);
    BIND_IF(16, r->object > 0, r->object);
    sqlite3_bind_int(s, 17, r->truncated);
    if (r->addr_source)
        sqlite3_bind_text(s, 18, r->addr_source, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, 18);
    BIND_IF(19, r->at_memory >= 0, r->at_memory);
    int rc = ing_db_step_all_bound(d, s);
    if (rc)
        return rc;
    /* memory-access details only for events that sample them */
    int has_ds = (st & PERF_SAMPLE_DATA_SRC) != 0, has_pa = (st & PERF_SAMPLE_PHYS_ADDR) != 0;
    if (has_ds || has_pa) {
        mw_mem_src m;
        memset(&m, 0, sizeof m);
        if (has_ds)
            mw_mem_src_decode(r->data_src, &m);
        s = d->s_mem;
        sqlite3_bind_int64(s, 1, sqlite3_last_insert_rowid(d->db));
        BIND_IF(2, has_pa, r->phys);
        BIND_IF(3, has_ds, r->data_src);
        BIND_IF(4, has_ds, m.op);
        BIND_IF(5, has_ds, m.level);
        BIND_IF(6, has_ds && m.hit >= 0, m.hit);
        BIND_IF(7, has_ds, m.remote);
        BIND_IF(8, has_ds, m.hops);
        BIND_IF(9, has_ds, m.tlb);
        BIND_IF(10, has_ds, m.snoop);
        BIND_IF(11, has_ds && m.lock >= 0, m.lock);
        rc = ing_db_step_all_bound(d, s);
    }
#undef BIND_IF
    return rc;
}

static const char *quality_name(int q)
{
    return q == MW_SYMQ_DWARF    ? "dwarf"
           : q == MW_SYMQ_SYMTAB ? "symtab"
           : q == MW_SYMQ_PERFMAP ? "perf-map"
                                  : "none";
}

/* pcs row of one code address (symbolizer result r, first frame's place). */
int ing_db_pc(ing_db *d, int64_t id, int64_t module_id, uint64_t rel, const mw_sym_result *r,
              const char *function, const char *nearest)
{
    const mw_sym_frame *f0 = r->nframes ? &r->frames[0] : NULL;
    sqlite3_stmt *s = d->s_pc;
    sqlite3_bind_int64(s, 1, id);
    ing_bind_id(s, 2, module_id);
    ing_bind_u64(s, 3, rel);
    ing_bind_text(s, 4, r->symbol);
    if (r->symbol)
        ing_bind_u64(s, 5, r->symbol_offset);
    ing_bind_text(s, 6, function);
    ing_bind_text(s, 7, f0 ? f0->file : NULL);
    if (f0 && f0->line)
        sqlite3_bind_int(s, 8, f0->line);
    ing_bind_text(s, 9, quality_name(r->quality));
    ing_bind_text(s, 10, nearest);
    return ing_db_step(d, s);
}

int ing_db_frame(ing_db *d, int64_t pc, unsigned depth, const mw_sym_frame *f,
                 const char *function)
{
    sqlite3_stmt *s = d->s_frame;
    sqlite3_bind_int64(s, 1, pc);
    sqlite3_bind_int(s, 2, (int)depth);
    ing_bind_text(s, 3, function);
    ing_bind_text(s, 4, f->file);
    if (f->line)
        sqlite3_bind_int(s, 5, f->line);
    if (f->column)
        sqlite3_bind_int(s, 6, f->column);
    sqlite3_bind_int(s, 7, f->inlined);
    return ing_db_step(d, s);
}

int ing_db_stack(ing_db *d, int64_t id, int64_t parent, int64_t pc, int64_t depth)
{
    sqlite3_stmt *s = d->s_stack;
    sqlite3_bind_int64(s, 1, id);
    ing_bind_id(s, 2, parent);
    sqlite3_bind_int64(s, 3, pc);
    sqlite3_bind_int64(s, 4, depth);
    return ing_db_step(d, s);
}

int ing_db_module_id(ing_db *d, const char *path, const char *build_id_hex,
                     const char *debug_file, int quality, int64_t *id)
{
    ing_bind_text(d->s_module, 1, path);
    ing_bind_text(d->s_module, 2, build_id_hex);
    ing_bind_text(d->s_module, 3, debug_file);
    ing_bind_text(d->s_module, 4, quality_name(quality));
    int rc = ing_db_step(d, d->s_module);
    if (rc == 0)
        *id = sqlite3_last_insert_rowid(d->db);
    return rc;
}
