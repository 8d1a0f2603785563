"""Curves of a ``rewardkit learn`` experiment (needs the ``report`` extra: matplotlib).

Left: the training-batch statistic per step (mean over seeds, per-seed lines thin). Right:
each held-out metric at the evaluation points (mean over seeds).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._plotting import PALETTE, png

if TYPE_CHECKING:
    from .result import LearnResult

__all__ = ["render_curves"]


def _smooth(x: np.ndarray, w: int) -> np.ndarray:
    if w <= 1 or x.size < w:
        return x
    return np.convolve(x, np.ones(w) / w, mode="valid")


def render_curves(res: LearnResult) -> bytes:
    arms = res.preregistration["arms"]
    key = res.preregistration["training_curve"]
    metrics = [m["name"] for m in res.preregistration["metrics"]]
    w = max(1, res.steps // 20)  # moving average over 5% of the steps

    def draw(fig: Any) -> None:
        axes = fig.subplots(1, 1 + len(metrics))
        ax = axes[0]
        for j, arm in enumerate(arms):
            runs = [r for r in res.runs if r["arm"] == arm]
            rows = np.array(
                [[np.nan if t[key] is None else t[key] for t in r["train"]] for r in runs]
            )  # (seeds, steps)
            for row in rows:
                s = _smooth(row, w)
                ax.plot(np.arange(s.size) + w, s, color=PALETTE[j], lw=0.5, alpha=0.4)
            s = _smooth(np.nanmean(rows, axis=0), w)
            ax.plot(np.arange(s.size) + w, s, color=PALETTE[j], lw=1.8, label=arm)
        ax.set_title(f"training batches: {key}")
        ax.set_xlabel("GRPO step")
        ax.legend(fontsize=8, frameon=False)
        for ax, m in zip(axes[1:], metrics):
            for j, arm in enumerate(arms):
                runs = [r for r in res.runs if r["arm"] == arm]
                steps = [p["step"] for p in runs[0]["curve"]]
                vals = np.array(
                    [[np.nan if p[m] is None else p[m] for p in r["curve"]] for r in runs]
                )
                ax.plot(steps, np.nanmean(vals, axis=0), marker="o", ms=3, color=PALETTE[j],
                        label=arm)  # fmt: skip
            ax.set_title(f"held-out: {m}")
            ax.set_xlabel("GRPO step")
        fig.suptitle(
            f"rewardkit learn {res.experiment}: {len(res.preregistration['seeds'])} seeds, "
            f"mean over seeds (thin: single seeds, moving average of {w} steps)",
            fontsize=9,
        )

    return png(draw, width_in=3.6 * (1 + len(metrics)), height_in=3.2)
