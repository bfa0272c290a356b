/*
 * cli/fleet_load.c (cli/fleet.h): one machine profile read into a fleet
 * node. The profile is checked by the one reader of the format,
 * mw_profile_load (counters/profile.c), whose logged reason becomes the
 * input's reason when it refuses the file; the figures that reader does not
 * keep (the hierarchy, the machine object, a reference's spread) are then
 * read from the same file with cJSON, each type-checked, absent ones NAN.
 */
#include "fleet.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FL_MAX_BYTES (8u << 20) /* as the profile reader's cap */

const char *const fl_mix_names[FL_NMIX] = {"reads100", "reads75", "reads50", "nt50"};

/* The reason mw_profile_load logs ("profile PATH refused: WHY (error)"). */
static char fl_logged[600];

static void fl_log(int level, const char *msg, void *user)
{
    (void)user;
    if (level <= MW_LOG_WARN && !fl_logged[0])
        snprintf(fl_logged, sizeof fl_logged, "%s", msg);
}

/* The whole file (at most FL_MAX_BYTES), NUL-terminated; NULL with errno. */
static char *fl_slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size > FL_MAX_BYTES) {
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    size_t n = 0;
    while (buf && n < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (buf)
        buf[n] = 0;
    *len = n;
    return buf;
}

/* The depth of objects and arrays left open at the end of text (strings
 * skipped): a file cut short leaves its outer object open. */
static int fl_open_depth(const char *text, size_t len)
{
    int depth = 0, in_str = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = 0;
        } else if (c == '"') {
            in_str = 1;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if ((c == '}' || c == ']') && depth > 0) {
            depth--;
        }
    }
    return depth;
}

/* Where the JSON text stops parsing, in words: a truncated file ends
 * inside its object, and fails to parse within its last value. */
static void fl_json_where(const char *path, char *why, size_t whylen)
{
    size_t len = 0;
    char *text = fl_slurp(path, &len);
    if (!text)
        return;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root && end) {
        size_t at = (size_t)(end - text);
        int depth = fl_open_depth(text, len);
        if (depth > 0 && at + 256 >= len)
            snprintf(why, whylen,
                     "not valid JSON: it ends (at byte %zu) with %d object%s or list%s still "
                     "open: a truncated file (a copy or a calibration cut short?)",
                     len, depth, depth == 1 ? "" : "s", depth == 1 ? "" : "s");
        else
            snprintf(why, whylen, "not valid JSON at byte %zu of %zu", at, len);
    }
    cJSON_Delete(root);
    free(text);
}

/* The loader's reason, without its "profile PATH refused: " and the error
 * name it ends with. */
static void fl_reason(const char *path, int rc, char *why, size_t whylen)
{
    const char *r = fl_logged;
    const char *pre = strstr(r, " refused: ");
    if (pre)
        r = pre + strlen(" refused: ");
    if (!*r)
        r = mw_strerror(rc);
    snprintf(why, whylen, "%s", r);
    char *tail = strrchr(why, '(');
    if (tail && tail > why && tail[-1] == ' ' && why[strlen(why) - 1] == ')')
        tail[-1] = 0;
    if (rc == MW_ERR_CORRUPT && !strncmp(why, "not valid JSON", 14))
        fl_json_where(path, why, whylen);
    if (rc == -ENOENT || rc == -EACCES || rc == -EISDIR)
        snprintf(why, whylen, "cannot be read: %s", mw_strerror(rc));
}

static double fl_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : NAN;
}

static void fl_strv(const cJSON *o, const char *key, char *out, size_t len)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsString(v) && v->valuestring)
        snprintf(out, len, "%s", v->valuestring);
}

static double fl_pos(double v)
{
    return isfinite(v) && v > 0 ? v : NAN;
}

