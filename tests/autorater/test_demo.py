"""The autorater section of the demo: its checks pass, can fail, and its artefacts are stable."""

from __future__ import annotations

from rewardkit._json import canonical_json
from rewardkit.autorater import proof
from rewardkit.autorater.demo import demo_section


def test_demo_section_passes_with_key_scalars():
    s = demo_section()
    assert s.name == "autorater"
    assert all(c.passed for c in s.checks), [c for c in s.checks if not c.passed]
    names = {c.name for c in s.checks}
    assert "log reward of a parse failure = log 0.001" in names
    assert next(c for c in s.checks if "log 0.001" in c.name).measured == "-6.907755"
    assert s.artefacts["autorater-reliability.png"][:4] == b"\x89PNG"
    assert canonical_json(s.artefacts["autorater.json"]) == canonical_json(
        demo_section().artefacts["autorater.json"]
    )


def test_demo_check_fails_when_the_diagnostic_does(monkeypatch):
    monkeypatch.setitem(proof.CHECKS, "grad_log_toward_y_frac", lambda v: v > 1.0)
    s = demo_section()
    failed = {c.name for c in s.checks if not c.passed}
    assert failed == {
        "log: one step moves every valid p toward y",
        "all diagnostic checks (seed 42)",
    }
