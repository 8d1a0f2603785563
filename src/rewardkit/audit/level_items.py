"""Level-based step rewards as an item reward: the generic audit on judged steps you supply.

Usage (an items file whose lines carry ``levels`` — one judged level per step, −1 = cannot
evaluate — and optionally ``reviews``, each step's status in a review session: ``final``,
``provisional``, ``revoked`` or null for no record; with ``reviews`` only ``final`` steps count)::

    rewardkit validate --reward rewardkit.audit.level_items:recipe_b --items steps.jsonl \
        --golden golden.jsonl --spike-in spike_in.jsonl

    # another mapping, ceiling or recipe: your own zero-argument factory
    from rewardkit.audit.level_items import LevelItemReward
    def make():
        return LevelItemReward(recipe="B", mapping=LevelMapping({0: 0, 1: .3, 2: .6, 3: .9},
                                                               ceiling=0.9))

The declared range is the level mapping's: [0, ceiling] (0.85 for the seed's mapping; the
ceiling is the mapping's option, not a threshold hidden in a gate). A trajectory whose steps are
all −1 cannot be scored (None). The bio-audit world adds a judge that produces the levels;
here they come with your data, so no judge and no shipped benchmark is involved. Items that
still name ``reviews`` by its old name ``verdicts`` are read the same, with a
:class:`~rewardkit.errors.RenamedFieldWarning`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import InputError, RenamedFieldWarning
from ..levels import DEFAULT_MAPPING, REVIEWS, LevelMapping, Step, score_trajectory

__all__ = ["LevelItemReward", "recipe_a", "recipe_b", "recipe_c"]


@dataclass(frozen=True)
class LevelItemReward:
    """``reward(item)``: :func:`~rewardkit.levels.score_trajectory` of ``item["levels"]``."""

    recipe: Literal["A", "B", "C"] = "B"
    mapping: LevelMapping = DEFAULT_MAPPING
    gamma: float = 0.30
    field: str = "levels"

    @property
    def range(self) -> tuple[float, float]:
        return (0.0, self.mapping.ceiling)

    @property
    def __name__(self) -> str:
        return f"levels_{self.recipe}"

    def __call__(self, item: Mapping[str, Any]) -> float | None:
        levels = item.get(self.field)
        if not isinstance(levels, list) or not all(
            isinstance(x, int) and not isinstance(x, bool) for x in levels
        ):
            raise InputError(
                f"expected a list of int levels (-1 = cannot evaluate); got {levels!r:.60}",
                field=self.field,
            )
        name = "reviews"
        if "verdicts" in item and "reviews" in item:
            raise InputError(
                "has both 'verdicts' (the old name) and 'reviews'; give only 'reviews'",
                field="verdicts",
            )
        if "verdicts" in item:
            name = "verdicts"
            if not getattr(self, "_warned_old_name", False):  # once: a file has many lines
                object.__setattr__(self, "_warned_old_name", True)
                first = (
                    f" (first in item {item['id']!r})" if isinstance(item.get("id"), str) else ""
                )
                RenamedFieldWarning.warn(
                    f"field 'verdicts' is deprecated{first}; rename it to 'reviews' in your "
                    "items file (read as 'reviews' for now; the next version refuses 'verdicts')",
                )
            item = {("reviews" if k == "verdicts" else k): v for k, v in item.items()}
        reviews = item.get("reviews")
        if reviews is not None and (not isinstance(reviews, list) or len(reviews) != len(levels)):
            raise InputError(
                f"expected null or a list of one review per level ({len(levels)}: final, "
                f"provisional, revoked or null); got {reviews!r:.60}",
                field=name,
            )
        for i, v in enumerate(reviews or ()):
            if v is not None and v not in REVIEWS:
                raise InputError(
                    f"expected final, provisional, revoked or null; got {v!r:.40}",
                    field=f"{name}[{i}]",
                )
        if reviews is None:
            steps = [Step(x) for x in levels]
        else:
            steps = [Step(x, v) for x, v in zip(levels, reviews, strict=True)]
        out = score_trajectory(
            steps,
            recipe=self.recipe,
            mapping=self.mapping,
            gamma=self.gamma,
            session=reviews is not None,
        )
        return out.value


def recipe_a() -> LevelItemReward:
    """Recipe A (mean of step rewards) with the seed's mapping."""
    return LevelItemReward(recipe="A")


def recipe_b() -> LevelItemReward:
    """Recipe B (the hard L0 penalty, γ = 0.30) with the seed's mapping."""
    return LevelItemReward(recipe="B")


def recipe_c() -> LevelItemReward:
    """Recipe C (PRM-weighted; uniform weights) with the seed's mapping."""
    return LevelItemReward(recipe="C")
