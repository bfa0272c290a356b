/*
 * report/export_pprof.c: the pprof export: a gzipped profile.proto message
 * (the format of github.com/google/pprof's proto/profile.proto, described in
 * docs/export.md), written by a small protobuf encoder of its own (varints,
 * length-delimited fields, packed repeated integers: all profile.proto uses)
 * and zlib.
 *
 * Samples are grouped by process, sample source and call stack. Values,
 * each sample's in the column of its source (docs/export.md):
 * cpu_samples (count: cpu-clock samples), flagged_cpu_samples (those inside
 * flagged intervals), fault_samples (page-fault samples: not CPU time) and,
 * where precise samples exist, precise_samples and latency (cycles, the sum
 * of their weights). The default sample type is flagged_cpu_samples where
 * any exist, else cpu_samples.
 * Labels: source, pid, rank, host, and a "region" label for each region
 * the samples were taken in. Locations are code addresses (pcs) with
 * their inline chains as lines; mappings are modules.
 *
 * May call: SQLite, zlib, libc, report/view.c, report/buf.c. Threading: reentrant.
 */
#include "buf.h"
#include "export_int.h"
#include "text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- protobuf encoding ---- */

/* A message being encoded (report/buf.h) */
typedef mw_buf pb;

static void pb_varint(pb *p, uint64_t v)
{
    uint8_t t[10];
    size_t k = 0;
    do {
        t[k] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            t[k] |= 0x80;
        k++;
    } while (v);
    mw_buf_put(p, t, k);
}

static void pb_key(pb *p, unsigned field, unsigned wire) { pb_varint(p, (uint64_t)field << 3 | wire); }

/* int64/uint64/bool field; proto3 omits zero values */
static void pb_int(pb *p, unsigned field, int64_t v)
{
    if (v == 0)
        return;
    pb_key(p, field, 0);
    pb_varint(p, (uint64_t)v);
}

static void pb_bytes(pb *p, unsigned field, const void *d, size_t n)
{
    pb_key(p, field, 2);
    pb_varint(p, n);
    mw_buf_put(p, d, n);
}

static void pb_msg(pb *p, unsigned field, pb *sub)
{
    pb_bytes(p, field, sub->b, sub->n);
    if (sub->oom)
        p->oom = 1;
    sub->n = 0;
}

static void pb_packed(pb *p, unsigned field, const int64_t *v, size_t n, pb *scratch)
{
    scratch->n = 0;
    for (size_t i = 0; i < n; i++)
        pb_varint(scratch, (uint64_t)v[i]);
    pb_msg(p, field, scratch);
}

/* ---- string table ---- */

typedef mw_strtab strtab; /* report/buf.h */

/* The index of s in the string table, added where new (0, the index of "",
 * without memory). profile.proto's strings are UTF-8: a byte of s that is
 * not part of valid UTF-8 is stored as U+FFFD (as in every export), so two
 * names that differ only there are one string. */
static int64_t str_id(strtab *t, const char *s)
{
    if (!s)
        s = "";
    int64_t id;
    if (mw_text_is_utf8(s)) {
        id = mw_strtab_id(t, s);
    } else {
        char *u = mw_text_utf8(s);
        id = u ? mw_strtab_id(t, u) : 0;
        free(u);
    }
    return id < 0 ? 0 : id;
}

/* ---- the profile ---- */

struct fkey {
    int64_t name, file, id;
};

typedef struct prof {
    strtab st;
    mwv_code c;
    pb functions, locations, mappings, scratch, scratch2;
    int64_t *loc_of_pc;    /* location id per pc (0: not yet) */
    int64_t *map_of_mod;   /* mapping id per module (0: not yet) */
    int64_t *map_limit;    /* highest address + 1 per module */
    int64_t nmod;
    struct fkey *fk;       /* function hash: (name, file) */
    uint32_t nfk, nf;
    int64_t nloc, nmap, unknown_loc;
} prof;

