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
/* The size of this process's raw file in MEMWATCH_DIR (memwatch-*-PID.mwr);
 * -1 where there is none. Each interval's records are one write, so its
 * growth tells a program that memwatch is still writing (a loaded machine
 * gives it fewer intervals per second of the program's time). Allocates
 * (opendir). */
__attribute__((unused)) static long long own_raw_size(void)
{
    const char *dir = getenv("MEMWATCH_DIR");
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d)
        return -1;
    char tail[32], path[4096];
    snprintf(tail, sizeof tail, "-%ld.mwr", (long)getpid());
    long long size = -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name), t = strlen(tail);
        struct stat st;
        if (n > t && !strcmp(e->d_name + n - t, tail) &&
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path &&
            stat(path, &st) == 0)
            size = (long long)st.st_size;
    }
    closedir(d);
    return size;
}
#endif
