"""``check_env``: the contract checks every registered environment must pass (like Gymnasium's
``utils/env_checker``, plus the verifier's determinism, replay and leak checks).

Usage::

    from rewardkit.envs import make, check_env
    report = check_env(make("fhir/anc-threshold-v1"))
    report.passed, [c.name for c in report.checks if not c.passed]

Checks: the reset / step shapes (5-tuple, reward 0 until the end, bools, dict info); reset
seeding determinism; step determinism (a fresh environment, same seed and actions → the same
observations and verdict bytes); snapshot → replay reproduces the verdict bytes; a malformed
action gives an error observation, not an exception; ``step`` after the end raises EnvError;
and nothing of the hidden verifier reaches ``obs`` or ``info`` (no verifier key names, no
verdict config hash, no verifier version string).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._json import JsonMixin, canonical_json
from ..demo import Check
from ..errors import EnvError
from .core import Env, Verdict

__all__ = ["FORBIDDEN_KEYS", "EnvCheckReport", "check_env"]

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


def _rollout(env: Env, seed: int, actions: Sequence[Any]) -> tuple[list[Any], Verdict]:
    trace: list[Any] = [env.reset(seed=seed)]
    for a in actions:
        out = env.step(a)
        trace.append(out)
        if out[2] or out[3]:
            break
    return trace, env.finalize()


def check_env(env: Env, *, seed: int = 0, actions: Sequence[Any] | None = None) -> EnvCheckReport:
    """Run the contract checks on ``env`` (it is reset several times). ``actions`` default to
    ``env.reference_actions()`` after a reset when the environment offers them."""
    from .registry import make

    checks: list[Check] = []

    def check(name: str, ok: bool, measured: str, expected: str = "yes") -> None:
        checks.append(Check(name, expected, measured, bool(ok)))

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
        actions = env.reference_actions() if hasattr(env, "reference_actions") else []
    actions = [*actions, '{"answer": {"status": "unknown"}}']  # ensure an ending

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
    early = [t[1] for t in steps[:-1]]
    check("reward is 0 until the end", all(r == 0.0 for r in early), f"{early}")
    final = steps[-1][1] if steps else None
    expect = 0.0 if verdict.total is None else verdict.total
    flagged = bool(steps) and steps[-1][4].get("reward_is_none") is True
    check(
        "final reward is the verdict's total (a None total flagged in info)",
        final == expect and flagged == (verdict.total is None),
        f"{final} vs {expect}, reward_is_none={flagged}",
    )
    check("finalize returns a Verdict", isinstance(verdict, Verdict), type(verdict).__name__)

    trace2, verdict2 = _rollout(make(env.env_id, **env._kwargs), seed, actions)
    same = (
        canonical_json(trace) == canonical_json(trace2) and verdict.to_json() == verdict2.to_json()
    )
    check(
        "step determinism (fresh env, same seed and actions)",
        same,
        "identical" if same else "different",
    )

    replayed = Env.replay(env.snapshot())
    ok = replayed.to_json() == verdict.to_json()
    check("snapshot → replay reproduces the verdict bytes", ok, "identical" if ok else "different")

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

    seen = canonical_json(trace)
    leaked = sorted(
        _keys([t[0] for t in steps] + [t[4] for t in steps] + list(trace[0])) & FORBIDDEN_KEYS
    )
    hidden_strings = [s for s in (verdict.config_hash, verdict.verifier_version) if s in seen]
    check(
        "no verifier keys or versions in obs / info",
        not leaked and not hidden_strings,
        f"keys {leaked}, strings {hidden_strings}",
        "none",
    )
    return EnvCheckReport(env.env_id, all(c.passed for c in checks), tuple(checks))
