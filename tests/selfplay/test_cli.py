"""rewardkit selfplay ig|p1|simulate: outputs, exit codes and one-line errors."""

from __future__ import annotations

import json

import pytest

from rewardkit.cli import main


def test_ig_on_a_user_table(tmp_path, capsys):
    table = tmp_path / "t.jsonl"
    table.write_text(
        json.dumps(
            {
                "task_id": "t1",
                "passed": [[1, 1, 1], [1, 0, 1], [0, 1, 1], [0, 0, 1]],
                "y": [1, 1, 0.5, 0],
            }
        )
        + "\n"
    )
    out = tmp_path / "o"
    assert (
        main(
            [
                "selfplay",
                "ig",
                "--table",
                str(table),
                "--correction",
                "none",
                "--json",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    t = doc["tasks"][0]
    assert (
        t["task_id"] == "t1"
        and abs(t["reward"][0] - 0.6931471805599453) < 1e-15
        and t["reward"][2] == 0.0
    )
    assert json.loads((out / "ig.json").read_text())["tasks"][0]["mi"] == t["mi"]
    assert (out / "manifest.json").exists()


@pytest.mark.parametrize(
    "line, match",
    [
        ("{not json", r"t.jsonl, line 1: not valid JSON"),
        ('{"task_id": "a", "y": [1]}', r"t.jsonl, line 1, field 'passed': missing"),
        ('{"task_id": "a", "passed": [[1, 2]], "y": [1]}', r"field 'passed': cells must be 0 or 1"),
        (
            '{"task_id": "a", "passed": [[1], [0, 1]], "y": [1, 0]}',
            r"field 'passed': rows must all have the same",
        ),
        (
            '{"task_id": "a", "passed": [[1], [0]], "y": [1]}',
            r"field 'y': expected 2 finite numbers",
        ),
    ],
)
def test_bad_tables_exit_2_with_one_line(tmp_path, capsys, line, match):
    table = tmp_path / "t.jsonl"
    table.write_text(line + "\n")
    out = tmp_path / "o"
    assert main(["selfplay", "ig", "--table", str(table), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rewardkit: error: ")
    assert __import__("re").search(match, err), err
    assert not out.exists()  # nothing half-written


def test_missing_table(tmp_path, capsys):
    assert main(["selfplay", "ig", "--table", str(tmp_path / "nope.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_p1_exits_0_when_the_dense_side_holds_and_reports_the_sparse_refutation(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["selfplay", "p1", "--n-per-bucket", "60", "--json", "--out", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["dense_holds"] is True and doc["holds"] is False
    assert doc["sparse_refuted"] and min(doc["sparse_refuted"]) > 8
    assert doc["peak_theory"] == 0.21875
    assert (out / "p1.json").exists()


def test_p1_exits_1_when_the_dense_side_fails(tmp_path, capsys, monkeypatch):
    """The exit status can fail: a dense bucket off by more than 2x gives 1."""
    import dataclasses

    from rewardkit.selfplay import predictions

    real = predictions.p1_check

    def broken(**kwargs):
        res = real(**kwargs)
        bad = dataclasses.replace(res.buckets[0], holds=False)
        return dataclasses.replace(res, buckets=(bad, *res.buckets[1:]))

    monkeypatch.setattr(predictions, "p1_check", broken)
    out = tmp_path / "o"
    assert main(["selfplay", "p1", "--n-per-bucket", "60", "--json", "--out", str(out)]) == 1
    assert json.loads(capsys.readouterr().out)["dense_holds"] is False


def test_simulate_writes_instruments_and_curves(tmp_path, capsys):
    out = tmp_path / "o"
    rc = main(
        [
            "selfplay",
            "simulate",
            "--steps",
            "3",
            "--seeds",
            "1",
            "--arms",
            "A,C",
            "--json",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["arms"] == ["A", "C"] and "not LLM training" in doc["label"]
    assert len((out / "instruments.jsonl").read_text().splitlines()) == 6
    assert set(doc["artefacts"]) >= {"summary.json", "instruments.jsonl"}


def test_simulate_rejects_an_unknown_arm(capsys):
    assert main(["selfplay", "simulate", "--steps", "1", "--arms", "A,Z"]) == 2
    assert "'arms' parameter of simulate" in capsys.readouterr().err


USER_BANK = """version = "mine-v1"

[[task]]
id = "double"
prompt = "Return 2 * x."
args = [{ kind = "int", lo = -99, hi = 99 }]
boundary = ["(0,)", "(1,)"]
reference = '''
def double(x):
    if x < 0:
        return -2 * -x
    return 2 * x
'''

[[task.bug]]
name = "plus_one"
family = "off_by_one"
source = '''
def double(x):
    return 2 * x + 1
'''
"""


def test_simulate_on_a_users_bank_file(tmp_path, capsys):
    bank = tmp_path / "bank.toml"
    bank.write_text(USER_BANK)
    out = tmp_path / "o"
    args = ["selfplay", "simulate", "--steps", "3", "--seeds", "1", "--arms", "A", "--json"]
    assert main([*args, "--executor", "trusted", "--bank", str(bank), "--out", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["steps"] == 3 and doc["bank_hash"].startswith("sha256:")
    records = (out / "instruments.jsonl").read_text().splitlines()
    assert len(records) == 3


BAD_BANKS = [
    (("lo = -99", "lo = 100"), r"bank\.toml, line 3, field 'args\[0\]\.lo': in task 'double': "),
    (
        ("return 2 * x\n", "return 2 // x\n"),
        r"line 3, field 'boundary': in task 'double': the reference raised ZeroDivisionError: "
        r"integer division or modulo by zero on the input \(0,\)",
    ),
    (
        ("hi = 99", "hi = -99"),
        r"line 3, field 'args': in task 'double': the generator gave 1 distinct inputs besides "
        r"the fixed ones; the task needs 22 ",
    ),
    (("version", "[x]\nversion"), "unknown top-level key"),
]


@pytest.mark.parametrize(("edit", "match"), BAD_BANKS)
def test_simulate_with_a_bad_bank_file_exits_2_with_one_line(tmp_path, capsys, edit, match):
    bank = tmp_path / "bank.toml"
    bank.write_text(USER_BANK.replace(*edit))
    out = tmp_path / "o"
    args = ["selfplay", "simulate", "--steps", "2", "--executor", "trusted"]
    assert main([*args, "--bank", str(bank), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rewardkit: error: "), err
    assert __import__("re").search(match, err), err
    assert not out.exists()
