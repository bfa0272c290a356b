/*
 * counters/method_read.c: opening, reading and evaluating a counter method of
 * the catalogue (include/memwatch/method_read.h). Used by calibrate/
 * (validate_bw.c: judging bandwidth and counting latency methods) and by the
 * profiler (preload/engine.c: every interval), so both apply one formula.
 *
 * Owns: the plan (catalogue entry x discovered PMUs -> attr per instance),
 * the arithmetic of a window (mw_method_reader_value), and the reader: system-wide
 * groups through perf.c, per-thread inherited groups through perf_event_open
 * directly (perf.c has no inherit mode), with failures explained by
 * mw_perf_explain.
 * May call: perf.h, pmu.h, catalogue.h, libc. Threading: a reader belongs to
 * one thread at a time; open/close allocate, read only issues ioctl(2) and read(2).
 */
#include <memwatch/method_read.h>
#include <memwatch/perf.h>
#include <memwatch/pmu.h>

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ------------------------------------------------------------------ plan */

static int plan_add(mw_mread_plan *p, char *why, size_t wn, mw_mread_event **out)
{
    if (p->n == MW_MREAD_MAX_EVENTS) {
        snprintf(why, wn, "more than %d counters needed", MW_MREAD_MAX_EVENTS);
        return MW_ERR_TOOBIG;
    }
    *out = &p->ev[p->n++];
    memset(*out, 0, sizeof **out);
    return 0;
}

MW_API int mw_method_reader_plan(const mw_method_def *def, const struct mw_pmu_set *pmus,
                                 mw_mread_plan *out, char *why, size_t wn)
{
    char dummy[8];
    if (!why) {
        why = dummy;
        wn = sizeof dummy;
    }
    why[0] = 0;
    if (!out)
        return -EINVAL;
    memset(out, 0, sizeof *out);
    out->def = def;
    if (!def || !pmus) {
        snprintf(why, wn, "no catalogue entry or PMU list");
        return -EINVAL;
    }
    if (def->n_events == 0 || (def->needs & (MW_NEED_PRECISE | MW_NEED_IBS))) {
        snprintf(why, wn, "%s is not a counting method (%s)", def->name,
                 def->n_events ? "it samples" : "it reads no counter");
        return MW_ERR_UNSUPPORTED;
    }
    int have_num = 0, have_den = 0;
    for (size_t e = 0; e < def->n_events; e++) {
        const mw_event_spec *s = &def->events[e];
        const char *role = s->role ? s->role : "event";
        int num = def->quantity == MW_Q_LATENCY && !strcmp(role, "pending");
        have_num |= num;
        have_den |= !num;
        mw_mread_event *ev;
        int rc;
        if (!s->pmu || !strcmp(s->pmu, "cpu")) {
            const mw_pmu *core = mw_pmus_core(pmus);
            if (!core) {
                snprintf(why, wn, "no core PMU for %s (the kernel exposes no hardware core events)",
                         role);
                return MW_ERR_NOPMU;
            }
            if ((rc = plan_add(out, why, wn, &ev)) < 0)
                return rc;
            snprintf(ev->name, sizeof ev->name, "%s/%s (config 0x%llx)", core->name, role,
                     (unsigned long long)s->config);
            ev->type = core->type;
            ev->config = s->config;
            ev->config1 = s->config1;
            ev->core = 1;
        } else {
            const mw_pmu *list[MW_MREAD_MAX_EVENTS];
            size_t k = mw_pmus_match(pmus, s->pmu, list, MW_MREAD_MAX_EVENTS);
            if (!k) {
                snprintf(why, wn, "no PMU matches %s", s->pmu);
                return MW_ERR_NOPMU;
            }
            if (k > MW_MREAD_MAX_EVENTS) {
                snprintf(why, wn, "%zu PMUs match %s, more than %d", k, s->pmu,
                         MW_MREAD_MAX_EVENTS);
                return MW_ERR_TOOBIG;
            }
            for (size_t j = 0; j < k; j++) {
                mw_pmu_encoding enc;
                char ewhy[200] = "";
                rc = mw_pmu_encode(list[j], s->sysfs ? s->sysfs : "", &enc, ewhy, sizeof ewhy);
                if (rc < 0) {
                    snprintf(why, wn, "%s: %s", list[j]->name, ewhy);
                    return rc;
                }
                if ((rc = plan_add(out, why, wn, &ev)) < 0)
                    return rc;
                snprintf(ev->name, sizeof ev->name, "%s/%s/", list[j]->name,
                         s->sysfs ? s->sysfs : "");
                ev->type = enc.type;
                ev->config = enc.config[0];
                ev->config1 = enc.config[1];
                ev->config2 = enc.config[2];
                ev->cpus = list[j]->n_cpus ? list[j]->cpus : NULL;
                ev->n_cpus = list[j]->n_cpus;
            }
        }
        /* the events of one spec share its role, scale and side of the fraction */
        for (size_t i = 0; i < out->n; i++)
            if (!out->ev[i].role) {
                out->ev[i].role = role;
                out->ev[i].scale = s->scale > 0 ? s->scale : 1;
                out->ev[i].numerator = num;
            }
    }
    if (def->quantity == MW_Q_LATENCY && (!have_num || !have_den)) {
        snprintf(why, wn,
                 "its catalogue entry has no \"pending\" numerator and denominator events");
        return MW_ERR_NOEVENT;
    }
    return 0;
}

