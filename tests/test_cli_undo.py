"""A command that ends in bad input (exit 2), an internal error (3) or an interrupt (130) after
writing some of its artefacts leaves --out as it found it: new files and folders removed, the
files it replaced restored byte for byte. A success (0) or a failed gate (1) keeps them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import rewardkit._cliutil as cliutil
import rewardkit.bioaudit.generator as generator
from rewardkit.cli import main
from rewardkit.errors import ConfigError

FAILURES: dict[str, tuple[BaseException, int]] = {
    "bad input found late": (ConfigError("field 'x': found bad after the first artefact"), 2),
    "an internal error": (ZeroDivisionError("a bug"), 3),
    "Ctrl-C": (KeyboardInterrupt(), 130),
}
# Commands that write several files, fast on the defaults, and the module whose write_atomic
# writes them.
RUNS = {
    "selfplay p1": (["selfplay", "p1", "--m", "4", "--n-per-bucket", "10"], cliutil),
    "bioaudit generate": (["bioaudit", "generate"], generator),
}


def _fail_after_first_write(
    monkeypatch: pytest.MonkeyPatch, module: Any, failure: BaseException
) -> None:
    real = module.write_atomic

    def write_then_fail(path: Any, data: Any) -> Path:
        real(path, data)
        raise failure

    monkeypatch.setattr(module, "write_atomic", write_then_fail)


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_a_failed_run_into_a_new_folder_leaves_nothing(
    run: str, failure: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exc, code = FAILURES[failure]
    argv, module = RUNS[run]
    _fail_after_first_write(monkeypatch, module, exc)
    out = tmp_path / "new" / "out"
    assert main([*argv, "--out", str(out)]) == code
    assert sorted(tmp_path.iterdir()) == []  # not even the folders it made


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_a_failed_rerun_restores_the_previous_artefacts(
    run: str, failure: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    argv, module = RUNS[run]
    assert main([*argv, "--seed", "3", "--out", str(out)]) in (0, 1)  # 1: not the shipped seed
    before = _tree(out)
    assert len(before) >= 2  # a failed gate (exit 1) keeps its artefacts: they are the evidence
    exc, code = FAILURES[failure]
    _fail_after_first_write(monkeypatch, module, exc)
    assert main([*argv, "--seed", "4", "--out", str(out)]) == code
    assert _tree(out) == before  # the same names, the same bytes, no undo copies left


def test_a_finished_rerun_keeps_its_artefacts_and_no_undo_copies(tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = RUNS["selfplay p1"][0]
    assert main([*argv, "--seed", "3", "--out", str(out)]) == 0
    first = _tree(out)
    assert main([*argv, "--seed", "4", "--out", str(out)]) == 0
    second = _tree(out)
    assert set(second) == set(first) and second != first
    assert not any("rewardkit-undo" in name for name in second)


def _write_calibrate_inputs(rewards: Path, gold: Path) -> None:
    rewards.write_text("".join(f'{{"id": "i{i}", "reward": {i / 11}}}\n' for i in range(12)))
    gold.write_text("".join(f'{{"id": "i{i}", "gold": {(i * 7) % 3}}}\n' for i in range(12)))


@pytest.mark.parametrize(
    "name",
    ["calibration.json", "calibration.md", "preregistration.json", "calibrate-manifest.json"],
)
@pytest.mark.parametrize("option", ["--rewards", "--gold"])
def test_an_artefact_never_overwrites_an_input_of_the_same_run(
    name: str, option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`calibrate --rewards out/calibration.json --out out` read the rewards, then wrote its
    result over them (exit 1, the input lost)."""
    out = tmp_path / "out"
    out.mkdir()
    victim = out / name
    other = tmp_path / "other.jsonl"
    rewards, gold = (victim, other) if option == "--rewards" else (other, victim)
    _write_calibrate_inputs(rewards, gold)
    before = victim.read_bytes()
    argv = ["calibrate", "--rewards", str(rewards), "--gold", str(gold), "--n-resamples", "50"]
    code = main([*argv, "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2, (code, err)
    assert err.startswith("rewardkit: error: ") and "\n" not in err
    assert f"would overwrite the input file {victim}" in err, err
    assert victim.read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == [name]  # and nothing else written
