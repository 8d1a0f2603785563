"""Level-based step rewards: a judge's per-step levels become step and trajectory rewards.

Usage::

    from rewardkit.levels import Step, score_trajectory
    r = score_trajectory([Step(3)] * 12 + [Step(0)], recipe="B")
    r.value            # 0.2353846... = 12/13 * 0.85 * 0.30
    r.mask_reasons     # (None, ..., None)

A step judge (rule engine, PRM, LLM judge, human) emits one level per step: 0, 1, 2, 3, or −1
("cannot evaluate"). This layer never changes the judge's levels; it maps them through a
validated :class:`LevelMapping`, masks what must not count, and combines the rest by a recipe
(seed 000 §2–3):

====== ========================================================== ===================
recipe value                                                      differs from A by
====== ========================================================== ===================
A      mean of the unmasked step rewards                          (baseline)
B      A × gamma if and only if an unmasked step has level 0       hard-penalty effect
C      weighted mean, per-step weights from a PRM (uniform → = A)  PRM-weighting effect
====== ========================================================== ===================

Masks, in precedence order: level −1 → ``level_minus_one``; then, only with ``session=True``:
review ``revoked`` → ``revoked``, ``provisional`` → ``provisional_not_final``, no review record →
``no_review_record``. A step's ``review`` is its status in a review session (``final``,
``provisional``, ``revoked`` or None). Masked steps are in neither numerator nor denominator; a
trajectory with every step masked has ``value is None`` (never a fake 0). ``session=False``
(legacy and benchmark data, no review session) treats every step as final:
``meta["review_mode"] == "all_final"``.

Why the spike-in threshold is 0.30 (seed 000 §5): inject one L0 into a clean all-L3 trajectory
of n steps; recipe B gives (n−1)/n · 0.85 · γ, so for n ≥ 2 the drop is at least
0.85 · (1 − γ) · (n−1)/n ≥ 0.85 × 0.7 × 0.5 = 0.2975 ≈ 0.30 (the n = 2 boundary). On the 12-step
substrates plus the injected step (n = 13) the measured drop is 0.85 − 0.235385 = 0.6146.

Every value is ``experimental_uncalibrated`` (the seed's C3 flag): no consumer may treat it as
a calibrated signal for production decisions.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from ._io import read_toml
from ._json import JsonMixin, content_hash
from ._validation import Each, Interval, Options, check_real, validate_params
from .errors import ConfigError, InputError, MappingError, RenamedFieldWarning

__all__ = [
    "DEFAULT_MAPPING",
    "MASK_REASONS",
    "RECIPES",
    "REVIEWS",
    "LevelMapping",
    "Step",
    "TrajectoryReward",
    "score_trajectory",
]

UNEVALUABLE = -1
REVIEWS = ("final", "provisional", "revoked")
RECIPES: tuple[Literal["A", "B", "C"], ...] = ("A", "B", "C")
# In precedence order: the first that applies is the step's reason.
MASK_REASONS = ("level_minus_one", "revoked", "provisional_not_final", "no_review_record")


@dataclass(frozen=True)
class LevelMapping(JsonMixin):
    """A validated map from judge level to step reward.

    Rules: levels are the ints 0..L without gaps; −1 is reserved for "cannot evaluate" and is
    never mapped; every value lies in [0, ceiling]; values are non-decreasing in level; the top
    level maps exactly to the ceiling. A broken rule raises :class:`MappingError` naming the
    level, its value and the rule.
    """

    values: Mapping[int, float] = field(default_factory=lambda: {0: 0.0, 1: 0.30, 2: 0.60, 3: 0.85})
    ceiling: float = 0.85

    def __post_init__(self) -> None:
        ceiling = self.ceiling
        if (
            isinstance(ceiling, bool)
            or not isinstance(ceiling, (int, float))
            or not math.isfinite(ceiling)
            or ceiling <= 0
        ):
            raise MappingError(
                f"The ceiling of a LevelMapping must be a finite float > 0. Got {ceiling!r}."
            )
        if not isinstance(self.values, Mapping) or not self.values:
            raise MappingError(
                f"The values of a LevelMapping must be a non-empty mapping of "
                f"level -> reward. Got {self.values!r}."
            )
        clean: dict[int, float] = {}
        for level, value in self.values.items():
            if isinstance(level, bool) or not isinstance(level, int):
                raise MappingError(f"Level {level!r} is not an int; levels are the ints 0..L.")
            if level == UNEVALUABLE:
                raise MappingError(
                    f"Level -1 is mapped to {value!r}, but -1 is reserved for "
                    f"'cannot evaluate': such steps are masked, never mapped."
                )
            if level < 0:
                raise MappingError(
                    f"Level {level} (value {value!r}) is negative; levels are "
                    f"the ints 0..L and -1 is reserved."
                )
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
            ):
                raise MappingError(
                    f"Level {level} maps to {value!r}; values must be finite "
                    f"floats in [0, {ceiling:g}]."
                )
            if value < 0:
                raise MappingError(
                    f"Level {level} maps to {value!r}, below 0; values must lie "
                    f"in [0, {ceiling:g}]."
                )
            if value > ceiling:
                raise MappingError(
                    f"Level {level} maps to {value!r}, above the ceiling "
                    f"{ceiling:g}; values must lie in [0, {ceiling:g}]."
                )
            clean[level] = float(value)
        levels = sorted(clean)
        if levels != list(range(len(levels))):
            missing = sorted(set(range(levels[-1] + 1)) - set(levels))
            raise MappingError(
                f"Levels must be 0..L without gaps; level {missing[0]} is missing from {levels}."
            )
        for lo, hi in itertools.pairwise(levels):
            if clean[hi] < clean[lo]:
                raise MappingError(
                    f"Level {hi} maps to {clean[hi]!r}, below level {lo}'s "
                    f"{clean[lo]!r}: the mapping must be non-decreasing in level."
                )
        top = levels[-1]
        if clean[top] != float(ceiling):
            raise MappingError(
                f"The top level {top} maps to {clean[top]!r}, below the ceiling "
                f"{ceiling:g}: the top level must map exactly to the ceiling."
            )
        object.__setattr__(self, "values", dict(sorted(clean.items())))
        object.__setattr__(self, "ceiling", float(ceiling))

    @property
    def levels(self) -> tuple[int, ...]:
        return tuple(self.values)

    @cached_property
    def hash(self) -> str:
        """Content hash of the mapping, recorded in every trajectory reward's meta."""
        return content_hash(self.to_dict())

    def reward(self, level: int) -> float:
        return self.values[level]

    @classmethod
    def from_toml(cls, path: str | Path) -> LevelMapping:
        """Load ``ceiling = 0.85`` and a ``[values]`` table (``0 = 0.0``, ``3 = 0.85``, …)."""
        p = Path(path)
        data = read_toml(p)
        unknown = sorted(set(data) - {"ceiling", "values"})
        if unknown:
            raise InputError(
                "unknown key; accepted keys are 'ceiling' and 'values'",
                path=str(p),
                field=unknown[0],
            )
        if "values" not in data or not isinstance(data["values"], dict):
            raise InputError(
                "missing table [values] of level = reward", path=str(p), field="values"
            )
        values: dict[int, Any] = {}
        for key, value in data["values"].items():
            try:
                values[int(key)] = value
            except ValueError:
                raise InputError(
                    "level keys must be integers", path=str(p), field=f"values.{key}"
                ) from None
        try:
            return cls(
                values=values, ceiling=data.get("ceiling", max(values.values(), default=0.0))
            )
        except MappingError as exc:
            raise MappingError(f"{p}: {exc}") from None


