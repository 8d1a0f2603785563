"""Goal (c) of the threat model: no state kept across programs.  Covert channels between
consecutive programs on one worker, attacked by cooperating sender/receiver pairs.

The namespaces are made once per worker, not once per program, so whatever per-worker counter a
program can move and the next can read is a channel: under group-relative rewards one
episode's program could leak an answer (or the test inputs) to the next.  Each attack here is a
sender that encodes a number N (many values) by moving some state, and a receiver run next on
the same worker (one worker: programs run in order) that reports what it sees.  Held: every
receiver sees exactly the same thing, whatever N was.  Open: the receivers' views differ, and
``_decode`` recovers N from them.

Run on the default path (bubblewrap here) and on Landlock alone, as root and as an ordinary user
(as root: the workers run as a free uid).  Where a channel is a stated residual risk of a path
(docs/sandbox.md, "Residual risks") the test is a strict xfail: it must still find the channel
open there, so the day it closes the docs are updated with it.
"""

from __future__ import annotations

import itertools
import os
import platform
import random
import threading
import time

import pytest

from rewardkit.sandbox import Sandbox, TestCase, _confine, _filter

from .removal import weakened_worker
from .test_attack_v2 import PATHS
from .test_attack_v2 import _box as _started_box

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="the sandbox's seccomp filter is x86_64's"
)

# The numbers each sender encodes: the extremes, and seeded draws.  0 comes first: the decode
# takes the step of an idle sender from it.
NS = [0, 1, 2, 7, 40, *random.Random(14).sample(range(3, 600), 4)]


def _box(path: str) -> Sandbox:
    """One worker (programs run in order), on ``path`` (see test_attack_v2's)."""
    return _started_box(path, timeout_s=5.0, memory_mb=256, workers=1)


def _views(box: Sandbox, sender: str, receiver: str, ns: list[int] = NS) -> list:
    """What the receiver saw after each sender (sender N, receiver, sender N', receiver, ...),
    all on one worker, in that order."""
    programs = [p for n in ns for p in (sender.replace("{N}", str(n)), receiver)]
    cells = box._pool.execute(programs, list(range(len(programs))), ["(0,)"], "f")  # type: ignore[union-attr]
    by_row = {row: (kind, payload) for row, _, kind, _, payload in cells}
    out = []
    for k in range(len(ns)):
        kind, payload = by_row[2 * k + 1]
        assert kind == "V", (k, kind, payload)  # the receiver itself ran
        assert by_row[2 * k][0] == "V", by_row[2 * k]  # and so did the sender
        out.append(eval(payload))  # a canonical literal of ints, strings and bools
    return out


def _decode(views: list[int], ns: list[int] = NS) -> list[int]:
    """N from a receiver's number: its step since the previous receiver, less what a sender of
    0 and a receiver take themselves (the first step, after sender ``ns[1]`` = 1, less 1)."""
    steps = [b - a for a, b in itertools.pairwise(views)]
    idle = steps[0] - ns[1]
    return [0, *[s - idle for s in steps]]


def _effective(path: str) -> str:
    """The path a test really runs on: run as an ordinary user, the strict_* runs are the
    ordinary-user paths (and the nonroot_* ones skip)."""
    if os.geteuid() != 0 and path.startswith("strict"):
        return "nonroot" + path.removeprefix("strict")
    return path


def _residual(request, path: str, open_on: set[str], why: str) -> None:
    """A stated residual channel on ``path``: the test still runs and must fail there (a
    strict xfail), so the channel is shown open, not assumed."""
    if _effective(path) in open_on:
        reason = f"residual on {path} (docs/sandbox.md, Residual risks): {why}"
        request.node.add_marker(pytest.mark.xfail(strict=True, reason=reason))


# ----------------------------------------------------------------- the pid / thread-id counter
PID_SENDER = """
import threading
def f(x):
    for _ in range({N}):
        t = threading.Thread(target=int)
        t.start()
        t.join()
    return {N}
"""
PID_RECEIVER = """
import os, threading
def f(x):
    tids = []
    for _ in range(3):
        t = threading.Thread(target=lambda: tids.append(threading.get_native_id()))
        t.start()
        t.join()
    return [os.getpid(), int(os.readlink('/proc/self')), tids]
"""


