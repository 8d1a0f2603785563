"""Attack classes the other suites leave out, each by many instances, through the public API.

- (b) a program that holds the process cap (threads) while honest programs run on the other
  worker: their threads, and the feeder thread of a large standard input, must still start;
- fidelity under confinement: every standard-library module an honest program imports on the
  host imports inside the sandbox (a Landlock rule that lost directory listing made 26 of them
  ModuleNotFoundError);
- (a)/(d) another program's source or output in the zygote's memory: a thief that finds the
  next queued program (read ahead by a buffered reader) runs it and passes.
"""

from __future__ import annotations

import os
import subprocess
import sys

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
    if path == "basic" and os.geteuid() != 0:
        pytest.skip(
            "basic without root: every program runs as this user's uid, so basic makes no "
            "promise for goal (b) (docs/sandbox.md); nonroot_strict is this path"
        )
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


@pytest.mark.slow
@pytest.mark.parametrize("confinement", ["auto", "landlock"])
def test_every_standard_module_imports_in_the_sandbox(confinement):
    """An honest program importing a standard module (asyncio, unittest, zipfile, sqlite3,
    pathlib, …) gets what it gets on the host, also through Landlock alone as root with the
    interpreter under a private home (pyenv under /root: the worker's private mount namespace
    opens it).  Where that namespace cannot be made (root without CAP_SYS_ADMIN) the report
    lists the unreachable paths: the documented exception."""
    box = Sandbox(timeout_s=5.0, memory_mb=512, workers=2, confinement=confinement)
    try:
        box.start()
    except Exception as e:
        if confinement == "landlock":
            pytest.skip(f"no Landlock path here: {e}")
        raise
    with box:
        unreachable = box.isolation_report()["unreachable"]
        if unreachable:  # root without CAP_SYS_ADMIN, interpreter under a private home
            pytest.skip(f"readable paths the programs' uid cannot reach: {unreachable}")
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


# ------------------------------------- (a)/(d) another program's source in the zygote's memory
_STEAL = r"""
def _stolen():
    import gc, json, sys
    blobs = []
    for s in (sys.__stdin__, sys.stdin, getattr(sys, "_rk_stdin", None)):
        for get in (lambda s: s.buffer.peek(1 << 20), lambda s: s.peek(1 << 20)):
            try:
                blobs.append(bytes(get(s)))
            except BaseException:
                pass
    srcs = _scan(blobs)
    if srcs:
        return srcs
    for o in gc.get_objects():
        if type(o) in (dict, list, tuple):
            for v in (o.values() if type(o) is dict else o):
                if type(v) in (bytes, bytearray) and b"MARK-HONEST" in v:
                    blobs.append(bytes(v))
                elif type(v) is str and "MARK-HONEST" in v:
                    blobs.append(v.encode("utf-8", "replace"))
    return _scan(blobs)


def _scan(blobs):
    import json
    srcs = []
    for blob in blobs:
        for line in blob.splitlines():
            try:
                msg = json.loads(line.strip(b"0123456789 "))
            except BaseException:
                msg = None
            if isinstance(msg, dict) and isinstance(msg.get("program"), str):
                srcs.append(msg["program"])
        text = blob.decode("utf-8", "replace")
        if "# MARK-HONEST\n" in text and "_stolen" not in text:
            srcs.append(text[text.index("# MARK-HONEST\n"):])
    return [s for s in srcs if "_stolen" not in s]
"""
THIEVES = {
    "function, runs a stolen source": _STEAL
    + (
        "def f(x):\n    for src in _stolen():\n        g = {}\n        try:\n"
        "            exec(src, g)\n            return g['f'](x)\n        except BaseException:\n"
        "            pass\n    return None\n"
    ),
    "function, returns a stolen record": _STEAL
    + (
        "def f(x):\n    import gc\n    for o in gc.get_objects():\n"
        "        if type(o) is list and len(o) == 6 and o[0] == 'cell' and o[3] == 'V':\n"
        "            return eval(o[5])\n    return None\n"
    ),
}
HONEST = "# MARK-HONEST\ndef f(x):\n    return x * 7 + 1\n"
STDIN_THIEF = _STEAL + (
    "import io, sys\nfor src in _stolen():\n    out = io.StringIO()\n    old = sys.stdout\n"
    "    sys.stdout = out\n    try:\n        exec(src, {'__name__': '__main__'})\n"
    "    except BaseException:\n        pass\n    finally:\n        sys.stdout = old\n"
    "    if out.getvalue().strip():\n        print(out.getvalue())\n        break\n"
)
STDIN_HONEST = "# MARK-HONEST\nn = int(input())\nprint(n * 7 + 1)\n"


@pytest.mark.slow
@pytest.mark.parametrize("path", ["strict", "basic"])
def test_a_program_cannot_run_a_queued_programs_source(path):
    """Two jobs are in flight per zygote, so the next program's source reaches the zygote before
    the current one forks.  Read with a buffered reader, it sat in the zygote's memory at the
    fork: ``sys.__stdin__.buffer.peek()`` handed it to the child, which ran it and passed (under
    GRPO: the best sibling's reward for an empty program).  Thieves never pass; the honest
    programs beside them do."""
    tests = [TestCase("(3,)", "22"), TestCase("(5,)", "36")]
    with _box(path, timeout_s=2.0, memory_mb=256, workers=2) as box:
        for name, thief in THIEVES.items():
            table = box.run([thief, HONEST] * 6, tests, entry_point="f")
            assert not table.passed[0::2].any(), (name, table.detail[0::2].tolist())
            assert table.passed[1::2].all(), (name, table.detail[1::2].tolist())
        stdio = [StdioTest("3\n", "22\n"), StdioTest("5\n", "36\n")]
        table = box.run([STDIN_THIEF, STDIN_HONEST] * 6, stdio)
    assert not table.passed[0::2].any(), table.detail[0::2].tolist()
    assert table.passed[1::2].all(), table.detail[1::2].tolist()
