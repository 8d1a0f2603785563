"""The zygote worker: a small stdlib-only process that forks one child per program.

    python -I -S _worker.py      # started once per core by rewardkit.sandbox, never by hand

Why a separate script: fork cost grows with the parent's memory (≈ 18 ms per GiB), so programs
are forked from this small warm process, never from the trainer. It imports only the standard
library (``-I -S``: no site-packages, no environment variables) and pre-imports the modules
generated programs use, so every child inherits them for free.

Protocol (one JSON document per line):
- stdin, from the sandbox: ``{"op": "init", ...}`` once, then ``{"op": "tests", "inputs": [...],
  "nproc": n}`` (canonical argument tuples, ``null`` for invalid tests; the children's process
  cap, refreshed per batch) and ``{"op": "job", "row": r,
  "program": src, "idxs": [...], "entry": name}``.
- stdout, to the sandbox: ``["cell", row, idx, kind, duration_s, payload]`` per test as soon as it
  is final (a TIMEOUT cell may be sent again after its retry), ``["done", row, n_forks,
  peak_rss_kb]`` per job.
- child → zygote pipe: ``["R", cpu_s]`` once the program's module ran, then ``[idx, kind, dur, cpu,
  payload]`` per test in order, or ``["X", kind, payload]`` when the whole row fails (syntax
  error, exception at import).  Anything else is a protocol violation: the child is killed and
  the cell becomes CRASH.

The child never receives expected values: it only computes and serialises actual outputs; the
sandbox process compares them.  Kinds: V value (payload = canonical text), H value too large to
send (payload = its sha256), E exception (type name), U unserialisable return value (type name),
T timeout, M MemoryError, C crash (detail), S syntax error.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import select
import shutil
import signal
import sys
import tempfile
import time
from contextlib import suppress

try:
    from ._child import (
        PR_SET_PDEATHSIG,
        decode,
        is_cell_record,
        is_ready_record,
        is_row_record,
        run_program,
        setup_child,
        write_all,
    )
    from ._values import parse_literal
except ImportError:  # run as a plain script by the pool: load the siblings by path
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _child import (  # type: ignore[no-redef]
        PR_SET_PDEATHSIG,
        decode,
        is_cell_record,
        is_ready_record,
        is_row_record,
        run_program,
        setup_child,
        write_all,
    )
    from _values import parse_literal  # type: ignore[no-redef]

    del sys.path[0]  # programs must not import the sandbox's own modules

# Pre-imported for the programs: each child inherits them without paying the import, and after
# the uid drop a child may not be able to read the interpreter's files at all (e.g. a Python
# under /root), so what is not imported here may not be importable there.
PRELOAD = (
    "abc",
    "array",
    "bisect",
    "calendar",
    "cmath",
    "collections",
    "contextlib",
    "copy",
    "dataclasses",
    "datetime",
    "decimal",
    "encodings.idna",
    "enum",
    "fractions",
    "functools",
    "heapq",
    "io",
    "itertools",
    "math",
    "numbers",
    "operator",
    "queue",
    "re",
    "socket",
    "statistics",
    "string",
    "struct",
    "textwrap",
    "threading",
    "time",
    "typing",
    "unicodedata",
)
for _module in PRELOAD:
    with suppress(ImportError):
        __import__(_module)

LINE_CAP = 1 << 20  # a child record longer than this is a protocol violation
PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNS, CLONE_NEWNET, CLONE_NEWIPC = 0x00020000, 0x40000000, 0x08000000
MS_REC, MS_PRIVATE = 0x4000, 1 << 18
SYS_MOUNT_SETATTR, AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = 442, -100, 0x8000, 0x1


# ------------------------------------------------------------------------------ the zygote
class Zygote:
    def __init__(self, cfg: dict) -> None:
        self.cfg = cfg
        self.budget = float(cfg["timeout_s"])
        self.margin = 0.25 + 0.25 * self.budget  # watchdog grace beyond the in-child alarm
        self.inputs: list = []
        self.pid = os.getpid()
        self.out: list[bytes] = []
        try:
            self.libc: ctypes.CDLL | None = ctypes.CDLL(None, use_errno=True)
        except OSError:
            self.libc = None

    # ------------------------------------------------------------------ setup and levels
    def start(self) -> list[str]:
        levels = ["rlimits"]
        if self.libc is not None:
            self.libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # orphans come back to us
            if self.cfg["unshare"] and self._unshare():
                levels.append("unshare")
        self.cfg["workdir"] = tempfile.mkdtemp(prefix="rk-sandbox-")
        if self.cfg["uid"] is not None:
            os.chown(self.cfg["workdir"], self.cfg["uid"], self.cfg["uid"])
        os.chmod(self.cfg["workdir"], 0o700)
        uid, blocked = self._probe()
        if self.cfg["uid"] is not None and uid == self.cfg["uid"]:
            levels.append("uid-drop")
        if not (self.cfg["uid"] is not None and uid == self.cfg["uid"]):
            self.cfg["uid"] = None  # the drop failed: report it, do not pretend
        if self.cfg["bpf"] and blocked:
            levels.append("seccomp")
        elif self.cfg["bpf"]:
            self.cfg["bpf"] = ""
        return levels

    def _unshare(self) -> bool:
        """Without bwrap, as root: private network, IPC and mount namespaces; in the mount
        namespace every mount turns read-only and /tmp, /dev/shm become fresh root-owned tmpfs
        (mode 0755: only the per-program work directory is writable)."""
        assert self.libc is not None
        host_ns = os.readlink("/proc/self/ns/mnt")
        if self.libc.unshare(CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC) != 0:
            return False
        if os.readlink("/proc/self/ns/mnt") == host_ns:
            return False  # not in a private mount namespace: never touch a mount
        if self.libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
            return False  # without private propagation nothing below may reach the host
        attr = (ctypes.c_uint64 * 4)(MOUNT_ATTR_RDONLY, 0, 0, 0)
        if self.libc.syscall(SYS_MOUNT_SETATTR, AT_FDCWD, b"/", AT_RECURSIVE, attr, 32) != 0:
            return False
        ok = True
        for path in (b"/tmp", b"/dev/shm"):
            if os.path.isdir(path):
                opts = b"size=256m,mode=0755"
                ok = ok and self.libc.mount(b"tmpfs", path, b"tmpfs", 0, opts) == 0
        return ok

    def _probe(self) -> tuple[int, bool]:
        """Fork a child with the full setup: which uid did it get, does seccomp block fork?"""
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(r)
                fd = setup_child(self.cfg, w, 1, self.libc)
                try:
                    child = os.fork()
                    if child == 0:
                        os._exit(0)
                    os.waitpid(child, 0)
                    blocked = False
                except PermissionError:
                    blocked = True
                write_all(fd, json.dumps([os.getuid(), blocked]).encode())
            finally:
                os._exit(0)
        os.close(w)
        data = b""
        while chunk := os.read(r, 4096):
            data += chunk
        os.close(r)
        os.waitpid(pid, 0)
        self._sweep()
        try:
            uid, blocked = json.loads(data)
        except ValueError:
            return -1, False
        return uid, blocked

    # ---------------------------------------------------------------------------- jobs
    def emit(self, rec: list) -> None:
        self.out.append((json.dumps(rec) + "\n").encode())

    def flush(self) -> None:
        if self.out:
            write_all(1, b"".join(self.out))
            self.out.clear()

    def job(self, row: int, src: str, idxs: list, entry: str) -> None:
        pending, forks = list(idxs), 0
        timed_out: list[tuple[int, float]] = []
        while pending:
            pending = self._fork(row, src, pending, entry, timed_out, stop_on_timeout=False)
            forks += 1
        # Timeouts depend on machine load: retry once, unless the test had a full core for
        # ≥ 90 % of its budget (then load cannot explain it).  The retry stops at the first
        # repeated timeout; the cells after it keep their TIMEOUT.
        retry = [i for i, cpu in timed_out if cpu < 0.9 * self.budget]
        if retry:
            self._fork(row, src, retry, entry, [], stop_on_timeout=True)
            forks += 1
        self.emit(["done", row, forks, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss])
        self.flush()

    def _fork(
        self, row: int, src: str, pending: list, entry: str, timed_out: list, stop_on_timeout: bool
    ) -> list:
        """Run ``pending`` in one child; return the tests still to run in a fresh child."""
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(r)
                fd = setup_child(self.cfg, w, len(pending), self.libc)
                run_program(src, pending, entry, self.inputs, self.budget, fd)
            finally:
                os._exit(0)
        os.close(w)
        t_start = time.monotonic()
        deadline = t_start + self.budget + self.margin
        buf, pos, ready, rest = b"", 0, False, []
        kill_reason, cpu_seen, window_cpu = "", 0.0, 0.0
        # A pidfd turns readable when the child exits, even if a grandchild still holds the pipe.
        pfd = _pidfd(pid)
        watch = [r] if pfd < 0 else [r, pfd]
        exited = False
        while True:
            now = time.monotonic()
            if now >= deadline:
                kill_reason = "watchdog"
                break
            readable = select.select(watch, [], [], deadline - now)[0]
            if not readable:
                continue
            if pfd in readable:
                exited = True
                os.set_blocking(r, False)
                data = _drain(r)
            else:
                data = os.read(r, 1 << 16)
            if not data and not exited:
                break  # the child closed its pipe: it exited or is about to
            buf += data
            *lines, buf = buf.split(b"\n")
            if len(buf) > LINE_CAP:
                kill_reason = "violation"
            for line in lines:
                rec = decode(line)
                now = time.monotonic()
                if not ready and is_ready_record(rec):
                    ready, deadline = True, now + self.budget + self.margin
                    cpu_seen = rec[1]
                elif not ready and is_row_record(rec):
                    for i in pending[pos:]:
                        self.emit(["cell", row, i, rec[1], 0.0, rec[2]])
                        if rec[1] == "T":
                            timed_out.append((i, 0.0))
                    pos = len(pending)
                elif ready and pos < len(pending) and is_cell_record(rec, pending[pos]):
                    i, kind, dur, cpu, payload = rec
                    self.emit(["cell", row, i, kind, dur, payload])
                    if kind == "T":
                        timed_out.append((i, cpu))
                    cpu_seen += cpu
                    pos += 1
                    deadline = now + self.budget + self.margin
                    if kind == "T" and stop_on_timeout:
                        pos = len(pending)
                else:
                    kill_reason = "violation"
                    break
            if kill_reason or exited or pos >= len(pending):
                break
            self.flush()
        os.close(r)
        if pfd >= 0:
            os.close(pfd)
        if kill_reason == "watchdog":
            window_cpu = _cpu_time(pid) - cpu_seen  # CPU the child got since its last record
        status = self._reap(pid)
        if pos < len(pending):
            i, elapsed = pending[pos], time.monotonic() - t_start
            if kill_reason == "watchdog" or _signal_of(status) == signal.SIGXCPU:
                cells = pending[pos:] if not ready or stop_on_timeout else [i]
                for j in cells:
                    self.emit(["cell", row, j, "T", elapsed, ""])
                    timed_out.append((j, window_cpu))
                pos += len(cells) - 1
            elif kill_reason == "violation":
                self.emit(["cell", row, i, "C", elapsed, "protocol violation"])
            else:
                self.emit(["cell", row, i, "C", elapsed, _describe(status, ready)])
            rest = pending[pos + 1 :]
        self.flush()
        return rest

    def _reap(self, pid: int) -> int:
        """Kill the child's process group, reap it, then every orphan it left (we are their
        subreaper), and empty the work directory."""
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        self._sweep()
        wd = self.cfg["workdir"]
        with os.scandir(wd) as it:
            leftovers = [e.path for e in it]
        for p in leftovers:
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p, ignore_errors=True)
            else:
                with suppress(OSError):
                    os.unlink(p)
        return status

    def _sweep(self) -> None:
        for _ in range(10_000):
            kids = _children(self.pid)
            if not kids:
                break
            for k in kids:
                for kill in (os.killpg, os.kill):
                    with suppress(ProcessLookupError, PermissionError):
                        kill(k, signal.SIGKILL)
                with suppress(ChildProcessError):
                    os.waitpid(k, 0)
        while True:  # zombies that exited by themselves
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except FileNotFoundError:  # kernels without CONFIG_PROC_CHILDREN: scan /proc
        out = []
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open(f"/proc/{name}/stat") as fh:
                        if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                            out.append(int(name))
                except (OSError, IndexError, ValueError):
                    pass
        return out


def _pidfd(pid: int) -> int:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return -1


def _drain(fd: int) -> bytes:
    """Everything readable now from a non-blocking fd."""
    out, total = [], 0
    while total <= 2 * LINE_CAP:  # a grandchild may keep writing: stop somewhere
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            break
        if not chunk:
            break
        out.append(chunk)
        total += len(chunk)
    return b"".join(out)


def _cpu_time(pid: int) -> float:
    """User + system CPU seconds of a live process (0.0 when it cannot be read)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _signal_of(status: int) -> int:
    return os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0


def _describe(status: int, ready: bool) -> str:
    where = "" if ready else " before the program was ready"
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}{where}"
    return f"exited with status {os.WEXITSTATUS(status)}{where}"


def main() -> None:
    stdin = sys.stdin.buffer
    cfg = json.loads(stdin.readline())
    z = Zygote(cfg)
    if z.libc is not None and not cfg.get("bwrap"):
        z.libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    levels = z.start()
    rss = 0
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    z.emit(["ready", levels, os.getpid(), rss])
    z.flush()
    try:
        for raw in stdin:
            msg = json.loads(raw)
            if msg["op"] == "tests":
                z.inputs = [None if t is None else parse_literal(t) for t in msg["inputs"]]
                z.cfg["nproc"] = msg.get("nproc", z.cfg["nproc"])  # refreshed per batch
            elif msg["op"] == "job":
                z.job(msg["row"], msg["program"], msg["idxs"], msg["entry"])
            elif msg["op"] == "quit":
                break
    finally:
        z._sweep()
        shutil.rmtree(cfg.get("workdir", ""), ignore_errors=True)


if __name__ == "__main__":
    main()
