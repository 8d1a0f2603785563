"""Attack classes on the sandbox as it was made faster and given its Landlock caps, by many
instances each, through the public API (``Sandbox``, ``Sandbox.run``, ``TestCase``).

- (f) the entry cap of the ordinary-user Landlock path (``file-cap``): entries made beside the
  watched work directory, in the directory of work directories that the Landlock rule grants
  and that, as an ordinary user, belongs to the programs' own uid;
- (b) the process cap of the ordinary-user Landlock path: every worker's children run as the
  caller's uid, and ``RLIMIT_NPROC`` counts the tasks of a uid, so a program holding threads on
  one worker made the thread starts of the honest programs on the other fail.
"""

from __future__ import annotations

import os

import pytest

from rewardkit.sandbox import Sandbox, Status, StdioTest, TestCase, _pool

from .test_attack_classes import BIG_STDIN, HOLDERS, STDIN_VICTIM, THREADED_VICTIMS, _as_script
from .test_pool import _as_ordinary_user

# The strict paths: what ``Sandbox()`` picks (bubblewrap here) and Landlock alone, each as
# root (a uid per worker) and as an ordinary user (as root: the workers run as a free uid).
PATHS = ["strict_default", "strict_landlock", "nonroot_default", "nonroot_landlock"]


def _box(path: str, **kw) -> Sandbox:
    confinement = "landlock" if path.endswith("landlock") else "auto"
    box = Sandbox(confinement=confinement, **kw)
    if path.startswith("nonroot"):
        if os.geteuid() != 0:
            pytest.skip("not root: the plain paths are the ordinary-user path")
        _as_ordinary_user(box)
    try:
        box.start()
    except Exception as e:  # a kernel without Landlock: that path is absent
        if confinement == "landlock":
            pytest.skip(f"no Landlock path here: {e}")
        raise
    return box


# ------------------------------------------------------ (f) entries beside the work directory
_BESIDE_HEAD = """
import os
MIB = b"x" * (1 << 20)

def _put(path):
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    try:
        return os.write(fd, MIB) >> 20
    finally:
        os.close(fd)
"""
# Each returns the MiB it wrote outside its work directory (0 when refused).
BESIDE = {
    "open ../": "def _go(n):\n    return sum(_put(f'../up{k}') for k in range(n))\n",
    "the parent by absolute path": (
        "def _go(n):\n    top = os.path.dirname(os.getcwd())\n"
        "    return sum(_put(os.path.join(top, f'abs{k}')) for k in range(n))\n"
    ),
    "HOME/..": (
        "def _go(n):\n    top = os.environ.get('HOME', '.') + '/..'\n"
        "    return sum(_put(f'{top}/home{k}') for k in range(n))\n"
    ),
    "/proc/self/cwd/..": (
        "def _go(n):\n    return sum(_put(f'/proc/self/cwd/../p{k}') for k in range(n))\n"
    ),
    "the name the wipe uses": (
        "def _go(n):\n    return sum(_put(f'../.rk-{k + 1}') for k in range(n))\n"
    ),
    "made inside, renamed up": (
        "def _go(n):\n    out = 0\n    for k in range(n):\n        _put('r')\n"
        "        os.rename('r', f'../ren{k}')\n        out += 1\n    return out\n"
    ),
    "made inside, linked up": (
        "def _go(n):\n    out = 0\n    for k in range(n):\n        _put(f'l{k}')\n"
        "        os.link(f'l{k}', f'../lnk{k}')\n        os.unlink(f'l{k}')\n        out += 1\n"
        "    return out\n"
    ),
    "an unnamed file linked up": (
        "def _go(n):\n    out = 0\n    for k in range(n):\n"
        "        fd = os.open('..', os.O_TMPFILE | os.O_WRONLY, 0o600)\n"
        "        os.write(fd, MIB)\n"
        "        os.link(f'/proc/self/fd/{fd}', f'../tmp{k}', follow_symlinks=True)\n"
        "        os.close(fd)\n        out += 1\n    return out\n"
    ),
    "a symlink up": (
        "def _go(n):\n    for k in range(n):\n        os.symlink('x' * 200, f'../sym{k}')\n"
        "    return n\n"
    ),
    "a fifo up": "def _go(n):\n    os.mkfifo('../fifo')\n    return 1\n",
}


