/*
 * cli/fleet.h: `memwatch fleet` (docs/fleet.md), the comparison of machine
 * profiles across the nodes of a partition. Private to cli/: cmd_fleet.c
 * (options, inputs, the run), fleet_load.c (reading a profile into a node),
 * fleet_stats.c (groups, medians and MADs, outliers and their words),
 * fleet_out.c (text, JSON, the reference profile) and fleet_html.c (the
 * page with one plot per figure).
 */
#ifndef MW_CLI_FLEET_H
#define MW_CLI_FLEET_H

#include <memwatch/profile.h>

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

int mw_cmd_fleet(int argc, char **argv);

/* What a figure measures: its kind decides the smallest deviation flagged
 * (fl_kind_tolerance) and the words of an explanation. */
typedef enum fl_kind {
    FL_K_BW,    /* a bandwidth, bytes/s */
    FL_K_LAT,   /* a latency or threshold, ns */
    FL_K_SIZE,  /* a capacity the latency ladder found, bytes */
    FL_K_MEM,   /* installed memory, bytes */
    FL_K_COUNT, /* a count (outstanding misses) */
} fl_kind;

/* The figures compared, in the order they are printed. */
typedef enum fl_fig {
    FL_PEAK_BW,
    FL_IDLE_NS,
    FL_THRESH_NS,
    FL_DRAM_NS,
    FL_TRIAD_BW,
    FL_TRIAD_NT_BW,
    FL_SWEEP_BW,
    FL_LOADED_IDLE_NS,
    FL_MLP,
    FL_MIX_BW0,                        /* peak_bw of reads100, reads75, reads50, nt50 */
    FL_MIX_TH0 = FL_MIX_BW0 + 4,       /* threshold_ns of the same */
    FL_LEVEL_NS0 = FL_MIX_TH0 + 4,     /* latency of cache levels 1..4 (the ladder's plateaus) */
    FL_LEVEL_SIZE0 = FL_LEVEL_NS0 + 4, /* their capacities */
    FL_MEM_BYTES = FL_LEVEL_SIZE0 + 4,
    FL_TLB_REACH,
    FL_NFIG
} fl_fig;

#define FL_NMIX 4
extern const char *const fl_mix_names[FL_NMIX];

typedef struct fl_fig_def {
    const char *key;   /* JSON name, e.g. "peak_bw", "mix.reads50.peak_bw" */
    const char *label; /* words, e.g. "peak bandwidth" */
    const char *unit;  /* as printed: "GB/s", "ns", "MiB", "GiB", "" */
    double scale;      /* value in the profile's unit x scale = value printed */
    fl_kind kind;
    /* which deviation makes a node odd: FL_ODD_LOW (a bandwidth below the
     * others), FL_ODD_HIGH (a latency above), FL_ODD_BOTH, or 0: the
     * deviation is noted but does not make the node odd (figures that
     * repeated calibrations of one machine spread widely, or that another
     * figure already judges) */
    int odd;
} fl_fig_def;
#define FL_ODD_LOW 1
#define FL_ODD_HIGH 2
#define FL_ODD_BOTH 3

extern const fl_fig_def fl_figs[FL_NFIG];
double fl_kind_tolerance(fl_kind k);

/* The statistics' constants (docs/fleet.md, "Statistics"). */
#define FL_MAD_SCALE 1.4826 /* MAD x this estimates the standard deviation of normal data */
#define FL_Z_LIMIT 3.5      /* modified z-score above which a value is an outlier */
#define FL_MIN_GROUP 3      /* nodes needed for a median to name an odd one */

/* One machine profile that was read and used. */
typedef struct fl_node {
    const char *path; /* as given or found */
    char name[128];   /* the node: host key, else the file or folder name */
    mw_profile p;
    char vendor[32], cpu_model[96], kernel[96], ucode[32], uarch[16];
    int family, model, stepping, cpus, numa;
    char caches[160];    /* the kernel's caches, e.g. "L1d 48K L1i 32K L2 2M L3 300M" */
    char mem[48];        /* the identity's mem= part */
    double fig[FL_NFIG]; /* NAN where the profile lacks the figure */
    int group;
    /* filled by the comparison */
    unsigned char flag[FL_NFIG];                 /* the figure lies outside the allowed band */
    unsigned char odd[FL_NFIG];                  /* ... in the direction that makes the node odd */
    int n_levels;                                /* cache plateaus the latency ladder found */
    unsigned char levels_odd;                    /* not the count most nodes' ladders found */
    unsigned char vflag[MW_PROFILE_MAX_METHODS]; /* the method's verdict differs */
    unsigned char numa_odd, caches_odd;
    int outlier; /* odd: an odd figure, verdict, NUMA nodes or caches */
    int noted;   /* a figure outside its band that does not make it odd */
} fl_node;

