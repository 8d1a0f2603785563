"""The sandbox's demo section: every check passes and the artefact is canonical JSON."""

from __future__ import annotations

from rewardkit._json import canonical_json
from rewardkit._results import Section
from rewardkit.sandbox.demo import demo_section


def test_demo_section_passes():
    section = demo_section()
    assert isinstance(section, Section) and section.name == "sandbox"
    failed = [(c.name, c.expected, c.measured) for c in section.checks if not c.passed]
    assert not failed
    art = section.artefacts["sandbox.json"]
    assert art["rows"]["correct"]["status"][:2] == ("PASS", "PASS")
    assert art["rows"]["os._exit(0)"]["status"][:2] == ("CRASH", "CRASH")
    assert set(art["rows"]["correct"]["status"][2:]) == {"INVALID_TEST"}
    canonical_json(art)  # JSON-able