static int64_t function_id(prof *P, const char *name, const char *file)
{
    int64_t n = str_id(&P->st, name), fl = str_id(&P->st, file ? file : "");
    if ((P->nf + 1) * 2 > P->nfk) {
        uint32_t ns = P->nfk ? P->nfk * 2 : 1024;
        struct fkey *k = calloc(ns, sizeof *k);
        if (!k)
            return 0;
        for (uint32_t i = 0; i < P->nfk; i++)
            if (P->fk[i].id) {
                uint64_t h = ((uint64_t)P->fk[i].name * 31 + (uint64_t)P->fk[i].file) & (ns - 1);
                while (k[h].id)
                    h = (h + 1) & (ns - 1);
                k[h] = P->fk[i];
            }
        free(P->fk);
        P->fk = k;
        P->nfk = ns;
    }
    uint64_t h = ((uint64_t)n * 31 + (uint64_t)fl) & (P->nfk - 1);
    while (P->fk[h].id) {
        if (P->fk[h].name == n && P->fk[h].file == fl)
            return P->fk[h].id;
        h = (h + 1) & (P->nfk - 1);
    }
    int64_t id = ++P->nf;
    P->fk[h] = (struct fkey){n, fl, id};
    /* Function: 1 id, 2 name, 3 system_name, 4 filename */
    pb *m = &P->scratch2;
    m->n = 0;
    pb_int(m, 1, id);
    pb_int(m, 2, n);
    pb_int(m, 3, n);
    pb_int(m, 4, fl);
    pb_msg(&P->functions, 5, m);
    return id;
}

static int64_t location_id(prof *P, int64_t pc)
{
    if (pc < 0 || pc >= P->c.npc) {
        if (!P->unknown_loc) {
            P->unknown_loc = ++P->nloc;
            int64_t fid = function_id(P, "[unknown]", NULL);
            pb *m = &P->scratch;
            m->n = 0;
            pb_int(m, 1, P->unknown_loc);
            pb *ln = &P->scratch2;
            ln->n = 0;
            pb_int(ln, 1, fid);
            pb_msg(m, 4, ln);
            pb_msg(&P->locations, 4, m);
        }
        return P->unknown_loc;
    }
    if (P->loc_of_pc[pc])
        return P->loc_of_pc[pc];
    int64_t id = P->loc_of_pc[pc] = ++P->nloc;
    int64_t mod = P->c.pc_module[pc], map = 0;
    if (mod >= 0 && mod < P->nmod) {
        if (!P->map_of_mod[mod])
            P->map_of_mod[mod] = ++P->nmap;
        map = P->map_of_mod[mod];
        if (P->c.pc_addr[pc] + 1 > P->map_limit[mod])
            P->map_limit[mod] = P->c.pc_addr[pc] + 1;
    }
    /* lines first (they use scratch2), then the Location in scratch */
    int64_t fids[256];
    uint16_t nfr = P->c.pc_nframes[pc] < 256 ? P->c.pc_nframes[pc] : 255;
    for (uint16_t i = 0; i < nfr; i++) {
        uint32_t k = P->c.pc_first[pc] + i;
        fids[i] = function_id(P, P->c.names[k], P->c.files[k]);
    }
    pb *m = &P->scratch;
    m->n = 0;
    pb_int(m, 1, id);
    pb_int(m, 2, map);
    pb_int(m, 3, P->c.pc_addr[pc]);
    for (uint16_t i = 0; i < nfr; i++) { /* Line: 1 function_id, 2 line; innermost first */
        pb *ln = &P->scratch2;
        ln->n = 0;
        pb_int(ln, 1, fids[i]);
        pb_int(ln, 2, P->c.lines[P->c.pc_first[pc] + i]);
        pb_msg(m, 4, ln);
    }
    pb_msg(&P->locations, 4, m);
    return id;
}

static void value_type(pb *out, unsigned field, strtab *st, const char *type, const char *unit,
                       pb *scratch)
{
    scratch->n = 0;
    pb_int(scratch, 1, str_id(st, type));
    pb_int(scratch, 2, str_id(st, unit));
    pb_msg(out, field, scratch);
}

static void label(pb *out, strtab *st, const char *key, const char *str, int64_t num, pb *scratch)
{
    scratch->n = 0;
    pb_int(scratch, 1, str_id(st, key));
    if (str)
        pb_int(scratch, 2, str_id(st, str));
    else
        pb_int(scratch, 3, num);
    pb_msg(out, 3, scratch);
}

static int gzip_to(FILE *f, const void *d, size_t n)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -ENOMEM;
    uint8_t buf[1 << 16];
    z.next_in = (Bytef *)d;
    int rc = 0;
    size_t left = n;
    int zr;
    do {
        uInt chunk = left > (1u << 30) ? (1u << 30) : (uInt)left;
        if (z.avail_in == 0) {
            z.next_in = (Bytef *)d + (n - left);
            z.avail_in = chunk;
            left -= chunk;
        }
        z.next_out = buf;
        z.avail_out = sizeof buf;
        zr = deflate(&z, left == 0 ? Z_FINISH : Z_NO_FLUSH);
        size_t have = sizeof buf - z.avail_out;
        if (have && fwrite(buf, 1, have, f) != have) {
            rc = -EIO;
            break;
        }
    } while (zr != Z_STREAM_END && zr != Z_STREAM_ERROR);
    if (zr == Z_STREAM_ERROR)
        rc = -EIO;
    deflateEnd(&z);
    return rc;
}

