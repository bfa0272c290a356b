/*
 * slurm/memwatch_spank.c: the Slurm SPANK plugin (docs/slurm.md).
 *
 * `srun --memwatch[=OPTIONS]` (and sbatch, salloc) records the job's tasks
 * with libmemwatch.so: in the step's slurmstepd, user_init (run as the job's
 * user) makes the step's folder, ROOT/USER/job-JOBID/step-STEP, and puts
 * libmemwatch.so first in the tasks' LD_PRELOAD with MEMWATCH_DIR pointing
 * there. Each task writes memwatch-HOST-RANK-PID.mwr (the rank from
 * SLURM_PROCID, the run id slurm-JOBID.STEP: docs/jobs.md), so the file names
 * hold the job, step, node and rank. When the step ends, slurm_spank_exit
 * (remote context, after every task exited) marks the node done and the last
 * node to finish runs `memwatch report` over the folder as the job's user:
 * memwatch.db, report.txt and report.html, and merge.log with what it said.
 *
 * plugstack.conf arguments (all optional):
 *   default=off|on   record steps that do not ask (on: --memwatch=off opts out)
 *   root=DIR         the folder jobs are recorded under (DIR/USER/job-...);
 *                    default: the job's $HOME/memwatch (no USER level)
 *   users=a,b        who may use it (user names or uids); groups=g,h the same
 *                    by group; neither: everyone
 *   lib=PATH         libmemwatch.so; memwatch=PATH the command; profile=PATH
 *                    the machine profile the tasks use (MEMWATCH_PROFILE)
 *   merge=yes|no     report at the step's end; merge_timeout=SECONDS (600)
 * --memwatch options, comma-separated: off, interval=T, rate=N, method=M,
 *   threshold-ns=N, mix=NAME, profile=PATH (the MEMWATCH_* variables of
 *   docs/config.md, checked by libmemwatch.so), report=no.
 *
 * Slurm calls every function here from one thread of srun, sbatch, salloc or
 * slurmstepd; the configuration lives in file-scope state of that process.
 */
#include <slurm/spank.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

SPANK_PLUGIN(memwatch, 1);

#ifndef MW_SPANK_LIB
#define MW_SPANK_LIB "/usr/lib/x86_64-linux-gnu/libmemwatch.so"
#endif
#ifndef MW_SPANK_BIN
#define MW_SPANK_BIN "/usr/bin/memwatch"
#endif
/* Slurm's special step ids (slurm.h, not part of spank.h) */
#define MWS_BATCH_STEP 0xfffffffbu
#define MWS_EXTERN_STEP 0xfffffffcu
#define MWS_INTERACTIVE_STEP 0xfffffffau

static struct {
    int default_on;
    char root[PATH_MAX];
    char users[1024], groups[1024];
    char lib[PATH_MAX], bin[PATH_MAX], profile[PATH_MAX];
    int merge;
    int merge_timeout;
} cfg = {0, "", "", "", MW_SPANK_LIB, MW_SPANK_BIN, "", 1, 600};

/* what the job asked for: -1 nothing, 0 off, 1 on */
static int asked = -1;
static char user_opts[1024];

/* the step being recorded (remote context) */
static struct {
    int on;
    uid_t uid;
    gid_t gid;
    uint32_t job, step, nnodes, nodeid;
    char dir[PATH_MAX];
    int merge;
} st;

/* ------------------------------------------------------------ arguments */

static int set_str(char *dst, size_t n, const char *v, const char *key)
{
    if (strlen(v) >= n) {
        slurm_error("memwatch: plugstack.conf: %s= is too long", key);
        return -1;
    }
    snprintf(dst, n, "%s", v);
    return 0;
}

static int yes_no(const char *v, int *out, const char *key)
{
    if (!strcmp(v, "yes") || !strcmp(v, "on") || !strcmp(v, "1")) {
        *out = 1;
        return 0;
    }
    if (!strcmp(v, "no") || !strcmp(v, "off") || !strcmp(v, "0")) {
        *out = 0;
        return 0;
    }
    slurm_error("memwatch: plugstack.conf: %s=%s: expected on or off", key, v);
    return -1;
}

