"""The input contract for paths and for options given at two levels, over every subcommand.

A path the file system cannot hold (a name or a whole path too long, a NUL byte), an empty path
(an unset shell variable: click reads it as "."), an output file the --out folder would
overwrite or be blocked by, an option given before and after the subcommand, and an option
that combines with another into more memory than the machine has: each exits 2 with one line
naming the option, before any work and with nothing written.
"""

from __future__ import annotations

import os
from pathlib import Path

import click
import pytest

from rewardkit.cli import main

from .test_input_contract import COMMANDS, TRAJECTORY

OUT_COMMANDS = sorted(
    name
    for name, cmd in COMMANDS.items()
    if any(isinstance(p, click.Option) and p.opts[0] == "--out" for p in cmd.params)
)
PATH_PARAMS = sorted(
    (name, p.opts[0] if isinstance(p, click.Option) else p.human_readable_name)
    for name, cmd in COMMANDS.items()
    for p in cmd.params
    if isinstance(p.type, click.Path)
)


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory of its own: a command that wrongly writes into "." writes here,
    where the test sees it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "trajectories.jsonl").write_text(TRAJECTORY)
    return tmp_path


def _needs(command: str) -> list[str]:
    return ["trajectories.jsonl"] if command in ("bioaudit audit", "sandbox run") else []


def _refused(argv: list[str], here: Path, capsys: pytest.CaptureFixture[str], *, names: str) -> str:
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, (argv[:4], code, err[-500:])
    assert len(lines) == 1 and lines[0].startswith("rewardkit: error: "), err[-500:]
    assert names in lines[0], lines[0]
    left = sorted(p.name for p in here.iterdir())
    assert left == ["trajectories.jsonl"], left  # nothing written, not even a folder
    return lines[0]


def test_the_walk_finds_every_path_option() -> None:
    assert len(OUT_COMMANDS) >= 15 and ("autorater diagnostic", "--receipt") in PATH_PARAMS
    assert ("bioaudit audit", "FILE") in PATH_PARAMS and len(PATH_PARAMS) >= 28


