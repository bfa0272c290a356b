/*
 * memwatch regions: mark the phases of a program so that `memwatch report`
 * answers per phase (time, share bandwidth-bound, top lines, top objects,
 * GPU kernels). docs/regions.md describes the API, what is recorded and how
 * the report shows it.
 *
 *     #include <memwatch/region.h>
 *     mw_region_begin("solve");
 *     ...
 *     mw_region_end("solve");
 *
 * Regions nest and are per thread: each thread has its own stack of open
 * regions. A begin/end pair costs a few tens of nanoseconds and no system
 * call (the events go to a per-thread buffer that memwatch's interval thread
 * writes out).
 *
 * Nothing to link: the two functions are inline wrappers around weak
 * references to libmemwatch.so's memwatch_region_begin/end. A program built
 * with this header runs unchanged without libmemwatch.so (the references are
 * null and the wrappers do nothing); under `memwatch record` or
 * LD_PRELOAD=libmemwatch.so the dynamic linker binds them. Position-
 * independent executables (the default of current compilers) are needed for
 * that binding: in a program linked with -no-pie the linker resolves the weak
 * references to null at link time, and the regions are not recorded.
 *
 * Define MW_REGIONS_OFF before including this header (or on the command line)
 * to compile the calls to nothing.
 *
 * Names: any NUL-terminated string; at most 255 bytes are kept; control
 * characters are replaced by '?'. mw_region_end(name) closes the innermost
 * open region of that name (and any region opened inside it); an end without
 * an open region of that name is recorded as such and otherwise ignored.
 */
#ifndef MEMWATCH_REGION_H
#define MEMWATCH_REGION_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(MW_REGIONS_OFF)

static inline void mw_region_begin(const char *name) { (void)name; }
static inline void mw_region_end(const char *name) { (void)name; }

#else

extern void memwatch_region_begin(const char *name) __attribute__((weak));
extern void memwatch_region_end(const char *name) __attribute__((weak));

static inline void mw_region_begin(const char *name)
{
    if (memwatch_region_begin)
        memwatch_region_begin(name);
}

static inline void mw_region_end(const char *name)
{
    if (memwatch_region_end)
        memwatch_region_end(name);
}

#endif

#ifdef __cplusplus
}
#endif
#endif
