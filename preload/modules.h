/*
 * preload/modules.h: loaded objects as MWR_MODULE records, all of them when
 * recording begins and the new ones as they appear (dlopen), and files
 * mapped as data (MWR_MODULE_DATA_FILE). Owner: modules.c.
 */
#ifndef MW_PRELOAD_MODULES_H
#define MW_PRELOAD_MODULES_H

#include <stddef.h>
#include <stdint.h>

/* Write the objects loaded since the last scan (force: all of them); the
 * first scan after the process began also lists the files mapped as data.
 * [not AS-safe] (dl_iterate_phdr takes the loader's lock): the interval
 * thread, the end of the process outside a signal handler. */
void mwp_modules_scan(int force);
/* Every loaded object as whole MWR_MODULE records in buf (a process that
 * ends before it began, with allocation records to keep: its segment of the
 * shared file of short processes). Returns the bytes used, -1 where buf is
 * too small; *nrec the records. [not AS-safe] (dl_iterate_phdr). */
long mwp_modules_collect(char *buf, size_t cap, uint64_t *nrec);
/* A file mmap just mapped as data (fd, its address, length and offset): an
 * MWR_MODULE_DATA_FILE record. [AS-safe] (the mmap hook). */
void mwp_maps_note(int fd, const void *addr, size_t len, long off);
/* Fork child: the next scan lists every object again. [AS-safe] (fork
 * child). */
void mwp_modules_child(void);
/* The path of the loaded object that holds addr ("" for the program), or
 * NULL: dladdr's answer without its walk of that object's symbol table
 * (tens of µs for libc in a VM, paid by every process). [not AS-safe]
 * (dl_iterate_phdr). */
const char *mwp_object_of(const void *addr);

#endif
