"""Standard output as a judge sees it: every way a competitive-programming script writes its
answer reaches the comparison, in the order it reached fd 1, and a program that attacks the
capture loses only its own output.

Every program reads ``n`` and answers ``2n`` (some with ``n`` first); each style runs under
strict isolation and under basic (as root and, in CI, as an ordinary user)."""

from __future__ import annotations

import os
import signal
import threading
import warnings

import pytest

from rewardkit.sandbox import Sandbox, Status, StdioTest
from rewardkit.sandbox._child import _Stdout

P, F, E, T, M = Status.PASS, Status.FAIL, Status.ERROR, Status.TIMEOUT, Status.MEMORY

# PyRival's fast input/output template, as thousands of CodeContests and TACO solutions carry
# it: it takes ``sys.stdout.fileno()`` and writes with ``os.write`` when it is flushed.
FASTIO = """
import os
import sys
from io import BytesIO, IOBase

BUFSIZE = 8192


class FastIO(IOBase):
    newlines = 0

    def __init__(self, file):
        self._fd = file.fileno()
        self.buffer = BytesIO()
        self.writable = "x" in file.mode or "r" not in file.mode
        self.write = self.buffer.write if self.writable else None

    def read(self):
        while True:
            b = os.read(self._fd, max(os.fstat(self._fd).st_size, BUFSIZE))
            if not b:
                break
            ptr = self.buffer.tell()
            self.buffer.seek(0, 2), self.buffer.write(b), self.buffer.seek(ptr)
        self.newlines = 0
        return self.buffer.read()

    def readline(self):
        while self.newlines == 0:
            b = os.read(self._fd, max(os.fstat(self._fd).st_size, BUFSIZE))
            self.newlines = b.count(b"\\n") + (not b)
            ptr = self.buffer.tell()
            self.buffer.seek(0, 2), self.buffer.write(b), self.buffer.seek(ptr)
        self.newlines -= 1
        return self.buffer.readline()

    def flush(self):
        if self.writable:
            os.write(self._fd, self.buffer.getvalue())
            self.buffer.truncate(0), self.buffer.seek(0)


class IOWrapper(IOBase):
    def __init__(self, file):
        self.buffer = FastIO(file)
        self.flush = self.buffer.flush
        self.writable = self.buffer.writable
        self.write = lambda s: self.buffer.write(s.encode("ascii"))
        self.read = lambda: self.buffer.read().decode("ascii")
        self.readline = lambda: self.buffer.readline().decode("ascii")


sys.stdin, sys.stdout = IOWrapper(sys.stdin), IOWrapper(sys.stdout)
input = lambda: sys.stdin.readline().rstrip("\\r\\n")
"""

STYLES = {
    "print": "print(2 * int(input()))\n",
    "sys.stdout.write, bound early": (
        "import sys\nout = sys.stdout.write\nout(str(2 * int(sys.stdin.readline())) + '\\n')\n"
    ),
    "sys.stdout.buffer": (
        "import sys\nsys.stdout.buffer.write(b'%d\\n' % (2 * int(sys.stdin.buffer.readline())))\n"
    ),
    "PyRival FastIO": FASTIO + "\nn = int(input())\nprint(2 * n)\n",
    "os.write(1, ...)": "import os\nos.write(1, b'%d\\n' % (2 * int(input())))\n",
    "os.write(sys.stdout.fileno(), ...)": (
        "import os, sys\nos.write(sys.stdout.fileno(), str(2 * int(input())).encode())\n"
    ),
    "open(1, 'w'), closed by with": (
        "n = int(input())\nwith open(1, 'w') as f:\n    f.write(str(2 * n))\n"
    ),
    "os.fdopen(1), left open": (
        "import os\nout = os.fdopen(1, 'w')\nout.write(str(2 * int(input())) + '\\n')\n"
    ),
    "sys.__stdout__": "import sys\nsys.__stdout__.write(str(2 * int(input())) + '\\n')\n",
    "unbuffered rewrap of fd 1": (
        "import io, sys\n"
        "sys.stdout = io.TextIOWrapper(open(sys.stdout.fileno(), 'wb', 0), write_through=True)\n"
        "print(2 * int(input()))\n"
    ),
    "everything at exit (atexit)": (
        "import atexit, io, sys\nbuf = io.StringIO()\nsys.stdout = buf\n"
        "atexit.register(lambda: sys.__stdout__.write(buf.getvalue()))\n"
        "print(2 * int(input()))\n"
    ),
    "main in a thread with a large stack (deep recursion)": (
        "import sys, threading\nsys.setrecursionlimit(10 ** 5)\nthreading.stack_size(1 << 25)\n"
        "def f(k):\n    return 0 if k == 0 else 2 + f(k - 1)\n"
        "def main():\n    print(f(int(input())))\n"
        "threading.Thread(target=main).start()\n"
    ),
    "sys.exit(0) after a buffered print": ("import sys\nprint(2 * int(input()))\nsys.exit(0)\n"),
}
NS = (3, 1500, 7)  # 1,500 frames deep for the thread idiom (past the default limit of 1,000)
TESTS = [StdioTest(f"{n}\n", f"{2 * n}\n") for n in NS]


