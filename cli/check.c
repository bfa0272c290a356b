/*
 * cli/check.c: what the subcommands check before they start anything: that
 * an output file or directory can be written (without creating it), that a
 * value is in range, and the MEMWATCH_* variables record hands to
 * libmemwatch.so (docs/config.md). Each failure is one line on stderr; the
 * caller exits 2.
 *
 * The rules for MEMWATCH_* here are those of preload/config.c, which reads
 * the same variables in every recorded process (and, where one is invalid,
 * falls back to the default and says so once per process tree);
 * tests/cli/test_record_options.sh holds both to one table; the parsers
 * themselves are shared (counters/envval.h).
 */
#include "cli.h"
#include "envval.h" /* counters/ */
#include "text.h"   /* report/ */

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* The nearest existing ancestor of path (path itself included) into out. */
static int existing_ancestor(const char *path, char *out, size_t n)
{
    snprintf(out, n, "%s", path);
    for (;;) {
        struct stat st;
        if (stat(out, &st) == 0)
            return 0;
        if (errno != ENOENT)
            return -errno;
        char *s = strrchr(out, '/');
        while (s && s > out && s[1] == 0) { /* trailing slashes */
            *s = 0;
            s = strrchr(out, '/');
        }
        if (!s) {
            snprintf(out, n, ".");
            return 0;
        }
        if (s == out) {
            out[1] = 0;
            return 0;
        }
        *s = 0;
    }
}

/* An output that fails its check: "memwatch CMD: OPT PATH: why" on stderr
 * (without PATH where it is NULL); -1. */
static int refuse(const char *cmd, const char *opt, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int refuse(const char *cmd, const char *opt, const char *path, const char *fmt, ...)
{
    char why[2 * PATH_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    fprintf(stderr, "memwatch %s: %s%s%s: %s\n", cmd, opt, path ? " " : "", path ? path : "", why);
    return -1;
}

int mw_cli_check_out_dir(const char *cmd, const char *opt, const char *dir)
{
    struct stat st;
    if (!*dir)
        return refuse(cmd, opt, NULL, "an empty name is not a directory");
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return refuse(cmd, opt, dir, "exists and is not a directory");
        if (access(dir, W_OK | X_OK))
            return refuse(cmd, opt, dir, "cannot write there: %s", strerror(errno));
        return 0;
    }
    if (errno != ENOENT)
        return refuse(cmd, opt, dir, "%s", strerror(errno));
    char anc[PATH_MAX];
    if (existing_ancestor(dir, anc, sizeof anc) < 0)
        return refuse(cmd, opt, dir, "%s", strerror(errno));
    if (stat(anc, &st) || !S_ISDIR(st.st_mode))
        return refuse(cmd, opt, dir, "cannot be created: %s is not a directory", anc);
    if (access(anc, W_OK | X_OK))
        return refuse(cmd, opt, dir, "cannot be created in %s: %s", anc, strerror(errno));
    return 0;
}

int mw_cli_check_out_file(const char *cmd, const char *opt, const char *path)
{
    struct stat st;
    if (!*path)
        return refuse(cmd, opt, NULL, "an empty file name");
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return refuse(cmd, opt, path, "is a directory");
        if (access(path, W_OK))
            return refuse(cmd, opt, path, "%s", strerror(errno));
        return 0;
    }
    if (errno != ENOENT)
        return refuse(cmd, opt, path, "%s", strerror(errno));
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *s = strrchr(dir, '/');
    if (!s)
        snprintf(dir, sizeof dir, ".");
    else if (s == dir)
        dir[1] = 0;
    else
        *s = 0;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode))
        return refuse(cmd, opt, path, "directory %s does not exist", dir);
    if (access(dir, W_OK | X_OK))
        return refuse(cmd, opt, path, "cannot write in %s: %s", dir, strerror(errno));
    return 0;
}

/* ---- the values of MEMWATCH_* (preload/config.c's rules) ---- */

static int boolean(const char *v)
{
    int b;
    return mw_env_bool(v, &b);
}

static int uint_in(const char *v, unsigned long lo, unsigned long hi)
{
    char *end;
    errno = 0;
    if (!isdigit((unsigned char)*v))
        return -1;
    unsigned long n = strtoul(v, &end, 10);
    return *end || errno || n < lo || n > hi ? -1 : 0;
}

static int real_in(const char *v, double lo_excl, double hi)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    return end == v || *end || !(d > lo_excl) || d > hi ? -1 : 0;
}

/* One of the values in list (NULL-terminated): 0, else -1. */
static int one_of(const char *v, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(v, *list))
            return 0;
    return -1;
}

/* The unwinding, inline, lazy start, mix, TSC and probe variables, with the rules of
 * preload/config.c and counters/probe_lat.c (mw_cli_check_env's contract). */
