"""``rewardkit sweep``: which behaviour each reward weighting prefers, and the Pareto front of
task success vs cost.

Usage::

    from rewardkit.envs.sweep import sweep
    res = sweep()                        # every component's weight over DEFAULT_GRID
    res.switches                         # e.g. cost 4 → 8: concise → never_call
    res.pareto                           # behaviours on the success / cost front

Seed 002 ("reward sensitivity"): sweep each component's weight and check whether the
preferred policy jumps from over-calling to never calling, or from answering to always
``unknown``; plot the Pareto front instead of hunting one total. The behaviours are fixed
scripted policies played once on every task; since the stack is gates-then-linear, the total
under any weights is ``fail_value if hard-failed else Σ w_c · component_c`` (the fail value
of the stack with those weights, below its lowest safe total; checked against
``RewardStack.score`` in the tests), so a sweep costs no extra episodes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._json import JsonMixin
from .._validation import Each, Interval, validate_params
from ..errors import ConfigError
from .fhir import ENV_IDS
from .fhir.env import FhirEnv
from .fhir.verifier import DEFAULT_WEIGHTS, build_stack
from .fhir.world import TRAPS
from .registry import make

__all__ = ["BEHAVIOURS", "DEFAULT_GRID", "SweepResult", "sweep", "sweep_spec"]

DEFAULT_GRID = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)


def _concise(env: FhirEnv) -> list[Any]:
    return env.reference_actions()


def _over_call(env: FhirEnv) -> list[Any]:
    sp, so, ans = env.reference_actions()
    return [sp, so, so, so, so, ans]


def _never_call(env: FhirEnv) -> list[Any]:
    return [{"answer": {"status": "met", "value": None, "unit": None, "evidence": []}}]


def _always_unknown(env: FhirEnv) -> list[Any]:
    return [{"answer": {"status": "unknown", "evidence": []}}]


def _look_then_unknown(env: FhirEnv) -> list[Any]:
    sp, so, _ = env.reference_actions()
    return [sp, so, {"answer": {"status": "unknown", "evidence": []}}]


def _cite_everything(env: FhirEnv) -> list[Any]:
    sp, so, ans = env.reference_actions()
    a = so["args"]
    ids = [
        o.id
        for o in env.world.series(a["patient"], a["code"])
        if a["date_ge"] <= o.when[:10] <= a["date_le"]
    ]
    return [sp, so, {"answer": {**ans["answer"], "evidence": ids}}]


BEHAVIOURS: dict[str, Callable[[FhirEnv], list[Any]]] = {
    "concise": _concise,
    "over_call": _over_call,
    "never_call": _never_call,
    "always_unknown": _always_unknown,
    "look_then_unknown": _look_then_unknown,
    "cite_everything": _cite_everything,
}


@dataclass(frozen=True)
class SweepResult(JsonMixin):
    behaviours: tuple[str, ...]
    n_tasks: int
    grid: tuple[float, ...]
    default_choice: str
    mean_components: dict[str, dict[str, float | None]]  # behaviour → component → mean
    # behaviour → component → episodes where it had no score (crashed or None): left out of
    # that component's mean and of the total's sum, never counted as 0
    excluded: dict[str, dict[str, int]]
    unscored: dict[str, int]  # behaviour → episodes the verifier could not score (total None)
    success: dict[str, float]  # behaviour → held-out correct-and-safe rate
    cost_spent: dict[str, float]  # behaviour → mean cost units
    preferred: dict[str, list[str]]  # component → preferred behaviour per grid weight
    switches: tuple[dict[str, Any], ...]
    pareto: tuple[str, ...]  # behaviours on the front (min cost, max success)


def _fhir_spec(env: FhirEnv, variants: int) -> dict[str, Any]:
    return {
        "behaviours": BEHAVIOURS,
        "tasks": [
            {"trap": t, "variant": k} for t in TRAPS for k in range(min(variants, env.variants))
        ],
        "weights": dict(DEFAULT_WEIGHTS),
        "build_stack": build_stack,
    }


def sweep_spec(env: Any, variants: int) -> dict[str, Any]:
    """What a sweep plays on ``env``: its ``sweep_spec(variants)`` hook (``behaviours``: name →
    fn(env) → actions, ``tasks``: reset options, ``weights``: the default weights,
    ``build_stack``: weights → the verifier), or the FHIR family's."""
    hook = getattr(env, "sweep_spec", None)
    if callable(hook):
        return dict(hook(variants))
    if isinstance(env, FhirEnv):
        return _fhir_spec(env, variants)
    raise ConfigError(
        f"The environment {env.env_id!r} has no sweep_spec() hook; rewardkit sweep cannot "
        f"play it (see rewardkit.envs.protocol)."
    )


def _episodes(env_ids: Sequence[str], variants: int) -> dict[str, dict[str, np.ndarray]]:
    """Play every behaviour on every task once: (n_tasks,) arrays per component and more."""
    return _play(env_ids, variants)[0]


