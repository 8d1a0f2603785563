"""The zygote worker: a small stdlib-only process that forks one child per program.

    python -P -s -S _worker.py   # started once per core by rewardkit.sandbox, never by hand

Why a separate script: fork cost grows with the parent's memory (≈ 18 ms per GiB), so programs
are forked from this small warm process, never from the trainer. It imports only the standard
library (``-P -s -S``: no site-packages, no environment but the sandbox's own) and pre-imports the
modules generated programs use, so every child inherits them for free.

Protocol (one JSON document per line):
- stdin, from the sandbox: ``{"op": "init", ...}`` once, then ``{"op": "tests", "inputs": [...],
  "nproc": n}`` (canonical argument tuples, ``null`` for invalid tests; the children's process
  cap, refreshed per batch) and ``{"op": "job", "row": r, "idxs": [...], "entry": name}``
  followed by the program's source as a raw frame (its UTF-8 bytes, never decoded here).  Each
  message is framed (``_child.frame``, ``raw_frame``) and read to its last byte, never ahead.
  The zygote recognises a tests message on its bytes (``_child.TESTS_HEAD``) and forks a batch
  process for it (``Zygote.run_batch``), which parses it, runs the jobs that follow and hands
  the next tests message back; the zygote itself never decodes a problem's inputs.
- stdout, to the sandbox: ``["alive"]`` while a batch process parses a large batch's tests,
  ``["cells", row, [[idx, kind, duration_s, cpu_s, payload], ...]]``
  with the cells final since the last such line (the child's records, forwarded as they came
  once checked; a TIMEOUT cell may be sent again after its retry), ``["done", row, n_forks,
  peak_rss_kb]`` per job.
- child → zygote pipe: ``["R", cpu_s]`` once the program's module ran, then ``[idx, kind, dur, cpu,
  payload]`` per test in order, spelled exactly as ``json.dumps`` writes it (checked on the
  bytes, ``_child.is_cell_line``, ``is_ready_line``, ``is_row_line``), or ``["X", kind, payload]``
  when the whole row fails (syntax
  error, exception at import).  Anything else is a protocol violation: the child is killed and
  the cell becomes CRASH.  Neither a source nor a record is ever decoded into an object here:
  they stay in buffers zeroed after use, since every later child inherits this heap.

The child never receives expected values: it only computes and serialises actual outputs; the
sandbox process compares them.  Kinds: V value (payload = canonical text), H value too large to
send (payload = its sha256), E exception (type name), U unserialisable return value (type name),
T timeout, M MemoryError, C crash (detail), S syntax error.
"""

from __future__ import annotations

import ctypes
import fcntl
import gc
import json
import mmap
import os
import select
import signal
import sys
import time
from contextlib import suppress

try:
    from ._child import (
        PR_SET_PDEATHSIG,
        SCRIPT,
        TESTS_HEAD,
        child_env,
        is_cell_line,
        is_ready_line,
        is_row_line,
        prepare_seccomp,
        raw_frame,
        read_frame,
        read_raw,
        rlimits,
        run_program,
        setup_child,
        write_all,
    )
    from ._filecap import FileCount
    from ._filter import pid_offsets
    from ._landlock import make_ruleset
    from ._mounts import fresh_tmpfs, pids_only_proc, private_mounts, unmount
    from ._pidreset import caps_held, no_caps, open_counter, reset
    from ._userns import NPROC_OWN_NS, own_user_namespace
    from ._values import parse_literal
except ImportError:  # run as a plain script by the pool: load the siblings by path
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _child import (  # type: ignore[no-redef]
        PR_SET_PDEATHSIG,
        SCRIPT,
        TESTS_HEAD,
        child_env,
        is_cell_line,
        is_ready_line,
        is_row_line,
        prepare_seccomp,
        raw_frame,
        read_frame,
        read_raw,
        rlimits,
        run_program,
        setup_child,
        write_all,
    )
    from _filecap import FileCount  # type: ignore[no-redef]
    from _filter import pid_offsets  # type: ignore[no-redef]
    from _landlock import make_ruleset  # type: ignore[no-redef]
    from _mounts import fresh_tmpfs, pids_only_proc, private_mounts, unmount  # type: ignore[no-redef]
    from _pidreset import caps_held, no_caps, open_counter, reset  # type: ignore[no-redef]
    from _userns import NPROC_OWN_NS, own_user_namespace  # type: ignore[no-redef]
    from _values import parse_literal  # type: ignore[no-redef]

    del sys.path[0]  # programs must not import the sandbox's own modules

