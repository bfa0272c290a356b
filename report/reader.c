/*
 * report/reader.c: the .mwr raw reader (include/memwatch/mwr_reader.h).
 *
 * Owns: validation of the file header and of every record frame (size >= 8,
 * a multiple of 8, inside the file), the trailer check, and the typed payload
 * copies. A damaged file yields every whole record before the damage and a
 * sentence naming the offset; nothing here reads outside the mapping.
 * May call: libc, mmap. Threading: a reader is used by one thread at a time.
 */
#include <memwatch/mwr_gpu.h>
#include <memwatch/mwr_reader.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct mw_reader {
    const unsigned char *base;
    size_t len;
    size_t pos;
    int mapped;
    int done;          /* 1 clean end, MW_ERR_CORRUPT after damage */
    int have_trailer;
    mwr_trailer trailer;
    unsigned major, minor;
    char status[200];
    /* the MWR_STACK records of the process being read (format 1.1), found
     * by one pass over its records at the first allocation that names one:
     * ids sorted, with the offset of each record */
    size_t seg_start;
    int stacks_read;
    size_t nstacks;
    struct reader_stack { uint32_t id; uint32_t nframes; size_t at; } *stacks;
    struct mw_reader *next_open;
};

/* The open readers, so that an allocation record that names a stack id
 * finds the file it lies in (by address: the readers' memory is disjoint). */
static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;
static mw_reader *open_list;

static void reader_register(mw_reader *r)
{
    pthread_mutex_lock(&open_mu);
    r->next_open = open_list;
    open_list = r;
    pthread_mutex_unlock(&open_mu);
}

static void reader_unregister(mw_reader *r)
{
    pthread_mutex_lock(&open_mu);
    for (mw_reader **p = &open_list; *p; p = &(*p)->next_open)
        if (*p == r) {
            *p = r->next_open;
            break;
        }
    pthread_mutex_unlock(&open_mu);
}

static mw_reader *reader_of(const void *payload)
{
    const unsigned char *a = payload;
    pthread_mutex_lock(&open_mu);
    mw_reader *r = open_list;
    while (r && !(r->len && a >= r->base && a < r->base + r->len))
        r = r->next_open;
    pthread_mutex_unlock(&open_mu);
    return r;
}

static int reader_init(mw_reader *r)
{
    mwr_file_header h;
    if (r->len < sizeof h) {
        snprintf(r->status, sizeof r->status,
                 "not a memwatch raw file: %zu bytes, shorter than the %zu-byte header", r->len,
                 sizeof h);
        return MW_ERR_CORRUPT;
    }
    memcpy(&h, r->base, sizeof h);
    if (memcmp(h.magic, MWR_MAGIC, 8) != 0) {
        snprintf(r->status, sizeof r->status, "not a memwatch raw file: wrong magic");
        return MW_ERR_CORRUPT;
    }
    r->major = h.version_major;
    r->minor = h.version_minor;
    if (h.version_major != MWR_VERSION_MAJOR) {
        snprintf(r->status, sizeof r->status,
                 "raw format version %u.%u, this memwatch reads %u.x", h.version_major,
                 h.version_minor, MWR_VERSION_MAJOR);
        return MW_ERR_FOREIGN;
    }
    if (h.header_size < sizeof h || h.header_size > r->len || (h.header_size & 7)) {
        snprintf(r->status, sizeof r->status, "corrupt header: header_size %u", h.header_size);
        return MW_ERR_CORRUPT;
    }
    r->pos = h.header_size;
    r->seg_start = r->pos;
    return 0;
}

int mw_reader_open_mem(const void *buf, size_t len, mw_reader **out)
{
    *out = NULL;
    mw_reader *r = calloc(1, sizeof *r);
    if (!r)
        return -ENOMEM;
    r->base = buf;
    r->len = len;
    int rc = reader_init(r);
    if (rc) {
        mw_log(MW_LOG_WARN, "%s", r->status);
        free(r);
        return rc;
    }
    reader_register(r);
    *out = r;
    return 0;
}

int mw_reader_open(const char *path, mw_reader **out)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    int rc = 0;
    void *map = NULL;
    mw_reader *r = NULL;
    if (fstat(fd, &st) < 0) {
        rc = -errno;
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = -EINVAL;
        goto out;
    }
    r = calloc(1, sizeof *r);
    if (!r) {
        rc = -ENOMEM;
        goto out;
    }
    if (st.st_size > 0) {
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            rc = -errno;
            goto out;
        }
        r->mapped = 1;
    }
    r->base = map;
    r->len = (size_t)st.st_size;
    rc = reader_init(r);
    if (rc)
        mw_log(MW_LOG_WARN, "%s: %s", path, r->status);
