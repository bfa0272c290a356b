/*
 * preload/jobid.h: the run id of a process that an MPI launcher or Slurm
 * started (docs/jobs.md). Every rank of one job gets the same run id, one
 * that another job does not get, so that `memwatch report DIR` reads the
 * ranks of a job as one run. Used where a run id is made: by the first
 * profiled process of a tree (preload/config.c) and by `memwatch record`
 * (cli/cmd_record.c), which runs once per rank under
 * `mpirun -np N memwatch record -- ./app`. Header only: the two share no
 * library; it calls raw system calls and no allocator, so that it is safe in
 * libmemwatch.so's constructor.
 *
 * The identity is the one of the launcher that gave the rank, in the order
 * the rank itself is taken (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK,
 * SLURM_PROCID); a process without a rank variable has no job identity. The
 * run id starts with the launcher's name, which says where it came from:
 *
 *   ompi-<OMPI_MCA_ess_base_jobid | OMPI_MCA_orte_jobid | PMIX_NAMESPACE>
 *        [-<OMPI_MCA_orte_precondition_transports>]  (Open MPI's per-job
 *        random key, where it sets one: a job id alone comes back when a
 *        later mpirun has the same pid)
 *   pmix-<PMIX_NAMESPACE>
 *   pmi-<PMI_JOBID>                  (Slurm's PMI2, Cray PMI)
 *   hydra-<control host_port>-<pgid> (MPICH's Hydra exports no job identity:
 *        the --control-port of the hydra_pmi_proxy above the process, the
 *        same on every host of the job, the port of mpiexec's own socket)
 *   slurm-<SLURM_JOB_ID>.<SLURM_STEP_ID>
 *
 * Characters other than letters, digits, '.', '_', '-' become '_'; an id
 * longer than 63 characters keeps its first 46 and ends with a hash of the
 * whole, so two long identities stay apart.
 */
#ifndef MW_PRELOAD_JOBID_H
#define MW_PRELOAD_JOBID_H

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MW_JOBID_MAX 63

