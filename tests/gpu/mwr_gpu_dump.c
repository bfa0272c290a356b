/*
 * tests/gpu/mwr_gpu_dump.c: prints the GPU records of a .mwr file, one line
 * each, and a last line "kernels=N flagged=M samples=S flagged_samples=F
 * uncalibrated=U trailer=0|1 pclines=P". Used by test_gpu_inject.sh; plain C, no CUDA.
 * Usage: mwr_gpu_dump FILE [kernel-name-substring]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memwatch/mwr.h"
#include "memwatch/mwr_gpu.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: mwr_gpu_dump FILE [kernel-substring]\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    mwr_file_header fh;
    if (fread(&fh, sizeof fh, 1, f) != 1 || memcmp(fh.magic, MWR_MAGIC, 8)) {
        fprintf(stderr, "%s: not a memwatch raw file\n", argv[1]);
        return 1;
    }
    fseek(f, fh.header_size, SEEK_SET);
    unsigned long kernels = 0, flagged = 0, samples = 0, fsamples = 0, uncal = 0, trailer = 0,
                  pclines = 0;
    static unsigned char buf[1 << 16];
    mwr_rec_hdr h;
    while (fread(&h, sizeof h, 1, f) == 1) {
        if (h.size < sizeof h)
            break;
        size_t len = h.size - sizeof h;
        if (len > sizeof buf) { /* CPU records (perf data) can be large: skip them */
            if (fseek(f, (long)len, SEEK_CUR))
                break;
            continue;
        }
        if (fread(buf, 1, len, f) != len)
            break;
        if (h.type == MWR_GPU_KERNEL && len >= sizeof(mwr_gpu_kernel)) {
            mwr_gpu_kernel k;
            memcpy(&k, buf, sizeof k);
            int nl = (int)(k.name_len < len - sizeof k ? k.name_len : len - sizeof k);
            const char *name = (const char *)buf + sizeof k;
            if (argc > 2 && !memmem(name, (size_t)nl, argv[2], strlen(argv[2])))
                continue;
            kernels++;
            flagged += !!(k.flags & MWR_GPU_BW_BOUND);
            uncal += !!(k.flags & MWR_GPU_UNCALIBRATED);
            printf("kernel %.*s dev=%u dur_us=%.1f bytes=%.0f dram_GBps=%.1f thr_GBps=%.1f flags=0x%x%s\n",
                   nl, name, k.device, (k.end_ns - k.start_ns) / 1e3, k.dram_bytes, k.dram_bw / 1e9,
                   k.threshold_bw / 1e9, k.flags, k.flags & MWR_GPU_BW_BOUND ? " BW_BOUND" : "");
        } else if (h.type == MWR_GPU_SAMPLE && len >= sizeof(mwr_gpu_sample)) {
            mwr_gpu_sample s;
            memcpy(&s, buf, sizeof s);
            samples++;
            fsamples += !!(s.flags & MWR_GPU_BW_BOUND);
        } else if (h.type == MWR_GPU_PC && len >= sizeof(mwr_gpu_pc)) {
            mwr_gpu_pc r;
            memcpy(&r, buf, sizeof r);
            if (sizeof r + r.file_len + r.func_len > len)
                continue;
            const char *file = (const char *)buf + sizeof r, *fn = file + r.file_len;
            if (argc > 2 && !memmem(fn, r.func_len, argv[2], strlen(argv[2])))
                continue;
            pclines++;
            /* after the strings: the top stall reasons, "reason=count,..." */
            const char *st = fn + r.func_len;
            int sl = (int)(len - sizeof r - r.file_len - r.func_len);
            while (sl > 0 && !st[sl - 1])
                sl--;
            printf("pc %.*s:%u %.*s samples=%llu stall_mem=%llu stalls=%.*s\n", (int)r.file_len, file,
                   r.line, (int)r.func_len, fn, (unsigned long long)r.samples,
                   (unsigned long long)r.stall_memory, sl, st);
        } else if (h.type == MWR_GPU_META || h.type == MWR_META) {
            printf("meta %.*s", (int)len, (const char *)buf);
        } else if (h.type == MWR_TRAILER) {
            trailer = 1;
        }
    }
    fclose(f);
    printf("kernels=%lu flagged=%lu samples=%lu flagged_samples=%lu uncalibrated=%lu trailer=%lu "
           "pclines=%lu\n",
           kernels, flagged, samples, fsamples, uncal, trailer, pclines);
    return 0;
}
