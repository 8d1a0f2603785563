"""The zygote pool: retries, resumed rows, lost workers, memory caps, small workers."""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from rewardkit.errors import RewardkitError
from rewardkit.sandbox import Sandbox, SandboxWarning, Status, TestCase, _confine, _pool

from .removal import _start, weakened_worker

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


def test_workers_stay_small():
    # A fresh Sandbox: what earlier tests ran in the shared one must not raise these peaks.
    with Sandbox(timeout_s=1.0, memory_mb=256, workers=2) as box:
        box.run(["def f(x):\n    return 2 * x\n"] * 8, TESTS, entry_point="f")
        assert all(0 < kb < 64 * 1024 for kb in box._pool.worker_rss_kb)
        assert all(0 < kb < 64 * 1024 for kb in box._pool.worker_peak_kb)


ZYGOTE_MODULES = """
import os, sys
sys.path.insert(0, {sandbox!r})
import _worker
_worker.preload(_worker.PRELOAD_SLIM)
print(" ".join(sorted(m for m in {names!r} if m in sys.modules)))
print(" ".join(sorted(m for m in {names!r} if m in _worker.PRELOAD)))
"""


def test_the_zygote_imports_nothing_that_runs_in_every_child():
    """Modules that register fork handlers (threading, random) run code in every child, and
    hashlib / tempfile / typing only make the zygote larger, so every fork dearer: the zygote
    of a bwrap worker imports none of them (the children import what a program needs)."""
    names = ("threading", "random", "hashlib", "tempfile", "typing")
    code = ZYGOTE_MODULES.format(sandbox=str(_pool.WORKER.parent), names=names)
    out = subprocess.run(
        [_confine.os.path.realpath(_confine.sys.executable), "-I", "-S", "-c", code],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    imported, preloaded_without_bwrap = out.stdout.split("\n")[:2]
    assert imported == ""
    assert {"hashlib", "random", "threading"} <= set(preloaded_without_bwrap.split())


SEES_MODULES = (  # names spelt in pieces: a source naming random gets it imported (_seed_random)
    "import sys\ndef f(x):\n"
    "    return sorted(m for m in ('thr' + 'eading', 'ran' + 'dom') if m in sys.modules)\n"
)


@pytest.mark.parametrize("confinement", ["bwrap", "landlock"])
def test_what_a_child_can_import_itself_is_not_preloaded(confinement):
    """The probe child tries to import each module of the long list; where the children can
    read the standard library (bubblewrap; Landlock with the interpreter reachable) none of
    the modules with fork handlers is in the zygote, so none is in a child that did not import
    it."""
    box = Sandbox(timeout_s=1.0, memory_mb=256, workers=1, confinement=confinement)
    with _start(box):
        t = box.run([SEES_MODULES], [TestCase("(0,)", "[]")], entry_point="f")
    assert t.passed.all(), t.detail


def test_what_a_child_cannot_import_is_preloaded(monkeypatch, open_dir):
    """As if the probe child could not read ``random`` and ``threading`` (a Python under a
    home the dropped uid cannot traverse): the zygote imports them, and every child has them."""
    patch = "replace(_worker, '_not_importable', lambda names: ['random', 'threading'])"
    weakened_worker(monkeypatch, open_dir, patch)
    with _start(Sandbox(timeout_s=1.0, memory_mb=256, workers=1)) as box:
        t = box.run([SEES_MODULES], [TestCase("(0,)", "['random', 'threading']")], entry_point="f")
    assert t.passed.all(), t.detail


def test_worker_peak_is_its_own_not_the_callers():
    """Issue 19: the worker's peak must not inherit the caller's.  ``ru_maxrss`` carries the
    peak of the address space replaced at exec, so a worker spawned by a 200 MiB caller
    reported 200 MiB.  The caller here is made large on purpose, whatever ran before."""
    ballast = bytearray(200 << 20)
    ballast[:: 1 << 12] = b"x" * len(ballast[:: 1 << 12])  # touched: resident
    try:
        with Sandbox(timeout_s=1.0, memory_mb=256, workers=1) as box:
            box.run(["def f(x):\n    return 2 * x\n"] * 2, TESTS, entry_point="f")
            peaks = box._pool.worker_peak_kb
    finally:
        del ballast
    assert all(0 < kb < 64 * 1024 for kb in peaks), peaks


def test_a_program_s_memory_is_not_the_worker_s():
    """A program that touches 150 MiB runs in a forked child: the worker's peak stays small."""
    prog = (
        "def f(x):\n    b = bytearray(150 * 2**20)\n    b[::4096] = b'x' * len(b[::4096])\n"
        "    return 2 * x\n"
    )
    with Sandbox(timeout_s=2.0, memory_mb=256, workers=1) as box:
        table = box.run([prog], TESTS[:1], entry_point="f")
        peaks = box._pool.worker_peak_kb
    assert Status(table.status[0, 0]) == Status.PASS
    assert all(0 < kb < 64 * 1024 for kb in peaks), peaks


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
    """Strict (the default) verifies its levels in every worker and reports them in the table."""
    levels = sb.isolation
    assert levels[0] == "rlimits"
    assert "seccomp-allowlist" in levels and "reads-confined" in levels
    assert ("bwrap" in levels) != (sb._pool.plan.confinement == "landlock")
    if "bwrap" in levels:
        assert {"pid-ns", "ipc-ns", "net-ns"} <= set(levels)
    if os.geteuid() == 0:
        assert "uid-drop" in levels
    table = sb.run(["def f(x):\n    return 2 * x\n"], TESTS, entry_point="f")
    assert table.isolation == levels
    np.testing.assert_array_equal(table.passed, True)
    report = sb.isolation_report()
    assert report["mode"] == "strict" and report["levels"] == list(levels)
    assert report["seccomp"].startswith("allow-list")


def test_basic_isolation_is_an_explicit_warned_opt_in():
    with pytest.warns(SandboxWarning, match="not safe|Do not use it for untrusted code"):
        box = Sandbox(timeout_s=1.0, workers=1, isolation="basic")
    with box:
        assert box.isolation[0] == "rlimits"
        assert not {"bwrap", "landlock", "seccomp-allowlist"} & set(box.isolation)
        assert box.isolation_report()["confinement"] == "none"


def test_strict_refuses_to_start_without_confinement_and_says_what_to_install(monkeypatch):
    """No bwrap (neither the wheel nor PATH) and a kernel without Landlock: strict refuses,
    naming both and how to install them, instead of running programs unconfined."""
    monkeypatch.setattr(_confine, "find_bwrap", lambda: (None, ""))
    monkeypatch.setattr(_confine, "landlock_abi", lambda libc: 0)
    with pytest.raises(RewardkitError) as err:
        Sandbox(timeout_s=1.0, workers=1).start()
    msg = str(err.value)
    assert "isolation='strict'" in msg and "bubblewrap" in msg and "Landlock" in msg
    assert "pip install 'rewardkit[sandbox]'" in msg and "isolation='basic'" in msg


def test_strict_refuses_without_the_seccomp_allowlist(monkeypatch):
    def missing():
        raise ImportError("No module named 'pyseccomp'")

    monkeypatch.setattr(_confine, "build_allowlist_bpf", missing)
    with pytest.raises(RewardkitError, match="seccomp: the pyseccomp bindings"):
        Sandbox(timeout_s=1.0, workers=1).start()


def test_a_bwrap_that_cannot_start_falls_back_to_landlock_and_says_so(monkeypatch):
    """bwrap present but refused (here: /bin/false) → Landlock confines, and the report names
    why bwrap is not used.  Nothing silently weaker: the same strict levels are verified."""
    monkeypatch.setattr(_confine, "find_bwrap", lambda: ("/bin/false", "test"))
    if _confine.landlock_abi(ctypes.CDLL(None, use_errno=True)) < _confine.LANDLOCK_MIN_ABI:
        pytest.skip("this kernel has no Landlock ABI 6")
    with Sandbox(timeout_s=1.0, workers=1) as box:
        report = box.isolation_report()
        table = box.run(["def f(x):\n    return 2 * x\n"], TESTS, entry_point="f")
    assert report["confinement"] == "landlock" and "landlock" in table.isolation
    assert any("/bin/false" in m for m in report["missing"])
    assert (table.status == Status.PASS).all()


# ------------------------------------------------------- workers that die before the handshake
class _DeadOnArrival:
    """``subprocess.Popen`` whose first ``n`` workers (or every one for ``n=None``) exit before
    the pool writes their configuration: the pipe is broken when the write comes.  Other
    commands (ctypes looking for libc, say) run as usual."""

    def __init__(self, n, only_bwrap=False):
        self.left, self.only_bwrap, self.started = n, only_bwrap, []
        self.real = subprocess.Popen

    def __call__(self, cmd, **kw):
        worker = str(_pool.WORKER) in cmd and (not self.only_bwrap or "--unshare-pid" in cmd)
        doomed = worker and (self.left is None or self.left > 0)
        if doomed:
            if self.left is not None:
                self.left -= 1
            proc = self.real(["/bin/sh", "-c", "exit 0"], **kw)
            proc.wait()  # gone, and its end of the pipe closed
        else:
            proc = self.real(cmd, **kw)
        if worker:
            self.started.append(proc)
        return proc


def test_a_worker_dead_before_its_handshake_is_restarted(monkeypatch):
    doa = _DeadOnArrival(1)
    monkeypatch.setattr(subprocess, "Popen", doa)
    with Sandbox(timeout_s=1.0, workers=2) as box:
        table = box.run(["def f(x):\n    return 2 * x\n"], TESTS, entry_point="f")
        assert len(box._pool.workers) == 2
        assert "seccomp-allowlist" in box.isolation  # one early death is retried
    assert (table.status == Status.PASS).all()
    assert doa.left == 0 and len(doa.started) >= 3
    assert all(p.poll() is not None for p in doa.started)  # nothing left running


def test_workers_that_never_start_give_a_clear_error(monkeypatch):
    doa = _DeadOnArrival(None)
    monkeypatch.setattr(subprocess, "Popen", doa)
    box = Sandbox(timeout_s=1.0, workers=2)
    with pytest.raises(RewardkitError, match="sandbox workers failed to start twice"):
        box.start()
    assert all(p.poll() is not None for p in doa.started)


# ------------------------------------------------------------------ the process cap, not root
FORKER = (
    "import os, time\n"
    "def f(n):\n    pids = []\n    for _ in range(n):\n        pid = os.fork()\n"
    "        if pid == 0:\n            time.sleep(60)\n            os._exit(0)\n"
    "        pids.append(pid)\n    return len(pids)\n"
)


def _free_uid() -> int:
    used = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError):
                used.add(os.stat(f"/proc/{name}").st_uid)
    return next(u for u in range(61000, 62000) if u not in used)


