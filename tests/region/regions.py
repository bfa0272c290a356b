# tests/region/regions.py: two Python regions, a bandwidth-heavy copy loop
# ("stream", a context manager) and a compute loop ("compute", a decorator).
# Prints the same whether or not memwatch records it.
import sys
import time

import memwatch

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5


@memwatch.region("compute")
def compute():
    end = time.monotonic() + SECONDS
    x = 1.0
    while time.monotonic() < end:
        for _ in range(10000):
            x = x * 1.0000001 + 1e-9 / x
    return x > 0


SRC = bytearray(64 << 20)
DST = bytearray(64 << 20)
SRC[:] = DST  # the pages exist before the region


def stream():
    src, dst = SRC, DST
    end = time.monotonic() + SECONDS
    while time.monotonic() < end:
        dst[:] = src
        src[:] = dst
    return len(dst)


for _ in range(2):
    with memwatch.region("stream"):
        n = stream()
    ok = compute()
print("stream bytes", n, "compute", ok)
