"""Calibrate any reward against the user's gold labels (``rewardkit calibrate --rewards --gold``).

Usage::

    from rewardkit.audit.agreement import calibrate_rewards
    from rewardkit.audit.data import read_items, read_rewards
    items = read_items("gold.jsonl", require_gold=True)
    rewards, _ = read_rewards("rewards.jsonl")
    cal = calibrate_rewards(items, rewards, out="out/calibration")
    print(cal.table())

What it computes, preregistered (the record is written to ``preregistration.json`` before any
statistic):

* rank agreement of reward vs gold: Spearman ρ and Kendall τ_b with item-level paired
  percentile-bootstrap intervals (:func:`rewardkit.stats.rank_agreement`, equal to
  ``scipy.stats.bootstrap``); the same per component and per stratum;
* the good-vs-bad test (:func:`rewardkit.stats.stratified_test`): good = gold label true, or
  numeric gold ≥ ``good_min`` (default: the highest gold value in the file, i.e. "perfect");
* seed stability of the intervals over ``seeds``;
* inside groups (items sharing ``group``): concordant / tied / inverted pairs;
* for a probability-valued reward (every reward in [0, 1]) against binary gold: ECE, Brier
  and the reliability diagram (:func:`rewardkit.stats.probability.reliability`).

Acceptance: good items score higher than bad ones (diff > 0, p < alpha), the intervals are
seed-stable, and (when the reward was run here) it raised on no item. Everything else is
evidence. ``outcome`` is "pass", "fail" (a criterion failed) or "incomplete" (every criterion
that ran passed, but good vs bad could not run: fewer than two scored good or bad items).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._json import JsonMixin, canonical_json, content_hash, write_atomic
from .._results import Check
from .._validation import MAX_RESAMPLES, SEED, Each, Interval, check_memory, validate_params
from ..errors import ConfigError, InputError
from ..stats import (
    DEFAULT_SEEDS,
    RankAgreement,
    SeedStability,
    StratifiedTest,
    rank_agreement,
    seed_stability,
    stratified_test,
)
from ..stats.groups import GroupOrdering, group_ordering
from ..stats.probability import Reliability, reliability
from .data import Item, RewardRecord, join

__all__ = ["RewardCalibration", "StratumAgreement", "calibrate_rewards"]

DEFINITIONS = {
    "rank_agreement": "Spearman rho and Kendall tau_b of reward vs gold (a true label = 1, "
    "false = 0); item-level paired percentile bootstrap (scipy.stats.bootstrap convention)",
    "good": "gold label true, or numeric gold >= good_min (default: the highest gold value)",
    "stratified_test": "mean(good) - mean(bad); two-sided permutation p, (k+1)/(B+1); "
    "percentile bootstrap CI of the difference; significant = diff > 0 and p < alpha",
    "seed_stability": "rho/tau_b points identical across seeds; every CI bound within tolerance",
    "groups": "within-group pairs with different gold: concordant, tied reward, inverted",
    "probability": "when every reward is in [0, 1] and gold is binary: ECE over equal-width "
    "bins (sklearn calibration_curve binning), Brier score, reliability diagram",
    "excluded": "items whose reward is null are excluded from every statistic (counted)",
}


@dataclass(frozen=True)
class StratumAgreement(JsonMixin):
    stratum: str
    n: int
    mean_reward: float | None
    rank_agreement: RankAgreement | None
    note: str | None  # why rank agreement was not computed
    stratified: StratifiedTest | None = None  # good vs bad inside the stratum (2+ of each)


@dataclass(frozen=True)
class RewardCalibration(JsonMixin):
    preregistration: Mapping[str, Any]
    preregistration_hash: str
    data: Mapping[str, Any]  # file names, counts, the good rule
    rank_agreement: RankAgreement
    stratified: StratifiedTest | None
    stratified_note: str | None
    stability: SeedStability
    components: Mapping[str, RankAgreement]
    strata: tuple[StratumAgreement, ...]
    groups: GroupOrdering | None
    probability: Reliability | None
    probability_note: str | None
    acceptance: tuple[Check, ...]
    passed: bool  # every criterion ran and passed
    outcome: str = "pass"  # "pass", "fail" or "incomplete" (good vs bad not run)
    # components with fewer than 2 scored items: name -> why no rank agreement
    component_notes: Mapping[str, str] = field(default_factory=dict)

    def table(self) -> str:
        """A Markdown summary in the data's own terms (file names, strata, components)."""
        d = self.data
        ra = self.rank_agreement
        lines = [
            f"# Reward calibration: {d['rewards_name']} against {d['gold_name']}",
            "",
            f"{d['n_matched']} items matched by id ({d['n_reward_none']} with a null reward "
            f"left out; {d['n_items_without_reward']} gold items had no reward record, "
            f"{d['n_rewards_without_item']} reward records had no gold item). "
            f"Good items: {d['good_rule']}."
            + (
                f" The reward raised on {d['n_reward_errors']} item(s); first: "
                f"{d['first_reward_error']}."
                if d.get("n_reward_errors")
                else ""
            ),
            "",
            "| statistic | value [CI] |",
            "|---|---|",
            f"| Spearman ρ (reward vs gold) | {_est(ra.spearman)} |",
            f"| Kendall τ_b (reward vs gold) | {_est(ra.kendall_tau_b)} |",
        ]
        st = self.stratified
        if st is not None:
            lines.append(
                f"| good − bad mean reward ({st.n_good} good, {st.n_bad} bad) | "
                f"{st.diff:+.4f} [{st.confidence_interval.low:.4f}, "
                f"{st.confidence_interval.high:.4f}], p {st.pvalue:.4f} |"
            )
        else:
            lines.append(f"| good − bad mean reward | {self.stratified_note} |")
        s = self.stability
        lines.append(
            f"| seed stability ({len(s.seeds)} seeds) | points "
            f"{'identical' if s.points_identical else 'differ'}, max bound spread "
            f"{s.max_bound_spread:.4f} (≤ {s.tolerance:g}) |"
        )
        if self.groups is not None and self.groups.n_pairs:
            g = self.groups
            lines.append(
                f"| within-group pairs ({g.n_pairs} in {g.n_groups} groups) | concordant "
                f"{g.frac_concordant:.3f}, tied {g.frac_tied_reward:.3f}, inverted "
                f"{g.frac_inverted:.3f} |"
            )
        if self.probability is not None:
            p = self.probability
            lines.append(
                f"| calibration (reward as a probability) | ECE {p.ece:.4f}, Brier {p.brier:.4f} |"
            )
        elif self.probability_note:
            lines.append(f"| calibration (reward as a probability) | {self.probability_note} |")
        if self.components or self.component_notes:
            lines += ["", "| component | Spearman ρ [CI] | Kendall τ_b [CI] |", "|---|---|---|"]
            for name, comp in self.components.items():
                lines.append(f"| {name} | {_est(comp.spearman)} | {_est(comp.kendall_tau_b)} |")
            for name, why in self.component_notes.items():
                lines.append(f"| {name} | {why} | – |")
        if self.strata:
            lines += [
                "",
                f"| {d['strata_field']} | items | mean reward | Spearman ρ [CI] | good − bad, p |",
                "|---|---|---|---|---|",
            ]
            for t in self.strata:
                rho = _est(t.rank_agreement.spearman) if t.rank_agreement else t.note
                mean = "–" if t.mean_reward is None else f"{t.mean_reward:.4f}"
                sep = (
                    f"{t.stratified.diff:+.4f}, p {t.stratified.pvalue:.4f}"
                    if t.stratified is not None
                    else "– (needs 2 good and 2 bad)"
                )
                lines.append(f"| {t.stratum} | {t.n} | {mean} | {rho} | {sep} |")
        if self.probability is not None:
            lines += [
                "",
                "Reliability diagram (reward as predicted probability):",
                "",
                "| bin | items | mean reward | fraction good |",
                "|---|---|---|---|",
            ]
            for b in self.probability.bins:
                if b.count:
                    lines.append(
                        f"| [{b.low:.1f}, {b.high:.1f}] | {b.count} | {b.mean_predicted:.3f} | "
                        f"{b.frac_positive:.3f} |"
                    )
        lines += ["", "| criterion | expected | measured | result |", "|---|---|---|---|"]
        for c in self.acceptance:
            lines.append(
                f"| {c.name} | {c.expected} | {c.measured} | {'pass' if c.passed else 'FAIL'} |"
            )
        if self.stratified is None:
            lines.append(
                f"| good items score higher than bad ones | diff > 0 and p < "
                f"{self.preregistration['alpha']:g} | {self.stratified_note} | NOT RUN |"
            )
        return "\n".join(lines) + "\n"


