"""The hostile-program suite: every case ends non-PASS, the host is intact, nothing is left running.

Safety of this file itself: every bomb is capped (a fork loop at 300 processes, a memory bomb at
1.5 GiB, threads at 2000, output at 2 GiB to /dev/null), so a broken sandbox cannot take the
machine down; programs run only inside the sandbox, after its limits are in place; nothing here
signals anything but its own parent chain (never ``kill(-1)``); files are touched only in a
directory this test creates.

Each program's "attack succeeded" path returns the secret expected value through ``win(x)``, so
a broken sandbox would turn into PASS and fail the test.  The other programs do not know the
expected values: they try to fake a pass (fake records, patched harness, always-equal objects).
A program that writes a well-formed record with the right value for the current test is not a
fake: it answered the test (see docs/sandbox.md, "Integrity").
"""

from __future__ import annotations

import os
import shutil
import socket
import time
from pathlib import Path

import numpy as np
import pytest

from rewardkit.sandbox import Sandbox, Status, TestCase

from .attacks import descendants, idle_batch_processes

TESTS = [TestCase("(3,)", "1234567"), TestCase("(4,)", "7654321")]
WIN = "def win(x):\n    return {3: 1234567, 4: 7654321}[x]\n\n"
SECRET = "rk-hostile-secret-5f3a"

P, F, E, T, M, C = (Status.PASS, Status.FAIL, Status.ERROR, Status.TIMEOUT, Status.MEMORY,
                    Status.CRASH)  # fmt: skip
ANY_FAILURE = {F, E, T, M, C}


