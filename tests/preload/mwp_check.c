/*
 * tests/preload/mwp_check.c: a small, independent reader of memwatch raw
 * files (docs/raw-format.md) for the preload tests. For each file given (or
 * each memwatch-*.mwr in a directory) it prints one line of key=value facts
 * per process (the shared file of short processes, memwatch-HOST-short.mwr,
 * holds several: its K-th from 2 on is named NAME#K):
 *
 *   file=NAME ok=1 cut=0 trailer=1 status=0 end=exit pid=.. ppid=.. origin=exec exe=..
 *   intervals=.. lat=.. shared=.. bw=.. uncal=.. samples=.. lost=.. perfdata=.. kernel_samples=..
 *   tstart=.. texit=.. tname=.. allocs=.. frees=.. modules=.. buildids=.. logs=..
 *   alloc_frames=.. dropped=..   (alloc_frames: return addresses, plus one per
 *   allocation that carries registers and a stack copy instead)
 *
 * ok=0 means the file is not a memwatch file or a record is malformed before
 * the end; cut=1 means it ends inside a record (read up to the last whole one).
 * The last line sums up: "total files=N ok=N trailers=N on_disk=R" (N
 * processes, R files).
 * Exit status: 0 when every file is ok, 1 otherwise, 2 on usage errors.
 */
#include <memwatch/mwr.h>

#include <dirent.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct facts {
    int ok, cut, trailer;
    int status;
    char end[32], pid[16], ppid[16], origin[16], exe[64];
    unsigned long intervals, lat, shared, bw, uncal, samples, lost, perfdata, ksamples;
    unsigned long tstart, texit, tname, allocs, frees, modules, buildids, logs, frames, dropped, gpu;
    unsigned long nrec; /* records before the trailer, which counts them too */
};

static void meta_get(const char *t, size_t n, const char *key, char *out, size_t cap)
{
    size_t k = strlen(key);
    for (size_t i = 0; i < n;) {
        size_t e = i;
        while (e < n && t[e] != '\n')
            e++;
        if (e - i > k && !memcmp(t + i, key, k) && t[i + k] == '=') {
            size_t l = e - i - k - 1;
            if (l >= cap)
                l = cap - 1;
            memcpy(out, t + i + k + 1, l);
            out[l] = 0;
        }
        i = e + 1;
    }
}

/* One process of the file from byte *start (0: the first); *start is set to
 * where the next one begins (the shared file of short processes holds one
 * process after another, each ending with its trailer), or 0. */
static int check_file(const char *path, struct facts *f, size_t *start)
{
    size_t from = *start;
    *start = 0;
    memset(f, 0, sizeof *f);
    f->status = -99999;
    strcpy(f->end, "-");
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return -1;
    fseek(fp, 0, SEEK_END);
    long len = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *b = malloc(len > 0 ? (size_t)len : 1);
    if (!b || fread(b, 1, (size_t)len, fp) != (size_t)len) {
        fclose(fp);
        free(b);
        return -1;
    }
    fclose(fp);
    mwr_file_header h;
    if (len < (long)sizeof h) {
        free(b);
        return 0;
    }
    memcpy(&h, b, sizeof h);
    if (memcmp(h.magic, MWR_MAGIC, 8) || h.version_major != MWR_VERSION_MAJOR ||
        h.header_size != sizeof h) {
        free(b);
        return 0;
    }
    f->ok = 1;
    size_t off = from ? from : sizeof h;
    while (off < (size_t)len && !f->trailer) {
        mwr_rec_hdr r;
        if ((size_t)len - off < sizeof r) {
            f->cut = 1;
            break;
        }
        memcpy(&r, b + off, sizeof r);
        if (r.size < sizeof r || (r.size & 7)) {
            f->ok = 0;
            break;
        }
        if (r.size > (size_t)len - off) {
            f->cut = 1;
            break;
        }
        const unsigned char *p = b + off + sizeof r;
        size_t pl = r.size - sizeof r;
        if (r.type != MWR_TRAILER)
            f->nrec++;
        switch (r.type) {
        case MWR_META: {
            const char *t = (const char *)p;
            size_t n = strnlen(t, pl);
            meta_get(t, n, "end", f->end, sizeof f->end);
            meta_get(t, n, "pid", f->pid, sizeof f->pid);
            meta_get(t, n, "ppid", f->ppid, sizeof f->ppid);
            meta_get(t, n, "origin", f->origin, sizeof f->origin);
            char exe[4096] = "";
            meta_get(t, n, "exe", exe, sizeof exe);
            if (exe[0]) {
                const char *bn = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
                snprintf(f->exe, sizeof f->exe, "%.*s", (int)sizeof f->exe - 1, bn); /* cut */
                for (char *q = f->exe; *q; q++)
                    if (*q == ' ')
                        *q = '_';
            }
            break;
        }
        case MWR_INTERVAL: {
            mwr_interval iv;
            if (pl < sizeof iv) {
                f->ok = 0;
                break;
            }
            memcpy(&iv, p, sizeof iv);
            f->intervals++;
            f->lat += !!(iv.flags & MWR_IV_LAT_VALID);
            f->bw += !!(iv.flags & MWR_IV_BW_BOUND);
            f->uncal += !!(iv.flags & MWR_IV_UNCALIBRATED);
            f->shared += !!(iv.flags & MWR_IV_LAT_SHARED);
            f->samples += iv.samples;
            f->lost += iv.lost;
            break;
        }
        case MWR_PERF_DATA: {
            f->perfdata++;
            size_t o = sizeof(mwr_perf_data);
            while (o + sizeof(struct perf_event_header) <= pl) {
                struct perf_event_header ph;
                memcpy(&ph, p + o, sizeof ph);
                if (ph.size < sizeof ph || o + ph.size > pl) {
                    f->ok = 0;
                    break;
                }
                if (ph.type == PERF_RECORD_SAMPLE)
                    f->ksamples++;
                o += ph.size;
            }
            break;
        }
        case MWR_THREAD: {
            mwr_thread t;
            if (pl < sizeof t) {
                f->ok = 0;
                break;
            }
            memcpy(&t, p, sizeof t);
            f->tstart += t.event == MWR_THREAD_START;
            f->texit += t.event == MWR_THREAD_EXIT;
            f->tname += t.event == MWR_THREAD_NAME;
            break;
        }
        case MWR_ALLOC: {
            mwr_alloc a;
            if (pl < sizeof a) {
                f->ok = 0;
                break;
            }
            memcpy(&a, p, sizeof a);
            if (sizeof a + a.nframes * 8u > pl)
                f->ok = 0;
            f->allocs++;
            f->frames += a.nframes;
            if (a.kind & MWR_A_STACK) {
                /* registers and a stack copy instead of return addresses:
                 * counted as one frame (a call site the report unwinds) */
                mwr_alloc_stack st;
                size_t at = sizeof a + a.nframes * 8u;
                if (at + sizeof st > pl) {
                    f->ok = 0;
                    break;
                }
                memcpy(&st, p + at, sizeof st);
                at += sizeof st + 8u * (size_t)__builtin_popcountll(st.regs_mask);
                if (at > pl || st.stack_size > pl - at || st.stack_size == 0)
                    f->ok = 0;
                f->frames++;
            }
            break;
        }
        case MWR_FREE:
            f->frees++;
            break;
        case MWR_MODULE: {
            mwr_module m;
            if (pl < sizeof m) {
                f->ok = 0;
                break;
            }
            memcpy(&m, p, sizeof m);
            f->modules++;
            f->buildids += m.build_id_size > 0;
            break;
        }
        case MWR_LOG:
            f->logs++;
            break;
        case MWR_GPU_KERNEL:
        case MWR_GPU_SAMPLE:
        case MWR_GPU_PC:
        case MWR_GPU_META:
            f->gpu++;
            break;
        case MWR_TRAILER: {
            mwr_trailer t;
            if (pl < sizeof t) {
                f->ok = 0;
                break;
            }
            memcpy(&t, p, sizeof t);
            f->trailer = 1;
            if (t.records != f->nrec) {
                fprintf(stderr, "%s: the trailer counts %llu records, the file holds %lu\n", path,
                        (unsigned long long)t.records, f->nrec);
                f->ok = 0;
            }
            f->status = t.exit_status;
            f->dropped = t.dropped_records + t.alloc_dropped;
            break;
        }
        default:
            break;
        }
        off += r.size;
    }
    if (f->trailer && off < (size_t)len)
        *start = off;
    free(b);
    return 0;
}

