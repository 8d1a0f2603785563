"""Goal (b) through the processor: a program whose threads burn every core slows the programs of
the other workers, whose tests then time out — sabotage that raises its own group-relative
advantage.  Each worker is pinned to a core of its own (``cpu-pin``), which its programs cannot
leave (the allow-list refuses ``sched_setaffinity``): a program gets one core at most, whatever
the scheduler's autogroups do on the host (docs/sandbox.md, threat model (b)).
"""

from __future__ import annotations

import ast
import os
import platform
from types import SimpleNamespace

import pytest

from rewardkit.sandbox import Sandbox, SandboxWarning, _pool

from .test_attack_v2 import _box

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64" or len(os.sched_getaffinity(0)) < 2,
    reason="needs two cores (x86_64): on one core there is no other worker's core to take",
)

# Threads that compress in C (zlib releases the GIL, so each can hold a core), then the
# program tries to leave its core, and measures how many cores it got over 0.4 s, and on which
# cores its threads ran (``sched_getcpu``).  Both depend on what else the host runs; the cores
# it may run on (its affinity) do not.
HOG = """
import ctypes, os, random, threading, time, zlib
buf = random.randbytes(1 << 19)
getcpu = ctypes.CDLL(None).sched_getcpu
seen = set()
def burn():
    while True:
        zlib.compress(buf, 6)
        seen.add(getcpu())
threads = []
for _ in range(6):
    try:
        t = threading.Thread(target=burn, daemon=True)
        t.start()
        threads.append(t)
    except RuntimeError:
        break
def f(x):
    allowed = len(os.sched_getaffinity(0))
    try:
        os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
        left = True
    except OSError:
        left = False
    c0, t0 = time.process_time(), time.perf_counter()
    time.sleep(0.4)
    cores = (time.process_time() - c0) / (time.perf_counter() - t0)
    return [len(threads), left, round(cores, 2), sorted(seen), allowed]
"""


def _hog(box: Sandbox) -> tuple[int, bool, float, list[int], int]:
    """What the hog reported: threads started, whether it left its core, cores it used, the
    cores its threads were seen on, the number of cores it may run on."""
    cells = box._pool.execute([HOG], [0], ["(0,)"], "f")  # type: ignore[union-attr]
    (_, _, kind, _, payload), *_ = cells
    assert kind == "V", cells
    threads, left, cores, seen, allowed = ast.literal_eval(payload)
    return threads, left, cores, seen, allowed


@pytest.mark.parametrize(
    "path", ["strict_default", "strict_landlock", "nonroot_default", "nonroot_landlock"]
)
def test_a_programs_threads_get_one_core_and_cannot_leave_it(path):
    workers = len(os.sched_getaffinity(0))  # the default: one worker, and one core, each
    with _box(path, timeout_s=2.0, memory_mb=512, workers=workers) as box:
        assert "cpu-pin" in box.isolation, box.isolation
        threads, left, cores, seen, allowed = _hog(box)
    assert threads >= 4, threads  # the attack really ran: several threads burning C code
    assert not left
    assert allowed == 1, allowed
    assert cores <= 1.1, cores  # one core, however many threads
    assert len(seen) == 1, seen


def test_the_cores_are_dealt_out_so_that_every_core_is_used():
    """One core per worker by default; with fewer workers than cores every n-th core each
    (two sandboxes of 4 workers on 8 cores then share every core, instead of both taking the
    first four); with more workers than cores, round robin."""

    def dealt(n_cores: int, workers: int) -> list[list[int]]:
        pool = SimpleNamespace(cfg={"uid": None}, cpus=list(range(n_cores)), n=workers)
        return [_pool.LocalPool._worker_cfg(pool, k)["cpus"] for k in range(workers)]  # type: ignore[arg-type]

    assert dealt(2, 2) == [[0], [1]]
    assert dealt(8, 4) == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert dealt(3, 2) == [[0, 2], [1]]
    assert dealt(2, 5) == [[0], [1], [0], [1], [0]]
    assert dealt(1, 1) == [[0]]


def test_without_the_pin_the_same_program_takes_the_other_workers_core(monkeypatch):
    """Removed (no core given to the workers): the same threads run on every core, the other
    worker's too, whose programs then compete for theirs (measured: honest programs 60 % slower
    beside it with the host's autogroups off, docs/sandbox.md).  How much of the other core
    they get depends on what else the host runs (on an idle machine 1.99 cores; beside the test
    suite on the other core, sometimes one core only): asserted is that nothing keeps them from
    it."""
    kept = _pool.LocalPool._worker_cfg

    def unpinned(self, slot):
        cfg = dict(kept(self, slot))
        cfg.pop("cpus", None)
        return cfg

    monkeypatch.setattr(_pool.LocalPool, "_worker_cfg", unpinned)
    with Sandbox(timeout_s=2.0, memory_mb=512) as box:
        assert "cpu-pin" not in box.isolation, box.isolation
        threads, _, cores, seen, allowed = _hog(box)
    assert threads >= 4, threads
    assert allowed == len(os.sched_getaffinity(0)) >= 2, (allowed, seen, cores)


# Imports nothing beyond os (basic's dropped uid may reach only the pre-imported modules).
LEAVER = """
import os
def f(x):
    every = os.cpu_count() or 1
    pinned = len(os.sched_getaffinity(0)) < every  # its worker's share of the cores
    try:
        os.sched_setaffinity(0, set(range(every)))
    except OSError:
        return [pinned, False]
    return [pinned, len(os.sched_getaffinity(0)) > 1]
"""


def test_basic_pins_its_workers_but_does_not_claim_it():
    """Without the allow-list a program may move itself to any core: the workers are still
    pinned (each program starts on its worker's core), but the level is not claimed."""
    with pytest.warns(SandboxWarning):
        box = Sandbox(timeout_s=2.0, memory_mb=512, workers=2, isolation="basic")
    with box:
        assert "cpu-pin" not in box.isolation, box.isolation
        cells = box._pool.execute([LEAVER], [0], ["(0,)"], "f")  # type: ignore[union-attr]
    assert [(c[2], c[4]) for c in cells] == [("V", "[True, True]")], cells
