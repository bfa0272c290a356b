"""bench/median_ci.py: the median of a bench's per-round ratios and its
distribution-free 95 % confidence interval, for the benches that print one
(bench/short_procs, bench/long_cost)."""
import math
import statistics


def median_ci(v):
    """(low, median, high): the order statistics k and n+1-k, k the largest
    with P(Binomial(n, 1/2) < k) <= 2.5 % (10 rounds: the 2nd and 9th of the
    sorted ratios; below 6 rounds there is none at 95 %, min..max instead)"""
    v, n = sorted(v), len(v)
    k, tail = 0, 0.0
    while k < n // 2 and tail + math.comb(n, k) / 2 ** n <= 0.025:
        tail += math.comb(n, k) / 2 ** n
        k += 1
    k = max(k, 1)
    return v[k - 1], statistics.median(v), v[n - k]
