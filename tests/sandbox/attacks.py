"""The attack suite's hostile programs, by the threat model's goals (docs/sandbox.md).

(b) lower other programs' results, (c) keep state across programs or runs, (d) read host data,
(e) reach the network or host services, (f) exhaust host resources, (g) crash or stall the batch.
Goal (a), a PASS for a wrong output, is the parent's comparison (tests/sandbox/test_hostile.py
and the integrity tests).

Every program defines ``f(x)`` and returns the string ``'held'`` when each thing it tried was
refused, or ``'ESCAPED …'`` saying what got through; the test expects ``'held'`` (PASS) unless
the defence shows as a status (a fork bomb's ERROR, a forged record's CRASH).  The programs run
only inside the sandbox.  They are written so that a missing defence shows: a signal aimed at
another program kills it (its row stops passing), a SysV segment survives into the next run,
a host file's content comes back.  Targets are only this test's own processes, sockets and files
(pids are those of this test's workers' trees; nothing calls ``kill(-1, sig)`` with a real
signal), and every bomb is capped.
"""

from __future__ import annotations

import inspect
import os
import shutil
from dataclasses import dataclass, field

from rewardkit.sandbox import Status

P, F, E, T, M, C = (Status.PASS, Status.FAIL, Status.ERROR, Status.TIMEOUT, Status.MEMORY,
                    Status.CRASH)  # fmt: skip


# The bystander the signal attacks aim at, by its real path: it is started as another uid, which
# may not traverse the directories on PATH (CI's PATH of links in a private temp dir).
SLEEP = os.path.realpath(shutil.which("sleep") or "/bin/sleep")


def idle_batch_processes(pids: set[int], workers: set[int]) -> set[int]:
    """Those of ``pids`` that are a zygote's batch process waiting for its next message: a
    fork of a process in ``workers`` (the same command line), with no process below it."""
    out = set()
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as fh:
                parent = int(fh.read().rsplit(")", 1)[1].split()[1])
            with (
                open(f"/proc/{p}/cmdline", "rb") as fh,
                open(f"/proc/{parent}/cmdline", "rb") as gh,
            ):
                same = fh.read() == gh.read()
        except (OSError, ValueError, IndexError):
            continue
        if parent in workers and same and not descendants(p):
            out.add(p)
    return out


def descendants(*roots: int) -> set[int]:
    """Pids below ``roots`` (every generation), read from /proc: the tests' check that nothing
    outlived a run, and the attack programs' way to find the other programs (PRELUDE)."""
    out, todo = set(), list(roots)
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/task/{p}/children") as fh:
                kids = [int(k) for k in fh.read().split()]
        except OSError:
            continue
        out.update(kids)
        todo.extend(kids)
    return out


PRELUDE = '''
import ctypes, errno, os, signal, socket, sys, time
libc = ctypes.CDLL(None, use_errno=True)
def sc(nr, *args):
    """A raw system call: (return value, errno)."""
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return r, ctypes.get_errno()
def refused(fn):
    try:
        fn()
    except BaseException:
        return True
    return False
def _ancestors():
    out, p = set(), os.getppid()
    while p > 1 and p not in out:
        out.add(p)
        try:
            with open(f"/proc/{p}/stat") as fh:
                p = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return out
def others(tree_roots):
    """Host pids below the given worker pids (this test's own workers), read from /proc: the
    other programs and their workers' processes, not this one nor those above it (killing its
    own zygote or batch process first would end this program before it reached the others)."""
    return sorted(descendants(*tree_roots) - {os.getpid()} - _ancestors())
''' + inspect.getsource(descendants)  # the same walk as the host side (above)


@dataclass(frozen=True)
class Attack:
    goal: str
    name: str
    src: str  # body after PRELUDE; defines f(x)
    allowed: frozenset[Status] = field(default=frozenset({P}))
    phase: str = "main"  # "main", "set" (leaves state) or "check" (looks for it later)
    needs: str = ""  # levels ("a|b") the defence relies on: skipped where none is in force


def _body(code: str) -> str:
    return PRELUDE + code


