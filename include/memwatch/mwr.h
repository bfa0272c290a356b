/*
 * The memwatch raw file (.mwr): what libmemwatch.so writes, one file per
 * process, and what `memwatch report` reads. Specified in docs/raw-format.md;
 * this header is the authoritative layout. All integers are little-endian
 * (the writer's native order on x86-64), all records 8-byte aligned.
 *
 *   file    := file_header record*  [trailer record]
 *   record  := mwr_rec_hdr payload padding-to-8
 *
 * Every record carries its total size, so a reader stops cleanly at the last
 * whole record of a file cut short by a crash or SIGKILL. A missing trailer
 * means the process did not end normally; the reader says so.
 *
 * Compatibility: the major version changes when a layout changes; new record
 * types and new fields appended at the end of a payload (readers use the
 * record size) keep the major version. Readers skip record types they do not
 * know.
 */
#ifndef MEMWATCH_MWR_H
#define MEMWATCH_MWR_H

#include <stdint.h>

#define MWR_MAGIC "MEMWATCH"   /* 8 bytes, no terminator */
#define MWR_VERSION_MAJOR 1
#define MWR_VERSION_MINOR 3 /* 1.1: MWR_STACK and MWR_A_STACKREF; 1.2: MWR_ALLOC_SITE;
                              1.3: mwr_thread.fs_base, mwr_module.flags (older files read alike) */

typedef struct mwr_file_header {
    char magic[8];            /* "MEMWATCH" */
    uint16_t version_major;
    uint16_t version_minor;
    uint32_t header_size;     /* sizeof(struct mwr_file_header) */
    uint64_t reserved[2];
} mwr_file_header;            /* 32 bytes */

typedef struct mwr_rec_hdr {
    uint32_t type;            /* enum mwr_type */
    uint32_t size;            /* whole record including this header and padding */
} mwr_rec_hdr;

enum mwr_type {
    MWR_META = 1,        /* text: "key=value\n" lines (see docs/raw-format.md for keys) */
    MWR_PERF_ATTR = 2,   /* mwr_perf_attr + attr bytes: how to decode MWR_PERF_DATA */
    MWR_PERF_DATA = 3,   /* mwr_perf_data + whole kernel records copied verbatim */
    MWR_INTERVAL = 4,    /* mwr_interval */
    MWR_THREAD = 5,      /* mwr_thread */
    MWR_ALLOC = 6,       /* mwr_alloc + frames */
    MWR_FREE = 7,        /* mwr_free */
    MWR_MODULE = 8,      /* mwr_module + path */
    MWR_COUNTERS = 9,    /* mwr_counters + values: one group read */
    MWR_LOG = 10,        /* text: a warning memwatch gave during the run */
    MWR_REGION = 11,     /* mwr_region + mwr_region_ev[nevents]: region begins and ends
                            (readers take it; libmemwatch.so writes MWR_REGION_PACKED) */
    MWR_REGION_NAME = 12,/* mwr_region_name + name bytes: what a region id stands for */
    MWR_CPU = 13,        /* mwr_cpu: the kernel's CPU time accounting of a thread or the process */
    MWR_REGION_PACKED = 14, /* mwr_region_packed + packed events: MWR_REGION's events, smaller */
    MWR_STACK = 15,      /* mwr_stack + frames: a call chain that allocation records name by id */
    MWR_LOAD = 16,       /* mwr_load + mwr_load_proc[ntop]: the machine's load in one slot, in
                            memwatch record's load file (.mwl; include/memwatch/mwr_load.h) */
    MWR_ALLOC_SITE = 17, /* mwr_alloc_site: an allocation site's totals where not every
                            allocation of it was recorded (format 1.2) */
    MWR_GPU_KERNEL = 20, /* GPU records: layouts defined in gpu/ and docs/raw-format.md */
    MWR_GPU_SAMPLE = 21,
    MWR_GPU_PC = 22,
    MWR_GPU_META = 23,
    MWR_TRAILER = 0x7fff /* mwr_trailer: the last record of a cleanly ended process */
};

