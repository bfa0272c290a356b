/*
 * preload/real.c: the table of the next definitions of every interposed
 * function (dlsym(RTLD_NEXT)) and the per-thread hook flags (real.h).
 * Threading: mwp_resolve is idempotent and may race harmlessly (every thread
 * stores the same pointers); the flags are per thread.
 */
#include "real.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>

MWP_HOT_DATA struct mwp_real mwp_real;
MWP_TLS int mwp_in_hook;
MWP_TLS int mwp_resolving;

#define RESOLVE(field, name)                                                                    \
    do {                                                                                        \
        if (!mwp_real.field)                                                                    \
            *(void **)&mwp_real.field = dlsym(RTLD_NEXT, name);                                 \
    } while (0)

/* One function's next definition (the allocation hooks resolve only what
 * they call: a process that never records does not pay for the whole table). */
MWP_HOT void mwp_resolve_one(void **slot, const char *name)
{
    if (*slot)
        return;
    int saved = errno;
    mwp_resolving++;
    *slot = dlsym(RTLD_NEXT, name);
    mwp_resolving--;
    errno = saved;
}

static _Atomic int resolved_all;

void mwp_resolve(void)
{
    if (atomic_load_explicit(&resolved_all, memory_order_acquire))
        return;
    int saved = errno;
    mwp_resolving++;
    RESOLVE(malloc, "malloc");
    RESOLVE(calloc, "calloc");
    RESOLVE(realloc, "realloc");
    RESOLVE(free, "free");
    RESOLVE(posix_memalign, "posix_memalign");
    RESOLVE(aligned_alloc, "aligned_alloc");
    RESOLVE(memalign, "memalign");
    RESOLVE(valloc, "valloc");
    RESOLVE(pvalloc, "pvalloc");
    RESOLVE(usable, "malloc_usable_size");
    RESOLVE(mmap, "mmap");
    RESOLVE(munmap, "munmap");
    RESOLVE(mremap, "mremap");
    RESOLVE(pthread_create, "pthread_create");
    RESOLVE(pthread_setname_np, "pthread_setname_np");
    RESOLVE(sigaction, "sigaction");
    RESOLVE(execvpe, "execvpe");
    RESOLVE(execveat, "execveat");
    RESOLVE(fexecve, "fexecve");
    RESOLVE(posix_spawn, "posix_spawn");
    RESOLVE(posix_spawnp, "posix_spawnp");
    RESOLVE(exit, "exit");
    RESOLVE(_exit, "_exit");
    RESOLVE(close_range, "close_range");
    RESOLVE(dup2, "dup2");
    RESOLVE(wait4, "wait4");
    RESOLVE(waitid, "waitid");
    RESOLVE(dup3, "dup3");
    RESOLVE(dup, "dup");
    RESOLVE(fcntl, "fcntl");
    RESOLVE(fcntl64, "fcntl64");
    RESOLVE(execve, "execve");
    atomic_store_explicit(&resolved_all, 1, memory_order_release);
    mwp_resolving--;
    errno = saved;
}
