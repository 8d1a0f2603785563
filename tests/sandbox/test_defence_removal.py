"""Isolation defences of processes and kernel interfaces, each removed: the attack gets through.

Seccomp (SysV IPC, io_uring and its probe), signal scoping (seccomp's self-only ``kill``,
Landlock's signal scope, the pid namespace), the network (socket calls, Landlock TCP rules, the
network namespace), the uid per worker, and all of it at once (``isolation="basic"``).  How a
defence is removed: ``removal.py``.  Signals are sent only to a ``sleep`` this test starts and
to this test's own workers' programs.
"""

from __future__ import annotations

import os
import platform
import subprocess

import pytest

from rewardkit.errors import RewardkitError
from rewardkit.sandbox import (
    Sandbox,
    SandboxWarning,
    Status,
    _filter,
    _pool,
)

from .attacks import SLEEP, VICTIM
from .removal import (
    HELD,
    _box,
    _ctx,
    _held,
    _outcomes,
    _pick,
    _said,
    _start,
    weakened_worker,
)
from .test_attacks import _listeners
from .test_pool import _as_ordinary_user, _free_uid

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="the attacks use x86_64 system call numbers"
)


def test_a_launcher_patch_naming_something_gone_fails_the_start(monkeypatch, open_dir):
    """The removals below must never pass by patching nothing: a renamed function or constant
    stops the worker before its handshake."""
    weakened_worker(monkeypatch, open_dir, "replace(_worker.Zygote, '_no_such_method', None)")
    with pytest.raises(RewardkitError, match="failed to start"):
        _box().start()


# ------------------------------------------------------------------- the seccomp allow-list
IPC_SET_CHECK = [
    ("SysV shared memory segment with a key", "SysV segment found again"),
    ("SysV message queue with a key", "SysV message queue found again"),
    ("SysV semaphore with a key", "SysV semaphore found again"),
]
IPC_GROW = "SysV shared memory growing host memory (1 GiB)"
IPC_CALLS = ("shmget", "msgget", "semget")


def _ipc_attacks(box: Sandbox) -> dict[str, bool]:
    """Whether each IPC attack was held: the sets run first, the checks in a later run (one
    worker, so the same IPC namespace)."""
    sets = _pick([s for s, _ in IPC_SET_CHECK])
    checks = _pick([IPC_GROW] + [c for _, c in IPC_SET_CHECK])
    box.run([a.src for a in sets], HELD, entry_point="f")
    return _held(_outcomes(box, checks), checks)


def test_without_ipc_calls_refused_by_seccomp_ipc_objects_outlive_programs(monkeypatch):
    """Defence: SysV IPC calls are not on the seccomp allow-list.  Removed (the three calls
    added to ``_filter.ALLOWED``, the filter the parent compiles): a SysV segment, queue and
    semaphore made by one program are found by the next, and a 1 GiB segment is granted.  (A
    POSIX queue is refused by a second layer as well: ``mq_open`` with ``mq_open`` allowed
    answers EACCES, so it is left out here.)  Run where each worker has its own IPC
    namespace (bubblewrap), which the kernel destroys with the worker, so nothing reaches the
    host."""
    with _start(_box()) as box:
        if "ipc-ns" not in box.isolation:
            pytest.skip("no private IPC namespace here: the objects would reach the host")
        kept = _ipc_attacks(box)
    assert all(kept.values()), kept
    monkeypatch.setattr(_filter, "ALLOWED", (*_filter.ALLOWED, *IPC_CALLS))
    with _start(_box()) as box:
        assert "seccomp-allowlist" in box.isolation  # the probe cannot see this removal
        removed = _ipc_attacks(box)
    assert not any(removed.values()), removed  # every one got through


IO_URING = "io_uring: a ring to open sockets without socket()"


