/*
 * gpu/pclines.c: PC samples to source lines (see gpu/pclines.h). Pure C.
 */
#include "pclines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mw_pcl_is_mem_stall(const char *name)
{
    return strstr(name, "long_scoreboard") || strstr(name, "lg_throttle") ||
           strstr(name, "mio_throttle") || strstr(name, "drain") ||
           strstr(name, "memory_throttle");
}

static int line_cmp(const void *a, const void *b)
{
    const mw_pcl_line *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    int c = strcmp(x->file, y->file);
    if (c)
        return c;
    return x->line < y->line ? -1 : x->line > y->line;
}

long mw_pcl_aggregate(const mw_pcl_hit *hits, size_t n, size_t nstall,
                      const unsigned char *is_mem, mw_pcl_lookup lookup, void *user,
                      mw_pcl_line **out)
{
    mw_pcl_line *v = NULL;
    size_t nv = 0, cap = 0;
    *out = NULL;
    for (size_t i = 0; i < n; i++) {
        const mw_pcl_hit *h = &hits[i];
        uint64_t tot = 0, mem = 0;
        for (size_t k = 0; k < nstall; k++) {
            tot += h->stall[k];
            if (is_mem && is_mem[k])
                mem += h->stall[k];
        }
        if (!tot)
            continue;
        char file[512] = "?";
        uint32_t line = 0;
        if (!lookup || lookup(h->crc, h->func, h->pc, file, sizeof file, &line, user)) {
            snprintf(file, sizeof file, "?");
            line = 0;
        }
        size_t j = 0;
        for (; j < nv; j++)
            if (v[j].line == line && !strcmp(v[j].file, file) && !strcmp(v[j].func, h->func))
                break;
        if (j == nv) {
            if (nv == cap) {
                size_t nc = cap ? 2 * cap : 64;
                mw_pcl_line *nn = realloc(v, nc * sizeof *nn);
                if (!nn)
                    goto oom;
                v = nn;
                cap = nc;
            }
            mw_pcl_line *l = &v[nv];
            memset(l, 0, sizeof *l);
            l->func = strdup(h->func);
            l->file = strdup(file);
            l->stall = calloc(nstall ? nstall : 1, sizeof *l->stall);
            l->line = line;
            nv++;
            if (!l->func || !l->file || !l->stall)
                goto oom;
        }
        mw_pcl_line *l = &v[j];
        l->samples += tot;
        l->stall_mem += mem;
        for (size_t k = 0; k < nstall; k++)
            l->stall[k] += h->stall[k];
        if (tot > l->pc_best) {
            l->pc_best = tot;
            l->pc = h->pc;
        }
    }
    if (nv)
        qsort(v, nv, sizeof *v, line_cmp);
    *out = v;
    return (long)nv;
oom:
    mw_pcl_free(v, (long)nv, nstall);
    return -1;
}

void mw_pcl_stall_text(const mw_pcl_line *l, size_t nstall, char *const *names, int top,
                       char *buf, size_t size)
{
    static const char pre[] = "smsp__pcsamp_warps_issue_stalled_";
    size_t off = 0;
    unsigned char used[256] = {0};
    if (size)
        buf[0] = 0;
    for (int t = 0; t < top; t++) {
        size_t best = nstall;
        for (size_t k = 0; k < nstall && k < sizeof used; k++)
            if (!used[k] && l->stall[k] && (best == nstall || l->stall[k] > l->stall[best]))
                best = k;
        if (best == nstall)
            break;
        used[best] = 1;
        const char *nm = names && names[best] ? names[best] : "?";
        if (!strncmp(nm, pre, sizeof pre - 1))
            nm += sizeof pre - 1;
        int w = snprintf(buf + off, size > off ? size - off : 0, "%s%s=%llu", off ? "," : "", nm,
                         (unsigned long long)l->stall[best]);
        if (w < 0 || off + (size_t)w >= size)
            break;
        off += (size_t)w;
    }
}

void mw_pcl_free(mw_pcl_line *lines, long n, size_t nstall)
{
    for (long i = 0; i < n; i++) {
        free(lines[i].func);
        free(lines[i].file);
        free(lines[i].stall);
    }
    free(lines);
    (void)nstall;
}