@pytest.mark.parametrize("path", PATHS)
def test_the_pid_counter_carries_nothing_to_the_next_program(request, path):
    """Sender: N threads started and joined one after another (each takes an id from the pid
    namespace's counter; the seccomp allow-list refuses new processes, not threads).  Receiver:
    its pid, ``/proc/self`` and the ids of three threads.  Held where the zygote sets its pid
    namespace's counter back before each fork (``pid-reset``: bubblewrap, as root and as an
    ordinary user): every receiver gets the same pid and thread ids."""
    _residual(request, path, {"strict_landlock", "nonroot_landlock"},
              "no private pid namespace: the host's counter")  # fmt: skip
    with _box(path) as box:
        assert "pid-reset" in box.isolation, box.isolation
        views = _views(box, PID_SENDER, PID_RECEIVER)
    assert all(v == views[0] for v in views), views
    pid = views[0][0]
    assert views[0] == [pid, pid, [pid + 1, pid + 2, pid + 3]], views[0]


# ----------------------------------------------------------------------- /proc's counters
PROC_COUNTERS = ["/proc/loadavg", "/proc/stat", "/proc/sys/kernel/ns_last_pid", "/proc/self/stat",
                 "/proc/self/status", "/proc/uptime", "/proc/sys/fs/inode-nr",
                 "/proc/sys/fs/file-nr", "/proc/sys/kernel/random/boot_id", "/proc/meminfo",
                 "/proc/vmstat", "/proc/self/sched", "/proc/pressure/cpu",
                 "/sys/fs/cgroup/cgroup.procs"]  # fmt: skip
PROC_READER = (
    "PATHS = " + repr(PROC_COUNTERS) + "\n"
    "def f(x):\n    got = []\n    for p in PATHS:\n        try:\n"
    "            with open(p, 'rb') as fh:\n                fh.read(1)\n"
    "            got.append(p)\n        except OSError:\n            pass\n    return got\n"
)


@pytest.mark.parametrize("path", PATHS)
def test_no_proc_counter_is_readable(path):
    """/proc/loadavg's last pid, /proc/stat's fork count, ns_last_pid, the file and inode
    counts, the cgroup's process list: counters a sender moves and a receiver would read (the
    last pid even across workers).  None opens: the reads are confined to the readable paths."""
    with _box(path) as box:
        views = _views(box, PID_SENDER, PROC_READER, [0, 50])
    assert views == [[], []], views


# ------------------------------------------------------------ the work directory and its files
INODE_SENDER = """
import os
def f(x):
    for _ in range({N}):
        os.close(os.open('t', os.O_CREAT | os.O_WRONLY, 0o600))
        os.unlink('t')
    return {N}
"""
INODE_RECEIVER = """
import os
def f(x):
    fd = os.open('r', os.O_CREAT | os.O_WRONLY, 0o600)
    ino = os.fstat(fd).st_ino
    os.close(fd)
    os.unlink('r')
    return [os.stat('.').st_ino, ino]
"""


@pytest.mark.parametrize("path", PATHS)
def test_the_inode_counter_carries_nothing_to_the_next_program(request, path):
    """Sender: N files made and removed (on a tmpfs each new inode takes the next number of the
    file system's counter, kept per mount).  Receiver: the inode of its work directory and of a
    file it makes.  Held where each remade work directory is a new tmpfs (``fresh-tmpfs``:
    under bubblewrap, and on the Landlock path in the worker's private mount namespace, as root
    or as an ordinary user in its user namespace; there, with one tmpfs for all the work
    directories, an outside attack decoded every value exactly)."""
    with _box(path) as box:
        assert "fresh-tmpfs" in box.isolation, box.isolation
        views = _views(box, INODE_SENDER, INODE_RECEIVER)
    assert all(v == views[0] for v in views), views


def test_the_inode_channel_decodes_where_it_is_open(monkeypatch):
    """The attack is real: where the work directories share one tmpfs (bubblewrap as an
    ordinary user where it cannot grant the zygote its capabilities: a kernel before 5.9, a
    setuid bwrap) the receivers decode every N exactly from the inode of the file they make."""
    monkeypatch.setattr(_confine, "_cap_known", lambda cap: False)
    with _box("nonroot_default") as box:
        assert "fresh-tmpfs" not in box.isolation, box.isolation
        views = _views(box, INODE_SENDER, INODE_RECEIVER)
    assert _decode([v[1] for v in views]) == NS, views


