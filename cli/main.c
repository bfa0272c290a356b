/*
 * cli/main.c: the `memwatch` command. Thin: parses the subcommand and hands
 * the rest of the arguments to it. Each subcommand lives in cli/cmd_<name>.c.
 */
#include "cli.h"
#include "fleet.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const struct mw_cmd {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cmds[] = {
    {"probe", mw_cmd_probe, "show the PMUs, privileges and measurement methods of this machine"},
    {"calibrate", mw_cmd_calibrate,
     "run ground-truth microbenchmarks, validate every method, write the machine profile"},
    {"record", mw_cmd_record, "run a program under libmemwatch.so and record it"},
    {"report", mw_cmd_report, "turn raw .mwr files into a SQLite database and a summary"},
    {"export", mw_cmd_export,
     "write a report's run as pprof, Perfetto/Chrome trace JSON, folded stacks or CSV"},
    {"prefetch", mw_cmd_prefetch, "show, switch or restore the hardware prefetchers"},
    {"monitor", mw_cmd_monitor,
     "node agent: judge memory load every interval, serve it to Prometheus"},
    {"fleet", mw_cmd_fleet,
     "compare machine profiles of many nodes, name the ones off their kind's median"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: memwatch [--version] [--help] <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
    fprintf(f, "\n'memwatch <command> --help' describes a command.\n");
}

/* `memwatch calibrate --gpu ...` runs memwatch-gpu (built with nvcc, installed
 * beside this program) so that the CPU tool never links CUDA. */
static int run_gpu_tool(int argc, char **argv)
{
    char self[PATH_MAX], tool[PATH_MAX + 16];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "memwatch: cannot find my own path: %s\n", strerror(errno));
        return 1;
    }
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = 0;
    snprintf(tool, sizeof tool, "%s/memwatch-gpu", self);
    argv[0] = tool;
    execv(tool, argv);
    fprintf(stderr,
            "memwatch: the GPU part is not available: %s: %s\n"
            "  (it is built when CMake finds a CUDA toolkit; see docs/gpu.md)\n",
            tool, strerror(errno));
    (void)argc;
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("memwatch %s\n", MW_VERSION);
        return 0;
    }
    if (!strcmp(argv[1], "calibrate"))
        for (int i = 2; i < argc; i++)
            if (!strcmp(argv[i], "--gpu"))
                return run_gpu_tool(argc - 1, argv + 1);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(argv[1], cmds[i].name))
            return cmds[i].run(argc - 1, argv + 1);
    fprintf(stderr, "memwatch: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
