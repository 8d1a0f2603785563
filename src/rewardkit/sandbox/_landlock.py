"""Landlock through its three system calls (standard library only: the zygote imports it).

The zygote builds one ruleset per worker — read and execute beneath the interpreter, the standard
library and the allowed packages; read and write beneath its work directory; no TCP bind or
connect; signals and abstract unix sockets scoped to the program's own domain — and every child
enters it with ``landlock_restrict_self`` right after the fork.  Anything not granted is denied
by the kernel, whatever the uid: /proc, the home directories, the repository, other programs'
files, the other workers' processes.
"""

from __future__ import annotations

import ctypes
import os
import struct

__all__ = ["abi", "make_ruleset", "restrict_self"]

# x86_64 / aarch64 system call numbers (the same on both)
SYS_CREATE, SYS_ADD_RULE, SYS_RESTRICT = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
# filesystem rights by ABI (1: the first 13; 2: REFER; 3: TRUNCATE; 5: IOCTL_DEV)
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
MAKE_DIR = 1 << 7
FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1}
FS_ABI5 = (1 << 16) - 1
FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | (1 << 14) | (1 << 15)  # rights a file rule takes
NET_TCP = 0b11  # BIND_TCP | CONNECT_TCP (ABI 4)
SCOPE_ALL = 0b11  # ABSTRACT_UNIX_SOCKET | SIGNAL (ABI 6)
PR_SET_NO_NEW_PRIVS = 38


def _syscall(libc: ctypes.CDLL, *args: object) -> int:
    conv = [ctypes.c_long(a) if type(a) is int else a for a in args]  # full-width registers
    return int(libc.syscall(*conv))


def abi(libc: ctypes.CDLL | None) -> int:
    """The Landlock ABI version of the running kernel (0: none, not x86_64/aarch64, disabled)."""
    if libc is None or os.uname().machine not in ("x86_64", "aarch64"):
        return 0
    v = _syscall(libc, SYS_CREATE, None, 0, CREATE_RULESET_VERSION)
    return max(v, 0)


def _fs_rights(version: int) -> int:
    return FS_BY_ABI.get(version, FS_ABI5)


def _without(paths: list[str], hidden: list[str]) -> list[str]:
    """``paths`` with each directory that holds a hidden one replaced by its other entries (a
    Landlock rule grants everything beneath it: site-packages inside the standard library must
    not come with it)."""
    out = []
    for p in paths:
        inside = [h for h in hidden if os.path.dirname(h) == p]
        if not inside:
            out.append(p)
            continue
        with os.scandir(p) as it:
            out += [e.path for e in it if e.path not in inside]
    return out


def make_ruleset(
    libc: ctypes.CDLL,
    version: int,
    read: list[str],
    write: list[str],
    hidden: list[str],
    listable: list[str],
    make_dirs: bool = True,
) -> tuple[int, list[str]]:
    """A ruleset fd granting read/execute beneath ``read`` (minus ``hidden``), directory
    listing (names only, no contents) beneath ``listable`` (the site-packages holding allowed
    packages: the import system lists them), and everything beneath ``write`` (but making
    directories when ``make_dirs`` is false: ``_filecap`` then sees every entry a program
    creates).  Returns the fd and the paths granted (missing paths are left out)."""
    read = _without([os.path.realpath(p) for p in read], [os.path.realpath(h) for h in hidden])
    fs = _fs_rights(version)
    net = NET_TCP if version >= 4 else 0
    scoped = SCOPE_ALL if version >= 6 else 0
    attr = struct.pack("<QQQ", fs, net, scoped)
    size = 24 if version >= 6 else 16
    buf = ctypes.create_string_buffer(attr, 24)
    fd = _syscall(libc, SYS_CREATE, buf, size, 0)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    granted = []
    read_rights = EXECUTE | READ_FILE | READ_DIR
    write_rights = fs if make_dirs else fs & ~MAKE_DIR
    for paths, rights in ((read, read_rights), (listable, READ_DIR), (write, write_rights)):
        for path in paths:
            try:
                pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                # Per path: a file met earlier must not narrow the directories after it (they
                # would lose READ_DIR, and the import system could not list a package).
                granted_rights = rights if os.path.isdir(path) else rights & FILE_ONLY
                rule = ctypes.create_string_buffer(struct.pack("<Qi", granted_rights & fs, pfd), 12)
                if _syscall(libc, SYS_ADD_RULE, fd, RULE_PATH_BENEATH, rule, 0) != 0:
                    err = ctypes.get_errno()
                    os.close(fd)
                    raise OSError(err, f"landlock_add_rule {path}")
                granted.append(path)
            finally:
                os.close(pfd)
    return fd, granted


def restrict_self(libc: ctypes.CDLL, ruleset_fd: int) -> None:
    """Enter the ruleset's domain (a new domain per call: one per program)."""
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
    if _syscall(libc, SYS_RESTRICT, ruleset_fd, 0) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")
