"""Attacks on what made each fork cheaper (docs/sandbox.md, "Cheaper forks"): none of it may
weaken isolation or integrity.

- ``_sweep`` returns at once when ``waitpid`` finds no child at all: programs that leave a
  process behind in every way a process can leave its parent (sessions, process groups, double
  and triple forks, raw ``clone`` with another exit signal or ``CLONE_PARENT``, a subreaper of
  their own, a thread group whose leader exited, exec'd helpers, a stopped process, a chain of
  forks that keeps reparenting, a pid namespace of their own, and an intermediate that exits at
  the moment the program returns) leave nothing alive after their row, nor after
  ``Sandbox.close()``: as root and as an ordinary user, basic and strict.
- the zygote's buffers are not inherited (MADV_DONTFORK): a program that reaches them through
  the zygote's own frames reads nothing of them.
- the rehearsed test loop and ``LD_BIND_NOW``: what a program sees of its interpreter is the same
  in every row, worker and sandbox, and what it saw before (the alarm's handler, the recursion
  limit, no ``random``, no ``LD_BIND_NOW`` in its environment); numpy still imports.
- ``record_line``: values and exception names of every awkward spelling reach the comparison
  exactly (a PASS for the right text, a FAIL for a text one character off).
"""

from __future__ import annotations

import contextlib
import os
import platform
import secrets
import time

import pytest

from rewardkit.sandbox import Sandbox, Status, TestCase

from .test_pool import _as_ordinary_user

pytestmark = [
    pytest.mark.skipif(platform.machine() != "x86_64", reason="the sandbox is x86_64's"),
    pytest.mark.filterwarnings("ignore::rewardkit.sandbox.SandboxWarning"),
]

TESTS = [TestCase(f"({n},)", str(n * 7)) for n in range(1, 4)]