# The standard modules programs use.  After the uid drop a child may not be able to read the
# interpreter's files at all (e.g. a Python under /root without a private mount): the probe child
# tries to import each, and those it cannot import are imported by the zygote (``main``).
PRELOAD = (
    "abc",
    "array",
    "bisect",
    "calendar",
    "cmath",
    "collections",
    "contextlib",
    "copy",
    "ctypes",
    "dataclasses",
    "datetime",
    "decimal",
    "encodings.idna",
    "enum",
    "errno",
    "fractions",
    "functools",
    "hashlib",
    "heapq",
    "io",
    "itertools",
    "math",
    "numbers",
    "operator",
    "queue",
    "random",
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
# Always pre-imported, each child inherits them without paying the import: only the most used,
# since every preloaded module makes each fork dearer (its pages are copied and torn down per
# program: ~1.3 ms of CPU per fork with all of the above, ~0.5 ms with these).  Never threading
# or random where the children can import them: their fork handlers run in every child (≈ 0.45
# and 0.12 ms of CPU per fork).
PRELOAD_SLIM = ("bisect", "collections", "copy", "functools", "heapq", "itertools", "math",
                "operator", "re", "string", "struct", "time")  # fmt: skip


def preload(names: tuple[str, ...]) -> None:
    for name in names:
        with suppress(ImportError):
            __import__(name)


LINE_CAP = 1 << 20  # a child record longer than this is a protocol violation
# What the child wrote, and the cells to send, live in two buffers made once and zeroed after
# use: no copy of a program's answer is left in the zygote's heap for a later child to find.
READ_BYTES = 3 * LINE_CAP + (1 << 17)  # a partial line (≤ LINE_CAP) and one drain (≤ 2 MiB)
CELL_BYTES = LINE_CAP + (1 << 16)
POLL_S = 0.02  # how often a running child's pipe is read (its exit wakes the zygote at once)
LATE_S = 0.1  # what a record may take beyond the budget to reach the zygote (see Zygote.late)
PR_SET_CHILD_SUBREAPER = 36
ALIVE_S = 1.0  # a batch process parsing its tests says it is alive this often (``tests``)
SYS_IO_URING_SETUP = 425


# ------------------------------------------------------------------------------ the zygote
class Zygote:
    def __init__(self, cfg: dict) -> None:
        self.cfg = cfg
        self.budget = float(cfg["timeout_s"])
        self.margin = 0.25 + 0.25 * self.budget  # watchdog grace beyond the in-child alarm
        # The in-child alarm can be caught, ignored or cancelled by the program: a record the
        # zygote reads later than this after the previous one (or the fork) is an answer after
        # the budget, hence a timeout.  The allowance covers reading it (every POLL_S).
        self.late = self.budget + LATE_S + 0.05 * self.budget
        self.inputs: list = []
        self.pid = os.getpid()
        self.out: list[bytes] = []
        # Private, never shared: a shared mapping would be one memory for the zygote and every
        # child, and a program could leave data there for the next.
        self.rbuf, self.rlen = _private(READ_BYTES), 0  # the child's bytes, as read
        self.cbuf, self.clen = _private(CELL_BYTES), 0  # cells of the row not yet sent
        self.row = -1
        self.fresh_mb = 0  # a fresh tmpfs per remade work directory (MiB; 0: a plain directory)
        try:
            self.libc: ctypes.CDLL | None = ctypes.CDLL(None, use_errno=True)
        except OSError:
            self.libc = None

    def trim(self) -> None:
        """Give the heap's free pages back to the kernel (glibc's ``malloc_trim``): a fork
        copies the page table entry of every page the zygote holds and each child's exit tears
        it down again, ≈ 40–50 µs of CPU per program for each MiB held (measured)."""
        if self.libc is not None:
            with suppress(AttributeError):  # not glibc
                self.libc.malloc_trim(0)

    # ------------------------------------------------------------------ setup and levels
    def start(self) -> list[str]:
        """Set up once per worker, then verify with a probe child what really holds."""
        levels = ["rlimits"]
        cfg = self.cfg
        if self.libc is not None:
            self.libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # orphans come back to us
        # This worker's cores: every child inherits them and cannot leave them (the allow-list
        # refuses sched_setaffinity), so a program's threads cannot take the other workers'.
        if cfg.get("cpus"):
            with suppress(OSError):
                os.sched_setaffinity(0, cfg["cpus"])
        # Programs get a fresh directory each inside this one (emptied after every program).
        self.base = _mkdtemp()
        if cfg.get("private_tmp"):  # bubblewrap's /tmp, as an ordinary user the programs' own:
            os.chmod(os.path.dirname(self.base), 0o555)  # nothing else is made there (_confine)
        # Landlock alone, as root: a private mount namespace gives the work directories a
        # size-capped tmpfs and the dropped uid a way to the interpreter (``_mounts``).
        self.mounted = 0  # MiB of the tmpfs mounted on the base (0: none)
        if cfg.get("private_mounts") and self.libc is not None:
            gained = private_mounts(self.libc, self.base, cfg["read"], cfg["private_mounts"])
            self.mounted = cfg["private_mounts"] if gained else 0
            levels += gained
        # Landlock as an ordinary user: a user namespace of the worker's own, so the process cap
        # counts this worker's tasks alone, not every worker's of the same uid (``_userns``).
        # Its work directories in a tmpfs of the namespace's own (``write-cap``), where the
        # kernel lets the namespace mount one.
        self.own_ns, self.leftover = False, ""
        if cfg.get("own_userns") and cfg["uid"] is None and self.libc is not None:
            self.own_ns, capped = own_user_namespace(
                self.libc, cfg["read"], self.base, cfg.get("userns_tmpfs", 0)
            )
            if self.own_ns:
                cfg["nproc"] = NPROC_OWN_NS
            if capped:
                levels.append("write-cap")
                self.mounted = cfg["userns_tmpfs"]  # unmounted at the end; a killed worker's
                self.leftover = self.base  # mount point is left empty: the pool removes it
        # Landlock without that tmpfs: the entries a program creates are counted (``_filecap``).
        self.files: FileCount | None = None
        if cfg.get("file_cap") and "write-cap" not in levels and self.libc is not None:
            with suppress(OSError):
                self.files = FileCount(self.libc, cfg["file_cap"])
        os.chmod(self.base, 0o711 if cfg["uid"] is not None else 0o700)
        # In a private mount namespace that this zygote may mount in (bubblewrap's, or
        # ``private_mounts``'), each work directory is a tmpfs of its own on one mount point: a
        # new file system's inode numbers start afresh, so none carries a count from the
        # program before (``fresh_tmpfs``).  Nothing is made beside it: the directory above is
        # root's (0711) or, as an ordinary user, read-only (0500; chmod is refused by seccomp).
        mb = cfg.get("fresh_tmpfs") or self.mounted
        if mb and self.libc is not None and self.files is None:
            owner = os.getuid() if cfg["uid"] is None else cfg["uid"]
            os.mkdir(os.path.join(self.base, "w"), 0o700)  # the mount point, for good
            try:
                fresh_tmpfs(self.libc, os.path.join(self.base, "w"), mb, owner)
                self.fresh_mb = mb
                levels.append("fresh-tmpfs")
                if cfg["uid"] is None:
                    os.chmod(self.base, 0o500)
            except OSError:
                os.rmdir(os.path.join(self.base, "w"))
        self.serial = 0
        cfg["workdir"] = self._fresh_dir()
        self.ruleset = -1
        if cfg.get("landlock", 0) and self.libc is not None:
            fd, _ = make_ruleset(
                self.libc, cfg["landlock"], cfg["read"], [self.base], cfg["hidden"],
                cfg["syspath"], make_dirs=self.files is None
            )  # fmt: skip
            self.ruleset = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100)  # clear of fds 0-4
            os.close(fd)
        for ns in ("user", "pid", "ipc", "net"):
            host = cfg.get("host_ns", {}).get(ns)
            with suppress(OSError):
                if host and os.readlink(f"/proc/self/ns/{ns}") != host:
                    levels.append(f"{ns}-ns")
        # Every program gets the same pid (and its threads the same ids) where this zygote may
        # set its private pid namespace's counter back before each fork (``_pidreset``).
        self.last_pid, self.pid_word = -1, b"%d" % self.pid
        if "pid-ns" in levels:
            self.last_pid = open_counter(self.pid)
        # Its /proc then shows the processes alone: the host-wide counters (/proc/stat, vmstat,
        # meminfo, sys) were hidden only by Landlock (``_mounts.pids_only_proc``).
        self.proc_pids = False
        if "pid-ns" in levels and self.libc is not None:
            self.proc_pids = pids_only_proc(self.libc)
        if cfg["uid"] is None and self.libc is not None and caps_held(self.libc):
            cfg["_nocaps"] = no_caps()  # bubblewrap's capability: every child drops it
        # Once per worker rather than once per program: the filter's bytes and where its pid
        # goes, /dev/null, SIGXFSZ ignored; the environment is set with each work directory.
        if cfg["bpf"]:
            bpf = bytes.fromhex(cfg["bpf"])
            cfg["_seccomp"] = prepare_seccomp(bpf, pid_offsets(bpf))
        devnull = os.open(os.devnull, os.O_RDWR)
        cfg["_devnull"] = fcntl.fcntl(devnull, fcntl.F_DUPFD_CLOEXEC, 100)
        os.close(devnull)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        cfg["_rlimits"] = rlimits(cfg)
        cfg["_prepared"] = True
        os.environ.clear()
        os.environ.update(child_env(cfg["workdir"]))
        probe = self._probe()
        missing = probe.get("not_importable")
        self.not_importable: tuple[str, ...] = PRELOAD  # the probe said nothing: all of them
        if type(missing) is list and all(type(m) is str and m in PRELOAD for m in missing):
            self.not_importable = tuple(missing)
        if cfg["uid"] is not None and probe.get("uid") == cfg["uid"]:
            levels.append("uid-drop")
        elif cfg["uid"] is not None:
            cfg["uid"] = None  # the drop failed: report it, do not pretend
        if probe.get("hidden"):
            levels.append("reads-confined")
        if self.last_pid >= 0 and probe.get("pid") == self.pid + 1:
            levels.append("pid-reset")
        elif self.last_pid >= 0:  # not verified: not done either
            os.close(self.last_pid)
            self.last_pid = -1
        if self.proc_pids and probe.get("proc_counters") is False:
            levels.append("proc-pids")
        if self.ruleset >= 0 and probe.get("landlock"):
            levels.append("landlock")
        if cfg["bpf"] and probe.get("fork_blocked") and probe.get("io_uring_blocked"):
            levels.append("seccomp-allowlist")
        if cfg.get("cpus") and probe.get("cpus") == cfg["cpus"] and probe.get("pin_fixed"):
            levels.append("cpu-pin")
        if self.files is not None and self.ruleset >= 0 and probe.get("mkdir_refused"):
            levels.append("file-cap")
        elif self.files is not None:  # not verified: not enforced either
            os.close(self.files.fd)
            self.files = None
        unreachable = probe.get("unreachable")
        self.unreachable = unreachable if type(unreachable) is list else []
        return levels

    def _spawn(self) -> int:
        """``os.fork``, with the pid namespace's counter set back first where ``pid-reset``
        holds, so that every child gets the same pid."""
        if self.last_pid >= 0:
            reset(self.last_pid, self.pid_word)
        return os.fork()

    def _fresh_dir(self) -> str:
        self.serial += 1
        # One name for every work directory: a serial in it counted the directories remade so
        # far, which every later program could read (``tests/sandbox/test_covert.py``).
        path = os.path.join(self.base, "w")
        if self.fresh_mb and self.libc is not None:
            uid = self.cfg["uid"]
            fresh_tmpfs(self.libc, path, self.fresh_mb, os.getuid() if uid is None else uid)
        else:
            os.mkdir(path, 0o700)
            if self.cfg["uid"] is not None:
                os.chown(path, self.cfg["uid"], self.cfg["uid"])
        if self.files is not None:
            self.files.watch(path)
            # The directory of work directories is the Landlock rule's (all of it writable) and,
            # as an ordinary user, the children's own: not writable while a program runs, or its
            # entries would land beside the watched directory, uncounted (``_wipe`` reopens it).
            os.chmod(self.base, 0o511 if self.cfg["uid"] is not None else 0o500)
        self.stamps = (_stamp(self.base), _stamp(path))
        if self.cfg.get("_prepared"):
            os.environ.clear()
            os.environ.update(child_env(path))
        return path

    def _pristine(self) -> bool:
        """The work directory and its parent exactly as made: no entry, no change of any
        timestamp (a file made and removed moves mtime; chmod, chown, xattrs move ctime)."""
        path = self.cfg["workdir"]
        try:
            fd = _open_noatime(path)  # this listing must not move the atime it compares
            try:
                with os.scandir(fd) as it:
                    if next(it, None) is not None:
                        return False
            finally:
                os.close(fd)
            return (_stamp(self.base), _stamp(path)) == self.stamps
        except OSError:
            return False

    def _probe(self) -> dict:
        """Fork a child with the full setup and ask it what holds: its uid, whether fork and
        io_uring are refused, whether a host file outside the readable paths is hidden, and
        whether Landlock refuses a directory listing of /."""
        r, w = os.pipe()
        pid = self._spawn()
        if pid == 0:
            try:
                os.close(r)
                fd = setup_child(self.cfg, w, 1, self.libc, self.ruleset)
                out: dict = {"uid": os.getuid(), "pid": os.getpid()}
                try:
                    child = os.fork()
                    if child == 0:
                        os._exit(0)
                    os.waitpid(child, 0)
                    out["fork_blocked"] = False
                except PermissionError:
                    out["fork_blocked"] = True
                if self.libc is not None:
                    params = ctypes.create_string_buffer(120)
                    rc = self.libc.syscall(ctypes.c_long(SYS_IO_URING_SETUP), 8, params)
                    out["io_uring_blocked"] = rc < 0 and ctypes.get_errno() == 1  # EPERM
                canary = self.cfg.get("canary", "")
                out["hidden"] = bool(canary) and not _readable(canary)
                out["landlock"] = not _readable("/", listing=True)
                # Unconfined (basic) reads list nothing: the interpreter's standard library
                # is checked then (a dropped uid below a private home imports only PRELOAD).
                paths = self.cfg["read"] or [os.path.dirname(os.__file__)]
                out["unreachable"] = [p for p in paths if not _exists(p)]
                try:
                    os.mkdir("rk-probe")
                    out["mkdir_refused"] = False
                except OSError:
                    out["mkdir_refused"] = True
                out["proc_counters"] = _readable("/proc/stat") or _readable("/proc/vmstat")
                out["cpus"] = sorted(os.sched_getaffinity(0))
                try:  # a program cannot leave its worker's cores
                    os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
                    out["pin_fixed"] = False
                except PermissionError:
                    out["pin_fixed"] = True
                except OSError:
                    out["pin_fixed"] = False
                out["not_importable"] = _not_importable(PRELOAD)
                write_all(fd, json.dumps(out).encode())
            except BaseException as e:
                with suppress(BaseException):
                    write_all(w, json.dumps({"error": repr(e)[:300]}).encode())
            finally:
                os._exit(0)
        os.close(w)
        data = b""
        while chunk := os.read(r, 4096):
            data += chunk
        os.close(r)
        os.waitpid(pid, 0)
        self._sweep()
        if not self.fresh_mb:
            _wipe(self.base)
        self.cfg["workdir"] = self._fresh_dir()
        try:
            out = json.loads(data)
        except ValueError:
            return {}
        return out if type(out) is dict else {}

    # ------------------------------------------------------------------------- batches
    def run_batch(self, body: bytearray) -> bytearray | None:
        """Fork the batch process for one ``tests`` message (``body``, its bytes, zeroed here
        once forked) and wait for it to end; the message that ended it, as read (None at the
        end of input, or when the batch process died: the worker then stops and is replaced).

        The zygote itself never decodes a batch's tests: decoded and parsed here, they would
        be freed, not zeroed, and the next problem's programs, forked from this heap, could
        scan it for them (an earlier problem's inputs may be this one's answers).  The batch
        process parses them and forks that batch's children; when it exits, its memory goes
        with it."""
        r, w = os.pipe()
        r, w = _high_fd(r), _high_fd(w)
        pid = self._spawn()
        if pid == 0:
            code = 1
            try:
                os.close(r)
                self.batch(body, w)
                code = 0
            except BaseException:
                sys.excepthook(*sys.exc_info())  # to the worker's stderr, as before
            finally:
                os._exit(code)
        os.close(w)
        body[:] = bytes(len(body))
        try:
            nxt = read_raw(r)
        finally:
            os.close(r)
        with suppress(ChildProcessError):
            os.waitpid(pid, 0)
        self._sweep()
        self._renew_workdir()  # the batch process remade it: this process's stamps are stale
        return nxt

    def batch(self, body: bytearray, back: int) -> None:
        """The batch process: parse the tests, then run the jobs that follow on fd 0 until
        the next message that is not a job, which goes back to the zygote on ``back``."""
        if self.libc is not None:
            self.libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            self.libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # its children's orphans
        zygote, self.pid = self.pid, os.getpid()
        if os.getppid() != zygote:  # the zygote died before the death signal was set
            return
        self.pid_word = b"%d" % self.pid  # its children get the pid after its own
        # The zygote's buffers are not inherited (MADV_DONTFORK): this process's own.  The
        # zygote's objects are kept, never freed: freeing one unmaps its range, where the kernel
        # may just have put the new buffer.
        self.unmapped = (self.rbuf, self.cbuf)
        self.rbuf, self.cbuf = _private(READ_BYTES), _private(CELL_BYTES)
        try:
            msg = json.loads(body)
        finally:
            body[:] = bytes(len(body))
        self.tests(msg)
        del msg
        try:
            while (raw := read_raw(0)) is not None:
                if raw.startswith(TESTS_HEAD):
                    write_all(back, raw_frame(raw))
                    break
                try:
                    msg = json.loads(raw)
                finally:
                    raw[:] = bytes(len(raw))
                if msg["op"] != "job":  # quit
                    break
                src = read_raw(0)  # never decoded here: the child decodes its own
                if src is None:
                    break
                try:
                    self.job(msg["row"], src, msg["idxs"], msg["entry"])
                finally:
                    src[:] = bytes(len(src))
        finally:
            self._sweep()

    def tests(self, msg: dict) -> None:
        """A batch's tests (in the batch process): the inputs parsed once, the children's
        limits refreshed."""
        # Parsing takes about 1.6 s per MB of input: a large batch says it is alive every
        # second, or the pool would take the silence for a stall and replace the worker, again
        # at every try (20 tests of 810 KB each: every cell CRASH, minutes lost).
        self.inputs, said = [], time.monotonic()
        for t in msg["inputs"]:
            self.inputs.append(None if t is None else parse_literal(t))
            if time.monotonic() - said > ALIVE_S:
                write_all(1, b'["alive"]\n')
                said = time.monotonic()
        if not self.own_ns:  # the uid's count drifts: refreshed per batch
            self.cfg["nproc"] = msg.get("nproc", self.cfg["nproc"])
        self.cfg["_rlimits"] = rlimits(self.cfg)
        self.trim()  # what decoding and parsing the tests freed

    # ---------------------------------------------------------------------------- jobs
    def emit(self, rec: list) -> None:
        self.out.append((json.dumps(rec) + "\n").encode())

    def cell(self, i: int, kind: str, dur: float, payload: str) -> None:
        """A cell the zygote decided itself (a whole-row failure, a timeout, a crash)."""
        data = json.dumps([i, kind, dur, 0.0, payload]).encode()
        self._put(data, 0, len(data))

    def _put(self, src: bytes | mmap.mmap, start: int, end: int) -> None:
        """Copy ``src[start:end]``, one cell record, into the cells to send."""
        self._put_parts(((src, start, end),))

    def _put_row(self, i: int, kind: str, p0: int, p1: int) -> None:
        """Test ``i``'s cell of a whole-row record, its detail copied from the read buffer's
        escaped bytes ``[p0, p1)`` as the child wrote them (never decoded here)."""
        head = b'[%d, "%s", 0.0, 0.0, "' % (i, kind.encode())
        self._put_parts(((head, 0, len(head)), (self.rbuf, p0, p1), (b'"]', 0, 2)))

    def _put_parts(self, parts: tuple) -> None:
        """Copy the slices ``(src, start, end)``, together one cell record, into the cells to
        send."""
        n = sum(end - start for _, start, end in parts)
        if self.clen + n + 2 > CELL_BYTES:
            self._send_cells()
        cb, k = self.cbuf, self.clen
        if k:
            cb[k : k + 2] = b", "
            k += 2
        for src, start, end in parts:
            cb[k : k + end - start] = memoryview(src)[start:end]
            k += end - start
        self.clen = k

    def _send_cells(self) -> None:
        """One ``["cells", row, [...]]`` line (the child's records forwarded byte for byte, each
        checked by ``is_cell_line``), written from the buffer, which is then zeroed."""
        if self.clen:
            head = b'["cells", %d, [' % self.row
            _writev_all(1, [head, memoryview(self.cbuf)[: self.clen], b"]]\n"])
            self.cbuf[: self.clen] = bytes(self.clen)
            self.clen = 0

    def flush(self) -> None:
        """The cells final since the last flush, then the rest."""
        self._send_cells()
        if self.out:
            write_all(1, b"".join(self.out))
            self.out.clear()

    def job(self, row: int, src: bytearray, idxs: list, entry: str) -> None:
        self.row = row
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
        self.emit(["done", row, forks, _status_kb("VmHWM")])
        self.flush()

    def _fork(
        self,
        row: int,
        src: bytearray,
        pending: list,
        entry: str,
        timed_out: list,
        stop_on_timeout: bool,
    ) -> list:
        """Run ``pending`` in one child; return the tests still to run in a fresh child."""
        files = self.files
        if files is not None:
            files.reset()
        r, w = os.pipe()
        pid = self._spawn()
        if pid == 0:
            try:
                os.close(r)
                stdin = [self.inputs[i][0] for i in pending] if entry == SCRIPT else None
                fd = setup_child(self.cfg, w, len(pending), self.libc, self.ruleset, stdin)
                run_program(src, pending, entry, self.inputs, self.budget, fd)
            finally:
                os._exit(0)
        os.close(w)
        t_start = time.monotonic()
        deadline = t_start + self.budget + self.margin
        pos, ready, rest = 0, False, []
        rb = self.rbuf
        kill_reason, cpu_seen, window_cpu = "", 0.0, 0.0
        # Lateness is judged on what the zygote saw, never on its own delays: ``last`` is when
        # the previous record was read (the next test began before), ``quiet`` the latest read
        # since then that found no whole line (the record was not written yet).  A zygote slow
        # to wake makes no record late.
        last = quiet = t_start
        # A pidfd turns readable when the child exits, even if a grandchild still holds the pipe.
        # With one, the zygote sleeps on the exit and looks at the pipe every POLL_S: a fast
        # program's 33 records cost one wake-up, not 33 (each a context switch on a busy box).
        pfd = _pidfd(pid)
        os.set_blocking(r, False)
        exited = False
        while True:
            now = time.monotonic()
            if now >= deadline:
                kill_reason = "watchdog"
                break
            if pfd >= 0 and files is None:
                exited = bool(select.select([pfd], [], [], min(deadline - now, POLL_S))[0])
            elif pfd >= 0 and files is not None:  # woken by the exit or by an entry created
                woke = select.select([pfd, files.fd], [], [], min(deadline - now, POLL_S))[0]
                exited = pfd in woke
                if files.over():
                    kill_reason = "files"
                    break
            elif not select.select([r], [], [], deadline - now)[0]:
                continue
            before = time.monotonic()
            got, eof = self._drain(r)
            if pfd < 0 and eof:
                exited = True
            if not got and eof and not exited:
                break  # the child closed its pipe: it exited or is about to
            if not got and not exited:
                quiet = before
                continue
            start = 0
            while (nl := rb.find(b"\n", start, self.rlen)) >= 0:
                line, start = (start, nl), nl + 1
                now = time.monotonic()
                # Every record is checked on its bytes, never decoded: a decoded copy of what
                # a program wrote would outlive the check in this heap, which the next
                # program inherits (``test_attack_v3``: a line after the last record).
                cell = whole = None
                ready_cpu = -1.0
                if ready and pos < len(pending):
                    cell = is_cell_line(rb, line[0], line[1], pending[pos])
                elif not ready:
                    got_cpu = is_ready_line(rb, line[0], line[1])
                    ready_cpu = -1.0 if got_cpu is None else got_cpu
                    if got_cpu is None:
                        whole = is_row_line(rb, line[0], line[1])
                if ready_cpu >= 0 and quiet - last > self.late:
                    for i in pending[pos:]:  # its import outlived the budget
                        self.cell(i, "T", quiet - last, "")
                        timed_out.append((i, 0.0))
                    pos = len(pending)
                elif ready_cpu >= 0:
                    ready, deadline = True, now + self.budget + self.margin
                    cpu_seen, last = ready_cpu, now
                    quiet = now
                elif whole is not None:  # the import failed: every test gets its record
                    row_kind, p0, p1 = whole
                    for i in pending[pos:]:
                        self._put_row(i, row_kind, p0, p1)
                        if row_kind == "T":
                            timed_out.append((i, 0.0))
                    pos = len(pending)
                elif cell is not None:
                    i, (kind, cpu) = pending[pos], cell
                    if kind != "T" and quiet - last > self.late:  # an answer after the budget
                        kind = "T"
                        self.cell(i, kind, quiet - last, "")
                    else:
                        self._put(rb, line[0], line[1])
                    last = quiet = now
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
            if not start:  # no whole line yet: the next record was not written at ``before``
                quiet = before  # (bytes of a line dribbled out do not make it written)
            self._consume(start)
            if self.rlen > LINE_CAP:
                kill_reason = "violation"
            if kill_reason or exited or pos >= len(pending):
                break
            self.flush()
        self._consume(self.rlen)  # what a killed child left unread
        os.close(r)
        if kill_reason == "watchdog":
            window_cpu = _cpu_time(pid) - cpu_seen  # CPU the child got since its last record
        status = self._reap(pid, pfd)
        if pfd >= 0:
            os.close(pfd)
        if pos < len(pending):
            i, elapsed = pending[pos], time.monotonic() - t_start
            if kill_reason == "watchdog" or _signal_of(status) == signal.SIGXCPU:
                cells = pending[pos:] if not ready or stop_on_timeout else [i]
                for j in cells:
                    self.cell(j, "T", elapsed, "")
                    timed_out.append((j, window_cpu))
                pos += len(cells) - 1
            elif kill_reason == "violation":
                self.cell(i, "C", elapsed, "protocol violation")
            elif kill_reason == "files" and files is not None:
                self.cell(i, "C", elapsed, files.detail()[:200])
            else:
                self.cell(i, "C", elapsed, _describe(status, ready))
            rest = pending[pos + 1 :]
        self.flush()
        return rest

    def _drain(self, fd: int) -> tuple[int, bool]:
        """Read what the non-blocking ``fd`` holds now into the read buffer (at most one drain
        of 2 MiB: a grandchild may keep writing); the bytes read and whether it reached EOF."""
        view, got = memoryview(self.rbuf), 0
        while got <= 2 * LINE_CAP and self.rlen < READ_BYTES:
            try:
                n = os.readv(fd, [view[self.rlen : min(READ_BYTES, self.rlen + (1 << 16))]])
            except BlockingIOError:
                break
            if not n:
                return got, True
            self.rlen += n
            got += n
        return got, False

    def _consume(self, n: int) -> None:
        """Drop the first ``n`` bytes read (handled lines): the rest moves to the front, and
        the bytes after it are zeroed."""
        rest = self.rlen - n
        if n:
            if rest:
                self.rbuf.move(0, n, rest)
            self.rbuf[rest : self.rlen] = bytes(n)
        self.rlen = rest

    def _reap(self, pid: int, pfd: int = -1) -> int:
        """Kill the child's process group, reap it, then every orphan it left (we are their
        subreaper), and empty the work directory."""
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        status = self._wait_killing(pid, pfd)
        self._sweep()
        self._renew_workdir()
        return status

    def _renew_workdir(self) -> None:
        """Nothing a program wrote, chmodded or stamped reaches the next: a new directory each,
        unless nothing at all changed (no entry, same mtime and ctime: a pristine directory
        carries nothing), which saves a rmdir and a mkdir on most programs."""
        if not self._pristine():
            if not self.fresh_mb:
                _wipe(self.base)
            elif _stamp(self.base) != self.stamps[0]:
                self._restore_base()
            self.cfg["workdir"] = self._fresh_dir()

    def _restore_base(self) -> None:
        """With a fresh tmpfs per work directory, the directory above it changed.  Nothing can be
        made there (0711 root's, or 0500 with chmod refused), so a listing (its atime alone) is
        what happens: undone in place, the mount point kept (remade, its inode number would count
        the listings).  Anything else (only with seccomp's refusals removed) is wiped whole."""
        now, was = _stamp(self.base), self.stamps[0]
        w = os.path.join(self.base, "w")
        if now[:-1] == was[:-1] and os.listdir(self.base) == ["w"]:
            os.utime(self.base)
            return
        os.chmod(self.base, 0o700)  # a base chmodded to 000 cannot be passed to reach w
        if self.libc is not None:
            unmount(self.libc, w)
        _wipe(self.base)
        os.mkdir(w, 0o700)
        if self.cfg["uid"] is None:
            os.chmod(self.base, 0o500)

    def _wait_killing(self, pid: int, pfd: int) -> int:
        """The exit status of the killed child ``pid``.  Never a wait on it alone: where a
        program may trace (basic isolation), a process of its own outside its process group
        that traces it holds its exit until that tracer dies, and a blocking wait stalled the
        zygote until the pool gave the worker up, while the tracer outlived the sandbox.  Each
        pass that finds the child not yet reaped kills our other children (the tracer is one as
        soon as its parent died), then sleeps on the child's exit."""
        for n in range(100_000):
            got, status = os.waitpid(pid, os.WNOHANG)
            if got:
                return status
            if n:
                self._kill_children()
            if pfd >= 0:
                select.select([pfd], [], [], 0.01)
            else:
                time.sleep(0.001)
        return os.waitpid(pid, 0)[1]

    def _kill_children(self) -> list[int]:
        """SIGKILL to each child of ours and its process group; the children found."""
        kids = _children(self.pid)
        for k in kids:
            for kill in (os.killpg, os.kill):
                with suppress(ProcessLookupError, PermissionError):
                    kill(k, signal.SIGKILL)
        return kids

    def _sweep(self) -> None:
        """Kill and reap every process left below us.  All are killed before any is waited
        for, and no wait blocks: a traced process is reaped only once its tracer (another of
        them, or a descendant that becomes our child when its parent dies) is dead too.

        First one ``waitpid``: with no child at all (ECHILD: most programs) there is nothing
        below us either, since we are the subreaper: the topmost living descendant of a dead
        process is always our child.  Only then is the list of children read from /proc."""
        try:
            os.waitpid(-1, os.WNOHANG)  # a zombie is reaped here, the living are killed below
        except ChildProcessError:
            return
        for _ in range(10_000):
            kids = self._kill_children()
            if not kids:
                break
            reaped = False
            for k in kids:
                with suppress(ChildProcessError):
                    reaped = os.waitpid(k, os.WNOHANG)[0] != 0 or reaped
            if not reaped:
                time.sleep(0.001)
        while True:  # zombies that exited by themselves
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break


