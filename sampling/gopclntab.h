/*
 * sampling/gopclntab.h: Go's function and line table (.gopclntab), private
 * to sampling/ (symbolize.c uses it).
 *
 * A Go program keeps its own table of functions, files and lines for its
 * tracebacks: it stays in binaries stripped with -ldflags='-s -w' and in
 * binaries without usable DWARF. This reader answers, for a module-relative
 * address inside a Go function, the function as Go prints it
 * ("main.hotLoop", "runtime.memmove"), its file and line, and the functions
 * inlined there (innermost first). Layouts read: Go 1.16/1.17 (magic
 * 0xfffffffa), 1.18/1.19 (0xfffffff0) and 1.20 and later (0xfffffff1); Go
 * 1.2 to 1.15 (0xfffffffb) is recognized and refused with a reason.
 *
 * A Go function covers [entry, end), end the last address of its pc-line
 * table (its code without the alignment padding after it); an address in
 * no such range gets no Go name. Nothing is allocated: the reader points
 * into the ELF file's mapped data, which must outlive it. Every offset read
 * from the file is checked against its section.
 * Threading: read-only after mw_gopcln_open; lookups may run concurrently.
 */
#ifndef MW_SAMPLING_GOPCLNTAB_H
#define MW_SAMPLING_GOPCLNTAB_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mw_gopcln {
    int version;               /* 116, 118 or 120 (the layout); 0: no table */
    unsigned ptrsize, quantum; /* pointer size, pc quantum (1 on x86) */
    uint64_t addr;             /* the table's (pcHeader's) address in the module */
    uint64_t text;             /* base of functab's entry offsets (1.18+) */
    uint64_t nfunc;
    const uint8_t *hdr; /* the table as mapped; size bytes */
    size_t size;
    size_t names, cutab, filetab, pctab, pcln; /* offsets from hdr */
    const uint8_t *gofunc; /* go:func.* (inline trees, 1.18+), NULL if not found */
    size_t gofunc_size;    /* bytes mapped from gofunc on */
    uint64_t gofunc_addr;
    Elf *elf; /* for 1.16's absolute funcdata pointers */
} mw_gopcln;

typedef struct mw_gopcln_frame {
    const char *function; /* as Go prints it; never NULL in a result */
    const char *file;     /* NULL when the table has none for the address */
    int line;             /* 0 when unknown */
    int inlined;          /* 1: inlined into the next frame */
} mw_gopcln_frame;

/* Finds and checks the module's Go table: the .gopclntab section, else
 * .data.rel.ro.gopclntab or a table at the start of .data.rel.ro (Go's PIE
 * layouts, where the words the dynamic linker relocates are read from
 * their R_X86_64_RELATIVE relocations). 1 when one is
 * read, 0 when the module has none (why empty), -1 when it has one that is
 * not read (why says so: an older layout, a damaged table). */
int mw_gopcln_open(mw_gopcln *t, Elf *e, char *why, size_t whycap);

/* The Go function that holds module-relative pc: the number of frames
 * written (innermost first, at most max, the last the physical function,
 * inlined 0), with *entry its entry address; 0 when no Go function holds pc
 * (outside every function, or in the padding after one). */
unsigned mw_gopcln_lookup(const mw_gopcln *t, uint64_t pc, mw_gopcln_frame *frames, unsigned max,
                          uint64_t *entry);

#endif
