/*
 * sampling/unwind.c: offline unwinding of user stacks with libunwind, for
 * samples that carry PERF_SAMPLE_REGS_USER + PERF_SAMPLE_STACK_USER (code
 * built without frame pointers, where the kernel's call chain stops early).
 *
 * Owns: a remote libunwind address space whose accessors read registers from
 * the sampled register set, memory from the sampled stack copy or from the
 * module files on disk (PT_LOAD segments), and unwind tables from each
 * module's .eh_frame_hdr (PT_GNU_EH_FRAME), or, in a file linked without one
 * (gcc links static programs without --eh-frame-hdr), from a search table
 * built here from its .eh_frame section's FDEs; the vDSO's from this process's
 * own vDSO (mw_vdso_image), which the ingest takes only when its build-id is
 * the recorded one. x86-64 only.
 * May call: libunwind (remote API), libc. Prints nothing. Defines
 * sigprocmask for the program (libunwind's calls while unwinding skip the
 * system call; see there).
 * Threading: an unwinder belongs to one thread at a time.
 */
#include <memwatch/symbolize.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <elf.h>
#include <link.h>
#include <sys/auxv.h>

const unsigned char *mw_vdso_image(size_t *len)
{
    *len = 0;
    const unsigned char *p = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
    if (!p)
        return NULL;
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)p;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG))
        return NULL;
    /* the kernel maps the whole file: its end is the section headers' end
     * or the end of the last segment, whichever is further */
    size_t end = (size_t)eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(p + eh->e_phoff);
    for (unsigned i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > end)
            end = ph[i].p_offset + ph[i].p_filesz;
    *len = end;
    return p;
}

#if defined(MW_HAVE_LIBUNWIND) && defined(__x86_64__)
#include <fcntl.h>
#include <libunwind.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Not in libunwind's public headers, but exported by it (perf uses it too). */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
                                              unw_dyn_info_t *di, unw_proc_info_t *pi,
                                              int need_unwind_info, void *arg);

typedef struct image {
    struct image *next;
    char *path;
    const unsigned char *map;
    size_t len;
    int mapped; /* map is ours (not this process's vDSO) */
    const Elf64_Phdr *ph;
    unsigned nph;
    uint64_t hdr_vaddr;   /* .eh_frame_hdr */
    uint64_t fde_count;
    const unsigned char *tbl; /* its search table in the mapped file, or NULL */
    int32_t *own_tbl;     /* the table built from .eh_frame (no .eh_frame_hdr), or NULL */
    const Elf64_Phdr *last_load; /* the PT_LOAD segment image_read found last */
    int ok;               /* has a usable .eh_frame_hdr */
} image;

struct mw_unwinder {
    unw_addr_space_t as;
    image *images;
    int complete; /* the last unwind reached the outermost frame */
};

typedef struct uw_arg {
    mw_unwinder *u;
    const mw_unwind_module *mods;
    size_t nmods;
    uint64_t regs_mask;
    const void *regs;
    const unsigned char *stack;
    size_t stack_size;
    uint64_t sp;
    const mw_unwind_module *last_mod; /* the module image_of found last */
    image *last_im;
    unsigned char own_entry[8]; /* the entry of an own table libunwind reads at UW_OWN_ENTRY */
} uw_arg;

/* Where libunwind reads the one search-table entry of a module whose table
 * was built here (no file holds it): an address no user module or stack
 * has (non-canonical on x86-64), served by access_mem from own_entry. */
#define UW_OWN_ENTRY 0xfff0000000000000ull

static void image_free(image *im)
{
    if (im->map && im->mapped)
        munmap((void *)im->map, im->len);
    free(im->own_tbl);
    free(im->path);
    free(im);
}

/* Decode one DW_EH_PE encoded u32-sized value of the .eh_frame_hdr. */
static int read_enc4(const unsigned char *p, unsigned enc, uint64_t at, uint64_t *out)
{
    int32_t s;
    uint32_t u;
    memcpy(&u, p, 4);
    memcpy(&s, p, 4);
    switch (enc) {
    case 0x03: *out = u; return 0;                        /* udata4 */
    case 0x0b: *out = (uint64_t)(int64_t)s; return 0;     /* sdata4 */
    case 0x1b: *out = at + (uint64_t)(int64_t)s; return 0; /* pcrel sdata4 */
    default: return -1;
    }
}