def _beside(body: str) -> str:
    return (
        _BESIDE_HEAD
        + body
        + "def f(n):\n    try:\n        return _go(n)\n    except OSError:\n        return 0\n"
    )


@pytest.mark.parametrize("path", [*PATHS, "nonroot_landlock without its tmpfs"])
def test_nothing_is_written_beside_the_work_directory(path, monkeypatch):
    """The Landlock rule grants everything beneath the directory of work directories, and as an
    ordinary user the programs' uid owns it: 200 files of 1 MiB written in ``..`` were never
    counted by the entry cap (it watches the work directory), 200 MiB on the host's /tmp, and
    nothing else bounded them.  Every way up is refused on the entry-cap path, and nowhere is
    more written beside the work directory than the total cap (a 64 MiB tmpfs elsewhere).
    The entry cap is what the ordinary user's Landlock path falls back to where its user
    namespace cannot mount a tmpfs (played by ``WRITE_CAP_MB = 0``)."""
    names = list(BESIDE)
    forced = path.endswith("without its tmpfs")
    if forced:
        monkeypatch.setattr(_pool, "WRITE_CAP_MB", 0)
        path = path.split()[0]
    with _box(path, timeout_s=5.0, memory_mb=256, workers=2) as box:
        capped = "file-cap" in box.isolation
        assert capped or not forced, box.isolation
        progs = [_beside(BESIDE[n]) for n in names]
        table = box.run(progs, [TestCase("(200,)", "0")], entry_point="f")
        control = box.run([_beside("def _go(n):\n    return n\n")], [TestCase("(200,)", "200")],
                          entry_point="f")  # fmt: skip
    assert control.passed.all()  # the check can fail: a program that could, would say so
    for n, s, d in zip(names, table.status[:, 0], table.detail[:, 0], strict=True):
        if capped:  # refused outright: the program answers 0
            assert s == Status.PASS, (path, n, Status(int(s)).name, d)
        else:  # else at most what the total cap holds (a tmpfs) or refused
            assert s in (Status.PASS, Status.FAIL), (path, n, Status(int(s)).name, d)
    if not capped:
        return
    # The file cap still counts what is made inside: the entry cap ends a program at its 65th.
    with _box(path, timeout_s=5.0, memory_mb=256, workers=1) as box:
        inside = box.run(
            [_BESIDE_HEAD + "def f(n):\n    return sum(_put(f'in{k}') for k in range(n))\n"],
            [TestCase("(200,)", "200")],
            entry_point="f",
        )
    assert inside.status[0, 0] == Status.CRASH, inside.detail[0, 0]
    assert "entries in its work directory" in inside.detail[0, 0]


@pytest.mark.parametrize("path", PATHS)
def test_what_is_written_beside_the_work_directory_stays_within_the_total_cap(path):
    """The volume: one program writes as many 1 MiB files as it can in ``..`` and says how many
    MiB it got; no path lets more than the 64 MiB total cap through."""
    prog = _BESIDE_HEAD + (
        "def f(n):\n    got = 0\n    for k in range(n):\n        try:\n"
        "            got += _put(f'../vol{k}')\n        except OSError:\n            break\n"
        "    return got <= 64\n"
    )
    with _box(path, timeout_s=5.0, memory_mb=256, workers=1) as box:
        table = box.run([prog], [TestCase("(200,)", "True")], entry_point="f")
    assert table.passed.all(), (path, Status(int(table.status[0, 0])).name, table.detail[0, 0])


# ------------------------------------------ (b) the process cap of the ordinary-user Landlock
@pytest.mark.slow
def test_a_program_holding_threads_does_not_starve_the_other_workers_landlock_nonroot():
    """Landlock as an ordinary user: all workers' children ran as one uid, and the holder's 64
    threads made the honest programs on the other worker fail to start theirs (RuntimeError,
    ERROR) while the holder passed: under group-relative rewards, sabotage that out-ranks the
    honest rows.  Each worker now counts its own tasks (a user namespace of its own)."""
    box = _box("nonroot_landlock", timeout_s=3.0, memory_mb=256, workers=2)
    with box:
        for hname, holder in HOLDERS.items():
            victims = list(THREADED_VICTIMS.values())
            progs = [p for v in victims * 3 for p in (holder, v)]
            table = box.run(progs, [TestCase("(1,)", "'held'")], entry_point="f")
            got = [Status(int(s)).name for s in table.status[1::2, 0]]
            assert got == ["PASS"] * len(got), (hname, got, list(table.detail[1::2, 0]))
            table = box.run([_as_script(holder), STDIN_VICTIM] * 6,
                            [StdioTest(BIG_STDIN, "40000\n")])  # fmt: skip
            got = [Status(int(s)).name for s in table.status[1::2, 0]]
            assert got == ["PASS"] * len(got), (hname, got, list(table.detail[1::2, 0]))


