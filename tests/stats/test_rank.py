"""rank_agreement against scipy.stats.bootstrap / spearmanr / kendalltau as oracles."""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from rewardkit.errors import ConfigError
from rewardkit.stats import gold_quality, rank_agreement
from rewardkit.stats.rank import spearman_kendall_weighted


def _tied(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 16, n) / 16, rng.integers(0, 5, n) / 4


def _spearman(a, b):
    return stats.spearmanr(a, b).statistic


def _kendall(a, b):
    return stats.kendalltau(a, b).statistic


def _scipy(x, y, stat, seed, B, batch=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant resamples warn in scipy
        return stats.bootstrap(
            (x, y),
            stat,
            paired=True,
            vectorized=False,
            method="percentile",
            n_resamples=B,
            batch=batch,
            rng=np.random.default_rng(seed),
        )


@pytest.mark.parametrize(
    "seed, n, B, batch",
    [
        pytest.param(0, 60, 2000, None, marks=pytest.mark.slow),  # the calibration's own size
        (5, 60, 300, None),
        (1, 31, 500, 7),
        (2, 17, 301, 64),
        (3, 8, 200, 1),
    ],
)
def test_intervals_equal_scipy_bootstrap(seed, n, B, batch):
    x, y = _tied(seed, n)
    ours = rank_agreement(x.tolist(), y.tolist(), n_resamples=B, batch=batch, rng=seed + 10)
    for est, stat in ((ours.spearman, _spearman), (ours.kendall_tau_b, _kendall)):
        ref = _scipy(x, y, stat, seed + 10, B, batch)
        dist = ref.bootstrap_distribution
        lo, hi = np.nanquantile(dist, [0.025, 0.975])
        assert est.confidence_interval is not None
        assert est.confidence_interval.low == pytest.approx(lo, abs=1e-12)
        assert est.confidence_interval.high == pytest.approx(hi, abs=1e-12)
        if not np.isnan(dist).any():  # scipy's own interval is defined: equal to it too
            ci = ref.confidence_interval
            assert est.confidence_interval.low == pytest.approx(ci.low, abs=1e-12)
            assert est.confidence_interval.high == pytest.approx(
                ref.confidence_interval.high, abs=1e-12
            )
            assert est.standard_error == pytest.approx(ref.standard_error, abs=1e-12)
    assert ours.spearman.value == pytest.approx(_spearman(x, y), abs=1e-12)
    assert ours.kendall_tau_b.value == pytest.approx(_kendall(x, y), abs=1e-12)


def test_every_resample_equals_scipy_including_nan_pattern():
    # Gold with 2 positives of 40: many resamples have constant gold.
    rng = np.random.default_rng(5)
    x = rng.integers(0, 8, 40) / 8
    y = np.zeros(40)
    y[[3, 17]] = 1.0
    idx = np.random.default_rng(9).integers(0, 40, (1000, 40))
    w = np.stack([np.bincount(r, minlength=40) for r in idx]).astype(float)
    rho, tau = spearman_kendall_weighted(x, y, w)
    ref_rho = _scipy(x, y, _spearman, 9, 1000).bootstrap_distribution
    ref_tau = _scipy(x, y, _kendall, 9, 1000).bootstrap_distribution
    np.testing.assert_array_equal(np.isnan(rho), np.isnan(ref_rho))
    np.testing.assert_array_equal(np.isnan(tau), np.isnan(ref_tau))
    np.testing.assert_allclose(rho, ref_rho, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(tau, ref_tau, atol=1e-12, equal_nan=True)

    ra = rank_agreement(x.tolist(), y.tolist(), n_resamples=1000, rng=9)
    assert ra.n_degenerate == int(np.isnan(ref_rho).sum()) > 0
    assert ra.frac_degenerate == ra.n_degenerate / 1000
    assert ra.spearman.confidence_interval is not None  # never a NaN interval
    lo, hi = np.nanquantile(ref_rho, [0.025, 0.975])
    assert ra.spearman.confidence_interval.low == pytest.approx(lo, abs=1e-12)
    assert ra.spearman.confidence_interval.high == pytest.approx(hi, abs=1e-12)


def test_generator_rng_is_used_and_advanced():
    x, y = _tied(4, 30)
    g = np.random.default_rng(77)
    a = rank_agreement(x.tolist(), y.tolist(), n_resamples=300, rng=g)
    b = rank_agreement(x.tolist(), y.tolist(), n_resamples=300, rng=g)
    c = rank_agreement(x.tolist(), y.tolist(), n_resamples=300, rng=77)
    assert a == c and a != b
    assert a.to_json() == c.to_json()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=12
    ),
    st.integers(0, 2**31),
)
def test_weighted_statistics_equal_scipy_on_the_expanded_sample(rows, seed):
    x = np.array([r[0] for r in rows], float)
    y = np.array([r[1] for r in rows], float)
    n = x.size
    w = np.random.default_rng(seed).multinomial(n, np.ones(n) / n, size=3).astype(float)
    rho, tau = spearman_kendall_weighted(x, y, w)
    for k in range(3):
        xs, ys = np.repeat(x, w[k].astype(int)), np.repeat(y, w[k].astype(int))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r_ref, t_ref = _spearman(xs, ys), _kendall(xs, ys)
        np.testing.assert_allclose([rho[k], tau[k]], [r_ref, t_ref], atol=1e-12, equal_nan=True)


