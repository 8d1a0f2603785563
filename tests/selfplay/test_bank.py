"""The embedded task bank and its test generators."""

from __future__ import annotations

import numpy as np

from rewardkit.selfplay.bank import BANK_VERSION, initial_policy, load_bank
from rewardkit.selfplay.executor import CachedExecutor, TrustedExecutor, default_executor
from rewardkit.selfplay.testgen import GENERATORS, build_universe


def test_size_and_ground_truth(bank):
    assert bank.version == BANK_VERSION and len(bank.tasks) >= 30
    assert len({t.task_id for t in bank.tasks}) == len(bank.tasks)
    for t in bank.tasks:
        assert len(t.gt_tests) == 8 and len(t.heldout_tests) == 16
        assert len({x.input for x in (*t.gt_tests, *t.heldout_tests)}) == 24
        ref = t.candidate("reference")
        assert ref.y == 1.0 and ref.y_heldout == 1.0
        for c in t.candidates:
            if c.family == "correct":
                assert c.y == 1.0 and c.y_heldout == 1.0
            else:  # every kept mutant differs from the reference on a GT test
                assert c.y < 1.0


def test_e4_aliasing_example(bank):
    e4 = bank.task("remove_all").candidate("e4_aliasing")
    assert e4.handwritten and e4.family == "aliasing" and e4.y == 0.5


def test_mutants_cover_every_family_and_discards_are_counted(bank):
    fams = {c.family for t in bank.tasks for c in t.candidates}
    assert {"aliasing", "boundary", "reorder", "off_by_one", "comparison"} <= fams
    assert sum(t.n_mutants_discarded for t in bank.tasks) > 0
    assert all(t.n_gt_silent <= t.n_mutants_discarded for t in bank.tasks)


def test_deterministic_and_executor_independent(bank):
    trusted = load_bank(executor=CachedExecutor(TrustedExecutor()))
    assert trusted.to_dict()["tasks"] == bank.to_dict()["tasks"]
    assert load_bank() is bank  # cached per process


def test_initial_policy_puts_15_percent_on_correct_programs(bank):
    for t in bank.tasks:
        p = initial_policy(t)
        assert abs(p.sum() - 1) < 1e-12
        ok = np.array([c.family == "correct" for c in t.candidates])
        if (~ok).any():
            assert abs(p[ok].sum() - 0.15) < 1e-12


def test_generators_produce_what_they_claim(bank):
    ex = CachedExecutor(default_executor())
    try:
        for task in (bank.task("remove_all"), bank.task("sum_evens"), bank.task("transpose")):
            u = build_universe(task, ex)
            ref = [c.name for c in task.candidates].index("reference")
            for g in GENERATORS:
                lo, hi = u.slices[g]
                if g == "duplicate":
                    assert lo == hi  # resolved by the sampler
                    continue
                assert hi > lo, g
                cols = u.passed[:, lo:hi]
                if g in ("boundary", "random_valid", "trivial"):
                    assert cols[ref].all() and not u.invalid[lo:hi].any()
                if g == "trivial":
                    assert (cols.sum(axis=0) == cols.sum(axis=0).max()).all()
                if g == "invalid":
                    assert not cols.any()
                    assert u.invalid[lo:hi].sum() >= 2  # two do not parse; one has a bad arity
                if g == "wrong_expectation":
                    assert not cols[ref].any()
            assert len(set(u.input_ids[slice(*u.slices["random_valid"])])) <= 16
    finally:
        ex.close()
