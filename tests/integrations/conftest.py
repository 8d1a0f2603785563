"""Shared fixtures: a stack with a gate, a None-able component, a crashing one and a metric.
(The tiny model, tokenizer and GRPO settings of the real TRL runs are in tests/conftest.py.)"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from rewardkit.stack import Component, Gate, GateOutcome, RewardStack


def make_stack() -> RewardStack:
    def no_rm(ep: dict[str, Any]) -> GateOutcome:
        return GateOutcome(
            "rm -rf" not in ep["text"], ("rm -rf",) if "rm -rf" in ep["text"] else ()
        )

    def exact(ep: dict[str, Any]) -> float | None:
        gold = ep["ground_truth"]
        return None if gold is None else float(ep["text"].strip() == str(gold))

    def fragile(ep: dict[str, Any]) -> float:
        if "CRASH" in ep["text"]:
            raise RuntimeError("verifier crashed")
        return 0.5

    return RewardStack(
        gates=[Gate("no_rm", no_rm)],
        components=[
            Component("exact", exact),
            Component("fragile", fragile, weight=0.5),
            Component("length", lambda ep: float(len(ep["text"])), weight=0.0),
        ],
        fail_value=-0.5,  # below the lowest safe total 0 (exact and fragile in [0, 1])
        version="it-v1",
    )


@pytest.fixture
def stack() -> RewardStack:
    return make_stack()


@pytest.fixture
def stack_source() -> str:
    """A self-contained module defining ``make_stack()``, as a user's reward file would."""
    header = (
        "from typing import Any\n"
        "from rewardkit.stack import Component, Gate, GateOutcome, RewardStack\n\n"
    )
    return header + inspect.getsource(make_stack)
