"""The bio-audit demo section: every check passes and the artefact is canonical JSON."""

from __future__ import annotations

from rewardkit._json import canonical_json
from rewardkit.bioaudit.demo import demo_section


def test_demo_section():
    s = demo_section()
    assert s.name == "bioaudit" and "synthetic benchmark" in s.title
    assert len(s.checks) == 8
    assert all(c.passed for c in s.checks), [c for c in s.checks if not c.passed]
    art = s.artefacts["bioaudit.json"]
    assert "synthetic benchmark" in art["benchmark"]["description"]
    assert art["golden_diffs"] == 0
    assert canonical_json(art) == canonical_json(demo_section().artefacts["bioaudit.json"])
