/*
 * memwatch decode: kernel perf records (as the preload library copies them
 * verbatim into MWR_PERF_DATA) turned into plain structs, offline.
 *
 * The layout of a PERF_RECORD_SAMPLE depends on the perf_event_attr that
 * produced it (sample_type, read_format, sample_regs_user/intr, branch flags);
 * mw_sample_fmt_from_attr() extracts what the decoder needs from the attr bytes
 * stored in MWR_PERF_ATTR. Every read is bounds-checked: a record that lies
 * about its size, or whose fields run past the bytes given, returns
 * MW_ERR_CORRUPT and never reads outside [buf, buf+len).
 *
 * Pointers in the decoded structs point into the caller's buffer (no copies);
 * arrays of u64 may be unaligned: read them with mw_u64_at().
 *
 * Also here: union perf_mem_data_src decoded to memory level, TLB, snoop and
 * lock (mw_mem_src_decode), and the hybrid selection of Helm & Taura
 * (mw_hybrid_*), which decides which samples name the cause of a
 * bandwidth-bound interval.
 *
 * Thread safety: all functions are pure (no global state) and reentrant.
 * None is async-signal-safe by contract, though none allocates.
 */
#ifndef MEMWATCH_DECODE_H
#define MEMWATCH_DECODE_H

#include <memwatch/memwatch.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the decoder needs from a perf_event_attr. */
typedef struct mw_sample_fmt {
    uint32_t type;               /* attr.type */
    uint64_t config;             /* attr.config */
    uint64_t sample_type;        /* PERF_SAMPLE_* */
    uint64_t read_format;        /* PERF_FORMAT_* */
    uint64_t branch_sample_type; /* PERF_SAMPLE_BRANCH_* */
    uint64_t regs_user_mask;     /* sample_regs_user */
    uint64_t regs_intr_mask;     /* sample_regs_intr */
    uint32_t sample_id_all;      /* non-sample records carry struct sample_id */
    uint32_t precise_ip;         /* attr.precise_ip */
    uint32_t use_clockid;        /* attr.use_clockid */
    int32_t clockid;             /* attr.clockid when use_clockid */
    uint32_t max_stack;          /* attr.sample_max_stack (0: the kernel's default) */
} mw_sample_fmt;

/* Fill *out from the bytes of a struct perf_event_attr (any ABI size >= 64:
 * fields the attr is too short to hold read as 0). MW_ERR_CORRUPT when n < 64
 * or attr.size disagrees with n in a way that cannot be right. */
MW_API int mw_sample_fmt_from_attr(const void *attr, size_t n, mw_sample_fmt *out);

/* Bytes of the struct sample_id trailer that non-sample records carry. */
MW_API size_t mw_sample_id_size(const mw_sample_fmt *f);

/* Read an unaligned little-endian u64 from an array decoded below. */
static inline uint64_t mw_u64_at(const void *base, size_t i)
{
    uint64_t v;
    memcpy(&v, (const unsigned char *)base + 8 * i, 8);
    return v;
}

/* A decoded PERF_RECORD_SAMPLE. Fields whose PERF_SAMPLE_* bit is not in
 * `present` are 0. */
typedef struct mw_sample {
    uint64_t present;            /* the sample_type that produced it */
    uint16_t misc;               /* perf_event_header.misc (PERF_RECORD_MISC_*) */
    uint64_t id;                 /* IDENTIFIER or ID */
    uint64_t ip;
    uint32_t pid, tid;
    uint64_t time;
    uint64_t addr;
    uint64_t stream_id;
    uint32_t cpu, cpu_res;
    uint64_t period;
    /* READ: the raw read_format block (values, ids, lost as the format says) */
    const void *read;
    uint32_t read_size;
    /* CALLCHAIN: nr u64 entries, PERF_CONTEXT_* markers included */
    uint64_t callchain_nr;
    const void *callchain;
    /* RAW */
    uint32_t raw_size;
    const void *raw;
    /* BRANCH_STACK: nr entries of {from, to, flags} (24 bytes each) */
    uint64_t branch_nr;
    uint64_t branch_hw_idx;      /* when PERF_SAMPLE_BRANCH_HW_INDEX */
    const void *branches;
    /* REGS_USER: abi (PERF_SAMPLE_REGS_ABI_*), nregs = popcount(mask) when abi != 0 */
    uint64_t regs_user_abi;
    uint32_t regs_user_nr;
    const void *regs_user;
    /* STACK_USER: the copied bytes and the part of them that is valid */
    uint64_t stack_user_size;
    const void *stack_user;
    uint64_t stack_user_dyn_size;
    /* WEIGHT (full u64) or WEIGHT_STRUCT (var1 = latency, var2 = instr
     * retire latency / extra, var3 = reserved); `weight` holds var1 for the
     * struct form so that callers can read one field either way. */
    uint64_t weight;
    uint32_t weight_var1;
    uint16_t weight_var2, weight_var3;
    uint64_t data_src;           /* union perf_mem_data_src */
    uint64_t transaction;
    uint64_t regs_intr_abi;
    uint32_t regs_intr_nr;
    const void *regs_intr;
    uint64_t phys_addr;
    uint64_t cgroup;
    uint64_t data_page_size;
    uint64_t code_page_size;
} mw_sample;

