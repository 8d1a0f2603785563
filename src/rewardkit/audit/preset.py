"""The bio-audit preset: level rewards judged by the rule engine on the shipped synthetic
benchmark — one preset on top of the generic audit, chosen explicitly (``--preset bioaudit``).

Usage::

    from rewardkit.audit import calibrate, validate
    from rewardkit.audit.preset import bioaudit_inputs, generator_seed_spread
    p = bioaudit_inputs()                                  # or miss_rate=0.15, spurious_rate=0.05
    cal = calibrate(p.tasks, judge=p.judge, note=p.note)
    v = validate(p.tasks, judge=p.judge, golden=p.golden, substrates=p.substrates,
                 candidates=p.candidates, judge_factory=p.judge_factory)
    spread = generator_seed_spread(range(80))             # ρ and diff over generator seeds

What to know before reading its numbers (also in every preset report, ``note``):

* the benchmark is **synthetic**, and the generator keeps only mutations on which the engine
  fires exactly the catalogued rule, so the engine's precision and its recall on visible defects
  are **1.0 by construction** (:func:`rewardkit.bioaudit.imperfect.engine_agreement` measures
  them); only the silent defects (invisible in the record) are missed. ``miss_rate`` /
  ``spurious_rate`` swap in :class:`~rewardkit.bioaudit.imperfect.ImperfectEngine`, so that
  calibration has a judge that can be wrong;
* generator seed 66 was **chosen among seeds 0–79** as the one closest to seed 000 §7.2;
  :func:`generator_seed_spread` recomputes ρ and the good − bad difference over the seeds, so
  the chosen seed's numbers can be read against their spread.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._json import JsonMixin
from .._validation import SEED, Interval, validate_params

__all__ = [
    "BioauditInputs",
    "SeedSpread",
    "bioaudit_inputs",
    "generator_seed_spread",
    "note",
    "preset_judge",
]

CHOSEN_SEED = 66


def note(engine: Mapping[str, Any], imperfect: bool) -> str:
    """The preset's honesty note, with the judge's measured precision and recall."""
    p, r = engine.get("precision"), engine.get("visible_recall")
    judge = (
        f"an imperfect engine (precision {p:.3f}, visible recall {r:.3f} against the "
        f"generator's labels)"
        if imperfect
        else "the rule engine, whose precision and visible recall are 1.0 by construction (the "
        "generator keeps only mutations that fire exactly the catalogued rule)"
    )
    return (
        f"bio-audit preset: synthetic benchmark, judged by {judge}; generator seed "
        f"{CHOSEN_SEED} was chosen among seeds 0–79 as the closest to seed 000 §7.2 (see the "
        f"spread over generator seeds)"
    )


@dataclass(frozen=True)
class BioauditInputs:
    tasks: tuple[Any, ...]
    golden: tuple[Any, ...]
    substrates: Mapping[str, Sequence[Mapping[str, Any]]]
    candidates: Mapping[str, Sequence[Mapping[str, Any]]]
    judge: Any
    judge_factory: tuple[str, dict[str, Any]]
    benchmark: Mapping[str, Any]
    engine: Mapping[str, Any]  # measured precision / recall of the judge
    note: str


@validate_params(
    {
        "miss_rate": [Interval(float, 0, 1)],
        "spurious_rate": [Interval(float, 0, 1)],
        "rng": [SEED],
    }
)
def preset_judge(
    miss_rate: float = 0.0, spurious_rate: float = 0.0, *, rng: int = 0
) -> tuple[Any, tuple[str, dict[str, Any]]]:
    """The rule engine (exact, or imperfect at the given rates) and its factory."""
    from ..bioaudit import Engine
    from ..bioaudit.imperfect import ImperfectEngine

    if miss_rate > 0 or spurious_rate > 0:
        judge = ImperfectEngine(miss_rate=miss_rate, spurious_rate=spurious_rate, rng=rng)
        return judge, judge.factory
    return Engine(), ("rewardkit.bioaudit:Engine", {})


@validate_params(
    {
        "miss_rate": [Interval(float, 0, 1)],
        "spurious_rate": [Interval(float, 0, 1)],
        "rng": [SEED],
    }
)
def bioaudit_inputs(
    version: str | Path = "v1.2.0",
    *,
    miss_rate: float = 0.0,
    spurious_rate: float = 0.0,
    rng: int = 0,
) -> BioauditInputs:
    """The shipped benchmark, its golden set and spike-in substrates, and the judge."""
    from ..bioaudit import INJECTION_CANDIDATES, load_benchmark
    from ..bioaudit.imperfect import engine_agreement

    bm = load_benchmark(version)
    imperfect = miss_rate > 0 or spurious_rate > 0
    judge, factory = preset_judge(miss_rate, spurious_rate, rng=rng)
    agreement = engine_agreement(judge, bm)
    return BioauditInputs(
        tasks=bm.tasks,
        golden=bm.golden,
        substrates=bm.substrates,
        candidates=INJECTION_CANDIDATES,
        judge=judge,
        judge_factory=factory,
        benchmark={"version": bm.version, "hashes": bm.hashes},
        engine=agreement,
        note=note(agreement, imperfect),
    )


@dataclass(frozen=True)
class SeedSpread(JsonMixin):
    """ρ (recipes A and B vs gold q) and diff (good − bad) per generator seed, their mean and
    sd, and where the chosen seed falls (its percentile among the seeds)."""

    seeds: tuple[int, ...]
    per_seed: tuple[Mapping[str, float | None], ...]
    summary: Mapping[str, Mapping[str, float | None]]
    chosen_seed: int


def _points(tasks: Sequence[Any], judge: Any) -> dict[str, float | None]:
    from ..stats import gold_quality, rank_agreement
    from .protocols import LevelReward
    from .scoring import score_tasks

    scored = score_tasks(tasks, judge=judge, reward=LevelReward(), recipes=["A", "B"])
    q = gold_quality([t.n_gold_correct for t in tasks], [t.n_gold_error for t in tasks])
    good = [t.n_gold_error == 0 for t in tasks]
    out: dict[str, float | None] = {}
    for r in ("A", "B"):
        vals = scored.values[r]
        out[f"rho_{r}"] = rank_agreement(vals, q, n_resamples=1, rng=0).spearman.value
        g = [v for v, k in zip(vals, good) if k and v is not None]
        b = [v for v, k in zip(vals, good) if not k and v is not None]
        out[f"diff_{r}"] = sum(g) / len(g) - sum(b) / len(b) if g and b else None
    out["n_good"] = float(sum(good))
    return out


def generator_seed_spread(
    seeds: Iterable[int] = range(80), *, judge: Any = None, chosen: int = CHOSEN_SEED
) -> SeedSpread:
    """Regenerate the benchmark for each seed and compute the point statistics on it."""
    from ..bioaudit import Engine, generate, load_benchmark

    j = Engine() if judge is None else judge
    seed_t = tuple(seeds)
    rows: list[dict[str, float | None]] = []
    for s in seed_t:
        with tempfile.TemporaryDirectory() as d:
            generate(s, out=d)
            rows.append({"seed": float(s), **_points(load_benchmark(Path(d)).tasks, j)})
    summary: dict[str, dict[str, float | None]] = {}
    for key in ("rho_A", "rho_B", "diff_A", "diff_B"):
        vals = [v for r in rows if (v := r[key]) is not None]
        mean = sum(vals) / len(vals) if vals else None
        sd = (
            math.sqrt(sum((v - mean) ** 2 for v in vals) / (len(vals) - 1))
            if mean is not None and len(vals) > 1
            else None
        )
        mine = next((r[key] for r in rows if r["seed"] == chosen), None)
        pct = sum(v <= mine for v in vals) / len(vals) if mine is not None and vals else None
        summary[key] = {
            "mean": mean,
            "sd": sd,
            "chosen": mine,
            "chosen_percentile": pct,
            "min": min(vals) if vals else None,
            "max": max(vals) if vals else None,
        }
    return SeedSpread(seed_t, tuple(rows), summary, chosen)
