"""The attack suite (docs/sandbox.md, threat model goals b–g), under every strict path.

Paths (in the test ids): ``strict_default`` (what ``Sandbox()`` picks here: bubblewrap when it
starts, else Landlock), ``strict_landlock`` (Landlock without namespaces, where bwrap cannot
run), and the same two as an ordinary user (``nonroot_*``: as root the workers run as a free
uid, the way a user's would).  Every attack asserts its defence; afterwards the host is checked:
no SysV object, no file in /tmp or /dev/shm, no connection on any listener, no worker lost,
nothing left running.
"""

from __future__ import annotations

import contextlib
import os
import platform
import socket
import subprocess
from pathlib import Path

import numpy as np
import pytest

from rewardkit.sandbox import Sandbox, Status, TestCase, _child

from .attacks import SLEEP, VICTIM, Attack, attacks, descendants
from .test_pool import _as_ordinary_user

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="the attacks use x86_64 system call numbers"
)
HELD = [TestCase("(0,)", "'held'")]
SECRET = "rk-attack-secret-93c1"
KEYS = ("0x524b0001", "0x524b0002", "0x524b0003")


def _sysv_keys() -> set[str]:
    out = set()
    for kind in ("shm", "msg", "sem"):
        with contextlib.suppress(OSError), open(f"/proc/sysvipc/{kind}") as fh:
            for line in list(fh)[1:]:
                out.add(f"0x{int(line.split()[0]):08x}")
    return out


@contextlib.contextmanager
def _listeners(tmp: Path):
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(8)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX)
    path = str(tmp / "host.sock")
    unix.bind(path)
    os.chmod(path, 0o777)
    unix.listen(8)
    abstract = socket.socket(socket.AF_UNIX)
    name = f"\0rk-attack-{os.getpid()}"
    abstract.bind(name)
    abstract.listen(8)
    socks = (tcp, udp, unix, abstract)
    for s in socks:
        s.setblocking(False)
    try:
        yield {"port": tcp.getsockname()[1], "udp": udp.getsockname()[1], "unix": path,
               "abstract": name}, socks  # fmt: skip
    finally:
        for s in socks:
            s.close()


@contextlib.contextmanager
def _bystander(uid: int | None):
    """A ``sleep`` outside the sandbox, as the workers' uid when they run as a free one (else
    as ours): the one host process an attack tries to kill."""
    user = {} if uid is None else {"user": uid, "group": uid, "extra_groups": []}
    proc = subprocess.Popen([SLEEP, "300"], **user)
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def _box(path: str) -> Sandbox:
    confinement = "landlock" if path.endswith("landlock") else "auto"
    box = Sandbox(timeout_s=1.0, memory_mb=256, workers=2, confinement=confinement)
    if path.startswith("nonroot"):
        _as_ordinary_user(box)
    return box


def _check(table, suite: list[Attack], levels: tuple[str, ...], box: Sandbox) -> list[str]:
    bad = []
    for row, a in enumerate(suite):
        if a.needs and not set(a.needs.split("|")) & set(levels):
            continue
        got = Status(int(table.status[row, 0]))
        if got not in a.allowed:
            said = box._pool.execute([a.src], [0], ["(0,)"], "f")  # what it returned, for the log
            bad.append(f"({a.goal}) {a.name}: {got.name} {table.detail[row, 0]!r} {said!r:.300}")
    return bad


@pytest.mark.slow
@pytest.mark.parametrize(
    "path", ["strict_default", "strict_landlock", "nonroot_default", "nonroot_landlock"]
)
def test_attack_suite(path, tmp_path):
    if path.startswith("nonroot") and os.geteuid() != 0:
        pytest.skip("not root: the strict_* runs above are the ordinary-user path")
    tmp_path.chmod(0o755)
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(SECRET)
    secret_file.chmod(0o644)
    repo_file = str(Path(__file__).resolve())
    before_keys, before_start = _sysv_keys(), descendants(os.getpid())
    shm_before = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    with _listeners(tmp_path) as (ctx, socks):
        box = _box(path)
        try:
            box.start()
        except Exception as e:  # a machine without Landlock ABI 6 has no such path
            if path.endswith("landlock"):
                pytest.skip(f"no Landlock path here: {e}")
            raise
        with box, _bystander(box._as_uid) as bystander:
            levels = box.isolation
            roots = box._pool.worker_pids()
            ctx.update(roots=roots, secret_file=str(secret_file), secret=SECRET,
                       repo_file=repo_file, sandbox_file=_child.__file__,
                       bystander=bystander.pid)  # fmt: skip
            suite = attacks(ctx)
            main = [a for a in suite if a.phase in ("main", "set")]
            checks = [a for a in suite if a.phase == "check"]
            victims = 40
            t1 = box.run([a.src for a in main] + [VICTIM] * victims, HELD, entry_point="f")
            pids_after = box._pool.worker_pids()
            t2 = box.run([a.src for a in checks], HELD, entry_point="f")
            bad = _check(t1, main, levels, box) + _check(t2, checks, levels, box)
            bystander_alive = bystander.poll() is None
        # A second Sandbox, later: nothing of the first run is found there either.
        with _box(path) as again:
            t3 = again.run([a.src for a in checks], HELD, entry_point="f")
            bad += [f"next Sandbox: {b}" for b in _check(t3, checks, levels, again)]
        victim_rows = t1.status[len(main) :, 0]
        for s in socks:
            with pytest.raises((BlockingIOError, OSError)):
                s.accept() if s.type == socket.SOCK_STREAM else s.recv(16)
    assert not bad, "\n".join(bad)
    assert bystander_alive, "a process outside the sandbox was killed"
    assert (victim_rows == Status.PASS).all(), [Status(int(s)).name for s in victim_rows]
    assert pids_after == roots, "a worker was lost during the attacks"
    assert not (_sysv_keys() - before_keys) & set(KEYS), "a SysV object outlived the programs"
    assert not (set(os.listdir("/dev/shm")) - shm_before if os.path.isdir("/dev/shm") else set())
    assert not Path("/tmp/rk-carry").exists() and not Path("/var/tmp/rk-carry").exists()
    assert secret_file.read_text() == SECRET
    assert descendants(os.getpid()) <= before_start, "a process outlived Sandbox.close()"
    covered = {a.goal for a in suite}
    assert covered == set("bcdefg") and len(suite) >= 40
    np.testing.assert_array_equal(t1.isolation, levels)
