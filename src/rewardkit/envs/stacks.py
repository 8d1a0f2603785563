"""The hidden verifier of a tool-environment family as a RewardStack: hard gates that read the
environment's ledger, then weighted soft components.

Usage::

    from rewardkit.envs.stacks import VerifierParts
    PARTS = VerifierParts(
        gates=(write_attempt, phi_leak),                 # each named after its function
        components={"task": task, "cost": cost},
        weights={"task": 2.0, "cost": 0.25},             # the defaults
        ranges={"task": (0.0, 1.0), "cost": (0.0, 1.0)}, # declared value ranges
    )
    stack = PARTS.stack({"cost": 0.5}, fail_value=-1.0, version="my-verifier-1.0.0")

Each family (``envs.fhir.verifier``, ``envs.sql.verifier``) keeps its gates, components,
weights and fail value; this builds the stack from them the same way for every family.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import ConfigError
from ..stack import Component, Gate, RewardStack

__all__ = ["VerifierParts"]


@dataclass(frozen=True)
class VerifierParts:
    """A family's gates, components, default weights and declared component ranges."""

    gates: Sequence[Callable[[Any], Any]]
    components: Mapping[str, Callable[[Any], float]]
    weights: Mapping[str, float]
    ranges: Mapping[str, tuple[float, float]]

    def stack(
        self,
        weights: Mapping[str, float] | None = None,
        *,
        fail_value: float | Literal["below"],
        version: str,
        ordering: Literal["strict", "unchecked"] = "strict",
    ) -> RewardStack:
        """The RewardStack with the default weights updated by ``weights``; a weight for a
        component that does not exist is a ConfigError naming ``build_stack``'s ``weights``
        parameter (the public entry point of every family)."""
        w = {**self.weights, **(weights or {})}
        unknown = sorted(set(w) - set(self.components))
        if unknown:
            raise ConfigError(
                f"The 'weights' parameter of build_stack must name components in "
                f"{sorted(self.components)}. Got {unknown[0]!r}."
            )
        return RewardStack(
            gates=[Gate(g.__name__, g) for g in self.gates],
            components=[
                Component(name, fn, weight=w[name], range=self.ranges[name])
                for name, fn in self.components.items()
            ],
            fail_value=fail_value,
            version=version,
            ordering=ordering,
        )
