"""What the audit needs from a judge, a reward and a taskset: small protocols, so a user can
audit their own reward (and judge) with the same gates.

Usage::

    from rewardkit.audit import LevelReward, validate
    validate(judge=my_judge, reward=LevelReward(gamma=0.3))   # or any object that fits Reward

* :class:`Judge` — ``audit(trajectory) -> [judgment]`` where each judgment has an int
  ``level`` (−1..3); ``rewardkit.bioaudit.Engine`` is one.
* :class:`Reward` — ``reward(steps, recipe=…, session=…)`` returning a
  :class:`~rewardkit.levels.TrajectoryReward`, any object with ``value`` and ``to_dict()``, or a
  plain ``float | None``; ``recipes`` names the ablations and ``default_recipe`` the one trained on.
* :class:`Task` — ``task_id``, ``decisions``, ``reviews`` (None = no review session) and the
  gold counts ``n_gold_correct / n_gold_error / n_gold_edge`` (``rewardkit.bioaudit``'s
  ``BenchmarkTask``); :class:`Golden` — ``trajectory_id``, ``decisions``, ``expected_levels``.

A reward with a ``factory`` attribute ``("module:callable", kwargs)`` can be rebuilt in a fresh
process (the determinism gate's second run); others can pass ``reward_factory=`` to validate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .._json import to_plain
from ..errors import ConfigError
from ..levels import DEFAULT_MAPPING, RECIPES, LevelMapping, Step, score_trajectory

__all__ = [
    "Golden",
    "Judge",
    "JudgmentLike",
    "LevelReward",
    "Reward",
    "Task",
    "output_value",
]


@runtime_checkable
class JudgmentLike(Protocol):
    @property
    def level(self) -> int: ...


@runtime_checkable
class Judge(Protocol):
    def audit(self, trajectory: Sequence[Mapping[str, Any]]) -> Sequence[JudgmentLike]: ...


@runtime_checkable
class Reward(Protocol):
    @property
    def recipes(self) -> tuple[str, ...]: ...

    @property
    def default_recipe(self) -> str: ...

    def __call__(self, steps: Sequence[Step], *, recipe: str, session: bool) -> Any: ...


class Task(Protocol):
    @property
    def task_id(self) -> str: ...

    @property
    def decisions(self) -> Sequence[Mapping[str, Any]]: ...

    @property
    def reviews(self) -> Sequence[str | None] | None: ...

    @property
    def n_gold_correct(self) -> int: ...

    @property
    def n_gold_error(self) -> int: ...

    @property
    def n_gold_edge(self) -> int: ...


class Golden(Protocol):
    @property
    def trajectory_id(self) -> str: ...

    @property
    def decisions(self) -> Sequence[Mapping[str, Any]]: ...

    @property
    def expected_levels(self) -> Sequence[int]: ...


def output_value(out: Any, who: str = "reward") -> float | None:
    """The trajectory value of a reward's output: ``out.value``, ``out["value"]`` or the float."""
    value = out.get("value") if isinstance(out, Mapping) else getattr(out, "value", out)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(
            f"The {who} must return a float, None or an object with a 'value'. Got {out!r:.80}."
        )
    return float(value)


@dataclass(frozen=True)
class LevelReward:
    """rewardkit's level reward (seed 000 §2): :func:`~rewardkit.levels.score_trajectory` with a
    fixed mapping, gamma and (recipe C) PRM weights."""

    mapping: LevelMapping = DEFAULT_MAPPING
    gamma: float = 0.30
    default_recipe: str = "B"
    recipes: tuple[str, ...] = field(default=RECIPES)

    def __call__(self, steps: Sequence[Step], *, recipe: str, session: bool = False) -> Any:
        return score_trajectory(
            steps,
            recipe=recipe,  # type: ignore[arg-type]  # validated by score_trajectory
            mapping=self.mapping,
            gamma=self.gamma,
            session=session,
        )

    @property
    def levels(self) -> tuple[int, ...]:
        return self.mapping.levels

    @property
    def factory(self) -> tuple[str, dict[str, Any]]:
        """How a fresh process rebuilds this reward: ``(module:callable, kwargs)``."""
        return (
            "rewardkit.audit.protocols:level_reward",
            {
                "values": to_plain(self.mapping.values),
                "ceiling": self.mapping.ceiling,
                "gamma": self.gamma,
                "default_recipe": self.default_recipe,
            },
        )

    def config(self) -> dict[str, Any]:
        return {"kind": "level", **self.factory[1], "mapping_hash": self.mapping.hash}


def level_reward(
    values: Mapping[Any, float],
    ceiling: float = 0.85,
    gamma: float = 0.30,
    default_recipe: str = "B",
) -> LevelReward:
    """Build a :class:`LevelReward` from plain values (TOML / JSON keys may be strings)."""
    mapping = LevelMapping({int(k): v for k, v in values.items()}, ceiling=ceiling)
    return LevelReward(mapping=mapping, gamma=gamma, default_recipe=default_recipe)
