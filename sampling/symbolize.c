/*
 * sampling/symbolize.c: offline symbolization with elfutils (libdwfl).
 *
 * Owns: one Dwfl per module file, reported at bias 0 so that lookups take
 * addresses relative to the load bias (the same module loaded at different
 * addresses in different processes shares one cache entry); build-id checks;
 * debug file search (.build-id trees and .gnu_debuglink through
 * dwfl_standard_find_debuginfo); inline frame expansion via dwarf_getscopes;
 * data symbols (STT_OBJECT) for static data attribution; names demangled for
 * display (mw_sym_demangle: libstdc++'s __cxa_demangle, loaded at run time,
 * so memwatch does not link the C++ runtime).
 * Go modules: functions, files and lines of Go code from the module's own
 * table (gopclntab.c), before DWARF.
 * May call: libdwfl, libdw, libelf, libc (dlopen). Never prints (mw_log only).
 * Threading: a symbolizer belongs to one thread at a time.
 */
#include <memwatch/symbolize.h>

#include "gopclntab.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct dsym {
    uint64_t start, size;
    const char *name;
} dsym;

/* A code symbol (function, ifunc or no type) as dwfl_module_addrinfo
 * weighs it: its index in the symbol table, its binding's rank (global 3,
 * weak 2, local 1, other 0) and whether it is of the table's global part;
 * maxend: the highest end of the symbols up to this one, sizeless: the
 * index of the last sizeless one up to this one, plus one (0: none). */
typedef struct asym {
    uint64_t start, size, maxend;
    const char *name;
    uint32_t index, sizeless;
    uint8_t rank, global;
} asym;

typedef struct fnear {
    uint64_t start;               /* a function's start (its FDE's), or the address */
    char *name;                   /* "module@0xstart" */
} fnear;

struct mw_symmod {
    struct mw_symmod *next;
    char *path;
    uint8_t bid[20];
    size_t bidlen;
    Dwfl *dwfl;
    Dwfl_Module *mod;
    int quality;
    char *debug_file;
    dsym *dsyms;
    size_t ndsyms;
    int dsyms_loaded;
    dsym *fsyms;                  /* code symbols by address (nearest-symbol names) */
    size_t nfsyms;
    int fsyms_loaded;
    fnear *fn;                    /* names made for functions without a symbol, by start */
    size_t nfn, capfn;
    asym *asyms;                  /* code symbols by address, for mw_symmod_lookup */
    size_t nasyms;
    uint64_t asym_maxsize;
    int asyms_loaded;
    uint64_t *fde;                /* FDE ranges [start, end) as pairs, sorted by start */
    size_t nfde, capfde;
    int fde_loaded;
    int code_ok;                  /* the file opened is the recorded module (its code bytes) */
    uint64_t xr[16][2];           /* its executable PT_LOAD segments [start, end) */
    int nxr;                      /* their number; -1: no program headers to read */
    int xr_loaded;
    dsym *tsyms;                  /* STT_TLS symbols by offset in the TLS block */
    size_t ntsyms;
    int tsyms_loaded;
    char hint[512];               /* the nearest symbol for the last unnamed address */
    mw_gopcln go;                 /* Go's function table (.gopclntab), version 0: none */
};

struct mw_symbolizer {
    char *debug_path;      /* for Dwfl_Callbacks.debuginfo_path */
    char *debug_dirs;      /* the user's list, for our own build-id lookups */
    Dwfl_Callbacks cb;
    mw_symmod *mods;
};

static void elf_ready_once(void)
{
    elf_version(EV_CURRENT);
}

/* libelf reads nothing before its version is set: every entry that opens
 * an ELF file sets it first (mw_sym_file_build_id may be the first, in
 * memwatch record or a report without symbols). */
static void elf_ready(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, elf_ready_once);
}

int mw_symbolizer_new(const mw_symbolizer_opts *o, mw_symbolizer **out)
{
    *out = NULL;
    elf_ready();
    mw_symbolizer *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    const char *dirs = o && o->debug_dirs ? o->debug_dirs : "/usr/lib/debug";
    s->debug_dirs = strdup(dirs);
    size_t n = strlen(dirs) + 16;
    s->debug_path = malloc(n);
    if (!s->debug_dirs || !s->debug_path) {
        mw_symbolizer_free(s);
        return -ENOMEM;
    }
    /* '-': do not check debuglink CRCs (build-ids are checked instead);
     * "": the file's own directory; ".debug": its .debug subdirectory. */
    snprintf(s->debug_path, n, "-:.debug:%s", dirs);
    s->cb.find_elf = dwfl_build_id_find_elf;
    s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
    s->cb.debuginfo_path = &s->debug_path;
    *out = s;
    return 0;
}

void mw_symbolizer_free(mw_symbolizer *s)
{
    if (!s)
        return;
    for (mw_symmod *m = s->mods, *n; m; m = n) {
        n = m->next;
        if (m->dwfl)
            dwfl_end(m->dwfl);
        free(m->path);
        free(m->debug_file);
        free(m->dsyms);
        free(m->tsyms);
        free(m->fsyms);
        free(m->asyms);
        free(m->fde);
        for (size_t i = 0; i < m->nfn; i++)
            free(m->fn[i].name);
        free(m->fn);
        free(m);
    }
    free(s->debug_path);
    free(s->debug_dirs);
    free(s);
}

/* Build-id of a file on disk: its length, 0 when none, < 0 when unreadable. */
static int file_build_id(const char *path, uint8_t *bid, size_t cap);
int mw_sym_file_build_id(const char *path, uint8_t *bid, size_t cap)
{
    return file_build_id(path, bid, cap);
}

