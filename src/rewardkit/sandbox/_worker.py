"""The zygote worker: a small stdlib-only process that forks one child per program.

    python -I -S _worker.py      # started once per core by rewardkit.sandbox, never by hand

Why a separate script: fork cost grows with the parent's memory (≈ 18 ms per GiB), so programs
are forked from this small warm process, never from the trainer. It imports only the standard
library (``-I -S``: no site-packages, no environment variables) and pre-imports the modules
generated programs use, so every child inherits them for free.

Protocol (one JSON document per line):
- stdin, from the sandbox: ``{"op": "init", ...}`` once, then ``{"op": "tests", "inputs": [...]}``
  (canonical argument tuples, ``null`` for invalid tests) and ``{"op": "job", "row": r,
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

import ast
import builtins
import ctypes
import hashlib
import json
import math
import os
import random
import resource
import select
import shutil
import signal
import sys
import tempfile
import time
from contextlib import suppress
from typing import Any

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

TEXT_CAP = 1 << 16  # bytes of canonical output sent as text; larger outputs travel as sha256
MAX_DEPTH = 100  # nesting of a serialised value (the parser accepts 200)
LINE_CAP = 1 << 20  # a child record longer than this is a protocol violation
NOBODY = 65534
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP = 1, 36, 38, 22
SECCOMP_MODE_FILTER = 2
CLONE_NEWNS, CLONE_NEWNET, CLONE_NEWIPC = 0x00020000, 0x40000000, 0x08000000
MS_REC, MS_PRIVATE = 0x4000, 1 << 18
SYS_MOUNT_SETATTR, AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = 442, -100, 0x8000, 0x1


# ----------------------------------------------------------------- values (shared with the parent)
class Unserialisable(Exception):
    """The return value holds a type that is not a plain literal (or nests too deep)."""


_SCALARS = (type(None), bool, int, str, bytes, complex)


def canon(x: Any, depth: int = 0) -> str:
    """Canonical literal text of a plain value: exact types only (a subclass or an object with
    its own ``__eq__`` / ``__repr__`` is Unserialisable), sets and dict items sorted."""
    t = type(x)
    if depth > MAX_DEPTH:
        raise Unserialisable("nesting deeper than 100")
    if t is float:
        f: float = x
        if f != f:
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return float.__repr__(f)
    if t in _SCALARS:
        return t.__repr__(x)  # type: ignore[call-arg]
    d = depth + 1
    if t is list:
        return "[" + ", ".join([canon(v, d) for v in x]) + "]"
    if t is tuple:
        parts = [canon(v, d) for v in x]
        return "(" + parts[0] + ",)" if len(parts) == 1 else "(" + ", ".join(parts) + ")"
    if t is dict:
        items = sorted([(canon(k, d), canon(v, d)) for k, v in x.items()])
        return "{" + ", ".join([k + ": " + v for k, v in items]) + "}"
    if t is set or t is frozenset:
        body = ", ".join(sorted([canon(v, d) for v in x]))
        if t is set:
            return "{" + body + "}" if body else "set()"
        return "frozenset({" + body + "})" if body else "frozenset()"
    raise Unserialisable(t.__name__)


def parse_literal(text: str) -> Any:
    """Parse a Python literal (plus ``nan``, ``inf``, ``set()`` and ``frozenset(...)``) without
    evaluating code.  Raises ValueError / SyntaxError / RecursionError / MemoryError."""
    return _lit(ast.parse(text.strip(), mode="eval").body)


def _lit(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and node.value is not Ellipsis:
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(_lit(e) for e in node.elts)
    if isinstance(node, ast.List):
        return [_lit(e) for e in node.elts]
    if isinstance(node, ast.Set):
        return {_lit(e) for e in node.elts}
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_lit(k): _lit(v) for k, v in zip(node.keys, node.values)}  # type: ignore[arg-type]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _lit(node.operand)
        if type(v) in (int, float, complex):
            return -v if isinstance(node.op, ast.USub) else +v
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        a, b = _lit(node.left), _lit(node.right)  # complex literals: 1+2j
        if type(a) in (int, float) and type(b) is complex:
            return a + b if isinstance(node.op, ast.Add) else a - b
    if isinstance(node, ast.Name) and node.id in ("nan", "inf"):
        return math.nan if node.id == "nan" else math.inf
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("set", "frozenset")
        and not node.keywords
        and len(node.args) <= 1
    ):
        items = _lit(node.args[0]) if node.args else ()
        if type(items) in (list, tuple, set):
            return set(items) if node.func.id == "set" else frozenset(items)
    raise ValueError(f"not a literal: {ast.dump(node)[:60]}")


# ------------------------------------------------------------------------------- the child
class _Budget(BaseException):
    """Raised by SIGALRM when a test exceeds its time budget."""


def _on_alarm(signum: int, frame: object) -> None:
    raise _Budget


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _setup_child(cfg: dict, wfd: int, n_tests: int, libc: ctypes.CDLL | None) -> int:
    """Confine the freshly forked child; returns the record fd (moved to 3). Runs before any
    program code, so every limit is in place when the program starts."""
    os.setsid()  # own process group: the zygote kills the whole group
    if libc is not None:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)  # stdin empty, stdout/stderr floods go nowhere
    if wfd != 3:
        os.dup2(wfd, 3)
    os.closerange(4, 1 << 16)
    os.chdir(cfg["workdir"])
    mem = cfg["memory_mb"] << 20
    cpu = int((n_tests + 1) * cfg["timeout_s"]) + 2
    limits = [
        (resource.RLIMIT_AS, mem, mem),
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_FSIZE, 1 << 20, 1 << 20),
        (resource.RLIMIT_NOFILE, 64, 64),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    if cfg["uid"] is not None:
        limits.append((resource.RLIMIT_NPROC, cfg["nproc"], cfg["nproc"]))
    for which, soft, hard in limits:
        resource.setrlimit(which, (soft, hard))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # oversized writes fail with EFBIG instead
    if cfg["uid"] is not None:
        os.setgroups([])
        os.setgid(cfg["uid"])
        os.setuid(cfg["uid"])
    if cfg["bpf"] and libc is not None:
        _load_seccomp(libc, bytes.fromhex(cfg["bpf"]))
    os.environ.clear()
    os.environ.update({"PATH": "/usr/bin:/bin", "HOME": cfg["workdir"], "TMPDIR": cfg["workdir"]})
    return 3


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def _load_seccomp(libc: ctypes.CDLL, bpf: bytes) -> None:
    """Load a filter built (and exported as raw BPF) by the sandbox process with pyseccomp."""
    prog = _SockFprog(len(bpf) // 8, bpf)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_SECCOMP")


def _run_program(src: str, idxs: list, entry: str, inputs: list, budget: float, fd: int) -> None:
    """Compile and import the program once, then run its tests in order, one record each."""
    dumps, perf, cpu_time = json.dumps, time.perf_counter, time.process_time
    setitimer, real = signal.setitimer, signal.ITIMER_REAL

    def send(rec: list) -> None:
        _write_all(fd, (dumps(rec) + "\n").encode())

    signal.signal(signal.SIGALRM, _on_alarm)
    sys.setrecursionlimit(1000)
    try:
        code = compile(src, "<program>", "exec")
    except MemoryError:
        return send(["X", "M", ""])
    except Exception as e:  # SyntaxError, ValueError (null bytes), RecursionError (too deep)
        return send(["X", "S", type(e).__name__])
    g: dict = {"__name__": "solution", "__builtins__": builtins}
    random.seed(0)
    try:
        try:
            setitimer(real, budget)
            exec(code, g)
            fn = g[entry]
        finally:
            setitimer(real, 0)
    except _Budget:
        return send(["X", "T", ""])
    except MemoryError:
        return send(["X", "M", ""])
    except KeyError:
        return send(["X", "E", f"missing entry point {entry}"])
    except BaseException as e:
        return send(["X", "E", _name(e)])
    send(["R", cpu_time()])
    for i in idxs:
        args = inputs[i]
        random.seed(0)
        t0, c0 = perf(), cpu_time()
        try:
            try:
                setitimer(real, budget)
                text = canon(fn(*args))
            finally:
                setitimer(real, 0)
            rec = [i, "V", text]
            if len(text) > TEXT_CAP:
                rec = [i, "H", hashlib.sha256(text.encode()).hexdigest()]
        except _Budget:
            rec = [i, "T", ""]
        except MemoryError:
            rec = [i, "M", ""]
        except Unserialisable as e:
            rec = [i, "U", str(e.args[0])[:100]]
        except BaseException as e:  # sys.exit and KeyboardInterrupt are a program's errors too
            rec = [i, "E", _name(e)]
        rec[2:2] = [perf() - t0, cpu_time() - c0]
        send(rec)


def _name(e: BaseException) -> str:
    try:
        return str(type(e).__name__)[:100]
    except BaseException:
        return "?"


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
                fd = _setup_child(self.cfg, w, 1, self.libc)
                try:
                    child = os.fork()
                    if child == 0:
                        os._exit(0)
                    os.waitpid(child, 0)
                    blocked = False
                except PermissionError:
                    blocked = True
                _write_all(fd, json.dumps([os.getuid(), blocked]).encode())
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
            _write_all(1, b"".join(self.out))
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
                fd = _setup_child(self.cfg, w, len(pending), self.libc)
                _run_program(src, pending, entry, self.inputs, self.budget, fd)
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
                rec = _decode(line)
                now = time.monotonic()
                if not ready and _is_ready_record(rec):
                    ready, deadline = True, now + self.budget + self.margin
                    cpu_seen = rec[1]
                elif not ready and _is_row_record(rec):
                    for i in pending[pos:]:
                        self.emit(["cell", row, i, rec[1], 0.0, rec[2]])
                        if rec[1] == "T":
                            timed_out.append((i, 0.0))
                    pos = len(pending)
                elif ready and pos < len(pending) and _is_cell_record(rec, pending[pos]):
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


def _is_ready_record(rec: object) -> bool:
    return type(rec) is list and len(rec) == 2 and rec[0] == "R" and type(rec[1]) is float


def _decode(line: bytes) -> Any:
    try:
        return json.loads(line)
    except Exception:  # ValueError, and RecursionError / MemoryError for hostile nesting
        return None


def _is_row_record(rec: object) -> bool:
    return (
        type(rec) is list
        and len(rec) == 3
        and rec[0] == "X"
        and rec[1] in ("S", "E", "T", "M")
        and type(rec[2]) is str
        and len(rec[2]) <= 200
    )


def _is_cell_record(rec: object, expect_idx: int) -> bool:
    if type(rec) is not list or len(rec) != 5 or rec[0] != expect_idx:
        return False
    _, kind, dur, cpu, payload = rec
    return (
        kind in ("V", "H", "E", "U", "T", "M")
        and type(dur) is float
        and type(cpu) is float
        and type(payload) is str
        and (kind == "V" or len(payload) <= 200)
    )


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
            elif msg["op"] == "job":
                z.job(msg["row"], msg["program"], msg["idxs"], msg["entry"])
            elif msg["op"] == "quit":
                break
    finally:
        z._sweep()
        shutil.rmtree(cfg.get("workdir", ""), ignore_errors=True)


if __name__ == "__main__":
    main()
