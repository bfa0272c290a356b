/*
 * report/text.c: text from the outside world (program arguments, paths,
 * symbol names, anything a raw file holds) made safe to show: on a terminal
 * with its control characters escaped (\xNN), in every file memwatch writes
 * (JSON, the trace, HTML, CSV, folded stacks, pprof) as valid UTF-8, each
 * byte that is not part of valid UTF-8 replaced by U+FFFD (text.h).
 * May call: libc, cJSON. Writes only to the stream it is given.
 */
#include "text.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (1..4), 0 when it is not one
 * (a stray byte, an overlong form, a surrogate, beyond U+10FFFF). */
static size_t utf8_len(const unsigned char *p)
{
    if (!p)
        return 0;
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    size_t l = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (!l)
        return 0;
    for (size_t i = 1; i < l; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if (l == 2 && c < 0xc2)
        return 0;
    if (l == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0)))
        return 0;
    if (l == 4 && ((c == 0xf0 && p[1] < 0x90) || c > 0xf4 || (c == 0xf4 && p[1] >= 0x90)))
        return 0;
    return l;
}

size_t mw_text_escape(const char *s, char *out, size_t n)
{
    size_t o = 0;
    if (!n)
        return 0;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        char tmp[8];
        size_t k, adv;
        size_t ul = utf8_len(p);
        if (*p == '\\') {
            memcpy(tmp, "\\\\", 2);
            k = 2;
            adv = 1;
        } else if (ul == 0 || *p < 0x20 || *p == 0x7f) {
            k = (size_t)snprintf(tmp, sizeof tmp, "\\x%02x", *p);
            adv = 1;
        } else if (ul == 2 && p[0] == 0xc2 && p[1] < 0xa0) { /* C1 controls: CSI is one */
            k = (size_t)snprintf(tmp, sizeof tmp, "\\u%04x", p[1]);
            adv = 2;
        } else {
            memcpy(tmp, p, ul);
            k = adv = ul;
        }
        if (o + k >= n)
            break;
        memcpy(out + o, tmp, k);
        o += k;
        p += adv;
    }
    out[o] = 0;
    return o;
}

int mw_text_is_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t l = utf8_len(p);
        if (!l)
            return 0;
        p += l;
    }
    return 1;
}

char *mw_text_utf8(const char *s)
{
    size_t n = strlen(s);
    char *out = malloc(3 * n + 1); /* each bad byte becomes 3 bytes */
    if (!out)
        return NULL;
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
    while (*p) {
        size_t l = utf8_len(p);
        if (!l) {
            memcpy(out + o, MW_TEXT_REPLACEMENT, 3);
            o += 3;
            p++;
        } else {
            memcpy(out + o, p, l);
            o += l;
            p += l;
        }
    }
    out[o] = 0;
    return out;
}

size_t mw_text_utf8_seq(const char *p)
{
    return p && *p ? utf8_len((const unsigned char *)p) : 0;
}

void mw_text_put_utf8(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : ""), *run = p;
    while (*p) {
        size_t l = utf8_len(p);
        if (l) {
            p += l;
            continue;
        }
        fwrite(run, 1, (size_t)(p - run), f);
        fputs(MW_TEXT_REPLACEMENT, f);
        run = ++p;
    }
    fwrite(run, 1, (size_t)(p - run), f);
}

/* A copy of s, valid UTF-8, in cJSON's memory (cJSON_Delete frees it). */
static char *json_copy_utf8(const char *s)
{
    char *u = mw_text_utf8(s);
    if (!u)
        return NULL;
    size_t n = strlen(u) + 1;
    char *c = cJSON_malloc(n);
    if (c)
        memcpy(c, u, n);
    free(u);
    return c;
}

void mw_text_json_utf8(cJSON *item)
{
    for (; item; item = item->next) {
        if (cJSON_IsString(item) && item->valuestring && !mw_text_is_utf8(item->valuestring)) {
            char *c = json_copy_utf8(item->valuestring);
            if (c) {
                if (!(item->type & cJSON_IsReference)) /* a reference's text is not its own */
                    cJSON_free(item->valuestring);
                item->valuestring = c;
            }
        }
        if (item->string && !mw_text_is_utf8(item->string)) {
            char *c = json_copy_utf8(item->string);
            if (c) {
                if (!(item->type & cJSON_StringIsConst))
                    cJSON_free(item->string);
                item->string = c;
                item->type &= ~cJSON_StringIsConst;
            }
        }
        if (item->child)
            mw_text_json_utf8(item->child);
    }
}
