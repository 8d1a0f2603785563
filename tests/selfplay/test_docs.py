"""The usage examples in the selfplay docstrings run and print what they say."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "alpha_sweep",
    "bank",
    "bankfile",
    "dualpool",
    "estimator_audit",
    "executor",
    "infogain",
    "inputgen",
    "mutations",
    "predictions",
    "probes",
    "pruning",
    "simulate",
    "testgen",
]


@pytest.mark.slow
@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    mod = importlib.import_module(f"rewardkit.selfplay.{name}")
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0
