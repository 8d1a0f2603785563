"""Seed stability of rank agreement (seed 000 §4, F6).

Usage::

    from rewardkit.stats import seed_stability
    s = seed_stability(rewards, gold_q)        # seeds (42, 1, 7, 123, 2026), tolerance 0.05
    s.points_identical, s.max_bound_spread, s.stable

Rewards carry no randomness, so ρ and τ_b point estimates must be identical under every seed;
only the bootstrap interval bounds may move, by at most ``tolerance`` (max − min over seeds).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .._validation import MAX_RESAMPLES, SEED, Each, Interval, validate_params
from ..errors import ConfigError
from ._types import RankAgreement, SeedStability
from .rank import rank_agreement

__all__ = ["DEFAULT_SEEDS", "seed_stability"]

DEFAULT_SEEDS = (42, 1, 7, 123, 2026)


def _bounds(ra: RankAgreement) -> tuple[float | None, ...]:
    out: list[float | None] = []
    for est in (ra.spearman, ra.kendall_tau_b):
        ci = est.confidence_interval
        out += [None, None] if ci is None else [ci.low, ci.high]
    return tuple(out)


@validate_params(
    {
        "seeds": [Each((SEED,), min_len=1, distinct=True)],
        "tolerance": [Interval(float, 0, None)],
        "n_resamples": [Interval(int, 1, MAX_RESAMPLES)],
        "confidence_level": [Interval(float, 0, 1, closed="neither")],
    }
)
def seed_stability(
    reward: Sequence[float | None],
    gold: Sequence[float | None],
    *,
    seeds: Iterable[int] = DEFAULT_SEEDS,
    tolerance: float = 0.05,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    results: Sequence[RankAgreement] | None = None,
) -> SeedStability:
    """Rank agreement once per seed; stable = identical points and every bound's spread ≤ tol.

    ``results`` may pass rank agreements already computed for ``seeds`` (same order).
    """
    fn = "seed_stability"
    seed_t = tuple(int(s) for s in seeds)
    tol = float(tolerance)
    if results is None:
        res = tuple(
            rank_agreement(
                reward, gold, n_resamples=n_resamples, confidence_level=confidence_level, rng=s
            )
            for s in seed_t
        )
    else:
        res = tuple(results)
        if len(res) != len(seed_t):
            raise ConfigError(
                f"The 'results' parameter of {fn} must hold one result per seed "
                f"({len(seed_t)}). Got {len(res)}."
            )
    points = {(r.spearman.value, r.kendall_tau_b.value) for r in res}
    spread = 0.0
    bounds = [_bounds(r) for r in res]
    missing = any(b is None for bs in bounds for b in bs)
    for col in zip(*bounds):
        vals = [v for v in col if v is not None]
        if vals:
            spread = max(spread, max(vals) - min(vals))
    identical = len(points) == 1
    return SeedStability(
        seeds=seed_t,
        results=res,
        points_identical=identical,
        max_bound_spread=spread,
        tolerance=tol,
        stable=identical and not missing and spread <= tol,
    )
