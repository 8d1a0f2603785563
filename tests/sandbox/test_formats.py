"""The test formats: standard-input programs with comparison modes, assert-style test code
parsed into literal cases, and what cannot be parsed reported as INVALID_TEST."""

from __future__ import annotations

import ast
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.errors import ConfigError
from rewardkit.sandbox import (
    InvalidTest,
    Sandbox,
    Status,
    StdioTest,
    TestCase,
    parse_asserts,
)
from rewardkit.sandbox._stdio import normalise, stdout_equal
from rewardkit.sandbox._values import parse_literal

P, F, E, T, I = Status.PASS, Status.FAIL, Status.ERROR, Status.TIMEOUT, Status.INVALID_TEST


@pytest.fixture(scope="module")
def sb():
    with Sandbox(timeout_s=1.0, memory_mb=256, workers=2) as box:
        yield box


# ------------------------------------------------------------------ comparison modes
@pytest.mark.parametrize(
    ("actual", "expected", "mode", "equal"),
    [
        ("6\n", "6\n", "exact", True),
        ("6", "6\n", "exact", False),
        ("6 \n", "6", "lines", True),
        ("1 2\n3\n\n\n", "1 2\n3", "lines", True),
        ("1  2\n3", "1 2\n3", "lines", False),
        ("1  2\n3", "1 2 3", "tokens", True),
        ("1 2", "12", "tokens", False),
        ("0.3333333", "0.333333333", "float", True),  # within 1e-6
        ("0.334", "0.333333333", "float", False),
        ("3.0", "3", "float", False),  # an int token needs the same token
        ("YES 1.0000001", "YES 1.0", "float", True),
        ("yes 1.0", "YES 1.0", "float", False),
        ("nan", "nan", "float", True),
        ("inf", "1e308", "float", False),
        ("1e-7", "0.0", "float", True),  # absolute tolerance
    ],
)
def test_comparison_modes(actual, expected, mode, equal):
    assert stdout_equal(actual, expected, mode, 1e-6) is equal


words = st.text(alphabet=" \t\n\r\x0bab1.", max_size=30)


@settings(max_examples=300, deadline=None)
@given(words, words)
def test_modes_against_their_definitions(a, b):
    assert stdout_equal(a, b, "exact", 1e-6) == (a == b)
    assert stdout_equal(a, b, "tokens", 1e-6) == (a.split() == b.split())
    lines = [x.rstrip() for x in a.rstrip().splitlines()] == [
        x.rstrip() for x in b.rstrip().splitlines()
    ]
    assert stdout_equal(a, b, "lines", 1e-6) == lines
    assert normalise(a, "tokens") == " ".join(a.split())


@settings(max_examples=300, deadline=None)
@given(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6))
def test_float_mode_is_isclose_per_token(x, y):
    got = stdout_equal(f"{x!r}", f"{y!r}", "float", 1e-6)
    assert got == (repr(x) == repr(y) or math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-6))


# -------------------------------------------------------------- standard-input programs
READERS = {
    "input()": "n = int(input())\nxs = list(map(int, input().split()))\nprint(sum(xs))\n",
    "sys.stdin": "import sys\nlines = sys.stdin.read().split()\nprint(sum(map(int, lines[1:])))\n",
    "sys.stdin.buffer": (
        "import sys\nd = sys.stdin.buffer.read().split()\nprint(sum(map(int, d[1:])))\n"
    ),
    "open(0) and exit()": "print(sum(map(int, open(0).read().split()[1:])))\nexit()\n",
    "a kept open(0)": "f = open(0)\nprint(sum(map(int, f.read().split()[1:])))\n",
    "main guard, sys.exit(0)": (
        "import sys\ndef main():\n    n = int(sys.stdin.readline())\n"
        "    print(sum(map(int, sys.stdin.readline().split())))\n    sys.exit(0)\n"
        "if __name__ == '__main__':\n    main()\n"
    ),
}
BIG = 40_000  # > 64 KiB of input: fed by a writer thread


def _stdio_tests():
    return [
        StdioTest("3\n1 2 3\n", "6\n"),
        StdioTest("2\n5 5\n", "10"),
        StdioTest(f"{BIG}\n" + " ".join(["12"] * BIG) + "\n", f"{12 * BIG}\n"),
        StdioTest("1\n7\n", "7\n", mode="exact"),
    ]


