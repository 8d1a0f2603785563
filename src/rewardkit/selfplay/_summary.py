"""The simulation's summary: instruments over the first and last steps, P4, differences against
arm A paired by seed (seed 003's P2 caveat: compare arms at the same seed, not across runs) and,
when the control arm ran, every arm against the control with paired 95% t-intervals.

The seed's main hypothesis ("D_s falls while pass@1 rises") is recorded per seed as a *pattern*,
not as a finding: the control arm, whose coder never sees a test, shows it too on this bank, so
it is produced by the coder converging on GT, not by the test reward. What the simulation can
credit to a test-reward rule is a paired difference against the control that excludes 0."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..stats.paired import paired_difference
from .predictions import p4_check

__all__ = ["ATTRIBUTION", "WINDOW", "summarise"]

WINDOW = 50  # steps averaged at the start and the end of a run
ATTRIBUTION = {
    "can_attribute": (
        "a difference between an arm and the control (coder ignores the tests, paired by seed) "
        "whose 95% interval excludes 0: the effect of letting the coder be rewarded by the "
        "tests that the arm's rule selected"
    ),
    "cannot_attribute": (
        "a pattern the control shows too (D_s falling while pass@1 rises): it comes from the "
        "coder converging on GT and from pool-relative pruning, not from the test reward; and "
        "nothing about LLM training — the policies are softmaxes over a fixed candidate pool"
    ),
}


def _window(rows: list[dict[str, Any]], key: str, last: bool) -> float | None:
    vals = [r[key] for r in (rows[-WINDOW:] if last else rows[:WINDOW]) if r[key] is not None]
    return float(np.mean(vals)) if vals else None  # no value in the window: None, not NaN


def _mean(values: list[float | None]) -> float | None:
    """Mean over seeds; None when an instrument was not measured in some seed's window."""
    present = [v for v in values if v is not None]
    return float(np.mean(present)) if len(present) == len(values) else None


def _measured(value: float | None) -> float:
    if value is None:
        raise ValueError("the D_s and pass@1 instruments are recorded on every step")
    return value


def summarise(
    records: list[dict[str, Any]],
    arms: tuple[str, ...],
    n_seeds: int,
    h_task: np.ndarray,
    ig_task: np.ndarray,
) -> dict[str, Any]:
    runs = {
        (a, s): [r for r in records if r["arm"] == a and r["seed"] == s]
        for a in arms
        for s in range(n_seeds)
    }
    rows_per_arm = h_task.shape[1] // len(arms)
    per_arm: dict[str, Any] = {}
    for ai, arm in enumerate(arms):
        rs = [runs[(arm, s)] for s in range(n_seeds)]
        per_arm[arm] = {
            "instruments": {
                key: {
                    "first": _mean([_window(r, key, False) for r in rs]),
                    "last": _mean([_window(r, key, True) for r in rs]),
                }
                for key in ("D_s", "pass_at_1", "H_y", "mean_ig", "null_mi_mean", "k_eff", "C_hat")
            },
            # the seed's main hypothesis as a pattern (the control shows it too: see ATTRIBUTION)
            "pattern_D_s_falls_pass_rises_per_seed": [
                _measured(_window(r, "D_s", True)) < _measured(_window(r, "D_s", False))
                and _measured(_window(r, "pass_at_1", True))
                > _measured(_window(r, "pass_at_1", False))
                for r in rs
            ],
            "p4": p4_check(
                h_task[:, ai * rows_per_arm : (ai + 1) * rows_per_arm],
                ig_task[:, ai * rows_per_arm : (ai + 1) * rows_per_arm],
            ).to_dict(),
            "probe_executions_per_step": float(
                np.mean([r["probe_executions"] for x in rs for r in x])
            ),
            "active_executions_per_step": float(rs[0][0]["active_executions"]),
        }
    paired: dict[str, Any] = {}
    for arm in arms:
        if arm == "A" or "A" not in arms:
            continue

        def diff(key: str, last: bool, arm: str = arm) -> list[float]:
            return [
                _measured(_window(runs[(arm, s)], key, last))
                - _measured(_window(runs[("A", s)], key, last))
                for s in range(n_seeds)
            ]

        ds_last, ds_first = diff("D_s", True), diff("D_s", False)
        p_last = diff("pass_at_1", True)
        paired[arm] = {
            "final_D_s_minus_A": ds_last,
            "final_pass_at_1_minus_A": p_last,
            "D_s_drop_minus_A": [f - l for f, l in zip(ds_first, ds_last)],
            "mean_final_D_s_minus_A": float(np.mean(ds_last)),
            "mean_final_pass_at_1_minus_A": float(np.mean(p_last)),
        }
    out = {"per_arm": per_arm, "paired_vs_A": paired, "window_steps": WINDOW}
    if "control" in arms:
        out["vs_control"] = _vs_control(runs, arms, n_seeds)
        out["attribution"] = ATTRIBUTION
    return out


def _vs_control(
    runs: dict[tuple[str, int], list[dict[str, Any]]], arms: tuple[str, ...], n_seeds: int
) -> dict[str, Any]:
    """Every arm − control, per seed and as a mean with its 95% t-interval."""

    def per_seed(arm: str, what: str) -> list[float]:
        out = []
        for s in range(n_seeds):
            r = runs[(arm, s)]
            if what == "D_s_drop":
                out.append(_measured(_window(r, "D_s", False)) - _measured(_window(r, "D_s", True)))
            elif what == "pass_at_1_rise":
                out.append(
                    _measured(_window(r, "pass_at_1", True))
                    - _measured(_window(r, "pass_at_1", False))
                )
            else:
                out.append(_measured(_window(r, what, True)))
        return out

    res: dict[str, Any] = {}
    for arm in arms:
        if arm == "control":
            continue
        res[arm] = {
            what: paired_difference(
                what, arm, "control", per_seed(arm, what), per_seed("control", what)
            ).to_dict()
            for what in ("D_s", "pass_at_1", "D_s_drop", "pass_at_1_rise")
        }
    return res