out:
    close(fd);
    if (rc) {
        if (r && r->mapped)
            munmap((void *)r->base, r->len);
        free(r);
        return rc;
    }
    reader_register(r);
    *out = r;
    return 0;
}

void mw_reader_close(mw_reader *r)
{
    if (!r)
        return;
    reader_unregister(r);
    if (r->mapped)
        munmap((void *)r->base, r->len);
    free(r->stacks);
    free(r);
}

int mw_reader_next(mw_reader *r, mw_record *rec)
{
    if (r->done)
        return r->done < 0 ? r->done : 0;
    size_t left = r->len - r->pos;
    if (left == 0) {
        r->done = 1;
        if (!r->have_trailer)
            snprintf(r->status, sizeof r->status,
                     "no trailer at byte %zu: the process did not end normally (crash, kill or "
                     "still running); records up to here are whole",
                     r->pos);
        return 0;
    }
    if (r->have_trailer) {
        /* Bytes after the trailer: a second writer or garbage. Stop here. */
        snprintf(r->status, sizeof r->status, "%zu bytes after the trailer at byte %zu ignored",
                 left, r->pos);
        r->done = 1;
        return 0;
    }
    mwr_rec_hdr h;
    if (left < sizeof h) {
        snprintf(r->status, sizeof r->status,
                 "truncated at byte %zu: %zu bytes left, less than a record header", r->pos,
                 left);
        r->done = MW_ERR_CORRUPT;
        return r->done;
    }
    memcpy(&h, r->base + r->pos, sizeof h);
    if (h.size < sizeof h || (h.size & 7) || h.type == 0) {
        snprintf(r->status, sizeof r->status,
                 "corrupt record at byte %zu: type %u, size %u (size must be >= 8 and a "
                 "multiple of 8)",
                 r->pos, h.type, h.size);
        r->done = MW_ERR_CORRUPT;
        return r->done;
    }
    if (h.size > left) {
        snprintf(r->status, sizeof r->status,
                 "truncated at byte %zu: record of type %u and %u bytes, only %zu left", r->pos,
                 h.type, h.size, left);
        r->done = MW_ERR_CORRUPT;
        return r->done;
    }
    rec->type = h.type;
    rec->size = h.size;
    rec->offset = r->pos;
    rec->payload = r->base + r->pos + sizeof h;
    rec->payload_len = h.size - sizeof h;
    if (h.type == MWR_TRAILER) {
        mwr_trailer t;
        if (mw_rec_trailer(rec, &t) != 0) {
            snprintf(r->status, sizeof r->status, "corrupt trailer at byte %zu (%u bytes)",
                     r->pos, h.size);
            r->done = MW_ERR_CORRUPT;
            return r->done;
        }
        r->have_trailer = 1;
        r->trailer = t;
    }
    r->pos += h.size;
    return 1;
}

int mw_reader_next_segment(mw_reader *r)
{
    if (!r->have_trailer || r->done < 0 || r->pos >= r->len)
        return 0;
    r->have_trailer = 0;
    r->done = 0;
    r->status[0] = 0;
    r->seg_start = r->pos;
    r->stacks_read = 0;
    r->nstacks = 0;
    return 1;
}

int mw_reader_segment_follows(const mw_reader *r)
{
    return r->have_trailer && r->done >= 0 && r->pos < r->len;
}

int mw_reader_trailer(const mw_reader *r, mwr_trailer *t)
{
    if (r->have_trailer && t)
        *t = r->trailer;
    return r->have_trailer;
}

const char *mw_reader_status(const mw_reader *r) { return r->status; }

void mw_reader_version(const mw_reader *r, unsigned *major, unsigned *minor)
{
    *major = r->major;
    *minor = r->minor;
}

uint64_t mw_reader_size(const mw_reader *r) { return r->len; }
uint64_t mw_reader_pos(const mw_reader *r) { return r->pos; }

/* Copy a payload: at least `need` bytes required, up to `cap` copied, rest 0. */
static int copy_fixed(const mw_record *rec, void *out, size_t need, size_t cap)
{
    if (rec->payload_len < need)
        return MW_ERR_CORRUPT;
    size_t n = rec->payload_len < cap ? rec->payload_len : cap;
    memset(out, 0, cap);
    memcpy(out, rec->payload, n);
    return 0;
}

/* A record of `type` copied to out, a struct of `size` bytes (copy_fixed
 * with need = cap = size); -EINVAL for another type. */
static int copy_typed(const mw_record *rec, uint32_t type, void *out, size_t size)
{
    return rec->type == type ? copy_fixed(rec, out, size, size) : -EINVAL;
}

