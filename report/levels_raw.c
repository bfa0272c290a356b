/*
 * report/levels_raw.c: the memory-load levels of raw files without a report
 * database (mw_raw_levels, include/memwatch/report.h): memwatch record's
 * end-of-run summary. Each process's META keys (report/levels.c) judge its
 * intervals once the process's records were read (its META may follow its
 * first intervals), as the report's ingest does (report/ingest_levels.c).
 *
 * May call: mwr_reader, report/levels.c, libc. Prints nothing.
 * Threading: reentrant.
 */
#include <memwatch/levels.h>
#include <memwatch/meta_keys.h>
#include <memwatch/mwr_reader.h>
#include <memwatch/report.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One interval with a latency reading, kept until its process's META is
 * complete. */
typedef struct raw_iv {
    double dur, lat, thr;
    int flagged;
} raw_iv;

typedef struct raw_proc {
    mw_lvl_meta m;
    raw_iv *iv;
    size_t n, cap;
} raw_proc;

void mw_raw_levels_init(mw_raw_levels *s)
{
    memset(s, 0, sizeof *s);
}

int mw_raw_levels_saturable(const mw_raw_levels *s)
{
    return s->yes ? 1 : s->no ? 0 : -1;
}

/* The levels' keys of one META record's "key=value" lines. */
static void take_meta(mw_raw_levels *s, raw_proc *p, const char *t, size_t n)
{
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(t + i, '\n', n - i);
        size_t l = nl ? (size_t)(nl - (t + i)) : n - i;
        const char *eq = memchr(t + i, '=', l);
        char key[32], val[2048];
        size_t kl = eq ? (size_t)(eq - (t + i)) : 0;
        if (eq && kl < sizeof key && l - kl - 1 < sizeof val) {
            memcpy(key, t + i, kl);
            key[kl] = 0;
            memcpy(val, eq + 1, l - kl - 1);
            val[l - kl - 1] = 0;
            (void)mw_lvl_meta_set(&p->m, key, val); /* malformed: left out */
            if (!strcmp(key, mw_meta_key(MW_META_THRESHOLD_NOTE)) && !s->note[0])
                snprintf(s->note, sizeof s->note, "%.239s", val);
        }
        i += l + 1;
    }
}

static int keep_iv(raw_proc *p, const mwr_interval *iv)
{
    if (!(iv->flags & MWR_IV_LAT_VALID) || iv->t_end_ns <= iv->t_start_ns)
        return 0;
    if (p->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 256;
        raw_iv *v = realloc(p->iv, nc * sizeof *v);
        if (!v)
            return -ENOMEM;
        p->iv = v;
        p->cap = nc;
    }
    p->iv[p->n++] = (raw_iv){(double)(iv->t_end_ns - iv->t_start_ns), iv->latency_ns,
                             iv->threshold_ns, (iv->flags & MWR_IV_BW_BOUND) != 0};
    return 0;
}

/* The process's intervals judged by its META, into s; p emptied. */
static void judge(mw_raw_levels *s, raw_proc *p)
{
    const mw_lvl_meta *m = &p->m;
    s->yes += m->saturable == 1;
    s->no += m->saturable == 0;
    if (m->peak_bw > s->peak_bw)
        s->peak_bw = m->peak_bw;
    if (m->have_band) {
        s->band_lo = s->have_band && s->band_lo < m->band_lo ? s->band_lo : m->band_lo;
        s->band_hi = s->have_band && s->band_hi > m->band_hi ? s->band_hi : m->band_hi;
        s->have_band = 1;
    }
    for (size_t i = 0; i < p->n; i++) {
        const raw_iv *v = &p->iv[i];
        mw_iv_level r = mw_lvl_interval(m, 1, v->lat, v->flagged);
        int above = v->flagged || (v->thr > 0 && v->lat > v->thr);
        s->measured_ns += v->dur;
        if (r.level == MW_LEVEL_NONE)
            s->unknown_ns += v->dur;
        else
            s->level_ns[r.level] += v->dur;
        s->flagged_ns += v->flagged ? v->dur : 0;
        s->above_ns += above ? v->dur : 0;
        s->above_n += (uint64_t)above;
        s->band_ns += r.in_band == 1 ? v->dur : 0;
        s->band_above_ns += r.in_band == 1 && above ? v->dur : 0;
    }
    p->n = 0;
    mw_lvl_meta_init(&p->m);
}

int mw_raw_levels_add(mw_raw_levels *s, const char *path)
{
    mw_reader *r = NULL;
    int rc = mw_reader_open(path, &r);
    if (rc)
        return rc;
    raw_proc p = {0};
    mw_lvl_meta_init(&p.m);
    do { /* one process per segment */
        mw_record rec;
        while (rc == 0 && mw_reader_next(r, &rec) == 1) {
            mwr_interval iv;
            const char *t;
            size_t n;
            if (rec.type == MWR_META && mw_rec_text(&rec, &t, &n) == 0)
                take_meta(s, &p, t, n);
            else if (rec.type == MWR_INTERVAL && mw_rec_interval(&rec, &iv) == 0)
                rc = keep_iv(&p, &iv);
        }
        judge(s, &p);
    } while (rc == 0 && mw_reader_next_segment(r));
    free(p.iv);
    mw_reader_close(r);
    return rc;
}
