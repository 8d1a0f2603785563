"""The SQL demo section: every check passes on the shipped code, and its checks fail under a
deliberate break (a gate removed from the shipped verifier)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import rewardkit.envs.fuzz as fuzz_module
import rewardkit.envs.sql.env as env_module
from rewardkit.envs.sql.demo import demo_section
from rewardkit.envs.sql.verifier import build_stack
from rewardkit.stack import Gate, RewardStack


@pytest.mark.slow
def test_demo_section_passes():
    s = demo_section()
    assert s.name == "sql"
    assert all(c.passed for c in s.checks), [c for c in s.checks if not c.passed]
    assert {"sql_lab.json", "sql_redteam.json"} <= set(s.artefacts)


@pytest.mark.slow
def test_demo_checks_fail_when_the_write_and_read_gates_are_removed(monkeypatch):
    full = build_stack()

    def broken(*args, **kwargs):
        return RewardStack(
            gates=[
                Gate(g.name, g.check)
                for g in full.gates
                if g.name not in ("write_attempt", "restricted_column_read")
            ],
            components=full.components,
            fail_value=full.fail_value,
            version="broken",
        )

    monkeypatch.setattr(env_module, "build_stack", broken)
    monkeypatch.setattr(fuzz_module, "_ENVS", {})
    s = demo_section()
    failed = {c.name for c in s.checks if not c.passed}
    assert any(n.startswith("lab rlvr") for n in failed)
    assert any(n.startswith("adversarial library") for n in failed)
    assert any(n.startswith("fuzz 400 episodes") for n in failed)


_ARTEFACT_HASHES = """
import hashlib
from rewardkit._json import canonical_json
from rewardkit.envs.sql.demo import demo_section
for name, obj in sorted(demo_section().artefacts.items()):
    print(name, hashlib.sha256(canonical_json(obj).encode()).hexdigest())
"""


@pytest.mark.slow
def test_demo_artefacts_are_byte_identical_across_hash_seeds():
    """sql_lab.json and sql_redteam.json do not depend on PYTHONHASHSEED (set order once
    leaked into sql_redteam.json, so the demo's byte-identity failed between processes)."""
    out = []
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-c", _ARTEFACT_HASHES],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        )
        out.append(proc.stdout)
    assert out[0] == out[1] and "sql_redteam.json" in out[0]