DEFAULT_MAPPING = LevelMapping()


@dataclass(frozen=True, init=False)
class Step(JsonMixin):
    """One judged step: the judge's ``level`` (0..L, or −1) and its ``review``, the step's
    status in a review session (``final``, ``provisional``, ``revoked``; None = no record).

    The old keyword and attribute name ``verdict`` still work for one version, with a
    :class:`~rewardkit.errors.RenamedFieldWarning`."""

    level: int
    review: str | None = None

    def __init__(self, level: int, review: str | None = None, **old: Any) -> None:
        if old:
            if set(old) != {"verdict"} or review is not None:
                raise TypeError(
                    f"Step() takes 'level' and 'review'; got {sorted(old)}"
                    + (" besides 'review'" if review is not None else "")
                )
            RenamedFieldWarning.warn(
                "Step(verdict=...) is deprecated; use Step(review=...) (the next version "
                "refuses 'verdict')",
            )
            review = old["verdict"]
        object.__setattr__(self, "level", level)
        object.__setattr__(self, "review", review)
        self.__post_init__()

    @property
    def verdict(self) -> str | None:
        """Deprecated name of :attr:`review`."""
        RenamedFieldWarning.warn(
            "Step.verdict is deprecated; use Step.review (the next version removes it)",
        )
        return self.review

    def __post_init__(self) -> None:
        if isinstance(self.level, bool) or not isinstance(self.level, int) or self.level < -1:
            raise ConfigError(
                f"The 'level' of a Step must be an int >= -1 (-1 = cannot "
                f"evaluate). Got {self.level!r}."
            )
        if self.review is not None and self.review not in REVIEWS:
            raise ConfigError(
                f"The 'review' of a Step must be one of {', '.join(REVIEWS)} "
                f"or None. Got {self.review!r}."
            )


