/*
 * tests/monitor/mon_flood.c: a bounded hostile HTTP client for memwatch
 * monitor's robustness test (tests/monitor/test_monitor_hostile.sh).
 *
 *   mon_flood flood ADDR PORT TOTAL CONC [SRC]
 *       TOTAL connections, at most CONC open at once (non-blocking, one
 *       poll loop). Connection i sends, by i % 5: a whole GET /metrics and
 *       reads the answer; a GET that it closes after the first 64 bytes of
 *       the answer (gone mid-response); garbage bytes; half a request line
 *       then a close; nothing at all, then a close. Each connection gets 15 s.
 *   mon_flood malformed ADDR PORT [SRC]
 *       one connection per malformed request of a fixed list; prints the
 *       status line each got (or how it ended).
 *   mon_flood slowloris ADDR PORT N SECONDS [SRC]
 *       N connections that send a request's headers one byte a second for
 *       SECONDS; prints how many the server closed and how many are open.
 *
 * SRC: a local address to connect from (127.0.0.2 ... on loopback), so a
 * test can tell one client's limit from another's; "spread": 127.0.0.2 to
 * 127.0.0.33 in turn (past the per-address limit to the agent's own). Prints one summary line
 * ("flood: ...", "slowloris: ..."); exits 0 when it ran, 2 on bad
 * arguments, 1 when it could not connect at all.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct sockaddr_in dst, src;
static int have_src, spread;
static unsigned spread_next;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int open_conn(int nonblock)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (spread) /* 127.0.0.2 .. 127.0.0.33 in turn */
        src.sin_addr.s_addr = htonl(0x7f000002u + spread_next++ % 32);
    if (have_src && bind(fd, (struct sockaddr *)&src, sizeof src)) {
        close(fd);
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&dst, sizeof dst) && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

