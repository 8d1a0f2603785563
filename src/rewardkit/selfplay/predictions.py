"""The seed's predictions that need no LLM: the Miller–Madow bound and peak, P1 and P4.

    >>> from rewardkit.selfplay.predictions import mm_bound, mm_peak
    >>> mm_bound(8, 16), mm_bound(12, 16)          # (Ĉ − 1)/32 up to Ĉ = 8, then (15 − Ĉ)/32
    (0.21875, 0.09375)
    >>> mm_peak(16, 16)                              # 7/32 at Ĉ = 8 when G + 1 > m/2
    0.21875

Seed 003, ⚠ block: with N = m programs and R̂ = 2 the general Miller–Madow term
(Ŝ − R̂ − Ĉ + 1)/(2m) is largest when Ŝ = min(m, 2Ĉ):

    Ĉ ≤ m/2: (Ĉ − 1)/(2m)        Ĉ > m/2: (m − 1 − Ĉ)/(2m)

so the peak sits at Ĉ* = min(m/2, G + 1) with the two asymptotes G/(2m) (G + 1 ≤ m/2) and
1/4 − 1/(2m) (G + 1 > m/2).

P1: the measured plug-in MI on null tables, bucketed by Ĉ, should be near (Ĉ − 1)/(2m) for
Ĉ ≤ m/2 and not above the sparse bound otherwise; a bucket off by more than 2× refutes the bias
model there. P4: H(y) and the mean IG reward correlate positively.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._json import JsonMixin
from .._rng import as_generator
from .._validation import MAX_RESAMPLES, Interval, check_memory, validate_params
from .infogain import ig_rewards, miller_madow_bias, null_mi

__all__ = ["P1Bucket", "P1Result", "P4Result", "mm_bound", "mm_peak", "p1_check", "p4_check"]


def mm_bound(c_hat: int, m: int, R: int = 2) -> float:
    """Largest (Ŝ − R − Ĉ + 1)/(2m) reachable with Ĉ non-empty levels: Ŝ ≤ min(m, R·Ĉ)."""
    return (min(m, R * c_hat) - R - c_hat + 1) / (2.0 * m)


def mm_peak(m: int, G: int) -> float:
    """max over realisable Ĉ ≤ min(m, G + 1) of :func:`mm_bound` (R = 2)."""
    return max(mm_bound(c, m) for c in range(1, min(m, G + 1) + 1))


@dataclass(frozen=True)
class P1Bucket(JsonMixin):
    c_hat: int
    n_tables: int
    measured_null_mi: float  # mean plug-in MI on independent tables, nats
    se: float
    exact_null_mi: float  # mean hypergeometric expectation (our estimator of the same)
    mm_term: float  # mean (Ŝ − R̂ − Ĉ + 1)/(2m) on these tables
    theory: float  # (Ĉ − 1)/(2m) or the sparse bound (15 − Ĉ)/32 at m = 16
    ratio: float | None  # measured / theory (None where theory ≤ 0)
    holds: bool  # within 2× (dense side) / at most 2× the bound (sparse side)


@dataclass(frozen=True)
class P1Result(JsonMixin):
    m: int
    n_tables: int
    buckets: tuple[P1Bucket, ...]
    holds: bool  # P1 survives in every bucket
    peak_theory: float
    peak_c_hat: int

    @property
    def failing_buckets(self) -> tuple[int, ...]:
        return tuple(b.c_hat for b in self.buckets if not b.holds)

    @property
    def dense_holds(self) -> bool:
        """P1 where the Miller–Madow bias model applies (Ĉ ≤ m/2): what the corrections rely on."""
        return all(b.holds for b in self.buckets if 2 * b.c_hat <= self.m)

    @property
    def sparse_refuted(self) -> tuple[int, ...]:
        """Buckets Ĉ > m/2 where the measured bias exceeds the bound: the known refutation."""
        return tuple(b.c_hat for b in self.buckets if 2 * b.c_hat > self.m and not b.holds)


@validate_params(
    {
        "m": [Interval(int, 4, 1024)],
        "n_per_bucket": [Interval(int, 10, MAX_RESAMPLES)],
        "rng": ["rng"],
    }
)
def p1_check(*, m: int = 16, n_per_bucket: int = 2000, rng: Any = 0) -> P1Result:
    """Simulate null tables (pass column independent of y) with exactly Ĉ occupied levels for
    every Ĉ = 2..m and compare the plug-in MI with the seed's Miller–Madow prediction."""
    func = "p1_check"
    check_memory(
        n_per_bucket,
        "n_per_bucket",
        func,
        nbytes=n_per_bucket * m * 8 * 4,
        formula="4 × n_per_bucket × m × 8 bytes",
    )
    gen = as_generator(rng, func)
    buckets = []
    for c in range(2, m + 1):
        # a random surjection of m programs onto c levels: each level once, the rest at random
        base = np.broadcast_to(np.arange(c), (n_per_bucket, c))
        rest = gen.integers(0, c, size=(n_per_bucket, m - c))
        y = gen.permuted(np.concatenate([base, rest], axis=1), axis=1) / (m - 1)
        E = (gen.random((n_per_bucket, m)) < gen.uniform(0.2, 0.8, (n_per_bucket, 1)))[..., None]
        mi = ig_rewards(E, y, gate="none").mi[:, 0]
        theory = mm_bound(c, m)
        mean = float(mi.mean())
        ratio = mean / theory if theory > 0 else None
        if c <= m // 2:
            holds = ratio is not None and 0.5 <= ratio <= 2.0
        else:
            holds = ratio is not None and ratio <= 2.0
        buckets.append(
            P1Bucket(
                c,
                n_per_bucket,
                mean,
                float(mi.std(ddof=1) / np.sqrt(n_per_bucket)),
                float(null_mi(E, y)[:, 0].mean()),
                float(miller_madow_bias(E, y)[:, 0].mean()),
                theory,
                ratio,
                holds,
            )
        )
    peak_c = max(range(1, m + 1), key=lambda c: mm_bound(c, m))
    return P1Result(
        m,
        n_per_bucket * (m - 1),
        tuple(buckets),
        all(b.holds for b in buckets),
        mm_peak(m, m),
        peak_c,
    )


@dataclass(frozen=True)
class P4Result(JsonMixin):
    n: int
    pearson: float | None
    spearman: float | None
    holds: bool  # both correlations positive


def _rank(x: np.ndarray) -> np.ndarray:
    order = np.argsort(x, kind="stable")
    r = np.empty(len(x))
    r[order] = np.arange(len(x), dtype=float)
    # average ranks over ties
    _, inv, counts = np.unique(x, return_inverse=True, return_counts=True)
    sums = np.bincount(inv, weights=r)
    return (sums / counts)[inv]


def p4_check(h_y: Any, mean_ig: Any) -> P4Result:
    """P4: correlation of H(y) with the mean IG reward over (task, step) pairs."""
    h = np.asarray(h_y, float).ravel()
    g = np.asarray(mean_ig, float).ravel()
    ok = np.isfinite(h) & np.isfinite(g)
    h, g = h[ok], g[ok]
    if len(h) < 3 or h.std() == 0 or g.std() == 0:
        return P4Result(len(h), None, None, False)
    pr = float(np.corrcoef(h, g)[0, 1])
    sr = float(np.corrcoef(_rank(h), _rank(g))[0, 1])
    return P4Result(len(h), pr, sr, pr > 0 and sr > 0)
