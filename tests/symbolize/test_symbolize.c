/*
 * tests/symbolize/test_symbolize.c: offline symbolization (sampling/symbolize.c)
 * of a PIE and a non-PIE executable (mwsym_helper, which prints the truth:
 * its function addresses relative to its load bias and their source lines),
 * an inlined function (the inline frame and its call site), a shared library
 * and a dlopen'ed module (this process's own mappings), stripped binaries
 * with the debug file found by .gnu_debuglink and by the .build-id path, a
 * stripped library without debug info (symbol + offset), a stripped
 * executable without any (module + address), a build-id mismatch, a missing
 * and a non-ELF file (no crash), and data symbols; an address in data is
 * in no executable segment and never named after a data object.
 */
#include "mw_test.h"

#include <memwatch/symbolize.h>

#include <dlfcn.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

int sym_lib_func(int x);
int sym_lib_line(void);
int *sym_lib_data(void);

int test_static_var[64];

typedef struct truth {
    uint64_t target, caller, after;
    int lo, hi, ilo, ihi, call_line;
} truth;

static int run_helper(const char *exe, truth *t)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s", exe);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    unsigned long long a = 0, b = 0, c = 0;
    int ok = fscanf(p, "target %llx %d %d\n", &a, &t->lo, &t->hi) == 3;
    ok = ok && fscanf(p, "inl %llx %llx %d %d %d", &b, &c, &t->ilo, &t->ihi, &t->call_line) == 5;
    pclose(p);
    t->target = a;
    t->caller = b;
    t->after = c;
    return ok ? 0 : -1;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = s ? strlen(s) : 0, b = strlen(suffix);
    return s && a >= b && !strcmp(s + a - b, suffix);
}

static void check_target(mw_symmod *m, const truth *t, const char *what)
{
    mw_sym_result r;
    int q = mw_symmod_lookup(m, t->target + 4, &r);
    MW_CHECK(q == MW_SYMQ_DWARF, "%s: quality %d", what, q);
    MW_CHECK(r.nframes >= 1, "%s: frames", what);
    MW_CHECK(r.frames[0].function && !strcmp(r.frames[0].function, "helper_target"),
             "%s: function %s", what, r.frames[0].function ? r.frames[0].function : "(null)");
    MW_CHECK(ends_with(r.frames[0].file, "symhelper.c"), "%s: file %s", what,
             r.frames[0].file ? r.frames[0].file : "(null)");
    MW_CHECK(r.frames[0].line > t->lo && r.frames[0].line < t->hi, "%s: line %d not in (%d, %d)",
             what, r.frames[0].line, t->lo, t->hi);
    MW_CHECK(r.symbol && !strcmp(r.symbol, "helper_target") && r.symbol_offset == 4,
             "%s: symbol %s+%llu", what, r.symbol ? r.symbol : "(null)",
             (unsigned long long)r.symbol_offset);
}

static void check_inline(mw_symmod *m, const truth *t, const char *what)
{
    int found = 0;
    for (uint64_t a = t->caller; a < t->after && !found; a++) {
        mw_sym_result r;
        mw_symmod_lookup(m, a, &r);
        if (r.nframes >= 2 && r.frames[0].function && !strcmp(r.frames[0].function, "helper_inl") &&
            r.frames[0].inlined && r.frames[1].function &&
            !strcmp(r.frames[1].function, "helper_inl_caller") && !r.frames[1].inlined) {
            found = 1;
            MW_CHECK(r.frames[0].line > t->ilo && r.frames[0].line < t->ihi,
                     "%s: inline line %d not in (%d, %d)", what, r.frames[0].line, t->ilo, t->ihi);
            MW_CHECK(r.frames[1].line == t->call_line, "%s: call site line %d, expected %d", what,
                     r.frames[1].line, t->call_line);
            MW_CHECK(ends_with(r.frames[1].file, "symhelper.c"), "%s: call site file", what);
        }
    }
    MW_CHECK(found, "%s: no address of helper_inl_caller shows the inlined helper_inl", what);
}

struct findlib {
    const char *needle;
    char path[4096];
    uint64_t bias;
};
static int lib_cb(struct dl_phdr_info *i, size_t n, void *d)
{
    (void)n;
    struct findlib *f = d;
    if (i->dlpi_name && strstr(i->dlpi_name, f->needle)) {
        snprintf(f->path, sizeof f->path, "%s", i->dlpi_name);
        f->bias = i->dlpi_addr;
        return 1;
    }
    return 0;
}

static size_t build_id_of(const char *path, uint8_t *bid)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    elf_version(EV_CURRENT);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    const void *p;
    ssize_t n = e ? dwelf_elf_gnu_build_id(e, &p) : -1;
    size_t k = 0;
    if (n > 0 && n <= 20) {
        memcpy(bid, p, (size_t)n);
        k = (size_t)n;
    }
    if (e)
        elf_end(e);
    close(fd);
    return k;
}

