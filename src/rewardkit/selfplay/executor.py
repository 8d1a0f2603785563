"""Programs × tests → pass matrix and output hashes, cached by content hash.

    >>> from rewardkit.selfplay.executor import TestCase, owned_executor
    >>> with owned_executor(None) as ex:  # cached; the sandbox when available; closed on exit
    ...     res = ex.run(["def f(x):\\n    return x + 1\\n"], [TestCase("(1,)", "2")],
    ...                  entry_point="f")
    >>> res.passed.tolist()
    [[True]]

Three executors share one small interface, ``run(programs, tests, *, entry_point)``:

- :class:`SandboxExecutor` runs through ``rewardkit.sandbox.Sandbox`` (isolated children; the
  parent compares outputs). It is the default whenever that package is importable.
- :class:`TrustedExecutor` runs programs **in this process**. It exists only for code this
  package ships itself — the embedded bank's references, hand-written candidates and their AST
  mutants — where the sandbox is unavailable. It is not a sandbox and must never see model
  output. Its outputs go through the sandbox's own comparison and hashing, so both executors
  give the same pass table and output hashes.
- :class:`CachedExecutor` wraps either and runs each (program, test) pair at most once, keyed by
  the SHA-256 of the program text, the test and the entry point; the self-play simulation
  draws from a finite universe, so after the first steps every cell is a cache hit.
"""

from __future__ import annotations

import builtins
import gc
import hashlib
import io
import random
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .._json import JsonMixin
from .._optional import have
from .._validation import Interval, validate_params

__all__ = [
    "CachedExecutor",
    "ExecutionResult",
    "Executor",
    "SandboxExecutor",
    "TestCase",
    "TrustedExecutor",
    "default_executor",
    "default_executor_name",
    "owned_executor",
]

if have("rewardkit.sandbox"):
    from ..sandbox import TestCase
else:  # the sandbox area is optional at import time; same fields as sandbox.TestCase

    @dataclass(frozen=True)
    class TestCase:  # type: ignore[no-redef]
        """A test: Python literals for the argument tuple and the expected value."""

        input: str
        expected: str


@dataclass(frozen=True)
class ExecutionResult(JsonMixin):
    """One run: ``passed`` (m, K) bool, ``output_hash`` (m, K) str (hash of the program's actual
    output or of its error kind) and ``invalid_test`` (m, K) bool (the test itself does not
    parse)."""

    passed: np.ndarray
    output_hash: np.ndarray
    invalid_test: np.ndarray


class Executor(Protocol):
    name: str

    def run(
        self, programs: Sequence[str], tests: Sequence[TestCase], *, entry_point: str
    ) -> ExecutionResult: ...


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class _Timeout(Exception):
    pass