static int check_env_more(const char *var, const char *v, const char **expect)
{
    uint64_t u;
    if (!strcmp(var, "MEMWATCH_UNWIND")) {
        static const char *const ok[] = {"auto", "dwarf", "fp", NULL};
        *expect = "auto, dwarf or fp";
        return one_of(v, ok);
    }
    if (!strcmp(var, "MEMWATCH_UNWIND_STACK")) {
        static const char *const suf[] = {"b", "k", "kib", "kb", NULL};
        static const uint64_t mul[] = {1, 1024, 1024, 1024};
        *expect = "512 to 32768 bytes (K allowed)";
        return mw_env_scaled(v, suf, mul, 1, &u) || u < 512 || u > 32768 ? -1 : 0;
    }
    if (!strcmp(var, "MEMWATCH_INLINE")) {
        static const char *const suf[] = {"ms", "s", NULL};
        static const uint64_t mul[] = {1000000, 1000000000};
        size_t l = strlen(v);
        *expect = "0, 1, always or a CPU time of 10ms or more, e.g. 5s";
        if (!strcmp(v, "always") || !boolean(v))
            return 0;
        return l > 1 && v[l - 1] == 's' && !mw_env_scaled(v, suf, mul, 0, &u) && u >= 10000000ull
                   ? 0
                   : -1;
    }
    if (!strcmp(var, "MEMWATCH_LAZY")) {
        static const char *const ok[] = {"timer", "tick", NULL};
        *expect = "timer or tick";
        return one_of(v, ok);
    }
    if (!strcmp(var, "MEMWATCH_MIX")) {
        static const char *const ok[] = {"reads100", "reads75", "reads50", "nt50", "100",
                                         "75",       "50",      "nt",      NULL};
        *expect = "reads100, reads75, reads50 or nt50";
        return one_of(v, ok);
    }
    if (!strcmp(var, "MEMWATCH_TSC")) {
        char *end;
        errno = 0;
        double d = strtod(v, &end);
        *expect = "a frequency in Hz (1e6..1e11), a space, and how it was determined";
        return end != v && d >= 1e6 && d <= 1e11 && *end == ' ' && end[1] && !strchr(end, '\n')
                   ? 0
                   : -1;
    }
    if (!strcmp(var, "MEMWATCH_PROBE_LINES")) {
        *expect = "2 to 4096 cache lines";
        return uint_in(v, 2, 4096);
    }
    if (!strcmp(var, "MEMWATCH_PROBE_BURSTS")) {
        *expect = "1 to 1000 bursts";
        return uint_in(v, 1, 1000);
    }
    if (!strcmp(var, "MEMWATCH_PROBE_WINDOW")) {
        *expect = "0 (off) to 10000 ms";
        return uint_in(v, 0, 10000);
    }
    if (!strcmp(var, "MEMWATCH_SYSFS") || !strcmp(var, "MEMWATCH_PROC")) {
        struct stat st;
        *expect = "an existing directory";
        return stat(v, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
    }
    if (!strcmp(var, "MEMWATCH_PROBE_LAYOUT")) {
        static const char *const ok[] = {"small", "huge", NULL};
        *expect = "small or huge";
        return one_of(v, ok);
    }
    return 1;
}

/* 0 when val is valid for var, else -1 with what was expected in *expect;
 * 1 when memwatch does not check var here. */
int mw_cli_check_env(const char *var, const char *v, const char **expect)
{
    uint64_t u;
    if (!strcmp(var, "MEMWATCH_INTERVAL")) {
        static const char *const suf[] = {"ns", "us", "ms", "s", NULL};
        static const uint64_t mul[] = {1, 1000, 1000000, 1000000000};
        *expect = "a duration from 1ms to 60s, e.g. 10ms";
        return mw_env_scaled(v, suf, mul, 1000000, &u) || u < 1000000 || u > 60000000000ull ? -1
                                                                                            : 0;
    }
    if (!strcmp(var, "MEMWATCH_RATE")) {
        static const char *const suf[] = {"hz", "khz", NULL};
        static const uint64_t mul[] = {1, 1000};
        *expect = "0 (off) to 1000000 samples per second";
        return mw_env_scaled(v, suf, mul, 1, &u) || u > 1000000 ? -1 : 0;
    }
    if (!strcmp(var, "MEMWATCH_METHOD")) {
        static char choices[512];
        if (!choices[0])
            mw_env_method_choices(choices, sizeof choices);
        *expect = choices;
        return mw_env_method_ok(v) ? 0 : -1;
    }
    if (!strcmp(var, "MEMWATCH_ALLOC_THRESHOLD")) {
        static const char *const suf[] = {"b",  "k", "kib", "kb", "m", "mib",
                                          "mb", "g", "gib", "gb", NULL};
        static const uint64_t mul[] = {1,       1024,    1024,    1024,    1 << 20,
                                       1 << 20, 1 << 20, 1 << 30, 1 << 30, 1 << 30};
        *expect = "bytes with K, M or G, or off";
        return !strcasecmp(v, "off") || !mw_env_scaled(v, suf, mul, 1, &u) ? 0 : -1;
    }
    if (!strcmp(var, "MEMWATCH_THRESHOLD_NS") || !strcmp(var, "MEMWATCH_BASELINE_NS")) {
        *expect = "a latency in ns, above 0 and at most 1000000";
        return real_in(v, 0, 1e6);
    }
    if (!strcmp(var, "MEMWATCH_THRESHOLD_FACTOR")) {
        *expect = "a factor above 1 and at most 100";
        return real_in(v, 1.0, 100);
    }
    if (!strcmp(var, "MEMWATCH_VERBOSE")) {
        *expect = "0, 1, 2 or 3";
        return uint_in(v, 0, 3);
    }
    if (!strcmp(var, "MEMWATCH_FAULT_PERIOD")) {
        *expect = "0 (off) or faults per sample, up to 1000000000";
        return uint_in(v, 0, 1000000000ul);
    }
    if (!strcmp(var, "MEMWATCH_ALLOC_FRAMES")) {
        *expect = "0 to 64";
        return uint_in(v, 0, 64);
    }
    if (!strcmp(var, "MEMWATCH_STACK_DEPTH")) {
        *expect = "1 to 127";
        return uint_in(v, 1, 127);
    }
    if (!strcmp(var, "MEMWATCH_RING_PAGES")) {
        *expect = "a power of two from 4 to 1024";
        if (uint_in(v, 4, 1024))
            return -1;
        unsigned long n = strtoul(v, NULL, 10);
        return n & (n - 1) ? -1 : 0;
    }
    if (!strcmp(var, "MEMWATCH_LDLAT")) {
        *expect = "a load latency threshold of 3 to 65535 cycles";
        return uint_in(v, 3, 65535);
    }
    if (!strcmp(var, "MEMWATCH_PRECISE")) {
        *expect = "auto or off";
        return strcmp(v, "auto") && strcmp(v, "off") ? -1 : 0;
    }
    if (!strcmp(var, "MEMWATCH_ENABLE") || !strcmp(var, "MEMWATCH_INHERIT") ||
        !strcmp(var, "MEMWATCH_FOLLOW") || !strcmp(var, "MEMWATCH_GPU") ||
        !strcmp(var, "MEMWATCH_GROUP_READABLE")) {
        *expect = "0 or 1";
        return boolean(v);
    }
    if (!strcmp(var, "MEMWATCH_RUN_ID")) {
        *expect = "up to 63 letters, digits, '.', '_', '-'";
        size_t l = strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
        return v[l] || l >= 64 ? -1 : 0;
    }
    if (!strcmp(var, "MEMWATCH_PROBE_SHARE")) {
        *expect = "0, 1 or an absolute directory";
        return v[0] == '/' || !boolean(v) ? 0 : -1;
    }
    return check_env_more(var, v, expect);
}

#include "mw_env_known.h"

/* edit distance of a and b (short names), for "did you mean" */
static size_t env_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[64];
    if (la >= 63 || lb >= 63)
        return 99;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* A MEMWATCH_* name that no part of memwatch reads (docs/config.md lists
 * them all): a typo would be ignored without a word. Warns, naming the
 * closest known name. */
static void env_unknown(const char *cmd, const char *var)
{
    size_t n = sizeof mw_env_known / sizeof mw_env_known[0], best = 99;
    const char *near = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(var, mw_env_known[i]))
            return;
        size_t d = env_distance(var + 9, mw_env_known[i] + 9);
        if (d < best) {
            best = d;
            near = mw_env_known[i];
        }
    }
    fprintf(stderr, "memwatch %s: warning: %s is not a memwatch variable and is ignored%s%s%s "
                    "(docs/config.md lists them)\n",
            cmd, var, near && best <= 3 ? "; did you mean " : "", near && best <= 3 ? near : "",
            near && best <= 3 ? "?" : "");
}

int mw_cli_check_environment(const char *cmd)
{
    extern char **environ;
    int bad = 0;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "MEMWATCH_", 9))
            continue;
        const char *eq = strchr(*e, '=');
        if (!eq || !eq[1])
            continue; /* empty: the default, as the library reads it */
        char var[64];
        size_t l = (size_t)(eq - *e);
        if (l >= sizeof var)
            continue;
        memcpy(var, *e, l);
        var[l] = 0;
        env_unknown(cmd, var);
        const char *expect = "";
        if (mw_cli_check_env(var, eq + 1, &expect) < 0) {
            char shown[200];
            mw_cli_escape(eq + 1, shown, sizeof shown);
            fprintf(stderr, "memwatch %s: %s='%s' is invalid: expected %s\n", cmd, var, shown,
                    expect);
            bad = 1;
        }
    }
    return bad ? -1 : 0;
}

size_t mw_cli_escape(const char *s, char *out, size_t n)
{
    return mw_text_escape(s, out, n);
}
