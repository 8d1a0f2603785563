"""The five gates: each passes on a sound reward and fails on the defect it guards against."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest
from audit_fakes import FakeGolden, FakeJudge, HashSeedReward, NoisyReward, SwappedMappingReward

from rewardkit.audit import VALIDATION_GATES, LevelReward, validate
from rewardkit.audit.gates import gate_ablations, gate_determinism, gate_golden, gate_mapping
from rewardkit.audit.preset import bioaudit_inputs
from rewardkit.levels import LevelMapping


def test_gate_names():
    assert VALIDATION_GATES == ("mapping", "determinism", "spike_in", "ablations", "golden")


def test_all_gates_pass_on_fakes(fakes):
    v = validate(
        fakes["tasks"],
        judge=fakes["judge"],
        golden=fakes["golden"],
        substrates=fakes["substrates"],
        candidates=fakes["candidates"],
        judge_factory=fakes["judge_factory"],
        n_resamples=200,
    )
    assert [g.name for g in v.gates] == list(VALIDATION_GATES)
    assert v.passed, [(g.name, g.summary) for g in v.gates if not g.passed]
    assert v.evidence["recipe"] == "B" and v.evidence["stratified"]["diff"] > 0
    assert (
        v.to_json()
        == validate(
            fakes["tasks"],
            judge=fakes["judge"],
            golden=fakes["golden"],
            substrates=fakes["substrates"],
            candidates=fakes["candidates"],
            judge_factory=fakes["judge_factory"],
            n_resamples=200,
        ).to_json()
    )


def test_broken_mapping_fails_only_the_mapping_gate(fakes):
    v = validate(
        fakes["tasks"],
        judge=fakes["judge"],
        reward=SwappedMappingReward(),
        golden=fakes["golden"],
        substrates=fakes["substrates"],
        candidates=fakes["candidates"],
        judge_factory=fakes["judge_factory"],
        reward_factory=("audit_fakes:swapped_reward", {}),
        n_resamples=100,
    )
    failed = [g.name for g in v.gates if not g.passed]
    assert failed == ["mapping"]
    assert "level 2 scores 0.3 < level 1's 0.6" in v.gate("mapping").summary


@pytest.mark.parametrize(
    "values, ceiling, problem",
    [
        ({0: 0.0, 1: 0.3, 2: 0.6, 3: 0.85}, 0.90, "not the ceiling 0.9"),
        ({0: 0.0, 1: 0.3, 2: 0.6, 3: 0.9}, 0.85, "outside [0, 0.85]"),
    ],
)
def test_mapping_gate_checks_the_ceiling(values, ceiling, problem):
    reward = LevelReward(mapping=LevelMapping(values, ceiling=max(values.values())))
    g = gate_mapping(reward, ceiling=ceiling)
    assert not g.passed and any(problem in p for p in g.evidence["problems"])


def test_mapping_gate_catches_a_reward_that_scores_minus_one():
    class ZeroForMinusOne(SwappedMappingReward):
        VALUES: ClassVar[dict[int, float]] = {-1: 0.0, 0: 0.0, 1: 0.3, 2: 0.6, 3: 0.85}

        def __call__(self, steps, *, recipe, session=False):
            return sum(self.VALUES[s.level] for s in steps) / len(steps)

    g = gate_mapping(ZeroForMinusOne())
    assert not g.passed
    assert any("all −1 trajectory is scored" in p for p in g.evidence["problems"])
    assert any("adding a −1 step" in p for p in g.evidence["problems"])


def test_nondeterministic_reward_fails_determinism(fakes):
    g = gate_determinism(
        fakes["tasks"],
        judge=fakes["judge"],
        reward=NoisyReward(),
        judge_factory=fakes["judge_factory"],
        reward_factory=("audit_fakes:noisy_reward", {}),
    )
    assert not g.passed and g.summary == "two in-process runs differ"


def test_hash_seed_dependence_is_caught_by_the_fresh_process(fakes):
    g = gate_determinism(
        fakes["tasks"],
        judge=fakes["judge"],
        reward=HashSeedReward(),
        judge_factory=fakes["judge_factory"],
        reward_factory=("audit_fakes:hashseed_reward", {}),
    )
    assert g.evidence["hash_run1"] == g.evidence["hash_run2"]  # stable inside one process
    assert not g.passed and "a fresh process (PYTHONHASHSEED=" in g.summary
    assert g.evidence["pythonhashseed"] == {"fresh_processes": ("1", "2")}


def test_determinism_evidence_does_not_depend_on_this_process_hash_seed(fakes, monkeypatch):
    runs = []
    for seed in ("0", "7"):
        monkeypatch.setenv("PYTHONHASHSEED", seed)
        reward = LevelReward()
        g = gate_determinism(
            fakes["tasks"],
            judge=fakes["judge"],
            reward=reward,
            judge_factory=fakes["judge_factory"],
            reward_factory=reward.factory,
        )
        assert g.passed, g.summary
        runs.append(g.to_json())
    assert runs[0] == runs[1]


def test_determinism_without_a_factory_is_not_claimed(fakes):
    g = gate_determinism(
        fakes["tasks"],
        judge=fakes["judge"],
        reward=LevelReward(),
        judge_factory=None,
        reward_factory=LevelReward().factory,
    )
    assert not g.passed and "no factory to rebuild the judge" in g.summary


def test_ablations_gate_fails_on_a_recipe_with_another_schema(fakes):
    class OddC(SwappedMappingReward):
        def __call__(self, steps, *, recipe, session=False):
            out = LevelReward()(steps, recipe=recipe, session=session)
            return out.value if recipe == "C" else out

    g = gate_ablations(fakes["tasks"], judge=fakes["judge"], reward=OddC())
    assert not g.passed and g.summary == "recipes return different schemas"
    ok = gate_ablations(fakes["tasks"], judge=fakes["judge"], reward=LevelReward())
    assert ok.passed and ok.evidence["c_equals_a"] is True
    assert {r: p["n_tasks"] for r, p in ok.evidence["recipes"].items()} == {
        "A": 24,
        "B": 24,
        "C": 24,
    }


def test_ablations_gate_records_a_crashing_recipe(fakes):
    class CrashC(SwappedMappingReward):
        def __call__(self, steps, *, recipe, session=False):
            if recipe == "C":
                raise RuntimeError("PRM offline")
            return 0.5

    g = gate_ablations(fakes["tasks"], judge=fakes["judge"], reward=CrashC())
    assert not g.passed and "RuntimeError: PRM offline" in g.summary


def test_golden_gate_on_fakes(fakes):
    assert gate_golden(fakes["golden"], judge=FakeJudge()).passed
    edited = [*fakes["golden"][:1], FakeGolden("g2", fakes["golden"][1].decisions, (2,))]
    g = gate_golden(edited, judge=FakeJudge())
    assert not g.passed and g.evidence["n_differences"] == 1
    assert g.evidence["differences"] == (
        {"trajectory_id": "g2", "decision": "d00", "expected": 2, "got": 1},
    )


def _edited_golden(tmp_path: Path) -> Path:
    from importlib import resources

    src = Path(str(resources.files("rewardkit.bioaudit") / "data" / "v1.2.0" / "golden.jsonl"))
    lines = src.read_text().splitlines()
    obj = json.loads(lines[3])
    obj["expected_levels"][2] = (obj["expected_levels"][2] + 1) % 4
    lines[3] = json.dumps(obj)
    out = tmp_path / "golden.jsonl"
    out.write_text("\n".join(lines) + "\n")
    return out


def test_shipped_golden_passes_and_an_edited_golden_file_fails(tmp_path):
    from rewardkit.bioaudit import Engine, load_benchmark
    from rewardkit.bioaudit.schema import read_golden

    g = gate_golden(load_benchmark().golden, judge=Engine())
    assert g.passed and (g.evidence["n_trajectories"], g.evidence["n_decisions"]) == (20, 137)
    bad = gate_golden(read_golden(_edited_golden(tmp_path)), judge=Engine())
    assert not bad.passed and bad.evidence["n_differences"] == 1


def test_all_five_gates_pass_on_the_shipped_benchmark():
    p = bioaudit_inputs()
    v = validate(
        p.tasks,
        judge=p.judge,
        golden=p.golden,
        substrates=p.substrates,
        candidates=p.candidates,
        judge_factory=p.judge_factory,
        n_resamples=500,
    )
    assert v.passed, [(g.name, g.summary) for g in v.gates if not g.passed]
    assert v.gate("spike_in").evidence["paradigms"] == {"deg": True, "pan": True, "scrna": True}
    ev = v.gate("determinism").evidence
    assert ev["hash_fresh_process_1"] == ev["hash_fresh_process_2"] == ev["hash_run1"]
    assert v.gate("golden").evidence["n_decisions"] == 137
