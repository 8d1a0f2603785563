"""Three-level pruning and k_eff."""

from __future__ import annotations

import numpy as np
import pytest

from rewardkit.errors import ConfigError
from rewardkit.selfplay.executor import TestCase
from rewardkit.selfplay.pruning import k_eff, prune


def test_levels_in_order():
    tests = [
        TestCase("(1,)", "2"),
        TestCase("(1, )", "2"),  # same parsed input as test 0
        TestCase("(", "0"),  # does not parse
        TestCase("(3,)", "4"),  # same pass column as test 0
        TestCase("(4,)", "9"),  # the correct program fails it: wrong expectation
        TestCase("(5,)", "6"),
        TestCase("(6,)", "7"),
    ]
    passed = np.array(
        [
            [1, 1, 0, 1, 0, 1, 1],  # correct (y = 1)
            [0, 0, 0, 0, 1, 1, 0],
            [0, 0, 0, 0, 0, 0, 1],
        ],
        bool,
    )
    r = prune(tests, passed, y=[1.0, 0.5, 0.0], invalid_test=[0, 0, 1, 0, 0, 0, 0], k=2)
    assert r.invalid == (2, 4)
    assert r.duplicate_input == (1,)
    assert r.duplicate_profile == (3,)
    assert r.kept == (0, 5) and r.over_budget == (6,)


def test_without_y_a_wrong_expectation_survives():
    tests = [TestCase("(1,)", "2"), TestCase("(4,)", "9")]
    passed = np.array([[1, 0], [0, 1]], bool)
    assert prune(tests, passed).kept == (0, 1)
    assert prune(tests, passed, y=[1.0, 0.0]).kept == (0,)


def test_accepts_an_execution_table_object():
    class Table:
        passed = np.array([[1, 1], [0, 1]], bool)
        invalid_test = np.array([[False, True], [False, True]])

    r = prune([TestCase("(1,)", "1"), TestCase("x", "1")], Table())
    assert r.kept == (0,) and r.invalid == (1,)


def test_k_eff_formula():
    rng = np.random.default_rng(0)
    E = rng.random((16, 6)) < 0.5
    c = np.corrcoef(E.T.astype(float))
    rho = c[np.triu_indices(6, 1)].mean()
    assert k_eff(E) == pytest.approx(6 / (1 + 5 * max(rho, 0.0)))
    same = np.repeat(E[:, :1], 4, axis=1)
    assert k_eff(same) == pytest.approx(1.0)  # identical columns: ρ̄ = 1
    const = np.zeros((16, 3), bool)
    const[:, 1] = True
    const[:4, 2] = True
    assert k_eff(const) == pytest.approx(3.0)  # a constant column vs a different one: ρ = 0
    const[:, 2] = False
    assert k_eff(const) == pytest.approx(3 / (1 + 2 / 3))  # two identical all-fail columns: ρ = 1


def test_bad_table_shape():
    with pytest.raises(
        ConfigError, match=r"'table' parameter of prune must give an \(m, 2\) pass matrix"
    ):
        prune([TestCase("(1,)", "1"), TestCase("(2,)", "1")], np.zeros((3, 3), bool))
    with pytest.raises(ConfigError, match=r"'y' parameter of prune must have shape \(3,\)"):
        prune([TestCase("(1,)", "1")], np.zeros((3, 1), bool), y=[1, 0])