/* ---- a search table from .eh_frame, for files without .eh_frame_hdr ---- */

static uint64_t eh_uleb(const unsigned char **p, const unsigned char *end)
{
    uint64_t v = 0;
    unsigned sh = 0;
    while (*p < end) {
        unsigned char b = *(*p)++;
        if (sh < 64)
            v |= (uint64_t)(b & 0x7f) << sh;
        sh += 7;
        if (!(b & 0x80))
            break;
    }
    return v;
}

/* A DW_EH_PE encoded pointer at p (file image; at: its vaddr), absolute or
 * pc-relative; 0 and -1 for the encodings .eh_frame pointers do not use. */
static int eh_ptr(const unsigned char **p, const unsigned char *end, unsigned enc, uint64_t at,
                  uint64_t *out)
{
    uint64_t v;
    size_t n;
    switch (enc & 0x0f) {
    case 0x00: case 0x04: case 0x0c: n = 8; break; /* absptr, udata8, sdata8 */
    case 0x03: case 0x0b: n = 4; break;            /* udata4, sdata4 */
    case 0x02: case 0x0a: n = 2; break;            /* udata2, sdata2 */
    default: return -1;
    }
    if ((size_t)(end - *p) < n)
        return -1;
    if (n == 8) {
        memcpy(&v, *p, 8);
    } else if (n == 4) {
        int32_t s;
        uint32_t u;
        memcpy(&s, *p, 4);
        memcpy(&u, *p, 4);
        v = enc & 0x08 ? (uint64_t)(int64_t)s : u;
    } else {
        int16_t s;
        uint16_t u;
        memcpy(&s, *p, 2);
        memcpy(&u, *p, 2);
        v = enc & 0x08 ? (uint64_t)(int64_t)s : u;
    }
    *p += n;
    switch (enc & 0x70) {
    case 0x00: break;
    case 0x10: v += at; break; /* pcrel */
    default: return -1;
    }
    *out = v;
    return 0;
}

/* The FDE pointer encoding of the CIE at c (its length field), 0 (absptr)
 * where its augmentation has no 'R', -1 where it cannot be read. */
static int eh_cie_enc(const unsigned char *c, const unsigned char *end)
{
    uint32_t len32;
    if (end - c < 9)
        return -1;
    memcpy(&len32, c, 4);
    const unsigned char *p = c + (len32 == 0xffffffffu ? 12 : 4) + 4; /* past the CIE id */
    if (len32 == 0xffffffffu)
        p += 4; /* the 64-bit CIE id */
    if (p >= end)
        return -1;
    unsigned version = *p++;
    const char *aug = (const char *)p;
    while (p < end && *p)
        p++;
    if (p >= end)
        return -1;
    p++;
    if (strstr(aug, "eh"))
        p += 8;
    eh_uleb(&p, end); /* code alignment */
    eh_uleb(&p, end); /* data alignment (sleb: only skipped) */
    if (version == 1)
        p++;
    else
        eh_uleb(&p, end); /* return address register */
    if (aug[0] != 'z')
        return 0;
    eh_uleb(&p, end); /* augmentation data length */
    for (const char *a = aug + 1; *a && p < end; a++) {
        if (*a == 'R')
            return *p;
        if (*a == 'L') {
            p++;
        } else if (*a == 'P') {
            unsigned pe = *p++;
            uint64_t dummy;
            if (eh_ptr(&p, end, pe & 0x7f, 0, &dummy))
                return -1;
        } else if (*a != 'S' && *a != 'B' && *a != 'G') {
            return -1;
        }
    }
    return 0;
}

static int eh_cmp(const void *x, const void *y)
{
    int32_t a, b;
    memcpy(&a, x, 4);
    memcpy(&b, y, 4);
    return (a > b) - (a < b);
}

/* Build im's search table from its .eh_frame section: (initial location,
 * FDE address) pairs relative to the section's address, sorted, as in a
 * .eh_frame_hdr. Leaves im unchanged where the file has no such section. */