@pytest.mark.parametrize(("command", "option"), PATH_PARAMS)
def test_an_empty_path_exits_2_naming_the_option(
    command: str, option: str, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--out ""` wrote every artefact into the working directory (exit 0); an empty input
    path was read as the directory "." ("'.: is a directory'")."""
    if option == "FILE":
        argv = [*command.split(), ""]
    else:
        argv = [*command.split(), *_needs(command), option, ""]
    line = _refused(argv, here, capsys, names=f"'{option}'")
    assert "an empty path" in line


def _unholdable(tmp: Path) -> dict[str, str]:
    return {
        "a name too long": str(tmp / ("n" * 300)),
        "a name too long under a missing folder": str(tmp / "missing" / ("n" * 300)),
        "a path too long": str(tmp / ("abcdefghi/" * 420)),
        "a NUL byte": str(tmp / "a\0b"),
    }


@pytest.mark.parametrize("command", OUT_COMMANDS)
def test_an_out_the_file_system_cannot_hold_exits_2_before_any_work(
    command: str, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ENAMETOOLONG escaped as exit 3 (an internal error); a NUL byte too."""
    for klass, out in _unholdable(here).items():
        line = _refused(
            [*command.split(), *_needs(command), "--out", out], here, capsys, names="--out"
        )
        assert out[:30] in line, (klass, line)


def _receipt_classes(tmp: Path) -> dict[str, tuple[list[str], str]]:
    (tmp / "a-file").write_text("x")  # removed again below: the check wants an empty folder
    return {
        "under a regular file": (["--receipt", str(tmp / "a-file" / "r.json")], "is a file"),
        "unwritable": (["--receipt", "/proc/rewardkit-receipt.json"], "not writable"),
        **{klass: (["--receipt", path], "--receipt") for klass, path in _unholdable(tmp).items()},
        "the --out folder": (["--receipt", "out", "--out", "out"], "is the --out folder"),
        "above the --out folder": (["--receipt", "o", "--out", "o/deeper"], "above it"),
        "the manifest in --out": (
            ["--receipt", "out/manifest.json", "--out", "out"],
            "manifest.json",
        ),
    }


def test_a_receipt_path_that_cannot_be_written_exits_2_before_any_work(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--receipt was written unchecked: under a file, in /proc or with a long name it exited 3
    after the work; `--receipt out` wrote a file named out and then failed to make the --out
    folder (exit 3, the receipt left behind); `--receipt out/manifest.json` was overwritten
    by the manifest (exit 0, the receipt silently lost)."""
    for klass, (args, says) in _receipt_classes(here).items():
        (here / "a-file").unlink(missing_ok=True)
        if klass == "under a regular file":
            (here / "a-file").write_text("x")
        argv = ["autorater", "diagnostic", "--seeds", "1", *args]
        capsys.readouterr()
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 2, (klass, code, err[-400:])
        line = err.strip()
        assert line.startswith("rewardkit: error: ") and "\n" not in line, (klass, err)
        assert says in line and "--receipt" in line, (klass, line)
        left = sorted(p.name for p in here.iterdir() if p.name != "a-file")
        assert left == ["trajectories.jsonl"], (klass, left)


def test_a_receipt_beside_or_inside_out_is_still_written(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for receipt in ("r.json", "out/r.json", "out/autorater-receipt.json"):
        code = main(["autorater", "diagnostic", "--seeds", "1", "--receipt", receipt])
        assert code == 0 and (here / receipt).is_file(), (receipt, capsys.readouterr().err)


@pytest.mark.parametrize("command", OUT_COMMANDS)
def test_out_or_json_before_and_after_the_subcommand_exits_2(
    command: str, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`rewardkit --out a demo --out b` silently wrote to b: one of the two was ignored."""
    needs = _needs(command)
    _refused(["--out", "a", *command.split(), *needs, "--out", "b"], here, capsys, names="'--out'")
    line = _refused(
        ["--json", *command.split(), *needs, "--json", "--out", "b"],
        here,
        capsys,
        names="'--json'",
    )
    assert "before and after the subcommand" in line


def test_a_flag_given_twice_is_called_a_flag(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _refused(["selfplay", "p1", "--json", "--json"], here, capsys, names="'--json'")
    assert "(a flag: give it once)" in line


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        # --reward '' was falsy: the preset ran and the option was ignored (exit 0, artefacts)
        (["calibrate", "--preset", "bioaudit", "--reward", ""], "exclude each other"),
        # each in range, together 253 GiB: exit 3 MemoryError before the fix
        (["selfplay", "simulate", "--steps", "100000", "--seeds", "1000"], "'steps'"),
    ],
    ids=["calibrate-preset-reward-empty", "simulate-steps-x-seeds"],
)
def test_options_each_accepted_but_wrong_together_exit_2(
    argv: list[str], names: str, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _refused(argv, here, capsys, names=names)


def test_a_nul_byte_in_any_path_exits_2(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Only a caller of main() can pass one (click's own check raised ValueError: exit 3)."""
    for command, option in PATH_PARAMS:
        args = ["a\0b"] if option == "FILE" else [*_needs(command), option, "a\0b"]
        _refused([*command.split(), *args], here, capsys, names=f"'{option}'")
    assert os.path.exists(here / "trajectories.jsonl")


def test_docs_cli_gives_the_range_of_every_numeric_option() -> None:
    """The bounds table of docs/cli.md names every INT / FLOAT option with its upper bound as
    the code has it (`selfplay p1 --m` was missing). Seeds share one row."""
    doc = (Path(__file__).parents[1] / "docs" / "cli.md").read_text(encoding="utf-8")
    rows = [
        r for r in doc[doc.index("## Numbers and repeated options") :].splitlines() if r[:2] == "| "
    ]
    missing = []
    for name, cmd in sorted(COMMANDS.items()):
        for p in cmd.params:
            t = p.type
            if not isinstance(p, click.Option) or not isinstance(t, click.types._NumberRangeBase):
                continue
            high = t.max
            if p.opts[0] in ("--seed", "--seeds") and high == 2**32 - 1:
                assert any("every `--seed`" in r and "2³²−1" in r for r in rows)
                continue
            opt = p.opts[0]  # a row names the command, or the option alone for every command
            hits = [r for r in rows if f"{opt}`" in r and (name.split()[0] in r or f"`{opt}`" in r)]
            assert high is not None
            exact = int(high) if float(high).is_integer() else high
            powers = {10**6: "10⁶", 10**15: "10¹⁵"}
            forms = {str(exact), f"{exact:,}", powers.get(exact, str(exact))}
            if not any(f in r for r in hits for f in forms):
                missing.append(f"{name} {p.opts[0]} (up to {exact})")
    assert not missing, missing


INPUT_PATHS = [(c, o) for c, o in PATH_PARAMS if o not in ("--out", "--receipt")]
# What a command needs besides the file under attack, so that the file is what gets read.
COMPANIONS: dict[tuple[str, str], list[str]] = {
    ("calibrate", "--rewards"): ["--gold", "{name}"],
    ("calibrate", "--gold"): ["--rewards", "{name}"],
    **{
        ("validate", o): ["--reward", "rewardkit.audit.level_items:recipe_b"]
        for o in ("--items", "--golden", "--spike-in")
    },
}


@pytest.mark.parametrize(("command", "option"), INPUT_PATHS)
@pytest.mark.parametrize("name", [" ", " spaced ", "\t"])
def test_a_blank_or_padded_input_name_is_quoted_in_the_message(
    command: str, option: str, name: str, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The one-line message collapsed the name: `rewardkit: error: : no such file`."""
    args = [name] if option == "FILE" else [*_needs(command), option, name]
    args += [a.format(name=name) for a in COMPANIONS.get((command, option), [])]
    line = _refused([*command.split(), *args], here, capsys, names=repr(name))
    assert f"{name!r}: " in line


UNDERFLOWING = sorted(
    (name, p.opts[0])
    for name, cmd in COMMANDS.items()
    for p in cmd.params
    if isinstance(p, click.Option)
    and isinstance(p.type, click.FloatRange)
    and p.type.min is not None
    and (p.type.min > 0 or (p.type.min == 0 and p.type.min_open))
)


@pytest.mark.parametrize(("command", "option"), UNDERFLOWING)
def test_a_number_that_underflows_to_zero_is_named_as_typed(
    command: str, option: str, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--high-frac 1e-400` said "0.0 is not in the range": the user never typed 0.0."""
    line = _refused(
        [*command.split(), *_needs(command), option, "1e-400"], here, capsys, names=f"'{option}'"
    )
    assert "'1e-400' (read as 0.0)" in line, line


def test_underflow_cases_exist() -> None:
    assert len(UNDERFLOWING) >= 3, UNDERFLOWING
