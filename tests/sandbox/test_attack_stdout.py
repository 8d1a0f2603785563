"""Attacks on the capture of standard output at fd 1, as an adversary and as a new user.

Each script's verdict is held against what ``python3 prog.py < input`` prints on this machine (a
subprocess outside the sandbox, its standard input a file, as on a judge): a script the
interpreter answers correctly must PASS and one with a wrong expected output must FAIL.  The
attacks on the capture itself (its pipe, its thread, its end-of-test sequence) may cost only
their own row's cells; the honest rows between them stay PASS.  Strict and basic isolation; CI
runs the file as root and as an ordinary user."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import warnings
from functools import cache

import pytest

from rewardkit.sandbox import Sandbox, Status, StdioTest, TestCase

from .test_stdout_capture import FASTIO

P, F, E, T, M, C = (
    Status.PASS,
    Status.FAIL,
    Status.ERROR,
    Status.TIMEOUT,
    Status.MEMORY,
    Status.CRASH,
)
NS = (3, 5, 7)  # every script reads n and answers 2n; the attacks strike on n == 3
TESTS = [StdioTest(f"{n}\n", f"{2 * n}\n", mode="exact") for n in NS]
HONEST = "print(2 * int(input()))\n"


def _sandbox(isolation: str, **kw) -> Sandbox:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # basic warns that it does not confine
        return Sandbox(isolation=isolation, **{"workers": 2, **kw})


@pytest.fixture(scope="module", params=["strict", "basic"])
def sb(request):
    with _sandbox(request.param, timeout_s=2.0, memory_mb=512) as box:
        yield box


@cache
def _oracle(src: str, stdin: str) -> tuple[int, str]:
    """What the interpreter prints for ``src`` with ``stdin`` in a file on fd 0, as a judge
    runs it: no ``PYTHON*`` variable of ours (``PYTHONUNBUFFERED`` would flush every print)."""
    with tempfile.TemporaryDirectory() as d:
        prog, inp = os.path.join(d, "prog.py"), os.path.join(d, "in.txt")
        with open(prog, "w", encoding="utf-8") as fh:
            fh.write(src)
        with open(inp, "w", encoding="utf-8") as fh:
            fh.write(stdin)
        with open(inp, "rb") as fin:
            done = subprocess.run(
                [sys.executable, prog],
                stdin=fin,
                capture_output=True,
                timeout=60,
                env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")},
            )
    return done.returncode, done.stdout.decode("utf-8", "replace")


# ------------------------------------------------------------------ a file left open on fd 1
# A script that defines a function holds its globals in a reference cycle (function →
# globals → function).  The interpreter clears ``__main__``'s names when it ends, so a file the
# script left open on fd 1 is flushed then; the garbage collector alone finalises a cycle's
# objects in no set order (the buffer under the text layer could close first), and the output
# was lost: every one of these was FAIL with an empty output.
LEFT_OPEN = {
    "open(1, 'w') beside a function": (
        "out = open(1, 'w')\ndef main():\n    out.write(str(2 * int(input())) + '\\n')\nmain()\n"
    ),
    "its write method bound": (
        "write = open(1, 'w').write\ndef main():\n    write(str(2 * int(input())) + '\\n')\n"
        "main()\n"
    ),
    "os.fdopen(1) under an underscore name": (
        "import os\n_out = os.fdopen(1, 'w')\ndef solve(n):\n    return 2 * n\n"
        "_out.write(str(solve(int(input()))) + '\\n')\n"
    ),
    "print(file=out) from main in a thread": (
        "import sys, threading\nsys.setrecursionlimit(10 ** 5)\nthreading.stack_size(1 << 24)\n"
        "out = open(1, 'w')\ndef main():\n    print(2 * int(input()), file=out)\n"
        "threading.Thread(target=main).start()\n"
    ),
    "binary open(1, 'wb')": (
        "out = open(1, 'wb')\ndef main():\n    out.write(b'%d\\n' % (2 * int(input())))\nmain()\n"
    ),
    "TextIOWrapper over open(1, 'wb')": (
        "import io\nout = io.TextIOWrapper(open(1, 'wb'))\n"
        "def main():\n    out.write(str(2 * int(input())) + '\\n')\nmain()\n"
    ),
    "held by an object": (
        "class Writer:\n    def __init__(self):\n        self.f = open(1, 'w')\n"
        "    def put(self, x):\n        self.f.write(str(x) + '\\n')\n"
        "w = Writer()\nw.put(2 * int(input()))\n"
    ),
    "after print, in the order the interpreter flushes": (
        "out = open(1, 'w')\ndef main():\n    n = int(input())\n    out.write(str(2 * n) + '\\n')\n"
        "    print(n)\nmain()\n"
    ),
}


def test_a_file_left_open_on_fd_1_is_flushed_as_the_interpreter_flushes_it(sb):
    progs = list(LEFT_OPEN.values())
    # Two expected outputs per input: the answer alone, and n before it (the last script).
    columns = [(f"{n}\n", want) for n in NS for want in (f"{2 * n}\n", f"{n}\n{2 * n}\n")]
    t = sb.run(progs, [StdioTest(stdin, want, mode="exact") for stdin, want in columns])
    for k, (name, src) in enumerate(LEFT_OPEN.items()):
        oracle = [_oracle(src, stdin) for stdin, _ in columns]
        assert all(rc == 0 for rc, _ in oracle), (name, oracle)
        wanted = [P if out == want else F for (_, out), (_, want) in zip(oracle, columns)]
        assert wanted.count(P) == len(NS), (name, oracle)  # the oracle answers each input
        assert t.status[k].tolist() == wanted, (name, t.detail[k].tolist())


# ------------------------------------------------- what one test leaves must not reach the next
def test_a_scripts_thread_stack_size_is_not_the_input_feeders():
    """The deep-recursion idiom sets ``threading.stack_size(2**28)``: the thread that feeds a
    later test's input through a pipe (over 64 KiB) took that size too, and the second 256 MiB
    stack broke ``memory_mb=512`` (tests 2 and 3 ERROR, RuntimeError: can't start new thread).
    The inputs are files (see below) unless a script closes them: this one does, on n == 3."""
    prog = (
        "import os, sys, threading\nsys.setrecursionlimit(10 ** 6)\n"
        "threading.stack_size(2 ** 28)\n"
        "def main():\n    d = sys.stdin.buffer.read().split()\n    print(2 * int(d[0]))\n"
        "    if d[0] == b'3':\n        os.closerange(64, 4096)\n"
        "threading.Thread(target=main).start()\n"
    )
    pad = "1 " * 40_000  # 80 KB: fed by the writer thread
    tests = [StdioTest(f"{n}\n{pad}\n", f"{2 * n}\n") for n in NS]
    with _sandbox("strict", timeout_s=5.0, memory_mb=512) as box:
        t = box.run([prog, HONEST], tests)
    assert t.status.tolist() == [[P, P, P], [P, P, P]], t.detail.tolist()


@pytest.mark.parametrize("pad", [0, 40_000], ids=["files", "pipes"])
def test_a_thread_stack_of_one_test_is_free_for_the_next_tests_thread(pad):
    """The deep-recursion idiom in twelve tests in a row, under ``memory_mb=512``: two 256 MiB
    stacks do not fit, so each test's thread needs the previous one's.  ``join`` returns before
    that thread has left the kernel, and glibc frees or reuses its stack only after: the next
    thread often started first and found no room (RuntimeError: can't start new thread, ERROR
    from then on).  The child now waits for the ended threads to leave
    (``_child._left_the_kernel``) before each test, also one the script never joined (it
    waits on an event, the second program) and one whose test ended in an exception (the third
    raises on odd n, after its thread's end).  Without the wait the first two failed in 6 runs
    of 6 with ``cpu-pin`` and in 5 of 6 without it; with it only after a script that ended
    normally, the third failed in 6 of 6."""
    head = (
        "import sys, threading\nsys.setrecursionlimit(10 ** 6)\n"
        "threading.stack_size(2 ** 28)\ndone = threading.Event()\nn = []\n"
        "def depth(k):\n    return 0 if k == 0 else 1 + depth(k - 1)\n"
        "def main():\n    n.append(int(sys.stdin.readline()))\n"
        "    print(2 * n[0] + depth(5000) - 5000)\n    done.set()\n"
        "t = threading.Thread(target=main)\nt.start()\n"
    )
    joins, waits = head + "t.join()\n", head + "done.wait()\n"
    raises = joins + "if n[0] % 2:\n    raise ValueError(n[0])\n"
    extra = "1 " * pad
    tests = [StdioTest(f"{n}\n{extra}\n", f"{2 * n}\n") for n in range(1, 13)]
    with _sandbox("strict", timeout_s=5.0, memory_mb=512) as box:
        t = box.run([joins, waits, raises], tests)
    assert t.status.tolist() == [[P] * 12] * 2 + [[E, P] * 6], t.detail.tolist()


def test_the_same_for_a_function_that_runs_in_a_large_stack_thread():
    """Function-call tests share a process as a script's tests do: a function that runs its
    work in a 256 MiB thread (the idiom inside ``f``), twelve calls in a row, and one that
    raises on odd n after its thread's end.  Without the wait before each call: ERROR from the
    second call on, in 3 runs of 3."""
    prog = (
        "import sys, threading\nsys.setrecursionlimit(10 ** 6)\nthreading.stack_size(2 ** 28)\n"
        "def depth(k):\n    return 0 if k == 0 else 1 + depth(k - 1)\n"
        "def f(n):\n    out = []\n"
        "    t = threading.Thread(target=lambda: out.append(2 * n + depth(5000) - 5000))\n"
        "    t.start()\n    t.join()\n    return out[0]\n"
        "def g(n):\n    v = f(n)\n    if n % 2:\n        raise ValueError(n)\n    return v\n"
    )
    tests = [TestCase(f"({n},)", f"{2 * n}") for n in range(1, 13)]
    with _sandbox("strict", timeout_s=5.0, memory_mb=512) as box:
        plain = box.run([prog, prog], tests, entry_point="f")
        raising = box.run([prog], tests, entry_point="g")
    assert (plain.status == P).all(), plain.detail.tolist()
    assert raising.status.tolist() == [[E, P] * 6], raising.detail.tolist()


def test_fd_1_made_non_blocking_by_one_test_blocks_again_in_the_next(sb):
    """A file never refuses a write; a pipe set O_NONBLOCK does, once full (BlockingIOError
    from ``print``).  The flag stayed on the capture's pipe for the rest of the row: each later
    test started with fd 1 non-blocking (here it answers -1 when it does)."""
    prog = (
        "import os\nn = int(input())\nprint(2 * n if os.get_blocking(1) else -1)\n"
        "if n == 3:\n    os.set_blocking(1, False)\n"
    )
    t = sb.run([prog, HONEST], TESTS)
    assert t.status.tolist() == [[P, P, P], [P, P, P]], t.detail.tolist()


# ---------------------------------------------------------------- output against memory_mb
def test_an_output_near_memory_mb_is_compared_or_memory_never_a_crash():
    """With ``memory_mb=256``: the capture copied the whole output once more at the end of the
    test (``bytes(bytearray)``) and its MemoryError killed the child (CRASH ``exited with status
    0``, its row's next test too); a 40 MB output was MEMORY.  Now 40 MB are compared and 100 MB
    are MEMORY, test by test, the honest row beside them PASS."""
    flood = "import os\nn = int(input())\nb = b'x' * (1 << 20)\nfor _ in range({mb}):\n" + (
        "    os.write(1, b)\ndel b\nprint(2 * n)\n"
    )
    tests = [StdioTest(f"{n}\n", "x" * (40 << 20) + f"{2 * n}\n", mode="tokens") for n in NS[:2]]
    with _sandbox("strict", timeout_s=10.0, memory_mb=256) as box:
        t = box.run([flood.format(mb=40), flood.format(mb=100), HONEST], tests)
    assert t.status[0].tolist() == [P, P], t.detail.tolist()
    assert t.status[1].tolist() == [M, M], t.detail.tolist()
    assert t.status[2].tolist() == [F, F], t.detail.tolist()


# ---------------------------------------------------------------- standard input as a file
# ``python3 prog.py < input``: fd 0 is a regular file.  On a pipe ``os.fstat(0).st_size`` is
# 0, so the fast-input idiom of many Codeforces solutions read nothing (ERROR ValueError on
# every test), and one ``os.read`` returned at most a pipe's worth of a large input.
READS = {
    "io.BytesIO(os.read(0, os.fstat(0).st_size))": (
        "import io, os\ninput = io.BytesIO(os.read(0, os.fstat(0).st_size)).readline\n"
    ),
    "one os.read(0, 1 << 25)": (
        "import io, os\ninput = io.BytesIO(os.read(0, 1 << 25)).readline\n"
    ),
    "os.pread at the file's size": (
        "import io, os\ninput = io.BytesIO(os.pread(0, os.fstat(0).st_size, 0)).readline\n"
    ),
    "sys.stdin.buffer.read()": (
        "import io, sys\ninput = io.BytesIO(sys.stdin.buffer.read()).readline\n"
    ),
}
SUM_TAIL = "n = int(input())\na = list(map(int, input().split()))\nprint(n, sum(a))\n"


def _sum_tests() -> list[StdioTest]:
    rng = random.Random(14)
    tests = []
    for n in (1, 20_000, 300_000):  # 3 bytes up to 2.4 MB: beyond a pipe and beyond 1 MiB
        a = [rng.randint(1, 9) for _ in range(n)]
        tests.append(StdioTest(f"{n}\n{' '.join(map(str, a))}\n", f"{n} {sum(a)}\n"))
    return tests


def test_standard_input_is_a_file_of_the_tests_size(sb):
    tests = _sum_tests()
    progs = [head + SUM_TAIL for head in READS.values()]
    for src in progs:  # the oracle: each answers each input as written
        for test in tests:
            assert _oracle(src, test.stdin) == (0, test.stdout), src
    t = sb.run(progs, tests)
    assert (t.status == P).all(), dict(zip(READS, t.detail.tolist()))


def test_a_script_that_closes_its_later_inputs_reads_them_from_a_pipe(sb):
    """The tests' files sit at fd 64 and above; a script that closes them all gets each later
    input through a pipe (where ``st_size`` is 0): it still reads them with ``input()``."""
    prog = (
        "import os\nn = int(input())\nif n == 3:\n    os.closerange(64, 4096)\n"
        "print(2 * n, os.fstat(0).st_size > 0)\n"
    )
    t = sb.run([prog], [StdioTest(f"{n}\n", f"{2 * n} {n == 3}\n") for n in NS])
    assert (t.status == P).all(), t.detail.tolist()


# ------------------------------------------------------------------ attacks on the capture
# Each strikes on the test with n == 3 (the first) and answers 2n on every test.  The object
# behind the capture is found as any program can find it (the garbage collector's list).
FIND = (
    "import ctypes, fcntl, gc, os, signal, sys\nn = int(input())\n"
    "cap = next(o for o in gc.get_objects() if type(o).__name__ == '_Stdout')\n"
    "while not cap.tid:  # the drainer's thread id, once it runs\n    os.sched_yield()\n"
    "def tgkill(sig):\n    ctypes.CDLL(None).syscall(234, os.getpid(), cap.tid, sig)\n"
    "if n == 3:\n"
)
STRIKES = {
    # the pipe
    "reads its own pipe": ("    print(2 * n, flush=True)\n    os.read(cap.r, 99)\n", {P, F}),
    "makes the read end blocking": ("    os.set_blocking(cap.r, True)\n", {P, T}),
    "dup2s the read end onto fd 1": ("    os.dup2(cap.r, 1)\n", {E, F}),
    "closes the write end, keeps fd 1": ("    os.close(cap.w)\n", {P}),
    # its drainer then waits on a pipe of the script's, holding the capture: the watchdog ends
    # the test
    "puts a pipe of its own where the capture reads": (
        "    os.close(cap.r)\n    r, w = os.pipe()\n    os.dup2(r, cap.r)\n",
        {T, E},
    ),
    "shrinks the pipe to 4 KiB, writes 3 MB": (
        "    fcntl.fcntl(1, 1031, 4096)\n    os.write(1, b' ' * (3 << 20))\n",
        {P},
    ),
    "writes at 64 KiB boundaries": (
        "    for k in (1 << 16, 1 << 17, 1 << 20):\n        os.write(1, b' ' * k)\n",
        {P},
    ),
    "splits its UTF-8 across writes": (
        "    for b in '\\u00e9\\u4e2d '.encode():\n        os.write(1, bytes([b]))\n",
        {F},
    ),
    "sets O_ASYNC with itself as owner": (
        "    fcntl.fcntl(cap.r, fcntl.F_SETOWN, os.getpid())\n"
        "    fcntl.fcntl(cap.r, fcntl.F_SETFL, fcntl.fcntl(cap.r, fcntl.F_GETFL) | 0o20000)\n",
        {P, C},
    ),
    # the draining thread
    "SIGSTOPs its drainer": ("    tgkill(signal.SIGSTOP)\n", {T, P}),
    "SIGKILLs its drainer": ("    tgkill(signal.SIGKILL)\n", {C}),
    "sends blocked signals to its drainer": (
        "    for s in (signal.SIGUSR1, signal.SIGTERM, signal.SIGSEGV, signal.SIGPIPE):\n"
        "        tgkill(s)\n",
        {P},
    ),
    "marks the capture lost": ("    cap.lost = True\n", {E}),
    "puts text in the capture's buffer": ("    cap.acc += b'junk '\n", {F}),
    "makes the capture's collect raise": ("    cap.collect = None\n", {C}),
    # the records' descriptor and standard input
    # its own record forged (the true answer): its real one is then out of order, a protocol
    # violation that costs the next test too (CRASH), and the rest run in a fresh child
    "writes a forged line to fd 3": (
        "    os.write(3, b'[0, \"V\", 0.1, 0.1, \"\\'6\\'\"]\\n')\n",
        {P},
    ),
    "closes fd 3": ("    os.close(3)\n", {C}),
    "closes fd 0": ("    os.close(0)\n", {P}),
    "patches os.write to drop everything": ("    os.write = lambda fd, b: len(b)\n", {C}),
    # the end of the test
    "a __del__ in a cycle that never returns": (
        "    class D:\n        def __del__(self):\n            while True:\n                pass\n"
        "    d = D()\n    d.me = d\n    del d\n",
        {T},
    ),
    "an atexit function that never returns": (
        "    import atexit\n    atexit.register(lambda: [0 for _ in iter(int, 1)])\n",
        {T},
    ),
    "an atexit function that exits 3": (
        "    import atexit\n    atexit.register(sys.exit, 3)\n",
        {P},
    ),
    "an atexit function that calls os._exit": (  # the print is lost, as under python3
        "    import atexit\n    atexit.register(os._exit, 0)\n",
        {F},
    ),
    "an atexit function that registers itself": (
        "    import atexit\n    def again():\n        atexit.register(again)\n"
        "    atexit.register(again)\n",
        {P},
    ),
    "a sys.stdout whose flush raises": (
        "    class Out:\n        def write(self, s):\n            return sys.__stdout__.write(s)\n"
        "        def flush(self):\n            raise ValueError\n    sys.stdout = Out()\n",
        {P, E},
    ),
    "a sys.stdout whose flush never returns": (
        "    class Out:\n        def write(self, s):\n            return sys.__stdout__.write(s)\n"
        "        def flush(self):\n            while True:\n                pass\n"
        "    sys.stdout = Out()\n",
        {T},
    ),
    "sys.stdout set to None": ("    sys.stdout = None\n", {F}),
    "a __del__ that prints at the end": (
        "    class D:\n        def __del__(self):\n            print('late')\n    d = D()\n",
        {P, F},
    ),
    "a thread that never ends": (
        "    import threading, time\n"
        "    threading.Thread(target=time.sleep, args=(1e9,)).start()\n",
        {T},
    ),
}
BATTERY_TESTS = [StdioTest(f"{n}\n", f"{2 * n}\n") for n in NS]  # tokens


def test_attacks_on_the_capture_cost_only_their_own_test(request):
    """Every attack costs at most its own cell (in the listed statuses); the row's next tests
    PASS; the honest row after each attack PASS.  Strict and basic in one test, one batch each
    (its TIMEOUTs each take the budget twice: the retry)."""
    progs = []
    for body, _ in STRIKES.values():
        progs += [FIND + body + "print(2 * n)\n", HONEST]
    for isolation in ("strict", "basic"):
        with _sandbox(isolation, timeout_s=0.5, memory_mb=512) as box:
            t = box.run(progs, BATTERY_TESTS)
        assert (t.status[1::2] == P).all(), (isolation, t.status[1::2].tolist())
        for k, (name, (_, allowed)) in enumerate(STRIKES.items()):
            row, detail = t.status[2 * k].tolist(), t.detail[2 * k].tolist()
            after = [C, P] if name == "writes a forged line to fd 3" else [P, P]
            assert row[0] in allowed and row[1:] == after, (isolation, name, row, detail)


# ------------------------------------------------- competitive-programming scripts, generated
# A reader, a task, a writer and a way of running main, drawn with a seeded generator; each
# script's verdicts must be those its own output under ``python3`` earns.  (PyRival's FastIO
# with main in a thread is left out: CPython itself printed nothing in about 1 run of 20.)
READERS = {
    "input()": "def read():\n    n = int(input())\n    return n, list(map(int, input().split()))\n",
    "sys.stdin.readline": (
        "import sys\ninput = sys.stdin.readline\n"
        "def read():\n    n = int(input())\n    return n, list(map(int, input().split()))\n"
    ),
    "sys.stdin.buffer.readline": (
        "import sys\ninput = sys.stdin.buffer.readline\n"
        "def read():\n    n = int(input())\n    return n, list(map(int, input().split()))\n"
    ),
    "open(0).read()": (
        "def read():\n    d = open(0).read().split()\n    return int(d[0]), list(map(int, d[1:]))\n"
    ),
    "os.read(0, st_size)": (
        "import os\ndef read():\n    d = os.read(0, os.fstat(0).st_size).split()\n"
        "    return int(d[0]), list(map(int, d[1:]))\n"
    ),
    "iter(sys.stdin)": (
        "import sys\ndef read():\n    it = iter(sys.stdin)\n    n = int(next(it))\n"
        "    return n, list(map(int, next(it).split()))\n"
    ),
    "FastIO": FASTIO
    + "def read():\n    n = int(input())\n    return n, list(map(int, input().split()))\n",
}
TASKS = {
    "sum": "def solve(n, a):\n    return [str(sum(a))]\n",
    "sorted": "def solve(n, a):\n    return [' '.join(map(str, sorted(a)))]\n",
    "prefix sums": (
        "def solve(n, a):\n    out, s = [], 0\n    for x in a:\n        s += x\n"
        "        out.append(str(s))\n    return out\n"
    ),
    "deep recursion": (
        "def rec(a, i):\n    return 0 if i == len(a) else a[i] + rec(a, i + 1)\n"
        "def solve(n, a):\n    return [str(rec(a, 0))]\n"
    ),
}
WRITERS = {
    "print each": "def write(lines):\n    for x in lines:\n        print(x)\n",
    "print(*a, sep)": "def write(lines):\n    print(*lines, sep='\\n')\n",
    "write join": (
        "import sys\ndef write(lines):\n    sys.stdout.write('\\n'.join(lines) + '\\n')\n"
    ),
    "no final newline": "import sys\ndef write(lines):\n    sys.stdout.write('\\n'.join(lines))\n",
    "os.write": (
        "import os\ndef write(lines):\n    os.write(1, ('\\n'.join(lines) + '\\n').encode())\n"
    ),
    "StringIO, atexit": (
        "import atexit, io, sys\n_buf, _out = io.StringIO(), sys.stdout\nsys.stdout = _buf\n"
        "atexit.register(lambda: _out.write(_buf.getvalue()))\n"
        "def write(lines):\n    for x in lines:\n        print(x)\n"
    ),
    "open(1) left open": (
        "_f = open(1, 'w')\ndef write(lines):\n    _f.write('\\n'.join(lines) + '\\n')\n"
    ),
    "flush each": "def write(lines):\n    for x in lines:\n        print(x, flush=True)\n",
}
MAINS = {
    "plain": "n, a = read()\nwrite(solve(n, a))\n",
    "exit() in main": (
        "def main():\n    write(solve(*read()))\n    exit()\n    print(0)\nmain()\nprint(1)\n"
    ),
    "sys.exit(0) after": "import sys\nwrite(solve(*read()))\nsys.exit(0)\n",
    "thread with a large stack": (
        "import sys, threading\nsys.setrecursionlimit(10 ** 6)\nthreading.stack_size(2 ** 27)\n"
        "def main():\n    write(solve(*read()))\nthreading.Thread(target=main).start()\n"
    ),
}


def _generated(rng: random.Random, task: str) -> str:
    reader, writer = rng.choice(sorted(READERS)), rng.choice(sorted(WRITERS))
    main = "thread with a large stack" if task == "deep recursion" else rng.choice(sorted(MAINS))
    if reader == "FastIO" and (main.startswith("thread") or writer == "StringIO, atexit"):
        reader = "input()"  # see above; and FastIO replaces the sys.stdout that writer saves
    return READERS[reader] + TASKS[task] + WRITERS[writer] + MAINS[main]


def test_generated_scripts_earn_what_their_output_under_python3_earns(sb):
    rng = random.Random(1402)
    for task in TASKS:
        progs = [_generated(rng, task) for _ in range(5)]
        inputs = []
        for n in (1, 2000 if task == "deep recursion" else 60_000):  # up to 600 KB
            a = [rng.randint(-(10**9), 10**9) for _ in range(n)]
            inputs.append(f"{n}\n{' '.join(map(str, a))}\n")
        outs = [[_oracle(src, stdin) for stdin in inputs] for src in progs]
        ref = [outs[0][j][1] for j in range(len(inputs))]
        wrong = [r.replace("1", "2", 1) if "1" in r else r + "1" for r in ref]
        columns = []
        for j, stdin in enumerate(inputs):
            columns += [
                (stdin, ref[j], "exact"),
                (stdin, ref[j], "lines"),
                (stdin, wrong[j], "lines"),
            ]
        t = sb.run(progs, [StdioTest(stdin, want, mode=mode) for stdin, want, mode in columns])
        for k, src in enumerate(progs):
            assert all(rc == 0 for rc, _ in outs[k]), (task, src)
            got = [(outs[k][j][1], j) for j in range(len(inputs))]
            wanted = []
            for out, j in got:
                exact = out == ref[j]
                same = out.rstrip("\n") == ref[j].rstrip("\n")  # only a final newline apart
                assert same, (task, src, out[:80], ref[j][:80])  # the generator is sound
                wanted += [P if exact else F, P, F]
            assert t.status[k].tolist() == wanted, (task, src, t.detail[k].tolist())


# --------------------------------------------------------------- os._exit and thread pools
# ``os._exit`` ends the process at once: the output is what reached fd 1 by then.  The child
# died with the script (CRASH "exited with status 0" on every test); now the test ends there,
# its record sent, the row goes on.  An executor never shut down: the interpreter's exit hook
# tells its idle threads to leave (they were joined until the budget ran out: TIMEOUT).
EXITS = {
    "flush, then os._exit(0)": "import os, sys\nprint(2 * int(input()))\nsys.stdout.flush()\n"
    "os._exit(0)\n",
    "os.write, then os._exit(0)": "import os\nos.write(1, b'%d\\n' % (2 * int(input())))\n"
    "os._exit(0)\nprint('never')\n",
    "print unflushed, then os._exit(0)": "import os\nprint(2 * int(input()))\nos._exit(0)\n",
    "os._exit(1) after the answer": "import os\nprint(2 * int(input()), flush=True)\nos._exit(1)\n",
    "os._exit(0) from main in a thread": "import os, threading\ndef main():\n"
    "    print(2 * int(input()), flush=True)\n    os._exit(0)\n"
    "threading.Thread(target=main).start()\n",
    "os._exit(0) in an atexit function": "import atexit, os, sys\nn = int(input())\n"
    "atexit.register(os._exit, 0)\nprint(2 * n)\nsys.stdout.flush()\n",
    "os._exit(0) skips atexit": "import atexit, os\natexit.register(print, 'atexit ran')\n"
    "print(2 * int(input()), flush=True)\nos._exit(0)\n",
    "os._exit(0) caught": "import os\nprint(2 * int(input()), flush=True)\ntry:\n"
    "    os._exit(0)\nexcept BaseException:\n    print('after')\n",
    "an executor left open, beside a function": (
        "from concurrent.futures import ThreadPoolExecutor\nex = ThreadPoolExecutor(2)\n"
        "def main():\n    n = int(input())\n    print(ex.submit(lambda: 2 * n).result())\nmain()\n"
    ),
}


def test_os_exit_and_open_executors_end_a_test_as_under_python3(sb):
    exits = dict(EXITS)
    if sb.isolation_report()["unreachable"]:
        # basic as root with the interpreter under a private home: the programs' uid imports
        # only the modules the zygote pre-imported (docs/sandbox.md), not concurrent.futures
        del exits["an executor left open, beside a function"]
    t = sb.run(list(exits.values()), TESTS)
    for k, (name, src) in enumerate(exits.items()):
        wanted = []
        for test in TESTS:
            rc, out = _oracle(src, test.stdin)
            wanted.append(E if rc else P if out == test.stdout else F)
        assert t.status[k].tolist() == wanted, (name, wanted, t.detail[k].tolist())
    assert t.status[:, 0].tolist() == [P, P, F, E, P, P, P, P, P][: len(exits)]  # the oracle


def test_what_a_script_leaves_running_writes_only_into_its_own_row():
    """Basic isolation lets a script fork: a child that writes into fd 1 long after its test
    reaches at most the later tests of its own row (the capture is the row's child's), never
    the rows after it on the same worker (the row's processes are killed at its end)."""
    leaver = (
        "import os, time\nn = int(input())\nif n == 3 and os.fork() == 0:\n"
        "    for _ in range(400):\n        time.sleep(0.005)\n        os.write(1, b'junk ')\n"
        "    os._exit(0)\nprint(2 * n)\n"
    )
    # Drainers leaked test after test (each goes on reading a pipe of the script's own, put
    # where the capture read), until the script runs out of descriptors (ERROR).
    hoarder = (
        "import gc, os\nn = int(input())\n"
        "cap = next(o for o in gc.get_objects() if type(o).__name__ == '_Stdout')\n"
        "os.close(cap.r)\nr, w = os.pipe()\nif r != cap.r:\n    os.dup2(r, cap.r)\n"
        "os.set_blocking(cap.r, False)\n"
        "print(2 * n)\n"
    )
    tests = [StdioTest(f"{n}\n", f"{2 * n}\n") for n in (*NS, *range(8, 48))]
    with _sandbox("basic", timeout_s=2.0, workers=1) as box:
        t = box.run([leaver, HONEST, hoarder, HONEST], tests)
    assert (t.status[1] == P).all() and (t.status[3] == P).all(), t.detail.tolist()
    assert set(t.status[0].tolist()) <= {P, F}, t.detail[0].tolist()
    assert set(t.status[2].tolist()) <= {P, F, E}, t.detail[2].tolist()  # its output lost


# --------------------------------------------------------------- the standard streams by path
BY_PATH = {
    "open('/dev/stdin')": "n = int(open('/dev/stdin').read().split()[0])\nprint(2 * n)\n",
    "sys.stdin = open('/dev/stdin')": (
        "import sys\nsys.stdin = open('/dev/stdin')\nprint(2 * int(input()))\n"
    ),
    "/dev/fd/0": "n = int(open('/dev/fd/0').read())\nprint(2 * n)\n",
    "open('/dev/stdout', 'w')": (
        "n = int(input())\nwith open('/dev/stdout', 'w') as out:\n    out.write(f'{2 * n}\\n')\n"
    ),
}


def test_the_standard_streams_by_their_paths(sb):
    """As an ordinary user bubblewrap's /dev held /dev/null alone: ``open('/dev/stdin')`` was
    ERROR FileNotFoundError and ``open('/dev/stdout', 'w')`` ERROR OSError (CI's ordinary-user
    run); as root ``--dev`` makes the links.  Now they are there on every path."""
    t = sb.run(list(BY_PATH.values()), TESTS)
    for k, (name, src) in enumerate(BY_PATH.items()):
        assert [_oracle(src, x.stdin) for x in TESTS] == [(0, x.stdout) for x in TESTS], name
        assert t.status[k].tolist() == [P, P, P], (name, t.detail[k].tolist())
