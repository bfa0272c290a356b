/*
 * cli/cmd_fleet.c: `memwatch fleet DIR|FILES... [--json] [--html FILE]
 * [--reference FILE] [--write-reference FILE [--group N]]` (docs/fleet.md).
 * Reads machine profiles that `memwatch calibrate` wrote on many nodes,
 * groups them by machine kind and names the nodes whose figures lie off
 * their group's median (cli/fleet_stats.c). Every input is either used or
 * named with the reason it is not. Exit status: 0 every input used and no
 * outlier, 1 outliers or inputs not used, 2 bad usage, no usable profile, or
 * an output that could not be written.
 */
#include "cli.h"
#include "fleet.h"
#include "opts.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FL_MAX_DEPTH 4

enum { FL_O_HELP, FL_O_JSON, FL_O_HTML, FL_O_REF, FL_O_WREF, FL_O_GROUP, FL_O_VERBOSE };
static const mw_opt fleet_opts[] = {
    {NULL, "--json", NULL, FL_O_JSON, "print the comparison as JSON instead of text"},
    {NULL, "--html", "FILE", FL_O_HTML, "also write an HTML page with a plot per figure"},
    {NULL, "--reference", "FILE", FL_O_REF,
     "compare with this profile (or one --write-reference\nwrote) instead of the group's median"},
    {NULL, "--write-reference", "FILE", FL_O_WREF,
     "write the group's median as a reference profile"},
    {NULL, "--group", "N", FL_O_GROUP,
     "the group --write-reference takes (as numbered in\nthe text; needed when there are several)"},
    {"-v", "--verbose", NULL, FL_O_VERBOSE, "also every node's figures"},
    {"-h", "--help", NULL, FL_O_HELP, "this text"},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: memwatch fleet DIR|FILES... [options]\n"
            "  Compares machine profiles written by `memwatch calibrate` on many nodes: groups\n"
            "  them by machine kind (CPU model, family/model/stepping, CPUs) and names the\n"
            "  nodes whose figures lie off their group's median (docs/fleet.md). A folder is\n"
            "  searched for *.json files (subfolders too, %d levels); a node is named after\n"
            "  its file, or its folder for a file called profile.json.\n"
            "options:\n",
            FL_MAX_DEPTH);
    mw_opt_usage(f, fleet_opts, MW_OPT_N(fleet_opts));
    fprintf(f, "exit status: 0 no odd node and every input used; 1 odd nodes found or inputs\n"
               "  not used (each named with its reason); 2 bad usage or no usable profile\n");
}

static fl_input *fl_add_input(fl_fleet *f, const char *path)
{
    if (f->n_in == f->cap_in) {
        size_t cap = f->cap_in ? 2 * f->cap_in : 64;
        fl_input *n = realloc(f->in, cap * sizeof *n);
        if (!n)
            return NULL;
        f->in = n;
        f->cap_in = cap;
    }
    fl_input *in = &f->in[f->n_in++];
    memset(in, 0, sizeof *in);
    snprintf(in->path, sizeof in->path, "%s", path);
    in->node = -1;
    return in;
}

static int fl_is_json(const char *name)
{
    size_t l = strlen(name);
    return l > 5 && !strcmp(name + l - 5, ".json");
}