static int file_build_id(const char *path, uint8_t *bid, size_t cap)
{
    int fd = -1;
    Elf *e = NULL;
    elf_ready();
    if (!strcmp(path, MW_VDSO_NAME)) {
        size_t len = 0;
        const unsigned char *img = mw_vdso_image(&len);
        if (!img)
            return -ENOENT;
        e = elf_memory((char *)img, len);
    } else {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return -errno;
        e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    }
    int rc = MW_ERR_CORRUPT;
    if (e && elf_kind(e) == ELF_K_ELF) {
        const void *p;
        ssize_t n = dwelf_elf_gnu_build_id(e, &p);
        if (n > 0) {
            rc = (int)((size_t)n < cap ? (size_t)n : cap);
            memcpy(bid, p, (size_t)rc);
        } else {
            rc = 0;
        }
    }
    if (e)
        elf_end(e);
    if (fd >= 0)
        close(fd);
    return rc;
}

/* <dir>/.build-id/xx/yyyy.debug for the first dir in the list that has it
 * (check: its own build-id must be bid). */
static int find_in_dirs(const char *dirs, const uint8_t *bid, size_t n, char *out, size_t cap,
                        int check)
{
    char hex[41];
    if (!dirs || n < 2 || n > 20)
        return 0;
    for (size_t i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", bid[i]);
    const char *p = dirs;
    while (*p) {
        const char *e = strchr(p, ':');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len > 0) {
            snprintf(out, cap, "%.*s/.build-id/%.2s/%s.debug", (int)len, p, hex, hex + 2);
            uint8_t fb[20];
            if (access(out, R_OK) == 0 &&
                (!check || (file_build_id(out, fb, sizeof fb) == (int)n && !memcmp(fb, bid, n))))
                return 1;
        }
        p += len;
        if (*p == ':')
            p++;
    }
    return 0;
}

static int find_by_build_id(const mw_symbolizer *s, const uint8_t *bid, size_t n, char *out,
                            size_t cap)
{
    return find_in_dirs(s->debug_dirs, bid, n, out, cap, 0);
}

int mw_sym_find_build_id(const char *dirs, const uint8_t *bid, size_t n, char *out, size_t cap)
{
    return find_in_dirs(dirs, bid, n, out, cap, 1);
}

/* Go's function table of the module, read once (its header and where its
 * parts are: nothing is copied); a table that is there but not read (an
 * older Go, damaged) is said once, with why. */
static void go_load(mw_symmod *m)
{
    GElf_Addr bias = 0;
    char why[200];
    if (mw_gopcln_open(&m->go, dwfl_module_getelf(m->mod, &bias), why, sizeof why) < 0)
        mw_log(MW_LOG_WARN, "%s: %s", m->path, why); /* the one word on why Go code is unnamed */
}

static int open_module(mw_symbolizer *s, mw_symmod *m)
{
    uint8_t fbid[20];
    int fn = file_build_id(m->path, fbid, sizeof fbid);
    const char *file = m->path;
    char alt[4096];
    int rc = 0;
    int mismatch = m->bidlen && (fn <= 0 || (size_t)fn != m->bidlen ||
                                 memcmp(fbid, m->bid, m->bidlen) != 0);
    if (mismatch) {
        if (find_by_build_id(s, m->bid, m->bidlen, alt, sizeof alt)) {
            file = alt;
        } else {
            mw_log(MW_LOG_INFO, "%s: %s; no debug file with the recorded build-id", m->path,
                   fn < 0 ? "cannot be opened" : "build-id differs from the recorded one");
            return fn < 0 ? fn : MW_ERR_FOREIGN;
        }
    } else if (fn < 0) {
        return fn;
    }
    m->dwfl = dwfl_begin(&s->cb);
    if (!m->dwfl)
        return -ENOMEM;
    const char *base = strrchr(m->path, '/');
    base = base ? base + 1 : m->path;
    dwfl_report_begin(m->dwfl);
    m->mod = dwfl_report_elf(m->dwfl, base, file, -1, 0, false);
    dwfl_report_end(m->dwfl, NULL, NULL);
    if (!m->mod) {
        mw_log(MW_LOG_INFO, "%s: %s", file, dwfl_errmsg(-1));
        dwfl_end(m->dwfl);
        m->dwfl = NULL;
        return MW_ERR_CORRUPT;
    }
    m->code_ok = file == m->path;
    Dwarf_Addr bias;
    if (dwfl_module_getdwarf(m->mod, &bias))
        m->quality = MW_SYMQ_DWARF;
    else if (dwfl_module_getsymtab(m->mod) > 0)
        m->quality = MW_SYMQ_SYMTAB;
    else
        m->quality = MW_SYMQ_NONE;
    go_load(m);
    if (m->go.version && m->quality < MW_SYMQ_DWARF)
        m->quality = MW_SYMQ_DWARF; /* Go code: function, file, line, inlines */
    const char *mainf = NULL, *debugf = NULL;
    dwfl_module_info(m->mod, NULL, NULL, NULL, NULL, NULL, &mainf, &debugf);
    if (debugf)
        m->debug_file = strdup(debugf);
    else if (file != m->path)
        m->debug_file = strdup(file);
    return rc;
}

