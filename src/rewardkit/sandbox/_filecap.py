"""A cap on the entries a program creates in its work directory, counted through inotify
(standard library only: the zygote imports it).

Where no size-capped file system can be mounted — Landlock alone as an ordinary user, or as a
root without ``CAP_SYS_ADMIN`` — each file is capped at 1 MiB (``RLIMIT_FSIZE``) but nothing
in the kernel caps how many a program writes.  The zygote watches the work directory with
inotify (``IN_CREATE``: files, hard links, symlinks) and kills the program once it has created
more than ``cap`` entries; the Landlock domain withholds ``MAKE_DIR`` on this path, so every
entry lands in the watched directory.  The bound is soft by the zygote's reaction time: the
zygote wakes on the first event and counts, and what the program creates before it is killed is
reported in the cell's detail (``created N entries``).
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import struct

__all__ = ["FileCount"]

IN_CREATE, IN_Q_OVERFLOW = 0x100, 0x4000
EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (then len bytes of name)


class FileCount:
    """An inotify descriptor watching the current work directory, and the entries counted
    since the last :meth:`reset`."""

    def __init__(self, libc: ctypes.CDLL, cap: int) -> None:
        fd = int(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.fd = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100)  # clear of the child's fds
        os.close(fd)
        self.libc, self.cap, self.created, self.overflow = libc, cap, 0, False

    def watch(self, path: str) -> None:
        """Watch a new work directory (the previous one's watch ends when it is removed)."""
        if int(self.libc.inotify_add_watch(self.fd, path.encode(), IN_CREATE)) < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {path}")

    def reset(self) -> None:
        self.over()
        self.created, self.overflow = 0, False

    def over(self) -> bool:
        """Read the pending events; whether the program is past its cap."""
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
            pos = 0
            while pos + EVENT.size <= len(data):
                _, mask, _, n = EVENT.unpack_from(data, pos)
                pos += EVENT.size + n
                if mask & IN_Q_OVERFLOW:
                    self.overflow = True
                elif mask & IN_CREATE:
                    self.created += 1
        return self.overflow or self.created > self.cap

    def detail(self) -> str:
        more = "more than 16,384" if self.overflow else f"{self.created}"
        return f"created {more} entries in its work directory (the cap is {self.cap})"
