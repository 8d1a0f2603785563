"""ECE, Brier and the reliability diagram against scikit-learn (the oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.errors import ConfigError
from rewardkit.stats.probability import reliability

sklearn_calibration = pytest.importorskip("sklearn.calibration")
sklearn_metrics = pytest.importorskip("sklearn.metrics")


def _oracle_ece(y: np.ndarray, p: np.ndarray, n_bins: int) -> float:
    prob_true, prob_pred = sklearn_calibration.calibration_curve(
        y, p, n_bins=n_bins, strategy="uniform"
    )
    # calibration_curve drops empty bins; its counts come from the same binning
    bins = np.linspace(0.0, 1.0, n_bins + 1)
    ids = np.searchsorted(bins[1:-1], p)
    counts = np.bincount(ids, minlength=n_bins)
    counts = counts[counts > 0]
    return float(np.sum(counts * np.abs(prob_true - prob_pred)) / y.size)


@settings(max_examples=60, deadline=None)
@given(
    data=st.lists(
        st.tuples(
            st.one_of(st.floats(0, 1), st.sampled_from([0.0, 0.1, 0.2, 0.5, 0.9, 1.0])),
            st.booleans(),
        ),
        min_size=2,
        max_size=60,
    ),
    n_bins=st.integers(1, 15),
)
def test_ece_and_brier_equal_sklearn(data, n_bins):
    p = np.array([d[0] for d in data])
    y = np.array([float(d[1]) for d in data])
    if len(set(y)) < 2:  # sklearn's calibration_curve needs both classes
        y[0] = 1.0 - y[0]
    rel = reliability(p, y, n_bins=n_bins)
    assert rel.ece == pytest.approx(_oracle_ece(y, p, n_bins), abs=1e-12)
    assert rel.brier == pytest.approx(sklearn_metrics.brier_score_loss(y, p), abs=1e-12)
    assert sum(b.count for b in rel.bins) == len(data)


def test_hand_computed_reliability():
    # bins of 0.5: [0, 0.5] holds 0.2, 0.5 (edge goes left, as in sklearn); (0.5, 1] holds 0.9, 1.0
    rel = reliability([0.2, 0.5, 0.9, 1.0], [0, 1, 1, 1], n_bins=2)
    assert [b.count for b in rel.bins] == [2, 2]
    assert rel.bins[0].mean_predicted == pytest.approx(0.35) and rel.bins[0].frac_positive == 0.5
    assert rel.ece == pytest.approx((2 * 0.15 + 2 * 0.05) / 4)
    assert rel.max_calibration_error == pytest.approx(0.15)


def test_perfectly_calibrated_is_zero_and_bad_input_refused():
    assert reliability([0.0, 1.0, 1.0], [0, 1, 1]).ece == 0.0
    with pytest.raises(ConfigError, match="must lie in \\[0, 1\\]"):
        reliability([1.2, 0.3], [1, 0])
    with pytest.raises(ConfigError, match="only 0 and 1"):
        reliability([0.2, 0.3], [2, 0])
