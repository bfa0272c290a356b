/*
 * report/kernel_name.c: GPU kernel names shortened for the text summary
 * (the database and the JSON keep them whole, demangled): the return type,
 * the parameter list and the namespaces of the function go; template
 * arguments are kept as far as the width allows and then folded with "…",
 * like Nsight's short names: "for_each_kernel<CUDAStream<double>::add…>".
 * Two kernels whose short names collide are told apart by the caller
 * (summary.c numbers them).
 * May call: libc. Threading: reentrant.
 */
#include "region.h"

#include <stdio.h>
#include <string.h>

void mw_kernel_short(const char *full, char *out, size_t width)
{
    if (!full) {
        snprintf(out, width + 1, "?");
        return;
    }
    size_t n = strlen(full);
    /* the function's parameter list: the first '(' outside template brackets */
    size_t end = n, start = 0;
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = full[i];
        if (ch == '<')
            depth++;
        else if (ch == '>' && depth > 0)
            depth--;
        else if (ch == '(' && depth == 0 && i > 0) {
            end = i;
            break;
        } else if (ch == ' ' && depth == 0) {
            start = i + 1; /* a return type before the name */
        }
    }
    /* the last "::" outside template brackets before end: namespaces and classes go */
    depth = 0;
    for (size_t i = start; i + 1 < end; i++) {
        char ch = full[i];
        if (ch == '<')
            depth++;
        else if (ch == '>' && depth > 0)
            depth--;
        else if (ch == ':' && full[i + 1] == ':' && depth == 0)
            start = i + 2;
    }
    if (start >= end) {
        start = 0;
        end = n;
    }
    size_t len = end - start;
    if (width < 8)
        width = 8;
    if (len <= width) {
        memcpy(out, full + start, len);
        out[len] = 0;
        return;
    }
    /* fold: keep what fits, then "…" and the closing bracket if a template is open */
    const char *lt = memchr(full + start, '<', len);
    size_t keep = width - 2;
    memcpy(out, full + start, keep);
    size_t o = keep;
    memcpy(out + o, "\xe2\x80\xa6", 3); /* … */
    o += 3;
    if (lt && (size_t)(lt - (full + start)) < keep)
        out[o++] = '>';
    out[o] = 0;
}
