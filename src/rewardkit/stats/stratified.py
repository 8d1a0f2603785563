"""Stratified test: does the reward separate good tasks from bad ones? (seed 000 §4)

Usage::

    from rewardkit.stats import stratified_test
    good = [n_err == 0 for n_err in n_gold_error]        # bad: n_gold_error >= 1
    st = stratified_test(rewards, good, n_resamples=2000, rng=42)
    st.diff, st.confidence_interval, st.pvalue, st.significant

diff = mean(good) − mean(bad). The p-value is the two-sided permutation p of
``scipy.stats.permutation_test((good, bad), mean difference, permutation_type="independent",
alternative="two-sided", n_resamples=B, rng=default_rng(seed))``: p = (k + 1)/(B + 1) per side
with k the null values at least as extreme (within 100·eps·|obs|), two-sided = min(1,
2·min(p_less, p_greater)); an exhaustive (exact) null when B reaches the number of splits.
The interval is the percentile bootstrap of the difference, equal to ``scipy.stats.bootstrap(
(good, bad), mean difference, method="percentile")``. Significant = diff > 0 and p < alpha.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._rng import RngLike, as_generator
from .._validation import MAX_RESAMPLES, Interval, check_memory, check_real, validate_params
from ..errors import ConfigError
from ._resample import batches, bootstrap_indices, percentile_interval, permutation_indices
from ._types import ConfidenceInterval, StratifiedTest

__all__ = ["permutation_pvalue", "stratified_test"]

_FN = "stratified_test"


def _mean_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.mean(a, axis=-1) - np.mean(b, axis=-1)


@validate_params({"n_resamples": [Interval(int, 1, MAX_RESAMPLES)], "rng": [np.random.Generator]})
def permutation_pvalue(
    good: np.ndarray, bad: np.ndarray, *, n_resamples: int, rng: np.random.Generator
) -> tuple[float, bool]:
    """Two-sided permutation p of mean(good) − mean(bad), and whether the null was exact."""
    n1 = good.size
    pooled = np.concatenate([good, bad])
    perms, exact = permutation_indices(rng, pooled.size, n1, n_resamples)
    permuted = pooled[perms]  # (R, N), the same gather and slices as scipy's
    null = _mean_diff(permuted[..., :n1], permuted[..., n1:])
    observed = _mean_diff(good, bad)
    adjustment = 0 if exact else 1
    gamma = abs(np.finfo(np.float64).eps * 100 * observed)
    p_less = (np.count_nonzero(null <= observed + gamma) + adjustment) / (null.size + adjustment)
    p_greater = (np.count_nonzero(null >= observed - gamma) + adjustment) / (null.size + adjustment)
    return float(np.clip(min(p_less, p_greater) * 2, 0.0, 1.0)), exact


@validate_params(
    {
        "n_resamples": [Interval(int, 1, MAX_RESAMPLES)],
        "confidence_level": [Interval(float, 0, 1, closed="neither")],
        "alpha": [Interval(float, 0, 1, closed="neither")],
        "batch": [Interval(int, 1, MAX_RESAMPLES), None],
        "rng": ["rng"],
    }
)
def stratified_test(
    values: Sequence[float | None],
    good: Sequence[bool],
    *,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    alpha: float = 0.05,
    batch: int | None = None,
    rng: RngLike = 42,
) -> StratifiedTest:
    """Mean difference good − bad with a bootstrap interval and a two-sided permutation p.

    ``None`` values are excluded and counted (``n_excluded``). An int ``rng`` seeds the
    permutation null and the bootstrap each with a fresh ``default_rng(rng)`` (so each equals
    its scipy counterpart); a Generator is used for the permutations, then the bootstrap.
    """
    b_total, level, a = int(n_resamples), float(confidence_level), float(alpha)
    check_memory(
        b_total,
        "n_resamples",
        _FN,
        nbytes=min(b_total, batch or b_total) * max(len(values), 1) * 16,
        formula="n_resamples (or batch) × n_tasks × 16 bytes",
    )
    if len(values) != len(good):
        raise ConfigError(
            f"The 'good' parameter of {_FN} must have one flag per task ({len(values)}). "
            f"Got {len(good)}."
        )
    g_vals: list[float] = []
    b_vals: list[float] = []
    n_excluded = 0
    for i, (v, is_good) in enumerate(zip(values, good)):
        if not isinstance(is_good, (bool, np.bool_)):
            raise ConfigError(
                f"The 'good[{i}]' parameter of {_FN} must be a bool. Got {is_good!r}."
            )
        if v is None:
            n_excluded += 1
            continue
        (g_vals if is_good else b_vals).append(check_real(v, f"values[{i}]", _FN))
    if len(g_vals) < 2 or len(b_vals) < 2:
        raise ConfigError(
            f"{_FN} needs at least 2 scored tasks in each group. Got {len(g_vals)} good and "
            f"{len(b_vals)} bad ({n_excluded} excluded for a None value)."
        )
    gv, bv = np.asarray(g_vals), np.asarray(b_vals)

    perm_rng = as_generator(rng, _FN)
    pvalue, exact = permutation_pvalue(gv, bv, n_resamples=b_total, rng=perm_rng)

    boot_rng = as_generator(rng, _FN) if not isinstance(rng, np.random.Generator) else perm_rng
    theta = []
    for size in batches(b_total, batch):
        ig = bootstrap_indices(boot_rng, gv.size, size)  # scipy: sample 1, then sample 2
        ib = bootstrap_indices(boot_rng, bv.size, size)
        theta.append(_mean_diff(gv[..., ig], bv[..., ib]))
    interval, _, _ = percentile_interval(np.concatenate(theta), level)
    assert interval is not None  # a mean difference is always defined
    diff = float(_mean_diff(gv, bv))
    return StratifiedTest(
        mean_good=float(np.mean(gv)),
        mean_bad=float(np.mean(bv)),
        diff=diff,
        confidence_interval=ConfidenceInterval(*interval),
        pvalue=pvalue,
        significant=bool(diff > 0 and pvalue < a),
        n_good=int(gv.size),
        n_bad=int(bv.size),
        n_excluded=n_excluded,
        n_resamples=b_total,
        exact=exact,
        alpha=a,
    )
