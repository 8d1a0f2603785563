"""The ordering guarantee of a reward stack: the range of its safe totals, and a fail value
strictly below it.

Under group-relative advantages (GRPO, RLOO, Dr. GRPO) only the order of rewards inside a group
matters, so a hard-failed episode must rank below every safe one, not merely score "low": a
fail value of 0.0 above a safe total of −0.39 hands the unsafe episode the better advantage.
Every component declares the range of its values; from the ranges, the weights, which
components may be missing (``None``) and ``renormalize``, :func:`safe_bounds` computes the
lowest and highest total a safe episode can get, exactly.

With ``renormalize`` the total over the present set S is ``W · Σ_S |w_i| u_i / Σ_S |w_i|``
(``u_i`` the contribution per unit weight, ``W`` the full weight mass): a weighted mean of the
present ``u_i``. Its minimum over the sets S ⊇ required is reached by adding optional components
in increasing order of their lowest ``u`` (a prefix of that order — Dinkelbach's argument for
ratio objectives), so every prefix is tried and the smallest kept; the maximum likewise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._validation import check_real
from .errors import ConfigError

__all__ = ["ROUNDING_RTOL", "StackBounds", "check_range", "fail_below", "safe_bounds"]

# Floating-point rounding of weighted sums: a value this close to a bound counts as on it, and
# a fail value must sit further below the lowest safe total than this.
ROUNDING_RTOL = 1e-9
BELOW_MARGIN = 0.1  # fail_value="below": lowest − 0.1 × (highest − lowest)


@dataclass(frozen=True)
class StackBounds:
    """The lowest and highest total a safe episode (no failed gate, total not None) can get.

    ``low`` / ``high`` may be ±inf when a component declares an unbounded range.
    """

    low: float
    high: float

    def to_dict(self) -> dict[str, Any]:
        def plain(x: float) -> float | str:
            return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")

        return {"low": plain(self.low), "high": plain(self.high)}


def check_range(value: Any, owner: str) -> tuple[float, float]:
    """A component's declared ``range=(lo, hi)``: two numbers, lo ≤ hi, ±inf allowed on the
    open side (lo may be -inf, hi may be inf)."""
    accepted = "a pair (lo, hi) of numbers with lo <= hi (lo may be -inf, hi may be inf)"
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise ConfigError(f"The 'range' parameter of {owner} must be {accepted}. Got {value!r}.")
    out = []
    for x in value:
        if isinstance(x, bool) or (not isinstance(x, (int, float)) and not hasattr(x, "__float__")):
            raise ConfigError(
                f"The 'range' parameter of {owner} must be {accepted}. Got {value!r}."
            )
        out.append(float(x))
    lo, hi = out
    if math.isnan(lo) or math.isnan(hi) or lo > hi or lo == math.inf or hi == -math.inf:
        raise ConfigError(f"The 'range' parameter of {owner} must be {accepted}. Got {value!r}.")
    return lo, hi


@dataclass(frozen=True)
class _Part:
    weight: float
    low: float  # lowest contribution w·v
    high: float  # highest contribution w·v
    required: bool


def _contribution(weight: float, lo: float, hi: float) -> tuple[float, float]:
    a, b = weight * lo, weight * hi
    return (a, b) if a <= b else (b, a)


def safe_bounds(
    parts: Sequence[tuple[float, tuple[float, float], bool]], *, renormalize: bool
) -> StackBounds:
    """Exact bounds of the safe total over ``parts`` = (weight, (lo, hi), required) of every
    component; weight-0 components (metrics) do not enter the total."""
    ps = [_Part(w, *_contribution(w, lo, hi), req) for w, (lo, hi), req in parts if w != 0]
    if not ps:
        raise ConfigError("a reward stack needs at least one component with a non-zero weight")
    for w, (lo, hi), _ in parts:
        ends = [x for x in (lo, hi) if math.isfinite(x)]
        if any(not math.isfinite(w * x) for x in ends):
            raise ConfigError(_OVERFLOW + f" Got weight {w:g} and range ({lo:g}, {hi:g}).")
    try:
        if renormalize:
            return StackBounds(_renorm_extreme(ps, low=True), _renorm_extreme(ps, low=False))
        return StackBounds(_plain_extreme(ps, low=True), _plain_extreme(ps, low=False))
    except (OverflowError, ValueError):  # fsum: the totals themselves overflow a float
        raise ConfigError(_OVERFLOW + " The sum of the components' extremes overflows.") from None


_OVERFLOW = (
    "The weights and ranges of a RewardStack's components must give totals a float can hold "
    "(weight × a finite range end overflows to infinity, and then no fail value ranks below "
    "every safe total). Scale the weights or ranges down."
)


def _plain_extreme(ps: list[_Part], *, low: bool) -> float:
    # Without renormalisation an absent optional component contributes 0, so each optional one
    # contributes min(0, its lowest) — but at least one weighted component must be present.
    vals = [p.low if low else p.high for p in ps]
    req = [v for v, p in zip(vals, ps, strict=True) if p.required]
    opt = [v for v, p in zip(vals, ps, strict=True) if not p.required]
    pick = min if low else max
    gain = [pick(0.0, v) for v in opt]
    if not req and all(g == 0.0 and v != 0.0 for g, v in zip(gain, opt, strict=True)):
        return pick(opt)  # every optional one would rather be absent, yet one must be present
    return math.fsum(req + gain)  # only one sign of infinity can occur here


def _renorm_extreme(ps: list[_Part], *, low: bool) -> float:
    mass = math.fsum(abs(p.weight) for p in ps)
    # per-unit-weight value of each part at its extreme
    unit = [((p.low if low else p.high) / abs(p.weight), abs(p.weight), p.required) for p in ps]
    req = [(u, w) for u, w, r in unit if r]
    opt = sorted(((u, w) for u, w, r in unit if not r), key=lambda t: t[0], reverse=not low)
    best: float | None = None
    start = 0 if req else 1  # the present set may not be empty
    for k in range(start, len(opt) + 1):
        chosen = req + opt[:k]
        mean = math.fsum(u * w for u, w in chosen) / math.fsum(w for _, w in chosen)
        value = mass * mean
        if best is None or (value < best if low else value > best):
            best = value
    assert best is not None
    return best


def fail_below(bounds: StackBounds) -> float:
    """``fail_value="below"``: ``low − 0.1 × (high − low)``; ``low − 0.1 × max(1, |low|)`` when
    the span is 0 (within rounding: equal totals computed two ways can differ in the last bits)
    or unbounded."""
    if not math.isfinite(bounds.low):
        raise ConfigError(
            "The 'fail_value' parameter of RewardStack cannot be 'below' an unbounded lowest "
            "safe total (a component declares range=(-inf, …)). Declare finite ranges, or give "
            "a number with ordering='unchecked'."
        )
    span = bounds.high - bounds.low
    # a span within 20 × the rounding tolerance is 0: a tenth of it would not be below `low` by
    # more than rounding (is_strictly_below), and 'below' must always construct
    zero = 20 * ROUNDING_RTOL * max(1.0, abs(bounds.low))
    margin = BELOW_MARGIN * span if math.isfinite(span) and span > zero else None
    if margin is None:
        margin = BELOW_MARGIN * max(1.0, abs(bounds.low))
    return bounds.low - margin


def is_strictly_below(fail_value: float, bounds: StackBounds) -> bool:
    """``fail_value`` lies below the lowest safe total by more than rounding."""
    if bounds.low == -math.inf:
        return False
    return fail_value < bounds.low - ROUNDING_RTOL * max(1.0, abs(bounds.low))


def check_fail_value(value: Any) -> float | str:
    if value == "below" and isinstance(value, str):
        return "below"
    return check_real(value, "fail_value", "RewardStack")