def test_every_way_of_reading_stdin(sb):
    t = sb.run(list(READERS.values()), _stdio_tests())
    assert (t.status == P).all(), (t.status, t.detail)


def test_stdio_failures(sb):
    progs = [
        "print(sum(map(int, open(0).read().split()[1:])) + 1)\n",  # wrong
        "import sys\nsys.exit(3)\n",  # a non-zero exit is an error
        "while True:\n    pass\n",
        "raise ValueError('x')\n",
        "print(int(input()) +\n",  # syntax
        "import os\nos.write(1, b'6\\n')\n",  # fd 1 is the output: right on the first test only
    ]
    t = sb.run(progs, _stdio_tests()[:2])
    assert t.status.tolist() == [[F, F], [E, E], [T, T], [E, E], [Status.SYNTAX] * 2, [P, F]]
    assert t.detail[1, 0] == "SystemExit" and t.detail[3, 0] == "ValueError"


def test_large_outputs_travel_as_a_normalised_hash(sb):
    n = 30_000  # ~170 KiB of output
    expected = "\n".join(str(i) for i in range(n)) + "\n"
    progs = [
        f"for i in range({n}):\n    print(i)\n",
        f"print(' '.join(str(i) for i in range({n})))\n",  # same tokens
        f"for i in range({n}):\n    print(i + (i == 7))\n",  # one token wrong
    ]
    tests = [StdioTest("", expected, mode="tokens"), StdioTest("", expected, mode="exact")]
    t = sb.run(progs, tests)
    assert t.status.tolist() == [[P, P], [P, F], [F, F]]
    assert t.output_hash[0, 0] == t.output_hash[1, 0]  # the same under its mode


def test_outputs_hash_under_their_mode(sb):
    t = sb.run(["print(1, 2)\n", "print(1)\nprint(2)\n"], [StdioTest("", "1 2")])
    assert (t.status == P).all() and t.output_hash[0, 0] == t.output_hash[1, 0]


def test_one_kind_per_run(sb):
    with pytest.raises(ConfigError, match="mixes"):
        sb.run(["print(1)"], [StdioTest("", "1"), TestCase("(1,)", "1")], entry_point="f")
    with pytest.raises(ConfigError, match="None for StdioTest"):
        sb.run(["print(1)"], [StdioTest("", "1")], entry_point="f")
    with pytest.raises(ConfigError, match="identifier"):
        sb.run(["def f(): pass"], [TestCase("()", "None")])
    with pytest.raises(ConfigError, match="mode"):
        StdioTest("", "", mode="loose")


# ------------------------------------------------- LeetCode-style Solution classes
TWO_SUM = """
class Solution:
    def twoSum(self, nums, target):
        seen = {}
        for i, x in enumerate(nums):
            if target - x in seen:
                return [seen[target - x], i]
            seen[x] = i
"""
TWO_SUM_CASES = [
    TestCase.from_values(json.loads(args), json.loads(out))
    for args, out in [("[[2, 7, 11, 15], 9]", "[0, 1]"), ("[[3, 2, 4], 6]", "[1, 2]"),
                      ("[[3, 3], 6]", "[0, 1]")]
]  # fmt: skip