int mw_symbolizer_module(mw_symbolizer *s, const char *path, const uint8_t *bid, size_t bidlen,
                         mw_symmod **out)
{
    if (bidlen > 20)
        bidlen = 20;
    for (mw_symmod *m = s->mods; m; m = m->next)
        if (!strcmp(m->path, path) && m->bidlen == bidlen &&
            (!bidlen || !memcmp(m->bid, bid, bidlen))) {
            *out = m;
            return m->mod ? 0 : MW_ERR_NODATA;
        }
    mw_symmod *m = calloc(1, sizeof *m);
    if (!m)
        return -ENOMEM;
    m->path = strdup(path);
    if (!m->path) {
        free(m);
        return -ENOMEM;
    }
    if (bidlen && bid)
        memcpy(m->bid, bid, bidlen);
    m->bidlen = bid ? bidlen : 0;
    int rc = open_module(s, m);
    m->next = s->mods;
    s->mods = m;
    *out = m;
    return rc;
}

static const char *die_name(Dwarf_Die *d)
{
    Dwarf_Attribute a;
    const char *n = dwarf_formstring(dwarf_attr_integrate(d, DW_AT_linkage_name, &a));
    if (!n)
        n = dwarf_diename(d);
    return n;
}

static int dsym_cmp(const void *a, const void *b);

/* The symbols of the module's symbol table (.symtab, else .dynsym; libdwfl
 * adds the MiniDebugInfo table of .gnu_debugdata) that keep takes, defined
 * and named, into *v (*nv of them), sorted by address. Code symbols
 * (load_fsyms): functions, IFUNCs, untyped labels in executable sections;
 * data symbols (load_dsyms): objects with a size. */
static void load_syms(mw_symmod *m, int (*keep)(const char *name, const GElf_Sym *sym), dsym **v,
                      size_t *nv)
{
    int n = dwfl_module_getsymtab(m->mod);
    if (n <= 0)
        return;
    *v = calloc((size_t)n, sizeof **v);
    if (!*v)
        return;
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr val;
        const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &val, NULL, NULL, NULL);
        if (name && sym.st_shndx != SHN_UNDEF && keep(name, &sym))
            (*v)[(*nv)++] = (dsym){val, sym.st_size, name};
    }
    qsort(*v, *nv, sizeof **v, dsym_cmp);
}

static int code_symbol(const char *name, const GElf_Sym *sym)
{
    int t = GELF_ST_TYPE(sym->st_info);
    return name[0] && (t == STT_FUNC || t == STT_GNU_IFUNC);
}

static void load_fsyms(mw_symmod *m)
{
    m->fsyms_loaded = 1;
    load_syms(m, code_symbol, &m->fsyms, &m->nfsyms);
}

/* ---- functions by call frame information ----
 * Each FDE of .eh_frame (kept by strip) and of .debug_frame (in the debug
 * file, where there is one) covers one function's code, [start, end): an
 * address that no symbol covers is named after the FDE that holds it, and a
 * sizeless symbol names only the addresses of its own FDE. */

/* An encoded pointer (DW_EH_PE_*) at *p, moving *p past it; pcrel is taken
 * relative to the field's address (at: its address in the module). 0 when
 * the encoding is one this reader does not take (then the FDE is skipped). */
static int read_enc(const uint8_t **p, const uint8_t *end, uint8_t enc, int addr_size,
                    uint64_t at, int apply, uint64_t *out)
{
    const uint8_t *q = *p;
    uint64_t v = 0;
    int64_t sv = 0;
    int is_signed = 0;
    size_t n = 0;
    switch (enc & 0x0f) {
    case 0x00: n = (size_t)addr_size; break;
    case 0x02: n = 2; break;
    case 0x03: n = 4; break;
    case 0x04: n = 8; break;
    case 0x0a: n = 2; is_signed = 1; break;
    case 0x0b: n = 4; is_signed = 1; break;
    case 0x0c: n = 8; is_signed = 1; break;
    case 0x01: case 0x09: { /* uleb128 / sleb128 */
        unsigned shift = 0;
        uint8_t b = 0x80;
        while (q < end && (b & 0x80) && shift < 64) {
            b = *q++;
            v |= (uint64_t)(b & 0x7f) << shift;
            shift += 7;
        }
        if ((enc & 0x0f) == 0x09 && shift < 64 && (b & 0x40))
            v |= ~0ull << shift;
        break;
    }
    default: return 0;
    }
    if (n) {
        if ((size_t)(end - q) < n)
            return 0;
        uint64_t u = 0;
        memcpy(&u, q, n); /* x86-64 and the host share byte order */
        q += n;
        if (is_signed && n < 8 && (u >> (8 * n - 1) & 1))
            sv = (int64_t)(u | (~0ull << (8 * n)));
        else
            sv = (int64_t)u;
        v = (uint64_t)sv;
    }
    if (apply && (enc & 0x70) == 0x10)
        v += at;
    else if (apply && (enc & 0x70) != 0)
        return 0; /* textrel/datarel/funcrel: not used for FDEs by GNU tools */
    *p = q;
    *out = v;
    return 1;
}

/* The FDE pointer encoding of a CIE: its 'R' augmentation, or absolute. */
static uint8_t cie_fde_enc(const Dwarf_CIE *c)
{
    const char *a = c->augmentation;
    const uint8_t *d = c->augmentation_data, *e = d ? d + c->augmentation_data_size : NULL;
    if (!a || a[0] != 'z' || !d)
        return 0x00;
    for (a++; *a && d < e; a++) {
        if (*a == 'R')
            return *d;
        if (*a == 'L')
            d++;
        else if (*a == 'P') {
            uint8_t penc = *d++;
            uint64_t dummy;
            if (!read_enc(&d, e, penc & 0x7f, 8, 0, 0, &dummy))
                return 0x00;
        }
    }
    return 0x00;
}

