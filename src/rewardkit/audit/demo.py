"""The audit section of ``rewardkit demo``: calibrate (recipes A/B/C) and the five gates on the
shipped synthetic benchmark.

The demo runs the preregistered B = 2000 (about 2 s for 3 recipes × 5 seeds, judging included);
the determinism gate's fresh interpreter adds about a second. At B = 500 the seed-stability check
would be too noisy (one bound moved 0.057 across the five seeds), so B is not reduced.
"""

from __future__ import annotations

from typing import Any

from .._plotting import optional_figures
from .._results import Check, Section
from ..stats import gold_quality
from .calibrate import Calibration, calibrate
from .preset import bioaudit_inputs
from .spike_in import SpikeIn, SpikeInCase
from .validate import Validation, validate

__all__ = ["DEMO_RESAMPLES", "demo_section"]

DEMO_RESAMPLES = 2000


def demo_section() -> Section:
    p = bioaudit_inputs()
    cal = calibrate(
        p.tasks,
        judge=p.judge,
        n_resamples=DEMO_RESAMPLES,
        registration_id="rewardkit-demo",
        note=p.note,
    )
    val = validate(
        p.tasks,
        judge=p.judge,
        golden=p.golden,
        substrates=p.substrates,
        candidates=p.candidates,
        judge_factory=p.judge_factory,
        n_resamples=DEMO_RESAMPLES,
        note=p.note,
    )
    checks = [*cal.acceptance, *cal.findings]
    for g in val.gates:
        checks.append(Check(f"gate {g.name}", "pass", g.summary, g.passed))
    return Section(
        "audit",
        f"Reward audit: calibration (B = {DEMO_RESAMPLES}) and the five validate gates",
        tuple(checks),
        {
            "calibration.json": cal.to_dict(),
            "calibration.md": cal.table(),
            "validation.json": val.to_dict(),
        },
        optional_figures(lambda: _figures(cal, val)),
        "Calibration of the level reward against gold annotations (recipes A/B/C, "
        "preregistered), then the five gates validate runs before a reward may be used: "
        "mapping, determinism, spike-in, ablations, golden. " + p.note + ".",
    )


def _figures(cal: Calibration, val: Validation) -> dict[str, bytes]:
    from ..bioaudit import Engine, load_benchmark
    from .plots import calibration_png, gates_png, intervals_png, spike_in_png
    from .protocols import LevelReward
    from .scoring import score_tasks

    # calibrate() keeps only the statistics; the per-task rewards are scored again here (the
    # same judge, reward and tasks, so the same values: judging is deterministic).
    tasks = load_benchmark().tasks
    recipes = cal.preregistration.recipes
    scored = score_tasks(tasks, judge=Engine(), reward=LevelReward(), recipes=recipes)
    q = gold_quality([t.n_gold_correct for t in tasks], [t.n_gold_error for t in tasks])
    good = [t.n_gold_error == 0 for t in tasks]
    figures = {
        "Calibration: reward vs gold quality q per recipe (good = no gold error)": (
            calibration_png(scored.values, q, good)
        ),
        "Calibration intervals: ρ, τ_b and the good − bad difference per recipe": (
            intervals_png(cal)
        ),
    }
    spike = _spike_in(val)
    if spike is not None:
        caption = "Spike-in: clean vs injected trajectory reward per paradigm (validate gate)"
        figures[caption] = spike_in_png(spike)
    figures["The five validate gates"] = gates_png(val.gates)
    return figures


def _spike_in(val: Validation) -> SpikeIn | None:
    """The spike-in gate's result, rebuilt from its evidence (the gate keeps it as a dict);
    None when the gate raised (its evidence is then empty and the gate table says why)."""
    ev: dict[str, Any] = dict(val.gate("spike_in").evidence)
    if "cases" not in ev:
        return None
    cases = tuple(
        SpikeInCase(**{**c, "clean_levels": tuple(c["clean_levels"])}) for c in ev["cases"]
    )
    return SpikeIn(ev["recipe"], ev["threshold"], cases, ev["paradigms"], ev["passed"])
