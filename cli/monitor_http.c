/*
 * cli/monitor_http.c: memwatch monitor's HTTP server (cli/monitor.h), on
 * libmicrohttpd: GET (or HEAD) /metrics answers the metrics
 * (monitor_metrics.c), every other path 404, every other method 405.
 *
 * What a hostile or broken client can take is bounded: at most
 * http_max_conns connections at once and http_max_per_ip from one address
 * (counted here, so that a refusal is counted: libmicrohttpd's own limits,
 * one above these, are the backstop), a connection idle for http_timeout_s
 * seconds is closed (a slowloris client holds a slot at most that long per
 * byte, and only as many slots as its addresses allow), 16 KiB of memory
 * per connection for its request (a longer request line or header is
 * refused by libmicrohttpd with 414/431), and a response is built whole for
 * each request and freed when sent or when the client went away. SIGPIPE is
 * ignored by the agent; libmicrohttpd sends with MSG_NOSIGNAL besides.
 *
 * libmicrohttpd is loaded by dlopen when the server starts (its soname read
 * at configure time), so that the commands that serve nothing do not load
 * it and the TLS libraries behind it. Built without libmicrohttpd (CMake
 * found none), or where it cannot be loaded, mon_http_unavailable says why
 * and nothing is served.
 *
 * May call: libmicrohttpd, libc. Threading: libmicrohttpd's one internal
 * thread calls every callback here; the state's HTTP counters are atomics.
 */
#include "monitor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MW_HAVE_MHD
#include <dlfcn.h>
#include <microhttpd.h>
#include <netinet/in.h>

/* The functions used, resolved from MW_MHD_SONAME once; the calls below read
 * as libmicrohttpd's own names through the macros. */
static struct {
    int tried;
    char why[256];
    __typeof__(MHD_start_daemon) *start_daemon;
    __typeof__(MHD_stop_daemon) *stop_daemon;
    __typeof__(MHD_get_connection_info) *get_connection_info;
    __typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
    __typeof__(MHD_add_response_header) *add_response_header;
    __typeof__(MHD_queue_response) *queue_response;
    __typeof__(MHD_destroy_response) *destroy_response;
    __typeof__(MHD_lookup_connection_value) *lookup_connection_value;
} mhd;
#define MHD_start_daemon (*mhd.start_daemon)
#define MHD_stop_daemon (*mhd.stop_daemon)
#define MHD_get_connection_info (*mhd.get_connection_info)
#define MHD_create_response_from_buffer (*mhd.create_response_from_buffer)
#define MHD_add_response_header (*mhd.add_response_header)
#define MHD_queue_response (*mhd.queue_response)
#define MHD_destroy_response (*mhd.destroy_response)
#define MHD_lookup_connection_value (*mhd.lookup_connection_value)

/* NULL when loaded, else why not. */
static const char *mhd_load(void)
{
    if (mhd.tried)
        return mhd.why[0] ? mhd.why : NULL;
    mhd.tried = 1;
    void *l = dlopen(MW_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!l) {
        const char *e = dlerror();
        snprintf(mhd.why, sizeof mhd.why, "cannot load %s, which serves the metrics: %s",
                 MW_MHD_SONAME, e ? e : "dlopen failed");
        return mhd.why;
    }
    const struct {
        const char *name;
        void **slot;
    } fn[] = {{"MHD_start_daemon", (void **)&mhd.start_daemon},
              {"MHD_stop_daemon", (void **)&mhd.stop_daemon},
              {"MHD_get_connection_info", (void **)&mhd.get_connection_info},
              {"MHD_create_response_from_buffer", (void **)&mhd.create_response_from_buffer},
              {"MHD_add_response_header", (void **)&mhd.add_response_header},
              {"MHD_queue_response", (void **)&mhd.queue_response},
              {"MHD_destroy_response", (void **)&mhd.destroy_response},
              {"MHD_lookup_connection_value", (void **)&mhd.lookup_connection_value}};
    for (size_t i = 0; i < sizeof fn / sizeof fn[0]; i++) {
        *fn[i].slot = dlsym(l, fn[i].name);
        if (!*fn[i].slot) {
            snprintf(mhd.why, sizeof mhd.why, "%s has no %s", MW_MHD_SONAME, fn[i].name);
            return mhd.why;
        }
    }
    return NULL;
}

#define CONN_MEMORY 16384 /* per connection: its request line and headers */

/* Connections open from one address. */
typedef struct ip_slot {
    unsigned count;
    int family;
    unsigned char addr[16];
} ip_slot;

struct mon_http {
    struct MHD_Daemon *d;
    mon_state *s;
    size_t nips;
    ip_slot *ips; /* http_max_conns + 1 slots: never more addresses than connections */
};

const char *mon_http_unavailable(void)
{
    return mhd_load();
}

static int ip_key(const struct sockaddr *a, int *family, unsigned char *addr)
{
    memset(addr, 0, 16);
    *family = a ? a->sa_family : AF_UNSPEC;
    if (a && a->sa_family == AF_INET)
        memcpy(addr, &((const struct sockaddr_in *)a)->sin_addr, 4);
    else if (a && a->sa_family == AF_INET6)
        memcpy(addr, &((const struct sockaddr_in6 *)a)->sin6_addr, 16);
    return 0;
}

