"""Every example runs, and the README's quickstart is exactly examples/quickstart.py."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def test_readme_quickstart_is_the_example():
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    example = (ROOT / "examples" / "quickstart.py").read_text().split('"""\n\n', 1)[1]
    assert blocks and blocks[0] == example
    assert len(example.strip().splitlines()) <= 25


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(path):
    p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip()


def test_quickstart_prints_the_documented_numbers():
    p = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = p.stdout.splitlines()
    assert lines[0].startswith("0.975 False")
    # fail_value="below": lowest safe total −0.5 (cost −1 × 0.5) minus 0.1 × the span 1.5
    assert lines[1].startswith("-0.65 True {'no_write': ('update_observation/7',)}")
    assert lines[2].startswith("None False {} ('task',)")
    assert lines[3] == "advantages: [1.0, -1.0, None]"
    assert lines[4] == "recipe B: 0.235385"


def _run(name):
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / name)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout


def test_fhir_example_finds_no_exploit_in_the_shipped_verifier_and_some_in_the_naive_one():
    out = _run("fhir_env.py")
    assert "check_env: True" in out
    assert "shipped: 0 exploits" in out
    naive = int(out.split("naive: ")[1].split(" exploits")[0])
    assert naive > 0


def test_validate_own_reward_example_passes_all_five_gates():
    out = _run("validate_own_reward.py")
    for gate in ("range", "determinism", "spike_in", "ablations", "golden"):
        line = next(ln for ln in out.splitlines() if ln.startswith(gate))
        assert "PASS" in line.split()[1], line
    assert "outcome: pass" in out
