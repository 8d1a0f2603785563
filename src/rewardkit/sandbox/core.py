"""``Sandbox``: run m untrusted programs against K tests and get an execution table.

    from rewardkit.sandbox import Sandbox, TestCase

    tests = [TestCase(input="([1, 2], 3)", expected="4"), TestCase(input="([], 0)", expected="0")]
    with Sandbox(timeout_s=2.0, memory_mb=512) as sb:
        table = sb.run(programs, tests, entry_point="solve")
    table.status, table.passed, table.isolation

Design (SPEC §7): one small stdlib-only zygote per core, started once; one fork per program;
all tests of a program in that child, each under its own budget, each record streamed as soon
as it exists; the zygote's watchdog kills and reaps the process group on silence and re-forks
for the remaining tests; this process compares actual with expected values.
"""

from __future__ import annotations

import bisect
import importlib.util
import keyword
import os
import threading
import warnings
from collections.abc import Sequence
from types import TracebackType
from typing import Any

from .._validation import Interval, Options, validate_params
from ..errors import ConfigError
from ._child import SCRIPT
from ._pool import LocalPool
from .cases import InvalidTest, StdioTest, TestCase
from .table import AnyTest, ExecutionTable, build_table, prepare_tests

__all__ = ["Sandbox", "SandboxWarning"]


