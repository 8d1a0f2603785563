"""stratified_test against scipy.stats.permutation_test / bootstrap as oracles."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from rewardkit.errors import ConfigError
from rewardkit.stats import stratified_test


def _diff(a, b, axis=-1):
    return np.mean(a, axis=axis) - np.mean(b, axis=axis)


@pytest.mark.parametrize(
    "n_good, n_bad, B, seed, shift",
    [
        (30, 30, 2000, 42, 0.1),
        (40, 20, 2000, 1, 0.0),
        (8, 8, 999, 7, 0.05),
        (5, 5, 2000, 3, 0.2),
        (3, 9, 100, 0, 0.0),
    ],
)
def test_equals_scipy(n_good, n_bad, B, seed, shift):
    rng = np.random.default_rng(seed + 100)
    g = np.round(rng.uniform(0, 0.85, n_good) * 16) / 16 + shift  # ties on a 1/16 grid
    b = np.round(rng.uniform(0, 0.85, n_bad) * 16) / 16
    values = [*g.tolist(), *b.tolist()]
    good = [True] * n_good + [False] * n_bad
    ours = stratified_test(values, good, n_resamples=B, rng=seed)
    perm = stats.permutation_test(
        (g, b),
        _diff,
        permutation_type="independent",
        alternative="two-sided",
        n_resamples=B,
        rng=np.random.default_rng(seed),
    )
    boot = stats.bootstrap(
        (g, b), _diff, method="percentile", n_resamples=B, rng=np.random.default_rng(seed)
    )
    assert ours.pvalue == pytest.approx(perm.pvalue, abs=1e-12)
    assert ours.diff == pytest.approx(perm.statistic, abs=1e-12)
    assert ours.confidence_interval.low == pytest.approx(boot.confidence_interval.low, abs=1e-12)
    assert ours.confidence_interval.high == pytest.approx(boot.confidence_interval.high, abs=1e-12)
    assert ours.exact == (math.comb(n_good + n_bad, n_good) <= B)
    assert ours.significant == (ours.diff > 0 and ours.pvalue < 0.05)


def test_batch_matches_scipy_batch():
    rng = np.random.default_rng(0)
    g, b = rng.uniform(size=13), rng.uniform(size=11)
    ours = stratified_test([*g, *b], [True] * 13 + [False] * 11, n_resamples=501, batch=10, rng=4)
    boot = stats.bootstrap(
        (g, b),
        _diff,
        method="percentile",
        n_resamples=501,
        batch=10,
        rng=np.random.default_rng(4),
    )
    assert ours.confidence_interval.low == pytest.approx(boot.confidence_interval.low, abs=1e-12)


def test_none_values_are_excluded_and_counted():
    vals = [0.8, 0.7, None, 0.9, 0.1, None, 0.2, 0.3]
    good = [True, True, True, True, False, False, False, False]
    st = stratified_test(vals, good, n_resamples=100, rng=0)
    assert (st.n_good, st.n_bad, st.n_excluded) == (3, 3, 2)
    assert st.mean_good == pytest.approx(0.8) and st.mean_bad == pytest.approx(0.2)


def test_significance_needs_a_positive_difference():
    vals = [0.1] * 10 + [0.8] * 10
    st = stratified_test(vals, [True] * 10 + [False] * 10, n_resamples=500, rng=0)
    assert st.diff < 0 and st.pvalue < 0.05 and not st.significant


def test_errors():
    with pytest.raises(ConfigError, match=r"at least 2 scored tasks in each group. Got 3 good"):
        stratified_test([0.1, 0.2, 0.3, 0.4], [True, True, True, False])
    with pytest.raises(ConfigError, match=r"'good\[0\]' parameter of stratified_test must"):
        stratified_test([0.1, 0.2], [1, 0])
    with pytest.raises(ConfigError, match=r"'alpha' parameter of stratified_test"):
        stratified_test([0.1, 0.2, 0.3, 0.4], [True, True, False, False], alpha=0)
