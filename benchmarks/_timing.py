"""Median wall time of a callable, for side-by-side benchmarks."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_time(fn: Callable[[], object], *, repeat: int = 7, min_time_s: float = 0.05) -> float:
    """Median seconds per call over ``repeat`` rounds of enough calls to last ``min_time_s``."""
    fn()  # warm-up
    n, t = 1, 0.0
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t = time.perf_counter() - t0
        if t >= min_time_s:
            break
        n *= 2
    rounds = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        rounds.append((time.perf_counter() - t0) / n)
    return statistics.median(rounds)