static void image_own_table(image *im)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)im->map;
    if (!eh->e_shoff || eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > im->len ||
        (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > im->len - eh->e_shoff ||
        eh->e_shstrndx >= eh->e_shnum)
        return;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(im->map + eh->e_shoff);
    const Elf64_Shdr *str = &sh[eh->e_shstrndx], *ef = NULL;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (str->sh_offset > im->len || sh[i].sh_name >= str->sh_size ||
            str->sh_size > im->len - str->sh_offset)
            continue;
        const char *nm = (const char *)im->map + str->sh_offset + sh[i].sh_name;
        if (sh[i].sh_type == SHT_PROGBITS && !strncmp(nm, ".eh_frame", 10) &&
            memchr(nm, 0, str->sh_size - sh[i].sh_name))
            ef = &sh[i];
    }
    if (!ef || ef->sh_offset > im->len || ef->sh_size > im->len - ef->sh_offset ||
        ef->sh_size < 8)
        return;
    const unsigned char *base = im->map + ef->sh_offset, *end = base + ef->sh_size;
    size_t cap = 0, n = 0;
    int32_t *t = NULL;
    const unsigned char *last_cie = NULL;
    int last_enc = -1;
    for (const unsigned char *p = base; end - p >= 8;) {
        uint32_t len32;
        memcpy(&len32, p, 4);
        if (!len32)
            break; /* the terminator */
        uint64_t len = len32;
        size_t hl = 4;
        if (len32 == 0xffffffffu) {
            if (end - p < 16)
                break;
            memcpy(&len, p + 4, 8);
            hl = 12;
        }
        if (len > (uint64_t)(end - p) - hl)
            break;
        const unsigned char *body = p + hl, *next = body + len;
        uint32_t id;
        memcpy(&id, body, 4);
        if (id && (uint64_t)(body - base) >= id) {
            const unsigned char *cie = body - id;
            if (cie != last_cie) {
                last_cie = cie;
                last_enc = eh_cie_enc(cie, end);
            }
            const unsigned char *q = body + 4;
            uint64_t pc;
            uint64_t at = ef->sh_addr + (uint64_t)(q - base);
            if (last_enc >= 0 && eh_ptr(&q, next, (unsigned)last_enc & 0x7f, at, &pc) == 0) {
                int64_t lo = (int64_t)(pc - ef->sh_addr);
                int64_t fo = (int64_t)(p - base);
                if (lo >= INT32_MIN && lo <= INT32_MAX) {
                    if (n == cap) {
                        size_t c = cap ? 2 * cap : 256;
                        int32_t *nt = realloc(t, c * 2 * sizeof *t);
                        if (!nt)
                            break;
                        t = nt;
                        cap = c;
                    }
                    t[2 * n] = (int32_t)lo;
                    t[2 * n + 1] = (int32_t)fo;
                    n++;
                }
            }
        }
        p = next;
    }
    if (!n) {
        free(t);
        return;
    }
    qsort(t, n, 2 * sizeof *t, eh_cmp);
    im->own_tbl = t;
    im->tbl = (const unsigned char *)t;
    im->hdr_vaddr = ef->sh_addr;
    im->fde_count = n;
    im->ok = 1;
}

static image *image_get(mw_unwinder *u, const char *path)
{
    for (image *im = u->images; im; im = im->next)
        if (!strcmp(im->path, path))
            return im;
    image *im = calloc(1, sizeof *im);
    if (!im)
        return NULL;
    im->path = strdup(path);
    im->next = u->images;
    u->images = im;
    if (!strcmp(path, MW_VDSO_NAME)) {
        im->map = mw_vdso_image(&im->len); /* the caller checked its build-id */
    } else {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0)
            return im;
        if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(Elf64_Ehdr)) {
            void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (m != MAP_FAILED) {
                im->map = m;
                im->len = (size_t)st.st_size;
                im->mapped = 1;
            }
        }
        close(fd);
    }
    if (!im->map || im->len < sizeof(Elf64_Ehdr))
        return im;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)im->map;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > im->len ||
        (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > im->len - eh->e_phoff)
        return im;
    im->ph = (const Elf64_Phdr *)(im->map + eh->e_phoff);
    im->nph = eh->e_phnum;
    for (unsigned i = 0; i < im->nph; i++) {
        const Elf64_Phdr *p = &im->ph[i];
        if (p->p_type != PT_GNU_EH_FRAME || p->p_offset > im->len || p->p_filesz < 12 ||
            p->p_filesz > im->len - p->p_offset)
            continue;
        const unsigned char *h = im->map + p->p_offset;
        uint64_t eh_frame, count;
        if (h[0] != 1 || read_enc4(h + 4, h[1], p->p_vaddr + 4, &eh_frame) ||
            read_enc4(h + 8, h[2], p->p_vaddr + 8, &count) || h[3] != 0x3b /* datarel sdata4 */)
            continue;
        if (count > (p->p_filesz - 12) / 8)
            continue;
        im->hdr_vaddr = p->p_vaddr;
        im->fde_count = count;
        im->ok = 1;
        /* the table is in the file (count checked against p_filesz above) */
        im->tbl = count ? h + 12 : NULL;
    }
    if (!im->ok)
        image_own_table(im);
    return im;
}

