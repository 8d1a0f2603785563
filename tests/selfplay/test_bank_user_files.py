"""A user's bank file (``load_bank(path=)``, ``selfplay simulate --bank``) written by a hostile
or careless hand: every generator kind with out-of-range, huge, non-hashable or oversized
fields, headers TOML allows but a naive line scan misses, a reference that exits, prints,
loops or raises what is not an Exception, more hand-written bugs than the probe pool has
places for. Each is refused with the file, the line of its task, the field and what is
accepted (exit 2 and one line on the command line), or works."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import rewardkit.selfplay.bank as bank_mod
from rewardkit.cli import main
from rewardkit.errors import InputError
from rewardkit.selfplay.bank import load_bank
from rewardkit.selfplay.bankfile import read_bank_file
from rewardkit.selfplay.executor import TrustedExecutor
from rewardkit.selfplay.probes import build_probe_pool

INT = '{ kind = "int", lo = 0, hi = 100 }'
BIG = "1" + "0" * 400
SIM = ("selfplay", "simulate", "--executor", "trusted", "--steps", "2", "--seeds", "1", "--bank")


def _task(tid: str = "f", args: str = INT, ref: str = "", extra: str = "", hdr: str = "[[task]]"):
    ref = ref or f"def {tid}(a):\n    return a\n"
    return (
        f'{hdr}\nid = "{tid}"\nprompt = "p"\nargs = [{args}]\nboundary = ["(0,)"]\n'
        f"reference = '''\n{ref}'''\n{extra}\n"
    )


def _bank(tmp_path: Path, *tasks: str) -> Path:
    path = tmp_path / "my_bank.toml"
    path.write_text('version = "mine"\n\n' + "".join(tasks))
    return path


# (spec, field named, what the message says): each failed or crashed before the fix where
# marked; the rest held and are kept as a class
SPECS = [
    (f'{{ kind = "int", lo = 0, hi = {BIG} }}', "args[0].hi", r"100000000000\.\.\. \(401 digits"),
    (f'{{ kind = "int", lo = -{BIG}, hi = 0 }}', "args[0].lo", r"-10000000000\.\.\. \(401 digits"),
    (
        '{ kind = "int", lo = 0, hi = 9223372036854775807 }',
        "args[0].hi",
        "9223372036854775807 is outside",
    ),
    ('{ kind = ["int"] }', "args[0].kind", "unknown kind"),  # was TypeError: unhashable
    ("{ kind = { a = 1 } }", "args[0].kind", "unknown kind"),  # was TypeError: unhashable
    (f'{{ kind = "list", len = [0, {BIG}], of = {INT} }}', "args[0].len", r"\(401 digits\)"),
    (
        '{ kind = "str", len = [1, 3], alphabet = "' + "ab" * 600 + '" }',
        "args[0].alphabet",
        "1200 characters; at most 1000",
    ),  # was accepted: a 2 MB alphabet ran past 60 s (list(alphabet) on every draw)
    (
        '{ kind = "dict", len = [1, 2], keys = [' + ",".join(f'"k{i}"' for i in range(1001)) + "]"
        f", values = {INT} }}",
        "args[0].keys",
        "1001 keys; at most 1000",
    ),
    (
        '{ kind = "const", value = "' + "x" * 100_001 + '" }',
        "args[0].value",
        "more than 100000 values or characters",
    ),
    ('{ kind = "str", len = [1, 3], alphabet = "" }', "args[0].alphabet", "non-empty"),
    ('{ kind = "either", p = nan, then = ' + INT + ", else = " + INT + " }", "args[0].p", "[0, 1]"),
    ('{ kind = "int", lo = 5, hi = 1 }', "args[0].lo", "greater than hi"),
    ('{ kind = "list", len = [-1, 3], of = ' + INT + " }", "args[0].len", "0 <= a <= b"),
    ('{ kind = "const", value = inf }', "args[0].value", "not accepted"),
]


@pytest.mark.parametrize(("spec", "field", "says"), SPECS, ids=range(len(SPECS)))
def test_a_hostile_spec_names_line_field_and_what_is_accepted(tmp_path, spec, field, says):
    path = _bank(tmp_path, _task(args=spec))
    with pytest.raises(
        InputError, match=rf"my_bank\.toml, line 3, field '{re.escape(field)}'"
    ) as err:
        read_bank_file(path)
    assert re.search(says, str(err.value)), str(err.value)


def test_on_the_command_line_a_huge_int_is_exit_2_and_one_line(tmp_path, capsys):
    path = _bank(tmp_path, _task(args=f'{{ kind = "int", lo = 0, hi = {BIG} }}'))
    out = tmp_path / "out"
    assert main(["selfplay", "simulate", "--bank", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"rewardkit: error: {path}, line 3, field")
    assert not out.exists()


@pytest.mark.parametrize(
    "headers",
    [("[[ task ]]", "[[task]]"), ("[[task]]", "[[ task ]]  # the second"), ("[[task]]",) * 2],
)
def test_the_line_named_is_the_bad_tasks_header(tmp_path, headers):
    # the first task's docstring holds the text [[task]] on a line of its own
    first = _task("f", ref='def f(a):\n    """\n[[task]]\n    """\n    return a\n', hdr=headers[0])
    second = _task("g", args='{ kind = "int", lo = 5, hi = 1 }', hdr=headers[1])
    path = _bank(tmp_path, first, second)
    line = max(i for i, ln in enumerate(path.read_text().splitlines(), 1) if ln == headers[1])
    assert line > 12
    with pytest.raises(InputError, match=rf"line {line}, field 'args\[0\]\.lo': in task 'g'"):
        read_bank_file(path)


def test_a_repeated_id_names_both_lines(tmp_path):
    path = _bank(tmp_path, _task("f"), _task("g"), _task("f"))
    with pytest.raises(InputError, match=r"line 23, field 'id': .*this id \(line 3\)"):
        read_bank_file(path)


@pytest.mark.parametrize(
    "ref",
    [
        "def f(a):\n    import sys\n    sys.exit(0)\n",  # was exit 0, nothing written
        "def f(a):\n    raise SystemExit(1)\n",  # was exit 1, as if a gate had failed
        "import sys\nsys.exit(5)\ndef f(a):\n    return a\n",  # was exit 5
        "def f(a):\n    raise GeneratorExit\n",  # was a traceback and exit 1
        "def f(a):\n    raise BaseException('x')\n",  # was a traceback and exit 1
        "class X:\n    def __repr__(self):\n        raise SystemExit(3)\n"
        "def f(a):\n    return X()\n",
    ],
)
def test_a_reference_that_exits_is_bad_input(tmp_path, capsys, ref):
    path = _bank(tmp_path, _task(ref=ref))
    out = tmp_path / "out"
    rc = main([*SIM, str(path), "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2, err
    assert len(err) == 1 and "field 'boundary': in task 'f': the reference raised" in err[0]
    assert not out.exists()


def test_a_reference_that_loops_is_reported_after_its_budget(tmp_path, monkeypatch):
    monkeypatch.setattr(bank_mod, "REFERENCE_TIMEOUT_S", 0.2)
    path = _bank(tmp_path, _task(ref="def f(a):\n    while True:\n        pass\n"))
    with pytest.raises(InputError, match=r"line 3, field 'boundary'.*ran past 0.2 s"):
        load_bank(path=path, executor=TrustedExecutor())


def test_what_a_reference_prints_does_not_reach_json_stdout(tmp_path, capsys):
    path = _bank(tmp_path, _task(ref="def f(a):\n    print('HELLO', a)\n    return a\n"))
    out = tmp_path / "out"
    rc = main([*SIM, str(path), "--arms", "A", "--json", "--out", str(out)])
    got = capsys.readouterr()
    assert rc == 0
    json.loads(got.out)  # stdout is the JSON document alone
    assert "HELLO 0" in got.err


def test_more_handwritten_bugs_than_probe_places(tmp_path, capsys):
    # was exit 3 "negative dimensions are not allowed" (9 bugs > size 12 - n_initial 4)
    bugs = "".join(
        f'[[task.bug]]\nname = "b{i}"\nfamily = "off_by_one"\n'
        f'source = "def f(a):\\n    return a + {i + 1}\\n"\n'
        for i in range(9)
    )
    path = _bank(tmp_path, _task(extra=bugs))
    bank = load_bank(path=path, executor=TrustedExecutor())
    pool = build_probe_pool(bank, rng=0, size=12, n_initial=4)
    assert len(pool.probes) == 12
    assert sum(p.family == "initial_policy" for p in pool.probes) == 4
    assert [p.name for p in pool.probes[:8]] == [f"b{i}" for i in range(8)]
    out = tmp_path / "out"
    rc = main([*SIM, str(path), "--arms", "A", "--json", "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    label = json.loads((out / "summary.json").read_text())["label"]
    assert "task bank 'mine'" in label and "embedded" not in label


def test_an_internal_error_that_is_not_an_exception_is_exit_3_and_one_line(
    tmp_path, capsys, monkeypatch
):
    # was: a traceback and exit 1 (the code of a failed gate)
    def boom(**kwargs):
        raise GeneratorExit("odd")

    monkeypatch.setattr(bank_mod, "load_bank", boom)
    path = _bank(tmp_path, _task())
    rc = main(["selfplay", "simulate", "--bank", str(path), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 3 and len(err) == 1
    assert err[0].startswith("rewardkit: internal error: GeneratorExit: odd")


class _Hung(BaseException):
    """Raised by the test's own alarm: not an Exception, so no except-Exception swallows it."""


