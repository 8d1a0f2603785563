"""The ordering guarantee at the edges of float: weights far apart under ``renormalize`` and
weight × range products that overflow.

Before the fix, a renormalised stack whose present weights were tiny next to the absent ones
(1e-200 present, 1e200 absent: a mass ratio of 1e400) scored a safe episode ``-inf`` (or
``+inf``), below its own fail value — a safe episode ranked under every hard failure — and a
weight × range beyond float made ``RewardStack`` raise a bare ValueError from ``math.fsum``.
"""

from __future__ import annotations

import itertools
import math

import pytest

from rewardkit import Component, Gate, RewardStack
from rewardkit.errors import ConfigError

TINY = (1e-200, -1e-200, 5e-324, 1e-160)
HUGE = (1e200, -1e200, 1e160)
RANGES = ((-1e6, 1.0), (0.5, 1e6), (-1.0, 1.0), (0.0, 1e15), (-1e15, 0.1))


def _stack(w_small, w_big, r_small, r_big):
    return RewardStack(
        gates=[Gate("safe", lambda ep: ep["safe"])],
        components=[
            Component("small", lambda ep: ep["small"], weight=w_small, range=r_small),
            Component("big", lambda ep: ep["big"], weight=w_big, range=r_big),
        ],
        renormalize=True,
    )


def _cases():
    for w_small, w_big in itertools.product(TINY, HUGE):
        for r_small, r_big in itertools.product(RANGES, RANGES):
            if any(not math.isfinite(w_big * x) for x in r_big):
                continue
            yield w_small, w_big, r_small, r_big


def test_far_apart_weights_keep_every_safe_total_finite_and_above_the_fail_value():
    n = 0
    for w_small, w_big, r_small, r_big in _cases():
        stack = _stack(w_small, w_big, r_small, r_big)
        b = stack.bounds()
        for v in (*r_small, 0.5 * (r_small[0] + r_small[1])):
            if not r_small[0] <= v <= r_small[1]:
                continue
            # only the tiny-weight component present: the renormalisation scales by ~1e400
            safe = stack.score({"safe": True, "small": v, "big": None})
            failed = stack.score({"safe": False, "small": v, "big": None})
            assert safe.total is not None and math.isfinite(safe.total), (w_small, w_big, v)
            assert failed.total < safe.total, (w_small, w_big, r_small, r_big, v)
            tol = 1e-6 * max(1.0, abs(b.low), abs(b.high))
            assert b.low - tol <= safe.total <= b.high + tol
            n += 1
    assert n > 300


@pytest.mark.parametrize(
    ("weight", "rng"),
    [(1e200, (-1e300, 1.0)), (1e200, (0.0, 1e300)), (-1e10, (0.0, 1e300)), (1e308, (0.0, 10.0))],
)
def test_weight_times_range_beyond_float_is_a_config_error(weight, rng):
    with pytest.raises(ConfigError, match="overflow"):
        RewardStack(components=[Component("c", lambda ep: 0.0, weight=weight, range=rng)])


@pytest.mark.parametrize("renormalize", [False, True])
def test_totals_of_extremes_beyond_float_are_a_config_error(renormalize):
    parts = [
        Component(n, lambda ep: 0.0, weight=1e200, range=(-1.5e108, 1.5e108), required=True)
        for n in ("a", "b")
    ]
    with pytest.raises(ConfigError, match="overflow"):
        RewardStack(components=parts, renormalize=renormalize)
