"""Spike-in, the strong calibration anchor (seed 000 §5).

Usage::

    from rewardkit.audit import spike_in
    p = bioaudit_inputs()                                # the bio-audit preset's data
    s = spike_in(judge=p.judge, reward=LevelReward(), substrates=p.substrates,
                 candidates=p.candidates)
    s.passed, [(c.paradigm, c.drop) for c in s.cases]

For each paradigm, take its clean 12-step substrate ``<paradigm>_correct`` (all L3, reward 0.85)
and append one decision from ``INJECTION_CANDIDATES[paradigm]``. A case passes when the judge
itself gives the injected step level 0 (self-check) and drop = reward(clean) − reward(injected)
≥ 0.30. Why 0.30: recipe B gives (n−1)/n · 0.85 · γ after one L0 among n steps, so for n ≥ 2
the drop is at least 0.85 · (1 − γ) · (n−1)/n ≥ 0.85 × 0.7 × 0.5 = 0.2975 ≈ 0.30; at n = 13
it is 0.85 − 0.235385 = 0.6146. Every candidate of every paradigm is tried; a paradigm passes
when all its candidates do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._json import JsonMixin
from .._validation import Interval, validate_params
from ..errors import ConfigError
from .protocols import Judge, Reward, output_value
from .scoring import judge_levels, task_steps

__all__ = ["SpikeIn", "SpikeInCase", "spike_in"]

DROP_THRESHOLD = 0.30


@dataclass(frozen=True)
class SpikeInCase(JsonMixin):
    paradigm: str
    candidate: str  # the injected decision's action
    n_steps: int  # after injection
    clean_levels: tuple[int, ...]
    injected_level: int
    clean_reward: float | None
    injected_reward: float | None
    drop: float | None
    passed: bool


@dataclass(frozen=True)
class SpikeIn(JsonMixin):
    recipe: str
    threshold: float
    cases: tuple[SpikeInCase, ...]
    paradigms: Mapping[str, bool]  # paradigm → all its candidates passed
    passed: bool


@validate_params({"recipe": ["str", None], "threshold": [Interval(float, 0, None)]})
def spike_in(
    *,
    judge: Judge,
    reward: Reward,
    substrates: Mapping[str, Sequence[Mapping[str, Any]]],
    candidates: Mapping[str, Sequence[Mapping[str, Any]]],
    recipe: str | None = None,
    threshold: float = DROP_THRESHOLD,
) -> SpikeIn:
    """Inject each candidate into its paradigm's substrate and measure the drop.

    ``substrates`` maps ``"<paradigm>_correct"`` to decisions and ``candidates`` maps a paradigm
    to decisions to inject (the bio-audit preset's are ``bioaudit_inputs().substrates`` and
    ``.candidates``). ``recipe`` defaults to the reward's default recipe.
    """
    thr = float(threshold)
    rec = reward.default_recipe if recipe is None else recipe
    cases: list[SpikeInCase] = []
    paradigms: dict[str, bool] = {}
    for paradigm in sorted(candidates):
        key = f"{paradigm}_correct"
        if key not in substrates:
            raise ConfigError(
                f"spike_in has candidates for paradigm '{paradigm}' but no substrate '{key}'; "
                f"substrates: {sorted(substrates)}."
            )
        clean = list(substrates[key])
        clean_levels = judge_levels(judge, clean)
        clean_value = output_value(
            reward(task_steps(clean_levels, None), recipe=rec, session=False)
        )
        ok = bool(candidates[paradigm])
        for cand in candidates[paradigm]:
            levels = judge_levels(judge, [*clean, cand])
            value = output_value(reward(task_steps(levels, None), recipe=rec, session=False))
            drop = None if clean_value is None or value is None else clean_value - value
            passed = levels[-1] == 0 and drop is not None and drop >= thr
            ok = ok and passed
            cases.append(
                SpikeInCase(
                    paradigm=paradigm,
                    candidate=str(cand.get("action")),
                    n_steps=len(levels),
                    clean_levels=clean_levels,
                    injected_level=levels[-1],
                    clean_reward=clean_value,
                    injected_reward=value,
                    drop=drop,
                    passed=passed,
                )
            )
        paradigms[paradigm] = ok
    return SpikeIn(
        recipe=rec,
        threshold=thr,
        cases=tuple(cases),
        paradigms=paradigms,
        passed=bool(paradigms) and all(paradigms.values()),
    )