static const char req_get[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

enum kind { K_GET, K_CUT, K_GARBAGE, K_HALF, K_NOTHING, K_KINDS };

typedef struct conn {
    int fd;
    int kind;
    int sent;
    size_t got;
    char head[16];
    double t0;
} conn;

static int flood(long total, long conc)
{
    conn *c = calloc((size_t)conc, sizeof *c);
    struct pollfd *p = calloc((size_t)conc, sizeof *p);
    if (!c || !p)
        return 1;
    long started = 0, done = 0, ok200 = 0, status_other = 0, closed = 0, timeouts = 0,
         connect_fail = 0, cut = 0, open_now = 0, peak = 0;
    for (long i = 0; i < conc; i++)
        c[i].fd = -1;
    double t_start = now_s();
    char buf[65536];
    while (done < total) {
        /* start connections while there is room */
        for (long i = 0; i < conc && started < total; i++) {
            if (c[i].fd >= 0)
                continue;
            int fd = open_conn(1);
            started++;
            if (fd < 0) {
                connect_fail++;
                done++;
                continue;
            }
            memset(&c[i], 0, sizeof c[i]);
            c[i].fd = fd;
            c[i].kind = (int)(started % K_KINDS);
            c[i].t0 = now_s();
            open_now++;
        }
        if (open_now > peak)
            peak = open_now;
        for (long i = 0; i < conc; i++) {
            p[i].fd = c[i].fd;
            p[i].events = c[i].fd < 0 ? 0 : c[i].sent ? POLLIN : POLLOUT;
            p[i].revents = 0;
        }
        int r = poll(p, (nfds_t)conc, 200);
        if (r < 0 && errno != EINTR)
            break;
        double now = now_s();
        for (long i = 0; i < conc; i++) {
            conn *k = &c[i];
            if (k->fd < 0)
                continue;
            int end = 0;
            if (p[i].revents & (POLLOUT | POLLERR | POLLHUP) && !k->sent) {
                int err = 0;
                socklen_t el = sizeof err;
                getsockopt(k->fd, SOL_SOCKET, SO_ERROR, &err, &el);
                if (err) {
                    closed++;
                    end = 1;
                } else {
                    ssize_t w = 0;
                    if (k->kind == K_GET || k->kind == K_CUT)
                        w = send(k->fd, req_get, sizeof req_get - 1, MSG_NOSIGNAL);
                    else if (k->kind == K_GARBAGE)
                        w = send(k->fd, "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 15,
                                 MSG_NOSIGNAL);
                    else if (k->kind == K_HALF)
                        w = send(k->fd, "GET /metr", 9, MSG_NOSIGNAL);
                    if (k->kind == K_HALF || k->kind == K_NOTHING) {
                        end = 1; /* gone before the request was whole */
                    } else if (w < 0) {
                        closed++;
                        end = 1;
                    }
                    k->sent = 1;
                }
            } else if (p[i].revents & (POLLIN | POLLERR | POLLHUP)) {
                ssize_t n = recv(k->fd, buf, sizeof buf, 0);
                if (n > 0) {
                    if (k->got < sizeof k->head - 1) {
                        size_t m = sizeof k->head - 1 - k->got;
                        memcpy(k->head + k->got, buf, (size_t)n < m ? (size_t)n : m);
                    }
                    k->got += (size_t)n;
                    if (k->kind == K_CUT && k->got >= 64) {
                        cut++;
                        end = 2;
                    }
                } else {
                    end = 2;
                }
                if (end == 2 && k->kind != K_CUT) {
                    if (!strncmp(k->head, "HTTP/1.1 200", 12))
                        ok200++;
                    else if (!strncmp(k->head, "HTTP/", 5))
                        status_other++;
                    else
                        closed++;
                } else if (end == 2 && k->got < 64) {
                    closed++;
                }
            }
            if (!end && now - k->t0 > 15) {
                timeouts++;
                end = 1;
            }
            if (end) {
                /* a reset rather than an orderly close for some: both must do */
                if (k->kind == K_CUT || k->kind == K_NOTHING) {
                    struct linger l = {1, 0};
                    setsockopt(k->fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
                }
                close(k->fd);
                k->fd = -1;
                open_now--;
                done++;
            }
        }
    }
    printf("flood: %ld connections in %.1f s, at most %ld open at once: %ld answered 200, %ld "
           "another status, %ld closed or refused by the server, %ld cut mid-response by us, %ld "
           "timed out, %ld could not connect\n",
           done, now_s() - t_start, peak, ok200, status_other, closed, cut, timeouts,
           connect_fail);
    free(c);
    free(p);
    return done ? 0 : 1;
}

static const struct bad {
    const char *name;
    const char *data;
    size_t len; /* 0: strlen */
} bads[] = {
    {"no version", "GET /metrics\r\n\r\n", 0},
    {"bad version", "GET /metrics HTTP/9.9\r\nHost: x\r\n\r\n", 0},
    {"lower-case method", "get /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 0},
    {"POST with body", "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", 0},
    {"DELETE", "DELETE /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 0},
    {"other path", "GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", 0},
    {"no Host on 1.1", "GET /metrics HTTP/1.1\r\n\r\n", 0},
    {"header without colon", "GET /metrics HTTP/1.1\r\nHost x\r\nbroken\r\n\r\n", 0},
    {"NUL in the line", "GET /met\0rics HTTP/1.1\r\nHost: x\r\n\r\n", 37},
    {"negative length", "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n", 0},
    {"huge length", "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n", 0},
    {"bad chunk", "POST /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 0},
    {"LF only", "GET /metrics HTTP/1.1\nHost: x\n\n", 0},
    {"binary", "\xff\xfe\xfd\x00\x01\x02\r\n\r\n", 10},
    {"absolute URI", "GET http://x/metrics HTTP/1.1\r\nHost: x\r\n\r\n", 0},
    {"query string", "GET /metrics?x=%zz&&= HTTP/1.1\r\nHost: x\r\n\r\n", 0},
    {"pipelined", "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n", 0},
    {"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 0},
    {NULL, NULL, 0},
};

static void read_status(int fd, char *line, size_t n)
{
    char b[4096];
    size_t got = 0;
    struct pollfd p = {fd, POLLIN, 0};
    double t0 = now_s();
    line[0] = 0;
    while (now_s() - t0 < 3 && poll(&p, 1, 500) >= 0) {
        if (!(p.revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        ssize_t r = recv(fd, b + got, sizeof b - 1 - got, 0);
        if (r <= 0)
            break;
        got += (size_t)r;
        if (got >= sizeof b - 1 || memchr(b, '\n', got))
            break;
    }
    b[got] = 0;
    char *nl = strpbrk(b, "\r\n");
    if (nl)
        *nl = 0;
    snprintf(line, n, "%.150s", got ? b : "(closed without an answer)");
}

static int malformed(void)
{
    int n = 0;
    char big[70000];
    for (const struct bad *b = bads; b->name; b++, n++) {
        int fd = open_conn(0);
        if (fd < 0)
            return 1;
        send(fd, b->data, b->len ? b->len : strlen(b->data), MSG_NOSIGNAL);
        char line[200];
        read_status(fd, line, sizeof line);
        printf("malformed: %-22s -> %s\n", b->name, line);
        close(fd);
    }
    /* a request line and a header far beyond the per-connection memory */
    int fd = open_conn(0);
    if (fd < 0)
        return 1;
    memset(big, 'a', sizeof big);
    memcpy(big, "GET /", 5);
    send(fd, big, sizeof big, MSG_NOSIGNAL);
    send(fd, " HTTP/1.1\r\n\r\n", 13, MSG_NOSIGNAL);
    char line[200];
    read_status(fd, line, sizeof line);
    printf("malformed: %-22s -> %s\n", "70 kB request line", line);
    close(fd);
    fd = open_conn(0);
    if (fd < 0)
        return 1;
    send(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ", 40, MSG_NOSIGNAL);
    memset(big, 'b', sizeof big);
    send(fd, big, sizeof big, MSG_NOSIGNAL);
    send(fd, "\r\n\r\n", 4, MSG_NOSIGNAL);
    read_status(fd, line, sizeof line);
    printf("malformed: %-22s -> %s\n", "70 kB header", line);
    close(fd);
    printf("malformed: %d requests sent\n", n + 2);
    return 0;
}

static int slowloris(long n, double seconds)
{
    int *fd = calloc((size_t)n, sizeof *fd);
    if (!fd)
        return 1;
    long opened = 0;
    for (long i = 0; i < n; i++) {
        fd[i] = open_conn(0);
        if (fd[i] >= 0) {
            opened++;
            send(fd[i], "GET /metrics HTTP/1.1\r\nHost: x\r\n", 32, MSG_NOSIGNAL);
        }
    }
    double t0 = now_s();
    long closed_by_server = 0;
    while (now_s() - t0 < seconds) {
        sleep(1);
        for (long i = 0; i < n; i++) {
            if (fd[i] < 0)
                continue;
            char b[256];
            ssize_t r = recv(fd[i], b, sizeof b, MSG_DONTWAIT);
            if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) ||
                send(fd[i], "X", 1, MSG_NOSIGNAL) < 0 || r > 0) {
                close(fd[i]);
                fd[i] = -1;
                closed_by_server++;
            }
        }
    }
    long still = 0;
    for (long i = 0; i < n; i++)
        if (fd[i] >= 0) {
            still++;
            close(fd[i]);
        }
    printf("slowloris: %ld of %ld connections opened, %ld closed by the server within %.0f s, "
           "%ld still open\n",
           opened, n, closed_by_server, seconds, still);
    free(fd);
    return opened ? 0 : 1;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (argc < 4) {
        fprintf(stderr, "usage: mon_flood flood|malformed|slowloris ADDR PORT ...\n");
        return 2;
    }
    dst.sin_family = AF_INET;
    dst.sin_port = htons((unsigned short)atoi(argv[3]));
    if (inet_pton(AF_INET, argv[2], &dst.sin_addr) != 1)
        return 2;
    const char *s = NULL;
    if (!strcmp(argv[1], "flood") && argc >= 6)
        s = argc > 6 ? argv[6] : NULL;
    else if (!strcmp(argv[1], "malformed"))
        s = argc > 4 ? argv[4] : NULL;
    else if (!strcmp(argv[1], "slowloris") && argc >= 6)
        s = argc > 6 ? argv[6] : NULL;
    else
        return 2;
    if (s && !strcmp(s, "spread")) {
        src.sin_family = AF_INET;
        have_src = spread = 1;
    } else if (s) {
        src.sin_family = AF_INET;
        if (inet_pton(AF_INET, s, &src.sin_addr) != 1)
            return 2;
        have_src = 1;
    }
    if (!strcmp(argv[1], "flood")) {
        long total = atol(argv[4]), conc = atol(argv[5]);
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && (rlim_t)conc + 64 > rl.rlim_cur)
            conc = rl.rlim_cur > 128 ? (long)rl.rlim_cur - 64 : 64;
        if (total < 1 || conc < 1)
            return 2;
        return flood(total, conc);
    }
    if (!strcmp(argv[1], "malformed"))
        return malformed();
    return slowloris(atol(argv[4]), atof(argv[5]));
}
