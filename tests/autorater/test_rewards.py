"""Brier and clipped-log proper rewards (seed 001 Sec. 3 Eq. 1–2) against hand values, scipy and
scikit-learn, with invalid entries isolated before any arithmetic."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import entropy
from sklearn.metrics import brier_score_loss, log_loss

from rewardkit.autorater import brier_reward, log_reward, proper_rewards
from rewardkit.errors import ConfigError

LOG_EPS = -6.907755278982137  # log(0.001), the paper's penalty for a parse failure


# --- known values --------------------------------------------------------------------------------


def test_brier_known_values():
    assert brier_reward(0.73, 1) == pytest.approx(1 - 0.27**2, abs=1e-15)  # 0.9271
    assert brier_reward(0.73, 0) == pytest.approx(0.4671, abs=1e-15)
    assert brier_reward(1.0, 1) == 1.0
    assert brier_reward(0.0, 1) == 0.0
    assert brier_reward(0.3, 0.6) == pytest.approx(0.91, abs=1e-15)  # soft label


def test_log_known_values_and_clipping():
    assert log_reward(0.7, 1) == pytest.approx(math.log(0.7), abs=1e-15)
    assert log_reward(0.7, 0) == pytest.approx(math.log(0.3), abs=1e-15)
    assert log_reward(0.5, 0.25) == pytest.approx(math.log(0.5), abs=1e-15)
    assert log_reward(0.0, 1) == pytest.approx(LOG_EPS, abs=1e-15)  # clipped to eps
    assert log_reward(1.0, 0) == pytest.approx(LOG_EPS, abs=1e-15)  # clipped to 1 − eps
    assert log_reward(1.0, 1) == pytest.approx(math.log(0.999), abs=1e-15)
    assert log_reward(0.0005, 1) == log_reward(0.001, 1)
    assert log_reward(0.2, 1, eps=0.25) == pytest.approx(math.log(0.25), abs=1e-15)
    # soft label: 0.6·log 0.8 + 0.4·log 0.2
    assert log_reward(0.8, 0.6) == pytest.approx(0.6 * math.log(0.8) + 0.4 * math.log(0.2))


@pytest.mark.parametrize("bad", [None, math.nan, math.inf, -math.inf, 1.5, -0.1])
def test_invalid_gets_the_penalty(bad):
    assert brier_reward(bad, 1) == 0.0
    assert brier_reward(bad, 0) == 0.0
    assert log_reward(bad, 1) == LOG_EPS
    assert log_reward(bad, 0.5) == LOG_EPS
    assert log_reward(bad, 1, eps=0.01) == math.log(0.01)


def test_log_eps_is_exactly_the_papers_constant():
    assert log_reward(None, 1) == math.log(0.001)
    assert f"{log_reward(None, 1):.6f}" == "-6.907755"


def test_scalars_give_floats_and_arrays_give_arrays():
    assert type(brier_reward(0.5, 1)) is float
    out = brier_reward([0.5, None, 0.9], [1, 1, 0])
    assert isinstance(out, np.ndarray) and out.shape == (3,)
    np.testing.assert_allclose(out, [0.75, 0.0, 0.19])
    np.testing.assert_allclose(log_reward(np.array([0.5, np.nan]), 1), [math.log(0.5), LOG_EPS])
    np.testing.assert_allclose(brier_reward([0.2, 0.4], 1), [0.36, 0.64])  # broadcast label


# --- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize("y", [1.5, -0.1, math.nan, [0.5, 2.0], "x", None])
def test_bad_labels_raise(y):
    with pytest.raises(ConfigError, match=r"The 'y' parameter of brier_reward must be"):
        brier_reward([0.5, 0.5], y)


def test_bad_label_message_names_the_index():
    with pytest.raises(ConfigError, match=r"labels in \[0, 1\].*Got 2\.0 at index 1"):
        log_reward([0.5, 0.5], [0.0, 2.0])


@pytest.mark.parametrize("p", ["0.5", ["0.5"], [True], [object()]])
def test_non_numbers_for_p_raise(p):
    with pytest.raises(ConfigError, match="The 'p' parameter of brier_reward must"):
        brier_reward(p, 1)


def test_shape_mismatch_raises():
    with pytest.raises(ConfigError, match="must have the same length"):
        brier_reward([0.1, 0.2, 0.3], [1, 0])


@pytest.mark.parametrize("eps", [0, 0.5, -1, math.nan, "x"])
def test_bad_eps_raises(eps):
    with pytest.raises(ConfigError, match=r"The 'eps' parameter of log_reward must be a float in"):
        log_reward(0.5, 1, eps=eps)


def test_proper_rewards_input_errors():
    with pytest.raises(ConfigError, match="The 'rule' parameter of proper_rewards must be one"):
        proper_rewards(["x"], [1], rule="spherical")
    with pytest.raises(ConfigError, match="The 'texts' parameter of proper_rewards must be a seq"):
        proper_rewards("<probability>0.5</probability>", [1])
    with pytest.raises(ConfigError, match=r"one label per text \(2\)\. Got shape \(3,\)"):
        proper_rewards(["a", "b"], [1, 0, 1])
    with pytest.raises(ConfigError, match="The 'labels' parameter of proper_rewards"):
        proper_rewards(["a"], [7])


# --- isolation -----------------------------------------------------------------------------------

GARBAGE = [
    None,
    math.nan,
    math.inf,
    "",
    "<probability>nan</probability>",
    "<probability>1e308</probability>",
    "<probability>-1</probability>",
    "<probability>0.1</probability><probability>0.2</probability>",
    12345,
    b"<probability>0.5</probability>",
    ["nested", "list"],
]


@pytest.mark.parametrize("rule", ["brier", "log"])
def test_garbage_leaves_valid_rewards_unchanged_under_errstate_raise(rule):
    rng = np.random.default_rng(7)
    p = rng.uniform(0, 1, size=30)
    y = np.concatenate([rng.integers(0, 2, size=15), rng.uniform(size=15)])
    clean = [f"why… <probability>{x:.4f}</probability>" for x in p]
    mixed, y_mixed, where = [], [], []
    for i, (t, yi) in enumerate(zip(clean, y)):
        mixed.append(GARBAGE[i % len(GARBAGE)])
        y_mixed.append(1.0)
        where.append(len(mixed))
        mixed.append(t)
        y_mixed.append(yi)
    with np.errstate(all="raise"):
        a = proper_rewards(clean, y, rule=rule)
        b = proper_rewards(mixed, y_mixed, rule=rule)
    assert np.isfinite(b).all()
    np.testing.assert_array_equal(b[where], a)  # bit-identical, not just close
    invalid = np.setdiff1d(np.arange(len(mixed)), where)
    assert (b[invalid] == (0.0 if rule == "brier" else LOG_EPS)).all()


def test_numeric_rewards_isolate_nan_and_inf_under_errstate_raise():
    p = np.array([np.nan, 0.3, np.inf, -np.inf, 1e308, 0.0, 1.0])
    with np.errstate(all="raise"):
        b = brier_reward(p, 1)
        lg = log_reward(p, 1)
    np.testing.assert_allclose(b, [0, 0.51, 0, 0, 0, 0, 1])
    np.testing.assert_allclose(
        lg, [LOG_EPS, math.log(0.3), LOG_EPS, LOG_EPS, LOG_EPS, LOG_EPS, math.log(0.999)]
    )


# --- oracles and properties ----------------------------------------------------------------------


def test_brier_matches_sklearn():
    rng = np.random.default_rng(1)
    p = rng.uniform(size=500)
    y = rng.integers(0, 2, size=500)
    assert np.mean(brier_reward(p, y)) == pytest.approx(1 - brier_score_loss(y, p), abs=1e-12)


def test_log_matches_sklearn_on_clipped_probabilities():
    rng = np.random.default_rng(2)
    p = rng.uniform(size=500)
    y = rng.integers(0, 2, size=500)
    clipped = np.clip(p, 1e-3, 1 - 1e-3)
    assert -np.mean(log_reward(p, y)) == pytest.approx(log_loss(y, clipped), abs=1e-12)


UNIT = st.floats(0, 1, allow_nan=False)
INNER = st.floats(0.001, 0.999, allow_nan=False)


@given(UNIT, UNIT)
def test_reward_ranges(p, y):
    assert 0.0 <= brier_reward(p, y) <= 1.0
    assert LOG_EPS <= log_reward(p, y) <= math.log(0.999) + 1e-15


@given(UNIT, UNIT)
def test_brier_strictly_proper(q, p):
    # E_q[R(p)] = q·R(p, 1) + (1 − q)·R(p, 0); for Brier E(q) − E(p) = (p − q)².
    e = lambda x: q * brier_reward(x, 1) + (1 - q) * brier_reward(x, 0)  # noqa: E731
    assert e(q) - e(p) == pytest.approx((p - q) ** 2, abs=1e-12)
    if abs(p - q) > 1e-6:
        assert e(q) > e(p)


@given(INNER, INNER)
def test_log_strictly_proper_gap_is_the_kl_divergence(q, p):
    e = lambda x: q * log_reward(x, 1) + (1 - q) * log_reward(x, 0)  # noqa: E731
    kl = entropy([q, 1 - q], [p, 1 - p])  # scipy oracle, nats
    assert e(q) - e(p) == pytest.approx(kl, abs=1e-9)
    if abs(p - q) > 1e-4:
        assert e(q) > e(p)


@pytest.mark.parametrize("rule", ["brier", "log"])
def test_propriety_on_a_grid(rule):
    grid = np.linspace(0, 1, 1001)
    reward = brier_reward if rule == "brier" else log_reward
    for q in np.linspace(0.01, 0.99, 99):
        expected = q * reward(grid, 1) + (1 - q) * reward(grid, 0)
        assert abs(grid[np.argmax(expected)] - q) <= 1e-3 + 1e-12


@given(st.lists(st.one_of(st.none(), st.floats(), UNIT), min_size=1, max_size=20))
def test_any_float_batch_is_finite_under_errstate_raise(ps):
    with np.errstate(all="raise"):
        assert np.isfinite(brier_reward(ps, 0.5)).all()
        assert np.isfinite(log_reward(ps, 0.5)).all()


@given(st.lists(st.one_of(st.none(), st.text(max_size=40)), min_size=1, max_size=10))
def test_any_text_batch_is_finite(texts):
    with np.errstate(all="raise"):
        for rule in ("brier", "log"):
            assert np.isfinite(proper_rewards(texts, [1.0] * len(texts), rule=rule)).all()
