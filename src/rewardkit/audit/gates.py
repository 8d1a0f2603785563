"""The five reward-validate gates (seed 000 §6), each a named result with its evidence.

Usage::

    from rewardkit.audit.gates import gate_golden, gate_mapping
    g = gate_mapping(my_reward)            # GateResult(name="mapping", passed=…, evidence=…)

1. ``mapping`` — probe the reward: single-level trajectories are non-decreasing in level under
   every recipe, lie in [0, ceiling], the top level scores exactly the ceiling, an all −1
   trajectory is ``None`` and adding a −1 step changes nothing (it is masked).
2. ``determinism`` — the reward JSON (levels + every recipe's output per task) is byte-identical
   across two in-process runs and a run in a fresh interpreter with a different PYTHONHASHSEED.
3. ``spike_in`` — :func:`rewardkit.audit.spike_in` passes on every paradigm.
4. ``ablations`` — every recipe runs on the same input with the same schema and task count.
5. ``golden`` — the judge's levels on the golden set equal the frozen expected levels (the
   reward layer never changes a scoring path).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._json import JsonMixin, canonical_json, content_hash, to_plain
from .._validation import Interval, validate_params
from ..levels import Step
from .protocols import Golden, Judge, Reward, Task, output_value
from .scoring import judge_levels, score_tasks, task_reviews
from .spike_in import spike_in

__all__ = [
    "VALIDATION_GATES",
    "GateResult",
    "gate_ablations",
    "gate_determinism",
    "gate_golden",
    "gate_mapping",
    "gate_spike_in",
    "not_run",
    "reward_json",
]

VALIDATION_GATES = ("mapping", "determinism", "spike_in", "ablations", "golden")
Factory = tuple[str, Mapping[str, Any]]


@dataclass(frozen=True)
class GateResult(JsonMixin):
    """A gate's outcome. ``not_run``: its data was not given (then ``passed`` is False and
    ``summary`` names the missing input); a gate never runs on data nobody asked for."""

    name: str
    passed: bool
    summary: str
    evidence: Mapping[str, Any]
    not_run: bool = False


def not_run(name: str, why: str) -> GateResult:
    return GateResult(name, False, f"not run: {why}", {}, not_run=True)


def _value(reward: Reward, levels: Sequence[int], recipe: str) -> float | None:
    return output_value(reward([Step(lv) for lv in levels], recipe=recipe, session=False))


@validate_params({"ceiling": [Interval(float, 0, None, closed="neither")]})
def gate_mapping(
    reward: Reward, *, ceiling: float = 0.85, levels: Sequence[int] | None = None
) -> GateResult:
    """Probe the reward's level mapping (monotone, −1 masked, ceiling)."""
    lv = tuple(getattr(reward, "levels", None) or (0, 1, 2, 3)) if levels is None else tuple(levels)
    problems: list[str] = []
    probes: dict[str, Any] = {}
    try:
        for r in reward.recipes:
            vals = [_value(reward, [x] * 3, r) for x in lv]
            probes[r] = dict(zip((str(x) for x in lv), vals))
            for x, v in zip(lv, vals):
                if v is None or not 0.0 <= v <= ceiling + 1e-12:
                    problems.append(f"recipe {r}: level {x} scores {v}, outside [0, {ceiling:g}]")
            for (x0, v0), (x1, v1) in zip(zip(lv, vals), zip(lv[1:], vals[1:])):
                if v0 is not None and v1 is not None and v1 < v0:
                    problems.append(f"recipe {r}: level {x1} scores {v1} < level {x0}'s {v0}")
            top = vals[-1]
            if top is None or abs(top - ceiling) > 1e-12:
                problems.append(
                    f"recipe {r}: top level {lv[-1]} scores {top}, not the ceiling {ceiling:g}"
                )
            if _value(reward, [-1, -1, -1], r) is not None:
                problems.append(f"recipe {r}: an all −1 trajectory is scored, not masked (None)")
            for base in ([lv[-1]], [lv[1 if len(lv) > 1 else 0], lv[-1]]):
                with_m1 = [base[0], -1, *base[1:]]
                if _value(reward, with_m1, r) != _value(reward, base, r):
                    problems.append(f"recipe {r}: adding a −1 step to {base} changes the reward")
    except Exception as exc:  # a crashing reward fails the gate; it is data, not a crash
        problems.append(f"the reward raised {type(exc).__name__}: {exc}")
    return GateResult(
        "mapping",
        not problems,
        "monotone, −1 masked, top level = ceiling" if not problems else problems[0],
        {"levels": list(lv), "ceiling": ceiling, "probes": probes, "problems": problems},
    )