def _not_importable(names: tuple[str, ...]) -> list[str]:
    """Those of ``names`` a confined child cannot import itself (run in the probe child)."""
    failed = []
    for name in names:
        if name not in sys.modules:
            try:
                __import__(name)
            except Exception:
                failed.append(name)
    return failed


def _mkdtemp() -> str:
    """A new private directory under $TMPDIR or /tmp (``tempfile.mkdtemp`` without importing
    tempfile, which brings ``random`` and its fork handler into the zygote)."""
    top = os.environ.get("TMPDIR") or "/tmp"
    for _ in range(100):
        path = os.path.join(top, "rk-sandbox-" + os.urandom(8).hex())
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"no free directory name under {top}")


def _read_proc(path: str) -> bytes:
    """A /proc file's bytes through plain system calls (no file objects: this runs after every
    program, in the zygote, whose every touched page is a copy-on-write fault after a fork)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        out = b""
        while chunk := os.read(fd, 1 << 16):
            out += chunk
        return out
    finally:
        os.close(fd)


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in _read_proc(f"/proc/{pid}/task/{pid}/children").split()]
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


def _stamp(path: str) -> tuple:
    """What a program could change of a directory and the next read.  The access time too:
    a listing moves it alone (once, under relatime), at a time the lister chose."""
    st = os.stat(path, follow_symlinks=False)
    return (st.st_ino, st.st_mode, st.st_uid, st.st_nlink, st.st_mtime_ns, st.st_ctime_ns,
            st.st_atime_ns)  # fmt: skip


def _open_noatime(path: str) -> int:
    """A directory fd whose reads leave its access time alone (the owner's or root's right;
    a plain fd where the kernel refuses)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    try:
        return os.open(path, flags | os.O_NOATIME)
    except PermissionError:
        return os.open(path, flags)


