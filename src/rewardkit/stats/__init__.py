"""Audit statistics (seed 000 §4): rank agreement, stratified test, seed stability.

Usage::

    from rewardkit.stats import gold_quality, rank_agreement, seed_stability, stratified_test
    q = gold_quality(n_correct, n_error)
    ra = rank_agreement(rewards, q, n_resamples=2000, rng=42)     # ρ, τ_b with intervals
    st = stratified_test(rewards, [e == 0 for e in n_error], rng=42)
    ss = seed_stability(rewards, q, seeds=(42, 1, 7, 123, 2026), tolerance=0.05)
    pd = paired_difference("D_s", "A", "control", a_per_seed, c_per_seed)  # paired t-interval

Pure numpy and batched; with the same seed every interval and p-value equals scipy.stats'
``bootstrap`` (paired, percentile) / ``permutation_test`` (independent, two-sided) to 1e-12.
"""

from ._types import ConfidenceInterval, Estimate, RankAgreement, SeedStability, StratifiedTest
from .paired import PairedDifference, paired_difference, t_quantile_975
from .rank import gold_quality, rank_agreement
from .stability import DEFAULT_SEEDS, seed_stability
from .stratified import stratified_test

__all__ = [
    "DEFAULT_SEEDS",
    "ConfidenceInterval",
    "Estimate",
    "PairedDifference",
    "RankAgreement",
    "SeedStability",
    "StratifiedTest",
    "gold_quality",
    "paired_difference",
    "rank_agreement",
    "seed_stability",
    "stratified_test",
    "t_quantile_975",
]