@pytest.mark.parametrize("path", PATHS)
def test_without_a_fresh_tmpfs_per_work_directory_the_inode_channel_opens(
    monkeypatch, open_dir, path
):
    """Defence: each remade work directory is a new tmpfs (``_mounts.fresh_tmpfs``).  Removed
    (the mount refused, as for a root without ``CAP_SYS_ADMIN``): the report loses
    ``fresh-tmpfs``, the work directories share one file system, and the receivers decode every
    N exactly from their work directory's inode and from a new file's."""
    patch = "def refused(*a):\n    raise OSError(1, 'no')\nreplace(_worker, 'fresh_tmpfs', refused)"
    weakened_worker(monkeypatch, open_dir, patch)
    with _box(path) as box:
        assert "fresh-tmpfs" not in box.isolation, box.isolation
        views = _views(box, INODE_SENDER, INODE_RECEIVER)
    assert _decode([v[1] for v in views]) == NS, views
    assert _decode([v[0] for v in views]) == NS, views


WORKDIR_SENDER = """
import os
def f(x):
    if {N} % 2:
        os.close(os.open('t', os.O_CREAT | os.O_WRONLY, 0o600))
    return {N}
"""
WORKDIR_RECEIVER = "import os\ndef f(x):\n    return os.getcwd()\n"


@pytest.mark.parametrize("path", PATHS)
def test_the_work_directory_name_carries_nothing(path):
    """The work directory was ``p<serial>``, the serial counting the directories remade so far:
    a sender that leaves a file (or not) moved it, and every later program read the sum.  Every
    work directory now has the same name."""
    with _box(path) as box:
        views = _views(box, WORKDIR_SENDER, WORKDIR_RECEIVER)
    assert all(v == views[0] for v in views), views


MOUNT_RECEIVER = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def f(x):
    buf = ctypes.create_string_buffer(256)
    if libc.syscall(332, -100, b".", 0, 0x4000, buf) != 0:  # statx, STATX_MNT_ID_UNIQUE
        return -ctypes.get_errno()
    return int.from_bytes(buf.raw[144:152], "little")  # stx_mnt_id