# ------------------------------------------------------------------ processes left behind
# Every leaver answers each test right only if the process it leaves really started (it says
# so on a pipe): an instance that could not leave anything does not pass silently.  A process
# left behind names itself TAG (its comm, or its command line for exec'd ones) and sleeps.
LEAVE_PRELUDE = """import ctypes, os, select, signal, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
TAG = %r
R, W = os.pipe()
def linger(stop=False):
    libc.prctl(15, TAG.encode(), 0, 0, 0)
    os.write(W, b'.')
    if stop:
        os.kill(os.getpid(), signal.SIGSTOP)
    time.sleep(30)
    os._exit(0)
def clone(flags):  # the raw system call: no fork handlers, any exit signal
    return libc.syscall(56, flags, 0, 0, 0, 0)
def started():
    return bool(select.select([R], [], [], 3.0)[0]) and os.read(R, 1) == b'.'
done = []
def f(x):
    if not done:
        done.append(1)
        leave()
        if not started():
            return -1
    return x * 7
"""
_SH = "'sh', '-c', 'echo .; sleep 30; : ' + TAG"
LEAVERS = {
    "a child": "def leave():\n    if os.fork() == 0:\n        linger()\n",
    "a child in a session of its own": (
        "def leave():\n    if os.fork() == 0:\n        os.setsid()\n        linger()\n"
    ),
    "a child in a process group of its own": (
        "def leave():\n    if os.fork() == 0:\n        os.setpgid(0, 0)\n        linger()\n"
    ),
    "a daemon (double fork)": (
        "def leave():\n    pid = os.fork()\n    if pid == 0:\n        if os.fork() == 0:\n"
        "            linger()\n        os._exit(0)\n    os.waitpid(pid, 0)\n"
    ),
    "a daemon with setsid between its forks": (
        "def leave():\n    pid = os.fork()\n    if pid == 0:\n        os.setsid()\n"
        "        if os.fork() == 0:\n            linger()\n        os._exit(0)\n"
        "    os.waitpid(pid, 0)\n"
    ),
    "a triple fork": (
        "def leave():\n    if os.fork() == 0:\n        if os.fork() == 0:\n"
        "            os.setsid()\n            if os.fork() == 0:\n                linger()\n"
        "        os._exit(0)\n"
    ),
    "a child forked by a thread": (
        "def leave():\n    def go():\n        if os.fork() == 0:\n            linger()\n"
        "    t = threading.Thread(target=go)\n    t.start()\n    t.join()\n"
    ),
    "a raw clone with no exit signal": ("def leave():\n    if clone(0) == 0:\n        linger()\n"),
    "a raw clone with SIGUSR1 as exit signal, in a session of its own": (
        "def leave():\n    if clone(10) == 0:\n        os.setsid()\n        linger()\n"
    ),
    "a raw clone with CLONE_PARENT (a sibling of the program)": (
        "def leave():\n    if clone(0x8000 | 17) == 0:\n        linger()\n"
    ),
    "CLONE_PARENT asking for SIGUSR1, in a session of its own": (
        "def leave():\n    if clone(0x8000 | 10) == 0:\n        os.setsid()\n        linger()\n"
    ),
    "an exit-signal-less clone whose daemon outlives it": (
        "def leave():\n    if clone(0) == 0:\n        if os.fork() == 0:\n            os.setsid()\n"
        "            linger()\n        os._exit(0)\n"
    ),
    "a subreaper of its own that exits": (
        "def leave():\n    if os.fork() == 0:\n        libc.prctl(36, 1, 0, 0, 0)\n"
        "        if os.fork() == 0:\n            os.setsid()\n            linger()\n"
        "        time.sleep(0.05)\n        os._exit(0)\n"
    ),
    "a thread group whose leader exited": (
        "def leave():\n    if os.fork() == 0:\n        os.setsid()\n"
        "        threading.Thread(target=linger).start()\n        time.sleep(0.05)\n"
        "        libc.syscall(60, 0)  # SYS_exit: this thread only, the group lives on\n"
    ),
    "a stopped process": (
        "def leave():\n    if os.fork() == 0:\n        os.setsid()\n        linger(stop=True)\n"
    ),
    "a chain of forks that keeps reparenting": (
        "def leave():\n    if os.fork() == 0:\n        os.setsid()\n        first = True\n"
        "        while True:\n            libc.prctl(15, TAG.encode(), 0, 0, 0)\n"
        "            if first:\n                os.write(W, b'.')\n                first = False\n"
        "            time.sleep(0.002)\n            try:\n                if os.fork():\n"
        "                    os._exit(0)\n            except OSError:\n"
        "                time.sleep(0.01)\n"
    ),
    "an exec'd shell in a session of its own": (
        "def leave():\n    if os.fork() == 0:\n        os.setsid()\n        os.dup2(W, 1)\n"
        "        os.execv('/bin/sh', [" + _SH + "])\n"
    ),
    "a posix_spawn'd shell with setsid": (
        "def leave():\n    os.posix_spawn('/bin/sh', ["
        + _SH
        + "], dict(os.environ), setsid=True,\n"
        "                   file_actions=[(os.POSIX_SPAWN_DUP2, W, 1)])\n"
    ),
    "a pid namespace of its own (its init and a child of that)": (
        "def leave():\n    if os.fork() == 0:\n        os.setsid()\n"
        "        libc.unshare(0x10000000 | 0x20000000)  # may be refused: then a plain child\n"
        "        if os.fork() == 0:\n            if os.fork() == 0:\n                linger()\n"
        "            time.sleep(30)\n            os._exit(0)\n        os._exit(0)\n"
    ),
    **{
        f"an intermediate that exits {ms} ms after its daemon started": (
            "def leave():\n    if os.fork() == 0:\n        if os.fork() == 0:\n"
            f"            linger()\n        started()\n        os.write(W, b'.')\n"
            f"        time.sleep({ms / 1000})\n        os._exit(0)\n"
        )
        for ms in (0, 1, 3, 10, 30)
    },
}
# A leaver at import rather than in its tested function.
LEAVE_AT_IMPORT = (
    "if os.fork() == 0:\n    os.setsid()\n    linger()\nassert started()\ndone.append(1)\n"
)
# Run right after each leaver on the same worker: how many tasks of TAG it finds (0 where
# /proc cannot be listed: the test process looks for itself).
CHECKER = """import os
TAG = %r
def f(x):
    n = 0
    try:
        pids = os.listdir('/proc')
    except OSError:
        pids = []
    for p in pids:
        if not p.isdigit():
            continue
        try:
            with open(f'/proc/{p}/cmdline', 'rb') as fh:
                n += TAG.encode() in fh.read()
            for t in os.listdir(f'/proc/{p}/task'):
                with open(f'/proc/{p}/task/{t}/comm') as fh:
                    n += fh.read().strip() == TAG
        except OSError:
            pass
    return x * 7 + n
"""


