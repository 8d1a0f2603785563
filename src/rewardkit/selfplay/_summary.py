"""The simulation's summary: instruments over the first and last steps, the seed's main
hypothesis per seed, P4, and differences against arm A paired by seed (seed 003's P2 caveat:
compare arms at the same seed, not across runs)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .predictions import p4_check

__all__ = ["WINDOW", "summarise"]

WINDOW = 50  # steps averaged at the start and the end of a run


def _window(rows: list[dict[str, Any]], key: str, last: bool) -> float:
    vals = [r[key] for r in (rows[-WINDOW:] if last else rows[:WINDOW]) if r[key] is not None]
    return float(np.mean(vals)) if vals else float("nan")


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
                    "first": float(np.mean([_window(r, key, False) for r in rs])),
                    "last": float(np.mean([_window(r, key, True) for r in rs])),
                }
                for key in ("D_s", "pass_at_1", "H_y", "mean_ig", "null_mi_mean", "k_eff", "C_hat")
            },
            # the seed's main hypothesis: D_s falls while pass@1 rises
            "main_hypothesis_per_seed": [
                _window(r, "D_s", True) < _window(r, "D_s", False)
                and _window(r, "pass_at_1", True) > _window(r, "pass_at_1", False)
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
                _window(runs[(arm, s)], key, last) - _window(runs[("A", s)], key, last)
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
    return {"per_arm": per_arm, "paired_vs_A": paired, "window_steps": WINDOW}
