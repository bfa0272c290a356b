/*
 * report/db_safe.h: how a report database is replaced without ever losing
 * the one that is there (docs/report.md, "The database is never lost").
 *
 *   mw_db_swap_begin   takes the lock of the database's directory (waits
 *                      for another report writing there), removes what an
 *                      interrupted report left, and names a new file beside
 *                      the database (".NAME.tmp-PID");
 *   (the caller ingests into s.tmp)
 *   mw_db_swap_commit  gives the new file its mode and renames it over the
 *                      database: readers see the old one or the new one;
 *   mw_db_swap_abort   removes the new file, the database stays as it was;
 *   mw_db_swap_keep    the same, and gives the database the mode it would
 *                      have had (a report that reads it as it is);
 *   mw_db_swap_end     releases the lock (after the summary was read).
 *
 * mw_raw_check tells a raw file from everything else (a database, a FIFO, a
 * device, a directory, a file of another kind) without blocking.
 */
#ifndef MW_REPORT_DB_SAFE_H
#define MW_REPORT_DB_SAFE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mw_db_swap {
    char db[PATH_MAX];  /* the database as named */
    char tmp[PATH_MAX]; /* the new one, beside it */
    int lock_fd;        /* the directory, flock()ed; -1 when not held */
    int waited;         /* 1: another report held the lock first */
} mw_db_swap;

/* Returns 0, or a negative errno with why[] saying what (the database is
 * not a memwatch database, its directory cannot be written...). wait = 0:
 * fail with -EWOULDBLOCK instead of waiting for another report. on_wait, if
 * given, is called once before waiting. */
int mw_db_swap_begin(mw_db_swap *s, const char *db, int wait, void (*on_wait)(const char *db),
                     char *why, size_t whylen);
/* mode: the file's permission bits (0600 by default, 0640 group-readable). */
int mw_db_swap_commit(mw_db_swap *s, unsigned mode, char *why, size_t whylen);
void mw_db_swap_abort(mw_db_swap *s);
/* 0, or a negative errno when the database's mode cannot be set (then
 * nothing changed: the caller ingests into s.tmp as usual). */
int mw_db_swap_keep(mw_db_swap *s, unsigned mode);
void mw_db_swap_end(mw_db_swap *s);

/* 0: path is a raw file (a regular file that starts with the MEMWATCH
 * magic). Otherwise a negative code and why[] names what it is instead
 * ("a FIFO", "a SQLite database", "empty", ...). Never opens anything but a
 * regular file, so a FIFO cannot block it. */
int mw_raw_check(const char *path, char *why, size_t whylen);

/* The run a raw file belongs to: its first META record's run_id ("" for
 * files written before runs were named) and start_realtime_ns. 0, or a
 * negative code when the file cannot be read. */
int mw_raw_run(const char *path, char *id, size_t idlen, uint64_t *start_realtime_ns);

#endif