"""


@pytest.mark.parametrize("path", PATHS)
def test_the_mount_counter_carries_nothing(path):
    """As root every work directory a program changed is a new tmpfs (``fresh-tmpfs``), and
    Linux 6.8's unique mount id counts the mounts made on the host: a sender that leaves a file
    (or not) moved it by one, and the next program read it with ``statx``.  Every receiver is
    refused that field (seccomp: statx only without ``STATX_MNT_ID_UNIQUE``)."""
    with _box(path) as box:
        views = _views(box, WORKDIR_SENDER, MOUNT_RECEIVER)
    assert views == [-1] * len(NS), views  # -EPERM


def test_without_the_statx_rule_the_mount_counter_counts_the_senders_changes(monkeypatch):
    """Defence: seccomp allows ``statx`` only without ``STATX_MNT_ID_UNIQUE``.  Removed (the
    plain ``statx`` allowed): on the default path as root, each receiver's id is at least the
    previous one's plus its sender's bit (N odd: a file left, a new tmpfs mounted), and each
    changed directory moves it (the host's other mounts can only add)."""
    monkeypatch.setattr(_filter, "STATX_MNT_ID_UNIQUE", 0)  # masked with 0: always allowed
    with _box("strict_default") as box:
        if "fresh-tmpfs" not in box.isolation:
            pytest.skip(f"no fresh tmpfs on this machine's default path: {box.isolation}")
        views = _views(box, WORKDIR_SENDER, MOUNT_RECEIVER)
    assert all(v > 0 for v in views), views
    steps = [b - a for a, b in itertools.pairwise(views)]
    assert all(step >= n % 2 for step, n in zip(steps, NS[1:], strict=True)), (views, NS)
    assert sum(steps) >= sum(n % 2 for n in NS[1:]) > 0, views


ATIME_SENDER = """
import os
def f(x):
    if {N} % 2:
        os.listdir('.')
        try:
            os.listdir('..')
        except OSError:
            pass
    return {N}
"""
ATIME_RECEIVER = """
import os
def f(x):
    out = []
    for p in ('.', '..'):
        st = os.stat(p)
        out.append(st.st_atime_ns <= max(st.st_mtime_ns, st.st_ctime_ns))
    return out
"""


@pytest.mark.parametrize("path", PATHS)
def test_a_directory_listed_is_not_handed_on(path):
    """Listing a directory moves its access time (once, under relatime) without moving its
    mtime or ctime: the zygote reused such a work directory as pristine, and the next program
    read when (and whether) the sender listed it.  Receiver: whether its work directory and the
    directory above it were read since they were last changed.  Never: the access time is part
    of what the zygote compares, and its own listing does not move it (``O_NOATIME``)."""
    with _box(path) as box:
        views = _views(box, ATIME_SENDER, ATIME_RECEIVER)
    assert views == [[True, True]] * len(NS), views


# ----------------------------------------------------------------- the process's own state
STATE_SENDER = """
import os, resource, signal
def f(x):
    n = {N}
    os.umask(n & 0o777)
    os.environ['RK_N'] = str(n)
    os.putenv('RK_M', str(n))
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    for change in (lambda: os.nice(n % 20),
                   lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (8 + n % 50,) * 2),
                   lambda: resource.setrlimit(resource.RLIMIT_STACK, (1 << 20, 1 << 20)),
                   lambda: os.sched_setaffinity(0, {0})):
        try:
            change()
        except OSError:
            pass
    os.chdir('/')
    return n
"""
STATE_RECEIVER = """
import os, resource, signal
def f(x):
    old = os.umask(0)
    limits = [resource.getrlimit(getattr(resource, n)) for n in sorted(dir(resource))
              if n.startswith('RLIMIT_')]
    return [old, sorted(os.environ.items()), limits,
            str(signal.getsignal(signal.SIGUSR1)), sorted(os.sched_getaffinity(0)), os.getcwd(),
            os.getuid(), os.getgid(), os.getgroups(), os.getpgid(0) - os.getpid()]
"""


@pytest.mark.parametrize("path", PATHS)
def test_the_process_attributes_a_program_sets_die_with_it(path):
    """umask, environment, nice value, resource limits, signal dispositions, CPU affinity and
    working directory are per process: each program is a fresh fork of the zygote, so what a
    sender set is gone for the receiver."""
    with _box(path) as box:
        views = _views(box, STATE_SENDER, STATE_RECEIVER)
    assert all(v == views[0] for v in views), views


# ------------------------------------------------------------------- each defence removed
@pytest.mark.parametrize("path", ["strict_default", "nonroot_default"])
def test_without_the_pid_reset_the_receivers_decode_the_senders_numbers(
    monkeypatch, open_dir, path
):
    """Defence: the zygote writes its own pid to its pid namespace's ``ns_last_pid`` before
    every fork (``_pidreset``).  Removed (the counter never opened, as where the kernel refuses
    it): the isolation report loses ``pid-reset`` and every receiver decodes its sender's N
    exactly, from its pid as from its threads' ids (the worker's own pid namespace: nothing
    else moves its counter)."""
    with _box(path) as box:
        if "pid-reset" not in box.isolation:
            pytest.skip(f"no pid reset on this machine's {path} path: {box.isolation}")
        held = _views(box, PID_SENDER, PID_RECEIVER)
    assert all(v == held[0] for v in held), held
    weakened_worker(monkeypatch, open_dir, "replace(_worker, 'open_counter', lambda last: -1)")
    with _box(path) as box:
        assert "pid-ns" in box.isolation and "pid-reset" not in box.isolation, box.isolation
        views = _views(box, PID_SENDER, PID_RECEIVER)
    assert _decode([v[0] for v in views]) == NS, views
    assert _decode([v[2][0] for v in views]) == NS, views  # the first thread's id


STAMP_WITHOUT_ATIME = """
def _stamp(path):
    st = _worker.os.stat(path, follow_symlinks=False)
    return (st.st_ino, st.st_mode, st.st_uid, st.st_nlink, st.st_mtime_ns, st.st_ctime_ns)
replace(_worker, "_stamp", _stamp)
"""


@pytest.mark.parametrize("path", ["strict_default", "strict_landlock"])
def test_without_the_access_time_compared_a_listing_is_handed_on(monkeypatch, open_dir, path):
    """Defence: the access time is part of a work directory's stamp (and the zygote's own
    listing leaves it alone).  Removed (the stamp without it): the directory a sender listed is
    reused as pristine: the receiver after the first listing (N = 1) and every later one find
    it read (nothing remakes it), at the time the sender chose to list it."""
    weakened_worker(monkeypatch, open_dir, STAMP_WITHOUT_ATIME)
    with _box(path) as box:
        views = _views(box, ATIME_SENDER, ATIME_RECEIVER)
    assert [v[0] for v in views] == [True] + [False] * (len(NS) - 1), views


# ------------------------------------------- the capability that sets the counter back, dropped
HELD = [TestCase("(0,)", "1")]
SLEEPER = "import time\ndef f(x):\n    time.sleep(1.5)\n    return 1\n"
CAP_LINES = (b"CapInh:", b"CapPrm:", b"CapEff:", b"CapAmb:")
ZYGOTE_CAPS = 1 << 40 | 1 << 21  # CAP_CHECKPOINT_RESTORE, CAP_SYS_ADMIN


def _tree(pid: int, depth: int = 0) -> list[tuple[int, int]]:
    """(pid, depth) of ``pid`` and every descendant."""
    out = [(pid, depth)]
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                kids = [int(k) for k in fh.read().split()]
        except OSError:
            continue
        for k in kids:
            out += _tree(k, depth + 1)
    return out


def _leads_its_group(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid
    except OSError:
        return False


def _caps(pid: int) -> dict[bytes, int]:
    with open(f"/proc/{pid}/status", "rb") as fh:
        lines = fh.read().splitlines()
    return {ln.split()[0]: int(ln.split()[1], 16) for ln in lines if ln.startswith(CAP_LINES)}


def _program_and_zygote_caps(box: Sandbox) -> tuple[dict, dict]:
    """The capability sets of a running program's process and of its zygote, read from the
    host's /proc while the program sleeps."""
    root = box._pool.workers[0].proc.pid  # type: ignore[union-attr]
    before = {p for p, _ in _tree(root)}
    result: list = []
    runner = threading.Thread(
        target=lambda: result.append(box.run([SLEEPER], HELD, entry_point="f"))
    )
    runner.start()
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and runner.is_alive():
            tree = _tree(root)
            # The program's process: new, and the leader of its own process group; the
            # zygote two levels above it (the batch process between them).
            child = [(p, d) for p, d in tree if p not in before and _leads_its_group(p)]
            if child:  # forked; read once its setup is long done and the program sleeps
                time.sleep(0.4)
                zygote = [p for p, d in tree if d == child[0][1] - 2]
                return _caps(child[0][0]), _caps(zygote[0])
            time.sleep(0.01)
        raise AssertionError("the program's process never appeared")
    finally:
        runner.join()


@pytest.mark.parametrize("path", PATHS)
def test_a_program_holds_no_capability(path):
    """An ordinary user's bubblewrap gives the zygote ``CAP_CHECKPOINT_RESTORE`` and
    ``CAP_SYS_ADMIN`` in the worker's user namespace, to set the pid counter back and mount a
    tmpfs per work directory; a program must not hold them (nor any other): every set of the
    running program's process is empty.  The check can fail: on that path the zygote beside it
    does hold them."""
    with _box(path) as box:
        program, zygote = _program_and_zygote_caps(box)
    assert program == dict.fromkeys(CAP_LINES, 0), (program, zygote)
    if _effective(path) == "nonroot_default":
        assert zygote[b"CapEff:"] == ZYGOTE_CAPS, zygote


def test_without_the_capability_drop_a_program_holds_the_workers_capability(monkeypatch, open_dir):
    """Defence: every child empties its capability sets before any program code runs
    (``_pidreset.drop_caps`` in ``setup_child``).  Removed: the program of an ordinary user's
    bubblewrap'd worker holds the zygote's two, permitted, effective and ambient."""
    weakened_worker(monkeypatch, open_dir, "replace(_child, 'drop_caps', lambda libc, p: None)")
    with _box("nonroot_default") as box:
        program, _ = _program_and_zygote_caps(box)
    got = (program[b"CapPrm:"], program[b"CapEff:"], program[b"CapAmb:"])
    assert got == (ZYGOTE_CAPS,) * 3, program


def test_where_bubblewrap_cannot_grant_the_capability_it_starts_without_the_reset(monkeypatch):
    """A kernel older than 5.9 has no ``CAP_CHECKPOINT_RESTORE`` (and a setuid bubblewrap
    refuses ``--cap-add`` to an ordinary user): bubblewrap then starts as before (``--dev``,
    ``--disable-userns``), the report has no ``pid-reset``, and the channel is open, as
    docs/sandbox.md states."""
    monkeypatch.setattr(_confine, "_cap_known", lambda cap: False)
    with _box("nonroot_default") as box:
        assert box._pool.plan.zygote_caps is False  # type: ignore[union-attr]
        assert "pid-ns" in box.isolation and "pid-reset" not in box.isolation, box.isolation
        views = _views(box, PID_SENDER, PID_RECEIVER)
        program, zygote = _program_and_zygote_caps(box)
    assert _decode([v[0] for v in views]) == NS, views
    assert program == zygote == dict.fromkeys(CAP_LINES, 0), (program, zygote)
