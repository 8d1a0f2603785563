"""The zygote pool: starts the workers once, hands them rows, and watches them.

``LocalPool(timeout_s, memory_mb, workers, isolation).execute(programs, inputs, entry)`` returns
raw cells ``(row, idx, kind, duration_s, payload)``; comparing them with expected values is the
caller's job (the workers never see expected values).  Each worker is a fresh interpreter
(``python -P -s -S _worker.py``), started with ``subprocess`` — never forked from this process,
whose memory may be large — and wrapped in bubblewrap when ``bwrap`` is installed.
"""

from __future__ import annotations

import json
import os
import select
import selectors
import subprocess
import time
from collections import deque
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import RewardkitError
from . import _worker  # noqa: F401  # imported here so that its compiled file exists (_zygote)
from ._child import frame, raw_frame, write_all
from ._confine import INSTALL_HINT, WRITE_CAP_MB, plan

__all__ = ["LEVEL_ORDER", "LocalPool"]

# The zygote's script: a launcher that imports ``_worker`` (compiled once, not at every start).
WORKER = Path(__file__).with_name("_zygote.py")
LEVEL_ORDER = ("rlimits", "uid-drop", "user-ns", "pid-ns", "pid-reset", "proc-pids", "ipc-ns",
               "net-ns", "bwrap", "reads-confined", "write-cap", "fresh-tmpfs", "file-cap",
               "landlock", "seccomp-allowlist", "cpu-pin")  # fmt: skip
# What "strict" must verify in every worker before it runs anything.
STRICT_NEEDS = {"bwrap": ("pid-ns", "ipc-ns", "net-ns", "reads-confined", "seccomp-allowlist"),
                "landlock": ("landlock", "reads-confined", "seccomp-allowlist")}  # fmt: skip
