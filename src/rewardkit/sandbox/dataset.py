"""A user's problems, from a JSONL file, through the sandbox: ``rewardkit sandbox run``.

One problem per line; every program of a problem runs on every one of its tests::

    {"id": "two-sum", "entry_point": "twoSum", "programs": ["class Solution: ..."],
     "tests": [{"args": [[2, 7, 11, 15], 9], "returns": [0, 1]}], "reference": [0]}
    {"id": "add", "programs": ["print(sum(map(int, input().split())))"],
     "tests": [{"stdin": "1 2\\n", "stdout": "3\\n"}]}
    {"id": "he-0", "entry_point": "f", "programs": ["def f(x): ..."],
     "asserts": "def check(candidate):\\n    assert candidate(1) == 2\\n"}

Fields: ``id`` (a unique string), ``programs`` (a non-empty list of source texts), and exactly
one of ``tests`` (a non-empty list) or ``asserts`` (test code, parsed by ``parse_asserts``).
A test is a call — ``{"input": "<literal of the argument tuple>", "expected": "<literal>"}``,
or the same as JSON values, ``{"args": [...], "returns": ...}`` — or a standard-input test,
``{"stdin": ..., "stdout": ..., "mode": "tokens", "tol": 1e-6}``; one problem holds one kind.
``entry_point`` names the function (or the ``Solution`` method) for calls and asserts, and is
absent for standard-input tests.  ``reference`` lists the programs (0-based) that must pass
every valid test: the gold solutions a reward is checked against, so a broken test or a wrong
expected value is found before training, not after.

Nothing falls back to shipped data: a missing or malformed field is an error naming the file,
line and field, and nothing runs until the whole file is valid.
"""

from __future__ import annotations

import hashlib
import keyword
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._io import read_jsonl, require_field
from .._json import JsonMixin
from ..errors import ConfigError, InputError
from ._values import canon, parse_literal
from .cases import InvalidTest, StdioTest, TestCase, parse_asserts
from .core import Sandbox
from .table import ExecutionTable, Status, prepare_tests

__all__ = ["DatasetResult", "Problem", "ProblemResult", "load_problems", "run_problems"]

FIELDS = ("id", "programs", "tests", "asserts", "entry_point", "reference")
CALL, CALL_VALUES, STDIO = ("input", "expected"), ("args", "returns"), ("stdin", "stdout")


@dataclass(frozen=True)
class Problem:
    """One line of the file, checked: the programs, the tests, the entry point."""

    id: str
    programs: tuple[str, ...]
    tests: tuple[TestCase | StdioTest | InvalidTest, ...]
    entry_point: str | None
    reference: tuple[int, ...]


@dataclass(frozen=True)
class ProblemResult(JsonMixin):
    """A problem's table: status names and output hashes per (program, test), each
    program's pass fraction over the valid tests, the invalid tests with their reasons, and
    each cell where a reference program did not pass."""

    id: str
    status: tuple[tuple[str, ...], ...]
    detail: tuple[tuple[str, ...], ...]
    output_hash: tuple[tuple[str, ...], ...]
    pass_fraction: tuple[float, ...]
    invalid_tests: tuple[dict, ...]
    reference_failures: tuple[dict, ...]


@dataclass(frozen=True)
class DatasetResult(JsonMixin):
    """Every problem's result, and how the programs ran (no durations: the same file gives
    byte-identical JSON)."""

    source: str
    problems: tuple[ProblemResult, ...]
    isolation: tuple[str, ...]
    timeout_s: float
    memory_mb: int

    @property
    def reference_failures(self) -> int:
        return sum(len(p.reference_failures) for p in self.problems)


def load_problems(path: str | Path) -> list[Problem]:
    """Read and check the whole file (module docstring); InputError names file, line, field."""
    seen: dict[str, int] = {}  # id -> the problem's number, 1-based

    def unique(obj: dict[str, Any], where: str, line: int) -> Problem:
        p = _problem(obj, where, line)
        if p.id in seen:
            raise InputError(
                f"{p.id!r:.60} is the id of problem {seen[p.id]} too (ids are unique)",
                path=where,
                line=line,
                field="id",
            )
        seen[p.id] = len(seen) + 1
        return p

    return read_jsonl(path, unique)  # type: ignore[return-value]


