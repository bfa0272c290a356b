/*
 * report/sources.c: which raw files a report database was built from
 * (mw_report_sources_write, mw_report_sources_match), so that a report of
 * the same files with the same options reads the database it already has
 * instead of ingesting again.
 *
 * A database is read as it is only when nothing could make it differ from
 * a new ingest, and safety wins when in doubt: every file by name, size,
 * modification time and last 64 bytes; the options, memwatch's own code
 * (the object holding this file: its size and modification time) and the
 * machine profile's size and modification time (mw_report_sources_key); and
 * the database itself passes SQLite's quick_check (a damaged database is
 * built again, never served).
 *
 * Owns: the `sources` table (file, size, mtime_ns, the file's last 64
 * bytes: the trailer of a process that ended) and the `source_options` row.
 * May call: SQLite, libc. Prints nothing.
 * Threading: reentrant.
 */
#include <memwatch/report.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAIL 64

/* What a raw file is noted by: its size, modification time and last TAIL
 * bytes (fewer when it is shorter). */
typedef struct file_stamp {
    int64_t size, mtime;
    unsigned char tail[TAIL];
    int tl;
} file_stamp;

static int file_tail(const char *path, file_stamp *fs)
{
    memset(fs, 0, sizeof *fs);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0) {
        rc = -errno;
    } else {
        fs->size = st.st_size;
        fs->mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        off_t at = st.st_size > TAIL ? st.st_size - TAIL : 0;
        ssize_t n = pread(fd, fs->tail, (size_t)(st.st_size - at), at);
        if (n < 0)
            rc = -errno;
        else
            fs->tl = (int)n;
    }
    close(fd);
    return rc;
}

/* Finalizes *s and prepares sql in its place; 0, or -1 (*s NULL) where it
 * cannot be prepared. */
static int restmt(sqlite3 *db, sqlite3_stmt **s, const char *sql)
{
    sqlite3_finalize(*s);
    *s = NULL;
    return sqlite3_prepare_v2(db, sql, -1, s, NULL) == SQLITE_OK ? 0 : -1;
}

