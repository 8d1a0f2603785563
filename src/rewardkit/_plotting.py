"""Figures as PNG bytes (matplotlib's Agg backend): the plots of the areas and of the report.

Usage (an area's figure, or a section of ``rewardkit demo``)::

    from rewardkit._plotting import bars_png, optional_figures
    figures = optional_figures(lambda: {
        "spike-in drop": bars_png(["A", "B", "C"],
                                  {"clean": [.85] * 3, "injected": [.78, .24, .78]},
                                  title="Recipes on the spike-in", ylabel="reward"),
    })
    Section(..., figures=figures)

Figures are drawn on a ``matplotlib.figure.Figure`` with its own Agg canvas (no pyplot, no global
state, safe in threads) and saved without the "Software" metadata, so the same data gives the same
bytes. matplotlib is imported only when a figure is drawn (extra ``[report]``); this module sits
with the foundations so that any area can write a figure without importing the presentation.
``optional_figures`` returns ``{}`` when the ``report`` extra is not installed, so a demo
section never fails for want of matplotlib.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._optional import have, require

__all__ = ["PALETTE", "bars_png", "lines_png", "optional_figures", "png", "table_png"]

# Colour-blind-safe (Okabe–Ito), in the order series are drawn.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
# Cell fills of a PASS / FAIL column in ``table_png`` (light, so black text stays readable).
PASS_FAIL_FILL = {"PASS": "#CDEBDD", "FAIL": "#F6D3C2"}


def optional_figures(build: Callable[[], Mapping[str, bytes]]) -> dict[str, bytes]:
    """``build()`` when matplotlib is installed, else ``{}`` (the report then has no plots)."""
    return dict(build()) if have("matplotlib") else {}


def png(
    draw: Callable[[Any], None], *, width_in: float = 6.4, height_in: float = 3.2, dpi: int = 100
) -> bytes:
    """Call ``draw(fig)`` on a fresh Agg figure and return its PNG bytes."""
    require("matplotlib", "report", "Report plots")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    draw(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()


def bars_png(
    labels: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    *,
    title: str,
    ylabel: str,
    hlines: Mapping[str, float] | None = None,
    **size: Any,
) -> bytes:
    """Grouped bars: one group per label, one bar per series (``None`` = no bar, marked "n/a")."""

    def draw(fig: Any) -> None:
        ax = fig.add_subplot()
        k = len(series)
        width = 0.8 / max(k, 1)
        for j, (name, values) in enumerate(series.items()):
            xs = [i + (j - (k - 1) / 2) * width for i in range(len(labels))]
            ys = [0.0 if v is None else float(v) for v in values]
            ax.bar(xs, ys, width=width, label=name, color=PALETTE[j % len(PALETTE)])
            for x, v in zip(xs, values):
                if v is None:
                    ax.annotate("n/a", (x, 0.0), ha="center", va="bottom", fontsize=7)
        for j, (name, y) in enumerate((hlines or {}).items()):
            ax.axhline(y, color="#555555", linestyle=("--", ":", "-.")[j % 3], lw=1, label=name)
        ax.set_xticks(range(len(labels)), labels)
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        ax.axhline(0.0, color="black", lw=0.6)
        if k > 1 or hlines:
            # headroom above the tallest bar so that the legend never hides one
            top = max([0.0, *(float(v) for vs in series.values() for v in vs if v is not None)])
            top = max([top, *(hlines or {}).values()])
            ax.set_ylim(top=top * 1.35 if top > 0 else 0.1)
            ax.legend(fontsize=8, frameon=False, loc="upper left", ncol=2)

    return png(draw, **size)


def lines_png(
    x: Sequence[float],
    series: Mapping[str, Sequence[float]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    markers: bool = True,
    **size: Any,
) -> bytes:
    """One line per series over a shared x axis."""

    def draw(fig: Any) -> None:
        ax = fig.add_subplot()
        for j, (name, ys) in enumerate(series.items()):
            ax.plot(
                list(x),
                list(ys),
                marker="o" if markers else None,
                ms=3,
                label=name,
                color=PALETTE[j % len(PALETTE)],
            )
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if len(series) > 1:
            ax.legend(fontsize=8, frameon=False)

    return png(draw, **size)


def table_png(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    title: str,
    pass_fail_col: int | None = None,
    col_widths: Sequence[float] | None = None,
    width_in: float = 7.2,
    row_in: float = 0.24,
    fontsize: float = 8,
) -> bytes:
    """A table as a figure: one line per row, the header shaded; cells of ``pass_fail_col`` that
    read PASS / FAIL are filled green / orange. The height follows the number of rows."""

    def draw(fig: Any) -> None:
        ax = fig.add_subplot()
        ax.set_axis_off()
        ax.set_title(title, fontsize=fontsize + 1.5)
        tab = ax.table(
            cellText=[[str(c) for c in r] for r in rows],
            colLabels=list(columns),
            colWidths=None if col_widths is None else list(col_widths),
            cellLoc="left",
            loc="upper center",
            bbox=(0.0, 0.0, 1.0, 1.0),
        )
        tab.auto_set_font_size(False)
        tab.set_fontsize(fontsize)
        for (r, c), cell in tab.get_celld().items():
            # matplotlib pads by a fraction of the cell width; a fixed ~0.05 in reads better
            cell.PAD = min(0.1, 0.05 / max(cell.get_width() * width_in, 1e-6))
            cell.set_edgecolor("#BBBBBB")
            cell.set_linewidth(0.5)
            if r == 0:
                cell.set_facecolor("#E8E8E8")
                cell.set_text_props(weight="bold")
            elif c == pass_fail_col:
                cell.set_facecolor(PASS_FAIL_FILL.get(str(rows[r - 1][c]), "white"))

    height = 0.45 + row_in * (len(rows) + 1)
    return png(draw, width_in=width_in, height_in=height)