@dataclass(frozen=True)
class TrajectoryReward(JsonMixin):
    """The reward of one trajectory under one recipe. ``value is None`` when all is masked."""

    value: float | None
    step_rewards: tuple[float | None, ...]
    mask_reasons: tuple[str | None, ...]
    recipe: str
    meta: Mapping[str, Any]
    experimental_uncalibrated: bool = True


StepLike = Step | int | Mapping[str, Any]
Weights = Sequence[float] | Callable[[Sequence[Step]], Sequence[float]]


def _as_steps(steps: Sequence[StepLike]) -> tuple[Step, ...]:
    old = next(
        (
            i
            for i, s in enumerate(steps)
            if isinstance(s, Mapping) and "verdict" in s and "review" not in s
        ),
        None,
    )
    if old is not None:
        RenamedFieldWarning.warn(
            f"Step {old}: the key 'verdict' is deprecated; rename it to 'review' (read as "
            "'review' for now; the next version refuses 'verdict')",
        )
    return tuple(_as_step(s, i) for i, s in enumerate(steps))


def _as_step(s: StepLike, i: int) -> Step:
    if isinstance(s, Step):
        return s
    if isinstance(s, int) and not isinstance(s, bool):
        return Step(s)
    if isinstance(s, Mapping):
        if "verdict" in s and "review" in s:
            raise ConfigError(
                f"Step {i} has both 'verdict' (the old name) and 'review'; give only 'review'."
            )
        name = "verdict" if "verdict" in s else "review"  # "verdict": warned by _as_steps
        unknown = sorted(set(s) - {"level", name})
        if unknown or "level" not in s:
            raise ConfigError(
                f"Step {i} must have a 'level' and optionally a 'review'. Got keys {sorted(s)}."
            )
        review = s.get(name)
        if review is not None and review not in REVIEWS:
            raise ConfigError(
                f"Step {i}: the '{name}' must be one of {', '.join(REVIEWS)} or None. "
                f"Got {review!r:.60}."
            )
        return Step(s["level"], review)
    raise ConfigError(
        f"Step {i} must be a Step, an int level or a mapping with 'level'. Got {s!r}."
    )


def _mask_reason(step: Step, session: bool) -> str | None:
    if step.level == UNEVALUABLE:
        return "level_minus_one"
    if not session:
        return None
    if step.review == "revoked":
        return "revoked"
    if step.review == "provisional":
        return "provisional_not_final"
    if step.review is None:
        return "no_review_record"
    return None


def _resolve_weights(weights: Weights | None, steps: tuple[Step, ...]) -> list[float]:
    fn = "score_trajectory"
    raw = (
        [1.0] * len(steps)
        if weights is None
        else (weights(steps) if callable(weights) else weights)
    )
    try:
        raw = list(raw)
    except TypeError:
        raise ConfigError(
            f"The 'weights' parameter of {fn} must be a sequence of floats "
            f"or a callable returning one. Got {raw!r}."
        ) from None
    if len(raw) != len(steps):
        raise ConfigError(
            f"The 'weights' parameter of {fn} must give one weight per step "
            f"({len(steps)}). Got {len(raw)}."
        )
    return [check_real(w, f"weights[{i}]", fn, low=0.0) for i, w in enumerate(raw)]