static int frng_cmp(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Every FDE of one CFI section (eh: .eh_frame format) into m->fde as
 * [start, end) pairs; bias is added (the debug file's addresses). */
static void add_fdes(mw_symmod *m, Elf *e, Elf_Scn *scn, int eh, uint64_t bias)
{
    GElf_Shdr sh;
    Elf_Data *d = elf_getdata(scn, NULL);
    const unsigned char *ident = (const unsigned char *)elf_getident(e, NULL);
    if (!d || !d->d_buf || !ident || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
        return;
    int asz = ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
    struct cie_enc {
        Dwarf_Off off;
        uint8_t enc;
    } cies[64];
    size_t ncies = 0;
    for (Dwarf_Off off = 0, next;; off = next) {
        Dwarf_CFI_Entry ent;
        int rc = dwarf_next_cfi(ident, d, eh, off, &next, &ent);
        if (rc > 0 || (rc < 0 && next == (Dwarf_Off)-1) || next <= off)
            break;
        if (rc < 0)
            continue;
        if (dwarf_cfi_cie_p(&ent)) {
            if (ncies < 64)
                cies[ncies++] = (struct cie_enc){off, eh ? cie_fde_enc(&ent.cie) : 0x00};
            continue;
        }
        uint8_t enc = 0x00;
        for (size_t i = 0; i < ncies; i++)
            if (cies[i].off == ent.fde.CIE_pointer)
                enc = cies[i].enc;
        if (eh && ncies == 64) { /* more CIEs than kept: parse the one named */
            Dwarf_Off cn;
            Dwarf_CFI_Entry ce;
            if (dwarf_next_cfi(ident, d, eh, ent.fde.CIE_pointer, &cn, &ce) == 0 &&
                dwarf_cfi_cie_p(&ce))
                enc = cie_fde_enc(&ce.cie);
        }
        const uint8_t *p = ent.fde.start, *pe = ent.fde.end;
        uint64_t start, len;
        uint64_t at = sh.sh_addr + (uint64_t)(p - (const uint8_t *)d->d_buf);
        if (!read_enc(&p, pe, enc, asz, at, 1, &start) ||
            !read_enc(&p, pe, enc & 0x0f, asz, 0, 0, &len) || len == 0)
            continue;
        if (m->nfde == m->capfde) {
            size_t nc = m->capfde ? m->capfde * 2 : 256;
            uint64_t *v = realloc(m->fde, nc * 2 * sizeof *v);
            if (!v)
                return;
            m->fde = v;
            m->capfde = nc;
        }
        m->fde[2 * m->nfde] = start + bias;
        m->fde[2 * m->nfde + 1] = start + bias + len;
        m->nfde++;
    }
}

static void add_fde_section(mw_symmod *m, Elf *e, const char *want, int eh, uint64_t bias)
{
    size_t shstr;
    if (!e || elf_getshdrstrndx(e, &shstr) != 0)
        return;
    for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
        GElf_Shdr sh;
        const char *nm;
        if (gelf_getshdr(scn, &sh) && (nm = elf_strptr(e, shstr, sh.sh_name)) &&
            !strcmp(nm, want))
            add_fdes(m, e, scn, eh, bias);
    }
}

/* The FDE ranges of the module (.eh_frame of the file, .debug_frame of the
 * file or of its debug file), sorted by start. */
static void load_fde(mw_symmod *m)
{
    m->fde_loaded = 1;
    GElf_Addr bias = 0;
    Elf *e = dwfl_module_getelf(m->mod, &bias);
    add_fde_section(m, e, ".eh_frame", 1, bias);
    add_fde_section(m, e, ".debug_frame", 0, bias);
    Dwarf_Addr dbias = 0;
    Dwarf *dw = dwfl_module_getdwarf(m->mod, &dbias);
    Elf *de = dw ? dwarf_getelf(dw) : NULL;
    if (de && de != e)
        add_fde_section(m, de, ".debug_frame", 0, dbias);
    if (m->nfde > 1)
        qsort(m->fde, m->nfde, 2 * sizeof *m->fde, frng_cmp);
}

/* How many of the n entries of v (each `size` bytes, sorted by the
 * uint64_t start at offset off) start at or below a: the index after the
 * last of them. */
static size_t starts_upto(const void *v, size_t n, size_t size, size_t off, uint64_t a)
{
    const char *b = v;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t start;
        memcpy(&start, b + mid * size + off, sizeof start);
        if (start <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The FDE that covers a: 1 and its [start, end), else 0. */
static int fde_at(mw_symmod *m, uint64_t a, uint64_t *start, uint64_t *end)
{
    if (!m->fde_loaded)
        load_fde(m);
    size_t lo = starts_upto(m->fde, m->nfde, 2 * sizeof *m->fde, 0, a);
    /* FDEs do not overlap in linked code; look at a few before in case */
    for (size_t k = lo, tries = 0; k > 0 && tries < 4; k--, tries++)
        if (a < m->fde[2 * (k - 1) + 1]) {
            *start = m->fde[2 * (k - 1)];
            *end = m->fde[2 * (k - 1) + 1];
            return 1;
        }
    return 0;
}

/* The name of the function that holds a, for an address no symbol covers
 * (a stripped library's internal function): "module@0xSTART", START the
 * start of the FDE that covers a (one name per function, so that its
 * addresses make one row), or "module@0xADDR" where no FDE covers it. Never
 * another function's name: the nearest code symbol before START is only a
 * hint (m->hint, "sym+0xoff"; "" where none), which mw_symmod_lookup passes on
 * as r->nearest. */
static const char *unnamed_name(mw_symmod *m, uint64_t a)
{
    uint64_t start = a, fend;
    fde_at(m, a, &start, &fend);
    if (!m->fsyms_loaded)
        load_fsyms(m);
    size_t nf = starts_upto(m->fsyms, m->nfsyms, sizeof *m->fsyms, offsetof(dsym, start), start);
    const dsym *near = nf ? &m->fsyms[nf - 1] : NULL;
    if (near && start > near->start)
        snprintf(m->hint, sizeof m->hint, "%s+0x%llx", near->name,
                 (unsigned long long)(start - near->start));
    else
        snprintf(m->hint, sizeof m->hint, "%s", near ? near->name : "");
    size_t lo = 0, hi = m->nfn;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->fn[mid].start < start)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < m->nfn && m->fn[lo].start == start)
        return m->fn[lo].name;
    char buf[512];
    const char *b = strrchr(m->path, '/');
    snprintf(buf, sizeof buf, "%s@0x%llx", b ? b + 1 : m->path, (unsigned long long)start);
    if (m->nfn == m->capfn) {
        size_t nc = m->capfn ? m->capfn * 2 : 16;
        fnear *v = realloc(m->fn, nc * sizeof *v);
        if (!v)
            return NULL;
        m->fn = v;
        m->capfn = nc;
    }
    char *name = strdup(buf);
    if (!name)
        return NULL;
    memmove(&m->fn[lo + 1], &m->fn[lo], (m->nfn - lo) * sizeof *m->fn);
    m->fn[lo] = (fnear){start, name};
    m->nfn++;
    return name;
}

static int asym_cmp(const void *a, const void *b)
{
    const asym *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static void load_asyms(mw_symmod *m)
{
    m->asyms_loaded = 1;
    int n = dwfl_module_getsymtab(m->mod);
    if (n <= 0 || !(m->asyms = calloc((size_t)n, sizeof *m->asyms)))
        return;
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr val;
        const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &val, NULL, NULL, NULL);
        int t = GELF_ST_TYPE(sym.st_info), b = GELF_ST_BIND(sym.st_info);
        if (!name || !name[0] || sym.st_shndx == SHN_UNDEF ||
            (t != STT_FUNC && t != STT_GNU_IFUNC && t != STT_NOTYPE))
            continue;
        m->asyms[m->nasyms++] = (asym){
            .start = val, .size = sym.st_size, .name = name, .index = (uint32_t)i,
            .rank = b == STB_GLOBAL ? 3 : b == STB_WEAK ? 2 : b == STB_LOCAL ? 1 : 0,
            .global = b != STB_LOCAL};
    }
    qsort(m->asyms, m->nasyms, sizeof *m->asyms, asym_cmp);
    uint64_t maxend = 0;
    uint32_t sizeless = 0;
    for (size_t i = 0; i < m->nasyms; i++) {
        asym *y = &m->asyms[i];
        if (y->start + y->size > maxend)
            maxend = y->start + y->size;
        if (!y->size)
            sizeless = (uint32_t)i + 1;
        y->maxend = maxend;
        y->sizeless = sizeless;
        if (y->size > m->asym_maxsize)
            m->asym_maxsize = y->size;
    }
}

/* Whether dwfl_module_addrinfo, reading the symbol table in order and
 * holding c, takes s instead (both hold the address and have a size). */
static int asym_better(const asym *c, const asym *s)
{
    if (c->start < s->start || c->rank < s->rank)
        return 1;
    return c->start == s->start && ((c->size > s->size && c->rank <= s->rank) ||
                                    (c->size >= s->size && c->rank < s->rank));
}

/* The symbol dwfl_module_addrinfo names for code address A, from a table
 * sorted by address (it reads the whole symbol table for each address:
 * most of a report's time for a program with many symbols). A symbol with a
 * size that holds A is taken, of the global ones first; where only a
 * sizeless symbol could be the answer (hand-written assembly), and where
 * the symbols holding A are too many to weigh here, libdw answers. Only
 * code symbols are weighed: an address inside a data object (a frame read
 * from a damaged stack) gets no name here where libdw would name the
 * object. */
static const char *symbol_at(mw_symmod *m, uint64_t a, GElf_Off *off, uint64_t *size)
{
    if (!m->asyms_loaded)
        load_asyms(m);
    size_t lo = starts_upto(m->asyms, m->nasyms, sizeof *m->asyms, offsetof(asym, start), a);
    if (!lo)
        return NULL;
    enum { MAXC = 32 };
    const asym *cand[2][MAXC]; /* holding A: [0] global part, [1] local */
    size_t nc[2] = {0, 0};
    for (size_t i = lo; i-- > 0 && a - m->asyms[i].start < m->asym_maxsize;) {
        const asym *y = &m->asyms[i];
        if (!y->size || a - y->start >= y->size)
            continue;
        int k = !y->global;
        if (nc[k] == MAXC)
            goto libdw;
        cand[k][nc[k]++] = y;
    }
    const asym *last = &m->asyms[lo - 1];
    const asym *sizeless = last->sizeless ? &m->asyms[last->sizeless - 1] : NULL;
    for (int k = 0; k < 2; k++) {
        if (!nc[k])
            continue;
        /* libdw reads the locals only when no global symbol holds A and no
         * global sizeless one is at A */
        if (k == 1 && sizeless && sizeless->start == a)
            goto libdw;
        for (size_t j = 1; j < nc[k]; j++) /* into the table's order */
            for (size_t q = j; q > 0 && cand[k][q - 1]->index > cand[k][q]->index; q--) {
                const asym *t = cand[k][q];
                cand[k][q] = cand[k][q - 1];
                cand[k][q - 1] = t;
            }
        const asym *best = cand[k][0];
        for (size_t j = 1; j < nc[k]; j++)
            if (asym_better(best, cand[k][j]))
                best = cand[k][j];
        *off = a - best->start;
        *size = best->size;
        return best->name;
    }
    /* No sized symbol holds A: a sizeless one at or above the end of every
     * symbol below A would be libdw's answer. */
    if (!sizeless || sizeless->start < last->maxend)
        return NULL;
libdw:;
    GElf_Sym sym;
    const char *n = dwfl_module_addrinfo(m->mod, a, off, &sym, NULL, NULL, NULL);
    /* libdw weighs data objects too: an address in one (a stack word read
     * as a return address, 0xa67430 in python3.11's _PyRuntime) is no
     * function's */
    int t = n ? GELF_ST_TYPE(sym.st_info) : STT_NOTYPE;
    if (t != STT_FUNC && t != STT_GNU_IFUNC && t != STT_NOTYPE)
        n = NULL;
    *size = n ? sym.st_size : 0;
    return n;
}

/* Whether the symbol found for a (at a - off, of the given size) covers it:
 * within its size, or, sizeless (hand-written assembly, labels), in the same
 * function by CFI: the FDE that covers a also covers the symbol's address.
 * Anything else is another function's name, never given. */
static int symbol_covers(mw_symmod *m, uint64_t a, uint64_t off, uint64_t size)
{
    if (size)
        return off < size;
    uint64_t fs, fe;
    return fde_at(m, a, &fs, &fe) && fs <= a - off;
}

/* Go code: where the module has Go's function table (.gopclntab) and a Go
 * function holds a, its frames (inlined calls first) with Go's names, files
 * and lines, the physical function as the symbol. 1 when it answered.
 * Taken before DWARF for Go functions: the table is what Go's own
 * tracebacks read, it survives -ldflags='-s -w', and DWARF names Go code
 * badly here (Debian 12's Go 1.19 and elfutils 0.188): a pure Go binary's
 * compressed DWARF gives libdwfl no line at all (the symbol only), and a
 * cgo program's gives every Go address the line of the C part before it,
 * runtime/cgo/gcc_mmap.c:37 (tests/gonames). C code of a cgo program lies
 * outside the table's functions and is named by DWARF and symbols as
 * before. */
static int go_lookup(mw_symmod *m, uint64_t a, mw_sym_result *r)
{
    if (!m->go.version)
        return 0;
    mw_gopcln_frame fr[MW_SYM_MAX_FRAMES];
    uint64_t entry = 0;
    unsigned n = mw_gopcln_lookup(&m->go, a, fr, MW_SYM_MAX_FRAMES, &entry);
    for (unsigned i = 0; i < n; i++)
        r->frames[i] = (mw_sym_frame){.function = fr[i].function, .file = fr[i].file,
                                      .line = fr[i].line, .inlined = fr[i].inlined};
    if (!n)
        return 0;
    r->nframes = n;
    r->symbol = fr[n - 1].function;
    r->symbol_offset = a - entry;
    r->quality = MW_SYMQ_DWARF;
    return 1;
}

/* The first function scope (a subprogram or an inline instance) among
 * scopes[from..n) into *out: 1, else 0. */
static int function_scope(Dwarf_Die *scopes, int from, int n, Dwarf_Die *out)
{
    for (int i = from; i < n; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
            *out = scopes[i];
            return 1;
        }
    }
    return 0;
}