def _est(e: Any) -> str:
    if e.value is None:
        return "undefined (constant reward or gold)"
    ci = e.confidence_interval
    return f"{e.value:.4f}" + ("" if ci is None else f" [{ci.low:.4f}, {ci.high:.4f}]")


def _good_rule(items: Sequence[Item], good_min: float | None) -> tuple[list[bool], str]:
    golds = [i.gold for i in items]
    if all(isinstance(g, bool) for g in golds):
        if good_min is not None:
            raise ConfigError(
                f"good_min={good_min!r} applies to numeric gold; this gold has bool labels "
                f"(true = good)"
            )
        return [bool(g) for g in golds], "gold label true"
    values = [float(g) for g in golds if g is not None]
    threshold = max(values) if good_min is None else good_min
    how = "the highest gold value" if good_min is None else "--good-min"
    return [v >= threshold for v in values], f"gold ≥ {threshold:g} ({how})"


@validate_params(
    {
        "good_min": [Interval(float, None, None), None],
        "strata": ["boolean"],
        "n_resamples": [Interval(int, 1, MAX_RESAMPLES)],
        "seeds": [Each((SEED,), min_len=1, distinct=True)],
        "confidence_level": [Interval(float, 0, 1, closed="neither")],
        "alpha": [Interval(float, 0, 1, closed="neither")],
        "seed_tolerance": [Interval(float, 0, None)],
        "n_bins": [Interval(int, 1, 10**6)],
        "strata_field": ["str"],
        "n_repeats": [Interval(int, 0, 10**6)],
        "plots": ["boolean"],
    }
)
def calibrate_rewards(
    items: Sequence[Item],
    rewards: Sequence[RewardRecord],
    *,
    good_min: float | None = None,
    strata: bool = True,
    n_resamples: int = 2000,
    seeds: Sequence[int] = DEFAULT_SEEDS,
    confidence_level: float = 0.95,
    alpha: float = 0.05,
    seed_tolerance: float = 0.05,
    n_bins: int = 10,
    names: Mapping[str, str] | None = None,
    strata_field: str = "stratum",
    n_repeats: int = 0,
    errors: Mapping[str, str] | None = None,
    out: str | Path | None = None,
    plots: bool = False,
) -> RewardCalibration:
    """Calibrate ``rewards`` against the gold of ``items`` (matched by id); with ``out`` write
    preregistration.json (first), calibration.json and calibration.md, and with ``plots`` (the
    ``report`` extra) calibration-reliability.png for a probability-valued reward.

    ``names``: how the report calls the inputs (``{"rewards": "run.jsonl", "gold": ...}``).
    ``errors``: item id -> what the reward raised on it, when the reward was run to make
    ``rewards`` (its value is then null); any error fails the acceptance.
    """
    fn = "calibrate_rewards"
    b, seed_t, k_bins = int(n_resamples), tuple(int(s) for s in seeds), int(n_bins)
    level, a, tol = float(confidence_level), float(alpha), float(seed_tolerance)
    if good_min is not None:
        good_min = float(good_min)
    missing_gold = [i for i in items if i.gold is None]
    if missing_gold:
        raise ConfigError(
            f"{missing_gold[0].where}: field 'gold': missing; calibrate needs gold on every item"
        )
    names = dict(names or {})
    j = join(items, rewards, where=names.get("gold", ""))
    good, good_rule = _good_rule(j.items, good_min)
    check_memory(  # before preregistration.json is written: a bootstrap index per item
        b,
        "n_resamples",
        fn,
        nbytes=b * max(len(j.items), 1) * 8,
        formula="n_resamples × n_items × 8 bytes",
    )
    prereg = {
        "definitions": DEFINITIONS,
        "n_resamples": b,
        "seeds": list(seed_t),
        "confidence_level": level,
        "alpha": a,
        "seed_tolerance": tol,
        "n_bins": k_bins,
        "good_rule": good_rule,
        "strata_field": strata_field if strata else None,
        "items_hash": content_hash([[i.id, i.gold_value, i.stratum, i.group] for i in j.items]),
        "rewards_hash": content_hash([[r.id, r.reward, dict(r.components)] for r in j.rewards]),
    }
    prereg_hash = content_hash(prereg)
    values = [r.reward for r in j.rewards]
    gold = [i.gold_value for i in j.items]
    errs = {k: v for k, v in (errors or {}).items() if k in {i.id for i in j.items}}
    first_error = next(
        (f"{i.where} (id {i.id!r}): {errs[i.id]}" for i in j.items if i.id in errs), None
    )
    n_scored = sum(v is not None for v in values)
    if n_scored < 2:
        why = f"; the reward raised on {len(errs)} (first: {first_error})" if errs else ""
        raise InputError(
            f"only {n_scored} of {len(values)} matched items have a reward (null = cannot "
            f"score){why}; calibration needs at least 2 scored items",
            path=names.get("rewards") or None,
            field="reward",
        )
    outdir = None if out is None else Path(out)
    if outdir is not None:  # written before any statistic is computed,
        # and after the last check of the input (bad input leaves nothing behind)
        write_atomic(outdir / "preregistration.json", canonical_json(prereg, indent=1) + "\n")

    per_seed = [
        rank_agreement(values, gold, n_resamples=b, confidence_level=level, rng=s) for s in seed_t
    ]
    stability = seed_stability(values, gold, seeds=seed_t, tolerance=tol, results=per_seed)
    stratified: StratifiedTest | None = None
    note: str | None = None
    n_good = sum(g for g, v in zip(good, values) if v is not None)
    n_bad = sum((not g) for g, v in zip(good, values) if v is not None)
    if n_good < 2 or n_bad < 2:
        note = (
            f"not run: needs at least 2 scored good and 2 scored bad items (good: "
            f"{good_rule}); got {n_good} good and {n_bad} bad"
        )
    else:
        stratified = stratified_test(
            values, good, n_resamples=b, confidence_level=level, alpha=a, rng=seed_t[0]
        )

    comp_names = sorted({k for r in j.rewards for k in r.components})
    components: dict[str, RankAgreement] = {}
    component_notes: dict[str, str] = {}
    for c in comp_names:
        cv = [r.components.get(c) for r in j.rewards]
        n_c = sum(x is not None for x in cv)
        if n_c < 2:  # a component that could not score here (null on every item but n_c)
            component_notes[c] = f"not computed: {n_c} scored item(s) (< 2)"
            continue
        components[c] = rank_agreement(
            cv, gold, n_resamples=b, confidence_level=level, rng=seed_t[0]
        )
    strata_out: list[StratumAgreement] = []
    if strata and any(i.stratum is not None for i in j.items):
        for s in sorted({i.stratum or "(none)" for i in j.items}):
            idx = [k for k, i in enumerate(j.items) if (i.stratum or "(none)") == s]
            sv = [values[k] for k in idx]
            sg = [gold[k] for k in idx]
            scored = [v for v in sv if v is not None]
            mean = sum(scored) / len(scored) if scored else None
            if len(scored) < 3:
                strata_out.append(
                    StratumAgreement(s, len(idx), mean, None, f"{len(scored)} scored items (< 3)")
                )
                continue
            ra_s = rank_agreement(sv, sg, n_resamples=b, confidence_level=level, rng=seed_t[0])
            sgood = [good[k] for k in idx]
            n_g = sum(1 for v, g in zip(sv, sgood) if v is not None and g)
            n_b = sum(1 for v, g in zip(sv, sgood) if v is not None and not g)
            st_s = (
                stratified_test(
                    sv, sgood, n_resamples=b, confidence_level=level, alpha=a, rng=seed_t[0]
                )
                if n_g >= 2 and n_b >= 2
                else None
            )
            strata_out.append(StratumAgreement(s, len(idx), mean, ra_s, None, st_s))
    groups = None
    if any(i.group is not None for i in j.items):
        groups = group_ordering(values, gold, [i.group for i in j.items])

    prob: Reliability | None = None
    scored_pairs = [(v, g) for v, g in zip(values, gold) if v is not None and g is not None]
    binary = {g for _, g in scored_pairs} <= {0.0, 1.0}
    in_unit = all(0.0 <= v <= 1.0 for v, _ in scored_pairs)
    if not in_unit:
        prob_note = "not computed: rewards outside [0, 1] are not probabilities"
    elif not binary:
        prob_note = "not computed: gold is not binary (a label or 0/1)"
    else:
        prob_note = None
        prob = reliability(
            [v for v, _ in scored_pairs], [g for _, g in scored_pairs], n_bins=k_bins
        )

    acceptance = []
    if errs:
        acceptance.append(
            Check(
                "the reward scores every item without raising",
                "0 errors",
                f"raised on {len(errs)} of {len(values)} items (first: {first_error})",
                False,
            )
        )
    if stratified is not None:
        acceptance.append(
            Check(
                "good items score higher than bad ones",
                f"diff > 0 and p < {a:g}",
                f"diff {stratified.diff:+.4f}, p {stratified.pvalue:.4f}",
                stratified.significant,
            )
        )
    undefined = per_seed[0].spearman.value is None
    acceptance.append(
        Check(
            f"intervals seed-stable over {len(seed_t)} seeds",
            f"identical points, bounds within {tol:g}",
            "ρ undefined (constant reward or gold): no interval to compare"
            if undefined
            else f"points {'identical' if stability.points_identical else 'differ'}, max "
            f"spread {stability.max_bound_spread:.4f}",
            stability.stable and not undefined,
        )
    )
    all_ran_passed = all(c.passed for c in acceptance)
    outcome = "fail" if not all_ran_passed else ("incomplete" if stratified is None else "pass")
    data = {
        "rewards_name": names.get("rewards", "rewards"),
        "gold_name": names.get("gold", "gold"),
        "n_gold_items": len(items),
        "n_matched": len(j.items),
        "n_reward_none": sum(v is None for v in values),
        "n_items_without_reward": j.n_items_without_reward,
        "n_rewards_without_item": j.n_rewards_without_item,
        "n_repeated_reward_records": n_repeats,
        "n_reward_errors": len(errs),
        "first_reward_error": first_error,
        "good_rule": good_rule,
        "strata_field": strata_field,
    }
    cal = RewardCalibration(
        preregistration=prereg,
        preregistration_hash=prereg_hash,
        data=data,
        rank_agreement=per_seed[0],
        stratified=stratified,
        stratified_note=note,
        stability=stability,
        components=components,
        strata=tuple(strata_out),
        groups=groups,
        probability=prob,
        probability_note=prob_note,
        acceptance=tuple(acceptance),
        passed=outcome == "pass",
        outcome=outcome,
        component_notes=component_notes,
    )
    if outdir is not None:
        write_atomic(outdir / "calibration.json", cal.to_json(indent=1) + "\n")
        write_atomic(outdir / "calibration.md", cal.table())
        if plots and prob is not None:
            from .plots import reliability_png

            write_atomic(outdir / "calibration-reliability.png", reliability_png(prob))
    return cal
