/* tests/preload/mwp_begun.h: whether memwatch began recording this process,
 * for the test programs that wait for it (the CPU-time timer that begins
 * recording fires late on a loaded machine: docs/overhead.md, "Lazy start").
 * Begun, it has its perf event rings mapped; before, it holds only a CPU-time
 * timer. No allocation: the programs with allocators of their own call it. */
#ifndef MWP_BEGUN_H
#define MWP_BEGUN_H
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

__attribute__((unused)) static int recording_begun(void)
{
    static char buf[1 << 18];
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    size_t len = 0;
    ssize_t n;
    if (fd < 0)
        return 0;
    while (len < sizeof buf - 1 && (n = read(fd, buf + len, sizeof buf - 1 - len)) > 0)
        len += (size_t)n;
    close(fd);
    buf[len] = 0;
    return strstr(buf, "[perf_event]") != NULL;
}
/* The path of this process's raw file in MEMWATCH_DIR (memwatch-*-PID.mwr,
 * the last of its suffixes) into path; 0 where there is none. Allocates
 * (opendir). */
__attribute__((unused)) static int own_raw_path(char *path, size_t cap)
{
    const char *dir = getenv("MEMWATCH_DIR");
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d)
        return 0;
    char tail[32];
    snprintf(tail, sizeof tail, "-%ld.mwr", (long)getpid());
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name), t = strlen(tail);
        if (n > t && !strcmp(e->d_name + n - t, tail) &&
            snprintf(path, cap, "%s/%s", dir, e->d_name) < (int)cap)
            found = 1;
    }
    closedir(d);
    return found;
}

/* How many records of the given type (include/memwatch/mwr.h) this
 * process's raw file holds so far; -1 where there is none. A program that
 * must see memwatch write intervals counts them (MWR_INTERVAL): the file
 * also grows by allocation records and samples, so its size says nothing of
 * intervals. Reads on from where the last call stopped (the file only grows;
 * a record cut at the end is read whole next time). */
__attribute__((unused)) static long own_raw_records(unsigned type)
{
    static char path[4096], buf[1 << 16];
    static long long off;
    static long count;
    static pid_t for_pid;
    if (for_pid != getpid()) {
        if (!own_raw_path(path, sizeof path))
            return -1;
        for_pid = getpid();
        off = 32; /* the file header (docs/raw-format.md) */
        count = 0;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    for (;;) {
        ssize_t n = pread(fd, buf, sizeof buf, (off_t)off);
        if (n < 8)
            break;
        size_t at = 0;
        while (at + 8 <= (size_t)n) {
            unsigned t, size;
            memcpy(&t, buf + at, 4);
            memcpy(&size, buf + at + 4, 4);
            if (size < 8 || size % 8) { /* not a record boundary: stop counting */
                close(fd);
                return count;
            }
            if (at + size > (size_t)n && size <= sizeof buf)
                break; /* cut by this read: read again from its start */
            if (t == type)
                count++;
            at += size;
        }
        if (at == 0) /* one record cut where the file ends so far */
            break;
        off += (long long)at;
    }
    close(fd);
    return count;
}
#endif
