"""Targets, position bias and calibration of a probabilistic autorater.

Usage::

    from rewardkit.autorater import (
        expected_calibration_error, position_consistency, preference_target, reliability_diagram)
    preference_target(["B", "B", "A"])          # '<probability>0.67</probability>'
    pc = position_consistency([0.8, 0.3], [0.3, 0.6])   # p(B≻A) shown (A, B); p(A≻B) shown (B, A)
    pc.consistency, pc.mean_position_bias
    cal = expected_calibration_error(p, y, n_bins=10)
    png = reliability_diagram(cal)              # bytes; needs the report extra (matplotlib)

``preference_target`` is the SFT side of seed 001: with dense multi-annotator labels the target
text states the empirical probability that B is better. ``position_consistency`` is the swap test
of the paper's Table 2. ECE and the reliability diagram go beyond the seed.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from .._json import JsonMixin, write_atomic
from .._optional import require
from .._validation import Interval, validate_params
from ..errors import ConfigError
from .parse import DEFAULT_TAG, _check_tag
from .rewards import _as_labels, _as_probabilities, _valid_and_safe

__all__ = [
    "PositionConsistency",
    "ReliabilityBins",
    "expected_calibration_error",
    "position_consistency",
    "preference_target",
    "reliability_diagram",
]

_VOTES = {"A": Fraction(0), "B": Fraction(1)}


def _vote(v: Any, i: int) -> Fraction:
    if isinstance(v, str) and v in _VOTES:
        return _VOTES[v]
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        x = float(v)
        if math.isfinite(x) and 0.0 <= x <= 1.0:
            return Fraction(repr(x))  # the decimal the annotator wrote, not its binary float
    raise ConfigError(
        "The 'annotations' parameter of preference_target must hold 'A', 'B' or numbers in "
        f"[0, 1] (1 = B better, 0.5 = tie). Got {v!r} at index {i}."
    )


@validate_params({"decimals": [Interval(int, 1, 100)]})
def preference_target(
    annotations: Sequence[Any], *, decimals: int = 2, tag: str = DEFAULT_TAG
) -> str:
    """The SFT target text ``<probability>q</probability>`` with q the share of votes for B.

    Rounding: q is computed exactly (as a fraction) and rounded to ``decimals`` places with
    halves rounded up, then written with exactly ``decimals`` places: 2 of 3 → ``0.67``,
    1 of 8 → ``0.13`` (0.125 rounded up), 3 of 3 → ``1.00``. The text parses back with
    :func:`parse_probability` to the rounded value.
    """
    func = "preference_target"
    tag = _check_tag(tag)
    decimals = int(decimals)
    if isinstance(annotations, (str, bytes)) or len(annotations) == 0:
        raise ConfigError(
            f"The 'annotations' parameter of {func} must be a non-empty sequence of votes "
            f"('A', 'B' or numbers in [0, 1]). Got {annotations!r}."
        )
    q = sum((_vote(v, i) for i, v in enumerate(annotations)), Fraction(0)) / len(annotations)
    scale = 10**decimals
    k = math.floor(q * scale + Fraction(1, 2))  # halves up; q ≥ 0
    whole, frac = divmod(k, scale)
    return f"<{tag}>{whole}.{frac:0{decimals}d}</{tag}>"


@dataclass(frozen=True)
class PositionConsistency(JsonMixin):
    """Swap test over pairs: p_ab = p(B≻A) shown as (A, B); p_ba = p(A≻B) shown as (B, A).

    A position-consistent rater has p_ab + p_ba = 1. Fields over valid pairs (both parsed):
    ``consistency`` share whose preferred response survives the swap (sign(p_ab − ½) =
    −sign(p_ba − ½)); ``mean_abs_gap`` mean |p_ab + p_ba − 1|; ``mean_position_bias`` mean
    (p_ab + p_ba − 1), > 0 when the response shown second is favoured. None when no pair is valid.
    """

    n_pairs: int
    n_valid: int
    consistency: float | None
    mean_abs_gap: float | None
    max_abs_gap: float | None
    mean_position_bias: float | None


def position_consistency(p_ab: Any, p_ba: Any) -> PositionConsistency:
    """Position-bias diagnostic over swapped pairs (probabilities; None / NaN = invalid)."""
    func = "position_consistency"
    a = _as_probabilities(p_ab, func).ravel()  # (n,)
    b = _as_probabilities(p_ba, func).ravel()  # (n,)
    if a.shape != b.shape:
        raise ConfigError(
            f"The 'p_ab' and 'p_ba' parameters of {func} must have one entry per pair. Got "
            f"{a.shape[0]} and {b.shape[0]}."
        )
    va, sa = _valid_and_safe(a)
    vb, sb = _valid_and_safe(b)
    both = va & vb
    n_valid = int(both.sum())
    if n_valid == 0:
        return PositionConsistency(a.shape[0], 0, None, None, None, None)
    gap = (sa + sb - 1.0)[both]
    same = np.sign(sa - 0.5)[both] == -np.sign(sb - 0.5)[both]
    return PositionConsistency(
        n_pairs=a.shape[0],
        n_valid=n_valid,
        consistency=float(same.mean()),
        mean_abs_gap=float(np.abs(gap).mean()),
        max_abs_gap=float(np.abs(gap).max()),
        mean_position_bias=float(gap.mean()),
    )


@dataclass(frozen=True)
class ReliabilityBins(JsonMixin):
    """Equal-width reliability bins and the expected calibration error.

    Bin b covers [edges[b], edges[b+1]) and the last bin includes 1.0. ``ece`` = Σ_b (n_b / n) ·
    |mean_y_b − mean_p_b| over the valid predictions (None when there are none). Invalid
    predictions (None, NaN, outside [0, 1]) are counted in ``n_invalid`` and left out.
    """

    n: int
    n_invalid: int
    ece: float | None
    bin_edges: tuple[float, ...]
    bin_counts: tuple[int, ...]
    bin_mean_p: tuple[float | None, ...]
    bin_mean_y: tuple[float | None, ...]


@validate_params({"n_bins": [Interval(int, 1, 10**6)]})
def expected_calibration_error(probs: Any, labels: Any, *, n_bins: int = 10) -> ReliabilityBins:
    """ECE of stated probabilities against labels in [0, 1] (soft labels allowed)."""
    func = "expected_calibration_error"
    n_bins = int(n_bins)
    p = _as_probabilities(probs, func).ravel()  # (n,)
    y = _as_labels(labels, func, "labels").ravel()  # (n,)
    if p.shape != y.shape:
        raise ConfigError(
            f"The 'labels' parameter of {func} must have one label per probability "
            f"({p.shape[0]}). Got {y.shape[0]}."
        )
    valid, safe = _valid_and_safe(p)
    pv, yv = safe[valid], y[valid]
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    # (n_valid,) bin of each p: edges[b] <= p < edges[b+1], and p = 1.0 in the last bin.
    idx = np.minimum(np.searchsorted(edges, pv, side="right") - 1, n_bins - 1)
    counts = np.bincount(idx, minlength=n_bins)
    sum_p = np.bincount(idx, weights=pv, minlength=n_bins)
    sum_y = np.bincount(idx, weights=yv, minlength=n_bins)
    nonempty = counts > 0
    mean_p = np.divide(sum_p, counts, out=np.zeros(n_bins), where=nonempty)
    mean_y = np.divide(sum_y, counts, out=np.zeros(n_bins), where=nonempty)
    n_valid = int(valid.sum())
    ece = float((counts * np.abs(mean_y - mean_p)).sum() / n_valid) if n_valid else None
    return ReliabilityBins(
        n=int(p.shape[0]),
        n_invalid=int((~valid).sum()),
        ece=ece,
        bin_edges=tuple(float(e) for e in edges),
        bin_counts=tuple(int(c) for c in counts),
        bin_mean_p=tuple(float(m) if c else None for m, c in zip(mean_p, counts)),
        bin_mean_y=tuple(float(m) if c else None for m, c in zip(mean_y, counts)),
    )


def reliability_diagram(
    cal: ReliabilityBins, path: str | Path | None = None, *, title: str = "Reliability diagram"
) -> bytes:
    """PNG bytes of the reliability diagram (written atomically to ``path`` when given).

    Needs the report extra (matplotlib); rendered with the Agg backend, without a timestamp or
    version in the PNG metadata, so the same ``cal`` gives the same bytes.
    """
    require("matplotlib", "report", "reliability_diagram")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4.5, 4.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    edges = np.asarray(cal.bin_edges)
    width = np.diff(edges)
    acc = [0.0 if m is None else m for m in cal.bin_mean_y]
    ax.bar(edges[:-1], acc, width=width, align="edge", edgecolor="black", alpha=0.7, label="mean y")
    ax.plot([0, 1], [0, 1], "k--", linewidth=1, label="perfect calibration")
    pts = [(p, y) for p, y in zip(cal.bin_mean_p, cal.bin_mean_y) if p is not None]
    if pts:
        ax.plot(*zip(*pts), "o", color="tab:red", label="mean p (bin)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("stated p(B ≻ A)")
    ax.set_ylabel("observed share B ≻ A")
    ece = "n/a" if cal.ece is None else f"{cal.ece:.4f}"
    ax.set_title(f"{title}\nECE = {ece}  (n = {cal.n - cal.n_invalid}, invalid {cal.n_invalid})")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    data = buf.getvalue()
    if path is not None:
        write_atomic(path, data)
    return data
