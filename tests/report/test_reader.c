/*
 * tests/report/test_reader.c: the raw reader on a small file built with
 * mwr_build.h: read whole; truncated at every byte (from memory and from a
 * real file) -> every whole record before the cut, then a clear error or
 * "no trailer"; random byte corruption (seeded) -> never a crash, the
 * records before the first damaged byte come back unchanged, and damage
 * found in a frame is reported with its offset. Typed accessors reject
 * payloads shorter than their struct.
 */
#include "mw_test.h"
#include "mwr_build.h"

#include <memwatch/mwr_reader.h>

#include <errno.h>
#include <unistd.h>

static mwb build(size_t *ends, size_t *nrec)
{
    mwb w;
    mwb_init(&w);
    size_t k = 0;
#define MARK() (ends[k++] = w.n)
    mwb_meta(&w, "pid=42\nexe=/bin/demo\n");
    MARK();
    uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR;
    mwb_attr(&w, 1, "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, st);
    MARK();
    unsigned char recs[256];
    size_t n = 0;
    for (int i = 0; i < 3; i++) {
        mwb_sample s = {0x401000 + (uint64_t)i, 1000 + (uint64_t)i, 0x10000 + (uint64_t)i, 0, 0,
                        42, 42, NULL, 0};
        n += mwb_kernel_sample(recs + n, st, &s);
    }
    mwb_perf_data(&w, 1, 42, 2000, recs, n);
    MARK();
    mwb_interval(&w, 0, 10000000, MWR_IV_BW_BOUND, 200);
    MARK();
    mwr_thread t;
    memset(&t, 0, sizeof t);
    t.tid = 43;
    t.event = MWR_THREAD_START;
    snprintf(t.name, sizeof t.name, "worker");
    mwb_rec(&w, MWR_THREAD, &t, sizeof t, 0, 0);
    MARK();
    uint64_t fr[2] = {0x401234, 0x401567};
    mwb_alloc(&w, 500, 0x10000, 4096, fr, 2);
    MARK();
    mwb_free(&w, 5000, 0x10000);
    MARK();
    mwb_module(&w, "/bin/demo", 0, 0x400000, 0x500000);
    MARK();
    mwb_rec(&w, 999, "future", 6, 0, 0); /* unknown type: skipped by readers */
    MARK();
    mwb_trailer(&w, 9000, 0);
    MARK();
#undef MARK
    *nrec = k;
    return w;
}

/* Read all; return records seen, fill rc of the last next(). */
static int strict = 1; /* accessors must succeed (undamaged files) */

static size_t read_all(mw_reader *r, int *last, mw_record *recs, size_t cap)
{
    size_t k = 0;
    mw_record rec;
    int rc;
    while ((rc = mw_reader_next(r, &rec)) == 1) {
        if (k < cap)
            recs[k] = rec;
        k++;
        /* typed accessors must never fail on a whole, well-formed record */
        mwr_interval iv;
        mwr_alloc a;
        mwr_module m;
        mwr_perf_attr pa;
        mwr_perf_data pd;
        const void *p;
        const char *path;
        size_t len;
        if (!strict) {
            /* damaged payloads: accessors may refuse, but must not crash */
            mw_rec_interval(&rec, &iv);
            mw_rec_alloc(&rec, &a, &p);
            mw_rec_module(&rec, &m, &path);
            mw_rec_perf_attr(&rec, &pa, &p);
            mw_rec_perf_data(&rec, &pd, &p, &len);
            continue;
        }
        switch (rec.type) {
        case MWR_INTERVAL: MW_CHECK_INT(mw_rec_interval(&rec, &iv), 0); break;
        case MWR_ALLOC: MW_CHECK_INT(mw_rec_alloc(&rec, &a, &p), 0); break;
        case MWR_MODULE: MW_CHECK_INT(mw_rec_module(&rec, &m, &path), 0); break;
        case MWR_PERF_ATTR: MW_CHECK_INT(mw_rec_perf_attr(&rec, &pa, &p), 0); break;
        case MWR_PERF_DATA: MW_CHECK_INT(mw_rec_perf_data(&rec, &pd, &p, &len), 0); break;
        default: break;
        }
    }
    *last = rc;
    return k;
}

int main(void)
{
    size_t ends[32], nrec;
    mwb w = build(ends, &nrec);
    mw_record full[32];

    /* whole file */
    mw_reader *r;
    MW_CHECK_INT(mw_reader_open_mem(w.b, w.n, &r), 0);
    int last;
    size_t k = read_all(r, &last, full, 32);
    MW_CHECK_INT(k, nrec);
    MW_CHECK_INT(last, 0);
    mwr_trailer tr;
    MW_CHECK_INT(mw_reader_trailer(r, &tr), 1);
    MW_CHECK_U64(tr.time_ns, 9000);
    MW_CHECK_STR(mw_reader_status(r), "");
    MW_CHECK_INT(mw_reader_next(r, &full[31]), 0); /* stays at the end */
    mw_reader_close(r);

    /* truncated at every byte, from memory */
    int bad = 0;
    for (size_t n = 0; n < w.n; n++) {
        unsigned char *copy = malloc(n ? n : 1);
        memcpy(copy, w.b, n);
        int rc = mw_reader_open_mem(copy, n, &r);
        if (n < sizeof(mwr_file_header)) {
            if (rc != MW_ERR_CORRUPT)
                bad++;
            free(copy);
            continue;
        }
        if (rc != 0) {
            bad++;
            free(copy);
            continue;
        }
        size_t whole = 0;
        while (whole < nrec && ends[whole] <= n)
            whole++;
        k = read_all(r, &last, NULL, 0);
        int at_boundary = n == sizeof(mwr_file_header) || (whole && ends[whole - 1] == n);
        if (k != whole) {
            bad++;
            fprintf(stderr, "cut at %zu: %zu records, expected %zu\n", n, k, whole);
        }
        if (at_boundary ? last != 0 : last != MW_ERR_CORRUPT) {
            bad++;
            fprintf(stderr, "cut at %zu: last %d\n", n, last);
        }
        const char *st = mw_reader_status(r);
        if (at_boundary ? !strstr(st, "no trailer") : !strstr(st, "truncated at byte")) {
            bad++;
            fprintf(stderr, "cut at %zu: status \"%s\"\n", n, st);
        }
        if (mw_reader_trailer(r, NULL))
            bad++;
        mw_reader_close(r);
        free(copy);
    }
    MW_CHECK(bad == 0, "%d truncation cases wrong", bad);

    /* truncated real files (every 8th byte): the file path code */
    char path[] = "/tmp/mw_reader_XXXXXX";
    int fd = mkstemp(path);
    MW_CHECK(fd >= 0, "mkstemp");
    close(fd);
    bad = 0;
    for (size_t n = 0; n < w.n; n += 8) {
        mwb_write(&w, path, n);
        int rc = mw_reader_open(path, &r);
        if (n < sizeof(mwr_file_header)) {
            bad += rc != MW_ERR_CORRUPT;
            continue;
        }
        if (rc) {
            bad++;
            continue;
        }
        size_t whole = 0;
        while (whole < nrec && ends[whole] <= n)
            whole++;
        k = read_all(r, &last, NULL, 0);
        bad += k != whole;
        mw_reader_close(r);
    }
    MW_CHECK(bad == 0, "%d file truncation cases wrong", bad);
    MW_CHECK_INT(mw_reader_open("/nonexistent/x.mwr", &r), -ENOENT);
    unlink(path);

    /* random corruption: 3000 files with 1-4 flipped bytes each */
    srand(12345);
    strict = 0;
    bad = 0;
    int reported = 0, clean = 0;
    for (int iter = 0; iter < 3000; iter++) {
        unsigned char *copy = malloc(w.n);
        memcpy(copy, w.b, w.n);
        size_t first = w.n;
        int flips = 1 + rand() % 4;
        for (int f = 0; f < flips; f++) {
            size_t at = sizeof(mwr_file_header) + (size_t)rand() % (w.n - sizeof(mwr_file_header));
            copy[at] ^= (unsigned char)(1 + rand() % 255);
            if (at < first)
                first = at;
        }
        if (mw_reader_open_mem(copy, w.n, &r) != 0) {
            bad++;
            free(copy);
            continue;
        }
        mw_record got[64];
        k = read_all(r, &last, got, 64);
        /* records wholly before the first damaged byte are returned unchanged */
        for (size_t i = 0; i < nrec && ends[i] <= first; i++) {
            if (i >= k || got[i].type != full[i].type || got[i].size != full[i].size ||
                memcmp((const unsigned char *)got[i].payload - 8,
                       w.b + got[i].offset, got[i].size)) {
                bad++;
                break;
            }
        }
        if (last == MW_ERR_CORRUPT) {
            reported++;
            if (!strstr(mw_reader_status(r), "byte"))
                bad++;
        } else {
            clean++;
        }
        mw_reader_close(r);
        free(copy);
    }
    MW_CHECK(bad == 0, "%d corruption cases wrong", bad);
    MW_CHECK(reported > 0 && clean > 0, "corruptions reported %d, clean %d", reported, clean);
    printf("corruption: %d reported as damage, %d within payloads\n", reported, clean);

    /* wrong magic and foreign version */
    unsigned char hdr[64];
    memcpy(hdr, w.b, 64);
    hdr[0] = 'X';
    MW_CHECK_INT(mw_reader_open_mem(hdr, 64, &r), MW_ERR_CORRUPT);
    memcpy(hdr, w.b, 64);
    hdr[8] = 9;
    MW_CHECK_INT(mw_reader_open_mem(hdr, 64, &r), MW_ERR_FOREIGN);

    /* short payloads are rejected by the typed accessors */
    mw_record small = {MWR_INTERVAL, 16, 0, w.b, 8};
    mwr_interval iv;
    MW_CHECK_INT(mw_rec_interval(&small, &iv), MW_ERR_CORRUPT);
    mwr_alloc a;
    const void *fr;
    unsigned char abuf[sizeof(mwr_alloc)];
    memset(abuf, 0, sizeof abuf);
    ((mwr_alloc *)abuf)->nframes = 5;
    mw_record ar = {MWR_ALLOC, (uint32_t)(8 + sizeof abuf), 0, abuf, sizeof abuf};
    MW_CHECK_INT(mw_rec_alloc(&ar, &a, &fr), MW_ERR_CORRUPT);
    free(w.b);
    return mw_test_done();
}
