"""Calibrate a reward against gold annotations, recipes A/B/C side by side (seed 000 §4, §7).

Usage::

    from rewardkit.audit import calibrate
    cal = calibrate(out="out/calibration")     # shipped benchmark, Engine, LevelReward
    print(cal.table())                          # the seed §7 table
    cal.passed                                  # the preregistered acceptance criterion

Order of work: the preregistration record (statistic definitions, B, seeds, taskset hash,
reward configuration) is built and, with ``out``, written to ``preregistration.json`` *before*
any task is judged or any statistic computed; its hash goes into the result.

Per recipe: rank agreement of reward vs gold quality q = correct/(correct + error) (edge neutral,
all-edge tasks excluded; ρ and τ_b with task-level percentile bootstrap intervals), the
stratified test good (n_gold_error == 0) vs bad (≥ 1), and seed stability over the seeds.
Acceptance (preregistered, seed §4): the default recipe separates good from bad (diff > 0 and
p < alpha) and every recipe's intervals are seed-stable. The other findings (diff_B > diff_A,
overlapping ρ intervals of A and B, C equal to A) are reported as evidence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._json import JsonMixin, canonical_json, content_hash, write_atomic
from .._progress import track
from .._results import Check
from .._validation import MAX_RESAMPLES, SEED, Each, Interval, check_memory, validate_params
from ..errors import ConfigError
from ..stats import (
    DEFAULT_SEEDS,
    RankAgreement,
    SeedStability,
    StratifiedTest,
    gold_quality,
    rank_agreement,
    seed_stability,
    stratified_test,
)
from .protocols import Judge, Reward, Task
from .scoring import ScoredTasks, score_tasks, taskset_hash

__all__ = ["Calibration", "Preregistration", "RecipeCalibration", "calibrate"]

DEFINITIONS = {
    "gold_quality": "q = n_gold_correct / (n_gold_correct + n_gold_error); edge neutral; "
    "all-edge tasks have no q and are excluded (counted)",
    "rank_agreement": "Spearman rho and Kendall tau_b of reward vs q; task-level paired "
    "percentile bootstrap (scipy.stats.bootstrap convention); no pass/fail threshold",
    "groups": "good: n_gold_error == 0; bad: n_gold_error >= 1",
    "stratified_test": "mean(good) - mean(bad); two-sided permutation p, (k+1)/(B+1); "
    "percentile bootstrap CI of the difference; significant = diff > 0 and p < alpha",
    "seed_stability": "rho/tau_b point estimates identical across seeds; every CI bound "
    "within tolerance (max - min over seeds)",
    "excluded": "tasks whose reward is None are excluded from every statistic (counted)",
}


@dataclass(frozen=True)
class Preregistration(JsonMixin):
    """What will be computed, fixed before anything is (seed 000 §4, 拍板 #2)."""

    registration_id: str
    definitions: Mapping[str, str]
    recipes: tuple[str, ...]
    default_recipe: str
    n_resamples: int
    seeds: tuple[int, ...]
    confidence_level: float
    alpha: float
    seed_tolerance: float
    taskset_hash: str
    n_tasks: int
    reward: Mapping[str, Any]

    @property
    def hash(self) -> str:
        return content_hash(self.to_dict())


@dataclass(frozen=True)
class RecipeCalibration(JsonMixin):
    recipe: str
    rank_agreement: RankAgreement  # under the first seed
    stratified: StratifiedTest
    stability: SeedStability
    n_tasks: int
    n_reward_none: int


@dataclass(frozen=True)
class Calibration(JsonMixin):
    preregistration: Preregistration
    preregistration_hash: str
    recipes: tuple[RecipeCalibration, ...]
    acceptance: tuple[Check, ...]  # preregistered: decides ``passed``
    findings: tuple[Check, ...]  # recipe comparisons: evidence
    passed: bool
    note: str = ""  # what the reader must know about the data (the bio-audit preset's caveats)

    def recipe(self, name: str) -> RecipeCalibration:
        return next(r for r in self.recipes if r.recipe == name)

    def table(self) -> str:
        """The seed §7 table: recipe | Spearman ρ [CI] | Kendall τ_b [CI] | good mean | bad mean
        | diff [CI] | p."""
        cols = ("recipe", "Spearman ρ [CI]", "Kendall τ_b [CI]", "good mean", "bad mean")
        head = "| " + " | ".join((*cols, "diff [CI]", "p")) + " |\n" + "|---" * 7 + "|\n"
        if self.note:  # what the reader must know about the data comes first
            head = f"{self.note}.\n\n" + head
        rows = []
        for r in self.recipes:
            ra, st = r.rank_agreement, r.stratified
            rows.append(
                f"| {r.recipe} | {_est(ra.spearman)} | {_est(ra.kendall_tau_b)} | "
                f"{st.mean_good:.4f} | {st.mean_bad:.4f} | {st.diff:+.3f} "
                f"[{st.confidence_interval.low:.3f}, {st.confidence_interval.high:.3f}] | "
                f"{st.pvalue:.3f} |"
            )
        return head + "\n".join(rows) + "\n"


def _est(e: Any) -> str:
    if e.value is None:
        return "undefined"
    ci = e.confidence_interval
    return f"{e.value:.4f}" + ("" if ci is None else f" [{ci.low:.4f}, {ci.high:.4f}]")


def _reward_config(reward: Reward) -> dict[str, Any]:
    cfg = getattr(reward, "config", None)
    if callable(cfg):
        return dict(cfg())
    return {"kind": type(reward).__qualname__, "recipes": list(reward.recipes)}


def _acceptance(recs: Mapping[str, RecipeCalibration], default: str, alpha: float) -> list[Check]:
    """The preregistered criteria: the default recipe separates good from bad, and every
    recipe's rank-agreement intervals are seed-stable."""
    out = []
    d = recs[default].stratified
    out.append(
        Check(
            f"{default}: good vs bad separated",
            f"diff > 0 and p < {alpha:g}",
            f"diff {d.diff:+.3f}, p {d.pvalue:.4f}",
            d.significant,
        )
    )
    for name, r in recs.items():
        s = r.stability
        out.append(
            Check(
                f"{name}: seed-stable over {len(s.seeds)} seeds",
                f"identical points, bounds within {s.tolerance:g}",
                f"points {'identical' if s.points_identical else 'differ'}, "
                f"max spread {s.max_bound_spread:.4f}",
                s.stable,
            )
        )
    return out


def _comparisons(recs: Mapping[str, RecipeCalibration]) -> list[Check]:
    """The recipe comparisons the seed reports (§7): evidence, not acceptance."""
    out = []
    if "A" in recs and "B" in recs:
        a, b = recs["A"], recs["B"]
        out.append(
            Check(
                "B separates more than A",
                "diff_B > diff_A",
                f"{b.stratified.diff:.3f} vs {a.stratified.diff:.3f}",
                b.stratified.diff > a.stratified.diff,
            )
        )
        ca, cb = (
            a.rank_agreement.spearman.confidence_interval,
            b.rank_agreement.spearman.confidence_interval,
        )
        overlap = ca is not None and cb is not None and ca.overlaps(cb)
        out.append(
            Check(
                "ρ intervals of A and B overlap",
                "overlap",
                "overlap" if overlap else "disjoint",
                overlap,
            )
        )
    if "A" in recs and "C" in recs:
        same = recs["A"].to_dict() | {"recipe": ""} == recs["C"].to_dict() | {"recipe": ""}
        out.append(
            Check(
                "C equals A (uniform PRM weights)",
                "identical",
                "identical" if same else "different",
                same,
            )
        )
    return out


@validate_params(
    {
        "n_resamples": [Interval(int, 1, MAX_RESAMPLES)],
        "seeds": [Each((SEED,), min_len=1, distinct=True)],
        "confidence_level": [Interval(float, 0, 1, closed="neither")],
        "alpha": [Interval(float, 0, 1, closed="neither")],
        "seed_tolerance": [Interval(float, 0, None)],
        "registration_id": ["str"],
        "note": ["str"],
        "plots": ["boolean"],
        "progress": ["boolean", None],
    }
)
def calibrate(
    tasks: Sequence[Task] | None = None,
    *,
    judge: Judge | None = None,
    reward: Reward | None = None,
    recipes: Sequence[str] | None = None,
    n_resamples: int = 2000,
    seeds: Sequence[int] = DEFAULT_SEEDS,
    confidence_level: float = 0.95,
    alpha: float = 0.05,
    seed_tolerance: float = 0.05,
    registration_id: str = "rewardkit-calibration",
    note: str = "",
    out: str | Path | None = None,
    plots: bool = False,
    progress: bool | None = False,
) -> Calibration:
    """Run the preregistered calibration; with ``out`` write preregistration.json (first),
    calibration.json, calibration.md (the seed §7 table) and, with ``plots``, calibration.png.

    ``tasks`` and ``judge`` are required (the shipped benchmark is the explicit preset
    :func:`rewardkit.audit.preset.bioaudit_inputs`); ``reward`` defaults to ``LevelReward()``.
    ``note`` is carried into the result (the preset's caveats about its data).
    """
    fn = "calibrate"
    b, seed_t = int(n_resamples), tuple(int(s) for s in seeds)
    level, a, tol = float(confidence_level), float(alpha), float(seed_tolerance)
    if tasks is None or judge is None:
        missing = "tasks" if tasks is None else "judge"
        raise ConfigError(
            f"The '{missing}' parameter of {fn} is required. For the shipped synthetic "
            f"benchmark use rewardkit.audit.preset.bioaudit_inputs() (the bio-audit preset)."
        )
    if reward is None:
        from .protocols import LevelReward

        reward = LevelReward()
    recs = tuple(reward.recipes if recipes is None else recipes)

    check_memory(  # before preregistration.json is written: a bootstrap index per task
        b,
        "n_resamples",
        fn,
        nbytes=b * max(len(tasks), 1) * 8,
        formula="n_resamples × n_tasks × 8 bytes",
    )
    prereg = Preregistration(
        registration_id=registration_id,
        definitions=DEFINITIONS,
        recipes=recs,
        default_recipe=reward.default_recipe,
        n_resamples=b,
        seeds=seed_t,
        confidence_level=level,
        alpha=a,
        seed_tolerance=tol,
        taskset_hash=taskset_hash(tasks),
        n_tasks=len(tasks),
        reward=_reward_config(reward),
    )
    outdir = None if out is None else Path(out)
    if outdir is not None:  # written before anything is computed
        write_atomic(outdir / "preregistration.json", canonical_json(prereg, indent=1) + "\n")

    scored: ScoredTasks = score_tasks(tasks, judge=judge, reward=reward, recipes=recs)
    q = gold_quality([t.n_gold_correct for t in tasks], [t.n_gold_error for t in tasks])
    good = [t.n_gold_error == 0 for t in tasks]
    per: dict[str, list[RankAgreement]] = {r: [] for r in recs}
    jobs = [(r, s) for r in recs for s in seed_t]
    for r, s in track(jobs, description="bootstrap (recipe × seed)", enabled=progress):
        per[r].append(
            rank_agreement(scored.values[r], q, n_resamples=b, confidence_level=level, rng=s)
        )
    results: dict[str, RecipeCalibration] = {}
    for r in recs:
        vals = scored.values[r]
        results[r] = RecipeCalibration(
            recipe=r,
            rank_agreement=per[r][0],
            stratified=stratified_test(
                vals, good, n_resamples=b, confidence_level=level, alpha=a, rng=seed_t[0]
            ),
            stability=seed_stability(vals, q, seeds=seed_t, tolerance=tol, results=per[r]),
            n_tasks=len(vals),
            n_reward_none=sum(v is None for v in vals),
        )
    default = reward.default_recipe if reward.default_recipe in results else recs[0]
    acceptance = _acceptance(results, default, a)
    cal = Calibration(
        preregistration=prereg,
        preregistration_hash=prereg.hash,
        recipes=tuple(results.values()),
        acceptance=tuple(acceptance),
        findings=tuple(_comparisons(results)),
        passed=all(f.passed for f in acceptance),
        note=note,
    )
    if outdir is not None:
        write_atomic(outdir / "calibration.json", cal.to_json(indent=1) + "\n")
        write_atomic(outdir / "calibration.md", cal.table())
        if plots:
            from .plots import plot_calibration

            plot_calibration(scored, q, good, outdir / "calibration.png")
    return cal
