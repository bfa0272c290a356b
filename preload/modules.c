/*
 * preload/modules.c: loaded objects as MWR_MODULE records (path, load bias,
 * address range, GNU build-id), all of them at start and the new ones as they
 * appear (dlopen): the interval thread compares the loader's dlpi_adds
 * counter each interval, which costs one dl_iterate_phdr callback.
 *
 * dlopen itself is deliberately not interposed: glibc resolves a relative
 * dlopen against the RUNPATH of the calling object, found from the return
 * address, and a wrapper would make libmemwatch.so that caller.
 *
 * Threading: a private mutex (never held by application code) serializes
 * scans; not async-signal-safe (dl_iterate_phdr takes the loader's lock).
 */
#include "modules.h"

#include "lazy.h"
#include "process.h"
#include "sys.h"
#include "util.h"
#include "writer.h"

#include <memwatch/mwr_frame.h>

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

struct mod_seen {
    uint64_t base, hash;
};
static struct mod_seen *mod_tab;
static size_t mod_n, mod_cap;
static unsigned long long mod_adds = ~0ull;
static pthread_mutex_t mod_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t mod_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int mod_seen_add(uint64_t base, uint64_t hash)
{
    for (size_t i = 0; i < mod_n; i++)
        if (mod_tab[i].base == base && mod_tab[i].hash == hash)
            return 0;
    if (mod_n == mod_cap) {
        size_t ncap = mod_cap ? mod_cap * 2 : 256;
        long p = syscall(SYS_mmap, NULL, ncap * sizeof *mod_tab, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p < 0 && p > -4096)
            return 1; /* cannot remember: emit anyway (a duplicate is harmless) */
        struct mod_seen *n = (struct mod_seen *)p;
        if (mod_tab) {
            memcpy(n, mod_tab, mod_n * sizeof *mod_tab);
            syscall(SYS_munmap, mod_tab, mod_cap * sizeof *mod_tab);
        }
        mod_tab = n;
        mod_cap = ncap;
    }
    mod_tab[mod_n].base = base;
    mod_tab[mod_n].hash = hash;
    mod_n++;
    return 1;
}

static void mod_build_id(const struct dl_phdr_info *info, mwr_module *m)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
        const char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof *n;
            const char *desc = name + ((n->n_namesz + 3) & ~3u);
            const char *next = desc + ((n->n_descsz + 3) & ~3u);
            if (next > end)
                break;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
                size_t k = n->n_descsz < sizeof m->build_id ? n->n_descsz : sizeof m->build_id;
                memcpy(m->build_id, desc, k);
                m->build_id_size = (uint8_t)k;
                return;
            }
            p = next;
        }
    }
}

struct mod_ctx {
    int force, first, stop;
    char *buf;          /* mwp_modules_collect: whole records go here instead of the file */
    size_t cap, len;
    uint64_t nrec;
    int full;
};

static int mod_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct mod_ctx *c = arg;
    if (c->first) {
        c->first = 0;
        if (size >= offsetof(struct dl_phdr_info, dlpi_subs) && !c->force &&
            info->dlpi_adds == mod_adds)
            return 1; /* nothing new */
        if (size >= offsetof(struct dl_phdr_info, dlpi_subs))
            mod_adds = info->dlpi_adds;
    }
    const char *path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : mwp_exe_file();
    if (!c->buf && !mod_seen_add(info->dlpi_addr, mod_hash(path)))
        return 0;
    mwr_module m;
    memset(&m, 0, sizeof m);
    m.time_ns = mwp_now_ns();
    m.base = info->dlpi_addr;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uint64_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
        if (s < lo)
            lo = s;
        if (e > hi)
            hi = e;
    }
    m.start = lo == UINT64_MAX ? 0 : lo;
    m.end = hi;
    mod_build_id(info, &m);
    m.path_len = (uint32_t)strlen(path);
    if (c->buf) {
        mwr_rec_hdr h = mwr_rec_hdr_make(MWR_MODULE, sizeof m + m.path_len);
        if (c->len + h.size > c->cap) {
            c->full = 1;
            return 1;
        }
        char *o = c->buf + c->len;
        memcpy(o, &h, sizeof h);
        memcpy(o + sizeof h, &m, sizeof m);
        memcpy(o + sizeof h + sizeof m, path, m.path_len);
        memset(o + sizeof h + sizeof m + m.path_len, 0, h.size - sizeof h - sizeof m - m.path_len);
        c->len += h.size;
        c->nrec++;
        return 0;
    }
    struct iovec v[2] = {{&m, sizeof m}, {(void *)path, m.path_len}};
    mwp_write(MWR_MODULE, v, 2);
    return 0;
}

static void maps_scan(void);
static int maps_done; /* this image's files mapped as data were listed */

void mwp_modules_scan(int force)
{
    if (pthread_mutex_trylock(&mod_lock))
        return; /* another scan is under way */
    struct mod_ctx c = {force, 1, 0, NULL, 0, 0, 0, 0};
    dl_iterate_phdr(mod_cb, &c);
    if (!maps_done && atomic_load(&mwp_lazy.begun)) { /* (records are written from then on) */
        maps_done = 1;
        maps_scan();
    }
    pthread_mutex_unlock(&mod_lock);
}

/* Every loaded object as whole MWR_MODULE records in buf (a process that
 * ends before it began, with allocation records to keep: its segment of the
 * shared file of short processes, writer.c). Returns the bytes used, -1
 * where buf is too small. */
