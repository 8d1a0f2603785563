"""rewardkit lab rlvr / redteam / sweep: JSON output, artefacts, exit codes, bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rewardkit.cli import main


def run(*args):
    return subprocess.run(
        [sys.executable, "-m", "rewardkit.cli", *args], capture_output=True, text=True, timeout=300
    )


def test_lab_rlvr_json(tmp_path):
    p = run("lab", "rlvr", "--json", "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["passed"] and out["label"] == "environment PASS, training not-run"
    saved = json.loads((tmp_path / "lab_rlvr.json").read_text())
    assert saved == out["result"]
    assert json.loads((tmp_path / "manifest.json").read_text())["artefacts"]["lab_rlvr.json"]


def test_redteam_json_and_report(tmp_path):
    p = run("redteam", "--episodes", "2000", "--json", "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["passed"] and out["library_matched"] == out["library_cases"] >= 300
    shipped, naive, unordered = (out["fuzz"][k] for k in ("shipped", "naive", "unordered"))
    assert shipped["n_exploits"] == 0 and shipped["n_inversions"] == 0 and shipped["passed"]
    assert naive["n_high_reward"] > 0 and naive["n_missed_violations"] > 0
    assert unordered["control_for"] == ["inversion"] and unordered["n_inversions"] > 0
    rep = json.loads((tmp_path / "redteam.json").read_text())
    assert rep["fuzz"]["episodes"] == 2000 and len(rep["library"]) == out["library_cases"]


def test_redteam_exits_1_when_a_user_case_fails(tmp_path):
    case = {
        "name": "mine",
        "env_id": "fhir/anc-threshold-v1",
        "seed": 0,
        "actions": [{"answer": {"status": "unknown"}}],
        "gates": ["phi_leak"],
    }
    f = tmp_path / "c.jsonl"
    f.write_text(json.dumps(case) + "\n")
    p = run("redteam", "--episodes", "0", "--cases", str(f), "--out", str(tmp_path / "o"))
    assert p.returncode == 1
    assert "MISMATCH" in p.stdout and "mine" in p.stdout


def test_sweep_writes_plot(tmp_path):
    pytest.importorskip("matplotlib")
    p = run("sweep", "--variants", "1", "--json", "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["result"]["switches"]
    assert (tmp_path / "pareto.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    "argv, match",
    [
        (["redteam", "--backend", "dask"], "rewardkit: error: Invalid value for '--backend'"),
        (["redteam", "--episodes", "-1"], "rewardkit: error: Invalid value for '--episodes'"),
        (
            ["redteam", "--episodes", "0", "--cases", "/nonexistent.jsonl"],
            "rewardkit: error: /nonexistent.jsonl: no such file",
        ),
        (["sweep", "--grid", "1,x"], "rewardkit: error: The '--grid' option of sweep"),
        (["lab", "rlvr", "--seed", "-2"], "rewardkit: error: Invalid value for '--seed'"),
    ],
)
def test_bad_input_exits_2_with_one_line(argv, match, capsys, tmp_path):
    assert main([*argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(match) and err.count("\n") == 1


def test_lab_scores_a_users_group(tmp_path):
    from rewardkit.envs.lab import run_lab

    lab = run_lab()
    lines = [{"name": f"mine-{n}", "actions": list(t.actions)} for n, t in lab.trajectories.items()]
    f = tmp_path / "t.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    p = run("lab", "rlvr", "--trajectories", str(f), "--json", "--out", str(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)["result"]
    assert res["label"] == "environment scored 4 user trajectories, training not-run"
    for n, t in lab.trajectories.items():  # the same task by default: the same verdicts
        assert res["trajectories"][f"mine-{n}"]["verdict"] == t.verdict.to_dict()
    assert res["advantages"]["mine-A"] == lab.advantages["A"]


@pytest.mark.parametrize(
    "lines, match",
    [
        (
            [{"name": "a", "actions": [], "seed": 1}, {"name": "b", "actions": []}],
            r"t.jsonl, line 2, field 'env_id': every trajectory of a group",
        ),
        ([{"name": "a", "actions": []}, {"name": "a", "actions": []}], "appears twice"),
        ([{"name": "a"}], r"line 1, field 'actions': missing"),
        ([{"name": "a", "actions": [], "colour": 1}], r"field 'colour': unknown field"),
        ([], "t.jsonl: no records: expected one JSON object per line"),
    ],
)
def test_bad_trajectory_files(tmp_path, lines, match):
    from rewardkit.envs.lab import load_trajectories
    from rewardkit.errors import InputError

    f = tmp_path / "t.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(InputError, match=match):
        load_trajectories(str(f))
