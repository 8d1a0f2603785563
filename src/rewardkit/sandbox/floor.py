"""The sandbox's speed beside the fork floor of the same machine, in the same run.

    from rewardkit.sandbox.floor import run_floor_bench
    res = run_floor_bench(512, 32)       # programs/s with full isolation ÷ forks/s of the floor

The floor is what no fork-per-program design can beat here: ``fork`` + ``_exit`` + ``waitpid``
in a loop, from a minimal interpreter (``python -I -S``, nothing imported), one per worker, all
at once, on the same cores.  The workload is trivial on purpose — 512 programs × 32 tests, all
passing, no timeouts — so what is measured is the sandbox's own cost per program (fork, confine,
stream, reap, compare).  On a shared machine the load moves both numbers, so the floor and the
sandbox are measured alternately, ``repeats`` times each, and the ratio is the median of the
per-round ratios.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

from .._json import JsonMixin
from .core import Sandbox
from .table import TestCase

__all__ = ["FloorResult", "fork_floor", "run_floor_bench", "trivial_workload"]

FLOOR_SCRIPT = (
    "import os, time\n"
    "n, end = 0, time.perf_counter() + {seconds!r}\n"
    "while time.perf_counter() < end:\n"
    "    pid = os.fork()\n"
    "    if pid == 0:\n"
    "        os._exit(0)\n"
    "    os.waitpid(pid, 0)\n"
    "    n += 1\n"
    "t = os.times()\n"
    "print(n, t.user + t.system + t.children_user + t.children_system)\n"
)


def fork_floor(workers: int, seconds: float = 1.0) -> tuple[float, float]:
    """(forks/s, CPU seconds per fork) of ``workers`` minimal interpreters forking, exiting and
    reaping at once (the CPU counts parent and child, interpreter start included)."""
    script = FLOOR_SCRIPT.format(seconds=seconds)
    procs = [
        subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", script], stdout=subprocess.PIPE, text=True
        )
        for _ in range(workers)
    ]
    t0 = time.perf_counter()
    outs = [p.communicate()[0].split() for p in procs]
    elapsed = time.perf_counter() - t0
    forks = sum(int(o[0]) for o in outs)
    return forks / elapsed, sum(float(o[1]) for o in outs) / max(forks, 1)


def _tree_cpu(pids: list[int]) -> float:
    """CPU seconds of these processes and every descendant, reaped ones included."""
    tick, total, todo = os.sysconf("SC_CLK_TCK"), 0.0, list(pids)
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/stat") as fh:
                f = fh.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo += [int(k) for k in fh.read().split()]
        except (OSError, IndexError):
            continue
        total += sum(int(x) for x in f[11:15]) / tick  # utime stime cutime cstime
    return total


def trivial_workload(n_programs: int, n_tests: int) -> tuple[list[str], list[TestCase]]:
    """Programs that return their argument (each a distinct source), tests that all pass."""
    programs = [f"def f(x):\n    return x + {k % 97} - {k % 97}\n" for k in range(n_programs)]
    return programs, [TestCase(f"({j},)", f"{j}") for j in range(n_tests)]


@dataclass(frozen=True)
class FloorResult(JsonMixin):
    n_programs: int
    n_tests: int
    workers: int
    isolation: tuple[str, ...]
    programs_per_s: tuple[float, ...]  # one per round
    floor_forks_per_s: tuple[float, ...]  # one per round, measured just before
    ratio: float  # median over rounds of programs/s ÷ floor forks/s
    cpu_ms_per_program: float  # median: workers, their children and this process together
    floor_cpu_ms_per_fork: float  # median: parent and child of the floor's forks
    cpu_ratio: float  # floor CPU per fork ÷ sandbox CPU per program
    all_passed: bool
    load_average: float


def run_floor_bench(
    n_programs: int = 512,
    n_tests: int = 32,
    *,
    workers: int | None = None,
    repeats: int = 3,
    sandbox_kwargs: dict | None = None,
) -> FloorResult:
    """Alternate the floor and the sandbox ``repeats`` times; the sandbox runs with its default
    strict isolation unless ``sandbox_kwargs`` says otherwise."""
    n = workers or os.cpu_count() or 1
    programs, tests = trivial_workload(n_programs, n_tests)
    rates, floors, ratios, passed = [], [], [], True
    cpu, floor_cpu = [], []
    with Sandbox(timeout_s=1.0, workers=n, **(sandbox_kwargs or {})) as sb:
        sb.run(programs[: 4 * n], tests, entry_point="f")  # warm: first forks, page cache
        assert sb._pool is not None
        for _ in range(repeats):
            floor, floor_cpu_per_fork = fork_floor(n, seconds=1.0)
            pids = sb._pool.worker_pids()
            c0, self0, t0 = _tree_cpu(pids), time.process_time(), time.perf_counter()
            table = sb.run(programs, tests, entry_point="f")
            rate = n_programs / (time.perf_counter() - t0)
            used = _tree_cpu(pids) - c0 + time.process_time() - self0
            passed = passed and bool(table.passed.all())
            rates.append(rate)
            floors.append(floor)
            ratios.append(rate / floor)
            cpu.append(used / n_programs)
            floor_cpu.append(floor_cpu_per_fork)
        isolation = sb.isolation
    with open("/proc/loadavg") as fh:
        load = float(fh.read().split()[0])
    return FloorResult(
        n_programs=n_programs,
        n_tests=n_tests,
        workers=n,
        isolation=isolation,
        programs_per_s=tuple(rates),
        floor_forks_per_s=tuple(floors),
        ratio=statistics.median(ratios),
        cpu_ms_per_program=statistics.median(cpu) * 1e3,
        floor_cpu_ms_per_fork=statistics.median(floor_cpu) * 1e3,
        cpu_ratio=statistics.median(floor_cpu) / statistics.median(cpu),
        all_passed=passed,
        load_average=load,
    )
