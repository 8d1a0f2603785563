"""Resampling primitives drawn exactly as scipy.stats draws them, so results equal scipy's.

* Bootstrap: for each batch of ``b`` resamples and each sample of length ``n``, scipy draws
  ``rng.integers(0, n, (b, n))`` (``scipy.stats._resampling._bootstrap_resample``). A paired
  bootstrap resamples one index vector shared by all arrays. ``batch`` is honoured exactly as
  scipy honours it (one draw per batch and sample); with numpy's default int64 draws the
  indices come out the same for any batch size (checked), so batch only bounds memory.
* Permutation (``permutation_type="independent"``): one ``rng.permutation(N)`` per resample,
  whatever the batch; when ``n_resamples`` reaches the number of distinct partitions scipy
  enumerates them all instead and drops the +1 of the p-value.
* Percentile interval: ``quantile(method="linear")`` at α/2 and 1 − α/2 of the bootstrap
  distribution; here over the *defined* values only (degenerate resamples are counted, not
  allowed to turn the interval into NaN).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from itertools import combinations

import numpy as np

__all__ = [
    "batches",
    "bootstrap_indices",
    "index_counts",
    "percentile_interval",
    "permutation_indices",
]


def batches(n_resamples: int, batch: int | None) -> Iterator[int]:
    """Sizes of the batches scipy uses: ``batch`` (or everything) at a time."""
    step = batch or n_resamples
    for k in range(0, n_resamples, step):
        yield min(step, n_resamples - k)


def bootstrap_indices(rng: np.random.Generator, n: int, size: int) -> np.ndarray:
    """(size, n) int64 resample indices: scipy's ``rng_integers(rng, 0, n, (size, n))``."""
    return rng.integers(0, n, (size, n))


def index_counts(idx: np.ndarray, n: int) -> np.ndarray:
    """(b, n) float64 counts: how often each task appears in each resample row of ``idx``."""
    b = idx.shape[0]
    flat = (np.arange(b, dtype=np.int64)[:, None] * n + idx).ravel()
    return np.bincount(flat, minlength=b * n).reshape(b, n).astype(np.float64)


def permutation_indices(
    rng: np.random.Generator, n_total: int, n_first: int, n_resamples: int
) -> tuple[np.ndarray, bool]:
    """(R, N) permutations for a two-sample independent permutation test, and whether exact.

    Exact when ``n_resamples`` ≥ C(N, n_first): every split of the pooled data, no rng drawn
    (the p-value does not depend on their order). Otherwise ``n_resamples`` calls of
    ``rng.permutation(N)``, the stream scipy uses.
    """
    n_max = math.comb(n_total, n_first)
    if n_resamples >= n_max:
        everyone = set(range(n_total))
        splits = combinations(range(n_total), n_first)
        rows = [[*c, *sorted(everyone.difference(c))] for c in splits]
        return np.asarray(rows, dtype=np.int64).reshape(n_max, n_total), True
    perms = np.empty((n_resamples, n_total), dtype=np.int64)
    for k in range(n_resamples):
        perms[k] = rng.permutation(n_total)
    return perms, False


def percentile_interval(
    theta: np.ndarray, confidence_level: float
) -> tuple[tuple[float, float] | None, float | None, int]:
    """Percentile interval and ddof = 1 standard error over the defined (non-NaN) ``theta``.

    Returns ``((low, high) | None, standard_error | None, n_degenerate)``.
    """
    defined = theta[~np.isnan(theta)]
    n_degenerate = int(theta.size - defined.size)
    if defined.size == 0:
        return None, None, n_degenerate
    alpha = (1.0 - confidence_level) / 2.0
    low, high = np.quantile(defined, [alpha, 1.0 - alpha], method="linear")
    se = float(np.std(defined, ddof=1)) if defined.size > 1 else None
    return (float(low), float(high)), se, n_degenerate