/* Read 8 bytes of a module's file image at vaddr (relative to its bias);
 * the segment of the previous read is tried first. */
static int image_read(image *im, uint64_t vaddr, uint64_t *out)
{
    const Elf64_Phdr *p = im->last_load;
    if (!p || vaddr < p->p_vaddr || vaddr + 8 > p->p_vaddr + p->p_filesz) {
        p = NULL;
        for (unsigned i = 0; im->ph && i < im->nph; i++) {
            const Elf64_Phdr *q = &im->ph[i];
            if (q->p_type == PT_LOAD && vaddr >= q->p_vaddr &&
                vaddr + 8 <= q->p_vaddr + q->p_filesz) {
                p = q;
                break;
            }
        }
        if (!p)
            return -1;
        im->last_load = p;
    }
    uint64_t off = p->p_offset + (vaddr - p->p_vaddr);
    if (off > im->len || im->len - off < 8)
        return -1;
    memcpy(out, im->map + off, 8);
    return 0;
}

static const mw_unwind_module *mod_of(const uw_arg *a, uint64_t addr)
{
    for (size_t i = 0; i < a->nmods; i++)
        if (addr >= a->mods[i].start && addr < a->mods[i].end)
            return &a->mods[i];
    return NULL;
}

/* The image of a module: the last one again (an unwind table's binary search
 * reads one module many times), else by path (image_get compares the path
 * with every image opened so far: 14% of a build's report before). */
static image *image_of(uw_arg *a, const mw_unwind_module *m)
{
    if (m != a->last_mod) {
        a->last_im = image_get(a->u, m->path);
        a->last_mod = m;
    }
    return a->last_im;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
                          int need_unwind_info, void *arg)
{
    uw_arg *a = arg;
    const mw_unwind_module *m = mod_of(a, ip);
    if (!m || !m->path)
        return -UNW_ENOINFO;
    image *im = image_of(a, m);
    if (!im || !im->ok)
        return -UNW_ENOINFO;
    /* The binary search of .eh_frame_hdr's table (initial location, FDE:
     * sdata4 pairs relative to the header, sorted) here, in the mapped file;
     * libunwind gets the one entry found. Through its own search each probe
     * was two access_mem calls (a tenth of a build's report). */
    uint64_t idx = 0;
    const unsigned char *tbl = im->tbl;
    if (tbl) {
        int64_t key = (int64_t)(ip - m->base - im->hdr_vaddr);
        uint64_t lo = 0, hi = im->fde_count;
        while (hi - lo > 1) {
            uint64_t mid = lo + (hi - lo) / 2;
            int32_t loc;
            memcpy(&loc, tbl + mid * 8, 4);
            if ((int64_t)loc <= key)
                lo = mid;
            else
                hi = mid;
        }
        int32_t loc0;
        memcpy(&loc0, tbl + lo * 8, 4);
        if ((int64_t)loc0 > key)
            return -UNW_ENOINFO;
        idx = lo;
    }
    unw_dyn_info_t di;
    memset(&di, 0, sizeof di);
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.start_ip = m->start;
    di.end_ip = m->end;
    di.u.rti.segbase = m->base + im->hdr_vaddr;
    di.u.rti.table_data = m->base + im->hdr_vaddr + 12 + (tbl ? idx * 8 : 0);
    if (im->own_tbl) { /* no file holds this table: access_mem serves the entry */
        memcpy(a->own_entry, tbl + idx * 8, 8);
        di.u.rti.table_data = UW_OWN_ENTRY;
    }
    di.u.rti.table_len = (tbl ? 1 : im->fde_count) * 8 / sizeof(unw_word_t);
    return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_unwind_info, arg);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
    (void)as;
    (void)pi;
    (void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dil, void *arg)
{
    (void)as;
    (void)dil;
    (void)arg;
    return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write,
                      void *arg)
{
    (void)as;
    uw_arg *a = arg;
    if (write)
        return -UNW_EINVAL;
    if (addr == UW_OWN_ENTRY) {
        memcpy(val, a->own_entry, 8);
        return 0;
    }
    if (addr >= a->sp && addr - a->sp + 8 <= a->stack_size) {
        memcpy(val, a->stack + (addr - a->sp), 8);
        return 0;
    }
    /* the module of the last read first: a table search reads one module */
    const mw_unwind_module *m = a->last_mod;
    if (!m || addr < m->start || addr >= m->end)
        m = mod_of(a, addr);
    if (m && m->path) {
        image *im = image_of(a, m);
        uint64_t v;
        if (im && image_read(im, addr - m->base, &v) == 0) {
            *val = v;
            return 0;
        }
    }
    return -UNW_EINVAL;
}

