/*
 * sampling/gopclntab.c: Go's function and line table (gopclntab.h).
 *
 * Owns: finding a Go module's pcHeader (.gopclntab; in a PIE
 * .data.rel.ro.gopclntab, or the start of .data.rel.ro), its sub-tables (function names, the
 * compilation units' file lists, file names, pc-value tables, functab and
 * the _func records), the pc-value decoder, and the inline trees that the
 * functions' FUNCDATA_InlTree point to (in go:func.*, found through the
 * runtime's moduledata).
 * Layouts, as the Go runtime declares them (runtime/symtab.go,
 * runtime/runtime2.go of each release):
 *   pcHeader: magic u32, pad u8 u8, minLC u8, ptrSize u8, then words:
 *     1.16: nfunc nfiles funcnameOff cuOff filetabOff pctabOff pclnOff
 *     1.18+: nfunc nfiles textStart funcnameOff cuOff filetabOff pctabOff
 *     pclnOff
 *   functab (at pclnOff, nfunc + 1 entries, the last one the end of text):
 *     1.16 {entry word, funcoff word}; 1.18+ {entryoff u32 (from
 *     textStart), funcoff u32}; funcoff is from pclnOff
 *   _func: 1.16 entry word, nameoff, args, deferreturn, pcsp, pcfile, pcln,
 *     npcdata, cuOffset (u32 each), funcID, pad[2], nfuncdata (u8 each): 44
 *     bytes on 64-bit; 1.18 entryoff, nameoff, args, deferreturn, pcsp,
 *     pcfile, pcln, npcdata, cuOffset, funcID u8, flag u8, pad, nfuncdata:
 *     40 bytes; 1.20 adds startLine (i32) before funcID: 44 bytes. Then
 *     pcdata[npcdata] (u32 offsets into pctab, 0: none) and funcdata
 *     [nfuncdata] (1.16: pointers, word-aligned; 1.18+: u32 offsets from
 *     moduledata.gofunc, ~0: none).
 *   pc-value table: pairs of uvarints, the value's delta zig-zag coded (the
 *     value starts at -1), the pc delta times the pc quantum; a zero value
 *     delta after the first pair ends it.
 *   file of a pc: filetab + cutab[cuOffset + pcfile value] (u32, ~0: none).
 *   inlinedCall: 1.16-1.19 {parent i16, funcID u8, pad, file i32, line i32,
 *     nameoff i32, parentPc i32}; 1.20+ {funcID u8, pad[3], nameoff i32,
 *     parentPc i32, startLine i32}. PCDATA_InlTreeIndex (2) gives the entry
 *     for a pc; its caller's position is the position of entry + parentPc.
 * May call: libelf, libc. Never prints, never allocates.
 * Threading: see gopclntab.h.
 */
#include "gopclntab.h"

#include <stdio.h>
#include <string.h>

enum {
    GO_MAGIC_12 = 0xfffffffb,
    GO_MAGIC_116 = 0xfffffffa,
    GO_MAGIC_118 = 0xfffffff0,
    GO_MAGIC_120 = 0xfffffff1,
    PCDATA_INLTREEINDEX = 2,
    FUNCDATA_INLTREE = 3,
};

static uint64_t rd(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    memcpy(&v, p, n); /* little-endian files only (checked at open) */
    return v;
}

/* The section data that holds [addr, addr + 1): a pointer to addr and the
 * bytes left in the section, NULL where no section with file data holds it. */
static const uint8_t *addr_bytes(Elf *e, uint64_t addr, size_t *left)
{
    for (Elf_Scn *s = elf_nextscn(e, NULL); s; s = elf_nextscn(e, s)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(s, &sh) || sh.sh_type == SHT_NOBITS || !(sh.sh_flags & SHF_ALLOC) ||
            addr < sh.sh_addr || addr - sh.sh_addr >= sh.sh_size)
            continue;
        Elf_Data *d = elf_getdata(s, NULL);
        if (!d || !d->d_buf || d->d_size != sh.sh_size)
            return NULL;
        *left = (size_t)(sh.sh_size - (addr - sh.sh_addr));
        return (const uint8_t *)d->d_buf + (addr - sh.sh_addr);
    }
    return NULL;
}