@validate_params(
    {
        "recipe": [Options(RECIPES)],
        "mapping": [LevelMapping],
        "gamma": [Interval(float, 0, 1)],
        "weights": ["callable", Each((Interval(float, 0, None),)), None],
        "session": ["boolean"],
    }
)
def score_trajectory(
    steps: Sequence[StepLike],
    *,
    recipe: Literal["A", "B", "C"] = "B",
    mapping: LevelMapping = DEFAULT_MAPPING,
    gamma: float = 0.30,
    weights: Weights | None = None,
    session: bool = False,
) -> TrajectoryReward:
    """Score one trajectory of judged steps under recipe A, B (default) or C.

    ``weights`` (recipe C only): one non-negative weight per step, or a callable that takes the
    steps and returns them (the PRM interface); the default is uniform 1.0, which makes C equal
    A exactly. ``session=True`` consumes only steps reviewed ``final``.
    """
    fn = "score_trajectory"
    g = float(gamma)
    if weights is not None and recipe != "C":
        raise ConfigError(
            f"The 'weights' parameter of {fn} applies to recipe 'C' only. "
            f"Got weights with recipe {recipe!r}."
        )
    if isinstance(steps, (str, bytes)) or not isinstance(steps, Sequence):
        raise ConfigError(
            f"The 'steps' parameter of {fn} must be a sequence of steps. "
            f"Got {type(steps).__name__}."
        )
    st = _as_steps(steps)
    for i, s in enumerate(st):
        if s.level != UNEVALUABLE and s.level not in mapping.values:
            raise ConfigError(
                f"Step {i} has level {s.level}, which the mapping does not "
                f"know; accepted levels are -1 and {list(mapping.levels)}."
            )

    reasons = tuple(_mask_reason(s, session) for s in st)
    rewards = tuple(None if r is not None else mapping.reward(s.level) for s, r in zip(st, reasons))
    kept = [i for i, r in enumerate(reasons) if r is None]
    has_l0 = any(st[i].level == 0 for i in kept)

    value: float | None = None
    weight_sum: float | None = None
    if kept:
        vals = [mapping.reward(st[i].level) for i in kept]
        if recipe == "C":
            w = _resolve_weights(weights, st)
            weight_sum = math.fsum(w[i] for i in kept)
            # Unmasked steps that all weigh 0 cannot be averaged: None, never a fake 0.
            # Weights are scaled by their maximum first, so tiny (subnormal) weights do not
            # underflow in w·r; uniform weights of 1.0 stay bit-identical (C equals A exactly).
            top = max(w[i] for i in kept)
            mean = (
                None
                if weight_sum == 0
                else math.fsum((w[i] / top) * vals[j] for j, i in enumerate(kept))
                / math.fsum(w[i] / top for i in kept)
            )
        else:
            # fsum is exactly rounded, so the mean does not depend on the order of the steps.
            mean = math.fsum(vals) / len(vals)
        if mean is not None:
            # A mean lies between its extremes; clamping removes the last-bit rounding excess.
            mean = min(max(mean, min(vals)), max(vals))
            value = mean * g if (recipe == "B" and has_l0) else mean

    counts = {r: reasons.count(r) for r in MASK_REASONS if r in reasons}
    meta: dict[str, Any] = {
        "review_mode": "session" if session else "all_final",
        "n_steps": len(st),
        "n_masked": len(st) - len(kept),
        "mask_counts": counts,
        "has_unmasked_l0": has_l0,
        "gamma": g,
        "mapping_hash": mapping.hash,
    }
    if recipe == "C":
        meta["weight_sum"] = weight_sum
    return TrajectoryReward(
        value=value, step_rewards=rewards, mask_reasons=reasons, recipe=recipe, meta=meta
    )