def _problem(obj: dict[str, Any], path: str, line: int) -> Problem:
    def fail(field: str, message: str) -> InputError:
        return InputError(message, path=path, line=line, field=field)

    for name in obj:
        if name not in FIELDS:
            raise fail(name, f"not a field of a problem (fields: {', '.join(FIELDS)})")
    pid = require_field(obj, "id", str, path, line, accepted="a non-empty string")
    if not pid.strip():
        raise fail("id", "expected a non-empty string; got an empty one")
    programs = require_field(
        obj, "programs", list, path, line, accepted="a non-empty list of program source texts"
    )
    if not programs:
        raise fail("programs", "expected a non-empty list of program source texts; got []")
    for k, src in enumerate(programs):
        if not isinstance(src, str):
            raise fail(f"programs[{k}]", f"expected a source text; got {src!r:.60}")
    entry = require_field(
        obj, "entry_point", str, path, line, accepted="a function name", optional=True
    )
    if entry is not None and (not entry.isidentifier() or keyword.iskeyword(entry)):
        raise fail("entry_point", f"expected a Python identifier; got {entry!r:.60}")
    if ("tests" in obj) == ("asserts" in obj):
        raise fail(
            "tests",
            "give exactly one of 'tests' (a list of tests) or 'asserts' (test code); "
            + ("got both" if "tests" in obj else "got neither"),
        )
    tests: list[TestCase | StdioTest | InvalidTest]
    if "asserts" in obj:
        code = require_field(obj, "asserts", str, path, line, accepted="test code (a string)")
        if entry is None:
            raise fail("entry_point", "missing; asserts call a function: name it")
        tests = list(parse_asserts(code, entry))
        if not tests:
            raise fail("asserts", "no assert found in the test code")
    else:
        raw = require_field(obj, "tests", list, path, line, accepted="a non-empty list of tests")
        if not raw:
            raise fail("tests", "expected a non-empty list of tests; got []")
        tests = [_test(t, f"tests[{j}]", fail) for j, t in enumerate(raw)]
        kinds = {type(t) for t in tests}
        if len(kinds) > 1:
            raise fail("tests", "mixes call tests and standard-input tests (one kind a problem)")
        if StdioTest in kinds and entry is not None:
            raise fail("entry_point", "standard-input tests run the program as a script: omit it")
        if TestCase in kinds and entry is None:
            raise fail("entry_point", "missing; call tests call a function: name it")
    ref = require_field(
        obj, "reference", list, path, line, accepted="a list of program indices", optional=True
    )
    for r in ref or ():
        if type(r) is not int or not 0 <= r < len(programs):
            raise fail(
                "reference",
                f"expected indices of 'programs' (0 to {len(programs) - 1}); got {r!r:.60}",
            )
    return Problem(pid, tuple(programs), tuple(tests), entry, tuple(sorted(set(ref or ()))))


LITERALS = {
    "input": '; expected the Python literal of the argument tuple, e.g. "([1, 2], 3)" or '
    '"(5,)" (a JSON list of arguments goes in {args, returns})',
    "expected": '; expected the Python literal of the return value, e.g. "True", "None", '
    '"[0, 1]" (JSON values go in {args, returns})',
}
BATCH_PROGRAMS = 4096  # programs a pass; a problem with more is a pass of its own


def _batches(problems: Sequence[Problem]) -> list[list[int]]:
    """Indices of the problems, grouped by entry point in file order and cut where a pass
    would pass BATCH_PROGRAMS."""
    groups: dict[str | None, list[int]] = {}
    for k, p in enumerate(problems):
        groups.setdefault(p.entry_point, []).append(k)
    out: list[list[int]] = []
    for members in groups.values():
        batch: list[int] = []
        programs = 0
        for k in members:
            n = len(problems[k].programs)
            if batch and programs + n > BATCH_PROGRAMS:
                out.append(batch)
                batch, programs = [], 0
            batch.append(k)
            programs += n
        out.append(batch)
    return out


def _wrapped(test: TestCase | StdioTest | InvalidTest, output_hash: str) -> str:
    """Why a call test's FAIL may be the data's: the expected value is a one-element list and
    the program returned its element (APPS stores call-based answers so)."""
    if not isinstance(test, TestCase):
        return ""
    try:
        expected = parse_literal(test.expected)
        if type(expected) is not list or len(expected) != 1:
            return ""
        inner = hashlib.sha256(canon(expected[0]).encode()).hexdigest()[:16]
    except Exception:  # a hint only: a value that does not canonicalise gives none
        return ""
    if inner != output_hash:
        return ""
    return (
        "returned the only element of the expected one-element list: APPS wraps call-based "
        "answers so; give 'returns' unwrapped"
    )


