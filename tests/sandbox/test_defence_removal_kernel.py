"""Isolation defences of kernel objects and other processes, each removed: the attack gets through.

Keyrings (refused by the seccomp allow-list), and the layers between a program and a process
outside its sandbox (seccomp, the pid namespace, Landlock, a uid per worker) against ``ptrace``,
``process_vm_readv``, ``pidfd_*`` and ``tgkill``, and against reading it through ``/proc``.  How
a defence is removed: ``removal.py``.  Every target is a process or key this test made.
"""

from __future__ import annotations

import os
import platform
import uuid

import pytest

from rewardkit.sandbox import Sandbox, _filter

from .removal import _box, _start
from .test_pool import _as_ordinary_user

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="the attacks use x86_64 system call numbers"
)

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
