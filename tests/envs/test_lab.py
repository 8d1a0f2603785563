"""lab rlvr: the four trajectories of seed 002 get their expected outcomes."""

from __future__ import annotations

from rewardkit.envs.lab import run_lab


def test_lab_outcomes():
    lab = run_lab()
    assert lab.passed, [c for c in lab.checks if not c.passed]
    assert lab.label == "environment PASS, training not-run"
    v = {n: t.verdict for n, t in lab.trajectories.items()}
    assert v["D"].hard_failed and v["D"].total == 0.0 and v["D"].components["task"] == 1.0
    assert v["D"].soft_total > v["B"].soft_total  # logged, not hidden behind the 0
    assert max(v, key=lambda n: v[n].soft_total) == "A"
    assert v["B"].components["task"] == 0.0
    assert v["C"].components["cost"] < v["A"].components["cost"]
    assert max(lab.advantages, key=lambda n: lab.advantages[n]) == "A"
    assert sum(lab.advantages.values()) == 0.0 or abs(sum(lab.advantages.values())) < 1e-12
    assert all(t.verdict.lineage == lab.lineage for t in lab.trajectories.values())


def test_lab_is_byte_deterministic():
    assert run_lab().to_json() == run_lab().to_json()
