/*
 * cli/cmd_prefetch.c: `memwatch prefetch --show | --off | --on | --restore`:
 * shows or switches the hardware prefetchers through the prefetcher MSR of the
 * catalogue (msr.h, catalogue.h), and restores the values saved before the
 * first change (also after a hard kill of a calibration). User guide:
 * docs/prefetch.md. Thin: parses, calls counters/msr.c, prints.
 */
#include "cli.h"

#include <memwatch/catalogue.h>
#include <memwatch/msr.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static void prefetch_usage(FILE *f)
{
    fprintf(f,
            "usage: memwatch prefetch (--show | --off | --on | --restore) [options]\n"
            "\n"
            "  --show           print the prefetcher control register of every CPU\n"
            "  --off            switch the known prefetchers off (originals saved first)\n"
            "  --on             switch the known prefetchers on (originals saved first)\n"
            "  --restore        write back the values saved before the first change\n"
            "\n"
            "  --msr-dir DIR    where the N/msr devices are (default /dev/cpu)\n"
            "  --state FILE     the saved values (default $MW_PREFETCH_STATE or\n"
            "                   /run/memwatch/prefetch.state)\n"
            "  --uarch NAME     use this microarchitecture's register (default: this CPU)\n"
            "\n"
            "Needs root and the msr driver (modprobe msr). Only the prefetcher bits the\n"
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
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            prefetch_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--show") || !strcmp(a, "--off") || !strcmp(a, "--on") ||
                   !strcmp(a, "--restore")) {
            if (action && strcmp(action, a)) {
                fprintf(stderr, "memwatch: prefetch: %s and %s exclude each other\n", action, a);
                return 2;
            }
            action = a;
        } else if ((!strcmp(a, "--msr-dir") || !strcmp(a, "--state") || !strcmp(a, "--uarch")) &&
                   i + 1 < argc) {
            const char **dst = !strcmp(a, "--msr-dir") ? &dir : !strcmp(a, "--state") ? &state
                                                                                      : &uarch_name;
            *dst = argv[++i];
        } else {
            fprintf(stderr, "memwatch: prefetch: unknown or incomplete option '%s'\n\n", a);
            prefetch_usage(stderr);
            return 2;
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
