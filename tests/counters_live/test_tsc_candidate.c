/*
 * tests/counters_live/test_tsc_candidate.c: a TSC frequency known from
 * before (memwatch record hands the machine profile's, counters/tsc.h
 * mw_tsc_candidate) is taken only where the kernel's TSC calibration
 * (/proc/cpuinfo bogomips / 2) agrees with it within 0.2 %; a wrong one is
 * never used. Each case runs in a child of its own: the frequency is
 * determined once per process.
 */
#include "mw_test.h"
#include "tsc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* bogomips / 2 in Hz, as the kernel calibrated the TSC; 0 where not said */
static double bogo_hz(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    double hz = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "bogomips", 8) && strchr(line, ':')) {
            hz = strtod(strchr(line, ':') + 1, NULL) * 1e6 / 2;
            break;
        }
    if (f)
        fclose(f);
    return hz;
}

/* In a child: candidate cand; the source and the rate it ends with. */
static int run_case(double cand, double bogo, int right)
{
    static const char tag[] = "the test's candidate";
    mw_tsc_candidate(cand, tag);
    const char *src = NULL;
    double hz = mw_tsc_hz(&src);
    printf("candidate %.0f Hz (%s): %.0f Hz from %s\n", cand, right ? "right" : "wrong", hz, src);
    if (src && (strstr(src, "perf_event") || strstr(src, "CPUID"))) {
        printf("the kernel's perf time conversion or CPUID gives the rate here: the candidate is "
               "not needed\n");
        MW_CHECK(src != tag, "a candidate taken over %s", src);
        return mw_test_done();
    }
    if (right)
        MW_CHECK(src == tag && hz == cand, "a candidate that bogomips confirms was not taken: %s",
                 src);
    else
        MW_CHECK(src != tag && hz > 0.98 * bogo && hz < 1.02 * bogo,
                 "a wrong candidate: %.0f Hz from %s", hz, src);
    return mw_test_done();
}

int main(void)
{
#if !MW_HAVE_TSC
    printf("SKIP: no TSC on this architecture\n");
    return 77;
#else
    double bogo = bogo_hz();
    if (!(bogo > 0)) {
        printf("SKIP: /proc/cpuinfo says no bogomips here\n");
        return 77;
    }
    const double cands[2] = {bogo, bogo * 0.9};
    for (int i = 0; i < 2; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0)
            exit(run_case(cands[i], bogo, i == 0));
        int st = 0;
        MW_CHECK(pid > 0 && waitpid(pid, &st, 0) == pid, "fork/wait");
        MW_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "case %d failed (status 0x%x)", i, st);
    }
    return mw_test_done();
#endif
}
