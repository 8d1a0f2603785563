"""End to end, as a new user: their reward module and data files in their own folder,
``rewardkit calibrate`` and ``rewardkit validate`` with all five gates run on that data, in a
fresh interpreter that never imports the bio-audit world."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).parents[2] / "examples" / "audit_math"

SCRIPT = r"""
import json, sys
from rewardkit.cli import main
codes = {}
codes["calibrate_file"] = main(["calibrate", "--rewards", "rewards.jsonl", "--gold", "gold.jsonl",
                                "--strata", "difficulty", "--n-resamples", "300",
                                "--json", "--out", "out/cal"])
codes["calibrate_factory"] = main(["calibrate", "--reward", "myreward:make", "--gold",
                                   "gold.jsonl", "--n-resamples", "300", "--out", "out/cal2"])
codes["validate"] = main(["validate", "--reward", "myreward:make", "--items", "gold.jsonl",
                          "--golden", "golden.jsonl", "--spike-in", "spike_in.jsonl",
                          "--json", "--out", "out/val"])
codes["validate_partial"] = main(["validate", "--reward", "myreward:make", "--golden",
                                  "golden.jsonl", "--out", "out/val2"])
codes["validate_partial_allowed"] = main(["validate", "--reward", "myreward:make", "--golden",
                                          "golden.jsonl", "--allow-not-run", "--out", "out/v3"])
import rewardkit.audit._item_child  # what the determinism gate's fresh processes import
print("RESULT " + json.dumps({"codes": codes,
      "bioaudit": sorted(m for m in sys.modules if m.startswith("rewardkit.bioaudit"))}))
"""


def _oracle_reward(item: dict) -> float:
    """The test's own exact-match scoring (what a user's training run would have logged)."""
    import re

    text = item["completion"]
    boxed = re.findall(r"\\boxed\{([^{}]*)\}", text)
    if len(boxed) > 1:
        return -0.5
    nums = re.findall(r"-?\d+(?:\.\d+)?", text)
    final = boxed[-1] if boxed else (nums[-1] if nums else None)
    return float(final == item["answer"]) + 0.1 * float(len(boxed) == 1)


def test_a_user_audits_their_own_reward_without_the_bioaudit_world(tmp_path):
    shutil.copy(EXAMPLE / "mathreward.py", tmp_path / "myreward.py")
    shutil.copy(EXAMPLE / "golden.jsonl", tmp_path / "golden.jsonl")
    shutil.copy(EXAMPLE / "spike_in.jsonl", tmp_path / "spike_in.jsonl")
    items = [json.loads(x) for x in (EXAMPLE / "items.jsonl").read_text().splitlines()]
    gold_lines = []
    for it in items:  # the user's own field names: difficulty instead of stratum
        it["difficulty"] = it.pop("stratum")
        gold_lines.append(json.dumps(it))
    (tmp_path / "gold.jsonl").write_text("\n".join(gold_lines) + "\n")
    (tmp_path / "rewards.jsonl").write_text(
        "".join(json.dumps({"id": it["id"], "reward": _oracle_reward(it)}) + "\n" for it in items)
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    res = json.loads(line[len("RESULT ") :])
    assert res["bioaudit"] == []
    assert res["codes"] == {
        "calibrate_file": 0,
        "calibrate_factory": 0,
        "validate": 0,
        "validate_partial": 4,
        "validate_partial_allowed": 0,
    }
    val = json.loads((tmp_path / "out" / "val" / "validation.json").read_text())
    assert [(g["name"], g["status"]) for g in val["gates"]] == [
        ("range", "pass"),
        ("determinism", "pass"),
        ("spike_in", "pass"),
        ("ablations", "pass"),
        ("golden", "pass"),
    ]
    # the logged rewards and the factory give the same calibration (same values, same seed)
    c1 = json.loads((tmp_path / "out" / "cal" / "calibration.json").read_text())
    c2 = json.loads((tmp_path / "out" / "cal2" / "calibration.json").read_text())
    assert c1["rank_agreement"] == c2["rank_agreement"]
    assert {s["stratum"] for s in c1["strata"]} == {"easy", "hard"}
    report = (tmp_path / "out" / "cal" / "calibration.md").read_text()
    assert "rewards.jsonl against gold.jsonl" in report and "| difficulty |" in report
    assert "synthetic" not in report.lower()
    partial = json.loads((tmp_path / "out" / "val2" / "validation.json").read_text())
    assert {g["name"]: g["status"] for g in partial["gates"]}["spike_in"] == "not run"


def test_a_factory_that_cannot_be_imported_names_the_file_and_field(tmp_path):
    (tmp_path / "items.jsonl").write_text('{"id": "a", "x": 1}\n')
    (tmp_path / "badreward.py").write_text("import numpy\nraise RuntimeError('boom')\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    cases = {
        "nosuch:make": "field '--reward': cannot import module 'nosuch' from 'nosuch:make': no "
        "nosuch.py (or package) in the working directory",
        "badreward:make": "badreward.py, field '--reward': importing",
        "json:dumps": "field '--reward': 'json:dumps' needs arguments",
        "json": "field '--reward': expected 'module:factory'",
    }
    for spec, message in cases.items():
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "rewardkit.cli",
                "validate",
                "--reward",
                spec,
                "--items",
                "items.jsonl",
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 2, (spec, proc.stderr)
        assert message in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