static Elf_Scn *section_named(Elf *e, const char *want)
{
    size_t shstr;
    if (elf_getshdrstrndx(e, &shstr) != 0)
        return NULL;
    for (Elf_Scn *s = elf_nextscn(e, NULL); s; s = elf_nextscn(e, s)) {
        GElf_Shdr sh;
        const char *nm;
        if (gelf_getshdr(s, &sh) && (nm = elf_strptr(e, shstr, sh.sh_name)) && !strcmp(nm, want))
            return s;
    }
    return NULL;
}

/* A PIE's word at addr is 0 in the file: its value is the addend of the
 * R_X86_64_RELATIVE relocation for it. 1 and *v where one is found. */
static int relative_reloc(Elf *e, uint64_t addr, uint64_t *v)
{
    for (Elf_Scn *s = elf_nextscn(e, NULL); s; s = elf_nextscn(e, s)) {
        GElf_Shdr sh;
        Elf_Data *d;
        if (!gelf_getshdr(s, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
            !(d = elf_getdata(s, NULL)))
            continue;
        size_t n = sh.sh_size / sh.sh_entsize;
        for (size_t i = 0; i < n; i++) {
            GElf_Rela r;
            if (gelf_getrela(d, (int)i, &r) && r.r_offset == addr &&
                GELF_R_TYPE(r.r_info) == R_X86_64_RELATIVE) {
                *v = (uint64_t)r.r_addend;
                return 1;
            }
        }
    }
    return 0;
}

/* The word at a table address: in the file, or, where the file holds 0
 * (a PIE), from its relocation. */
static uint64_t word_at(const mw_gopcln *t, const uint8_t *p, uint64_t addr)
{
    uint64_t v = rd(p, t->ptrsize);
    if (!v && t->elf)
        relative_reloc(t->elf, addr, &v);
    return v;
}

/* A NUL-terminated string at off of a sub-table that runs to the end of
 * the table; NULL where it does not end inside the table. */
static const char *str_at(const mw_gopcln *t, size_t base, uint64_t off)
{
    if (base + off >= t->size)
        return NULL;
    const char *s = (const char *)t->hdr + base + off;
    return memchr(s, 0, t->size - base - off) ? s : NULL;
}

/* go:func.* through the runtime's moduledata (in .noptrdata): the word
 * that points to the pcHeader, followed by funcnametab's data pointer;
 * gofunc is its 39th word (1.18, 1.19) or 41st (1.20 on: covctrs and
 * ecovctrs came before it). Left NULL where not found: no inlined frames. */
static void find_gofunc(mw_gopcln *t, Elf *e)
{
    Elf_Scn *s = section_named(e, ".noptrdata");
    GElf_Shdr sh;
    Elf_Data *d;
    if (t->version < 118 || !s || !gelf_getshdr(s, &sh) || sh.sh_type == SHT_NOBITS ||
        !(d = elf_getdata(s, NULL)) || !d->d_buf || d->d_size != sh.sh_size)
        return;
    unsigned w = t->ptrsize, at = t->version >= 120 ? 40 : 38;
    const uint8_t *p = d->d_buf;
    for (size_t off = 0; off + (size_t)(at + 1) * w <= d->d_size; off += w) {
        uint64_t a = sh.sh_addr + off;
        if (word_at(t, p + off, a) != t->addr ||
            word_at(t, p + off + w, a + w) != t->addr + t->names)
            continue;
        uint64_t g = word_at(t, p + off + (size_t)at * w, a + (uint64_t)at * w);
        size_t left = 0;
        const uint8_t *gp = g ? addr_bytes(e, g, &left) : NULL;
        if (gp) {
            t->gofunc = gp;
            t->gofunc_size = left;
            t->gofunc_addr = g;
        }
        return;
    }
}

/* The header at p (size bytes, at module address addr): 1 when it is a
 * table this reader takes, 0 when it is no Go table, -1 when it is one
 * not read (why). */
static int read_header(mw_gopcln *t, Elf *e, const uint8_t *p, size_t size, uint64_t addr,
                       char *why, size_t whycap)
{
    if (size < 8)
        return 0;
    uint32_t magic = (uint32_t)rd(p, 4);
    unsigned lc = p[6], ps = p[7];
    if (p[4] || p[5] || (lc != 1 && lc != 2 && lc != 4) || (ps != 4 && ps != 8))
        return 0;
    switch (magic) {
    case GO_MAGIC_116:
        t->version = 116;
        break;
    case GO_MAGIC_118:
        t->version = 118;
        break;
    case GO_MAGIC_120:
        t->version = 120;
        break;
    case GO_MAGIC_12:
        snprintf(why, whycap,
                 "Go 1.2-1.15 function table (magic 0x%x): not read; built with Go "
                 "1.16 or later, its functions are named",
                 magic);
        return -1;
    default:
        return 0;
    }
    unsigned nw = t->version == 116 ? 7 : 8;
    if (size < 8 + (size_t)nw * ps) {
        snprintf(why, whycap, "Go function table cut short (%zu bytes)", size);
        t->version = 0;
        return -1;
    }
    t->hdr = p;
    t->size = size;
    t->addr = addr;
    t->ptrsize = ps;
    t->quantum = lc;
    t->elf = e;
    uint64_t f[8];
    for (unsigned i = 0; i < nw; i++)
        f[i] = rd(p + 8 + (size_t)i * ps, ps);
    t->nfunc = f[0];
    unsigned k = 2;
    if (t->version >= 118) {
        t->text = word_at(t, p + 8 + 2 * (size_t)ps, addr + 8 + 2 * (uint64_t)ps);
        k = 3;
    }
    t->names = (size_t)f[k];
    t->cutab = (size_t)f[k + 1];
    t->filetab = (size_t)f[k + 2];
    t->pctab = (size_t)f[k + 3];
    t->pcln = (size_t)f[k + 4];
    size_t fte = t->version == 116 ? 2 * (size_t)ps : 8;
    if (t->names >= size || t->cutab >= size || t->filetab >= size || t->pctab >= size ||
        t->pcln >= size || t->nfunc == 0 || t->nfunc > (size - t->pcln) / fte - 1 ||
        (t->version >= 118 && !t->text)) {
        snprintf(why, whycap,
                 "Go function table (Go %d.%d layout) damaged: offsets outside "
                 "its %zu bytes%s",
                 t->version / 100, t->version % 100, size,
                 t->version >= 118 && !t->text ? ", or no text start" : "");
        t->version = 0;
        return -1;
    }
    find_gofunc(t, e);
    return 1;
}

int mw_gopcln_open(mw_gopcln *t, Elf *e, char *why, size_t whycap)
{
    memset(t, 0, sizeof *t);
    if (whycap)
        why[0] = 0;
    const unsigned char *id = (const unsigned char *)(e ? elf_getident(e, NULL) : NULL);
    if (!id || id[EI_DATA] != ELFDATA2LSB)
        return 0;
    static const char *const where[] = {".gopclntab", ".data.rel.ro.gopclntab", ".data.rel.ro"};
    for (size_t i = 0; i < sizeof where / sizeof *where; i++) {
        Elf_Scn *s = section_named(e, where[i]);
        GElf_Shdr sh;
        Elf_Data *d;
        if (!s || !gelf_getshdr(s, &sh) || sh.sh_type == SHT_NOBITS ||
            !(d = elf_getdata(s, NULL)) || !d->d_buf || d->d_size != sh.sh_size)
            continue;
        int rc = read_header(t, e, d->d_buf, d->d_size, sh.sh_addr, why, whycap);
        if (rc)
            return rc;
    }
    return 0;
}

static int uvarint(const uint8_t **p, const uint8_t *end, uint32_t *v)
{
    uint32_t r = 0;
    for (unsigned shift = 0; *p < end && shift < 35; shift += 7) {
        uint8_t b = *(*p)++;
        r |= (uint32_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return 1;
        }
    }
    return 0;
}

/* The value of the pc-value table at pctab offset off for pc, in the
 * function at entry: 1 and *val, 0 where pc is past the table's end (the
 * padding after the function), the table is missing (off 0) or broken. */
static int pcvalue(const mw_gopcln *t, uint32_t off, uint64_t entry, uint64_t pc, int32_t *val)
{
    if (!off || t->pctab + off >= t->size)
        return 0;
    const uint8_t *p = t->hdr + t->pctab + off, *end = t->hdr + t->size;
    uint32_t v = UINT32_MAX; /* -1, summed modulo 2^32 (a damaged table overflows no int) */
    uint64_t cur = entry;
    for (int first = 1; p < end; first = 0) {
        uint32_t uv, pd;
        if (*p == 0 && !first)
            return 0;
        if (!uvarint(&p, end, &uv) || !uvarint(&p, end, &pd))
            return 0;
        v += -(uv & 1) ^ (uv >> 1);
        cur += (uint64_t)pd * t->quantum;
        if (pc < cur) {
            *val = (int32_t)v;
            return 1;
        }
    }
    return 0;
}

/* One function's record, as read from its _func. */
typedef struct gofn {
    const uint8_t *f; /* the _func */
    size_t left;      /* bytes of the table from f on */
    uint64_t entry;
    const char *name;
    uint32_t pcfile, pcln, npcdata, cu;
    unsigned nfuncdata, fixed; /* fixed: the size before pcdata[] */
} gofn;

/* functab entry i: its entry address and _func offset */
static void ftab_at(const mw_gopcln *t, uint64_t i, uint64_t *entry, uint64_t *funcoff)
{
    if (t->version == 116) {
        const uint8_t *p = t->hdr + t->pcln + i * 2 * t->ptrsize;
        *entry = rd(p, t->ptrsize);
        *funcoff = rd(p + t->ptrsize, t->ptrsize);
    } else {
        const uint8_t *p = t->hdr + t->pcln + i * 8;
        *entry = t->text + rd(p, 4);
        *funcoff = rd(p + 4, 4);
    }
}

static int func_read(const mw_gopcln *t, uint64_t funcoff, gofn *g)
{
    unsigned ps = t->version == 116 ? t->ptrsize : 4; /* size of the entry field */
    g->fixed = ps + 36 + (t->version >= 120 ? 4 : 0); /* 44, 40, 44 on 64-bit */
    if (funcoff >= t->size - t->pcln || t->size - t->pcln - funcoff < g->fixed)
        return 0;
    g->f = t->hdr + t->pcln + funcoff;
    g->left = t->size - t->pcln - (size_t)funcoff;
    const uint8_t *q = g->f + ps; /* nameoff, args, deferreturn, pcsp, pcfile, pcln, ... */
    g->name = str_at(t, t->names, rd(q, 4));
    g->pcfile = (uint32_t)rd(q + 16, 4);
    g->pcln = (uint32_t)rd(q + 20, 4);
    g->npcdata = (uint32_t)rd(q + 24, 4);
    g->cu = (uint32_t)rd(q + 28, 4);
    g->nfuncdata = g->f[g->fixed - 1];
    return g->name != NULL && g->left >= g->fixed + 4 * (size_t)g->npcdata;
}

static const char *file_of(const mw_gopcln *t, const gofn *g, uint64_t pc, int *line)
{
    int32_t fno = -1, ln = 0;
    *line = pcvalue(t, g->pcln, g->entry, pc, &ln) && ln > 0 ? ln : 0;
    if (!pcvalue(t, g->pcfile, g->entry, pc, &fno) || fno < 0)
        return NULL;
    uint64_t at = t->cutab + 4 * ((uint64_t)g->cu + (uint32_t)fno);
    if (at + 4 > t->size)
        return NULL;
    uint32_t off = (uint32_t)rd(t->hdr + at, 4);
    return off == UINT32_MAX ? NULL : str_at(t, t->filetab, off);
}

/* The function's inline tree (FUNCDATA_InlTree) as mapped, and the bytes
 * available from it; NULL where it has none or it cannot be found. */
static const uint8_t *inl_tree(const mw_gopcln *t, const gofn *g, size_t *left)
{
    if (g->nfuncdata <= FUNCDATA_INLTREE)
        return NULL;
    size_t fd = g->fixed + 4 * (size_t)g->npcdata;
    if (t->version == 116) {
        uint64_t a = t->addr + (uint64_t)(g->f - t->hdr) + fd; /* aligned as in memory */
        if (t->ptrsize == 8 && (a & 4))
            fd += 4;
        fd += (size_t)FUNCDATA_INLTREE * t->ptrsize;
        if (fd + t->ptrsize > g->left)
            return NULL;
        uint64_t p = rd(g->f + fd, t->ptrsize);
        return p ? addr_bytes(t->elf, p, left) : NULL;
    }
    fd += 4 * (size_t)FUNCDATA_INLTREE;
    if (fd + 4 > g->left || !t->gofunc)
        return NULL;
    uint32_t off = (uint32_t)rd(g->f + fd, 4);
    if (off == UINT32_MAX || off >= t->gofunc_size)
        return NULL;
    *left = t->gofunc_size - off;
    return t->gofunc + off;
}

unsigned mw_gopcln_lookup(const mw_gopcln *t, uint64_t pc, mw_gopcln_frame *fr, unsigned max,
                          uint64_t *entry)
{
    if (!t || !t->version || !max)
        return 0;
    uint64_t lo = 0, hi = t->nfunc, e0, e1, fo, fo1;
    ftab_at(t, 0, &e0, &fo);
    ftab_at(t, t->nfunc, &e1, &fo);
    if (pc < e0 || pc >= e1)
        return 0;
    while (hi - lo > 1) { /* the last entry <= pc */
        uint64_t mid = lo + (hi - lo) / 2;
        ftab_at(t, mid, &e0, &fo);
        if (e0 <= pc)
            lo = mid;
        else
            hi = mid;
    }
    gofn g;
    ftab_at(t, lo, &g.entry, &fo);
    ftab_at(t, lo + 1, &e1, &fo1); /* the next function's entry */
    if (pc >= e1 || !func_read(t, fo, &g))
        return 0;
    int32_t ln;
    if (!pcvalue(t, g.pcln, g.entry, pc, &ln))
        return 0; /* past the function's code: padding, no function's */
    *entry = g.entry;
    unsigned n = 0;
    uint64_t cur = pc;
    size_t tleft = 0;
    const uint8_t *tree = g.npcdata > PCDATA_INLTREEINDEX ? inl_tree(t, &g, &tleft) : NULL;
    uint32_t ixtab = tree ? (uint32_t)rd(g.f + g.fixed + 4 * PCDATA_INLTREEINDEX, 4) : 0;
    size_t recsz = t->version >= 120 ? 16 : 20;
    unsigned nameat = t->version >= 120 ? 4 : 12, parentat = t->version >= 120 ? 8 : 16;
    int32_t ix;
    while (n + 1 < max && ixtab && pcvalue(t, ixtab, g.entry, cur, &ix) && ix >= 0 &&
           ((uint64_t)ix + 1) * recsz <= tleft) {
        const uint8_t *rec = tree + (size_t)ix * recsz;
        const char *name = str_at(t, t->names, rd(rec + nameat, 4));
        int32_t ppc = (int32_t)rd(rec + parentat, 4);
        if (!name || ppc < 0 || g.entry + (uint64_t)ppc >= e1)
            break;
        fr[n].function = name;
        fr[n].file = file_of(t, &g, cur, &fr[n].line);
        fr[n].inlined = 1;
        n++;
        if (g.entry + (uint64_t)ppc == cur)
            break; /* a loop in a damaged tree */
        cur = g.entry + (uint64_t)ppc;
    }
    fr[n].function = g.name;
    fr[n].file = file_of(t, &g, cur, &fr[n].line);
    fr[n].inlined = 0;
    return n + 1;
}