/* The bytes of a payload after its struct of `head` bytes (copied by
 * copy_typed), or NULL where fewer than `need` follow. */
static const void *tail_of(const mw_record *rec, size_t head, uint64_t need)
{
    return need <= rec->payload_len - head ? (const unsigned char *)rec->payload + head : NULL;
}

int mw_rec_interval(const mw_record *rec, mwr_interval *out)
{
    int rc = copy_typed(rec, MWR_INTERVAL, out, sizeof *out);
    if (rc == 0)
        out->lat_method[sizeof out->lat_method - 1] =
            out->bw_method[sizeof out->bw_method - 1] = 0;
    return rc;
}

int mw_rec_thread(const mw_record *rec, mwr_thread *out)
{
    int rc = rec->type == MWR_THREAD
                 ? copy_fixed(rec, out, offsetof(mwr_thread, fs_base), sizeof *out)
                 : -EINVAL;
    if (rc == 0)
        out->name[sizeof out->name - 1] = 0;
    return rc;
}

static int stack_cmp(const void *a, const void *b)
{
    const struct reader_stack *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The MWR_STACK records of the process being read: every whole record from
 * its start to its trailer (or to the end or the damage), whatever the
 * position of the iteration. */
static void reader_stacks(mw_reader *r)
{
    r->stacks_read = 1;
    size_t cap = 0, pos = r->seg_start;
    while (pos + sizeof(mwr_rec_hdr) <= r->len) {
        mwr_rec_hdr h;
        memcpy(&h, r->base + pos, sizeof h);
        if (h.size < sizeof h || (h.size & 7) || h.type == 0 || h.size > r->len - pos)
            break;
        if (h.type == MWR_STACK && h.size >= sizeof h + sizeof(mwr_stack)) {
            mwr_stack st;
            memcpy(&st, r->base + pos + sizeof h, sizeof st);
            if ((size_t)st.nframes * 8 <= h.size - sizeof h - sizeof st) {
                if (r->nstacks == cap) {
                    size_t ncap = cap ? cap * 2 : 64;
                    struct reader_stack *v = realloc(r->stacks, ncap * sizeof *v);
                    if (!v)
                        break; /* allocations then go without their stacks */
                    r->stacks = v;
                    cap = ncap;
                }
                r->stacks[r->nstacks++] =
                    (struct reader_stack){st.id, st.nframes, pos + sizeof h + sizeof st};
            }
        }
        pos += h.size;
        if (h.type == MWR_TRAILER)
            break;
    }
    if (r->nstacks > 1)
        qsort(r->stacks, r->nstacks, sizeof *r->stacks, stack_cmp);
}

int mw_rec_alloc(const mw_record *rec, mwr_alloc *out, const void **frames)
{
    int rc = copy_typed(rec, MWR_ALLOC, out, sizeof *out);
    if (rc)
        return rc;
    if (!(*frames = tail_of(rec, sizeof *out, (uint64_t)out->nframes * 8)))
        return MW_ERR_CORRUPT;
    if (!(out->kind & MWR_A_STACKREF))
        return 0;
    /* format 1.1: the call chain is a STACK record of the same process */
    mwr_alloc_ref ref;
    if (out->nframes || rec->payload_len - sizeof *out < sizeof ref)
        return MW_ERR_CORRUPT;
    memcpy(&ref, (const unsigned char *)rec->payload + sizeof *out, sizeof ref);
    out->kind = (uint16_t)(out->kind & ~MWR_A_STACKREF);
    mw_reader *r = reader_of(rec->payload);
    if (!r)
        return 0; /* a record without its file: no frames */
    if (!r->stacks_read)
        reader_stacks(r);
    struct reader_stack key = {ref.stack_id, 0, 0};
    const struct reader_stack *hit =
        r->nstacks ? bsearch(&key, r->stacks, r->nstacks, sizeof key, stack_cmp) : NULL;
    if (hit) { /* else its STACK record was lost: the allocation has no frames */
        out->nframes = (uint16_t)hit->nframes;
        *frames = r->base + hit->at;
    }
    return 0;
}

int mw_rec_stack(const mw_record *rec, mwr_stack *out, const void **frames)
{
    int rc = copy_typed(rec, MWR_STACK, out, sizeof *out);
    if (rc == 0 && !(*frames = tail_of(rec, sizeof *out, (uint64_t)out->nframes * 8)))
        rc = MW_ERR_CORRUPT;
    return rc;
}

int mw_rec_alloc_stack(const mw_record *rec, const mwr_alloc *a, mwr_alloc_stack *out,
                       const void **regs, const void **stack)
{
    if (rec->type != MWR_ALLOC || !(a->kind & MWR_A_STACK))
        return -EINVAL;
    mwr_alloc raw;
    memcpy(&raw, rec->payload, sizeof raw); /* mw_rec_alloc checked its length */
    if (raw.kind & MWR_A_STACKREF)
        return MW_ERR_CORRUPT; /* a stack id and a stack copy: never written */
    size_t at = sizeof *a + (size_t)a->nframes * 8, len = rec->payload_len;
    if (at > len || len - at < sizeof *out)
        return MW_ERR_CORRUPT;
    const unsigned char *p = (const unsigned char *)rec->payload;
    memcpy(out, p + at, sizeof *out);
    at += sizeof *out;
    size_t nregs = (size_t)__builtin_popcountll(out->regs_mask);
    if ((len - at) / 8 < nregs)
        return MW_ERR_CORRUPT;
    *regs = p + at;
    at += nregs * 8;
    if (out->stack_size > len - at)
        return MW_ERR_CORRUPT;
    *stack = p + at;
    return 0;
}

int mw_rec_cpu(const mw_record *rec, mwr_cpu *out)
{
    return copy_typed(rec, MWR_CPU, out, sizeof *out);
}

int mw_rec_free(const mw_record *rec, mwr_free *out)
{
    return copy_typed(rec, MWR_FREE, out, sizeof *out);
}

int mw_rec_alloc_site(const mw_record *rec, mwr_alloc_site *out)
{
    return copy_typed(rec, MWR_ALLOC_SITE, out, sizeof *out);
}

int mw_rec_module(const mw_record *rec, mwr_module *out, const char **path)
{
    int rc = copy_typed(rec, MWR_MODULE, out, sizeof *out);
    if (rc == 0 && (!(*path = tail_of(rec, sizeof *out, out->path_len)) || out->build_id_size > 20))
        rc = MW_ERR_CORRUPT;
    return rc;
}

int mw_rec_counters(const mw_record *rec, mwr_counters *out, const void **values)
{
    int rc = copy_typed(rec, MWR_COUNTERS, out, sizeof *out);
    if (rc == 0 && !(*values = tail_of(rec, sizeof *out, (uint64_t)out->nvalues * 8)))
        rc = MW_ERR_CORRUPT;
    return rc;
}

int mw_rec_trailer(const mw_record *rec, mwr_trailer *out)
{
    return copy_typed(rec, MWR_TRAILER, out, sizeof *out);
}

int mw_rec_perf_attr(const mw_record *rec, mwr_perf_attr *out, const void **attr)
{
    int rc = copy_typed(rec, MWR_PERF_ATTR, out, sizeof *out);
    if (rc)
        return rc;
    out->name[sizeof out->name - 1] = 0;
    return (*attr = tail_of(rec, sizeof *out, out->attr_size)) ? 0 : MW_ERR_CORRUPT;
}

int mw_rec_perf_data(const mw_record *rec, mwr_perf_data *out, const void **data, size_t *len)
{
    int rc = copy_typed(rec, MWR_PERF_DATA, out, sizeof *out);
    if (rc == 0) {
        *data = tail_of(rec, sizeof *out, 0);
        *len = rec->payload_len - sizeof *out;
    }
    return rc;
}

int mw_rec_gpu_kernel(const mw_record *rec, mwr_gpu_kernel *out, const char **name)
{
    int rc = copy_typed(rec, MWR_GPU_KERNEL, out, sizeof *out);
    if (rc == 0 && !(*name = tail_of(rec, sizeof *out, out->name_len)))
        rc = MW_ERR_CORRUPT;
    return rc;
}

int mw_rec_gpu_sample(const mw_record *rec, mwr_gpu_sample *out)
{
    return copy_typed(rec, MWR_GPU_SAMPLE, out, sizeof *out);
}

int mw_rec_gpu_pc(const mw_record *rec, mwr_gpu_pc *out, const char **file, const char **func)
{
    int rc = copy_typed(rec, MWR_GPU_PC, out, sizeof *out);
    if (rc)
        return rc;
    if (!(*file = tail_of(rec, sizeof *out, (uint64_t)out->file_len + out->func_len)))
        return MW_ERR_CORRUPT;
    *func = *file + out->file_len;
    return 0;
}

int mw_rec_text(const mw_record *rec, const char **text, size_t *len)
{
    *text = rec->payload;
    *len = rec->payload_len;
    /* Writers pad text with NULs to 8 bytes: drop them. */
    while (*len && (*text)[*len - 1] == 0)
        (*len)--;
    return 0;
}