def test_a_handwritten_bug_that_loops_does_not_hang_the_test_universe(tmp_path, monkeypatch):
    # was: build_universe ran the buggy candidates in this process with no budget, so a bank
    # file whose hand-written bug loops on odd inputs hung `selfplay simulate` forever
    import signal

    from rewardkit.selfplay import testgen

    bug = (
        '[[task.bug]]\nname = "loops_on_odd"\nfamily = "off_by_one"\n'
        "source = '''\ndef f(a):\n    while a % 2:\n        pass\n    return a\n'''\n"
    )
    path = _bank(tmp_path, _task(extra=bug))
    bank = load_bank(path=path, executor=TrustedExecutor(timeout_s=0.1))
    assert bank.task("f").candidate("loops_on_odd").y < 1.0
    monkeypatch.setattr(testgen, "BUG_TIMEOUT_S", 0.05)

    def hung(signum, frame):
        raise _Hung

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(30)
    try:
        universe = testgen.build_universe(bank.task("f"))
    except _Hung:
        pytest.fail("build_universe hung on a looping hand-written bug")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert len(universe.tests) > 0


@pytest.mark.parametrize(
    "argv",
    [
        ["selfplay", "simulate", "--bank"],
        ["validate", "--config"],
        ["bioaudit", "audit", "x.jsonl", "--rulepack"],
    ],
    ids=["bank", "validate config", "rule pack"],
)
def test_a_toml_file_over_64_mib_is_refused_before_it_is_parsed(tmp_path, capsys, argv):
    # was: read whole and parsed (tomllib holds ~12x the file: a 1 GiB bank, ~12 GiB)
    big = tmp_path / "big.toml"
    with big.open("wb") as fh:  # sparse: nothing is written to the disk
        fh.truncate((64 << 20) + 1)
    out = tmp_path / "out"
    assert main([*argv, str(big), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    size = f"{(64 << 20) + 1:,}"
    assert err == [f"rewardkit: error: {big}: is {size} bytes (files up to 64 MiB are accepted)"]


LONG_LITERAL = "([" + "0," * 50_001 + "],)"  # 100,007 characters
LONG_PROGRAM = "def f(a):\n" + "    a = a\n" * 10_000 + "    return a\n"


@pytest.mark.parametrize(
    ("task", "field"),
    [
        (_task(extra=""), None),
        (_task().replace('boundary = ["(0,)"]', f'boundary = ["{LONG_LITERAL}"]'), "boundary[0]"),
        (
            _task(
                extra="gt_inputs = ["
                + ", ".join([f'"{LONG_LITERAL}"'] + [f'"({i},)"' for i in range(7)])
                + "]"
            ),
            "gt_inputs[0]",
        ),
        (_task(ref=LONG_PROGRAM), "reference"),
        (_task(extra=f"variants = ['''\n{LONG_PROGRAM}''']"), "variants[0]"),
        (
            _task(
                extra='[[task.bug]]\nname = "b"\nfamily = "boundary"\n'
                f'source = """\n{LONG_PROGRAM}"""'
            ),
            "bug[0].source",
        ),
    ],
    ids=["control", "boundary", "gt_inputs", "reference", "variant", "bug"],
)
def test_a_literal_or_program_over_100000_characters_is_refused_before_parsing(
    tmp_path, task, field
):
    # was: parsed; ast.literal_eval of a 10 MB literal held 4.7 GB for 27 s, and a bank may be
    # 64 MiB
    path = _bank(tmp_path, task)
    if field is None:  # the same task with short texts reads
        assert read_bank_file(path).tasks[0].task_id == "f"
        return
    with pytest.raises(InputError, match=rf"field '{re.escape(field)}': .* at most 100,000"):
        read_bank_file(path)
