/*
 * tests/preload/test_ring.c: mw_ring_read on a ring laid out like the
 * kernel's (metadata page, power-of-two data area) but filled by the test:
 * empty ring, whole records copied verbatim with their statistics, a record
 * wrapping the end of the buffer, a destination too small, an oversized and
 * a damaged record. data_tail must always end where the copy ended.
 */
#include "mw_test.h"

#include <memwatch/ring.h>

#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PG 4096u
#define NDATA 2u

static mw_ring ring;
static struct perf_event_mmap_page *meta;
static unsigned char *data;
static uint64_t head;

static void reset(uint64_t pos)
{
    memset(data, 0xee, NDATA * PG);
    head = pos;
    meta->data_head = pos;
    meta->data_tail = pos;
}

/* Write a record of `size` bytes at head (wrapping), type t, body filled with seed. */
static void put(uint16_t type, uint16_t size, unsigned char seed, uint64_t lost)
{
    unsigned char rec[8192];
    struct perf_event_header h = {type, 0, size};
    memcpy(rec, &h, sizeof h);
    for (unsigned i = sizeof h; i < size; i++)
        rec[i] = (unsigned char)(seed + i);
    if (type == PERF_RECORD_LOST) {
        uint64_t id = 1;
        memcpy(rec + 8, &id, 8);
        memcpy(rec + 16, &lost, 8);
    }
    for (unsigned i = 0; i < size; i++)
        data[(head + i) % (NDATA * PG)] = rec[i];
    head += size;
    meta->data_head = head;
}

int main(void)
{
    unsigned char *map = aligned_alloc(PG, (1 + NDATA) * PG);
    memset(map, 0, (1 + NDATA) * PG);
    meta = (void *)map;
    data = map + PG;
    ring.base = map;
    ring.map_bytes = (1 + NDATA) * PG;
    ring.data_bytes = NDATA * PG;
    ring.fd = -1;
    unsigned char out[16384];
    mw_ring_stats st;

    /* empty */
    reset(0);
    memset(&st, 0, sizeof st);
    MW_CHECK_INT(mw_ring_read(&ring, out, sizeof out, &st), 0);
    MW_CHECK_INT(mw_ring_pending(&ring), 0);

    /* whole records, verbatim, with statistics */
    reset(64);
    put(PERF_RECORD_SAMPLE, 48, 1, 0);
    put(PERF_RECORD_LOST, 24, 0, 5);
    put(PERF_RECORD_THROTTLE, 32, 2, 0);
    put(PERF_RECORD_SAMPLE, 64, 3, 0);
    MW_CHECK_INT(mw_ring_pending(&ring), 168);
    memset(&st, 0, sizeof st);
    size_t n = mw_ring_read(&ring, out, sizeof out, &st);
    MW_CHECK_INT(n, 168);
    MW_CHECK_INT(st.samples, 2);
    MW_CHECK_INT(st.lost, 5);
    MW_CHECK_INT(st.throttled, 1);
    MW_CHECK_INT(st.skipped, 0);
    MW_CHECK(!memcmp(out, data + 64, 168), "records not copied verbatim");
    MW_CHECK_INT(meta->data_tail, 64 + 168);

    /* a record wrapping the end of the data area is reassembled */
    reset(NDATA * PG - 40);
    put(PERF_RECORD_SAMPLE, 96, 7, 0);
    memset(&st, 0, sizeof st);
    n = mw_ring_read(&ring, out, sizeof out, &st);
    MW_CHECK_INT(n, 96);
    MW_CHECK_INT(st.samples, 1);
    int ok = 1;
    for (unsigned i = 8; i < 96; i++)
        ok &= out[i] == (unsigned char)(7 + i);
    MW_CHECK(ok, "wrapped record body differs");
    MW_CHECK_INT(meta->data_tail, NDATA * PG - 40 + 96);

    /* destination too small: only whole records, the rest stays */
    reset(0);
    put(PERF_RECORD_SAMPLE, 40, 1, 0);
    put(PERF_RECORD_SAMPLE, 40, 2, 0);
    put(PERF_RECORD_SAMPLE, 40, 3, 0);
    memset(&st, 0, sizeof st);
    n = mw_ring_read(&ring, out, 100, &st);
    MW_CHECK_INT(n, 80);
    MW_CHECK_INT(meta->data_tail, 80);
    n = mw_ring_read(&ring, out, 100, &st);
    MW_CHECK_INT(n, 40);
    MW_CHECK_INT(st.samples, 3);
    MW_CHECK_INT(mw_ring_pending(&ring), 0);

    /* a record larger than the destination is consumed and counted */
    reset(0);
    put(PERF_RECORD_SAMPLE, 512, 1, 0);
    put(PERF_RECORD_SAMPLE, 40, 2, 0);
    memset(&st, 0, sizeof st);
    n = mw_ring_read(&ring, out, 256, &st);
    MW_CHECK_INT(n, 40);
    MW_CHECK_INT(st.skipped, 1);
    MW_CHECK_INT(st.samples, 1);

    /* damage (size 0, or not a multiple of 8): everything pending is dropped */
    reset(0);
    put(PERF_RECORD_SAMPLE, 40, 1, 0);
    put(PERF_RECORD_SAMPLE, 8, 2, 0);
    ((struct perf_event_header *)(data + 40))->size = 0;
    memset(&st, 0, sizeof st);
    n = mw_ring_read(&ring, out, sizeof out, &st);
    MW_CHECK_INT(n, 40);
    MW_CHECK_INT(st.skipped, 1);
    MW_CHECK_INT(meta->data_tail, 48);

    /* a header that says more than the kernel published is not read */
    reset(0);
    put(PERF_RECORD_SAMPLE, 40, 1, 0);
    meta->data_head = 24;
    n = mw_ring_read(&ring, out, sizeof out, &st);
    MW_CHECK_INT(n, 0);

    /* unmapped ring */
    mw_ring empty = {NULL, 0, 0, -1};
    MW_CHECK_INT(mw_ring_read(&empty, out, sizeof out, NULL), 0);
    MW_CHECK_INT(mw_ring_map(&empty, -1, 3), -22); /* not a power of two */

    free(map);
    return mw_test_done();
}