def _test(t: object, field: str, fail: Any) -> TestCase | StdioTest:
    if not isinstance(t, dict):
        raise fail(field, f"expected an object; got {t!r:.60}")
    keys = set(t)
    for form, extra in ((CALL, ()), (CALL_VALUES, ()), (STDIO, ("mode", "tol"))):
        if set(form) <= keys and keys <= set(form) | set(extra):
            break
    else:
        raise fail(
            field,
            f"expected one of {{input, expected}} (literal texts), {{args, returns}} (JSON "
            f"values), {{stdin, stdout[, mode, tol]}}; got the fields {sorted(keys)}",
        )
    try:
        if form == CALL:
            if not isinstance(t["input"], str) or not isinstance(t["expected"], str):
                raise fail(
                    field,
                    "'input' and 'expected' are literal texts (strings); JSON values go in "
                    "{args, returns}",
                )
            return _checked(TestCase(t["input"], t["expected"]), field, CALL, fail)
        if form == CALL_VALUES:
            return _checked(TestCase.from_values(t["args"], t["returns"]), field, form, fail)
        for name in STDIO:
            if type(t[name]) is list and all(isinstance(x, str) for x in t[name]):
                raise fail(
                    f"{field}.{name}",
                    "expected a string; got a list of lines (as some APPS rows store them): "
                    "join them with newlines",
                )
        return StdioTest(
            t["stdin"], t["stdout"], mode=t.get("mode", "tokens"), tol=t.get("tol", 1e-6)
        )
    except ConfigError as e:
        raise fail(field, str(e)) from None


def _checked(case: TestCase, field: str, names: tuple[str, str], fail: Any) -> TestCase:
    """The case if the sandbox can use it, else the error naming its field: a file's call test
    is checked here, not left to be an INVALID_TEST column."""
    for name, probe in (
        (names[0], TestCase(case.input, "None")),
        (names[1], TestCase("()", case.expected)),
    ):
        why = prepare_tests([probe]).problems[0]
        if why:
            hint = LITERALS[name] if names == CALL else ""
            raise fail(f"{field}.{name}", why.removeprefix("ValueError: ") + hint)
    return case


def run_problems(problems: Sequence[Problem], sandbox: Sandbox, source: str = "") -> DatasetResult:
    """Each problem's programs on its tests, on one sandbox: problems of one kind (the same
    entry point, or standard input) share a pass over the workers (``Sandbox.run_many``) of at
    most ``BATCH_PROGRAMS`` programs."""
    tables: dict[int, ExecutionTable] = {}
    for batch in _batches(problems):
        runs = sandbox.run_many(
            [(problems[k].programs, problems[k].tests) for k in batch],
            entry_point=problems[batch[0]].entry_point,
        )
        tables.update(zip(batch, runs))
    results = []
    for n, p in enumerate(problems):
        t = tables[n]
        valid = [j for j in range(t.shape[1]) if t.status[0, j] != Status.INVALID_TEST]
        frac = tuple(float(t.passed[k, valid].mean()) if valid else 0.0 for k in range(t.shape[0]))
        invalid = tuple(
            {"test": j, "reason": str(t.detail[0, j])} for j in range(t.shape[1]) if j not in valid
        )
        failures = tuple(
            {
                "program": k,
                "test": j,
                "status": Status(int(t.status[k, j])).name,
                "detail": str(t.detail[k, j]) or _wrapped(p.tests[j], str(t.output_hash[k, j])),
            }
            for k in p.reference
            for j in valid
            if not t.passed[k, j]
        )
        results.append(
            ProblemResult(
                id=p.id,
                status=tuple(tuple(Status(int(s)).name for s in row) for row in t.status),
                detail=tuple(tuple(str(d) for d in row) for row in t.detail),
                output_hash=tuple(tuple(str(h) for h in row) for row in t.output_hash),
                pass_fraction=frac,
                invalid_tests=invalid,
                reference_failures=failures,
            )
        )
    return DatasetResult(
        source=source,
        problems=tuple(results),
        isolation=sandbox.isolation,
        timeout_s=sandbox.timeout_s,
        memory_mb=sandbox.memory_mb,
    )
