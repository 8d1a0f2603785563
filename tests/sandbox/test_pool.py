"""The zygote pool: retries, resumed rows, lost workers, memory caps, small workers."""

from __future__ import annotations

import os
import shutil
import signal
import time

import numpy as np
import pytest

from rewardkit._optional import have
from rewardkit.sandbox import Sandbox, Status, TestCase

TESTS = [TestCase(f"({k},)", f"{k * 2}") for k in range(4)]


@pytest.fixture(scope="module")
def sb():
    with Sandbox(timeout_s=1.0, memory_mb=256, workers=2) as box:
        yield box


def test_timeout_cell_is_retried_once(sb):
    """A test that stalls without using CPU (what a loaded machine looks like) is retried: the
    first attempt sleeps past its budget, the retry, started after t0, passes."""
    t0 = time.time() + 0.5  # the first attempt starts before t0, the retry ≥ 1 s later
    prog = (
        f"import time\ndef f(x):\n    if x == 2 and time.time() < {t0!r}:\n"
        "        time.sleep(30)\n    return 2 * x\n"
    )
    forks = sb._pool.forks
    table = sb.run([prog], TESTS, entry_point="f")
    assert list(table.status[0]) == [Status.PASS] * 4
    assert sb._pool.forks - forks == 2  # the row, then the retry of cell 2


def test_a_kill_resumes_the_row(sb):
    """os._exit in test 1 kills the child; tests 2 and 3 still run, in a fresh child."""
    prog = "import os\ndef f(x):\n    if x == 1:\n        os._exit(3)\n    return 2 * x\n"
    table = sb.run([prog], TESTS, entry_point="f")
    assert list(table.status[0]) == [Status.PASS, Status.CRASH, Status.PASS, Status.PASS]
    assert table.detail[0, 1] == "exited with status 3"


def test_c_level_loop_is_killed_and_the_row_resumes(sb):
    prog = (
        "import collections, itertools\n"
        "def f(x):\n    if x == 0:\n        collections.deque(itertools.count(), maxlen=0)\n"
        "    return 2 * x\n"
    )
    table = sb.run([prog], TESTS, entry_point="f")
    assert list(table.status[0]) == [Status.TIMEOUT, Status.PASS, Status.PASS, Status.PASS]
    assert table.durations_s[0, 0] >= 1.0


def test_module_level_failures_fill_the_row(sb):
    progs = [
        "raise RuntimeError('at import')\ndef f(x):\n    return 2 * x\n",
        "def g(x):\n    return 2 * x\n",
        "while True:\n    pass\n",
    ]
    table = sb.run(progs, TESTS, entry_point="f")
    assert set(table.status[0]) == {Status.ERROR} and table.detail[0, 0] == "RuntimeError"
    assert set(table.status[1]) == {Status.ERROR} and "missing entry point f" in table.detail[1, 0]
    assert set(table.status[2]) == {Status.TIMEOUT}


def test_memory_is_capped_per_program(sb):
    progs = [
        "def f(x):\n    b = bytearray(300 * 2**20)\n    return 2 * x\n",  # over 256 MiB
        "def f(x):\n    b = bytearray(64 * 2**20)\n    return 2 * x\n",  # well under
    ]
    table = sb.run(progs, TESTS, entry_point="f")
    assert set(table.status[0]) == {Status.MEMORY}
    assert set(table.status[1]) == {Status.PASS}


def test_workers_stay_small(sb):
    sb.run(["def f(x):\n    return 2 * x\n"] * 8, TESTS, entry_point="f")
    assert all(0 < kb < 64 * 1024 for kb in sb._pool.worker_rss_kb)
    assert all(0 < kb < 64 * 1024 for kb in sb._pool.worker_peak_kb)


def test_a_lost_worker_is_replaced():
    progs = ["def f(x):\n    return 2 * x\n"] * 6
    with Sandbox(timeout_s=1.0, workers=2) as box:
        victim = box._pool.workers[0].proc.pid
        os.killpg(victim, signal.SIGKILL)  # our own worker, started by this test
        table = box.run(progs, TESTS, entry_point="f")
        assert victim not in box._pool.worker_pids()
        again = box.run(progs, TESTS, entry_point="f")
    # At most the one cell that was in flight is lost; everything else is computed.
    assert (table.status == Status.CRASH).sum() <= 1
    assert ((table.status == Status.PASS) | (table.detail == "worker lost")).all()
    assert (again.status == Status.PASS).all()


def test_close_leaves_nothing_running():
    box = Sandbox(timeout_s=1.0, workers=2).start()
    pids = box._pool.worker_pids()
    box.run(["def f(x):\n    return 2 * x\n"], TESTS, entry_point="f")
    box.close()
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}")


def test_isolation_is_reported(sb):
    levels = sb.isolation
    assert levels[0] == "rlimits"
    if os.geteuid() == 0:
        assert "uid-drop" in levels
        assert ("bwrap" in levels) != ("unshare" in levels)  # one namespace level, never both
    # The strong paths are active wherever they are installed (CI installs bubblewrap).
    if os.geteuid() == 0 and shutil.which("bwrap"):
        assert "bwrap" in levels
    if have("pyseccomp"):
        assert "seccomp" in levels
    table = sb.run(["def f(x):\n    return 2 * x\n"], TESTS, entry_point="f")
    assert table.isolation == levels
    np.testing.assert_array_equal(table.passed, True)


def test_basic_isolation_leaves_out_bwrap_and_seccomp():
    with Sandbox(timeout_s=1.0, workers=1, isolation="basic") as box:
        assert "bwrap" not in box.isolation and "seccomp" not in box.isolation
        assert box.isolation[0] == "rlimits"