static void check_lib_func(mw_symmod *m, uint64_t rel, const char *fn, const char *file,
                           int first_line, const char *what)
{
    mw_sym_result r;
    int q = mw_symmod_lookup(m, rel, &r);
    MW_CHECK(q == MW_SYMQ_DWARF, "%s: quality %d", what, q);
    MW_CHECK(r.nframes >= 1 && r.frames[0].function && !strcmp(r.frames[0].function, fn),
             "%s: function", what);
    MW_CHECK(ends_with(r.frames[0].file, file), "%s: file %s", what,
             r.frames[0].file ? r.frames[0].file : "(null)");
    MW_CHECK(r.frames[0].line >= first_line && r.frames[0].line <= first_line + 8,
             "%s: line %d, function starts at %d", what, r.frames[0].line, first_line);
}

int main(void)
{
    char path[4096];
    mw_symbolizer *s;
    MW_CHECK_INT(mw_symbolizer_new(NULL, &s), 0);

    /* PIE executable + inlined function */
    truth pie, nopie;
    snprintf(path, sizeof path, "%s/mwsym_helper", MW_BUILD_DIR);
    MW_CHECK_INT(run_helper(path, &pie), 0);
    mw_symmod *m;
    MW_CHECK_INT(mw_symbolizer_module(s, path, NULL, 0, &m), 0);
    MW_CHECK(pie.target < 0x400000, "PIE: relative address 0x%llx",
             (unsigned long long)pie.target);
    check_target(m, &pie, "PIE");
    check_inline(m, &pie, "PIE inline");
    mw_symmod *again;
    MW_CHECK_INT(mw_symbolizer_module(s, path, NULL, 0, &again), 0);
    MW_CHECK(again == m, "module cache");

    /* non-PIE executable */
    snprintf(path, sizeof path, "%s/mwsym_helper_nopie", MW_BUILD_DIR);
    MW_CHECK_INT(run_helper(path, &nopie), 0);
    MW_CHECK(nopie.target >= 0x400000, "non-PIE: absolute address 0x%llx",
             (unsigned long long)nopie.target);
    MW_CHECK_INT(mw_symbolizer_module(s, path, NULL, 0, &m), 0);
    check_target(m, &nopie, "non-PIE");
    check_inline(m, &nopie, "non-PIE inline");

    /* shared library linked into this test */
    struct findlib fl = {"libmwsym_demo.so", "", 0};
    dl_iterate_phdr(lib_cb, &fl);
    MW_CHECK(fl.path[0], "libmwsym_demo.so mapped");
    uint8_t bid[20];
    size_t bl = build_id_of(fl.path, bid);
    MW_CHECK(bl > 0, "library build-id");
    MW_CHECK_INT(mw_symbolizer_module(s, fl.path, bid, bl, &m), 0);
    uint64_t rel = (uint64_t)(uintptr_t)&sym_lib_func - fl.bias;
    check_lib_func(m, rel + 4, "sym_lib_func", "symdemo.c", sym_lib_line(), "shared library");
    const char *dn;
    uint64_t ds, dz;
    MW_CHECK(mw_symmod_data_symbol(m, (uint64_t)(uintptr_t)sym_lib_data() - fl.bias, &dn, &ds,
                                   &dz) == 1 &&
                 !strcmp(dn, "sym_lib_private") && dz == 8 * sizeof(int),
             "library data symbol");

    /* dlopen'ed module */
    snprintf(path, sizeof path, "%s/libmwsym_dlo.so", MW_BUILD_DIR);
    void *h = dlopen(path, RTLD_NOW);
    MW_CHECK(h != NULL, "dlopen: %s", dlerror());
    if (h) {
        int (*fn)(int) = (int (*)(int))dlsym(h, "sym_dl_func");
        int (*ln)(void) = (int (*)(void))dlsym(h, "sym_dl_line");
        struct findlib fd = {"libmwsym_dlo.so", "", 0};
        dl_iterate_phdr(lib_cb, &fd);
        MW_CHECK(fn && ln && fd.path[0], "dlsym");
        if (fn && ln && fd.path[0]) {
            MW_CHECK_INT(mw_symbolizer_module(s, fd.path, NULL, 0, &m), 0);
            check_lib_func(m, (uint64_t)(uintptr_t)fn - fd.bias + 4, "sym_dl_func", "symdlo.c",
                           ln(), "dlopen'ed module");
        }
    }

    /* a sizeless symbol names only its own function (by CFI): the static
     * function after it, in the stripped copy, is module@0x..., never
     * mw_sizeless+off */
    snprintf(path, sizeof path, "%s/libmwsym_sizeless.so", MW_BUILD_DIR);
    void *hs = dlopen(path, RTLD_NOW);
    MW_CHECK(hs != NULL, "dlopen: %s", dlerror());
    if (hs) {
        void *(*addr)(void) = (void *(*)(void))dlsym(hs, "mw_sl_static_addr");
        void *sz = dlsym(hs, "mw_sizeless");
        struct findlib fs = {"libmwsym_sizeless.so", "", 0};
        dl_iterate_phdr(lib_cb, &fs);
        MW_CHECK(addr && sz && fs.path[0], "dlsym mw_sl_static_addr, mw_sizeless");
        snprintf(path, sizeof path, "%s/libmwsym_sizeless.stripped.so", MW_BUILD_DIR);
        mw_symmod *sm;
        if (addr && sz && fs.path[0] && mw_symbolizer_module(s, path, NULL, 0, &sm) == 0) {
            mw_sym_result r;
            uint64_t in_static = (uint64_t)(uintptr_t)addr() - fs.bias + 2;
            mw_symmod_lookup(sm, in_static, &r);
            const char *f = r.nframes ? r.frames[0].function : NULL;
            MW_CHECK(!r.symbol && f && !strncmp(f, "libmwsym_sizeless.stripped.so@0x", 32),
                     "static function after a sizeless symbol: %s (symbol %s)", f ? f : "(none)",
                     r.symbol ? r.symbol : "none");
            MW_CHECK(r.nearest && !strncmp(r.nearest, "mw_sizeless+0x", 14),
                     "the sizeless symbol is the hint: %s", r.nearest ? r.nearest : "(none)");
            mw_symmod_lookup(sm, (uint64_t)(uintptr_t)sz - fs.bias + 2, &r);
            f = r.nframes ? r.frames[0].function : NULL;
            MW_CHECK(f && !strcmp(f, "mw_sizeless") && r.symbol_offset == 2,
                     "inside the sizeless symbol's own function: %s", f ? f : "(none)");
        }
    }

    /* this PIE test program: a static data object */
    char exe[4096];
    ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[el > 0 ? el : 0] = 0;
    MW_CHECK_INT(mw_symbolizer_module(s, exe, NULL, 0, &m), 0);
    {
        /* the main program's bias: the first dl_iterate_phdr entry */
        struct findlib mainp = {"", "", 0};
        dl_iterate_phdr(lib_cb, &mainp); /* "" matches the first entry */
        uint64_t a = (uint64_t)(uintptr_t)&test_static_var[10] - mainp.bias;
        MW_CHECK(mw_symmod_data_symbol(m, a, &dn, &ds, &dz) == 1 &&
                     !strcmp(dn, "test_static_var") && dz == sizeof test_static_var,
                 "static data symbol");
        MW_CHECK_INT(mw_symmod_data_symbol(m, 0x10, &dn, &ds, &dz), 0);
        /* the same address as code (a pointer to it on a stack, read as a
         * return address): in no executable segment, and no function is
         * named after the data object (libdw, asked where a sizeless symbol
         * such as __bss_start lies below, would name test_static_var) */
        MW_CHECK_INT(mw_symmod_in_code(m, a), 0);
        mw_sym_result r;
        mw_symmod_lookup(m, a, &r);
        const char *f = r.nframes ? r.frames[0].function : NULL;
        MW_CHECK(!r.symbol && (!f || !strstr(f, "test_static_var")),
                 "data named as code: %s (symbol %s)", f ? f : "(none)",
                 r.symbol ? r.symbol : "none");
        MW_CHECK_INT(mw_symmod_in_code(m, (uint64_t)(uintptr_t)&main - mainp.bias), 1);
        MW_CHECK_INT(mw_symmod_in_code(NULL, 0x10), -1);
    }

    /* stripped, debug file through .gnu_debuglink */
    snprintf(path, sizeof path, "%s/mwsym_helper.linked", MW_BUILD_DIR);
    MW_CHECK_INT(mw_symbolizer_module(s, path, NULL, 0, &m), 0);
    check_target(m, &pie, "debuglink");
    check_inline(m, &pie, "debuglink inline");
    MW_CHECK(ends_with(mw_symmod_debug_file(m), "mwsym_helper.debug"), "debug file %s",
             mw_symmod_debug_file(m) ? mw_symmod_debug_file(m) : "(null)");

    /* stripped, no debug file anywhere: no symbol, never a crash; the
     * function is module@0xSTART (its FDE's start), never another
     * function's symbol, one name for all its addresses */
    snprintf(path, sizeof path, "%s/mwsym_helper.stripped", MW_BUILD_DIR);
    mw_symmod *bare;
    mw_symbolizer_module(s, path, NULL, 0, &bare);
    mw_sym_result r;
    int q = mw_symmod_lookup(bare, pie.target + 4, &r);
    MW_CHECK(q == MW_SYMQ_NONE && !r.symbol && r.nframes == 1 && r.frames[0].function &&
                 !strncmp(r.frames[0].function, "mwsym_helper.stripped@0x", 24) &&
                 !strchr(r.frames[0].function, '+'),
             "stripped without debug: quality %d, %u frames, %s", q, r.nframes,
             r.nframes && r.frames[0].function ? r.frames[0].function : "(none)");
    if (r.nframes == 1 && r.frames[0].function) {
        char first[256];
        snprintf(first, sizeof first, "%s", r.frames[0].function);
        mw_sym_result r2;
        mw_symmod_lookup(bare, pie.target + 8, &r2);
        MW_CHECK(r2.nframes == 1 && !strcmp(r2.frames[0].function, first),
                 "another address of the same function, the same name (%s, %s)", first,
                 r2.nframes ? r2.frames[0].function : "(none)");
    }

    /* stripped, debug file under <dir>/.build-id/xx/yyyy.debug */
    bl = build_id_of(path, bid);
    MW_CHECK(bl == 20, "helper build-id (%zu bytes)", bl);
    char dir[] = "/tmp/mw_sym_XXXXXX";
    MW_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char hex[41], bdir[600], bfile[700], cmd[2000];
    for (size_t i = 0; i < bl; i++)
        snprintf(hex + 2 * i, 3, "%02x", bid[i]);
    snprintf(bdir, sizeof bdir, "%s/.build-id/%.2s", dir, hex);
    snprintf(bfile, sizeof bfile, "%s/%s.debug", bdir, hex + 2);
    snprintf(cmd, sizeof cmd, "mkdir -p %s && cp %s/mwsym_helper.debug %s", bdir, MW_BUILD_DIR,
             bfile);
    MW_CHECK_INT(system(cmd), 0);
    mw_symbolizer *s2;
    mw_symbolizer_opts o = {dir};
    MW_CHECK_INT(mw_symbolizer_new(&o, &s2), 0);
    MW_CHECK_INT(mw_symbolizer_module(s2, path, bid, bl, &m), 0);
    check_target(m, &pie, "build-id path");
    check_inline(m, &pie, "build-id inline");
    MW_CHECK(ends_with(mw_symmod_debug_file(m), ".debug"), "build-id debug file");
    /* the file on disk changed (other build-id): only the recorded one is used */
    uint8_t other[20];
    memset(other, 0x11, sizeof other);
    MW_CHECK(mw_symbolizer_module(s2, path, other, 20, &m) != 0, "mismatch reported");
    MW_CHECK_INT(mw_symmod_lookup(m, pie.target + 4, &r), MW_SYMQ_NONE);
    /* ... but a rebuilt binary whose old debug file is in the .build-id tree works */
    snprintf(path, sizeof path, "%s/mwsym_helper_nopie", MW_BUILD_DIR);
    MW_CHECK_INT(mw_symbolizer_module(s2, path, bid, bl, &m), 0);
    check_target(m, &pie, "rebuilt, old build-id from the debug tree");
    mw_symbolizer_free(s2);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    MW_CHECK_INT(system(cmd), 0);

    /* stripped shared library, no debug info: symbol + offset from .dynsym */
    snprintf(path, sizeof path, "%s/libmwsym_demo.stripped.so", MW_BUILD_DIR);
    mw_symbolizer_module(s, path, NULL, 0, &m);
    q = mw_symmod_lookup(m, rel + 4, &r);
    MW_CHECK(q == MW_SYMQ_SYMTAB, "stripped library: quality %d", q);
    MW_CHECK(r.symbol && !strcmp(r.symbol, "sym_lib_func") && r.symbol_offset == 4,
             "stripped library: %s+%llu", r.symbol ? r.symbol : "(null)",
             (unsigned long long)r.symbol_offset);
    MW_CHECK(r.nframes == 1 && r.frames[0].file == NULL, "no line information");

    /* missing and non-ELF files */
    MW_CHECK(mw_symbolizer_module(s, "/nonexistent/lib.so", NULL, 0, &m) != 0, "missing");
    MW_CHECK_INT(mw_symmod_lookup(m, 0x1000, &r), MW_SYMQ_NONE);
    char junk[] = "/tmp/mw_junk_XXXXXX";
    int fd = mkstemp(junk);
    MW_CHECK(fd >= 0 && write(fd, "not an elf file at all\n", 23) == 23, "junk file");
    close(fd);
    MW_CHECK(mw_symbolizer_module(s, junk, NULL, 0, &m) != 0, "non-ELF");
    MW_CHECK_INT(mw_symmod_lookup(m, 0x1000, &r), MW_SYMQ_NONE);
    unlink(junk);
    mw_symbolizer_free(s);
    return mw_test_done();
}
