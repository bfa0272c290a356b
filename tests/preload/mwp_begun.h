/* tests/preload/mwp_begun.h: whether memwatch began recording this process,
 * for the test programs that wait for it (the CPU-time timer that begins
 * recording fires late on a loaded machine: docs/overhead.md, "Lazy start").
 * Begun, it has its perf event rings mapped; before, it holds only a CPU-time
 * timer. No allocation: the programs with allocators of their own call it. */
#ifndef MWP_BEGUN_H
#define MWP_BEGUN_H
#include <fcntl.h>
#include <string.h>
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
#endif