def test_a_solution_class_method_is_the_entry_point(sb):
    """As APPS, TACO and LiveCodeBench run call-based LeetCode problems: without a top-level
    function of that name, the method of a fresh ``Solution()`` per test."""
    progs = [
        TWO_SUM,
        TWO_SUM.replace("[seen[target - x], i]", "[i, seen[target - x]]"),  # wrong order
        # a fresh instance per test, as LeetCode makes one: [0, 1] on every test (one instance
        # for all would answer None after the first)
        "class Solution:\n    calls = 0\n    def twoSum(self, nums, target):\n"
        "        self.calls += 1\n        return [0, 1] if self.calls == 1 else None\n",
        "class Solution:\n    @staticmethod\n    def twoSum(nums, target):\n"
        "        return next([i, j] for j in range(len(nums)) for i in range(j)"
        " if nums[i] + nums[j] == target)\n",
        # a top-level function of that name comes first
        "def twoSum(nums, target):\n    return [0, 1]\n"
        + TWO_SUM.replace("seen[target - x], i", "9, 9"),
        "class Solution:\n    def __init__(self):\n        raise ValueError\n"
        "    def twoSum(self, nums, target):\n        return [0, 1]\n",
        "class Solution:\n    def other(self, nums, target):\n        return [0, 1]\n",
        "Solution = {'twoSum': 1}\n",
    ]
    t = sb.run(progs, TWO_SUM_CASES, entry_point="twoSum")
    assert t.status.tolist() == [
        [P, P, P],
        [F, F, F],
        [P, F, P],
        [P, P, P],
        [P, F, P],
        [E, E, E],
        [E, E, E],
        [E, E, E],
    ], t.detail
    assert t.detail[5, 0] == "ValueError"
    assert t.detail[6, 0].startswith("missing entry point twoSum")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(), kids, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(JSON_VALUES, max_size=4), JSON_VALUES)
def test_from_values_round_trips_json_data(args, expected):
    case = TestCase.from_values(json.loads(json.dumps(args)), expected)
    got = parse_literal(case.input)
    assert got == tuple(args) and [list(a) for a in got if type(a) is dict] == [
        list(a) for a in args if type(a) is dict
    ]  # dict arguments keep their order
    assert parse_literal(case.expected) == expected


def test_from_values_names_what_it_takes():
    with pytest.raises(ConfigError, match=r"'args' parameter of TestCase\.from_values"):
        TestCase.from_values("[1, 2]", 3)
    with pytest.raises(ConfigError, match="plain values"):
        TestCase.from_values([object()], 3)
    with pytest.raises(ConfigError, match="plain values"):
        TestCase.from_values([1], {1: [b"x", object()]})


# ------------------------------------------------------------------ assert-style tests
ASSERTS = '''
METADATA = {"author": "x"}
import math

def check(candidate):
    """Docstring."""
    assert candidate(1, 2) == 3
    assert 7 == candidate(3, 4), "reversed"
    assert candidate(*[1, 2]) == 3
    assert candidate(3 * 19, 'ab' + 'c') == (57, 'abc')
    assert candidate({"p": 1, "A": 2}) is True
    assert candidate([])
    assert not candidate([1])
    assert True, "this prints if the assert fails"
    assert abs(candidate(0.5) - 0.25) < 1e-6
    for x in range(3):
        assert candidate(x) == x
    assert candidate(helper(2)) == 4
    assert candidate(2 ** 100000) == 0
    assert candidate('a' * 10**9) == 0
    assert candidate(__import__('os').getcwd()) == 0
    assert candidate(nan) == 1
    assert candidate(1, key=2) == 1
'''


def test_assert_forms():
    got = parse_asserts(ASSERTS, "f")
    cases = [c for c in got if isinstance(c, TestCase)]
    invalid = [c for c in got if isinstance(c, InvalidTest)]
    assert cases == [
        TestCase("(1, 2)", "3"),
        TestCase("(3, 4)", "7"),
        TestCase("(57, 'abc')", "(57, 'abc')"),
        TestCase("({'p': 1, 'A': 2},)", "True"),  # dict order kept
        TestCase("([],)", "True"),
        TestCase("([1],)", "False"),
    ]
    reasons = [c.reason for c in invalid]
    assert len(invalid) == 9
    assert "starred" in reasons[0]
    assert "comparison Lt" in reasons[1]
    assert "a for loop" in reasons[2]
    assert all("line" in r for r in reasons)
    assert (
        sum("` is not a literal" in r for r in reasons) == 4
    )  # helper, 2**100000, "a"*1e9, import
    assert "names a variable" in reasons[7] and "keyword" in reasons[8]


def test_module_level_asserts_use_the_entry_point():
    got = parse_asserts("assert f(2) == 4\nassert g(2) == 4\nx = 1\n", "f")
    assert got[0] == TestCase("(2,)", "4")
    assert isinstance(got[1], InvalidTest) and "not a call of f" in got[1].reason
    assert isinstance(got[2], InvalidTest) and "an assignment" in got[2].reason
    assert isinstance(parse_asserts("assert f(", "f")[0], InvalidTest)


