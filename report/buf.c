/*
 * report/buf.c: the growable containers of report/buf.h.
 * May call: libc. Threading: a container is used by one thread at a time.
 */
#include "buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void mw_buf_put(mw_buf *m, const void *d, size_t n)
{
    if (m->oom)
        return;
    if (m->n + n + 1 > m->cap) {
        size_t c = m->cap ? m->cap : 256;
        while (c < m->n + n + 1)
            c *= 2;
        char *nb = realloc(m->b, c);
        if (!nb) {
            m->oom = 1;
            return;
        }
        m->b = nb;
        m->cap = c;
    }
    if (n)
        memcpy(m->b + m->n, d, n);
    m->n += n;
    m->b[m->n] = 0;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

/* Open addressing, at most half the slots used. */
int64_t mw_strtab_id(mw_strtab *t, const char *s)
{
    if ((t->n + 1) * 2 > t->nslot) {
        uint32_t ns = t->nslot ? t->nslot * 2 : 1024;
        uint32_t *sl = calloc(ns, sizeof *sl);
        if (!sl)
            return -ENOMEM;
        for (uint32_t i = 0; i < t->n; i++) {
            uint64_t h = hash_str(t->s[i]) & (ns - 1);
            while (sl[h])
                h = (h + 1) & (ns - 1);
            sl[h] = i + 1;
        }
        free(t->slot);
        t->slot = sl;
        t->nslot = ns;
    }
    uint64_t h = hash_str(s) & (t->nslot - 1);
    while (t->slot[h]) {
        if (!strcmp(t->s[t->slot[h] - 1], s))
            return t->slot[h] - 1;
        h = (h + 1) & (t->nslot - 1);
    }
    if (t->n == t->cap) {
        uint32_t c = t->cap ? t->cap * 2 : 1024;
        char **ns = realloc(t->s, c * sizeof *ns);
        if (!ns)
            return -ENOMEM;
        t->s = ns;
        t->cap = c;
    }
    t->s[t->n] = strdup(s);
    if (!t->s[t->n])
        return -ENOMEM;
    t->slot[h] = t->n + 1;
    return t->n++;
}

void mw_strtab_free(mw_strtab *t)
{
    for (uint32_t i = 0; i < t->n; i++)
        free(t->s[i]);
    free(t->s);
    free(t->slot);
}
