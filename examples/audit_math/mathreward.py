"""An exact-match math reward, written as a user would: the reward audited in docs/audit.md.

``make()`` returns a RewardStack: a hard gate against hedging (more than one boxed answer), the
exact match of the final answer against the item's ``answer`` field, and a small format bonus.
"""

from __future__ import annotations

import re
from typing import Any

from rewardkit import Component, Gate, GateOutcome, RewardStack

BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def final_answer(text: str) -> str | None:
    """The last boxed answer, else the last number in the text."""
    boxed = BOXED.findall(text)
    if boxed:
        return boxed[-1].strip()
    numbers = NUMBER.findall(text)
    return numbers[-1] if numbers else None


def one_answer(item: dict[str, Any]) -> GateOutcome:
    n = len(BOXED.findall(item["completion"]))
    return GateOutcome(n <= 1, (f"{n} boxed answers",) if n > 1 else ())


def exact(item: dict[str, Any]) -> float | None:
    if not item.get("answer"):
        return None  # no reference answer: cannot score
    return float(final_answer(item["completion"]) == item["answer"])


def boxed_format(item: dict[str, Any]) -> float:
    return float(len(BOXED.findall(item["completion"])) == 1)


def make() -> RewardStack:
    return RewardStack(
        gates=[Gate("one_answer", one_answer)],
        components=[
            Component("exact", exact),
            Component("format", boxed_format, weight=0.1),
        ],
        fail_value=-0.5,
        version="math-exact-v1",
    )


def corrupt(item: dict[str, Any]) -> dict[str, Any]:
    """A perturbation for ``--perturb``: the completion's final answer made wrong (+1)."""
    bad = dict(item)
    got = final_answer(item["completion"])
    if got is None:
        bad["completion"] = item["completion"] + " \\boxed{-1}"
        return bad
    wrong = str(int(float(got)) + 1)
    head, sep, tail = item["completion"].rpartition(got)
    bad["completion"] = head + wrong + tail if sep else item["completion"]
    return bad
