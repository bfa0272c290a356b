/*
 * memwatch offline symbolization (elfutils libdwfl/libdw/libelf).
 *
 * A symbolizer opens each module (executable, shared library, dlopen'ed
 * module) once, keyed by path and build-id, and answers for addresses
 * relative to the module's load bias (runtime address - bias; for non-PIE
 * executables the bias is 0): function, file, line and the inlined frames,
 * innermost first. Debug information is found in the file itself, through
 * .gnu_debuglink, or under <debug dir>/.build-id/xx/yyyy.debug (default
 * /usr/lib/debug). When the file on disk has another build-id than the one
 * recorded, only a debug file with the recorded build-id is used; otherwise
 * the answer is module + address. A function name is given only where a
 * symbol covers the address: within its size, or, for a sizeless symbol, in
 * the same function by CFI (the FDE of .eh_frame/.debug_frame that covers the
 * address covers the symbol's address too); DWARF subprograms cover their
 * ranges. An address no symbol covers is "module@0xSTART", START the start of
 * its FDE (module-relative), or "module@0xADDR" where no FDE covers it; the
 * nearest code symbol before it is a hint only (mw_sym_result.nearest).
 * Go code is named from the module's own function table (.gopclntab, kept
 * by strip and by -ldflags='-s -w'; Go 1.16 and later), before DWARF: the
 * function as Go prints it ("main.hotLoop"), file, line and inlined calls,
 * quality MW_SYMQ_DWARF, the function also as the symbol; a Go function
 * covers its entry up to the end of its line table, not the padding after.
 * Nothing here crashes on a bad file: a module that cannot be opened answers
 * with the module name and the address.
 *
 * Strings returned stay valid until mw_symbolizer_free().
 * Threading: a symbolizer is used by one thread at a time.
 */
#ifndef MEMWATCH_SYMBOLIZE_H
#define MEMWATCH_SYMBOLIZE_H

#include <memwatch/memwatch.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MW_SYM_MAX_FRAMES 16 /* inline depth kept per address */

typedef struct mw_symbolizer mw_symbolizer;
typedef struct mw_symmod mw_symmod;

typedef struct mw_sym_frame {
    const char *function;   /* NULL when unknown */
    const char *file;       /* NULL when no line information */
    int line;               /* 0 when unknown */
    int column;
    int inlined;            /* 1: this frame was inlined into the next one */
} mw_sym_frame;

enum mw_sym_quality {
    MW_SYMQ_NONE = 0,       /* module + address only */
    MW_SYMQ_SYMTAB = 1,     /* ELF symbol + offset */
    MW_SYMQ_DWARF = 2,      /* function, file, line, inlines */
};

typedef struct mw_sym_result {
    int quality;            /* enum mw_sym_quality */
    const char *symbol;     /* ELF symbol covering the address (NULL if none) */
    uint64_t symbol_offset; /* address - symbol start */
    unsigned nframes;       /* 0 unless quality == MW_SYMQ_DWARF (or a symbol gave 1; or,
                               with MW_SYMQ_NONE, 1 named "module@0xSTART") */
    const char *nearest;    /* MW_SYMQ_NONE with a module@ name: the nearest code symbol
                               before the function, "sym+0xoff" (a hint, never the name);
                               valid until the next lookup in the module. Else NULL. */
    mw_sym_frame frames[MW_SYM_MAX_FRAMES];
} mw_sym_result;

typedef struct mw_symbolizer_opts {
    const char *debug_dirs; /* ':'-separated dirs holding .build-id/ trees and debuglink
                               targets; NULL = "/usr/lib/debug" */
} mw_symbolizer_opts;

MW_API int mw_symbolizer_new(const mw_symbolizer_opts *opts, mw_symbolizer **out);
MW_API void mw_symbolizer_free(mw_symbolizer *s);

/* The module for a file, opened once per (path, build-id) and cached. The
 * build-id may be NULL/0 (then the file is taken as it is). Never fails for a
 * missing or broken file: *out is a module that answers MW_SYMQ_NONE, and the
 * return value says why (0 when usable, a negative code otherwise). */
MW_API int mw_symbolizer_module(mw_symbolizer *s, const char *path, const uint8_t *build_id,
                                size_t build_id_len, mw_symmod **out);

/* Symbolize an address relative to the module (runtime address - load bias).
 * Returns the quality (>= 0). For return addresses of call chains pass the
 * address minus 1 to land inside the call instruction. */
MW_API int mw_symmod_lookup(mw_symmod *m, uint64_t rel_addr, mw_sym_result *out);

/* A data symbol (STT_OBJECT/STT_TLS with a size) containing rel_addr:
 * 1 and name/start/size filled, 0 when none. */
MW_API int mw_symmod_data_symbol(mw_symmod *m, uint64_t rel_addr, const char **name,
                                 uint64_t *start, uint64_t *size);

/* The code bytes at rel_addr, from the module's own file (not a debug
 * file, not another build): up to cap of them into buf, their number; 0
 * where the file is not the recorded one or the address is in no
 * executable segment. *fstart (may be NULL): the start of the function
 * that holds rel_addr (the symbol covering it, else its FDE), or rel_addr
 * where neither is known. */
MW_API size_t mw_symmod_code(mw_symmod *m, uint64_t rel_addr, uint8_t *buf, size_t cap,
                             uint64_t *fstart);

