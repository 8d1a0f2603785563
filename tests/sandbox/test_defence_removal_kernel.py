"""Isolation defences of kernel objects and other processes, each removed: the attack gets through.

Keyrings (refused by the seccomp allow-list), and the layers between a program and a process
outside its sandbox (seccomp, the pid namespace, Landlock, a uid per worker) against ``tgkill``,
``pidfd_*``, ``ptrace``, ``process_vm_readv``, ``prlimit64``, ``setpriority`` and
``sched_setaffinity``, and against reading it through ``/proc``.  How a defence is removed:
``removal.py``.  Every target is a process or key this test made.
"""

from __future__ import annotations

import os
import platform
import subprocess
import uuid
from pathlib import Path

import pytest

from rewardkit.sandbox import Sandbox, _confine, _filter, _pool

from .attacks import PRELUDE, SLEEP
from .removal import _box, _start, weakened_worker
from .test_pool import _as_ordinary_user

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="the attacks use x86_64 system call numbers"
)

PYTHON = "/usr/bin/python3"  # one that every uid can run

KEYS = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def sc(nr, *args):
    return libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) if type(a) is int else a
                                             for a in args])
ADD_KEY, REQUEST_KEY, KEYCTL = 248, 249, 250
SEARCH, READ, SET_TIMEOUT, INVALIDATE = 10, 11, 15, 21
USER, USER_SESSION = -4, -5  # the uid's keyrings: they outlive every process of the uid
"""
# Each "set" program leaves one kind of key (every one expires within a minute anyway), each
# "check" program looks for it; ``{t}`` makes the names of one test run its own.
KEY_SETS = {
    "a user key in the user keyring": (
        "def f(x):\n    k = sc(ADD_KEY, b'user', b'rk-{t}-1', b'state', 5, USER)\n"
        "    sc(KEYCTL, SET_TIMEOUT, k, 60)\n    return 'set'\n"
    ),
    "a user key in the user-session keyring": (
        "def f(x):\n    k = sc(ADD_KEY, b'user', b'rk-{t}-2', b'state', 5, USER_SESSION)\n"
        "    sc(KEYCTL, SET_TIMEOUT, k, 60)\n    return 'set'\n"
    ),
    "a keyring of its own linked into the user keyring": (
        "def f(x):\n    k = sc(ADD_KEY, b'keyring', b'rk-{t}-3', None, 0, USER)\n"
        "    sc(KEYCTL, SET_TIMEOUT, k, 60)\n    return 'set'\n"
    ),
}
FIND = (
    "def f(x):\n    k = FIND\n    if k < 0:\n        return 'held'\n"
    "    buf = ctypes.create_string_buffer(16)\n    n = sc(KEYCTL, READ, k, buf, 16)\n"
    "    if CLEAN:\n        sc(KEYCTL, INVALIDATE, k)\n"
    "    return 'ESCAPED key %d %s' % (k, buf.raw[:max(n, 0)].decode('ascii', 'replace'))\n"
)
KEY_CHECKS = {
    "request_key finds the user key": "sc(REQUEST_KEY, b'user', b'rk-{t}-1', None, 0)",
    "a search of the user-session keyring": (
        "sc(KEYCTL, SEARCH, USER_SESSION, b'user', b'rk-{t}-2', 0)"
    ),
    "a search of the user keyring": "sc(KEYCTL, SEARCH, USER, b'keyring', b'rk-{t}-3', 0)",
}
KEY_CALLS = ("add_key", "keyctl", "request_key")


def _key_programs(token: str, clean: bool) -> tuple[list[str], list[str]]:
    sets = [KEYS + src.replace("{t}", token) for src in KEY_SETS.values()]
    checks = [
        KEYS + FIND.replace("FIND", call.replace("{t}", token)).replace("CLEAN", str(clean))
        for call in KEY_CHECKS.values()
    ]
    return sets, checks


def _answers(box: Sandbox, programs: list[str]) -> list[str]:
    cells = box._pool.execute(programs, list(range(len(programs))), ["(0,)"], "f")  # type: ignore[union-attr]
    return [c[4] for c in sorted(cells)]


def _keys_kept(confinement: str, ordinary: bool) -> tuple[list[str], list[str], tuple]:
    """Run the sets, then the checks in the same ``Sandbox`` (the next programs) and in a new
    one (the checks of that run invalidate what they find): what each check said."""
    token = uuid.uuid4().hex[:12]
    sets, checks = _key_programs(token, clean=False)
    _, cleaning_checks = _key_programs(token, clean=True)

    def box() -> Sandbox:
        b = _box(confinement)
        if ordinary:
            _as_ordinary_user(b)
        return _start(b)

    with box() as b:
        levels = b.isolation
        _answers(b, sets)
        next_program = _answers(b, checks)
    with box() as b:
        next_sandbox = _answers(b, cleaning_checks)
    return next_program, next_sandbox, levels


KEY_PATHS = ["auto", "landlock", "landlock as an ordinary user"]


@pytest.mark.parametrize("path", KEY_PATHS)
def test_without_keyring_calls_refused_by_seccomp_keys_outlive_programs_and_sandboxes(
    monkeypatch, path
):
    """Defence: ``add_key``, ``keyctl`` and ``request_key`` are not on the seccomp allow-list
    (nothing else stands in their way: Landlock and the namespaces bubblewrap makes as root do
    not cover keys).  Removed (the three calls allowed): a user key, a user-session key and a
    keyring that one program adds are found by the next program, and, where the workers run in
    the host's user namespace (as root: a uid per worker that stays the same for this process),
    by a program of a new ``Sandbox`` — the keys of a uid live as long as the kernel.  As an
    ordinary user on the Landlock path each worker has a user namespace of its own, whose
    keyrings die with it, so only the next program finds them.  The keys expire in a minute and
    the last checks invalidate what they find."""
    ordinary = path.endswith("ordinary user")
    confinement = path.split()[0]
    held = _keys_kept(confinement, ordinary)
    assert held[:2] == (["'held'"] * 3, ["'held'"] * 3), held
    monkeypatch.setattr(_filter, "ALLOWED", (*_filter.ALLOWED, *KEY_CALLS))
    next_program, next_sandbox, levels = _keys_kept(confinement, ordinary)
    assert "seccomp-allowlist" in levels  # the probe does not look at keyrings
    assert all(s.startswith("'ESCAPED key ") for s in next_program), next_program
    assert [s.endswith(" state'") for s in next_program] == [True, True, False], next_program
    host_userns = os.geteuid() == 0 and not ordinary
    if host_userns:
        assert all(s.startswith("'ESCAPED key ") for s in next_sandbox), next_sandbox
    else:
        assert next_sandbox == ["'held'"] * 3, next_sandbox


# ------------------------------------------------- reaching a process outside the sandbox
HOLDS_SECRET = (
    "import ctypes, time\nb = ctypes.create_string_buffer(b'rk-secret-in-memory')\n"
    "print(ctypes.addressof(b), flush=True)\ntime.sleep(60)\n"
)  # a process of the uid another worker's programs run as, with a secret at a known address
REACH = {  # attack -> (its bystander, the code; ``pid`` and ``addr`` are the bystander's)
    "tgkill": ("sleep", "r, e = sc(234, pid, pid, 9)\n    ok = r == 0"),
    "pidfd_open + pidfd_send_signal": (
        "sleep",
        "fd, e = sc(434, pid, 0)\n    ok = fd >= 0 and sc(424, fd, 9, 0, 0)[0] == 0",
    ),
    "ptrace seize": ("python", "r, e = sc(101, 0x4206, pid, 0, 0)\n    ok = r == 0"),
    "process_vm_readv of its memory": (
        "python",
        "buf = ctypes.create_string_buffer(19)\n"
        "    loc = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 19)\n"
        "    rem = (ctypes.c_void_p * 2)(addr, 19)\n"
        "    r, e = sc(310, pid, ctypes.addressof(loc), 1, ctypes.addressof(rem), 1, 0)\n"
        "    ok = r == 19 and buf.raw == b'rk-secret-in-memory'",
    ),
    "pidfd_getfd of its stdout": (
        "python",
        "fd, e = sc(434, pid, 0)\n    ok = fd >= 0 and sc(438, fd, 1, 0)[0] >= 0",
    ),
    # calls that name another process without a signal or ptrace access: Landlock has no say
    "prlimit64 its address space to 1 MiB": (
        "idle",
        "lim = (ctypes.c_ulong * 2)(1 << 20, 1 << 20)\n"
        "    ok = libc.prlimit(pid, 9, ctypes.byref(lim), None) == 0",
    ),
    "setpriority to 19": (
        "idle",
        "ok = not refused(lambda: os.setpriority(os.PRIO_PROCESS, pid, 19))",
    ),
    "sched_setaffinity to one CPU": (
        "idle",
        "ok = not refused(lambda: os.sched_setaffinity(pid, {0}))",
    ),
}
UNSCOPED = tuple(n for n, (kind, _) in REACH.items() if kind == "idle")
EFFECT = {  # what the test reads of the bystander to see that the call really landed
    "prlimit64 its address space to 1 MiB": lambda pid: (
        "Max address space         1048576" in Path(f"/proc/{pid}/limits").read_text()
    ),
    "setpriority to 19": lambda pid: os.getpriority(os.PRIO_PROCESS, pid) == 19,
    "sched_setaffinity to one CPU": lambda pid: os.sched_getaffinity(pid) == {0},
}
REACH_CALLS = ("ptrace", "process_vm_readv", "pidfd_open", "pidfd_send_signal", "pidfd_getfd",
               "setpriority", "sched_setaffinity")  # fmt: skip


@pytest.fixture
def bystanders():
    """Start the targets as a given uid: ``start(uid)`` -> {attack: (pid, addr, process)}."""
    procs: list[subprocess.Popen] = []

    def start(uid: int) -> dict[str, tuple[int, int, subprocess.Popen]]:
        user = {"user": uid, "group": uid, "extra_groups": []} if os.geteuid() == 0 else {}
        out = {}
        for name, (kind, _) in REACH.items():
            if kind in ("sleep", "idle"):
                p = subprocess.Popen([SLEEP, "60"], cwd="/", **user)  # type: ignore[call-overload]
                addr = 0
            else:
                p = subprocess.Popen([PYTHON, "-c", HOLDS_SECRET], cwd="/", stdout=subprocess.PIPE,
                                     **user)  # type: ignore[call-overload]  # fmt: skip
                addr = int(p.stdout.readline())
            procs.append(p)
            out[name] = (p.pid, addr, p)
        return out

    try:
        yield start
    finally:
        for p in procs:
            p.kill()
            p.wait()
            if p.stdout is not None:
                p.stdout.close()


def _reach(box: Sandbox, targets: dict) -> dict[str, bool]:
    """Whether each attack reached its bystander (as the program says, and a kill for real)."""
    programs = [
        PRELUDE + f"def f(x):\n    pid, addr = {targets[name][:2]!r}\n    {code}\n"
        "    return 'ESCAPED' if ok else 'held'\n"
        for name, (_, code) in REACH.items()
    ]
    said = _answers(box, programs)
    out = {}
    for (name, (kind, _)), s in zip(REACH.items(), said):
        proc = targets[name][2]
        if kind == "sleep" and s == "'ESCAPED'":
            proc.wait(timeout=5)  # it was killed: the kill really landed
        assert s in ("'ESCAPED'", "'held'"), (name, s)
        if kind == "sleep":
            assert (proc.poll() is None) == (s == "'held'"), (name, s)
        elif kind == "idle":
            assert EFFECT[name](proc.pid) == (s == "'ESCAPED'"), (name, s)
        out[name] = s == "'ESCAPED'"
    return out


LAYERS = ("seccomp", "pid namespace", "Landlock", "uid per worker")


def _remove(monkeypatch, layer: str) -> None:
    if layer == "seccomp":
        self_only = ("tgkill", "prlimit64")
        monkeypatch.setattr(
            _filter, "SELF_ONLY", tuple(c for c in _filter.SELF_ONLY if c not in self_only)
        )
        monkeypatch.setattr(_filter, "ALLOWED", (*_filter.ALLOWED, *self_only, *REACH_CALLS))
    elif layer == "pid namespace":  # and strict's check that it is there
        args = _confine.bwrap_args
        monkeypatch.setattr(_confine, "bwrap_args", lambda *a, **k: [
            x for x in args(*a, **k) if x != "--unshare-pid"])  # fmt: skip
        needs = tuple(n for n in _pool.STRICT_NEEDS["bwrap"] if n != "pid-ns")
        monkeypatch.setitem(_pool.STRICT_NEEDS, "bwrap", needs)
    elif layer == "Landlock":  # the whole ruleset: bubblewrap does not need it
        monkeypatch.setattr(_confine, "landlock_abi", lambda libc: 0)
    else:  # every worker's programs run as the uid of the bystanders (worker 1's)
        one_uid = _pool.worker_uid
        monkeypatch.setattr(_pool, "worker_uid", lambda pid, slot: one_uid(pid, 1))


@pytest.mark.parametrize("kept", [*LAYERS, "all", "none"])
def test_reaching_another_workers_programs_each_layer_holds_alone_and_without_all_it_does(
    monkeypatch, bystanders, kept
):
    """Defences against a program signalling, tracing, reading the memory of, stealing a file
    descriptor from or starving a process outside its sandbox: seccomp (``tgkill`` and
    ``prlimit64`` only on itself; ``ptrace``, ``process_vm_readv``, ``pidfd_*``,
    ``setpriority``, ``sched_setaffinity`` refused), bubblewrap's pid namespace (the host's
    pids name nothing there), Landlock (signals scoped to the program's domain; no ptrace
    access outside it) and, as root, a uid per worker.  The targets run as the uid of worker
    1's programs, as their programs would; the attacker runs on worker 0 under bubblewrap.
    Seccomp, the pid namespace and the uid each alone (the other three removed) hold all eight
    attacks; Landlock alone holds the five it covers and not the last three.  Without all four
    (the calls allowed; no ``--unshare-pid`` and strict's check of it; no Landlock ruleset; one
    uid for every worker) each gets through: two bystanders are killed, one is traced, its
    memory read and its stdout taken, and three get 1 MiB of address space, nice 19 and one
    CPU (read back from /proc)."""
    root = os.geteuid() == 0
    if not root and kept not in ("pid namespace", "all"):
        pytest.skip(
            "as root only: an ordinary user has one uid for every worker, and an unprivileged "
            "bubblewrap cannot mount /proc without its pid namespace"
        )
    for layer in LAYERS:
        if kept not in (layer, "all") and (root or layer != "uid per worker"):
            _remove(monkeypatch, layer)
    box = _start(Sandbox(timeout_s=1.0, memory_mb=256, workers=1, confinement="bwrap"))
    with box:
        got = _reach(box, bystanders(_pool.worker_uid(os.getpid(), 1) if root else os.getuid()))
        levels = box.isolation
    assert ("pid-ns" in levels) == (kept in ("pid namespace", "all")), levels
    assert ("landlock" in levels) == (kept in ("Landlock", "all")), levels
    through = REACH if kept == "none" else UNSCOPED if kept == "Landlock" else ()
    assert got == {name: name in through for name in REACH}, got


SIGNALS = ("tgkill", "pidfd_open + pidfd_send_signal")
NO_SIGNAL_SCOPE = "replace(_landlock, 'SCOPE_ALL', 0b01)  # abstract unix sockets, not signals"


@pytest.mark.parametrize("removed", ["seccomp", "seccomp and Landlock's signal scope"])
def test_on_the_landlock_path_as_one_uid_landlock_holds_ptrace_even_without_its_signal_scope(
    monkeypatch, open_dir, bystanders, removed
):
    """The Landlock path as an ordinary user: no pid namespace, one uid for every worker, so
    seccomp and Landlock are the only layers, and for ``prlimit64``, ``setpriority`` and
    ``sched_setaffinity`` seccomp alone: without it those three get through.  Landlock holds
    the other five.  Without its signal scope as well, the signals get through (both
    bystanders killed), while tracing, reading memory and taking a descriptor stay refused:
    Landlock denies ptrace access outside the program's domain whatever its scopes, a
    restriction no flag removes alone."""
    _remove(monkeypatch, "seccomp")
    if removed.endswith("signal scope"):
        weakened_worker(monkeypatch, open_dir, NO_SIGNAL_SCOPE)
    box = _box("landlock")
    uid = _as_ordinary_user(box)
    with _start(box) as b:
        assert "uid-drop" not in b.isolation and "landlock" in b.isolation, b.isolation
        got = _reach(b, bystanders(uid))
    through = (*UNSCOPED, *(SIGNALS if removed.endswith("signal scope") else ()))
    assert got == {name: name in through for name in REACH}, got


# ----------------------------------------------------------- other processes through /proc
IN_ARGV, IN_ENV = "rk-argv-secret-31f9", "rk-env-secret-8c2d"
PROC = {
    "its pid in a listing of /proc": "ok = str(pid) in os.listdir('/proc')",
    "its command line": f"ok = {IN_ARGV!r}.encode() in open(f'/proc/{{pid}}/cmdline', 'rb').read()",
    "its status (name, uids)": "ok = 'Uid:' in open(f'/proc/{pid}/status').read()",
    "its environment": f"ok = {IN_ENV!r}.encode() in open(f'/proc/{{pid}}/environ', 'rb').read()",
}


def _read_proc(box: Sandbox, uid: int) -> dict[str, bool]:
    """Whether each read of a bystander's /proc entries (argv and environment holding secrets,
    running as ``uid``) got its data."""
    user = {"user": uid, "group": uid, "extra_groups": []} if os.geteuid() == 0 else {}
    proc = subprocess.Popen([PYTHON, "-c", "import time; time.sleep(60)", IN_ARGV], cwd="/",
                            env={"RK_SECRET": IN_ENV}, **user)  # type: ignore[call-overload]  # fmt: skip
    try:
        programs = [
            f"import os\ndef f(x):\n    pid = {proc.pid}\n    try:\n        {code}\n"
            "    except OSError:\n        ok = False\n    return 'ESCAPED' if ok else 'held'\n"
            for code in PROC.values()
        ]
        said = _answers(box, programs)
    finally:
        proc.kill()
        proc.wait()
    assert set(said) <= {"'ESCAPED'", "'held'"}, said
    return {name: s == "'ESCAPED'" for name, s in zip(PROC, said)}


def _grant_proc(monkeypatch) -> None:
    """Landlock's rules (and bubblewrap's binds) widened by /proc."""
    readable_paths = _confine.readable_paths

    def with_proc(*args, **kwargs):
        read, hidden = readable_paths(*args, **kwargs)
        return [*read, "/proc"], hidden

    monkeypatch.setattr(_confine, "readable_paths", with_proc)


PROC_CASES = {  # removed -> what gets through
    "nothing": (),
    "/proc granted": (),
    "the pid namespace": (),
    "both": tuple(PROC)[:3],
    "both, one uid and no Landlock at all": tuple(PROC),
    "/proc granted on the Landlock path as one uid": tuple(PROC)[:3],
}


@pytest.mark.parametrize("removed", list(PROC_CASES))
def test_proc_of_other_processes_each_layer_holds_alone_and_without_both_it_is_read(
    monkeypatch, removed
):
    """Defences against a program reading other processes through /proc: bubblewrap's pid
    namespace (its /proc holds the worker's processes alone) and Landlock (no /proc among the
    paths it grants).  Each alone holds.  Without both (/proc added to the readable paths; no
    ``--unshare-pid`` and strict's check of it) a program finds a bystander's pid in /proc and
    reads its command line and status; its environment stays refused while a second uid or
    Landlock's ptrace restriction stands (the kernel checks ptrace access for ``environ``), and
    is read too with one uid and no Landlock at all.  On the Landlock path, /proc granted: the
    same three reads."""
    landlock_path = removed.endswith("as one uid")
    if "pid namespace" in removed or removed.startswith("both"):
        if os.geteuid() != 0:
            pytest.skip("an unprivileged bubblewrap cannot mount /proc without its pid namespace")
        _remove(monkeypatch, "pid namespace")
    if "/proc granted" in removed or removed.startswith("both"):
        _grant_proc(monkeypatch)
    if removed.endswith("no Landlock at all"):
        _remove(monkeypatch, "Landlock")
        _remove(monkeypatch, "uid per worker")
    box = _box("landlock" if landlock_path else "bwrap")
    uid = _as_ordinary_user(box) if landlock_path else _pool.worker_uid(os.getpid(), 1)
    if os.geteuid() != 0:
        uid = os.getuid()
    with _start(box) as b:
        got = _read_proc(b, uid)
    assert got == {name: name in PROC_CASES[removed] for name in PROC}, got
