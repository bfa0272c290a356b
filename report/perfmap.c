/*
 * report/perfmap.c: names for code in anonymous executable memory (JIT
 * compilers, interpreters' trampolines) from the perf map the runtime wrote
 * (report/perfmap.h, docs/report.md "Symbolization").
 *
 * Owns: finding a process's map (perf-PID.map beside its raw file, else
 * /tmp/perf-PID.map written after the process started), parsing it ("START
 * SIZE name" lines, hexadecimal, later lines winning where code was moved or
 * replaced), lookups, and the name_notes rows about code in no loaded object
 * and about stacks cut at a return address where no code lies.
 * May call: libc; its notes go through report/ingest_db.c (ing_db_note).
 * Threading: one ingest at a time.
 */
#include "ingest.h"
#include "perfmap.h"

#include <sqlite3.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct pm_ent {
    uint64_t start, end;
    size_t seq;
    char *name;
} pm_ent;

struct mw_perfmap {
    pm_ent *v;
    size_t n;
    char path[4096];
};

static int ent_cmp(const void *a, const void *b)
{
    const pm_ent *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int parse(FILE *f, mw_perfmap *m)
{
    char *line = NULL;
    size_t cap = 0, ncap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        char *p = line, *e;
        uint64_t start = strtoull(p, &e, 16);
        if (e == p)
            continue;
        p = e;
        uint64_t size = strtoull(p, &e, 16);
        if (e == p || size == 0)
            continue;
        p = e;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t nl = strcspn(p, "\r\n");
        if (!nl)
            continue;
        if (m->n == ncap) {
            size_t nc = ncap ? ncap * 2 : 256;
            pm_ent *v = realloc(m->v, nc * sizeof *v);
            if (!v)
                break;
            m->v = v;
            ncap = nc;
        }
        char *name = strndup(p, nl);
        if (!name)
            break;
        m->v[m->n] = (pm_ent){start, start + size, m->n, name};
        m->n++;
    }
    free(line);
    qsort(m->v, m->n, sizeof *m->v, ent_cmp);
    return 0;
}

int mw_perfmap_open(const char *raw_path, long pid, uint64_t start_real_ns, mw_perfmap **out,
                    char *why, size_t whysz)
{
    *out = NULL;
    char cand[2][4096];
    int nc = 0;
    const char *slash = raw_path ? strrchr(raw_path, '/') : NULL;
    if (slash)
        snprintf(cand[nc++], sizeof cand[0], "%.*s/perf-%ld.map", (int)(slash - raw_path > 4000 ? 4000 : slash - raw_path),
                 raw_path, pid);
    else
        snprintf(cand[nc++], sizeof cand[0], "perf-%ld.map", pid);
    snprintf(cand[nc++], sizeof cand[1], "/tmp/perf-%ld.map", pid);
    for (int i = 0; i < nc; i++) {
        struct stat st;
        if (stat(cand[i], &st) || !S_ISREG(st.st_mode))
            continue;
        uint64_t mt = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
        if (i == nc - 1 && start_real_ns && mt + 1000000000ull < start_real_ns) {
            snprintf(why, whysz, "%.400s is older than the process (another process with pid %ld)",
                     cand[i], pid);
            return -ESTALE;
        }
        FILE *f = fopen(cand[i], "re");
        if (!f)
            continue;
        mw_perfmap *m = calloc(1, sizeof *m);
        if (!m) {
            fclose(f);
            return -ENOMEM;
        }
        snprintf(m->path, sizeof m->path, "%.4000s", cand[i]);
        parse(f, m);
        fclose(f);
        *out = m;
        return 0;
    }
    snprintf(why, whysz, "no %.400s (nor perf-%ld.map beside the raw file)", cand[nc - 1], pid);
    return -ENOENT;
}

const char *mw_perfmap_path(const mw_perfmap *m) { return m->path; }

const char *mw_perfmap_find(const mw_perfmap *m, uint64_t addr)
{
    if (!m || !m->n)
        return NULL;
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->v[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* the latest entry that covers addr, among the nearest starts below it */
    const pm_ent *best = NULL;
    for (size_t k = lo, tries = 0; k > 0 && tries < 64; k--, tries++) {
        const pm_ent *e = &m->v[k - 1];
        if (addr < e->end && (!best || e->seq > best->seq))
            best = e;
    }
    return best ? best->name : NULL;
}

void mw_perfmap_free(mw_perfmap *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].name);
    free(m->v);
    free(m);
}

int mw_perfmap_cut_note(sqlite3 *db, int64_t proc_id, uint64_t cut, uint64_t first)
{
    if (!cut)
        return 0;
    /* a word whose bytes are printable text (0x202020005153414e: "NASQ\0   ")
     * is said to be so: the usual such word */
    char text[40] = "";
    int printable = 0, zero = 0;
    for (int i = 0; i < 8; i++) {
        unsigned char b = (unsigned char)(first >> (8 * i));
        printable += b >= 0x20 && b < 0x7f;
        zero += b == 0;
    }
    if (printable >= 4 && printable + zero == 8)
        snprintf(text, sizeof text, ", bytes of text");
    char buf[1400];
    snprintf(buf, sizeof buf,
             "%llu stack(s) reached a return address where no code lies (in no loaded object,"
             " and no perf map names it, or in a loaded object's data; first 0x%llx%s: a word"
             " of the stack taken for a return address): each ends there and counts as"
             " truncated, its outer callers unknown",
             (unsigned long long)cut, (unsigned long long)first, text);
    return ing_db_note(db, "name_notes", proc_id, buf);
}

int mw_perfmap_note(sqlite3 *db, int64_t proc_id, const mw_perfmap *m, const char *why,
                    uint64_t anon, uint64_t named)
{
    char buf[1200];
    if (!anon)
        return 0;
    if (!m)
        snprintf(buf, sizeof buf,
                 "%llu code address(es) lie in no loaded object (JIT-compiled or generated code),"
                 " and no perf map names them: %.700s. Runtimes write one when asked: node"
                 " --perf-basic-prof, python3.12 -X perf, Java with a perf map agent",
                 (unsigned long long)anon, why && why[0] ? why : "none found");
    else if (named < anon)
        snprintf(buf, sizeof buf,
                 "%llu of %llu code address(es) in no loaded object are not in %.1000s (%zu entries)",
                 (unsigned long long)(anon - named), (unsigned long long)anon, m->path, m->n);
    else
        snprintf(buf, sizeof buf, "%llu code address(es) in no loaded object named from %.1000s",
                 (unsigned long long)anon, m->path);
    return ing_db_note(db, "name_notes", proc_id, buf);
}
