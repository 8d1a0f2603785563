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
namespace, its pid namespace owned by the host's).  An unprivileged bubblewrap runs the zygote
in a nested user namespace (for ``--dev`` and ``--disable-userns``) without capabilities, and
the Landlock path has no pid namespace of its own; there the counter is not set back, the
isolation report does not list ``pid-reset``, and docs/sandbox.md states the residual channel.
The host's counter is never written (only a private namespace's: ``open_counter`` is called
only where the worker verified one).
"""

from __future__ import annotations

import fcntl
import os

__all__ = ["LAST_PID", "open_counter", "reset"]

LAST_PID = "/proc/sys/kernel/ns_last_pid"


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
