"""Attacks on the sandbox process's integrity, by class (threat-model goals (a) and (g)).

(a) a PASS for a wrong output: forged records (index, kind, duration and payload of every wrong
    type or range), ints against floats, bools against ints;
(g) crashing or stalling the batch: values that make a comparison raise (``10**400`` against a
    float, lone surrogates), oversized / deep / hash-colliding payloads, malformed records.

Each attack runs many generated instances in one batch beside an honest program; the honest row
must stay all-PASS (a malformed record marks only its own cell) and no attacker cell may PASS
for a value it did not return.  ``test_*_without_*`` tests remove a defence and show the attack
then succeeds, so the attack tests can fail.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rewardkit.sandbox import Sandbox, Status, StdioTest, TestCase, table
from rewardkit.sandbox._compare import Malformed, check_cell, parse_bounded, values_equal
from rewardkit.sandbox._values import TEXT_CAP

P, F, C = Status.PASS, Status.FAIL, Status.CRASH


def answer(x: int) -> int:
    return 1234567 + 1111 * x


TESTS = [TestCase(f"({x},)", str(answer(x))) for x in range(4)]
HONEST = "def f(x):\n    return 1234567 + 1111 * x\n"
GOOD_VALUE = json.dumps(str(answer(1)))  # the right answer for test 1, as a JSON string


def forger(record_json: str) -> str:
    """A program that returns wrong values, except that on test 1 it writes ``record_json`` to
    the child's record pipe (fd 3) itself and exits before the real record."""
    data = (record_json + "\n").encode()
    return (
        "import os\n"
        "def f(x):\n"
        "    if x == 1:\n"
        f"        os.write(3, {data!r})\n"
        "        os._exit(0)\n"
        "    return -1\n"
    )


M61 = 2**61 - 1  # k * M61 all hash to 0: a set of them is quadratic to build
COLLIDING = "{" + ", ".join(str(k * M61) for k in range(1, 2500)) + "}"

BAD_INDEX = ["true", "1.0", "1e0", '"1"', "[1]", '{"1": 1}', "null", "1.5", "Infinity", "NaN",
             "-1", "99", "9007199254740993", "-0.0"]  # fmt: skip
BAD_SECONDS = ["NaN", "Infinity", "-Infinity", "-1.0", "1e400", "true", "0", '"0"', "null",
               "[0.0]", "1e30"]  # fmt: skip
BAD_KIND = ['"P"', '"v"', '""', "true", '"VV"', '"PASS"', "null", '["V"]', "0"]
BAD_PAYLOAD = [
    json.dumps("1" * (TEXT_CAP + 10)),  # over the cap
    json.dumps("[" * 150 + "]" * 150),  # deep
    json.dumps(COLLIDING),  # hash collisions
    json.dumps("PASS"),
    json.dumps("__import__('os').getcwd()"),
    json.dumps("1235678 if 1 else 0"),
    '"\\ud800"',  # a lone surrogate
    json.dumps("-" * 5000 + "1"),
    "1235678",  # not a string
    "null",
]


def _records() -> dict[str, str]:
    out = {}
    for v in BAD_INDEX:
        out[f"index {v}"] = f'[{v}, "V", 0.0, 0.0, {GOOD_VALUE}]'
    for v in BAD_SECONDS:
        out[f"duration {v}"] = f'[1, "V", {v}, 0.0, {GOOD_VALUE}]'
        out[f"cpu {v}"] = f'[1, "V", 0.0, {v}, {GOOD_VALUE}]'
    for v in BAD_KIND:
        out[f"kind {v}"] = f"[1, {v}, 0.0, 0.0, {GOOD_VALUE}]"
    for k, v in enumerate(BAD_PAYLOAD):
        out[f"payload {k}"] = f'[1, "V", 0.0, 0.0, {v}]'
    out["hash of the wrong length"] = '[1, "H", 0.0, 0.0, "abc"]'
    out["six fields"] = f'[1, "V", 0.0, 0.0, {GOOD_VALUE}, 1]'
    out["four fields"] = '[1, "V", 0.0, 0.0]'
    out["an object"] = '{"0": 1}'
    out["a row record after ready"] = '["X", "S", "SyntaxError"]'
    return out


