"""Attacks on the sandbox's newest parts (the zygote's record checks, the pid reset, the wipe of
the work directory and the directory above it, the design's ceiling), by class, each asserting
the defence.  Public API only (``Sandbox.run``); the ordinary-user paths as the other suites
run them.
"""

from __future__ import annotations

import json
import platform
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.sandbox import Sandbox, Status, TestCase, _child

from .test_attack_v2 import _SCAN, PATHS, _box

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="the sandbox's seccomp filter is x86_64's"
)


# ----------------------------- (c) bytes a program leaves in the zygote's heap for the next one
# A sender answers every test right and, with its last record, writes bytes the zygote has to
# look at: a line after that record (the zygote reads both at once and must reject the second),
# a line in place of a record, or a duration of many digits inside a well-formed record.  The
# zygote decoded such lines (``json``) and parsed such durations (``float()``): the copies, freed,
# stayed in its heap, and the next program, a fork of it, found the sender's number by scanning
# its own memory.  With a line after the last record the sender lost nothing (every cell PASS):
# a free channel of tens of KiB a program, enough for a whole solution.
_LAST = "import json, os\nCALLS = [0]\ndef f(x):\n    CALLS[0] += 1\n    ans = x * 7919 + 13\n"
_RECORD = '        rec = json.dumps([CALLS[0] - 1, "V", 0.001, 0.001, repr(ans)]) + "\\n"\n'
_JUNK = '        junk = json.dumps("SECRET-4242-%d-" % {N} + "-" * {PAD}) + "\\n"\n'
SENDERS = {
    # (source, whether the sender keeps every cell PASS after the fix)
    "a JSON line of 20 KiB after its last record": (
        _LAST + "    if CALLS[0] == 2:\n" + _RECORD + _JUNK.replace("{PAD}", "20000")
        + "        os.write(3, (rec + junk).encode())\n        os._exit(0)\n    return ans\n",
        True,
    ),
    "a JSON line of 60 KiB after its last record": (
        _LAST + "    if CALLS[0] == 2:\n" + _RECORD + _JUNK.replace("{PAD}", "60000")
        + "        os.write(3, (rec + junk).encode())\n        os._exit(0)\n    return ans\n",
        True,
    ),
    "a line of 60 KiB that is not JSON after its last record": (
        _LAST + "    if CALLS[0] == 2:\n" + _RECORD
        + '        junk = "SECRET-4242-%d-" % {N} + "{" * 60000 + "\\n"\n'
        + "        os.write(3, (rec + junk).encode())\n        os._exit(0)\n    return ans\n",
        True,
    ),
    "a JSON line of 90 KiB in place of its last record": (
        _LAST + "    if CALLS[0] == 2:\n" + _RECORD + _JUNK.replace("{PAD}", "90000")
        + "        os.write(3, (junk + rec).encode())\n        os._exit(0)\n    return ans\n",
        False,
    ),
    "a duration of 60,000 digits in its last record": (
        _LAST + "    if CALLS[0] == 2:\n"
        + "        rec = '[%d, \"V\", 0.4242%d4242' % (CALLS[0] - 1, {N}) + '1' * 60000\n"
        + "        rec += ', 0.001, \"%d\"]\\n' % ans\n"
        + "        os.write(3, rec.encode())\n        os._exit(0)\n    return ans\n",
        False,
    ),
}  # fmt: skip
HEAP_RECEIVER = _SCAN + (
    "def f(x):\n"
    "    found = _memory([rb'SECRET-4242-(\\d+)-', rb'0\\.4242(\\d+)42421111'])\n"
    "    return sorted({g[0].decode() for g in found})\n"
)
SECRETS = (123457, 98765431)