/* size:mtime_ns of a file, or "-" when it cannot be read. */
static void stat_key(const char *path, char *buf, size_t n)
{
    struct stat st;
    if (path && stat(path, &st) == 0)
        snprintf(buf, n, "%lld:%lld", (long long)st.st_size,
                 (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec);
    else
        snprintf(buf, n, "-");
}

/* The machine profiles the recordings name (META profile_path, or the
 * older "PATH (created ...)" prose of "profile"): the ingest read their
 * thresholds, so each one's size and modification time is noted and must
 * be the same for the database to be read as it is. */
static int profiles_write(sqlite3 *db)
{
    sqlite3_stmt *q = NULL, *ins = NULL;
    int rc = -EIO;
    if (sqlite3_exec(db, "CREATE TABLE IF NOT EXISTS source_profiles(path TEXT, stamp TEXT);"
                         " DELETE FROM source_profiles;",
                     NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "SELECT DISTINCT value FROM meta WHERE key IN ('profile_path',"
                           " 'profile')",
                           -1, &q, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO source_profiles(path, stamp) VALUES(?,?)", -1, &ins,
                           NULL) != SQLITE_OK)
        goto out;
    while (sqlite3_step(q) == SQLITE_ROW) {
        char path[4096], stamp[64];
        const char *v = (const char *)sqlite3_column_text(q, 0);
        snprintf(path, sizeof path, "%s", v ? v : "");
        char *cut = strstr(path, " (created");
        if (cut)
            *cut = 0;
        if (path[0] != '/')
            continue;
        stat_key(path, stamp, sizeof stamp);
        sqlite3_bind_text(ins, 1, path, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ins, 2, stamp, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(ins) != SQLITE_DONE)
            goto out;
        sqlite3_reset(ins);
    }
    rc = 0;
out:
    sqlite3_finalize(q);
    sqlite3_finalize(ins);
    return rc;
}

/* 1 when every noted profile has the size and modification time it had. */
static int profiles_match(sqlite3 *db)
{
    sqlite3_stmt *q = NULL;
    int match = 0;
    if (sqlite3_prepare_v2(db, "SELECT path, stamp FROM source_profiles", -1, &q, NULL) !=
        SQLITE_OK)
        return 0;
    int r;
    while ((r = sqlite3_step(q)) == SQLITE_ROW) {
        char stamp[64];
        const char *path = (const char *)sqlite3_column_text(q, 0);
        const char *was = (const char *)sqlite3_column_text(q, 1);
        stat_key(path, stamp, sizeof stamp);
        if (!was || strcmp(was, stamp))
            goto out;
    }
    match = r == SQLITE_DONE;
out:
    sqlite3_finalize(q);
    return match;
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
                     " mtime_ns INTEGER, tail BLOB); CREATE TABLE IF NOT EXISTS source_options(options TEXT);"
                     " DELETE FROM sources; DELETE FROM source_options;",
                     NULL, NULL, NULL) != SQLITE_OK)
        goto out;
    if (restmt(db, &s, "INSERT INTO source_options(options) VALUES(?)"))
        goto out;
    sqlite3_bind_text(s, 1, options ? options : "", -1, SQLITE_STATIC);
    if (sqlite3_step(s) != SQLITE_DONE ||
        restmt(db, &s, "INSERT INTO sources(file, size, mtime_ns, tail) VALUES(?,?,?,?)"))
        goto out;
    for (size_t i = 0; i < n; i++) {
        file_stamp fs;
        if (file_tail(files[i], &fs))
            continue; /* gone: the next report ingests again */
        sqlite3_bind_text(s, 1, files[i], -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, fs.size);
        sqlite3_bind_int64(s, 3, fs.mtime);
        sqlite3_bind_blob(s, 4, fs.tail, fs.tl, SQLITE_STATIC);
        if (sqlite3_step(s) != SQLITE_DONE)
            goto out;
        sqlite3_reset(s);
    }
    if (profiles_write(db))
        goto out;
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
    if (restmt(db, &s, "SELECT options FROM source_options") || sqlite3_step(s) != SQLITE_ROW)
        goto out;
    const char *o = (const char *)sqlite3_column_text(s, 0);
    if (strcmp(o ? o : "", options ? options : "") ||
        restmt(db, &s, "SELECT COUNT(*) FROM sources") || sqlite3_step(s) != SQLITE_ROW ||
        (size_t)sqlite3_column_int64(s, 0) != n ||
        restmt(db, &s, "SELECT size, mtime_ns, tail FROM sources WHERE file = ?"))
        goto out;
    for (size_t i = 0; i < n; i++) {
        file_stamp fs;
        if (file_tail(files[i], &fs))
            goto out;
        sqlite3_bind_text(s, 1, files[i], -1, SQLITE_STATIC);
        if (sqlite3_step(s) != SQLITE_ROW || sqlite3_column_int64(s, 0) != fs.size ||
            sqlite3_column_int64(s, 1) != fs.mtime || sqlite3_column_bytes(s, 2) != fs.tl ||
            (fs.tl && memcmp(sqlite3_column_blob(s, 2), fs.tail, (size_t)fs.tl)))
            goto out;
        sqlite3_reset(s);
    }
    if (!profiles_match(db))
        goto out;
    /* a damaged database is built again, never served */
    if (restmt(db, &s, "PRAGMA quick_check") || sqlite3_step(s) != SQLITE_ROW ||
        strcmp((const char *)sqlite3_column_text(s, 0) ? (const char *)sqlite3_column_text(s, 0)
                                                       : "",
               "ok") ||
        sqlite3_step(s) != SQLITE_DONE)
        goto out;
    match = 1;
out:
    sqlite3_finalize(s);
    sqlite3_close(db);
    return match;
}

int mw_report_sources_key(char *buf, size_t n, const mw_report_opts *o, const char *profile)
{
    char code[64], prof[64];
    Dl_info di;
    stat_key(dladdr((void *)mw_report_sources_key, &di) && di.dli_fname ? di.dli_fname : NULL,
             code, sizeof code);
    stat_key(profile, prof, sizeof prof);
    int k = snprintf(buf, n,
                     "memwatch %s (code %s); threshold %g; profile %s (%s); symbols %d; debug %s;"
                     " inputs %s%s",
                     MW_VERSION, code, o->threshold, profile ? profile : "(none)", prof,
                     !o->no_symbols, o->debug_dirs ? o->debug_dirs : "(default)",
                     o->inputs ? o->inputs : "(first file)",
                     o->leaf_only ? "; stacks: leaves only" : "");
    return k < 0 || (size_t)k >= n ? -ENAMETOOLONG : 0;
}