def reward_json(
    tasks: Sequence[Task], *, judge: Judge, reward: Reward, recipes: Sequence[str] | None = None
) -> str:
    """Canonical JSON of the judge's levels and every recipe's output, per task."""
    s = score_tasks(tasks, judge=judge, reward=reward, recipes=recipes)
    return canonical_json(
        {
            "tasks": [
                {"task_id": tid, "levels": list(lv), **{r: s.outputs[r][k] for r in s.outputs}}
                for k, (tid, lv) in enumerate(zip(s.task_ids, s.levels))
            ]
        }
    )


def _fresh_run(
    tasks: Sequence[Task], judge: Factory, reward: Factory, recipes: Sequence[str], hashseed: str
) -> str:
    spec = {
        "judge": list(judge),
        "reward": list(reward),
        "recipes": list(recipes),
        "tasks": [
            {
                "task_id": t.task_id,
                "decisions": to_plain(list(t.decisions)),
                "reviews": None if (r := task_reviews(t)) is None else list(r),
            }
            for t in tasks
        ],
    }
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = hashseed
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    proc = subprocess.run(
        [sys.executable, "-m", "rewardkit.audit._child"],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the fresh process failed: {proc.stderr.strip().splitlines()[-1:]}")
    return proc.stdout


FRESH_HASHSEEDS = ("1", "2")


def gate_determinism(
    tasks: Sequence[Task],
    *,
    judge: Judge,
    reward: Reward,
    judge_factory: Factory | None,
    reward_factory: Factory | None,
) -> GateResult:
    """Two in-process runs and one fresh process with another PYTHONHASHSEED, byte for byte.

    The factories ``("module:callable", kwargs)`` rebuild the judge and the reward in the fresh
    process; without them the gate fails (cross-process determinism is then unproven).
    """
    recipes = list(reward.recipes)
    ev: dict[str, Any] = {"n_tasks": len(tasks), "recipes": recipes}
    try:
        first = reward_json(tasks, judge=judge, reward=reward)
        second = reward_json(tasks, judge=judge, reward=reward)
    except Exception as exc:
        return GateResult(
            "determinism", False, f"the reward raised {type(exc).__name__}: {exc}", ev
        )
    ev["hash_run1"], ev["hash_run2"] = content_hash(first.encode()), content_hash(second.encode())
    problems = [] if first == second else ["two in-process runs differ"]
    # Two fresh interpreters with fixed, different hash seeds: at least one differs from this
    # process's, and the evidence does not depend on how this process was started.
    ev["pythonhashseed"] = {"fresh_processes": list(FRESH_HASHSEEDS)}
    if judge_factory is None or reward_factory is None:
        missing = "judge" if judge_factory is None else "reward"
        problems.append(f"fresh-process run not possible: no factory to rebuild the {missing}")
    else:
        for hashseed in FRESH_HASHSEEDS:
            try:
                fresh = _fresh_run(tasks, judge_factory, reward_factory, recipes, hashseed)
            except Exception as exc:
                problems.append(f"fresh-process run failed: {exc}")
                break
            ev[f"hash_fresh_process_{hashseed}"] = content_hash(fresh.encode())
            if fresh != first:
                problems.append(
                    f"a fresh process (PYTHONHASHSEED={hashseed}) gives different bytes"
                )
                break
    ev["problems"] = problems
    return GateResult(
        "determinism",
        not problems,
        "byte-identical in-process and in a fresh process" if not problems else problems[0],
        ev,
    )


def gate_spike_in(
    *,
    judge: Judge,
    reward: Reward,
    substrates: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    candidates: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    threshold: float = 0.30,
) -> GateResult:
    if substrates is None or candidates is None:
        missing = "substrates" if substrates is None else "injection candidates"
        return not_run("spike_in", f"no spike-in {missing} given")
    try:
        s = spike_in(
            judge=judge,
            reward=reward,
            substrates=substrates,
            candidates=candidates,
            threshold=threshold,
        )
    except Exception as exc:
        return GateResult("spike_in", False, f"spike-in raised {type(exc).__name__}: {exc}", {})
    drops = [c.drop for c in s.cases if c.drop is not None]
    summary = (
        f"{len(s.cases)} injections in {len(s.paradigms)} paradigms, min drop "
        f"{min(drops) if drops else float('nan'):.4f} ≥ {s.threshold:g}"
        if s.passed
        else "failed in " + ", ".join(p for p, ok in s.paradigms.items() if not ok)
    )
    return GateResult("spike_in", s.passed, summary, s.to_dict())


def gate_ablations(tasks: Sequence[Task], *, judge: Judge, reward: Reward) -> GateResult:
    """Every recipe on the same input: runs, same schema, same task count."""
    per: dict[str, Any] = {}
    problems: list[str] = []
    try:
        s = score_tasks(tasks, judge=judge, reward=reward)
    except Exception as exc:
        return GateResult("ablations", False, f"scoring raised {type(exc).__name__}: {exc}", {})
    schemas = {}
    for r, outs in s.outputs.items():
        keys = sorted(
            {json.dumps(sorted(o) if isinstance(o, dict) else type(o).__name__) for o in outs}
        )
        schemas[r] = keys
        vals = [v for v in s.values[r] if v is not None]
        per[r] = {
            "n_tasks": len(outs),
            "n_none": len(outs) - len(vals),
            "mean": sum(vals) / len(vals) if vals else None,
            "schema_hash": content_hash(keys),
        }
    if len({p["n_tasks"] for p in per.values()}) > 1 or any(
        p["n_tasks"] != len(tasks) for p in per.values()
    ):
        problems.append("recipes scored different numbers of tasks")
    if len({json.dumps(v) for v in schemas.values()}) > 1:
        problems.append("recipes return different schemas")
    if any(len(v) != 1 for v in schemas.values()):
        problems.append("a recipe returns more than one schema")
    ev: dict[str, Any] = {"recipes": per, "problems": problems}
    if "A" in s.values and "C" in s.values:
        ev["c_equals_a"] = s.values["A"] == s.values["C"]
    return GateResult(
        "ablations",
        not problems,
        f"{len(per)} recipe(s) × {len(tasks)} tasks, one schema" if not problems else problems[0],
        ev,
    )


def gate_golden(golden: Sequence[Golden] | None, *, judge: Judge) -> GateResult:
    """The judge's levels equal the frozen expected levels on every golden decision."""
    if golden is None:
        return not_run("golden", "no golden set given ([data] golden in rewardkit.toml)")
    diffs: list[dict[str, Any]] = []
    n_dec = 0
    try:
        for g in golden:
            got = judge_levels(judge, g.decisions)
            exp = tuple(g.expected_levels)
            n_dec += len(exp)
            if len(got) != len(exp):
                diffs.append(
                    {"trajectory_id": g.trajectory_id, "expected_n": len(exp), "got_n": len(got)}
                )
                continue
            for i, (e, v) in enumerate(zip(exp, got)):
                if e != v:
                    did = g.decisions[i].get("decision_id", i)
                    diffs.append(
                        {"trajectory_id": g.trajectory_id, "decision": did, "expected": e, "got": v}
                    )
    except Exception as exc:
        return GateResult("golden", False, f"the judge raised {type(exc).__name__}: {exc}", {})
    golden_hash = content_hash(
        [{"id": g.trajectory_id, "levels": list(g.expected_levels)} for g in golden]
    )
    passed = not diffs and n_dec > 0
    return GateResult(
        "golden",
        passed,
        f"{len(golden)} trajectories, {n_dec} decisions, {len(diffs)} differences",
        {
            "n_trajectories": len(golden),
            "n_decisions": n_dec,
            "n_differences": len(diffs),
            "differences": diffs[:20],
            "expected_levels_hash": golden_hash,
        },
    )