def _programs(port: int, target: Path, pytest_pid: int) -> dict[str, tuple[str, set[Status]]]:
    """name → (source, statuses allowed in every cell)."""
    return {
        "infinite loop": ("def f(x):\n    while True:\n        pass\n", {T}),
        "loop inside C code": (
            "import collections, itertools\n"
            "def f(x):\n    collections.deque(itertools.count(), maxlen=0)\n",
            {T},
        ),
        "list(itertools.count()), capped at 40M items": (
            "import itertools\n"
            "def f(x):\n    return len(list(itertools.islice(itertools.count(), 40_000_000)))\n",
            {M, T},
        ),
        "deep recursion": (
            "import sys\nsys.setrecursionlimit(10**6)\n"
            "def r(n):\n    return r(n + 1) + 1\n"
            "def f(x):\n    return r(0)\n",
            {E, C, M, T},
        ),
        "memory bomb, capped at 1.5 GiB": (
            "def f(x):\n    b = bytearray(1536 * 2**20)\n    b[::4096] = b'x' * len(b[::4096])\n"
            "    return len(b)\n",
            {M},
        ),
        # ERROR only: the fork that passes the cap fails (EAGAIN from RLIMIT_NPROC, or EPERM
        # from seccomp), so the bomb never gets to return its count of 300.
        "fork bomb, capped at 300": (
            "import os, time\n"
            "def f(x):\n    pids = []\n    for _ in range(300):\n        pid = os.fork()\n"
            "        if pid == 0:\n            time.sleep(60)\n            os._exit(0)\n"
            "        pids.append(pid)\n    return len(pids)\n",
            {E},
        ),
        "thread bomb, capped at 2000": (
            "import threading, time\n"
            "def f(x):\n    ts = []\n    for _ in range(2000):\n"
            "        t = threading.Thread(target=time.sleep, args=(30,), daemon=True)\n"
            "        t.start()\n        ts.append(t)\n    return len(ts)\n",
            {E, M, F},
        ),
        "output flood, 2 GiB": (
            "import sys\n"
            "def f(x):\n    s = 'x' * 2**20\n    for _ in range(1024):\n        print(s)\n"
            "        sys.stderr.write(s)\n    return 0\n",
            {F, T},
        ),
        "huge return value": ("def f(x):\n    return 'x' * (8 * 2**20)\n", {F, T}),
        "sys.exit(0) before the result": ("import sys\ndef f(x):\n    sys.exit(0)\n", {E}),
        "os._exit(0) before the result": ("import os\ndef f(x):\n    os._exit(0)\n", {C}),
        "always-equal object": (
            "class Eq:\n    def __eq__(self, o):\n        return True\n"
            "    def __ne__(self, o):\n        return False\n"
            "    def __repr__(self):\n        return '1234567'\n    __hash__ = object.__hash__\n"
            "def f(x):\n    return Eq()\n",
            {F},
        ),
        "always-equal int subclass": (
            "class Eq(int):\n    def __eq__(self, o):\n        return True\n"
            "    __hash__ = int.__hash__\n    def __repr__(self):\n        return '1234567'\n"
            "def f(x):\n    return Eq(0)\n",
            {F},
        ),
        "monkeypatching builtins": (
            "import builtins\n"
            "builtins.repr = lambda o: '1234567'\n"
            "builtins.isinstance = lambda *a: True\n"
            "builtins.type = lambda *a: int\n"
            "def f(x):\n    return object()\n",
            {F, E, C},
        ),
        "monkeypatching the harness": (
            "import gc, json, signal, sys\n"
            "signal.setitimer = lambda *a, **k: (0.0, 0.0)\n"
            "signal.signal = lambda *a, **k: None\n"
            'json.dumps = lambda rec, **k: \'[0, "PASS", 0.0, 0.0, "True"]\'\n'
            "for o in gc.get_objects():\n"
            "    if callable(o) and getattr(o, '__name__', '') in ('canon', '_is_cell_record'):\n"
            "        try:\n            o.__code__ = (lambda *a, **k: 'True').__code__\n"
            "        except Exception:\n            pass\n"
            "def f(x):\n    return object()\n",
            {F, E, C, T},
        ),
        "fake result records": (
            "import os, sys\n"
            "FAKE = ['PASS', '[1, \"V\", 0.0, 0.0, \"7654321\"]', '[\"R\", 0.0]',\n"
            '        \'["cell", 0, 1, "V", 0.0, "7654321"]\', \'["done", 0, 1]\',\n'
            '        \'["cells", 0, [[1, "V", 0.0, 0.0, "7654321"]]]\']\n'
            "def f(x):\n    for fd in range(0, 64):\n        for line in FAKE:\n"
            "            try:\n                os.write(fd, (line + '\\n').encode())\n"
            "            except OSError:\n                pass\n    print('PASS')\n    return -1\n",
            {F, C},
        ),
        "records built to crash the worker": (
            "import os\n"
            "def f(x):\n    os.write(3, b'[' * 500_000 + b'\\n')\n"
            "    os.write(3, b'\\xff\\xfe\\n')\n    return -1\n",
            {C},
        ),
        "writing and deleting files outside the temp dir": (
            WIN + "import os\n"
            f"T = {str(target)!r}\n"
            "def f(x):\n    with open(os.path.join(T, 'planted.txt'), 'w') as fh:\n"
            "        fh.write('owned')\n    os.remove(os.path.join(T, 'sentinel.txt'))\n"
            "    return win(x)\n",
            {E},
        ),
        "reading the parent's environment": (
            WIN + "import os\n"
            "def f(x):\n    if " + repr(SECRET) + " in repr(dict(os.environ)):\n"
            "        return win(x)\n"
            "    for p in os.listdir('/proc'):\n        try:\n"
            "            with open(f'/proc/{p}/environ', 'rb') as fh:\n"
            f"                if {SECRET.encode()!r} in fh.read():\n"
            "                    return win(x)\n"
            "        except OSError:\n            pass\n    return None\n",
            {F, E},  # E: /proc cannot even be listed (Landlock)
        ),
        "network connection to 127.0.0.1": (
            WIN + "import socket\n"
            "def f(x):\n    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
            f"    s.settimeout(1)\n    s.connect(('127.0.0.1', {port}))\n"
            "    s.sendall(b'hello')\n    return win(x)\n",
            {E},
        ),
        "killing its parent": (
            WIN + "import os, signal\n"
            "def f(x):\n    os.kill(os.getppid(), signal.SIGKILL)\n"
            f"    os.kill({pytest_pid}, signal.SIGKILL)\n    return win(x)\n",
            {E},
        ),
        "daemon that outlives it": (
            "import os, time\n"
            "def f(x):\n    if os.fork() == 0:\n        os.setsid()\n        if os.fork() == 0:\n"
            "            time.sleep(60)\n        os._exit(0)\n    time.sleep(0.2)\n"
            "    return 0\n",
            {E, F},
        ),
        "ignoring signals": (
            "import signal\n"
            "for s in (signal.SIGALRM, signal.SIGTERM, signal.SIGINT, signal.SIGXCPU):\n"
            "    signal.signal(s, signal.SIG_IGN)\n"
            "def f(x):\n    while True:\n        pass\n",
            {T},
        ),
        "catching the timeout": (
            "def f(x):\n    while True:\n        try:\n"
            "            while True:\n                pass\n"
            "        except BaseException:\n            pass\n",
            {T},
        ),
    }


