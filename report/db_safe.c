/*
 * report/db_safe.c: a report database is written beside the old one and
 * renamed into place only when complete; one report at a time per
 * directory; raw files told from everything else (db_safe.h).
 *
 * Owns: the lock (flock on the database's directory), the new file's name
 * and its removal, the rename, the file mode; the raw-file check.
 * May call: libc. Prints nothing.
 */
#include "db_safe.h"

#include <memwatch/mwr.h>
#include <memwatch/mwr_reader.h>

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
    /* An existing file is replaced only when it is a database (or empty):
     * `-o out.json` must not overwrite someone's JSON. */
    struct stat st;
    if (stat(db, &st) == 0) {
        if (!S_ISREG(st.st_mode)) {
            snprintf(why, whylen, "%s; not replaced", file_kind(st.st_mode));
            return -EEXIST;
        }
        char h[16];
        ssize_t r = head_of(db, h, sizeof h, &st);
        if (r < 0 && r != -EACCES) {
            snprintf(why, whylen, "%s", strerror((int)-r));
            return (int)r;
        }
        if (r > 0 && (r < (ssize_t)sizeof h || memcmp(h, sqlite_magic, sizeof h))) {
            snprintf(why, whylen,
                     "exists and is not a SQLite database; not replaced (name another with --db)");
            return -EEXIST;
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
            meta_value(t, n, "run_id", id, idlen);
            if (meta_value(t, n, "start_realtime_ns", v, sizeof v))
                *start_realtime_ns = strtoull(v, NULL, 10);
        }
    }
    mw_reader_close(r);
    return 0;
}
