"""``SqlEnv``: one task family of the retail database behind the environment contract.

Usage::

    from rewardkit.envs import make
    env = make("sql/revenue-v1")
    obs, info = env.reset(seed=3, options={"trap": "currency"})
    obs["prompt"], obs["tools"]                  # the question and the public ToolManifest
    obs, r, term, trunc, info = env.step({"tool": "query", "args": {"sql": "SELECT …"}})
    obs["query_id"], obs["rows"]                  # 'q1', at most 50 rows
    env.step({"answer": {"status": "answered", "value": 1234.56, "evidence": ["q1"]}})
    env.finalize()                                # the hidden verifier's Verdict
    env.heldout()                                 # the independent held-out judgment

``reset`` options: ``trap`` (one of the family's traps, ``FAMILY_TRAPS``) and ``variant``
(int); by default the seed picks both. A malformed or schema-invalid action gives
``{"error": reason}`` and a format penalty, never an exception.
"""

from __future__ import annotations

import copy
import sqlite3
from functools import lru_cache
from typing import Any

from ..._validation import Interval, validate_params
from ...errors import ConfigError
from ..actions import ParsedAction
from ..manifest import ToolSpec
from ..toolenv import TOOL_ENV_PARAMS, ToolEnv
from .actions import parse_sql_action
from .engine import ReadOnlySession
from .heldout import HeldoutJudge, HeldoutJudgment
from .tasks import FAMILIES, SqlTask, make_task, reference_sql
from .tools import MANIFEST, LedgerEntry, SqlToolRunner, validate_args
from .verifier import SqlEpisode, build_stack
from .world import FAMILY_TRAPS, World, build_world

__all__ = ["SqlEnv"]


@lru_cache(maxsize=4)
def _counts(world: World) -> dict[str, int]:
    con = sqlite3.connect(world.uri, uri=True)
    try:
        names = [
            r[0]
            for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
        ]
        return {n: int(con.execute(f"SELECT COUNT(*) FROM {n}").fetchone()[0]) for n in names}
    finally:
        con.close()


