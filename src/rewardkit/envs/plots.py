"""Figures of the environments' commands (presentation: needs the report extra, matplotlib).

from rewardkit.envs.sweep import sweep
from rewardkit.envs.plots import plot_pareto
plot_pareto(sweep(), "out/pareto.png")
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._json import write_atomic
from .._optional import require
from .._plotting import PALETTE, png
from .sweep import SweepResult

__all__ = ["pareto_png", "plot_pareto"]


def plot_pareto(result: SweepResult, path: str | Path) -> Path:
    """Write :func:`pareto_png` to ``path`` atomically."""
    return write_atomic(path, pareto_png(result))


def pareto_png(result: SweepResult, *, title: str | None = None) -> bytes:
    """PNG bytes: task success vs cost per behaviour, the front joined, the preferred ones
    ringed (needs the report extra; drawn by :func:`rewardkit._plotting.png`)."""
    require("matplotlib", "report", "rewardkit sweep's Pareto plot")

    def draw(fig: Any) -> None:
        ax = fig.add_subplot()
        chosen = {b for row in result.preferred.values() for b in row}
        at: dict[tuple[float, float], list[str]] = {}
        for b in result.behaviours:  # behaviours on the same point share one label
            at.setdefault((result.cost_spent[b], result.success[b]), []).append(b)
        for j, ((x, y), names) in enumerate(at.items()):
            ax.scatter(
                [x],
                [y],
                s=60,
                zorder=3,
                color=PALETTE[j % len(PALETTE)],
                linewidths=1.5,
                edgecolors="black" if chosen & set(names) else "none",
            )
            ax.annotate(
                ", ".join(names), (x, y), textcoords="offset points", xytext=(6, 4), fontsize=8
            )
        front = [(result.cost_spent[b], result.success[b]) for b in result.pareto]
        ax.plot(
            [p[0] for p in front],
            [p[1] for p in front],
            "--",
            color="grey",
            zorder=2,
            label="Pareto front",
        )
        ax.margins(x=0.2, y=0.12)
        ax.set_xlabel("mean cost spent per episode (tool-cost units)")
        ax.set_ylabel("task success (held-out: correct and safe)")
        ax.set_title(
            title
            or f"Behaviours over {result.n_tasks} tasks; ringed = preferred by some weighting",
            fontsize=9,
        )
        ax.legend(loc="lower right", fontsize=8)

    return png(draw, width_in=6.4, height_in=4.4)
