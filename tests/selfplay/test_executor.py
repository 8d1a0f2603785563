"""Executors: the cache, the trusted in-process runner, and agreement with the sandbox."""

from __future__ import annotations

import numpy as np
import pytest

from rewardkit._optional import have
from rewardkit.selfplay.executor import (
    CachedExecutor,
    SandboxExecutor,
    TestCase,
    TrustedExecutor,
    default_executor,
)

PROGS = [
    "def f(x):\n    return x + 1\n",
    "def f(x):\n    return x\n",
    "def f(x):\n    raise ValueError\n",
]
TESTS = [TestCase("(1,)", "2"), TestCase("(2,)", "2"), TestCase("(", "0")]


def test_trusted_executor_semantics():
    r = TrustedExecutor().run(PROGS, TESTS, entry_point="f")
    assert r.passed.tolist() == [[True, False, False], [False, True, False], [False, False, False]]
    assert r.invalid_test[:, 2].all() and not r.invalid_test[:, :2].any()
    assert r.output_hash[2, 0] == "error:ValueError"
    assert r.output_hash[0, 0] == r.output_hash[1, 1]  # both output 2


def test_cache_runs_each_cell_once():
    ex = CachedExecutor(TrustedExecutor())
    a = ex.run(PROGS, TESTS, entry_point="f")
    assert ex.executions == 9 and ex.hits == 0
    b = ex.run(PROGS[::-1], TESTS[:2], entry_point="f")
    assert ex.executions == 9 and ex.hits == 6
    np.testing.assert_array_equal(b.passed, a.passed[::-1, :2])
    ex.run(PROGS, [TestCase("(5,)", "6")], entry_point="f")
    assert ex.executions == 12


@pytest.mark.skipif(not have("rewardkit.sandbox"), reason="rewardkit.sandbox is not installed")
def test_sandbox_is_the_default_and_agrees_with_the_trusted_runner(bank):
    ex = default_executor()
    try:
        assert isinstance(ex, SandboxExecutor)
        for task in bank.tasks[:6]:
            progs = [c.source for c in task.candidates]
            tests = [*task.gt_tests, TestCase("(", "0")]
            a = ex.run(progs, tests, entry_point=task.entry_point)
            b = TrustedExecutor().run(progs, tests, entry_point=task.entry_point)
            np.testing.assert_array_equal(a.passed, b.passed)
            np.testing.assert_array_equal(a.invalid_test[:, -1], b.invalid_test[:, -1])
    finally:
        ex.close()