def test_a_program_is_still_capped_in_its_workers_own_namespace():
    """The namespace moves the count, not the cap: a program still gets at most 64 tasks."""
    prog = (
        "import threading, time\nthreading.stack_size(1 << 16)\n"
        "def f(n):\n    k = 0\n    for _ in range(n):\n        try:\n"
        "            threading.Thread(target=time.sleep, args=(0.5,), daemon=True).start()\n"
        "        except RuntimeError:\n            break\n        k += 1\n    return k <= 64\n"
    )
    with _box("nonroot_landlock", timeout_s=3.0, memory_mb=256, workers=1) as box:
        table = box.run([prog], [TestCase("(300,)", "True")], entry_point="f")
    assert table.passed.all(), table.detail[0, 0]


# ------------------------------------- determinism: the interpreter's hash key in every worker
# Each returns something that depends on the key str and bytes are hashed with (iteration order
# of sets of strings, hash values): an honest program's output, for the same input.
HASH_KEYED = {
    "hash of a str": "def f(x):\n    return hash(x)\n",
    "hash of bytes": "def f(x):\n    return hash(x.encode())\n",
    "a set of strings, listed": "def f(x):\n    return list({x + str(k) for k in range(9)})\n",
    "a string of a set's letters": "def f(x):\n    return ''.join(set('abcdefghij' + x))\n",
    "a frozenset of bytes, listed": (
        "def f(x):\n    return [b.decode() for b in frozenset(x.encode() + bytes([k]) "
        "for k in range(97, 106))]\n"
    ),
    "a dict made from a set": "def f(x):\n    return list(dict.fromkeys(set(x * 3 + 'xyzuvw')))\n",
    "a set of tuples of strings": (
        "def f(x):\n    return [t[0] for t in {(x, str(k)) for k in range(7)}][:3] + "
        "[len({(x, str(k)) for k in range(7)})]\n"
    ),
    "the first member popped": "def f(x):\n    return {x + c for c in 'qrstuvw'}.pop()\n",
}


@pytest.mark.parametrize("path", PATHS)
def test_outputs_do_not_depend_on_which_worker_or_run(path):
    """Identical programs must get identical cells wherever they run: run with ``-I``, every
    worker ignored ``PYTHONHASHSEED`` and hashed strings with a random key of its own, so the
    same honest program iterating a set of strings answered differently on the two workers of
    one batch (one PASS, its identical sibling FAIL: a difference in reward that the completion
    did not earn) and in each run.  Eight copies of each program on two workers, in two
    sandboxes: every row of a program has the same output hash, and both tables are equal."""
    tests = [TestCase("('abc',)", "0"), TestCase("('zq',)", "0")]
    tables = []
    for _ in range(2):
        with _box(path, timeout_s=3.0, memory_mb=256, workers=2) as box:
            tables.append(
                [box.run([src] * 8, tests, entry_point="f") for src in HASH_KEYED.values()]
            )
    for name, first, second in zip(HASH_KEYED, *tables, strict=True):
        assert (first.status == Status.FAIL).all(), (name, first.detail.tolist())
        rows = {tuple(r) for r in first.output_hash.tolist()}
        assert len(rows) == 1, (path, name, "rows of one program differ")
        assert first.digest == second.digest, (path, name, "two runs differ")


IMPORT_DRAWS = {
    "random() at import": "import random\nR = [random.random() for _ in range(3)]\n",
    "a shuffle at import": "import random\nR = list(range(9))\nrandom.shuffle(R)\n",
    "from random import": "from random import randrange\nR = randrange(10**9)\n",
    "a sample at import": "import random as rnd\nR = rnd.sample(range(100), 5)\n",
}