struct pinfo {
    int64_t id, pid, rank;
    int has_rank;
    char *host;
};

/* What one sample stands for (the Profile's period_type and period), by the samples
 * exported. */
static int64_t pp_period(sqlite3 *db, const mw_export_opts *o, const char **ptype_out,
                         const char **punit_out)
{
    /* period_type and period: what one sample stands for. cpu-clock
     * samples: the CPU time between two, 1e9 / META sample_rate ns (the
     * rate most processes recorded with); page faults: every fault_period-th
     * fault; precise samples alone: one sample each. */
    const char *ptype = "cpu", *punit = "nanoseconds";
    int64_t period = 0;
    if (o->source && !strcmp(o->source, "fault")) {
        ptype = "page_faults";
        punit = "count";
        period = mwv_scalar(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'fault_period'"
                                " GROUP BY 1 ORDER BY COUNT(*) DESC, 1 LIMIT 1");
    } else if (o->source && !strcmp(o->source, "precise")) {
        ptype = "samples";
        punit = "count";
        period = 1;
    } else {
        int64_t rate = mwv_scalar(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key ="
                                      " 'sample_rate' AND CAST(value AS INTEGER) > 0 GROUP BY 1"
                                      " ORDER BY COUNT(*) DESC, 1 LIMIT 1");
        if (rate > 0) {
            period = 1000000000 / rate;
        } else { /* no cpu-clock sampling: each sample counts one */
            ptype = "samples";
            punit = "count";
            period = 1;
        }
    }
    if (period <= 0)
        period = 1;
    *ptype_out = ptype;
*punit_out = punit;
return period;
}

/* The Profile's mappings: one per module a location was made in. */
static void pp_mappings(sqlite3 *db, prof *P, pb *sm)
{
    sqlite3_stmt *s;
    /* mappings: 1 id, 2 memory_start, 3 memory_limit, 5 filename, 6 build_id,
     * 7..10 has_functions, has_filenames, has_line_numbers, has_inline_frames */
    if (sqlite3_prepare_v2(db, "SELECT id, path, build_id, symbols FROM main.modules", -1, &s,
                           NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            int64_t mod = sqlite3_column_int64(s, 0);
            if (mod < 0 || mod >= P->nmod || !P->map_of_mod[mod])
                continue;
            const char *sym = (const char *)sqlite3_column_text(s, 3);
            int dwarf = sym && !strcmp(sym, "dwarf");
            sm->n = 0;
            pb_int(sm, 1, P->map_of_mod[mod]);
            pb_int(sm, 3, P->map_limit[mod]);
            pb_int(sm, 5, str_id(&P->st, (const char *)sqlite3_column_text(s, 1)));
            pb_int(sm, 6, str_id(&P->st, (const char *)sqlite3_column_text(s, 2)));
            pb_int(sm, 7, 1);
            pb_int(sm, 8, dwarf);
            pb_int(sm, 9, dwarf);
            pb_int(sm, 10, dwarf);
            pb_msg(&P->mappings, 3, sm);
        }
        sqlite3_finalize(s);
    }
}

/* A sample's "region" labels, one per region id in rs ("3,7"). */
static void pp_region_labels(pb *sm, strtab *st, pb *lab, const char *rs, char **rgname,
                             int64_t nrg)
{
    while (rs && *rs) {
        char *end;
        long long id = strtoll(rs, &end, 10);
        if (end == rs)
            break;
        if (rgname && id >= 0 && id < nrg && rgname[id])
            label(sm, st, "region", rgname[id], 0, lab);
        rs = *end == ',' ? end + 1 : end;
    }
}

/* Region names by id (none where the run has no regions, rg 0); *nrg_out: the ids' bound. */
static char **pp_region_names(sqlite3 *db, int rg, int64_t *nrg_out)
{
    sqlite3_stmt *s;
    int64_t nrg;
    char **rgname;
    nrg = rg ? mwv_scalar(db, "SELECT COALESCE(MAX(id), 0) + 1 FROM regions") : 0;
    rgname = nrg > 0 ? calloc((size_t)nrg, sizeof *rgname) : NULL;
    if (rgname && sqlite3_prepare_v2(db, "SELECT id, name FROM regions", -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(s, 0);
            const char *nm = (const char *)sqlite3_column_text(s, 1);
            if (id >= 0 && id < nrg && !rgname[id])
                rgname[id] = strdup(nm ? nm : "?");
        }
        sqlite3_finalize(s);
    }
    *nrg_out = nrg;
return rgname;
}