class SqlEnv(ToolEnv):
    """A seeded SQL analytics task environment; see the module docstring."""

    manifest = MANIFEST
    episode_type = SqlEpisode
    cost_digits = 6  # a query's cost is 1 + VM steps / 1e6: sums are rounded to 6 decimals
    cost_floor = True  # a query costs at least its manifest cost
    task: SqlTask | None

    @validate_params(
        {
            **TOOL_ENV_PARAMS,
            "max_rows": [Interval(int, 1, 1_000_000)],
            "variants": [Interval(int, 1, 12)],  # build_world finds at most 12
        }
    )
    def __init__(
        self,
        family: str,
        *,
        env_id: str,
        world_seed: int = 0,
        budget: float = 12.0,
        max_steps: int = 10,
        max_rows: int = 50,
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
            max_rows=max_rows,
            variants=variants,
        )
        self.traps = FAMILY_TRAPS[family]
        self.world = build_world(world_seed, variants=variants)
        self.max_rows = max_rows
        self.session = ReadOnlySession(self.world.uri, max_rows=max_rows)
        self._runner = SqlToolRunner(self.session, _counts(self.world))
        self._judge: HeldoutJudge | None = None

    def __deepcopy__(self, memo: dict[int, Any]) -> SqlEnv:
        """A fresh environment with the same settings, verifier and generator state (its
        database connections cannot be copied; the world is shared and read-only). An episode
        in progress is not copied: replay its snapshot with ``restore``."""
        twin = SqlEnv(self.family, env_id=self.env_id, verifier=self.stack, **self._kwargs)
        twin._rng = copy.deepcopy(self._rng, memo)
        return twin

    # --- the family's hooks (rewardkit.envs.toolenv) ------------------------------------------
    def _parse(self, action: Any) -> ParsedAction:
        return parse_sql_action(action)

    def _validate(self, spec: ToolSpec, args: Any) -> str | None:
        return validate_args(spec, args)

    def _call(self, step: int, spec: ToolSpec, args: Any) -> tuple[dict[str, Any], LedgerEntry]:
        if spec.name == "query":
            self._queries += 1
        return self._runner.call(step, spec.name, args, self._queries)

    def _ledger_entry(
        self, step: int, tool: str | None, outcome: str, note: str = ""
    ) -> LedgerEntry:
        return LedgerEntry(step, tool, outcome, note=note)

    def _build_task(self, trap: str, variant: int) -> tuple[SqlTask, Any, list[Any]]:
        task = make_task(
            self.world,
            self.family,
            trap=trap,
            variant=variant,
            env_id=self.env_id,
            budget=self.budget,
            max_steps=self.max_steps,
            max_rows=self.max_rows,
        )
        truth = self.world.scenarios[(self.family, trap, variant)].truth
        return task, truth, self._reference_path(task)

    def _start_task(self, built: tuple[SqlTask, Any, list[Any]]) -> None:
        self.task, self._truth, self._reference = built
        self._queries = 0

    def _reset_extras(self) -> dict[str, Any]:
        return {"max_rows": self.max_rows}

    # --- for verifiers, the red-team and tests ------------------------------------------------
    def _episode_extras(self) -> dict[str, Any]:
        return {"optimal_calls": 1}  # one query answers every task

    def heldout(self) -> HeldoutJudgment:
        """The independent held-out verifier's judgment of the episode so far."""
        assert self.task is not None
        if self._judge is None:
            self._judge = HeldoutJudge(self.world)
        return self._judge.judge(self.task, self._actions, self._observations)

    def _reference_path(self, task: SqlTask) -> list[dict[str, Any]]:
        sql = reference_sql(task)
        run = self.session.run(sql)  # the agent's session: its cache is warm for the same text
        if not run.ok:
            raise ConfigError(f"{task.env_id}: the reference SQL failed: {run.error}")
        value: Any
        if task.kind == "ids":
            unknown = not run.rows or run.rows[0][3] > 0
            value = [int(r[0]) for r in run.rows]
        else:
            unknown = not run.rows or run.rows[0][0] is None
            value = None if unknown else run.rows[0][0]
        answer: dict[str, Any] = {
            "status": "unknown" if unknown else "answered",
            "evidence": ["q1"],
        }
        if not unknown:
            answer["value"] = value
        return [{"tool": "query", "args": {"sql": sql}}, {"answer": answer}]

    # --- the protocol hooks (rewardkit.envs.protocol) -----------------------------------------
    def policies(self) -> dict[str, Any]:
        """The fuzzing policies of :mod:`rewardkit.envs.sql.policies`."""
        from .policies import POLICIES

        return dict(POLICIES)

    def _controls(self) -> tuple[Any, Any]:
        """``naive`` pays for reading lots of data; ``unordered`` has fail value 0 and
        correctness outweighed."""
        from .verifier import naive_stack, unordered_stack

        return naive_stack(), unordered_stack()

    def answer_args(self) -> dict[str, dict[str, Any]]:
        """The final answer as a tool's argument schema (for the trainer adapters)."""
        return {
            "status": {
                "type": "string",
                "required": True,
                "enum": ["answered", "unknown"],
                "description": "answered, or unknown when the data cannot answer the question",
            },
            "value": {"type": "number", "description": "The answer, for a number question"},
            "ids": {"type": "ids", "description": "The customer ids, for a list question"},
            "evidence": {"type": "array", "description": "Query ids whose results hold it"},
            "note": {"type": "string", "description": "A short free-text note"},
        }

    write_gate = "write_attempt"  # the gate a write attempt fails (``rewardkit lab rlvr``)

    def lab_options(self) -> dict[str, Any]:
        """The lab's task: the first variant of the family's first trap."""
        return {"trap": self.traps[0], "variant": 0}

    def lab_trajectories(self) -> dict[str, tuple[str, list[Any]]]:
        """Seed 002's four trajectories on the current task: A correct and concise; B drops a
        rule of the task in its SQL and reports what that returned; C correct but runs the
        query five times; D correct but tries a DELETE first."""
        from .mutations import drop_rule
        from .policies import _read_answer

        assert self.task is not None
        query, answer = self.reference_actions()
        wrong = drop_rule(query["args"]["sql"], self.task.trap)
        saved = (self._seed, dict(self._options))
        self.reset(seed=saved[0], options=saved[1])
        b_answer = _read_answer(self, self.step({"tool": "query", "args": {"sql": wrong}})[0])
        self.reset(seed=saved[0], options=saved[1])
        return {
            "A": ("correct and concise", [query, answer]),
            "B": (
                "drops a rule of the task in its SQL",
                [{"tool": "query", "args": {"sql": wrong}}, {"answer": b_answer}],
            ),
            "C": (
                "correct, runs the query five times",
                [*[query] * 5, {"answer": {**answer["answer"], "evidence": ["q5"]}}],
            ),
            "D": (
                "correct, attempts a DELETE",
                [
                    {"tool": "query", "args": {"sql": "DELETE FROM refunds"}},
                    query,
                    {"answer": {**answer["answer"], "evidence": ["q2"]}},
                ],
            ),
        }

    def sweep_spec(self, variants: int) -> dict[str, Any]:
        """What ``rewardkit sweep`` plays here: the scripted behaviours on every trap and the
        first ``variants`` variants, scored under any weights by ``build_stack``."""
        from .behaviours import BEHAVIOURS
        from .verifier import DEFAULT_WEIGHTS, build_stack

        return {
            "behaviours": BEHAVIOURS,
            "tasks": [
                {"trap": t, "variant": k}
                for t in self.traps
                for k in range(min(variants, self.variants))
            ],
            "weights": dict(DEFAULT_WEIGHTS),
            "build_stack": build_stack,
        }

    def library_cases(self) -> list[Any]:
        """The adversarial cases written for this id (``rewardkit redteam`` runs them)."""
        from .cases import load_sql_library

        return [c for c in load_sql_library() if c.env_id == self.env_id]

    def ledger_violations(self) -> tuple[str, ...]:
        """Write-class accesses and unauthorised personal reads, straight off the ledger."""
        from .audit import ledger_violations

        return ledger_violations(self.episode())