IN_FLIGHT = 2  # jobs queued per worker, so it never waits for the next one
CHECK_S = 0.25  # how often the workers' processes are polled (an EOF is seen at once anyway)
# LD_BIND_NOW: the dynamic linker resolves every symbol of the interpreter and its libraries
# when the zygote starts, not lazily in each child (the first call of each function writes its
# GOT page, a copy per child); extension modules are loaded with RTLD_NOW anyway
# (``sys.getdlopenflags()``), so a program's imports pay nothing more.
ENV = {"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0", "LANG": "C.UTF-8",
       "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "LD_BIND_NOW": "1"}  # fmt: skip
Cell = tuple[int, int, str, float, str]  # (row, test index, kind, duration_s, payload)
NPROC_DROPPED = 64  # RLIMIT_NPROC of a worker's own uid after the drop, threads included
# As root each worker's children drop to a uid of their own: RLIMIT_NPROC counts the tasks of a
# uid machine-wide, so a shared uid would let a program holding 64 threads on one worker make the
# threads (and the standard-input feeder) of honest programs on the other workers fail.  Unused
# by any account: UID_BASE + 256·(pid of the sandbox process mod 2^22) + worker slot.
UID_BASE, UID_SLOTS = 1 << 30, 256
FILE_CAP = 64  # entries a program may create where no tmpfs caps its writes (``_filecap``)
NPROC_MARGIN = 64  # without the drop: tasks a program may add to the uid's current count
NPROC_PER_WORKER = 5  # bwrap, its pid-1 init, the zygote, its batch process and their current child


def _host_namespaces() -> dict[str, str]:
    out = {}
    for ns in ("user", "pid", "ipc", "net"):
        with suppress(OSError):
            out[ns] = os.readlink(f"/proc/self/ns/{ns}")
    return out


def _canary(read: Sequence[str]) -> str:
    """A host file that exists and lies outside the readable paths: a probe child must not be
    able to open it."""
    for path in ("/etc/passwd", "/etc/hostname", str(Path(__file__).parents[3] / "README.md")):
        if os.path.exists(path) and not any(path.startswith(p + "/") for p in read):
            return path
    return ""


def uid_tasks(uid: int) -> int:
    """Tasks (threads included, as ``RLIMIT_NPROC`` counts them) whose real uid is ``uid`` now."""
    n = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        real = threads = -1
        try:
            with open(f"/proc/{name}/status", "rb") as fh:
                for line in fh:  # "Uid:" comes before "Threads:"
                    if line.startswith(b"Uid:"):
                        real = int(line.split()[1])
                    elif line.startswith(b"Threads:"):
                        threads = int(line.split()[1])
                        break
        except (OSError, ValueError, IndexError):
            continue  # the process ended while we read it
        if real == uid and threads > 0:
            n += threads
    return n


def _is_package(path: str, packages: tuple[str, ...]) -> bool:
    return os.path.basename(path) in packages


def worker_uid(pid: int, slot: int) -> int:
    """The uid the children of worker ``slot`` of the sandbox process ``pid`` drop to (root)."""
    return UID_BASE + (pid % (1 << 22)) * UID_SLOTS + slot % UID_SLOTS


def nproc_cap(drops_uid: bool, workers: int, as_uid: int | None = None) -> int:
    """``RLIMIT_NPROC`` of every child.  After the drop to 65534: ``NPROC_DROPPED``.  Without it
    the kernel counts all tasks of *our* uid, so the cap is that count now plus a margin: the
    workers' own processes and ``NPROC_MARGIN`` for the program.  A fork or thread bomb then
    stops within ``NPROC_MARGIN`` tasks, whatever else isolates it (seccomp, bwrap) or not."""
    if drops_uid:
        return NPROC_DROPPED
    uid = os.getuid() if as_uid is None else as_uid
    return uid_tasks(uid) + NPROC_PER_WORKER * workers + NPROC_MARGIN


class _NotConfined(RewardkitError):
    """A strict worker could not verify a level it needs."""


@dataclass
class _Job:
    row: int
    idxs: list[int]
    group: int = 0  # whose tests (``LocalPool.execute_groups``)
    got: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.wanted = frozenset(self.idxs)


class _Worker:
    """One zygote process and the jobs it holds."""

    def __init__(self, cfg: dict, prefix: list[str], python: str, popen_kw: dict) -> None:
        # Not -I: it implies -E, which ignores PYTHONHASHSEED, and every worker would hash str
        # and bytes with a random key of its own (a set of strings iterated in another order
        # on each worker and in each run).  The environment is ENV alone; -P and -s are the
        # rest of -I (no script directory on sys.path, no user site).
        cmd = [*prefix, python, "-P", "-s", "-S", "-B", str(WORKER)]
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=ENV,
            start_new_session=True,
            **popen_kw,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.wfd, self.rfd = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        self.inbuf, self.outbuf = b"", b""
        self.jobs: deque[_Job] = deque()
        self.group = -1  # the group whose tests it was sent last (none yet)
        self.heard = time.monotonic()
        self.killed = False
        self.leftover = ""  # set by the handshake
        self.levels: list[str] = []
        self.pid = self.rss_kb = self.peak_kb = 0
        try:
            write_all(self.wfd, frame(cfg))
        except OSError:  # it died before reading its configuration (bwrap refused to start…)
            self.kill()
            raise RewardkitError("a sandbox worker exited before its handshake.") from None

    def handshake(self, timeout_s: float = 30.0) -> _Worker:
        """Wait for the worker's "ready" line (its verified isolation levels)."""
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self.inbuf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.rfd], [], [], left)[0]:
                break
            chunk = os.read(self.rfd, 1 << 16)
            if not chunk:
                break
            self.inbuf += chunk
        line, _, self.inbuf = self.inbuf.partition(b"\n")
        try:
            tag, levels, pid, rss, unreachable, leftover = json.loads(line)
            assert tag == "ready" and type(leftover) is str
        except (ValueError, AssertionError, TypeError):
            self.kill()
            raise RewardkitError("a sandbox worker failed to start.") from None
        self.levels, self.pid, self.rss_kb = levels, pid, rss
        self.unreachable: list[str] = unreachable
        self.leftover = leftover  # an empty directory to remove once the worker is gone
        os.set_blocking(self.wfd, False)
        return self

    def send(self, msg: dict) -> None:
        self.outbuf += frame(msg)

    def pump(self) -> None:
        """Write what the non-blocking stdin pipe accepts now."""
        if self.outbuf:
            try:
                n = os.write(self.wfd, self.outbuf)
            except BlockingIOError:
                n = 0
            self.outbuf = self.outbuf[n:]

    def kill(self) -> None:
        if self.killed:  # once: after the wait its pid may belong to someone else
            return
        self.killed = True
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, 9)
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            with suppress(OSError):
                f.close()  # type: ignore[union-attr]
        if self.leftover:  # the mount point of its namespace's tmpfs (``_userns``): empty here
            with suppress(OSError):
                os.rmdir(self.leftover)

    def close(self) -> None:
        try:
            os.set_blocking(self.wfd, True)
            self.proc.stdin.close()  # type: ignore[union-attr]  # EOF: the worker exits
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.kill()


