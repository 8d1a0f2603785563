"""Curves of the self-play simulation (needs the ``report`` extra: matplotlib)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._json import write_atomic
from .._optional import require
from .._plotting import PALETTE, png
from ..errors import ConfigError

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


def render_curves(
    sim: SimulationResult,
    *,
    panels: Sequence[str] | None = None,
    columns: int = 3,
    panel_in: tuple[float, float] = (4.3, 3.5),
) -> bytes:
    """PNG bytes: one panel per instrument (``panels``: keys of :data:`PANELS`, default all),
    one line per arm (mean over seeds)."""
    require("matplotlib", "report", "Plotting the self-play curves")
    titles = dict(PANELS)
    keys = [k for k, _ in PANELS] if panels is None else list(panels)
    unknown = [k for k in keys if k not in titles]
    if unknown or not keys:
        raise ConfigError(
            f"The 'panels' parameter of render_curves must name instruments among "
            f"{sorted(titles)}. Got {keys}."
        )
    ncols = min(columns, len(keys))
    nrows = -(-len(keys) // ncols)

    def draw(fig: Any) -> None:
        axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
        for ax, key in zip(axes, keys):
            for j, arm in enumerate(sim.arms):
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
                with warnings.catch_warnings():  # a step with no value in any seed stays a gap
                    warnings.simplefilter("ignore", RuntimeWarning)
                    mean = np.nanmean(series, axis=0)
                ax.plot(mean, label=f"arm {arm}", lw=1.2, color=PALETTE[j % len(PALETTE)])
            ax.set_title(titles[key], fontsize=10)
            ax.set_xlabel("step", fontsize=8)
            ax.tick_params(labelsize=7)
        for ax in axes[len(keys) :]:
            ax.set_axis_off()
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=8)
        seeds = f"{sim.n_seeds} seed" + ("s, mean" if sim.n_seeds > 1 else "")
        fig.suptitle(f"{sim.label} ({seeds})", fontsize=10)

    return png(draw, width_in=panel_in[0] * ncols, height_in=panel_in[1] * nrows, dpi=90)
