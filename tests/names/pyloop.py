# tests/names/pyloop.py: a Python function (py_hot_loop) for the perf map
# test with python3.12 -X perf, which writes /tmp/perf-PID.map naming the
# trampoline of each Python function.
import sys
import time


def py_hot_loop(n):
    s = 0.0
    for i in range(n):
        s += i * 1.000001
    return s


end = time.monotonic() + float(sys.argv[1] if len(sys.argv) > 1 else 1)
t = 0.0
while time.monotonic() < end:
    t += py_hot_loop(100000)
print("done" if t > 0 else "?")