/* struct sample_id trailer of non-sample records (when sample_id_all). */
typedef struct mw_sample_id {
    uint32_t pid, tid;
    uint64_t time;
    uint64_t id, stream_id;
    uint32_t cpu;
} mw_sample_id;

typedef struct mw_perf_record {
    uint32_t type;               /* PERF_RECORD_* */
    uint16_t misc;
    uint16_t size;               /* bytes the record occupies */
    int has_sample_id;           /* sid holds the trailer */
    mw_sample_id sid;
    union {
        mw_sample sample;
        struct { uint64_t id, lost; } lost;                    /* PERF_RECORD_LOST */
        struct { uint64_t lost; } lost_samples;               /* PERF_RECORD_LOST_SAMPLES */
        struct { uint64_t time, id, stream_id; } throttle;    /* THROTTLE / UNTHROTTLE */
        struct { uint32_t pid, ppid, tid, ptid; uint64_t time; } task; /* FORK / EXIT */
        struct { uint32_t pid, tid; char comm[32]; } comm;    /* COMM (truncated to 31) */
        struct {
            uint32_t pid, tid;
            uint64_t addr, len, pgoff;
            uint32_t maj, min;
            uint64_t ino, ino_generation;
            uint8_t build_id_size;   /* > 0 when PERF_RECORD_MISC_MMAP_BUILD_ID */
            uint8_t build_id[20];
            uint32_t prot, flags;
            const char *filename;    /* into the buffer, NUL-terminated within it */
        } mmap2;                     /* MMAP2 (and MMAP: maj.. are 0) */
    } u;
} mw_perf_record;

/* Decode the record at buf (len bytes available). Returns the record's size
 * (> 0) on success, MW_ERR_CORRUPT when the header size is < 8, exceeds len,
 * or the body is shorter than its fields. Record types the decoder does not
 * know return their size with out->type set and nothing else decoded. */
MW_API int mw_perf_record_decode(const mw_sample_fmt *f, const void *buf, size_t len,
                                 mw_perf_record *out);

/* Decode only the body of a PERF_RECORD_SAMPLE (bytes after the 8-byte
 * header). Returns 0 or MW_ERR_CORRUPT. */
MW_API int mw_sample_decode(const mw_sample_fmt *f, const void *body, size_t len, mw_sample *out);

/* Call chain iteration: yields user/kernel addresses, skipping the
 * PERF_CONTEXT_* markers, and says which context each address is in. */
enum mw_ctx { MW_CTX_UNKNOWN = 0, MW_CTX_KERNEL = 1, MW_CTX_USER = 2, MW_CTX_HV = 3,
              MW_CTX_GUEST_KERNEL = 4, MW_CTX_GUEST_USER = 5 };
/* Copies at most max user-space addresses of the chain (markers skipped,
 * kernel frames dropped) into out; returns how many. */
MW_API size_t mw_callchain_user(const mw_sample *s, uint64_t *out, size_t max);
/* Context of marker value v, or -1 when v is not a PERF_CONTEXT_* marker. */
MW_API int mw_callchain_marker(uint64_t v);