/* Flags of mwr_interval. */
enum mwr_interval_flag {
    MWR_IV_BW_BOUND = 1u << 0,      /* latency above the saturation threshold */
    MWR_IV_LAT_VALID = 1u << 1,     /* latency_ns holds a measurement */
    MWR_IV_BW_VALID = 1u << 2,      /* bytes holds a measurement */
    MWR_IV_UNCALIBRATED = 1u << 3,  /* threshold is memwatch's default, no machine profile */
    MWR_IV_LAT_SHARED = 1u << 4,    /* latency_ns pooled from probe_lat measurements that other
                                       recorded processes on this machine took in the window;
                                       this process did not measure (docs/probe_lat.md) */
};

typedef struct mwr_perf_attr {
    uint32_t attr_id;         /* referenced by mwr_perf_data */
    uint32_t attr_size;       /* bytes of struct perf_event_attr that follow */
    char name[32];            /* "cpu-clock", "page-faults", "mem-loads", ... */
    /* struct perf_event_attr bytes follow (as passed to perf_event_open) */
} mwr_perf_attr;

typedef struct mwr_perf_data {
    uint32_t attr_id;         /* which mwr_perf_attr decodes these records */
    uint32_t tid;             /* thread whose ring buffer they came from */
    uint64_t time_ns;         /* CLOCK_MONOTONIC when drained */
    /* whole kernel records (struct perf_event_header + body) follow, verbatim */
} mwr_perf_data;

typedef struct mwr_interval {
    uint64_t t_start_ns;      /* CLOCK_MONOTONIC */
    uint64_t t_end_ns;
    uint32_t flags;           /* enum mwr_interval_flag */
    uint32_t nthreads;        /* live application threads */
    double latency_ns;        /* loaded-latency method value */
    double threshold_ns;      /* saturation threshold in force */
    double bytes;             /* DRAM bytes in the interval (bandwidth method), if valid */
    uint64_t samples;         /* samples drained in the interval */
    uint64_t lost;            /* samples the kernel reported lost in the interval */
    char lat_method[16];      /* "probe_lat", "lmrl", ... */
    char bw_method[16];       /* "imc_cas", ... or "" */
} mwr_interval;

enum mwr_thread_event { MWR_THREAD_START = 1, MWR_THREAD_EXIT = 2, MWR_THREAD_NAME = 3 };

typedef struct mwr_thread {
    uint64_t time_ns;
    uint32_t tid;
    uint32_t event;           /* enum mwr_thread_event */
    char name[16];            /* comm, as the kernel holds it */
    /* format 1.3: */
    uint64_t fs_base;         /* the thread's FS base (x86-64 TLS), 0: not known */
} mwr_thread;

enum mwr_alloc_kind {
    MWR_A_MALLOC = 1, MWR_A_CALLOC, MWR_A_REALLOC, MWR_A_POSIX_MEMALIGN, MWR_A_ALIGNED_ALLOC,
    MWR_A_MEMALIGN, MWR_A_VALLOC, MWR_A_MMAP, MWR_A_MREMAP, MWR_A_PVALLOC
};

typedef struct mwr_alloc {
    uint64_t time_ns;
    uint64_t addr;
    uint64_t size;
    uint32_t tid;
    uint16_t kind;            /* enum mwr_alloc_kind, | MWR_A_STACK */
    uint16_t nframes;         /* return addresses that follow, innermost first */
    /* uint64_t frames[nframes] follow */
} mwr_alloc;

/* A flag in mwr_alloc.kind: an mwr_alloc_stack follows the frames (the
 * process takes DWARF stacks: META unwind). */
#define MWR_A_STACK 0x8000u
/* A flag in mwr_alloc.kind (format 1.1): nframes is 0 and an mwr_alloc_ref
 * follows instead of the frames: the call chain is the MWR_STACK record of
 * that id in the same process (its file, or its segment of the shared file
 * of short processes), which may come before or after the allocation. */
