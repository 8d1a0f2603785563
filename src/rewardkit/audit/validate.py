"""``validate``: the five gates on one reward, plus rank agreement and the stratified test as
evidence (seed 000 §6: evidence for human review, not gates).

Usage::

    from rewardkit.audit import validate
    from rewardkit.audit.preset import bioaudit_inputs
    p = bioaudit_inputs()                # the bio-audit preset, chosen explicitly
    v = validate(p.tasks, judge=p.judge, golden=p.golden, substrates=p.substrates,
                 candidates=p.candidates, judge_factory=p.judge_factory)
    v.passed, [(g.name, g.passed) for g in v.gates]

    v = validate(tasks, judge=my_judge, reward=my_reward, golden=my_golden,
                 judge_factory=("my_pkg:make_judge", {}), reward_factory=("my_pkg:make_reward", {}))

Any judge / reward that fits :mod:`rewardkit.audit.protocols` works; the factories let the
determinism gate rebuild them in a fresh process (rewardkit's own objects carry theirs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._json import JsonMixin
from .._validation import MAX_RESAMPLES, Interval, validate_params
from ..errors import ConfigError
from ..stats import gold_quality, rank_agreement, stratified_test
from .gates import (
    GateResult,
    gate_ablations,
    gate_determinism,
    gate_golden,
    gate_mapping,
    gate_spike_in,
)
from .protocols import Golden, Judge, LevelReward, Reward, Task
from .scoring import score_tasks, taskset_hash

__all__ = ["Validation", "validate"]

Factory = tuple[str, Mapping[str, Any]]


@dataclass(frozen=True)
class Validation(JsonMixin):
    gates: tuple[GateResult, ...]
    evidence: Mapping[str, Any]
    passed: bool
    taskset_hash: str
    reward: Mapping[str, Any]
    note: str = ""  # what the reader must know about the data (the preset's caveats)

    @property
    def outcome(self) -> str:
        """ "pass" (all five ran and passed), "incomplete" (the gates that ran passed, some
        were not run for lack of data) or "fail"."""
        if any(not g.passed and not g.not_run for g in self.gates):
            return "fail"
        return "incomplete" if any(g.not_run for g in self.gates) else "pass"

    def gate(self, name: str) -> GateResult:
        return next(g for g in self.gates if g.name == name)


def _evidence(
    tasks: Sequence[Task], judge: Judge, reward: Reward, n_resamples: int, rng: int
) -> dict[str, Any]:
    try:
        rec = reward.default_recipe
        vals = score_tasks(tasks, judge=judge, reward=reward, recipes=[rec]).values[rec]
        q = gold_quality([t.n_gold_correct for t in tasks], [t.n_gold_error for t in tasks])
        good = [t.n_gold_error == 0 for t in tasks]
        return {
            "recipe": rec,
            "rank_agreement": rank_agreement(vals, q, n_resamples=n_resamples, rng=rng).to_dict(),
            "stratified": stratified_test(vals, good, n_resamples=n_resamples, rng=rng).to_dict(),
        }
    except Exception as exc:  # evidence only: a failure is reported, never a gate
        return {"error": f"{type(exc).__name__}: {exc}"}


@validate_params(
    {
        "ceiling": [Interval(float, 0, None, closed="neither")],
        "spike_in_drop": [Interval(float, 0, None)],
        "n_resamples": [Interval(int, 1, MAX_RESAMPLES)],
        "rng": ["rng"],
        "note": ["str"],
    }
)
def validate(
    tasks: Sequence[Task] | None = None,
    *,
    judge: Judge | None = None,
    reward: Reward | None = None,
    golden: Sequence[Golden] | None = None,
    substrates: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    candidates: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    judge_factory: Factory | None = None,
    reward_factory: Factory | None = None,
    ceiling: float = 0.85,
    spike_in_drop: float = 0.30,
    n_resamples: int = 2000,
    rng: int = 42,
    note: str = "",
) -> Validation:
    """Run the five gates on the given data; ``tasks`` and ``judge`` are required (the shipped
    benchmark is the explicit preset :func:`rewardkit.audit.preset.bioaudit_inputs`). A gate
    whose data is missing (``golden``; ``substrates`` and ``candidates``) is not run. ``passed``
    is True only when all five gates ran and passed."""
    if tasks is None or judge is None:
        missing = "tasks" if tasks is None else "judge"
        raise ConfigError(
            f"The '{missing}' parameter of validate is required. For the shipped synthetic "
            f"benchmark use rewardkit.audit.preset.bioaudit_inputs() (the bio-audit preset)."
        )
    reward = LevelReward() if reward is None else reward
    if reward_factory is None:
        reward_factory = getattr(reward, "factory", None)
    gates = (
        gate_mapping(reward, ceiling=ceiling),
        gate_determinism(
            tasks,
            judge=judge,
            reward=reward,
            judge_factory=judge_factory,
            reward_factory=reward_factory,
        ),
        gate_spike_in(
            judge=judge,
            reward=reward,
            substrates=substrates,
            candidates=candidates,
            threshold=spike_in_drop,
        ),
        gate_ablations(tasks, judge=judge, reward=reward),
        gate_golden(golden, judge=judge),
    )
    cfg = getattr(reward, "config", None)
    return Validation(
        gates=gates,
        evidence=_evidence(tasks, judge, reward, n_resamples, rng),
        passed=all(g.passed for g in gates),
        taskset_hash=taskset_hash(tasks),
        reward=cfg() if callable(cfg) else {"kind": type(reward).__qualname__},
        note=note,
    )
