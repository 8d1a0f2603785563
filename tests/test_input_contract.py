"""The input contract, over every subcommand × every class of bad input.

Bad input exits 2 with one line ``rewardkit: error: <file>[, line N][, field F]: <what>
(<what is accepted>)`` — no traceback, nothing written to ``--out``. Exit 1 is kept for a
failed gate or check; an internal error exits 3 with one line and the hint to rerun with
``--debug``. The commands are found by walking the CLI, and every file option must be listed
in ``FILE_FORMATS`` (a completeness assert), so a new command or option is attacked too.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from rewardkit.cli import cli, main

# Which file each file-taking option reads. An option missing here fails the completeness test.
FILE_FORMATS: dict[tuple[str, str], str] = {
    ("bioaudit audit", "file"): "jsonl",
    ("bioaudit audit", "--rulepack"): "toml",
    ("calibrate", "--rewards"): "jsonl",
    ("calibrate", "--gold"): "jsonl",
    ("calibrate", "--config"): "toml",
    ("lab rlvr", "--trajectories"): "jsonl",
    ("redteam", "--cases"): "jsonl",
    ("sandbox run", "file"): "jsonl",
    ("selfplay ig", "--table"): "jsonl",
    ("selfplay simulate", "--bank"): "toml",
    ("validate", "--items"): "jsonl",
    ("validate", "--golden"): "jsonl",
    ("validate", "--spike-in"): "jsonl",
    ("validate", "--config"): "toml",
}
# Path options that are outputs, not inputs.
OUTPUT_OPTIONS = {"--out", "--receipt"}
# Options given as text but read as a file (a rule pack path or name).
TEXT_FILE_OPTIONS = {("bioaudit audit", "--rulepack")}
# What a command needs besides the file under attack, so that the file is what gets read.
COMPANIONS: dict[tuple[str, str], list[str]] = {
    ("bioaudit audit", "--rulepack"): ["{trajectories}"],
    ("calibrate", "--rewards"): ["--gold", "{bad}"],
    ("calibrate", "--gold"): ["--rewards", "{bad}"],
    ("validate", "--items"): ["--reward", "rewardkit.audit.level_items:recipe_b"],
    ("validate", "--golden"): ["--reward", "rewardkit.audit.level_items:recipe_b"],
    ("validate", "--spike-in"): ["--reward", "rewardkit.audit.level_items:recipe_b"],
}
TRAJECTORY = (
    '{"trajectory_id": "t", "decisions": [{"decision_id": "a", "action": "de_test", '
    '"params": {}, "context": {"paradigm": "deg", "n_replicates_per_group": 3}}]}\n'
)


def _commands() -> Iterator[tuple[str, click.Command]]:
    def walk(cmd: click.Command, path: list[str]) -> Iterator[tuple[str, click.Command]]:
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(click.Context(cmd)):
                sub = cmd.get_command(click.Context(cmd), name)
                assert sub is not None
                yield from walk(sub, [*path, name])
        else:
            yield " ".join(path), cmd

    yield from walk(cli, [])


COMMANDS = dict(_commands())


def _opt(p: click.Parameter) -> str:
    return p.opts[0] if isinstance(p, click.Option) else (p.name or "")


def test_every_file_option_is_attacked() -> None:
    """Don't forget any: every input path option of every command has its format listed."""
    found = {
        (name, _opt(p))
        for name, cmd in COMMANDS.items()
        for p in cmd.params
        if isinstance(p.type, click.Path) and _opt(p) not in OUTPUT_OPTIONS
    }
    assert found | TEXT_FILE_OPTIONS == set(FILE_FORMATS), found ^ set(FILE_FORMATS)