def _tagged(tag: str) -> list[int]:
    """Every task on the machine named ``tag``, or whose command line holds it."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as fh:
                if tag.encode() in fh.read():
                    out.append(int(p))
                    continue
            for t in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{t}/comm") as fh:
                    if fh.read().strip() == tag:
                        out.append(int(p))
        except OSError:
            pass
    return out


def _leave_and_check(isolation: str, nonroot: bool) -> None:
    tag = "rkleft" + secrets.token_hex(4)
    prelude = LEAVE_PRELUDE % tag
    names = [*LEAVERS, "at import"]
    leavers = [prelude + src for src in LEAVERS.values()]
    leavers.append(prelude.replace("done = []\n", "done = []\n" + LEAVE_AT_IMPORT))
    programs = []
    for src in leavers:  # each leaver, then a checker on the same (only) worker
        programs += [src, CHECKER % tag]
    box = Sandbox(timeout_s=3.0, memory_mb=256, workers=1, isolation=isolation)
    if nonroot:
        _as_ordinary_user(box)
    try:
        with box:
            table = box.run(programs, TESTS, entry_point="f")
            left = _tagged(tag)
        time.sleep(0.2)
        after = _tagged(tag)
    finally:
        for pid in _tagged(tag):  # never leave them to the next test
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
    got = {
        (names[k // 2] if k % 2 == 0 else f"checker after {names[k // 2]}"): [
            Status(s).name for s in table.status[k]
        ]
        for k in range(len(programs))
    }
    if isolation == "basic":  # the leavers could fork: each left its process, then lost it
        bad = {n: g for n, g in got.items() if g != ["PASS"] * len(TESTS)}
    else:  # strict may refuse what a leaver needs; its checkers must still find nothing
        bad = {n: g for n, g in got.items() if n.startswith("checker") and g != ["PASS"] * 3}
    assert sorted(bad) == [], bad
    assert left == [], "a process a program left outlived its row"
    assert after == [], "a process a program left outlived Sandbox.close()"


@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["basic", "strict"])
@pytest.mark.parametrize("nonroot", [False, True], ids=["as-run", "ordinary-user"])
def test_nothing_a_program_leaves_outlives_its_row(isolation, nonroot):
    if nonroot and os.geteuid() != 0:
        pytest.skip("as an ordinary user the run without the drop is this one")
    _leave_and_check(isolation, nonroot=nonroot)


# ------------------------------------------------------------------ the zygote's buffers
# A program reaches the zygote's Zygote object through the frames it was called from and
# reads its read and cell buffers: a fork must not carry them (MADV_DONTFORK), so the child
# faults.  It answers right only if it read something.
BUFFER_THIEF = """import ctypes, sys
def f(x):
    fr = sys._getframe(1)
    while fr is not None and 'z' not in fr.f_locals:
        fr = fr.f_back
    z = fr.f_locals['z']
    buf = getattr(z, %r)
    import mmap
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    return x * 7 + ctypes.string_at(addr + %d, 1)[0] * 0
"""


def test_a_program_cannot_read_the_zygotes_buffers():
    programs = [
        BUFFER_THIEF % (name, off)
        for name in ("rbuf", "cbuf")
        for off in (0, 4096, 1 << 16, 1 << 20)
    ]
    honest = "def f(x):\n    return x * 7\n"
    with Sandbox(timeout_s=2.0, workers=1) as sb:
        table = sb.run([*programs, honest], TESTS, entry_point="f")
    for row in range(len(programs)):
        got = {Status(s).name for s in table.status[row]}
        assert "PASS" not in got, (row, got, list(table.detail[row]))
        assert got == {"CRASH"}, (row, list(table.detail[row]))  # the fault, not an error
    assert {Status(s).name for s in table.status[-1]} == {"PASS"}


# ------------------------------------------------------------------ what a program sees
# A program reports its interpreter's state as the zygote left it (rehearsed, LD_BIND_NOW): as
# an exception's name (a FAIL's text is not reported), whether each expectation holds, then a
# digest of the whole view.
FINGERPRINT = """import gc, hashlib, os, signal, sys
def f(x):
    h = signal.getsignal(signal.SIGALRM)
    try:
        with open('/proc/self/environ', 'rb') as fh:
            env = b'LD_BIND_NOW' in fh.read()
    except OSError:
        env = None
    armed = signal.getitimer(signal.ITIMER_REAL)[0] > 0
    ok = [getattr(h, '__qualname__', None) == '_on_alarm', armed, sys.getrecursionlimit() == 1000,
          ('ran' + 'dom') not in sys.modules, sorted(os.environ) == ['HOME', 'PATH', 'TMPDIR'],
          not signal.pthread_sigmask(signal.SIG_BLOCK, []), gc.isenabled(),
          gc.get_freeze_count() > 0]
    view = repr((getattr(h, '__module__', None), gc.get_threshold(), sorted(sys.modules),
                 env, [str(getattr(signal.getsignal(s), '__qualname__', signal.getsignal(s)))
                       for s in range(1, 32) if s not in (9, 19)],
                 sys.flags, hash('rewardkit'), sys.getdlopenflags(), sys.path))
    flags = ''.join('1' if b else '0' for b in ok)
    raise type('V' + flags + '_' + hashlib.sha256(view.encode()).hexdigest()[:16],
               (Exception,), {})()