static unsigned n_files, n_ok, n_trailers, n_raw;

/* One line per process: a file's name, or NAME#K for the K-th process (from
 * 2) of the shared file of short processes. */
static void report(const char *path)
{
    n_raw++;
    size_t start = 0;
    for (unsigned k = 1;; k++) {
        struct facts f;
        if (check_file(path, &f, &start) < 0) {
            printf("file=%s ok=0 unreadable=1\n", path);
            n_files++;
            return;
        }
        const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        char seg[24] = "";
        if (k > 1)
            snprintf(seg, sizeof seg, "#%u", k);
        printf("file=%s%s ok=%d cut=%d trailer=%d status=%d end=%s pid=%s ppid=%s origin=%s "
               "exe=%s intervals=%lu lat=%lu shared=%lu bw=%lu uncal=%lu samples=%lu lost=%lu "
               "perfdata=%lu kernel_samples=%lu tstart=%lu texit=%lu tname=%lu allocs=%lu "
               "frees=%lu modules=%lu buildids=%lu logs=%lu alloc_frames=%lu dropped=%lu gpu=%lu\n",
               name, seg, f.ok, f.cut, f.trailer, f.status, f.end, f.pid[0] ? f.pid : "-",
               f.ppid[0] ? f.ppid : "-", f.origin[0] ? f.origin : "-", f.exe[0] ? f.exe : "-",
               f.intervals, f.lat, f.shared, f.bw, f.uncal, f.samples, f.lost, f.perfdata,
               f.ksamples, f.tstart, f.texit, f.tname, f.allocs, f.frees, f.modules, f.buildids,
               f.logs, f.frames, f.dropped, f.gpu);
        n_files++;
        n_ok += f.ok;
        n_trailers += f.trailer;
        if (!start)
            return;
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: mwp_check FILE.mwr|DIR...\n");
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            DIR *d = opendir(argv[i]);
            struct dirent *e;
            while (d && (e = readdir(d))) {
                size_t n = strlen(e->d_name);
                if (strncmp(e->d_name, "memwatch-", 9) || n < 4 || strcmp(e->d_name + n - 4, ".mwr"))
                    continue;
                char p[4096];
                snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
                report(p);
            }
            if (d)
                closedir(d);
        } else {
            report(argv[i]);
        }
    }
    /* files: processes (one per line); on_disk: files on disk */
    printf("total files=%u ok=%u trailers=%u on_disk=%u\n", n_files, n_ok, n_trailers, n_raw);
    return n_ok == n_files ? 0 : 1;
}