DEEP = 100_000
BAD_FILES: dict[str, dict[str, bytes]] = {
    "jsonl": {
        "deep nesting": b'{"a": ' + b"[" * DEEP + b"]" * DEEP + b"}\n",
        "5000-digit int": b'{"id": "x", "gold": 1' + b"0" * 5000 + b"}\n",
        "400-digit int": b'{"id": "x", "gold": 1, "reward": 1' + b"0" * 400 + b"}\n",
        "not UTF-8": b'{"id": "\xff\xfe"}\n',
        "NaN literal": b'{"id": "x", "gold": 1, "reward": NaN, "score": NaN}\n',
        "Infinity literal": b'{"id": "x", "gold": 1, "reward": -Infinity, "score": Infinity}\n',
        "float over 1e308": b'{"id": "x", "gold": 1, "reward": 1e309, "score": 1e309}\n',
        "a key twice": b'{"id": "x", "id": "y", "gold": 1, "gold": 0, "reward": 1}\n',
    },
    "toml": {
        "deep nesting": b"a = " + b"[" * DEEP + b"]" * DEEP + b"\n",
        "5000-digit int": b"n_resamples = 1" + b"0" * 5000 + b"\n",
        "not UTF-8": b'name = "\xff\xfe"\n',
    },
}


# Paths that are not regular files: reading them whole would block forever (a FIFO with no
# writer) or fill memory (/dev/zero, /dev/urandom have no end).
NOT_REGULAR = ["a directory", "a FIFO", "/dev/zero", "/dev/urandom"]


def _cases() -> Iterator[tuple[str, str, str, str]]:
    for (command, option), fmt in sorted(FILE_FORMATS.items()):
        for klass in [*BAD_FILES[fmt], *NOT_REGULAR]:
            yield command, option, fmt, klass


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(argv)
    return code, capsys.readouterr().err


def _assert_bad_input(code: int, err: str, out: Path, *, names: str | None = None) -> None:
    lines = err.strip().splitlines()
    assert code == 2, (code, err)
    assert len(lines) == 1 and lines[0].startswith("rewardkit: error: "), err
    assert "Traceback" not in err
    if names is not None:
        assert names in lines[0], lines[0]
    assert not out.exists() or not any(out.iterdir()), sorted(out.iterdir())


@pytest.mark.parametrize(("command", "option", "fmt", "klass"), list(_cases()))
def test_a_bad_file_exits_2_with_one_line_naming_it(
    command: str,
    option: str,
    fmt: str,
    klass: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if klass == "a directory":
        bad = tmp_path / f"bad.{fmt}"
        bad.mkdir()
    elif klass == "a FIFO":
        bad = tmp_path / f"bad.{fmt}"
        os.mkfifo(bad)
    elif klass.startswith("/dev/"):
        bad = Path(klass)
    else:
        bad = tmp_path / f"bad.{fmt}"
        bad.write_bytes(BAD_FILES[fmt][klass])
    file_args = [str(bad)] if option == "file" else [option, str(bad)]
    out = tmp_path / "out"
    (tmp_path / "trajectories.jsonl").write_text(TRAJECTORY)
    extra = [
        a.replace("{trajectories}", str(tmp_path / "trajectories.jsonl")).replace("{bad}", str(bad))
        for a in COMPANIONS.get((command, option), [])
    ]
    argv = [*command.split(), *file_args, *extra, "--out", str(out)]
    code, err = _run(argv, capsys)
    _assert_bad_input(code, err, out, names=str(bad))


def _out_classes(tmp_path: Path) -> dict[str, Path]:
    regular = tmp_path / "a-file"
    regular.write_text("x")
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere" / "at-all")
    return {
        "under a regular file": regular / "out",
        "a regular file": regular,
        "a dangling symlink": dangling,
        "unwritable": Path("/proc/rewardkit-out"),
    }


OUT_COMMANDS = sorted(
    name for name, cmd in COMMANDS.items() if any(_opt(p) == "--out" for p in cmd.params)
)


@pytest.mark.parametrize("command", OUT_COMMANDS)
def test_an_out_that_cannot_be_written_exits_2_before_any_work(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "trajectories.jsonl").write_text(TRAJECTORY)
    positional = command in ("bioaudit audit", "sandbox run")
    needs = [str(tmp_path / "trajectories.jsonl")] if positional else []
    for klass, out in _out_classes(tmp_path).items():
        code, err = _run([*command.split(), *needs, "--out", str(out)], capsys)
        assert code == 2, (klass, code, err)
        line = err.strip()
        assert line.startswith("rewardkit: error: ") and "\n" not in line, (klass, err)
        assert "--out" in line and str(out) in line, (klass, line)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a-file",
        "dangling",
        "trajectories.jsonl",
    ]


