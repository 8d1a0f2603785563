"""Smoke runs of ``rewardkit learn`` (1 seed, 2 steps; the full runs are not unit tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl", reason="rewardkit learn needs the [trl] extra")
pytest.importorskip("torch", reason="rewardkit learn needs the [torch] extra")

from rewardkit.cli import main
from rewardkit.learn import runner


@pytest.mark.parametrize("name", ["calibration", "gating"])
def test_smoke_run_preregisters_before_training(
    name: str, tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    seen: list[bool] = []
    prereg_path = tmp_path / "learn" / name / "preregistration.json"

    def registered() -> bool:  # this run's pre-registration, not a file left by an earlier one
        if not prereg_path.is_file():
            return False
        pre = json.loads(prereg_path.read_text())
        return bool(pre["steps"] == 2 and pre["seeds"] == [0])

    def spying(fn: Any) -> Any:
        def spy(*a: Any, **kw: Any) -> Any:
            seen.append(registered())
            return fn(*a, **kw)

        return spy

    # On disk before any model is built (so before the warm start) and before any GRPO step.
    for attr in ("build_model", "warm_start", "_train_arm"):
        monkeypatch.setattr(runner, attr, spying(getattr(runner, attr)))
    rc = main(["learn", name, "--seeds", "0", "--steps", "2", "--json", "--out", str(tmp_path)])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)  # stdout is pure JSON: TRL's prints are muted
    assert len(seen) >= 3 and all(seen)
    pre = out["preregistration"]
    assert pre["steps"] == 2 and pre["seeds"] == [0] and pre["experiment"] == name
    assert pre["hypotheses"] and pre["decision_rule"] and pre["source_sha256"].startswith("sha256:")
    folder = tmp_path / "learn" / name
    on_disk = json.loads((folder / "preregistration.json").read_text())
    assert on_disk == pre
    arms = pre["arms"]
    assert {(r["arm"], r["seed"]) for r in out["per_seed"]} == {(a, 0) for a in arms}
    for r in out["per_seed"]:
        assert set(r["before"]) == set(r["after"]) == {m["name"] for m in pre["metrics"]}
    curves = [json.loads(line) for line in (folder / "curves.jsonl").read_text().splitlines()]
    assert sum("train" in c for c in curves) == 2 * len(arms)  # one row per arm and step
    ref = pre["reference_arm"]
    for m in out["summary"]["metrics"].values():
        assert set(m["vs_reference"]) == set(arms) - {ref}
    assert set(json.loads((folder / "manifest.json").read_text())["artefacts"]) >= {
        "preregistration.json",
        "summary.json",
        "curves.jsonl",
    }


@pytest.mark.slow
def test_same_inputs_give_byte_identical_summary(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        assert main(["learn", "gating", "--seeds", "3", "--steps", "2", "--out", str(d)]) == 0
    for f in ("summary.json", "curves.jsonl"):
        assert (a / "learn/gating" / f).read_bytes() == (b / "learn/gating" / f).read_bytes()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seeds", "a,b"], "--seeds.*distinct ints in \\[0, 4294967295\\]"),
        (["--seeds", "1,1"], "--seeds.*distinct ints in \\[0, 4294967295\\]"),
        (["--steps", "0"], "--steps"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args: list[str], message: str, capsys: Any) -> None:
    assert main(["learn", "calibration", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    import re

    assert re.search(message, err)