#define MWR_A_STACKREF 0x4000u

typedef struct mwr_alloc_ref {
    uint32_t stack_id;        /* mwr_stack.id */
    uint32_t pad;
} mwr_alloc_ref;

/* MWR_ALLOC_SITE (format 1.2): the totals of one allocation site (the return
 * address in the caller of the allocation function, as mwr_alloc's frames[0])
 * whose allocations were not all recorded: count and bytes of every
 * allocation of at least the threshold, how many were written as MWR_ALLOC,
 * and the sampling period in force at the last one (1 in period). A later
 * record of the same pc in the process replaces an earlier one. */
typedef struct mwr_alloc_site {
    uint64_t pc;
    uint64_t count;
    uint64_t bytes;
    uint64_t recorded;
    uint32_t period;
    uint32_t pad;
} mwr_alloc_site;

/* A call chain written once per process and named by allocation records
 * (MWR_A_STACKREF): ids count from 1 in the order the process met the
 * chains. */
typedef struct mwr_stack {
    uint32_t id;
    uint16_t nframes;         /* return addresses that follow, innermost first */
    uint16_t pad;
    /* uint64_t frames[nframes] follow */
} mwr_stack;

typedef struct mwr_alloc_stack {
    uint64_t regs_mask;       /* perf_event x86 register numbers of the values that follow */
    uint32_t stack_size;      /* bytes of stack copied from the SP register's address */
    uint32_t pad;
    /* uint64_t regs[popcount(regs_mask)] in register-number order, then
     * stack_size bytes, padded to 8 */
} mwr_alloc_stack;

/* The kernel's accounting (getrusage) when a thread ends (RUSAGE_THREAD, tid
 * that thread) and when the process image ends (tid 0: RUSAGE_SELF since the
 * image started, every thread of it, memwatch's own included; and one more
 * record for the thread that ends it). */
typedef struct mwr_cpu {
    uint64_t time_ns;
    uint32_t tid;             /* 0: the whole process image */
    uint32_t pad;
    uint64_t user_ns;         /* CPU time in user mode */
    uint64_t system_ns;       /* CPU time in the kernel on the program's behalf */
    uint64_t minflt, majflt;  /* page faults without and with I/O */
} mwr_cpu;

typedef struct mwr_free {
    uint64_t time_ns;
    uint64_t addr;
    uint64_t size;            /* bytes released (munmap length; 0 when unknown) */
    uint32_t tid;
    uint16_t kind;            /* 1 free, 2 munmap, 3 realloc-away */
    uint16_t pad;
} mwr_free;

typedef struct mwr_module {
    uint64_t time_ns;
    uint64_t base;            /* load bias (dlpi_addr) */
    uint64_t start, end;      /* lowest and highest mapped address of its PT_LOAD segments */
    uint8_t build_id_size;
    uint8_t build_id[20];
    uint8_t flags;            /* enum mwr_module_flag (format 1.3; 0 before) */
    uint8_t pad[2];
    uint32_t path_len;        /* bytes of path that follow, without terminator */
    /* char path[path_len] */
} mwr_module;

enum mwr_module_flag {
    /* a file mapped as data (mmap of a file, not a loaded object): start,
     * end and base (start - file offset) say where; no code, no symbols */
    MWR_MODULE_DATA_FILE = 1u << 0,
    /* a writable anonymous mapping (path "[heap]" or empty), as
     * /proc/PID/maps lists it: what the external sampler, which sees no
     * allocation, can name data by */
    MWR_MODULE_DATA_ANON = 1u << 1,
};

typedef struct mwr_counters {
    uint64_t time_ns;
    uint32_t group_id;        /* index of the counter group in META "group.N=" */
    uint32_t nvalues;
    uint64_t time_enabled;
    uint64_t time_running;
    /* uint64_t values[nvalues] */
} mwr_counters;

