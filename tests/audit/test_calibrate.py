"""calibrate: preregistration first, the seed §7 table, and the must-show results on the shipped
benchmark (seed 000 §7.2 qualitative pattern)."""

from __future__ import annotations

import json

import pytest
from audit_fakes import FakeJudge, make_tasks

from rewardkit.audit import calibrate
from rewardkit.audit.preset import bioaudit_inputs
from rewardkit.errors import ConfigError


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    out = tmp_path_factory.mktemp("cal")
    p = bioaudit_inputs()
    return calibrate(p.tasks, judge=p.judge, note=p.note, out=out, plots=True), out


def test_b_separates_more_than_a_and_rankings_agree(shipped):
    cal, _ = shipped
    a, b, c = cal.recipe("A"), cal.recipe("B"), cal.recipe("C")
    assert b.stratified.diff > a.stratified.diff > 0
    assert b.stratified.pvalue < 0.05 and b.stratified.significant
    ca, cb = (
        a.rank_agreement.spearman.confidence_interval,
        b.rank_agreement.spearman.confidence_interval,
    )
    assert ca.overlaps(cb)
    assert c.to_dict() | {"recipe": "A"} == a.to_dict()  # C equals A exactly
    assert a.rank_agreement.n == 60 and a.rank_agreement.n_resamples == 2000
    assert cal.passed and all(f.passed for f in (*cal.acceptance, *cal.findings))
    assert [f.name for f in cal.findings] == [
        "B separates more than A",
        "ρ intervals of A and B overlap",
        "C equals A (uniform PRM weights)",
    ]


def test_five_seeds_identical_points_bounds_within_005(shipped):
    cal, _ = shipped
    for r in cal.recipes:
        s = r.stability
        assert s.seeds == (42, 1, 7, 123, 2026)
        assert len({x.spearman.value for x in s.results}) == 1
        assert len({x.kendall_tau_b.value for x in s.results}) == 1
        assert s.points_identical and s.max_bound_spread <= 0.05 and s.stable


def test_artefacts(shipped):
    cal, out = shipped
    prereg = json.loads((out / "preregistration.json").read_text())
    assert prereg["n_resamples"] == 2000 and prereg["seeds"] == [42, 1, 7, 123, 2026]
    assert prereg["taskset_hash"].startswith("sha256:") and "gold_quality" in prereg["definitions"]
    assert cal.preregistration_hash == cal.preregistration.hash
    assert json.loads((out / "calibration.json").read_text()) == json.loads(cal.to_json())
    note, blank, *table = (out / "calibration.md").read_text().splitlines()
    assert "1.0 by construction" in note and "seed 66 was chosen among seeds 0–79" in note
    assert blank == ""
    assert table[0] == (
        "| recipe | Spearman ρ [CI] | Kendall τ_b [CI] | good mean | bad mean | diff [CI] | p |"
    )
    assert [row.split(" | ")[0] for row in table[2:]] == ["| A", "| B", "| C"]
    assert (out / "calibration.png").read_bytes()[:4] == b"\x89PNG"


class WatchingJudge(FakeJudge):
    """Fails if anything is judged before the preregistration record exists."""

    def __init__(self, path):
        self.path = path
        self.calls = 0

    def audit(self, trajectory):
        assert self.path.exists(), "judged before the preregistration was written"
        self.calls += 1
        return super().audit(trajectory)


def test_preregistration_is_written_before_anything_is_computed(tmp_path):
    judge = WatchingJudge(tmp_path / "preregistration.json")
    cal = calibrate(make_tasks(), judge=judge, n_resamples=200, out=tmp_path)
    assert judge.calls == 24
    again = calibrate(make_tasks(), judge=FakeJudge(), n_resamples=200)
    assert cal.to_json() == again.to_json()  # byte-identical for identical inputs


def test_gold_rules_in_calibration(tmp_path):
    from dataclasses import replace

    tasks = make_tasks()
    tasks[0] = replace(tasks[0], n_gold_correct=0, n_gold_error=0, n_gold_edge=3)  # all edge
    unjudgeable = tuple(d | {"action": "unknown"} for d in tasks[1].decisions)  # all level -1
    tasks[1] = replace(tasks[1], decisions=unjudgeable)
    cal = calibrate(tasks, judge=FakeJudge(), n_resamples=100, seeds=(1,))
    for r in cal.recipes:
        ra, st = r.rank_agreement, r.stratified
        assert r.n_reward_none == 1
        assert (ra.n, ra.n_excluded_gold, ra.n_excluded_reward) == (22, 1, 1)
        assert (st.n_good + st.n_bad, st.n_excluded) == (23, 1)


def test_bad_parameters():
    with pytest.raises(ConfigError, match="'seeds' parameter of calibrate"):
        calibrate(make_tasks(), judge=FakeJudge(), seeds=())
    with pytest.raises(ConfigError, match="'n_resamples' parameter of calibrate"):
        calibrate(make_tasks(), judge=FakeJudge(), n_resamples=0)
