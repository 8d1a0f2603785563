"""IG estimators against independent oracles: scikit-learn's mutual_info_score and expected
mutual information, scipy's entropy, brute-force permutations and hand-computed tables."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import entropy as scipy_entropy
from sklearn.metrics import mutual_info_score
from sklearn.metrics.cluster import contingency_matrix
from sklearn.metrics.cluster._expected_mutual_info_fast import expected_mutual_information

from rewardkit.errors import ConfigError
from rewardkit.selfplay.infogain import (
    CORRECTIONS,
    entropy,
    ig_rewards,
    miller_madow_bias,
    null_mi,
    permutation_null,
    plugin_mi,
)


def _batch(seed: int, T: int = 40, m: int = 16, K: int = 24, levels: int = 9):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, levels, (T, m))
    E = rng.random((T, m, K)) < rng.uniform(0.1, 0.9, (T, 1, K))
    E[:, :, 0] = True  # a constant column in every task
    return E, y


def test_plugin_mi_equals_sklearn_per_column():
    E, y = _batch(0, T=16)
    mi = plugin_mi(E, y / 8)  # fractions of 8 GT tests
    ref = np.array(
        [[mutual_info_score(E[t, :, j], y[t]) for j in range(E.shape[2])] for t in range(len(E))]
    )
    np.testing.assert_allclose(mi, ref, rtol=0, atol=1e-12)


def test_null_mi_equals_sklearn_expected_mutual_information():
    E, y = _batch(1)
    got = null_mi(E, y)
    ref = np.array(
        [
            [
                expected_mutual_information(contingency_matrix(E[t, :, j], y[t]), y.shape[1])
                for j in range(E.shape[2])
            ]
            for t in range(len(E))
        ]
    )
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


def test_null_mi_is_the_mean_of_many_permutations():
    E, y = _batch(2, T=4, K=8)
    pn = permutation_null(E, y, n_perm=20000, rng=3)
    z = (pn.mean - null_mi(E, y)) / np.where(pn.se > 0, pn.se, 1.0)
    assert np.abs(z).max() < 4.5  # 32 columns; the SE is the Monte Carlo one
    assert np.abs(z).mean() < 1.5


def test_permutation_null_matches_brute_force_with_the_same_shuffles():
    E, y = _batch(4, T=3, K=5)
    P = 50
    pn = permutation_null(E, y, n_perm=P, rng=7)
    perms = np.random.default_rng(7).permuted(np.broadcast_to(np.arange(16), (3, P, 16)), axis=-1)
    vals = np.stack(
        [plugin_mi(E, np.take_along_axis(y, perms[:, p], axis=1)) for p in range(P)], axis=-1
    )
    np.testing.assert_allclose(pn.mean, vals.mean(axis=-1), atol=1e-12)
    np.testing.assert_allclose(pn.sd, vals.std(axis=-1, ddof=1), atol=1e-12)
    obs = plugin_mi(E, y)
    k = (vals >= obs[..., None] - 1e-12).sum(axis=-1)
    np.testing.assert_array_equal(pn.pvalue, (k + 1) / (P + 1))


def test_miller_madow_general_form_on_hand_tables():
    # column [1,1,0,0] vs y [1,1,.5,0]: cells (pass,1)=2 (fail,.5)=1 (fail,0)=1 → S=3, R=2, C=3
    # column [1,0,1,0]: (pass,1) (fail,1) (pass,.5) (fail,0) → S=4; constant column: S=C=3, R=1
    E = np.array([[1, 1, 1], [1, 0, 1], [0, 1, 1], [0, 0, 1]])
    y = [1.0, 1.0, 0.5, 0.0]
    np.testing.assert_allclose(
        miller_madow_bias(E, y), [(3 - 2 - 3 + 1) / 8, (4 - 2 - 3 + 1) / 8, 0.0]
    )
    # a full table S = R·C reduces to (R−1)(C−1)/(2N)
    E2 = np.array([[1], [0], [1], [0], [1], [0]])
    y2 = [0, 0, 1, 1, 2, 2]
    assert miller_madow_bias(E2, y2)[0] == pytest.approx((2 - 1) * (3 - 1) / 12)


def test_entropy_equals_scipy():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 6, (10, 16)) / 5
    ref = [scipy_entropy(np.unique(r, return_counts=True)[1]) for r in y]
    np.testing.assert_allclose(entropy(y), ref, atol=1e-12)
    assert entropy(np.ones(8)) == 0.0


@pytest.mark.parametrize("correction", CORRECTIONS)
def test_constant_columns_get_exactly_zero(correction):
    E, y = _batch(6, T=5, K=6)
    E[:, :, 1] = False
    r = ig_rewards(E, y, correction=correction, rng=0)
    assert (r.reward[:, :2] == 0.0).all()
    assert (r.mi[:, :2] == 0.0).all()


def test_covariance_gate_zeroes_anti_correlated_tests():
    y = np.array([1.0, 1.0, 0.5, 0.0])
    E = np.array([[0, 1], [0, 1], [1, 0], [1, 0]], bool)  # col 0 passes only the wrong programs
    r = ig_rewards(E, y)
    assert r.mi[0] > 0.6 and r.reward[0] == 0.0 and not r.gate_open[0]
    assert r.reward[1] == r.mi[1] > 0
    assert (ig_rewards(E, y, gate="none").reward == r.mi).all()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(CORRECTIONS))
def test_the_test_passing_exactly_the_correct_programs_ranks_first(seed, correction):
    """Half the programs correct (y = 1), the rest graded below; the pool holds the perfect
    test, valid tests that also pass some wrong programs, trivial and anti-correlated tests."""
    rng = np.random.default_rng(seed)
    m = 16
    y = np.concatenate([np.ones(8), rng.integers(0, 8, 8) / 8])
    perfect = y == 1.0
    pool = [perfect]
    for _ in range(12):
        extra = rng.random(m) < rng.uniform(0.1, 0.9)
        pool.append(perfect | extra)  # valid: passes every correct program
    pool += [np.ones(m, bool), ~perfect, rng.random(m) < 0.5]
    E = np.stack(pool, axis=1)
    r = ig_rewards(E, y, correction=correction, rng=seed)
    # the permutation correction is a Monte Carlo estimate: allow its noise, 4 SE each side
    tol = 8 * float(r.null.se.max()) if r.null is not None else 1e-12
    assert r.reward[0] >= r.reward.max() - tol


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(2, 20), st.integers(1, 12))
def test_mi_bounds_and_relabelling_invariance(seed, m, levels):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, levels, m)
    E = rng.random((m, 6)) < 0.5
    mi = plugin_mi(E, y)
    h_t = np.array([scipy_entropy(np.bincount(E[:, j], minlength=2)) for j in range(6)])
    assert (mi >= 0).all() and (mi <= np.minimum(h_t, entropy(y)) + 1e-12).all()
    relabel = rng.permutation(levels) * 3.5 - 7  # any injective recoding of y
    np.testing.assert_allclose(plugin_mi(E, relabel[y]), mi, atol=1e-12)


def test_single_task_and_batch_agree_and_outputs_are_deterministic():
    E, y = _batch(8, T=3)
    b = ig_rewards(E, y, correction="exact_null")
    for t in range(3):
        s = ig_rewards(E[t], y[t], correction="exact_null")
        # equal up to summation order (a batch pads every task to its largest level count)
        np.testing.assert_allclose(s.reward, b.reward[t], rtol=0, atol=1e-14)
        assert s.h_y == pytest.approx(b.h_y[t], abs=1e-14) and s.c_hat == b.c_hat[t]
    a1 = ig_rewards(E, y, correction="permutation", n_perm=30, rng=11).to_json()
    a2 = ig_rewards(E, y, correction="permutation", n_perm=30, rng=11).to_json()
    assert a1 == a2


def test_ig_matches_hand_value():
    E = np.array([[1], [1], [0], [0]])
    r = ig_rewards(E, [1.0, 1.0, 0.5, 0.0])
    assert r.reward[0] == pytest.approx(math.log(2), abs=1e-15)


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: plugin_mi(np.zeros(4), np.zeros(4)),
            r"'E' parameter of plugin_mi must be a 0/1 array of shape \(m, K\)",
        ),
        (
            lambda: plugin_mi(np.full((4, 2), 2), np.zeros(4)),
            r"'E' parameter of plugin_mi must hold only 0/1",
        ),
        (
            lambda: null_mi(np.zeros((4, 2)), np.zeros(3)),
            r"'y' parameter of null_mi must have shape \(4,\)",
        ),
        (
            lambda: plugin_mi(np.zeros((2, 2)), [0.0, float("nan")]),
            r"'y' parameter of plugin_mi must be finite",
        ),
        (
            lambda: ig_rewards(np.zeros((2, 2)), [0, 1], correction="mm"),
            r"'correction' parameter of ig_rewards must be one of 'none', 'miller_madow'",
        ),
        (
            lambda: ig_rewards(np.zeros((2, 2)), [0, 1], gate="cov"),
            r"'gate' parameter of ig_rewards must be one of",
        ),
        (
            lambda: ig_rewards(np.zeros((2, 2)), [0, 1], correction="permutation"),
            r"'rng' parameter of ig_rewards must be an int seed",
        ),
        (
            lambda: permutation_null(np.zeros((2, 2)), [0, 1], n_perm=1, rng=0),
            r"'n_perm' parameter of permutation_null must be an int in \[2, .*Got 1",
        ),
        (
            lambda: entropy(np.zeros((2, 2, 2))),
            r"'y' parameter of entropy must have shape \(m,\) or \(T, m\)",
        ),
    ],
)
def test_bad_inputs_name_the_parameter(call, match):
    with pytest.raises(ConfigError, match=match):
        call()