typedef struct mwr_trailer {
    uint64_t time_ns;
    uint64_t records;         /* records written, the trailer excluded */
    uint64_t bytes;           /* bytes written before the trailer */
    uint64_t lost_samples;    /* PERF_RECORD_LOST totals */
    uint64_t throttled;       /* PERF_RECORD_THROTTLE count */
    uint64_t dropped_records; /* records memwatch could not write (buffer full, I/O error) */
    uint64_t alloc_dropped;   /* allocation records dropped */
    int32_t exit_status;      /* exit code, or -signal */
    uint32_t pad;
} mwr_trailer;

/* Regions (include/memwatch/region.h, docs/regions.md). A region id stands
 * for one name within one file; the MWR_REGION_NAME record that gives it
 * precedes or follows the events (readers resolve ids once the file is read).
 * Ids with the top bit set belong to other writers in the process (the CUDA
 * library's NVTX ranges); libmemwatch.so's own are below 2^31. Id 0 of
 * libmemwatch.so is "(other regions)": the names beyond the first 4095 of a
 * process. */
enum mwr_region_kind {
    MWR_RG_BEGIN = 1,           /* the region begins */
    MWR_RG_END = 2,             /* the region ends */
    MWR_RG_END_UNMATCHED = 3,   /* an end naming no open region of the thread: nothing ends */
    MWR_RG_END_IMPLICIT = 4,    /* ends because an enclosing region ended */
    MWR_RG_BEGIN_FORK = 5,      /* open in the parent when this fork child was created */
};

typedef struct mwr_region_ev {
    uint64_t time_ns;         /* CLOCK_MONOTONIC */
    uint32_t id;              /* mwr_region_name.id */
    uint16_t kind;            /* enum mwr_region_kind */
    uint16_t depth;           /* regions open on the thread below this one (0: outermost) */
    uint32_t merged;          /* ends only: how many end/begin pairs of this region this span
                                 swallowed (a begin that came within about 1 us of the same
                                 region's end continues the span) */
    uint32_t pad;
} mwr_region_ev;              /* 24 bytes */

typedef struct mwr_region {
    uint32_t tid;             /* the thread whose regions these are */
    uint32_t nevents;         /* mwr_region_ev that follow, in the thread's order */
} mwr_region;

/* The events of MWR_REGION packed (what libmemwatch.so writes: 3 to 6 bytes
 * an event instead of 24). Each event is four unsigned LEB128 varints:
 * the time since the previous event (the first: since t0_ns) in ticks,
 * zigzag-encoded (a thread's counter may step back by a little after a move
 * to another CPU); id; depth << 3 | kind; merged. An event's time is t0_ns
 * plus its ticks since t0_ns times ns_per_tick, rounded. */
typedef struct mwr_region_packed {
    uint32_t tid;             /* the thread whose regions these are */
    uint32_t nevents;         /* events that follow, in the thread's order */
    uint64_t t0_ns;           /* CLOCK_MONOTONIC of tick 0 of the deltas */
    double ns_per_tick;       /* 1.0 where the ticks are ns */
    uint32_t nbytes;          /* bytes of packed events that follow */
    uint32_t pad;
} mwr_region_packed;          /* 32 bytes */

enum mwr_region_name_flag {
    MWR_RGN_CUT = 1,          /* the name was longer than 255 bytes: its first 255 */
    MWR_RGN_CONTROL = 2,      /* control characters replaced by '?' */
    MWR_RGN_OTHER = 4,        /* the catch-all "(other regions)": too many distinct names */
};

typedef struct mwr_region_name {
    uint32_t id;
    uint16_t flags;           /* enum mwr_region_name_flag */
    uint16_t len;             /* bytes of name that follow, without terminator */
} mwr_region_name;

#define MWR_ALIGN(n) (((n) + 7u) & ~7u)

#endif
