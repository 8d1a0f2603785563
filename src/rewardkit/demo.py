"""The main job: every capability on the embedded defaults, with its checks.

``run_demo()`` returns a :class:`DemoReport`: named sections, each with the JSON artefacts it
produced, the checks it ran (a check that fails makes ``rewardkit demo`` exit 1) and optional
figures (PNG bytes) for the HTML report. The CLI prints the summary, writes the artefacts plus
``manifest.json`` (their content hashes) and ``report.html``.

Sections come from :data:`SECTIONS`: the core ones defined here, then one
``"module:function"`` line per area (``rewardkit.<area>.demo:demo_section``, a function returning a
:class:`Section` in a few seconds). An area whose package is not in this build is skipped and
listed in ``DemoReport.skipped`` with the reason; a section that raises becomes a failed check
of that section (the demo never dies half-way and never hides it).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._json import JsonMixin
from ._plotting import bars_png, optional_figures
from ._progress import track
from ._results import Check, Section
from .advantages import group_advantages, minimum_pass
from .levels import RECIPES, Step, score_trajectory
from .stack import Component, Gate, GateOutcome, RewardStack

__all__ = ["SECTIONS", "DemoReport", "example_stack", "run_demo"]


@dataclass(frozen=True)
class DemoReport(JsonMixin):
    sections: tuple[Section, ...]
    skipped: dict[str, str] = field(default_factory=dict)  # "module:function" → why

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
            Component(
                "cost", lambda ep: -min(1.0, 0.05 * len(ep["calls"])), weight=0.5, range=(-1, 0)
            ),
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
    figures = optional_figures(
        lambda: {
            "Recipes A/B/C on the 12-step clean substrate and with one injected L0 (spike-in)": (
                bars_png(
                    list(RECIPES),
                    {
                        "clean (12 × L3)": [res[f"clean/{r}"].value for r in RECIPES],
                        "spike-in (12 × L3 + 1 × L0)": [
                            res[f"injected/{r}"].value for r in RECIPES
                        ],
                    },
                    title="Trajectory reward by recipe",
                    ylabel="trajectory reward",
                    hlines={"clean − 0.30 (spike-in threshold)": 0.85 - 0.30},
                )
            )
        }
    )
    return Section(
        "levels",
        "Level-based step rewards (recipes A/B/C)",
        tuple(checks),
        {"levels.json": {k: v.to_dict() for k, v in res.items()}},
        figures,
        "A judge's step levels become a trajectory reward. Injecting one level-0 step into a "
        "clean all-L3 trajectory must drop the reward by at least 0.30 (the spike-in test): only "
        "recipe B (the hard penalty, × γ = 0.30) does; A and C (uniform PRM weights) barely move.",
    )


def _stack_section() -> Section:
    stack = example_stack()
    results = stack.score_batch(EPISODES)
    totals = [r.total for r in results]
    checks = [
        Check("correct, one call", "0.975", f"{totals[0]}", totals[0] == 1.0 - 0.025),
        Check(
            "write attempt hard-fails below every safe total",
            f"{stack.fail_value} < {stack.bounds().low}, gate no_write",
            f"{totals[1]}, {sorted(results[1].gate_failures)}",
            totals[1] == stack.fail_value < stack.bounds().low and results[1].hard_failed,
        ),
        Check(
            "unscorable task is excluded, not 0",
            "task excluded",
            f"excluded {list(results[2].excluded)}",
            "task" in results[2].excluded,
        ),
    ]
    names = ["correct", "write attempt", "unscorable"]
    figures = optional_figures(
        lambda: {
            "Totals and components of the three episodes (n/a = cannot score)": bars_png(
                names,
                {
                    "total": totals,
                    "task": [r.components["task"] for r in results],
                    "cost (weight 0.5)": [r.components["cost"] for r in results],
                },
                title="A failed gate ranks last; components stay logged",
                ylabel="reward",
            )
        }
    )
    return Section(
        "stack",
        "Reward stack with a hard gate (three episodes)",
        tuple(checks),
        figures=figures,
        description="Gates run first; a failed gate forces the total to fail_value, strictly "
        "below the lowest safe total (bounds() from the declared component ranges), while every "
        "soft component is still computed and logged; a component that cannot score is "
        "excluded (None), never counted as 0.",
        artefacts={
            "stack.json": {
                "config": stack.config(),
                "config_hash": stack.config_hash,
                "bounds": stack.bounds().to_dict(),
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
    idx = [str(i) for i in range(len(jitter))]
    figures = optional_figures(
        lambda: {
            "One group of 16 rewards: fifteen 0.5 and one 0.501 (1e-3 jitter)": bars_png(
                idx,
                {
                    "zscore (eps 1e-6)": list(z.values),
                    "maxnorm (resolution 1e-2)": list(m.values),
                },
                title="Advantages of sub-resolution jitter",
                ylabel="advantage",
                width_in=7.2,
            )
        }
    )
    return Section(
        "advantages",
        "Group advantages and the resolution protocol",
        tuple(checks),
        figures=figures,
        description="A group whose rewards differ only by noise: z-scoring amplifies a 1e-3 "
        "jitter into advantages of ±3.7, MaxNorm with a resolution keeps them below 0.1, and "
        "the resolution protocol can drop the group instead (DAPO-style).",
        artefacts={
            "advantages.json": {
                "zscore": z.to_dict(),
                "maxnorm": m.to_dict(),
                "drop": d.to_dict(),
                "minimum_pass": mp.to_dict(),
            }
        },
    )


# The demo's sections, in report order: "module:function" returning a Section. An area adds
# its line here; a module that is not in this build is skipped (and listed as skipped).
SECTIONS: tuple[str, ...] = (
    "rewardkit.demo:_stack_section",
    "rewardkit.demo:_advantages_section",
    "rewardkit.demo:_levels_section",
    "rewardkit.bioaudit.demo:demo_section",
    "rewardkit.audit.demo:demo_section",
    "rewardkit.autorater.demo:demo_section",
    "rewardkit.envs.demo:demo_section",
    "rewardkit.envs.sql.demo:demo_section",
    "rewardkit.sandbox.demo:demo_section",
    "rewardkit.selfplay.demo:demo_section",
)


def _load(spec: str) -> Callable[[], Section] | str:
    """The section function, or why it is not available in this build."""
    module, _, attr = spec.partition(":")
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        # Only the area's own package being absent is a skip; a missing dependency *inside*
        # a present package is a real failure and propagates.
        if exc.name is not None and (module == exc.name or module.startswith(exc.name + ".")):
            return f"package {exc.name} is not in this build"
        raise
    fn = getattr(mod, attr, None)
    if not callable(fn):
        return f"{module} has no {attr}() yet"
    return fn


def _crashed(spec: str, exc: BaseException) -> Section:
    parts = spec.partition(":")[0].split(".")
    if len(parts) > 1 and parts[-1] == "demo":  # rewardkit.<area>.demo → the area's name
        parts.pop()
    name = parts[-1]
    return Section(
        name,
        f"{spec} (crashed)",
        (Check("section runs", "a Section", f"{type(exc).__name__}: {exc}", False),),
    )


def run_demo(*, sections: Sequence[str] = SECTIONS, progress: bool | None = False) -> DemoReport:
    """Run every available section (``progress``: a progress bar on stderr; None = if a tty)."""
    done: list[Section] = []
    skipped: dict[str, str] = {}
    for spec in track(sections, description="rewardkit demo", enabled=progress):
        fn = _load(spec)
        if isinstance(fn, str):
            skipped[spec] = fn
            continue
        try:
            section = fn()
        except Exception as exc:  # a crashing section is a failed check, not a dead demo
            section = _crashed(spec, exc)
        if not isinstance(section, Section):
            section = _crashed(spec, TypeError(f"returned {type(section).__name__}"))
        done.append(section)
    names = [s.name for s in done]
    files = [f for s in done for f in s.artefacts]
    for what, items in (("section name", names), ("artefact file", files)):
        dup = sorted({x for x in items if items.count(x) > 1})
        if dup:
            raise RuntimeError(f"demo sections share the {what}(s) {dup}; each must be unique")
    return DemoReport(tuple(done), skipped)
