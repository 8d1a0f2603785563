"""A 5,000-character value typed for an option (a number, a name, a path) is refused with exit
2 and one line that stays readable: the refused value is cut, not echoed back whole."""

from __future__ import annotations

import pytest

from rewardkit.cli import main

LONG = "9" * 5000

CASES = [
    ["selfplay", "simulate", "--steps", LONG],  # click's integer check
    ["selfplay", "simulate", "--alpha", LONG],  # a float range
    ["selfplay", "simulate", "--arms", LONG],  # the function's own check
    ["selfplay", "simulate", "--bank", f"/nonexistent/{LONG}"],  # a missing file
    ["redteam", "--episodes", LONG],
    ["sandbox", "bench", "--programs", "-" + LONG],
]


@pytest.mark.parametrize("argv", CASES, ids=lambda a: " ".join(x[:12] for x in a))
def test_a_huge_value_is_one_short_line(tmp_path, capsys, argv):
    out = tmp_path / "out"
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rewardkit: error: ")
    assert len(err) < 400, err[:400]
    assert not out.exists()