def _as_ordinary_user(box: Sandbox) -> int:
    """As root, make ``box`` start its workers as a free uid, the way an ordinary user's would
    run (the interpreter must be one that uid can execute); returns the uid in force."""
    if os.geteuid() != 0:
        return os.getuid()
    python = "/usr/bin/python3"  # the venv's interpreter may sit under a private /root
    if not os.access(python, os.X_OK):
        pytest.skip("no system python3 to run an unprivileged worker with")
    box._as_uid, box._python = _free_uid(), os.path.realpath(python)
    return box._as_uid


def test_processes_are_capped_without_a_uid_drop_nonroot_path():
    """Without the uid drop (not root) and without seccomp (isolation="basic"), a fork bomb
    still stops at the cap: the uid's task count plus a margin.  As root the test plays an
    unprivileged user: its workers run as a free uid."""
    # One child runs both tests, and the processes it forked live on until the row ends.
    tests = [TestCase(f"({_pool.NPROC_MARGIN // 2},)", "32"), TestCase("(300,)", "300")]
    with pytest.warns(SandboxWarning):
        box = Sandbox(timeout_s=5.0, memory_mb=256, workers=1, isolation="basic")
    uid = _as_ordinary_user(box)
    with box:
        assert "uid-drop" not in box.isolation and "seccomp-allowlist" not in box.isolation
        table = box.run([FORKER], tests, entry_point="f")
    # A program that needs a few processes is not hindered by the cap ...
    assert Status(table.status[0, 0]) == Status.PASS, list(table.detail[0])
    # ... but the bomb could not create its 300: fork failed with EAGAIN (RLIMIT_NPROC).
    assert Status(table.status[0, 1]) == Status.ERROR, list(table.detail[0])
    assert table.detail[0, 1] == "BlockingIOError"
    time.sleep(0.1)
    if uid != os.getuid():
        assert not [p for p in os.listdir("/proc") if p.isdigit() and _owner(p) == uid], (
            "a process of the test uid outlived the sandbox"
        )