RECORDS = _records()


@pytest.fixture(scope="module")
def sb():
    with Sandbox(timeout_s=1.0, memory_mb=256, workers=2) as box:
        yield box


def test_forged_records_never_pass_and_mark_only_their_own_cell(sb):
    names = list(RECORDS)
    assert len(names) >= 50
    progs = [HONEST] + [forger(RECORDS[n]) for n in names] + [HONEST]
    t = sb.run(progs, TESTS, entry_point="f")
    assert (t.status[0] == P).all() and (t.status[-1] == P).all()
    for k, name in enumerate(names, start=1):
        row = t.status[k]
        assert not (row == P).any(), (name, row)  # never a PASS: the program answered wrongly
        assert row[0] == F and row[1] in (F, C), (name, row)  # a wrong value or malformed
        # after its forged record the program exits; the rest of its own row resumes or not
        assert set(row[2:].tolist()) <= {F, C}, (name, row)


STDIO_TESTS = [StdioTest(f"{x}\n", f"{answer(x)}\n") for x in range(4)]
STDIO_GOOD = json.dumps(repr(str(answer(1))))  # the canonical text of the printed answer


def stdio_forger(record_json: str) -> str:
    """The same attack on a standard-input program."""
    data = (record_json + "\n").encode()
    return (
        "import os\n"
        "x = int(input())\n"
        "if x == 1:\n"
        f"    os.write(3, {data!r})\n"
        "    os._exit(0)\n"
        "print(-1)\n"
    )


def test_forged_records_from_stdin_programs_never_pass(sb):
    bad = [f'[{v}, "V", 0.0, 0.0, {STDIO_GOOD}]' for v in BAD_INDEX]
    bad += [f'[1, "V", {v}, 0.0, {STDIO_GOOD}]' for v in BAD_SECONDS]
    bad += [f'[1, "V", 0.0, 0.0, {v}]' for v in BAD_PAYLOAD]
    honest = "x = int(input())\nprint(1234567 + 1111 * x)\n"
    t = sb.run([honest, *map(stdio_forger, bad), honest], STDIO_TESTS)
    assert (t.status[0] == P).all() and (t.status[-1] == P).all()
    for k, rec in enumerate(bad, start=1):
        assert not (t.status[k] == P).any(), (rec, t.status[k])
    control = sb.run([stdio_forger(f'[1, "V", 0.0, 0.0, {STDIO_GOOD}]')], STDIO_TESTS)
    assert control.status[0].tolist() == [F, P, C, F]  # a well-formed record is an answer


def test_a_well_formed_record_is_an_answer(sb):
    """The control: the same forger with a plain int index answers test 1 (and only it)."""
    t = sb.run([forger(f'[1, "V", 0.0, 0.0, {GOOD_VALUE}]')], TESTS, entry_point="f")
    assert t.status[0].tolist() == [F, P, C, F]  # then its exit crashes test 2's child


FRAMINGS = {
    # json.loads of bytes takes UTF-16 and UTF-32 too; forwarded as they came, such bytes would
    # mean something else (or nothing) inside the zygote's UTF-8 line
    "utf-16": "{rec}".encode("utf-16"),
    "utf-32": "{rec}".encode("utf-32"),
    "leading space": b" {rec}",
    "trailing space": b"{rec} ",
    "two records in one line": b'{rec}, [2, "V", 0.0, 0.0, "0"]',
    "a BOM": "\ufeff{rec}".encode(),
}


