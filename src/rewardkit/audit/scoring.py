"""Judge a taskset once and score it under every recipe: the input of calibrate and the gates.

Usage::

    from rewardkit.audit.scoring import score_tasks
    scored = score_tasks(tasks, judge=engine, reward=LevelReward())
    scored.values["B"]        # one reward per task (None where every step is masked)
    scored.to_json()          # the reward JSON the determinism gate compares byte for byte

A task with step ``reviews`` is scored with ``session=True`` (only steps reviewed final count);
``reviews is None`` (legacy / benchmark data) treats every step as final (seed 000 §3). A task
object that still has the old attribute ``verdicts`` instead is read the same, with a
:class:`~rewardkit.errors.RenamedFieldWarning`; the next version refuses it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._json import JsonMixin, content_hash, to_plain
from ..errors import ConfigError, RenamedFieldWarning
from ..levels import Step
from .protocols import Judge, Reward, Task, output_value

__all__ = ["ScoredTasks", "judge_levels", "score_tasks", "task_reviews", "taskset_hash"]


def task_reviews(task: Task) -> Sequence[str | None] | None:
    """``task.reviews`` (one review per decision; None = no review session). A task class
    written for the old attribute name ``verdicts`` is read the same, with a warning; one with
    both names that disagree is refused (as a file line with both is)."""
    if (
        hasattr(task, "reviews")
        and hasattr(task, "verdicts")
        and _listed(task.reviews) != _listed(task.verdicts)
    ):
        raise ConfigError(
            f"{type(task).__name__} has both 'verdicts' (the old name) and 'reviews', and they "
            "differ; give only 'reviews'."
        )
    if not hasattr(task, "reviews") and hasattr(task, "verdicts"):
        RenamedFieldWarning.warn(
            f"{type(task).__name__}: the task attribute 'verdicts' is deprecated; rename it to "
            "'reviews' (read as 'reviews' for now; the next version refuses 'verdicts')",
        )
        return task.verdicts
    return task.reviews


def _listed(value: Any) -> list[Any] | None:
    return None if value is None else list(value)


def judge_levels(judge: Judge, decisions: Sequence[Mapping[str, Any]]) -> tuple[int, ...]:
    """The judge's level per decision, checked to be ints in −1..L."""
    js = judge.audit(list(decisions))
    if len(js) != len(decisions):
        raise ConfigError(
            f"The judge returned {len(js)} judgments for {len(decisions)} decisions; "
            f"it must return one per decision."
        )
    out = []
    for j in js:
        level = getattr(j, "level", j)
        if isinstance(level, bool) or not isinstance(level, int) or level < -1:
            raise ConfigError(f"The judge returned level {level!r}; levels are ints >= -1.")
        out.append(level)
    return tuple(out)


def task_steps(levels: Sequence[int], reviews: Sequence[str | None] | None) -> list[Step]:
    if reviews is None:
        return [Step(lv) for lv in levels]
    return [Step(lv, v) for lv, v in zip(levels, reviews, strict=True)]


@dataclass(frozen=True)
class ScoredTasks(JsonMixin):
    """Per task: the judge's levels; per recipe and task: the reward value and its output."""

    task_ids: tuple[str, ...]
    levels: tuple[tuple[int, ...], ...]
    values: Mapping[str, tuple[float | None, ...]]
    outputs: Mapping[str, tuple[Any, ...]]


def score_tasks(
    tasks: Sequence[Task], *, judge: Judge, reward: Reward, recipes: Sequence[str] | None = None
) -> ScoredTasks:
    """Judge every task once, then score it under each recipe (default: ``reward.recipes``)."""
    recs = tuple(reward.recipes if recipes is None else recipes)
    ids, levels, steps, sessions = [], [], [], []
    for t in tasks:
        lv = judge_levels(judge, t.decisions)
        ids.append(t.task_id)
        levels.append(lv)
        reviews = task_reviews(t)
        steps.append(task_steps(lv, reviews))
        sessions.append(reviews is not None)
    outputs: dict[str, tuple[Any, ...]] = {}
    values: dict[str, tuple[float | None, ...]] = {}
    for r in recs:
        outs = tuple(reward(s, recipe=r, session=sess) for s, sess in zip(steps, sessions))
        outputs[r] = tuple(to_plain(o) for o in outs)
        values[r] = tuple(output_value(o) for o in outs)
    return ScoredTasks(tuple(ids), tuple(levels), values, outputs)


def taskset_hash(tasks: Sequence[Task]) -> str:
    """Content hash of what the audit reads from a taskset (decisions, reviews, gold)."""
    return content_hash(
        [
            {
                "task_id": t.task_id,
                "decisions": list(t.decisions),
                "reviews": None if (r := task_reviews(t)) is None else list(r),
                "gold": [t.n_gold_correct, t.n_gold_error, t.n_gold_edge],
            }
            for t in tasks
        ]
    )
