"""Calibration plots (the ``report`` extra: matplotlib, drawn with the Agg backend)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .._optional import require
from .scoring import ScoredTasks

__all__ = ["plot_calibration"]


def plot_calibration(
    scored: ScoredTasks, gold: Sequence[float | None], good: Sequence[bool], path: Path
) -> Path:
    """Per recipe: reward vs gold quality (scatter) and the good / bad reward distributions."""
    mpl = require("matplotlib", "report", "calibration plots")
    mpl.use("Agg")
    plt = require("matplotlib.pyplot", "report", "calibration plots")
    recipes = list(scored.values)
    fig, axes = plt.subplots(2, len(recipes), figsize=(4 * len(recipes), 7), squeeze=False)
    for k, r in enumerate(recipes):
        vals = scored.values[r]
        pts = [(g, v) for g, v in zip(gold, vals) if g is not None and v is not None]
        ax = axes[0][k]
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=14, alpha=0.7)
        ax.set_title(f"recipe {r}: reward vs gold quality")
        ax.set_xlabel("gold quality q")
        ax.set_ylabel("trajectory reward")
        ax = axes[1][k]
        groups = [
            [v for v, gd in zip(vals, good) if gd and v is not None],
            [v for v, gd in zip(vals, good) if not gd and v is not None],
        ]
        ax.boxplot(groups)
        ax.set_xticks([1, 2], ["good", "bad"])
        ax.set_title(f"recipe {r}: good vs bad")
    fig.suptitle("rewardkit calibration (synthetic benchmark)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=90, metadata={"Software": None})
    plt.close(fig)
    tmp.replace(path)
    return path
