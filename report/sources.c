/*
 * report/sources.c: which raw files a report database was built from
 * (mw_report_sources_write, mw_report_sources_match), so that a report of
 * the same files with the same options reads the database it already has
 * instead of ingesting again.
 *
 * Owns: the `sources` table (file, size, the file's last 64 bytes: the
 * trailer of a process that ended) and the `source_options` row.
 * May call: SQLite, libc. Prints nothing.
 * Threading: reentrant.
 */
#include <memwatch/report.h>

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAIL 64

/* Size and last TAIL bytes of a file (fewer when it is shorter). */
static int file_tail(const char *path, int64_t *size, unsigned char *tail, int *tlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0) {
        rc = -errno;
    } else {
        *size = st.st_size;
        off_t at = st.st_size > TAIL ? st.st_size - TAIL : 0;
        ssize_t n = pread(fd, tail, (size_t)(st.st_size - at), at);
        if (n < 0)
            rc = -errno;
        else
            *tlen = (int)n;
    }
    close(fd);
    return rc;
}

int mw_report_sources_write(const char *db_path, const char *const *files, size_t n,
                            const char *options)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return -EIO;
    }
    int rc = -EIO;
    sqlite3_stmt *s = NULL;
    if (sqlite3_exec(db,
                     "BEGIN; CREATE TABLE IF NOT EXISTS sources(file TEXT, size INTEGER,"
                     " tail BLOB); CREATE TABLE IF NOT EXISTS source_options(options TEXT);"
                     " DELETE FROM sources; DELETE FROM source_options;",
                     NULL, NULL, NULL) != SQLITE_OK)
        goto out;
    if (sqlite3_prepare_v2(db, "INSERT INTO source_options(options) VALUES(?)", -1, &s, NULL) !=
        SQLITE_OK)
        goto out;
    sqlite3_bind_text(s, 1, options ? options : "", -1, SQLITE_STATIC);
    if (sqlite3_step(s) != SQLITE_DONE)
        goto out;
    sqlite3_finalize(s);
    if (sqlite3_prepare_v2(db, "INSERT INTO sources(file, size, tail) VALUES(?,?,?)", -1, &s,
                           NULL) != SQLITE_OK)
        goto out;
    for (size_t i = 0; i < n; i++) {
        int64_t size = 0;
        unsigned char tail[TAIL];
        int tl = 0;
        if (file_tail(files[i], &size, tail, &tl))
            continue; /* gone: the next report ingests again */
        sqlite3_bind_text(s, 1, files[i], -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, size);
        sqlite3_bind_blob(s, 3, tail, tl, SQLITE_STATIC);
        if (sqlite3_step(s) != SQLITE_DONE)
            goto out;
        sqlite3_reset(s);
    }
    rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
out:
    sqlite3_finalize(s);
    sqlite3_close(db);
    return rc;
}

int mw_report_sources_match(const char *db_path, const char *const *files, size_t n,
                            const char *options)
{
    if (access(db_path, R_OK) != 0)
        return 0;
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return 0;
    }
    int match = 0;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, "SELECT options FROM source_options", -1, &s, NULL) != SQLITE_OK ||
        sqlite3_step(s) != SQLITE_ROW)
        goto out;
    const char *o = (const char *)sqlite3_column_text(s, 0);
    if (strcmp(o ? o : "", options ? options : ""))
        goto out;
    sqlite3_finalize(s);
    s = NULL;
    if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM sources", -1, &s, NULL) != SQLITE_OK ||
        sqlite3_step(s) != SQLITE_ROW || (size_t)sqlite3_column_int64(s, 0) != n)
        goto out;
    sqlite3_finalize(s);
    s = NULL;
    if (sqlite3_prepare_v2(db, "SELECT size, tail FROM sources WHERE file = ?", -1, &s, NULL) !=
        SQLITE_OK)
        goto out;
    for (size_t i = 0; i < n; i++) {
        int64_t size = 0;
        unsigned char tail[TAIL];
        int tl = 0;
        if (file_tail(files[i], &size, tail, &tl))
            goto out;
        sqlite3_bind_text(s, 1, files[i], -1, SQLITE_STATIC);
        if (sqlite3_step(s) != SQLITE_ROW || sqlite3_column_int64(s, 0) != size ||
            sqlite3_column_bytes(s, 1) != tl || memcmp(sqlite3_column_blob(s, 1), tail, (size_t)tl))
            goto out;
        sqlite3_reset(s);
    }
    match = 1;
out:
    sqlite3_finalize(s);
    sqlite3_close(db);
    return match;
}
