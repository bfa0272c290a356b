/*
 * cli/neighbours.h: memwatch record's load sampler. While the recorded
 * program runs, a thread of memwatch record reads /proc every 250 ms and
 * writes, per slot, the machine's busy CPUs, the CPUs the recorded tree (the
 * program and its descendants) used, those of other processes of the same
 * run and of memwatch record itself, the tree's page faults and the three
 * busiest processes outside, into the run directory's load file
 * (memwatch-HOST-RUN-load-PID.mwl, include/memwatch/mwr_load.h,
 * docs/raw-format.md "The load file"). memwatch report reads it to say whose
 * load the flagged intervals were (docs/saturation.md, "Whose load is it").
 *
 * The sampler only reads /proc/stat, /proc/PID/stat of every process and,
 * once per busy process outside the tree, /proc/PID/environ; it never
 * signals, traces or reads the memory of the recorded tree.
 */
#ifndef MW_CLI_NEIGHBOURS_H
#define MW_CLI_NEIGHBOURS_H

#include <stdint.h>
#include <sys/types.h>

typedef struct mw_nb mw_nb;

/* Starts the sampler for the tree rooted at pid root (the program record
 * started), writing DIR/memwatch-HOST-RUN-load-PID.mwl (created with mode,
 * O_EXCL, never following a link, at its first write: after 16 slots or at
 * the end) as it goes. NULL when it cannot (one line on stderr says why;
 * the recording goes on without it). */
mw_nb *mw_nb_start(const char *dir, const char *run, pid_t root, mode_t mode);

/* Stops the sampler (the slot under way is dropped), writes what is left
 * and the closing META record, closes the file and frees nb; a failure
 * (the file could not be made or written) is said in one line on stderr.
 * Without a whole slot (a program shorter than 250 ms) no file is made.
 * NULL is ignored. */
void mw_nb_stop(mw_nb *nb);

#endif
