/*
 * report/db_safe.c: a report database is written beside the old one and
 * renamed into place only when complete; one report at a time per
 * directory; raw files told from everything else (db_safe.h).
 *
 * Owns: the lock (flock on the database's directory), the new file's name
 * and its removal, the rename, the file mode; the raw-file check; which
 * existing database may be replaced (one memwatch wrote: its marker table
 * `memwatch`, or the tables of the earlier format without it) and the
 * marker itself, written into every new database before it is renamed.
 * May call: libc, SQLite (read-only on an existing database). Prints nothing.
 */
#include "db_safe.h"

#include "schema.h"

#include <memwatch/meta_keys.h>
#include <memwatch/mwr.h>
#include <memwatch/mwr_reader.h>

#include <sqlite3.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const char sqlite_magic[16] = "SQLite format 3";

/* The marker table memwatch writes into each report database: one row,
 * format = MW_DB_FORMAT and the schema version. */
#define MW_DB_FORMAT "memwatch report"

/* Tables of the earlier format (schema version 1 without the marker) that
 * every memwatch report database has had since the first version. */
static const char *const v1_core[] = {"schema", "runs",      "processes", "meta",
                                      "intervals", "samples", "modules",  "pcs"};
/* Tables memwatch writes besides those of schema.h (report/sources.c). */
static const char *const extra_tables[] = {"memwatch", "sources", "source_options",
                                           "source_profiles"};

/* 1 when name is a table of schema.h's schema (its "CREATE TABLE name(" lines). */
static int schema_has_table(const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = mw_report_schema; (p = strstr(p, "CREATE TABLE ")); p++) {
        const char *t = p + 13;
        if (!strncmp(t, name, nl) && t[nl] == '(')
            return 1;
    }
    (void)mw_report_indexes;
    return 0;
}

static int known_table(const char *name)
{
    if (!strncmp(name, "sqlite_", 7)) /* SQLite's own (sqlite_sequence, sqlite_stat1) */
        return 1;
    for (size_t i = 0; i < sizeof extra_tables / sizeof extra_tables[0]; i++)
        if (!strcmp(name, extra_tables[i]))
            return 1;
    return schema_has_table(name);
}

/* Opens an existing database so that nothing is ever written to it or
 * beside it (no journal, no lock file): read-only and immutable. */
static int open_untouched(const char *path, sqlite3 **db)
{
    char uri[3 * PATH_MAX + 64];
    size_t k = 0;
    k += (size_t)snprintf(uri, sizeof uri, "file:");
    for (const unsigned char *c = (const unsigned char *)path; *c && k + 4 < sizeof uri; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            strchr("/-_.~", *c))
            uri[k++] = (char)*c;
        else
            k += (size_t)snprintf(uri + k, sizeof uri - k, "%%%02X", *c);
    }
    if (k + 32 >= sizeof uri)
        return -ENAMETOOLONG;
    snprintf(uri + k, sizeof uri - k, "?mode=ro&immutable=1");
    *db = NULL;
    if (sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
        sqlite3_close(*db);
        *db = NULL;
        return -EIO;
    }
    return 0;
}

/* An integer from the first row of sql; -1 when there is none. */
static long long first_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *s = NULL;
    long long v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW &&
        sqlite3_column_type(s, 0) == SQLITE_INTEGER)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

/* 0 when the SQLite database at path is one memwatch wrote: its marker
 * table names it (a newer memwatch's is taken as it is), or, written before
 * the marker, its schema table says version 1 and the tables of that
 * version are there. A table memwatch never writes (someone's own, added to
 * a report database) makes it someone else's too. Else -EEXIST and why[]. */
static int memwatch_wrote(const char *path, char *why, size_t whylen)
{
    sqlite3 *db;
    if (open_untouched(path, &db)) {
        snprintf(why, whylen, "a SQLite database memwatch cannot open; not replaced (name "
                              "another with --db)");
        return -EEXIST;
    }
    int rc = -EEXIST;
    sqlite3_stmt *s = NULL;
    int ntab = 0, core = 0, marker = 0;
    char foreign[128] = "";
    if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &s,
                           NULL) != SQLITE_OK) {
        snprintf(why, whylen, "a SQLite database memwatch cannot read (%s); not replaced (name "
                              "another with --db)", sqlite3_errmsg(db));
        goto out;
    }
    while (sqlite3_step(s) == SQLITE_ROW) {
        const char *n = (const char *)sqlite3_column_text(s, 0);
        if (!n)
            continue;
        ntab++;
        marker |= !strcmp(n, "memwatch");
        for (size_t i = 0; i < sizeof v1_core / sizeof v1_core[0]; i++)
            core += !strcmp(n, v1_core[i]);
        if (!known_table(n) && !foreign[0])
            snprintf(foreign, sizeof foreign, "%s", n);
    }
    sqlite3_finalize(s);
    s = NULL;
    long long mv = -1;
    if (marker)
        mv = first_int(db, "SELECT version FROM memwatch WHERE format = '" MW_DB_FORMAT "'");
    if (mv > MW_REPORT_SCHEMA_VERSION) { /* a newer memwatch's: its tables are its own */
        rc = 0;
        goto out;
    }
    int ours = mv >= 1 || (core == (int)(sizeof v1_core / sizeof v1_core[0]) &&
                           first_int(db, "SELECT max(version) FROM schema") == 1 &&
                           first_int(db, "SELECT count(*) FROM schema") == 1);
    if (!ours) {
        snprintf(why, whylen,
                 "a SQLite database memwatch did not write (%s); not replaced (name another "
                 "with --db)",
                 ntab ? "not the tables of a memwatch report" : "no tables");
        goto out;
    }
    if (foreign[0]) {
        snprintf(why, whylen,
                 "a memwatch report database with a table memwatch did not write (%.60s); not "
                 "replaced (name another with --db)",
                 foreign);
        goto out;
    }
    rc = 0;
