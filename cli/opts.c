/*
 * cli/opts.c: command-line options as tables (cli/opts.h).
 */
#include "opts.h"

#include "cli.h" /* mw_cli_escape */

#include <string.h>

const mw_opt *mw_opt_next(const char *cmd, const mw_opt *tab, size_t n, int argc, char **argv,
                          int *i, const char **val, int *rc)
{
    const char *a = argv[*i];
    *val = NULL;
    if (a[0] != '-' || !a[1]) {
        *rc = -1;
        return NULL;
    }
    if (!strcmp(a, "--")) {
        *rc = -2;
        return NULL;
    }
    const char *eq = !strncmp(a, "--", 2) ? strchr(a, '=') : NULL;
    size_t len = eq ? (size_t)(eq - a) : strlen(a);
    for (size_t k = 0; k < n; k++) {
        const mw_opt *o = &tab[k];
        int is_s = o->s && strlen(o->s) == len && !strncmp(a, o->s, len);
        int is_l = o->l && strlen(o->l) == len && !strncmp(a, o->l, len);
        if (!is_s && !is_l)
            continue;
        if (!o->arg) {
            if (eq) {
                fprintf(stderr, "memwatch %s: %.*s takes no value\n", cmd, (int)len, a);
                *rc = 2;
                return NULL;
            }
        } else if (eq) {
            *val = eq + 1;
        } else if (*i + 1 < argc) {
            *val = argv[++*i];
        } else {
            fprintf(stderr, "memwatch %s: %s needs a value (%s)\n", cmd, a, o->arg);
            *rc = 2;
            return NULL;
        }
        (*i)++;
        *rc = 0;
        return o;
    }
    char shown[200];
    mw_cli_escape(a, shown, sizeof shown);
    fprintf(stderr, "memwatch %s: unknown option '%s' ('memwatch %s --help' lists them)\n", cmd,
            shown, cmd);
    *rc = 2;
    return NULL;
}

void mw_opt_usage(FILE *f, const mw_opt *tab, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        const mw_opt *o = &tab[k];
        if (!o->help)
            continue;
        char head[64];
        snprintf(head, sizeof head, "%s%s%s%s%s", o->s ? o->s : "", o->s && o->l ? ", " : "",
                 o->l ? o->l : "", o->arg ? " " : "", o->arg ? o->arg : "");
        const char *h = o->help;
        size_t hl = strlen(head);
        if (hl > 18)
            fprintf(f, "  %s\n%22s", head, "");
        else
            fprintf(f, "  %-18s  ", head);
        for (;;) {
            const char *nl = strchr(h, '\n');
            if (!nl) {
                fprintf(f, "%s\n", h);
                break;
            }
            fprintf(f, "%.*s\n%22s", (int)(nl - h), h, "");
            h = nl + 1;
        }
    }
}