def _sandbox(isolation: str, **kw) -> Sandbox:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # basic warns that it does not confine
        return Sandbox(isolation=isolation, workers=2, **kw)


@pytest.fixture(scope="module", params=["strict", "basic"])
def sb(request):
    with _sandbox(request.param, timeout_s=2.0, memory_mb=256) as box:
        yield box


def test_every_way_of_writing_the_answer_is_the_output(sb):
    t = sb.run(list(STYLES.values()), TESTS)
    bad = {name: t.detail[k].tolist() for k, name in enumerate(STYLES) if not t.passed[k].all()}
    assert not bad, bad


def test_the_output_is_in_the_order_it_reached_fd_1(sb):
    """A buffered ``print`` reaches fd 1 when the stream is flushed, after an unbuffered
    ``os.write`` that came later in the program: the interpreter's own order, kept."""
    progs = [
        "import os\nn = int(input())\nprint(n)\nos.write(1, b'%d\\n' % (2 * n))\n",
        "import os\nn = int(input())\nprint(n, flush=True)\nos.write(1, b'%d\\n' % (2 * n))\n",
    ]
    tests = [StdioTest("5\n", "10\n5\n", mode="exact"), StdioTest("5\n", "5\n10\n", mode="exact")]
    t = sb.run(progs, tests)
    assert t.status.tolist() == [[P, F], [F, P]], t.detail


def test_large_outputs_through_fd_1(sb):
    """Beyond the pipe's size, in one ``os.write`` and through FastIO's buffer: the draining
    thread keeps the writer going, and the output travels as its normalised hash."""
    n = 200_000
    expected = "\n".join(str(i) for i in range(n)) + "\n"  # ~1.3 MB
    progs = [
        f"import os\nos.write(1, '\\n'.join(str(i) for i in range({n})).encode() + b'\\n')\n",
        FASTIO + f"\nfor i in range({n}):\n    print(i)\n",
        f"import os\nos.write(1, ' '.join(str(i) for i in range({n + 1})).encode())\n",  # one more
    ]
    t = sb.run(progs, [StdioTest("", expected, mode="tokens")])
    assert t.status.tolist() == [[P], [P], [F]], t.detail


def test_nothing_of_one_test_reaches_the_next(sb):
    """A test's unterminated output, and what a thread of the program writes while its test
    runs, stay in that test."""
    progs = [
        "n = int(input())\nif n == 3:\n    print('x' * 200_000, end='')\nelse:\n    print(2 * n)\n",
        "import os, threading\nn = int(input())\n"
        "t = threading.Thread(target=lambda: os.write(1, b'x' * 300_000))\nt.start()\nt.join()\n"
        "print(2 * n)\n",
    ]
    t = sb.run(progs, [StdioTest(f"{n}\n", f"{2 * n}\n", mode="exact") for n in NS])
    assert t.status.tolist() == [[F, P, P], [F, F, F]], t.detail