out:
    sqlite3_close(db);
    return rc;
}

/* Writes the marker table into the new database. */
static int write_marker(const char *path, char *why, size_t whylen)
{
    sqlite3 *db = NULL;
    int rc = 0;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        rc = -EIO;
    } else {
        char sql[256];
        snprintf(sql, sizeof sql,
                 "PRAGMA journal_mode=OFF; CREATE TABLE IF NOT EXISTS memwatch(format TEXT NOT "
                 "NULL, version INTEGER NOT NULL); DELETE FROM memwatch; INSERT INTO memwatch "
                 "VALUES('" MW_DB_FORMAT "', %d);",
                 MW_REPORT_SCHEMA_VERSION);
        if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
            rc = -EIO;
    }
    if (rc)
        snprintf(why, whylen, "cannot mark the new database as memwatch's: %s",
                 db ? sqlite3_errmsg(db) : "cannot open it");
    sqlite3_close(db);
    return rc;
}

static const char *file_kind(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO (named pipe)";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a regular file";
}

/* Reads up to n bytes of the start of a regular file; -errno. */
static ssize_t head_of(const char *path, void *buf, size_t n, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -errno;
    /* checked again on the descriptor: the name may have changed meanwhile */
    if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
        close(fd);
        return -EINVAL;
    }
    ssize_t r = pread(fd, buf, n, 0);
    int e = errno;
    close(fd);
    return r < 0 ? -e : r;
}

int mw_raw_check(const char *path, char *why, size_t whylen)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        return -errno;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "%s, not a raw file", file_kind(st.st_mode));
        return -EINVAL;
    }
    char h[16];
    ssize_t r = head_of(path, h, sizeof h, &st);
    if (r == -EINVAL) {
        snprintf(why, whylen, "%s, not a raw file", file_kind(st.st_mode));
        return -EINVAL;
    }
    if (r < 0) {
        snprintf(why, whylen, "%s", strerror((int)-r));
        return (int)r;
    }
    if (r == 0) {
        snprintf(why, whylen, "empty (0 bytes), not a raw file");
        return -EINVAL;
    }
    if (r == (ssize_t)sizeof h && !memcmp(h, sqlite_magic, sizeof h)) {
        snprintf(why, whylen,
                 "a SQLite database (what memwatch report writes), not a raw .mwr file");
        return -EINVAL;
    }
    if (r < 8 || memcmp(h, MWR_MAGIC, 8)) {
        snprintf(why, whylen, "not a memwatch raw file (it does not start with %s)", MWR_MAGIC);
        return -EINVAL;
    }
    return 0;
}

/* The directory part of a path, into out. */
static void dir_of(const char *path, char *out, size_t n)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    snprintf(out, n, "%s", dirname(tmp));
}

static const char *base_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* What an interrupted report left beside the database (".NAME.tmp-PID"):
 * removed under the lock, where no other report can be writing one. */
static void remove_leftovers(const char *dir, const char *base)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    char pre[NAME_MAX + 16];
    snprintf(pre, sizeof pre, ".%s.tmp-", base);
    size_t pl = strlen(pre);
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, pre, pl))
            (void)unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