def test_without_io_uring_refused_a_ring_is_granted_unless_the_probe_refuses_to_start(
    monkeypatch,
):
    """Defence: ``io_uring_setup`` is not on the allow-list, and each worker's probe child
    checks that it is refused.  With the call allowed, strict refuses to start (the probe);
    with the probe blinded as well (it tries a system call number the filter refuses anyway),
    the attack gets its ring."""
    with _start(_box()) as box:
        assert _held(_outcomes(box, _pick([IO_URING])), _pick([IO_URING])) == {IO_URING: True}
    monkeypatch.setattr(_filter, "ALLOWED", (*_filter.ALLOWED, "io_uring_setup"))
    with pytest.raises(RewardkitError, match="seccomp-allowlist"):
        _box().start()


def test_without_io_uring_refused_and_its_probe_the_attack_gets_a_ring(monkeypatch, open_dir):
    monkeypatch.setattr(_filter, "ALLOWED", (*_filter.ALLOWED, "io_uring_setup"))
    blind_probe = "replace(_worker, 'SYS_IO_URING_SETUP', 999)  # a number refused anyway"
    weakened_worker(monkeypatch, open_dir, blind_probe)
    suite = _pick([IO_URING])
    with _start(_box()) as box:
        out = _outcomes(box, suite)
        said = _said(box, suite[0].src)
    assert _held(out, suite) == {IO_URING: False}, out
    assert said.startswith("'ESCAPED io_uring fd"), said


# ------------------------------------------------------------------------- signal scoping
BYSTANDER = "SIGKILL a process of the same user outside the sandbox"
NO_SIGNAL_SCOPE = "replace(_landlock, 'SCOPE_ALL', 0b01)  # abstract unix sockets, not signals"


@pytest.fixture
def bystander():
    """A ``sleep`` of the uid the workers will run as (a free uid as root, else ours): the one
    process a program is allowed to try to kill here.  Yields (uid, process)."""
    uid = _free_uid() if os.geteuid() == 0 else os.getuid()
    user = {"user": uid, "group": uid, "extra_groups": []} if os.geteuid() == 0 else {}
    proc = subprocess.Popen([SLEEP, "120"], **user)  # type: ignore[call-overload]
    try:
        yield uid, proc
    finally:
        proc.kill()
        proc.wait()


def _kill_bystander(confinement: str, uid: int, proc: subprocess.Popen) -> tuple[bool, str]:
    box = _box(confinement)
    if os.geteuid() == 0:
        _as_ordinary_user(box)
        box._as_uid = uid  # the bystander's uid: only Landlock and seccomp stand between them
    (attack,) = _pick([BYSTANDER], _ctx(bystander=proc.pid))
    with _start(box) as b:
        levels = b.isolation
        if confinement == "bwrap" and "pid-ns" not in levels:
            pytest.skip("no bubblewrap pid namespace here")
        said = _said(b, attack.src)
    assert "uid-drop" not in levels, levels
    proc_alive = proc.poll() is None
    return proc_alive, said


@pytest.mark.parametrize(
    "removed",
    ["nothing", "seccomp self-only kill", "Landlock signal scope", "both", "both, under bwrap"],
)
def test_signal_scoping_each_layer_holds_alone_and_without_both_a_bystander_dies(
    monkeypatch, open_dir, bystander, removed
):
    """Defences against signalling a process outside the program's sandbox that runs as the
    same uid (an ordinary user's other processes, the other workers' programs): seccomp allows
    ``kill`` only on the program itself, and Landlock scopes signals to its own domain.  On the
    Landlock path (no pid namespace) each alone holds; with both removed (``kill`` moved to the
    plain allow-list; ``SCOPE_ALL`` without the signal bit in the zygote) the program kills a
    ``sleep`` this test started as the workers' uid.  Under bubblewrap, with both removed, the
    worker's pid namespace still holds: the host pid names no process there."""
    uid, proc = bystander
    if removed.startswith("both") or removed == "seccomp self-only kill":
        self_only = tuple(c for c in _filter.SELF_ONLY if c != "kill")
        monkeypatch.setattr(_filter, "SELF_ONLY", self_only)
        monkeypatch.setattr(_filter, "ALLOWED", (*_filter.ALLOWED, "kill"))
    if removed.startswith("both") or removed == "Landlock signal scope":
        weakened_worker(monkeypatch, open_dir, NO_SIGNAL_SCOPE)
    bwrap = removed.endswith("bwrap")
    alive, said = _kill_bystander("bwrap" if bwrap else "landlock", uid, proc)
    if removed == "both":
        assert not alive and said == f"'ESCAPED killed {proc.pid}'", said
    else:
        assert alive and said == "'held'", said