/* ------------------------------------------------------------ arithmetic */

MW_API int mw_method_reader_value(mw_quantity q, const mw_mread_count *c, size_t n, double *value,
                                  char *why, size_t wn)
{
    char dummy[8];
    if (!why) {
        why = dummy;
        wn = sizeof dummy;
    }
    why[0] = 0;
    if (!value || (!c && n))
        return -EINVAL;
    double num = 0, den = 0;
    int have_num = 0, have_den = 0;
    for (size_t i = 0; i < n; i++) {
        if (c[i].enabled_ns && !c[i].running_ns) {
            snprintf(why, wn,
                     "an event was enabled for %llu ns but never on the PMU (multiplexed "
                     "out for the whole window)",
                     (unsigned long long)c[i].enabled_ns);
            return MW_ERR_NODATA;
        }
        double v = mw_perf_scaled(c[i].raw, c[i].enabled_ns, c[i].running_ns, c[i].scale);
        if (q == MW_Q_LATENCY && c[i].numerator) {
            num += v;
            have_num = 1;
        } else {
            den += v;
            have_den = 1;
        }
    }
    if (q == MW_Q_LATENCY && (!have_num || !have_den)) {
        snprintf(why, wn, "a latency needs pending-miss cycles and misses");
        return MW_ERR_NOEVENT;
    }
    if (!n) {
        snprintf(why, wn, "no counts in the window");
        return MW_ERR_NODATA;
    }
    if (q == MW_Q_LATENCY) {
        if (!(den > 0)) {
            snprintf(why, wn, "no L1-missing loads in the window");
            return MW_ERR_NODATA;
        }
        *value = num / den;
    } else {
        *value = den;
    }
    return 0;
}

/* ---------------------------------------------------------------- reader */

struct mw_method_reader {
    mw_quantity q;
    size_t n_sys; /* system-wide groups, one event each */
    mw_perf_group **sys;
    size_t n_core;         /* core events per thread group */
    size_t n_thr, cap_thr; /* per-thread groups */
    int *fds;              /* n_thr x n_core; fds[t * n_core] is the leader */
    mw_mread_count *prev;  /* cumulative counts at the last read: n_sys + n_thr * n_core */
    mw_mread_count *win;   /* scratch for the window's deltas */
    size_t n_units;
    uint64_t *ids; /* kernel ids: every system instance's fd, then every thread fd */
    size_t n_ids;
    int broken; /* a descriptor no longer holds its event */
};

/* Does fd still hold the event with this kernel id? A program may close
 * descriptors it did not open (closefrom in a daemon) and get the numbers
 * back for its own files: reading or closing those would take its data.
 * PERF_EVENT_IOC_ID ('$' ioctls belong to perf) has no effect on other files. */
static int fd_holds(int fd, uint64_t id)
{
    uint64_t got = 0;
    return fd >= 0 && ioctl(fd, PERF_EVENT_IOC_ID, &got) == 0 && got == id;
}

/* The descriptor of id slot k: system instances first, then thread fds. */
static int reader_fd(const mw_method_reader *r, size_t k)
{
    for (size_t i = 0; i < r->n_sys; i++) {
        size_t n = mw_perf_group_instances(r->sys[i]);
        if (k < n)
            return mw_perf_group_fd(r->sys[i], k, 0);
        k -= n;
    }
    return k < r->n_thr * r->n_core ? r->fds[k] : -1;
}

