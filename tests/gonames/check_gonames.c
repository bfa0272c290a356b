/*
 * tests/gonames/check_gonames.c: memwatch's symbolizer against Go's own
 * tools. Usage: check_gonames BINARY EXPECT
 * EXPECT holds one address a line, fields separated by tabs (Go's names
 * may hold spaces), as test_gonames.sh writes it from
 * `go tool objdump`, `go tool addr2line` and `go tool nm` on the unstripped
 * build:
 *   at ADDR FUNCTION FILE LINE  the physical function holding ADDR and the
 *                               innermost file:line (as go tool addr2line)
 *   inl ADDR INNER OUTER LINE   ADDR lies in INNER inlined into OUTER, whose
 *                               call is on line LINE
 *   fn ADDR FUNCTION            FUNCTION's entry: that function, with a
 *                               file and a line
 *   gap ADDR                    no function's code (padding between
 *                               functions): no Go function's name
 * Every line is looked up in BINARY (the stripped build); a line that does
 * not agree is printed, and the exit status is 1 when any does not.
 */
#include <memwatch/symbolize.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s BINARY EXPECT\n", argv[0]);
        return 2;
    }
    FILE *ex = fopen(argv[2], "r");
    mw_symbolizer *s = NULL;
    mw_symmod *m = NULL;
    if (!ex || mw_symbolizer_new(NULL, &s) != 0 || mw_symbolizer_module(s, argv[1], NULL, 0, &m)) {
        fprintf(stderr, "FAILED: cannot open %s or %s\n", argv[1], argv[2]);
        return 1;
    }
    char line[4096], fn[2048], fn2[2048], file[2048];
    unsigned long nat = 0, ninl = 0, ngap = 0, bad = 0, nfunc = 0;
    char last[2048] = "";
    while (fgets(line, sizeof line, ex)) {
        uint64_t a = 0;
        int ln = 0;
        mw_sym_result r;
        char why[8192] = "";
        if (sscanf(line, "at\t%" SCNx64 "\t%2047[^\t]\t%2047[^\t]\t%d", &a, fn, file, &ln) == 4) {
            nat++;
            if (strcmp(fn, last)) {
                nfunc++;
                snprintf(last, sizeof last, "%s", fn);
            }
            mw_symmod_lookup(m, a, &r);
            const mw_sym_frame *in = r.nframes ? &r.frames[0] : NULL;
            const mw_sym_frame *out = r.nframes ? &r.frames[r.nframes - 1] : NULL;
            if (r.quality != MW_SYMQ_DWARF || !out || !out->function || strcmp(out->function, fn) ||
                !in->file || strcmp(in->file, file) || in->line != ln || !r.symbol ||
                strcmp(r.symbol, fn))
                snprintf(why, sizeof why,
                         "0x%" PRIx64 ": expected %s %s:%d, got %s %s:%d "
                         "(quality %d, %u frames, symbol %s)",
                         a, fn, file, ln, out && out->function ? out->function : "-",
                         in && in->file ? in->file : "-", in ? in->line : 0, r.quality, r.nframes,
                         r.symbol ? r.symbol : "-");
        } else if (sscanf(line, "inl\t%" SCNx64 "\t%2047[^\t]\t%2047[^\t]\t%d", &a, fn, fn2, &ln) ==
                   4) {
            ninl++;
            mw_symmod_lookup(m, a, &r);
            if (r.nframes != 2 || !r.frames[0].inlined || r.frames[1].inlined ||
                !r.frames[0].function || strcmp(r.frames[0].function, fn) ||
                !r.frames[1].function || strcmp(r.frames[1].function, fn2) ||
                r.frames[1].line != ln)
                snprintf(why, sizeof why,
                         "0x%" PRIx64 ": expected %s inlined into %s (line %d), "
                         "got %u frames: %s%s, %s:%d",
                         a, fn, fn2, ln, r.nframes, r.nframes ? r.frames[0].function : "-",
                         r.nframes && r.frames[0].inlined ? " (inlined)" : "",
                         r.nframes > 1 ? r.frames[1].function : "-",
                         r.nframes > 1 ? r.frames[1].line : 0);
        } else if (sscanf(line, "fn\t%" SCNx64 "\t%2047[^\t\n]", &a, fn) == 2) {
            nat++;
            nfunc++;
            mw_symmod_lookup(m, a, &r);
            const char *f = r.nframes ? r.frames[r.nframes - 1].function : NULL;
            if (r.quality != MW_SYMQ_DWARF || !f || strcmp(f, fn) || !r.frames[0].file ||
                r.frames[0].line <= 0)
                snprintf(why, sizeof why, "0x%" PRIx64 ": expected %s with a line, got %s %s:%d", a,
                         fn, f ? f : "-", r.nframes && r.frames[0].file ? r.frames[0].file : "-",
                         r.nframes ? r.frames[0].line : 0);
        } else if (sscanf(line, "gap\t%" SCNx64, &a) == 1) {
            ngap++;
            mw_symmod_lookup(m, a, &r);
            const char *f = r.nframes ? r.frames[0].function : NULL;
            if (r.symbol || (f && !strstr(f, "@0x")))
                snprintf(why, sizeof why, "0x%" PRIx64 ": padding, named %s (symbol %s)", a,
                         f ? f : "-", r.symbol ? r.symbol : "-");
        } else {
            continue;
        }
        if (why[0] && bad++ < 20)
            printf("FAILED: %s\n", why);
    }
    fclose(ex);
    printf("%s: %lu addresses in %lu functions with function, file and line, %lu inlined, "
           "%lu in padding: %lu differ\n",
           argv[1], nat, nfunc, ninl, ngap, bad);
    mw_symbolizer_free(s);
    return bad || !nat ? 1 : 0;
}