static inline int mw_jobid_ok(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

/* Appends s to out (length *n, no bound but the scratch size). */
static inline void mw_jobid_cat(char *out, size_t cap, size_t *n, const char *s)
{
    while (*s && *n + 1 < cap)
        out[(*n)++] = *s++;
    out[*n] = 0;
}

/* out (cap > MW_JOBID_MAX) = prefix-a[-b], sanitised and bounded. */
static inline void mw_jobid_make(char *out, size_t cap, const char *prefix, const char *a,
                                 const char *b)
{
    char full[512];
    size_t n = 0;
    full[0] = 0;
    mw_jobid_cat(full, sizeof full, &n, prefix);
    mw_jobid_cat(full, sizeof full, &n, "-");
    mw_jobid_cat(full, sizeof full, &n, a);
    if (b && *b) {
        mw_jobid_cat(full, sizeof full, &n, "-");
        mw_jobid_cat(full, sizeof full, &n, b);
    }
    for (size_t i = 0; i < n; i++)
        if (!mw_jobid_ok(full[i]))
            full[i] = '_';
    if (n > MW_JOBID_MAX) {
        uint64_t h = 1469598103934665603ull; /* FNV-1a of the whole identity */
        for (size_t i = 0; i < n; i++)
            h = (h ^ (unsigned char)full[i]) * 1099511628211ull;
        static const char hex[] = "0123456789abcdef";
        n = 46;
        full[n++] = '-';
        for (int k = 15; k >= 0; k--)
            full[n++] = hex[(h >> (4 * k)) & 15];
        full[n] = 0;
    }
    size_t l = n < cap - 1 ? n : cap - 1;
    memcpy(out, full, l);
    out[l] = 0;
}

static inline const char *mw_jobid_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* The contents of /proc/PID/FILE into buf (NUL-terminated); its length or -1. */
static inline long mw_jobid_proc(long pid, const char *file, char *buf, size_t cap)
{
    char path[64], num[24];
    size_t n = 0, k = 0;
    mw_jobid_cat(path, sizeof path, &n, "/proc/");
    do
        num[k++] = (char)('0' + pid % 10);
    while ((pid /= 10) && k < sizeof num);
    while (k)
        path[n++] = num[--k];
    path[n++] = '/';
    path[n] = 0;
    mw_jobid_cat(path, sizeof path, &n, file);
    long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    long got = 0, r;
    while (got < (long)cap - 1 && (r = syscall(SYS_read, fd, buf + got, cap - 1 - got)) > 0)
        got += r;
    syscall(SYS_close, fd);
    buf[got] = 0;
    return got;
}

/* MPICH's Hydra: the "--control-port HOST:PORT" and "--pgid N" of the
 * hydra_pmi_proxy among the process's ancestors (its parent, or a few
 * levels up where a wrapper script runs in between). */
static inline int mw_jobid_hydra(char *out, size_t cap)
{
    long pid = (long)getppid();
    for (int depth = 0; depth < 8 && pid > 1; depth++) {
        char cmd[4096];
        long n = mw_jobid_proc(pid, "cmdline", cmd, sizeof cmd);
        if (n <= 0)
            return 0;
        const char *base = strrchr(cmd, '/');
        base = base ? base + 1 : cmd;
        if (!strncmp(base, "hydra_pmi_proxy", 15)) {
            const char *port = NULL, *pgid = "0";
            for (long i = 0; i < n;) {
                const char *a = cmd + i;
                size_t l = strlen(a);
                const char *next = i + (long)l + 1 < n ? a + l + 1 : NULL;
                if (next && !strcmp(a, "--control-port"))
                    port = next;
                else if (next && !strcmp(a, "--pgid"))
                    pgid = next;
                i += (long)l + 1;
            }
            if (!port || !*port)
                return 0;
            mw_jobid_make(out, cap, "hydra", port, pgid);
            return 1;
        }
        /* the parent's parent: the field after the ')' that ends the name */
        char st[1024];
        if (mw_jobid_proc(pid, "stat", st, sizeof st) <= 0)
            return 0;
        const char *p = strrchr(st, ')');
        if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
            return 0;
        pid = strtol(p + 4, NULL, 10);
    }
    return 0;
}

/* The run id of the job this process is a rank of: 1 and out (cap bytes, at
 * least MW_JOBID_MAX + 1) when the environment names one, else 0. */
static inline int mw_job_run_id(char *out, size_t cap)
{
    const char *v, *w;
    if (mw_jobid_env("OMPI_COMM_WORLD_RANK")) {
        const char *key = mw_jobid_env("OMPI_MCA_orte_precondition_transports");
        if (!key)
            key = mw_jobid_env("OMPI_MCA_opal_precondition_transports");
        if ((v = mw_jobid_env("OMPI_MCA_ess_base_jobid")) || (v = mw_jobid_env("OMPI_MCA_orte_jobid")) ||
            (v = mw_jobid_env("PMIX_NAMESPACE"))) {
            mw_jobid_make(out, cap, "ompi", v, key);
            return 1;
        }
    }
    if (mw_jobid_env("PMIX_RANK") && (v = mw_jobid_env("PMIX_NAMESPACE"))) {
        mw_jobid_make(out, cap, "pmix", v, NULL);
        return 1;
    }
    if (mw_jobid_env("PMI_RANK")) {
        if ((v = mw_jobid_env("PMI_JOBID"))) {
            mw_jobid_make(out, cap, "pmi", v, NULL);
            return 1;
        }
        if (mw_jobid_hydra(out, cap))
            return 1;
    }
    /* a Slurm step's task; not a batch script (no step id there), whose
     * every `memwatch record` is a run of its own */
    if (mw_jobid_env("SLURM_PROCID") &&
        ((v = mw_jobid_env("SLURM_JOB_ID")) || (v = mw_jobid_env("SLURM_JOBID"))) &&
        ((w = mw_jobid_env("SLURM_STEP_ID")) || (w = mw_jobid_env("SLURM_STEPID")))) {
        char js[256];
        size_t n = 0;
        js[0] = 0;
        mw_jobid_cat(js, sizeof js, &n, v);
        mw_jobid_cat(js, sizeof js, &n, ".");
        mw_jobid_cat(js, sizeof js, &n, w);
        mw_jobid_make(out, cap, "slurm", js, NULL);
        return 1;
    }
    return 0;
}

#endif