int mw_symmod_lookup(mw_symmod *m, uint64_t a, mw_sym_result *r)
{
    memset(r, 0, sizeof *r);
    if (!m || !m->mod)
        return MW_SYMQ_NONE;
    if (go_lookup(m, a, r))
        return r->quality;
    GElf_Off off = 0;
    uint64_t ssize = 0;
    const char *sname = symbol_at(m, a, &off, &ssize);
    if (sname && !symbol_covers(m, a, off, ssize))
        sname = NULL;
    if (sname) {
        r->symbol = sname;
        r->symbol_offset = off;
        r->quality = MW_SYMQ_SYMTAB;
    }
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(m->mod, a, &bias);
    if (cu) {
        int line = 0, col = 0;
        const char *file = NULL;
        Dwfl_Line *ln = dwfl_module_getsrc(m->mod, a);
        if (ln)
            file = dwfl_lineinfo(ln, NULL, &line, &col, NULL, NULL);
        /* The innermost function scope (an inline instance or the function);
         * dwarf_getscopes continues from an inline's abstract origin, so the
         * physical parent of each inline is found with dwarf_getscopes_die. */
        Dwarf_Die *scopes = NULL, cur;
        int n = dwarf_getscopes(cu, a - bias, &scopes);
        int have = function_scope(scopes, 0, n, &cur);
        free(scopes);
        while (have && r->nframes < MW_SYM_MAX_FRAMES) {
            int tag = dwarf_tag(&cur);
            mw_sym_frame *f = &r->frames[r->nframes++];
            f->function = die_name(&cur);
            f->file = file;
            f->line = line;
            f->column = col;
            f->inlined = tag == DW_TAG_inlined_subroutine;
            if (tag != DW_TAG_inlined_subroutine)
                break;
            /* The caller's position is the call site of this inline. */
            Dwarf_Attribute at;
            Dwarf_Word v;
            line = dwarf_formudata(dwarf_attr(&cur, DW_AT_call_line, &at), &v) == 0 ? (int)v : 0;
            col = dwarf_formudata(dwarf_attr(&cur, DW_AT_call_column, &at), &v) == 0 ? (int)v : 0;
            if (dwarf_formudata(dwarf_attr(&cur, DW_AT_call_file, &at), &v) == 0) {
                Dwarf_Files *files;
                size_t nf;
                if (dwarf_getsrcfiles(cu, &files, &nf) == 0 && v < nf)
                    file = dwarf_filesrc(files, v, NULL, NULL);
            }
            Dwarf_Die *ps = NULL;
            int np = dwarf_getscopes_die(&cur, &ps);
            have = function_scope(ps, 1, np, &cur);
            free(ps);
        }
        if (r->nframes == 0 && file) { /* line info but no subprogram DIE */
            r->frames[0].function = sname;
            r->frames[0].file = file;
            r->frames[0].line = line;
            r->frames[0].column = col;
            r->nframes = 1;
        }
        /* a C++ function that DWARF names without its linkage name (gcc's
         * functions of anonymous namespaces: "kernel"): the covering ELF
         * symbol's mangled name, which says its namespace and parameters */
        mw_sym_frame *outer = r->nframes ? &r->frames[r->nframes - 1] : NULL;
        if (outer && !outer->inlined && sname && !strncmp(sname, "_Z", 2) &&
            outer->function && strncmp(outer->function, "_Z", 2))
            outer->function = sname;
        if (r->nframes)
            r->quality = MW_SYMQ_DWARF;
    }
    if (r->nframes == 0 && sname) {
        r->frames[0].function = sname;
        r->nframes = 1;
    }
    if (r->nframes == 0 && !sname) {
        const char *nn = unnamed_name(m, a);
        if (nn) {
            r->frames[0].function = nn;
            r->nframes = 1;
            r->nearest = m->hint[0] ? m->hint : NULL;
        }
    }
    return r->quality;
}

