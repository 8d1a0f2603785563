"""Calibration, spike-in and gate plots (the ``report`` extra: matplotlib, Agg, PNG bytes).

Usage::

    from rewardkit.audit.plots import calibration_png, intervals_png, spike_in_png, gates_png
    png = calibration_png(scored.values, q, good)   # reward vs gold quality, one panel per recipe
    png = intervals_png(cal)                        # ρ, τ_b and good − bad diff with their CIs
    png = spike_in_png(spike)                       # clean vs injected per paradigm, threshold
    png = gates_png(validation.gates)               # the five gates as a table

Every figure goes through :func:`rewardkit._plotting.png` (own Agg canvas, no "Software"
metadata), so the same inputs give the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._json import write_atomic
from .._plotting import PALETTE, png, table_png
from .scoring import ScoredTasks

if TYPE_CHECKING:
    from ..stats import ConfidenceInterval
    from ..stats.probability import Reliability
    from .calibrate import Calibration
    from .gates import GateResult
    from .spike_in import SpikeIn

__all__ = [
    "calibration_png",
    "gates_png",
    "intervals_png",
    "plot_calibration",
    "reliability_png",
    "spike_in_png",
]

GOOD, BAD = PALETTE[2], PALETTE[3]


def calibration_png(
    values: Mapping[str, Sequence[float | None]],
    gold: Sequence[float | None],
    good: Sequence[bool],
    *,
    boxes: bool = False,
) -> bytes:
    """Per recipe: reward vs gold quality q, good (no gold error) and bad tasks coloured; with
    ``boxes`` a second row of good / bad reward box plots. Tasks without q or reward are left
    out (as in the statistics)."""
    recipes = list(values)

    def draw(fig: Any) -> None:
        axes = fig.subplots(2 if boxes else 1, len(recipes), squeeze=False, sharey=True)
        for k, r in enumerate(recipes):
            ax = axes[0][k]
            for label, want, colour, mark in (("good", True, GOOD, "o"), ("bad", False, BAD, "x")):
                pts = [
                    (g, v)
                    for g, v, gd in zip(gold, values[r], good)
                    if g is not None and v is not None and gd is want
                ]
                ax.scatter(
                    [p[0] for p in pts],
                    [p[1] for p in pts],
                    s=16,
                    marker=mark,
                    color=colour,
                    alpha=0.8,
                    label=f"{label} (n = {len(pts)})",
                )
            ax.set_title(f"recipe {r}", fontsize=9)
            ax.set_xlabel("gold quality q", fontsize=8)
            ax.tick_params(labelsize=7)
            if k == 0:
                ax.set_ylabel("trajectory reward", fontsize=8)
                ax.legend(fontsize=7, frameon=True, loc="lower right")
            if boxes:
                ax = axes[1][k]
                groups = [
                    [v for v, gd in zip(values[r], good) if gd is want and v is not None]
                    for want in (True, False)
                ]
                ax.boxplot(groups)
                ax.set_xticks([1, 2], ["good", "bad"])
                ax.set_title(f"recipe {r}: good vs bad", fontsize=9)
        fig.suptitle("Reward vs gold quality (synthetic benchmark)", fontsize=10)

    return png(draw, width_in=2.4 * len(recipes) + 0.6, height_in=5.6 if boxes else 2.9)


def plot_calibration(
    scored: ScoredTasks, gold: Sequence[float | None], good: Sequence[bool], path: Path
) -> Path:
    """Write :func:`calibration_png` (scatter and good / bad boxes) to ``path`` atomically."""
    return write_atomic(path, calibration_png(scored.values, gold, good, boxes=True))


def intervals_png(cal: Calibration) -> bytes:
    """Per recipe: Spearman ρ, Kendall τ_b (reward vs q) and the good − bad mean difference,
    each with its percentile bootstrap interval (first seed); zero marked."""
    recs = cal.recipes
    level = cal.preregistration.confidence_level
    spearman = [r.rank_agreement.spearman for r in recs]
    kendall = [r.rank_agreement.kendall_tau_b for r in recs]
    Point = tuple[float | None, "ConfidenceInterval | None"]
    panels: tuple[tuple[str, list[Point]], ...] = (
        ("Spearman ρ (reward vs q)", [(e.value, e.confidence_interval) for e in spearman]),
        ("Kendall τ_b (reward vs q)", [(e.value, e.confidence_interval) for e in kendall]),
        (
            "good − bad mean reward",
            [(r.stratified.diff, r.stratified.confidence_interval) for r in recs],
        ),
    )

    def draw(fig: Any) -> None:
        axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
        ys = list(range(len(recs)))[::-1]  # first recipe on top
        for ax, (title, est) in zip(axes, panels):
            for j, (y, (value, ci)) in enumerate(zip(ys, est)):
                colour = PALETTE[j % len(PALETTE)]
                if ci is not None and value is not None:
                    ax.errorbar(
                        [value],
                        [y],
                        xerr=[[value - ci.low], [ci.high - value]],
                        fmt="o",
                        color=colour,
                        capsize=4,
                        ms=5,
                    )
                    ax.annotate(
                        f"{value:.3f}\n[{ci.low:.3f}, {ci.high:.3f}]",
                        (value, y),
                        textcoords="offset points",
                        xytext=(0, 7),
                        ha="center",
                        fontsize=6.5,
                    )
                elif value is not None:
                    ax.plot([value], [y], "o", color=colour)
            ax.axvline(0.0, color="#555555", lw=0.8, ls="--")
            ax.set_title(title, fontsize=9)
            ax.tick_params(labelsize=7)
            ax.margins(x=0.25)
            ax.set_ylim(-0.6, len(recs) - 0.2)
        axes[0].set_yticks(ys, [f"recipe {r.recipe}" for r in recs])
        fig.suptitle(
            f"{level:.0%} bootstrap intervals (B = {cal.preregistration.n_resamples})",
            fontsize=10,
        )

    return png(draw, width_in=7.6, height_in=0.75 * len(recs) + 1.1)


def spike_in_png(spike: SpikeIn) -> bytes:
    """One row per injected case (paradigm · candidate): the clean and the injected trajectory
    reward as horizontal bars, and the mark the injected one must stay under (clean − threshold)."""
    cases = spike.cases
    ys = list(range(len(cases)))[::-1]  # first case on top
    h = 0.38

    def draw(fig: Any) -> None:
        ax = fig.add_subplot()
        series = (
            ("clean substrate", [c.clean_reward for c in cases], h / 2),
            ("one candidate injected", [c.injected_reward for c in cases], -h / 2),
        )
        for j, (name, vals, dy) in enumerate(series):
            yy = [y + dy for y in ys]
            ax.barh(yy, [0.0 if v is None else v for v in vals], h, label=name, color=PALETTE[j])
            for y, v in zip(yy, vals):
                text = "n/a" if v is None else f" {v:.3f}"
                ax.annotate(text, (v or 0.0, y), ha="left", va="center", fontsize=6.5)
        for y, c in zip(ys, cases):
            if c.clean_reward is not None:
                ax.vlines(
                    c.clean_reward - spike.threshold,
                    y - 0.45,
                    y + 0.45,
                    colors="black",
                    linestyles="--",
                    lw=1.2,
                    label=f"clean − {spike.threshold:g}" if y == ys[0] else None,
                )
        ax.set_yticks(ys, [f"{c.paradigm} · {c.candidate}" for c in cases], fontsize=7)
        ax.set_xlim(0, 1.45)
        ax.set_xlabel(f"trajectory reward (recipe {spike.recipe})", fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
        ax.set_title(
            f"Spike-in: each injected bar must end left of its dashed mark (drop ≥ "
            f"{spike.threshold:g})",
            fontsize=9,
        )
        ax.legend(fontsize=7, frameon=False, loc="lower right")

    return png(draw, width_in=7.2, height_in=0.32 * len(cases) + 1.0)


def gates_png(gates: Sequence[GateResult]) -> bytes:
    """The gates as a table: name, PASS / FAIL, the one-line summary."""
    rows = [(g.name, "PASS" if g.passed else "FAIL", g.summary) for g in gates]
    return table_png(
        ("gate", "result", "summary"),
        rows,
        title=f"validate: {sum(g.passed for g in gates)}/{len(gates)} gates pass",
        pass_fail_col=1,
        col_widths=(0.14, 0.1, 0.76),
        width_in=8.0,
        row_in=0.32,
        fontsize=9,
    )


def reliability_png(rel: Reliability) -> bytes:
    """The reliability diagram of a probability-valued reward: per non-empty bin, the mean
    reward (x) against the fraction of good items (y), the diagonal of perfect calibration, and
    the items per bin below."""

    def draw(fig: Any) -> None:
        top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 1))
        full = [b for b in rel.bins if b.count]
        top.plot([0, 1], [0, 1], color="#999999", linestyle="--", label="perfectly calibrated")
        top.plot(
            [b.mean_predicted for b in full],
            [b.frac_positive for b in full],
            marker="o",
            color=PALETTE[0],
            label=f"reward (ECE {rel.ece:.3f})",
        )
        top.set_ylabel("fraction good")
        top.set_ylim(-0.02, 1.02)
        top.legend(loc="upper left", fontsize=8)
        bottom.bar(
            [(b.low + b.high) / 2 for b in rel.bins],
            [b.count for b in rel.bins],
            width=1 / rel.n_bins * 0.9,
            color=PALETTE[5],
        )
        bottom.set_xlabel("reward (as a predicted probability)")
        bottom.set_ylabel("items")
        bottom.set_xlim(0, 1)

    return png(draw, height_in=4.8)