def test_strict_runs_unprivileged_nonroot_path():
    """The default strict sandbox started by an ordinary user (no root, no uid drop): bwrap in
    a user namespace, or Landlock; the same strict levels hold."""
    box = Sandbox(timeout_s=2.0, memory_mb=256, workers=1)
    uid = _as_ordinary_user(box)
    with box:
        levels = box.isolation
        table = box.run(["def f(x):\n    return 2 * x\n"], TESTS, entry_point="f")
        report = box.isolation_report()
    assert "uid-drop" not in levels and "seccomp-allowlist" in levels
    assert "reads-confined" in levels
    assert report["uid"].startswith(f"{uid} ")
    assert (table.status == Status.PASS).all(), list(table.detail[0])


def _owner(pid: str) -> int:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return -1


def test_the_cap_is_the_uid_task_count_plus_a_margin():
    assert _pool.nproc_cap(True, 4) == _pool.NPROC_DROPPED == 64
    here = _pool.uid_tasks(os.getuid())
    assert here >= 1  # this process at least
    cap = _pool.nproc_cap(False, 2)
    assert cap - here - 2 * _pool.NPROC_PER_WORKER - _pool.NPROC_MARGIN in range(-5, 6)


def test_a_checkout_under_tmp_runs_under_bwrap(monkeypatch, tmp_path):
    """bubblewrap gives each worker a private /tmp: a checkout or virtual environment under
    /tmp (CI's, pytest's) must be bound on top of it, not hidden by it."""
    copy = tmp_path / "sandbox"
    copy.mkdir()
    for f in Path(_pool.__file__).parent.glob("*.py"):
        shutil.copy(f, copy / f.name)
    tmp_path.chmod(0o755)
    monkeypatch.setattr(_confine, "SANDBOX_DIR", copy)
    monkeypatch.setattr(_pool, "WORKER", copy / "_zygote.py")
    assert str(copy).startswith("/tmp/") or not str(copy).startswith("/tmp")
    with Sandbox(timeout_s=1.0, workers=1) as box:
        table = box.run(["def f(x):\n    return 2 * x\n"], TESTS, entry_point="f")
        report = box.isolation_report()
    assert str(copy) in report["readable"]
    assert (table.status == Status.PASS).all(), list(table.detail[0])
