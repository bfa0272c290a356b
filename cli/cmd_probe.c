/*
 * cli/cmd_probe.c: `memwatch probe [--json]`: what this machine offers for
 * memory measurement (CPU, kernel, privileges, PMUs, methods with the reason
 * each can or cannot run, prefetcher MSR access). The decisions come from
 * counters/probe.c (mw_probe_run); this file only parses options and prints.
 * The JSON form is documented in docs/probe-json.md and docs/probe.schema.json.
 */
#include "cli.h"

#include <memwatch/probe.h>

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MW_PROBE_SCHEMA "memwatch-probe/1"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: memwatch probe [--json] [--sysfs-root DIR] [--proc-root DIR] [--dev-root DIR]\n"
            "\n"
            "Shows the CPU and its microarchitecture, the kernel, perf_event_paranoid and\n"
            "privileges, every PMU the kernel exposes, every measurement method memwatch knows\n"
            "for this CPU with 'available' or the reason it is not, and whether the\n"
            "prefetcher MSRs are reachable.\n"
            "\n"
            "  --json            print JSON (schema: docs/probe-json.md)\n"
            "  --sysfs-root DIR  read PMUs from DIR/bus/event_source/devices (default /sys)\n"
            "  --proc-root DIR   read cpuinfo, self/status, sys/kernel/* from DIR (default /proc)\n"
            "  --dev-root DIR    look for DIR/cpu/0/msr (default /dev)\n"
            "  -h, --help        this text\n");
}

/* "config:0-7,32-35" back from a parsed field. */
static void format_str(const mw_format_field *f, char *buf, size_t len)
{
    static const char *const words[] = {"config", "config1", "config2", "config3"};
    size_t off = (size_t)snprintf(buf, len, "%s:", words[f->word & 3]);
    int first = 1;
    for (int b = 0; b < 64 && off < len;) {
        if (!(f->mask >> b & 1)) {
            b++;
            continue;
        }
        int e = b;
        while (e + 1 < 64 && (f->mask >> (e + 1) & 1))
            e++;
        int w = e > b ? snprintf(buf + off, len - off, "%s%d-%d", first ? "" : ",", b, e)
                      : snprintf(buf + off, len - off, "%s%d", first ? "" : ",", b);
        if (w < 0)
            break;
        off += (size_t)w;
        first = 0;
        b = e + 1;
    }
}

static const char *quantity_name(mw_quantity q)
{
    return q == MW_Q_DRAM_BYTES ? "dram_bytes" : q == MW_Q_LATENCY ? "latency" : "unknown";
}

static const char *scope_name(mw_scope s)
{
    switch (s) {
    case MW_SCOPE_SYSTEM: return "system";
    case MW_SCOPE_SOCKET: return "socket";
    case MW_SCOPE_CORE: return "core";
    case MW_SCOPE_THREAD: return "thread";
    }
    return "unknown";
}

static const char *err_name(int err)
{
    switch (err) {
    case 0: return NULL;
    case MW_ERR_NOPMU: return "no_pmu";
    case MW_ERR_NOEVENT: return "no_event";
    case MW_ERR_PARANOID: return "paranoid";
    case MW_ERR_PRIV: return "privileges";
    case MW_ERR_UNSUPPORTED: return "unsupported";
    case MW_ERR_TOOBIG: return "too_big";
    case MW_ERR_PARSE: return "parse";
    default: return "other";
    }
}