@pytest.mark.parametrize("path", ["strict_default", "strict_landlock"])
def test_a_program_cannot_leave_bytes_in_the_zygotes_heap_for_the_next(path):
    """Each sender, run twice with a different number, is followed on its worker by a
    receiver that scans its own memory (the zygote's heap, inherited at the fork) for the
    number.  The zygote now checks the ready, row and cell records on their bytes only (float
    spellings of bounded length) and decodes nothing a child wrote: the receivers find
    nothing, the senders that kept to their records still pass, and no worker is lost."""
    tests = [TestCase(f"({x},)", str(x * 7919 + 13)) for x in (3, 5)]
    names = list(SENDERS)
    progs = [p for name in names for n in SECRETS
             for p in (SENDERS[name][0].replace("{N}", str(n)), HEAP_RECEIVER)]  # fmt: skip
    with _box(path, timeout_s=10.0, memory_mb=512, workers=1) as box:
        workers = box._pool.worker_pids()  # type: ignore[union-attr]
        cells = box._pool.execute(progs, list(range(len(progs))), ["(3,)", "(5,)"], "f")  # type: ignore[union-attr]
        assert box._pool.worker_pids() == workers  # type: ignore[union-attr]
        table = box.run(progs, tests, entry_point="f")
    found = {row: payload for row, _, kind, _, payload in cells if row % 2 and kind == "V"}
    assert len(found) == len(progs) // 2, cells  # every receiver ran (both of its tests)
    leaks = {names[row // 4]: json.dumps(p) for row, p in found.items() if p != "[]"}
    assert not leaks, leaks
    for k, name in enumerate(names):
        for j in range(len(SECRETS)):
            row = [Status(int(s)).name for s in table.status[4 * k + 2 * j]]
            assert row[0] == "PASS", (name, row)
            assert row[1] == ("PASS" if SENDERS[name][1] else "CRASH"), (name, row)


# ------------------------------ (c) an earlier problem's inputs in a later program's memory
# The zygote decoded and parsed each batch's tests message itself: the strings and parsed
# values were freed, not zeroed, and every later child, a fork of that heap, could scan its own
# memory for them (outside attack: 40+ character inputs survived on all four paths; a thief
# whose answers were an earlier problem's inputs, a problem and its inverse, passed).  Each
# tests message now starts a batch process that parses it and forks that batch's children; the
# zygote sees the message's bytes only, zeroed once the batch process has its copy.
INPUT_THIEF = _SCAN + (
    "FOUND = []\n"
    "def f(x):\n"
    "    if not FOUND:\n"
    "        FOUND.extend(sorted({g[0].decode() for g in _memory([rb'KEEP-([a-z0-9]{40,})'])}))\n"
    "        FOUND.append(None)\n"
    "    return FOUND[0]\n"
)
KEEP = ("x7" * 20, "q9w" * 27, "k4" * 300)  # 40, 81 and 600 characters


@pytest.mark.parametrize("path", PATHS)
def test_an_earlier_problems_inputs_are_nowhere_in_a_later_programs_memory(path):
    """Problem A's tests carry secrets as inputs; problem B's answer is the secret.  B's
    thief runs on the same worker after A: in a later ``run`` and in a later group of the
    same ``run_many``.  It finds nothing, so it fails (it found and passed before the fix)."""
    plain = "def f(s):\n    return len(s)\n"
    a_tests = [TestCase(repr(("KEEP-" + k,)), str(len(k) + 5)) for k in KEEP]
    b_tests = [[TestCase("(0,)", repr(k))] for k in KEEP]
    with _box(path, timeout_s=20.0, memory_mb=512, workers=1) as box:
        first = box.run([plain], a_tests, entry_point="f")
        later = [box.run([INPUT_THIEF], t, entry_point="f") for t in b_tests]
        grouped = box.run_many([([plain], a_tests)] + [([INPUT_THIEF], t) for t in b_tests],
                               entry_point="f")  # fmt: skip
    assert [Status(int(s)).name for s in first.status[0]] == ["PASS"] * len(KEEP)
    assert [Status(int(s)).name for s in grouped[0].status[0]] == ["PASS"] * len(KEEP)
    for table in later + grouped[1:]:
        assert Status(int(table.status[0, 0])).name == "FAIL", table.status


@settings(database=None, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_float_the_child_writes_has_the_bounded_spelling(x):
    """The bounded spelling is no narrower than ``json.dumps``: every finite float's text
    matches it, so an honest record is never a violation."""
    assert re.fullmatch(_child._FLOAT, json.dumps(x).encode()), x


@pytest.mark.parametrize(
    "text",
    [b"0." + b"1" * 21, b"1" * 18 + b".0", b"1e1234", b"0.1e-1234", b"1E+" + b"9" * 4],
)
def test_longer_float_spellings_are_not_records(text):
    """What no ``json.dumps`` float looks like is not a duration: a record carrying it is a
    violation of its own cell, not bytes the zygote parses."""
    line = b'[0, "V", ' + text + b', 0.0, "1"]'
    assert _child.is_cell_line(bytearray(line), 0, len(line), 0) is None
    ok = b'[0, "V", 0.5, 0.0, "1"]'
    assert _child.is_cell_line(bytearray(ok), 0, len(ok), 0) == ("V", 0.0)


# -------------------------------------- the design's ceiling: only what its probe verified
_OUTER_FILTER = (
    "import os, sys, errno, pyseccomp as s\n"
    "f = s.SyscallFilter(s.ALLOW)\n"
    "f.add_rule(s.ERRNO(errno.EPERM), 'io_uring_setup')\n"
    "f.load()\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"
)


def _io_uring_refused_outside(monkeypatch, tmp_path) -> None:
    """The ceiling's interpreters start under a filter of their own that refuses io_uring with
    EPERM and allows everything else, as a container runtime's default profile or
    ``kernel.io_uring_disabled`` does on many hosts (set here per process, never host-wide)."""
    import sys

    pytest.importorskip("pyseccomp")
    wrapper = tmp_path / "python-without-io-uring"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} -c "$RK_OUTER" {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("RK_OUTER", _OUTER_FILTER)
    monkeypatch.setattr(sys, "executable", str(wrapper))


def test_the_ceiling_does_not_claim_an_allow_list_it_did_not_load(monkeypatch, tmp_path):
    """Without the allow-list (no pyseccomp to build it), on a host that refuses io_uring by
    itself: the ceiling's probe took the refused io_uring for its seccomp layer and printed
    ``seccomp-allowlist`` beside a number measured without any filter.  The probe now needs a
    filter it loaded, io_uring refused with EPERM and a new process refused."""
    from rewardkit.sandbox import _filter, floor

    def missing() -> str:
        raise ImportError("no pyseccomp")

    _io_uring_refused_outside(monkeypatch, tmp_path)
    monkeypatch.setattr(_filter, "build_allowlist_bpf", missing)
    rate, cpu, layers = floor.design_ceiling(1, seconds=0.1)
    assert rate > 0 and cpu > 0
    assert "seccomp-allowlist" not in layers, layers


def test_the_ceiling_claims_its_allow_list_where_io_uring_is_refused_anyway(monkeypatch, tmp_path):
    """The same host with the allow-list loaded: the layer holds and is claimed."""
    from rewardkit.sandbox import floor

    _io_uring_refused_outside(monkeypatch, tmp_path)
    rate, _, layers = floor.design_ceiling(1, seconds=0.1)
    assert rate > 0 and "seccomp-allowlist" in layers, layers


# ------------------------------- (c)/(f) bubblewrap without Landlock: what the programs' uid owns
_WHERE = """
import os, sys
def _dirs():
    out = {'/', '/tmp', '/dev', '/proc/self/cwd/..', '/proc/self/cwd/../..'}
    ver = 'python%d.%d' % sys.version_info[:2]
    for top in {sys.prefix, sys.base_prefix, '/usr', '/usr/local'}:
        for lib in ('lib', 'lib64'):
            for name in ('site-packages', 'dist-packages'):
                out.add(os.path.join(top, lib, ver, name))
        out.add(os.path.join(top, 'lib', 'python3', 'dist-packages'))
    for p in [*sys.path, sys.prefix, sys.base_prefix]:
        while p not in ('/', ''):
            out.add(p)
            p = os.path.dirname(p)
    here = os.getcwd()
    return sorted(d for d in out if os.path.realpath(d) not in (here, os.path.dirname(here)))
"""
CARRY_SENDER = _WHERE + (
    "def f(x):\n    made = []\n    for d in _dirs():\n        try:\n"
    "            with open(os.path.join(d, 'carry-%d' % x), 'w') as fh:\n"
    "                fh.write('x' * 4096)\n            made.append(d)\n"
    "        except OSError:\n            pass\n    return made\n"
)
CARRY_RECEIVER = _WHERE + (
    "def f(x):\n    found = []\n    for d in _dirs():\n        try:\n"
    "            found += [os.path.join(d, n) for n in os.listdir(d) if n.startswith('carry-')]\n"
    "        except OSError:\n            pass\n    return found\n"
)


@pytest.mark.parametrize("path", ["strict_default", "nonroot_default"])
def test_without_landlock_nothing_but_the_work_directories_is_writable_under_bubblewrap(
    monkeypatch, path
):
    """Bubblewrap on a kernel without Landlock (its ABI reported as 0, as there): as an
    ordinary user the programs' uid owns every directory bubblewrap makes, and a program wrote
    files into /, /tmp, /dev, /usr and /usr/lib (the directories above the read-only binds),
    where no wipe reaches: the next programs listed them (goal c), and / has no size cap (goal
    f).  Now the root is read-only, /tmp is 0555 once the zygote's directory is there (and a
    hidden path's empty tmpfs 0555): the sender writes nowhere outside its work directories
    and the receiver finds nothing.  (As root the dropped uid owns none of them: held before
    too.)"""
    from rewardkit.sandbox import _confine

    monkeypatch.setattr(_confine, "landlock_abi", lambda libc: 0)
    with _box(path, timeout_s=5.0, memory_mb=256, workers=1) as box:
        assert "bwrap" in box.isolation and "landlock" not in box.isolation, box.isolation
        cells = box._pool.execute(  # type: ignore[union-attr]
            [CARRY_SENDER, CARRY_RECEIVER, CARRY_RECEIVER], [0, 1, 2], ["(7,)"], "f"
        )
    out = {row: (kind, payload) for row, _, kind, _, payload in cells}
    assert all(kind == "V" for kind, _ in out.values()), out
    assert out[0][1] == "[]", f"written outside the work directories: {out[0][1]}"
    assert out[1][1] == out[2][1] == "[]", out


# ------------------------------------------- (c) across runs: the access times of readable files
ATIME_SENDER = (
    "import os\nD = {D!r}\ndef f(x):\n    for i in range(16):\n        if {N} >> i & 1:\n"
    "            with open(os.path.join(D, 'm%d.py' % i), 'rb') as fh:\n"
    "                fh.read(1)\n    return 1\n"
)
ATIME_RECEIVER = (
    "import os, time\nD = {D!r}\ndef f(x):\n    now = time.time()\n"
    "    return sum(1 << i for i in range(16)\n"
    "               if now - os.stat(os.path.join(D, 'm%d.py' % i)).st_atime < 86400)\n"
)


@pytest.mark.parametrize("path", ["strict_default", "strict_landlock", "nonroot_landlock"])
def test_reading_allowed_files_carries_nothing_to_a_later_sandbox(monkeypatch, path):
    """A program may read the standard library and the allowed packages; each read of a file
    whose access time is a day old (relatime) set it to now on the host.  On the Landlock path
    those are the host's own files: a sender reading a chosen 16 of them passed 16 bits to a
    receiver that ``stat``s them in a later ``Sandbox`` (any worker, any run), every N exact.
    The worker's mount namespace now binds the readable paths read-only (as root its private
    one; as an ordinary user one in its own user namespace), and bubblewrap's binds are
    read-only already: the receiver sees no file read, whatever N was."""
    import os
    import tempfile
    import time

    top = tempfile.mkdtemp(prefix="rk-atime-")
    os.chmod(top, 0o755)  # the ordinary user's workers read it too
    pkg = os.path.join(top, "rk_atime_probe")
    os.mkdir(pkg, 0o755)
    old = time.time() - 3 * 86400
    names = ["__init__.py", *(f"m{i}.py" for i in range(16))]
    for name in names:
        with open(os.path.join(pkg, name), "w") as fh:
            fh.write(f"X = {name!r}\n")
    monkeypatch.syspath_prepend(top)
    seen = {}
    try:
        for n in (0, 1, 0x5A5A, 0xFFFF):
            for name in names:
                os.utime(os.path.join(pkg, name), (old, old - 10))
            for role, src in (("sender", ATIME_SENDER), ("receiver", ATIME_RECEIVER)):
                text = src.format(D=pkg, N=n)
                with _box(path, timeout_s=5.0, memory_mb=256, workers=1,
                          packages=("rk_atime_probe",)) as box:  # fmt: skip
                    cells = box._pool.execute([text], [0], ["(1,)"], "f")  # type: ignore[union-attr]
                assert cells[0][2] == "V", (role, cells)
            seen[n] = cells[0][4]
    finally:
        import shutil

        shutil.rmtree(top, ignore_errors=True)
    assert set(seen.values()) == {"0"}, seen


# ------------------------------------ (c) residual: the zygote's allocator state, seen by the next
GC_RECEIVER = "import gc\ndef f(x):\n    return gc.get_count()[0]\n"
PLAIN = "def f(x):\n    return x\n"
TOUCHER = "def f(x):\n    open('t', 'w').close()\n    return x\n"


@pytest.mark.xfail(
    strict=True,
    reason="residual (docs/sandbox.md, Residual risks): the zygote's allocator state moves "
    "with what the program before did",
)
def test_the_zygotes_allocator_state_carries_nothing():
    """Every child inherits the zygote's heap, and the zygote's work after a program depends
    on what the program did (a changed work directory is remade, a crash or a timeout costs a
    fork).  Its free lists and collector counts follow: a receiver reading
    ``gc.get_count()`` tells a sender that touched its work directory from one that did not,
    while the free lists fill (the first ~7 programs of a worker).  Open, stated as a
    residual; the test must find it open (a strict xfail)."""
    views = []
    for sender in (PLAIN, TOUCHER):
        with _box("strict_default", timeout_s=5.0, memory_mb=256, workers=1) as box:
            progs = [PLAIN, GC_RECEIVER, sender, GC_RECEIVER]
            cells = box._pool.execute(progs, [0, 1, 2, 3], ["(3,)"], "f")  # type: ignore[union-attr]
        views.append({row: payload for row, _, _, _, payload in cells}[3])
    assert views[0] == views[1], views


# --------------------------------------- (c) bubblewrap without Landlock: the host's /proc counters
HOST_COUNTERS = ["/proc/loadavg", "/proc/stat", "/proc/vmstat", "/proc/meminfo", "/proc/uptime",
                 "/proc/sys/fs/inode-nr", "/proc/sys/fs/file-nr", "/proc/sys/kernel/ns_last_pid",
                 "/proc/sys/kernel/random/boot_id", "/proc/pressure/cpu", "/proc/diskstats",
                 "/proc/interrupts", "/proc/schedstat", "/proc/slabinfo",
                 "/proc/zoneinfo"]  # fmt: skip
COUNTER_READER = (
    f"PATHS = {HOST_COUNTERS!r}\n"
    "def f(x):\n    got = []\n    for p in PATHS:\n        try:\n"
    "            with open(p, 'rb') as fh:\n                fh.read(1)\n"
    "            got.append(p)\n        except OSError:\n            pass\n    return got\n"
)


@pytest.mark.parametrize("path", ["strict_default", "nonroot_default"])
def test_without_landlock_no_host_counter_in_proc_is_readable(monkeypatch, path):
    """Under bubblewrap only Landlock kept a program out of /proc's host-wide counters
    (``/proc/stat``'s forks, ``vmstat``, ``meminfo``, ``inode-nr``, pressure, ...), which a
    sender can move and a later program read: on a kernel without Landlock (its ABI reported as
    0) all 15 were read.  The zygote now mounts its /proc with the process directories alone
    (``subset=pid``, level ``proc-pids``), once it holds what it needs from the full one."""
    from rewardkit.sandbox import _confine

    monkeypatch.setattr(_confine, "landlock_abi", lambda libc: 0)
    with _box(path, timeout_s=5.0, memory_mb=256, workers=1) as box:
        cells = box._pool.execute([COUNTER_READER], [0], ["(1,)"], "f")  # type: ignore[union-attr]
        levels = box.isolation
    assert cells[0][2] == "V" and cells[0][4] == "[]", cells
    assert "landlock" not in levels and "proc-pids" in levels, levels
    assert "pid-reset" in levels  # the counter's fd was opened before


# ------------------------------------------ what a table claims: every worker's levels, not one's
ONE_WORKER_WITHOUT_THE_RESET = """
_slot = {}
_init = _worker.Zygote.__init__
def _init_noting_the_slot(self, cfg):
    _slot["n"] = cfg["uid"] % 256  # as root each worker's uid ends in its slot
    _init(self, cfg)
replace(_worker.Zygote, "__init__", _init_noting_the_slot)
_open = _worker.open_counter
replace(_worker, "open_counter", lambda last: -1 if _slot["n"] == 1 else _open(last))
"""
PID_READER = "import os\ndef f(x):\n    return os.getpid()\n"


def test_a_level_one_worker_could_not_verify_is_not_claimed(monkeypatch, open_dir):
    """The levels a table carries were the first worker's: a level another worker could not
    verify (here the second worker's pid counter cannot be opened, as where the kernel refuses
    it) was claimed for every program, the second worker's included.  Now a level is claimed
    only when every worker verified it (and a replacement worker's levels are intersected in)."""
    import os

    from .removal import weakened_worker

    if os.geteuid() != 0:
        pytest.skip("the slot is read from the worker's uid, which only root's workers get")
    weakened_worker(monkeypatch, open_dir, ONE_WORKER_WITHOUT_THE_RESET)
    with _box("strict_default", timeout_s=5.0, memory_mb=256, workers=2) as box:
        pids = [c[4] for c in box._pool.execute([PID_READER] * 6, list(range(6)), ["(1,)"], "f")]  # type: ignore[union-attr]
        levels = box.isolation
    assert len(set(pids)) > 1, pids  # the second worker's programs do not get the reset pid
    assert "pid-reset" not in levels, levels
    assert {"pid-ns", "bwrap", "seccomp-allowlist"} <= set(levels), levels


# ------------------------------------- (g) a batch whose tests take long to parse is not lost
@pytest.mark.slow
def test_a_batch_that_takes_long_to_parse_is_not_taken_for_a_stalled_worker():
    """12 tests of 810 KB each take the batch process ~16 s to parse, past the pool's stall
    limit at a 0.5 s budget (12.6 s): the silent worker was replaced, the tests sent again,
    and so on, a cell lost per cycle (outside attack: an honest program CRASH on all 20 tests
    of such a file, 339 s). The batch process now says it is alive every second while it
    parses: every cell PASS, no worker replaced."""
    big = repr(((0,) * 300,) * 300)
    tests = [TestCase(f"({big}, {big}, {big}, {k})", str(k)) for k in range(12)]
    with Sandbox(workers=1, timeout_s=0.5) as box:
        workers = box._pool.worker_pids()  # type: ignore[union-attr]
        table = box.run(["def f(a, b, c, k):\n    return k\n"], tests, entry_point="f")
        assert box._pool.worker_pids() == workers  # type: ignore[union-attr]
    assert [Status(int(s)).name for s in table.status[0]] == ["PASS"] * 12, table.detail
