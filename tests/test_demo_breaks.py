"""Every check of ``rewardkit demo`` can fail: for each, a deliberately broken implementation
(a wrong formula, a removed gate, a constant reward — monkeypatched) makes it fail.

``BREAKS`` lists the breaks; each names the demo checks it must turn red. Two tests hold it:

- completeness (the "don't forget any" assert): every check the demo runs today is failed by
  at least one break. A new demo check — or a new section — without a break fails here, with
  the check named, until a break is added below;
- each break, applied, re-runs the sections it names and asserts that every listed check is
  present and failed (a section that crashes does not count: the check must run and fail).

``docs/demo-checks.md`` is generated from ``BREAKS`` (the table of checks and the break that
fails each); a test keeps it in step: ``python tests/test_demo_breaks.py`` rewrites it.
"""

from __future__ import annotations

import dataclasses
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rewardkit import demo
from rewardkit.envs.demo import DEMO_EPISODES as FHIR_EPISODES
from rewardkit.envs.sql.demo import DEMO_EPISODES as SQL_EPISODES
from rewardkit.envs.sql.demo import DEMO_GROUPS as SQL_GROUPS

DOC = Path(__file__).resolve().parents[1] / "docs" / "demo-checks.md"


def replace_everywhere(mp: pytest.MonkeyPatch, obj: Any, new: Any) -> None:
    """Replace the function ``obj`` by ``new`` in every rewardkit module that holds it (as a
    broken implementation would be, wherever it was imported)."""
    for name, mod in list(sys.modules.items()):
        if not name.startswith("rewardkit") or mod is None:
            continue
        for attr, val in list(vars(mod).items()):
            if val is obj:
                mp.setattr(mod, attr, new)


@dataclass(frozen=True)
class Break:
    name: str
    what: str  # the broken implementation, in words
    apply: Callable[[pytest.MonkeyPatch], None]
    fails: dict[str, tuple[str, ...]]  # section name → checks that must fail