class Sandbox:
    """Workers that execute generated programs safely; use as a context manager (or ``close()``).

    ``timeout_s`` is the budget of each test (and of the program's import), ``memory_mb`` the
    address-space cap of each program, ``workers`` the zygotes per machine (default: one per
    core), ``backend`` "local" or "ray" (one actor per node owning that node's zygotes).
    ``isolation="strict"`` (the default) confines every program — seccomp allow-list, private
    pid/IPC/network namespaces through bubblewrap or a Landlock domain, reads limited to the
    interpreter, the standard library and ``packages``, writes to a fresh per-program directory —
    and refuses to start, naming what is missing, when it cannot.  ``"basic"`` (rlimits, the uid
    drop as root) is an explicit opt-in for debugging and warns: it is not safe for untrusted code.
    ``confinement`` picks "bwrap" or "landlock" instead of "auto" (bwrap, else Landlock);
    ``packages`` names installed packages programs may import, read-only (e.g. ``("numpy",)``).
    """

    @validate_params(
        {
            "timeout_s": [Interval(float, 0.001, 3600.0)],
            "memory_mb": [Interval(int, 64, 2**20)],
            "workers": [Interval(int, 1, 1024), None],
            "backend": [Options(("local", "ray"))],
            "isolation": [Options(("strict", "basic"))],
            "confinement": [Options(("auto", "bwrap", "landlock"))],
        }
    )
    def __init__(
        self,
        *,
        timeout_s: float = 2.0,
        memory_mb: int = 512,
        workers: int | None = None,
        backend: str = "local",
        isolation: str = "strict",
        confinement: str = "auto",
        packages: Sequence[str] = (),
    ) -> None:
        self.timeout_s, self.memory_mb = float(timeout_s), int(memory_mb)
        self.workers = None if workers is None else int(workers)
        self.backend, self.isolation_mode, self.confinement = backend, isolation, confinement
        self.packages = _check_packages(packages)
        if self.isolation_mode == "basic":
            warnings.warn(
                "Sandbox(isolation='basic') runs programs with rlimits only (and the uid drop "
                "as root): no seccomp, no namespaces, reads and writes not confined. Do not use "
                "it for untrusted code.",
                SandboxWarning,
                stacklevel=3,  # the caller of __init__, past validate_params's wrapper
            )
        self._as_uid: int | None = None  # tests of the unprivileged path (root only)
        self._python: str | None = None
        self._pool: LocalPool | None = None
        self._ray: Any = None  # rewardkit.sandbox._ray.RayBackend, imported with Ray
        self._lock = threading.Lock()  # one run at a time: the workers serve one batch

    # ------------------------------------------------------------------------------ lifecycle
    def start(self) -> Sandbox:
        """Start the workers (done by ``with`` or the first ``run``)."""
        if self.backend == "local" and self._pool is None:
            n = self.workers or os.cpu_count() or 1
            self._pool = LocalPool(
                self.timeout_s,
                self.memory_mb,
                n,
                self.isolation_mode,
                prefer=self.confinement,
                packages=self.packages,
                as_uid=self._as_uid,
                python=self._python,
            )
        elif self.backend == "ray" and self._ray is None:
            from ._ray import RayBackend

            self._ray = RayBackend(
                self.timeout_s,
                self.memory_mb,
                self.workers,
                self.isolation_mode,
                packages=self.packages,
            )  # the actors plan their own node's confinement (strict refuses there too)
        return self

    def close(self) -> None:
        """Stop every worker; nothing is left running."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        if self._ray is not None:
            self._ray.close()
            self._ray = None

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(
        self, exc_type: type | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def isolation(self) -> tuple[str, ...]:
        """The isolation levels active in the workers (verified by a probe child at start)."""
        self.start()
        if self._pool is not None:
            return self._pool.isolation
        assert self._ray is not None
        return self._ray.isolation

    def isolation_report(self) -> dict:
        """What confines the programs here: mode, bubblewrap (path, source, version), Landlock
        ABI, the seccomp allow-list, uid, readable paths, the write directory and its cap, the
        verified levels, and what is missing.  JSON-ready."""
        self.start()
        if self._pool is not None:
            return self._pool.report()
        return {"mode": self.isolation_mode, "levels": list(self.isolation), "backend": "ray"}

    # ----------------------------------------------------------------------------------- run
    def run(
        self,
        programs: Sequence[str],
        tests: Sequence[TestCase | StdioTest | InvalidTest],
        *,
        entry_point: str | None = None,
    ) -> ExecutionTable:
        """Execute every program on every test; return the (m, K) table.

        ``TestCase`` tests call ``entry_point(*input)``; ``StdioTest`` tests run each program
        as a script (``entry_point`` stays None); one run holds one kind.  A program that does
        not compile is a SYNTAX row; a test whose input or expected value is not a literal, or
        an ``InvalidTest``, is an INVALID_TEST column.  Nothing a program does raises here."""
        programs = _check_programs(programs)
        tests = _check_tests(tests)
        entry = _check_entry(tests, entry_point)
        prep = prepare_tests(tests)
        with self._lock:
            self.start()
            rows = list(range(len(programs)))
            if self._pool is not None:
                cells = self._pool.execute(programs, rows, prep.inputs, entry)
            else:
                assert self._ray is not None
                cells = self._ray.execute(programs, prep.inputs, entry)
        return self._table(len(programs), prep, cells)

    def _table(self, m: int, prep: Any, cells: Sequence) -> ExecutionTable:
        """The (m, K) table of these raw cells, with this sandbox's settings."""
        return build_table(
            m,
            prep,
            cells,
            isolation=self.isolation,
            timeout_s=self.timeout_s,
            memory_mb=self.memory_mb,
            backend=self.backend,
        )

    def run_many(
        self,
        problems: Sequence[tuple[Sequence[str], Sequence[AnyTest]]],
        *,
        entry_point: str | None = None,
    ) -> list[ExecutionTable]:
        """Several problems of one kind in one pass over the workers: ``problems`` is a list
        of ``(programs, tests)``, each problem's programs run on its own tests only, and the
        tables are those ``run`` gives problem by problem (``entry_point`` for them all).  One
        run per problem waits for its slowest program before the next starts, and leaves
        workers idle when a problem has fewer programs than there are workers; this does not.
        A child holds its own problem's inputs only (``LocalPool.execute_groups``).  The Ray
        backend runs the problems one by one."""
        checked = [(_check_programs(p), _check_tests(t)) for p, t in problems]
        if not checked:
            return []
        entry = _check_entry([t for _, ts in checked for t in ts], entry_point)
        preps = [prepare_tests(ts) for _, ts in checked]
        if self.backend != "local":
            return [self.run(p, t, entry_point=entry_point) for p, t in checked]
        groups, rows, first_rows = [], 0, []
        for (progs, _), prep in zip(checked, preps):
            first_rows.append(rows)
            groups.append((progs, range(rows, rows + len(progs)), prep.inputs))
            rows += len(progs)
        with self._lock:
            self.start()
            assert self._pool is not None
            cells = self._pool.execute_groups(groups, entry)
        own: list[list] = [[] for _ in checked]
        for row, *rest in cells:  # rows are the pool's own ints; test indices the problem's
            k = bisect.bisect_right(first_rows, row) - 1
            own[k].append((row - first_rows[k], *rest))
        return [
            self._table(len(progs), prep, mine)
            for (progs, _), prep, mine in zip(checked, preps, own)
        ]


