/*
 * cli/procstat.c: /proc/PID/stat into a struct (cli/procstat.h).
 */
#include "procstat.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int mw_procstat_parse(const char *text, mw_procstat *o)
{
    memset(o, 0, sizeof *o);
    const char *l = strchr(text, '('), *r = strrchr(text, ')');
    if (!l || !r || r < l || r[1] != ' ' || !r[2])
        return -1;
    char *e;
    long pid = strtol(text, &e, 10);
    if (e == text || pid <= 0)
        return -1;
    o->pid = (int32_t)pid;
    size_t cl = (size_t)(r - l - 1);
    if (cl > sizeof o->comm - 1)
        cl = sizeof o->comm - 1;
    memcpy(o->comm, l + 1, cl);
    o->state = r[2];
    /* fields 4 (ppid) to 22 (starttime), each a decimal */
    unsigned long long f[23] = {0};
    const char *c = r + 3;
    for (int i = 4; i <= 22; i++) {
        while (*c == ' ')
            c++;
        if (*c == '-') /* tty_nr, priority, nice may be negative: not kept */
            c++;
        f[i] = strtoull(c, &e, 10);
        if (e == c)
            return -1;
        c = e;
    }
    o->ppid = (int32_t)f[4];
    o->minflt = f[10];
    o->cminflt = f[11];
    o->majflt = f[12];
    o->cmajflt = f[13];
    o->utime = f[14];
    o->stime = f[15];
    o->cutime = f[16];
    o->cstime = f[17];
    o->start = f[22];
    return 0;
}

int mw_procstat_read(int dirfd, const char *path, mw_procstat *o)
{
    char b[1024];
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, b, sizeof b - 1);
    close(fd);
    if (n <= 0)
        return -1;
    b[n] = 0;
    return mw_procstat_parse(b, o);
}