_REARM_S = 0.05


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """A SIGALRM budget where signals are available (main thread); otherwise none is needed
    for the bank's own code, which has no unbounded loop (mutations never touch ``while``).

    An alarm that lands in a finaliser or a ``gc`` callback raises there, where Python prints
    the exception and goes on: the budget would be lost and the print would reach pytest as an
    unraisable exception. So the timer re-fires every ``_REARM_S`` until the region ends, the
    lost alarms are dropped from ``sys.unraisablehook`` (any other exception goes on to the
    hook before), and the cyclic collector is paused inside the region: a collection of the
    caller's heap is neither charged to the program nor a place the alarm can be lost."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    live = True

    def _raise(signum: int, frame: Any) -> None:
        if live:
            raise _Timeout

    hook = sys.unraisablehook

    def _drop_lost_alarm(unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, _Timeout):
            hook(unraisable)

    collecting = gc.isenabled()
    old = signal.signal(signal.SIGALRM, _raise)
    sys.unraisablehook = _drop_lost_alarm
    gc.disable()
    signal.setitimer(signal.ITIMER_REAL, seconds, _REARM_S)
    try:
        yield
    finally:
        while True:  # an alarm may land here before ``live`` is cleared: clear it again
            try:
                live = False
                signal.setitimer(signal.ITIMER_REAL, 0)
                break
            except _Timeout:
                continue
        signal.signal(signal.SIGALRM, old)
        sys.unraisablehook = hook
        if collecting:
            gc.enable()


class _Discard(io.TextIOBase):
    """A stdout that keeps nothing."""

    def write(self, s: str) -> int:
        return len(s)


class TrustedExecutor:
    """In-process execution of this package's own programs (see the module docstring).

    It produces the sandbox's raw cells — the same kinds and payloads as its children send —
    and hands them to the sandbox's own comparison (``rewardkit.sandbox.table.build_table``), so
    pass tables and output hashes are those the sandbox would give, cell for cell."""

    name = "trusted-in-process"

    @validate_params({"timeout_s": [Interval(float, 0.001, 3600.0)]})
    def __init__(self, timeout_s: float = 1.0) -> None:
        self.timeout_s = timeout_s

    def run(
        self, programs: Sequence[str], tests: Sequence[TestCase], *, entry_point: str
    ) -> ExecutionResult:
        from ..sandbox.table import build_table, prepare_tests

        prep = prepare_tests(list(tests))
        valid = [j for j, text in enumerate(prep.inputs) if text is not None]
        cells: list[tuple[int, int, str, float, str]] = []
        state = random.getstate()  # programs see random.seed(0), as in the sandbox's children
        try:  # and what they print is dropped, as the sandbox drops it (stdout may carry JSON)
            with redirect_stdout(_Discard()):
                for i, src in enumerate(programs):
                    cells += self._row(i, src, valid, prep.inputs, entry_point)
        finally:
            random.setstate(state)
        table = build_table(
            len(programs),
            prep,
            cells,
            isolation=(),
            timeout_s=self.timeout_s,
            memory_mb=0,
            backend=self.name,
        )
        return _result(table)

    def _row(
        self, i: int, src: str, valid: list[int], inputs: list[str | None], entry: str
    ) -> list[tuple[int, int, str, float, str]]:
        """One program's cells, classified as ``rewardkit.sandbox._child.run_program`` does."""
        from ..sandbox._child import MISSING_ENTRY, TEXT_CAP, _entry, _NoEntry, _typing_names
        from ..sandbox._values import Unserialisable, canon, parse_literal

        def row_fails(kind: str, payload: str) -> list[tuple[int, int, str, float, str]]:
            return [(i, j, kind, 0.0, payload) for j in valid]

        try:
            code = compile(src, "<program>", "exec")
        except MemoryError:
            return row_fails("M", "")
        except Exception as e:  # SyntaxError, ValueError (null bytes), RecursionError
            return row_fails("S", type(e).__name__)
        g: dict[str, Any] = {"__name__": "solution", "__builtins__": builtins}
        if "Solution" in code.co_names:
            g.update(_typing_names(code))
        random.seed(0)
        try:
            with _time_limit(self.timeout_s):
                exec(code, g)
                fn, make = _entry(g, entry)
        except _Timeout:
            return row_fails("T", "")
        except MemoryError:
            return row_fails("M", "")
        except _NoEntry:
            return row_fails("E", MISSING_ENTRY.format(entry=entry))
        except (Exception, SystemExit) as e:
            return row_fails("E", type(e).__name__[:100])
        cells = []
        for j in valid:
            args = parse_literal(inputs[j])  # type: ignore[arg-type]  # fresh objects per test
            random.seed(0)
            t0 = time.perf_counter()
            try:
                with _time_limit(self.timeout_s):
                    call = fn if make is None else getattr(make(), entry)  # a fresh Solution()
                    text = canon(call(*args))
                kind, payload = "V", text
                if len(text) > TEXT_CAP:  # the sandbox sends a hash and compares it exactly
                    kind, payload = "H", hashlib.sha256(text.encode()).hexdigest()
            except _Timeout:
                kind, payload = "T", ""
            except MemoryError:
                kind, payload = "M", ""
            except Unserialisable as e:
                kind, payload = "U", str(e.args[0])[:100]
            except (Exception, SystemExit) as e:
                kind, payload = "E", type(e).__name__[:100]
            cells.append((i, j, kind, time.perf_counter() - t0, payload))
        return cells