def test_gold_quality_rules():
    # correct, error: edge annotations are not an argument (neutral); all-edge → (0, 0) → None
    assert gold_quality([3, 0, 0, 2], [1, 2, 0, 0]) == (0.75, 0.0, None, 1.0)
    with pytest.raises(ConfigError, match=r"'n_error\[1\]' parameter of gold_quality"):
        gold_quality([1, 1], [0, -1])
    with pytest.raises(ConfigError, match="one count per task"):
        gold_quality([1, 1], [0])


def test_excluded_tasks_are_counted_and_left_out():
    x, y = _tied(6, 30)
    reward = [*x.tolist(), None, None, 0.5]
    gold = [*y.tolist(), 0.3, None, None]
    ra = rank_agreement(reward, gold, n_resamples=200, rng=1)
    ref = rank_agreement(x.tolist(), y.tolist(), n_resamples=200, rng=1)
    assert (ra.n, ra.n_excluded_reward, ra.n_excluded_gold) == (30, 2, 1)
    assert ra.spearman == ref.spearman and ra.kendall_tau_b == ref.kendall_tau_b


def test_constant_observed_vector_gives_none_point_not_nan():
    ra = rank_agreement([0.5] * 10, list(range(10)), n_resamples=50, rng=0)
    assert ra.spearman.value is None and ra.spearman.confidence_interval is None
    assert ra.n_degenerate == 50 and ra.frac_degenerate == 1.0
    assert '"value":null' in ra.to_json()


def test_memory_stays_small_without_b_n_n_arrays():
    x, y = _tied(7, 60)
    rank_agreement(x.tolist(), y.tolist(), n_resamples=10, rng=0)
    tracemalloc.start()
    rank_agreement(x.tolist(), y.tolist(), n_resamples=2000, rng=0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # one (2000, 60, 60) float64 array alone would be 55 MiB
    assert peak < 16 * 2**20


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_resamples": 0}, r"'n_resamples' parameter of rank_agreement must be an int in \[1, "),
        ({"confidence_level": 1.0}, r"'confidence_level' parameter of rank_agreement"),
        ({"rng": -1}, r"'rng' parameter of rank_agreement"),
        ({"batch": 0}, r"'batch' parameter of rank_agreement"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        rank_agreement([0.1, 0.2, 0.3], [1.0, 0.0, 0.5], **kwargs)


def test_bad_data():
    with pytest.raises(ConfigError, match=r"'reward\[1\]' parameter of rank_agreement must be"):
        rank_agreement([0.1, float("nan")], [0.0, 1.0])
    with pytest.raises(ConfigError, match="one value per task"):
        rank_agreement([0.1, 0.2], [0.0])
    with pytest.raises(ConfigError, match=r"at least 2 tasks .* Got 1 \(1 without reward, 1 with"):
        rank_agreement([0.1, None, 0.3], [0.0, 1.0, None])
