/*
 * GPU records of the memwatch raw file (.mwr): payload layouts of
 * MWR_GPU_KERNEL, MWR_GPU_SAMPLE, MWR_GPU_PC and MWR_GPU_META (mwr.h gives the
 * record types, the file header and the framing). Written by
 * libmemwatch_cuda.so (gpu/inject.c), the library CUDA loads through
 * CUDA_INJECTION64_PATH; read by `memwatch report`. Described for users in
 * docs/gpu.md.
 *
 * Times: GPU records carry CUPTI timestamps (nanoseconds, the GPU's global
 * timer, which the driver keeps in step with CLOCK_REALTIME). The MWR_GPU_META
 * record "clock" pairs one CUPTI timestamp with CLOCK_MONOTONIC so that a reader
 * can place GPU records on the CPU records' time line:
 *     monotonic_ns = gpu_ns - clock.gpu_ns + clock.mono_ns
 *
 * Compatibility follows mwr.h: fields are only ever appended to a payload;
 * readers use the record size and ignore what they do not know. All layouts are
 * naturally aligned, little-endian, with no implicit padding.
 */
#ifndef MEMWATCH_MWR_GPU_H
#define MEMWATCH_MWR_GPU_H

#include <stdint.h>

/* Flags shared by MWR_GPU_KERNEL and MWR_GPU_SAMPLE. */
enum mwr_gpu_flag {
    MWR_GPU_BW_BOUND = 1u << 0,      /* DRAM throughput above the threshold in force */
    MWR_GPU_BW_VALID = 1u << 1,      /* dram_bytes / dram_bw hold a measurement */
    MWR_GPU_UNCALIBRATED = 1u << 2,  /* threshold is memwatch's default: no GPU profile */
    MWR_GPU_OVERFLOW = 1u << 3,      /* PM sampling lost samples around this record */
    MWR_GPU_PARTIAL = 1u << 4,       /* PM samples covered only part of the kernel */
};

/* MWR_GPU_KERNEL: one kernel execution (CUPTI Activity API, concurrent-kernel
 * records), with the DRAM traffic PM sampling saw while it ran. */
typedef struct mwr_gpu_kernel {
    uint64_t start_ns;        /* CUPTI timestamp of the kernel's start */
    uint64_t end_ns;          /* ... and end */
    uint32_t device;          /* CUDA device ordinal */
    uint32_t stream;          /* CUPTI stream id */
    uint32_t correlation;     /* CUPTI correlation id (links to MWR_GPU_PC records) */
    uint32_t flags;           /* enum mwr_gpu_flag */
    int32_t grid[3];          /* grid dimensions */
    int32_t block[3];         /* block dimensions */
    uint32_t regs;            /* registers per thread */
    uint32_t shmem;           /* static + dynamic shared memory per block, bytes */
    double dram_bytes;        /* DRAM bytes read + written by it (PM windows, gpu/attrib.c) */
    double dram_bw;           /* bytes/s: dram_bytes over the covered time */
    double threshold_bw;      /* bytes/s: the flagging threshold in force */
    double peak_bw;           /* bytes/s: the device's computed peak (clock x bus width x 2) */
    uint32_t name_len;        /* bytes of the (mangled) kernel name that follow, no NUL */
    uint32_t pad;
    /* char name[name_len] follows */
} mwr_gpu_kernel;             /* 104 bytes + name */

/* MWR_GPU_SAMPLE: one PM-sampling interval (the first of a session is
 * discarded as the hardware documents it as partial). */
typedef struct mwr_gpu_sample {
    uint64_t start_ns;        /* CUPTI timestamps of the interval */
    uint64_t end_ns;
    uint32_t device;
    uint32_t flags;           /* enum mwr_gpu_flag */
    double dram_read_bytes;   /* bytes read from DRAM in the interval */
    double dram_write_bytes;  /* bytes written to DRAM in the interval */
    double dram_bw;           /* bytes/s over the interval */
    double threshold_bw;      /* bytes/s: the flagging threshold in force */
} mwr_gpu_sample;             /* 56 bytes */

/* MWR_GPU_PC: PC-sampling hits of one source line of a kernel. After the two
 * strings, to the end of the payload (less the framing's zero padding): the
 * line's top stall reasons as text, "reason=count,..." (absent in older files). */
typedef struct mwr_gpu_pc {
    uint32_t correlation;     /* kernel's correlation id, 0 when aggregated per function */
    uint32_t line;            /* source line (from -lineinfo), 0 if unknown */
    uint64_t pc_offset;       /* offset of one sampled PC in its function */
    uint64_t samples;         /* PC samples attributed to this line */
    uint64_t stall_memory;    /* of which stalled on memory dependencies */
    uint32_t file_len;        /* bytes of source path that follow */
    uint32_t func_len;        /* bytes of function name that follow the path */
    /* char file[file_len]; char func[func_len]; char stalls[] follow */
} mwr_gpu_pc;                 /* 40 bytes + strings */

/* MWR_GPU_META: text "key=value\n" lines, like MWR_META. Keys written (their
 * names: MW_META_GPU_* in meta_keys.h):
 *   gpu.device=<ordinal>, then that device's gpu.name=<device name>,
 *   gpu.cc=<major>.<minor>, gpu.peak_bw=<bytes/s>, gpu.threshold_bw=<bytes/s>,
 *   gpu.threshold_source (one such group per device used)
 *   gpu.threshold_source=profile:<path> | default (uncalibrated)
 *   gpu.sampling=pm:<metric,...>:<interval ns> | unavailable:<reason>
 *   gpu.clock=<gpu_ns> <monotonic_ns>
 *   gpu.status=<a sentence about what could not be collected, if anything>
 *   gpu.summary=kernels N, flagged N, samples N, flagged samples N, dropped records N
 *   gpu.device_summary=device D: kernels N, flagged N, without PM windows N, samples N,
 *     flagged samples N
 *   gpu.pc_sampling=continuous:2^<n> cycles | unavailable:<reason>   (MEMWATCH_GPU_PC=1)
 *   gpu.pc_summary=<lines, PC samples, dropped, PCs>   gpu.pc_status=<a failure, if any>
 */

#endif
