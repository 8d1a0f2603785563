"""The child side: confine a freshly forked process, then run one program's tests in it.

Standard library only (the zygote imports it).  Every limit is in place before any program code
runs; the child writes one record per test to fd 3 and always ends in ``os._exit``.

Only modules without fork handlers are imported here: ``threading`` and ``random`` register
handlers that run in every child (≈ 0.45 and 0.12 ms of CPU per fork), ``hashlib`` maps
libcrypto.  The child imports them itself when a program needs them (``_worker.PRELOAD``).
"""

from __future__ import annotations

import builtins
import ctypes
import fcntl
import gc
import json
import os
import re
import resource
import select
import signal
import sys
import time
from collections.abc import Callable
from contextlib import suppress

TYPE_CHECKING = False  # typing is not imported at run time: the zygote stays small
if TYPE_CHECKING:
    import mmap
    from typing import Any

try:
    from ._filter import patch_pid
    from ._landlock import restrict_self
    from ._pidreset import drop_caps
    from ._stdio import normalised_sha
    from ._values import TEXT_CAP, Unserialisable, canon
except ImportError:  # run by the zygote as a plain script, not as part of the package
    from _filter import patch_pid  # type: ignore[no-redef]
    from _landlock import restrict_self  # type: ignore[no-redef]
    from _pidreset import drop_caps  # type: ignore[no-redef]
    from _stdio import normalised_sha  # type: ignore[no-redef]
    from _values import TEXT_CAP, Unserialisable, canon  # type: ignore[no-redef]

__all__ = [
    "SCRIPT",
    "TEXT_CAP",
    "child_env",
    "decode",
    "frame",
    "is_cell_line",
    "is_cell_record",
    "is_ready_line",
    "is_ready_record",
    "is_row_line",
    "is_row_record",
    "prepare_seccomp",
    "read_frame",
    "read_raw",
    "raw_frame",
    "record_line",
    "rlimits",
    "run_program",
    "setup_child",
    "write_all",
]

SCRIPT = ""  # the entry point of standard-input tests: the whole program runs per test
PIPE_BUF_BYTES = 1 << 16  # what a fresh pipe takes without a reader
F_SETPIPE_SZ = 1031
TICK_S = 0.005  # how often the drainer of a script's standard output looks at its pipe
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP = 1, 38, 22
SECCOMP_MODE_FILTER = 2
SYS_CLOSE_RANGE = 436  # x86_64 and aarch64


class _Budget(BaseException):
    """Raised by SIGALRM when a test exceeds its time budget."""


class _ScriptExit(BaseException):
    """Unwinds a script that called ``os._exit``: its test's record is sent."""


_ARMED = [False]  # a test (or the program's import) is running under its budget


def _on_alarm(signum: int, frame: object) -> None:
    # A test's timer is set when it starts and not cancelled when it ends (one system call per
    # test instead of two): an alarm that comes between tests is ignored, and the next test's
    # timer replaces a pending one.
    if _ARMED[0]:
        raise _Budget


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


FRAME_HEAD = 16  # "%015d\n": the byte length of the message that follows


def frame(msg: dict) -> bytes:
    """A message to a zygote: its length, then its JSON (see ``read_frame``)."""
    body = json.dumps(msg).encode()
    return b"%015d\n" % len(body) + body


# How a batch's tests message begins (``frame({"op": "tests", ...})``): the zygote recognises it
# on its bytes and never decodes it; the batch process it forks does (``_worker.Zygote.batch``).
TESTS_HEAD = b'{"op": "tests", '


def _read_exact(fd: int, n: int) -> bytearray | None:
    buf, got = bytearray(n), 0
    view = memoryview(buf)
    while got < n:
        k = os.readv(fd, [view[got:]])
        if k == 0:
            return None
        got += k
    view.release()
    return buf


def raw_frame(data: bytes | bytearray) -> bytes:
    """Bytes to a zygote that it must not decode (a program's source): length, then the bytes."""
    return b"%015d\n" % len(data) + data


def read_raw(fd: int) -> bytearray | None:
    """The next ``raw_frame`` on ``fd``, in a bytearray that the reader zeroes once done with it
    (never decoded by the zygote: a decoded copy would outlive the job in its heap)."""
    head = _read_exact(fd, FRAME_HEAD)
    return None if head is None else _read_exact(fd, int(head))


def read_frame(fd: int) -> dict | None:
    """The next message on ``fd`` (None at end of input), read to its last byte and no further.
    A buffered reader would read ahead: the next job, another program's source, would then sit
    in the zygote's memory at the fork and every child could read it
    (``sys.__stdin__.buffer.peek()``).  The message's bytes are zeroed once decoded."""
    head = _read_exact(fd, FRAME_HEAD)
    if head is None:
        return None
    body = _read_exact(fd, int(head))
    if body is None:
        return None
    try:
        return json.loads(body)
    finally:
        body[:] = bytes(len(body))


