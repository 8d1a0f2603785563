"""``check_env``: the contract checks every registered environment must pass (like Gymnasium's
``utils/env_checker``, plus the verifier's determinism, replay and leak checks).

Usage::

    from rewardkit.envs import make, check_env
    report = check_env(make("fhir/anc-threshold-v1"))
    report.passed, [c.name for c in report.checks if not c.passed]

Works on any :class:`~rewardkit.envs.Env` instance, registered or not (as Gymnasium's
checker does). Checks: the reset / step shapes (5-tuple, reward 0 until the end, bools, dict
info); reset seeding determinism; step determinism (reset with the same seed, the same actions
→ the same observations and verdict bytes); snapshot → replay in an untouched copy of the
environment reproduces the verdict bytes; a malformed action gives an error observation, not
an exception; ``step`` after the end raises EnvError; and nothing of the hidden verifier
reaches ``obs`` or ``info`` (no verifier key names; no observation or info value equal to the
verdict's config hash or verifier version — compared by value, so a short version string
does not match inside ordinary text).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._json import JsonMixin, canonical_json
from .._results import Check
from ..errors import EnvError
from .core import Env, Verdict
from .protocol import tool_specs

__all__ = ["FORBIDDEN_KEYS", "EnvCheckReport", "check_env", "manifest_actions"]

FORBIDDEN_KEYS = frozenset(
    {
        "truth",
        "verdict",
        "components",
        "gate_failures",
        "gates",
        "expected",
        "support",
        "reward",
        "hidden",
        "intended",
        "scenario",
        "trap",
        "gold",
        "answer_key",
        "soft_total",
    }
)


@dataclass(frozen=True)
class EnvCheckReport(JsonMixin):
    env_id: str
    passed: bool
    checks: tuple[Check, ...]


def _keys(obj: Any) -> set[str]:
    if isinstance(obj, dict):
        out = set(obj)
        for v in obj.values():
            out |= _keys(v)
        return out
    if isinstance(obj, (list, tuple)):
        return set().union(*(_keys(v) for v in obj)) if obj else set()
    return set()


def _leaves(obj: Any) -> list[Any]:
    if isinstance(obj, dict):
        return [leaf for v in obj.values() for leaf in _leaves(v)]
    if isinstance(obj, (list, tuple)):
        return [leaf for v in obj for leaf in _leaves(v)]
    return [obj]


def _rollout(env: Env, seed: int, actions: Sequence[Any]) -> tuple[list[Any], Verdict]:
    trace: list[Any] = [env.reset(seed=seed)]
    for a in actions:
        out = env.step(a)
        trace.append(out)
        if out[2] or out[3]:
            break
    return trace, env.finalize()


def _fill(schema: Mapping[str, Any]) -> Any:
    """A value that satisfies one argument schema (the first enum value, else the bounds)."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if kind in ("integer", "number"):
        lo = schema.get("minimum")
        return lo if lo is not None else 1
    return "x"


def manifest_actions(env: Any) -> list[dict[str, Any]]:
    """One call of every tool in ``env.tools()`` with its required arguments filled."""
    return [
        {
            "tool": t["name"],
            "args": {k: _fill(v) for k, v in t["args"].items() if v.get("required")},
        }
        for t in tool_specs(env)
    ]


