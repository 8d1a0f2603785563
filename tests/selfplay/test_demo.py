"""The self-play demo section runs and every check passes."""

from __future__ import annotations

from rewardkit.selfplay import demo_section


def test_demo_section_passes():
    s = demo_section()
    assert s.name == "selfplay" and len(s.checks) >= 10
    failed = [c for c in s.checks if not c.passed]
    assert not failed, failed
    assert {"selfplay_ig.json", "selfplay_p1.json", "selfplay_simulation.json"} <= set(s.artefacts)