/* identity "cpu=M;fms=F/M/S;ucode=U;kernel=K;cpus=N;nodes=N;mem=..." */
static void fl_identity(fl_node *n)
{
    char id[sizeof n->p.identity];
    snprintf(id, sizeof id, "%s", n->p.identity);
    n->family = n->model = n->stepping = n->cpus = n->numa = -1;
    for (char *save = NULL, *t = strtok_r(id, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(t, '=');
        if (!eq)
            continue;
        *eq++ = 0;
        if (!strcmp(t, "cpu"))
            snprintf(n->cpu_model, sizeof n->cpu_model, "%s", eq);
        else if (!strcmp(t, "fms") &&
                 sscanf(eq, "%d/%d/%d", &n->family, &n->model, &n->stepping) != 3)
            n->family = n->model = n->stepping = -1;
        else if (!strcmp(t, "ucode"))
            snprintf(n->ucode, sizeof n->ucode, "%s", eq);
        else if (!strcmp(t, "kernel"))
            snprintf(n->kernel, sizeof n->kernel, "%s", eq);
        else if (!strcmp(t, "cpus"))
            n->cpus = atoi(eq);
        else if (!strcmp(t, "nodes"))
            n->numa = atoi(eq);
        else if (!strcmp(t, "mem"))
            snprintf(n->mem, sizeof n->mem, "%s", eq);
    }
    if (!n->cpu_model[0])
        snprintf(n->cpu_model, sizeof n->cpu_model, "%.90s", n->p.identity);
}

void fl_group_key(const fl_node *n, char *key, size_t len)
{
    snprintf(key, len, "%s|%d/%d/%d|%d", n->cpu_model, n->family, n->model, n->stepping, n->cpus);
}

static void fl_size_word(double b, char *out, size_t len)
{
    if (b >= (1 << 20) && fmod(b, 1 << 20) == 0)
        snprintf(out, len, "%.0fM", b / (1 << 20));
    else
        snprintf(out, len, "%.0fK", b / 1024);
}

/* The kernel's caches as one comparable string. */
static void fl_caches(fl_node *n, const cJSON *caches)
{
    const cJSON *c;
    size_t w = 0;
    cJSON_ArrayForEach(c, caches)
    {
        double lv = fl_num(c, "level"), sz = fl_num(c, "size");
        char type[16] = "", size[24];
        fl_strv(c, "type", type, sizeof type);
        if (!isfinite(lv) || !isfinite(sz))
            continue;
        fl_size_word(sz, size, sizeof size);
        const char *t = !strcmp(type, "Data") ? "d" : !strcmp(type, "Instruction") ? "i" : "";
        int k = snprintf(n->caches + w, sizeof n->caches - w, "%sL%.0f%s %s", w ? " " : "", lv, t,
                         size);
        if (k < 0 || (size_t)k >= sizeof n->caches - w)
            break;
        w += (size_t)k;
    }
}

/* The ladder's cache plateaus: latency and capacity of levels 1..4. */
static void fl_levels(fl_node *n, const cJSON *levels)
{
    const cJSON *l;
    cJSON_ArrayForEach(l, levels)
    {
        const cJSON *mem = cJSON_GetObjectItemCaseSensitive(l, "memory");
        double lv = fl_num(l, "level");
        if (cJSON_IsTrue(mem) || !isfinite(lv) || lv < 1 || lv > 4)
            continue;
        int k = (int)lv - 1;
        n->n_levels++;
        n->fig[FL_LEVEL_NS0 + k] = fl_pos(fl_num(l, "ns"));
        n->fig[FL_LEVEL_SIZE0 + k] = fl_pos(fl_num(l, "size"));
    }
}

/* The node's name: a host key of the profile, else the file's name, or the
 * folder's for a file called profile.json. */
static void fl_name(fl_node *n, const cJSON *root, const cJSON *machine)
{
    const char *keys[] = {"host", "hostname", "node"};
    for (size_t i = 0; i < 3; i++) {
        fl_strv(root, keys[i], n->name, sizeof n->name);
        if (!n->name[0])
            fl_strv(machine, keys[i], n->name, sizeof n->name);
        if (n->name[0])
            return;
    }
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", n->path);
    size_t l = strlen(tmp);
    while (l > 1 && tmp[l - 1] == '/')
        tmp[--l] = 0;
    char *base = strrchr(tmp, '/');
    base = base ? base + 1 : tmp;
    if (!strcmp(base, "profile.json") && base > tmp + 1) {
        base[-1] = 0;
        char *dir = strrchr(tmp, '/');
        base = dir ? dir + 1 : tmp;
    } else if (l > 5 && !strcmp(tmp + l - 5, ".json") && base < tmp + l - 5) {
        tmp[l - 5] = 0;
    }
    snprintf(n->name, sizeof n->name, "%s", base);
}

static void fl_extras(fl_node *n, const cJSON *root, double *ref_mad, unsigned *ref_nodes)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "machine");
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(root, "hierarchy");
    fl_strv(m, "vendor", n->vendor, sizeof n->vendor);
    fl_strv(m, "uarch", n->uarch, sizeof n->uarch);
    n->fig[FL_MEM_BYTES] = fl_pos(fl_num(m, "mem_total_bytes"));
    n->fig[FL_DRAM_NS] = fl_pos(fl_num(h, "dram_ns"));
    n->fig[FL_TRIAD_BW] = fl_pos(fl_num(h, "triad_bw"));
    n->fig[FL_TRIAD_NT_BW] = fl_pos(fl_num(h, "triad_nt_bw"));
    n->fig[FL_SWEEP_BW] = fl_pos(fl_num(h, "read_sweep_peak_bw"));
    n->fig[FL_LOADED_IDLE_NS] = fl_pos(fl_num(h, "loaded_idle_ns"));
    n->fig[FL_MLP] = fl_pos(fl_num(h, "outstanding_misses"));
    n->fig[FL_TLB_REACH] = fl_pos(fl_num(h, "tlb_reach"));
    fl_caches(n, cJSON_GetObjectItemCaseSensitive(h, "caches"));
    fl_levels(n, cJSON_GetObjectItemCaseSensitive(h, "latency_levels"));
    fl_name(n, root, m);
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(root, "fleet");
    if (!n->caches[0]) /* a reference keeps its group's caches there */
        fl_strv(fl, "caches", n->caches, sizeof n->caches);
    if (ref_mad && cJSON_IsObject(fl)) {
        const cJSON *mad = cJSON_GetObjectItemCaseSensitive(fl, "mad");
        for (int i = 0; i < FL_NFIG; i++)
            ref_mad[i] = fl_num(mad, fl_figs[i].key);
        double nn = fl_num(fl, "nodes");
        *ref_nodes = isfinite(nn) && nn > 0 ? (unsigned)nn : 0;
    }
}