@pytest.mark.parametrize("path", ["strict_default", "strict_landlock"])
def test_random_draws_at_import_are_the_same_in_every_run(path):
    """``random`` is seeded before each test; draws made while the program's module runs (a
    random base of a rolling hash, a shuffled pivot order) were seeded from the OS, so an honest
    program answered differently in each run and on each worker."""
    tests = [TestCase("(1,)", "0")]
    digests = []
    for _ in range(2):
        with _box(path, timeout_s=3.0, memory_mb=256, workers=2) as box:
            progs = [src + "def f(x):\n    return R\n" for src in IMPORT_DRAWS.values()]
            table = box.run([p for p in progs for _ in range(6)], tests, entry_point="f")
        for k, name in enumerate(IMPORT_DRAWS):
            rows = set(table.output_hash[6 * k : 6 * k + 6, 0].tolist())
            assert len(rows) == 1, (path, name, "rows of one program differ")
        digests.append(table.digest)
    assert digests[0] == digests[1]


# ------------------------------- (a)/(g) record bytes: what the zygote forwards byte for byte
GOOD = b'"1235678"'  # the right answer of test 1 (f(x) = 1234567 + 1111·x), as a JSON string
# Bytes a child writes as its record for test 1.  Each is not one JSON value filling a UTF-8
# line: a protocol violation (CRASH for that cell), never an answer, and never a lost worker.
VIOLATIONS = {
    "invalid UTF-8 after the value": b'[1, "V", 0.0, 0.0, "1235678\xff"]',
    "an overlong quote closing the string": b'[1, "V", 0.0, 0.0, "1235678\xc0\xa2]',
    "an overlong NUL in the string": b'[1, "V", 0.0, 0.0, "1235678\xc0\x80"]',
    "a raw NUL after the array": b'[1, "V", 0.0, 0.0, ' + GOOD + b"]\x00",
    "a raw control character in the string": b'[1, "V", 0.0, 0.0, "12356\x1f78"]',
    "a CR after the array": b'[1, "V", 0.0, 0.0, ' + GOOD + b"]\r",
    "a trailing comma": b'[1, "V", 0.0, 0.0, ' + GOOD + b", ]",
    "NaN as the payload": b'[1, "V", 0.0, 0.0, NaN]',
    "an index of 5,000 digits": b"[1" + b"0" * 5000 + b', "V", 0.0, 0.0, ' + GOOD + b"]",
    "an index with a leading zero": b'[01, "V", 0.0, 0.0, ' + GOOD + b"]",
    "nesting 100,000 deep": b"[" * 100_000 + b"]" * 100_000,
    "1e400 as the duration": b'[1, "V", 1e400, 0.0, ' + GOOD + b"]",
    "an int as the duration": b'[1, "V", 0, 0.0, ' + GOOD + b"]",
    "-Infinity as the CPU time": b'[1, "V", 0.0, -Infinity, ' + GOOD + b"]",
    "a line over 1 MiB": b'[1, "V", 0.0, 0.0, "' + b"1" * (1 << 20) + b'"]',
    "an object with duplicate keys": b'{"0": 1, "0": [1, "V", 0.0, 0.0, ' + GOOD + b"]}",
    "the record for test 2 first": b'[2, "V", 0.0, 0.0, "1236789"]',
    # Valid JSON, but not the child's own spelling (json.dumps): the zygote checks the bytes
    # without decoding them, so only that spelling is a record.
    "tabs and CRs between the tokens": b'[1,\t"V",\r0.0,\r 0.0, ' + GOOD + b"]",
    "an escaped kind": b'[1, "\\u0056", 0.0, 0.0, ' + GOOD + b"]",
    "1 MiB of spaces inside": b"[1," + b" " * ((1 << 20) - 100) + b'"V", 0.0, 0.0, ' + GOOD + b"]",
    "a raw non-ASCII character": b'[1, "V", 0.0, 0.0, "1235678\xc3\xa9"]',
    # A float longer than any ``json.dumps`` float: parsed, its copy stayed in the zygote's heap
    # for the next program (``test_attack_v3``).
    "a duration of 100,000 digits": b'[1, "V", 0.' + b"0" * 100_000 + b"1, 0.0, " + GOOD + b"]",
}
# The child's own spelling, whatever the program chose to put in it: the answer of its own
# test 1 (and only that cell).
ANSWERS = {
    "an escaped digit in the payload": b'[1, "V", 0.0, 0.0, "\\u0031235678"]',
    "-0.0 as the duration": b'[1, "V", -0.0, 0.0, ' + GOOD + b"]",
    "written by a thread": b"THREAD",
}


