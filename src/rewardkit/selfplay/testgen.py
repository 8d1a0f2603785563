"""Test generators for the offline verifier: valid, trivial, invalid, duplicate and
wrong-expectation tests, drawn from a finite per-task universe so executions can be cached.

    >>> from rewardkit.selfplay.bank import load_bank
    >>> from rewardkit.selfplay.testgen import GENERATORS, build_universe
    >>> u = build_universe(load_bank().task("sum_evens"))
    >>> GENERATORS
    ('boundary', 'random_valid', 'trivial', 'invalid', 'duplicate', 'wrong_expectation')
    >>> u.tests[u.slices["invalid"][0]].input
    '('

What each generator stands for (the verifier's habits the seed and CoVer describe):

- ``boundary``          edge inputs (empty, singleton, ties) with the reference's output;
- ``random_valid``      i.i.d. draws of the task's input generator (small input spaces repeat,
                        which is the concentration bias duplicate-input pruning meets);
- ``trivial``           inputs every candidate gets right: always-pass tests that raise pass
                        rates and carry no information (permissiveness collapse);
- ``invalid``           a malformed literal or a wrong number of arguments;
- ``duplicate``         a copy of a test already drawn in the same batch (resolved by the
                        sampler, so it has no slice here);
- ``wrong_expectation`` a valid input whose expected value is a buggy candidate's output (or a
                        perturbed reference output): it rewards the bug, so its column
                        anti-correlates with y and the covariance gate closes on it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import numpy as np

from .bank import CodeTask, call
from .executor import Executor, TestCase, _time_limit

__all__ = ["GENERATORS", "Universe", "build_universe", "perturb"]

GENERATORS = ("boundary", "random_valid", "trivial", "invalid", "duplicate", "wrong_expectation")
N_WRONG = 8
N_TRIVIAL = 4
BUG_TIMEOUT_S = 1.0  # per in-process call of a buggy candidate (the trusted executor's budget)
INVALID_INPUTS = ("(", "([1, 2],", "(1, 2, 3, 4, 5, 6, 7)")  # two unparsable, one wrong arity


def perturb(value: Any) -> Any:
    """A nearby but different value of the same kind (for wrong expected values)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 1.0
    if value is None:
        return 0
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, list):
        return [*value, 0]
    if isinstance(value, tuple):
        return (perturb(value[0]), *value[1:]) if value else (0,)
    if isinstance(value, dict):
        return {**value, "_": 0}
    return None


@dataclass(frozen=True)
class Universe:
    """Every test a task's verifier can emit, and the candidates' pass table on them."""

    task_id: str
    tests: tuple[TestCase, ...]
    input_ids: np.ndarray  # (U,) equal id = equal parsed input
    invalid: np.ndarray  # (U,) bool: the test does not parse
    slices: dict[str, tuple[int, int]]  # generator → [start, stop) into tests
    passed: np.ndarray | None = None  # (n_candidates, U) bool, filled by with_table


def _safe_call(src: str, entry: str, inp: str) -> tuple[bool, Any]:
    """A buggy candidate's output, run in this process (bank code only): a hand-written bug in
    a bank file may loop or exit, so it has the trusted executor's time budget (main thread)
    and whatever it raises, sys.exit included, is "no output"."""
    try:
        with _time_limit(BUG_TIMEOUT_S):
            return True, call(src, entry, inp)
    except KeyboardInterrupt:
        raise
    except BaseException:
        return False, None


def build_universe(task: CodeTask, executor: Executor | None = None) -> Universe:
    """The task's test universe; with ``executor``, also its (candidates × tests) pass table
    (trivial tests are chosen from that table, so without an executor they are the boundary
    inputs every candidate passes on the GT run)."""
    entry = task.entry_point
    boundary = [TestCase(i, task.expected(i)) for i in task.boundary_inputs]
    rand = [TestCase(i, task.expected(i)) for i in task.random_inputs]
    valid = boundary + rand
    if executor is not None:
        vt = executor.run([c.source for c in task.candidates], valid, entry_point=entry).passed
    else:
        vt = np.ones((len(task.candidates), len(valid)), bool)
    # trivial: inputs everyone passes; else the most-passed ones
    n_pass = vt.sum(axis=0)
    order = np.argsort(-n_pass, kind="stable")
    trivial = [valid[int(j)] for j in order[:N_TRIVIAL] if n_pass[j] == n_pass.max()]
    invalid = [TestCase(i, "0") for i in INVALID_INPUTS]
    wrong = []
    buggy = [c for c in task.candidates if c.y < 1.0]
    for inp in list(dict.fromkeys(task.random_inputs))[:N_WRONG]:
        ref = call(task.reference, entry, inp)
        alt = None
        for c in buggy:
            ok, out = _safe_call(c.source, entry, inp)
            if ok and repr(out) != repr(ref):
                alt = out
                break
        wrong.append(TestCase(inp, repr(alt if alt is not None else perturb(ref))))
    groups = {
        "boundary": boundary,
        "random_valid": rand,
        "trivial": trivial,
        "invalid": invalid,
        "duplicate": [],
        "wrong_expectation": wrong,
    }
    tests: list[TestCase] = []
    slices = {}
    for g in GENERATORS:
        slices[g] = (len(tests), len(tests) + len(groups[g]))
        tests += groups[g]
    keys: dict[str, int] = {}
    ids, bad = [], []
    for t in tests:
        try:
            key = repr(ast.literal_eval(t.input))
            bad.append(False)
        except (ValueError, SyntaxError):
            key = "invalid:" + t.input
            bad.append(True)
        ids.append(keys.setdefault(key, len(keys)))
    u = Universe(task.task_id, tuple(tests), np.array(ids), np.array(bad), slices)
    if executor is None:
        return u
    res = executor.run([c.source for c in task.candidates], list(tests), entry_point=entry)
    return Universe(
        u.task_id,
        u.tests,
        u.input_ids,
        u.invalid | res.invalid_test.any(axis=0),
        u.slices,
        res.passed,
    )