/* libunwind x86-64 register number -> perf_event x86 register index. */
static const int8_t unw_to_perf[17] = {
    0 /* RAX */, 3 /* RDX */, 2 /* RCX */, 1 /* RBX */, 4 /* RSI */, 5 /* RDI */, 6 /* RBP */,
    7 /* RSP */, 16, 17, 18, 19, 20, 21, 22, 23 /* R8..R15 */, 8 /* RIP */,
};

static int reg_value(const uw_arg *a, int perf_idx, uint64_t *out)
{
    if (perf_idx < 0 || !(a->regs_mask >> perf_idx & 1))
        return -1;
    unsigned pos = (unsigned)__builtin_popcountll(a->regs_mask & ((1ull << perf_idx) - 1));
    memcpy(out, (const unsigned char *)a->regs + 8 * pos, 8);
    return 0;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write,
                      void *arg)
{
    (void)as;
    uw_arg *a = arg;
    if (write || reg < 0 || reg > 16)
        return -UNW_EBADREG;
    uint64_t v;
    if (reg_value(a, unw_to_perf[reg], &v))
        return -UNW_EBADREG;
    *val = v;
    return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
                        void *arg)
{
    (void)as;
    (void)reg;
    (void)val;
    (void)write;
    (void)arg;
    return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
    (void)as;
    (void)c;
    (void)arg;
    return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
                         unw_word_t *off, void *arg)
{
    (void)as;
    (void)addr;
    (void)buf;
    (void)len;
    (void)off;
    (void)arg;
    return -UNW_EINVAL;
}

static unw_accessors_t accessors = {
    .find_proc_info = find_proc_info,
    .put_unwind_info = put_unwind_info,
    .get_dyn_info_list_addr = get_dyn_info_list_addr,
    .access_mem = access_mem,
    .access_reg = access_reg,
    .access_fpreg = access_fpreg,
    .resume = resume,
    .get_proc_name = get_proc_name,
};

/* libunwind blocks every signal around each lock it takes (its cache and
 * its memory pools: several sigprocmask system calls a frame, most of the
 * unwinding time on a build's stacks), so that a signal handler that unwinds
 * cannot deadlock on them. No signal handler of memwatch unwinds, so while a
 * thread of memwatch unwinds, the calls libunwind makes are answered without
 * the system call: this definition, in the program, takes the place of
 * libc's for libunwind; any other call goes on to libc's pthread_sigmask,
 * which is what libc's sigprocmask is. */
static _Thread_local int unwinding;

MW_API int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    if (unwinding) {
        if (old)
            sigemptyset(old); /* given back within the same unwinding */
        return 0;
    }
    int e = pthread_sigmask(how, set, old);
    if (e) {
        errno = e;
        return -1;
    }
    return 0;
}

