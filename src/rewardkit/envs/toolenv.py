"""``ToolEnv``: the environment contract for a task family whose agent calls priced tools and
then answers, judged by a hidden verifier that reads the tools' ledger.

Usage (a family subclasses it; ``envs.fhir.env.FhirEnv`` and ``envs.sql.env.SqlEnv`` do)::

    class MyEnv(ToolEnv):
        manifest = MY_MANIFEST                        # envs.manifest.ToolManifest
        episode_type = MyEpisode                      # what the hidden verifier scores
        def _parse(self, action): ...                 # -> envs.actions.ParsedAction
        def _validate(self, spec, args): ...          # -> None or what is wrong
        def _call(self, step, spec, args): ...        # -> (observation, ledger entry)
        def _ledger_entry(self, step, tool, outcome, note=""): ...
        def _build_task(self, trap, variant): ...     # -> whatever _start_task needs (cached)
        def _start_task(self, built): ...             # sets self.task, self._truth, ...
        def _episode_extras(self): ...                # the episode record's own fields
        def _controls(self): ...                      # (naive stack, unordered stack)

What every family shares lives here: ``reset`` options (``trap``, ``variant``; by default the
seed picks both) and seeding like Gymnasium; one step — an answer ends the episode, a
malformed or schema-invalid action is an ``{"error": reason}`` observation and a format error
(never an exception), a call over budget truncates, max steps truncate; the agent always gets
a copy of the observation, so editing it never reaches the world or the verdict; the verdict
with the task's lineage.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._validation import SEED, Interval
from ..errors import ConfigError
from .actions import ParsedAction
from .core import Env, Verdict
from .manifest import ToolManifest, ToolSpec

__all__ = ["ToolEnv", "copy_observation"]

# constructor parameters every tool environment family takes (each adds its own, e.g. variants)
TOOL_ENV_PARAMS: dict[str, list[Any]] = {
    "family": ["str"],
    "env_id": ["str"],
    "world_seed": [SEED],
    "budget": [Interval(float, 0, 1e6, closed="right")],
    "max_steps": [Interval(int, 1, 10_000)],
}

OPTIONS = ("trap", "variant")
BUDGET_SLACK = 1e-12  # a call that fits the budget up to float rounding is not over budget


def copy_observation(obj: Any) -> Any:
    """A deep copy of a JSON-shaped observation: mappings become dicts, lists and tuples
    lists (what a JSON round trip gives, without one)."""
    if isinstance(obj, Mapping):
        return {k: copy_observation(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [copy_observation(v) for v in obj]
    return obj


class ToolEnv(Env):
    """A seeded tool-calling task environment of one family; see the module docstring.

    ``cost_digits``: costs in ``info`` and the verdict are rounded to this many decimals (None:
    as summed). ``cost_floor``: a tool's manifest cost is its least (it grows with the work),
    so the over-budget message says "at least"."""

    manifest: ToolManifest
    traps: tuple[str, ...]
    world: Any
    cost_digits: int | None = None
    cost_floor: bool = False

    def __init__(
        self,
        family: str,
        families: Any,
        env_id: str,
        verifier: Any,
        /,
        **kwargs: Any,
    ) -> None:
        """Checks ``family`` against ``families`` and keeps what every family has; the family
        then sets ``traps``, ``world`` and its tools' runner. ``kwargs`` (JSON-able, with
        ``world_seed``, ``budget``, ``max_steps`` and ``variants``) go into every snapshot."""
        if family not in families:
            raise ConfigError(
                f"The 'family' parameter of {type(self).__name__} must be one of "
                f"{sorted(families)}. Got {family!r}."
            )
        super().__init__(**kwargs)
        self.env_id = env_id
        self.family = family
        self.variants = int(kwargs["variants"])
        self.budget = float(kwargs["budget"])
        self.max_steps = int(kwargs["max_steps"])
        self.stack = verifier
        self._weights = {c.name: c.weight for c in self.stack.components}
        self._rng = np.random.default_rng(kwargs["world_seed"])
        self.task: Any = None
        self._tasks: dict[tuple[str, int], Any] = {}

    # --- the contract hooks ----------------------------------------------------------------
    def _reset(self, seed: int | None, options: dict[str, Any]):
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ConfigError(
                f"The 'options' of {self.env_id}.reset accept {list(OPTIONS)}. Got {unknown[0]!r}."
            )
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
                raise ConfigError(
                    f"The 'seed' parameter of {self.env_id}.reset must be a "
                    f"non-negative int or None. Got {seed!r}."
                )
        else:  # like Gymnasium: continue the environment's own generator
            seed = int(self._rng.integers(0, 2**31))
        self._rng = np.random.default_rng(seed)
        trap = options.get("trap", self.traps[int(self._rng.integers(len(self.traps)))])
        variant = options.get("variant", int(self._rng.integers(self.variants)))
        if trap not in self.traps:
            raise ConfigError(
                f"The 'trap' option of {self.env_id}.reset must be one of "
                f"{list(self.traps)}. Got {trap!r}."
            )
        if (
            isinstance(variant, bool)
            or not isinstance(variant, int)
            or not 0 <= variant < self.variants
        ):
            raise ConfigError(
                f"The 'variant' option of {self.env_id}.reset must be an int in "
                f"[0, {self.variants - 1}]. Got {variant!r}."
            )
        key = (trap, variant)
        if key not in self._tasks:  # tasks are pure functions of the world: built once
            self._tasks[key] = self._build_task(trap, variant)
        self._start_task(self._tasks[key])
        self._ledger: list[Any] = []
        self._observations: list[dict[str, Any]] = []
        self._answer: dict[str, Any] | None = None
        self._format_errors = 0
        self._spent = 0.0
        self._n_steps = 0
        self._terminated = self._truncated = False
        obs = {
            "prompt": self.task.prompt,
            "tools": self.tools(),
            "budget": self.budget,
            "max_steps": self.max_steps,
            **self._reset_extras(),
        }
        info = {"task_id": self.task.task_id, "lineage": self.task.lineage, "step": 0}
        return obs, info, {"seed": seed, "options": {"trap": trap, "variant": variant}}

    def _step(self, action: Any):
        self._n_steps += 1
        step = self._n_steps
        parsed = self._parse(action)
        obs: dict[str, Any]
        if parsed.kind == "answer":
            self._answer = parsed.answer
            self._terminated = True
            obs = {"final": "answer recorded"}
        elif parsed.kind == "invalid":
            obs = self._invalid(step, None, parsed.error or "malformed action")
        else:
            assert parsed.tool is not None and parsed.args is not None
            spec = self.manifest.get(parsed.tool)
            problem = (
                self.manifest.unknown_tool(parsed.tool)
                if spec is None
                else self._validate(spec, parsed.args)
            )
            if problem is not None or spec is None:
                obs = self._invalid(step, parsed.tool, problem or "")
            elif self._spent + spec.cost > self.budget + BUDGET_SLACK:
                self._ledger.append(self._ledger_entry(step, spec.name, "over_budget"))
                costs = "costs at least" if self.cost_floor else "costs"
                obs = {
                    "error": f"budget exhausted: {spec.name} {costs} {spec.cost:g}, "
                    f"{self.budget - self._spent:g} left"
                }
                self._truncated = True
            else:
                obs, entry = self._call(step, spec, parsed.args)
                self._ledger.append(entry)
                self._spent += entry.cost
        self._observations.append(obs)
        if not self._terminated and self._n_steps >= self.max_steps:
            self._truncated = True
        info = {
            "step": step,
            "cost_spent": self._cost(self._spent),
            "budget_left": self._cost(self.budget - self._spent),
            "steps_left": self.max_steps - step,
        }
        # the agent's copy: editing it never reaches the world or the verdict
        return copy_observation(obs), self._terminated, self._truncated, info

    def _invalid(self, step: int, tool: str | None, reason: str) -> dict[str, Any]:
        self._format_errors += 1
        self._ledger.append(self._ledger_entry(step, tool, "invalid", reason))
        return {"error": reason}

    def _cost(self, x: float) -> float:
        return x if self.cost_digits is None else round(x, self.cost_digits)

    def _verdict_now(self) -> Verdict:
        assert self.task is not None
        result = self.stack.score(self.episode())
        return Verdict.from_result(
            result,
            self._weights,
            env_id=self.env_id,
            task_id=self.task.task_id,
            lineage=self.task.lineage,
            terminated=self._terminated,
            truncated=not self._terminated,
            n_steps=self._n_steps,
            cost_spent=self._cost(self._spent),
        )

    @property
    def lineage(self) -> str:
        assert self.task is not None
        return str(self.task.lineage)

    # --- for verifiers, the red-team, the adapters and tests --------------------------------
    def reference_actions(self) -> list[dict[str, Any]]:
        """A concise correct trajectory for the current task (an oracle: uses hidden state)."""
        assert self.task is not None
        return json.loads(json.dumps(self._reference))  # a copy: callers may mutate it

    def episode(self) -> Any:
        """The record the verifiers score (the episode so far): an ``episode_type``. Its
        answer, actions and observations are copies: whoever edits a record (a reward
        function, a verifier part) changes neither the environment nor the next record."""
        assert self.task is not None
        return self.episode_type(
            task=self.task,
            truth=self._truth,
            world=self.world,
            ledger=tuple(self._ledger),
            answer=copy_observation(self._answer),
            actions=tuple(copy_observation(self._actions)),
            observations=tuple(copy_observation(self._observations)),
            n_format_errors=self._format_errors,
            cost_spent=self._spent,
            **self._episode_extras(),
        )

    def tools(self) -> list[dict[str, Any]]:
        """The public ToolManifest (a fresh copy)."""
        return self.manifest.public()

    def control_stack(self) -> Any:
        """The naive control: the fuzzer must find exploits in it."""
        return self._controls()[0]

    def control_stacks(self) -> dict[str, Any]:
        """The naive controls and the exploit classes each must show: ``naive`` (no gates)
        high-reward exploits and missed ledger violations; ``unordered`` (a fail value not
        below the safe totals, correctness not dominant) ranking inversions."""
        naive, unordered = self._controls()
        return {
            "naive": (naive, ("high_reward", "missed_violation")),
            "unordered": (unordered, ("inversion",)),
        }

    # --- for the family ---------------------------------------------------------------------
    episode_type: Any  # the verifiers' episode record (a dataclass with the fields above)
    _reference: list[dict[str, Any]]
    _truth: Any

    def _parse(self, action: Any) -> ParsedAction:
        raise NotImplementedError

    def _validate(self, spec: ToolSpec, args: Mapping[str, Any]) -> str | None:
        raise NotImplementedError

    def _call(self, step: int, spec: ToolSpec, args: Any) -> tuple[dict[str, Any], Any]:
        raise NotImplementedError

    def _ledger_entry(self, step: int, tool: str | None, outcome: str, note: str = "") -> Any:
        raise NotImplementedError

    def _build_task(self, trap: str, variant: int) -> Any:
        raise NotImplementedError

    def _start_task(self, built: Any) -> None:
        raise NotImplementedError

    def _reset_extras(self) -> dict[str, Any]:
        """More fields of the first observation (after prompt, tools, budget, max_steps)."""
        return {}

    def _episode_extras(self) -> dict[str, Any]:
        """The family's own fields of the episode record (``optimal_calls`` at least)."""
        raise NotImplementedError

    def _controls(self) -> tuple[Any, Any]:
        """The family's naive and unordered control stacks."""
        raise NotImplementedError
