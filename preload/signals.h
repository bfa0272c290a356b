/*
 * preload/signals.h: memwatch's dispositions of the fatal and terminating
 * signals (flush, then the program's own disposition) and the program's view
 * of them (sigaction, signal interposed). Owner: signals.c.
 */
#ifndef MW_PRELOAD_SIGNALS_H
#define MW_PRELOAD_SIGNALS_H

#include <signal.h>

/* Install memwatch's dispositions; *mask_out: the signal mask the program
 * started with. [not AS-safe] (constructor). */
void mwp_signals_install(sigset_t *mask_out);
/* 1: memwatch's handler ends a recorded process killed by sig (it writes
 * its end itself). [AS-safe] */
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