int mw_unwinder_new(mw_unwinder **out)
{
    *out = NULL;
    mw_unwinder *u = calloc(1, sizeof *u);
    if (!u)
        return -ENOMEM;
    u->as = unw_create_addr_space(&accessors, 0);
    if (!u->as) {
        free(u);
        return -ENOMEM;
    }
    /* libunwind's cache keys its unwind information by address: valid for
     * one process's address space (mw_unwinder_flush between processes).
     * A third of the time without it (it still blocks every signal around
     * each step: two system calls a frame). */
    unwinding = 1;
    unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
    unwinding = 0;
    *out = u;
    return 0;
}

void mw_unwinder_free(mw_unwinder *u)
{
    if (!u)
        return;
    for (image *im = u->images, *n; im; im = n) {
        n = im->next;
        image_free(im);
    }
    unwinding = 1;
    unw_destroy_addr_space(u->as);
    unwinding = 0;
    free(u);
}

int mw_unwind_sample(mw_unwinder *u, const mw_unwind_module *mods, size_t nmods,
                     uint64_t regs_mask, const void *regs, const void *stack, size_t stack_size,
                     uint64_t *pcs, size_t max)
{
    uw_arg a = {u, mods, nmods, regs_mask, regs, stack, stack_size, 0, NULL, NULL, {0}};
    uint64_t ip;
    if (!u || !regs || max == 0 || reg_value(&a, 7, &a.sp) || reg_value(&a, 8, &ip))
        return MW_ERR_NODATA;
    unw_cursor_t c;
    unwinding = 1;
    if (unw_init_remote(&c, u->as, &a) < 0) {
        unwinding = 0;
        return MW_ERR_NODATA;
    }
    size_t n = 0;
    int step = 1;
    u->complete = 0;
    do {
        unw_word_t pc;
        if (unw_get_reg(&c, UNW_REG_IP, &pc) < 0)
            break;
        if (pc == 0) {
            step = 0; /* a zero return address ends a chain */
            break;
        }
        pcs[n++] = pc;
        /* a frame in a module whose unwind tables are withheld (its file
         * was rebuilt or is gone: path NULL) ends the chain; libunwind would
         * guess on with frame pointers and make return addresses of stack
         * words (a build's report: 12,000 [unknown]+0x7ff... frames after
         * libmemwatch.so was rebuilt). Code in no module (JIT, with its
         * frame pointers) is still stepped through. */
        const mw_unwind_module *m = mod_of(&a, n > 1 ? pc - 1 : pc);
        if (m && !m->path) {
            step = -1;
            break;
        }
    } while (n < max && (step = unw_step(&c)) > 0);
    unwinding = 0;
    /* unw_step returns 0 at the outermost frame (_start, clone: their CFI
     * marks the return address undefined); below 0 it could not go on (no
     * unwind table, the stack copy ended). */
    u->complete = step == 0;
    return (int)n;
}

int mw_unwind_last_complete(const mw_unwinder *u) { return u && u->complete; }

void mw_unwinder_flush(mw_unwinder *u)
{
    if (u) {
        unwinding = 1;
        unw_flush_cache(u->as, 0, 0);
        unwinding = 0;
    }
}

#else /* no libunwind */

struct mw_unwinder {
    int unused;
};

int mw_unwinder_new(mw_unwinder **out)
{
    *out = NULL;
    return MW_ERR_UNSUPPORTED;
}

void mw_unwinder_free(mw_unwinder *u) { free(u); }

int mw_unwind_last_complete(const mw_unwinder *u)
{
    (void)u;
    return 0;
}

void mw_unwinder_flush(mw_unwinder *u) { (void)u; }

int mw_unwind_sample(mw_unwinder *u, const mw_unwind_module *mods, size_t nmods,
                     uint64_t regs_mask, const void *regs, const void *stack, size_t stack_size,
                     uint64_t *pcs, size_t max)
{
    (void)u;
    (void)mods;
    (void)nmods;
    (void)regs_mask;
    (void)regs;
    (void)stack;
    (void)stack_size;
    (void)pcs;
    (void)max;
    return MW_ERR_UNSUPPORTED;
}
#endif