@pytest.mark.parametrize("name", list(FRAMINGS))
def test_a_record_in_another_framing_is_a_violation_not_an_answer(sb, name):
    """The zygote forwards each record it accepts byte for byte, so it accepts exactly one JSON
    value filling a UTF-8 line: the right answer in any other framing is a protocol violation
    of that cell (CRASH), the worker stays, and the honest rows beside it stay all-PASS."""
    rec = f'[1, "V", 0.0, 0.0, {GOOD_VALUE}]'
    data = (
        FRAMINGS[name]
        .replace(b"{rec}", rec.encode())
        .replace("{rec}".encode("utf-16")[2:], rec.encode("utf-16")[2:])
        .replace("{rec}".encode("utf-32")[4:], rec.encode("utf-32")[4:])
        + b"\n"
    )
    prog = (
        "import os\ndef f(x):\n    if x == 1:\n"
        f"        os.write(3, {data!r})\n        os._exit(0)\n    return -1\n"
    )
    forks = sb._pool.forks
    workers = sb._pool.worker_pids()
    t = sb.run([HONEST, prog, HONEST], TESTS, entry_point="f")
    assert t.status[1].tolist() == [F, C, F, F], (name, t.detail[1])
    assert "protocol violation" in t.detail[1, 1]
    assert (t.status[0] == P).all() and (t.status[2] == P).all()
    assert sb._pool.worker_pids() == workers  # no worker was lost over it
    assert sb._pool.forks - forks == 4  # one fork per honest row, two for the forger


# ------------------------------------------------- the sandbox process's own record check
def _cells(extra):
    honest = [(0, i, "V", 0.0, str(answer(i))) for i in range(4)]
    wrong = [(1, i, "V", 0.0, "-1") for i in range(4)]
    return honest + wrong + extra


def _build(cells):
    prep = table.prepare_tests(TESTS)
    return table.build_table(
        2, prep, cells, isolation=(), timeout_s=1.0, memory_mb=64, backend="test"
    )


FORGED_ADDRESSES = [True, np.bool_(True), 1.0, np.int64(1), "1", -1, 4, None, (1,), [1], 2**64]


@pytest.mark.parametrize("idx", FORGED_ADDRESSES, ids=repr)
def test_a_forged_column_never_sets_a_row(idx):
    """As if a worker or a Ray actor were compromised: the cell for row 1 carries the right
    answer of test 1 under a column index that is not an int in range."""
    t = _build(_cells([(1, idx, "V", 0.0, str(answer(1)))]))
    assert t.status[0].tolist() == [P] * 4
    assert t.status[1].tolist() == [F] * 4


@pytest.mark.parametrize("row", [*FORGED_ADDRESSES[:-2], 2], ids=repr)
def test_a_forged_row_never_sets_a_cell(row):
    t = _build(_cells([(row, 1, "V", 0.0, str(answer(1)))]))
    assert t.status[1].tolist() == [F] * 4


@pytest.mark.parametrize(
    "cell",
    [
        (1, 1, "V", math.nan, "1"),
        (1, 1, "V", -1.0, "1"),
        (1, 1, "V", math.inf, "1"),
        (1, 1, "V", 0, "1"),
        (1, 1, "P", 0.0, "1"),
        (1, 1, "V", 0.0, "\ud800"),
        (1, 1, "V", 0.0, "1" * (1 << 20)),
        (1, 1, "V", 0.0, 1235678),
        (1, 1, "H", 0.0, "0" * 63),
        (1, 1, "E", 0.0, "x" * 1000),
        (1, 1, "V", 0.0),
    ],
    ids=lambda c: repr(c)[:40],
)
def test_a_malformed_cell_is_a_crash_of_that_cell_only(cell):
    t = _build(_cells([cell]))
    assert t.status[0].tolist() == [P] * 4
    expected_11 = C if len(cell) == 5 else F  # a cell without 5 fields cannot be placed
    assert t.status[1].tolist() == [F, expected_11, F, F]


def test_without_the_exact_type_check_a_true_index_sets_a_whole_row(monkeypatch):
    """Defence removed: with a check that only counts fields, ``status[1, True] = PASS`` marks
    every cell of row 1 PASS (numpy treats a bool index as a mask)."""

    def lenient(raw, m, k):
        if len(raw) != 5:
            raise Malformed("fields")
        return tuple(raw)

    monkeypatch.setattr(table, "check_cell", lenient)
    t = _build(_cells([(1, True, "V", 0.0, str(answer(1)))]))
    assert t.status[1].tolist() == [P] * 4  # the attack works without the defence