static int fl_alpha(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* The *.json files under dir, in name order; *other counts the rest. */
static int fl_walk(fl_fleet *f, const char *dir, int depth, unsigned *other)
{
    struct dirent **ent;
    int n = scandir(dir, &ent, NULL, fl_alpha);
    if (n < 0) {
        fl_input *in = fl_add_input(f, dir);
        if (in)
            snprintf(in->why, sizeof in->why, "folder cannot be read: %s", strerror(errno));
        return in ? 0 : -1;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        const char *nm = ent[i]->d_name;
        char path[PATH_MAX];
        struct stat st;
        if (!strcmp(nm, ".") || !strcmp(nm, "..") || rc < 0 ||
            snprintf(path, sizeof path, "%s/%s", dir, nm) >= (int)sizeof path ||
            stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && depth < FL_MAX_DEPTH)
            rc = fl_walk(f, path, depth + 1, other);
        else if (S_ISREG(st.st_mode) && fl_is_json(nm))
            rc = fl_add_input(f, path) ? 0 : -1;
        else if (S_ISREG(st.st_mode))
            (*other)++;
    }
    for (int i = 0; i < n; i++)
        free(ent[i]);
    free(ent);
    return rc;
}

static int fl_collect(fl_fleet *f, int n, char **inputs)
{
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (!inputs[i][0]) {
            fl_input *in = fl_add_input(f, "''");
            if (!in)
                return -1;
            snprintf(in->why, sizeof in->why, "an empty file name");
        } else if (stat(inputs[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            unsigned other = 0;
            char dir[PATH_MAX];
            snprintf(dir, sizeof dir, "%s", inputs[i]);
            size_t l = strlen(dir);
            while (l > 1 && dir[l - 1] == '/')
                dir[--l] = 0;
            if (fl_walk(f, dir, 1, &other) < 0)
                return -1;
            if (other)
                fprintf(stderr, "memwatch fleet: %s: %u file%s not named *.json not read\n", dir,
                        other, other == 1 ? "" : "s");
        } else if (!fl_add_input(f, inputs[i])) {
            return -1;
        }
    }
    return 0;
}

/* The same file reached twice (a folder and a file in it) is read once. */
static int fl_duplicate(fl_fleet *f, size_t i)
{
    char a[PATH_MAX], b[PATH_MAX];
    if (!realpath(f->in[i].path, a))
        return 0;
    for (size_t k = 0; k < i; k++)
        if (f->in[k].node >= 0 && realpath(f->in[k].path, b) && !strcmp(a, b)) {
            fprintf(stderr, "memwatch fleet: %s: the same file as %s, read once\n", f->in[i].path,
                    f->in[k].path);
            return 1;
        }
    return 0;
}

static int fl_load_all(fl_fleet *f)
{
    f->nodes = calloc(f->n_in ? f->n_in : 1, sizeof *f->nodes);
    if (!f->nodes)
        return -1;
    for (size_t i = 0; i < f->n_in; i++) {
        fl_input *in = &f->in[i];
        if (in->why[0] || fl_duplicate(f, i)) {
            if (!in->why[0])
                in->node = -2; /* read once, under its first name */
            continue;
        }
        fl_node *n = &f->nodes[f->n_nodes];
        if (fl_load_node(in->path, n, in->why, sizeof in->why, NULL, NULL) == 0)
            in->node = (int)f->n_nodes++;
    }
    /* two nodes of one name: both go by their paths */
    for (size_t a = 0; a < f->n_nodes; a++)
        for (size_t b = a + 1; b < f->n_nodes; b++)
            if (!strcmp(f->nodes[a].name, f->nodes[b].name)) {
                snprintf(f->nodes[a].name, sizeof f->nodes[a].name, "%s", f->nodes[a].path);
                snprintf(f->nodes[b].name, sizeof f->nodes[b].name, "%s", f->nodes[b].path);
            }
    return 0;
}

typedef struct fl_opts {
    int json, verbose;
    const char *html, *ref, *write_ref;
    long group;
} fl_opts;

/* 0: parsed, the operands in inputs[0..*n_inputs); 1: help printed; 2: bad
 * usage (said). */
static int fl_parse(int argc, char **argv, fl_opts *o, char **inputs, int *n_inputs)
{
    int n = 0, rest = 0;
    for (int i = 1; i < argc;) {
        const char *val = NULL;
        int rc = -1;
        const mw_opt *op = rest ? NULL
                                : mw_opt_next("fleet", fleet_opts, MW_OPT_N(fleet_opts), argc, argv,
                                              &i, &val, &rc);
        if (!op) {
            if (rc == 2)
                return 2;
            if (rc == -2)
                rest = 1;
            else
                inputs[n++] = argv[i];
            i++;
            continue;
        }
        switch (op->id) {
        case FL_O_HELP:
            usage(stdout);
            return 1;
        case FL_O_JSON:
            o->json = 1;
            break;
        case FL_O_VERBOSE:
            o->verbose = 1;
            break;
        case FL_O_HTML:
            o->html = val;
            break;
        case FL_O_REF:
            o->ref = val;
            break;
        case FL_O_WREF:
            o->write_ref = val;
            break;
        case FL_O_GROUP:
            if (mw_parse_long(val, &o->group) < 0 || o->group < 1) {
                fprintf(stderr,
                        "memwatch fleet: --group expects a group number (1, 2, ...), got '%s'\n",
                        val);
                return 2;
            }
            break;
        }
    }
    *n_inputs = n;
    return 0;
}

static int fl_check_outputs(const fl_opts *o)
{
    if (o->html && mw_cli_check_out_file("fleet", "--html", o->html) < 0)
        return -1;
    if (o->write_ref && mw_cli_check_out_file("fleet", "--write-reference", o->write_ref) < 0)
        return -1;
    if (o->group && !o->write_ref) {
        fprintf(stderr, "memwatch fleet: --group goes with --write-reference\n");
        return -1;
    }
    return 0;
}

static int fl_load_ref(const char *path, fl_ref *ref)
{
    char why[600] = "";
    if (fl_load_node(path, &ref->node, why, sizeof why, ref->mad, &ref->from_nodes) < 0) {
        fprintf(stderr, "memwatch fleet: --reference %s: %s\n", path, why);
        return -1;
    }
    return 0;
}

static int fl_reference_out(const fl_fleet *f, const fl_opts *o)
{
    if (!o->write_ref)
        return 0;
    if (!o->group && f->n_groups > 1) {
        fprintf(stderr,
                "memwatch fleet: --write-reference: the profiles are of %zu machine kinds; "
                "name one with --group N (1..%zu, as numbered in the text)\n",
                f->n_groups, f->n_groups);
        return -1;
    }
    if (o->group > (long)f->n_groups) {
        fprintf(stderr, "memwatch fleet: --group %ld: there %s %zu group%s\n", o->group,
                f->n_groups == 1 ? "is" : "are", f->n_groups, f->n_groups == 1 ? "" : "s");
        return -1;
    }
    const fl_group *g = &f->groups[o->group ? o->group - 1 : 0];
    if (fl_write_reference(f, g, o->write_ref) < 0)
        return -1;
    fprintf(stderr, "memwatch fleet: reference profile of %zu node%s written to %s\n", g->n,
            g->n == 1 ? "" : "s", o->write_ref);
    return 0;
}

static void fl_free(fl_fleet *f)
{
    for (size_t g = 0; g < f->n_groups; g++)
        free(f->groups[g].member);
    free(f->groups);
    free(f->nodes);
    free(f->in);
}

static int fl_outputs(fl_fleet *f, const fl_opts *o)
{
    if (o->json) {
        if (fl_write_json(f, stdout) < 0)
            return -1;
    } else {
        fl_print_text(f, stdout, o->verbose);
    }
    fflush(stdout);
    if (o->html) {
        if (fl_write_html(f, o->html) < 0) {
            fprintf(stderr, "memwatch fleet: --html %s: %s\n", o->html, strerror(errno));
            return -1;
        }
    }
    return fl_reference_out(f, o);
}

int mw_cmd_fleet(int argc, char **argv)
{
    fl_opts o = {0};
    int ni = 0;
    char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
    if (!inputs) {
        fprintf(stderr, "memwatch fleet: out of memory\n");
        return 2;
    }
    int pr = fl_parse(argc, argv, &o, inputs, &ni);
    if (pr || !ni || fl_check_outputs(&o) < 0) {
        if (!pr && !ni)
            usage(stderr);
        free(inputs);
        return pr == 1 ? 0 : 2;
    }
    static fl_ref ref;
    fl_fleet f = {0};
    int rc = 2;
    if (o.ref && fl_load_ref(o.ref, &ref) < 0)
        goto out;
    f.ref = o.ref ? &ref : NULL;
    if (fl_collect(&f, ni, inputs) < 0 || fl_load_all(&f) < 0 || fl_compare(&f) < 0) {
        fprintf(stderr, "memwatch fleet: out of memory\n");
        goto out;
    }
    if (!f.n_nodes) {
        for (size_t i = 0; i < f.n_in; i++)
            fprintf(stderr, "memwatch fleet: %s: %s\n", f.in[i].path, f.in[i].why);
        fprintf(stderr, "memwatch fleet: no usable machine profile among %zu input%s\n", f.n_in,
                f.n_in == 1 ? "" : "s");
        goto out;
    }
    if (fl_outputs(&f, &o) < 0)
        goto out;
    size_t unused = 0;
    for (size_t i = 0; i < f.n_in; i++)
        unused += f.in[i].node == -1;
    rc = f.n_outliers || unused ? 1 : 0;
out:
    free(inputs);
    fl_free(&f);
    return rc;
}
