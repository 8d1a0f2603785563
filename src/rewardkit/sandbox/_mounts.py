"""A private mount namespace for a worker confined by Landlock alone, as root (standard library
only: the zygote imports it).

Without bubblewrap two things are missing that a mount namespace gives, and a root worker can
make one for itself:
- **a total cap on what programs write**: the worker's work directories go in a tmpfs of
  ``cap_mb`` (Landlock alone caps only each file, through ``RLIMIT_FSIZE``);
- **the interpreter under a private home** (pyenv under ``/root``, mode 0700): the programs run
  as a dropped uid that cannot traverse it, so only the modules the zygote pre-imported would
  import.  Each such directory is covered by an empty tmpfs (0755) into which only the readable
  paths beneath it are bound back, as bubblewrap builds its root.
Everything happens in the worker's own namespace, made private first, so the host's mounts
never change.  Both need ``CAP_SYS_ADMIN``: an ordinary user's worker (or a container's root
without it) gets neither, and the isolation report says so.
"""

from __future__ import annotations

import ctypes
import os

__all__ = [
    "capped_tmpfs",
    "fresh_tmpfs",
    "pids_only_proc",
    "private_mounts",
    "read_only_binds",
    "unmount",
]

CLONE_NEWNS = 0x0002_0000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 8, 0x1000, 0x4000, 1 << 18
MNT_DETACH = 2
# Entries (files, directories, symlinks, hard links) a work-directory tmpfs may hold.  ``size=``
# caps only the data: an empty entry costs no block but ~1.5 KB of the host's kernel memory
# (inode, dentry, name), and without this cap (the default is half the RAM's pages, 3 million
# here) one program making directories for its tests' budgets grew the host's slab by 1.7 GB
# (found by an outside attack).  0 would mean no cap.
NR_INODES = 4096
SYS_MOUNT_SETATTR = 442  # x86_64 and aarch64 (Linux 5.12; the Landlock path needs 6.12)
AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = -100, 0x8000, 1


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]  # fmt: skip


def _mount(libc: ctypes.CDLL, src: str | None, dst: str, fs: str | None, flags: int,
           opts: str | None = None) -> bool:  # fmt: skip
    enc = [None if s is None else s.encode() for s in (src, dst, fs, opts)]
    return int(libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3])) == 0


def private_mounts(libc: ctypes.CDLL, base: str, read: list[str], cap_mb: int) -> list[str]:
    """Enter a private mount namespace; mount a tmpfs of ``cap_mb`` MiB on ``base`` and open
    the private homes above the ``read`` paths.  Returns ``["write-cap"]`` when the tmpfs is in
    place and its size verified, ``[]`` when nothing could be done (no privilege)."""
    if libc.unshare(CLONE_NEWNS) != 0:
        return []
    # Private before anything is mounted: on a shared "/" a new mount would propagate to the
    # host's namespace.
    if not _mount(libc, None, "/", None, MS_REC | MS_PRIVATE):
        return []
    _open_homes(libc, read)
    read_only_binds(libc, read)
    return ["write-cap"] if capped_tmpfs(libc, base, cap_mb) else []


def capped_tmpfs(libc: ctypes.CDLL, base: str, cap_mb: int) -> bool:
    """A tmpfs of ``cap_mb`` MiB and ``NR_INODES`` entries on ``base`` (mode 0700), in this
    private mount namespace: the programs' work directories then hold at most that much in all,
    and nothing they write reaches a disk.  True when it is in place and its size verified."""
    opts = f"size={cap_mb}m,nr_inodes={NR_INODES},mode=0700"
    if not _mount(libc, "tmpfs", base, "tmpfs", MS_NOSUID | MS_NODEV, opts):
        return False
    st = os.statvfs(base)
    return st.f_blocks * st.f_frsize <= cap_mb << 20


