"""Result types of :mod:`rewardkit.stats` (frozen, named fields, canonical ``to_json()``)."""

from __future__ import annotations

from dataclasses import dataclass

from .._json import JsonMixin

__all__ = [
    "ConfidenceInterval",
    "Estimate",
    "RankAgreement",
    "SeedStability",
    "StratifiedTest",
]


@dataclass(frozen=True)
class ConfidenceInterval(JsonMixin):
    """A two-sided interval ``[low, high]``."""

    low: float
    high: float

    def overlaps(self, other: ConfidenceInterval) -> bool:
        return self.low <= other.high and other.low <= self.high


@dataclass(frozen=True)
class Estimate(JsonMixin):
    """A point estimate with its percentile-bootstrap interval.

    ``value`` is ``None`` when the statistic is undefined on the observed data (a constant
    vector); ``confidence_interval`` is ``None`` when no resample gave a defined value.
    ``standard_error`` is the ddof = 1 standard deviation of the defined resample values.
    """

    value: float | None
    confidence_interval: ConfidenceInterval | None
    standard_error: float | None


@dataclass(frozen=True)
class RankAgreement(JsonMixin):
    """Spearman ρ and Kendall τ_b between reward and gold quality, with task-level intervals.

    ``n`` tasks entered the statistics; ``n_excluded_reward`` had a ``None`` reward and
    ``n_excluded_gold`` had no gold quality (only edge annotations). ``n_degenerate`` of the
    ``n_resamples`` resamples had a constant reward or gold vector (correlation undefined);
    the intervals use the defined ones.
    """

    spearman: Estimate
    kendall_tau_b: Estimate
    n: int
    n_excluded_reward: int
    n_excluded_gold: int
    n_resamples: int
    n_degenerate: int
    frac_degenerate: float
    confidence_level: float


@dataclass(frozen=True)
class StratifiedTest(JsonMixin):
    """mean(good) − mean(bad), its bootstrap interval and the two-sided permutation p.

    ``significant`` = ``diff > 0 and pvalue < alpha`` (seed 000 §4). ``exact`` is True when the
    permutation null enumerated every partition (then p has no +1 adjustment, as in scipy).
    """

    mean_good: float
    mean_bad: float
    diff: float
    confidence_interval: ConfidenceInterval
    pvalue: float
    significant: bool
    n_good: int
    n_bad: int
    n_excluded: int
    n_resamples: int
    exact: bool
    alpha: float


@dataclass(frozen=True)
class SeedStability(JsonMixin):
    """Rank agreement under several seeds: identical points and bounds within ``tolerance``.

    ``max_bound_spread`` is the largest (max − min over seeds) of any interval bound of ρ or τ_b.
    """

    seeds: tuple[int, ...]
    results: tuple[RankAgreement, ...]
    points_identical: bool
    max_bound_spread: float
    tolerance: float
    stable: bool
