"""The pid counter of a worker's private pid namespace, set back before every program (standard
library only: the zygote imports it).

A pid namespace hands out pids and thread ids from one counter.  The namespaces are made once
per worker, so without this a program could pass a number to the next program on the same
worker: it starts and joins N threads, each taking an id, and the next program reads N back
from ``os.getpid()`` or its own thread ids (15 bits a program with ``pid_max`` = 32768).  The
zygote writes its own pid to ``/proc/sys/kernel/ns_last_pid`` before each fork, so every
program gets the same pid and its threads the same ids, whatever ran before.

The kernel allows that write only to a holder of ``CAP_SYS_ADMIN`` or ``CAP_CHECKPOINT_RESTORE``
in the user namespace that owns the pid namespace: a root zygote under bubblewrap (no user
namespace, its pid namespace owned by the host's), and an ordinary user's zygote that bubblewrap
gave ``CAP_CHECKPOINT_RESTORE`` (and ``CAP_SYS_ADMIN``, for ``_mounts.fresh_tmpfs``) in its
one user namespace (``_confine.bwrap_args``).  There every child drops every capability before
any program code runs (``drop_caps``; the worker's probe child runs the same setup).  The
Landlock path has no pid namespace of its own: there the counter is not set back, the isolation
report does not list ``pid-reset``, and docs/sandbox.md states the residual channel.  The
host's counter is never written (only a private namespace's: ``open_counter`` is called only
where the worker verified one).
"""

from __future__ import annotations

import ctypes
import fcntl
import os

__all__ = ["LAST_PID", "caps_held", "drop_caps", "no_caps", "open_counter", "reset"]

LAST_PID = "/proc/sys/kernel/ns_last_pid"
CAP_VERSION_3 = 0x2008_0522


def open_counter(last: int) -> int:
    """An fd (≥ 100, close-on-exec) on this pid namespace's counter, with ``last`` written once
    through it as a check; -1 when the kernel refuses the open or the write."""
    try:
        fd = os.open(LAST_PID, os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return -1
    try:
        high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100)  # clear of the child's fds 0-4
    finally:
        os.close(fd)
    try:
        reset(high, b"%d" % last)
    except OSError:
        os.close(high)
        return -1
    return high


def reset(fd: int, last: bytes) -> None:
    """The next pid handed out is ``last`` + 1 (when free).  At offset 0 each time: with
    ``kernel.sysctl_writes_strict`` (the default) a write at a later offset is ignored."""
    os.pwrite(fd, last, 0)


def no_caps() -> tuple:
    """The ``capget``/``capset`` arguments (version 3, this thread, all sets empty), made once by
    the zygote so that a child only makes one call."""
    return (ctypes.c_uint32 * 2)(CAP_VERSION_3, 0), (ctypes.c_uint32 * 6)()


def drop_caps(libc: ctypes.CDLL, prepared: tuple) -> None:
    """Empty the effective, permitted and inheritable sets (the ambient set follows), and see
    them empty: a child that cannot raises before any program code runs (its cells CRASH, and
    the worker's probe child would fail the start)."""
    head, data = prepared
    if libc.capset(head, data) != 0:
        raise OSError(ctypes.get_errno(), "capset")
    if caps_held(libc):
        raise OSError(1, "a capability survived capset")


def caps_held(libc: ctypes.CDLL) -> bool:
    """Whether this thread holds any capability, effective or permitted (True when ``capget``
    fails: nothing is assumed dropped that was not seen dropped)."""
    head, data = (ctypes.c_uint32 * 2)(CAP_VERSION_3, 0), (ctypes.c_uint32 * 6)()
    if libc.capget(head, data) != 0:
        return True
    return any(data[i] for i in (0, 1, 3, 4))  # effective, permitted of both 32-bit words