def setup_child(
    cfg: dict,
    wfd: int,
    n_tests: int,
    libc: ctypes.CDLL | None,
    ruleset: int = -1,
    stdin: list[str] | None = None,
) -> int:
    """Confine the freshly forked child; returns the record fd (moved to 3). Runs before any
    program code, so every limit is in place when the program starts.  ``ruleset`` is the
    worker's Landlock ruleset (-1: none); ``stdin`` the standard inputs of a script's tests,
    made files here (``_stdin_files``); the seccomp allow-list comes last."""
    # Its own process group, which the zygote kills whole.  Not setsid(): with scheduler
    # autogroups a new session costs ~1 ms (a new task group), setpgid ~15 µs; the zygote has no
    # controlling terminal to detach from (it starts in a session of its own).
    os.setpgid(0, 0)
    if libc is not None:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    devnull = cfg.get("_devnull", -1)  # opened once by the zygote
    if devnull < 0:
        devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)  # stdin empty, stdout/stderr floods go nowhere
    if wfd != 3:
        os.dup2(wfd, 3)
    if ruleset >= 0:
        os.dup2(ruleset, 4)
    _close_from(5 if ruleset >= 0 else 4, libc)
    os.chdir(cfg["workdir"])
    if stdin is not None:
        _stdin_files(stdin)
    cpu = int((n_tests + 1) * cfg["timeout_s"]) + 2
    setrlimit = resource.setrlimit
    setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    for which, limit in cfg.get("_rlimits") or rlimits(cfg):
        setrlimit(which, limit)
    if not cfg.get("_prepared"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # oversized writes fail with EFBIG
    if cfg["uid"] is not None:
        os.setgroups([])
        os.setgid(cfg["uid"])
        os.setuid(cfg["uid"])
    if cfg.get("_nocaps") is not None and libc is not None:
        drop_caps(libc, cfg["_nocaps"])  # bubblewrap's capability for the pid counter (_pidreset)
    if ruleset >= 0 and libc is not None:
        restrict_self(libc, 4)  # a fresh Landlock domain: this program's alone
        os.close(4)
    if cfg["bpf"] and libc is not None:
        ready = cfg.get("_seccomp")
        if ready is not None:
            _load_prepared(libc, ready, os.getpid())
        else:
            _load_seccomp(libc, patch_pid(bytes.fromhex(cfg["bpf"]), os.getpid()))
    if not cfg.get("_prepared"):  # the zygote sets these once per work directory
        os.environ.clear()
        os.environ.update(child_env(cfg["workdir"]))
    sys.path.extend(cfg.get("syspath", ()))  # where the allowed packages live (read-only)
    return 3


_STDIN_FILES: list[int] = []  # in a child: each test's standard input, a sealed file, in order
MFD_ALLOW_SEALING, F_ADD_SEALS, SEALED = 2, 1033, 1 | 2 | 4 | 8  # seal, shrink, grow, write
STDIN_FILES_BYTES = 1 << 26  # the characters of a child's inputs made files, at most


def _stdin_files(texts: list[str]) -> None:
    """Each test's standard input as a regular file of its own, as a judge gives it (``python3
    prog.py < input``): ``os.fstat(0).st_size`` is its size, so ``os.read(0,
    os.fstat(0).st_size)`` (the fast-input idiom of many Codeforces solutions) reads it whole,
    as does one ``os.read(0, 1 << 25)``; on a pipe the first read 0 bytes and the second at
    most a pipe's worth.  Made before the limits and the seccomp filter (which refuse files
    over 1 MiB and ``memfd_create``): an anonymous memory file per test, sealed against
    writes, at fd 64 and above (beyond ``RLIMIT_NOFILE``: the program's 64 descriptors stay
    its own).  The inputs past ``STDIN_FILES_BYTES`` in all (written before the program's
    import, within its budget), and all of them where memory files are not available, are read
    from a pipe (``_feed_stdin``)."""
    total = 0
    for text in texts:
        total += len(text)
        if total > STDIN_FILES_BYTES:
            break
        try:
            m = os.memfd_create("stdin", os.MFD_CLOEXEC | MFD_ALLOW_SEALING)
        except (AttributeError, OSError):
            break
        try:
            write_all(m, text.encode("utf-8", "surrogatepass"))
            fcntl.fcntl(m, F_ADD_SEALS, SEALED)
            _STDIN_FILES.append(fcntl.fcntl(m, fcntl.F_DUPFD_CLOEXEC, 64))
        except OSError:
            break
        finally:
            os.close(m)


def rlimits(cfg: dict) -> list[tuple[int, tuple[int, int]]]:
    """Every child's resource limits but the CPU one (which depends on its number of tests);
    the zygote computes them once per batch (``cfg["_rlimits"]``)."""
    mem = cfg["memory_mb"] << 20
    nproc, nproc_hard = cfg["nproc"], resource.getrlimit(resource.RLIMIT_NPROC)[1]
    if nproc_hard != resource.RLIM_INFINITY:
        nproc = min(nproc, nproc_hard)  # never above the limit we were given
    return [
        (resource.RLIMIT_AS, (mem, mem)),
        (resource.RLIMIT_FSIZE, (1 << 20, 1 << 20)),
        (resource.RLIMIT_NOFILE, (64, 64)),
        (resource.RLIMIT_CORE, (0, 0)),
        # Always: after the uid drop it is the cap of the worker's own uid; without the drop it
        # is our uid's task count plus a margin (see _pool.nproc_cap).  Root alone ignores it.
        (resource.RLIMIT_NPROC, (nproc, nproc)),
    ]


def child_env(workdir: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": workdir, "TMPDIR": workdir}


def _close_from(low: int, libc: ctypes.CDLL | None) -> None:
    """Close every fd from ``low`` up: one close_range(2) call (Linux 5.9+), else a loop."""
    if libc is not None and libc.syscall(SYS_CLOSE_RANGE, low, ctypes.c_uint(0xFFFFFFFF), 0) == 0:
        return
    os.closerange(low, 1 << 16)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def prepare_seccomp(bpf: bytes, offsets: list[int]) -> tuple:
    """The filter in a buffer of its own with its ``sock_fprog``, made once by the zygote: a
    child only writes its pid into the buffer (at ``offsets``, see ``_filter.patch_pid``) and
    loads it, with no copy of the program and no new ctypes objects."""
    buf = ctypes.create_string_buffer(bpf, len(bpf))
    prog = _SockFprog(len(bpf) // 8, ctypes.cast(buf, ctypes.c_char_p))
    return buf, prog, ctypes.byref(prog), tuple(offsets)


def _load_prepared(libc: ctypes.CDLL, ready: tuple, pid: int) -> None:
    buf, _, ref, offsets = ready
    word = pid.to_bytes(4, "little")
    for off in offsets:
        buf[off : off + 4] = word
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ref, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_SECCOMP")


def _load_seccomp(libc: ctypes.CDLL, bpf: bytes) -> None:
    """Load a filter built (and exported as raw BPF) by the sandbox process with pyseccomp."""
    prog = _SockFprog(len(bpf) // 8, bpf)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_SECCOMP")


try:  # json.dumps' own string quoting, in C
    from _json import encode_basestring_ascii as _quote
except ImportError:  # pragma: no cover - an interpreter built without _json
    from json.encoder import py_encode_basestring_ascii as _quote


def record_line(rec: list) -> bytes:
    """``json.dumps(rec) + "\n"``, byte for byte, for a record of ints, finite floats and
    strings (every record a child writes), without the encoder object ``json.dumps`` makes on
    each call (≈ 2.2 µs a record against ≈ 0.6 µs).  Anything else goes through ``json.dumps``.
    The zygote checks the records on exactly this spelling (``is_cell_line``)."""
    parts = []
    for x in rec:
        t = type(x)
        if t is str:
            parts.append(_quote(x))
        elif t is int:
            parts.append(int.__repr__(x))
        elif t is float and x - x == 0.0:  # finite (json.dumps spells nan and inf its own way)
            parts.append(float.__repr__(x))
        else:
            return (json.dumps(rec) + "\n").encode()
    return ("[" + ", ".join(parts) + "]\n").encode()


def _sender(fd: int) -> Callable[[list], None]:
    """Write one record to ``fd``, from this process only.  Where a program may fork (basic
    isolation), a child of it that comes back into this loop (its ``f`` returned, or raised:
    a failed inner fork of a daemon) exits here without a word instead of writing records of
    its own after its parent's, which would make the whole row a protocol violation."""
    line, me, getpid, leave = record_line, os.getpid(), os.getpid, os._exit

    def send(rec: list) -> None:
        if getpid() != me:
            leave(0)
        write_all(fd, line(rec))

    return send


def run_program(
    src: str | bytearray, idxs: list, entry: str, inputs: list, budget: float, fd: int
) -> None:
    """Compile and import the program once, then run its tests in order, one record each.
    ``entry == SCRIPT``: the program is a script run once per test on its standard input."""
    if not isinstance(src, str):  # the zygote's bytes (decoded here, in the child)
        src = bytes(src).decode("utf-8", "surrogatepass")
    if entry == SCRIPT:
        return run_script(src, idxs, inputs, budget, fd)
    perf, cpu_time = time.perf_counter, time.process_time
    setitimer, real = signal.setitimer, signal.ITIMER_REAL
    send = _sender(fd)

    signal.signal(signal.SIGALRM, _on_alarm)
    sys.setrecursionlimit(1000)
    try:
        code = compile(src, "<program>", "exec", dont_inherit=True)  # not this module's
        # ``from __future__ import annotations``: a program's annotations are evaluated as
        # under ``python program.py``
    except MemoryError:
        return send(["X", "M", ""])
    except Exception as e:  # SyntaxError, ValueError (null bytes), RecursionError (too deep)
        return send(["X", "S", type(e).__name__])
    g: dict = {"__name__": "solution", "__builtins__": builtins}
    if "Solution" in code.co_names:
        g.update(_typing_names(code))
    _seed_random(src)
    _track_threads()
    armed = _ARMED
    try:
        try:
            armed[0] = True
            setitimer(real, budget)
            exec(code, g)
            fn, make = _entry(g, entry)
        finally:
            armed[0] = False
    except _Budget:
        return send(["X", "T", ""])
    except MemoryError:
        return send(["X", "M", ""])
    except _NoEntry:
        return send(["X", "E", MISSING_ENTRY.format(entry=entry)])
    except BaseException as e:
        return send(["X", "E", _name(e)])
    c0 = cpu_time()
    send(["R", c0])
    modules = sys.modules
    for i in idxs:
        args = inputs[i]
        t0 = perf()
        try:
            try:
                armed[0] = True
                setitimer(real, budget)
                rnd = modules.get("random")
                if rnd is not None:
                    rnd.seed(0)
                _left_the_kernel(t0 + budget)
                if make is not None:  # LeetCode's form: a fresh Solution() for each test
                    fn = getattr(make(), entry)
                text = canon(fn(*args))
            finally:
                armed[0] = False
            rec = [i, "V", text]
            if len(text) > TEXT_CAP:
                rec = [i, "H", _sha256(text)]
        except _Budget:
            rec = [i, "T", ""]
        except MemoryError:
            rec = [i, "M", ""]
        except Unserialisable as e:
            rec = [i, "U", str(e.args[0])[:100]]
        except BaseException as e:  # sys.exit and KeyboardInterrupt are a program's errors too
            rec = [i, "E", _name(e)]
        c1 = cpu_time()  # the test's CPU since the previous one ended (one clock read per test)
        rec[2:2] = [perf() - t0, c1 - c0]
        c0 = c1
        send(rec)


MISSING_ENTRY = "missing entry point {entry} (nor a method of class Solution)"


def _entry(g: dict, entry: str) -> tuple[Any, Any]:
    """The function a test calls: the program's top-level ``entry``, else, as APPS, TACO and
    LiveCodeBench run LeetCode-style solutions, the method ``entry`` of its class ``Solution``
    (``(None, Solution)``: an instance is made per test).  _NoEntry when it has neither (not
    KeyError: the program's own code may raise that)."""
    if entry in g:
        return g[entry], None
    cls = g.get("Solution")
    if isinstance(cls, type) and callable(getattr(cls, entry, None)):
        return None, cls
    raise _NoEntry(entry)


class _NoEntry(Exception):
    """The program defines neither the entry point nor a Solution class with it."""


# What LeetCode's starter code annotates with and never imports (its judge, LiveCodeBench's
# and TACO's provide ``from typing import *``): the names a Solution program uses and does not
# define are given to it, as that import would.
TYPING_NAMES = frozenset(
    ("Any", "Callable", "DefaultDict", "Deque", "Dict", "FrozenSet", "Generator", "Iterable",
     "Iterator", "List", "Optional", "Sequence", "Set", "Tuple", "Type", "Union")
)  # fmt: skip


def _typing_names(code: Any) -> dict:
    """``typing``'s objects for the names of TYPING_NAMES that ``code`` or a function or class
    in it looks up (annotations postponed by ``from __future__ import annotations`` look up
    nothing); empty, and typing not imported, when there are none."""
    names: set = set()
    stack = [code]
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if type(k) is type(code))
    used = names & TYPING_NAMES
    if not used:
        return {}
    try:
        import typing
    except ImportError:
        return {}
    return {n: getattr(typing, n) for n in used if hasattr(typing, n)}


def _clean_exit(code: object) -> bool:
    """Whether ``sys.exit(code)`` ends ``python prog.py`` with status 0: ``None``, or an int
    (a bool too) equal to 0.  Python prints any other object and exits with status 1:
    ``sys.exit(0.0)`` and ``sys.exit("0")`` are failures (``0.0 in (None, 0)`` holds)."""
    return code is None or (isinstance(code, int) and int.__int__(code) == 0)


def run_script(src: str, idxs: list, inputs: list, budget: float, fd: int) -> None:
    """Standard-input tests: compile once, then per test run the whole program as
    ``__main__`` in fresh globals, with that test's text on fd 0 (``input()``, ``sys.stdin``,
    ``sys.stdin.buffer`` and ``open(0)`` all read it) and ``sys.stdout`` captured.  The record
    carries the canonical text of the output; one too large to send carries the sha256 of its
    normalised form (``_stdio``).  ``exit()`` / ``sys.exit(0)`` end a script normally."""
    perf, cpu_time = time.perf_counter, time.process_time
    setitimer, real = signal.setitimer, signal.ITIMER_REAL
    send = _sender(fd)

    signal.signal(signal.SIGALRM, _on_alarm)
    sys.setrecursionlimit(1000)
    try:
        code = compile(src, "<program>", "exec", dont_inherit=True)
    except MemoryError:
        return send(["X", "M", ""])
    except Exception as e:
        return send(["X", "S", type(e).__name__])
    names = dict(builtins.__dict__)
    names["exit"] = names["quit"] = sys.exit  # the site module's helpers (workers run -S)
    _seed_random(src)
    send(["R", cpu_time()])
    modules, armed, me, cap, leave = sys.modules, _ARMED, os.getpid(), None, os._exit
    saved = sys.stdout, sys.__stdout__
    files = _STDIN_FILES
    now: list = []  # while a script runs: its test (i, mode, t0, c0, capture)
    sent: list = []  # the test whose record os._exit sent

    def script_exit(status: int) -> None:
        """``os._exit`` as a running script sees it: the test ends there, its output what
        reached fd 1 (buffers are not flushed, ``atexit`` does not run), ERROR for a status
        other than 0.  Its record is sent at once, the script unwound, and the row goes on
        (the child's exit made the test CRASH).  Elsewhere, and in a process the script
        forked, the process exits."""
        if os.getpid() != me or not now:
            leave(status)
        j, how, t, c, pipe = now
        now.clear()
        if status != 0:
            rec = [j, "E", "SystemExit"]
        else:
            kind, out = pipe.collect() if pipe is not None else ("L", None)
            rec = _output_record(j, kind, out, how)
        rec[2:2] = [perf() - t, cpu_time() - c]
        send(rec)
        sent.append(j)
        raise _ScriptExit

    os._exit = script_exit  # type: ignore[assignment]
    _track_threads()
    for k, i in enumerate(idxs):
        stdin_text, mode = inputs[i]
        t0, c0 = perf(), cpu_time()
        rec: list | None = None
        out_file = None
        try:
            if k >= len(files) or not _stdin_from(files[k]):
                _feed_stdin(stdin_text.encode("utf-8", "surrogatepass"))
            if cap is None or not cap.intact():
                cap = _Stdout()
            else:  # as a file, fd 1 never refuses a write: not even if a test made it O_NONBLOCK
                os.set_blocking(cap.w, True)
            os.dup2(cap.w, 1)  # again for each test: a program may have closed or replaced fd 1
            out_file = open(1, "w", encoding="utf-8", errors="surrogatepass", closefd=False)  # noqa: SIM115
            sys.stdout = sys.__stdout__ = out_file  # type: ignore[misc]
            now[:] = i, mode, t0, c0, cap
            armed[0] = True
            setitimer(real, budget)
            try:
                _clear_exits()
                rnd = modules.get("random")
                if rnd is not None:
                    rnd.seed(0)
                _left_the_kernel(t0 + budget)  # however the previous test ended
                script = {"__name__": "__main__", "__builtins__": names}
                earlier = _threads(modules)  # left by earlier tests: not this test's to wait for
                try:
                    exec(code, script)
                except SystemExit as e:
                    if not _clean_exit(e.code):
                        raise
                _at_exit(modules, me, t0 + budget, script, earlier)
            finally:
                if os.getpid() != me:  # a child the script forked came back here: it leaves
                    leave(0)
                now.clear()
                armed[0] = False
                setitimer(real, 0)
        except _Budget:
            rec = [i, "T", ""]
        except MemoryError:
            rec = [i, "M", ""]
        except BaseException as e:
            rec = [i, "E", _name(e)]
        script = None  # type: ignore[assignment]
        # As the interpreter ends: standard output flushed, then what the program left open
        # (``f = open(1, "w")``) flushed as it is collected, into this test's output.
        for stream in (sys.stdout, out_file, None, out_file):
            with suppress(BaseException):
                gc.collect() if stream is None else stream.flush()
        if out_file is not None:
            with suppress(BaseException):
                out_file.close()  # what it could not write (fd 1 closed) is lost, not sent later
        sys.stdout, sys.__stdout__ = saved  # type: ignore[misc]
        stream = out_file = None
        kind, raw = cap.collect() if cap is not None else ("L", None)
        if kind != "V":
            cap = None  # lost (the program closed the pipe) or flooded: the next test makes one
        if sent:  # by os._exit: what the script wrote after it is dropped
            sent.clear()
            continue
        if rec is None:
            rec = _output_record(i, kind, raw, mode)
        raw = None
        rec[2:2] = [perf() - t0, cpu_time() - c0]
        send(rec)


def _output_record(i: int, kind: str, out: str | None, mode: str) -> list:
    """The record of a script that ended normally, from what its test collected of fd 1."""
    if kind == "M":
        return [i, "M", ""]
    if out is None:
        return [i, "E", "stdout lost"]
    try:
        # Its canonical text (``repr``) is two characters longer at least: a long output is
        # hashed without that copy.
        if len(out) + 2 > TEXT_CAP:
            return [i, "H", normalised_sha(out, mode)]
        text = canon(out)
        if len(text) > TEXT_CAP:
            return [i, "H", normalised_sha(out, mode)]
        return [i, "V", text]
    except MemoryError:
        return [i, "M", ""]


def _clear_exits() -> None:
    """No exit function registered by an earlier test runs after this one."""
    import atexit  # built into the interpreter: no file is read

    atexit._clear()


def _threads(modules: dict) -> set:
    """The threads alive now (none when the program never imported ``threading``)."""
    threading = modules.get("threading")
    return set() if threading is None else set(threading.enumerate())


def _at_exit(modules: dict, me: int, deadline: float, script: dict, earlier: set) -> None:
    """What the interpreter does when a script ends, within the test's budget: shut down the
    thread pools it left open and wait for the threads it started (the deep-recursion idiom
    runs ``main`` in a thread with a large stack),
    run its ``atexit`` functions (the buffered-output idiom writes everything there), flush
    ``sys.stdout``, then clear the script's globals as the interpreter clears
    ``__main__`` (``_clear_main``).  ``atexit`` and finalisers swallow every exception, the
    budget's too: past the ``deadline`` (on the clock of ``time.perf_counter``) this raises it
    again.  A thread an earlier test started and never ended (that test was TIMEOUT) would not
    exist in a fresh interpreter: it is not waited for again (``earlier``)."""
    if os.getpid() != me:
        return
    pool = modules.get("concurrent.futures.thread")
    if pool is not None:  # the interpreter's first exit hook: an executor never shut down
        pool._python_exit()  # tells its idle threads to leave, and waits for them
        pool._shutdown = False  # the next test is a fresh interpreter: it may make executors
    threading = modules.get("threading")
    if threading is not None:
        main = threading.main_thread()
        for t in threading.enumerate():
            if t is not main and not t.daemon and t not in earlier:
                t.join()
    import atexit

    atexit._run_exitfuncs()
    with suppress(Exception):
        sys.stdout.flush()
    _clear_main(script)
    if time.perf_counter() > deadline:
        raise _Budget


try:  # opened once, in the zygote (glibc 2.30+ has tgkill)
    _TGKILL = getattr(ctypes.CDLL(None, use_errno=True), "tgkill", None)
except OSError:
    _TGKILL = None
_ENDED: list = []  # native ids of the program's threads whose function has returned


def _track_threads() -> None:
    """Every thread the program starts (``threading`` or ``_thread``) notes its native id in
    ``_ENDED`` as its function returns, for ``_left_the_kernel``.  Done in the child before the
    program runs; a ``threading`` the zygote preloaded has its own reference replaced too."""
    import _thread  # built in

    ended, native_id = _ENDED, _thread.get_native_id

    def tracked(start: Callable) -> Callable:
        def start_thread(function: Callable, *args: Any, **kwargs: Any) -> Any:
            def run(*a: Any, **k: Any) -> Any:
                try:
                    return function(*a, **k)
                finally:
                    ended.append(native_id())

            return start(run, *args, **kwargs)

        return start_thread

    threading = sys.modules.get("threading")
    for name in ("start_new_thread", "start_new", "start_joinable_thread"):
        start = getattr(_thread, name, None)
        if start is None:
            continue
        setattr(_thread, name, tracked(start))
        if threading is not None and getattr(threading, "_" + name, None) is start:
            setattr(threading, "_" + name, getattr(_thread, name))


def _left_the_kernel(deadline: float) -> None:
    """Before a test: yield this core until the threads whose function returned have left the
    kernel.  A thread's Python work ends (``join`` returns, ``threading`` forgets it) before
    the thread itself exits, and glibc reuses or frees its stack only after that: the
    deep-recursion idiom's 256 MiB stack was still held when the next test started its thread,
    which then found no room under ``memory_mb=512`` (RuntimeError: can't start new thread; in
    most runs of twelve such tests, more often on one core: ``test_attack_stdout``).
    ``tgkill(pid, tid, 0)`` answers ESRCH once a thread is gone (on the program itself:
    allowed).  A thread still in its function is not waited for; nor, past the test's budget,
    any (its alarm then ends the test)."""
    tgkill = _TGKILL
    if not _ENDED or tgkill is None:
        return
    pid = os.getpid()
    while _ENDED:
        tid = _ENDED.pop()
        while tgkill(pid, tid, 0) == 0 and time.perf_counter() < deadline:
            os.sched_yield()


def _clear_main(main: dict) -> None:
    """As the interpreter clears ``__main__`` when it ends: the names with one leading
    underscore set to None first, then every other name but ``__builtins__``.  What only the
    script held is finalised now, in that order: a file it left open on fd 1 (``out =
    open(1, "w")`` beside a function, whose globals make a reference cycle) flushes into this
    test's output.  Left to the garbage collector, a cycle's objects are finalised in no set
    order: the file's buffer could be closed before the text layer above it flushed, and the
    output was lost."""
    for key in list(main):
        if type(key) is str and key[:1] == "_" and key[1:2] != "_":
            main[key] = None
    for key in list(main):
        if type(key) is str and key != "__builtins__":
            main[key] = None


class _Stdout:
    """fd 1 of a script: a pipe that a thread of the child drains.  Whatever reaches fd 1 is the
    test's output, in the order it got there: ``print``, ``sys.stdout.buffer``, a raw
    ``os.write(1, …)`` (PyRival's FastIO), ``open(1, "w")``, and in basic isolation a process the
    script started, as a judge that sends standard output to a file sees it.

    The thread waits until the pipe holds data and reads it under a lock; at the end of a test
    the child takes the lock and reads what is left, so everything written before then is this
    test's output and nothing of it reaches the next test.  The thread blocks every signal: the
    budget's SIGALRM reaches the program's own thread.  Past ``memory_mb`` the output is
    dropped and the test is MEMORY; a program that closes or reads the pipe loses its own
    output (``stdout lost``), and the next test makes a fresh pipe."""

    def __init__(self) -> None:
        import _thread  # built in, and without fork handlers (``threading`` has them)

        self.r, self.w = os.pipe()  # close-on-exec: a process the script runs gets fd 1 only
        os.set_blocking(self.r, False)
        with suppress(OSError):  # room for 1 MiB between two rounds of the drainer
            fcntl.fcntl(self.w, F_SETPIPE_SZ, 1 << 20)
        self.ids = self._ids()
        self.acc, self.over, self.lost, self.tid = bytearray(), False, False, 0
        self.chunk = memoryview(bytearray(1 << 16))  # read into: no allocation per read
        self.lock = _thread.allocate_lock()
        old = _thread.stack_size(1 << 18)  # its frames are few; RLIMIT_AS counts a stack whole
        try:
            _thread.start_new_thread(self._drain, (_thread.get_native_id,))
        finally:
            _thread.stack_size(old)

    def _ids(self) -> tuple:
        a, b = os.fstat(self.r), os.fstat(self.w)
        return a.st_dev, a.st_ino, b.st_dev, b.st_ino

    def intact(self) -> bool:
        """Both ends are still this pipe's (a program may close them, or open files in their
        place)."""
        try:
            return not self.lost and self._ids() == self.ids
        except OSError:
            return False

    def _drain(self, threading_id: Callable[[], int]) -> None:
        """Every ``TICK_S`` it reads what the pipe holds; once a round finds the pipe being
        filled it waits on the pipe itself until a round finds little again.  A script that
        prints a line or two per test never wakes it per write (a wake-up each time cost
        30–100 µs a test here); one that writes megabytes is drained as it writes."""
        signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
        self.tid = threading_id()
        wait, sleep, r, flowing = select.select, time.sleep, self.r, False
        while not self.lost:
            try:
                wait([r], [], [], TICK_S) if flowing else sleep(TICK_S)
            except (OSError, ValueError):
                self.lost = True
            with self.lock:
                flowing = self._read(16) >= 1 << 15

    def _read(self, most: int) -> int:
        """Up to ``most`` reads of what the pipe holds (the lock held); the bytes read."""
        got = 0
        for _ in range(most):
            if self.lost:
                break
            try:
                n = os.readv(self.r, [self.chunk])
            except BlockingIOError:
                break
            except OSError:
                n = 0
            if not n:  # every write end closed, or the fd is no longer the pipe
                self.lost = True
                break
            got += n
            if self.over:
                continue
            try:
                self.acc += self.chunk[:n]
            except MemoryError:
                self.over = True
                self.acc = bytearray()
        return got

    def collect(self) -> tuple[str, str | None]:
        """This test's output: ("V", its text), ("M", None) past the memory cap, ("L", None)
        lost.  Reads at most 64 times what is left: a thread of the program that writes without
        end does not hold the test (the rest goes to the next one).  The bytes are decoded
        without a copy and dropped at once: a large output costs twice its size here, and one
        past ``memory_mb`` is MEMORY, never a MemoryError that kills the child
        (``test_attack_stdout``)."""
        with self.lock:
            self._read(64)
            if self.lost:
                return "L", None
            if self.over:
                self.over = False
                return "M", None
            try:
                out = self.acc.decode("utf-8", "replace")
            except MemoryError:
                return "M", None
            finally:
                self.acc = bytearray()
            return "V", out


_POURING: set[int] = set()  # the write ends of standard-input pipes a thread still fills
_GUARD: list = []  # the lock over them, made (with its fork handlers) on first use


def _pour_guard() -> Any:
    """A forked child of a script (basic isolation) must not keep the write end of its
    standard input: the parent's ``sys.stdin.read()`` would wait for that child's exit instead
    of the end of the data, and a script that leaves a helper process running timed out.  The
    handlers close every write end still filled in each child of ``os.fork`` (and what forks
    through it: ``multiprocessing``, ``pty.fork``); exec'd programs never inherit them."""
    if not _GUARD:
        import threading

        lock = threading.RLock()  # a handler of the program may fork while it is held

        def in_child() -> None:
            for fd in _POURING:
                with suppress(OSError):
                    os.close(fd)
            _POURING.clear()
            lock.release()

        os.register_at_fork(
            before=lock.acquire, after_in_parent=lock.release, after_in_child=in_child
        )
        _GUARD.append(lock)
    return _GUARD[0]


def _stdin_from(fd: int) -> bool:
    """The test's file (``_stdin_files``) on fd 0, read from its start; False when the program
    closed it (the test then reads a pipe)."""
    try:
        os.dup2(fd, 0, inheritable=True)
    except OSError:
        return False
    os.close(fd)
    os.lseek(0, 0, os.SEEK_SET)
    sys.stdin = open(0, encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
    return True


def _feed_stdin(data: bytes) -> None:
    """A fresh pipe on fd 0 holding ``data`` (a writer thread when it exceeds the pipe)."""
    r, w = os.pipe()
    if r != 0:  # r is 0 when the previous test closed fd 0
        os.dup2(r, 0)
        os.close(r)
    if len(data) <= PIPE_BUF_BYTES:
        write_all(w, data)
        os.close(w)
    else:
        import threading  # here: the zygote does not import it (see the module docstring)

        lock = _pour_guard()

        def pour() -> None:
            with suppress(OSError):
                write_all(w, data)
            with lock:
                _POURING.discard(w)
                os.close(w)

        with lock:
            _POURING.add(w)
        # Its own small stack: the size a script set for its threads (``threading.stack_size(
        # 2**28)`` for deep recursion) would reserve that much again in every later test.
        pourer = threading.Thread(target=pour, daemon=True)
        old = threading.stack_size(1 << 18)
        try:
            pourer.start()
        finally:
            threading.stack_size(old)
    sys.stdin = open(0, encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115


def _seed_random(src: str) -> None:
    """``random`` seeded to 0 before each test, when a program can use it: a program that names
    it gets it imported here first, so that even an import inside the tested function does not
    seed it from the clock; one imported by the program's imports is in ``sys.modules`` too.
    Seeded here as well, so that draws made while the program's module runs are the same in
    every run and worker."""
    if "random" in src and "random" not in sys.modules:
        with suppress(ImportError):
            import random  # noqa: F401
    rnd = sys.modules.get("random")
    if rnd is not None:
        rnd.seed(0)


def _sha256(text: str) -> str:
    import hashlib  # here: the zygote does not import it (see the module docstring)

    return hashlib.sha256(text.encode()).hexdigest()


def _name(e: BaseException) -> str:
    try:
        return str(type(e).__name__)[:100]
    except BaseException:
        return "?"


# ------------------------------------------------- the records, as the zygote checks them
def _seconds(x: object) -> bool:
    """A float in [0, 1e7]: NaN, infinities, negatives, bools and ints are not durations."""
    return type(x) is float and 0.0 <= x <= 1e7


def is_ready_record(rec: object) -> bool:
    return type(rec) is list and len(rec) == 2 and rec[0] == "R" and _seconds(rec[1])


_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # the C scanner alone


def decode(line: bytes) -> Any:
    """One child record: exactly one JSON value filling the line, or None.  Decoded as UTF-8
    exactly as the sandbox process decodes the zygote's lines (``json.loads`` of bytes would
    also take UTF-16 or UTF-32): a record the zygote accepts is forwarded byte for byte and
    must mean the same there.  No whitespace around the value (the child writes none)."""
    try:
        text = line.decode("utf-8", "surrogatepass")
        value, end = _SCAN(text, 0)
    except Exception:  # StopIteration, ValueError, RecursionError / MemoryError (nesting)
        return None
    return value if end == len(text) else None


def is_row_record(rec: object) -> bool:
    return (
        type(rec) is list
        and len(rec) == 3
        and rec[0] == "X"
        and rec[1] in ("S", "E", "T", "M")
        and type(rec[2]) is str
        and len(rec[2]) <= 200
    )


# A float as ``json.dumps`` spells it (``repr``: at most 17 significant digits, three zeros
# before them below 1e-3), of bounded length: a 60,000-digit duration was copied into the
# zygote's heap by ``float()`` and, freed, read by the next program (``test_attack_v3``).
_FLOAT = rb"-?(?:0|[1-9][0-9]{0,16})(?:\.[0-9]{1,20}(?:[eE][-+]?[0-9]{1,3})?|[eE][-+]?[0-9]{1,3})"
_ESCAPED = rb'(?:[ !#-\[\]-~]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*'  # json.dumps, ASCII
# A cell record exactly as the child's json.dumps writes it: the zygote checks it on the bytes
# it read, never decoding it, so no copy of a program's answer outlives the record in the
# zygote's heap (every later child inherits that heap: a thief scanning its own memory found
# the answers of the programs before it).
CELL_LINE = re.compile(
    rb'\[(0|[1-9][0-9]{0,8}), "([VHEUTM])", ('
    + _FLOAT
    + rb"), ("
    + _FLOAT
    + rb'), "('
    + _ESCAPED
    + rb')"\]'
)
_HEX64 = re.compile(rb"[0-9a-f]{64}")
# The import's records, checked on their bytes too: the zygote never decodes what a child
# wrote, since a decoded copy outlives the check in its heap, which every later child inherits
# (a 60 KiB line after a program's last record reached the next program that way).
READY_LINE = re.compile(rb'\["R", (' + _FLOAT + rb")\]")
ROW_LINE = re.compile(rb'\["X", "([SETM])", "(' + _ESCAPED + rb')"\]')
VALUE_BYTES = 12 * TEXT_CAP  # a value's escaped payload (\\uXXXX pairs: 12 bytes a character)
DETAIL_BYTES = 12 * 200


def is_cell_line(
    buf: bytearray | mmap.mmap, start: int, end: int, expect_idx: int, value_cap: int = VALUE_BYTES
) -> tuple[str, float] | None:
    """``buf[start:end]`` as a cell record for test ``expect_idx`` in the child's own spelling:
    (kind, cpu seconds), or None.  Exact types and ranges as ``is_cell_record``; payload sizes
    in escaped bytes (the sandbox process checks the characters again)."""
    m = CELL_LINE.fullmatch(buf, start, end)
    if m is None or int(m.group(1)) != expect_idx:
        return None
    cpu = float(m.group(4))
    if not (_seconds(float(m.group(3))) and _seconds(cpu)):
        return None
    kind, (p0, p1) = m.group(2).decode(), m.span(5)
    if kind == "H":
        return (kind, cpu) if _HEX64.fullmatch(buf, p0, p1) else None
    return (kind, cpu) if p1 - p0 <= (value_cap if kind == "V" else DETAIL_BYTES) else None


def is_ready_line(buf: bytearray | mmap.mmap, start: int, end: int) -> float | None:
    """``buf[start:end]`` as the child's ready record: the CPU seconds its import took, or
    None.  Checked on the bytes, in the child's own spelling (``is_ready_record``)."""
    m = READY_LINE.fullmatch(buf, start, end)
    if m is None:
        return None
    cpu = float(m.group(1))
    return cpu if _seconds(cpu) else None


def is_row_line(buf: bytearray | mmap.mmap, start: int, end: int) -> tuple[str, int, int] | None:
    """``buf[start:end]`` as a whole-row record in the child's own spelling: (kind, start and
    end of its escaped detail in ``buf``), or None.  The detail is never decoded here; the
    zygote copies its bytes into each cell, and the sandbox process checks its characters."""
    m = ROW_LINE.fullmatch(buf, start, end)
    if m is None:
        return None
    p0, p1 = m.span(2)
    return (m.group(1).decode(), p0, p1) if p1 - p0 <= DETAIL_BYTES else None


def is_cell_record(rec: object, expect_idx: int) -> bool:
    """Exact types and ranges: the index is the int expected next (``true`` equals 1 in
    Python and would index a whole row of a numpy table), durations are finite and
    non-negative, a value is at most TEXT_CAP characters, a hash is 64 hex digits."""
    if type(rec) is not list or len(rec) != 5:
        return False
    idx, kind, dur, cpu, payload = rec
    if type(idx) is not int or idx != expect_idx or type(kind) is not str:
        return False
    if not (_seconds(dur) and _seconds(cpu) and type(payload) is str):
        return False
    if kind == "V":
        return len(payload) <= TEXT_CAP
    if kind == "H":
        return len(payload) == 64 and all(c in "0123456789abcdef" for c in payload)
    return kind in ("E", "U", "T", "M") and len(payload) <= 200
