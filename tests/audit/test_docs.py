"""docs/audit.md starts from "audit my own reward", and its example is the shipped one."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_audit_doc_starts_from_your_own_reward_with_the_shipped_example():
    doc = (ROOT / "docs" / "audit.md").read_text()
    sections = re.findall(r"^## (.+)$", doc, flags=re.M)
    assert sections[0] == "Audit my own reward"
    block = re.findall(r"```python\n(.*?)```", doc, flags=re.S)[0]
    assert block in (ROOT / "examples" / "audit_math" / "mathreward.py").read_text()
    assert "examples/validate_own_reward.py" in doc
    readme = (ROOT / "README.md").read_text()
    assert "docs/audit.md#audit-my-own-reward" in readme and "validate_own_reward.py" in readme


def test_example_data_is_what_make_data_writes(tmp_path):
    import runpy
    import shutil

    src = ROOT / "examples" / "audit_math"
    shutil.copy(src / "make_data.py", tmp_path / "make_data.py")
    runpy.run_path(str(tmp_path / "make_data.py"), run_name="__main__")
    for name in ("items.jsonl", "golden.jsonl", "spike_in.jsonl"):
        assert (tmp_path / name).read_text() == (src / name).read_text(), name