def _exists(path: str) -> bool:
    """Whether this process can reach ``path`` at all (search permission on every directory
    above it; Landlock does not restrict that)."""
    try:
        os.stat(path)
        return True
    except OSError:
        return False


def _readable(path: str, listing: bool = False) -> bool:
    try:
        if listing:
            os.listdir(path)
        else:
            os.close(os.open(path, os.O_RDONLY))
        return True
    except OSError:
        return False


def _wipe(top: str) -> None:
    """Empty ``top`` whatever a program left in it: any depth (1,500 nested directories, paths
    longer than PATH_MAX), any mode, symlinks never followed; its own mode, times and xattrs
    reset.  Iterative and fd-relative: each directory's subdirectories are first moved up into
    ``top``, so depth never grows a stack."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    mode = 0o700 if os.geteuid() != 0 else 0o711
    try:
        top_fd = os.open(top, flags)
    except PermissionError:  # without a uid drop the programs own it: they made it mode 000
        try:
            os.chmod(top, mode)
            top_fd = os.open(top, flags)
        except OSError:
            return
    except OSError:
        return
    moved = 0
    try:
        # Restore a chmodded top, and (the programs may own it, as above) its times and xattrs,
        # which could carry data to the next program (an atime survives a noatime mount).
        os.fchmod(top_fd, mode)
        with suppress(OSError):
            os.utime(top_fd)
        with suppress(OSError):  # a file system without xattrs
            for name in os.listxattr(top_fd):
                with suppress(OSError):
                    os.removexattr(top_fd, name)
        for _ in range(1_000_000):  # each pass removes at least one entry
            with os.scandir(top_fd) as it:
                entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
            if not entries:
                break
            for name, is_dir in entries:
                if not is_dir:
                    with suppress(OSError):
                        os.unlink(name, dir_fd=top_fd)
                    continue
                with suppress(OSError):
                    os.chmod(name, 0o700, dir_fd=top_fd)  # a dir the program made unreadable
                try:
                    d = os.open(name, flags, dir_fd=top_fd)
                except OSError:
                    continue
                try:
                    with os.scandir(d) as it:
                        subs = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
                    for sub, sub_is_dir in subs:
                        with suppress(OSError):
                            if sub_is_dir:
                                moved += 1
                                os.rename(sub, f".rk-{moved}", src_dir_fd=d, dst_dir_fd=top_fd)
                            else:
                                os.unlink(sub, dir_fd=d)
                finally:
                    os.close(d)
                with suppress(OSError):
                    os.rmdir(name, dir_fd=top_fd)
    finally:
        os.close(top_fd)


def _status_kb(field: str) -> int:
    """A memory figure of this process from /proc/self/status, in KiB (0 when absent).

    The worker's own peak is ``VmHWM`` (the high-water mark of its own address space).  Not
    ``ru_maxrss``: the kernel carries the maximum of the address space a process replaced at
    ``exec`` into it, so a worker started (vfork + exec) from a large caller would report the
    caller's peak as its own."""
    key = field.encode() + b":"
    for line in _read_proc("/proc/self/status").split(b"\n"):
        if line.startswith(key):
            return int(line.split()[1])
    return 0


