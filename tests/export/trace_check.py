#!/usr/bin/env python3
"""tests/export/trace_check.py TRACE.json: checks a Chrome trace-event JSON
file against the trace-event format (the object form: traceEvents plus
optional metadata; every event's phase, ids, times and arguments) and prints,
as JSON, what the tests compare with the report database: per process the
counter tracks, how many points each has and the points themselves
("points": [ts, value] in time order per "track/series"), the bandwidth-bound slices and their total
duration, the GPU kernel slices, the region slices (category "region") per
thread, and the process and thread names. Slices of one track (pid, tid)
must nest: each lies inside the one it starts in, or after its end."""
import json
import sys

PHASES = {"M", "C", "X", "B", "E", "i", "I"}


def fail(msg):
    print("trace_check: " + msg, file=sys.stderr)
    sys.exit(1)


# strict UTF-8 (the format is JSON, which is UTF-8): a byte that is not
# part of valid UTF-8 fails the check
try:
    doc = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
except (UnicodeDecodeError, ValueError) as e:
    fail("not valid UTF-8 JSON: %s" % e)
if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
    fail("not a trace-event object with a traceEvents array")
if doc.get("displayTimeUnit") not in (None, "ms", "ns"):
    fail("displayTimeUnit must be ms or ns")
procs = {}
names = {}
threads = {}
tracks = {}
for n, e in enumerate(doc["traceEvents"]):
    where = "event %d" % n
    if not isinstance(e, dict):
        fail(where + " is not an object")
    ph = e.get("ph")
    if ph not in PHASES:
        fail("%s: phase %r" % (where, ph))
    if not isinstance(e.get("name"), str):
        fail(where + ": no name")
    for k in ("pid", "tid"):
        if not isinstance(e.get(k), int):
            fail("%s: %s is not an integer" % (where, k))
    p = procs.setdefault(e["pid"], {"counters": {}, "points": {}, "slices": 0, "slice_us": 0.0,
                                     "slice_intervals": 0, "gpu": 0, "gpu_flagged": 0,
                                     "regions": []})
    if ph == "M":
        if e["name"] not in ("process_name", "thread_name", "process_sort_index",
                             "process_labels", "thread_sort_index"):
            fail("%s: unknown metadata %s" % (where, e["name"]))
        if not isinstance(e.get("args"), dict):
            fail(where + ": metadata without args")
        if e["name"] == "process_name":
            names[e["pid"]] = e["args"]["name"]
        if e["name"] == "thread_name":
            threads.setdefault(e["pid"], []).append(e["args"]["name"])
        continue
    ts = e.get("ts")
    if not isinstance(ts, (int, float)) or ts < 0:
        fail("%s: ts %r" % (where, ts))
    if ph == "C":
        args = e.get("args")
        if not isinstance(args, dict) or not args:
            fail(where + ": counter without values")
        for k, v in args.items():
            if not isinstance(v, (int, float)):
                fail("%s: counter %s value %r" % (where, k, v))
            key = e["name"] + "/" + k
            p["counters"][key] = p["counters"].get(key, 0) + 1
            p["points"].setdefault(key, []).append([ts, v])
    if ph == "X":
        d = e.get("dur")
        if not isinstance(d, (int, float)) or d < 0:
            fail("%s: dur %r" % (where, d))
        cat = e.get("cat", "")
        tracks.setdefault((e["pid"], e["tid"]), []).append((ts, d, n))
        if cat == "region":
            p["regions"].append({"tid": e["tid"], "name": e["name"], "ts": ts, "dur": d,
                                 "args": e.get("args", {})})
        elif e["name"] == "bandwidth-bound" and cat == "memwatch":
            p["slices"] += 1
            p["slice_us"] += d
            p["slice_intervals"] += e["args"]["intervals"]
        elif cat.startswith("gpu"):
            p["gpu"] += 1
            p["gpu_flagged"] += "bandwidth-bound" in cat
# nesting per track (times in us with 3 decimals: allow a nanosecond)
for key, sl in tracks.items():
    sl.sort(key=lambda x: (x[0], -x[1]))
    stack = []
    for ts, d, n in sl:
        while stack and ts >= stack[-1] - 0.0015:
            stack.pop()
        if stack and ts + d > stack[-1] + 0.0015:
            fail("event %d on track %s overlaps the slice it starts in without nesting" % (n, key))
        stack.append(ts + d)
for pid in procs:
    for pts in procs[pid]["points"].values():
        pts.sort(key=lambda x: x[0])
    procs[pid]["name"] = names.get(pid)
    procs[pid]["threads"] = threads.get(pid, [])
print(json.dumps({"events": len(doc["traceEvents"]),
                  "processes": {str(k): v for k, v in procs.items()}}, indent=1))
