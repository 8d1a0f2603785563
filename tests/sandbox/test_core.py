"""Sandbox.run on ordinary programs: statuses, the pass matrix, determinism, bad arguments."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from rewardkit.errors import ConfigError
from rewardkit.sandbox import Sandbox, Status, StdioTest, TestCase, graded_correctness

ADD_OK = "def add(a, b):\n    return a + b\n"
ADD_WRONG = "def add(a, b):\n    return a - b\n"
ADD_SYNTAX = "def add(a, b)\n    return a + b\n"
ADD_RAISES = "def add(a, b):\n    return a / b\n"
ADD_LIST = "def add(a, b):\n    return [a + b]\n"
TESTS = [
    TestCase("(1, 2)", "3"),
    TestCase("(2, 0)", "2"),
    TestCase("(0.1, 0.2)", "0.3"),  # float tolerance: 0.1 + 0.2 != 0.3 exactly
    TestCase("(1,", "3"),  # not a literal
    TestCase("5", "5"),  # not a tuple
    TestCase("(1, 1)", "__import__('os')"),  # expected is code, not a literal
]


@pytest.fixture(scope="module")
def sb():
    with Sandbox(timeout_s=1.0, memory_mb=256, workers=2) as box:
        yield box


def test_statuses_of_ordinary_programs(sb):
    table = sb.run([ADD_OK, ADD_WRONG, ADD_SYNTAX, ADD_RAISES, ADD_LIST], TESTS, entry_point="add")
    P, F, E, S, I = Status.PASS, Status.FAIL, Status.ERROR, Status.SYNTAX, Status.INVALID_TEST
    expected = [
        [P, P, P, I, I, I],
        [F, P, F, I, I, I],  # 2 - 0 == 2 passes: a wrong program can pass a weak test
        [S, S, S, I, I, I],
        [F, E, F, I, I, I],
        [F, F, F, I, I, I],  # [3] is not 3
    ]
    np.testing.assert_array_equal(table.status, np.array(expected, dtype=np.int8))
    np.testing.assert_array_equal(table.passed, table.status == Status.PASS)
    assert table.detail[3, 1] == "ZeroDivisionError"
    assert "tuple" in table.detail[0, 4]
    assert table.shape == (5, 6)
    assert "rlimits" in table.isolation


def test_same_input_same_table(sb):
    progs = [ADD_OK, ADD_WRONG, ADD_RAISES, ADD_LIST] * 3
    a = sb.run(progs, TESTS, entry_point="add")
    b = sb.run(progs, TESTS, entry_point="add")
    np.testing.assert_array_equal(a.status, b.status)
    np.testing.assert_array_equal(a.output_hash, b.output_hash)
    assert a.digest == b.digest
    # equal outputs hash equal, different outputs differently
    assert a.output_hash[0, 0] == a.output_hash[4, 0]
    assert a.output_hash[0, 0] != a.output_hash[1, 0]


SETS = "def add(a, b):\n    return {str(a), str(b), 'x' * a}\n"
DIGEST_SCRIPT = """
from rewardkit.sandbox import Sandbox, TestCase
tests = [TestCase("(1, 2)", "3"), TestCase("(3, 4)", "{'3', '4', 'xxx'}")]
with Sandbox(timeout_s=1.0, workers=1) as sb:
    print(sb.run(PROGS, tests, entry_point="add").digest)