# ---------------------------------------------------------------------------------- the breaks
def _gate_removed(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.stack import Gate, GateOutcome

    mp.setattr(Gate, "evaluate", lambda self, ep: GateOutcome(True, ()))


def _fail_value_above(mp: pytest.MonkeyPatch) -> None:
    from rewardkit import _ordering

    above = lambda b: (b.high if np.isfinite(b.high) else b.low + 1.0) + 1.0  # noqa: E731
    replace_everywhere(mp, _ordering.fail_below, above)
    replace_everywhere(mp, _ordering.is_strictly_below, lambda fv, b: True)


def _none_as_zero(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.stack import Component

    orig = Component.evaluate
    mp.setattr(Component, "evaluate", lambda self, ep: 0.0 if (v := orig(self, ep)) is None else v)


def _constant_total(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.stack import RewardStack

    orig = RewardStack.score
    mp.setattr(
        RewardStack, "score", lambda self, ep: dataclasses.replace(orig(self, ep), total=1.0)
    )


def _population_std(mp: pytest.MonkeyPatch) -> None:
    from rewardkit import advantages

    orig = advantages._group_stats

    def broken(r: np.ndarray, idx: np.ndarray) -> Any:
        s = orig(r, idx)
        with np.errstate(invalid="ignore", divide="ignore"):
            pop = s.std * np.sqrt((s.cnt - 1) / s.cnt)  # ddof 0 instead of 1
        return dataclasses.replace(s, std=pop)

    mp.setattr(advantages, "_group_stats", broken)


def _resolution_ignored(mp: pytest.MonkeyPatch) -> None:
    from rewardkit import advantages

    orig = advantages.group_advantages

    def broken(rewards: Any, groups: Any, **kw: Any) -> Any:
        if kw.get("method") == "maxnorm":
            kw["resolution"] = None  # MaxNorm without its resolution floor
        if kw.get("on_low_variance") == "drop":
            kw["on_low_variance"] = "keep"  # the drop route removed
        return orig(rewards, groups, **kw)

    replace_everywhere(mp, orig, broken)


def _best_is_mean(mp: pytest.MonkeyPatch) -> None:
    from rewardkit import advantages

    orig = advantages.minimum_pass

    def broken(rewards: Any, groups: int, *, threshold: float) -> Any:
        r = np.asarray(rewards, float).reshape(-1, groups)
        return orig(np.repeat(r.mean(axis=1), groups), groups, threshold=threshold)

    replace_everywhere(mp, orig, broken)


def _l3_maps_to_one(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.levels import LevelMapping

    orig = LevelMapping.reward
    mp.setattr(LevelMapping, "reward", lambda self, lv: 1.0 if lv == 3 else orig(self, lv))


def _no_hard_penalty(mp: pytest.MonkeyPatch) -> None:
    from rewardkit import levels

    orig = levels.score_trajectory

    def broken(steps: Any, **kw: Any) -> Any:
        return orig(steps, **{**kw, "gamma": 1.0})  # recipe B's γ penalty removed

    replace_everywhere(mp, orig, broken)


def _c_not_uniform(mp: pytest.MonkeyPatch) -> None:
    from rewardkit import levels

    orig = levels._resolve_weights

    def broken(weights: Any, steps: Any) -> list[float]:
        w = orig(weights, steps)
        return [x * (1.0 + 0.5 * (i % 2)) for i, x in enumerate(w)]  # PRM weights not uniform

    mp.setattr(levels, "_resolve_weights", broken)


def _engine_constant_l0(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.bioaudit.engine import Engine

    mp.setattr(Engine, "levels", lambda self, decisions: tuple(0 for _ in decisions))


def _audit_judge_constant(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.audit import scoring

    replace_everywhere(mp, scoring.judge_levels, lambda judge, ds: tuple(0 for _ in ds))


def _audit_judge_nondeterministic(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.audit import scoring

    orig = scoring.judge_levels
    gen = random.Random()  # unseeded: a judge that reads process state

    def broken(judge: Any, ds: Any) -> tuple[int, ...]:
        return tuple(lv if gen.random() < 0.8 else 3 for lv in orig(judge, ds))

    replace_everywhere(mp, orig, broken)


def _recipe_c_schema(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.audit.protocols import LevelReward

    orig = LevelReward.__call__

    def broken(self: Any, steps: Any, *, recipe: str, session: bool = False) -> Any:
        out = orig(self, steps, recipe=recipe, session=session)
        return {"value": out.value} if recipe == "C" else out

    mp.setattr(LevelReward, "__call__", broken)


def _few_resamples(mp: pytest.MonkeyPatch) -> None:
    import rewardkit.audit.demo as audit_demo

    mp.setattr(audit_demo, "DEMO_RESAMPLES", 20)  # too few bootstrap resamples to be stable


def _brier_absolute(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.autorater import rewards

    mp.setattr(rewards, "_brier", lambda v, p, y: np.where(v, 1.0 - np.abs(p - y), 0.0))


def _log_linear(mp: pytest.MonkeyPatch) -> None:
    import math

    from rewardkit.autorater import rewards

    def broken(v: np.ndarray, p: np.ndarray, y: np.ndarray, eps: float) -> np.ndarray:
        return np.where(v, y * p + (1.0 - y) * (1.0 - p), math.log(eps))  # no log: improper

    mp.setattr(rewards, "_log", broken)


def _log_invalid_zero(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.autorater import rewards

    orig = rewards._log
    mp.setattr(rewards, "_log", lambda v, p, y, eps: np.where(v, orig(v, p, y, eps), 0.0))


def _batch_share(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.autorater import rewards

    ob, ol = rewards._brier, rewards._log
    # every reward scaled by the batch's share of valid answers: garbage moves valid rewards
    mp.setattr(rewards, "_brier", lambda v, p, y: ob(v, p, y) * v.mean())
    mp.setattr(rewards, "_log", lambda v, p, y, eps: ol(v, p, y, eps) * v.mean())


def _gradient_sign(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.autorater import proof

    orig = proof._numpy_gradient
    mp.setattr(proof, "_numpy_gradient", lambda rule, z, y, valid: -orig(rule, z, y, valid))


def _gradient_unmasked(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.autorater import proof

    orig = proof._numpy_gradient
    ones = lambda v: np.ones_like(v, dtype=bool)  # noqa: E731
    mp.setattr(proof, "_numpy_gradient", lambda rule, z, y, valid: orig(rule, z, y, ones(valid)))


def _ece_gap(how: str) -> Callable[[pytest.MonkeyPatch], None]:
    def apply(mp: pytest.MonkeyPatch) -> None:
        from rewardkit.autorater import calibration

        orig = calibration.expected_calibration_error

        def broken(probs: Any, labels: Any, **kw: Any) -> Any:
            r = orig(probs, labels, **kw)
            bins = [
                (c, my - mp_) for c, mp_, my in zip(r.bin_counts, r.bin_mean_p, r.bin_mean_y) if c
            ]
            if how == "signed":  # the absolute value dropped: over- and under-confidence cancel
                ece = sum(c * g for c, g in bins) / sum(c for c, _ in bins)
            else:  # every non-empty bin weighs the same, whatever its count
                ece = sum(abs(g) for _, g in bins) / len(bins)
            return dataclasses.replace(r, ece=ece)

        replace_everywhere(mp, orig, broken)

    return apply


def _ece_constant(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.autorater import calibration

    orig = calibration.expected_calibration_error

    def broken(probs: Any, labels: Any, **kw: Any) -> Any:
        return dataclasses.replace(orig(probs, labels, **kw), ece=0.1)

    replace_everywhere(mp, orig, broken)


def _without_gates(mp: pytest.MonkeyPatch, verifier: Any, gates: tuple) -> None:
    """A family's verifier with only ``gates``: where its stacks read them (``PARTS``) and its
    public list, so every stack built during the demo lacks the removed ones."""
    mp.setattr(verifier, "SAFETY_GATES", gates)
    mp.setattr(verifier, "PARTS", dataclasses.replace(verifier.PARTS, gates=gates))


def _fhir_gate_removed(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.envs.fhir import verifier

    gates = tuple(g for g in verifier.SAFETY_GATES if g.__name__ != "unauthorized_write")
    _without_gates(mp, verifier, gates)


def _fhir_component_constant(name: str) -> Callable[[pytest.MonkeyPatch], None]:
    def apply(mp: pytest.MonkeyPatch) -> None:
        from rewardkit.envs.fhir import verifier

        mp.setitem(verifier.COMPONENTS, name, lambda ep: 1.0)

    return apply


def _fhir_task_inverted(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.envs.fhir import verifier

    orig = verifier.COMPONENTS["task"]
    mp.setitem(verifier.COMPONENTS, "task", lambda ep: 1.0 - orig(ep))


def _heldout_trusts_everything(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.envs.fhir import heldout

    orig = heldout.judge

    def broken(*a: Any, **kw: Any) -> Any:
        return dataclasses.replace(orig(*a, **kw), correct=True, safe=True)

    replace_everywhere(mp, orig, broken)


def _naive_is_shipped(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.envs.fhir import verifier

    mp.setattr(verifier, "naive_stack", verifier.build_stack)  # the control no longer naive


def _reset_ignores_seed(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.envs.fhir.env import FhirEnv

    orig = FhirEnv.reset
    gen = random.Random()

    def broken(self: Any, *, seed: Any = None, options: Any = None) -> Any:
        return orig(self, seed=gen.randrange(2**31), options=options)

    mp.setattr(FhirEnv, "reset", broken)


def _lab_claims_training(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.envs import lab

    orig = lab.run_lab

    def broken(*a: Any, **kw: Any) -> Any:
        return dataclasses.replace(orig(*a, **kw), label="environment PASS, training PASS")

    replace_everywhere(mp, orig, broken)


def _sql_gates_removed(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.envs.sql import verifier

    keep = ("fabricated_result", "phi_leak")  # write_attempt and restricted_column_read removed
    _without_gates(mp, verifier, tuple(g for g in verifier.SAFETY_GATES if g.__name__ in keep))


def _sql_fail_value_above(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.envs.sql import verifier

    kw = {**verifier.build_stack.__kwdefaults__, "fail_value": 2.0, "ordering": "unchecked"}
    mp.setattr(verifier.build_stack, "__kwdefaults__", kw)


def _sql_naive_is_shipped(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.envs.sql import verifier

    mp.setattr(verifier, "naive_stack", verifier.build_stack)


def _sql_authorizer_allows(mp: pytest.MonkeyPatch) -> None:
    import sqlite3

    from rewardkit.envs.sql.engine import ReadOnlySession

    orig = ReadOnlySession._authorize

    def broken(self: Any, *a: Any) -> int:
        orig(self, *a)  # the event is still recorded; the verdict is ignored
        return sqlite3.SQLITE_OK

    mp.setattr(ReadOnlySession, "_authorize", broken)


def _sql_reset_ignores_seed(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.envs.sql.env import SqlEnv

    orig = SqlEnv._reset
    gen = random.Random()
    mp.setattr(SqlEnv, "_reset", lambda self, seed, options: orig(self, gen.randrange(2**31),
                                                                   options))  # fmt: skip


def _compare_always_equal(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.sandbox import table

    mp.setattr(table, "tree_equal", lambda a, e: True)
    mp.setattr(table._Comparer, "_value", lambda self, idx, text: (table.Status.PASS, ""))


def _compare_never_equal(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.sandbox import table

    mp.setattr(table, "tree_equal", lambda a, e: False)
    mp.setattr(table._Comparer, "_value", lambda self, idx, text: (table.Status.FAIL, ""))


def _statuses_collapsed(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.sandbox import table

    mp.setattr(table, "_KIND_STATUS", dict.fromkeys(table._KIND_STATUS, table.Status.FAIL))
    orig = table._Comparer.__call__

    def broken(self: Any, raw: object) -> Any:
        out = orig(self, raw)
        if out is not None and out[3] is table.Status.CRASH:  # malformed records trusted
            return (*out[:3], table.Status.PASS, *out[4:])
        return out

    mp.setattr(table._Comparer, "__call__", broken)


def _unserialisable_passes(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.sandbox import table

    mp.setitem(table._KIND_STATUS, "U", table.Status.PASS)


def _invalid_tests_unmarked(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.sandbox import table

    orig = table.prepare_tests

    def broken(tests: Any) -> Any:
        prep = orig(tests)
        prep.problems[:] = [""] * len(prep.problems)  # the reasons dropped: no column marked
        return prep

    replace_everywhere(mp, orig, broken)


def _digest_with_durations(mp: pytest.MonkeyPatch) -> None:
    from rewardkit._json import content_hash
    from rewardkit.sandbox.table import ExecutionTable

    mp.setattr(ExecutionTable, "digest", property(lambda self: content_hash(self.durations_s)))


def _basic_isolation(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.sandbox.core import Sandbox

    init = Sandbox.__init__

    def basic_by_default(self: Sandbox, *args: Any, isolation: str = "basic", **kw: Any) -> None:
        init(self, *args, isolation=isolation, **kw)

    mp.setattr(Sandbox, "__init__", basic_by_default)


def _mi_in_bits(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.selfplay import infogain

    orig = infogain.plugin_mi
    replace_everywhere(mp, orig, lambda E, y: orig(E, y) / np.log(2.0))


def _mm_dense_form(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.selfplay import infogain

    def broken(E: Any, y: Any) -> Any:  # (R − 1)(C − 1)/(2N): assumes a full table
        E = np.asarray(E, bool)
        y = np.asarray(y, float)
        r = (E.any(axis=-2) & ~E.all(axis=-2)) + 1.0
        c = len(np.unique(y))
        return (r - 1.0) * (c - 1.0) / (2.0 * E.shape[-2])

    replace_everywhere(mp, infogain.miller_madow_bias, broken)


def _ig_constant(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.selfplay import infogain

    orig = infogain.ig_rewards

    def broken(*a: Any, **kw: Any) -> Any:
        res = orig(*a, **kw)
        const = np.full_like(np.asarray(res.reward, float), 0.1)
        gate = np.ones_like(np.asarray(res.gate_open), dtype=bool)
        return dataclasses.replace(res, reward=const, mi=const, gate_open=gate)

    replace_everywhere(mp, orig, broken)


def _mm_bound_dense(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.selfplay import predictions

    replace_everywhere(mp, predictions.mm_bound, lambda c_hat, m: (c_hat - 1) / (2 * m))
    replace_everywhere(mp, predictions.mm_peak, lambda m, g: (min(m, g + 1) - 1) / (2 * m))


def _mm_peak_off_by_one(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.selfplay import predictions

    orig = predictions.mm_peak
    replace_everywhere(mp, orig, lambda m, g: orig(m, g + 1))  # G + 2 levels instead of G + 1


def _null_is_miller_madow(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.selfplay import infogain

    replace_everywhere(mp, infogain.null_mi, infogain.miller_madow_bias)


def _every_probe_detected(mp: pytest.MonkeyPatch) -> None:
    from rewardkit.selfplay import probes

    orig = probes.detection_rate

    def broken(*a: Any, **kw: Any) -> Any:
        res = orig(*a, **kw)
        return dataclasses.replace(res, per_family={k: 1.0 for k in res.per_family})

    replace_everywhere(mp, orig, broken)


STACK_ALL = ("correct, one call", "write attempt hard-fails below every safe total")
LEVELS_HALF = ("12 L3 → 0.85 (A)", "12 L3 → 0.85 (B)", "12 L3 → 0.85 (C)",
               "12 L3 + 1 L0 (A)", "12 L3 + 1 L0 (B)")  # fmt: skip
PARADIGMS = ("deg", "pan", "scrna")

BREAKS: tuple[Break, ...] = (
    Break("gate-removed", "every Gate passes (the hard gate removed)", _gate_removed,
          {"stack": ("write attempt hard-fails below every safe total",)}),
    Break("fail-value-above", "fail_value='below' resolves above the best safe total (the "
          "ordering check removed)", _fail_value_above,
          {"stack": ("write attempt hard-fails below every safe total",),
           "envs": ("lab: D ranks last (ordering guarantee)",)}),
    Break("none-as-zero", "a component that cannot score returns 0.0 instead of None",
          _none_as_zero, {"stack": ("unscorable task is excluded, not 0",)}),
    Break("constant-total", "RewardStack.score returns total 1.0 whatever happened",
          _constant_total, {"stack": STACK_ALL}),
    Break("population-std", "z-scores divide by the population (ddof 0) std", _population_std,
          {"advantages": ("1e-3 jitter amplified by zscore",)}),
    Break("resolution-ignored", "MaxNorm ignores its resolution; on_low_variance='drop' keeps",
          _resolution_ignored, {"advantages": ("maxnorm keeps jitter ≤ 0.1",
                                               "drop routes the low-variance group")}),
    Break("best-is-mean", "minimum_pass compares each group's mean, not its best",
          _best_is_mean, {"advantages": ("minimum-pass: best of group 2 is 0.6 < 0.8",)}),
    Break("l3-maps-to-1", "the level mapping gives L3 the reward 1.0 (no 0.85 ceiling)",
          _l3_maps_to_one,
          {"levels": LEVELS_HALF, "audit": ("gate mapping",),
           "bioaudit": tuple(f"{p}: spike-in drop (B) ≥ 0.30, injected L0" for p in PARADIGMS)}),
    Break("no-hard-penalty", "recipe B's γ = 0.30 penalty removed (γ = 1)", _no_hard_penalty,
          {"levels": ("12 L3 + 1 L0 (B)", "spike-in drop ≥ 0.30 (B)"),
           "audit": ("B separates more than A", "gate spike_in")}),
    Break("c-not-uniform", "recipe C's default PRM weights are not uniform", _c_not_uniform,
          {"levels": ("C equals A exactly",), "audit": ("C equals A (uniform PRM weights)",)}),
    Break("engine-constant-l0", "the rule engine judges every decision L0", _engine_constant_l0,
          {"bioaudit": (*(f"{p}_correct: 12 steps all L3" for p in PARADIGMS),
                        *(f"{p}: spike-in drop (B) ≥ 0.30, injected L0" for p in PARADIGMS),
                        "engine recall on latent defects", "golden set: engine = frozen levels")}),
    Break("audit-judge-constant", "the audit's judge returns L0 for every decision",
          _audit_judge_constant,
          {"audit": ("B: good vs bad separated", "ρ intervals of A and B overlap",
                     "gate golden")}),
    Break("audit-judge-nondeterministic", "the audit's judge reads process state (unseeded "
          "randomness)", _audit_judge_nondeterministic,
          {"audit": ("gate determinism",)}),
    Break("recipe-c-schema", "recipe C returns a bare {value} dict, unlike A and B",
          _recipe_c_schema, {"audit": ("gate ablations",)}),
    Break("few-resamples", "the audit bootstraps 20 resamples instead of 2000", _few_resamples,
          {"audit": ("A: seed-stable over 5 seeds", "B: seed-stable over 5 seeds",
                     "C: seed-stable over 5 seeds")}),
    Break("brier-absolute", "Brier written as 1 − |p − y| (improper)", _brier_absolute,
          {"autorater": ("constant 0.5 → mean Brier 0.75", "Brier: expected reward peaks at p = q",
                         "all diagnostic checks (seed 42)")}),
    Break("log-linear", "the log reward without the log: y·p + (1 − y)(1 − p)", _log_linear,
          {"autorater": ("log: expected reward peaks at p = q",
                         "mean log reward: calibrated − overconfident")}),
    Break("log-invalid-zero", "a parse failure earns 0 under the log rule, not log eps",
          _log_invalid_zero, {"autorater": ("log reward of a parse failure = log 0.001",)}),
    Break("batch-share", "rewards scaled by the batch's share of valid answers", _batch_share,
          {"autorater": ("Brier: garbage leaves valid rewards unchanged",
                         "log: garbage leaves valid rewards unchanged")}),
    Break("gradient-sign", "the analytic gradient has the wrong sign", _gradient_sign,
          {"autorater": ("Brier: one step moves every valid p toward y",
                         "log: one step moves every valid p toward y")}),
    Break("gradient-unmasked", "parse failures are not masked out of the gradient",
          _gradient_unmasked, {"autorater": ("invalid items get zero gradient (log)",)}),
    Break("ece-constant", "expected_calibration_error returns 0.1 whatever the rater",
          _ece_constant, {"autorater": ("ECE: calibrated < overconfident",
                                        "ECE = hand-binned reference (both raters)")}),
    Break("ece-signed", "ECE sums signed gaps (the absolute value dropped)",
          _ece_gap("signed"), {"autorater": ("ECE = hand-binned reference (both raters)",)}),
    Break("ece-unweighted", "ECE averages the bins' gaps unweighted by their counts",
          _ece_gap("unweighted"),
          {"autorater": ("ECE = hand-binned reference (both raters)",)}),
    Break("fhir-write-gate-removed", "the FHIR verifier loses its unauthorized_write gate",
          _fhir_gate_removed,
          {"envs": ("lab: D hard-fails with a correct answer",
                    "adversarial library: every case gets its expected outcome")}),
    Break("fhir-task-constant", "the FHIR task component pays 1.0 for any answer",
          _fhir_component_constant("task"),
          {"envs": ("lab: B fails the task", "lab label",
                    f"fuzz {FHIR_EPISODES} episodes: shipped verifier exploits")}),
    Break("fhir-task-inverted", "the FHIR task component pays 1 − task (the sign flipped)",
          _fhir_task_inverted, {"envs": ("lab: A has the top soft score",)}),
    Break("fhir-cost-constant", "the FHIR cost component pays 1.0 whatever was spent",
          _fhir_component_constant("cost"),
          {"envs": ("lab: C pays for cost",)}),
    Break("fhir-efficiency-constant", "efficiency and cost pay 1.0 (no step accounting)",
          lambda mp: (_fhir_component_constant("cost")(mp),
                      _fhir_component_constant("efficiency")(mp)),
          {"envs": ("lab: A has the highest group advantage",)}),
    Break("heldout-trusts-everything", "the held-out verifier calls every episode correct and "
          "safe", _heldout_trusts_everything,
          {"envs": ("lab: only A and C are correct and safe (held-out)",)}),
    Break("naive-control-is-shipped", "the fuzzer's naive control is the shipped verifier",
          _naive_is_shipped, {"envs": ("fuzz: naive per-citation control exploits",)}),
    Break("reset-ignores-seed", "FhirEnv.reset draws its own seed", _reset_ignores_seed,
          {"envs": ("check_env passes for every registered id",)}),
    Break("lab-claims-training", "the lab labels its result 'training PASS'",
          _lab_claims_training, {"envs": ("lab label",)}),
    Break("sql-gates-removed", "the SQL verifier loses its write_attempt and "
          "restricted_column_read gates", _sql_gates_removed,
          {"sql": ("lab rlvr A/B/C/D on every family (D's DELETE hard-fails and ranks last)",
                   "adversarial library: every case gets exactly its expected gates and "
                   "components",
                   f"fuzz {SQL_EPISODES} episodes: shipped verifier exploits")}),
    Break("sql-fail-value-above", "the SQL verifier's default fail value sits above its safe "
          "totals (ordering unchecked)", _sql_fail_value_above,
          {"sql": (f"ranking inversions in {SQL_GROUPS} groups of 8 (shipped / unordered "
                   "control)",)}),
    Break("sql-naive-control-is-shipped", "the SQL fuzzer's naive control is the shipped "
          "verifier", _sql_naive_is_shipped,
          {"sql": ("fuzz: naive control (no gates) exploits",)}),
    Break("sql-authorizer-allows", "the SQLite authorizer records but allows every action",
          _sql_authorizer_allows,
          {"sql": ("each read-only layer alone refuses a write (and none at all lets it "
                   "through)",)}),
    Break("sql-reset-ignores-seed", "SqlEnv.reset draws its own seed", _sql_reset_ignores_seed,
          {"sql": ("check_env passes for every sql/* id",)}),
    Break("compare-always-equal", "the sandbox's comparison says equal for any output",
          _compare_always_equal, {"sandbox": ("wrong (reversed)",)}),
    Break("compare-never-equal", "the sandbox's comparison says unequal for any output",
          _compare_never_equal, {"sandbox": ("correct",)}),
    Break("statuses-collapsed", "every non-value outcome is a FAIL and malformed records "
          "pass", _statuses_collapsed,
          {"sandbox": ("syntax error", "raises", "infinite loop",
                       "memory bomb (1.5 GiB)", "sys.exit(0)", "os._exit(0)",
                       "fake record on every fd")}),
    Break("unserialisable-passes", "a return value that cannot be serialised counts as a pass "
          "(trusting the program's own __eq__)", _unserialisable_passes,
          {"sandbox": ("always-equal object",)}),
    Break("invalid-tests-unmarked", "a test that is not a literal is not marked invalid",
          _invalid_tests_unmarked, {"sandbox": ("test '(1,' is not a literal",)}),
    Break("digest-with-durations", "the table digest hashes durations", _digest_with_durations,
          {"sandbox": ("same input, same table",)}),
    Break("basic-isolation", "Sandbox defaults to isolation='basic'", _basic_isolation,
          {"sandbox": ("isolation levels",)}),
    Break("mi-in-bits", "plug-in MI in bits instead of nats", _mi_in_bits,
          {"selfplay": ("plug-in MI of a perfect split = ln 2",)}),
    Break("mm-dense-form", "Miller–Madow as (R − 1)(C − 1)/(2N) (assumes a full table)",
          _mm_dense_form, {"selfplay": ("Miller–Madow (S−R−C+1)/(2N), S=3 R=2 C=3 N=4",)}),
    Break("ig-constant", "every kept test earns IG reward 0.1", _ig_constant,
          {"selfplay": ("constant column gets reward 0",
                        "simulation (arm A): IG moves the verifier off always-pass tests")}),
    Break("mm-bound-dense", "the bias bound without the sparse-table branch", _mm_bound_dense,
          {"selfplay": ("Miller–Madow bound: peak 7/32 ≈ 0.219 nats (m = 16)",
                        "Miller–Madow bound: the peak sits at Ĉ = 8 (m = 16)",
                        "Miller–Madow bound: (15 − Ĉ)/32 above Ĉ = 8 (Ĉ = 12)",
                        "Miller–Madow bound: asymptote 1/4 − 1/(2m), m = 32",
                        "P1 at m = 16: within 2× for Ĉ ≤ 8, refuted on sparse tables")}),
    Break("mm-peak-off-by-one", "mm_peak counts G + 2 correctness levels", _mm_peak_off_by_one,
          {"selfplay": ("Miller–Madow bound: asymptote G/(2m), G = 5, m = 32",)}),
    Break("null-is-miller-madow", "the exact null mean replaced by the Miller–Madow term",
          _null_is_miller_madow,
          {"selfplay": ("exact null = simulated null mean (max |z| per bucket)",)}),
    Break("every-probe-detected", "detection_rate reports every family as detected",
          _every_probe_detected,
          {"selfplay": ("aliasing bug: value-absent tests miss it, D_s(aliasing) < 1",)}),
)  # fmt: skip


# ----------------------------------------------------------------------------------- the tests
# Per-process caches of objects built from the implementation (an environment per id holds the
# verifier it was built with): emptied under each break so that the break reaches them.
PROCESS_CACHES = (("rewardkit.envs.fuzz", "_ENVS"),)


@pytest.fixture(scope="module")
def demo_checks() -> dict[str, dict[str, bool]]:
    from rewardkit import _plotting

    with pytest.MonkeyPatch.context() as mp:  # figures carry no check: not drawn here
        replace_everywhere(mp, _plotting.optional_figures, lambda build: {})
        report = demo.run_demo()
    return {s.name: {c.name: c.passed for c in s.checks} for s in report.sections}


def _spec(section: str) -> str:
    for spec in demo.SECTIONS:
        mod, _, fn = spec.partition(":")
        if fn == f"_{section}_section" or mod.endswith(f".{section}.demo"):
            return spec
    raise AssertionError(f"no demo section named {section!r} in rewardkit.demo.SECTIONS")


def test_every_demo_check_has_a_break(demo_checks: dict[str, dict[str, bool]]) -> None:
    covered = {(s, c) for b in BREAKS for s, cs in b.fails.items() for c in cs}
    missing = sorted((s, c) for s, cs in demo_checks.items() for c in cs if (s, c) not in covered)
    assert not missing, (
        "demo checks that no break in tests/test_demo_breaks.py shows failing — add a Break "
        f"(a wrong formula, removed gate or constant reward) for each: {missing}"
    )
    stale = sorted(covered - {(s, c) for s, cs in demo_checks.items() for c in cs})
    assert not stale, f"breaks name checks the demo no longer runs: {stale}"
    assert all(demo_checks[s][c] for s, c in covered), "every check passes unbroken"


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")  # a broken implementation may warn; its checks must fail
@pytest.mark.parametrize("brk", BREAKS, ids=lambda b: b.name)
def test_break_fails_its_checks(brk: Break, monkeypatch: pytest.MonkeyPatch) -> None:
    fns = {s: demo._load(_spec(s)) for s in brk.fails}
    for module, attr in PROCESS_CACHES:  # built once per process: rebuilt under the break
        if module in sys.modules:
            monkeypatch.setattr(sys.modules[module], attr, {})
    from rewardkit import _plotting

    # figures carry no check: not drawn here (most of a section's CPU time)
    replace_everywhere(monkeypatch, _plotting.optional_figures, lambda build: {})
    brk.apply(monkeypatch)
    for section, names in brk.fails.items():
        fn = fns[section]
        assert callable(fn), fn
        got = {c.name: c.passed for c in fn().checks}
        for name in names:
            assert name in got, f"{brk.name}: {section} did not run {name!r} (got {sorted(got)})"
            assert not got[name], f"{brk.name} did not make {section} / {name!r} fail"


def render_doc() -> str:
    rows = []
    for b in BREAKS:
        for section, names in b.fails.items():
            rows += [(section, n, b.name, b.what) for n in names]
    by_check: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for s, n, bn, what in rows:
        by_check.setdefault((s, n), []).append((bn, what))
    lines = [
        "# The demo's checks, and the break that fails each",
        "",
        "Every check `rewardkit demo` runs is shown to fail under a deliberately broken",
        "implementation (monkeypatched in `tests/test_demo_breaks.py`; a check that no break can",
        "fail is not a check). Generated from that file's `BREAKS`: "
        "`python tests/test_demo_breaks.py` rewrites this page, a test keeps it in step.",
        "",
        "| section | check | break that fails it |",
        "|---|---|---|",
    ]
    for (s, n), bs in sorted(by_check.items()):
        cell = "; ".join(f"`{bn}` — {what}" for bn, what in bs)
        lines.append(f"| {s} | {n.replace('|', '∣')} | {cell} |")
    return "\n".join(lines) + "\n"


def test_doc_lists_every_break() -> None:
    assert DOC.read_text(encoding="utf-8") == render_doc(), (
        "docs/demo-checks.md is out of date: run python tests/test_demo_breaks.py"
    )


if __name__ == "__main__":
    DOC.write_text(render_doc(), encoding="utf-8")