static ip_slot *ip_find(mon_http *h, const struct sockaddr *a, int make)
{
    int fam;
    unsigned char key[16];
    ip_key(a, &fam, key);
    ip_slot *free_slot = NULL;
    for (size_t i = 0; i < h->nips; i++) {
        ip_slot *p = &h->ips[i];
        if (p->count && p->family == fam && !memcmp(p->addr, key, 16))
            return p;
        if (!p->count && !free_slot)
            free_slot = p;
    }
    if (!make || !free_slot)
        return NULL;
    free_slot->family = fam;
    memcpy(free_slot->addr, key, 16);
    return free_slot;
}

/* Before libmicrohttpd takes a connection: the limits, counted. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
    mon_http *h = cls;
    mon_state *s = h->s;
    if ((int)atomic_load(&s->open_conns) >= s->http_max_conns) {
        atomic_fetch_add(&s->rejected_limit, 1);
        return MHD_NO;
    }
    ip_slot *p = ip_find(h, addr, 0);
    if (p && (int)p->count >= s->http_max_per_ip) {
        atomic_fetch_add(&s->rejected_ip, 1);
        return MHD_NO;
    }
    (void)len;
    return MHD_YES;
}

static void on_conn(void *cls, struct MHD_Connection *c, void **ctx,
                    enum MHD_ConnectionNotificationCode what)
{
    mon_http *h = cls;
    if (what == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        ip_slot *p = ip_find(h, ci ? ci->client_addr : NULL, 1);
        if (p)
            p->count++;
        *ctx = p;
        atomic_fetch_add(&h->s->open_conns, 1);
        atomic_fetch_add(&h->s->conns, 1);
    } else if (what == MHD_CONNECTION_NOTIFY_CLOSED) {
        ip_slot *p = *ctx;
        if (p && p->count)
            p->count--;
        *ctx = NULL;
        atomic_fetch_sub(&h->s->open_conns, 1);
    }
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *text,
                             const char *allow)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    if (allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    enum MHD_Result q = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return q;
}

/* OpenMetrics unless the client asks for text/plain and not for
 * OpenMetrics (Prometheus asks for OpenMetrics first). */
static int wants_openmetrics(const char *accept)
{
    if (!accept)
        return 1;
    if (strstr(accept, "application/openmetrics-text"))
        return 1;
    return !strstr(accept, "text/plain");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **req)
{
    mon_http *h = cls;
    mon_state *s = h->s;
    (void)version;
    (void)upload;
    (void)req;
    if (strcmp(url, "/metrics")) {
        atomic_fetch_add(&s->not_found, 1);
        return reply(c, MHD_HTTP_NOT_FOUND, "not found: memwatch monitor serves /metrics\n",
                     NULL);
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
        atomic_fetch_add(&s->bad_method, 1);
        *upload_size = 0;
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed: GET /metrics\n",
                     "GET, HEAD");
    }
    const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    int om = wants_openmetrics(accept);
    char *text = NULL;
    size_t len = mon_render(s, om, &text);
    if (!text)
        return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory\n", NULL);
    struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                               : "text/plain; version=0.0.4; charset=utf-8");
    enum MHD_Result q = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    atomic_fetch_add(&s->scrapes, 1);
    return q;
}

mon_http *mon_http_start(mon_state *s, int fd, char *why, size_t n)
{
    const char *no = mhd_load();
    if (no) {
        snprintf(why, n, "%s", no);
        return NULL;
    }
    mon_http *h = calloc(1, sizeof *h);
    if (h) {
        h->nips = (size_t)s->http_max_conns + 1;
        h->ips = calloc(h->nips, sizeof *h->ips);
    }
    if (!h || !h->ips) {
        snprintf(why, n, "out of memory");
        goto fail;
    }
    h->s = s;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 && ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    h->d = MHD_start_daemon(
        flags, 0, on_accept, h, on_request, h, MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)s->http_max_conns + 1,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)s->http_max_per_ip + 1,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->http_timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY, MHD_OPTION_NOTIFY_CONNECTION,
        on_conn, h, MHD_OPTION_END);
    if (!h->d) {
        snprintf(why, n, "libmicrohttpd could not start its server");
        goto fail;
    }
    return h;
fail:
    if (h)
        free(h->ips);
    free(h);
    return NULL;
}

void mon_http_stop(mon_http *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->d);
    free(h->ips);
    free(h);
}

#else /* no libmicrohttpd */

struct mon_http {
    int unused;
};

const char *mon_http_unavailable(void)
{
    return "this memwatch was built without libmicrohttpd: CMake found no libmicrohttpd "
           "(pkg-config libmicrohttpd) when the build was configured; install libmicrohttpd-dev "
           "(.ci/install-deps) and configure the build again";
}

mon_http *mon_http_start(mon_state *s, int fd, char *why, size_t n)
{
    (void)s;
    (void)fd;
    snprintf(why, n, "%s", mon_http_unavailable());
    return NULL;
}

void mon_http_stop(mon_http *h)
{
    (void)h;
}

#endif