static cJSON *to_json(const mw_probe *p)
{
    cJSON *root = cJSON_CreateObject(), *o, *a;
    char buf[128];
    cJSON_AddStringToObject(root, "schema", MW_PROBE_SCHEMA);
    cJSON_AddStringToObject(root, "memwatch_version", mw_version());
    cJSON_AddStringToObject(root, "summary", p->summary);
    cJSON_AddBoolToObject(root, "hardware_events", p->have_hardware);

    o = cJSON_AddObjectToObject(root, "cpu");
    cJSON_AddBoolToObject(o, "identified", p->cpu_err == 0);
    cJSON_AddStringToObject(o, "vendor", p->cpu.vendor);
    cJSON_AddNumberToObject(o, "family", p->cpu.family);
    cJSON_AddNumberToObject(o, "model", p->cpu.model);
    cJSON_AddNumberToObject(o, "stepping", p->cpu.stepping);
    cJSON_AddStringToObject(o, "model_name", p->cpu.model_name);
    cJSON_AddStringToObject(o, "microcode", p->cpu.microcode);
    cJSON_AddStringToObject(o, "uarch", mw_uarch_name(p->cpu.uarch));
    cJSON_AddStringToObject(o, "uarch_name", mw_uarch_long_name(p->cpu.uarch));
    cJSON_AddBoolToObject(o, "clflush", p->have_clflush);
    cJSON_AddBoolToObject(o, "tsc", p->have_tsc);

    cJSON_AddStringToObject(root, "kernel", p->kernel);
    if (p->privs.paranoid == MW_PARANOID_UNKNOWN)
        cJSON_AddNullToObject(root, "perf_event_paranoid");
    else
        cJSON_AddNumberToObject(root, "perf_event_paranoid", p->privs.paranoid);
    o = cJSON_AddObjectToObject(root, "privileges");
    cJSON_AddBoolToObject(o, "known", p->privs_err == 0);
    cJSON_AddBoolToObject(o, "root", p->privs.is_root);
    cJSON_AddBoolToObject(o, "cap_perfmon", p->privs.cap_perfmon);
    cJSON_AddBoolToObject(o, "cap_sys_admin", p->privs.cap_sys_admin);
    cJSON_AddBoolToObject(o, "cpu_wide_counting", mw_privs_can_cpu_wide(&p->privs));
    cJSON_AddBoolToObject(o, "kernel_counting", mw_privs_can_kernel(&p->privs));

    a = cJSON_AddArrayToObject(root, "pmus");
    for (size_t i = 0; i < mw_pmus_count(p->pmus); i++) {
        const mw_pmu *u = mw_pmus_get(p->pmus, i);
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", u->name);
        cJSON_AddNumberToObject(j, "type", u->type);
        cJSON_AddBoolToObject(j, "hardware", mw_pmu_is_hardware(u));
        cJSON *c = cJSON_AddArrayToObject(j, "cpus");
        for (size_t k = 0; k < u->n_cpus; k++)
            cJSON_AddItemToArray(c, cJSON_CreateNumber(u->cpus[k]));
        c = cJSON_AddObjectToObject(j, "formats");
        for (size_t k = 0; k < u->n_formats; k++) {
            format_str(&u->formats[k], buf, sizeof buf);
            cJSON_AddStringToObject(c, u->formats[k].name, buf);
        }
        c = cJSON_AddArrayToObject(j, "events");
        for (size_t k = 0; k < u->n_events; k++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "name", u->events[k].name);
            cJSON_AddStringToObject(e, "terms", u->events[k].terms);
            cJSON_AddNumberToObject(e, "scale", u->events[k].scale);
            cJSON_AddStringToObject(e, "unit", u->events[k].unit);
            cJSON_AddItemToArray(c, e);
        }
        c = cJSON_AddObjectToObject(j, "caps");
        for (size_t k = 0; k < u->n_caps; k++)
            cJSON_AddStringToObject(c, u->caps[k].name, u->caps[k].value);
        cJSON_AddItemToArray(a, j);
    }
    a = cJSON_AddArrayToObject(root, "pmu_problems");
    const char *const *msgs;
    size_t np = mw_pmus_problems(p->pmus, &msgs);
    for (size_t i = 0; i < np; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(msgs[i]));
    if (p->pmus_err)
        cJSON_AddItemToArray(a, cJSON_CreateString(p->summary));

    a = cJSON_AddArrayToObject(root, "methods");
    for (size_t i = 0; i < p->n_methods; i++) {
        const mw_method_avail *m = &p->methods[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", m->name);
        cJSON_AddStringToObject(j, "quantity", quantity_name(m->def->quantity));
        cJSON_AddStringToObject(j, "scope", scope_name(m->def->scope));
        cJSON_AddBoolToObject(j, "available", m->available);
        cJSON_AddStringToObject(j, "reason", m->reason);
        if (m->err)
            cJSON_AddStringToObject(j, "error", err_name(m->err));
        else
            cJSON_AddNullToObject(j, "error");
        cJSON_AddStringToObject(j, "formula", m->def->formula ? m->def->formula : "");
        cJSON_AddItemToArray(a, j);
    }

    o = cJSON_AddObjectToObject(root, "prefetch_msr");
    if (p->msr.msr) {
        snprintf(buf, sizeof buf, "0x%x", (unsigned)p->msr.msr);
        cJSON_AddStringToObject(o, "msr", buf);
    } else {
        cJSON_AddNullToObject(o, "msr");
    }
    cJSON_AddBoolToObject(o, "reachable", p->msr.reachable);
    cJSON_AddStringToObject(o, "reason", p->msr.reason);
    return root;
}

