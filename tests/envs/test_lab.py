"""lab rlvr: the four trajectories of seed 002 get their expected outcomes."""

from __future__ import annotations

from rewardkit.envs.lab import run_lab


def test_lab_outcomes():
    lab = run_lab()
    assert lab.passed, [c for c in lab.checks if not c.passed]
    assert lab.label == "environment PASS, training not-run"
    v = {n: t.verdict for n, t in lab.trajectories.items()}
    # fail_value "below": lowest safe total −0.5 minus 0.1 × the span 5.25 (4.75 − −0.5)
    assert v["D"].hard_failed and v["D"].total == -1.025 and v["D"].components["task"] == 1.0
    assert v["D"].soft_total > v["B"].soft_total  # logged, not hidden behind the fail value
    # the unsafe one ranks last, in total and in group advantage, under every method
    assert sorted(v, key=lambda n: v[n].total) == ["D", "B", "C", "A"]
    assert sorted(lab.advantages, key=lambda n: lab.advantages[n]) == ["D", "B", "C", "A"]
    assert max(v, key=lambda n: v[n].soft_total) == "A"
    assert v["B"].components["task"] == 0.0
    assert v["C"].components["cost"] < v["A"].components["cost"]
    assert max(lab.advantages, key=lambda n: lab.advantages[n]) == "A"
    assert sum(lab.advantages.values()) == 0.0 or abs(sum(lab.advantages.values())) < 1e-12
    assert all(t.verdict.lineage == lab.lineage for t in lab.trajectories.values())


def test_lab_is_byte_deterministic():
    assert run_lab().to_json() == run_lab().to_json()


def test_a_missing_score_fails_the_checks_instead_of_passing_as_zero(monkeypatch):
    """C's cost component crashes (C spends 6 of 8): its total and advantage are None. The
    checks comparing C with A must fail, not compare 0 < A."""
    from rewardkit.envs.fhir import verifier

    def cost(ep):
        if ep.cost_spent > 3:
            raise RuntimeError("cost meter down")
        return verifier.cost(ep)

    monkeypatch.setitem(verifier.COMPONENTS, "cost", cost)
    lab = run_lab()
    v = lab.trajectories["C"].verdict
    assert v.total is None and v.components["cost"] is None and lab.advantages["C"] is None
    failed = {c.name for c in lab.checks if not c.passed}
    assert failed == {
        "C pays for cost",
        "A has the highest group advantage",
        "D ranks last (ordering guarantee)",  # D below C cannot be shown without C's score
    }
    assert not lab.passed and lab.label == "environment FAIL, training not-run"
