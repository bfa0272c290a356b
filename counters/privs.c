/*
 * counters/privs.c: who may count what. Reads the effective capabilities and
 * uid from <proc>/self/status and kernel.perf_event_paranoid from
 * <proc>/sys/kernel/perf_event_paranoid (perf.h). Calls libc and mw_log only.
 * Threading: reentrant; not async-signal-safe (stdio).
 */
#include <memwatch/perf.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MW_CAP_SYS_ADMIN 21
#define MW_CAP_PERFMON 38

MW_API int mw_privs_read(const char *proc_root, mw_privs *out)
{
    char path[PATH_MAX], line[512];
    const char *root = proc_root ? proc_root : "/proc";
    memset(out, 0, sizeof *out);
    out->paranoid = MW_PARANOID_UNKNOWN;

    snprintf(path, sizeof path, "%s/sys/kernel/perf_event_paranoid", root);
    FILE *f = fopen(path, "re");
    if (f) {
        int v;
        if (fscanf(f, "%d", &v) == 1) {
            out->paranoid = v;
            out->have_perf = 1;
        } else {
            mw_log(MW_LOG_INFO, "%s does not hold a number", path);
        }
        fclose(f);
    } else {
        mw_log(MW_LOG_INFO, "cannot read %s: %s%s", path, strerror(errno),
               errno == ENOENT ? " (kernel built without perf events?)" : "");
    }

    snprintf(path, sizeof path, "%s/self/status", root);
    f = fopen(path, "re");
    if (!f) {
        int e = -errno;
        mw_log(MW_LOG_INFO, "cannot read %s: %s", path, mw_strerror(e));
        return e;
    }
    int seen_uid = 0, seen_cap = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long r, e;
        uint64_t cap;
        if (sscanf(line, "Uid: %lu %lu", &r, &e) == 2) {
            out->is_root = e == 0;
            seen_uid = 1;
        } else if (sscanf(line, "CapEff: %" SCNx64, &cap) == 1) {
            out->cap_sys_admin = (int)((cap >> MW_CAP_SYS_ADMIN) & 1);
            out->cap_perfmon = (int)((cap >> MW_CAP_PERFMON) & 1);
            seen_cap = 1;
        }
    }
    fclose(f);
    if (!seen_uid || !seen_cap)
        mw_log(MW_LOG_INFO, "%s lacks %s", path, !seen_uid ? "a Uid line" : "a CapEff line");
    return 0;
}

MW_API int mw_privs_can_cpu_wide(const mw_privs *p)
{
    return p->cap_perfmon || p->cap_sys_admin ||
           (p->paranoid != MW_PARANOID_UNKNOWN && p->paranoid <= 0);
}

MW_API int mw_privs_can_kernel(const mw_privs *p)
{
    return p->cap_perfmon || p->cap_sys_admin ||
           (p->paranoid != MW_PARANOID_UNKNOWN && p->paranoid <= 1);
}
