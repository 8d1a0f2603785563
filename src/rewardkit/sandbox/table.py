"""Execution tables: statuses, test cases, the parent-side comparison and graded correctness.

    table.status          # (m, K) int8 array of Status codes: table.status == Status.PASS
    table.passed          # (m, K) bool
    y = graded_correctness(table, gt_columns=range(16, 32))   # (m,) fraction of GT tests passed

The comparison of actual and expected values happens here, in the sandbox's own process: the
workers only send the canonical text of what a program returned.  A program can therefore make
its output anything it likes, but never make a wrong output compare equal.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._json import JsonMixin, content_hash
from ..errors import ConfigError
from ._compare import (
    Malformed,
    check_cell,
    check_test_literal,
    parse_bounded,
    safe_text,
    tree_equal,
    values_equal,
)
from ._stdio import normalised_sha, stdout_equal
from ._values import TEXT_CAP, Unserialisable, canon, parse_literal
from .cases import InvalidTest, StdioTest, TestCase

__all__ = ["ExecutionTable", "Status", "TestCase", "graded_correctness", "values_equal"]


class Status(enum.IntEnum):
    """What happened in one (program, test) cell."""

    PASS = 0  # returned a value equal to the expected one
    FAIL = 1  # returned a different (or unserialisable) value
    ERROR = 2  # raised an exception (sys.exit included)
    TIMEOUT = 3  # exceeded its per-test time budget (after one retry when load could explain it)
    MEMORY = 4  # exceeded memory_mb
    CRASH = 5  # the child died without a record (os._exit, a signal, a protocol violation)
    SYNTAX = 6  # the program does not compile (the whole row)
    INVALID_TEST = 7  # the test's input or expected value is not a valid literal (the column)


_KIND_STATUS = {
    "E": Status.ERROR,
    "U": Status.FAIL,
    "T": Status.TIMEOUT,
    "M": Status.MEMORY,
    "C": Status.CRASH,
    "S": Status.SYNTAX,
}


@dataclass(frozen=True)
class _Prepared:
    """Tests parsed once: canonical input texts for the workers, expected values for us."""

    inputs: list[str | None]  # canonical argument tuple, None for an invalid test
    expected: list[Any]  # value trees (``_compare``), or _BY_HASH for the largest
    expected_text: list[str | None]
    expected_sha: list[str | None]
    problems: list[str]  # why a test is invalid ("" when valid)


@dataclass(frozen=True)
class _StdoutExpect:
    """The expected output of a standard-input test and how to compare it."""

    stdout: str
    mode: str
    tol: float


AnyTest = TestCase | StdioTest | InvalidTest


def prepare_tests(tests: Sequence[AnyTest]) -> _Prepared:
    """Parse every test once.  A function-call test gives the canonical argument tuple (dict
    order kept: a program can see it) and a value tree; a standard-input test gives
    ``(stdin, mode)`` and its expected output; an invalid one gives its reason."""
    prep = _Prepared([], [], [], [], [])
    for t in tests:
        try:
            inp, tree, text, sha = _prepare(t)
        except (
            ValueError,
            SyntaxError,
            TypeError,
            RecursionError,
            MemoryError,
            Unserialisable,
            Malformed,
        ) as e:
            for column in (prep.inputs, prep.expected, prep.expected_text, prep.expected_sha):
                column.append(None)
            name = "invalid test" if isinstance(e, _InvalidTest) else type(e).__name__
            prep.problems.append(f"{name}: {str(e)[:200]}")
            continue
        prep.inputs.append(inp)
        prep.expected.append(tree)
        prep.expected_text.append(text)
        prep.expected_sha.append(sha)
        prep.problems.append("")
    return prep


def _prepare(t: AnyTest) -> tuple[str, Any, str, str]:
    if isinstance(t, InvalidTest):
        raise _InvalidTest(t.reason)
    if isinstance(t, StdioTest):
        text = canon(t.stdout)
        exp = _StdoutExpect(t.stdout, t.mode, float(t.tol))
        return canon((t.stdin, t.mode)), exp, text, normalised_sha(t.stdout, t.mode)
    check_test_literal(t.input)
    check_test_literal(t.expected)
    args = parse_literal(t.input)
    if type(args) is not tuple:
        text = t.input.strip()
        if text[:1] == "(" and text[-1:] == ")":  # "(1)": the parentheses of an expression
            text = text[1:-1].strip()
        one = f"({text},)" if len(text) <= 60 else "(x,)"
        raise ValueError(
            f"input must be the literal of the argument tuple, got {type(args).__name__}: "
            f"one argument is written {one} (the trailing comma makes the tuple)"
        )
    exp_text = canon(parse_literal(t.expected))
    tree = parse_bounded(exp_text) if len(exp_text) <= TEXT_CAP else _BY_HASH
    sha = hashlib.sha256(exp_text.encode()).hexdigest()
    return canon(args, ordered=True), tree, exp_text, sha


class _InvalidTest(ValueError):
    """An InvalidTest given by the caller (its reason is the column's detail)."""

    def __str__(self) -> str:
        return str(self.args[0])


class _Comparer:
    """Turns raw cells into (status, output hash, detail), parsing each distinct output once.

    Every cell is checked by exact type and range first (``_compare.check_cell``); a malformed
    one marks only its own cell CRASH, and one whose row or column is not an int in range is
    dropped.  Nothing here raises, and each cell costs a bounded amount (``_compare``)."""

    def __init__(self, prep: _Prepared, m: int) -> None:
        self.prep, self.m = prep, m
        self.parsed: dict[str, Any] = {}
        self.hashes: dict[str, str] = {}  # sha256[:16] of value payloads seen (they repeat)

    def __call__(self, raw: object) -> tuple[int, int, float, Status, str, str] | None:
        k = len(self.prep.inputs)
        try:
            row, idx, kind, dur, payload = check_cell(raw, self.m, k)
        except Malformed as e:
            if not _addressable(raw, self.m, k):
                return None
            row, idx = raw[0], raw[1]  # type: ignore[index]
            reason = f"malformed record: {e.args[0]}"
            return row, idx, 0.0, Status.CRASH, _sha16("C:malformed"), reason
        if kind == "V":
            status, detail = self._value(idx, payload)
            return row, idx, dur, status, self.output_hash(idx, payload), detail
        if kind == "H":  # too large to send: compared by hash, exactly
            ok = payload == self.prep.expected_sha[idx]
            status = Status.PASS if ok else Status.FAIL
            return row, idx, dur, status, payload[:16], "output compared by sha256"
        text = safe_text(payload)
        detail = f"unserialisable return value: {text}" if kind == "U" else text
        return row, idx, dur, _KIND_STATUS[kind], _sha16(f"{kind}:{text}"), detail

    def _value(self, idx: int, text: str) -> tuple[Status, str]:
        if text == self.prep.expected_text[idx]:
            return Status.PASS, ""
        expected = self.prep.expected[idx]
        if expected is _BY_HASH:
            return Status.FAIL, ""
        if type(expected) is _StdoutExpect:
            out = self._stdout(text)
            if out is None:
                return Status.CRASH, "malformed record: output is not a str literal"
            ok = stdout_equal(out, expected.stdout, expected.mode, expected.tol)
            return (Status.PASS if ok else Status.FAIL), ""
        tree = self.parsed.get(text)
        if tree is None:
            try:
                tree = parse_bounded(text)
            except Malformed as e:
                return Status.CRASH, f"malformed record: {e.args[0]}"
            if len(text) <= _CACHE_TEXT:
                self.parsed[text] = tree
        return (Status.PASS if tree_equal(tree, expected) else Status.FAIL), ""

    def _stdout(self, text: str) -> str | None:
        try:
            out = parse_bounded(text)
        except Malformed:
            return None
        return out if type(out) is str else None

    def output_hash(self, idx: int, payload: str) -> str:
        """sha256[:16] of an output: its canonical text, or for a standard-input test the
        normalised text its mode compares (so equal outputs share a hash)."""
        expected = self.prep.expected[idx]
        if type(expected) is _StdoutExpect:
            out = self._stdout(payload)
            if out is not None:
                return normalised_sha(out, expected.mode)[:16]
        h = self.hashes.get(payload)
        if h is None:
            h = _sha16(payload)
            if len(payload) <= _CACHE_TEXT:
                self.hashes[payload] = h
        return h


_CACHE_TEXT = 4096  # parsed trees of outputs up to this size are kept for reuse
_BY_HASH = object()  # an expected value too large to send as text: compared by sha256 only


def _addressable(raw: object, m: int, k: int) -> bool:
    """A record whose row and column are ints in range: a malformed one marks that cell."""
    return (
        type(raw) in (tuple, list)
        and len(raw) == 5  # type: ignore[arg-type]
        and type(raw[0]) is int  # type: ignore[index]
        and type(raw[1]) is int  # type: ignore[index]
        and 0 <= raw[0] < m  # type: ignore[index]
        and 0 <= raw[1] < k  # type: ignore[index]
    )


def _sha16(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True, eq=False)
class ExecutionTable(JsonMixin):
    """The result of ``Sandbox.run``: one row per program, one column per test."""

    status: np.ndarray  # (m, K) int8 Status codes
    passed: np.ndarray  # (m, K) bool, status == PASS
    durations_s: np.ndarray  # (m, K) float seconds of the program's own call
    output_hash: np.ndarray  # (m, K) str: sha256[:16] of the canonical output (or of the status)
    detail: np.ndarray  # (m, K) str: exception type, crash reason, invalid-test reason, or ""
    isolation: tuple[str, ...]
    timeout_s: float
    memory_mb: int
    backend: str

    @property
    def shape(self) -> tuple[int, int]:
        m, k = self.status.shape
        return int(m), int(k)

    @property
    def digest(self) -> str:
        """Content hash of statuses and output hashes (not durations): equal digests mean
        the same table, whatever the backend or the run."""
        return content_hash({"status": self.status, "output_hash": self.output_hash})

    def counts(self) -> dict[str, int]:
        """Number of cells per status name."""
        return {s.name: int((self.status == s).sum()) for s in Status}


def build_table(
    m: int,
    prep: _Prepared,
    cells: Sequence[tuple[int, int, str, float, str]],
    *,
    isolation: tuple[str, ...],
    timeout_s: float,
    memory_mb: int,
    backend: str,
) -> ExecutionTable:
    K = len(prep.inputs)
    status = np.full((m, K), int(Status.CRASH), dtype=np.int8)  # (m, K); every cell is overwritten
    durations = np.zeros((m, K))
    hashes = np.full((m, K), _sha16("C:missing"), dtype=object)
    detail = np.full((m, K), "no record", dtype=object)
    compare = _Comparer(prep, m)
    for raw in cells:
        judged = compare(raw)
        if judged is not None:
            row, idx, dur, st, h, d = judged
            status[row, idx], hashes[row, idx], detail[row, idx] = st, h, d
            durations[row, idx] = dur
    for idx, problem in enumerate(prep.problems):
        if problem:
            status[:, idx] = Status.INVALID_TEST
            hashes[:, idx] = _sha16("I:invalid test")
            detail[:, idx] = problem
    arrays = [status, status == Status.PASS, durations, hashes.astype(str), detail.astype(str)]
    for a in arrays:
        a.setflags(write=False)
    return ExecutionTable(
        status=arrays[0],
        passed=arrays[1],
        durations_s=arrays[2],
        output_hash=arrays[3],
        detail=arrays[4],
        isolation=isolation,
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        backend=backend,
    )


def graded_correctness(
    table: ExecutionTable, gt_columns: Sequence[int] | np.ndarray | None = None
) -> np.ndarray:
    """Fraction of the ground-truth tests each program passes: ``y`` of shape (m,).

    ``gt_columns`` are column indices (or a boolean mask of length K); None means every column.
    A ground-truth column that is INVALID_TEST is an error in the data, not a program's failure,
    so it raises."""
    K = table.shape[1]
    cols = np.arange(K) if gt_columns is None else np.asarray(gt_columns)
    if cols.dtype == bool:
        if cols.shape != (K,):
            raise ConfigError(
                f"The 'gt_columns' parameter of graded_correctness must be a boolean mask of "
                f"length {K} or column indices. Got a mask of shape {cols.shape}."
            )
        cols = np.flatnonzero(cols)
    if cols.size == 0 or cols.ndim != 1 or not np.issubdtype(cols.dtype, np.integer):
        raise ConfigError(
            "The 'gt_columns' parameter of graded_correctness must be a non-empty sequence of "
            f"column indices in [0, {K}). Got {gt_columns!r}."
        )
    if cols.min() < 0 or cols.max() >= K:
        raise ConfigError(
            "The 'gt_columns' parameter of graded_correctness must be column indices in "
            f"[0, {K}). Got {cols.tolist()!r}."
        )
    bad = [int(c) for c in cols if (table.status[:, c] == Status.INVALID_TEST).any()]
    if bad:
        raise ConfigError(f"Ground-truth test column(s) {bad} are INVALID_TEST: fix the tests.")
    return table.passed[:, cols].mean(axis=1)  # (m,)