/* Whether rel_addr lies in one of the module's executable segments
 * (PT_LOAD with PF_X, its memory size): 1, 0 (its data, or outside the
 * file's segments: no code there), -1 unknown (no file, no program
 * headers). */
MW_API int mw_symmod_in_code(mw_symmod *m, uint64_t rel_addr);

/* The module's TLS segment (PT_TLS): 1 with its memory size and alignment,
 * else 0. *main_program: 1 when the file names a program interpreter
 * (PT_INTERP: a program, whose TLS block sits right below the thread
 * pointer), else 0. */
MW_API int mw_symmod_tls_segment(mw_symmod *m, uint64_t *memsz, uint64_t *align,
                                 int *main_program);

/* The STT_TLS symbol that holds offset off of the module's TLS block: 1
 * with name/start/size, else 0. */
MW_API int mw_symmod_tls_symbol(mw_symmod *m, uint64_t off, const char **name, uint64_t *start,
                                uint64_t *size);

/* A name for display: C++ names (and Rust's legacy ones, which use the same
 * scheme) demangled through the C++ runtime's __cxa_demangle, loaded from
 * libstdc++.so.6 on the first mangled name, with or without an offset
 * ("_Z3fooi+0x30" -> "foo(int)+0x30"); any other name, a name that does
 * not demangle, or no C++ runtime: the name itself. *buf (malloc'ed, *cap
 * bytes; NULL and 0 to begin) is reused and grown across calls, freed by the
 * caller; the result is valid until the next call with the same buffer.
 * Thread-safe. */
MW_API const char *mw_sym_demangle(const char *name, char **buf, size_t *cap);
/* 1 when a C++ runtime with __cxa_demangle was found, else 0 (and why). */
MW_API int mw_sym_demangler(const char **why);

/* What the module is: its path, whether debug info was found, the file it
 * came from (may differ from the path: a .build-id or debuglink file). */
MW_API const char *mw_symmod_path(const mw_symmod *m);
MW_API const char *mw_symmod_debug_file(const mw_symmod *m);
MW_API int mw_symmod_quality(const mw_symmod *m);

/* ---- offline unwinding (libunwind) ----
 * For samples with PERF_SAMPLE_REGS_USER + PERF_SAMPLE_STACK_USER: unwinds
 * the copied user stack with the modules' .eh_frame tables (read from the
 * files on disk), where frame pointers are missing. x86-64; MW_ERR_UNSUPPORTED
 * when memwatch was built without libunwind. */
typedef struct mw_unwinder mw_unwinder;

typedef struct mw_unwind_module {
    uint64_t start, end;    /* mapped address range */
    uint64_t base;          /* load bias */
    const char *path;       /* the file (read for unwind tables and text) */
} mw_unwind_module;

/* The GNU build-id of a file on disk: its length (at most cap bytes copied),
 * 0 when it has none, < 0 when it cannot be read. For MW_VDSO_NAME, the
 * build-id of this process's vDSO (the kernel's, the same in every process
 * of one kernel build). */
MW_API int mw_sym_file_build_id(const char *path, uint8_t *bid, size_t cap);

/* A copy of a module by its build-id in one of the ':'-separated dirs, laid
 * out as debug-info trees are: <dir>/.build-id/xx/yyyy.debug (xx the first
 * byte in hex). 1 and its path in out where one holds exactly that build-id
 * (memwatch record places its libmemwatch.so there, so that the allocation
 * stacks that begin in it unwind after it was rebuilt), else 0. */
MW_API int mw_sym_find_build_id(const char *dirs, const uint8_t *bid, size_t n, char *out,
                                size_t cap);

/* The name the dynamic linker gives the vDSO, as modules are recorded. */
#define MW_VDSO_NAME "linux-vdso.so.1"

/* This process's vDSO image (its ELF file, as the kernel maps it) and its
 * length; NULL where there is none. A module recorded as MW_VDSO_NAME with
 * the same build-id is unwound with it. */
MW_API const unsigned char *mw_vdso_image(size_t *len);

MW_API int mw_unwinder_new(mw_unwinder **out);
MW_API void mw_unwinder_free(mw_unwinder *u);

/* regs: the sampled registers in perf_event x86 order for regs_mask (SP and
 * IP needed); stack: stack_size bytes copied at SP. Writes up to max program
 * counters, innermost (the sampled IP) first; returns how many (>= 1), or
 * MW_ERR_NODATA when SP/IP are missing or unwinding cannot start. */
MW_API int mw_unwind_sample(mw_unwinder *u, const mw_unwind_module *mods, size_t nmods,
                            uint64_t regs_mask, const void *regs, const void *stack,
                            size_t stack_size, uint64_t *pcs, size_t max);

/* 1 when the last mw_unwind_sample reached the outermost frame (the program's
 * or thread's entry, whose unwind information ends the chain), 0 when it was
 * cut short: no unwind table for a frame, the stack copy ended, or max was
 * reached. */
MW_API int mw_unwind_last_complete(const mw_unwinder *u);

/* Forget what was learnt about addresses (call it before unwinding another
 * process's samples: the same address may be other code there). */
MW_API void mw_unwinder_flush(mw_unwinder *u);

#ifdef __cplusplus
}
#endif
#endif