def attacks(ctx: dict) -> list[Attack]:
    """``ctx``: ``roots`` (the worker pids), ``port`` (a listening TCP port on 127.0.0.1),
    ``udp`` (a bound UDP port), ``unix`` (a listening unix socket path), ``abstract`` (an
    abstract socket name), ``sandbox_file`` (a module of the sandbox), ``secret_file`` (a world-readable host file with a secret),
    ``secret`` (its content), ``repo_file`` (a file of this repository), and optionally
    ``bystander`` (the pid of a process the test started, as the workers' uid where it can, for
    a program to try to kill: the only real signal any attack sends)."""
    roots, port = ctx["roots"], ctx["port"]
    loop_others = (
        "def f(x):\n    end, hit = time.time() + 0.6, []\n    while time.time() < end:\n"
        f"        for pid in others({roots!r}):\n"
        "            ACTION\n        time.sleep(0.01)\n"
        "    return 'held' if not hit else 'ESCAPED ' + repr(hit[:3])\n"
    )

    def at_others(action: str) -> str:
        return loop_others.replace("ACTION", action)

    a = [
        # ----------------------------------------------------------- (b) others' results
        Attack(
            "b",
            "SIGKILL every process of the other worker's tree",
            at_others("if not refused(lambda: os.kill(pid, signal.SIGKILL)): hit.append(pid)"),
        ),
        Attack(
            "b",
            "SIGSTOP them (stall instead of kill)",
            at_others("if not refused(lambda: os.kill(pid, signal.SIGSTOP)): hit.append(pid)"),
        ),
        Attack(
            "b",
            "tgkill at their threads",
            at_others(
                "r, e = sc(234, pid, pid, signal.SIGKILL)\n            if r == 0: hit.append(pid)"
            ),
        ),
        Attack(
            "b",
            "pidfd_open + pidfd_send_signal",
            at_others(
                "r, e = sc(434, pid, 0)\n"
                "            if r >= 0:\n                hit.append(('pidfd', pid))\n"
                "                r2, _ = sc(424, r, signal.SIGKILL, 0, 0)\n"
                "                if r2 == 0: hit.append(pid)"
            ),
        ),
        Attack(
            "b",
            "prlimit64 their address space down to 1 MiB",
            at_others(
                "lim = (ctypes.c_ulong * 2)(1 << 20, 1 << 20)\n"
                "            r = libc.prlimit(pid, 9, ctypes.byref(lim), None)\n"
                "            if r == 0: hit.append(pid)"
            ),
        ),
        Attack(
            "b",
            "ptrace attach",
            at_others("r, e = sc(101, 16, pid, 0, 0)\n            if r == 0: hit.append(pid)"),
        ),
        Attack(
            "b",
            "process_vm_readv their memory",
            at_others(
                "buf = ctypes.create_string_buffer(8)\n"
                "            loc = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 8)\n"
                "            rem = (ctypes.c_void_p * 2)(0x400000, 8)\n"
                "            r, e = sc(310, pid, ctypes.addressof(loc), 1, ctypes.addressof(rem), 1, 0)\n"
                "            if r > 0: hit.append(pid)"
            ),
        ),
        Attack(
            "b",
            "renice them to 19",
            at_others(
                "if not refused(lambda: os.setpriority(os.PRIO_PROCESS, pid, 19)): hit.append(pid)"
            ),
        ),
        Attack(
            "b",
            "pin them to one CPU",
            at_others("if not refused(lambda: os.sched_setaffinity(pid, {0})): hit.append(pid)"),
        ),
        Attack(
            "b",
            "kill(-1, 0): can it reach any process at all",
            (
                "def f(x):\n    r, e = sc(62, -1, 0)\n"
                "    return 'held' if r != 0 else 'ESCAPED kill(-1) reaches processes'\n"
            ),
        ),
        *(
            [
                Attack(
                    "b",
                    "SIGKILL a process of the same user outside the sandbox",
                    (
                        f"def f(x):\n    pid = {int(ctx['bystander'])}\n"
                        "    if refused(lambda: os.kill(pid, signal.SIGKILL)):\n"
                        "        return 'held'\n    return 'ESCAPED killed %d' % pid\n"
                    ),
                )
            ]
            if ctx.get("bystander", 0) > 1  # this test's own process: never another pid
            else []
        ),
        Attack(
            "b",
            "SIGKILL its own worker (the zygote)",
            (
                "def f(x):\n    ok = not refused(lambda: os.kill(os.getppid(), signal.SIGKILL))\n"
                "    return 'ESCAPED killed the worker' if ok else 'held'\n"
            ),
        ),
        # --------------------------------------------------------------- (c) state kept
        Attack(
            "c",
            "file left in the work directory",
            phase="set",
            src=("def f(x):\n    open('carry.txt', 'w').write('state')\n    return 'set'\n"),
        ),
        Attack(
            "c",
            "file found in the work directory",
            phase="check",
            src=(
                "def f(x):\n    found = [n for n in os.listdir('.') if n]\n"
                "    return 'ESCAPED ' + repr(found) if found else 'held'\n"
            ),
        ),
        Attack(
            "c",
            "file left in /tmp, outside the work directory",
            phase="set",
            src=(
                "def f(x):\n    for d in ('/tmp', '/var/tmp', os.path.dirname(os.getcwd())):\n"
                "        refused(lambda: open(os.path.join(d, 'rk-carry'), 'w').write('s'))\n"
                "    return 'set'\n"
            ),
        ),
        Attack(
            "c",
            "file found in /tmp",
            phase="check",
            src=(
                "def f(x):\n    for d in ('/tmp', '/var/tmp', os.path.dirname(os.getcwd())):\n"
                "        if os.path.exists(os.path.join(d, 'rk-carry')):\n"
                "            return 'ESCAPED ' + d\n    return 'held'\n"
            ),
        ),
        Attack(
            "c",
            "file left in /dev/shm",
            phase="set",
            src=(
                "def f(x):\n    refused(lambda: open('/dev/shm/rk-carry', 'w').write('s'))\n"
                "    return 'set'\n"
            ),
        ),
        Attack(
            "c",
            "file found in /dev/shm",
            phase="check",
            src=(
                "def f(x):\n    return 'ESCAPED' if os.path.exists('/dev/shm/rk-carry') else 'held'\n"
            ),
        ),
        Attack(
            "c",
            "chmod 000 of the work directory and its parent",
            phase="set",
            src=(
                "def f(x):\n    refused(lambda: os.chmod('..', 0))  # first: '..' is found through '.'\n"
                "    refused(lambda: os.chmod('.', 0))\n    return 'set'\n"
            ),
        ),
        Attack(
            "c",
            "later programs can still write their directory",
            phase="check",
            src=(
                "def f(x):\n    try:\n        open('ok.txt', 'w').write('x')\n"
                "    except OSError as e:\n        return 'ESCAPED ' + repr(e)\n    return 'held'\n"
            ),
        ),
        Attack(
            "c",
            "mtime stamped on the work directory",
            phase="set",
            src=(
                "def f(x):\n    refused(lambda: os.utime('.', (1234567, 1234567)))\n"
                "    refused(lambda: os.utime('..', (1234567, 1234567)))\n    return 'set'\n"
            ),
        ),
        Attack(
            "c",
            "mtime read back",
            phase="check",
            src=(
                "def f(x):\n    for d in ('.', '..'):\n        try:\n"
                "            if int(os.stat(d).st_mtime) == 1234567:\n"
                "                return 'ESCAPED mtime ' + d\n        except OSError:\n"
                "            pass\n    return 'held'\n"
            ),
        ),
        Attack(
            "c",
            "xattr set on the work directory",
            phase="set",
            src=(
                "def f(x):\n    for d in ('.', '..'):\n"
                "        refused(lambda: os.chmod(d, 0o700))  # writable, where it owns them\n"
                "        refused(lambda: os.setxattr(d, 'user.rk', b'state'))\n    return 'set'\n"
            ),
        ),
        Attack(
            "c",
            "xattr read back",
            phase="check",
            src=(
                "def f(x):\n    for d in ('.', '..'):\n        try:\n"
                "            if os.getxattr(d, 'user.rk') == b'state':\n"
                "                return 'ESCAPED xattr'\n        except OSError:\n"
                "            pass\n    return 'held'\n"
            ),
        ),
        Attack(
            "c",
            "SysV shared memory segment with a key",
            phase="set",
            src=("def f(x):\n    r, e = sc(29, 0x524B0001, 4096, 0o1666)\n    return 'set'\n"),
        ),
        Attack(
            "c",
            "SysV segment found again",
            phase="check",
            src=(
                "def f(x):\n    r, e = sc(29, 0x524B0001, 0, 0o666)\n"
                "    return 'ESCAPED shm id %d' % r if r >= 0 else 'held'\n"
            ),
        ),
        Attack(
            "c",
            "SysV message queue with a key",
            phase="set",
            src=("def f(x):\n    r, e = sc(68, 0x524B0002, 0o1666)\n    return 'set'\n"),
        ),
        Attack(
            "c",
            "SysV message queue found again",
            phase="check",
            src=(
                "def f(x):\n    r, e = sc(68, 0x524B0002, 0o666)\n"
                "    return 'ESCAPED msq %d' % r if r >= 0 else 'held'\n"
            ),
        ),
        Attack(
            "c",
            "SysV semaphore with a key",
            phase="set",
            src=("def f(x):\n    r, e = sc(64, 0x524B0003, 1, 0o1666)\n    return 'set'\n"),
        ),
        Attack(
            "c",
            "SysV semaphore found again",
            phase="check",
            src=(
                "def f(x):\n    r, e = sc(64, 0x524B0003, 1, 0o666)\n"
                "    return 'ESCAPED sem %d' % r if r >= 0 else 'held'\n"
            ),
        ),
        Attack(
            "c",
            "POSIX message queue",
            phase="set",
            src=(
                "def f(x):\n    r, e = sc(240, ctypes.addressof(ctypes.create_string_buffer(b'rk-carry')),"
                " 0o100 | 2, 0o666, 0)\n    return 'set'\n"
            ),
        ),
        Attack(
            "c",
            "POSIX message queue found again",
            phase="check",
            src=(
                "def f(x):\n    name = ctypes.create_string_buffer(b'rk-carry')\n"
                "    r, e = sc(240, ctypes.addressof(name), 2, 0, 0)\n"
                "    return 'ESCAPED mq %d' % r if r >= 0 else 'held'\n"
            ),
        ),
        Attack(
            "c",
            "kernel keyring entry",
            phase="set",
            src=(
                "def f(x):\n    for ring in (-3, -4, -5):  # session, user, user-session keyrings\n"
                "        sc(248, ctypes.addressof(ctypes.create_string_buffer(b'user')),"
                " ctypes.addressof(ctypes.create_string_buffer(b'rk-carry')),"
                " ctypes.addressof(ctypes.create_string_buffer(b'state')), 5, ring)\n"
                "    return 'set'\n"
            ),
        ),
        Attack(
            "c",
            "keyring entry found again",
            phase="check",
            src=(
                "def f(x):\n    r, e = sc(249, ctypes.addressof(ctypes.create_string_buffer(b'user')),"
                " ctypes.addressof(ctypes.create_string_buffer(b'rk-carry')), 0, 0)\n"
                "    return 'ESCAPED key %d' % r if r >= 0 else 'held'\n"
            ),
        ),
        Attack(
            "c",
            "module state and builtins",
            phase="set",
            src=(
                "import builtins, json\n"
                "def f(x):\n    builtins.RK_CARRY = 1\n    json.RK_CARRY = 1\n    return 'set'\n"
            ),
        ),
        Attack(
            "c",
            "module state seen by a later program",
            phase="check",
            src=(
                "import builtins, json\n"
                "def f(x):\n    return 'ESCAPED' if hasattr(builtins, 'RK_CARRY') or "
                "hasattr(json, 'RK_CARRY') else 'held'\n"
            ),
        ),
        Attack(
            "c",
            "poison the sandbox's own modules and the standard library",
            src=(
                "import json as j, os\n"
                "def f(x):\n    hit = []\n"
                f"    mine = os.path.dirname({ctx['sandbox_file']!r})\n"
                "    cache = os.path.join(mine, '__pycache__')\n"  # the zygotes load _worker there
                "    try:\n        compiled = [os.path.join(cache, n) for n in os.listdir(cache)]\n"
                "    except OSError:\n        compiled = []\n"
                f"    for p in (j.__file__, os.__file__, {ctx['sandbox_file']!r}, *compiled):\n"
                "        if p and not refused(lambda: open(p, 'a').write('#')): hit.append(p)\n"
                "    for d in (os.path.dirname(os.__file__), mine, cache):\n"
                "        if not refused(lambda: open(os.path.join(d, 'rkpoison.py'), 'w')):\n"
                "            hit.append(d)\n"
                "    return 'ESCAPED ' + repr(hit) if hit else 'held'\n"
            ),
        ),
        # ------------------------------------------------------------ (d) host data
        Attack(
            "d",
            "read a world-readable host file with a secret",
            (
                "def f(x):\n    try:\n"
                f"        s = open({ctx['secret_file']!r}).read()\n    except OSError:\n"
                "        return 'held'\n"
                f"    return 'ESCAPED ' + s[:20] if {ctx['secret']!r} in s else 'held'\n"
            ),
        ),
        Attack(
            "d",
            "read /etc/passwd and /etc/hostname",
            (
                "def f(x):\n    got = [p for p in ('/etc/passwd', '/etc/hostname', '/etc/shadow')\n"
                "           if not refused(lambda: open(p).read())]\n"
                "    return 'ESCAPED ' + repr(got) if got else 'held'\n"
            ),
        ),
        Attack(
            "d",
            "read this repository's files",
            (
                "def f(x):\n    try:\n"
                f"        open({ctx['repo_file']!r}).read()\n        return 'ESCAPED'\n"
                "    except OSError:\n        return 'held'\n"
            ),
        ),
        Attack(
            "d",
            "list the home directories and the root",
            (
                "def f(x):\n    seen = []\n    for d in ('/root', '/home', '/work', '/srv', '/opt'):\n"
                "        try:\n            seen += os.listdir(d)\n        except OSError:\n"
                "            pass\n    return 'ESCAPED ' + repr(seen[:5]) if seen else 'held'\n"
            ),
        ),
        Attack(
            "d",
            "a symlink in the work directory to a host file",
            (
                "def f(x):\n    try:\n        os.symlink('/etc/passwd', 'p')\n"
                "        return 'ESCAPED ' + open('p').read()[:10]\n    except OSError:\n"
                "        return 'held'\n"
            ),
        ),
        Attack(
            "d",
            "another worker's environment and memory through /proc",
            at_others(
                "if not refused(lambda: open(f'/proc/{pid}/environ','rb').read()): hit.append(pid)\n"
                "            if not refused(lambda: open(f'/proc/{pid}/mem','rb').read(1)): hit.append(pid)"
            ),
        ),
        Attack(
            "d",
            "site-packages not allowed (the test environment's)",
            (
                "def f(x):\n    got = []\n    for m in ('numpy', 'scipy', 'pytest', 'rewardkit'):\n"
                "        try:\n            __import__(m)\n            got.append(m)\n"
                "        except BaseException:\n            pass\n"
                "    return 'ESCAPED ' + repr(got) if got else 'held'\n"
            ),
        ),
        Attack(
            "d",
            "open_by_handle_at around path checks",
            (
                "def f(x):\n    r, e = sc(304, -100, 0, 0)\n"
                "    return 'held' if e in (errno.EPERM,) else 'ESCAPED errno %d' % e\n"
            ),
        ),
        # -------------------------------------------------------- (e) network, services
        Attack(
            "e",
            "TCP connect to a host listener",
            (
                "def f(x):\n    try:\n        s = socket.create_connection(('127.0.0.1', "
                f"{port}), timeout=1)\n        s.sendall(b'x')\n        return 'ESCAPED tcp'\n"
                "    except OSError:\n        return 'held'\n"
            ),
        ),
        Attack(
            "e",
            "UDP datagram to a host port",
            (
                "def f(x):\n    try:\n        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                f"        s.sendto(b'rk', ('127.0.0.1', {ctx['udp']}))\n        return 'ESCAPED udp'\n"
                "    except OSError:\n        return 'held'\n"
            ),
        ),
        Attack(
            "e",
            "connect to a host unix socket by path",
            (
                "def f(x):\n    try:\n        s = socket.socket(socket.AF_UNIX)\n"
                f"        s.connect({ctx['unix']!r})\n        return 'ESCAPED unix'\n"
                "    except OSError:\n        return 'held'\n"
            ),
        ),
        Attack(
            "e",
            "connect to a host abstract unix socket",
            (
                "def f(x):\n    try:\n        s = socket.socket(socket.AF_UNIX)\n"
                f"        s.connect({ctx['abstract']!r})\n        return 'ESCAPED abstract'\n"
                "    except OSError:\n        return 'held'\n"
            ),
        ),
        Attack(
            "e",
            "io_uring: a ring to open sockets without socket()",
            (
                "def f(x):\n    params = ctypes.create_string_buffer(120)\n"
                "    r, e = sc(425, 8, ctypes.addressof(params))\n"
                "    return 'ESCAPED io_uring fd %d' % r if r >= 0 else 'held'\n"
            ),
        ),
        Attack(
            "e",
            "netlink and packet sockets",
            (
                "def f(x):\n    got = []\n    for fam, typ in ((16, 3), (17, 3), (socket.AF_INET6, 1)):\n"
                "        try:\n            socket.socket(fam, typ)\n            got.append(fam)\n"
                "        except OSError:\n            pass\n"
                "    return 'ESCAPED ' + repr(got) if got else 'held'\n"
            ),
        ),
        Attack(
            "e",
            "socketpair and exec of a shell",
            (
                "def f(x):\n    got = []\n"
                "    if not refused(socket.socketpair): got.append('socketpair')\n"
                "    if not refused(lambda: os.execv('/bin/sh', ['sh', '-c', 'true'])): got.append('exec')\n"
                "    return 'ESCAPED ' + repr(got) if got else 'held'\n"
            ),
        ),
        # ----------------------------------------------------------- (f) host resources
        Attack(
            "f",
            "SysV shared memory growing host memory (1 GiB)",
            (
                "def f(x):\n    r, e = sc(29, 0, 1 << 30, 0o1600)\n"
                "    return 'ESCAPED shm %d' % r if r >= 0 else 'held'\n"
            ),
        ),
        Attack(
            "f",
            "memfd growing outside the address-space cap",
            (
                "def f(x):\n    try:\n        fd = os.memfd_create('rk')\n"
                "        os.ftruncate(fd, 1 << 30)\n        return 'ESCAPED memfd'\n"
                "    except OSError:\n        return 'held'\n"
            ),
        ),
        Attack(
            "f",
            "fill the disk through the work directory",
            allowed=frozenset({P, C}),  # C: stopped by the entry count (Landlock alone)
            needs="write-cap|file-cap",
            src=(
                "def f(x):\n    total, chunk = 0, b'x' * (1 << 20)\n"
                "    for i in range(400):\n        try:\n"
                "            with open(f'fill{i}', 'wb') as fh:\n                fh.write(chunk)\n"
                "            total += len(chunk)\n        except OSError:\n            break\n"
                "    return 'held' if total <= 64 << 20 else 'ESCAPED %d MiB' % (total >> 20)\n"
            ),
        ),
        Attack(
            "f",
            "kernel surfaces: bpf, perf_event_open, userfaultfd",
            (
                "def f(x):\n    got = []\n    for nr, args in ((321, (0, 0, 0)), (298, (0, 0, -1, -1, 0)),"
                " (323, (0,))):\n        r, e = sc(nr, *args)\n"
                "        if r >= 0 or e != errno.EPERM: got.append((nr, r, e))\n"
                "    return 'ESCAPED ' + repr(got) if got else 'held'\n"
            ),
        ),
        Attack(
            "f",
            "new namespaces and mounts (unshare, setns, mount)",
            (
                "def f(x):\n    got = []\n"
                "    for nr, args in ((272, (0x10000000,)), (272, (0x40000000,)), (308, (0, 0)),"
                " (165, (0, 0, 0, 0, 0))):\n        r, e = sc(nr, *args)\n"
                "        if r == 0: got.append(nr)\n"
                "    return 'ESCAPED ' + repr(got) if got else 'held'\n"
            ),
        ),
        Attack(
            "f",
            "fork bomb (capped at 300)",
            allowed=frozenset({E}),
            src=(
                "def f(x):\n    n = 0\n    for _ in range(300):\n        pid = os.fork()\n"
                "        if pid == 0:\n            time.sleep(30)\n            os._exit(0)\n"
                "        n += 1\n    return 'ESCAPED %d forks' % n\n"
            ),
        ),
        Attack(
            "f",
            "thread bomb (capped at 3000)",
            allowed=frozenset({P, E, M}),
            src=(
                "import threading\n"
                "def f(x):\n    n = 0\n    try:\n        for _ in range(3000):\n"
                "            threading.Thread(target=time.sleep, args=(5,), daemon=True).start()\n"
                "            n += 1\n    except BaseException:\n        pass\n"
                "    return 'held' if n < 3000 else 'ESCAPED %d threads' % n\n"
            ),
        ),
        # ---------------------------------------------------------- (g) crash or stall
        Attack(
            "g",
            "1,500 nested directories at cleanup",
            phase="set",
            src=(
                "def f(x):\n    for i in range(1500):\n        os.mkdir('d')\n        os.chdir('d')\n"
                "    return 'set'\n"
            ),
        ),
        Attack(
            "g",
            "directories the worker cannot read, and a symlink loop",
            phase="set",
            src=(
                "def f(x):\n    os.makedirs('a/b/c')\n    os.symlink('loop', 'loop')\n"
                "    os.symlink('/', 'root')\n    refused(lambda: os.chmod('a/b', 0))\n"
                "    refused(lambda: os.chmod('a', 0))\n    return 'set'\n"
            ),
        ),
        Attack(
            "g",
            "20,000 files at cleanup",
            phase="set",
            src=(
                "def f(x):\n    for i in range(20000):\n        os.close(os.open(f'f{i}', os.O_CREAT | os.O_WRONLY))\n"
                "    return 'set'\n"
            ),
        ),
        # Under the 1 MiB line cap, so only the payload cap (64 KiB for a value) can stop it.
        Attack(
            "g",
            "a forged 1 MB value record",
            allowed=frozenset({C}),
            src=(
                "def f(x):\n    os.write(3, b'[0, \"V\", 0.0, 0.0, \"' + b'9' * 1_000_000 + b'\"]\\n')\n"
                "    time.sleep(5)\n    return 'done'\n"
            ),
        ),
        Attack(
            "g",
            "a record line that never ends",
            allowed=frozenset({C, T}),
            src=("def f(x):\n    while True:\n        os.write(3, b'9' * 65536)\n"),
        ),
        Attack(
            "g",
            "stop itself (SIGSTOP)",
            allowed=frozenset({T}),
            src=("def f(x):\n    os.kill(os.getpid(), signal.SIGSTOP)\n    return 'woke'\n"),
        ),
        Attack(
            "g",
            "close the record pipe and keep running",
            allowed=frozenset({C, T}),
            src=("def f(x):\n    os.close(3)\n    time.sleep(30)\n    return 'done'\n"),
        ),
    ]
    anything = frozenset(Status)  # a "set" program's own result does not matter
    return [
        Attack(
            x.goal,
            x.name,
            _body(x.src),
            anything if x.phase == "set" else x.allowed,
            x.phase,
            x.needs,
        )
        for x in a
    ]


VICTIM = (
    "import time\n"
    "def f(x):\n    time.sleep(0.08)\n    return 'held'\n"
)  # an honest program that runs while the attackers try to reach it
