"""``FhirEnv``: one task family of the synthetic FHIR world behind the environment contract.

Usage::

    from rewardkit.envs import make
    env = make("fhir/anc-threshold-v1")
    obs, info = env.reset(seed=3, options={"trap": "page2"})
    obs["prompt"], obs["tools"]                 # the question and the public ToolManifest
    obs, r, term, trunc, info = env.step({"tool": "search_patients",
                                          "args": {"name": "Maria Lopez"}})
    verdict = env.finalize()
    env.reference_actions()                     # a concise correct trajectory (for tests / lab)

``reset`` options: ``trap`` (one of world.TRAPS) and ``variant`` (int); by default the seed
picks both. The observation of a step is ``{"tool": name, "result": <FHIR resource, Bundle or
OperationOutcome>}``, or ``{"error": reason}`` for a malformed or schema-invalid action (a
format penalty, never an exception), or ``{"final": "answer recorded"}``.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ...errors import ConfigError
from ..actions import parse_action
from ..core import Env, Verdict
from .heldout import HeldoutJudgment, judge
from .tasks import TaskPackage, Truth, compute_truth, make_task, reference_actions
from .tools import MANIFEST, LedgerEntry, ToolRunner, validate_args
from .verifier import Episode, build_stack
from .world import FAMILIES, TRAPS, build_world

__all__ = ["FhirEnv"]

_OPTIONS = ("trap", "variant")


def _copy(obj: Any) -> Any:
    """A deep copy of a JSON-shaped observation (faster than copy.deepcopy)."""
    return json.loads(json.dumps(obj))


class FhirEnv(Env):
    """A seeded FHIR task environment; see the module docstring."""

    def __init__(
        self,
        family: str,
        *,
        env_id: str,
        world_seed: int = 0,
        budget: float = 8.0,
        max_steps: int = 12,
        variants: int = 6,
        verifier: Any = None,
    ) -> None:
        if family not in FAMILIES:
            raise ConfigError(
                f"The 'family' parameter of FhirEnv must be one of "
                f"{sorted(FAMILIES)}. Got {family!r}."
            )
        super().__init__(
            world_seed=world_seed, budget=budget, max_steps=max_steps, variants=variants
        )
        self.env_id = env_id
        self.family = family
        self.world = build_world(world_seed, variants=variants)
        self.variants = variants
        self.budget = float(budget)
        self.max_steps = max_steps
        self.stack = verifier if verifier is not None else build_stack()
        self._weights = {c.name: c.weight for c in self.stack.components}
        self._runner = ToolRunner(self.world, MANIFEST)
        self._rng = np.random.default_rng(world_seed)
        self._public_tools = [
            {"name": t.name, "description": t.description, "args": t.args, "cost": t.cost}
            for t in MANIFEST.tools
        ]
        self.task: TaskPackage | None = None
        self._tasks: dict[tuple[str, int], tuple[TaskPackage, str, Truth, list[Any]]] = {}

    # --- contract hooks -----------------------------------------------------------------------
    def _reset(self, seed: int | None, options: dict[str, Any]):
        unknown = sorted(set(options) - set(_OPTIONS))
        if unknown:
            raise ConfigError(
                f"The 'options' of {self.env_id}.reset accept {list(_OPTIONS)}. Got {unknown[0]!r}."
            )
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
                raise ConfigError(
                    f"The 'seed' parameter of {self.env_id}.reset must be a "
                    f"non-negative int or None. Got {seed!r}."
                )
            self._rng = np.random.default_rng(seed)
        else:  # like Gymnasium: continue the environment's own generator
            seed = int(self._rng.integers(0, 2**31))
            self._rng = np.random.default_rng(seed)
        trap = options.get("trap", TRAPS[int(self._rng.integers(len(TRAPS)))])
        variant = options.get("variant", int(self._rng.integers(self.variants)))
        if trap not in TRAPS:
            raise ConfigError(
                f"The 'trap' option of {self.env_id}.reset must be one of "
                f"{list(TRAPS)}. Got {trap!r}."
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
            task = make_task(
                self.world,
                self.family,
                trap=trap,
                variant=variant,
                env_id=self.env_id,
                budget=self.budget,
                max_steps=self.max_steps,
            )
            pid = self.world.scenarios[(self.family, trap, variant)].patient_id
            truth = compute_truth(self.world, task.criterion, pid)
            ref = reference_actions(self.world, task, pid, truth)
            self._tasks[key] = (task, pid, truth, ref)
        self.task, self._patient, self._truth, self._reference = self._tasks[key]
        self._ledger: list[LedgerEntry] = []
        self._observations: list[dict[str, Any]] = []
        self._answer: dict[str, Any] | None = None
        self._format_errors = 0
        self._spent = 0.0
        self._n_steps = 0
        self._terminated = self._truncated = False
        self._optimal = len(self._reference) - 1  # tool calls of the concise path
        obs = {
            "prompt": self.task.prompt,
            "tools": _copy(self._public_tools),
            "budget": self.budget,
            "max_steps": self.max_steps,
        }
        info = {"task_id": self.task.task_id, "lineage": self.task.lineage, "step": 0}
        return obs, info, {"seed": seed, "options": {"trap": trap, "variant": variant}}

    def _step(self, action: Any):
        self._n_steps += 1
        step = self._n_steps
        parsed = parse_action(action)
        obs: dict[str, Any]
        if parsed.kind == "answer":
            self._answer = parsed.answer
            self._terminated = True
            obs = {"final": "answer recorded"}
        elif parsed.kind == "invalid":
            obs = self._invalid(step, None, parsed.error or "malformed action")
        else:
            assert parsed.tool is not None and parsed.args is not None
            spec = MANIFEST.get(parsed.tool)
            problem = (
                (
                    f"unknown tool {parsed.tool!r}; the manifest has "
                    f"{[t.name for t in MANIFEST.tools]}"
                )
                if spec is None
                else validate_args(spec, parsed.args)
            )
            if problem is not None or spec is None:
                obs = self._invalid(step, parsed.tool, problem or "")
            elif self._spent + spec.cost > self.budget:
                self._ledger.append(
                    LedgerEntry(step, spec.name, "over_budget", None, (), (), (), False, 0.0)
                )
                obs = {
                    "error": f"budget exhausted: {spec.name} costs {spec.cost:g}, "
                    f"{self.budget - self._spent:g} left"
                }
                self._truncated = True
            else:
                result, entry = self._runner.call(step, spec.name, parsed.args)
                self._ledger.append(entry)
                self._spent += entry.cost
                obs = {"tool": spec.name, "result": result}
        self._observations.append(obs)
        obs = _copy(obs)  # the agent's copy: editing it never reaches the world or the verdict
        if not self._terminated and self._n_steps >= self.max_steps:
            self._truncated = True
        info = {
            "step": step,
            "cost_spent": self._spent,
            "budget_left": self.budget - self._spent,
            "steps_left": self.max_steps - step,
        }
        return obs, self._terminated, self._truncated, info

    def _invalid(self, step: int, tool: str | None, reason: str) -> dict[str, Any]:
        self._format_errors += 1
        self._ledger.append(
            LedgerEntry(step, tool, "invalid", None, (), (), (), False, 0.0, reason)
        )
        return {"error": reason}

    def _verdict_now(self) -> Verdict:
        assert self.task is not None
        ep = self.episode()
        result = self.stack.score(ep)
        return Verdict.from_result(
            result,
            self._weights,
            env_id=self.env_id,
            task_id=self.task.task_id,
            lineage=self.task.lineage,
            terminated=self._terminated,
            truncated=not self._terminated,
            n_steps=self._n_steps,
            cost_spent=self._spent,
        )

    @property
    def lineage(self) -> str:
        assert self.task is not None
        return self.task.lineage

    # --- for verifiers, the red-team and tests ------------------------------------------------
    def episode(self) -> Episode:
        """The record the verifiers score (the episode so far)."""
        assert self.task is not None
        return Episode(
            task=self.task,
            truth=self._truth,
            patient_id=self._patient,
            world=self.world,
            ledger=tuple(self._ledger),
            answer=self._answer,
            actions=tuple(self._actions),
            observations=tuple(self._observations),
            n_format_errors=self._format_errors,
            cost_spent=self._spent,
            optimal_calls=self._optimal,
        )

    def heldout(self) -> HeldoutJudgment:
        """The independent held-out verifier's judgment of the episode so far."""
        assert self.task is not None
        return judge(self.world, self.task.criterion, self._actions, self._observations)

    def reference_actions(self) -> list[dict[str, Any]]:
        """A concise correct trajectory for the current task (an oracle: uses hidden state)."""
        assert self.task is not None
        return json.loads(json.dumps(self._reference))  # a copy: callers may mutate it

    # --- the protocol hooks (rewardkit.envs.protocol) -----------------------------------------
    def tools(self) -> list[dict[str, Any]]:
        """The public ToolManifest (write tools included: they exist but are not authorised)."""
        return json.loads(json.dumps(self._public_tools))

    def policies(self) -> dict[str, Any]:
        """The fuzzing policies of :mod:`rewardkit.envs.policies`."""
        from ..policies import POLICIES

        return dict(POLICIES)

    def control_stack(self) -> Any:
        """The naive control (pays per citation, no gates): the fuzzer must find exploits in it."""
        from .verifier import naive_stack

        return naive_stack()

    def control_stacks(self) -> dict[str, Any]:
        """The naive controls and the exploit classes each must show: ``naive`` (no gates, pays
        per citation) high-reward exploits and missed ledger violations; ``unordered`` (fail
        value 0.0 above negative safe totals, correctness not dominant) ranking inversions."""
        from .verifier import naive_stack, unordered_stack

        return {
            "naive": (naive_stack(), ("high_reward", "missed_violation")),
            "unordered": (unordered_stack(), ("inversion",)),
        }

    def ledger_violations(self) -> tuple[str, ...]:
        """Writes and other patients' reads, straight off the audit ledger."""
        from ..fuzz import ledger_violations

        return ledger_violations(self.episode())
