"""A user namespace of its own for a worker confined by Landlock alone as an ordinary user
(standard library only: the zygote imports it).

Without root every worker's children run as the caller's uid, and ``RLIMIT_NPROC`` counts the
tasks of a uid: a program holding threads on one worker would make the thread starts of the
honest programs on the other workers fail (their rows ERROR).  Since Linux 5.14 that count is
kept per user namespace.  A worker in a namespace of its own — its uid and gid mapped to
themselves, ``setgroups`` denied, every capability dropped (so file modes bind its children as
they bind the caller) — counts only its own tasks against its children's cap, as each
bubblewrap'd worker does.  Where the kernel refuses unprivileged user namespaces the worker
runs without one and the isolation report does not list ``user-ns``.
"""

from __future__ import annotations

import ctypes
import os

try:
    from ._mounts import capped_tmpfs, read_only_binds
except ImportError:  # run by the zygote as a plain script, not as part of the package
    from _mounts import capped_tmpfs, read_only_binds  # type: ignore[no-redef]

__all__ = ["NPROC_OWN_NS", "own_user_namespace"]

CLONE_NEWUSER, CLONE_NEWNS = 0x1000_0000, 0x0002_0000
MS_REC, MS_PRIVATE = 0x4000, 1 << 18
CAP_VERSION_3 = 0x2008_0522
# The children's process cap inside the namespace: what the namespace holds before a program
# runs (the zygote, its batch process and the child itself) plus the margin a program gets
# everywhere.
NPROC_OWN_NS = 3 + 64


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def own_user_namespace(
    libc: ctypes.CDLL, read: list[str] | tuple[str, ...] = (), base: str = "", cap_mb: int = 0
) -> tuple[bool, bool]:
    """Enter a new user namespace (uid and gid mapped to themselves), with a tmpfs of ``cap_mb``
    MiB on ``base`` where the work directories go (the worker then keeps its capabilities in
    the namespace; without it none).  Returns (entered, the tmpfs in place and its size
    verified); (False, False) when the kernel or a security module refuses a namespace, or its
    mappings (AppArmor's restriction of unprivileged user namespaces lets ``unshare`` succeed
    and then denies the mapping): tried first in a forked child, since a namespace entered
    cannot be left."""
    pid = os.fork()
    if pid == 0:
        ok = False
        try:
            ok = _enter(libc, read, "", 0)[0]
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
        return False, False
    return _enter(libc, read, base, cap_mb)


def _private_root(libc: ctypes.CDLL) -> bool:
    return int(libc.mount(None, b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None)) == 0


def _enter(
    libc: ctypes.CDLL, read: list[str] | tuple[str, ...], base: str, cap_mb: int
) -> tuple[bool, bool]:
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER) != 0:
        return False, False
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
    _write("/proc/self/gid_map", f"{gid} {gid} 1\n")
    # A mount namespace of the namespace's own, where the readable paths are bound read-only:
    # a read then moves no access time on the host's files (``_mounts.read_only_binds``); and
    # the work directories go in a size-capped tmpfs: on the host's disk a program rewriting a
    # file (O_TRUNC), truncating and renaming it over made the disk complete hundreds of
    # writes and discards a second, whose interrupts took another worker's core (``cpu-pin``),
    # and the entry cap bounded neither.  Private first, so nothing propagates to the host's.
    # With that tmpfs the worker keeps its capabilities in its own namespace, to mount a fresh
    # tmpfs for each remade work directory (``_mounts.fresh_tmpfs``: in one tmpfs for all, the
    # inode numbers carried a count from one program to the next, every value exact); every
    # child drops them before any program code runs (``_pidreset.drop_caps``).
    if (read or base) and libc.unshare(CLONE_NEWNS) == 0 and _private_root(libc):
        if read:
            read_only_binds(libc, list(read))
        if base and cap_mb and capped_tmpfs(libc, base, cap_mb):
            return True, True
    head = (ctypes.c_uint32 * 2)(CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable (x2): all empty
    if libc.capset(head, data) != 0:
        raise OSError(ctypes.get_errno(), "capset")
    return True, False
