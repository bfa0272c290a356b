/*
 * preload/signals.h: memwatch's dispositions of the fatal and terminating
 * signals (flush, then the program's own disposition) and the program's view
 * of them (sigaction, signal interposed). Owner: signals.c.
 */
#ifndef MW_PRELOAD_SIGNALS_H
#define MW_PRELOAD_SIGNALS_H

#include <signal.h>

/* Install memwatch's dispositions of the faults and of the signals sent to
 * whole process groups (every process: signals.c); *mask_out: the signal
 * mask the program started with. [not AS-safe] (constructor). */
void mwp_signals_install(sigset_t *mask_out);
/* Install the rest (SIGPIPE, SIGALRM, SIGUSR1, ...) when the process begins
 * recording (lazy start); the program's dispositions set meanwhile are read
 * back and kept. Once per image. [AS-safe] */
void mwp_signals_begin(void);
/* 2: memwatch's handler ends every process killed by sig, begun or not (it
 * writes its end itself: the faults, SIGINT, SIGQUIT, SIGHUP, SIGTERM);
 * 1: it does so once the process has begun (the other terminating signals:
 * a reaper checks for the end); 0: sig is not caught (SIGKILL, the
 * real-time signals). [AS-safe] */
int mwp_signal_caught(int sig);
/* Where a fault that ends the process happened, its record's META fault:
 * "pc 0x..., <module>+0x<offset>, address 0x..., code N"; "" otherwise.
 * Owner: signals.c. Written once, by memwatch's handler of a default-action
 * fault (system calls only); read by writer.c when it writes the end. In
 * .lbss (MWP_COLD): most processes never touch it. */
struct mwp_fault {
    char text[320];
};
extern struct mwp_fault mwp_fault;

#endif
