/*
 * report/schema.h: the SQLite schema of a memwatch report database
 * (documented for users in docs/report-schema.md; keep both in step).
 * Private to report/.
 */
#ifndef MW_REPORT_SCHEMA_H
#define MW_REPORT_SCHEMA_H

/* 2: intervals.bw_share, level, in_band (the memory-load levels)
 * 3: pcs.nearest_symbol (a hint for code no symbol covers)
 * 4: samples.addr_source, at_memory (timer samples' decoded data addresses) */
#define MW_REPORT_SCHEMA_VERSION 4

static const char mw_report_schema[] =
    "CREATE TABLE schema(version INTEGER NOT NULL);\n"
    "CREATE TABLE runs(id INTEGER PRIMARY KEY, created TEXT, memwatch_version TEXT,\n"
    "  inputs TEXT, nfiles INTEGER, threshold REAL, threshold_source TEXT);\n"
    "CREATE TABLE processes(id INTEGER PRIMARY KEY, run_id INTEGER, file TEXT, pid INTEGER,\n"
    "  ppid INTEGER, rank INTEGER, hostname TEXT, exe TEXT, cmdline TEXT, t_start INTEGER,\n"
    "  t_end INTEGER, exit_status INTEGER, clean_exit INTEGER, status TEXT, records INTEGER,\n"
    "  bytes INTEGER, trailer_lost INTEGER, trailer_throttled INTEGER,\n"
    "  trailer_dropped INTEGER, trailer_alloc_dropped INTEGER, threshold REAL,\n"
    "  threshold_source TEXT, user_ns INTEGER, system_ns INTEGER, minflt INTEGER,\n"
    "  majflt INTEGER);\n"
    "CREATE TABLE meta(process_id INTEGER, key TEXT, value TEXT);\n"
    "CREATE TABLE logs(process_id INTEGER, text TEXT);\n"
    "CREATE TABLE threads(process_id INTEGER, tid INTEGER, name TEXT, t_start INTEGER,\n"
    "  t_end INTEGER, user_ns INTEGER, system_ns INTEGER);\n"
    "CREATE TABLE events(id INTEGER PRIMARY KEY, process_id INTEGER, attr_id INTEGER, name TEXT,\n"
    "  source TEXT, type INTEGER, config INTEGER, sample_type INTEGER, precise_ip INTEGER);\n"
    "CREATE TABLE intervals(id INTEGER PRIMARY KEY, process_id INTEGER, t_start INTEGER,\n"
    "  t_end INTEGER, flags INTEGER, bw_bound INTEGER, latency_ns REAL, threshold_ns REAL,\n"
    "  bytes REAL, nthreads INTEGER, samples INTEGER, lost INTEGER, lat_method TEXT,\n"
    "  bw_method TEXT, bw_share REAL, level TEXT, in_band INTEGER);\n"
    "CREATE TABLE modules(id INTEGER PRIMARY KEY, path TEXT, build_id TEXT, debug_file TEXT,\n"
    "  symbols TEXT);\n"
    "CREATE TABLE process_modules(process_id INTEGER, module_id INTEGER, base INTEGER,\n"
    "  start INTEGER, end INTEGER, time_ns INTEGER);\n"
    "CREATE TABLE pcs(id INTEGER PRIMARY KEY, module_id INTEGER, rel_addr INTEGER,\n"
    "  symbol TEXT, symbol_offset INTEGER, function TEXT, file TEXT, line INTEGER,\n"
    "  quality TEXT, nearest_symbol TEXT);\n"
    "CREATE TABLE frames(pc_id INTEGER, depth INTEGER, function TEXT, file TEXT,\n"
    "  line INTEGER, column INTEGER, inlined INTEGER);\n"
    "CREATE TABLE stacks(id INTEGER PRIMARY KEY, parent_id INTEGER, pc_id INTEGER,\n"
    "  depth INTEGER);\n"
    "CREATE TABLE mem_levels(id INTEGER PRIMARY KEY, name TEXT);\n"
    "CREATE TABLE tlb_kinds(id INTEGER PRIMARY KEY, name TEXT);\n"
    "CREATE TABLE snoop_kinds(id INTEGER PRIMARY KEY, name TEXT);\n"
    "CREATE TABLE samples(id INTEGER PRIMARY KEY, process_id INTEGER, event_id INTEGER,\n"
    "  source TEXT, tid INTEGER, time_ns INTEGER, cpu INTEGER, period INTEGER, ip INTEGER,\n"
    "  pc_id INTEGER, stack_id INTEGER, addr INTEGER, weight INTEGER, interval_id INTEGER,\n"
    "  in_flagged INTEGER, selected INTEGER, object_id INTEGER, truncated INTEGER,\n"
    "  addr_source TEXT, at_memory INTEGER);\n"
    "CREATE TABLE sample_accesses(sample_id INTEGER, addr INTEGER, object_id INTEGER,\n"
    "  share REAL, write INTEGER);\n"
    "CREATE TABLE sample_mem(sample_id INTEGER PRIMARY KEY, phys_addr INTEGER,\n"
    "  data_src INTEGER, mem_op INTEGER, mem_level INTEGER, mem_hit INTEGER,\n"
    "  mem_remote INTEGER, mem_hops INTEGER, mem_tlb INTEGER, mem_snoop INTEGER,\n"
    "  mem_lock INTEGER);\n"
    "CREATE TABLE allocations(id INTEGER PRIMARY KEY, process_id INTEGER, tid INTEGER,\n"
    "  kind TEXT, addr INTEGER, size INTEGER, t_alloc INTEGER, t_free INTEGER,\n"
    "  stack_id INTEGER, site_pc_id INTEGER, truncated INTEGER);\n"
    /* sampled allocation sites (MWR_ALLOC_SITE): every allocation of the site,
     * of which `recorded` have allocations rows; 1 in `period` at the end */
    "CREATE TABLE alloc_sites(process_id INTEGER, site_pc_id INTEGER, pc INTEGER,\n"
    "  count INTEGER, bytes INTEGER, recorded INTEGER, period INTEGER);\n"
    "CREATE TABLE objects(id INTEGER PRIMARY KEY, process_id INTEGER, kind TEXT, name TEXT,\n"
    "  addr INTEGER, size INTEGER, allocation_id INTEGER, module_id INTEGER,\n"
    "  site_pc_id INTEGER);\n"
    "CREATE TABLE losses(process_id INTEGER, time_ns INTEGER, tid INTEGER, event_id INTEGER,\n"
    "  kind TEXT, count INTEGER);\n"
    "CREATE TABLE counters(process_id INTEGER, time_ns INTEGER, group_id INTEGER,\n"
    "  time_enabled INTEGER, time_running INTEGER, idx INTEGER, value INTEGER);\n"
    "CREATE TABLE gpu_kernels(id INTEGER PRIMARY KEY, process_id INTEGER, start_ns INTEGER,\n"
    "  end_ns INTEGER, device INTEGER, stream INTEGER, correlation INTEGER, flags INTEGER,\n"
    "  bw_bound INTEGER, dram_bytes REAL, dram_bw REAL, threshold_bw REAL, peak_bw REAL,\n"
    "  name TEXT);\n"
    "CREATE TABLE gpu_samples(process_id INTEGER, start_ns INTEGER, end_ns INTEGER,\n"
    "  device INTEGER, flags INTEGER, dram_read_bytes REAL, dram_write_bytes REAL,\n"
    "  dram_bw REAL, threshold_bw REAL);\n"
    "CREATE TABLE gpu_pcs(process_id INTEGER, correlation INTEGER, file TEXT,\n"
    "  function TEXT, line INTEGER, pc_offset INTEGER, samples INTEGER,\n"
    "  stall_memory INTEGER, stalls TEXT);\n"
    "CREATE TABLE regions(id INTEGER PRIMARY KEY, name TEXT UNIQUE, flags INTEGER);\n"
    "CREATE TABLE region_spans(id INTEGER PRIMARY KEY, process_id INTEGER, region_id INTEGER,\n"
    "  tid INTEGER, depth INTEGER, t_start INTEGER, t_end INTEGER, calls INTEGER,\n"
    "  measured_ns INTEGER, bound_ns INTEGER, flags INTEGER);\n"
    "CREATE TABLE sample_regions(sample_id INTEGER, region_id INTEGER);\n"
    "CREATE TABLE gpu_kernel_regions(kernel_id INTEGER, region_id INTEGER);\n"
    "CREATE TABLE region_notes(process_id INTEGER, note TEXT);\n"
    "CREATE TABLE name_notes(process_id INTEGER, note TEXT);\n"
    /* memwatch record's load files (.mwl): report/load.c */
    "CREATE TABLE load_sources(id INTEGER PRIMARY KEY, run_id INTEGER, file TEXT, host TEXT,\n"
    "  record_pid INTEGER, program_pid INTEGER, period_ns INTEGER, ncpus INTEGER,\n"
    "  slots INTEGER, sampler_cpu_ns INTEGER, note TEXT, status TEXT);\n"
    "CREATE TABLE load_slots(id INTEGER PRIMARY KEY, source_id INTEGER, t_start INTEGER,\n"
    "  t_end INTEGER, busy_cpus REAL, steal_cpus REAL, tree_cpus REAL, run_cpus REAL,\n"
    "  own_cpus REAL, outside_cpus REAL, tree_faults INTEGER, nprocs INTEGER,\n"
    "  tree_wait_cpus REAL);\n"
    "CREATE TABLE load_procs(slot_id INTEGER, pos INTEGER, pid INTEGER, ppid INTEGER,\n"
    "  comm TEXT, cpus REAL, recorded INTEGER);\n";

