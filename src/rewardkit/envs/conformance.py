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

import base64
import copy
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._json import JsonMixin, canonical_json
from .._results import Check
from .._validation import SEED, validate_params
from ..errors import EnvError
from .core import Env, Verdict
from .protocol import tool_specs

__all__ = [
    "FORBIDDEN_KEYS",
    "EnvCheckReport",
    "check_env",
    "manifest_actions",
    "schema_violations",
]

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


_FORBIDDEN_NORM = frozenset(re.sub(r"[^a-z0-9]", "", k) for k in FORBIDDEN_KEYS)


def _norm_key(key: Any) -> str:
    """A key name without case or separators (``Truth``, ``answerKey``, ``answer-key``)."""
    return re.sub(r"[^a-z0-9]", "", str(key).casefold())


def _hidden_leaks(seen: Any, verdict: Verdict) -> list[str]:
    """Observation / info texts (values and keys) that carry the verifier's version or config
    hash: the version as a value (a version such as ``v1`` inside ordinary text is not a
    leak); the config hash anywhere inside a text — its hex digest in any case, whole or its
    first 16 digits, or base64 of the hash text or of the digest bytes (a 16-digit run of a
    sha256 does not occur in ordinary text by chance)."""
    texts = [v for v in _leaves(seen) if isinstance(v, str)] + [str(k) for k in _keys(seen)]
    version = verdict.verifier_version or ""
    digest = (verdict.config_hash or "").split(":")[-1].casefold()
    needles: list[tuple[str, bool]] = []  # (text, compare casefolded)
    if re.fullmatch(r"[0-9a-f]{16,}", digest):
        needles.append((digest[:16], True))
        texts_of = (digest.encode(), str(verdict.config_hash).encode())
        encodings = [f(t) for t in texts_of for f in (base64.b64encode, base64.urlsafe_b64encode)]
        if len(digest) % 2 == 0:
            raw = bytes.fromhex(digest)
            encodings += [base64.b64encode(raw), base64.urlsafe_b64encode(raw)]
        needles += [(e.decode()[:16], False) for e in encodings]
    found = set()
    for text in texts:
        folded = text.casefold()
        if (version and text == version) or any(
            (n in folded) if fold else (n in text) for n, fold in needles
        ):
            found.add(text if len(text) <= 80 else text[:80] + "…")
    return sorted(found)


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
    if kind == "boolean":
        return True
    if kind == "array":
        return []
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


def _wrong_value(schema: Mapping[str, Any]) -> Any:
    """A value of the wrong type for one argument schema."""
    return "not-a-number" if schema.get("type") in ("integer", "number", "boolean") else 12345


def schema_violations(env: Any, limit: int = 4) -> list[dict[str, Any]]:
    """Tool calls just outside the ``tools()`` manifest (check_env plays them, each must get
    an error observation): for up to ``limit`` tools with arguments, one call with an argument
    of the wrong type and one with an argument the tool does not declare; the other required
    arguments filled as the schema allows."""
    out: list[dict[str, Any]] = []
    for t in [t for t in tool_specs(env) if t["args"]][:limit]:
        good = {k: _fill(v) for k, v in t["args"].items() if v.get("required")}
        name, schema = next(iter(t["args"].items()))
        out.append({"tool": t["name"], "args": {**good, name: _wrong_value(schema)}})
        out.append({"tool": t["name"], "args": {**good, "no_such_argument_": 1}})
    return out


@validate_params({"seed": [SEED]})
def check_env(env: Env, *, seed: int = 0, actions: Sequence[Any] | None = None) -> EnvCheckReport:
    """Run the contract checks on ``env``, any :class:`~rewardkit.envs.Env` instance (it is
    reset several times; no registry is needed). ``actions`` default to the environment's
    ``reference_actions()`` hook after a reset (an oracle trajectory: it must end the episode),
    else one call of each tool of its ``tools()`` manifest (:mod:`rewardkit.envs.protocol`),
    else none; an episode the actions do not end is ended by ``finalize()``. An environment
    that raises gets a failed check naming the call and the exception (the remaining checks
    are not run), never a crash of the checker."""
    if not isinstance(env, Env):
        raise EnvError(
            f"check_env needs an instance of rewardkit.envs.Env; got {type(env).__name__}."
        )
    checks: list[Check] = []

    def check(name: str, ok: bool, measured: str, expected: str = "yes") -> None:
        checks.append(Check(name, expected, measured, bool(ok)))

    stage = ["copy.deepcopy(env)"]
    try:
        _run_checks(env, seed, actions, check, stage)
    except Exception as exc:
        check(
            "the environment answers without raising",
            False,
            f"{stage[0]} raised {type(exc).__name__}: {str(exc)[:300]}",
            "no exception (the checks after it were not run)",
        )
    else:
        check("the environment answers without raising", True, "no exception", "no exception")
    return EnvCheckReport(env.env_id, all(c.passed for c in checks), tuple(checks))


def _run_checks(
    env: Env,
    seed: int,
    actions: Sequence[Any] | None,
    check: Callable[..., None],
    stage: list[str],
) -> None:
    pristine = copy.deepcopy(env)  # for replay in an environment this episode never touched
    stage[0] = f"reset(seed={seed})"
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
    oracle = actions is None and callable(getattr(env, "reference_actions", None))
    if actions is None:
        stage[0] = "reference_actions()" if oracle else "tools()"
        actions = list(env.reference_actions()) if oracle else manifest_actions(env)  # type: ignore[attr-defined]
    actions = list(actions)

    stage[0] = "the episode's step(...) / finalize()"
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
    elif oracle:  # a correct trajectory that never ends: the final reward is never checked
        check(
            "reference_actions() end the episode",
            False,
            f"{len(steps)} steps, neither terminated nor truncated",
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

    stage[0] = "the schema checks"
    bad = schema_violations(env)
    if bad:
        missed = []
        for action in bad:
            env.reset(seed=seed)
            try:
                out = env.step(action)
                if not (isinstance(out[0], dict) and "error" in out[0]):
                    missed.append(canonical_json(action))
            except Exception as exc:
                missed.append(f"{canonical_json(action)} raised {type(exc).__name__}")
            env.finalize()
        check(
            "arguments outside a tool's schema → error observation",
            not missed,
            f"{len(bad) - len(missed)} of {len(bad)} rejected"
            + (f"; accepted {missed[:3]}" if missed else ""),
            "all rejected",
        )
    try:
        env.step('{"answer": {"status": "unknown"}}')
        ok, measured = False, "accepted"
    except EnvError:
        ok, measured = True, "EnvError"
    check("step after the end raises EnvError", ok, measured)

    stage[0] = "the leak check"
    seen = [t[0] for t in steps] + [t[4] for t in steps] + list(trace[0])
    leaked = sorted(k for k in _keys(seen) if _norm_key(k) in _FORBIDDEN_NORM)
    hidden_values = _hidden_leaks(seen, verdict)
    check(
        "no verifier keys or versions in obs / info",
        not leaked and not hidden_values,
        f"keys {leaked}, values {hidden_values}",
        "none",
    )