HONEST = "print(2 * int(input()))\n"
ATTACKS = {
    # It loses its own output on the test where it closes fd 1; the next tests get fd 1 back.
    "closes fd 1": "import os\nn = int(input())\nif n == 3:\n    os.close(1)\nprint(2 * n)\n",
    # The capture's pipe is gone (its ends closed): that test is ERROR "stdout lost", the next
    # ones get a fresh pipe.
    "closes every fd above 3": (
        "import os\nn = int(input())\nif n == 3:\n    os.closerange(4, 64)\nprint(2 * n)\n"
    ),
    # The same, and then files opened where the pipe's ends were: the next tests see that the
    # descriptors are no longer the pipe and make a fresh one.
    "puts files in place of the pipe": (
        "import os\nn = int(input())\nif n == 3:\n    os.closerange(4, 64)\n"
        "    fs = [open(f'f{k}', 'w') for k in range(12)]\nprint(2 * n)\n"
    ),
    # A daemon thread writing without end: its junk is in the row's own outputs (from then
    # on), each test still ends, the honest rows beside it are untouched.
    "daemon thread floods fd 1 past its test": (
        "import os, threading\nn = int(input())\nif n == 3:\n"
        "    threading.Thread(target=lambda: [os.write(1, b'junk\\n') for _ in iter(int, 1)],"
        " daemon=True).start()\nprint(2 * n)\n"
    ),
    # Past memory_mb through fd 1: MEMORY or TIMEOUT for that test, the row goes on.
    "floods fd 1 past memory_mb": (
        "import os\nn = int(input())\nif n == 3:\n    while True:\n"
        "        os.write(1, b'x' * (1 << 20))\nprint(2 * n)\n"
    ),
    # Replaces fd 1 by a file of its own: its answer is in the file, not the output.
    "dup2s a file onto fd 1": (
        "import os\nn = int(input())\nif n == 3:\n"
        "    os.dup2(os.open('out', os.O_WRONLY | os.O_CREAT), 1)\nprint(2 * n)\n"
    ),
}


def test_attacks_on_the_capture_cost_only_their_own_cells(sb):
    progs = [HONEST]
    for attack in ATTACKS.values():
        progs += [attack, HONEST]
    t = sb.run(progs, TESTS)
    honest = t.status[::2]
    assert (honest == P).all(), t.status.tolist()
    rows = dict(zip(ATTACKS, t.status[1::2].tolist()))
    details = dict(zip(ATTACKS, t.detail[1::2].tolist()))
    assert rows["closes fd 1"] == [F, P, P], details
    assert rows["closes every fd above 3"] == [E, P, P], details
    assert details["closes every fd above 3"][0] == "stdout lost"
    assert rows["puts files in place of the pipe"][1:] == [P, P], details
    assert set(rows["daemon thread floods fd 1 past its test"]) <= {P, F}, details  # no hang
    assert rows["floods fd 1 past memory_mb"][0] in (M, T), details
    assert rows["floods fd 1 past memory_mb"][1:] == [P, P], details
    assert rows["dup2s a file onto fd 1"] == [F, P, P], details


def test_a_process_the_script_runs_writes_to_the_output():
    """Basic isolation lets a script run a process: what it prints is output, as on a judge."""
    prog = "import os\nn = int(input())\nos.system(f'echo {2 * n}')\n"
    with _sandbox("basic", timeout_s=5.0) as sb:
        t = sb.run([prog], TESTS)
    assert (t.status == P).all(), t.detail


def test_the_draining_thread_blocks_every_signal():
    """The budget's SIGALRM must reach the program's thread (a program asleep in a system
    call is woken by it): the kernel gives a process signal to a thread that does not block it."""
    cap = _Stdout()
    try:
        for _ in range(500):
            if cap.tid:
                break
            threading.Event().wait(0.01)
        with open(f"/proc/self/task/{cap.tid}/status") as fh:
            fields = dict(line.split(":\t", 1) for line in fh if ":\t" in line)
        blocked = int(fields["SigBlk"], 16)
        for sig in (signal.SIGALRM, signal.SIGINT, signal.SIGTERM, signal.SIGUSR1, signal.SIGCHLD):
            assert blocked >> (sig - 1) & 1, (sig, hex(blocked))
    finally:
        os.close(cap.w)  # its end of file: the thread leaves