def check_env(env: Env, *, seed: int = 0, actions: Sequence[Any] | None = None) -> EnvCheckReport:
    """Run the contract checks on ``env``, any :class:`~rewardkit.envs.Env` instance (it is
    reset several times; no registry is needed). ``actions`` default to the environment's
    ``reference_actions()`` hook after a reset, else one call of each tool of its ``tools()``
    manifest (:mod:`rewardkit.envs.protocol`), else none; an episode the actions do not end is
    ended by ``finalize()``."""
    checks: list[Check] = []

    def check(name: str, ok: bool, measured: str, expected: str = "yes") -> None:
        checks.append(Check(name, expected, measured, bool(ok)))

    if not isinstance(env, Env):
        raise EnvError(
            f"check_env needs an instance of rewardkit.envs.Env; got {type(env).__name__}."
        )
    pristine = copy.deepcopy(env)  # for replay in an environment this episode never touched
    obs, info = env.reset(seed=seed)
    check(
        "reset returns (dict obs, dict info)",
        isinstance(obs, dict) and isinstance(info, dict),
        f"({type(obs).__name__}, {type(info).__name__})",
    )
    first = canonical_json([obs, info])
    again = canonical_json(list(env.reset(seed=seed)))
    check(
        "reset(seed) is deterministic",
        first == again,
        "identical" if first == again else "different",
    )
    if actions is None:
        hook = getattr(env, "reference_actions", None)
        actions = list(hook()) if callable(hook) else manifest_actions(env)
    actions = list(actions)

    trace, verdict = _rollout(env, seed, actions)
    steps = trace[1:]
    shapes = all(
        isinstance(t, tuple)
        and len(t) == 5
        and isinstance(t[0], dict)
        and isinstance(t[1], float)
        and isinstance(t[2], bool)
        and isinstance(t[3], bool)
        and isinstance(t[4], dict)
        for t in steps
    )
    check("step returns (obs, float, bool, bool, info)", shapes, f"{len(steps)} steps")
    ended = bool(steps) and (steps[-1][2] or steps[-1][3])
    early = [t[1] for t in (steps[:-1] if ended else steps)]
    check("reward is 0 until the end", all(r == 0.0 for r in early), f"{early}")
    if ended:
        final = steps[-1][1]
        expect = 0.0 if verdict.total is None else verdict.total
        flagged = steps[-1][4].get("reward_is_none") is True
        check(
            "final reward is the verdict's total (a None total flagged in info)",
            final == expect and flagged == (verdict.total is None),
            f"{final} vs {expect}, reward_is_none={flagged}",
        )
    check("finalize returns a Verdict", isinstance(verdict, Verdict), type(verdict).__name__)

    trace2, verdict2 = _rollout(env, seed, actions)
    same = (
        canonical_json(trace) == canonical_json(trace2) and verdict.to_json() == verdict2.to_json()
    )
    check(
        "step determinism (same seed and actions, after a reset)",
        same,
        "identical" if same else "different",
    )

    try:
        replayed = pristine.restore(env.snapshot()).finalize()
        ok = replayed.to_json() == verdict.to_json()
        measured = "identical" if ok else "different"
    except Exception as exc:  # a broken snapshot is a failed check, not a crash of the checker
        ok, measured = False, f"raised {type(exc).__name__}: {exc}"
    check("snapshot → replay reproduces the verdict bytes", ok, measured)

    env.reset(seed=seed)
    try:
        out = env.step("{not json")
        ok, measured = "error" in out[0] and not out[2], "error observation"
    except Exception as exc:  # the contract says never; record what happened
        ok, measured = False, f"raised {type(exc).__name__}"
    check("malformed action → error observation", ok, measured)
    env.finalize()
    try:
        env.step('{"answer": {"status": "unknown"}}')
        ok, measured = False, "accepted"
    except EnvError:
        ok, measured = True, "EnvError"
    check("step after the end raises EnvError", ok, measured)

    seen = [t[0] for t in steps] + [t[4] for t in steps] + list(trace[0])
    leaked = sorted(_keys(seen) & FORBIDDEN_KEYS)
    hidden = {verdict.config_hash, verdict.verifier_version} - {""}
    hidden_values = sorted({v for v in _leaves(seen) if isinstance(v, str) and v in hidden})
    check(
        "no verifier keys or versions in obs / info",
        not leaked and not hidden_values,
        f"keys {leaked}, values {hidden_values}",
        "none",
    )
    return EnvCheckReport(env.env_id, all(c.passed for c in checks), tuple(checks))
