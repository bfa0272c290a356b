/*
 * The load file of memwatch record (memwatch-<host>-<run_id>-load-<pid>.mwl):
 * who else used the machine's CPUs while the recorded program ran. Written by
 * memwatch record's sampler (cli/neighbours.c), read by memwatch report
 * (report/load.c); described for users in docs/raw-format.md ("The load
 * file") and docs/saturation.md ("Whose load is it").
 *
 * The file is framed like a raw file (mwr.h: file header, records, META
 * first) and holds META records and one MWR_LOAD record per slot (every
 * 250 ms, longer where a scan would cost more than 1 % of one CPU): the
 * slot's times, the CPUs (x 1000) busy on the machine and used by the
 * recorded tree, by other processes of the same run, by memwatch record
 * itself, the tree's page faults and its time waiting for a CPU, and the
 * busiest processes outside (mwr_load_proc). Compatibility follows mwr.h: fields are only appended;
 * readers use the record size. META load_version says which payload this
 * is (1: this header).
 */
#ifndef MEMWATCH_MWR_LOAD_H
#define MEMWATCH_MWR_LOAD_H

#include <stdint.h>

#define MWR_LOAD_VERSION 1
#define MWR_LOAD_TOP 3 /* mwr_load_proc entries per slot at most */

/* mwr_load_proc.flags */
enum mwr_load_flag {
    MWR_LOAD_RECORDED = 1u << 0, /* libmemwatch.so in its LD_PRELOAD: recorded by memwatch
                                    (in another run: this run's processes are not listed) */
};

/* One slot. CPUs are x 1000 (1000: one CPU busy over the whole slot). The
 * MWR_LOAD payload is this, then ntop entries of top_size bytes from
 * top_offset on: a newer writer that appends fields to either structure
 * says where its entries are, and readers use only what they know. */
typedef struct mwr_load {
    uint64_t t_start_ns; /* CLOCK_MONOTONIC: the slot */
    uint64_t t_end_ns;
    uint32_t busy_mcpu;      /* the machine (/proc/stat: user, nice, system, irq, softirq) */
    uint32_t steal_mcpu;     /* time the hypervisor gave the machine's vCPUs to others */
    uint32_t tree_mcpu;      /* the recorded program and its descendants */
    uint32_t run_mcpu;       /* processes outside the tree whose environment names this run
                                (MEMWATCH_RUN_ID): another memwatch record of the same job */
    uint32_t own_mcpu;       /* memwatch record itself (its sampler) */
    uint32_t tree_faults;    /* page faults of the tree in the slot (minor + major) */
    uint32_t nprocs;         /* processes seen */
    uint32_t ntop;           /* mwr_load_proc entries that follow (<= MWR_LOAD_TOP) */
    uint32_t tree_wait_mcpu; /* the tree's threads' time runnable but waiting for a CPU
                                (/proc/PID/task/TID/schedstat run_delay), as CPUs x 1000 */
    uint16_t top_offset;     /* payload bytes before the first mwr_load_proc (56 here) */
    uint16_t top_size;       /* bytes of each mwr_load_proc (32 here) */
} mwr_load;                  /* 56 bytes */

/* A busy process outside the tree and the run, busiest first. */
typedef struct mwr_load_proc {
    uint32_t pid;
    uint32_t ppid;
    uint32_t mcpu;  /* its CPUs x 1000 over the slot */
    uint32_t flags; /* enum mwr_load_flag */
    char comm[16];  /* the kernel's name of the process, NUL-padded */
} mwr_load_proc;    /* 32 bytes */

#endif
