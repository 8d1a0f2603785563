"""Programs that fork where forking is allowed (basic isolation): only the program's own process
writes records.  A child of it that comes back into the test loop (its ``f`` returned or raised:
a daemon whose inner fork failed under a process cap) wrote records of its own after its
parent's, and the zygote rightly called the row a protocol violation: the honest tests after it
were CRASH.  Seen in CI as an ordinary user (``test_hostile``'s daemon, its second test), when
the inner fork of the daemon failed.
"""

from __future__ import annotations

import platform

import pytest

from rewardkit.sandbox import Sandbox, Status, StdioTest, TestCase

pytestmark = [
    pytest.mark.skipif(platform.machine() != "x86_64", reason="the sandbox is x86_64's"),
    pytest.mark.filterwarnings("ignore::rewardkit.sandbox.SandboxWarning"),
]

TESTS = [TestCase(f"({n},)", str(n * 7)) for n in range(1, 6)]
_FORK = "import os, time\ndef f(x):\n    pid = os.fork()\n"
PROGRAMS = {  # each answers every test right from the process the zygote forked
    "a child that returns the same answer": _FORK + "    return x * 7\n",
    "a child that returns a wrong answer": _FORK + "    return x * 7 if pid else -1\n",
    "a child that raises (a daemon's failed inner fork)": (
        _FORK + "    if pid == 0:\n        raise OSError(11, 'Resource temporarily unavailable')\n"
        "    os.waitpid(pid, 0)\n    return x * 7\n"
    ),
    "a child that runs the other tests first": (
        _FORK + "    if pid:\n        time.sleep(0.05)\n    return x * 7\n"
    ),
    "a fork at import": "import os\nos.fork()\ndef f(x):\n    return x * 7\n",
    # The check holds its own references: a program's replacements do not reach it
    "a child of a program that replaced os.getpid and os._exit": (
        "import os, time\nos.getpid = lambda: 1\nos._exit = lambda code: None\n"
        "def f(x):\n    pid = os.fork()\n    return x * 7\n"
    ),
}


def test_only_the_programs_own_process_writes_records():
    with Sandbox(timeout_s=2.0, workers=1, isolation="basic") as sb:
        table = sb.run(list(PROGRAMS.values()), TESTS, entry_point="f")
    for row, name in enumerate(PROGRAMS):
        got = [Status(s).name for s in table.status[row]]
        assert got == ["PASS"] * len(TESTS), (name, got, list(table.detail[row]))


def test_a_script_that_forks_answers_from_its_own_process():
    tests = [StdioTest(stdin=f"{n}\n", stdout=f"{n * 7}\n", mode="tokens") for n in (1, 2, 3)]
    programs = [
        "import os\npid = os.fork()\nprint(int(input()) * 7 if pid else -1)\n",
        "import os\nif os.fork() == 0:\n    raise SystemExit(3)\n"
        "os.wait()\nprint(int(input()) * 7)\n",
    ]
    with Sandbox(timeout_s=2.0, workers=1, isolation="basic") as sb:
        table = sb.run(programs, tests)
    for row in range(len(programs)):
        got = [Status(s).name for s in table.status[row]]
        assert got == ["PASS"] * len(tests), (row, got, list(table.detail[row]))


# A script that leaves a helper process running and then reads its whole standard input.  Input
# beyond a pipe's capacity is poured by a thread of the program's process; a child forked while
# it pours kept the pipe's write end, so the parent's ``sys.stdin.read()`` waited for that
# child's exit instead of the end of the data: TIMEOUT where ``python prog.py < input`` passes.
_READ_ALL = "print(sum(int(t) for t in sys.stdin.read().split()))\n"
_SLEEPER = "        time.sleep(30)\n        os._exit(0)\n"
HELPERS = {
    "a child that sleeps": "if os.fork() == 0:\n    time.sleep(30)\n    os._exit(0)\n",
    "a child in a session of its own": (
        "if os.fork() == 0:\n    os.setsid()\n    time.sleep(30)\n    os._exit(0)\n"
    ),
    "a daemon (double fork)": (
        "if os.fork() == 0:\n    if os.fork() == 0:\n        time.sleep(30)\n    os._exit(0)\n"
        "os.wait()\n"
    ),
    "a child forked by a thread": (
        "def spawn():\n    if os.fork() == 0:\n" + _SLEEPER + "t = threading.Thread(target=spawn)\n"
        "t.start()\nt.join()\n"
    ),
    "a child on a pseudo-terminal": (
        "if os.forkpty()[0] == 0:\n    time.sleep(30)\n    os._exit(0)\n"
    ),
    "a child forked by a signal handler": (
        "def on_usr1(*a):\n    if os.fork() == 0:\n"
        + _SLEEPER
        + "signal.signal(signal.SIGUSR1, on_usr1)\nos.kill(os.getpid(), signal.SIGUSR1)\n"
    ),
    "a child forked in a generator": (
        "def gen():\n    if os.fork() == 0:\n" + _SLEEPER + "    yield 0\nlist(gen())\n"
    ),
    "a child forked after the first line": (
        "first = int(sys.stdin.readline())\nif os.fork() == 0:\n    time.sleep(30)\n"
        "    os._exit(0)\nprint(first + sum(int(t) for t in sys.stdin.read().split()))\n"
        "raise SystemExit\n"
    ),
}


@pytest.mark.parametrize("n", [20_000, 200_000])  # 108 KiB and 1.3 MiB of input
def test_a_script_whose_helper_process_outlives_it_reads_its_input_to_the_end(n):
    text = "".join(f"{i}\n" for i in range(n))
    half = text[: len(text) // 2]
    tests = [
        StdioTest(stdin=text, stdout=f"{sum(range(n))}\n"),
        StdioTest(stdin="3\n4\n", stdout="7\n"),  # within a pipe: no thread pours it
        StdioTest(stdin=half, stdout=f"{sum(int(t) for t in half.split())}\n"),
    ]
    head = "import os, signal, sys, threading, time\n"
    programs = [head + body + _READ_ALL for body in HELPERS.values()]
    with Sandbox(timeout_s=2.0, workers=2, isolation="basic") as sb:
        table = sb.run(programs, tests)
    names = [[Status(s).name for s in table.status[row]] for row in range(len(HELPERS))]
    bad = {name: got for name, got in zip(HELPERS, names) if got != ["PASS"] * len(tests)}
    assert not bad