static int reader_ids(mw_method_reader *r)
{
    r->n_ids = r->n_thr * r->n_core;
    for (size_t i = 0; i < r->n_sys; i++)
        r->n_ids += mw_perf_group_instances(r->sys[i]);
    r->ids = calloc(r->n_ids ? r->n_ids : 1, sizeof *r->ids);
    if (!r->ids)
        return -ENOMEM;
    for (size_t k = 0; k < r->n_ids; k++)
        if (ioctl(reader_fd(r, k), PERF_EVENT_IOC_ID, &r->ids[k]) < 0) {
            int err = errno;
            free(r->ids); /* every descriptor is ours still: close them all */
            r->ids = NULL;
            return -err;
        }
    return 0;
}

/* Every descriptor a read uses still holds its event; else the reader is
 * broken for good. */
static int reader_verify(mw_method_reader *r)
{
    if (r->broken)
        return -EBADF;
    size_t k = 0, sys_fds = r->n_ids - r->n_thr * r->n_core;
    for (; k < sys_fds; k++)
        if (!fd_holds(reader_fd(r, k), r->ids[k]))
            r->broken = 1;
    for (size_t t = 0; t < r->n_thr && !r->broken; t++)
        if (!fd_holds(r->fds[t * r->n_core], r->ids[sys_fds + t * r->n_core]))
            r->broken = 1;
    return r->broken ? -EBADF : 0;
}

MW_API void mw_method_reader_close(mw_method_reader *r)
{
    if (!r)
        return;
    /* Without ids (a failed open) every descriptor is ours still; with them,
     * one that no longer holds its event belongs to the program now and is
     * left alone (its group's other descriptors too: a leak, not a theft). */
    size_t k = 0;
    for (size_t i = 0; i < r->n_sys; i++) {
        size_t n = mw_perf_group_instances(r->sys[i]), ok = 1;
        for (size_t c = 0; r->ids && c < n; c++)
            ok &= (size_t)fd_holds(mw_perf_group_fd(r->sys[i], c, 0), r->ids[k + c]);
        k += n;
        if (ok)
            mw_perf_group_close(r->sys[i]);
    }
    for (size_t i = 0; i < r->n_thr * r->n_core; i++)
        if (r->fds[i] >= 0 && (!r->ids || fd_holds(r->fds[i], r->ids[k + i])))
            close(r->fds[i]);
    free(r->ids);
    free(r->sys);
    free(r->fds);
    free(r->prev);
    free(r->win);
    free(r);
}

/* Open one thread's group of core events (user mode, inherited by the
 * threads it creates). Returns 0, or the errno of the failing event with
 * *failed set to its index. */
static int thread_group_open(mw_method_reader *r, const mw_mread_event *const *core, pid_t tid,
                             int *fds, size_t *failed)
{
    static _Atomic int no_inherit_thread; /* the kernel rejected inherit_thread (before 5.13) */
    for (size_t e = 0; e < r->n_core; e++)
        fds[e] = -1;
    for (size_t e = 0; e < r->n_core; e++) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof a);
        a.size = sizeof a;
        a.type = core[e]->type;
        a.config = core[e]->config;
        a.config1 = core[e]->config1;
        a.config2 = core[e]->config2;
        a.read_format =
            PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        a.inherit = 1;
        a.inherit_thread = !no_inherit_thread;
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        int fd =
            (int)syscall(SYS_perf_event_open, &a, tid, -1, e ? fds[0] : -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0 && errno == EINVAL && a.inherit_thread && e == 0) {
            a.inherit_thread = 0; /* an older kernel: try once without it */
            fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
            if (fd >= 0)
                no_inherit_thread = 1;
        }
        if (fd < 0) {
            int err = errno;
            for (size_t k = 0; k < e; k++)
                close(fds[k]);
            *failed = e;
            return err;
        }
        fds[e] = fd;
    }
    return 0;
}

