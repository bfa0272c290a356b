/*
 * counters/dirs.h: the folders above a file, made before it is written
 * (dirs.c): the prefetcher's saved state (msr.c) and the machine profile
 * (calibrate/profile_write.c). Internal to memwatch.
 */
#ifndef MW_COUNTERS_DIRS_H
#define MW_COUNTERS_DIRS_H

/* Makes each missing folder of path's directory, the owner's only (mode
 * 0700, as the files memwatch keeps there); 0, or -errno (-ENAMETOOLONG
 * for a path longer than PATH_MAX). */
int mw_mkdir_parents(const char *path);

#endif