HUGE = "1" + "0" * 9
HUGER = "1" + "0" * 400


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["calibrate", "--preset", "bioaudit", "--n-resamples", HUGE], "'--n-resamples'"),
        (["calibrate", "--preset", "bioaudit", "--n-resamples", HUGER], "'--n-resamples'"),
        (["selfplay", "p1", "--n-per-bucket", HUGE], "'--n-per-bucket'"),
        (["selfplay", "p1", "--n-per-bucket", HUGER], "'--n-per-bucket'"),
        (["selfplay", "ig", "--correction", "permutation", "--n-perm", HUGE], "'--n-perm'"),
        (["calibrate", "--strata", ""], "'--strata'"),
        # an option the chosen mode would silently ignore
        (["calibrate", "--preset", "bioaudit", "--good-min", "0.5"], "--good-min applies"),
        (["calibrate", "--preset", "bioaudit", "--strata", "x", "--n-bins", "3"], "--n-bins"),
        (["calibrate", "--gold", "/nonexistent.jsonl", "--generator-seeds", "3"], "--generator"),
        (["calibrate", "--gold", "/nonexistent.jsonl", "--miss-rate", "0.1"], "--miss-rate"),
        (
            ["validate", "--reward", "rewardkit.audit.level_items:recipe_b", "--ceiling", "1"],
            "--ceiling",
        ),
        (["calibrate", "--strata", " stratum"], "'--strata'"),
        (["sandbox", "bench", "--programs", "100000", "--tests", "1000"], "'--programs'"),
        (["learn", "gating", "--seeds", "10000000000000"], "'--seeds'"),
        (["learn", "gating", "--seeds", ",".join(map(str, range(101)))], "'--seeds'"),
        (["sweep", "--grid", "0,nan"], "'grid'"),
        (["sweep", "--grid", "0,1e400"], "'grid'"),
        *(
            (
                ["validate", "--reward", "rewardkit.audit.level_items:recipe_b", "--range", r],
                "--range",
            )
            for r in ("nan:1", "0:inf", "-1e400:0", "1:0")
        ),
        (["selfplay", "ig", "--n-perm", "500"], "'--n-perm'"),
        (["redteam", "--episodes", "0", "--high-frac", "2"], "'--high-frac'"),
        (["redteam", "--high-frac", "0"], "'--high-frac'"),
        (["sandbox", "bench", "--programs", "4", "--looping", "10"], "'--looping'"),
        *(
            ([cmd, "--preset", "bioaudit", opt, v], f"'{opt}'")
            for cmd, opt in [
                ("validate", "--ceiling"),
                ("validate", "--spike-in-drop"),
                ("validate", "--miss-rate"),
                ("calibrate", "--miss-rate"),
                ("calibrate", "--good-min"),
            ]
            for v in ("nan", "inf", "-inf")
        ),
    ],
    ids=lambda x: " ".join(x)[:50] if isinstance(x, list) else x,
)
def test_counts_and_options_out_of_range_exit_2_before_allocating_or_writing(
    argv: list[str], match: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code, err = _run([*argv, "--out", str(out)], capsys)
    _assert_bad_input(code, err, out, names=match)
    assert not out.exists()  # no preregistration.json left behind


# Every INT / FLOAT option of every command (found by walking the CLI) has a finite range, and
# each class of bad number outside it exits 2 with one line naming the option, before any work.
NUMERIC = [
    (name, p)
    for name, cmd in sorted(COMMANDS.items())
    for p in cmd.params
    if isinstance(p, click.Option)
    and isinstance(p.type, (click.types.IntParamType, click.types.FloatParamType))
]
BAD_NUMBERS = {
    "10**12": "1" + "0" * 12,
    "10**400": HUGER,
    "-10**400": "-" + HUGER,
    "nan": "nan",
    "inf": "inf",
    "-inf": "-inf",
    "-1": "-1",
    "1e400": "1e400",
    "0x10": "0x10",
}
# What a command needs before an option is read (a positional file).
NEEDS: dict[str, list[str]] = {
    "bioaudit audit": ["{trajectories}"],
    "sandbox run": ["{trajectories}"],
}


def _accepts(t: click.ParamType, text: str) -> bool:
    try:
        t.convert(text, None, None)
    except click.BadParameter:
        return False
    return True


def test_every_numeric_option_has_a_finite_range() -> None:
    """A count has an upper bound and a float a finite range: no option takes 10**12 unasked."""
    from rewardkit._cliutil import FiniteFloatRange

    assert len(NUMERIC) >= 30
    for name, p in NUMERIC:
        t = p.type
        assert isinstance(t, (click.IntRange, FiniteFloatRange)), (name, p.opts, t)
        assert t.min is not None and t.max is not None, (name, p.opts, t)
        if isinstance(p.type, click.types.FloatParamType):
            assert not _accepts(t, "nan") and not _accepts(t, "inf"), (name, p.opts)


def _number_cases() -> Iterator[tuple[str, str, str]]:
    for name, p in NUMERIC:
        for klass, text in BAD_NUMBERS.items():
            if not _accepts(p.type, text):  # "-1" where the range starts at 0 or above, ...
                yield name, p.opts[0], klass


@pytest.mark.parametrize(("command", "option", "klass"), list(_number_cases()))
def test_a_number_out_of_range_exits_2_naming_the_option(
    command: str, option: str, klass: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "trajectories.jsonl").write_text(TRAJECTORY)
    needs = [a.format(trajectories=tmp_path / "trajectories.jsonl") for a in NEEDS.get(command, [])]
    out = tmp_path / "out"
    argv = [*command.split(), *needs, option, BAD_NUMBERS[klass], "--out", str(out)]
    code, err = _run(argv, capsys)
    _assert_bad_input(code, err, out, names=f"'{option}'")
    assert not out.exists()


def _single_valued() -> Iterator[tuple[str, str]]:
    for name, cmd in COMMANDS.items():
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.multiple and not p.count and not p.hidden:
                yield name, p.opts[0]
    yield "", "--out"  # before the subcommand


@pytest.mark.parametrize(("command", "option"), list(_single_valued()))
def test_a_single_valued_option_given_twice_exits_2(
    command: str, option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """click keeps the last of a repeated option; the CLI refuses it instead (every command)."""
    (tmp_path / "trajectories.jsonl").write_text(TRAJECTORY)
    needs = [a.format(trajectories=tmp_path / "trajectories.jsonl") for a in NEEDS.get(command, [])]
    cmd = COMMANDS.get(command)
    p = next((q for q in cmd.params if q.opts[0] == option), None) if cmd else None
    given = [option] if p is not None and p.is_flag else [option, str(tmp_path / "1")]
    out = tmp_path / "out"
    if command:
        argv = [*command.split(), *needs, *given, *given]
        has_out = any(q.opts[0] == "--out" for q in cmd.params) if cmd else False
        argv += ["--out", str(out)] if has_out and option != "--out" else []
    else:
        argv = ["--out", str(out), "--out", str(out), "selfplay", "p1"]
    code, err = _run(argv, capsys)
    _assert_bad_input(code, err, out, names=f"'{option}")
    assert "more than once" in err
    assert not out.exists()


def test_options_declared_repeatable_still_repeat(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--env / --load / --seeds are documented as repeatable: the repeat rule leaves them be
    (here an unknown id is refused for what it is, not for being repeated)."""
    code, err = _run(["redteam", "--env", "nope/a", "--env", "nope/b", "--episodes", "1"], capsys)
    assert code == 2 and "more than once" not in err and "nope/a" in err, err


@pytest.fixture
def bad_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "rk_badfactory.py").write_text(
        "from rewardkit.envs import register\n"
        "def reward():\n    return 'not a reward'\n"
        "def env(**kw):\n    return 42\n"
        "register('badfactory/wrong-v1', 'rk_badfactory:env')\n"
    )
    (tmp_path / "items.jsonl").write_text('{"id": "a", "gold": 1}\n{"id": "b", "gold": 0}\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("rk_badfactory", None)


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "--reward", "rk_badfactory:reward", "--items", "{items}"],
        ["calibrate", "--reward", "rk_badfactory:reward", "--gold", "{items}"],
        ["lab", "rlvr", "--load", "rk_badfactory", "--env", "badfactory/wrong-v1"],
        ["sweep", "--load", "rk_badfactory", "--env", "badfactory/wrong-v1"],
        ["redteam", "--load", "rk_badfactory", "--env", "badfactory/wrong-v1"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_a_factory_of_the_wrong_kind_exits_2(
    argv: list[str], bad_modules: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = bad_modules / "out"
    args = [a.replace("{items}", str(bad_modules / "items.jsonl")) for a in argv]
    code, err = _run([*args, "--out", str(out)], capsys)
    _assert_bad_input(code, err, out)
    assert "rk_badfactory" in err or "badfactory/wrong-v1" in err, err


def test_an_internal_error_exits_3_with_one_line_and_debug_shows_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import rewardkit.selfplay.predictions as predictions

    def boom(**kwargs: object) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(predictions, "p1_check", boom)
    code, err = _run(["selfplay", "p1", "--out", "/tmp/rk-never-written"], capsys)
    assert code == 3 and len(err.strip().splitlines()) == 1, err
    assert "internal error: ZeroDivisionError: a bug" in err and "--debug" in err
    with pytest.raises(ZeroDivisionError):
        main(["--debug", "selfplay", "p1"])


def test_docs_cli_shows_every_command_with_an_example() -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text(encoding="utf-8")
    for name in COMMANDS:
        assert f"| `{name}` |" in text and f"`rewardkit {name}" in text, name
    for status in ("| 0 |", "| 1 |", "| 2 |", "| 3 |"):
        assert status in text


def test_every_option_has_help_in_users_words() -> None:
    import re

    internal = re.compile(r"seed \d\d\d|E\.4|§|…")
    for name, cmd in COMMANDS.items():
        assert cmd.help and not internal.search(cmd.help), (name, cmd.help)
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.hidden:
                assert p.help, f"{name} {p.opts[0]} has no help"
                assert not internal.search(p.help), (name, p.opts[0], p.help)
    listing = cli.get_help(click.Context(cli, info_name="rewardkit")).split("Commands:")[1]
    assert "..." not in listing and "…" not in listing


# Input that reads fine but is refused by a later check of the input: still nothing in --out.
LATE_BAD_INPUT: dict[str, tuple[list[str], str]] = {
    "calibrate, one scored item": (
        ["calibrate", "--rewards", "{data}", "--gold", "{data}"],
        '{"id": "a", "gold": 1, "reward": 0.5}\n',
    ),
    "calibrate, no item scored": (
        ["calibrate", "--rewards", "{data}", "--gold", "{data}"],
        '{"id": "a", "gold": 1, "reward": null}\n{"id": "b", "gold": 0, "reward": null}\n',
    ),
}


@pytest.mark.parametrize("case", sorted(LATE_BAD_INPUT))
def test_input_refused_after_reading_leaves_nothing_in_out(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, data = LATE_BAD_INPUT[case]
    (tmp_path / "data.jsonl").write_text(data)
    out = tmp_path / "out"
    args = [a.replace("{data}", str(tmp_path / "data.jsonl")) for a in argv]
    code, err = _run([*args, "--out", str(out)], capsys)
    _assert_bad_input(code, err, out)