static int reader_threads_open(mw_method_reader *r, const mw_mread_plan *p, pid_t skip, char *why,
                               size_t wn)
{
    const mw_mread_event *core[MW_MREAD_MAX_EVENTS];
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->ev[i].core)
            core[k++] = &p->ev[i];
    DIR *d = opendir("/proc/self/task");
    if (!d) {
        int err = errno;
        snprintf(why, wn, "cannot list this process's threads: /proc/self/task: %s", strerror(err));
        return -err;
    }
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d))) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        pid_t tid = (pid_t)atoi(de->d_name);
        if (tid == skip)
            continue;
        if (r->n_thr == r->cap_thr) {
            size_t cap = r->cap_thr ? 2 * r->cap_thr : 16;
            int *f = realloc(r->fds, cap * r->n_core * sizeof *f);
            if (!f) {
                rc = -ENOMEM;
                break;
            }
            r->fds = f;
            r->cap_thr = cap;
        }
        size_t failed = 0;
        int err = thread_group_open(r, core, tid, r->fds + r->n_thr * r->n_core, &failed);
        if (err == ESRCH)
            continue; /* the thread ended meanwhile */
        if (err) {
            mw_privs pv;
            if (mw_privs_read(NULL, &pv))
                pv = (mw_privs){0, 0, 0, MW_PARANOID_UNKNOWN, 0};
            mw_perf_event ev = {.name = core[failed]->name,
                                .type = core[failed]->type,
                                .config = core[failed]->config,
                                .config1 = core[failed]->config1,
                                .config2 = core[failed]->config2};
            mw_perf_target t = {.kind = MW_PERF_THREAD, .tid = tid};
            char buf[400];
            mw_pmu_set *live = NULL; /* the kernel's PMUs, as perf.c explains its failures */
            mw_pmus_discover(NULL, &live);
            rc = mw_perf_explain(err, &ev, &t, MW_PERF_USER_ONLY, &pv, live, buf, sizeof buf);
            mw_pmus_free(live);
            if (rc >= 0)
                rc = -err;
            if (!strncmp(buf, ev.name, strlen(ev.name)))
                snprintf(why, wn, "cannot open %s", buf);
            else
                snprintf(why, wn, "cannot open %s on thread %d: %s", ev.name, (int)tid, buf);
            break;
        }
        r->n_thr++;
    }
    closedir(d);
    if (rc == 0 && r->n_thr == 0) {
        snprintf(why, wn, "no thread of this process to count");
        rc = MW_ERR_NODATA;
    }
    return rc;
}

MW_API int mw_method_reader_open_plan(const mw_mread_plan *p, mw_quantity q,
                                      const mw_mread_opts *opts, mw_method_reader **out, char *why,
                                      size_t wn)
{
    char dummy[8];
    if (!why) {
        why = dummy;
        wn = sizeof dummy;
    }
    why[0] = 0;
    if (!out || !p || !p->n)
        return -EINVAL;
    *out = NULL;
    mw_mread_opts o = {0};
    if (opts)
        o = *opts;
    mw_method_reader *r = calloc(1, sizeof *r);
    if (!r)
        return -ENOMEM;
    r->q = q;
    int per_thread = o.core_target == MW_MREAD_CORE_PROCESS;
    for (size_t i = 0; i < p->n; i++) {
        if (p->ev[i].core && per_thread)
            r->n_core++;
    }
    size_t n_sys = p->n - r->n_core;
    r->sys = calloc(n_sys ? n_sys : 1, sizeof *r->sys);
    int rc = r->sys ? 0 : -ENOMEM;
    for (size_t i = 0; i < p->n && rc == 0; i++) {
        const mw_mread_event *e = &p->ev[i];
        if (e->core && per_thread)
            continue;
        mw_perf_event ev = {.name = e->name,
                            .type = e->type,
                            .config = e->config,
                            .config1 = e->config1,
                            .config2 = e->config2};
        mw_perf_target t = {.kind = MW_PERF_SYSTEM};
        if (e->core) {
            t.cpus = o.core_cpus;
            t.n_cpus = o.core_cpus ? o.n_core_cpus : 0;
        } else {
            t.cpus = e->cpus;
            t.n_cpus = e->cpus ? e->n_cpus : 0;
        }
        rc = mw_perf_group_open(&ev, 1, &t, 0, &r->sys[r->n_sys]);
        if (rc < 0) {
            const char *pw = mw_perf_why();
            if (pw[0] && !strncmp(pw, ev.name, strlen(ev.name)))
                snprintf(why, wn, "cannot open %s", pw); /* the reason names the event */
            else
                snprintf(why, wn, "cannot open %s: %s", ev.name, pw[0] ? pw : mw_strerror(rc));
            break;
        }
        r->n_sys++;
    }
    if (rc == 0 && r->n_core)
        rc = reader_threads_open(r, p, o.skip_tid, why, wn);
    if (rc == 0) {
        r->n_units = r->n_sys + r->n_thr * r->n_core;
        r->prev = calloc(r->n_units, sizeof *r->prev);
        r->win = calloc(r->n_units, sizeof *r->win);
        if (!r->prev || !r->win)
            rc = -ENOMEM;
        else if ((rc = reader_ids(r)) < 0)
            snprintf(why, wn, "cannot read the counters' ids: %s", mw_strerror(rc));
    }
    if (rc < 0) {
        mw_method_reader_close(r);
        return rc;
    }
    /* scale and side of every unit, in reading order: system groups, then
     * each thread's core events */
    size_t u = 0;
    for (size_t i = 0; i < p->n; i++)
        if (!(p->ev[i].core && per_thread)) {
            r->win[u].scale = p->ev[i].scale;
            r->win[u++].numerator = p->ev[i].numerator;
        }
    for (size_t t = 0; t < r->n_thr; t++)
        for (size_t i = 0; i < p->n; i++)
            if (p->ev[i].core && per_thread) {
                r->win[u].scale = p->ev[i].scale;
                r->win[u++].numerator = p->ev[i].numerator;
            }
    *out = r;
    return 0;
}