/* Created after the bulk insert (faster than maintaining them row by row).
 * samples(process_id, tid): the per-process and per-thread counts of the
 * summary and the queries by process (without it each process's count was a
 * scan of every sample: minutes for a build of a thousand processes); the
 * other questions scan samples once. meta(process_id, key): the views' and
 * the summary's META values per process (a scan of every META row per
 * process was 7 s for a build's 2,300 processes). */
static const char mw_report_indexes[] =
    "CREATE INDEX samples_process ON samples(process_id, tid);\n"
    "CREATE INDEX threads_process ON threads(process_id);\n"
    "CREATE INDEX meta_process ON meta(process_id, key);\n"
    "CREATE INDEX frames_pc ON frames(pc_id);\n"
    "CREATE INDEX stacks_parent ON stacks(parent_id);\n"
    "CREATE INDEX sample_regions_region ON sample_regions(region_id);\n"
    "CREATE VIEW sample_lines AS SELECT s.*, p.function AS function, p.file AS file,\n"
    "  p.line AS line, p.symbol AS symbol, m.path AS module FROM samples s\n"
    "  LEFT JOIN pcs p ON p.id = s.pc_id LEFT JOIN modules m ON m.id = p.module_id;\n"
    "CREATE VIEW samples_mem AS SELECT s.*, x.phys_addr, x.data_src, x.mem_op, x.mem_level,\n"
    "  x.mem_hit, x.mem_remote, x.mem_hops, x.mem_tlb, x.mem_snoop, x.mem_lock FROM samples s\n"
    "  LEFT JOIN sample_mem x ON x.sample_id = s.id;\n"
    "CREATE VIEW sample_objects AS\n"
    "  SELECT a.sample_id, a.object_id, a.share, 'decoded' AS addr_source FROM sample_accesses a\n"
    "  WHERE a.object_id IS NOT NULL UNION ALL\n"
    "  SELECT s.id, s.object_id, 1.0, s.addr_source FROM samples s\n"
    "  WHERE s.object_id IS NOT NULL AND s.addr_source IN ('precise', 'fault');\n";

#endif
