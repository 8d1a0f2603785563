"""rewardkit bioaudit audit / generate."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from rewardkit.bioaudit import Engine, load_benchmark
from rewardkit.cli import main

DATA = Path(str(resources.files("rewardkit.bioaudit") / "data" / "v1.2.0"))


def test_audit_json_matches_the_engine(capsys):
    assert main(["bioaudit", "audit", str(DATA / "golden.jsonl"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    bm = load_benchmark()
    assert len(out["trajectories"]) == 20
    for rec, g in zip(out["trajectories"], bm.golden):
        assert rec["trajectory_id"] == g.trajectory_id
        assert tuple(d["level"] for d in rec["decisions"]) == g.expected_levels
    first = out["trajectories"][0]["decisions"]
    js = Engine().audit(bm.golden[0].decisions)
    assert [d["rule_ids"] for d in first] == [list(j.rule_ids) for j in js]
    assert set(out["rulepack"]) == {"deg", "pan", "scrna"}


def test_audit_table(capsys, tmp_path):
    p = tmp_path / "one.jsonl"
    sub = load_benchmark().substrates["scrna_correct"]
    bad = {
        "decision_id": "x",
        "action": "no_doublet_detection",
        "params": {},
        "context": {"platform": "droplet", "n_cells": 5000},
    }
    p.write_text(
        json.dumps({"trajectory_id": "mine", "paradigm": "scrna", "decisions": [*sub, bad]}) + "\n"
    )
    assert main(["bioaudit", "audit", str(p)]) == 0
    out = capsys.readouterr().out
    assert "scrna.doublet.skipped" in out and "mine" in out
    assert "13 decisions" in out and "0: 1" in out


def test_audit_bad_file_is_one_line_exit_2(capsys, tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"trajectory_id": "a", "decisions": [{"decision_id": "d"}]}\n')
    assert main(["bioaudit", "audit", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rewardkit: error: ") and "bad.jsonl, line 1" in err
    assert "decisions[0].action" in err and err.count("\n") == 1


def test_generate_reproduces_shipped(capsys, tmp_path):
    assert main(["bioaudit", "generate", "--out", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["identical"] is True
    assert (tmp_path / "manifest.json").exists()


def test_audit_with_a_user_rulepack(capsys, tmp_path):
    pack = tmp_path / "mine.toml"
    pack.write_text(
        '[pack]\nparadigm = "mine"\nversion = "1"\nactions = ["step"]\n'
        '[types.params]\nx = "number"\n'
        '[[rules]]\nid = "mine.r"\nactions = ["step"]\nlevel = 1\nrationale = "r"\n'
        'source = "Doe 2020"\nwhen = [{ field = "params.x", op = "gt", value = 1 }]\n'
    )
    data = tmp_path / "t.jsonl"
    dec = {"decision_id": "a", "action": "step", "params": {"x": 2}, "context": {}}
    data.write_text(json.dumps({"trajectory_id": "t", "decisions": [dec]}) + "\n")
    assert main(["bioaudit", "audit", str(data), "--rulepack", str(pack), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["trajectories"][0]["decisions"][0]["level"] == 1
    assert out["trajectories"][0]["decisions"][0]["rule_ids"] == ["mine.r"]


def test_generate_exits_1_when_a_file_differs(capsys, tmp_path):
    """As documented: exit 1 unless byte-identical (another seed gives other files)."""
    assert main(["bioaudit", "generate", "--seed", "7", "--out", str(tmp_path)]) == 1
    assert "differs" in capsys.readouterr().out
