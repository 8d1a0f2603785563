"""What the trainer adapters share: one reward target, the episode it scores, one record shape.

Every adapter turns what its trainer passes into an *episode* (a plain dict) and scores it with a
:class:`~rewardkit.stack.RewardStack`. A plain function ``fn(episode) -> float | None`` is
wrapped into a one-component stack, so that a crash in it is recorded as data (the stack's
``errors``) instead of killing the trainer's batch, and ``None`` keeps meaning "cannot score".

Episode keys (the adapters fill those their trainer has):

============== ===========================================================================
``prompt``     the prompt as the trainer gave it (text, or a list of chat messages)
``completion`` the completion as given (text, or a list of chat messages)
``text``       the answer text (:func:`rewardkit._completion.completion_text`: the final
               assistant message; ``""`` when the completion ends in a tool call or result)
``ground_truth`` the reference answer (TRL: the dataset column of that name; verl:
               ``ground_truth``; OpenRLHF: ``labels``)
others         TRL: every other dataset column; verl: ``data_source``, ``extra_info``;
               OpenRLHF: ``query`` (prompt + response with special tokens)
============== ===========================================================================
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable
from typing import Any

from .._validation import check_real
from ..errors import ConfigError
from ..stack import Component, RewardResult, RewardStack

__all__ = [
    "NoneRankWarning",
    "warn_if_fill_outranks",
    "as_stack",
    "check_fill",
    "default_name",
    "flat_record",
    "record_keys",
    "resolve",
]

Target = RewardStack | Callable[[Any], float | None]


def as_stack(target: Target, name: str | None, func: str) -> RewardStack:
    """The stack to score with: ``target`` itself, or a plain function as one component."""
    if isinstance(target, RewardStack):
        return target
    if not callable(target):
        raise ConfigError(
            f"The 'stack_or_fn' parameter of {func} must be a RewardStack or a callable "
            f"episode -> float | None. Got {type(target).__name__}."
        )
    comp_name = name or getattr(target, "__name__", None)
    if not comp_name or comp_name == "<lambda>":
        raise ConfigError(
            f"The 'name' parameter of {func} is required for a lambda or a callable "
            f"without __name__ (it names the reward in the trainer's logs). Got {name!r}."
        )
    # A plain function's range is unknown, and with no gate (and on_error="none") the stack can
    # never give its fail value, so there is no hard failure whose rank to guarantee.
    return RewardStack(
        components=[Component(comp_name, target, range=(-math.inf, math.inf))],
        fail_value=0.0,
        ordering="unchecked",
        version=comp_name,
    )


def resolve(target: Target, name: str | None, func: str) -> tuple[RewardStack, str]:
    """The stack to score with and the reward's stable name: ``name``; else a function's
    ``__name__``; else ``rewardkit_<stack version>`` (word characters only)."""
    stack = as_stack(target, name, func)
    if name is None and not isinstance(target, RewardStack):
        name = stack.components[0].name
    return stack, default_name(stack, name, func)


def default_name(stack: RewardStack, name: str | None, func: str) -> str:
    """``name`` validated, or ``rewardkit_<stack version>`` (word characters only)."""
    if name is None:
        return "rewardkit_" + re.sub(r"\W+", "_", stack.version).strip("_")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][\w.-]*", name):
        raise ConfigError(
            f"The 'name' parameter of {func} must be an identifier-like string (letters, "
            f"digits, '_', '.', '-'; it becomes the metric name rewards/<name>/mean). "
            f"Got {name!r}."
        )
    return name


def record_keys(stack: RewardStack) -> tuple[str, ...]:
    """The fixed key set of :func:`flat_record` for ``stack`` (same for every sample)."""
    return (
        "masked",
        "hard_failed",
        "errors",
        *(f"reward/{c.name}" for c in stack.components),
        *(f"masked/{c.name}" for c in stack.components),
        *(f"gate/{g.name}" for g in stack.gates),
    )


def flat_record(stack: RewardStack, result: RewardResult, none_value: float) -> dict[str, float]:
    """A result as floats only, for trainers that cannot carry ``None`` (verl, OpenRLHF).

    Every ``None`` becomes ``none_value`` *and* sets a mask key to 1.0, so an unscorable value
    is never mistaken for a real one: ``masked`` (the total), ``masked/<component>``. A gate is
    1.0 passed, 0.0 failed or crashed (a crash is counted in ``errors`` and masks the total).
    """
    rec: dict[str, float] = {
        "masked": float(result.total is None),
        "hard_failed": float(result.hard_failed),
        "errors": float(len(result.errors)),
    }
    for c in stack.components:
        v = result.components[c.name]
        rec[f"reward/{c.name}"] = none_value if v is None else float(v)
    for c in stack.components:
        rec[f"masked/{c.name}"] = float(result.components[c.name] is None)
    for g in stack.gates:
        rec[f"gate/{g.name}"] = float(bool(result.gates.get(g.name)))
    return rec


def check_fill(value: Any, param: str, func: str) -> float:
    """A finite float standing in for ``None`` where a trainer has no "cannot score"."""
    return check_real(value, param, func)


class NoneRankWarning(UserWarning):
    """The stand-in for an unscorable sample ranks above safe episodes the stack can score."""


def warn_if_fill_outranks(stack: Any, fill: float, param: str, func: str) -> None:
    """Warn when ``fill`` (what the trainer receives for a ``None`` total) lies above the
    lowest total a safe episode can get (``stack.bounds().low``): under group-relative
    advantages an unscorable sample then out-ranks an honest low-scoring one, so a policy that
    makes the verifier fail (output it cannot parse, a component that raises) is rewarded for
    it. Set ``fill`` to ``bounds().low`` or below (or filter on ``masked``)."""
    bounds = getattr(stack, "bounds", None)
    try:
        low = bounds().low if callable(bounds) else None
    except Exception:  # a stack whose bounds cannot be computed: nothing to compare
        return
    if isinstance(low, (int, float)) and math.isfinite(low) and fill > low:
        warnings.warn(
            f"The '{param}' parameter of {func} is {fill}, above the lowest total a safe "
            f"episode can score ({low}): an unscorable sample would out-rank honest ones in "
            f"its group. Set {param}={low} (the stack's bounds().low) or lower, or drop samples "
            f"with masked = 1.",
            NoneRankWarning,
            stacklevel=3,
        )
