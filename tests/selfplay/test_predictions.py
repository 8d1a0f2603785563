"""The seed's Miller–Madow numbers, the bound against brute force, P1 and P4."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rewardkit.errors import ConfigError
from rewardkit.selfplay.infogain import miller_madow_bias
from rewardkit.selfplay.predictions import mm_bound, mm_peak, p1_check, p4_check


def test_seed_numbers_at_m16():
    assert mm_bound(8, 16) == 7 / 32  # the peak, ≈ 0.219 nats
    assert max(range(1, 17), key=lambda c: mm_bound(c, 16)) == 8
    for c in range(9, 17):
        assert mm_bound(c, 16) == (15 - c) / 32
    for c in range(1, 9):
        assert mm_bound(c, 16) == (c - 1) / 32
    assert mm_bound(16, 16) < 0  # turns negative at Ĉ = 16
    assert mm_peak(16, 16) == 7 / 32


@pytest.mark.parametrize("m", [8, 16, 32, 64])
def test_asymptotes(m):
    for G in range(1, 3 * m):
        expected = G / (2 * m) if m // 2 >= G + 1 else 0.25 - 1 / (2 * m)
        assert mm_peak(m, G) == pytest.approx(expected)


def test_bound_equals_the_largest_term_over_all_small_tables():
    """Enumerate every 0/1 column and every labelling with Ĉ levels at m = 6."""
    m = 6
    best: dict[int, float] = {}
    for labels in itertools.product(range(m), repeat=m):
        c = len(set(labels))
        if sorted(set(labels)) != list(range(c)) or c > 4:
            continue
        cols = np.array(list(itertools.product((0, 1), repeat=m))).T  # (m, 64)
        cols = cols[:, (cols.sum(0) > 0) & (cols.sum(0) < m)]  # R = 2
        val = float(miller_madow_bias(cols, np.array(labels)).max())
        best[c] = max(best.get(c, -1.0), val)
    for c, v in best.items():
        assert v == pytest.approx(mm_bound(c, m)), c


def test_p1_reproduces_the_finding_at_m16():
    r = p1_check(m=16, n_per_bucket=200, rng=0)
    assert [b.c_hat for b in r.buckets] == list(range(2, 17))
    assert r.peak_theory == 7 / 32 and r.peak_c_hat == 8
    dense = [b for b in r.buckets if b.c_hat <= 8]
    assert all(b.holds and 0.5 <= b.ratio <= 2 for b in dense)
    # plug-in bias exceeds Miller–Madow on sparse tables: P1 fails there
    assert not r.holds and set(r.failing_buckets) >= {12, 13, 14, 15, 16}
    for b in r.buckets:  # the exact null agrees with the simulated null mean
        assert abs(b.measured_null_mi - b.exact_null_mi) < 5 * b.se + 1e-12
        assert b.mm_term <= b.theory + 1e-12  # the theory is an upper bound of the term
    assert r.to_json() == p1_check(m=16, n_per_bucket=200, rng=0).to_json()


def test_p1_rejects_a_tiny_m():
    with pytest.raises(
        ConfigError, match=r"The 'm' parameter of p1_check must be an int in \[4, 1024\]\. Got 2\."
    ):
        p1_check(m=2)


def test_p4():
    h = np.linspace(0, 2, 50)
    assert p4_check(h, 0.3 * h + 0.01 * np.sin(h)).holds
    assert not p4_check(h, -h).holds
    degenerate = p4_check(np.ones(5), np.arange(5))
    assert degenerate.pearson is None and not degenerate.holds
