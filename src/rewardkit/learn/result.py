"""The result of a ``rewardkit learn`` experiment: runs, summary with paired intervals, files.

Files written by :meth:`LearnResult.write` (``preregistration.json`` is written earlier, by
the runner, before training): ``summary.json`` (pre-registration hash, per-seed metrics before
and after, paired intervals, effects found), ``curves.jsonl`` (one line per arm, seed and
training step: the batch statistics; plus the held-out curve points) and, with the report
extra, ``curves.png``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._json import JsonMixin, canonical_json, write_atomic
from .._optional import have

if TYPE_CHECKING:
    from ..stats.paired import PairedDifference
    from ._task import LearnTask

__all__ = ["LAST_FRACTION", "LearnResult"]

LAST_FRACTION = 0.1  # "end of training": the mean over the last tenth of the steps


def _mean(xs: Sequence[float | None]) -> float | None:
    v = [x for x in xs if x is not None and not math.isnan(x)]
    return math.fsum(v) / len(v) if v else None


@dataclass(frozen=True)
class LearnResult(JsonMixin):
    """One experiment: what was registered, every (arm, seed) run and the summary."""

    experiment: str
    preregistration: dict[str, Any]
    preregistration_hash: str
    steps: int
    runs: tuple[dict[str, Any], ...] = field(repr=False)
    summary: dict[str, Any] = field(repr=False)

    @classmethod
    def build(
        cls,
        task: LearnTask,
        prereg: dict[str, Any],
        prereg_hash: str,
        runs: list[dict[str, Any]],
        steps: int,
        paired: Callable[..., PairedDifference],
    ) -> LearnResult:
        seeds = list(prereg["seeds"])
        by = {(r["arm"], r["seed"]): r for r in runs}
        ref = task.reference
        metrics: dict[str, Any] = {}
        found: list[str] = []
        for m in task.metrics:

            def col(arm: str, when: str, name: str = m.name) -> list[float | None]:
                return [by[(arm, s)][when][name] for s in seeds]

            per_arm = {
                arm: {
                    "before": col(arm, "before"),
                    "after": col(arm, "after"),
                    "mean_before": _mean(col(arm, "before")),
                    "mean_after": _mean(col(arm, "after")),
                    "change": paired(m.name, arm, "before", col(arm, "after"), col(arm, "before")),
                }
                for arm in task.arms
            }
            vs = {
                arm: paired(m.name, arm, ref, col(arm, "after"), col(ref, "after"))
                for arm in task.arms
                if arm != ref
            }
            metrics[m.name] = {"better": m.better, "per_arm": per_arm, "vs_reference": vs}
            for arm, pd in vs.items():
                if pd.excludes_zero:
                    found.append(_effect(m.name, arm, ref, pd, "after training"))
            for arm in task.arms:
                ch = paired(m.name, arm, "before", col(arm, "after"), col(arm, "before"))
                if ch.excludes_zero:
                    found.append(_effect(m.name, arm, "before", ch, "training change"))
        key = task.curve_metric
        tail = max(1, math.ceil(steps * LAST_FRACTION))

        def train(arm: str, last: bool) -> list[float | None]:
            out: list[float | None] = []
            for s in seeds:
                vals = [row[key] for row in by[(arm, s)]["train"]]
                out.append(_mean(vals[-tail:] if last else vals))
            return out

        training: dict[str, Any] = {
            "statistic": key,
            "last_steps": tail,
            "per_arm": {
                arm: {"over_training": train(arm, False), "last_steps": train(arm, True)}
                for arm in task.arms
            },
            "vs_reference": {
                arm: {
                    "over_training": paired(
                        f"{key} over training", arm, ref, train(arm, False), train(ref, False)
                    ),
                    "last_steps": paired(
                        f"{key} over the last {tail} steps",
                        arm,
                        ref,
                        train(arm, True),
                        train(ref, True),
                    ),
                }
                for arm in task.arms
                if arm != ref
            },
        }
        for arm, d in training["vs_reference"].items():
            for pd in d.values():
                if pd.excludes_zero:
                    found.append(_effect(pd.metric, arm, ref, pd, "training batches"))
        summary = {
            "metrics": metrics,
            "training": training,
            "effects_found": found,
            "n_seeds": len(seeds),
        }
        return cls(task.name, prereg, prereg_hash, steps, tuple(runs), summary)

    def summary_json(self) -> dict[str, Any]:
        """What ``summary.json`` holds: everything except the per-step curves."""
        return {
            "experiment": self.experiment,
            "preregistration_hash": self.preregistration_hash,
            "steps": self.steps,
            "runs": [
                {k: v for k, v in r.items() if k not in ("train", "curve")} for r in self.runs
            ],
            "summary": self.summary,
        }

    def curves_jsonl(self) -> str:
        lines = []
        for r in self.runs:
            for i, row in enumerate(r["train"], start=1):
                lines.append({"arm": r["arm"], "seed": r["seed"], "step": i, "train": row})
            for point in r["curve"]:
                lines.append({"arm": r["arm"], "seed": r["seed"], "heldout": point})
        return "".join(canonical_json(x) + "\n" for x in lines)

    def write(self, out: str | Path) -> dict[str, Path]:
        out = Path(out)
        paths = {
            "summary.json": write_atomic(
                out / "summary.json", canonical_json(self.summary_json(), indent=1) + "\n"
            ),
            "curves.jsonl": write_atomic(out / "curves.jsonl", self.curves_jsonl()),
        }
        if have("matplotlib"):
            from .plots import render_curves

            paths["curves.png"] = write_atomic(out / "curves.png", render_curves(self))
        return paths


def _effect(metric: str, arm: str, ref: str, pd: PairedDifference, what: str) -> str:
    return (
        f"{metric} ({what}): {arm} − {ref} = {pd.mean:+.4f}, 95% CI "
        f"[{pd.low:+.4f}, {pd.high:+.4f}] over {len(pd.per_seed)} seeds"
    )