def _record_forger(data: bytes) -> str:
    if data == b"THREAD":
        rec = b'[1, "V", 0.0, 0.0, ' + GOOD + b"]\n"
        return (
            "import os, threading\ndef f(x):\n    if x == 1:\n"
            f"        t = threading.Thread(target=os.write, args=(3, {rec!r}))\n"
            "        t.start()\n        t.join()\n        os._exit(0)\n    return -1\n"
        )
    line = data + b"\n"
    return (
        "import os\ndef f(x):\n    if x == 1:\n"
        f"        os.write(3, {line!r})\n        os._exit(0)\n    return -1\n"
    )


def test_record_bytes_mean_one_thing_or_nothing():
    """The zygote checks each child record on its bytes and forwards them unchanged inside its
    own line; the sandbox process decodes that line again.  Byte spellings at the edges
    (invalid or overlong UTF-8, NUL, CR, NaN, 5,000-digit ints, deep nesting, 1 MiB lines,
    duplicate keys, JSON in another spelling than the child's) are violations of their own
    cell; the child's spelling is an answer of its own cell; the honest rows beside them stay
    PASS and no worker is lost."""
    honest = "def f(x):\n    return 1234567 + 1111 * x\n"
    tests = [TestCase(f"({x},)", str(1234567 + 1111 * x)) for x in range(4)]
    names = [*VIOLATIONS, *ANSWERS]
    forged = [_record_forger({**VIOLATIONS, **ANSWERS}[n]) for n in names]
    with Sandbox(timeout_s=2.0, memory_mb=256, workers=2) as box:
        workers = box._pool.worker_pids()
        table = box.run([honest, *forged, honest], tests, entry_point="f")
        assert box._pool.worker_pids() == workers  # no worker was lost over any of them
    assert table.passed[0].all() and table.passed[-1].all()
    for k, name in enumerate(names, start=1):
        row = [Status(int(s)).name for s in table.status[k]]
        want = "CRASH" if name in VIOLATIONS else "PASS"
        assert row[0] == "FAIL" and row[1] == want, (name, row, table.detail[k, 1])
        assert set(row[2:]) <= {"FAIL", "CRASH"}, (name, row)


# ------------------------------------------------ (a) more time than the budget, by the alarm
OUTLIVE = 0.45  # seconds past a 1 s budget (the watchdog's grace was 0.25 + 0.25 · budget)
# Each outlives its 1 s budget by OUTLIVE seconds, then answers right; an honest program as
# slow is TIMEOUT, so an answer after the budget must not PASS.
OUTLIVERS = {
    "except BaseException in a sleep loop": (
        "def f(x):\n    t = time.monotonic() + 1 + %s\n    while time.monotonic() < t:\n"
        "        try:\n            time.sleep(0.005)\n        except BaseException:\n"
        "            pass\n    return x\n"
    ),
    "a bare except in a busy loop": (
        "def f(x):\n    t = time.monotonic() + 1 + %s\n    while time.monotonic() < t:\n"
        "        try:\n            sum(range(1000))\n        except:  # noqa: E722\n"
        "            pass\n    return x\n"
    ),
    "contextlib.suppress(BaseException)": (
        "def f(x):\n    t = time.monotonic() + 1 + %s\n    while time.monotonic() < t:\n"
        "        with contextlib.suppress(BaseException):\n            time.sleep(0.005)\n"
        "    return x\n"
    ),
    "SIGALRM ignored at import": (
        "signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
        "def f(x):\n    time.sleep(1 + %s)\n    return x\n"
    ),
    "a handler of its own": (
        "signal.signal(signal.SIGALRM, lambda *a: None)\n"
        "def f(x):\n    t = time.monotonic() + 1 + %s\n    while time.monotonic() < t:\n"
        "        time.sleep(0.005)\n    return x\n"
    ),
    "the timer cancelled": (
        "def f(x):\n    signal.setitimer(signal.ITIMER_REAL, 0)\n    time.sleep(1 + %s)\n"
        "    return x\n"
    ),
    # The alarm ignored: raised between the bytes (outside the try, more often on a loaded
    # machine), it sent the harness's own TIMEOUT record after the partial one (CRASH).
    "its record dribbled out a byte at a time": (
        "import os\n"
        "def f(x):\n    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
        "    rec = '[0, \"V\", 0.1111111111111111, 0.0, \"' + str(x) + '\"]'\n"
        "    t = time.monotonic() + 1 + %s\n    k = 0\n"
        "    while time.monotonic() < t:\n        if k < len(rec) - 1:\n"
        "            os.write(3, rec[k].encode())\n            k += 1\n"
        "        try:\n            time.sleep(0.03)\n        except BaseException:\n"
        "            pass\n    os.write(3, (rec[k:] + '\\n').encode())\n    os._exit(0)\n"
    ),
    "precomputing at import": (
        "t = time.monotonic() + 1 + %s\nwhile time.monotonic() < t:\n    try:\n"
        "        time.sleep(0.005)\n    except BaseException:\n        pass\n"
        "def f(x):\n    return x\n"
    ),
}


