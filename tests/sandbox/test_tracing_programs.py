"""Programs whose processes trace each other, where ``ptrace`` is allowed (basic isolation; the
strict allow-list refuses it).  A tracer holds a dead tracee's exit until it dies itself, so
a process of the program outside the killed process group that traced the program (or one
helper that traced another) made the zygote's wait on that one pid block: the zygote stalled
until the pool gave the worker up (about 3 × (budget + margin) + 10 s for each of the
program's tests, each cell CRASH "worker lost"), and the tracer outlived ``Sandbox.close()``.
The zygote now kills every process below it before waiting, and never waits on one pid alone.
"""

from __future__ import annotations

import os
import platform

import pytest

from rewardkit.sandbox import Sandbox, Status, StdioTest, TestCase

pytestmark = [
    pytest.mark.skipif(platform.machine() != "x86_64", reason="the sandbox is x86_64's"),
    pytest.mark.filterwarnings("ignore::rewardkit.sandbox.SandboxWarning"),
]

# Every program answers each test right; what it leaves behind is a helper process in a
# session of its own (out of the process group the zygote kills) that traces, or is traced.
# ``seize(pid)``: PTRACE_SEIZE, which does not stop the tracee.  As root the uid drop made the
# processes non-dumpable: PR_SET_DUMPABLE makes them traceable by their own uid again.
PRELUDE = """import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
def traceable():  # dumpable, and by any process under Yama's ptrace_scope 1 (PR_SET_PTRACER)
    libc.prctl(4, 1, 0, 0, 0)
    libc.prctl(0x59616D61, ctypes.c_ulong(2**64 - 1), 0, 0, 0)
traceable()
def seize(pid):
    return libc.ptrace(0x4206, pid, None, None)
def helper(then):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        traceable()
        then()
        os.write(w, b'.')
        time.sleep(60)
        os._exit(0)
    os.read(r, 1)
    os.close(r)
    os.close(w)
    return pid
"""
_ONCE = "done = []\ndef f(x):\n    if not done:\n        done.append(1)\n"
TRACERS = {
    "a helper traces the program": _ONCE
    + "        me = os.getpid()\n        helper(lambda: seize(me))\n    return x * 7\n",
    "a helper's child traces the program": _ONCE
    + "        me = os.getpid()\n        helper(lambda: helper(lambda: seize(me)))\n"
    "    return x * 7\n",
    "a helper traces another helper": _ONCE
    + "        b = helper(lambda: None)\n        helper(lambda: seize(b))\n    return x * 7\n",
    "two helpers trace each other": _ONCE
    + "        a = helper(lambda: None)\n        b = helper(lambda: seize(a))\n"
    "        helper(lambda: seize(b))\n    return x * 7\n",
    "a helper traces the program from its import": (
        "me = os.getpid()\nhelper(lambda: seize(me))\ndef f(x):\n    return x * 7\n"
    ),
    "the program traces a helper": _ONCE
    + "        seize(helper(lambda: None))\n    return x * 7\n",
    "a helper traces the program on every test": (
        "def f(x):\n    me = os.getpid()\n    helper(lambda: seize(me))\n    return x * 7\n"
    ),
}
HONEST = "def f(x):\n    return x * 7\n"
# Whether this machine lets a program's processes trace each other at all (Yama's
# ptrace_scope 2 or 3 refuses it): a helper seizes the program and says whether it could.
PROBE = (
    "def f(x):\n    me = os.getpid()\n    r, w = os.pipe()\n    if os.fork() == 0:\n"
    "        os.setsid()\n        traceable()\n        os.write(w, b'%d' % seize(me))\n"
    "        os._exit(0)  # the tracer gone, the probe holds nothing\n"
    "    ok = os.read(r, 8) == b'0'\n    os.wait()\n    return x * 7 if ok else -1\n"
)


def _zygote_images() -> set[int]:
    """Processes running this checkout's zygote script (the zygotes and what they forked)."""
    import rewardkit.sandbox._worker as worker

    path = worker.__file__.encode()
    out = set()
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/cmdline", "rb") as fh:
                    if path in fh.read():
                        out.add(int(p))
            except OSError:
                pass
    return out


def test_processes_of_a_program_that_trace_each_other_neither_stall_nor_outlive_the_sandbox():
    before = _zygote_images()
    tests = [TestCase(f"({n},)", str(n * 7)) for n in range(1, 4)]
    programs = [PRELUDE + src for src in TRACERS.values()] + [HONEST] * 6
    with Sandbox(timeout_s=1.0, workers=2, isolation="basic") as sb:
        if not sb.run([PRELUDE + PROBE], tests[:1], entry_point="f").passed.all():
            pytest.skip("this machine refuses ptrace between a program's processes")
        table = sb.run(programs, tests, entry_point="f")
    names = [*TRACERS, *(f"honest {k}" for k in range(6))]
    got = {n: [Status(s).name for s in table.status[row]] for row, n in enumerate(names)}
    assert {n: g for n, g in got.items() if g != ["PASS"] * len(tests)} == {}, table.detail
    assert _zygote_images() <= before, "a process of a program outlived Sandbox.close()"


def test_a_script_traced_by_its_helper_neither_stalls_nor_outlives_the_sandbox():
    before = _zygote_images()
    tests = [StdioTest(stdin=f"{n}\n", stdout=f"{n * 7}\n") for n in (1, 2, 3)]
    scripts = [
        PRELUDE + "me = os.getpid()\nhelper(lambda: seize(me))\nprint(int(input()) * 7)\n",
        PRELUDE + "a = helper(lambda: None)\nb = helper(lambda: seize(a))\n"
        "helper(lambda: seize(b))\nprint(int(input()) * 7)\n",
        "print(int(input()) * 7)\n",
    ]
    with Sandbox(timeout_s=1.0, workers=2, isolation="basic") as sb:
        probe = sb.run([PRELUDE + PROBE], [TestCase("(1,)", "7")], entry_point="f")
        if not probe.passed.all():
            pytest.skip("this machine refuses ptrace between a program's processes")
        table = sb.run(scripts, tests)
    got = [[Status(s).name for s in table.status[row]] for row in range(len(scripts))]
    assert got == [["PASS"] * len(tests)] * len(scripts), table.detail
    assert _zygote_images() <= before, "a process of a program outlived Sandbox.close()"