def _result(table: Any) -> ExecutionResult:
    """The executor view of a sandbox ``ExecutionTable``."""
    from ..sandbox import Status

    return ExecutionResult(
        np.asarray(table.passed, dtype=bool),
        np.asarray(table.output_hash, dtype=object),
        np.asarray(table.status) == Status.INVALID_TEST,
    )


class SandboxExecutor:
    """``rewardkit.sandbox.Sandbox`` behind the executor interface; use as a context manager or
    call :meth:`close`."""

    name = "sandbox"

    def __init__(self, **sandbox_kwargs: Any) -> None:
        from ..sandbox import Sandbox

        self._sb = Sandbox(**sandbox_kwargs)
        self._sb.__enter__()
        self.isolation: tuple[str, ...] = ()

    def run(
        self, programs: Sequence[str], tests: Sequence[TestCase], *, entry_point: str
    ) -> ExecutionResult:
        table = self._sb.run(list(programs), list(tests), entry_point=entry_point)
        self.isolation = tuple(table.isolation)
        return _result(table)

    def close(self) -> None:
        self._sb.__exit__(None, None, None)

    def __enter__(self) -> SandboxExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def default_executor_name() -> str:
    """What :func:`default_executor` would return, without starting it."""
    return SandboxExecutor.name if have("rewardkit.sandbox") else TrustedExecutor.name


def default_executor(**sandbox_kwargs: Any) -> Executor:
    """The sandbox when ``rewardkit.sandbox`` is importable; else :class:`TrustedExecutor`,
    which is only fit for this package's own bank programs."""
    if have("rewardkit.sandbox"):
        return SandboxExecutor(**sandbox_kwargs)
    return TrustedExecutor()


@contextmanager
def owned_executor(executor: Executor | None) -> Iterator[Executor]:
    """The caller's executor as is, or a cached default one that is closed on exit."""
    if executor is not None:
        yield executor
        return
    ex = CachedExecutor(default_executor())
    try:
        yield ex
    finally:
        ex.close()


class CachedExecutor:
    """Runs each (program, test, entry point) at most once; counts what it ran and reused."""

    def __init__(self, inner: Executor) -> None:
        self.inner = inner
        self.name = f"cached({inner.name})"
        self._cache: dict[tuple[str, str, str], tuple[bool, str, bool]] = {}
        self.executions = 0  # cells actually run
        self.hits = 0  # cells answered from the cache

    def run(
        self, programs: Sequence[str], tests: Sequence[TestCase], *, entry_point: str
    ) -> ExecutionResult:
        pk = [_sha(p) for p in programs]
        tk = [_sha(f"{t.input}\x00{t.expected}") for t in tests]
        missing_rows = {}
        for i, p in enumerate(pk):
            cols = [j for j, t in enumerate(tk) if (entry_point, p, t) not in self._cache]
            if cols:
                missing_rows[i] = cols
        # one inner call over the union of missing tests for the rows that miss any
        if missing_rows:
            rows = sorted(missing_rows)
            cols = sorted({j for c in missing_rows.values() for j in c})
            res = self.inner.run(
                [programs[i] for i in rows], [tests[j] for j in cols], entry_point=entry_point
            )
            self.executions += len(rows) * len(cols)
            for a, i in enumerate(rows):
                for b, j in enumerate(cols):
                    self._cache[(entry_point, pk[i], tk[j])] = (
                        bool(res.passed[a, b]),
                        str(res.output_hash[a, b]),
                        bool(res.invalid_test[a, b]),
                    )
        m, K = len(programs), len(tests)
        passed = np.zeros((m, K), dtype=bool)
        out = np.empty((m, K), dtype=object)
        inv = np.zeros((m, K), dtype=bool)
        for i, p in enumerate(pk):
            for j, t in enumerate(tk):
                passed[i, j], out[i, j], inv[i, j] = self._cache[(entry_point, p, t)]
        self.hits += m * K - sum(len(c) for c in missing_rows.values())
        return ExecutionResult(passed, out, inv)

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()