/* ---- data_src ---- */
enum mw_mem_level {
    MW_MEM_NA = 0, MW_MEM_L1, MW_MEM_LFB, MW_MEM_L2, MW_MEM_L3, MW_MEM_L4,
    MW_MEM_ANY_CACHE, MW_MEM_LOCAL_DRAM, MW_MEM_REMOTE_DRAM, MW_MEM_REMOTE_CACHE,
    MW_MEM_PMEM, MW_MEM_CXL, MW_MEM_IO, MW_MEM_UNCACHED, MW_MEM_LEVEL_COUNT
};
enum mw_mem_tlb { MW_TLB_NA = 0, MW_TLB_L1_HIT, MW_TLB_L2_HIT, MW_TLB_HIT, MW_TLB_WALK,
                  MW_TLB_OS, MW_TLB_MISS, MW_TLB_COUNT };
enum mw_mem_snoop { MW_SNOOP_NA = 0, MW_SNOOP_NONE, MW_SNOOP_HIT, MW_SNOOP_MISS, MW_SNOOP_HITM,
                    MW_SNOOP_FWD, MW_SNOOP_PEER, MW_SNOOP_COUNT };
enum mw_mem_op { MW_OP_NA = 0, MW_OP_LOAD, MW_OP_STORE, MW_OP_PREFETCH, MW_OP_EXEC, MW_OP_COUNT };

typedef struct mw_mem_src {
    uint8_t op;      /* enum mw_mem_op */
    uint8_t level;   /* enum mw_mem_level: where the data came from */
    int8_t hit;      /* 1 hit at `level`, 0 miss at `level`, -1 not stated */
    uint8_t remote;  /* 1 when the kernel marks the source remote */
    uint8_t hops;    /* PERF_MEM_HOPS_*: 0 n/a, 1 remote core, 2 remote node, 3 remote socket, 4 remote board */
    uint8_t tlb;     /* enum mw_mem_tlb */
    uint8_t snoop;   /* enum mw_mem_snoop */
    int8_t lock;     /* 1 locked, 0 not locked, -1 not available */
    uint8_t blk;     /* PERF_MEM_BLK_* bits */
} mw_mem_src;

MW_API void mw_mem_src_decode(uint64_t data_src, mw_mem_src *out);
MW_API const char *mw_mem_level_name(unsigned level); /* "L1", "local DRAM", ... */
MW_API const char *mw_mem_tlb_name(unsigned tlb);
MW_API const char *mw_mem_snoop_name(unsigned snoop);
MW_API const char *mw_mem_op_name(unsigned op);
/* One line, e.g. "load, remote DRAM (remote socket), TLB walk, snoop HITM, locked". */
MW_API int mw_mem_src_format(const mw_mem_src *m, char *buf, size_t n);
/* 1 when the level is DRAM/PMEM/CXL (beyond every cache), the loads that
 * bandwidth saturation slows. */
MW_API int mw_mem_level_is_memory(unsigned level);

/* ---- hybrid selection (Helm & Taura) ---- */
enum mw_sample_source {
    MW_SRC_TIMER = 1,   /* cpu-clock / task-clock: where time goes */
    MW_SRC_FAULT = 2,   /* page faults: real data addresses without a PMU */
    MW_SRC_PRECISE = 3, /* PEBS load latency / IBS op: ip, addr, latency, data_src */
    MW_SRC_OTHER = 4,
};
/* Classify an event by its attr (and name from MWR_PERF_ATTR, may be NULL). */
MW_API int mw_sample_source_of(const mw_sample_fmt *f, const char *name);
MW_API const char *mw_sample_source_name(int src);

struct mw_profile;
/* The latency threshold (ns or cycles, as the precise event's weight counts)
 * for precise samples: the profile's pebs_lat/ibs_lat method threshold, else
 * its idle DRAM latency, else fallback_ns. */
MW_API double mw_hybrid_threshold(const struct mw_profile *p, double fallback_ns);

/* Whether a sample is kept by the hybrid selection: it must fall inside a
 * flagged interval; precise samples must also have weight >= threshold;
 * timer samples are kept as they are (they name the code); fault samples are
 * kept (they name the data). */
MW_API int mw_hybrid_keep(int source, int in_flagged, uint64_t weight, double threshold);

/* Intervals for lookups: sorted by t_start, non-overlapping. */
typedef struct mw_hybrid_iv {
    uint64_t t_start, t_end;
    uint32_t flags;      /* MWR_IV_* */
    int64_t id;          /* caller's id */
} mw_hybrid_iv;
/* Index of the interval holding time t (t_start <= t < t_end), or -1. */
MW_API long mw_hybrid_find(const mw_hybrid_iv *iv, size_t n, uint64_t t);

#ifdef __cplusplus
}
#endif
#endif