static int dsym_cmp(const void *a, const void *b)
{
    const dsym *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int data_symbol(const char *name, const GElf_Sym *sym)
{
    return GELF_ST_TYPE(sym->st_info) == STT_OBJECT && sym->st_size != 0;
}

static void load_dsyms(mw_symmod *m)
{
    m->dsyms_loaded = 1;
    load_syms(m, data_symbol, &m->dsyms, &m->ndsyms);
}

int mw_symmod_data_symbol(mw_symmod *m, uint64_t a, const char **name, uint64_t *start,
                          uint64_t *size)
{
    if (!m || !m->mod)
        return 0;
    if (!m->dsyms_loaded)
        load_dsyms(m);
    size_t lo = starts_upto(m->dsyms, m->ndsyms, sizeof *m->dsyms, offsetof(dsym, start), a);
    /* Check a few predecessors: objects may nest (a struct and its alias). */
    for (size_t k = lo, tries = 0; k > 0 && tries < 4; k--, tries++) {
        const dsym *d = &m->dsyms[k - 1];
        if (a >= d->start && a - d->start < d->size) {
            *name = d->name;
            *start = d->start;
            *size = d->size;
            return 1;
        }
    }
    return 0;
}

/* The loaded segment of e that holds a (p_vaddr based), executable ones
 * only where exec: 1 and *ph, else 0 */
static int segment_of(Elf *e, uint64_t a, int exec, GElf_Phdr *ph)
{
    size_t np = 0;
    if (!e || elf_getphdrnum(e, &np) != 0)
        return 0;
    for (size_t i = 0; i < np; i++)
        if (gelf_getphdr(e, (int)i, ph) && ph->p_type == PT_LOAD &&
            (!exec || (ph->p_flags & PF_X)) && a >= ph->p_vaddr &&
            a - ph->p_vaddr < ph->p_filesz)
            return 1;
    return 0;
}

int mw_symmod_in_code(mw_symmod *m, uint64_t a)
{
    if (!m || !m->mod)
        return -1;
    if (!m->xr_loaded) {
        m->xr_loaded = 1;
        GElf_Addr bias = 0;
        Elf *e = dwfl_module_getelf(m->mod, &bias);
        size_t np = 0;
        GElf_Phdr ph;
        if (!e || elf_getphdrnum(e, &np) != 0 || np == 0) {
            m->nxr = -1;
        } else {
            for (size_t i = 0; i < np; i++)
                if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
                    ph.p_memsz) {
                    if (m->nxr == (int)(sizeof m->xr / sizeof m->xr[0])) {
                        m->nxr = -1; /* more than memwatch keeps: unknown */
                        break;
                    }
                    m->xr[m->nxr][0] = ph.p_vaddr;
                    m->xr[m->nxr][1] = ph.p_vaddr + ph.p_memsz;
                    m->nxr++;
                }
            if (m->nxr == 0)
                m->nxr = -1; /* no executable segment at all: not a file to judge by */
        }
    }
    if (m->nxr < 0)
        return -1;
    for (int i = 0; i < m->nxr; i++)
        if (a >= m->xr[i][0] && a < m->xr[i][1])
            return 1;
    return 0;
}