static int parse_arg(const char *a)
{
    const char *eq = strchr(a, '=');
    if (!eq) {
        slurm_error("memwatch: plugstack.conf: '%s' is not KEY=VALUE", a);
        return -1;
    }
    size_t kl = (size_t)(eq - a);
    const char *v = eq + 1;
#define KEY(k) (kl == strlen(k) && !strncmp(a, k, kl))
    if (KEY("default"))
        return yes_no(v, &cfg.default_on, "default");
    if (KEY("merge"))
        return yes_no(v, &cfg.merge, "merge");
    if (KEY("root")) {
        if (v[0] != '/') {
            slurm_error("memwatch: plugstack.conf: root=%s is not an absolute path", v);
            return -1;
        }
        return set_str(cfg.root, sizeof cfg.root, v, "root");
    }
    if (KEY("users"))
        return set_str(cfg.users, sizeof cfg.users, v, "users");
    if (KEY("groups"))
        return set_str(cfg.groups, sizeof cfg.groups, v, "groups");
    if (KEY("lib"))
        return set_str(cfg.lib, sizeof cfg.lib, v, "lib");
    if (KEY("memwatch"))
        return set_str(cfg.bin, sizeof cfg.bin, v, "memwatch");
    if (KEY("profile"))
        return set_str(cfg.profile, sizeof cfg.profile, v, "profile");
    if (KEY("merge_timeout")) {
        char *end;
        long t = strtol(v, &end, 10);
        if (*end || t < 1 || t > 86400) {
            slurm_error("memwatch: plugstack.conf: merge_timeout=%s: expected 1..86400 seconds", v);
            return -1;
        }
        cfg.merge_timeout = (int)t;
        return 0;
    }
#undef KEY
    slurm_error("memwatch: plugstack.conf: unknown argument '%s' (default, root, users, groups, "
                "lib, memwatch, profile, merge, merge_timeout)",
                a);
    return -1;
}

/* ------------------------------------------------------------- options */

/* The user's option keys and the variables they set (docs/config.md). */
static const struct {
    const char *key, *var;
} opt_vars[] = {{"interval", "MEMWATCH_INTERVAL"}, {"rate", "MEMWATCH_RATE"},
                {"method", "MEMWATCH_METHOD"},     {"threshold-ns", "MEMWATCH_THRESHOLD_NS"},
                {"mix", "MEMWATCH_MIX"},           {"profile", "MEMWATCH_PROFILE"}};

/* Checks OPTIONS; with sp, also applies them to the job's environment. */
static int apply_opts(spank_t sp, const char *opts, int *report)
{
    char buf[sizeof user_opts];
    snprintf(buf, sizeof buf, "%s", opts);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        if (!strcmp(t, "off") || !strcmp(t, "on"))
            continue;
        if (eq && !strncmp(t, "report=", 7) && (!strcmp(eq + 1, "no") || !strcmp(eq + 1, "yes"))) {
            if (report)
                *report = !strcmp(eq + 1, "yes");
            continue;
        }
        size_t i, n = sizeof opt_vars / sizeof opt_vars[0];
        for (i = 0; eq && i < n; i++)
            if ((size_t)(eq - t) == strlen(opt_vars[i].key) &&
                !strncmp(t, opt_vars[i].key, (size_t)(eq - t)))
                break;
        if (!eq || i == n || !eq[1]) {
            slurm_error("memwatch: --memwatch: '%s' is not an option (off, interval=T, rate=N, "
                        "method=M, threshold-ns=N, mix=NAME, profile=PATH, report=no)",
                        t);
            return -1;
        }
        if (sp && spank_setenv(sp, opt_vars[i].var, eq + 1, 1) != ESPANK_SUCCESS) {
            slurm_error("memwatch: cannot set %s in the job's environment", opt_vars[i].var);
            return -1;
        }
    }
    return 0;
}

static int opt_cb(int val, const char *arg, int remote)
{
    (void)val;
    (void)remote;
    /* sbatch hands an option given without a value to the steps inside the
     * job through the environment, where Slurm writes it as "(null)" */
    const char *o = arg && strcmp(arg, "(null)") ? arg : "";
    if (strlen(o) >= sizeof user_opts) {
        slurm_error("memwatch: --memwatch options are too long");
        return -1;
    }
    if (apply_opts(NULL, o, NULL) < 0)
        return -1;
    snprintf(user_opts, sizeof user_opts, "%s", o);
    char buf[sizeof user_opts];
    snprintf(buf, sizeof buf, "%s", o);
    asked = 1;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (!strcmp(t, "off"))
            asked = 0;
    return 0;
}