/* The processes, by id, for the pid, rank and host labels. */
static struct pinfo *pp_processes(sqlite3 *db, size_t *npi_out)
{
    sqlite3_stmt *s;
    struct pinfo *pi = NULL;
    size_t npi = 0;
    if (sqlite3_prepare_v2(db, "SELECT id, pid, rank, hostname FROM processes ORDER BY id", -1, &s,
                           NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            struct pinfo *n = realloc(pi, (npi + 1) * sizeof *pi);
            if (!n)
                break;
            pi = n;
            pi[npi].id = sqlite3_column_int64(s, 0);
            pi[npi].pid = sqlite3_column_int64(s, 1);
            pi[npi].has_rank = sqlite3_column_type(s, 2) == SQLITE_INTEGER;
            pi[npi].rank = sqlite3_column_int64(s, 2);
            const char *h = (const char *)sqlite3_column_text(s, 3);
            pi[npi].host = strdup(h ? h : "");
            npi++;
        }
        sqlite3_finalize(s);
    }
    *npi_out = npi;
return pi;
}

int mwx_pprof(sqlite3 *db, FILE *f, const mw_export_opts *o)
{
    prof P;
    memset(&P, 0, sizeof P);
    int rc = mwv_code_load(db, &P.c);
    if (rc)
        return rc;
    P.nmod = mwv_scalar(db, "SELECT COALESCE(MAX(id), -1) + 1 FROM main.modules");
    P.loc_of_pc = calloc((size_t)P.c.npc + 1, sizeof *P.loc_of_pc);
    P.map_of_mod = calloc((size_t)P.nmod + 1, sizeof *P.map_of_mod);
    P.map_limit = calloc((size_t)P.nmod + 1, sizeof *P.map_limit);
    struct pinfo *pi = NULL;
    size_t npi = 0;
    char **rgname = NULL;
    int64_t nrg = 0;
    pb prof_pb = {0}, samples = {0}, sm = {0}, lab = {0};
    int64_t *locs = NULL;
    if (!P.loc_of_pc || !P.map_of_mod || !P.map_limit) {
        rc = -ENOMEM;
        goto out;
    }
    str_id(&P.st, ""); /* string 0 is "" */
    int precise = mwv_scalar(db, "SELECT COUNT(*) FROM samples WHERE source = 'precise'") > 0;
    int64_t nflag = mwv_scalar(db, "SELECT COUNT(*) FROM samples WHERE in_flagged = 1 AND"
                                   " source = 'timer'");
    /* processes */
    sqlite3_stmt *s;
    pi = pp_processes(db, &npi);
    /* region names by id */
    int rg = mwx_region_sets(db, 0);
    rgname = pp_region_names(db, rg, &nrg);
    char where[256], sql[900];
    mwx_sample_where(o, where, sizeof where);
    snprintf(sql, sizeof sql,
             "SELECT s.process_id, s.source, COALESCE(s.stack_id, -1), COALESCE(s.pc_id, -1),"
             " COUNT(*), SUM(s.in_flagged), SUM(COALESCE(s.weight, 0)), %s FROM samples s %s"
             " WHERE %s GROUP BY 1, 2, 3, 4, 8",
             rg ? "g.rset" : "NULL",
             rg ? "LEFT JOIN temp.sample_rset g ON g.sample_id = s.id" : "", where);
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
        rc = -EIO;
        goto out;
    }
    const size_t maxdepth = 1024;
    locs = malloc(maxdepth * sizeof *locs);
    if (!locs) {
        sqlite3_finalize(s);
        rc = -ENOMEM;
        goto out;
    }
    size_t cur_pi = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        int64_t pid_db = sqlite3_column_int64(s, 0);
        const char *src = (const char *)sqlite3_column_text(s, 1);
        int64_t stack = sqlite3_column_int64(s, 2), pc = sqlite3_column_int64(s, 3);
        /* Sample: 1 location_id (packed, leaf first), 2 value (packed), 3 label */
        size_t nl = 0;
        if (stack >= 0 && stack < P.c.nstack) {
            for (int64_t k = stack; k >= 0 && nl < maxdepth; k = P.c.parent[k])
                if (P.c.stack_pc[k] >= 0)
                    locs[nl++] = location_id(&P, P.c.stack_pc[k]);
        }
        if (nl == 0)
            locs[nl++] = location_id(&P, pc);
        sm.n = 0;
        pb_packed(&sm, 1, locs, nl, &lab);
        int64_t n = sqlite3_column_int64(s, 4);
        int timer = src && !strcmp(src, "timer"), fault = src && !strcmp(src, "fault");
        int prec = src && !strcmp(src, "precise");
        int64_t vals[5] = {timer ? n : 0, timer ? sqlite3_column_int64(s, 5) : 0, fault ? n : 0,
                           prec ? n : 0, prec ? sqlite3_column_int64(s, 6) : 0};
        pb_packed(&sm, 2, vals, precise ? 5 : 3, &lab);
        label(&sm, &P.st, "source", src ? src : "?", 0, &lab);
        if (cur_pi >= npi || pi[cur_pi].id != pid_db)
            for (cur_pi = 0; cur_pi < npi && pi[cur_pi].id != pid_db; cur_pi++)
                ;
        if (cur_pi < npi) {
            label(&sm, &P.st, "pid", NULL, pi[cur_pi].pid, &lab);
            if (pi[cur_pi].has_rank)
                label(&sm, &P.st, "rank", NULL, pi[cur_pi].rank, &lab);
            if (pi[cur_pi].host[0])
                label(&sm, &P.st, "host", pi[cur_pi].host, 0, &lab);
        }
        /* "3,7": a label per region */
        const char *rs = (const char *)sqlite3_column_text(s, 7);
        pp_region_labels(&sm, &P.st, &lab, rs, rgname, nrg);
        pb_msg(&samples, 2, &sm);
    }
    sqlite3_finalize(s);
    pp_mappings(db, &P, &sm);
    /* the Profile message */
    value_type(&prof_pb, 1, &P.st, "cpu_samples", "count", &lab);
    value_type(&prof_pb, 1, &P.st, "flagged_cpu_samples", "count", &lab);
    value_type(&prof_pb, 1, &P.st, "fault_samples", "count", &lab);
    if (precise) {
        value_type(&prof_pb, 1, &P.st, "precise_samples", "count", &lab);
        value_type(&prof_pb, 1, &P.st, "latency", "cycles", &lab);
    }
    mw_buf_put(&prof_pb, samples.b, samples.n);
    mw_buf_put(&prof_pb, P.mappings.b, P.mappings.n);
    mw_buf_put(&prof_pb, P.locations.b, P.locations.n);
    mw_buf_put(&prof_pb, P.functions.b, P.functions.n);
    int64_t t0 = mwv_scalar(db, "SELECT MIN(CAST(value AS INTEGER)) FROM meta WHERE key ="
                                " 'start_realtime_ns'");
    int64_t dur = mwv_scalar(db, "SELECT MAX(i.t_end + c.off) - MIN(i.t_start + c.off) FROM"
                                 " intervals i JOIN pclock c ON c.process_id = i.process_id");
    const char *ptype, *punit;
    int64_t period = pp_period(db, o, &ptype, &punit);
    value_type(&prof_pb, 11, &P.st, ptype, punit, &lab);
    pb_int(&prof_pb, 12, period);
    int64_t cmt = str_id(&P.st, "memwatch export: bandwidth-bound samples are those inside "
                                "intervals whose loaded latency crossed the threshold");
    int64_t def = str_id(&P.st, nflag ? "flagged_cpu_samples" : "cpu_samples");
    for (uint32_t i = 0; i < P.st.n; i++) /* string_table: 6 */
        pb_bytes(&prof_pb, 6, P.st.s[i], strlen(P.st.s[i]));
    pb_int(&prof_pb, 9, t0);
    pb_int(&prof_pb, 10, dur);
    pb_key(&prof_pb, 13, 0); /* comment */
    pb_varint(&prof_pb, (uint64_t)cmt);
    pb_int(&prof_pb, 14, def);
    if (prof_pb.oom || samples.oom || P.functions.oom || P.locations.oom || P.mappings.oom) {
        rc = -ENOMEM;
        goto out;
    }
    rc = gzip_to(f, prof_pb.b, prof_pb.n);
out:
    for (int64_t i = 0; rgname && i < nrg; i++)
        free(rgname[i]);
    free(rgname);
    for (size_t i = 0; i < npi; i++)
        free(pi[i].host);
    free(pi);
    free(locs);
    free(prof_pb.b);
    free(samples.b);
    free(sm.b);
    free(lab.b);
    free(P.functions.b);
    free(P.locations.b);
    free(P.mappings.b);
    free(P.scratch.b);
    free(P.scratch2.b);
    free(P.loc_of_pc);
    free(P.map_of_mod);
    free(P.map_limit);
    free(P.fk);
    mw_strtab_free(&P.st);
    mwv_code_free(&P.c);
    return rc;
}
