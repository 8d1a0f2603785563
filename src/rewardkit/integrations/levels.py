"""Level rewards as a reward stack: step judgments read from an episode field.

Usage::

    from rewardkit.integrations.levels import levels_stack
    stack = levels_stack(column="step_levels", recipe="B")
    stack.score({"step_levels": [3] * 12 + [0]}).total      # 0.2353846... (12/13 · 0.85 · 0.30)

The stack has one weighted component, ``trajectory`` (the recipe's value; ``None`` when every
step is masked, so the episode is unscorable rather than 0), and two logged metrics (weight 0):
``frac_masked`` (masked steps / steps) and ``has_l0`` (1.0 when an unmasked step has level 0;
None when every step is masked).
It plugs into every adapter (TRL, verl, OpenRLHF). Malformed judgments are recorded as the
component's error on the result, like any verifier failure.
"""

from __future__ import annotations

import threading
from typing import Any, Literal

from .._validation import Interval, Options, validate_params
from ..errors import ConfigError
from ..levels import DEFAULT_MAPPING, RECIPES, LevelMapping, score_trajectory
from ..stack import Component, RewardStack

__all__ = ["levels_stack"]

# the parameters every levels entry point shares (levels_stack, trl.levels_reward_func)
LEVELS_PARAMS: dict[str, list[Any]] = {
    "column": ["str"],
    "recipe": [Options(RECIPES)],
    "mapping": [LevelMapping],
    "gamma": [Interval(float, 0, 1)],
    "session": ["boolean"],
}


@validate_params(LEVELS_PARAMS)
def levels_stack(
    *,
    column: str = "step_levels",
    recipe: Literal["A", "B", "C"] = "B",
    mapping: LevelMapping = DEFAULT_MAPPING,
    gamma: float = 0.30,
    session: bool = False,
) -> RewardStack:
    """A stack scoring ``episode[column]`` (judged steps) with ``score_trajectory``."""
    fn = "levels_stack"
    if not isinstance(column, str) or not column:
        raise ConfigError(
            f"The 'column' parameter of {fn} must be a non-empty string. Got {column!r}."
        )
    g = float(gamma)

    last = threading.local()  # the three components score one episode once (per thread)

    def score(ep: Any) -> Any:
        if getattr(last, "episode", None) is ep:
            return last.result
        if column not in ep:
            raise KeyError(f"episode has no field {column!r} (the step judgments)")
        result = score_trajectory(
            ep[column], recipe=recipe, mapping=mapping, gamma=g, session=session
        )
        last.episode, last.result = ep, result  # holding ep keeps its identity from being reused
        return result

    def trajectory(ep: Any) -> float | None:
        return score(ep).value

    def frac_masked(ep: Any) -> float | None:
        meta = score(ep).meta
        return meta["n_masked"] / meta["n_steps"] if meta["n_steps"] else None

    def has_l0(ep: Any) -> float | None:
        r = score(ep)
        return None if r.value is None else float(r.meta["has_unmasked_l0"])

    return RewardStack(
        components=[
            Component("trajectory", trajectory, range=(0.0, mapping.ceiling)),  # step means
            Component("frac_masked", frac_masked, weight=0.0),
            Component("has_l0", has_l0, weight=0.0),
        ],
        version=f"levels-{recipe}-gamma{g:g}-{'session' if session else 'all_final'}-"
        f"{mapping.hash.removeprefix('sha256:')[:12]}",
    )