MW_API int mw_method_reader_open(const mw_method_def *def, const struct mw_pmu_set *pmus,
                                 const mw_mread_opts *opts, mw_method_reader **out, char *why,
                                 size_t wn)
{
    if (out)
        *out = NULL;
    mw_mread_plan *p = malloc(sizeof *p);
    if (!p)
        return -ENOMEM;
    int rc = mw_method_reader_plan(def, pmus, p, why, wn);
    if (rc == 0)
        rc = mw_method_reader_open_plan(p, def->quantity, opts, out, why, wn);
    free(p);
    return rc;
}

/* Cumulative counts of every unit into cur (n_units entries). */
static int reader_snapshot(mw_method_reader *r, mw_mread_count *cur)
{
    int vrc = reader_verify(r);
    if (vrc < 0)
        return vrc;
    size_t u = 0;
    for (size_t i = 0; i < r->n_sys; i++, u++) {
        mw_perf_value v;
        int rc = mw_perf_group_read(r->sys[i], &v, 1);
        if (rc < 0)
            return rc;
        cur[u].raw = v.raw;
        cur[u].enabled_ns = v.enabled_ns;
        cur[u].running_ns = v.running_ns;
    }
    uint64_t buf[3 + MW_MREAD_MAX_EVENTS];
    for (size_t t = 0; t < r->n_thr; t++) {
        size_t want = (3 + r->n_core) * sizeof(uint64_t);
        ssize_t n;
        do
            n = read(r->fds[t * r->n_core], buf, want);
        while (n < 0 && errno == EINTR);
        if (n < 0)
            return -errno;
        if ((size_t)n < want || buf[0] != r->n_core)
            return -EIO;
        for (size_t e = 0; e < r->n_core; e++, u++) {
            cur[u].raw = buf[3 + e];
            cur[u].enabled_ns = buf[1];
            cur[u].running_ns = buf[2];
        }
    }
    return 0;
}

MW_API int mw_method_reader_start(mw_method_reader *r)
{
    if (!r)
        return -EINVAL;
    int rc = reader_verify(r);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < r->n_sys; i++)
        if ((rc = mw_perf_group_reset(r->sys[i])) < 0 || (rc = mw_perf_group_enable(r->sys[i])) < 0)
            return rc;
    return reader_snapshot(r, r->prev);
}

MW_API int mw_method_reader_read(mw_method_reader *r, double *value, char *why, size_t wn)
{
    char dummy[8];
    if (!why) {
        why = dummy;
        wn = sizeof dummy;
    }
    why[0] = 0;
    if (!r || !value)
        return -EINVAL;
    /* the window array holds the snapshot first, then the deltas against prev
     * (its scale and numerator fields were set at open and stay) */
    int rc = reader_snapshot(r, r->win);
    if (rc < 0) {
        if (r->broken)
            snprintf(why, wn, "a descriptor of the counters was closed or replaced by the program");
        else
            snprintf(why, wn, "reading the counters failed: %s", mw_strerror(rc));
        return rc;
    }
    for (size_t u = 0; u < r->n_units; u++) {
        mw_mread_count now = r->win[u], *pv = &r->prev[u];
        r->win[u].raw = now.raw >= pv->raw ? now.raw - pv->raw : 0;
        r->win[u].enabled_ns =
            now.enabled_ns >= pv->enabled_ns ? now.enabled_ns - pv->enabled_ns : 0;
        r->win[u].running_ns =
            now.running_ns >= pv->running_ns ? now.running_ns - pv->running_ns : 0;
        *pv = now;
    }
    return mw_method_reader_value(r->q, r->win, r->n_units, value, why, wn);
}

MW_API int mw_method_reader_stop(mw_method_reader *r)
{
    if (!r)
        return -EINVAL;
    int rc = 0;
    for (size_t i = 0; i < r->n_sys; i++) {
        int e = mw_perf_group_disable(r->sys[i]);
        if (e < 0 && rc == 0)
            rc = e;
    }
    return rc;
}

MW_API size_t mw_method_reader_threads(const mw_method_reader *r)
{
    return r ? r->n_thr : 0;
}