# --------------------------------------------------------- comparison: ints are exact
INT_CASES = [  # (expected, actual, status)
    (1000000007, 1000000008.0, F),
    (1000000007, 1000000007.0, F),
    (0, 3e-10, F),
    (0, 0.0, F),
    (1, True, F),
    (0, False, F),
    (3, 3, P),
    (3.0, 3, P),  # a float expected value accepts an int…
    (3e-10, 0, P),  # …within abs_tol 1e-9 (documented)
    (1e300, 10**400, F),
    (-1e300, -(10**400), F),
    (math.inf, 10**400, F),
    (1.5, 10**400, F),
    (math.nan, 10**400, F),
]


def _returns(v) -> str:
    return f"def f(x):\n    return {v!r}\n" if not isinstance(v, float) else _float_prog(v)


def _float_prog(v: float) -> str:
    return f"def f(x):\n    return float({repr(v)!r})\n"


def test_ints_need_ints_and_nothing_raises(sb):
    for expected, actual, status in INT_CASES:
        exp_text = repr(expected) if not isinstance(expected, float) else _ftext(expected)
        t = sb.run([_returns(actual)], [TestCase("(0,)", exp_text)], entry_point="f")
        assert t.status[0, 0] == status, (expected, actual, t.status[0, 0], t.detail[0, 0])


def _ftext(v: float) -> str:
    return "nan" if math.isnan(v) else ("inf" if v == math.inf else repr(v))


@settings(max_examples=300, deadline=None)
@given(st.integers(), st.floats(allow_nan=False, allow_infinity=False))
def test_an_int_expected_value_accepts_exactly_that_int(n, x):
    assert values_equal(n, n)
    assert not values_equal(float(n) if abs(n) < 2**1023 else x, n)
    assert not values_equal(x, n)  # never a float
    assert not values_equal(n + 1, n)
    assert values_equal(True, True) and not values_equal(True, 1) and not values_equal(1, True)


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False), st.integers())
def test_a_float_expected_value_uses_the_documented_tolerance(e, n):
    oracle = abs(n) < 2**1023 and abs(float(n) - e) <= max(1e-9 * max(abs(float(n)), abs(e)), 1e-9)
    assert values_equal(n, e) == oracle  # an int against a float, however large: no raise


plain = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text()
    | st.binary(max_size=4)
    | st.complex_numbers(),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.integers() | st.text(max_size=3), inner, max_size=3)
        | st.frozensets(st.integers() | st.text(max_size=3), max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(plain, plain)
def test_the_comparison_never_raises_and_a_value_equals_itself(a, b):
    assert values_equal(a, a)
    values_equal(a, b)  # no exception, whatever the pair


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=300) | st.binary(max_size=300).map(lambda b: b.decode("latin-1")))
def test_any_payload_text_is_judged_without_raising(text):
    """Whatever text a forged record carries, the comparer gives a status for that cell."""
    t = _build(_cells([(1, 1, "V", 0.0, text)]))
    assert t.status[0].tolist() == [P] * 4
    assert t.status[1, 1] in (P, F, C)
    assert t.status[1, 1] != P or text.strip().lstrip("+") == str(answer(1))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.none() | st.booleans() | st.integers() | st.floats() | st.text(), max_size=6))
def test_any_cell_shape_is_judged_without_raising(fields):
    # A record that names row 0 by a plain int speaks for the honest program's own cell: what
    # it does there is that cell's business. Everything else must leave row 0 alone.
    assume(not (fields and type(fields[0]) is int and fields[0] == 0))
    t = _build(_cells([tuple(fields)]))
    assert t.status[0].tolist() == [P] * 4
    assert not (t.status[1] == P).any()


# --------------------------------------------------------------- bounded cost per cell
def test_payloads_are_checked_before_parsing():
    with pytest.raises(Malformed, match="exceeds"):
        parse_bounded("[" + "1, " * 30000 + "1]")
    with pytest.raises(Malformed, match="deeper"):
        parse_bounded("[" * 250 + "]" * 250)
    with pytest.raises(Malformed, match="signs"):
        parse_bounded("-" * 10000 + "1")
    with pytest.raises(Malformed, match="characters"):
        parse_bounded("x @ y | z")
    with pytest.raises(Malformed, match="not a literal"):
        parse_bounded("getattr(1, 'x')")