plain = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(plain, max_size=3), plain)
def test_asserts_round_trip_literal_values(args, expected):
    call = f"candidate({', '.join(map(repr, args))})"
    code = f"def check(candidate):\n    assert {call} == {expected!r}\n"
    (case,) = parse_asserts(code, "f")
    assert isinstance(case, TestCase)
    assert parse_literal(case.input) == tuple(args) or any(x != x for x in args)
    assert parse_literal(case.expected) == expected or expected != expected


def test_invalid_tests_become_invalid_columns_with_their_reason(sb):
    tests = parse_asserts("assert f(1) == 2\nfor i in range(2):\n    assert f(i) == i + 1\n", "f")
    t = sb.run(["def f(x):\n    return x + 1\n"], tests, entry_point="f")
    assert t.status.tolist() == [[P, I]]
    assert "a for loop" in t.detail[0, 1]
    np.testing.assert_array_equal(t.passed, [[True, False]])


def test_third_party_packages_when_allowed():
    pytest.importorskip("numpy")
    prog = "import numpy as np\ndef f(n):\n    return int(np.arange(n).sum())\n"
    with Sandbox(timeout_s=5.0, workers=1, packages=("numpy",)) as box:
        t = box.run([prog], [TestCase("(10,)", "45")], entry_point="f")
        s = box.run(["import numpy as np\nprint(np.arange(int(input())).sum())\n"],
                    [StdioTest("10\n", "45")])  # fmt: skip
    assert t.status[0, 0] == P and s.status[0, 0] == P


def test_a_program_closes_its_own_fds_with_close_range(sb):
    """Python 3.13's ``os.closerange(64, 4096)`` goes through glibc's ``closefrom``, which
    aborts the process (SIGABRT: a CRASH row) when ``close_range`` is refused and
    ``/proc/self/fd`` cannot be listed; the call only ever closes the caller's own fds."""
    prog = (
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "def f(low):\n    return libc.syscall(436, low, 0xFFFFFFFF, 0)  # close_range\n"
    )
    t = sb.run([prog], [TestCase("(60,)", "0")], entry_point="f")
    assert t.status.tolist() == [[P]], t.detail


# ---------------------------------------------- attacks on the parser (outside attack, v2)
def _cases(code: str) -> list:
    return [c if isinstance(c, TestCase) else type(c).__name__ for c in parse_asserts(code, "f")]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        # Python runs the last `def check`: the first one (which the parser took) never runs
        ("def check(c):\n    assert c(1) == 1\ndef check(c):\n    assert c(1) == 2\n", ["2"]),
        ("def check(c):\n    assert c(1) == 1\nx = 0\ndef check(c):\n    assert c(1) == 2\n",
         ["InvalidTest", "2"]),
        # module-level asserts run beside check: they were dropped silently
        ("assert f(1) == 5\ndef check(c):\n    assert c(1) == 2\n", ["5", "2"]),
        ("def check(c):\n    assert c(1) == 2\nassert f(1) == 5\n", ["5", "2"]),
        ("def check(c):\n    assert c(1) == 2\nfor i in range(2):\n    assert f(i) == i\n",
         ["InvalidTest", "2"]),
        # the call that runs check is not a test of its own; another call is reported
        ("def check(c):\n    assert c(1) == 2\ncheck(f)\n", ["2"]),
        ("def check(c):\n    assert c(1) == 2\ncheck(g)\n", ["InvalidTest", "2"]),
    ],
)  # fmt: skip
def test_the_asserts_are_those_python_runs(code, expected):
    """The oracle is Python itself: each code, run with a recording ``f`` (and ``check(f)``
    once, as HumanEval's harness does, unless the code calls it), records the expected values
    of the asserts it evaluates; the parser gives the same ones, in order, and reports what it
    cannot read rather than dropping it."""
    got = _cases(code)
    assert [c.expected if isinstance(c, TestCase) else c for c in got] == expected
    if "InvalidTest" in expected:
        return  # Python runs what the parser reports (a loop, another call): no oracle
    seen: list = []

    class Recorder:
        def __init__(self, v):
            self.v = v

        def __eq__(self, other):
            seen.append(repr(other))
            return True

    env: dict = {"f": Recorder}
    exec(code, env)
    if "check(f)" not in code:
        env["check"](env["f"])
    assert seen == [c.expected for c in got if isinstance(c, TestCase)]


