/*
 * tests/fuzz_reader/fuzz_reader.c: libFuzzer entry for the raw reader. The
 * input is a whole .mwr file: every record goes through its typed accessor,
 * perf attrs become decode formats and perf data blocks are decoded record by
 * record (with the last attr seen, and with an attr that has every sample
 * field, so the decoder's bounds are exercised either way). Any crash,
 * overread or undefined behaviour is a finding.
 */
#include <memwatch/decode.h>
#include <memwatch/mwr_reader.h>

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void quiet(int level, const char *msg, void *user)
{
    (void)level;
    (void)msg;
    (void)user;
}

static void decode_block(const mw_sample_fmt *f, const unsigned char *p, size_t n)
{
    size_t off = 0;
    while (off + 8 <= n) {
        mw_perf_record r;
        int rc = mw_perf_record_decode(f, p + off, n - off, &r);
        if (rc <= 0)
            break;
        if (r.type == PERF_RECORD_SAMPLE) {
            uint64_t u[64];
            mw_callchain_user(&r.u.sample, u, 64);
            mw_mem_src m;
            mw_mem_src_decode(r.u.sample.data_src, &m);
            char buf[128];
            mw_mem_src_format(&m, buf, sizeof buf);
            volatile uint64_t sink = 0;
            for (uint32_t i = 0; i < r.u.sample.regs_user_nr; i++)
                sink += mw_u64_at(r.u.sample.regs_user, i);
            if (r.u.sample.stack_user_size)
                sink += ((const unsigned char *)r.u.sample.stack_user)[r.u.sample.stack_user_size - 1];
            if (r.u.sample.raw_size)
                sink += ((const unsigned char *)r.u.sample.raw)[r.u.sample.raw_size - 1];
            (void)sink;
        } else if (r.type == PERF_RECORD_MMAP2 || r.type == PERF_RECORD_MMAP) {
            volatile size_t l = strlen(r.u.mmap2.filename);
            (void)l;
        }
        off += (size_t)rc;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int init;
    if (!init) {
        mw_set_log(quiet, NULL, 0);
        init = 1;
    }
    /* an exact-size copy so that ASan sees any read past the end */
    unsigned char *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    mw_reader *r;
    if (mw_reader_open_mem(buf, size, &r) != 0) {
        free(buf);
        return 0;
    }
    mw_sample_fmt last = {0}, all = {0};
    all.sample_type = (PERF_SAMPLE_MAX - 1) & ~(uint64_t)PERF_SAMPLE_WEIGHT;
    all.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST |
                      PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    all.branch_sample_type = PERF_SAMPLE_BRANCH_HW_INDEX;
    all.regs_user_mask = 0xff;
    all.regs_intr_mask = 0xf;
    all.sample_id_all = 1;
    mw_record rec;
    while (mw_reader_next(r, &rec) == 1) {
        mwr_interval iv;
        mwr_thread th;
        mwr_alloc a;
        mwr_free fr;
        mwr_module m;
        mwr_counters c;
        mwr_trailer t;
        mwr_perf_attr pa;
        mwr_perf_data pd;
        const void *p;
        const char *s;
        size_t n;
        switch (rec.type) {
        case MWR_INTERVAL: mw_rec_interval(&rec, &iv); break;
        case MWR_THREAD: mw_rec_thread(&rec, &th); break;
        case MWR_ALLOC:
            if (mw_rec_alloc(&rec, &a, &p) == 0 && a.nframes) {
                volatile uint64_t x = mw_u64_at(p, a.nframes - 1u);
                (void)x;
            }
            break;
        case MWR_FREE: mw_rec_free(&rec, &fr); break;
        case MWR_MODULE:
            if (mw_rec_module(&rec, &m, &s) == 0 && m.path_len) {
                volatile char ch = s[m.path_len - 1];
                (void)ch;
            }
            break;
        case MWR_COUNTERS:
            if (mw_rec_counters(&rec, &c, &p) == 0 && c.nvalues) {
                volatile uint64_t x = mw_u64_at(p, c.nvalues - 1u);
                (void)x;
            }
            break;
        case MWR_TRAILER: mw_rec_trailer(&rec, &t); break;
        case MWR_GPU_KERNEL: {
            mwr_gpu_kernel gk;
            if (mw_rec_gpu_kernel(&rec, &gk, &s) == 0 && gk.name_len) {
                volatile char ch = s[gk.name_len - 1];
                (void)ch;
            }
            break;
        }
        case MWR_GPU_SAMPLE: {
            mwr_gpu_sample gs;
            mw_rec_gpu_sample(&rec, &gs);
            break;
        }
        case MWR_GPU_PC: {
            mwr_gpu_pc gp;
            const char *fn;
            if (mw_rec_gpu_pc(&rec, &gp, &s, &fn) == 0 && gp.file_len + gp.func_len) {
                volatile char ch = s[gp.file_len + gp.func_len - 1];
                (void)ch;
            }
            break;
        }
        case MWR_PERF_ATTR:
            if (mw_rec_perf_attr(&rec, &pa, &p) == 0)
                mw_sample_fmt_from_attr(p, pa.attr_size, &last);
            break;
        case MWR_PERF_DATA:
            if (mw_rec_perf_data(&rec, &pd, &p, &n) == 0) {
                decode_block(&last, p, n);
                decode_block(&all, p, n);
            }
            break;
        case MWR_META:
        case MWR_LOG:
            mw_rec_text(&rec, &s, &n);
            break;
        default: break;
        }
    }
    mw_reader_status(r);
    mw_reader_trailer(r, NULL);
    mw_reader_close(r);
    free(buf);
    return 0;
}