def _decode(line: bytes) -> Any:
    try:
        return json.loads(line)
    except Exception:  # ValueError, RecursionError, MemoryError: a broken worker
        return None


def _cells_of(rec: Any, job: _Job) -> list | None:
    """The cells of ``["cells", row, [[idx, kind, dur, cpu, payload], ...]]`` for the worker's
    current job, or None: exact ints (a ``true`` index would select a whole numpy row), each a
    test of that job.  Kind, duration and payload are checked where the cells are compared."""
    if not (
        type(rec) is list
        and len(rec) == 3
        and rec[0] == "cells"
        and type(rec[1]) is int
        and rec[1] == job.row
        and type(rec[2]) is list
    ):
        return None
    wanted = job.wanted
    for c in rec[2]:
        if not (type(c) is list and len(c) == 5 and type(c[0]) is int and c[0] in wanted):
            return None
    return rec[2]


def _is_done(rec: Any, job: _Job) -> bool:
    return (
        type(rec) is list
        and len(rec) == 4
        and rec[0] == "done"
        and type(rec[1]) is int
        and rec[1] == job.row
        and type(rec[2]) is int
        and type(rec[3]) is int
    )


class LocalPool:
    """``workers`` zygotes on this machine (one per core by default).

    ``isolation`` is "strict" (refuse to start unless the plan confines, see ``_confine``) or
    "basic"; ``prefer`` "auto", "bwrap" or "landlock"; ``packages`` the installed packages
    programs may import (read-only).  ``as_uid`` (root only, for tests of the unprivileged
    path) runs the workers as that uid, as an ordinary user would."""

    def __init__(
        self,
        timeout_s: float,
        memory_mb: int,
        workers: int,
        isolation: str,
        *,
        prefer: str = "auto",
        packages: tuple[str, ...] = (),
        as_uid: int | None = None,
        python: str | None = None,
    ) -> None:
        root = os.geteuid() == 0 and as_uid is None
        self.popen_kw: dict = {}
        if as_uid is not None:
            self.popen_kw = {"user": as_uid, "group": as_uid, "extra_groups": []}
        self.plan = plan(
            isolation, packages, python=python, prefer=prefer, root=root, as_uid=as_uid
        )
        if isolation == "strict" and self.plan.confinement == "none":
            raise RewardkitError(
                "Sandbox(isolation='strict') cannot confine programs on this machine: "
                + "; ".join(self.plan.missing)
                + f". Install what is missing: {INSTALL_HINT}."
            )
        self.n = workers
        read = list(self.plan.read)
        self.cfg = {
            "op": "init",
            "timeout_s": timeout_s,
            "memory_mb": memory_mb,
            "uid": worker_uid(os.getpid(), 0) if root else None,  # per worker: _worker_cfg
            "nproc": nproc_cap(root, workers, as_uid),  # threads included: caps the bombs
            "bpf": self.plan.bpf,
            "landlock": self.plan.landlock_abi if self.plan.confinement != "none" else 0,
            "read": read,
            "hidden": list(self.plan.hidden),
            "canary": _canary(read) if self.plan.confinement != "none" else "",
            "host_ns": _host_namespaces(),
            # Landlock alone, as root: a private mount namespace per worker (``_mounts``).
            "private_mounts": WRITE_CAP_MB if root and self.plan.confinement == "landlock" else 0,
            # Under bubblewrap /tmp is the worker's own: made read-only once its work
            # directories' directory is there (``_worker``).
            "private_tmp": self.plan.confinement == "bwrap",
            # Under bubblewrap: a fresh tmpfs per remade work directory (``_mounts``).
            "fresh_tmpfs": WRITE_CAP_MB if self.plan.confinement == "bwrap" else 0,
            # Landlock without that tmpfs: at most FILE_CAP entries per program (``_filecap``).
            "file_cap": FILE_CAP if self.plan.confinement == "landlock" else 0,
            # Landlock as an ordinary user: a user namespace per worker, so the process cap of
            # one worker's program is not the others' (``_userns``; bubblewrap makes its own),
            # with the work directories in a tmpfs of ``userns_tmpfs`` MiB there.
            "own_userns": not root and self.plan.confinement == "landlock",
            "userns_tmpfs": WRITE_CAP_MB,
            "syspath": sorted({os.path.dirname(p) for p in read if _is_package(p, packages)}),
        }
        self.prefix = self.plan.worker_command()
        self.cpus = sorted(os.sched_getaffinity(0))
        # Silence longer than this from a busy worker means the worker itself is stuck.
        self.stall_s = 3 * (timeout_s + 0.25 + 0.25 * timeout_s) + 10.0
        self.workers: list[_Worker] = []
        self.forks = 0
        self._start()

    def _worker_cfg(self, slot: int) -> dict:
        # Each worker on cores of its own: the cores this process may use dealt out to the
        # workers (one each by default; every n-th with fewer workers than cores, so that two
        # sandboxes on one host still use every core).  A program's threads then burn its
        # worker's cores alone, never the other workers' (goal b).
        cpus = self.cpus
        mine = cpus[slot :: self.n] if slot < len(cpus) else [cpus[slot % len(cpus)]]
        cfg = {**self.cfg, "cpus": mine}
        if cfg["uid"] is not None:
            cfg["uid"] = worker_uid(os.getpid(), slot)
        return cfg

    def _spawn(self, n: int = 1, first: int = 0) -> list[_Worker]:
        """Start ``n`` workers; a start that fails (the worker died before or during its
        handshake) is tried once more, then a clear error."""
        for _ in range(2):
            try:
                return self._try_spawn(n, first)
            except _NotConfined:
                raise
            except (RewardkitError, OSError):
                pass
        raise RewardkitError(
            "The sandbox workers failed to start twice: each exited before its handshake "
            f"({' '.join(self.prefix[:1])} {self.plan.python} -P -s -S {WORKER})."
        )

    def _try_spawn(self, n: int, first: int) -> list[_Worker]:
        started: list[_Worker] = []
        try:
            for slot in range(first, first + n):
                cfg = self._worker_cfg(slot)
                started.append(_Worker(cfg, self.prefix, self.plan.python, self.popen_kw))
            ready = [w.handshake() for w in started]
        except (RewardkitError, OSError):
            for w in started:
                w.kill()  # never leave a half-started pool behind
            raise
        if self.plan.mode == "strict":
            need = STRICT_NEEDS[self.plan.confinement]
            for w in ready:
                lost = [lv for lv in need if lv not in w.levels]
                if lost:
                    for v in ready:
                        v.kill()
                    raise _NotConfined(
                        f"Sandbox(isolation='strict'): a worker confined by "
                        f"{self.plan.confinement} could not verify {', '.join(lost)}; "
                        "refusing to run programs without them."
                    )
        return ready

    def _start(self) -> None:
        self.workers = self._spawn(self.n)
        # What every worker verified: a level one worker could not verify (a uid drop, the pid
        # counter, a fresh tmpfs) does not hold for its programs, and is not claimed for any.
        levels = set.intersection(*(set(w.levels) for w in self.workers)) | self._plan_levels()
        self.isolation = tuple(lv for lv in LEVEL_ORDER if lv in levels)

    def _plan_levels(self) -> set[str]:
        """The levels bubblewrap's command line gives every worker (not probed by them)."""
        if self.plan.confinement != "bwrap":
            return set()
        return {"bwrap", "write-cap"} if self.plan.size_cap else {"bwrap"}

    def report(self) -> dict:
        """The isolation report: what the plan chose and what the workers verified.
        ``unreachable``: readable paths the programs' uid cannot reach (a private home above
        them that could not be opened): only the pre-imported modules import from there."""
        out = {**self.plan.report(), "levels": list(self.isolation)}
        if "write-cap" in self.isolation and not self.plan.size_cap:
            out["writable"] = (
                f"a fresh per-program directory in a {WRITE_CAP_MB} MiB tmpfs (the worker's "
                "private mount namespace), 1 MiB per file"
            )
        elif "file-cap" in self.isolation:
            out["writable"] = (
                f"a fresh per-program directory, at most {FILE_CAP} entries (no subdirectories) "
                "of 1 MiB each, counted through inotify"
            )
        out["unreachable"] = sorted({p for w in self.workers for p in w.unreachable})
        return out

    @property
    def worker_rss_kb(self) -> list[int]:
        """Resident memory of each worker right after its start."""
        return [w.rss_kb for w in self.workers]

    @property
    def worker_peak_kb(self) -> list[int]:
        """Peak resident memory of each worker so far (programs run in its children)."""
        return [max(w.peak_kb, w.rss_kb) for w in self.workers]

    def worker_pids(self) -> list[int]:
        return [w.proc.pid for w in self.workers]

    def close(self) -> None:
        for w in self.workers:
            w.close()
        self.workers = []

    def execute(
        self, programs: Sequence[str], rows: Sequence[int], inputs: Sequence[str | None], entry: str
    ) -> list[Cell]:
        """Run ``programs[k]`` (row id ``rows[k]``) on every valid test; return the raw cells."""
        return self.execute_groups([(programs, rows, inputs)], entry)

    def execute_groups(
        self,
        groups: Sequence[tuple[Sequence[str], Sequence[int], Sequence[str | None]]],
        entry: str,
    ) -> list[Cell]:
        """Several problems in one pass: each group's programs (row ids unique across groups)
        on the valid tests of its own ``inputs``; the raw cells, test indices the group's own.
        A worker is sent a group's tests just before its first job of that group, and the
        zygote reads its messages in order, so a child holds its own problem's inputs only:
        another problem's inputs may be this one's answers (a problem and its inverse)."""
        queue: deque[_Job] = deque()
        src: dict[int, str] = {}
        for g, (programs, rows, inputs) in enumerate(groups):
            valid = [i for i, t in enumerate(inputs) if t is not None]
            if valid:
                queue.extend(_Job(r, list(valid), g) for r in rows)
            src.update(zip(rows, programs))
        cells: dict[tuple[int, int], Cell] = {}
        if not queue:
            return []
        # The uid's task count drifts (other jobs of the same user): refresh the cap per batch.
        nproc = nproc_cap(self.cfg["uid"] is not None, self.n, self.popen_kw.get("user"))
        tests = [{"op": "tests", "inputs": list(inputs), "nproc": nproc} for _, _, inputs in groups]
        for w in self.workers:
            w.group = -1  # a batch's tests are sent again: its ids restart
        sel = selectors.DefaultSelector()
        for w in self.workers:
            sel.register(w.rfd, selectors.EVENT_READ, w)
        checked = time.monotonic()
        try:
            while queue or any(w.jobs for w in self.workers):
                for w in self.workers:
                    while queue and len(w.jobs) < IN_FLIGHT:
                        job = queue.popleft()
                        if not w.jobs:
                            w.heard = time.monotonic()  # idle until now: the clock starts here
                        w.jobs.append(job)
                        if w.group != job.group:
                            w.send(tests[job.group])
                            w.group = job.group
                        w.send({"op": "job", "row": job.row, "idxs": job.idxs, "entry": entry})
                        # the source as raw bytes the zygote never decodes (``_child.read_raw``)
                        w.outbuf += raw_frame(src[job.row].encode("utf-8", "surrogatepass"))
                    try:
                        w.pump()
                    except OSError:  # the worker died: handled as silence below
                        w.outbuf = b""
                for key, _ in sel.select(
                    timeout=0.05 if any(w.outbuf for w in self.workers) else 0.5
                ):
                    self._read(key.data, cells, queue)
                now = time.monotonic()
                if now - checked < CHECK_S and all(w.heard > 0 for w in self.workers):
                    continue  # a worker that died closes its pipe: heard < 0 at once
                checked = now
                for k, w in enumerate(self.workers):
                    dead = w.proc.poll() is not None
                    if w.jobs and (dead or now - w.heard > self.stall_s):
                        sel.unregister(w.rfd)
                        self.workers[k] = self._replace(w, k, cells, queue)
                        sel.register(self.workers[k].rfd, selectors.EVENT_READ, self.workers[k])
        finally:
            sel.close()
        return [cells[k] for k in sorted(cells)]

    def _read(self, w: _Worker, cells: dict, queue: deque) -> None:
        try:
            chunk = os.read(w.rfd, 1 << 20)
        except OSError:
            chunk = b""
        if not chunk:
            w.heard = -1e18  # EOF: the replacement logic takes over
            return
        w.heard = time.monotonic()
        w.inbuf += chunk
        *lines, w.inbuf = w.inbuf.split(b"\n")
        for line in lines:
            rec = _decode(line)
            job = w.jobs[0] if w.jobs else None
            got = None if job is None else _cells_of(rec, job)
            if job is not None and got is not None:
                row = job.row
                for i, kind, dur, _, payload in got:
                    cells[(row, i)] = (row, i, kind, dur, payload)  # checked again when compared
                    job.got.add(i)
            elif rec == ["alive"]:  # a batch process still parsing a large batch's tests
                continue
            elif job is not None and _is_done(rec, job):
                self.forks += rec[2]
                w.peak_kb = max(w.peak_kb, rec[3])
                w.jobs.popleft()
            else:  # a worker that says what it cannot mean is treated as lost
                w.heard = -1e18
                return

    def _replace(self, w: _Worker, slot: int, cells: dict, queue: deque) -> _Worker:
        """A worker died or stalled: its current cell is a CRASH, the rest of its rows go back
        to the queue, and a fresh worker takes its place."""
        w.kill()
        for n, job in enumerate(w.jobs):
            missing = [i for i in job.idxs if i not in job.got]
            if n == 0 and missing:
                cells[(job.row, missing[0])] = (job.row, missing[0], "C", 0.0, "worker lost")
                missing = missing[1:]
            if missing:
                queue.appendleft(_Job(job.row, missing, job.group))
        (fresh,) = self._spawn(1, slot)
        kept = set(fresh.levels) | self._plan_levels()  # a replacement claims no more either
        self.isolation = tuple(lv for lv in self.isolation if lv in kept)
        return fresh  # sent its tests with its first job