static struct spank_option mw_option = {
    "memwatch",
    "[OPTIONS]",
    "record the job's tasks with memwatch (docs/slurm.md); OPTIONS: off, interval=T, rate=N, "
    "method=M, threshold-ns=N, mix=NAME, profile=PATH, report=no",
    2,
    0,
    opt_cb};

/* ------------------------------------------------------------ who may use it */

static int in_list(const char *list, const char *name, unsigned long id)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        unsigned long v = strtoul(t, &end, 10);
        if ((name && !strcmp(t, name)) || (isdigit((unsigned char)t[0]) && !*end && v == id))
            return 1;
    }
    return 0;
}

static int group_allowed(gid_t g)
{
    struct group gr, *res = NULL;
    char buf[16384];
    if (getgrgid_r(g, &gr, buf, sizeof buf, &res) != 0)
        res = NULL;
    return in_list(cfg.groups, res ? res->gr_name : NULL, g);
}

/* Whether uid (with gid and the supplementary groups) may record. */
static int allowed(uid_t uid, gid_t gid, const gid_t *sup, int nsup)
{
    if (!cfg.users[0] && !cfg.groups[0])
        return 1;
    struct passwd pw, *res = NULL;
    char buf[16384];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) != 0)
        res = NULL;
    if (cfg.users[0] && in_list(cfg.users, res ? res->pw_name : NULL, uid))
        return 1;
    if (cfg.groups[0]) {
        if (group_allowed(gid))
            return 1;
        for (int i = 0; i < nsup; i++)
            if (group_allowed(sup[i]))
                return 1;
    }
    return 0;
}

static int local_allowed(void)
{
    gid_t sup[256];
    int n = getgroups(256, sup);
    return allowed(getuid(), getgid(), sup, n < 0 ? 0 : n);
}

static int remote_allowed(spank_t sp, uid_t uid, gid_t gid)
{
    gid_t *sup = NULL;
    int nsup = 0;
    if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &sup, &nsup) != ESPANK_SUCCESS) {
        sup = NULL;
        nsup = 0;
    }
    return allowed(uid, gid, sup, nsup);
}

/* ------------------------------------------------------------- callbacks */

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    for (int i = 0; i < ac; i++)
        if (parse_arg(av[i]) < 0)
            return -1;
    spank_context_t ctx = spank_context();
    if (ctx == S_CTX_LOCAL || ctx == S_CTX_REMOTE || ctx == S_CTX_ALLOCATOR)
        if (spank_option_register(sp, &mw_option) != ESPANK_SUCCESS) {
            slurm_error("memwatch: cannot register --memwatch");
            return -1;
        }
    return 0;
}

/* The step records when it asked, or when the site records by default and
 * it did not opt out. */
static int wanted(void)
{
    return asked == 1 || (asked == -1 && cfg.default_on);
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
    (void)sp;
    (void)ac;
    (void)av;
    spank_context_t ctx = spank_context();
    if ((ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR) && asked == 1 && !local_allowed()) {
        slurm_error("memwatch: --memwatch is not available to uid %lu on this cluster "
                    "(plugstack.conf: users=%s groups=%s)",
                    (unsigned long)getuid(), cfg.users[0] ? cfg.users : "-",
                    cfg.groups[0] ? cfg.groups : "-");
        return -1;
    }
    return 0;
}