@pytest.mark.slow
def test_an_answer_after_the_budget_is_a_timeout():
    """The budget is enforced in the child by an alarm that raises; a program that catches it
    (a bare ``except``, ``suppress(BaseException)``), ignores or replaces SIGALRM, or cancels
    the timer ran on until the zygote's watchdog (budget + 0.25 + 25 %) and answered: PASS
    where an honest program as slow is TIMEOUT.  Also for its import, and for a record written
    a byte at a time so that the zygote never found the pipe empty.  The zygote now times
    each record itself: an answer read after the budget (and a small allowance for reading it)
    is a TIMEOUT.  Honest programs well within the budget still PASS."""
    head = "import time, signal, contextlib\n"
    names = list(OUTLIVERS)
    progs = [head + OUTLIVERS[n] % OUTLIVE for n in names]
    honest = head + "def f(x):\n    time.sleep(0.3)\n    return x\n"
    stdio_cheat = head + (
        f"x = input()\nt = time.monotonic() + 1 + {OUTLIVE}\nwhile time.monotonic() < t:\n"
        "    try:\n        time.sleep(0.005)\n    except BaseException:\n        pass\nprint(x)\n"
    )
    stdio_honest = head + "x = input()\ntime.sleep(0.3)\nprint(x)\n"
    with Sandbox(timeout_s=1.0, memory_mb=256, workers=2) as box:
        table = box.run([honest, *progs, honest], [TestCase("(7,)", "7")], entry_point="f")
        stdio = box.run([stdio_honest, stdio_cheat, stdio_honest], [StdioTest("5\n", "5\n")])
    assert table.passed[0].all() and table.passed[-1].all(), table.detail[[0, -1]].tolist()
    for k, name in enumerate(names, start=1):
        got = Status(int(table.status[k, 0])).name
        assert got == "TIMEOUT", (name, got, table.detail[k, 0])
    assert stdio.passed[0].all() and stdio.passed[2].all()
    assert Status(int(stdio.status[1, 0])) == Status.TIMEOUT


# --------------------------------------------- (a) the comparer's caches of outputs and hashes
TWINS = ["1", "1.0", "True", "[1]", "(1,)", "{'a': 1}", "{'a': 1.0}", "0.30000000000000004",
         "0.3", "-0.0", "0.0", "float('nan')", "'1'", "{1, 2}", "frozenset({1, 2})", "None",
         "100000000000000000000", "1e20", "[1.0, 2]", "[1, 2.0]"]  # fmt: skip