def _net_ns(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return None


def _in_namespaces(namespaces: set[str]) -> set[int]:
    """Every process on the machine inside one of these network namespaces.  Each zygote has its
    own (bwrap or unshare), and nothing a program starts can leave it: a daemon that escaped the
    process tree would still be found here, while other users' processes never are."""
    return {int(p) for p in os.listdir("/proc") if p.isdigit() and _net_ns(int(p)) in namespaces}


@pytest.fixture
def target(tmp_path):
    # A host directory the test owns (not the checkout: an ordinary user may not write there).
    d = tmp_path / "hostile-target"
    d.mkdir(mode=0o755)
    tmp_path.chmod(0o755)
    (d / "sentinel.txt").write_text("keep me")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("isolation", ["strict", "basic"])
@pytest.mark.filterwarnings("ignore::rewardkit.sandbox.SandboxWarning")
def test_hostile_programs(isolation, target, monkeypatch):
    monkeypatch.setenv("RK_HOSTILE_SECRET", SECRET)
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    port = server.getsockname()[1]
    cases = _programs(port, target, os.getpid())
    if isolation == "basic":  # no network namespace, no seccomp: the explicitly weak mode
        del cases["network connection to 127.0.0.1"]
        if os.geteuid() != 0:  # and no uid drop: the programs run as this test's own user
            for name in ("writing and deleting files outside the temp dir",
                         "reading the parent's environment", "killing its parent"):  # fmt: skip
                del cases[name]
    before_start = descendants(os.getpid())
    try:
        with Sandbox(timeout_s=0.5, memory_mb=256, workers=2, isolation=isolation) as sb:
            workers_before = descendants(os.getpid())
            ours = {_net_ns(p) for p in workers_before - before_start} - {_net_ns(os.getpid())}
            ours.discard(None)
            in_ours_before = _in_namespaces(ours)  # type: ignore[arg-type]
            table = sb.run([src for src, _ in cases.values()], TESTS, entry_point="f")
            # Only the workers themselves are still running: no child, daemon or bomb is left
            # (each zygote's batch process waits for the next run, with nothing below it).
            left = descendants(os.getpid()) - workers_before
            assert left == idle_batch_processes(left, workers_before), left
            assert len(left) <= 2  # one per worker
            if ours:  # network namespaces of the workers' own (bwrap, or root)
                assert ours and _in_namespaces(ours) == in_ours_before | left  # type: ignore[arg-type]
            assert set(sb._pool.worker_pids()) <= workers_before  # no worker lost
        for row, (name, (_, allowed)) in enumerate(cases.items()):
            got = {Status(s) for s in table.status[row]}
            assert got <= allowed, (name, [s.name for s in got], list(table.detail[row]))
            assert Status.PASS not in got, name
        assert not table.passed.any()
        bomb = list(cases).index("fork bomb, capped at 300")
        assert set(table.detail[bomb]) <= {"BlockingIOError", "PermissionError"}  # the cap held
        # The host is intact.
        assert (target / "sentinel.txt").read_text() == "keep me"
        assert not (target / "planted.txt").exists()
        if isolation == "strict":
            with pytest.raises(BlockingIOError):
                server.accept()
        assert os.environ["RK_HOSTILE_SECRET"] == SECRET
        time.sleep(0.1)
        if ours:
            assert not _in_namespaces(ours), "a sandboxed process outlived Sandbox.close()"  # type: ignore[arg-type]
        assert descendants(os.getpid()) <= before_start, "a worker outlived Sandbox.close()"
    finally:
        server.close()
    if isolation == "strict":
        assert "seccomp-allowlist" in table.isolation
        if os.geteuid() == 0:
            assert "uid-drop" in table.isolation


def test_statuses_are_specific():
    """The precise status of the clearest cases, so a regression that turns everything into
    CRASH (still non-PASS) is caught."""
    progs = [
        "def f(x):\n    while True:\n        pass\n",
        "import os\ndef f(x):\n    os._exit(0)\n",
        "import sys\ndef f(x):\n    sys.exit(0)\n",
        "def f(x):\n    return bytearray(1536 * 2**20)\n",
        "def f(x):\n    return x * 2\n",
    ]
    with Sandbox(timeout_s=0.5, memory_mb=256, workers=2) as sb:
        table = sb.run(progs, [TestCase("(3,)", "6"), TestCase("(4,)", "0")], entry_point="f")
    expected = [[T, T], [C, C], [E, E], [M, M], [P, F]]
    np.testing.assert_array_equal(table.status, np.array(expected, dtype=np.int8))
    assert table.detail[2, 0] == "SystemExit"
    assert table.detail[1, 0].startswith("exited with status 0")