"""
# Every expectation holds on both levels but one: whether ``random`` is already imported.  Strict
# preloads only what its probe child could not import itself (random is not among them, and a
# rehearsal that imported it would show here); under basic what the zygote preloads depends on
# the path (as root every preloaded module, random among them; as an ordinary user not), so that
# one flag is not asserted there.
RANDOM_FLAG = 3
# Under basic isolation a program may start another interpreter: it gets the program's own
# environment, without LD_BIND_NOW.
CHILD_ENV = """import os
def f(x):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # exec inherits the C environment, not os.environ's copy
        os.dup2(w, 1)
        os.execv('/usr/bin/env', ['env'])
    os.close(w)
    out = b''
    while chunk := os.read(r, 4096):
        out += chunk
    os.waitpid(pid, 0)
    return x * 7 if b'HOME=' in out and b'LD_BIND_NOW' not in out else -1
"""


@pytest.mark.parametrize("isolation", ["strict", "basic"])
def test_every_program_sees_the_same_interpreter_and_not_the_rehearsal(isolation):
    tests = [TestCase(f"({n},)", "0") for n in range(3)]
    views = []
    for _ in range(2):  # two sandboxes, two workers each, many rows
        with Sandbox(timeout_s=2.0, workers=2, isolation=isolation) as sb:
            table = sb.run([FINGERPRINT] * 6, tests, entry_point="f")
        assert (table.status == Status.ERROR).all(), table.detail
        views += [str(v) for row in table.detail for v in row]
    seen = set(views)
    assert len(seen) == 1, seen  # the same in every row, worker and sandbox
    flags = seen.pop()[1:9]  # the alarm, limit, random, environment, mask, collector as before
    if isolation == "basic":
        flags = flags[:RANDOM_FLAG] + "1" + flags[RANDOM_FLAG + 1 :]
    assert flags == "11111111", flags


@pytest.mark.skipif(os.name != "posix", reason="POSIX")
def test_a_subprocess_of_a_program_does_not_get_ld_bind_now():
    with Sandbox(timeout_s=5.0, workers=1, isolation="basic") as sb:
        table = sb.run([CHILD_ENV], TESTS[:1], entry_point="f")
    assert Status(table.status[0, 0]) == Status.PASS, list(table.detail[0])


def test_numpy_imports_and_computes_under_ld_bind_now():
    pytest.importorskip("numpy")
    prog = (
        "import numpy as np\ndef f(n):\n"
        "    a = np.arange(1, n + 1, dtype=np.float64)\n"
        "    return int(np.linalg.det(np.diag(a)).round()) + int(np.fft.rfft(a)[0].real)\n"
    )
    tests = [TestCase("(3,)", str(6 + 6)), TestCase("(4,)", str(24 + 10))]
    with Sandbox(timeout_s=10.0, workers=1, packages=("numpy",)) as sb:
        table = sb.run([prog], tests, entry_point="f")
    assert (table.status == Status.PASS).all(), list(table.detail[0])


# ------------------------------------------------------------------ record spelling
# Outputs of every awkward spelling: quotes, backslashes, control characters, line and
# paragraph separators, non-BMP, lone surrogates, escapes that look like JSON, a record's
# own shape.  Each program returns its text; the right one must PASS, one character off FAIL.
TEXTS = [
    "",
    '"',
    "\\",
    '\\"',
    "\n",
    "\r\n",
    "\t\x00\x1f\x7f",
    "\u2028\u2029",
    "\ud800",
    "\udfff",
    "\ud83d\ude00",
    "😀",
    "é",
    "\ufeff",
    '", "V", 0.0, 0.0, "',
    '[0, "V", 0.0, 0.0, "7"]\n',
    "\\u0041",
    "A" * 5000,
    "'",
    "'''\"\"\"",
    "\x85",
    "NaN",
    "Infinity",
    "-0.0",
]
EXC_NAMES = ['Quote"Error', "Back\\slash", "New\nLine", "Sep\u2028", "É" * 120, "😀Error"]


def test_every_spelling_of_a_value_and_an_exception_reaches_the_comparison_exactly():
    tests = [TestCase(f"({k},)", repr(t)) for k, t in enumerate(TEXTS)]
    right = f"T = {TEXTS!r}\ndef f(k):\n    return T[k]\n"
    wrong = f"T = {TEXTS!r}\ndef f(k):\n    return T[k] + 'x'\n"
    raisers = [f"def f(k):\n    raise type({name!r}, (Exception,), {{}})()\n" for name in EXC_NAMES]
    with Sandbox(timeout_s=2.0, workers=2) as sb:
        table = sb.run([right, wrong, *raisers], tests, entry_point="f")
    assert [Status(s).name for s in table.status[0]] == ["PASS"] * len(TEXTS), table.detail[0]
    assert [Status(s).name for s in table.status[1]] == ["FAIL"] * len(TEXTS), table.detail[1]
    for row, name in enumerate(EXC_NAMES, start=2):
        assert {Status(s).name for s in table.status[row]} == {"ERROR"}, table.detail[row]
        assert set(table.detail[row]) == {name[:100]}, (name, set(table.detail[row]))


# A program that answers wrong and replaces what ``record_line`` looks up when it runs (the
# harness's globals, reached through the frame that called it; builtins; the sender's own
# reference) to spell records of other cells: an index out of range, ``true``, ``1.0``, a
# negative one, a record of a whole-row kind, two records in one.  Its own cells get no PASS,
# and the honest programs run between the hostile ones on the same workers keep theirs.
_PATCH = "import builtins, sys\ndone = []\ndef f(x):\n    if not done:\n        done.append(1)\n"
_G = "        G = sys._getframe(1).f_globals\n"
FORGE = '"0"]\\n[%s, "V", 0.0, 0.0, "0"'
RECORD_PATCHES = {
    **{
        f"the string quoting forges index {idx}": _PATCH
        + _G
        + f"        G['_quote'] = lambda s: '{FORGE % idx}'\n"
        for idx in ("99", "true", "1.0", "-1", '"1"', "[1]")
    },
    "the string quoting writes a row failure": _PATCH
    + _G
    + '        G[\'_quote\'] = lambda s: \'"0"]\\n["X", "E", "x"\'\n',
    "the string quoting returns bytes": _PATCH + _G + "        G['_quote'] = lambda s: b'0'\n",
    "type() says every value is an int": _PATCH + "        builtins.type = lambda v: int\n",
    "the fallback json.dumps forges and canon returns a str subclass": _PATCH
    + _G
    + "        class S(str):\n            pass\n        c = G['canon']\n"
    "        G['canon'] = lambda v: S(c(v))\n"
    "        G['json'] = type(sys)('json')\n"
    "        G['json'].dumps = lambda r: '[true, \"V\", 0.0, 0.0, \"0\"]'\n",
    "the sender's own reference forges": _PATCH
    + "        send = sys._getframe(1).f_locals['send']\n"
    "        send.__closure__[0].cell_contents = (\n"
    "            lambda r: b'[' + str(r[0] + 1).encode() + b', \"V\", 0.0, 0.0, \"0\"]\\n')\n",
}
for _name, _src in list(RECORD_PATCHES.items()):
    RECORD_PATCHES[_name] = _src + "    return x * 7 + 1\n"


def test_a_program_that_patches_the_record_spelling_marks_no_cell_it_did_not_answer():
    honest = "def f(x):\n    return x * 7\n"
    programs = []
    for src in RECORD_PATCHES.values():
        programs += [src, honest]
    with Sandbox(timeout_s=2.0, workers=2) as sb:
        table = sb.run(programs, TESTS, entry_point="f")
    for k, name in enumerate(RECORD_PATCHES):
        hostile = [Status(s).name for s in table.status[2 * k]]
        assert "PASS" not in hostile, (name, hostile, list(table.detail[2 * k]))
        honest_row = [Status(s).name for s in table.status[2 * k + 1]]
        assert honest_row == ["PASS"] * len(TESTS), (name, list(table.detail[2 * k + 1]))
