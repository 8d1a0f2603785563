"""Calibration of a probability-valued reward against binary gold: ECE, Brier, reliability.

Usage::

    from rewardkit.stats.probability import reliability
    rel = reliability(p, y, n_bins=10)        # p in [0, 1], y in {0, 1}
    rel.ece, rel.brier, [(b.mean_predicted, b.frac_positive, b.count) for b in rel.bins]

Bins are ``n_bins`` equal-width intervals of [0, 1], assigned as
``sklearn.calibration.calibration_curve(y, p, n_bins, strategy="uniform")`` assigns them
(``searchsorted(inner edges, p, side="left")``: the first bin is [0, 1/n], the others
(k/n, (k+1)/n]); empty bins are listed with count 0. ECE = Σ_b (n_b / N) · |mean p_b − mean y_b|
(Naeini et al. 2015; the usual "expected calibration error"); Brier = mean (p − y)², equal to
``sklearn.metrics.brier_score_loss``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._json import JsonMixin
from .._validation import Interval, validate_params
from ..errors import ConfigError

__all__ = ["Reliability", "ReliabilityBin", "reliability"]

_FN = "reliability"


@dataclass(frozen=True)
class ReliabilityBin(JsonMixin):
    low: float
    high: float
    count: int
    mean_predicted: float | None  # None for an empty bin
    frac_positive: float | None


@dataclass(frozen=True)
class Reliability(JsonMixin):
    n: int
    n_bins: int
    ece: float
    max_calibration_error: float  # the largest |mean p_b − mean y_b| over non-empty bins
    brier: float
    bins: tuple[ReliabilityBin, ...]


@validate_params({"n_bins": [Interval(int, 1, 10**6)]})
def reliability(
    probabilities: Sequence[float], outcomes: Sequence[float | bool], *, n_bins: int = 10
) -> Reliability:
    """ECE, Brier and the reliability diagram of ``probabilities`` against 0/1 ``outcomes``."""
    k = int(n_bins)
    p = np.asarray(probabilities, dtype=np.float64)  # (N,)
    y = np.asarray(outcomes, dtype=np.float64)  # (N,)
    if p.shape != y.shape or p.ndim != 1 or p.size == 0:
        raise ConfigError(
            f"The 'outcomes' parameter of {_FN} must have one value per probability "
            f"({p.size}, at least one). Got {y.size}."
        )
    if not np.all(np.isfinite(p)) or np.any(p < 0) or np.any(p > 1):
        raise ConfigError(f"The 'probabilities' parameter of {_FN} must lie in [0, 1].")
    if not np.all((y == 0) | (y == 1)):
        raise ConfigError(f"The 'outcomes' parameter of {_FN} must hold only 0 and 1.")
    edges = np.linspace(0.0, 1.0, k + 1)
    ids = np.searchsorted(edges[1:-1], p, side="left")  # (N,) bin of each probability
    count = np.bincount(ids, minlength=k)
    sum_p = np.bincount(ids, weights=p, minlength=k)
    sum_y = np.bincount(ids, weights=y, minlength=k)
    bins = []
    gaps = []
    for b in range(k):
        n_b = int(count[b])
        mp = float(sum_p[b] / n_b) if n_b else None
        fy = float(sum_y[b] / n_b) if n_b else None
        if mp is not None and fy is not None:
            gaps.append((n_b, abs(mp - fy)))
        bins.append(ReliabilityBin(float(edges[b]), float(edges[b + 1]), n_b, mp, fy))
    n = int(p.size)
    return Reliability(
        n=n,
        n_bins=k,
        ece=float(sum(n_b * g for n_b, g in gaps) / n),
        max_calibration_error=float(max(g for _, g in gaps)),
        brier=float(np.mean((p - y) ** 2)),
        bins=tuple(bins),
    )