/* The figures the profile reader keeps. */
static void fl_core(fl_node *n)
{
    const mw_profile *p = &n->p;
    n->fig[FL_PEAK_BW] = fl_pos(p->peak_bw);
    n->fig[FL_IDLE_NS] = fl_pos(p->idle_latency_ns);
    n->fig[FL_THRESH_NS] = p->lat_method[0] ? fl_pos(p->lat_threshold_ns) : NAN;
    for (int k = 0; k < FL_NMIX; k++) {
        int i = mw_profile_mix_find(p, fl_mix_names[k]);
        if (i < 0)
            continue;
        n->fig[FL_MIX_BW0 + k] = fl_pos(p->mixes[i].peak_bw);
        n->fig[FL_MIX_TH0 + k] = fl_pos(p->mixes[i].threshold_ns);
    }
}

int fl_load_node(const char *path, fl_node *n, char *why, size_t whylen, double *ref_mad,
                 unsigned *ref_nodes)
{
    memset(n, 0, sizeof *n);
    n->path = path;
    for (int i = 0; i < FL_NFIG; i++) {
        n->fig[i] = NAN;
        if (ref_mad)
            ref_mad[i] = NAN;
    }
    fl_logged[0] = 0;
    mw_set_log(fl_log, NULL, MW_LOG_WARN);
    int rc = mw_profile_load(path, 0, &n->p);
    mw_set_log(NULL, NULL, MW_LOG_WARN);
    if (rc < 0) {
        fl_reason(path, rc, why, whylen);
        return -1;
    }
    size_t len = 0;
    char *text = fl_slurp(path, &len);
    cJSON *root = text ? cJSON_ParseWithLength(text, len) : NULL;
    free(text);
    if (!root) { /* changed since the reader read it */
        snprintf(why, whylen, "changed while it was read");
        return -1;
    }
    fl_identity(n);
    fl_core(n);
    fl_extras(n, root, ref_mad, ref_nodes);
    if (!isfinite(n->fig[FL_MEM_BYTES])) {
        double gib = strtod(n->mem, NULL);
        n->fig[FL_MEM_BYTES] = gib > 0 ? gib * 1073741824.0 : NAN;
    }
    cJSON_Delete(root);
    return 0;
}