def _play(
    env_ids: Sequence[str], variants: int
) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, Any]]:
    """:func:`_episodes` and the sweep spec they were played with."""
    spec: dict[str, Any] | None = None
    data: dict[str, dict[str, list[float]]] = {}
    for env_id in env_ids:
        env = make(env_id)
        this = sweep_spec(env, variants)
        if spec is None:
            spec = this
            data = {b: {} for b in spec["behaviours"]}
        elif list(this["weights"]) != list(spec["weights"]) or list(this["behaviours"]) != list(
            spec["behaviours"]
        ):
            raise ConfigError(
                f"The 'env_ids' parameter of sweep mixes environments with different "
                f"components or behaviours ({env_ids[0]!r} and {env_id!r}); sweep them apart."
            )
        for options in this["tasks"]:
            for name, behaviour in this["behaviours"].items():
                env.reset(seed=0, options=options)
                for a in behaviour(env):
                    if env.step(a)[2]:
                        break
                v, h = env.finalize(), env.heldout()
                row = data[name]
                for c in this["weights"]:  # no score → NaN: excluded and counted, not 0
                    x = v.components[c]
                    row.setdefault(c, []).append(np.nan if x is None else x)
                row.setdefault("unscored", []).append(float(v.total is None))
                row.setdefault("hard_failed", []).append(float(v.hard_failed))
                row.setdefault("success", []).append(float(h.correct and h.safe))
                row.setdefault("cost_spent", []).append(v.cost_spent)
    assert spec is not None
    return {b: {k: np.asarray(x) for k, x in d.items()} for b, d in data.items()}, spec


def _totals(
    data: dict[str, dict[str, np.ndarray]],
    weights: dict[str, float],
    spec: dict[str, Any] | None = None,
) -> dict[str, float]:
    """Mean total per behaviour under ``weights``, like ``RewardStack.score``: a component with
    no score is left out of the sum; an episode the verifier could not score (total None) is
    left out of the mean; a behaviour with no scored episode gets −inf (never preferred)."""
    out = {}
    if spec is None:  # the FHIR family's
        spec = {"weights": dict(DEFAULT_WEIGHTS), "build_stack": build_stack}
    fail_value = spec["build_stack"](weights).fail_value  # may depend on the weights
    for b, d in data.items():
        soft = sum(np.where(np.isnan(d[c]), 0.0, weights[c] * d[c]) for c in spec["weights"])
        total = np.where(d["hard_failed"] > 0, fail_value, soft)[d["unscored"] == 0]
        out[b] = float(np.mean(total)) if total.size else -np.inf
    return out


def _mean(x: np.ndarray) -> float | None:
    """The mean over the episodes that have a score; None when none has."""
    x = x[~np.isnan(x)]
    return float(x.mean()) if x.size else None


def _front(points: dict[str, tuple[float, float]]) -> tuple[str, ...]:
    """Names not dominated: no other point with cost ≤, success ≥ and one of them strict."""
    keep = []
    for a, (ca, sa) in points.items():
        if not any(
            (cb <= ca and sb >= sa) and (cb < ca or sb > sa)
            for b, (cb, sb) in points.items()
            if b != a
        ):
            keep.append(a)
    return tuple(sorted(keep, key=lambda n: points[n]))


@validate_params(
    {
        "variants": [Interval(int, 1, 1000)],
        "grid": [Each((Interval(float, None, None),), min_len=2)],
    }
)
def sweep(
    *, env_ids: Iterable[str] = ENV_IDS, variants: int = 2, grid: Sequence[float] = DEFAULT_GRID
) -> SweepResult:
    """Sweep each component's weight over ``grid`` (others at their defaults)."""
    grid = tuple(float(w) for w in grid)
    env_ids = tuple(env_ids)
    if not env_ids:
        raise ConfigError("The 'env_ids' parameter of sweep must name at least one environment.")
    data, spec = _play(env_ids, variants)
    names = tuple(spec["behaviours"])
    components = tuple(spec["weights"])
    defaults = dict(spec["weights"])

    def best(weights: dict[str, float]) -> str:
        t = _totals(data, weights, spec)
        return max(names, key=lambda b: (round(t[b], 12), -names.index(b)))

    preferred: dict[str, list[str]] = {}
    switches = []
    for c in components:
        row = [best({**defaults, c: w}) for w in grid]
        preferred[c] = row
        for i in range(1, len(grid)):
            if row[i] != row[i - 1]:
                switches.append(
                    {
                        "component": c,
                        "from_weight": grid[i - 1],
                        "to_weight": grid[i],
                        "from": row[i - 1],
                        "to": row[i],
                    }
                )
    success = {b: float(d["success"].mean()) for b, d in data.items()}
    spent = {b: float(d["cost_spent"].mean()) for b, d in data.items()}
    return SweepResult(
        behaviours=names,
        n_tasks=len(data[names[0]]["unscored"]),
        grid=grid,
        default_choice=best(defaults),
        mean_components={b: {c: _mean(d[c]) for c in components} for b, d in data.items()},
        excluded={b: {c: int(np.isnan(d[c]).sum()) for c in components} for b, d in data.items()},
        unscored={b: int(d["unscored"].sum()) for b, d in data.items()},
        success=success,
        cost_spent=spent,
        preferred=preferred,
        switches=tuple(switches),
        pareto=_front({b: (spent[b], success[b]) for b in names}),
    )
