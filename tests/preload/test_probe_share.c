/*
 * tests/preload/test_probe_share.c: the page through which recorded processes
 * share probe_lat measurements (preload/probe_share.c), driven with explicit
 * times: the packed word round-trips; one claim per node per interval; the
 * reading is the median of the node's window and nothing when the newest
 * measurement is stale; nodes never pool; a file with a loose mode or another
 * layout is refused with the reason; a forked process sees the parent's
 * measurements through its own mapping of the file.
 */
#include "mw_test.h"

#include "../../preload/probe_share.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MS 1000000ull

int main(void)
{
    unsetenv("MEMWATCH_PROBE_LINES");
    unsetenv("MEMWATCH_PROBE_BURSTS");
    unsetenv("MEMWATCH_PROBE_LAYOUT");
    unsetenv("MEMWATCH_PROBE_WINDOW"); /* the probe's default window: 80 ms */
    char dir[] = "/tmp/mw_pshare.XXXXXX";
    MW_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char path[400], why[600];
    mw_probe_lat_config pc; /* the defaults, as the constructor fills them */
    memset(&pc, 0, sizeof pc);
    mw_probe_lat_config_env(&pc);
    MW_CHECK_INT(pc.lines, 32);
    MW_CHECK(pc.window_ns == 80000000ull, "default window %llu", (unsigned long long)pc.window_ns);

    /* packing */
    uint64_t t0 = 123456789ull * MS;
    uint64_t t;
    unsigned node;
    double lat;
    mwp_pshare_unpack(mwp_pshare_pack(t0, 5, 142.375), &t, &node, &lat);
    MW_CHECK(t <= t0 && t0 - t < (1u << 16), "time kept to 65.5 us: %llu vs %llu",
             (unsigned long long)t, (unsigned long long)t0);
    MW_CHECK_INT(node, 5);
    MW_CHECK_NEAR(lat, 142.375, 1e-9);
    mwp_pshare_unpack(mwp_pshare_pack(t0, 1, 1e9), &t, &node, &lat);
    MW_CHECK(lat > 32000 && lat < 33000, "latency clipped at 32 us, got %g", lat);

    /* a fresh page */
    MW_CHECK_INT(mwp_pshare_open(dir, &pc, path, sizeof path, why, sizeof why), 0);
    MW_CHECK(mwp_pshare_on(), "sharing on");
    struct stat st;
    MW_CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_size == 4096,
             "%s: mode %o size %lld", path, (unsigned)(st.st_mode & 0777), (long long)st.st_size);
    MW_CHECK_INT(mwp_pshare_reading(t0, 0, 20 * MS, &lat), 0); /* nothing published yet */

    /* one claim per node per interval */
    MW_CHECK_INT(mwp_pshare_claim(t0, 0, 10 * MS), 1);
    MW_CHECK_INT(mwp_pshare_claim(t0 + 1 * MS, 0, 10 * MS), 0);
    MW_CHECK_INT(mwp_pshare_claim(t0 + 8 * MS, 0, 10 * MS), 0);
    MW_CHECK_INT(mwp_pshare_claim(t0 + 1 * MS, 1, 10 * MS), 1); /* another node */
    MW_CHECK_INT(mwp_pshare_claim(t0 + 9 * MS, 0, 10 * MS), 1); /* 7/8 of an interval on */
    MW_CHECK_INT(mwp_pshare_claim(t0 - 1 * MS, 0, 10 * MS), 0); /* a claim "from the future" */

    /* readings: measurements every 9 ms on node 0 (so that no entry sits on the
     * window's edge, times being kept to 65.5 us), another latency on node 1 */
    double vals[] = {100, 300, 110, 120, 500, 130, 105, 115, 125, 1000};
    for (int i = 0; i < 10; i++)
        mwp_pshare_publish(t0 + (uint64_t)i * 9 * MS, 0, vals[i]);
    mwp_pshare_publish(t0 + 81 * MS, 1, 777);
    /* window of 80 ms ending at the newest (t0+81): entries 1..9 */
    unsigned n = mwp_pshare_reading(t0 + 85 * MS, 0, 20 * MS, &lat);
    MW_CHECK_INT(n, 9);
    MW_CHECK_NEAR(lat, 125, 1e-9); /* median of 300 110 120 500 130 105 115 125 1000 */
    n = mwp_pshare_reading(t0 + 85 * MS, 1, 20 * MS, &lat);
    MW_CHECK_INT(n, 1);
    MW_CHECK_NEAR(lat, 777, 1e-9);
    /* the newest is 29 ms old: stale for a 20 ms freshness */
    MW_CHECK_INT(mwp_pshare_reading(t0 + 110 * MS, 0, 20 * MS, &lat), 0);
    MW_CHECK_INT(mwp_pshare_reading(t0 + 85 * MS, 2, 20 * MS, &lat), 0); /* an empty node */
    mwp_pshare_publish(t0 + 84 * MS, 0, 0); /* no latency: not published */
    MW_CHECK_INT(mwp_pshare_reading(t0 + 85 * MS, 0, 20 * MS, &lat), 9);

    /* a forked process maps the file on its own and reads the parent's */
    pid_t pid = fork();
    if (pid == 0) {
        char p2[400], w2[600];
        double l2 = 0;
        int ok = mwp_pshare_open(dir, &pc, p2, sizeof p2, w2, sizeof w2) == 0 && !strcmp(p2, path) &&
                 mwp_pshare_reading(t0 + 85 * MS, 0, 20 * MS, &l2) == 9 && l2 == 125;
        mwp_pshare_publish(t0 + 97 * MS, 0, 90);
        _exit(ok ? 0 : 1);
    }
    int wst = 0;
    waitpid(pid, &wst, 0);
    MW_CHECK(WIFEXITED(wst) && WEXITSTATUS(wst) == 0, "the child read the parent's window");
    n = mwp_pshare_reading(t0 + 101 * MS, 0, 20 * MS, &lat);
    MW_CHECK_INT(n, 9); /* 18..97 ms: the child's measurement is in, the 9 ms one out */
    MW_CHECK_NEAR(lat, 120, 1e-9);

    /* refusals, with the reason */
    MW_CHECK_INT(chmod(path, 0644), 0);
    MW_CHECK(mwp_pshare_open(dir, &pc, path, sizeof path, why, sizeof why) < 0, "0644 accepted");
    MW_CHECK(strstr(why, "mode 0600") != NULL, "why: %s", why);
    MW_CHECK(!mwp_pshare_on(), "sharing off after a refusal");
    MW_CHECK_INT(mwp_pshare_claim(t0, 0, 10 * MS), 1); /* off: every process measures */
    MW_CHECK_INT(chmod(path, 0600), 0);
    int fd = open(path, O_WRONLY);
    MW_CHECK(fd >= 0 && pwrite(fd, "XXXXXXXX", 8, 0) == 8, "overwrite the magic");
    close(fd);
    MW_CHECK(mwp_pshare_open(dir, &pc, path, sizeof path, why, sizeof why) < 0, "other layout accepted");
    MW_CHECK(strstr(why, "another layout") != NULL, "why: %s", why);
    char nodir[500];
    snprintf(nodir, sizeof nodir, "%s/missing", dir);
    MW_CHECK(mwp_pshare_open(nodir, &pc, path, sizeof path, why, sizeof why) < 0, "missing dir");
    MW_CHECK(strstr(why, "cannot open") != NULL, "why: %s", why);

    /* the probe settings are part of the name; the environment is read once,
     * into the configuration, never by the page's code */
    char p1[400], p2[400], p3[400];
    unlink(path);
    mwp_pshare_open(dir, &pc, p1, sizeof p1, why, sizeof why);
    setenv("MEMWATCH_PROBE_LINES", "64", 1);
    mwp_pshare_open(dir, &pc, p3, sizeof p3, why, sizeof why);
    MW_CHECK(!strcmp(p1, p3), "the page's code read the environment: %s", p3);
    mw_probe_lat_config pc64;
    memset(&pc64, 0, sizeof pc64);
    mw_probe_lat_config_env(&pc64);
    MW_CHECK_INT(pc64.lines, 64);
    MW_CHECK((pc64.flags & MW_PROBE_LAT_NO_ENV) != 0, "NO_ENV set");
    mwp_pshare_open(dir, &pc64, p2, sizeof p2, why, sizeof why);
    MW_CHECK(strcmp(p1, p2) != 0, "64 lines changes the name: %s", p2);
    unlink(p1);
    unlink(p2);
    rmdir(dir);
    return mw_test_done();
}