/* mkdir -p of the part of path below base, each new folder mode 0700. */
static int make_dirs(const char *path)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(tmp, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

static void step_name(uint32_t step, char *out, size_t n)
{
    if (step == MWS_BATCH_STEP)
        snprintf(out, n, "batch");
    else if (step == MWS_INTERACTIVE_STEP)
        snprintf(out, n, "interactive");
    else
        snprintf(out, n, "step-%u", step);
}

/* The step's folder: ROOT/USER/job-J/step-S, or $HOME/memwatch/job-J/step-S. */
static int step_dir(spank_t sp, char *out, size_t n)
{
    char base[PATH_MAX], sname[32];
    step_name(st.step, sname, sizeof sname);
    if (cfg.root[0]) {
        struct passwd pw, *res = NULL;
        char buf[16384], user[64];
        if (getpwuid_r(st.uid, &pw, buf, sizeof buf, &res) == 0 && res)
            snprintf(user, sizeof user, "%s", res->pw_name);
        else
            snprintf(user, sizeof user, "%lu", (unsigned long)st.uid);
        if ((size_t)snprintf(base, sizeof base, "%s/%s", cfg.root, user) >= sizeof base)
            return -1;
    } else {
        char home[PATH_MAX - 16];
        if (spank_getenv(sp, "HOME", home, sizeof home) != ESPANK_SUCCESS || home[0] != '/') {
            slurm_error("memwatch: the job has no HOME and plugstack.conf names no root=: "
                        "nowhere to record");
            return -1;
        }
        if ((size_t)snprintf(base, sizeof base, "%s/memwatch", home) >= sizeof base)
            return -1;
    }
    if ((size_t)snprintf(out, n, "%s/job-%u/%s", base, st.job, sname) >= n)
        return -1;
    return 0;
}

/* LD_PRELOAD with libmemwatch.so first (once). */
static int set_preload(spank_t sp)
{
    char old[4096] = "", val[4096 + PATH_MAX];
    if (spank_getenv(sp, "LD_PRELOAD", old, sizeof old) != ESPANK_SUCCESS)
        old[0] = 0;
    if (strstr(old, cfg.lib))
        return 0;
    snprintf(val, sizeof val, "%s%s%s", cfg.lib, old[0] ? ":" : "", old);
    return spank_setenv(sp, "LD_PRELOAD", val, 1) == ESPANK_SUCCESS ? 0 : -1;
}

static int step_items(spank_t sp)
{
    if (spank_get_item(sp, S_JOB_UID, &st.uid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_GID, &st.gid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_ID, &st.job) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &st.step) != ESPANK_SUCCESS)
        return -1;
    if (spank_get_item(sp, S_JOB_NNODES, &st.nnodes) != ESPANK_SUCCESS)
        st.nnodes = 1;
    if (spank_get_item(sp, S_JOB_NODEID, &st.nodeid) != ESPANK_SUCCESS)
        st.nodeid = 0;
    return 0;
}

/* Remote, as the job's user, before the tasks start. */
int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (!spank_remote(sp))
        return 0;
    if (!wanted()) {
        /* --memwatch=off in a job whose batch script is recorded: the step
         * inherits the script's LD_PRELOAD; libmemwatch.so then stays out of
         * the way and takes itself out of it (docs/config.md) */
        char pre[4096];
        if (asked == 0 && spank_getenv(sp, "LD_PRELOAD", pre, sizeof pre) == ESPANK_SUCCESS &&
            strstr(pre, cfg.lib))
            (void)spank_setenv(sp, "MEMWATCH_ENABLE", "0", 1);
        return 0;
    }
    if (step_items(sp) < 0) {
        slurm_error("memwatch: cannot read the step's identity from Slurm: not recording");
        return 0;
    }
    if (st.step == MWS_EXTERN_STEP)
        return 0;
    if (!remote_allowed(sp, st.uid, st.gid)) {
        if (asked == 1) {
            slurm_error("memwatch: --memwatch is not available to uid %lu (plugstack.conf "
                        "users=/groups=)",
                        (unsigned long)st.uid);
            return -1;
        }
        return 0; /* recorded by default, but not this user */
    }
    if (step_dir(sp, st.dir, sizeof st.dir) < 0)
        return 0;
    if (make_dirs(st.dir) < 0) {
        slurm_error("memwatch: cannot make %s: %s: not recording", st.dir, strerror(errno));
        return 0;
    }
    st.merge = cfg.merge;
    if (apply_opts(sp, user_opts, &st.merge) < 0)
        return -1;
    if (cfg.profile[0]) /* the user's own (profile= or the job's MEMWATCH_PROFILE) wins */
        (void)spank_setenv(sp, "MEMWATCH_PROFILE", cfg.profile, 0);
    if (spank_setenv(sp, "MEMWATCH_DIR", st.dir, 1) != ESPANK_SUCCESS || set_preload(sp) < 0) {
        slurm_error("memwatch: cannot set the tasks' environment: not recording");
        return 0;
    }
    st.on = 1;
    return 0;
}

