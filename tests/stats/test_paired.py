"""Paired t-intervals against scipy (the independent oracle)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.errors import ConfigError
from rewardkit.stats.paired import paired_difference, t_quantile_975

stats = pytest.importorskip("scipy.stats")


@pytest.mark.parametrize("df", [*range(1, 31)])
def test_t_quantile_matches_scipy(df: int) -> None:
    assert t_quantile_975(df) == pytest.approx(stats.t.ppf(0.975, df), abs=1e-9)


@pytest.mark.parametrize("df", [31, 32, 40, 49, 60, 100, 120, 1000, 10**6])
def test_t_quantile_beyond_the_table_matches_scipy(df: int) -> None:
    # Past the table the quantile is not the normal 1.96: t(0.975, 31) = 2.0395, and 1.96 made
    # every interval over 32..~60 seeds ~4 % too narrow (anti-conservative).
    assert t_quantile_975(df) == pytest.approx(stats.t.ppf(0.975, df), abs=1e-6)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False, allow_subnormal=False), min_size=32, max_size=80))
def test_interval_over_many_seeds_matches_scipy(d: list[float]) -> None:
    if np.std(d) < 1e-6:
        return
    pd = paired_difference("m", "X", "R", d, [0.0] * len(d))
    ci = stats.ttest_rel(d, [0.0] * len(d)).confidence_interval(0.95)
    assert pd.low == pytest.approx(ci.low, rel=1e-5, abs=1e-9)
    assert pd.high == pytest.approx(ci.high, rel=1e-5, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(-1, 1, allow_nan=False, allow_subnormal=False),
            st.floats(-1, 1, allow_nan=False, allow_subnormal=False),
        ),
        min_size=2,
        max_size=12,
    )
)
def test_interval_matches_scipy_ttest_rel(pairs: list[tuple[float, float]]) -> None:
    x = [a for a, _ in pairs]
    r = [b for _, b in pairs]
    pd = paired_difference("m", "X", "R", x, r)
    d = np.subtract(x, r)
    assert pd.mean == pytest.approx(d.mean(), abs=1e-12)
    if np.std(d) < 1e-9:
        return  # scipy's interval degenerates (nan) on constant differences
    ci = stats.ttest_rel(x, r).confidence_interval(0.95)
    assert pd.low == pytest.approx(ci.low, rel=1e-4, abs=1e-9)
    assert pd.high == pytest.approx(ci.high, rel=1e-4, abs=1e-9)
    assert pd.excludes_zero == (ci.low > 0 or ci.high < 0)


def test_hand_computed_three_seeds() -> None:
    # d = (0.1, 0.15, 0.2): mean 0.15, sd 0.05, half width t(0.975, 2) · 0.05 / √3 ≈ 0.124
    pd = paired_difference("mae", "brier", "improper", [0.3, 0.35, 0.4], [0.2, 0.2, 0.2])
    half = 4.3026527297 * 0.05 / math.sqrt(3)
    assert pd.mean == pytest.approx(0.15)
    assert (pd.low, pd.high) == (pytest.approx(0.15 - half), pytest.approx(0.15 + half))
    assert pd.excludes_zero
    # d = (0.1, 0.2, 0.3): mean 0.2 but sd 0.1, half width ≈ 0.248: no effect at 3 seeds
    assert not paired_difference("m", "X", "R", [0.3, 0.4, 0.5], [0.2, 0.2, 0.2]).excludes_zero


def test_one_seed_has_no_interval_and_no_effect() -> None:
    pd = paired_difference("m", "X", "R", [1.0], [0.0])
    assert (pd.low, pd.high, pd.excludes_zero) == (None, None, False)


def test_missing_value_is_reported_not_guessed() -> None:
    pd = paired_difference("m", "X", "R", [1.0, None, 0.5], [0.0, 0.1, 0.2])
    assert pd.mean is None and pd.per_seed[1] is None and not pd.excludes_zero


def test_unpaired_input_is_rejected() -> None:
    with pytest.raises(ConfigError, match=r"one value per seed in both arms\. Got 2 and 1"):
        paired_difference("m", "X", "R", [1.0, 2.0], [0.0])
