"""The stand-in for an unscorable sample, by rank (verl ``none_score``, OpenRLHF
``none_reward``): neither trainer can skip a sample, so what it receives for a ``None`` total
is ranked with the real totals of its group. Above the lowest safe total it out-ranks honest
episodes, and a policy that makes the verifier fail (output a component cannot parse, so it
raises) gains advantage over one that answers honestly and scores low. Generated stacks with
negative and positive lows: the adapters warn exactly when the stand-in lies above
``bounds().low``, and a stand-in at ``bounds().low`` never out-ranks a scorable safe episode.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.integrations._common import NoneRankWarning
from rewardkit.integrations.openrlhf import reward_func
from rewardkit.integrations.verl import make_compute_score
from rewardkit.stack import Component, RewardStack


def _stack(lo: float, hi: float) -> RewardStack:
    def value(ep: dict[str, Any]) -> float:
        if "CRASH" in ep["text"]:
            raise ValueError("cannot parse")
        return float(ep["text"].strip() or lo)

    return RewardStack(components=[Component("v", value, range=(lo, hi))], version="r-v1")


@settings(max_examples=60, deadline=None)
@given(
    lo=st.integers(-5, 3),
    width=st.integers(1, 4),
    fill=st.integers(-8, 6),
)
def test_warned_exactly_when_the_stand_in_outranks_a_safe_episode(lo, width, fill):
    stack = _stack(float(lo), float(lo + width))
    for make, param in ((make_compute_score, "none_score"), (reward_func, "none_reward")):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            make(stack, **{param: float(fill)})
        warned = [w for w in seen if issubclass(w.category, NoneRankWarning)]
        assert bool(warned) == (fill > lo), (lo, fill, param)


def test_the_crash_out_ranks_an_honest_low_answer_with_the_default_and_not_at_the_low():
    stack = _stack(-1.0, 1.0)
    with pytest.warns(NoneRankWarning, match=r"none_score=-1\.0"):
        default = make_compute_score(stack)
    crash, honest = default("d", "CRASH", None)["score"], default("d", "-0.5", None)["score"]
    assert crash > honest  # what the warning is about: the crash gains rank
    safe = make_compute_score(stack, none_score=stack.bounds().low)
    assert safe("d", "CRASH", None)["score"] <= safe("d", "-0.5", None)["score"]