@pytest.mark.parametrize("const", ["0.0", "0", "1", "1.0", "''", "()", "b''", "0j", "-0.0"])
def test_is_takes_true_false_and_none_only(const):
    """``f(x) is 0.0`` was read as ``f(x) == 0.0`` (``0.0 in (True, False, None)`` holds)
    and then compared with tolerance; identity with any other constant is not a literal
    case, so the column is INVALID_TEST, naming why."""
    (got,) = parse_asserts(f"assert f(1) is {const}\n", "f")
    assert isinstance(got, InvalidTest) and "identity" in got.reason, got


@pytest.mark.parametrize("const", ["True", "False", "None"])
def test_is_true_false_none_are_cases(const):
    assert parse_asserts(f"assert f(1) is {const}\n", "f") == [TestCase("(1,)", const)]


# Each folds, by Python's rules, to a value whose every later step (canonical text, comparison,
# hashing) walks far more than its source: the parser stalled without bound (the outside attack
# waited minutes on the first; `rewardkit sandbox run` never returned).  Each is now an
# InvalidTest naming the bound, found in milliseconds (the folding stops at the bound).
BLOWUPS = {
    "nested repetition of lists": "[[[[0] * 1000] * 1000] * 1000] * 1000",
    "nested repetition of tuples": "((((0,) * 1000,) * 1000,) * 1000,) * 1000",
    "repetition of long strings": "['a' * 10000] * 10000",
    "repetition of bytes": "(b'x' * 10000,) * 10000",
    "a dict key that hashes a million items": "{((0,) * 1000,) * 1000: 1}",
    "many repetitions side by side": "[" + ", ".join(["[0] * 9999"] * 200) + "]",
    "a chain of concatenations": " + ".join(["[[0] * 9999]"] * 50),
    "a chain too deep to print": " + ".join(["1"] * 2000),  # it crashed the parser
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", list(BLOWUPS))
@pytest.mark.parametrize("side", ["argument", "expected value"])
def test_literals_that_expand_without_bound_are_invalid_tests(name, side):
    expr = BLOWUPS[name]
    code = f"assert f({expr}) == 1\n" if side == "argument" else f"assert f(1) == {expr}\n"
    (got,) = parse_asserts(code, "f")
    assert isinstance(got, InvalidTest), name
    assert side in got.reason and len(got.reason) < 400, got.reason


def test_a_product_of_literals_is_bounded_in_bits_as_a_power_is():
    """Each product of a chain stays under 10,000 bits (a power already did): without the
    bound the chain was computed whole and refused later, as an int too long to print."""
    (got,) = parse_asserts("assert f(" + " * ".join(["2 ** 4999"] * 3) + ") == 1\n", "f")
    assert isinstance(got, InvalidTest) and "is not a literal" in got.reason, got


def test_repetition_within_the_bounds_still_folds():
    grid = parse_asserts("assert f(((0,) * 100,) * 100) == [1] * 3 + [2]\n", "f")
    assert grid == [TestCase(repr((((0,) * 100,) * 100,)), "[1, 1, 1, 2]")]


@pytest.mark.parametrize(
    "expr", ["[[0] * 2] * 2", "([0],) * 3", "[{1: 2}] * 2", "[({0},)] * 2", "[(0, [1])] * 2"]
)
def test_repeating_a_mutable_item_is_not_a_literal_case(expr):
    """``[[0] * 2] * 2`` is one list twice in Python: a program that sets ``g[0][0] = 1`` and
    returns ``g`` gives ``[[1, 0], [1, 0]]`` there, while the case's literal holds two lists
    (outside attack: the parsed expected value and Python's disagreed). Such a repetition is
    INVALID_TEST; repeating immutable items (numbers, strings, tuples of them) folds."""
    (got,) = parse_asserts(f"assert f({expr}) == 1\n", "f")
    assert isinstance(got, InvalidTest) and "mutable" in got.reason, got
    env: dict = {}
    exec(f"g = {expr}", env)  # the oracle: Python's value does alias
    g = env["g"]
    assert any(g[0] is g[k] for k in range(1, len(g))) or g[0][-1] is g[1][-1]


@pytest.mark.parametrize(
    "expr", ["1e999 - 1e999", "[0 * 1e999]", "{1: 1e999 * 0}", "(1, (2, -(1e999 - 1e999)))"]
)
def test_an_expected_nan_is_not_a_case(expr):
    """Python's ``==`` is False for a NaN whatever it is compared with, so the assert fails
    for every program; read as a case, a program returning NaN passed it."""
    env: dict = {}
    exec(f"e = {expr}", env)
    assert env["e"] != eval(expr)  # the oracle: no value equals it, itself recomputed included
    (got,) = parse_asserts(f"assert f(1) == {expr}\n", "f")
    assert isinstance(got, InvalidTest) and "NaN" in got.reason, got


@pytest.mark.parametrize(
    "code",
    [
        "from builtins import list as set\nassert f(2) == set([1, 2])\n",
        "from fractions import Fraction as complex\nassert f(1) == complex(1, 2)\n",
        "from operator import neg as f\nassert f(1) == -1\n",
        "import f\nassert f(1) == 1\n",
        "from math import *\nassert f(1) == 1\n",
        "def check(c):\n    from operator import neg as c\n    assert c(1) == -1\n",
        "def check(c):\n    import builtins as c\n    assert c(1) == 1\n",
        "from builtins import frozenset as check\nassert f(1) == 1\n",
    ],
)
def test_an_import_that_rebinds_a_name_the_cases_read_makes_the_code_unreadable(code):
    """The cases read ``set``, ``frozenset``, ``complex``, the entry point and check's
    parameter as Python's own; an import that rebinds one (or a star import, which may) changes
    what the asserts mean: the code is one InvalidTest naming the import."""
    got = parse_asserts(code, "f")
    assert len(got) == 1 and isinstance(got[0], InvalidTest) and "import" in got[0].reason, got


def test_check_called_at_module_level_runs_the_definition_before_it():
    """Python runs the check defined last *before* the call; the harness then runs the last
    one. Both sets of asserts are cases, in that order, and a call before any definition is
    INVALID_TEST (a NameError in Python)."""
    code = (
        "def check(c):\n    assert c(1) == 999\n\ncheck(f)\n\n"
        "def check(c):\n    assert c(1) == 2\ncheck(f)\n"
    )
    assert parse_asserts(code, "f") == [TestCase("(1,)", "999"), TestCase("(1,)", "2")]
    got = parse_asserts("check(f)\ndef check(c):\n    assert c(1) == 2\n", "f")
    assert isinstance(got[0], InvalidTest) and "not defined yet" in got[0].reason
    assert got[1:] == [TestCase("(1,)", "2")]


@pytest.mark.parametrize(
    "head",
    [
        "@staticmethod\ndef check(candidate):",
        "def check(candidate=f(1)):",
        "def check(candidate: f(1)):",
        "def check(candidate) -> f(1):",
    ],
)
def test_what_runs_when_check_is_defined_is_not_read_as_nothing(head):
    """Decorators, defaults and annotations run when ``check`` is defined (they may call the
    program and assert on it in their own way): the check is INVALID_TEST rather than its
    asserts read without them."""
    got = parse_asserts(head + "\n    assert candidate(1) == 2\n", "f")
    assert len(got) == 1 and isinstance(got[0], InvalidTest), got
    assert "when it is defined" in got[0].reason


def test_a_one_argument_input_without_its_comma_names_the_fix(sb):
    tests = [TestCase("(1)", "1"), TestCase("[1, 2]", "1")]
    t = sb.run(["def f(x):\n    return x\n"], tests, entry_point="f")
    assert t.status.tolist() == [[I, I]]
    assert "(1,)" in t.detail[0, 0] and "([1, 2],)" in t.detail[0, 1], t.detail


# What `sys.exit(code)` means is what `python prog.py` does with it: status 0 for None and for
# ints (bools too) equal to 0, status 1 for anything else (printed). `0.0 in (None, 0)` held,
# so `sys.exit(0.0)` counted as a clean exit.
EXITS = ["", "sys.exit()", "sys.exit(0)", "sys.exit(False)", "sys.exit(None)",
         "sys.exit(0.0)", "sys.exit(-0.0)", "sys.exit('0')", "sys.exit(0j)", "sys.exit(1)",
         "sys.exit(True)", "raise SystemExit(0.0)", "exit(0.0)", "quit()",
         "class Z(int):\n    def __eq__(self, o):\n        return True\nsys.exit(Z(3))",
         "class Z(int):\n    pass\nsys.exit(Z(0))"]  # fmt: skip


def test_a_scripts_exit_code_means_what_python_makes_of_it(sb):
    import subprocess
    import sys

    progs = [f"import sys\nprint(6)\n{e}\n" for e in EXITS]
    oracle = [
        subprocess.run([sys.executable, "-c", p], capture_output=True).returncode == 0
        for p in progs
    ]
    t = sb.run(progs, [StdioTest("", "6\n")])
    assert [s == P for s in t.status[:, 0]] == oracle, list(zip(EXITS, t.status[:, 0]))
    assert oracle.count(False) >= 7  # the oracle tells them apart


HUGE_HEX = "0x" + "f" * 4000  # parses (hex has no digit limit), prints past Python's 4,300 digits


@pytest.mark.parametrize(
    "code",
    [
        f"assert f({HUGE_HEX}) == 1\n",
        f"assert f(1) == {HUGE_HEX}\n",
        f"def check(candidate):\n    assert candidate(1) == {HUGE_HEX}\n",
        f"assert g({HUGE_HEX})\n",
        f"assert f(1) == [{HUGE_HEX}] * 2\n",
    ],
)
def test_a_number_too_long_to_print_is_an_invalid_test_not_an_exception(code):
    """The reason's text printed the expression, and printing the int raised ValueError out of
    ``parse_asserts`` (outside attack): the whole file failed instead of one column."""
    (got,) = parse_asserts(code, "f")
    assert isinstance(got, InvalidTest) and "too long to print" in got.reason, got


def test_the_folding_of_one_test_code_is_bounded_in_all():
    """200 asserts each folding 90,000 items made 54 MB of case text from 6 KB of code in 10 s
    (outside attack); the code's literals now share 1,000,000: the first eleven fold, the rest
    are INVALID_TEST naming the shared bound."""
    got = parse_asserts("assert f(((0,) * 300,) * 300) == 0\n" * 200, "f")
    ok = [c for c in got if isinstance(c, TestCase)]
    assert len(ok) == 11 and len(got) == 200
    assert all("for all the test code's literals" in c.reason for c in got[11:]), got[11]
    many = parse_asserts("assert f(" + ", ".join(["((0,) * 300,) * 300"] * 200) + ") == 0\n", "f")
    assert isinstance(many[0], InvalidTest)


_STMT = st.sampled_from(
    ["assert f(1) == 1", "x = 'é€😀'", "assert f('ü' * 3) == 'x'", "for i in r:\n    assert f(i)",
     "assert f(\n    [1,\n     2]) == 3", "y = 1; assert f(2) == 2", "assert  f( 'a\\tb' )"]
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(_STMT, min_size=1, max_size=8), st.sampled_from(["\n", "\r\n", "\r"]))
def test_the_source_of_each_statement_is_what_ast_cuts(stmts, newline):
    """The reason's source text is cut from lines split once; ``ast.get_source_segment`` is the
    oracle, on any mix of multi-line statements, non-ASCII text and line endings."""
    from rewardkit.sandbox.cases import _Source

    code = newline.join(s.replace("\n", newline) for s in stmts) + newline
    src = _Source(code)
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, (ast.stmt, ast.expr)):
            want = ast.get_source_segment(code, node)
            assert src.segment(node) == (want or "")[:300], (code, ast.dump(node))


@pytest.mark.timeout(60)
def test_many_statements_parse_in_time_linear_in_the_code():
    """``ast.get_source_segment`` split the whole code again for every statement: 10,000
    asserts took 218 s (outside attack); the pytest timeout (60 s) is the check here."""
    got = parse_asserts("assert f(1) == 1\n" * 5000 + "x = 1\n" * 5000, "f")
    assert len(got) == 10_000 and isinstance(got[-1], InvalidTest)
