"""`rewardkit autorater diagnostic`: receipts written atomically, --json, exit statuses."""

from __future__ import annotations

import json

import pytest

from rewardkit.autorater import verify_receipt
from rewardkit.cli import main


def test_diagnostic_writes_the_receipt(tmp_path, capsys):
    f = tmp_path / "receipts" / "cpu.json"
    rc = main(
        [
            "autorater",
            "diagnostic",
            "--seeds",
            "42",
            "43",
            "44",
            "--device",
            "cpu",
            "--receipt",
            str(f),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert rc == 0
    r = json.loads(f.read_text())
    assert sorted(r["seeds"]) == ["42", "43", "44"]
    assert verify_receipt(r).hash_ok and r["passed"]
    assert json.loads((tmp_path / "out" / "autorater-receipt.json").read_text()) == r
    assert "manifest.json" in {p.name for p in (tmp_path / "out").iterdir()}
    out = capsys.readouterr().out
    assert r["receipt_sha256"] in out and "PASS" in out


def test_json_output_and_default_seeds(tmp_path, capsys):
    assert main(["autorater", "diagnostic", "--json", "--out", str(tmp_path)]) == 0
    r = json.loads(capsys.readouterr().out)
    assert sorted(r["seeds"]) == ["42", "43", "44"]
    assert main(["autorater", "diagnostic", "--seeds", "7", "--json", "--out", str(tmp_path)]) == 0
    assert list(json.loads(capsys.readouterr().out)["seeds"]) == ["7"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--device", "tpu"], "The 'device' parameter of receipt must be 'cpu', 'cuda'"),
        (["--seeds", "42", "42"], "distinct values"),
        (["--seeds", "x"], "'x' is not a valid integer"),
        (["--seeds", "-1"], "-1 is not in the range 0<=x<=4294967295"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(tmp_path, capsys, args, message):
    rc = main(["autorater", "diagnostic", *args, "--out", str(tmp_path)])
    assert rc == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "autorater-receipt.json").exists()


def test_failed_check_exits_1(tmp_path, monkeypatch):
    from rewardkit.autorater import proof

    monkeypatch.setitem(proof.CHECKS, "control_constant_half_brier", lambda v: v == 0.5)
    assert main(["autorater", "diagnostic", "--seeds", "42", "--out", str(tmp_path)]) == 1
