/*
 * The META keys of memwatch's raw files (.mwr) and load files (.mwl): one
 * list, MW_META_KEYS, a row X(ID, "key", "doc") per key. What a value holds
 * is told in docs/raw-format.md (docs/gpu.md for the gpu.* keys of
 * MWR_GPU_META records); "doc" says it in a line.
 *
 * Writers name a key MW_META_<ID> (an enum constant) and write its text
 * mw_meta_key(MW_META_<ID>): libmemwatch.so (preload/), libmemwatch_cuda.so
 * (gpu/), memwatch record (its reaped-program file, its load file). Readers
 * that match a key in C do the same (report/); those that match one in SQL
 * write the text itself. tests/suite/test_meta_keys.sh fails while a
 * writer or reader names a key this list lacks, while a row is written by
 * no source, and while the docs lack a key of the list.
 *
 * Adding a key is one row here plus its code (docs/architecture.md, "Adding
 * a META key"). Rows never change their key: a file written once is read
 * by every later memwatch.
 */
#ifndef MEMWATCH_META_KEYS_H
#define MEMWATCH_META_KEYS_H

/* clang-format off */
#define MW_META_KEYS(X)                                                                            \
    /* every file's first META record (raw files; load files share some) */                       \
    X(FORMAT, "format", "major.minor of the file's format")                                       \
    X(MEMWATCH_VERSION, "memwatch_version", "version of the memwatch that wrote the file")        \
    X(WRITER, "writer", "what wrote the file: libmemwatch.so, memwatch record, ...")              \
    X(MACHINE, "machine", "the machine identity, the key of machine profiles")                    \
    X(CLOCK, "clock", "CLOCK_MONOTONIC: the clock of every time in the file")                     \
    X(START_MONOTONIC_NS, "start_monotonic_ns", "when recording of the image began")              \
    X(START_REALTIME_NS, "start_realtime_ns", "the same moment in wall-clock time")               \
    X(PID, "pid", "the process")                                                                  \
    X(PPID, "ppid", "its parent at the start")                                                    \
    X(RANK, "rank", "the MPI rank (0 where none)")                                                \
    X(RANK_FROM, "rank_from", "the variable the rank came from")                                  \
    X(HOST, "host", "the host name, as in the file name")                                         \
    X(EXE, "exe", "the path the image was executed by (AT_EXECFN)")                               \
    X(CMDLINE, "cmdline", "the arguments as the program was started")                             \
    X(ORIGIN, "origin", "exec, fork or attach")                                                   \
    X(FORK_MONOTONIC_NS, "fork_monotonic_ns", "the fork a lazy fork child that exec'ed made")     \
    X(INTERVAL_NS, "interval_ns", "the interval length")                                          \
    X(SAMPLE_RATE, "sample_rate", "cpu-clock samples/s per thread")                               \
    X(SAMPLE_RATE_CLAMPED, "sample_rate_clamped", "1: the kernel's maximum lowered the rate")      \
    X(FAULT_PERIOD, "fault_period", "one page-fault sample every N faults (0: off)")              \
    X(STACK_DEPTH, "stack_depth", "frames per cpu-clock call chain at most")                      \
    X(UNWIND, "unwind", "how stacks are taken (fp, dwarf) and why")                               \
    X(ALLOC_THRESHOLD, "alloc_threshold", "smallest allocation recorded, bytes (off)")            \
    X(ALLOC_FRAMES, "alloc_frames", "return addresses per allocation record")                     \
    X(FOLLOW, "follow", "1: child processes are recorded")                                        \
    X(METHOD, "method", "the MEMWATCH_METHOD asked for")                                          \
    X(RUN_ID, "run_id", "the run the file belongs to")                                            \
    /* memwatch record's external sampler (docs/attach.md) */                                     \
    X(MODE, "mode", "attach: written by memwatch record's external sampler")                      \
    X(ATTACH, "attach", "how the external sampler reached the process")                           \
    X(ATTACH_MISSING, "attach_missing", "what the external sampler cannot record")                \
    X(UID, "uid", "the attached process's owner")                                                 \
    X(USER, "user", "that owner's name")                                                          \
    X(CGROUP, "cgroup", "the attached process's cgroup")                                          \
    X(EXIT_STATUS, "exit_status", "unknown: an attached process that is not memwatch's child")    \
    /* later META records: the interval engine's set-up */                                        \
    X(TSC_HZ, "tsc_hz", "the time-stamp counter's frequency")                                     \
    X(TSC_SOURCE, "tsc_source", "how that frequency was found")                                   \
    X(PROFILE, "profile", "the machine profile used, or none and why")                            \
    X(PROFILE_PATH, "profile_path", "the path of the machine profile used")                       \
    X(PROFILE_BW_METHOD, "profile_bw_method", "the profile's bandwidth method")                   \
    X(PROFILE_READER, "profile_reader", "why the profile could not be read (no cJSON)")           \
    X(LAT_METHOD, "lat_method", "the latency method in use")                                      \
    X(METHOD_NOTE, "method_note", "why the latency method asked for is not the one in use")       \
    X(LAT_COUNTERS, "lat_counters", "the counting latency method in use and its unit")            \
    X(BW_COUNTERS, "bw_counters", "the bandwidth method in use and what it counts")               \
    X(BW_METHOD_NOTE, "bw_method_note", "why the profile's bandwidth method is not read")         \
    X(BW_FACTOR, "bw_factor", "a biased bandwidth method's counted/true ratio")                   \
    X(PROBE_SHARE, "probe_share", "whether probe_lat measurements are shared, or why not")        \
    X(THRESHOLD_NS, "threshold_ns", "the saturation threshold in force")                          \
    X(THRESHOLD_SOURCE, "threshold_source", "where the threshold came from")                      \
    X(MIX_CURVE, "mix_curve", "the profile's read/write curve that set the threshold")            \
    X(BASELINE_NS, "baseline_ns", "the idle latency the uncalibrated threshold rests on")         \
    X(SATURABLE, "saturable", "1: calibration saturated memory here; 0: it could not")            \
    X(THRESHOLD_BAND_NS, "threshold_band_ns", "the profile's band around the threshold: LO,HI")   \
    X(THRESHOLD_WRITES_NS, "threshold_writes_ns", "the threshold for loads that write")           \
    X(THRESHOLD_WRITES_BAND_NS, "threshold_writes_band_ns", "its band: LO,HI")                     \
    X(LAT_CURVE, "lat_curve", "the profile's latency curve: GB/s:ns pairs")                       \
    X(PEAK_BW, "peak_bw", "the curve's highest bandwidth, bytes/s: memory load levels' 100 %")    \
    X(THRESHOLD_NOTE, "threshold_note", "the profile's note on its threshold")                    \
    X(PRECISE_LOADS, "precise_loads", "precise load sampling: available, unavailable or off")     \
    X(PRECISE_UNOPENED_THREADS, "precise_unopened_threads", "threads without a precise sampler")  \
    X(SAMPLING, "sampling", "per-thread or inherited per-CPU sampling, and since when")           \
    X(SAMPLING_ERROR, "sampling_error", "why a thread's samplers could not be opened")            \
    X(SAMPLING_FROM_NS, "sampling_from_ns", "how late the main thread's samplers came")           \
    X(ENGINE_ERROR, "engine_error", "why the interval thread could not start")                    \
    X(INTERVALS, "intervals", "inline: the intervals ran on the program's thread")                \
    X(INTERVALS_THREAD_FROM_NS, "intervals_thread_from_ns", "when inline intervals got a thread") \
    X(INTERVALS_THREAD_WHY, "intervals_thread_why", "and why")                                    \
    X(ALLOCATIONS, "allocations", "not recorded: the program's malloc is not memwatch's")         \
    X(ALLOC_LIVE_OVERFLOW, "alloc_live_overflow", "some sampled blocks' frees went unwritten")    \
    /* the end of an image */                                                                     \
    X(SAMPLES_OWN, "samples_own", "samples taken while memwatch's inline work ran, left out")     \
    X(SAMPLES_SHORT_THREADS, "samples_short_threads", "samples threads too short to sample lost")  \
    X(SIGNALS_BLOCKED, "signals_blocked", "the program kept memwatch's timer signal from it")     \
    X(NEVER_BEGAN, "never_began", "CPU time ran and recording never began: what lazy start saw")  \
    X(SAMPLES_DROPPED, "samples_dropped", "samples not written: the size cap was reached")        \
    X(END, "end", "how the image ended: exit, _exit, signal, exec, detach")                       \
    X(FAULT, "fault", "where a fault signal ended the process")                                   \
    X(EXEC_FAILED_ERRNO, "exec_failed_errno", "an exec memwatch flushed for failed")              \
    X(REGION_NOTES, "region_notes", "bad region input, counted")                                  \
    /* an end written by the parent that reaped the process */                                    \
    X(REPORTED_BY, "reported_by", "parent: the process's parent wrote its end")                   \
    X(NOTE, "note", "why (a reaped process); what failed (a load file)")                          \
    X(CORE_DUMPED, "core_dumped", "1: the kernel wrote a core")                                   \
    /* memwatch record's load file (.mwl) */                                                      \
    X(CONTENT, "content", "load: the file holds LOAD records")                                    \
    X(LOAD_VERSION, "load_version", "the LOAD payload's version")                                 \
    X(RECORD_PID, "record_pid", "memwatch record's pid")                                          \
    X(PROGRAM_PID, "program_pid", "the program record started")                                  \
    X(PERIOD_NS, "period_ns", "the shortest slot")                                                \
    X(NCPUS, "ncpus", "the machine's online CPUs")                                                \
    X(CLK_TCK, "clk_tck", "the kernel's clock ticks per second")                                  \
    X(END_MONOTONIC_NS, "end_monotonic_ns", "when the load sampler stopped")                      \
    X(SLOTS, "slots", "slots written")                                                            \
    X(SCANS, "scans", "scans of /proc made")                                                      \
    X(SAMPLER_CPU_NS, "sampler_cpu_ns", "the load sampler's CPU time")                            \
    /* MWR_GPU_META records of libmemwatch_cuda.so (docs/gpu.md) */                               \
    X(GPU_DEVICE, "gpu.device", "a device's ordinal; its keys follow")                            \
    X(GPU_NAME, "gpu.name", "the device's name")                                                  \
    X(GPU_CC, "gpu.cc", "its compute capability")                                                 \
    X(GPU_PEAK_BW, "gpu.peak_bw", "its peak DRAM bandwidth, bytes/s")                             \
    X(GPU_THRESHOLD_BW, "gpu.threshold_bw", "the DRAM throughput above which a kernel is flagged") \
    X(GPU_THRESHOLD_SOURCE, "gpu.threshold_source", "where that threshold came from")             \
    X(GPU_SAMPLING, "gpu.sampling", "PM sampling's metrics and interval, or why not")             \
    X(GPU_CLOCK, "gpu.clock", "a GPU timestamp and CLOCK_MONOTONIC at one moment")                \
    X(GPU_STATUS, "gpu.status", "what could not be collected")                                    \
    X(GPU_SUMMARY, "gpu.summary", "kernels, flagged, samples, dropped records")                   \
    X(GPU_DEVICE_SUMMARY, "gpu.device_summary", "the same per device")                            \
    X(GPU_PC_SAMPLING, "gpu.pc_sampling", "PC sampling's period, or why not")                     \
    X(GPU_PC_SUMMARY, "gpu.pc_summary", "source lines, PC samples, dropped, PCs")                 \
    X(GPU_PC_STATUS, "gpu.pc_status", "a PC sampling failure")
/* clang-format on */

enum mw_meta_id {
#define MW_META_ID_(id, key, doc) MW_META_##id,
    MW_META_KEYS(MW_META_ID_)
#undef MW_META_ID_
        MW_META_COUNT
};

/* The text of key id. Called with a constant (MW_META_<ID>) it folds to
 * the string literal: no table, nothing relocated at load time. */
static inline __attribute__((always_inline)) const char *mw_meta_key(enum mw_meta_id id)
{
    switch (id) {
#define MW_META_CASE_(id_, key, doc)                                                               \
    case MW_META_##id_:                                                                            \
        return key;
        MW_META_KEYS(MW_META_CASE_)
#undef MW_META_CASE_
    default:
        return "";
    }
}

/* The key's length, known when the caller is compiled (id a constant): the
 * library's META writer copies keys without measuring them */
static inline __attribute__((always_inline)) unsigned mw_meta_key_len(enum mw_meta_id id)
{
    switch (id) {
#define MW_META_LEN_(id_, key, doc)                                                                \
    case MW_META_##id_:                                                                            \
        return sizeof key - 1;
        MW_META_KEYS(MW_META_LEN_)
#undef MW_META_LEN_
    default:
        return 0;
    }
}

#endif
