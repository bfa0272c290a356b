/*
 * cli/procstat.c: /proc/PID/stat into a struct (cli/procstat.h).
 */
#include "procstat.h"

#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
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

int mw_procstat_cgroup(const char *text, char *out, size_t n)
{
    /* lines "ID:CONTROLLERS:PATH" (cgroups(7)) */
    const char *best = NULL, *first = NULL;
    int rank = 0; /* 3: unified, 2: memory, 1: another; +10: not the root */
    for (const char *l = text; l && *l;) {
        const char *nl = strchr(l, '\n');
        const char *c1 = memchr(l, ':', nl ? (size_t)(nl - l) : strlen(l));
        const char *c2 = c1 ? memchr(c1 + 1, ':', nl ? (size_t)(nl - c1 - 1) : strlen(c1 + 1))
                            : NULL;
        if (c2) {
            int r = 1;
            if (c1 - l == 1 && l[0] == '0' && c2 == c1 + 1)
                r = 3;
            else {
                /* "memory" among the comma-separated controllers */
                for (const char *k = c1 + 1; k < c2;) {
                    const char *e = memchr(k, ',', (size_t)(c2 - k));
                    if (!e)
                        e = c2;
                    if (e - k == 6 && !memcmp(k, "memory", 6))
                        r = 2;
                    k = e + 1;
                }
            }
            if (!first)
                first = c2 + 1;
            /* a hybrid hierarchy keeps the unified one at its root while a
             * controller places the process: a path beats the root */
            if (!(c2[1] == '/' && (c2[2] == '\n' || !c2[2])))
                r += 10;
            if (r > rank) {
                rank = r;
                best = c2 + 1;
            }
        }
        l = nl ? nl + 1 : NULL;
    }
    if (!best)
        best = first;
    if (!best || !n)
        return -1;
    size_t k = 0;
    while (best[k] && best[k] != '\n' && k + 1 < n) {
        out[k] = best[k];
        k++;
    }
    out[k] = 0;
    return k ? 0 : -1;
}

void mw_procstat_user(unsigned uid, char *out, size_t n)
{
    struct passwd pw, *r = NULL;
    char buf[1024];
    if (getpwuid_r((uid_t)uid, &pw, buf, sizeof buf, &r) == 0 && r && r->pw_name[0])
        snprintf(out, n, "%s", r->pw_name);
    else
        snprintf(out, n, "uid %u", uid);
}