static void print_text(const mw_probe *p)
{
    /* First line: the plain answer. */
    if (!p->have_hardware)
        printf("No hardware performance events here: %s.\n", p->summary);
    else
        printf("%s\n", p->summary);
    printf("\nCPU:         %s (%s family %u model %u stepping %u)\n",
           p->cpu.model_name[0] ? p->cpu.model_name : "unknown",
           p->cpu.vendor[0] ? p->cpu.vendor : "?", p->cpu.family, p->cpu.model,
           p->cpu.stepping);
    printf("uarch:       %s (%s)\n", mw_uarch_name(p->cpu.uarch),
           mw_uarch_long_name(p->cpu.uarch));
    printf("kernel:      %s\n", p->kernel);
    if (p->privs.paranoid == MW_PARANOID_UNKNOWN)
        printf("perf_event_paranoid: unreadable\n");
    else
        printf("perf_event_paranoid: %d\n", p->privs.paranoid);
    if (p->privs_err)
        printf("privileges:  unknown (%s)\n", mw_strerror(p->privs_err));
    else
        printf("privileges:  root %s, CAP_PERFMON %s, CAP_SYS_ADMIN %s -> per-CPU counting %s, "
               "kernel-mode counting %s\n",
               p->privs.is_root ? "yes" : "no", p->privs.cap_perfmon ? "yes" : "no",
               p->privs.cap_sys_admin ? "yes" : "no",
               mw_privs_can_cpu_wide(&p->privs) ? "allowed" : "not allowed",
               mw_privs_can_kernel(&p->privs) ? "allowed" : "not allowed");

    printf("\nPMUs (%zu):\n", mw_pmus_count(p->pmus));
    for (size_t i = 0; i < mw_pmus_count(p->pmus); i++) {
        const mw_pmu *u = mw_pmus_get(p->pmus, i);
        printf("  %-16s type %-3u %s", u->name, (unsigned)u->type,
               mw_pmu_is_hardware(u) ? "hardware events" : "no hardware events");
        if (u->n_events) {
            printf(", %zu event%s:", u->n_events, u->n_events == 1 ? "" : "s");
            for (size_t k = 0; k < u->n_events && k < 6; k++)
                printf(" %s", u->events[k].name);
            if (u->n_events > 6)
                printf(" ...");
        }
        printf("\n");
    }
    const char *const *msgs;
    size_t np = mw_pmus_problems(p->pmus, &msgs);
    for (size_t i = 0; i < np; i++)
        printf("  warning: %s\n", msgs[i]);
    if (p->pmus_err)
        printf("  %s\n", p->summary);

    printf("\nMethods for %s:\n", mw_uarch_name(p->cpu.uarch));
    for (size_t i = 0; i < p->n_methods; i++) {
        const mw_method_avail *m = &p->methods[i];
        printf("  %-12s %-11s %s\n", m->name, m->available ? "available" : "unavailable",
               m->reason);
    }
    if (p->msr.msr)
        printf("\nPrefetcher MSR 0x%x: %s: %s\n", (unsigned)p->msr.msr,
               p->msr.reachable ? "reachable" : "not reachable", p->msr.reason);
    else
        printf("\nPrefetcher MSR: not reachable: %s\n", p->msr.reason);
}

int mw_cmd_probe(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},        {"sysfs-root", required_argument, NULL, 's'},
        {"proc-root", required_argument, NULL, 'p'}, {"dev-root", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
    };
    mw_probe_opts po = {NULL, NULL, NULL, 0};
    int json = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+jh", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 's': po.sysfs_root = optarg; break;
        case 'p': po.proc_root = optarg; break;
        case 'd': po.dev_root = optarg; break;
        case 'h': usage(stdout); return 0;
        default:
            if (optopt && strchr("spd", optopt))
                fprintf(stderr, "memwatch probe: option '%s' needs an argument\n\n",
                        argv[optind - 1]);
            else if (optopt && strchr("jh", optopt) && !strncmp(argv[optind - 1], "--", 2))
                fprintf(stderr, "memwatch probe: option '%s' takes no argument\n\n",
                        argv[optind - 1]);
            else
                fprintf(stderr, "memwatch probe: unknown option '%s'\n\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "memwatch probe: unexpected argument '%s'\n\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    mw_probe *p = NULL;
    int rc = mw_probe_run(&po, &p);
    if (rc) {
        fprintf(stderr, "memwatch probe: %s\n", mw_strerror(rc));
        return 1;
    }
    if (json) {
        cJSON *j = to_json(p);
        char *s = j ? cJSON_Print(j) : NULL;
        if (!s) {
            fprintf(stderr, "memwatch probe: out of memory\n");
            cJSON_Delete(j);
            mw_probe_free(p);
            return 1;
        }
        printf("%s\n", s);
        free(s);
        cJSON_Delete(j);
    } else {
        print_text(p);
    }
    mw_probe_free(p);
    return 0;
}
