"""The seccomp allow-list every program runs under, compiled once per ``Sandbox``.

Anything not listed here answers EPERM: io_uring, SysV and POSIX IPC, keyrings, ptrace,
``process_vm_*``, ``pidfd_*``, ``tkill``, mount, bpf, ``perf_event_open``, userfaultfd,
``unshare``/``setns``, sockets, exec, new processes, chmod/chown, timestamps and extended
attributes, ``memfd_create``.  Calls that name a process (``kill``, ``tgkill``, ``prlimit64``,
``sched_getaffinity``) are allowed only on the program itself.  Its pid is known only after the
fork, so the filter is compiled with a placeholder pid that the child patches into the raw BPF
(:func:`patch_pid`, a few microseconds) before loading it.  ``clone`` is allowed for threads only
(``CLONE_THREAD`` set, no namespace flag); ``clone3`` answers ENOSYS so that glibc falls back to
``clone`` for threads.
"""

from __future__ import annotations

import contextlib
import errno
import os
import struct

__all__ = [
    "ALLOWED",
    "CONDITIONAL",
    "NO_OPS",
    "PID_PLACEHOLDER",
    "build_allowlist_bpf",
    "patch_pid",
    "pid_offsets",
]

# x86_64 and aarch64 names; a name the running architecture lacks is skipped.
ALLOWED = (
    # files, confined by bubblewrap / Landlock to the readable paths and the work directory
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "lseek",
    "close", "creat", "stat", "fstat", "lstat",
    "newfstatat", "statx", "fstatfs", "statfs", "access", "faccessat", "faccessat2", "readlink",
    "readlinkat", "getcwd", "chdir", "fchdir", "getdents", "getdents64", "mkdir", "mkdirat",
    "rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2", "link", "linkat", "symlink",
    "symlinkat", "truncate", "ftruncate", "flock",
    "dup", "dup2", "dup3", "pipe", "pipe2", "sendfile", "copy_file_range", "umask",
    # its own fds only; glibc's closefrom (os.closerange in Python 3.13) aborts the process
    # when close_range fails and /proc/self/fd cannot be listed
    "close_range",
    # memory
    "mmap", "munmap", "mprotect", "mremap", "brk", "mincore",
    # signals and time (signals to others: see the argument rules below)
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigtimedwait",
    "rt_sigsuspend", "sigaltstack", "pause", "alarm", "setitimer", "getitimer", "nanosleep",
    "clock_nanosleep", "clock_gettime", "clock_getres", "gettimeofday", "time", "times",
    "restart_syscall",
    # threads and the process itself
    "futex", "set_robust_list", "set_tid_address", "rseq", "sched_yield", "arch_prctl",
    "exit", "exit_group", "wait4", "waitid", "getpid", "gettid", "getppid", "getuid", "geteuid",
    "getgid", "getegid", "getgroups", "getresuid", "getresgid", "getpgrp", "getrlimit",
    "setrlimit", "getrusage", "sysinfo", "uname", "getrandom", "getcpu",
    # waiting on the program's own fds
    "select", "pselect6", "poll", "ppoll", "epoll_create", "epoll_create1", "epoll_ctl",
    "epoll_wait", "epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2",
)  # fmt: skip
PID_PLACEHOLDER = 0x3FF_FF0F  # above any pid_max (2**22): it can never be a real pid
SELF_ONLY = ("kill", "tgkill", "prlimit64", "sched_getaffinity", "getpgid", "getsid")
IOCTLS = (0x5401, 0x541B, 0x5421, 0x5450, 0x5451)  # TCGETS, FIONREAD, FIONBIO, FIONCLEX, FIOCLEX
CLONE_THREAD = 0x0001_0000
STATX_MNT_ID_UNIQUE = 0x4000  # Linux 6.8: a mount id never reused, counting the host's mounts
CLONE_NEW_ANY = 0x7E02_0080  # NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET|NEWTIME
# Work a program could have the host's disk do, whose interrupts the kernel takes on whatever
# core the device's interrupt goes to — another worker's, which its pin cannot protect
# (``cpu-pin``; test_attack_cpu.py).  A program writes only to its tmpfs work directory, so
# none of these has a use there: they answer 0 and do nothing (flushing a read-only host file
# sent the disk a flush request each; fadvise could drop cached pages to be read again).
NO_OPS = ("fsync", "fdatasync", "msync", "fadvise64")
# Opening with O_DIRECT (each read a request to the device) or O_SYNC / O_DSYNC answers EINVAL,
# as on a file system without them, and so does setting O_DIRECT later (fcntl F_SETFL);
# openat2 hides its flags from the filter and answers ENOSYS (Python and glibc never need it).
O_DIRECT = getattr(os, "O_DIRECT", 0x4000)
O_DIRECT_OR_SYNC = O_DIRECT | getattr(os, "O_DSYNC", 0x1000)  # O_SYNC holds the O_DSYNC bit
F_SETFL = 4
MADV_PAGEOUT = 21  # reclaims a file's cached pages, to be read from the disk again
# preadv2 / pwritev2 with a flag that makes the device work answer EOPNOTSUPP, as on a kernel
# without it (RWF_DSYNC found by an outside attack, the rest while checking it): RWF_DONTCACHE
# (6.14) drops what a read brought in, so reading a file not yet cached went to the disk on
# every call (3,300-4,800 reads a second from one thread here); RWF_DSYNC / RWF_SYNC make each
# write a synchronous one, RWF_HIPRI polls the device, RWF_ATOMIC writes through.  Other
# unknown flags answer EPERM.
RWF_HIPRI, RWF_DSYNC, RWF_SYNC, RWF_ATOMIC, RWF_DONTCACHE = 0x01, 0x02, 0x04, 0x40, 0x80
RWF_REFUSED = RWF_HIPRI | RWF_DSYNC | RWF_SYNC | RWF_ATOMIC | RWF_DONTCACHE
RWF_KEPT = 0x08 | 0x10 | 0x20  # RWF_NOWAIT, RWF_APPEND, RWF_NOAPPEND
RWF_ARG = 5  # (fd, iov, iovcnt, pos_l, pos_h, flags) on x86_64 and aarch64
# allowed but for the arguments above
CONDITIONAL = ("open", "openat", "fcntl", "madvise", "preadv2", "pwritev2")