"""


def test_same_table_in_a_fresh_process_with_another_hash_seed(sb):
    progs = [ADD_OK, SETS, ADD_RAISES]
    tests = [TestCase("(1, 2)", "3"), TestCase("(3, 4)", "{'3', '4', 'xxx'}")]
    here = sb.run(progs, tests, entry_point="add")
    assert here.status[1, 1] == Status.PASS
    script = DIGEST_SCRIPT.replace("PROGS", repr(progs))
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, timeout=120, check=True)  # fmt: skip
    assert out.stdout.strip() == here.digest


RANDOM_PROGRAMS = [
    "import random\ndef add(a, b):\n    return random.random()\n",  # imported with the module
    "def add(a, b):\n    import random\n    return random.random()\n",  # inside the function
    "from random import random as r\ndef add(a, b):\n    return r()\n",
    "import tempfile\ndef add(a, b):\n    return __import__('sys').modules['random'].random()\n",
]


def test_random_is_seeded_to_zero_before_every_test(sb):
    """The zygote does not import ``random`` (its fork handler would cost every child); the
    child seeds it before each test however the program reaches it: imported with the module,
    inside the tested function (so on its first call), or by another module.  Oracle:
    ``random.Random(0)`` here."""
    import random

    first = random.Random(0).random()
    tests = [TestCase(f"({k}, {k})", repr(first)) for k in range(4)]
    table = sb.run(RANDOM_PROGRAMS, tests, entry_point="add")
    assert table.passed.all(), table.detail
    script = "import random\nprint(random.random(), random.randint(0, 10**9))\n"
    rng = random.Random(0)
    out = f"{rng.random()} {rng.randint(0, 10**9)}"
    stdio = sb.run([script], [StdioTest("", out)] * 3)
    assert stdio.passed.all(), stdio.detail


def test_programs_run_with_their_own_future_flags_not_the_sandbox_s(sb):
    """The child's own module has ``from __future__ import annotations``; a program must not
    inherit it: annotations are evaluated as under ``python program.py`` (a program annotated
    with an undefined name fails at import there, so it does here), and a program's own future
    import still works.  Oracle: ``exec`` of the same source here."""
    progs = [
        "def add(a: int, b: int) -> int:\n    return repr(add.__annotations__)\n",
        "def add(a: Undefined, b):\n    return 0\n",
        "from __future__ import annotations\n"
        "def add(a: Undefined, b) -> int:\n    return repr(add.__annotations__)\n",
    ]
    here = []
    for src in progs:
        g: dict = {}
        try:
            exec(compile(src, "<program>", "exec", dont_inherit=True), g)
            here.append(g["add"](1, 2))
        except NameError:
            here.append(None)
    assert here[1] is None and "<class 'int'>" in here[0] and "'Undefined'" in here[2]
    tests = [TestCase("(1, 2)", repr(here[0])), TestCase("(3, 4)", repr(here[0]))]
    table = sb.run(progs, tests, entry_point="add")
    assert table.status[0].tolist() == [Status.PASS] * 2
    assert table.status[1].tolist() == [Status.ERROR] * 2 and table.detail[1, 0] == "NameError"
    third = sb.run([progs[2]], [TestCase("(1, 2)", repr(here[2]))], entry_point="add")
    assert third.passed.all()


def test_graded_correctness(sb):
    table = sb.run([ADD_OK, ADD_WRONG, ADD_RAISES], TESTS[:3], entry_point="add")
    np.testing.assert_allclose(graded_correctness(table, [0, 1, 2]), [1.0, 1 / 3, 0.0])
    np.testing.assert_allclose(graded_correctness(table), [1.0, 1 / 3, 0.0])  # all columns
    np.testing.assert_allclose(graded_correctness(table, np.array([False, True, False])), [1, 1, 0])
    with pytest.raises(ConfigError, match=r"'gt_columns' parameter of graded_correctness"):
        graded_correctness(table, [3])
    with pytest.raises(ConfigError, match=r"non-empty sequence"):
        graded_correctness(table, [])


def test_invalid_gt_column_raises(sb):
    table = sb.run([ADD_OK], TESTS, entry_point="add")
    with pytest.raises(ConfigError, match=r"\[3\] are INVALID_TEST"):
        graded_correctness(table, [0, 3])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"timeout_s": 0}, r"'timeout_s' parameter of Sandbox must be a float in \[0.001, 3600\]"),
        ({"memory_mb": 10}, r"'memory_mb' parameter of Sandbox must be an int in \[64, .*Got 10"),
        ({"workers": 0}, r"'workers' parameter of Sandbox must be an int in \[1, "),
        ({"backend": "k8s"}, r"'backend' parameter of Sandbox must be one of 'local', 'ray'"),
        ({"isolation": "none"}, r"'isolation' parameter of Sandbox must be one of"),
    ],
)
def test_bad_sandbox_arguments(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        Sandbox(**kwargs)


def test_bad_run_arguments(sb):
    with pytest.raises(ConfigError, match=r"'programs' parameter of Sandbox.run .* Got str"):
        sb.run(ADD_OK, TESTS, entry_point="add")
    with pytest.raises(ConfigError, match=r"Got int at index 1"):
        sb.run([ADD_OK, 3], TESTS, entry_point="add")
    with pytest.raises(ConfigError, match=r"'tests' parameter .* at index 0"):
        sb.run([ADD_OK], [("(1, 2)", "3")], entry_point="add")
    with pytest.raises(ConfigError, match=r"'entry_point' parameter .* Got 'not valid'"):
        sb.run([ADD_OK], TESTS, entry_point="not valid")


def test_empty_inputs(sb):
    assert sb.run([], TESTS, entry_point="add").shape == (0, 6)
    assert sb.run([ADD_OK], [], entry_point="add").shape == (1, 0)


@pytest.mark.parametrize("isolation", ["strict", "basic"])
def test_the_report_says_whether_the_standard_library_can_be_imported(isolation):
    """``unreachable`` is empty exactly when a program can import a standard module the zygote
    did not pre-import.  Basic isolation as root, with the interpreter under a private home
    (pyenv under /root), reported [] while every such import failed."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # basic warns that it does not confine
        box = Sandbox(workers=1, isolation=isolation)
    with box:
        unreachable = box.isolation_report()["unreachable"]
        t = box.run(
            ["import argparse, concurrent.futures\ndef f():\n    return 1\n"],
            [TestCase("()", "1")],
            entry_point="f",
        )
    imported = bool(t.passed[0, 0])
    assert imported == (not unreachable), (unreachable, t.detail.tolist())
