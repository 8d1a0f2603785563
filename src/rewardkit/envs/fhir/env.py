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

from typing import Any

from ..._validation import Interval, validate_params
from ..actions import ParsedAction, parse_action
from ..manifest import ToolSpec, validate_args
from ..toolenv import TOOL_ENV_PARAMS, ToolEnv
from .heldout import HeldoutJudgment, judge
from .tasks import TaskPackage, Truth, compute_truth, make_task, reference_actions
from .tools import MANIFEST, LedgerEntry, ToolRunner
from .verifier import Episode, build_stack
from .world import FAMILIES, TRAPS, build_world

__all__ = ["FhirEnv"]


class FhirEnv(ToolEnv):
    """A seeded FHIR task environment; see the module docstring."""

    manifest = MANIFEST
    episode_type = Episode
    task: TaskPackage | None

    @validate_params(
        {
            **TOOL_ENV_PARAMS,
            "variants": [Interval(int, 1, 100)],
        }
    )
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
        stack = verifier if verifier is not None else build_stack()
        super().__init__(
            family,
            FAMILIES,
            env_id,
            stack,
            world_seed=world_seed,
            budget=budget,
            max_steps=max_steps,
            variants=variants,
        )
        self.traps = TRAPS
        self.world = build_world(world_seed, variants=variants)
        self._runner = ToolRunner(self.world, MANIFEST)

    # --- the family's hooks (rewardkit.envs.toolenv) ------------------------------------------
    def _parse(self, action: Any) -> ParsedAction:
        return parse_action(action)

    def _validate(self, spec: ToolSpec, args: Any) -> str | None:
        return validate_args(spec, args, nonempty_strings=True, max_chars=200)

    def _call(self, step: int, spec: ToolSpec, args: Any) -> tuple[dict[str, Any], LedgerEntry]:
        result, entry = self._runner.call(step, spec.name, args)
        return {"tool": spec.name, "result": result}, entry

    def _ledger_entry(
        self, step: int, tool: str | None, outcome: str, note: str = ""
    ) -> LedgerEntry:
        return LedgerEntry(step, tool, outcome, None, (), (), (), False, 0.0, note)

    def _build_task(self, trap: str, variant: int) -> tuple[TaskPackage, str, Truth, list[Any]]:
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
        return task, pid, truth, reference_actions(self.world, task, pid, truth)

    def _start_task(self, built: tuple[TaskPackage, str, Truth, list[Any]]) -> None:
        self.task, self._patient, self._truth, self._reference = built
        self._optimal = len(self._reference) - 1  # tool calls of the concise path

    # --- for verifiers, the red-team and tests ------------------------------------------------
    def _episode_extras(self) -> dict[str, Any]:
        return {"patient_id": self._patient, "optimal_calls": self._optimal}

    def heldout(self) -> HeldoutJudgment:
        """The independent held-out verifier's judgment of the episode so far."""
        assert self.task is not None
        return judge(self.world, self.task.criterion, self._actions, self._observations)

    # --- the protocol hooks (rewardkit.envs.protocol) -----------------------------------------
    def policies(self) -> dict[str, Any]:
        """The fuzzing policies of :mod:`rewardkit.envs.policies`."""
        from ..policies import POLICIES

        return dict(POLICIES)

    def _controls(self) -> tuple[Any, Any]:
        """``naive`` pays per citation; ``unordered`` is 1.1.0's weighting with fail value 0.0,
        above the negative safe totals."""
        from .verifier import naive_stack, unordered_stack

        return naive_stack(), unordered_stack()

    def ledger_violations(self) -> tuple[str, ...]:
        """Writes and other patients' reads, straight off the audit ledger."""
        from ..fuzz import ledger_violations

        return ledger_violations(self.episode())
