#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times SciPy doing what `perfwarden compare` does, on the data stats_bench dumps.

Per benchmark: scipy.stats.ttest_ind(equal_var=False), scipy.stats.mannwhitneyu (two-sided,
method='auto'), a percentile bootstrap CI of the relative change of medians with 2,000
resamples (NumPy, vectorised), then Holm across all p-values. Prints the best of N runs in ms
and a check value (regressions found) so both sides can be seen to do the same work.
Used only by bench/run_stats_bench.sh; the product and its tests never need Python.
"""
import sys
import time

import numpy as np
from scipy import stats


def load(path):
    base, contender = {}, {}
    with open(path) as f:
        for line in f:
            index, side, values = line.rstrip("\n").split(",")
            (base if side == "base" else contender)[int(index)] = np.array(
                [float(v) for v in values.split()])
    return [base[i] for i in sorted(base)], [contender[i] for i in sorted(contender)]


def holm(p):
    p = np.asarray(p)
    order = np.argsort(p)
    m = len(p)
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def compare(base, contender, rng, resamples=2000, threshold=0.05, alpha=0.05):
    p_u, p_w, changes, cis = [], [], [], []
    for b, c in zip(base, contender):
        p_w.append(stats.ttest_ind(b, c, equal_var=False).pvalue)
        p_u.append(stats.mannwhitneyu(b, c, alternative="two-sided").pvalue)
        mb = np.median(b[rng.integers(0, len(b), (resamples, len(b)))], axis=1)
        mc = np.median(c[rng.integers(0, len(c), (resamples, len(c)))], axis=1)
        cis.append(np.quantile(mc / mb - 1, [0.025, 0.975]))
        changes.append(np.median(c) / np.median(b) - 1)
    adjusted = holm(p_u)
    return int(sum(1 for ch, p in zip(changes, adjusted) if ch > threshold and p < alpha))


def main():
    path = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    base, contender = load(path)
    best = float("inf")
    regressions = None
    for _ in range(runs):
        rng = np.random.default_rng(7)
        start = time.perf_counter()
        regressions = compare(base, contender, rng)
        best = min(best, time.perf_counter() - start)
    import scipy
    print(f"scipy {scipy.__version__} numpy {np.__version__}: {len(base)} benchmarks, "
          f"best of {runs}: {best * 1000:.1f} ms, regressions {regressions}")


if __name__ == "__main__":
    main()
