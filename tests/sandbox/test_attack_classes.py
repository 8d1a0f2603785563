"""Attack classes the other suites leave out, each by many instances, through the public API.

- (b) a program that holds the process cap (threads) while honest programs run on the other
  worker: their threads, and the feeder thread of a large standard input, must still start;
- fidelity under confinement: every standard-library module an honest program imports on the
  host imports inside the sandbox (a Landlock rule that lost directory listing made 26 of them
  ModuleNotFoundError).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig

import pytest

from rewardkit.sandbox import Sandbox, SandboxWarning, Status, StdioTest, TestCase

from .test_pool import _as_ordinary_user

# Not "nonroot_basic": without root and without strict, every program runs as the caller's uid
# with no seccomp, so programs can signal each other anyway (docs/sandbox.md, basic).
PATHS = ["strict", "basic", "nonroot_strict"]


def _box(path: str, **kw) -> Sandbox:
    isolation = path.removeprefix("nonroot_")
    if isolation == "basic":
        with pytest.warns(SandboxWarning):
            box = Sandbox(isolation="basic", **kw)
    else:
        box = Sandbox(**kw)
    if path.startswith("nonroot"):
        if os.geteuid() != 0:
            pytest.skip("not root: the plain paths are the ordinary-user path")
        _as_ordinary_user(box)
    return box


# ----------------------------------------------------------- (b) the shared process cap
HOLDERS = {
    "threads, small stacks": (
        "import threading, time\nthreading.stack_size(1 << 16)\n"
        "def f(x):\n    for _ in range(300):\n        try:\n"
        "            threading.Thread(target=time.sleep, args=(1.2,), daemon=True).start()\n"
        "        except Exception:\n            break\n    time.sleep(0.7)\n    return 'held'\n"
    ),
    "threads, default stacks": (
        "import threading, time\n"
        "def f(x):\n    for _ in range(300):\n        try:\n"
        "            threading.Thread(target=time.sleep, args=(1.2,), daemon=True).start()\n"
        "        except Exception:\n            break\n    time.sleep(0.7)\n    return 'held'\n"
    ),
    "threads blocked on a lock": (
        "import threading, time\nthreading.stack_size(1 << 16)\nL = threading.Lock()\n"
        "L.acquire()\n"
        "def f(x):\n    for _ in range(300):\n        try:\n"
        "            threading.Thread(target=L.acquire, args=(True, 1.2), daemon=True).start()\n"
        "        except Exception:\n            break\n    time.sleep(0.7)\n    return 'held'\n"
    ),
}
THREADED_VICTIMS = {
    "one thread": (
        "import threading, time\n"
        "def f(x):\n    time.sleep(0.02)\n    out = []\n"
        "    t = threading.Thread(target=out.append, args=('held',))\n"
        "    t.start()\n    t.join()\n    return out[0]\n"
    ),
    "four workers on a queue": (
        "import queue, threading, time\n"
        "def f(x):\n    time.sleep(0.02)\n    q, out = queue.Queue(), []\n"
        "    ts = [threading.Thread(target=lambda: out.append(abs(q.get()))) for _ in range(4)]\n"
        "    for t in ts:\n        t.start()\n    for v in (-1, -2, -3, -4):\n        q.put(v)\n"
        "    for t in ts:\n        t.join()\n"
        "    return 'held' if sorted(out) == [1, 2, 3, 4] else 'no'\n"
    ),
    "a timer": (
        "import threading, time\n"
        "def f(x):\n    time.sleep(0.02)\n    ev = threading.Event()\n"
        "    threading.Timer(0.01, ev.set).start()\n    return 'held' if ev.wait(2) else 'no'\n"
    ),
}
BIG_STDIN = "1\n" * 40_000  # over the pipe: the sandbox feeds it from a thread of the child
STDIN_VICTIM = "import time, sys\ntime.sleep(0.02)\nprint(len(sys.stdin.read().split()))\n"


def _as_script(src: str) -> str:
    return src.replace("def f(x):", "if 1:").replace("return 'held'", "print(40000)")


@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS)
def test_a_program_holding_the_process_cap_does_not_starve_other_workers(path):
    """Under group-relative rewards, making honest rows ERROR raises the attacker's advantage.
    The cap binds per uid machine-wide; with one uid for every worker, 64 threads held on one
    worker made every thread start on the other fail (RuntimeError)."""
    box = _box(path, timeout_s=3.0, memory_mb=256, workers=2)
    with box:
        for hname, holder in HOLDERS.items():
            victims = list(THREADED_VICTIMS.values())
            # Interleaved: each worker takes rows in turn, so holders and victims overlap.
            progs = [p for v in victims * 3 for p in (holder, v)]
            table = box.run(progs, [TestCase("(1,)", "'held'")], entry_point="f")
            got = [Status(int(s)).name for s in table.status[1::2, 0]]
            assert got == ["PASS"] * len(got), (hname, got, list(table.detail[1::2, 0]))
            script = _as_script(holder)
            table = box.run([script, STDIN_VICTIM] * 6, [StdioTest(BIG_STDIN, "40000\n")])
            got = [Status(int(s)).name for s in table.status[1::2, 0]]
            assert got == ["PASS"] * len(got), (hname, got, list(table.detail[1::2, 0]))


# --------------------------------------------------- fidelity: the standard library imports
def _host_importable() -> list[str]:
    skip = {"antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "ensurepip",
            "lib2to3", "pydoc_data"}  # fmt: skip
    names = sorted(n for n in sys.stdlib_module_names if not n.startswith("_") and n not in skip)
    code = (
        "import importlib, sys\nok = []\nfor n in sys.argv[1:]:\n    try:\n"
        "        importlib.import_module(n)\n        ok.append(n)\n"
        "    except BaseException:\n        pass\nprint(' '.join(ok))\n"
    )
    run = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, *names],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return run.stdout.split()


def _traversable() -> bool:
    """Whether any uid may walk down to the standard library (not so under /root)."""
    path = os.path.realpath(sysconfig.get_paths()["stdlib"])
    while path != "/":
        if not os.stat(path).st_mode & 0o001:
            return False
        path = os.path.dirname(path)
    return True


@pytest.mark.slow
@pytest.mark.parametrize("confinement", ["auto", "landlock"])
def test_every_standard_module_imports_in_the_sandbox(confinement):
    """An honest program importing a standard module (asyncio, unittest, zipfile, sqlite3,
    pathlib, …) gets what it gets on the host.  Landlock without bubblewrap, as root, under a
    private home is the documented exception (only pre-imported modules there)."""
    box = Sandbox(timeout_s=5.0, memory_mb=512, workers=2, confinement=confinement)
    try:
        box.start()
    except Exception as e:
        if confinement == "landlock":
            pytest.skip(f"no Landlock path here: {e}")
        raise
    with box:
        if confinement == "landlock" and "uid-drop" in box.isolation and not _traversable():
            pytest.skip("Landlock as root under a private home: documented limit")
        names = _host_importable()
        assert len(names) > 150
        progs = [
            f"import importlib\ndef f(x):\n    importlib.import_module({n!r})\n    return 'ok'\n"
            for n in names
        ]
        table = box.run(progs, [TestCase("(0,)", "'ok'")], entry_point="f")
    bad = [
        (n, Status(int(s)).name, str(d))
        for n, s, d in zip(names, table.status[:, 0], table.detail[:, 0], strict=True)
        if s != Status.PASS
    ]
    assert not bad, bad
