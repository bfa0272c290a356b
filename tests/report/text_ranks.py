"""tests/report/text_ranks.py REPORT.txt [PID]: the ranks of the text
summary's "Per rank/process" table, sorted, on one line ("0 1 2 3"; empty
where the table is missing; a row's rank "-", a process without one, is left
out). With PID, a second line: the rank column of that process's rows ("-"
for a row without a rank; empty where it has none). Used by the tests that
check a job's per-rank view (export/test_mpi_runs.sh,
slurm/test_slurm_spank.sh)."""
import re
import sys

txt = open(sys.argv[1], errors="replace").read()
sect = txt.split("Per rank/process", 1)
rows = []
if len(sect) == 2:
    for l in sect[1].splitlines()[2:]:
        m = re.match(r"^\s+(\d+|-)\s+\S+\s+(\d+)\s", l)
        if not m:
            break
        rows.append((m.group(1), m.group(2)))
print(" ".join(str(r) for r in sorted(int(r) for r, _ in rows if r != "-")))
if len(sys.argv) > 2:
    print(" ".join(r for r, p in rows if p == sys.argv[2]))
