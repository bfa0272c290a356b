/*
 * preload/real.h: the next definitions of what libmemwatch.so interposes
 * (dlsym(RTLD_NEXT)), and the per-thread flags that keep memwatch's own code
 * out of its hooks. Owner: real.c.
 */
#ifndef MW_PRELOAD_REAL_H
#define MW_PRELOAD_REAL_H

#include "base.h"

#include <signal.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

struct sigaction;

/* Owner: real.c. Written by mwp_resolve and mwp_resolve_one, on any thread
 * (each stores the same pointer: a race between two is harmless); read by
 * every hook. A NULL entry is not resolved yet (MWP_NEED). */
struct mwp_real {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    size_t (*usable)(void *);
    void *(*mmap)(void *, size_t, int, int, int, off_t);
    int (*munmap)(void *, size_t);
    void *(*mremap)(void *, size_t, size_t, int, ...);
    int (*pthread_create)(void *, const void *, void *(*)(void *), void *);
    int (*pthread_setname_np)(unsigned long, const char *);
    int (*sigaction)(int, const struct sigaction *, struct sigaction *);
    int (*execve)(const char *, char *const[], char *const[]);
    int (*execvpe)(const char *, char *const[], char *const[]);
    int (*execveat)(int, const char *, char *const[], char *const[], int);
    int (*fexecve)(int, char *const[], char *const[]);
    int (*posix_spawn)(pid_t *, const char *, const void *, const void *, char *const[],
                       char *const[]);
    int (*posix_spawnp)(pid_t *, const char *, const void *, const void *, char *const[],
                        char *const[]);
    void (*exit)(int) __attribute__((noreturn));
    void (*_exit)(int) __attribute__((noreturn));
    int (*close_range)(unsigned, unsigned, int);
    int (*dup2)(int, int);
    int (*dup3)(int, int, int);
    int (*dup)(int);
    int (*fcntl)(int, int, ...);
    int (*fcntl64)(int, int, ...);
    pid_t (*wait4)(pid_t, int *, int, struct rusage *);
    int (*waitid)(int, unsigned, siginfo_t *, int);
};
extern struct mwp_real mwp_real;
/* Resolve the whole table; idempotent. Allocation during dlsym is served by
 * a static arena (alloc.c). [not AS-safe] (dlsym): the lazy start's begin. */
void mwp_resolve(void);
/* Resolve one entry (slot: &mwp_real.x) by its symbol name. [not AS-safe]
 * (dlsym): a hook's first call. */
void mwp_resolve_one(void **slot, const char *name);
/* A hook's own next definition: the whole table is resolved when a process
 * begins recording (lazy.h); a process with MEMWATCH_ENABLE=0 (or not
 * recorded for another reason) resolves only what it calls. */
#define MWP_NEED(field, name)                                                                   \
    do {                                                                                        \
        if (__builtin_expect(!mwp_real.field, 0))                                               \
            mwp_resolve_one((void **)&mwp_real.field, name);                                    \
    } while (0)

/* Per thread, each written only by its own thread. mwp_in_hook > 0:
 * memwatch code is running on this thread (every part raises it around its
 * work; hooks then pass calls straight on, and the lazy start and inline
 * ticks do nothing). mwp_resolving: dlsym in progress on this thread (real.c;
 * alloc.c serves its allocations from a static arena). */
extern MWP_TLS int mwp_in_hook;
extern MWP_TLS int mwp_resolving;

#endif
