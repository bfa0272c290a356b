/*
 * cli/cmd_prefetch.c: `memwatch prefetch --show | --off | --on | --restore`:
 * shows or switches the hardware prefetchers through the prefetcher MSR of the
 * catalogue (msr.h, catalogue.h), and restores the values saved before the
 * first change (also after a hard kill of a calibration). User guide:
 * docs/prefetch.md. Thin: parses, calls counters/msr.c, prints.
 */
#include "cli.h"
#include "opts.h"

#include <memwatch/catalogue.h>
#include <memwatch/msr.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

enum { PF_HELP, PF_SHOW, PF_OFF, PF_ON, PF_RESTORE, PF_MSR_DIR, PF_STATE, PF_UARCH };
static const mw_opt prefetch_opts[] = {
    {NULL, "--show", NULL, PF_SHOW, "print the prefetcher control register of every CPU"},
    {NULL, "--off", NULL, PF_OFF, "switch the known prefetchers off (originals saved first)"},
    {NULL, "--on", NULL, PF_ON, "switch the known prefetchers on (originals saved first)"},
    {NULL, "--restore", NULL, PF_RESTORE, "write back the values saved before the first change"},
    {NULL, "--msr-dir", "DIR", PF_MSR_DIR, "where the N/msr devices are (default /dev/cpu)"},
    {NULL, "--state", "FILE", PF_STATE,
     "the saved values (default $MW_PREFETCH_STATE or\n/run/memwatch/prefetch.state)"},
    {NULL, "--uarch", "NAME", PF_UARCH,
     "use this microarchitecture's register (default: this CPU)"},
    {"-h", "--help", NULL, PF_HELP, "this text"},
};

static void prefetch_usage(FILE *f)
{
    fprintf(f, "usage: memwatch prefetch (--show | --off | --on | --restore) [options]\n\n");
    mw_opt_usage(f, prefetch_opts, MW_OPT_N(prefetch_opts));
    fprintf(f, "\nNeeds root and the msr driver (modprobe msr). Only the prefetcher bits the\n"
               "catalogue knows are changed (read-modify-write). See docs/prefetch.md.\n");
}

static int prefetch_reason(const char *what, int rc)
{
    const char *why = mw_msr_why();
    fprintf(stderr, "memwatch: prefetch: %s: %s\n", what, why[0] ? why : mw_strerror(rc));
    return 1;
}

int mw_cmd_prefetch(int argc, char **argv)
{
    const char *action = NULL, *dir = NULL, *state = NULL, *uarch_name = NULL;
    for (int i = 1; i < argc;) {
        const char *val;
        int rc;
        const mw_opt *op = mw_opt_next("prefetch", prefetch_opts, MW_OPT_N(prefetch_opts), argc,
                                       argv, &i, &val, &rc);
        if (!op) {
            if (rc != 2)
                fprintf(stderr, "memwatch prefetch: unexpected argument '%s'\n", argv[i]);
            prefetch_usage(stderr);
            return 2;
        }
        switch (op->id) {
        case PF_HELP:
            prefetch_usage(stdout);
            return 0;
        case PF_SHOW:
        case PF_OFF:
        case PF_ON:
        case PF_RESTORE:
            if (action && strcmp(action, op->l)) {
                fprintf(stderr, "memwatch prefetch: %s and %s exclude each other\n", action,
                        op->l);
                return 2;
            }
            action = op->l;
            break;
        case PF_MSR_DIR:
            dir = val;
            break;
        case PF_STATE:
            state = val;
            break;
        case PF_UARCH:
            uarch_name = val;
            break;
        }
    }
    if (!action) {
        prefetch_usage(stderr);
        return 2;
    }
    mw_prefetch_ctl c = {.prefix = dir, .state_path = state};
    char spath[PATH_MAX];
    if (!state && mw_prefetch_state_default_path(spath, sizeof spath) == 0)
        c.state_path = spath;

    if (!strcmp(action, "--restore")) {
        int rc = mw_prefetch_restore(&c);
        if (rc < 0)
            return prefetch_reason("cannot restore", rc);
        printf("prefetchers restored from %s\n", c.state_path);
        return 0;
    }

    mw_uarch u;
    if (uarch_name) {
        u = mw_uarch_from_name(uarch_name);
        if (u == MW_UARCH_UNKNOWN) {
            fprintf(stderr, "memwatch: prefetch: unknown microarchitecture '%s'\n", uarch_name);
            return 2;
        }
    } else {
        mw_cpu_id id;
        int rc = mw_cpu_identify(NULL, &id);
        if (rc < 0) {
            fprintf(stderr, "memwatch: prefetch: cannot identify this CPU: %s\n", mw_strerror(rc));
            return 1;
        }
        u = id.uarch;
    }
    const mw_prefetch_msr *pm = NULL;
    if (mw_catalogue_prefetch_msr(u, &pm) < 0 || !pm) {
        fprintf(stderr,
                "memwatch: prefetch: no prefetcher control register is known for %s; the "
                "prefetchers stay as they are\n",
                mw_uarch_long_name(u));
        return 1;
    }
    c.msr = pm->msr;
    c.mask = pm->mask;

    if (!strcmp(action, "--show")) {
        int cpus[MW_MSR_MAX_CPUS];
        static uint64_t vals[MW_MSR_MAX_CPUS];
        int n = mw_prefetch_show(&c, cpus, vals, MW_MSR_MAX_CPUS);
        if (n < 0)
            return prefetch_reason("cannot read the prefetcher register", n);
        printf("%s: MSR 0x%" PRIx32 ", known bits 0x%" PRIx64 " (1 = disabled): %s\n",
               mw_uarch_long_name(u), pm->msr, pm->mask, pm->bits ? pm->bits : "");
        for (int i = 0; i < n; i++) {
            uint64_t k = vals[i] & pm->mask;
            printf("  cpu %-4d 0x%016" PRIx64 "  %s\n", cpus[i], vals[i],
                   k == 0 ? "all known prefetchers on"
                   : k == pm->mask ? "all known prefetchers off"
                                   : "some known prefetchers off");
        }
        return 0;
    }
    int off = !strcmp(action, "--off");
    int rc = mw_prefetch_set(&c, off);
    if (rc < 0)
        return prefetch_reason(off ? "cannot switch the prefetchers off"
                                   : "cannot switch the prefetchers on",
                               rc);
    printf("prefetchers %s (MSR 0x%" PRIx32 ", bits 0x%" PRIx64 "); the original values are in "
           "%s for `memwatch prefetch --restore`\n",
           off ? "off" : "on", pm->msr, pm->mask, c.state_path);
    return 0;
}