class SandboxWarning(UserWarning):
    """A sandbox runs with weaker isolation than the default (``isolation="basic"``)."""


def _check_packages(packages: Sequence[str]) -> tuple[str, ...]:
    if isinstance(packages, str) or not isinstance(packages, Sequence):
        raise ConfigError(
            "The 'packages' parameter of Sandbox must be a sequence of installed top-level "
            f"package names, e.g. ('numpy',). Got {type(packages).__name__}."
        )
    for name in packages:
        if not isinstance(name, str) or not name.isidentifier():
            raise ConfigError(
                "The 'packages' parameter of Sandbox must be a sequence of installed top-level "
                f"package names, e.g. ('numpy',). Got {name!r}."
            )
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise ConfigError(
                f"The 'packages' parameter of Sandbox names {name!r}, which is not an installed "
                "package (a directory with __init__.py) of this environment."
            )
    return tuple(packages)


def _check_programs(programs: Sequence[str]) -> list[str]:
    if isinstance(programs, str) or not isinstance(programs, Sequence):
        raise ConfigError(
            "The 'programs' parameter of Sandbox.run must be a sequence of source strings. "
            f"Got {type(programs).__name__}."
        )
    for k, p in enumerate(programs):
        if not isinstance(p, str):
            raise ConfigError(
                "The 'programs' parameter of Sandbox.run must be a sequence of source strings. "
                f"Got {type(p).__name__} at index {k}."
            )
    return list(programs)


def _check_tests(tests: Sequence[AnyTest]) -> list[AnyTest]:
    if isinstance(tests, str) or not isinstance(tests, Sequence):
        raise ConfigError(
            "The 'tests' parameter of Sandbox.run must be a sequence of TestCase, StdioTest or "
            f"InvalidTest. Got {type(tests).__name__}."
        )
    for k, t in enumerate(tests):
        ok = isinstance(t, (StdioTest, InvalidTest)) or (
            isinstance(t, TestCase) and isinstance(t.input, str) and isinstance(t.expected, str)
        )
        if not ok:
            raise ConfigError(
                "The 'tests' parameter of Sandbox.run must be a sequence of TestCase (str input "
                f"and expected), StdioTest or InvalidTest. Got {t!r:.200} at index {k}."
            )
    return list(tests)


def _check_entry(tests: Sequence[AnyTest], entry_point: str | None) -> str:
    """The worker's entry: the function name for TestCase tests, SCRIPT for StdioTest."""
    stdio = any(isinstance(t, StdioTest) for t in tests)
    if stdio and any(isinstance(t, TestCase) for t in tests):
        raise ConfigError(
            "The 'tests' parameter of Sandbox.run mixes TestCase and StdioTest: run each kind "
            "in its own call."
        )
    if stdio:
        if entry_point is not None:
            raise ConfigError(
                "The 'entry_point' parameter of Sandbox.run must be None for StdioTest tests "
                f"(the program runs as a script). Got {entry_point!r}."
            )
        return SCRIPT
    if (
        not isinstance(entry_point, str)
        or not entry_point.isidentifier()
        or keyword.iskeyword(entry_point)
    ):
        raise ConfigError(
            "The 'entry_point' parameter of Sandbox.run must be a Python identifier for "
            f"TestCase tests. Got {entry_point!r}."
        )
    return entry_point
