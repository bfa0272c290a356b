/*
 * tests/cli/test_procstat.c: cli/procstat.c, the one reader of
 * /proc/PID/stat behind attach, record's neighbour sampler and the monitor:
 * this process's own line against what the kernel says through other calls,
 * names with spaces and parentheses, negative fields, and lines that are
 * not one.
 */
#include "mw_test.h"
#include "procstat.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

int main(void)
{
    mw_procstat ps;
    /* this process, under a name with a space and a parenthesis */
    prctl(PR_SET_NAME, "t) (x y", 0, 0, 0);
    MW_CHECK(mw_procstat_read(AT_FDCWD, "/proc/self/stat", &ps) == 0, "own stat unread");
    MW_CHECK(ps.pid == getpid(), "pid %d, getpid %d", ps.pid, (int)getpid());
    MW_CHECK(ps.ppid == getppid(), "ppid %d, getppid %d", ps.ppid, (int)getppid());
    MW_CHECK(!strcmp(ps.comm, "t) (x y"), "comm '%s'", ps.comm);
    MW_CHECK(ps.state == 'R', "state '%c' while it reads", ps.state);
    MW_CHECK(ps.start > 0, "start %llu", (unsigned long long)ps.start);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    MW_CHECK(ps.minflt > 0 && ps.minflt <= (uint64_t)ru.ru_minflt, "minflt %llu, getrusage %ld",
             (unsigned long long)ps.minflt, ru.ru_minflt);
    int dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char rel[32];
    snprintf(rel, sizeof rel, "%d/stat", (int)getpid());
    mw_procstat rs;
    MW_CHECK(dfd >= 0 && mw_procstat_read(dfd, rel, &rs) == 0 && rs.pid == ps.pid &&
                 rs.start == ps.start, "relative read");
    MW_CHECK(mw_procstat_read(dfd, "999999999/stat", &rs) == -1, "a pid that is not there");
    close(dfd);

    /* a line as the kernel writes it: negative tty/tpgid, priority, nice */
    const char *line = "4242 (a (b) c) S 17 4242 4242 0 -1 4194304 120 7 3 1 250 31 9 4 20 -5 1 0 "
                       "987654 1000 200 18446744073709551615\n";
    MW_CHECK(mw_procstat_parse(line, &ps) == 0, "kernel line");
    MW_CHECK(ps.pid == 4242 && ps.ppid == 17 && ps.state == 'S', "pid %d ppid %d state %c",
             ps.pid, ps.ppid, ps.state);
    MW_CHECK(!strcmp(ps.comm, "a (b) c"), "comm '%s'", ps.comm);
    MW_CHECK(ps.minflt == 120 && ps.cminflt == 7 && ps.majflt == 3 && ps.cmajflt == 1,
             "faults %llu %llu %llu %llu", (unsigned long long)ps.minflt,
             (unsigned long long)ps.cminflt, (unsigned long long)ps.majflt,
             (unsigned long long)ps.cmajflt);
    MW_CHECK(ps.utime == 250 && ps.stime == 31 && ps.cutime == 9 && ps.cstime == 4,
             "times %llu %llu %llu %llu", (unsigned long long)ps.utime,
             (unsigned long long)ps.stime, (unsigned long long)ps.cutime,
             (unsigned long long)ps.cstime);
    MW_CHECK(ps.start == 987654, "start %llu", (unsigned long long)ps.start);
    /* a name longer than the kernel keeps is cut to 15 bytes */
    MW_CHECK(mw_procstat_parse("5 (0123456789abcdefghij) R 1 5 5 0 -1 0 0 0 0 0 0 0 0 0 20 0 "
                               "1 0 77\n", &ps) == 0 && !strcmp(ps.comm, "0123456789abcde") &&
                 ps.start == 77, "long name '%s'", ps.comm);
    /* not such a line */
    static const char *const bad[] = {
        "", "4242", "4242 (name S 1 2", "4242 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13\n",
        "(x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20\n",
        "4242 (x)S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20\n",
        "4242 (x) S 1 2 3 4 5 6 7 8 9 10 eleven 12 13 14 15 16 17 18 19 20\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        MW_CHECK(mw_procstat_parse(bad[i], &ps) == -1, "refused: '%s'", bad[i]);

    /* cgroups(7): the unified hierarchy, a hybrid one, v1 only */
    char cg[256];
    MW_CHECK(mw_procstat_cgroup("0::/system.slice/slurmstepd.scope/job_42/step_0/user/task_0\n",
                                cg, sizeof cg) == 0 &&
                 !strcmp(cg, "/system.slice/slurmstepd.scope/job_42/step_0/user/task_0"),
             "unified '%s'", cg);
    MW_CHECK(mw_procstat_cgroup("9:name=systemd:/\n4:memory:/process_api/92fb\n1:cpu:/\n0::/\n",
                                cg, sizeof cg) == 0 && !strcmp(cg, "/process_api/92fb"),
             "hybrid '%s'", cg);
    MW_CHECK(mw_procstat_cgroup("5:cpu,cpuacct:/a\n4:blkio,memory:/slurm/uid_0/job_7\n", cg,
                                sizeof cg) == 0 && !strcmp(cg, "/slurm/uid_0/job_7"),
             "v1 memory '%s'", cg);
    MW_CHECK(mw_procstat_cgroup("0::/\n", cg, sizeof cg) == 0 && !strcmp(cg, "/"), "root '%s'", cg);
    MW_CHECK(mw_procstat_cgroup("", cg, sizeof cg) == -1 && mw_procstat_cgroup("junk\n", cg,
                 sizeof cg) == -1, "no cgroup line");
    MW_CHECK(mw_procstat_cgroup("0::/a/very/long/path\n", cg, 7) == 0 && !strcmp(cg, "/a/ver"),
             "cut '%s'", cg);
    char u[64];
    mw_procstat_user(0, u, sizeof u);
    MW_CHECK(!strcmp(u, "root"), "uid 0 is '%s'", u);
    mw_procstat_user(4000000000u, u, sizeof u);
    MW_CHECK(!strcmp(u, "uid 4000000000"), "an unknown uid is '%s'", u);
    return mw_test_done();
}