# ------------------------------------------------------------------------------ the network
TCP = "TCP connect to a host listener"
SOCKET_CALLS = ("socket", "connect", "sendto", "getsockopt", "setsockopt", "getsockname")
NO_TCP_RULES = "replace(_landlock, 'NET_TCP', 0)  # Landlock no longer handles TCP"


@pytest.mark.parametrize(
    "removed", ["socket calls", "Landlock TCP rules", "both", "both, under bwrap"]
)
def test_network_each_layer_holds_alone_and_without_both_a_host_listener_is_reached(
    monkeypatch, open_dir, tmp_path, removed
):
    """Defences against reaching a host TCP service: seccomp refuses ``socket``, Landlock
    denies TCP connect, and bubblewrap's worker has its own network namespace.  On the Landlock
    path each of the first two holds alone; without both (the socket calls on the allow-list,
    ``NET_TCP`` unhandled in the zygote's ruleset) the program connects to a listener this test
    opened on 127.0.0.1 and sends to it.  Under bubblewrap the network namespace still holds."""
    if removed in ("socket calls", "both", "both, under bwrap"):
        monkeypatch.setattr(_filter, "ALLOWED", (*_filter.ALLOWED, *SOCKET_CALLS))
    if removed != "socket calls":
        weakened_worker(monkeypatch, open_dir, NO_TCP_RULES)
    with _listeners(tmp_path) as (ports, socks):
        (attack,) = _pick([TCP], _ctx(**ports))
        confinement = "bwrap" if removed.endswith("bwrap") else "landlock"
        with _start(_box(confinement)) as box:
            if confinement == "bwrap" and "net-ns" not in box.isolation:
                pytest.skip("no bubblewrap network namespace here")
            said = _said(box, attack.src)
        try:
            socks[0].accept()[0].close()
            reached = True
        except BlockingIOError:
            reached = False
    if removed == "both":
        assert said == "'ESCAPED tcp'" and reached, said
    else:
        assert said == "'held'" and not reached, said


# ------------------------------------------------------------------- a uid per worker (root)
HOLDER = (
    "import threading, time\nthreading.stack_size(1 << 16)\n"
    "def f(x):\n    for _ in range(300):\n        try:\n"
    "            threading.Thread(target=time.sleep, args=(3.5,), daemon=True).start()\n"
    "        except Exception:\n            break\n    time.sleep(3.0)\n    return 'held'\n"
)  # holds the process cap (64 tasks of its uid) for 3 s
THREADED_VICTIM = (  # starts a thread again and again for 2 s: it meets the holder's hold
    "import threading, time\n"  # even when a loaded machine starts the holder late
    "def f(x):\n    end = time.monotonic() + 2.0\n    while time.monotonic() < end:\n"
    "        out = []\n        t = threading.Thread(target=out.append, args=('held',))\n"
    "        t.start()\n        t.join()\n        time.sleep(0.01)\n    return out[0]\n"
)


def _victims_beside_a_holder() -> list[tuple[Status, str]]:
    with _start(Sandbox(timeout_s=5.0, memory_mb=256, workers=2)) as box:
        # Row 0 (the holder) and row 1 go to the first worker; the other rows run on the
        # second worker, the first of them while the holder holds its threads (3 s from its
        # start), each victim trying for 2 s (a loaded machine once slowed a 1.5 s hold and
        # 1.2 s tries enough that no victim met the hold).
        t = box.run([HOLDER, *[THREADED_VICTIM] * 4], HELD, entry_point="f")
    return [(Status(int(s)), str(d)) for s, d in zip(t.status[2:, 0], t.detail[2:, 0])]