int mw_db_swap_begin(mw_db_swap *s, const char *db, int wait, void (*on_wait)(const char *db),
                     char *why, size_t whylen)
{
    memset(s, 0, sizeof *s);
    s->lock_fd = -1;
    if (strlen(db) >= sizeof s->db - 32) {
        snprintf(why, whylen, "path too long");
        return -ENAMETOOLONG;
    }
    snprintf(s->db, sizeof s->db, "%s", db);
    /* An existing file is replaced only when it is a database memwatch
     * wrote (or empty): `--db out.json` must not overwrite someone's JSON,
     * `--db their.db` not someone's own database. */
    struct stat st;
    if (stat(db, &st) == 0) {
        if (!S_ISREG(st.st_mode)) {
            snprintf(why, whylen, "%s; not replaced", file_kind(st.st_mode));
            return -EEXIST;
        }
        char h[16];
        ssize_t r = head_of(db, h, sizeof h, &st);
        if (r == -EACCES) {
            snprintf(why, whylen, "cannot be read to tell whether memwatch wrote it; not "
                                  "replaced (name another with --db)");
            return -EEXIST;
        }
        if (r < 0) {
            snprintf(why, whylen, "%s", strerror((int)-r));
            return (int)r;
        }
        if (r > 0 && (r < (ssize_t)sizeof h || memcmp(h, sqlite_magic, sizeof h))) {
            snprintf(why, whylen,
                     "exists and is not a SQLite database; not replaced (name another with --db)");
            return -EEXIST;
        }
        if (r == (ssize_t)sizeof h) {
            int e = memwatch_wrote(db, why, whylen);
            if (e)
                return e;
        }
    }
    char dir[PATH_MAX];
    dir_of(db, dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(why, whylen, "directory %s: %s", dir, strerror(e));
        return -e;
    }
    if (access(dir, W_OK | X_OK)) {
        int e = errno;
        snprintf(why, whylen, "directory %s: %s", dir, strerror(e));
        close(fd);
        return -e;
    }
    if (flock(fd, LOCK_EX | LOCK_NB)) {
        if (errno != EWOULDBLOCK || !wait) {
            int e = errno;
            snprintf(why, whylen, "another memwatch report is writing in %s", dir);
            close(fd);
            return -e;
        }
        s->waited = 1;
        if (on_wait)
            on_wait(db);
        while (flock(fd, LOCK_EX) && errno == EINTR)
            ;
    }
    s->lock_fd = fd;
    remove_leftovers(dir, base_of(db));
    if (snprintf(s->tmp, sizeof s->tmp, "%s/.%s.tmp-%ld", dir, base_of(db), (long)getpid()) >=
        (int)sizeof s->tmp) {
        snprintf(why, whylen, "path too long");
        mw_db_swap_end(s);
        return -ENAMETOOLONG;
    }
    (void)unlink(s->tmp);
    return 0;
}

int mw_db_swap_commit(mw_db_swap *s, unsigned mode, char *why, size_t whylen)
{
    int me = write_marker(s->tmp, why, whylen);
    if (me) {
        (void)unlink(s->tmp);
        return me;
    }
    /* on the disk before it replaces the old one: a crash right after the
     * rename leaves the new database, not a torn one */
    int fd = open(s->tmp, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    if (chmod(s->tmp, mode & 0777) || rename(s->tmp, s->db)) {
        int e = errno;
        snprintf(why, whylen, "%s", strerror(e));
        (void)unlink(s->tmp);
        return -e;
    }
    s->tmp[0] = 0;
    return 0;
}

void mw_db_swap_abort(mw_db_swap *s)
{
    if (s->tmp[0])
        (void)unlink(s->tmp);
    s->tmp[0] = 0;
}

int mw_db_swap_keep(mw_db_swap *s, unsigned mode)
{
    if (chmod(s->db, mode & 0777))
        return -errno;
    mw_db_swap_abort(s);
    return 0;
}

void mw_db_swap_end(mw_db_swap *s)
{
    mw_db_swap_abort(s);
    if (s->lock_fd >= 0)
        close(s->lock_fd);
    s->lock_fd = -1;
}

/* The value of key in "key=value\n" text, into out. */
static int meta_value(const char *t, size_t n, const char *key, char *out, size_t outn)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(t + i, '\n', n - i);
        size_t l = nl ? (size_t)(nl - (t + i)) : n - i;
        if (l > kl && t[i + kl] == '=' && !memcmp(t + i, key, kl)) {
            size_t k = l - kl - 1 < outn - 1 ? l - kl - 1 : outn - 1;
            memcpy(out, t + i + kl + 1, k);
            out[k] = 0;
            return 1;
        }
        i += l + 1;
    }
    return 0;
}

int mw_raw_run(const char *path, char *id, size_t idlen, uint64_t *start_realtime_ns)
{
    mw_reader *r;
    id[0] = 0;
    *start_realtime_ns = 0;
    int rc = mw_reader_open(path, &r);
    if (rc < 0)
        return rc;
    mw_record rec;
    if (mw_reader_next(r, &rec) == 1 && rec.type == MWR_META) {
        const char *t;
        size_t n;
        if (mw_rec_text(&rec, &t, &n) == 0) {
            char v[32];
            meta_value(t, n, mw_meta_key(MW_META_RUN_ID), id, idlen);
            if (meta_value(t, n, mw_meta_key(MW_META_START_REALTIME_NS), v, sizeof v))
                *start_realtime_ns = strtoull(v, NULL, 10);
        }
    }
    mw_reader_close(r);
    return 0;
}
