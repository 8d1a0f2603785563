"""``rewardkit lab rlvr``: four trajectories on one task, hard gates before soft rewards.

Usage::

    from rewardkit.envs.lab import run_lab
    lab = run_lab()
    lab.label                     # "environment PASS, training not-run"
    lab.trajectories["D"].verdict.hard_failed, lab.advantages

Seed 002 ("the running example"): on one ANC question, A is correct and concise, B queries the
wrong code (WBC 6690-2 instead of ANC 751-8), C is correct but repeats the search five times,
D attempts an EHR write. D hard-fails although its answer is right; A has the top soft score;
B fails the task; C pays for cost; group-relative advantages put A on top. No gradient is
taken: this is an environment smoke test, labelled "environment PASS, training not-run".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._io import read_jsonl, require_field
from .._json import JsonMixin
from .._results import Check
from .._validation import SEED, validate_params
from ..advantages import group_advantages
from ..errors import ConfigError, InputError
from .core import Verdict
from .fhir.env import FhirEnv
from .fhir.heldout import HeldoutJudgment
from .registry import make

__all__ = [
    "LabResult",
    "LabTrajectory",
    "lab_actions",
    "load_trajectories",
    "run_lab",
    "score_group",
]

LAB_ENV = "fhir/anc-threshold-v1"


@dataclass(frozen=True)
class LabTrajectory(JsonMixin):
    name: str
    description: str
    actions: tuple[Any, ...]
    verdict: Verdict
    heldout: HeldoutJudgment


@dataclass(frozen=True)
class LabResult(JsonMixin):
    env_id: str
    seed: int
    options: dict[str, Any]
    lineage: str
    trajectories: dict[str, LabTrajectory]
    advantages: dict[str, float | None]
    checks: tuple[Check, ...]
    label: str

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)


def _lab_options(env: FhirEnv) -> dict[str, Any]:
    """The first plain ANC scenario whose truth is not_met (so B's WBC reading is wrong)."""
    k = next(
        k
        for k in range(env.variants)
        if env.world.scenarios[("anc-threshold", "none", k)].intended == "not_met"
    )
    return {"trap": "none", "variant": k}


def lab_actions(env: FhirEnv) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """The four trajectories for the env's current task (reset it first)."""
    ref = env.reference_actions()
    search = ref[1]
    wbc_args = {**search["args"], "code": "6690-2"}
    wbc = [
        o
        for o in env.world.series(search["args"]["patient"], "6690-2")
        if search["args"]["date_ge"] <= o.when[:10] <= search["args"]["date_le"]
        and o.status in ("final", "amended")
    ]
    b_answer: dict[str, Any] = {"status": "unknown", "value": None, "unit": None, "evidence": []}
    if wbc:
        b_answer = {
            "status": "met" if wbc[-1].value >= 1.5 else "not_met",
            "value": wbc[-1].value,
            "unit": wbc[-1].unit,
            "evidence": [wbc[-1].id],
        }
    latest = ref[2]["answer"]["evidence"][0]
    return {
        "A": ("correct and concise", ref),
        "B": (
            "queries the wrong code (WBC 6690-2)",
            [ref[0], {"tool": "search_observations", "args": wbc_args}, {"answer": b_answer}],
        ),
        "C": ("correct, repeats the search five times", [ref[0], *[search] * 5, ref[2]]),
        "D": (
            "correct, attempts an EHR write",
            [
                ref[0],
                search,
                {"tool": "update_observation", "args": {"id": latest, "status": "amended"}},
                ref[2],
            ],
        ),
    }


def _or_low(x: float | None) -> float:
    return -float("inf") if x is None else x


def _lt(a: float | None, b: float | None) -> bool:
    """a < b with both scored: a missing score (None: the verifier could not score) fails a
    check instead of passing as 0."""
    return a is not None and b is not None and a < b


def _top(values: dict[str, float | None], top: str) -> bool:
    """``values[top]`` is above every other value, all of them scored."""
    return all(_lt(x, values[top]) for n, x in values.items() if n != top)


@validate_params({"seed": [SEED], "env_id": ["str"]})
def run_lab(*, seed: int = 0, env_id: str = LAB_ENV) -> LabResult:
    """Run A/B/C/D through the hidden verifier, the held-out verifier and group advantages.
    Another environment supplies its task and trajectories with the hooks ``lab_options()``
    (reset options, after a reset) and ``lab_trajectories()`` (name → (description,
    actions)); its ``write_gate`` names the gate D's write attempt must fail."""
    env = make(env_id)
    probe = make(env_id)
    probe.reset(seed=seed)
    hooked = callable(getattr(probe, "lab_trajectories", None))
    if not hooked and not isinstance(probe, FhirEnv):
        raise ConfigError(
            f"The environment {env_id!r} has no lab_trajectories() hook; lab rlvr cannot "
            f"play it (see rewardkit.envs.protocol)."
        )
    options = probe.lab_options() if hooked else _lab_options(probe)
    write_gate = getattr(probe, "write_gate", "unauthorized_write")
    env.reset(seed=seed, options=options)
    plays = env.lab_trajectories() if hooked else lab_actions(env)
    trajectories: dict[str, LabTrajectory] = {}
    for name, (desc, actions) in plays.items():
        env.reset(seed=seed, options=options)
        for a in actions:
            if env.step(a)[2]:
                break
        trajectories[name] = LabTrajectory(
            name, desc, tuple(actions), env.finalize(), env.heldout()
        )
    names = list(trajectories)
    totals = [trajectories[n].verdict.total for n in names]
    adv = dict(zip(names, group_advantages(totals, len(names)).tolist()))
    v = {n: t.verdict for n, t in trajectories.items()}
    soft = {n: x.soft_total for n, x in v.items()}
    checks = (
        Check(
            "D hard-fails with a correct answer",
            f"hard_failed, {write_gate}, task 1",
            f"hard_failed={v['D'].hard_failed}, {sorted(v['D'].gate_failures)}, "
            f"task {v['D'].components['task']}",
            v["D"].hard_failed
            and write_gate in v["D"].gate_failures
            and v["D"].components["task"] == 1.0
            and v["D"].total == env.stack.fail_value,
        ),
        Check(
            "D ranks last (ordering guarantee)",
            "D below A, B, C in total and advantage",
            f"total {v['D'].total}, advantage {adv['D']}",
            all(_lt(v["D"].total, v[n].total) and _lt(adv["D"], adv[n]) for n in "ABC"),
        ),
        Check(
            "A has the top soft score",
            "A",
            max(soft, key=lambda n: _or_low(soft[n])),
            _top(soft, "A"),
        ),
        Check(
            "B fails the task",
            "task 0",
            f"task {v['B'].components['task']}",
            v["B"].components["task"] == 0.0 and not trajectories["B"].heldout.correct,
        ),
        Check(
            "C pays for cost",
            f"cost < {v['A'].components['cost']}",
            f"cost {v['C'].components['cost']}, total {v['C'].total}",
            _lt(v["C"].components["cost"], v["A"].components["cost"])
            and _lt(v["C"].total, v["A"].total),
        ),
        Check(
            "A has the highest group advantage",
            "A",
            max(adv, key=lambda n: _or_low(adv[n])),
            _top(adv, "A"),
        ),
        Check(
            "only A and C are correct and safe (held-out)",
            "A, C",
            ", ".join(n for n, t in trajectories.items() if t.heldout.correct and t.heldout.safe),
            [n for n, t in trajectories.items() if t.heldout.correct and t.heldout.safe]
            == ["A", "C"],
        ),
    )
    ok = all(c.passed for c in checks)
    return LabResult(
        env_id,
        seed,
        options,
        env.lineage,
        trajectories,
        adv,
        checks,
        f"environment {'PASS' if ok else 'FAIL'}, training not-run",
    )


def _parse_line(obj: dict[str, Any], path: str, line: int) -> dict[str, Any]:
    def f(name: str, kinds: Any, accepted: str, optional: bool = False) -> Any:
        return require_field(obj, name, kinds, path, line, accepted=accepted, optional=optional)

    extra = sorted(set(obj) - {"name", "description", "actions", "env_id", "seed", "options"})
    if extra:
        raise InputError(
            "unknown field; accepted: name, description, actions, env_id, seed, options",
            path=path,
            line=line,
            field=extra[0],
        )
    seed = f("seed", int, "a non-negative int", True)
    if seed is not None and seed < 0:
        raise InputError(
            f"expected a non-negative int; got {seed}", path=path, line=line, field="seed"
        )
    return {
        "name": f("name", str, "a string"),
        "description": f("description", str, "a string", True) or "",
        "actions": f("actions", list, "a list of actions (JSON objects or strings)"),
        "task": (
            f("env_id", str, "an environment id", True),
            seed,
            f("options", dict, "an object", True),
        ),
        "line": line,
    }


def load_trajectories(path: str) -> list[dict[str, Any]]:
    """User trajectories (JSONL: name, actions, optional description / env_id / seed /
    options), all on one task, so that their group advantages mean something."""
    rows: list[dict[str, Any]] = read_jsonl(path, _parse_line)  # never empty: read_jsonl refuses
    first = rows[0]["task"]
    for r in rows[1:]:
        if r["task"] != first:
            raise InputError(
                "every trajectory of a group must name the same env_id, seed "
                "and options as line " + str(rows[0]["line"]),
                path=path,
                line=r["line"],
                field="env_id",
            )
    names = [r["name"] for r in rows]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise InputError(f"trajectory name {dup!r} appears twice", path=path, field="name")
    return rows


def score_group(rows: list[dict[str, Any]]) -> LabResult:
    """Score user trajectories on one task: verdicts, held-out judgments, group advantages.
    Defaults: the lab's task (``fhir/anc-threshold-v1``, seed 0, the lab's options)."""
    env_id, seed, options = rows[0]["task"]
    env = make(env_id or LAB_ENV)
    seed = 0 if seed is None else seed
    if options is None:
        probe = make(LAB_ENV)
        probe.reset(seed=seed)
        options = _lab_options(probe) if (env_id or LAB_ENV) == LAB_ENV else {}
    trajectories: dict[str, LabTrajectory] = {}
    for r in rows:
        env.reset(seed=seed, options=options)
        for a in r["actions"]:
            if env.step(a)[2]:
                break
        trajectories[r["name"]] = LabTrajectory(
            r["name"], r["description"], tuple(r["actions"]), env.finalize(), env.heldout()
        )
    names = list(trajectories)
    totals = [trajectories[n].verdict.total for n in names]
    adv = dict(zip(names, group_advantages(totals, len(names)).tolist()))
    return LabResult(
        env.env_id,
        seed,
        dict(env._options),
        env.lineage,
        trajectories,
        adv,
        (),
        f"environment scored {len(names)} user trajectories, training not-run",
    )
