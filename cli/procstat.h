/*
 * cli/procstat.h: one reader of /proc/PID/stat for memwatch's commands (the
 * attach sampler, the neighbour sampler of record, the monitor's process
 * table), and the owner and cgroup of a process. proc_pid_stat(5): "pid (comm) state ppid ...", where comm may hold
 * spaces and parentheses: the fields are counted from the last ')'.
 * Called from ordinary threads, never from a signal handler.
 */
#ifndef MW_CLI_PROCSTAT_H
#define MW_CLI_PROCSTAT_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int32_t pid, ppid;
    char comm[16];   /* at most 15 bytes, as the kernel keeps it */
    char state;      /* R, S, D, Z, X, ... */
    uint64_t minflt, cminflt, majflt, cmajflt;
    uint64_t utime, stime, cutime, cstime; /* clock ticks */
    uint64_t start;  /* clock ticks after boot */
} mw_procstat;

/* Parses the text of one /proc/PID/stat (NUL-terminated) into *o. 0, or -1
 * when it is not such a line (no name in parentheses, fewer than 22 fields). */
int mw_procstat_parse(const char *text, mw_procstat *o);

/* Reads and parses path ("/proc/123/stat", or "123/stat" relative to dirfd;
 * AT_FDCWD for an absolute one). 0, or -1 when the process is gone or the
 * file is not such a line. */
int mw_procstat_read(int dirfd, const char *path, mw_procstat *o);

/* The cgroup path of /proc/PID/cgroup's text (NUL-terminated): the unified
 * hierarchy's ("0::/user.slice/..."), else the memory controller's, else
 * another's, a path below the root before the root itself (a hybrid
 * hierarchy leaves the unified one at "/"). 0, or -1 when it names none. */
int mw_procstat_cgroup(const char *text, char *out, size_t n);

/* The name of user uid ("root"), or "uid N" where the user database has
 * none. */
void mw_procstat_user(unsigned uid, char *out, size_t n);

#endif
