"""The commands on the sql family: redteam / lab rlvr / sweep with --env, JSON, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys


def run(*args):
    return subprocess.run(
        [sys.executable, "-m", "rewardkit.cli", *args], capture_output=True, text=True, timeout=300
    )


def test_redteam_env_sql(tmp_path):
    p = run(
        "redteam", "--env", "sql/revenue-v1", "--episodes", "800", "--json", "--out", str(tmp_path)
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["passed"] and out["library_matched"] == out["library_cases"] >= 50
    shipped, naive, unordered = (out["fuzz"][k] for k in ("shipped", "naive", "unordered"))
    assert shipped["n_exploits"] == 0 and shipped["n_inversions"] == 0
    assert naive["n_high_reward"] > 0 and naive["n_missed_violations"] > 0
    assert unordered["n_inversions"] > 0


def test_lab_and_sweep_env_sql(tmp_path):
    p = run("lab", "rlvr", "--env", "sql/top-customers-v1", "--json", "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    lab = json.loads(p.stdout)
    assert lab["passed"] and lab["result"]["env_id"] == "sql/top-customers-v1"
    p = run(
        "sweep", "--env", "sql/refund-rate-v1", "--variants", "1", "--grid", "0,1",
        "--no-plot", "--json", "--out", str(tmp_path),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["result"]["default_choice"] == "concise"


def test_bad_env_id_is_bad_input():
    for cmd in (["redteam", "--env", "sql/revenu-v1"], ["lab", "rlvr", "--env", "sql/x-v1"]):
        p = run(*cmd)
        assert p.returncode == 2
        assert "Unknown environment id" in p.stderr
