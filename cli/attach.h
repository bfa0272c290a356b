/*
 * cli/attach.h: memwatch record's external sampler (cli/attach.c): a
 * program is sampled from memwatch's own process through
 * perf_event_open(pid = each of its threads), without libmemwatch.so in it.
 * Used by `memwatch record -p PID[,PID...]` (running processes), `record
 * --all` (the whole machine: one event per CPU where the caller may open
 * CPU-wide events, else every process of the caller, each attached as -p
 * does) and `record -- ./static_program` (no dynamic loader: LD_PRELOAD
 * cannot reach it). docs/attach.md.
 *
 * It writes the raw format libmemwatch.so writes (one file per process,
 * META mode=attach), so report, HTML and exports read it unchanged.
 * Threading: one thread (the caller's); the probe and the intervals run on
 * it. Not reentrant (the stop flag is process-wide).
 */
#ifndef MW_CLI_ATTACH_H
#define MW_CLI_ATTACH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

typedef struct mw_attach_opts {
    const char *dir;      /* run directory (exists) */
    const char *run;      /* run id (META run_id) */
    uint64_t duration_ns; /* detach after this long (0: when the targets end or a signal) */
    int quiet;            /* no progress lines on stderr */
    int group_readable;   /* raw files 0640 instead of 0600 */
    int all;              /* --all: the whole machine per CPU where CPU-wide events are
                           * allowed (the pids are then not used); else the pids per
                           * process, a pid that cannot be attached skipped (said) */
} mw_attach_opts;

/* Attach to the n processes pids (all of the caller's user, or where
 * CAP_PERFMON allows), sample them until all end, duration_ns passes or
 * SIGINT/SIGTERM/SIGHUP comes, then detach (the targets run on) and end
 * every file with its trailer. Checks every pid before attaching to any;
 * a pid that cannot be attached (no such process, another user's, ended
 * during attach, recorded already) is said on stderr and makes it return 1
 * without having touched any target. Returns 0 when it attached.
 * With o->all (record --all): where the caller may open CPU-wide events
 * (CAP_PERFMON, CAP_SYS_ADMIN, or kernel.perf_event_paranoid <= 0), one
 * cpu-clock event per online CPU samples every process (the caller's own
 * only, without one of the capabilities), each process in a file of its
 * own from its first record, until duration_ns passes or a signal comes;
 * pids is not used. Else one line on stderr says what is missing and the
 * pids are attached as above, one that cannot be skipped. */
int mw_attach_pids(const pid_t *pids, size_t n, const mw_attach_opts *o);

/* The pids of every process with an executable (no kernel threads, no
 * zombies) that the caller owns (real uid; any_user: of every user),
 * memwatch itself and its parent excluded, up to cap: `record --all`.
 * Returns how many. */
size_t mw_attach_list_pids(pid_t *pids, size_t cap, int any_user);

/* Start argv (exe: its path) stopped before exec, open its sampler with
 * enable_on_exec, let it exec and sample it (and the threads it starts) until
 * it ends. started(pid) is called once the child exists (record forwards
 * its signals to it); sigmask is the mask the program starts with; own_group
 * puts it in a process group of its own. Returns 0 with the wait status and
 * resource use in *wstatus and *ru; -1 when the program could not be
 * started (said on stderr, *wstatus holds 126 << 8); 1 when the sampler
 * could not be opened and the program ran unprofiled (said). */
int mw_attach_spawn(const char *exe, char *const argv[], const mw_attach_opts *o,
                    void (*started)(pid_t pid), const void *sigmask, int own_group,
                    int *wstatus, struct rusage *ru);

#endif