def _high_fd(fd: int) -> int:
    """``fd`` moved to 100 or above (close-on-exec), clear of the fds a child sets up."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100)
    os.close(fd)
    return high


def _pidfd(pid: int) -> int:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return -1


def _private(size: int) -> mmap.mmap:
    """Anonymous memory of this process alone (``mmap(-1, n)`` is MAP_SHARED: forked children
    would write into it), and not inherited at all: a fork copies no page table entry of it
    (every page a large record once touched would be copied at every later fork), and a child
    has nothing mapped there to read."""
    buf = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
    with suppress(AttributeError, OSError):  # MADV_DONTFORK: Linux 2.6.16+
        buf.madvise(mmap.MADV_DONTFORK)
    return buf


# The child's test loop, run by the zygote before its first fork (``rehearse``).
REHEARSAL = b"def f(x):\n    return (x, [x * 0.5, str(x), None, True], {'k': {x}})\n"
REHEARSAL_RUNS = 10  # CPython quickens a function's code on its 8th call


def rehearse() -> None:
    """Run the child's test loop (``run_program``) here, on a fixed program of our own with its
    records sent to /dev/null, so that the interpreter quickens that code and fills its type
    and attribute caches once, in the zygote, instead of in every child: each child copies
    every page it writes, and otherwise wrote the loop's code objects (their warm-up counters,
    then the quickened instructions) and the caches anew.  Nothing of a user's program is
    involved; the alarm and its handler are put back as they were."""
    fd = os.open(os.devnull, os.O_WRONLY)
    handler = signal.getsignal(signal.SIGALRM)
    try:
        inputs = [(j,) for j in range(8)]
        for _ in range(REHEARSAL_RUNS):
            run_program(bytearray(REHEARSAL), list(range(8)), "f", inputs, 60.0, fd)
    except Exception:  # only a saving: a worker that cannot rehearse still works
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, handler)
        os.close(fd)


def _writev_all(fd: int, parts: list) -> None:
    views = [memoryview(p) for p in parts]
    while views:
        n = os.writev(fd, views)
        while views and n >= len(views[0]):
            n -= len(views.pop(0))
        if views and n:
            views[0] = views[0][n:]


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
    # Messages are read from fd 0 to their last byte, never ahead (``read_frame``).
    cfg = read_frame(0)
    if cfg is None:
        return
    preload(PRELOAD_SLIM)
    z = Zygote(cfg)
    if z.libc is not None and not cfg.get("bwrap"):
        z.libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    levels = z.start()
    # What the probe child could not import itself (after the uid drop a Python under /root
    # may be unreadable, unless a private mount opened it) is imported here, so every child
    # inherits it; what it could import stays out (fork handlers and size cost every fork).
    preload(z.not_importable)
    rehearse()
    z.trim()
    # Everything loaded so far is permanent: the collector never walks it, so children do not
    # copy the zygote's pages just to scan them (copy-on-write stays cheap).
    gc.freeze()
    z.emit(["ready", levels, os.getpid(), _status_kb("VmRSS"), z.unreachable, z.leftover])
    z.flush()
    try:
        # Each tests message starts a batch process that runs the jobs after it (``run_batch``);
        # anything else here (quit, or a job before any tests) ends the worker.
        body = read_raw(0)
        while body is not None and body.startswith(TESTS_HEAD):
            body = z.run_batch(body)
        if body is not None:
            body[:] = bytes(len(body))
    finally:
        z._sweep()
        if z.fresh_mb and z.libc is not None:
            unmount(z.libc, os.path.join(z.base, "w"))
        _wipe(z.base)
        if z.mounted and z.libc is not None:
            unmount(z.libc, z.base)
        with suppress(OSError):
            os.rmdir(z.base)


if __name__ == "__main__":
    main()