def test_with_one_uid_for_every_worker_a_program_holding_the_process_cap_starves_the_others(
    monkeypatch,
):
    """Defence (root): each worker's programs drop to a uid of their own, because the kernel
    counts ``RLIMIT_NPROC`` per uid machine-wide.  Removed (``worker_uid`` the same for every
    slot): a program holding 64 threads on one worker makes the honest programs on the other
    worker fail to start a thread (RuntimeError: ERROR) — sabotage that raises the holder's
    group-relative advantage."""
    if os.geteuid() != 0:
        pytest.skip("the uid drop is root's: an ordinary user's cap is a margin (docs)")
    kept = _victims_beside_a_holder()
    assert {s for s, _ in kept} == {Status.PASS}, kept
    one_uid = _pool.worker_uid
    monkeypatch.setattr(_pool, "worker_uid", lambda pid, slot: one_uid(pid, 0))
    removed = _victims_beside_a_holder()
    assert (Status.ERROR, "RuntimeError") in removed, removed


# ------------------------------------------------------------- all of it: isolation="basic"
BASIC_ESCAPES = (
    "read a world-readable host file with a secret",
    "read /etc/passwd and /etc/hostname",
    "TCP connect to a host listener",
    "socketpair and exec of a shell",
)
KILLER = "SIGKILL every process of the other worker's tree"


def _basic_or_strict(isolation: str, ctx_of, victims: int = 24) -> tuple[dict, list[Status]]:
    if isolation == "basic":
        with pytest.warns(SandboxWarning):
            box = Sandbox(timeout_s=1.0, memory_mb=256, workers=2, isolation="basic")
    else:
        box = Sandbox(timeout_s=1.0, memory_mb=256, workers=2)
    _as_ordinary_user(box)  # one uid for every worker, as an ordinary user's sandbox has
    with box:
        suite = _pick([KILLER, *BASIC_ESCAPES], ctx_of(box._pool.worker_pids()))
        progs = [suite[0].src, *[VICTIM] * victims, *[a.src for a in suite[1:]]]
        t = box.run(progs, HELD, entry_point="f")
    rows = [0, *range(victims + 1, victims + 1 + len(BASIC_ESCAPES))]
    held = {a.name: Status(int(t.status[r, 0])) in a.allowed for a, r in zip(suite, rows)}
    return held, [Status(int(x)) for x in t.status[1 : victims + 1, 0]]


def test_isolation_basic_lets_the_attacks_through(open_dir, tmp_path):
    """Every confinement removed at once: ``isolation="basic"`` (rlimits only; as an ordinary
    user, so every worker has the same uid).  Under strict the attacks below are held and the
    honest programs on the other worker PASS; under basic a program kills the other worker's
    programs (their rows CRASH), reads a host secret and /etc/passwd, connects to a host TCP
    listener and runs a shell.  Only this test's own processes, files and sockets are
    targets."""
    secret = open_dir / "secret.txt"
    secret.write_text("rk-basic-secret-77c0")
    secret.chmod(0o644)
    tmp_path.chmod(0o755)
    with _listeners(tmp_path) as (ports, _):

        def ctx_of(roots):
            return _ctx(roots=roots, secret_file=str(secret), secret="rk-basic-secret-77c0",
                        **ports)  # fmt: skip

        strict_held, strict_victims = _basic_or_strict("strict", ctx_of)
        basic_held, basic_victims = _basic_or_strict("basic", ctx_of)
    assert all(strict_held.values()), strict_held
    assert set(strict_victims) == {Status.PASS}, strict_victims
    assert not any(basic_held.values()), basic_held
    assert Status.CRASH in basic_victims, basic_victims
