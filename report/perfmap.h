/*
 * report/perfmap.h: perf maps (perf-PID.map) of JIT compilers and
 * interpreters, for code addresses in no loaded object. Private to report/.
 */
#ifndef MW_REPORT_PERFMAP_H
#define MW_REPORT_PERFMAP_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mw_perfmap mw_perfmap;

/* pcs.quality of an address named from a perf map (beside enum mw_sym_quality) */
#define MW_SYMQ_PERFMAP 100

/* The map of process pid: perf-PID.map in the raw file's directory, else
 * /tmp/perf-PID.map unless it is older than the process (start_real_ns,
 * CLOCK_REALTIME; 0: unknown). 0, -ENOENT or -ESTALE (why says what was
 * looked for), -ENOMEM. */
int mw_perfmap_open(const char *raw_path, long pid, uint64_t start_real_ns, mw_perfmap **out,
                    char *why, size_t whysz);
/* The name of the code at addr, NULL when the map has none. */
const char *mw_perfmap_find(const mw_perfmap *m, uint64_t addr);
const char *mw_perfmap_path(const mw_perfmap *m);
void mw_perfmap_free(mw_perfmap *m);
/* A name_notes row about a process's code in no loaded object: anon distinct
 * addresses, named of them from the map m (NULL: none found, why says why).
 * Nothing when anon is 0. 0 or -EIO. */
int mw_perfmap_note(sqlite3 *db, int64_t proc_id, const mw_perfmap *m, const char *why,
                    uint64_t anon, uint64_t named);

/* A name_notes row about a process's stacks that were cut at a return
 * address where no code lies (in no loaded object and no perf map names it,
 * or in a loaded object's data; cut stacks, the first such address): why
 * they count as truncated. Nothing when cut is 0. 0 or -EIO. */
int mw_perfmap_cut_note(sqlite3 *db, int64_t proc_id, uint64_t cut, uint64_t first);

#endif