def test_sets_and_dicts_are_never_hashed():
    """A set of colliding ints is quadratic to build; the parser keeps canonical texts."""
    tree = parse_bounded(COLLIDING)
    assert type(tree).__name__ == "_Members" and isinstance(tree, tuple) and len(tree) == 2499
    d = parse_bounded("{" + ", ".join(f"{k * M61}: {k}" for k in range(1, 2000)) + "}")
    assert isinstance(d, tuple) and len(d) == 1999


def test_huge_and_surrogate_outputs_do_not_stop_the_batch(sb):
    progs = [
        HONEST,
        "def f(x):\n    return 10**400\n",
        "def f(x):\n    return -(10**4000)\n",
        "def f(x):\n    return '\\ud800'\n",
        forger('[1, "E", 0.0, 0.0, "\\ud800"]'),  # no exception name holds a surrogate
        "def f(x):\n    return {k * (2**61 - 1) for k in range(1, 2000)}\n",
        HONEST,
    ]
    tests = [*TESTS, TestCase("(0,)", "1e300"), TestCase("(0,)", "'\\ud800'")]
    t = sb.run(progs, tests, entry_point="f")
    assert (t.status[0, :4] == P).all() and (t.status[-1, :4] == P).all()
    assert (t.status[1:6, :5] != P).all()
    assert t.status[3, 5] == P  # a lone surrogate is a value like any other
    assert t.status[4, 1] == Status.ERROR and t.detail[4, 1] == "\\ud800"  # escaped
    json.dumps(t.to_json())  # encodable


def test_dict_arguments_keep_their_insertion_order(sb):
    prog = "def f(d):\n    return list(d)\n"
    t = sb.run(
        [prog], [TestCase("({'p': 1, 'A': 2, 'B': 3},)", "['p', 'A', 'B']")], entry_point="f"
    )
    assert t.status[0, 0] == P
    # nested too, and the expected *output* dict is still order-free
    t = sb.run(
        ["def f(xs):\n    return [list(d) for d in xs], xs[0]\n"],
        [TestCase("([{'z': 0, 'a': 1}],)", "([['z', 'a']], {'a': 1, 'z': 0})")],
        entry_point="f",
    )
    assert t.status[0, 0] == P


def test_check_cell_accepts_only_exact_ints():
    assert check_cell((0, 1, "V", 0.0, "1"), 1, 2) == (0, 1, "V", 0.0, "1")
    for bad in (True, 1.0, np.int64(1), np.bool_(True)):
        with pytest.raises(Malformed):
            check_cell((0, bad, "V", 0.0, "1"), 1, 2)


# ------------------------------------------------- the tests' own literals (generated tests)
def test_generated_tests_cannot_stall_the_batch_with_colliding_or_huge_literals(sb):
    colliding = "({" + ", ".join(str(k * M61) for k in range(1, 3000)) + "},)"
    spread = "({" + ", ".join(str(k * 7919) for k in range(1, 3000)) + "},)"
    tests = [
        TestCase(colliding, "0"),
        TestCase("(0,)", "{" + ", ".join(f"{-k * M61}: 0" for k in range(1, 3000)) + "}"),
        TestCase("(" + "1, " * 400_000 + ")", "0"),  # over 1 MiB
        TestCase(spread, "2999"),  # a large honest set is fine
        TestCase("(3,)", str(answer(3))),
    ]
    t = sb.run(["def f(x):\n    return len(x) if isinstance(x, set) else 1234567 + 1111 * x\n"],
               tests, entry_point="f")  # fmt: skip
    assert t.status[0].tolist() == [Status.INVALID_TEST] * 3 + [P, P]
    assert "hash-collision" in t.detail[0, 0] and "hash-collision" in t.detail[0, 1]
    assert "exceeds" in t.detail[0, 2]