size_t mw_symmod_code(mw_symmod *m, uint64_t a, uint8_t *buf, size_t cap, uint64_t *fstart)
{
    if (fstart)
        *fstart = a;
    if (!m || !m->mod || !m->code_ok)
        return 0;
    GElf_Addr bias = 0;
    Elf *e = dwfl_module_getelf(m->mod, &bias);
    GElf_Phdr ph;
    if (!segment_of(e, a, 1, &ph))
        return 0;
    uint64_t off = ph.p_offset + (a - ph.p_vaddr);
    size_t n = cap, left = (size_t)(ph.p_filesz - (a - ph.p_vaddr));
    if (n > left)
        n = left;
    size_t fsize = 0;
    const char *raw = elf_rawfile(e, &fsize);
    if (raw && off < fsize) {
        if (n > fsize - off)
            n = (size_t)(fsize - off);
        memcpy(buf, raw + off, n);
    } else {
        Elf_Data *d = elf_getdata_rawchunk(e, (int64_t)off, n, ELF_T_BYTE);
        if (!d || !d->d_buf)
            return 0;
        memcpy(buf, d->d_buf, n);
    }
    if (fstart) {
        GElf_Off so = 0;
        uint64_t ssize = 0, fs, fe;
        const char *sname = symbol_at(m, a, &so, &ssize);
        if (sname && symbol_covers(m, a, so, ssize))
            *fstart = a - so;
        else if (fde_at(m, a, &fs, &fe))
            *fstart = fs;
        else {
            mw_sym_result gr; /* a stripped Go program's function */
            memset(&gr, 0, sizeof gr);
            if (go_lookup(m, a, &gr))
                *fstart = a - gr.symbol_offset;
        }
    }
    return n;
}