def test_cached_comparisons_judge_every_cell_as_a_fresh_comparison():
    """The sandbox process parses each distinct output text once and caches its hash: the same
    text reaching columns with different expected values (1 against 1.0, True, [1], ...), in
    every order, must be judged as a fresh comparison would judge it.  Oracle: Python's ``==``
    on the values within the documented rules (an int expected value needs an int, bools are
    not ints, float expected values take 1e-9), and the hash recomputed from the text."""
    import hashlib
    import math

    vals = [eval(t) for t in TWINS]  # the fixed literals above

    def oracle(a, e) -> bool:
        if type(e) is float:
            if type(a) not in (int, float):
                return False
            if math.isnan(e):
                return type(a) is float and math.isnan(a)
            return math.isclose(float(a), e, rel_tol=1e-9, abs_tol=1e-9)
        if type(a) is not type(e):
            return False
        if type(e) in (list, tuple):
            return len(a) == len(e) and all(oracle(x, y) for x, y in zip(a, e, strict=True))
        if type(e) is dict:
            return a.keys() == e.keys() and all(oracle(a[k], e[k]) for k in e)
        return a == e

    n = len(TWINS)
    tests = [TestCase(f"({i},)", t if t != "float('nan')" else "nan") for i, t in enumerate(TWINS)]
    texts = ["float('nan')" if t == "float('nan')" else t for t in TWINS]
    progs = [
        f"V = [{', '.join(texts)}]\ndef f(i):\n    return V[(i + {s}) % {n}]\n" for s in range(n)
    ]
    with Sandbox(timeout_s=2.0, memory_mb=256, workers=2) as box:
        table = box.run(progs, tests, entry_point="f")
    for s in range(n):
        for i in range(n):
            a = vals[(i + s) % n]
            want = oracle(a, vals[i])
            got = Status(int(table.status[s, i]))
            assert (got == Status.PASS) == want, (TWINS[(i + s) % n], TWINS[i], got.name)
            assert got in (Status.PASS, Status.FAIL), (s, i, got.name, table.detail[s, i])
    # Equal texts share a hash wherever they appear, and the hash is the text's own.
    by_text: dict[str, set[str]] = {}
    for s in range(n):
        for i in range(n):
            by_text.setdefault(TWINS[(i + s) % n], set()).add(str(table.output_hash[s, i]))
    assert all(len(h) == 1 for h in by_text.values())
    assert len({h for hs in by_text.values() for h in hs}) == n
    one = by_text["1"].pop()
    assert one == hashlib.sha256(b"1").hexdigest()[:16]


# ----------------------------- (a)/(d) earlier programs' answers and sources in inherited memory
_SCAN = r'''
import ctypes, gc, os, re

def _memory(patterns):
    """Every match of ``patterns`` in this process's memory: the pages around its objects
    (the zygote's heap, inherited at the fork), each probed through write(2) to a pipe so that
    an unmapped page answers EFAULT instead of killing the program."""
    r, w = os.pipe()
    os.set_blocking(r, False)

    def readable(a):
        try:
            os.write(w, (ctypes.c_char * 4096).from_address(a))
            return True
        except OSError:
            return False
        finally:
            try:
                os.read(r, 1 << 16)
            except OSError:
                pass

    bases = {id(o) >> 20 << 20 for o in gc.get_objects()}
    bases |= {id(o) >> 20 << 20 for o in (b"x" * 1000, b"y" * 70000, bytearray(3000))}
    pages, found = set(), []
    for b in sorted(bases):
        for a in range(max(b - (4 << 20), 1 << 16), b + (4 << 20), 4096):
            if a in pages:
                continue
            pages.add(a)
            if readable(a):
                mem = ctypes.string_at(a, 4096)
                for p in patterns:
                    found += [m.groups() for m in re.finditer(p, mem)]
    return found
'''
RECORD_THIEF = _SCAN + (
    "ANSWERS = {}\nCALLS = [0]\n"
    "def f(x):\n    i = CALLS[0]\n    CALLS[0] += 1\n    if not ANSWERS:\n"
    '        pat = rb\'\\[(\\d{1,3}), "V", [0-9.e+-]+, [0-9.e+-]+, "(-?\\d{1,18})"\\]\'\n'
    "        for idx, text in _memory([pat]):\n"
    "            ANSWERS.setdefault(int(idx), int(text))\n        ANSWERS['scanned'] = 1\n"
    "    return ANSWERS.get(i)\n"
)
SOURCE_THIEF = _SCAN + (
    "SRC = []\n"
    "def f(x):\n    if not SRC:\n"
    "        pat = rb'# MARK-HONEST-7919\\n(def f\\(x\\):\\n    return x \\* 7919 \\+ 13)\\n'\n"
    "        SRC.extend(s.decode() for (s,) in _memory([pat]))\n        SRC.append(None)\n"
    "    for src in SRC[:-1]:\n        g = {}\n        exec(src, g)\n        return g['f'](x)\n"
    "    return None\n"
)
MARKED_HONEST = "# MARK-HONEST-7919\ndef f(x):\n    return x * 7919 + 13\n" + "# pad\n" * 80