/* ----------------------------------------------------------- merging */

/* In the child, as the user: the node's mark, and the report where this is
 * the last node of the step to finish. Never returns. */
static void merge_child(void)
{
    char path[PATH_MAX + 64], done[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/.node-%u.done", st.dir, st.nodeid);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || fsync(fd) != 0 || close(fd) != 0)
        _exit(3);
    for (uint32_t k = 0; k < st.nnodes; k++) {
        snprintf(done, sizeof done, "%s/.node-%u.done", st.dir, k);
        if (access(done, F_OK) != 0)
            _exit(0); /* another node is still running: it reports */
    }
    snprintf(path, sizeof path, "%s/.merging", st.dir);
    if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
        _exit(0); /* another node took it */
    close(fd);
    char db[PATH_MAX + 16], html[PATH_MAX + 16], txt[PATH_MAX + 16], log[PATH_MAX + 16];
    snprintf(db, sizeof db, "%s/memwatch.db", st.dir);
    snprintf(html, sizeof html, "%s/report.html", st.dir);
    snprintf(txt, sizeof txt, "%s/report.txt", st.dir);
    snprintf(log, sizeof log, "%s/merge.log.tmp", st.dir);
    int out = open(txt, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int err = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out < 0 || err < 0)
        _exit(3);
    dprintf(err, "memwatch report %s --db %s --html %s (job %u, step %u, %u node%s)\n", st.dir, db,
            html, st.job, st.step, st.nnodes, st.nnodes == 1 ? "" : "s");
    pid_t r = fork();
    if (r == 0) {
        dup2(out, 1);
        dup2(err, 2);
        char *const argv[] = {cfg.bin, "report", st.dir, "--db", db, "--html", html, NULL};
        char *const envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", NULL};
        execve(cfg.bin, argv, envp);
        dprintf(2, "cannot run %s: %s\n", cfg.bin, strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (r > 0 && waitpid(r, &status, 0) < 0 && errno == EINTR)
        ;
    if (r < 0)
        dprintf(err, "cannot fork: %s\n", strerror(errno));
    else if (WIFEXITED(status))
        dprintf(err, "memwatch report exited with status %d\n", WEXITSTATUS(status));
    else
        dprintf(err, "memwatch report ended by signal %d\n", WTERMSIG(status));
    fsync(err);
    close(err);
    close(out);
    snprintf(path, sizeof path, "%s/merge.log", st.dir);
    rename(log, path); /* merge.log appears when the report is complete */
    _exit(0);
}

/* Drops to the job's user in the child; slurmstepd runs this as root. */
static int become_user(void)
{
    struct passwd pw, *res = NULL;
    char buf[16384];
    if (getuid() != 0)
        return getuid() == st.uid ? 0 : -1;
    if (getpwuid_r(st.uid, &pw, buf, sizeof buf, &res) == 0 && res) {
        if (initgroups(res->pw_name, st.gid) != 0)
            return -1;
    } else if (setgroups(0, NULL) != 0) {
        return -1;
    }
    if (setgid(st.gid) != 0 || setuid(st.uid) != 0)
        return -1;
    return 0;
}

/* Remote, after the step's tasks on this node exited. */
int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (!spank_remote(sp) || !st.on || !st.merge)
        return 0;
    pid_t pid = fork();
    if (pid < 0) {
        slurm_error("memwatch: cannot fork to merge %s: %s", st.dir, strerror(errno));
        return 0;
    }
    if (pid == 0) {
        setsid();
        if (become_user() != 0)
            _exit(4);
        merge_child();
    }
    int status = 0;
    time_t end = time(NULL) + cfg.merge_timeout;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            break;
        if (time(NULL) >= end) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            slurm_error("memwatch: the report of %s took longer than merge_timeout=%d s: "
                        "stopped (run memwatch report %s)",
                        st.dir, cfg.merge_timeout, st.dir);
            return 0;
        }
        poll(NULL, 0, 50);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        slurm_error("memwatch: merging %s failed (%s)", st.dir,
                    WEXITSTATUS(status) == 4 ? "cannot become the job's user"
                                             : "cannot write in the folder");
    return 0;
}
