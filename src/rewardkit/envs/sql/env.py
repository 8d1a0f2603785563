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
import json
import sqlite3
from functools import lru_cache
from typing import Any

import numpy as np

from ...errors import ConfigError
from ..core import Env, Verdict
from .actions import parse_sql_action
from .engine import ReadOnlySession
from .heldout import HeldoutJudge, HeldoutJudgment
from .tasks import FAMILIES, SqlTask, make_task, reference_sql
from .tools import MANIFEST, LedgerEntry, SqlToolRunner, validate_args
from .verifier import SqlEpisode, build_stack
from .world import FAMILY_TRAPS, World, build_world

__all__ = ["SqlEnv"]

_OPTIONS = ("trap", "variant")


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


def _copy(obj: Any) -> Any:
    """A deep copy of a JSON-shaped observation (dicts, lists, scalars)."""
    if isinstance(obj, dict):
        return {k: _copy(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_copy(v) for v in obj]
    return obj


class SqlEnv(Env):
    """A seeded SQL analytics task environment; see the module docstring."""

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
        if family not in FAMILIES:
            raise ConfigError(
                f"The 'family' parameter of SqlEnv must be one of {list(FAMILIES)}. Got {family!r}."
            )
        super().__init__(
            world_seed=world_seed,
            budget=budget,
            max_steps=max_steps,
            max_rows=max_rows,
            variants=variants,
        )
        self.env_id = env_id
        self.family = family
        self.traps = FAMILY_TRAPS[family]
        self.world = build_world(world_seed, variants=variants)
        self.variants = variants
        self.budget = float(budget)
        self.max_steps = max_steps
        self.max_rows = max_rows
        self.stack = verifier if verifier is not None else build_stack()
        self._weights = {c.name: c.weight for c in self.stack.components}
        self.session = ReadOnlySession(self.world.uri, max_rows=max_rows)
        self._runner = SqlToolRunner(self.session, _counts(self.world))
        self._judge: HeldoutJudge | None = None
        self._rng = np.random.default_rng(world_seed)
        self._public_tools = [
            {"name": t.name, "description": t.description, "args": dict(t.args), "cost": t.cost}
            for t in MANIFEST.tools
        ]
        self.task: SqlTask | None = None
        self._tasks: dict[tuple[str, int], tuple[SqlTask, Any, list[Any]]] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> SqlEnv:
        """A fresh environment with the same settings, verifier and generator state (its
        database connections cannot be copied; the world is shared and read-only). An episode
        in progress is not copied: replay its snapshot with ``restore``."""
        twin = SqlEnv(self.family, env_id=self.env_id, verifier=self.stack, **self._kwargs)
        twin._rng = copy.deepcopy(self._rng, memo)
        return twin

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
        else:
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
        if key not in self._tasks:
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
            self._tasks[key] = (task, truth, self._reference(task))
        self.task, self._truth, self._ref = self._tasks[key]
        self._ledger: list[LedgerEntry] = []
        self._observations: list[dict[str, Any]] = []
        self._answer: dict[str, Any] | None = None
        self._format_errors = 0
        self._spent = 0.0
        self._n_steps = 0
        self._queries = 0
        self._terminated = self._truncated = False
        obs = {
            "prompt": self.task.prompt,
            "tools": self.tools(),
            "budget": self.budget,
            "max_steps": self.max_steps,
            "max_rows": self.max_rows,
        }
        info = {"task_id": self.task.task_id, "lineage": self.task.lineage, "step": 0}
        return obs, info, {"seed": seed, "options": {"trap": trap, "variant": variant}}

    def _step(self, action: Any):
        self._n_steps += 1
        step = self._n_steps
        parsed = parse_sql_action(action)
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
                f"unknown tool {parsed.tool!r}; the manifest has {[t.name for t in MANIFEST.tools]}"
                if spec is None
                else validate_args(spec, parsed.args)
            )
            if problem is not None or spec is None:
                obs = self._invalid(step, parsed.tool, problem or "")
            elif self._spent + spec.cost > self.budget + 1e-12:
                self._ledger.append(LedgerEntry(step, spec.name, "over_budget"))
                obs = {
                    "error": f"budget exhausted: {spec.name} costs at least {spec.cost:g}, "
                    f"{self.budget - self._spent:g} left"
                }
                self._truncated = True
            else:
                if spec.name == "query":
                    self._queries += 1
                obs, entry = self._runner.call(step, spec.name, parsed.args, self._queries)
                self._ledger.append(entry)
                self._spent += entry.cost
        self._observations.append(obs)
        if not self._terminated and self._n_steps >= self.max_steps:
            self._truncated = True
        info = {
            "step": step,
            "cost_spent": round(self._spent, 6),
            "budget_left": round(self.budget - self._spent, 6),
            "steps_left": self.max_steps - step,
        }
        return _copy(obs), self._terminated, self._truncated, info  # the agent gets a copy

    def _invalid(self, step: int, tool: str | None, reason: str) -> dict[str, Any]:
        self._format_errors += 1
        self._ledger.append(LedgerEntry(step, tool, "invalid", note=reason))
        return {"error": reason}

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
            cost_spent=round(self._spent, 6),
        )

    @property
    def lineage(self) -> str:
        assert self.task is not None
        return self.task.lineage

    # --- for verifiers, the red-team and tests ------------------------------------------------
    def episode(self) -> SqlEpisode:
        """The record the verifiers score (the episode so far)."""
        assert self.task is not None
        return SqlEpisode(
            task=self.task,
            truth=self._truth,
            world=self.world,
            ledger=tuple(self._ledger),
            answer=self._answer,
            actions=tuple(self._actions),
            observations=tuple(self._observations),
            n_format_errors=self._format_errors,
            cost_spent=self._spent,
            optimal_calls=1,
        )

    def heldout(self) -> HeldoutJudgment:
        """The independent held-out verifier's judgment of the episode so far."""
        assert self.task is not None
        if self._judge is None:
            self._judge = HeldoutJudge(self.world)
        return self._judge.judge(self.task, self._actions, self._observations)

    def reference_actions(self) -> list[dict[str, Any]]:
        """A concise correct trajectory (one query, the answer citing it)."""
        assert self.task is not None
        return json.loads(json.dumps(self._ref))  # a copy: callers may mutate it

    def _reference(self, task: SqlTask) -> list[dict[str, Any]]:
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
    def tools(self) -> list[dict[str, Any]]:
        """The public ToolManifest: list_tables, describe_table, query (a fresh copy)."""
        return [{**t, "args": _copy(t["args"])} for t in self._public_tools]

    def policies(self) -> dict[str, Any]:
        """The fuzzing policies of :mod:`rewardkit.envs.sql.policies`."""
        from .policies import POLICIES

        return dict(POLICIES)

    def control_stack(self) -> Any:
        """The naive control (no gates, pays for reading lots of data): the fuzzer must find
        exploits in it."""
        from .verifier import naive_stack

        return naive_stack()

    def control_stacks(self) -> dict[str, Any]:
        """The naive controls and the exploit classes each must show: ``naive`` (no gates,
        pays for reading data) high-reward exploits and missed ledger violations;
        ``unordered`` (fail value 0, correctness outweighed) ranking inversions."""
        from .verifier import naive_stack, unordered_stack

        return {
            "naive": (naive_stack(), ("high_reward", "missed_violation")),
            "unordered": (unordered_stack(), ("inversion",)),
        }

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