@pytest.mark.parametrize("path", ["strict_default", "strict_landlock"])
def test_a_program_cannot_find_earlier_answers_or_sources_in_its_memory(path):
    """Every child inherits the zygote's heap.  The zygote decoded each record it forwarded and
    each program's source it was sent; freed, their bytes stayed in that heap, and a program
    scanning its own memory (ctypes, pages probed safely) found the answers of the programs
    run before it on the same worker, and their sources: both thieves passed every test with
    no solution (under GRPO: the best sibling's reward).  The zygote now checks records on the
    bytes in a buffer it zeroes, and passes sources to the child undecoded: nothing is found,
    and the honest programs beside the thieves still pass."""
    tests = [TestCase(f"({x},)", str(x * 7919 + 13)) for x in (3, 5, 8, 11)]
    with _box(path, timeout_s=10.0, memory_mb=512, workers=1) as box:
        for thief in (RECORD_THIEF, SOURCE_THIEF):
            table = box.run([MARKED_HONEST, MARKED_HONEST, thief, MARKED_HONEST, thief],
                            tests, entry_point="f")  # fmt: skip
            assert table.passed[[0, 1, 3]].all(), table.detail.tolist()
            assert not table.passed[[2, 4]].any(), table.status.tolist()
            assert set(table.status[[2, 4]].ravel().tolist()) == {Status.FAIL}, table.detail


# ------------------------------------------------- (c) memory a later program would map again
_PAGES = r"""
import ctypes, gc, os
NEEDLE = bytes(range(200, 216))

def _pages():
    seen = set()
    for b in sorted({id(o) >> 20 << 20 for o in gc.get_objects()}):
        for a in range(max(b - (16 << 20), 1 << 16), b + (16 << 20), 4096):
            if a not in seen:
                seen.add(a)
                yield a

def _readable(a, r, w):
    try:
        os.write(w, (ctypes.c_char * 4096).from_address(a))
    except OSError:
        return False
    os.read(r, 8192)
    return True
"""
PLANTER = _PAGES + (
    "def f(x):\n    r, w = os.pipe()\n    n = 0\n    for a in _pages():\n"
    "        if not _readable(a, r, w) or ctypes.string_at(a, 4096) != bytes(4096):\n"
    "            continue\n        os.write(w, NEEDLE)\n        try:\n"
    "            os.readv(r, [(ctypes.c_char * 16).from_address(a + 2048)])\n"
    "            n += 1\n        except OSError:\n            os.read(r, 64)\n    return n > 0\n"
)
RECEIVER = _PAGES + (
    "def f(x):\n    r, w = os.pipe()\n    own = id(NEEDLE) >> 12 << 12\n    hits = 0\n"
    "    for a in _pages():\n"
    "        if a not in (own, own + 4096) and _readable(a, r, w):\n"
    "            hits += NEEDLE in ctypes.string_at(a, 4096)\n    return hits\n"
)


@pytest.mark.parametrize("path", ["strict_default", "strict_landlock"])
def test_a_program_cannot_leave_data_in_memory_the_next_program_maps(path):
    """A program writes a marker into every zero page it can write near its heap; the next
    program on the same worker looks for it.  The zygote's record buffers were first made with
    ``mmap(-1, n)``, which is MAP_SHARED: one memory for the zygote and every child, and the
    next program found the marker on ~1,070 more pages than it finds alone (a channel between
    programs, goal (c)).  Private mappings: each child has its own copy."""
    with _box(path, timeout_s=20.0, memory_mb=1024, workers=1) as box:
        # The receiver alone first (what it finds of its own needle), then after the planter.
        table = box.run([RECEIVER, PLANTER, RECEIVER], [TestCase("(1,)", "0")],
                        entry_point="f")  # fmt: skip
    assert table.status[1, 0] == Status.FAIL, table.detail[1, 0]  # it planted (True, not 0)
    assert table.output_hash[0, 0] == table.output_hash[2, 0], "the marker reached the next"


def test_a_user_namespace_whose_mapping_is_refused_is_not_entered():
    """Where ``unshare`` succeeds but the mapping is refused (AppArmor's restriction of
    unprivileged user namespaces, the very reason bubblewrap fails there), the worker must not
    enter a namespace it cannot set up (it could then create no file): it runs without one.
    Played here by an ``unshare`` that answers 0 without making a namespace, so the mapping
    writes meet the host's namespace and are refused; tried in a forked child only."""
    from rewardkit.sandbox import _userns

    class Pretends:
        def unshare(self, flags: int) -> int:
            return 0

    before = os.readlink("/proc/self/ns/user")
    assert _userns.own_user_namespace(Pretends()) == (False, False)  # type: ignore[arg-type]
    assert os.readlink("/proc/self/ns/user") == before