long mwp_modules_collect(char *buf, size_t cap, uint64_t *nrec)
{
    if (pthread_mutex_trylock(&mod_lock))
        return -1;
    struct mod_ctx c = {1, 0, 0, buf, cap, 0, 0, 0};
    dl_iterate_phdr(mod_cb, &c);
    pthread_mutex_unlock(&mod_lock);
    *nrec = c.nrec;
    return c.full ? -1 : (long)c.len;
}

/* ---- files mapped as data ---- */

static void data_file_emit(uint64_t start, uint64_t end, uint64_t off, const char *path, size_t n)
{
    mwr_module m;
    memset(&m, 0, sizeof m);
    m.time_ns = mwp_now_ns();
    m.start = start;
    m.end = end;
    m.base = start - off;
    m.flags = MWR_MODULE_DATA_FILE;
    m.path_len = (uint32_t)n;
    struct iovec v[2] = {{&m, sizeof m}, {(void *)path, n}};
    mwp_write(MWR_MODULE, v, 2);
}

/* One line of /proc/self/maps: "start-end perms offset dev inode   path" */
struct maps_line {
    uint64_t start, end, off;
    int exec;
    const char *path;
    size_t plen;
};

static int maps_parse(const char *l, const char *end, struct maps_line *o)
{
    o->start = mwp_parse_hex(&l, end);
    if (l >= end || *l++ != '-')
        return 0;
    o->end = mwp_parse_hex(&l, end);
    if (l < end && *l == ' ')
        l++;
    if (l + 5 > end)
        return 0;
    o->exec = l[2] == 'x';
    l += 5;
    o->off = mwp_parse_hex(&l, end);
    for (int field = 0; field < 2 && l < end; field++) { /* dev, inode */
        while (l < end && *l == ' ')
            l++;
        while (l < end && *l != ' ')
            l++;
    }
    while (l < end && *l == ' ')
        l++;
    o->path = l;
    o->plen = (size_t)(end - l);
    return 1;
}

/* Every file /proc/self/maps shows mapped as data (MWR_MODULE_DATA_FILE
 * records, for the report's data objects), once, when recording begins. */
static void maps_scan(void)
{
    enum { CAP = 1 << 20, NX = 512 };
    long p = mwp_syscall(SYS_mmap, NULL, CAP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                         -1, 0);
    if (p < 0 && p > -4096)
        return;
    char *buf = (char *)p;
    int fd = (int)mwp_syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    size_t len = 0;
    if (fd >= 0) {
        long n;
        while (len < CAP && (n = mwp_syscall(SYS_read, fd, buf + len, CAP - len)) > 0)
            len += (size_t)n;
        mwp_syscall(SYS_close, fd);
    }
    /* the files that are mapped executable somewhere are loaded objects:
     * their data segments are the modules' (statics), not data files */
    uint64_t xh[NX];
    unsigned nx = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < len;) {
            /* libc's memchr: pure, async-signal-safe in practice, and the
             * newline search was most of the scan's instructions */
            const char *nl = memchr(buf + i, '\n', len - i);
            size_t j = nl ? (size_t)(nl - buf) : len;
            struct maps_line ml;
            if (maps_parse(buf + i, buf + j, &ml) && ml.plen && ml.path[0] == '/') {
                uint64_t h = 1469598103934665603ull;
                for (size_t k = 0; k < ml.plen; k++)
                    h = (h ^ (unsigned char)ml.path[k]) * 1099511628211ull;
                if (pass == 0 && ml.exec && nx < NX) {
                    xh[nx++] = h;
                } else if (pass == 1 && !ml.exec) {
                    int loaded = 0;
                    for (unsigned k = 0; k < nx && !loaded; k++)
                        loaded = xh[k] == h;
                    if (!loaded)
                        data_file_emit(ml.start, ml.end, ml.off, ml.path, ml.plen);
                }
            }
            i = j + 1;
        }
    }
    mwp_syscall(SYS_munmap, buf, CAP);
}

void mwp_maps_note(int fd, const void *addr, size_t len, long off)
{
    char link[40], path[512];
    struct mwp_str s = {link, sizeof link - 1, 0};
    mwp_s_str(&s, "/proc/self/fd/");
    mwp_s_u64(&s, (uint64_t)fd);
    link[s.len] = 0;
    long n = mwp_syscall(SYS_readlinkat, AT_FDCWD, link, path, sizeof path);
    if (n <= 0 || path[0] != '/')
        return;
    data_file_emit((uint64_t)(uintptr_t)addr, (uint64_t)(uintptr_t)addr + len, (uint64_t)off, path,
                   (size_t)n);
}

void mwp_modules_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&mod_lock, &fresh, sizeof fresh);
    mod_n = 0;
    mod_adds = ~0ull;
    maps_done = 0;
}

/* ---- which object holds an address ---- */

struct obj_query {
    uintptr_t addr;
    const char *name;
};

static int obj_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct obj_query *q = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = (uintptr_t)info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && q->addr >= lo && q->addr - lo < ph->p_memsz) {
            q->name = info->dlpi_name ? info->dlpi_name : "";
            return 1;
        }
    }
    return 0;
}

const char *mwp_object_of(const void *addr)
{
    struct obj_query q = {(uintptr_t)addr, NULL};
    dl_iterate_phdr(obj_cb, &q);
    return q.name;
}
