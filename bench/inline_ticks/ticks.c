/*
 * bench/inline_ticks/ticks.c: how regularly two CPU-time clocks of a
 * spinning thread tick, the sources of memwatch's inline intervals
 * (preload/lazy.c, "the inline tick"):
 *   timer  a CLOCK_THREAD_CPUTIME_ID POSIX timer (SIGEV_THREAD_ID)
 *   perf   a perf task-clock event (user time only, as an unprivileged one
 *          must be), its overflow signal by O_ASYNC/F_SETSIG, restarted
 *          for one period (PERF_EVENT_IOC_REFRESH) at each
 *   none   neither (the spinning thread alone, for a run under memwatch:
 *          does its lazy start come?)
 * Usage: ticks timer|perf|none PERIOD_MS CPU_MS [LOOP]
 * LOOP: iterations of user code between two readings of the thread's CPU
 * clock (default 200000, some 100 us; 1000 reads it every 1-2 us, where
 * the scheduler of a loaded machine can keep the kernel's tick off the
 * thread: preload/lazy.c, lazy_retry).
 * Prints "SOURCE: N ticks per CPU second (expected E), largest gap G ms,
 * first after F ms" (F -1: none came).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile long ticks;
static long long last_ns, max_gap_ns, first_ns = -1;
static int perf_fd = -1;

static long long cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void on_tick(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)si;
    (void)uc;
    long long c = cpu_ns();
    if (first_ns < 0)
        first_ns = c;
    if (last_ns && c - last_ns > max_gap_ns)
        max_gap_ns = c - last_ns;
    last_ns = c;
    ticks++;
    if (perf_fd >= 0)
        ioctl(perf_fd, PERF_EVENT_IOC_REFRESH, 1);
}

int main(int argc, char **argv)
{
    if ((argc != 4 && argc != 5) ||
        (strcmp(argv[1], "timer") && strcmp(argv[1], "perf") && strcmp(argv[1], "none"))) {
        fprintf(stderr, "usage: ticks timer|perf|none PERIOD_MS CPU_MS [LOOP]\n");
        return 2;
    }
    long long period = atoll(argv[2]) * 1000000LL, run = atoll(argv[3]) * 1000000LL;
    int loop = argc == 5 ? atoi(argv[4]) : 200000;
    if (period <= 0 || run <= 0 || loop <= 0) {
        fprintf(stderr, "ticks: PERIOD_MS, CPU_MS and LOOP must be positive\n");
        return 2;
    }
    int sig = SIGRTMAX - 3;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_tick;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(sig, &sa, NULL);
    if (!strcmp(argv[1], "timer")) {
        struct sigevent ev;
        memset(&ev, 0, sizeof ev);
        ev.sigev_notify = SIGEV_THREAD_ID;
        ev.sigev_signo = sig;
        ev._sigev_un._tid = gettid();
        timer_t id;
        struct itimerspec its = {{0, period}, {0, period}};
        its.it_value.tv_sec = its.it_interval.tv_sec = period / 1000000000LL;
        its.it_value.tv_nsec = its.it_interval.tv_nsec = period % 1000000000LL;
        if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &id) || timer_settime(id, 0, &its, NULL)) {
            perror("ticks: timer");
            return 1;
        }
    } else if (!strcmp(argv[1], "perf")) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof a);
        a.size = sizeof a;
        a.type = PERF_TYPE_SOFTWARE;
        a.config = PERF_COUNT_SW_TASK_CLOCK;
        a.sample_period = (unsigned long long)period;
        a.disabled = 1;
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
        struct f_owner_ex own = {F_OWNER_TID, gettid()};
        if (fd < 0 || fcntl(fd, F_SETOWN_EX, &own) || fcntl(fd, F_SETSIG, sig) ||
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC) ||
            ioctl(fd, PERF_EVENT_IOC_REFRESH, 1)) {
            perror("ticks: perf task-clock");
            return 1;
        }
        perf_fd = fd;
    }
    /* user code between the clock's readings (a system call each): the
     * event counts only where its clock interrupts user code */
    for (volatile unsigned long x = 0; cpu_ns() < run;)
        for (int i = 0; i < loop; i++)
            x += (unsigned long)i;
    printf(
        "%s: %.1f ticks per CPU second (expected %.1f), largest gap %.1f ms, first after %.1f ms\n",
        argv[1], (double)ticks * 1e9 / (double)run, 1e9 / (double)period, (double)max_gap_ns / 1e6,
        first_ns < 0 ? -1.0 : (double)first_ns / 1e6);
    return 0;
}