/* One input: a file given, or found in a folder given. */
typedef struct fl_input {
    char path[PATH_MAX];
    int node;      /* index into fl_fleet.nodes, -1 when not used */
    char why[600]; /* why it was not used */
} fl_input;

/* A method's verdict across a group: the most common one. */
typedef struct fl_verdict {
    char name[24];
    char verdict[24]; /* the most common verdict ("" where no majority) */
    unsigned n, agree;
} fl_verdict;

/* Nodes of one machine kind: CPU model, family/model/stepping and CPUs. */
typedef struct fl_group {
    char key[160];
    size_t *member;
    size_t n;
    /* the centre each figure is compared with: the group's median, or the
     * reference profile's value with --reference */
    double centre[FL_NFIG], mad[FL_NFIG], bound[FL_NFIG];
    unsigned have[FL_NFIG];      /* nodes with the figure */
    unsigned n_flagged[FL_NFIG]; /* nodes outside the band */
    unsigned n_odd[FL_NFIG];     /* ... of them odd for it */
    int levels_major;            /* the cache plateaus most ladders found, -1 none */
    fl_verdict verdict[MW_PROFILE_MAX_METHODS];
    unsigned n_verdict;
    char numa_major[16], caches_major[160];
    int against_ref; /* compared with the reference profile */
    int n_outliers;
} fl_group;

/* A reference profile (--reference): a profile, and the spread of the group
 * it was written from where `memwatch fleet --write-reference` wrote it. */
typedef struct fl_ref {
    fl_node node;
    double mad[FL_NFIG]; /* NAN where not known */
    unsigned from_nodes; /* 0: a plain profile */
} fl_ref;

typedef struct fl_fleet {
    fl_input *in;
    size_t n_in, cap_in;
    fl_node *nodes;
    size_t n_nodes, cap_nodes;
    fl_group *groups;
    size_t n_groups;
    const fl_ref *ref;
    int n_outliers;
} fl_fleet;

/* fleet_load.c: reads path into *n (zeroed first). 0, or -1 with why set. */
int fl_load_node(const char *path, fl_node *n, char *why, size_t whylen, double *ref_mad,
                 unsigned *ref_nodes);
/* The group key of a node: "cpu model|family/model/stepping|cpus". */
void fl_group_key(const fl_node *n, char *key, size_t len);

/* fleet_stats.c */
int fl_compare(fl_fleet *f);
/* The most common value of the string field at offset off of the group's
 * nodes (the first of the most common; "" for no member), and its count. */
const char *fl_common(const fl_fleet *f, const fl_group *g, size_t off, size_t *count);
/* The explanation of a node's outliers, one sentence per line. */
void fl_explain(const fl_fleet *f, const fl_group *g, const fl_node *n, char *out, size_t len);
/* "peak bandwidth 137.0 GB/s, 14 % below the median of 63 nodes (159.5 GB/s)" */
void fl_fig_words(const fl_group *g, const fl_node *n, int fig, char *out, size_t len);
/* The group's title: "Intel(R) Xeon(R) Processor, family 6 model 207 stepping 2, 16 CPUs" */
void fl_group_title(const fl_fleet *f, const fl_group *g, char *out, size_t len);
/* a value as printed, in the figure's unit */
void fl_fmt(int fig, double v, char *out, size_t len);

/* fleet_out.c */
void fl_print_text(const fl_fleet *f, FILE *out, int verbose);
int fl_write_json(const fl_fleet *f, FILE *out);
int fl_write_reference(const fl_fleet *f, const fl_group *g, const char *path);

/* fleet_html.c */
int fl_write_html(const fl_fleet *f, const char *path);

#endif
