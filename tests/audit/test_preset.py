"""The bio-audit preset: chosen by name, never a silent default, and honest about its data."""

from __future__ import annotations

import json

import pytest
from audit_fakes import FakeJudge, make_tasks

from rewardkit.audit import LevelReward, calibrate, spike_in, validate
from rewardkit.audit.preset import bioaudit_inputs, generator_seed_spread
from rewardkit.bioaudit import Engine, load_benchmark
from rewardkit.bioaudit.imperfect import ImperfectEngine, engine_agreement
from rewardkit.cli import main
from rewardkit.errors import ConfigError


def test_no_silent_fallback_to_shipped_data():
    with pytest.raises(ConfigError, match=r"'tasks' parameter of calibrate is required.*preset"):
        calibrate()
    with pytest.raises(ConfigError, match="'judge' parameter of validate is required"):
        validate(make_tasks())
    with pytest.raises(TypeError):
        spike_in(judge=FakeJudge(), reward=LevelReward())  # type: ignore[call-arg]
    v = validate(make_tasks(), judge=FakeJudge(), judge_factory=("audit_fakes:fake_judge", {}))
    missing = {g.name: g.summary for g in v.gates if g.not_run}
    assert missing == {
        "spike_in": "not run: no spike-in substrates given",
        "golden": "not run: no golden set given ([data] golden in rewardkit.toml)",
    }
    assert v.outcome == "incomplete" and not v.passed


@pytest.mark.parametrize("command", ["calibrate", "validate"])
def test_cli_without_data_exits_2_and_names_the_flags(command, tmp_path, capsys):
    assert main([command, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no data given" in err and "--preset bioaudit" in err
    assert not (tmp_path / "o").exists()


def test_engine_is_exact_by_construction_and_the_imperfect_one_is_not():
    bm = load_benchmark()
    exact = engine_agreement(Engine(), bm)
    assert exact["precision"] == 1.0 and exact["visible_recall"] == 1.0
    noisy = engine_agreement(ImperfectEngine(miss_rate=0.2, spurious_rate=0.05, rng=3), bm)
    assert 0.6 < noisy["visible_recall"] < 0.95 and 0.7 < noisy["precision"] < 1.0
    # the rates are honoured: no noise is the engine itself
    assert engine_agreement(ImperfectEngine(rng=3), bm) == exact


def test_imperfect_engine_changes_calibration_and_stays_deterministic():
    exact = bioaudit_inputs()
    noisy = bioaudit_inputs(miss_rate=0.3, spurious_rate=0.1, rng=1)
    assert "1.0 by construction" in exact.note and "chosen among seeds 0–79" in exact.note
    assert "imperfect engine (precision" in noisy.note
    a = calibrate(exact.tasks, judge=exact.judge, recipes=["B"], n_resamples=200, seeds=(42,))
    b = calibrate(noisy.tasks, judge=noisy.judge, recipes=["B"], n_resamples=200, seeds=(42,))
    ra, rb = a.recipe("B").rank_agreement.spearman.value, b.recipe("B").rank_agreement
    assert rb.spearman.value != ra
    v = validate(
        noisy.tasks[:12],
        judge=noisy.judge,
        golden=noisy.golden,
        judge_factory=noisy.judge_factory,
        n_resamples=100,
    )
    assert v.gate("determinism").passed  # keyed draws: the same in a fresh process
    assert not v.gate("golden").passed  # the imperfect judge no longer reproduces the golden set


def test_seed_spread_contains_the_shipped_seed():
    p = bioaudit_inputs()
    cal = calibrate(p.tasks, judge=p.judge, recipes=["A", "B"], n_resamples=50, seeds=(42,))
    spread = generator_seed_spread([65, 66, 67])
    row = next(r for r in spread.per_seed if r["seed"] == 66)
    assert row["rho_B"] == pytest.approx(cal.recipe("B").rank_agreement.spearman.value)
    assert row["diff_B"] == pytest.approx(cal.recipe("B").stratified.diff)
    assert spread.summary["rho_B"]["chosen"] == row["rho_B"]


def test_preset_cli_reports_the_caveats_and_the_spread(tmp_path, capsys):
    args = ["calibrate", "--preset", "bioaudit", "--generator-seeds", "3", "--no-plots"]
    assert main([*args, "--n-resamples", "200", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "1.0 by construction" in text and "over generator seeds 0–2" in text
    bench = json.loads((tmp_path / "benchmark.json").read_text())
    assert bench["engine"]["precision"] == 1.0
    assert len(json.loads((tmp_path / "generator-seeds.json").read_text())["per_seed"]) == 3


def test_config_with_own_tasks_runs_only_on_them(tmp_path, capsys, monkeypatch):
    from importlib import resources
    from pathlib import Path

    import rewardkit.bioaudit.benchmark as benchmark

    src = Path(str(resources.files("rewardkit.bioaudit") / "data" / "v1.2.0" / "tasks.jsonl"))
    (tmp_path / "tasks.jsonl").write_text("".join(src.read_text().splitlines(True)[:16]))
    (tmp_path / "rewardkit.toml").write_text('[data]\ntasks = "tasks.jsonl"\n')

    def no_shipped(*a, **k):
        raise AssertionError("the shipped benchmark was loaded")

    monkeypatch.setattr(benchmark, "load_benchmark", no_shipped)
    monkeypatch.setattr("rewardkit.bioaudit.load_benchmark", no_shipped)
    args = ["validate", "--config", str(tmp_path / "rewardkit.toml"), "--json"]
    assert main([*args, "--out", str(tmp_path / "o")]) == 4
    out = json.loads(capsys.readouterr().out)
    assert out["outcome"] == "incomplete" and sorted(out["not_run"]) == ["golden", "spike_in"]