int mw_symmod_tls_segment(mw_symmod *m, uint64_t *memsz, uint64_t *align, int *main_program)
{
    *main_program = 0;
    if (!m || !m->mod)
        return 0;
    GElf_Addr bias = 0;
    Elf *e = dwfl_module_getelf(m->mod, &bias);
    size_t np = 0;
    if (!e || elf_getphdrnum(e, &np) != 0)
        return 0;
    GElf_Phdr ph;
    int tls = 0;
    for (size_t i = 0; i < np; i++) {
        if (!gelf_getphdr(e, (int)i, &ph))
            continue;
        if (ph.p_type == PT_INTERP)
            *main_program = 1;
        if (ph.p_type == PT_TLS) {
            *memsz = ph.p_memsz;
            *align = ph.p_align ? ph.p_align : 1;
            tls = 1;
        }
    }
    return tls;
}

int mw_symmod_tls_symbol(mw_symmod *m, uint64_t off, const char **name, uint64_t *start,
                         uint64_t *size)
{
    if (!m || !m->mod)
        return 0;
    if (!m->tsyms_loaded) {
        m->tsyms_loaded = 1;
        int n = dwfl_module_getsymtab(m->mod);
        if (n > 0 && (m->tsyms = calloc((size_t)n, sizeof *m->tsyms))) {
            for (int i = 1; i < n; i++) {
                GElf_Sym sym;
                const char *nm = dwfl_module_getsym(m->mod, i, &sym, NULL);
                if (nm && GELF_ST_TYPE(sym.st_info) == STT_TLS && sym.st_size &&
                    sym.st_shndx != SHN_UNDEF)
                    m->tsyms[m->ntsyms++] = (dsym){sym.st_value, sym.st_size, nm};
            }
        }
    }
    for (size_t i = 0; i < m->ntsyms; i++)
        if (off >= m->tsyms[i].start && off - m->tsyms[i].start < m->tsyms[i].size) {
            *name = m->tsyms[i].name;
            *start = m->tsyms[i].start;
            *size = m->tsyms[i].size;
            return 1;
        }
    return 0;
}

const char *mw_symmod_path(const mw_symmod *m) { return m->path; }
const char *mw_symmod_debug_file(const mw_symmod *m) { return m->debug_file; }
int mw_symmod_quality(const mw_symmod *m) { return m->quality; }

/* ---- names for display ---- */

typedef char *(*mw_cxa_demangle_fn)(const char *, char *, size_t *, int *);
static mw_cxa_demangle_fn dm_fn;
static char dm_why[200];
static pthread_once_t dm_once = PTHREAD_ONCE_INIT;

static void dm_load(void)
{
    void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    if (h)
        *(void **)&dm_fn = dlsym(h, "__cxa_demangle");
    if (!dm_fn) {
        const char *e = dlerror();
        snprintf(dm_why, sizeof dm_why, "no __cxa_demangle: %s", e ? e : "libstdc++.so.6 not found");
        mw_log(MW_LOG_WARN, "C++ names are shown as the binaries have them (%s)", dm_why);
    }
}

int mw_sym_demangler(const char **why)
{
    pthread_once(&dm_once, dm_load);
    if (why)
        *why = dm_fn ? NULL : dm_why;
    return dm_fn != NULL;
}

static const char *demangle_whole(const char *name, char **buf, size_t *cap);

/* A mangled name with an offset ("_Z3fooi+0x30"): the name demangled, the
 * offset kept after it. */
const char *mw_sym_demangle(const char *name, char **buf, size_t *cap)
{
    if (!name || name[0] != '_' || name[1] != 'Z')
        return name;
    if (!mw_sym_demangler(NULL))
        return name;
    const char *plus = strstr(name, "+0x");
    if (!plus || !plus[3] || strspn(plus + 3, "0123456789abcdefABCDEF") != strlen(plus + 3))
        return demangle_whole(name, buf, cap);
    char base[4096];
    size_t bl = (size_t)(plus - name), sl = strlen(plus);
    if (bl >= sizeof base)
        return name;
    memcpy(base, name, bl);
    base[bl] = 0;
    const char *d = demangle_whole(base, buf, cap);
    if (d == base)
        return name;
    size_t dl = strlen(d);
    if (dl + sl + 1 > *cap) {
        char *nb = realloc(*buf, dl + sl + 1);
        if (!nb)
            return name;
        *buf = nb;
        *cap = dl + sl + 1;
    }
    memcpy(*buf + dl, plus, sl + 1);
    return *buf;
}

static const char *demangle_whole(const char *name, char **buf, size_t *cap)
{
    size_t len = *buf ? *cap : 0;
    int status = -1;
    char *out = dm_fn(name, *buf, *buf ? &len : NULL, &status);
    if (!out || status != 0)
        return name; /* not a valid mangled name: shown as it is (*buf untouched) */
    if (out != *buf || !*cap) {
        /* a new buffer (first call, or grown by realloc: the old one is gone) */
        *buf = out;
        *cap = len ? len : strlen(out) + 1;
    } else if (len > *cap) {
        *cap = len;
    }
    return out;
}