def build_allowlist_bpf() -> str:
    """The filter as raw BPF (hex), with :data:`PID_PLACEHOLDER` where the program's pid goes.

    Built with pyseccomp (``pip install 'rewardkit[sandbox]'``); raises ImportError or OSError
    when it or libseccomp is missing."""
    import tempfile

    import pyseccomp as sc

    f = sc.SyscallFilter(defaction=sc.ERRNO(errno.EPERM))
    # A binary tree of system call numbers rather than a chain: the same decisions, but the
    # kernel's per-filter action cache is built ~2x faster when each child loads it (≈ 80 µs
    # against ≈ 150 µs here), and each call is decided in ~log2(n) comparisons.
    _try(f.set_attr, sc.Attr.CTL_OPTIMIZE, 2)
    for name in ALLOWED:
        if name != "statx":
            _try(f.add_rule, sc.ALLOW, name)
    # statx, but not for the unique mount id: it counts the mounts made on the host, and the
    # worker mounts a new tmpfs for each work directory a program changed (``fresh-tmpfs``),
    # so a program read how many programs before it changed theirs.
    _try(f.add_rule, sc.ALLOW, "statx", sc.Arg(3, sc.MASKED_EQ, STATX_MNT_ID_UNIQUE, 0))
    for name in SELF_ONLY:  # on itself: pid 0 or its own pid
        for pid in (0, PID_PLACEHOLDER):
            _try(f.add_rule, sc.ALLOW, name, sc.Arg(0, sc.EQ, pid))
    for request in IOCTLS:
        _try(f.add_rule, sc.ALLOW, "ioctl", sc.Arg(1, sc.EQ, request))
    for name in NO_OPS:
        _try(f.add_rule, sc.ERRNO(0), name)
    for name, flags_arg in (("open", 1), ("openat", 2)):
        _try(f.add_rule, sc.ALLOW, name, sc.Arg(flags_arg, sc.MASKED_EQ, O_DIRECT_OR_SYNC, 0))
        for bit in _bits(O_DIRECT_OR_SYNC):
            bad = sc.Arg(flags_arg, sc.MASKED_EQ, bit, bit)
            _try(f.add_rule, sc.ERRNO(errno.EINVAL), name, bad)
    _try(f.add_rule, sc.ERRNO(errno.ENOSYS), "openat2")
    setfl = sc.Arg(1, sc.EQ, F_SETFL)
    f.add_rule(sc.ALLOW, "fcntl", sc.Arg(1, sc.NE, F_SETFL))
    f.add_rule(sc.ALLOW, "fcntl", setfl, sc.Arg(2, sc.MASKED_EQ, O_DIRECT, 0))
    f.add_rule(sc.ERRNO(errno.EINVAL), "fcntl", setfl, sc.Arg(2, sc.MASKED_EQ, O_DIRECT, O_DIRECT))
    f.add_rule(sc.ALLOW, "madvise", sc.Arg(2, sc.NE, MADV_PAGEOUT))
    for name in ("preadv2", "pwritev2"):  # the flags are an int: the low 32 bits count
        _try(f.add_rule, sc.ALLOW, name, sc.Arg(RWF_ARG, sc.MASKED_EQ, 0xFFFF_FFFF & ~RWF_KEPT, 0))
        for bit in _bits(RWF_REFUSED):
            bad = sc.Arg(RWF_ARG, sc.MASKED_EQ, bit, bit)
            _try(f.add_rule, sc.ERRNO(errno.EOPNOTSUPP), name, bad)
    thread_only = CLONE_THREAD | CLONE_NEW_ANY
    f.add_rule(sc.ALLOW, "clone", sc.Arg(0, sc.MASKED_EQ, thread_only, CLONE_THREAD))
    f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    with tempfile.TemporaryFile() as fh:
        f.export_bpf(fh)
        fh.seek(0)
        bpf = fh.read()
    if struct.pack("<I", PID_PLACEHOLDER) not in bpf:
        raise OSError("the seccomp filter lost its pid placeholder")
    return bpf.hex()


def _bits(mask: int) -> list[int]:
    return [1 << k for k in range(mask.bit_length()) if mask >> k & 1]


def _try(add: object, *args: object) -> None:
    with contextlib.suppress(RuntimeError, ValueError, OSError):  # not on this architecture
        add(*args)  # type: ignore[operator]


def pid_offsets(bpf: bytes) -> list[int]:
    """Byte offsets of the constants that hold the placeholder (struct sock_filter {u16 code;
    u8 jt, jf; u32 k}: k at +4 of every 8-byte instruction)."""
    return [
        off + 4
        for off in range(0, len(bpf), 8)
        if struct.unpack_from("<I", bpf, off + 4)[0] == PID_PLACEHOLDER
    ]


def patch_pid(bpf: bytes, pid: int, offsets: list[int] | None = None) -> bytes:
    """The filter with the placeholder replaced by ``pid`` in every instruction's constant."""
    out = bytearray(bpf)
    for off in pid_offsets(bpf) if offsets is None else offsets:
        struct.pack_into("<I", out, off, pid)
    return bytes(out)
