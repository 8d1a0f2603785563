"""seed_stability: identical points across seeds, bounds within the tolerance."""

from __future__ import annotations

import numpy as np
import pytest

from rewardkit.errors import ConfigError
from rewardkit.stats import DEFAULT_SEEDS, rank_agreement, seed_stability


def _data():
    rng = np.random.default_rng(11)
    g = rng.integers(0, 5, 60) / 4
    r = np.round(np.clip(g * 0.6 + rng.normal(0, 0.2, 60), 0, 0.85) * 16) / 16
    return r.tolist(), g.tolist()


def test_five_seeds_identical_points_bounds_within_tolerance():
    r, g = _data()
    s = seed_stability(r, g, n_resamples=500)
    assert s.seeds == DEFAULT_SEEDS == (42, 1, 7, 123, 2026)
    assert s.points_identical and s.stable
    assert [x.spearman.confidence_interval for x in s.results] == [
        rank_agreement(r, g, n_resamples=500, rng=seed).spearman.confidence_interval
        for seed in DEFAULT_SEEDS
    ]
    lows = [x.kendall_tau_b.confidence_interval.low for x in s.results]
    assert s.max_bound_spread >= max(lows) - min(lows) > 0
    assert s.max_bound_spread <= 0.05


def test_tight_tolerance_is_unstable():
    r, g = _data()
    s = seed_stability(r, g, n_resamples=200, tolerance=1e-6)
    assert s.points_identical and not s.stable


def test_differing_points_are_unstable():
    r, g = _data()
    a = rank_agreement(r, g, n_resamples=100, rng=1)
    b = rank_agreement([*r[:-1], 0.0], g, n_resamples=100, rng=2)
    s = seed_stability(r, g, seeds=(1, 2), results=(a, b), tolerance=1.0)
    assert not s.points_identical and not s.stable


def test_bad_seeds():
    with pytest.raises(ConfigError, match="'seeds' parameter of seed_stability"):
        seed_stability([0.1, 0.2], [0.0, 1.0], seeds=(1, -2))