def read_only_binds(libc: ctypes.CDLL, read: list[str]) -> bool:
    """Bind each readable path onto itself, read-only with everything beneath it, in this
    (private) mount namespace: a read through a read-only mount never moves an access time.
    Without it a program reading host files (the standard library, the allowed packages) set
    their access times, which any later program, of any worker or run, reads with ``stat``:
    16 files carried 16 bits to a program of the next ``Sandbox`` (``test_attack_v3``).
    False when one could not be made read-only."""
    attr = _MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    done = True
    for p in dict.fromkeys(os.path.realpath(p) for p in read):
        if not os.path.exists(p):
            continue
        ok = _mount(libc, p, p, None, MS_BIND | MS_REC)
        rc = libc.syscall(SYS_MOUNT_SETATTR, AT_FDCWD, p.encode(), AT_RECURSIVE,
                          ctypes.byref(attr), ctypes.sizeof(attr)) if ok else -1  # fmt: skip
        done = done and rc == 0
    return done


def pids_only_proc(libc: ctypes.CDLL) -> bool:
    """Mount a new procfs of this pid namespace over ``/proc`` holding the process directories
    alone (``subset=pid``, Linux 5.8): no ``/proc/stat``, ``vmstat``, ``meminfo``, ``sys``,
    whose host-wide counters a program could move and the next read.  Under bubblewrap only
    Landlock hid them; on a kernel without Landlock every program read them.  False when the
    kernel refuses (the caller opens what it needs from the full ``/proc`` first)."""
    flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    return _mount(libc, "proc", "/proc", "proc", flags, "subset=pid")


def _closed_to_others(path: str) -> bool:
    try:
        return not os.stat(path).st_mode & 0o001
    except OSError:
        return False


def _ancestors(path: str) -> list[str]:
    """The directories above an absolute ``path``, from / down (pathlib's ``parents`` reversed;
    pathlib itself is not imported: the zygote stays small)."""
    out: list[str] = []
    d = os.path.dirname(path)
    while d != path and d not in out:
        out.append(d)
        d = os.path.dirname(d)
    return out[::-1]


def _open_homes(libc: ctypes.CDLL, read: list[str]) -> None:
    """Cover each top-most directory that others cannot traverse and that holds a readable path
    with an empty tmpfs (0755), then bind those paths back at the same place."""
    covers: dict[str, list[str]] = {}
    for p in read:
        for d in _ancestors(p):
            if d != "/" and _closed_to_others(d):
                covers.setdefault(d, []).append(p)
                break
    for top, paths in sorted(covers.items()):
        if any(top.startswith(other + "/") for other in covers):
            continue  # beneath another cover: bound back with it
        fds = []
        for p in paths:
            try:
                fds.append((p, os.open(p, os.O_PATH | os.O_CLOEXEC)))
            except OSError:
                continue
        try:
            if not _mount(libc, "tmpfs", top, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755"):
                continue
            for p, fd in fds:
                _bind_back(libc, fd, p, top)
        finally:
            for _, fd in fds:
                os.close(fd)


def _bind_back(libc: ctypes.CDLL, fd: int, path: str, top: str) -> None:
    parent = os.path.dirname(path)
    for d in [*_ancestors(parent), parent]:
        if d.startswith(top + "/") and not os.path.isdir(d):
            os.mkdir(d)
            os.chmod(d, 0o755)
    try:
        if os.path.isdir(f"/proc/self/fd/{fd}"):
            os.mkdir(path)
        else:
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))
    except FileExistsError:
        pass
    _mount(libc, f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)


def unmount(libc: ctypes.CDLL, path: str) -> None:
    """Detach the tmpfs on ``path`` (the host's directory underneath is then empty)."""
    libc.umount2(path.encode(), MNT_DETACH)


def fresh_tmpfs(libc: ctypes.CDLL, path: str, cap_mb: int, uid: int) -> None:
    """A new, empty tmpfs of ``cap_mb`` MiB and ``NR_INODES`` entries on ``path`` (mode 0700,
    owned by ``uid``), in place of the one there (detached: its memory goes with its last
    user).  Each is a file system of its own, so its inode numbers start afresh: nothing a
    program made in the last one (N files made and removed move the counter by N) shows in the
    next one's numbers.  Raises OSError
    when the kernel refuses the mount (the zygote then stops rather than reuse the last one)."""
    libc.umount2(path.encode(), MNT_DETACH)  # nothing mounted there yet: EINVAL, ignored
    opts = f"size={cap_mb}m,nr_inodes={NR_INODES},mode=0700,uid={uid},gid={uid}"
    if not _mount(libc, "tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, opts):
        raise OSError(ctypes.get_errno(), f"mount tmpfs on {path}")
