"""Dual-pool IG and the coverage term."""

from __future__ import annotations

import numpy as np
import pytest

from rewardkit.errors import ConfigError
from rewardkit.selfplay.dualpool import dual_pool_rewards
from rewardkit.selfplay.infogain import CORRECTIONS, ig_rewards


def _tables(seed: int):
    rng = np.random.default_rng(seed)
    E = rng.random((5, 16, 12)) < 0.5
    y = rng.integers(0, 5, (5, 16)) / 4
    P = rng.random((5, 10, 12)) < 0.5
    yp = rng.integers(0, 5, (5, 10)) / 4
    return E, y, P, yp


@pytest.mark.parametrize("correction", CORRECTIONS)
def test_alpha_lambda_zero_is_plain_ig_bit_for_bit(correction):
    E, y, P, yp = _tables(0)
    r = dual_pool_rewards(E, y, P, yp, alpha=0.0, lam=0.0, correction=correction, rng=3)
    plain = ig_rewards(E, y, correction=correction, rng=3)
    assert np.array_equal(r.reward, plain.reward)


def test_alpha_one_is_the_probe_pool_and_lambda_adds_detection():
    E, y, P, yp = _tables(1)
    r1 = dual_pool_rewards(E, y, P, yp, alpha=1.0)
    assert np.array_equal(r1.reward, ig_rewards(P, yp).reward)
    r = dual_pool_rewards(E, y, P, yp, alpha=0.3, lam=0.7)
    np.testing.assert_allclose(r.reward, 0.3 * r.i_probe + 0.7 * r.i_active + 0.7 * r.d, atol=1e-15)
    buggy = yp < 1
    manual = (~P & buggy[:, :, None]).sum(axis=1) / buggy.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(r.d, manual)


def test_bad_parameters():
    E, y, P, yp = _tables(2)
    with pytest.raises(
        ConfigError,
        match=r"'alpha' parameter of dual_pool_rewards must be a float in \[0, 1\]. Got 1.5",
    ):
        dual_pool_rewards(E, y, P, yp, alpha=1.5)
    with pytest.raises(
        ConfigError, match="'E_p0' parameter of dual_pool_rewards must run P0 on the same tests"
    ):
        dual_pool_rewards(E, y, P[:, :, :3], yp)
