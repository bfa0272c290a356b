/*
 * preload/status.h: a write failure of the raw file named once, with what
 * was kept, for the process and (through memwatch record's status file,
 * MEMWATCH_STATUS) for the process tree. Owner: status.c.
 */
#ifndef MW_PRELOAD_STATUS_H
#define MW_PRELOAD_STATUS_H

/* 1 for the errors that end the recording (ENOSPC, EDQUOT, EIO, EROFS,
 * EFBIG). [AS-safe] */
int mwp_write_error_is_fatal(int err);
/* The errno behind a short write on fd: ENOSPC when the file system is
 * full, else EIO. [AS-safe] */
int mwp_write_short_errno(int fd);
/* Says once (per process; per tree through memwatch record's status file)
 * why the raw file cannot be written and what was kept. created: the file
 * exists (else it could not be created). [AS-safe] (system calls only: the
 * trailer of a fatal signal may fail). */
void mwp_write_failed(int err, const char *path, int created);

#endif
