"""The main job: every capability on the embedded defaults, with its checks.

``run_demo()`` returns a :class:`DemoReport`: named sections, each with the JSON artefacts it
produced and the checks it ran (a check that fails makes ``rewardkit demo`` exit 1). The CLI
prints the summary and writes the artefacts plus ``manifest.json`` (their content hashes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ._json import JsonMixin
from .advantages import group_advantages, minimum_pass
from .levels import RECIPES, Step, score_trajectory
from .stack import Component, Gate, GateOutcome, RewardStack

__all__ = ["Check", "DemoReport", "Section", "example_stack", "run_demo"]


@dataclass(frozen=True)
class Check(JsonMixin):
    """One verified claim: what was expected, what was measured, and whether they agree."""

    name: str
    expected: str
    measured: str
    passed: bool


@dataclass(frozen=True)
class Section(JsonMixin):
    name: str
    title: str
    checks: tuple[Check, ...]
    artefacts: dict[str, Any] = field(default_factory=dict)  # file name → JSON-able object


@dataclass(frozen=True)
class DemoReport(JsonMixin):
    sections: tuple[Section, ...]

    @property
    def passed(self) -> bool:
        return all(c.passed for s in self.sections for c in s.checks)


def _close(name: str, measured: float | None, expected: float, tol: float = 1e-9) -> Check:
    ok = measured is not None and abs(measured - expected) <= tol
    return Check(name, f"{expected:.6f}", "None" if measured is None else f"{measured:.6f}", ok)


def example_stack() -> RewardStack:
    """The README's quickstart stack: a write gate, task and cost components, a length metric."""

    def no_write(ep: dict[str, Any]) -> GateOutcome:
        writes = tuple(c for c in ep["calls"] if c.startswith("update_"))
        return GateOutcome(not writes, writes)

    return RewardStack(
        gates=[Gate("no_write", no_write)],
        components=[
            Component(
                "task",
                lambda ep: None if ep["answer"] is None else float(ep["answer"] == ep["gold"]),
            ),
            Component("cost", lambda ep: -0.05 * len(ep["calls"]), weight=0.5),
            Component("n_calls", lambda ep: len(ep["calls"]), weight=0.0),
        ],
        version="quickstart-v1",
    )


EPISODES = [
    {"answer": "met", "gold": "met", "calls": ["search_observations"]},
    {"answer": "met", "gold": "met", "calls": ["search_observations", "update_observation"]},
    {"answer": None, "gold": "met", "calls": []},
]


def _levels_section() -> Section:
    clean = [Step(3)] * 12
    injected = [*clean, Step(0)]
    res = {
        f"{name}/{r}": score_trajectory(steps, recipe=r)
        for name, steps in (("clean", clean), ("injected", injected))
        for r in RECIPES
    }
    drop = res["clean/B"].value - res["injected/B"].value  # type: ignore[operator]
    checks = [
        *(_close(f"12 L3 → 0.85 ({r})", res[f"clean/{r}"].value, 0.85) for r in "ABC"),
        _close("12 L3 + 1 L0 (A)", res["injected/A"].value, 12 / 13 * 0.85),
        _close("12 L3 + 1 L0 (B)", res["injected/B"].value, 12 / 13 * 0.85 * 0.30),
        Check("spike-in drop ≥ 0.30 (B)", "≥ 0.300000", f"{drop:.6f}", drop >= 0.30),
        Check(
            "C equals A exactly",
            "identical",
            "identical" if res["injected/C"].value == res["injected/A"].value else "different",
            res["injected/C"].value == res["injected/A"].value,
        ),
    ]
    return Section(
        "levels",
        "Level-based step rewards (recipes A/B/C)",
        tuple(checks),
        {"levels.json": {k: v.to_dict() for k, v in res.items()}},
    )


def _stack_section() -> Section:
    stack = example_stack()
    results = stack.score_batch(EPISODES)
    totals = [r.total for r in results]
    checks = [
        Check("correct, one call", "0.975", f"{totals[0]}", totals[0] == 1.0 - 0.025),
        Check(
            "write attempt hard-fails",
            "0.0, gate no_write",
            f"{totals[1]}, {sorted(results[1].gate_failures)}",
            totals[1] == 0.0 and results[1].hard_failed,
        ),
        Check(
            "unscorable task is excluded, not 0",
            "task excluded",
            f"excluded {list(results[2].excluded)}",
            "task" in results[2].excluded,
        ),
    ]
    return Section(
        "stack",
        "Reward stack with a hard gate (three episodes)",
        tuple(checks),
        {
            "stack.json": {
                "config": stack.config(),
                "config_hash": stack.config_hash,
                "results": [r.to_dict() for r in results],
            }
        },
    )


def _advantages_section() -> Section:
    jitter = [0.5] * 15 + [0.501]
    z = group_advantages(jitter, 16, method="zscore", eps=1e-6)
    m = group_advantages(jitter, 16, method="maxnorm", resolution=1e-2)
    d = group_advantages(jitter, 16, resolution=1e-2, on_low_variance="drop")
    rewards = [0.9, 0.2, 0.5, 0.1, 0.4, 0.3, 0.6, 0.6]
    mp = minimum_pass(rewards, 4, threshold=0.8)
    checks = [
        _close("1e-3 jitter amplified by zscore", z.max_abs, 3.735, tol=5e-3),
        Check(
            "maxnorm keeps jitter ≤ 0.1",
            "≤ 0.1",
            f"{m.max_abs:.4f}",
            m.max_abs is not None and m.max_abs <= 0.1,
        ),
        Check(
            "drop routes the low-variance group",
            "[0]",
            f"{list(d.dropped_groups)}",
            d.dropped_groups == (0,),
        ),
        Check(
            "minimum-pass: best of group 2 is 0.6 < 0.8",
            "0.5",
            f"{mp.frac_pass}",
            mp.frac_pass == 0.5,
        ),
    ]
    return Section(
        "advantages",
        "Group advantages and the resolution protocol",
        tuple(checks),
        {
            "advantages.json": {
                "zscore": z.to_dict(),
                "maxnorm": m.to_dict(),
                "drop": d.to_dict(),
                "minimum_pass": mp.to_dict(),
            }
        },
    )


SECTIONS: tuple[Callable[[], Section], ...] = (_levels_section, _stack_section, _advantages_section)


def run_demo(progress: Callable[[str], None] | None = None) -> DemoReport:
    sections = []
    for make in SECTIONS:
        sections.append(make())
        if progress is not None:
            progress(sections[-1].title)
    return DemoReport(tuple(sections))
