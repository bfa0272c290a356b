/*
 * tests/preload/mwp_othermalloc.c: a preload library with its own malloc
 * family (forwarding to glibc's __libc_* functions), standing for a sanitizer
 * runtime or another allocator loaded ahead of libmemwatch.so. Used by the
 * preload "allocnote" case.
 */
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

__attribute__((visibility("default"))) void *malloc(size_t n)
{
    return __libc_malloc(n);
}

__attribute__((visibility("default"))) void *calloc(size_t k, size_t n)
{
    return __libc_calloc(k, n);
}

__attribute__((visibility("default"))) void *realloc(void *p, size_t n)
{
    return __libc_realloc(p, n);
}

__attribute__((visibility("default"))) void free(void *p)
{
    __libc_free(p);
}
