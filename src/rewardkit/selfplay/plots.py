"""Curves of the self-play simulation (needs the ``report`` extra: matplotlib)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .._json import write_atomic
from .._optional import require

if TYPE_CHECKING:
    from .simulate import SimulationResult

__all__ = ["plot_curves", "render_curves"]

PANELS = (
    ("D_s", "D_s on frozen P0"),
    ("pass_at_1", "pass@1 (GT + held-out)"),
    ("H_y", "H(y) [nats]"),
    ("null_mi_mean", "null MI mean [nats]"),
    ("mean_ig", "mean gated plug-in IG [nats]"),
    ("k_eff", "k_eff"),
)


def plot_curves(sim: SimulationResult, path: str | Path) -> Path:
    """Write :func:`render_curves` to ``path`` atomically."""
    return write_atomic(path, render_curves(sim))


def render_curves(sim: SimulationResult) -> bytes:
    """PNG bytes: one panel per instrument, one line per arm (mean over seeds)."""
    require("matplotlib", "report", "Plotting the self-play curves")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(13, 7), constrained_layout=True)
    for ax, (key, title) in zip(axes.ravel(), PANELS):
        for arm in sim.arms:
            series = np.array(
                [
                    [
                        np.nan if r[key] is None else r[key]
                        for r in sim.records
                        if r["arm"] == arm and r["seed"] == s
                    ]
                    for s in range(sim.n_seeds)
                ],
                dtype=float,
            )
            ax.plot(np.nanmean(series, axis=0), label=f"arm {arm}", lw=1.2)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("step")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(f"{sim.label} ({sim.n_seeds} seeds)", fontsize=10)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()
