"""The sandbox's speed beside the fork floor of the same machine, in the same run.

    from rewardkit.sandbox.floor import run_floor_bench
    res = run_floor_bench(512, 32)       # programs/s with full isolation ÷ forks/s of the floor

The floor is what no fork-per-program design can beat here: ``fork`` + ``_exit`` + ``waitpid``
in a loop, from a minimal interpreter (``python -I -S``, nothing imported), one per worker, all
at once, on the same cores.  The workload is trivial on purpose — 512 programs × 32 tests, all
passing, no timeouts — so what is measured is the sandbox's own cost per program (fork, confine,
stream, reap, compare).  On a shared machine the load moves both numbers, so the floor and the
sandbox are measured alternately, ``repeats`` times each, and the ratio is the median of the
per-round ratios.

Beside both, the **design's ceiling**: the least a confined fork-per-program child can do here.
An interpreter holding only what confinement needs (ctypes, and the sandbox's ``_landlock``
module) forks one child per program; the child enters a Landlock domain and loads the seccomp
allow-list, compiles the program, runs its 32 calls and writes their answers in one pipe write;
the parent reads them, checks them and reaps.  No uid drop, rlimits, timers, per-test records,
checks of types, literal parser or JSON: a lower bound on the CPU a program costs in any design
that runs it in a fresh confined fork, measured in the same rounds.  Its confinement is
verified by a probe child (a filter loaded and both io_uring and a new process refused; a
domain entered and a host file unreadable); a layer that does not hold in every round is left
out of ``ceiling_layers``, never claimed.  The same loops with no confinement at all
(``design_ceiling(confined=False)``, ``bare_*``) show what the layers themselves cost.

Every loop waits for its go on standard input and is given it before any loop is read, and
their spans on the monotonic clock must overlap, or the measurement fails: given and read in
turn, the loops of the first ceiling ran one after another and its rate over two workers was
one loop's, half the real one.
"""

from __future__ import annotations

import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from .._json import JsonMixin
from .core import Sandbox
from .table import TestCase

__all__ = ["FloorResult", "design_ceiling", "fork_floor", "run_floor_bench", "trivial_workload"]

FLOOR_SCRIPT = (
    "import os, sys, time\n"
    "sys.stdin.read()\n"  # the go: every loop is given it before any is read (``_collect``)
    "start = time.monotonic()\n"
    "n, end = 0, time.perf_counter() + {seconds!r}\n"
    "while time.perf_counter() < end:\n"
    "    pid = os.fork()\n"
    "    if pid == 0:\n"
    "        os._exit(0)\n"
    "    os.waitpid(pid, 0)\n"
    "    n += 1\n"
    "t = os.times()\n"
    "print(n, t.user + t.system + t.children_user + t.children_system, start, time.monotonic())\n"
)


def fork_floor(workers: int, seconds: float = 1.0) -> tuple[float, float]:
    """(forks/s, CPU seconds per fork) of ``workers`` minimal interpreters forking, exiting and
    reaping at once (the CPU counts parent and child, interpreter start included)."""
    script = FLOOR_SCRIPT.format(seconds=seconds)
    procs = [
        subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(workers)
    ]
    t0 = time.perf_counter()
    outs = _collect(procs, "")
    elapsed = time.perf_counter() - t0
    _check_overlap("floor", [o[2:4] for o in outs])
    forks = sum(int(o[0]) for o in outs)
    return forks / elapsed, sum(float(o[1]) for o in outs) / max(forks, 1)


def _collect(procs: list[subprocess.Popen], data: str) -> list[list[str]]:
    """Give every loop its input before reading any: each waits for its input, so reading
    one to its end first (``communicate`` in turn) would run the loops one after another."""
    for p in procs:
        assert p.stdin is not None
        p.stdin.write(data)
        p.stdin.close()
    outs = []
    for p in procs:
        assert p.stdout is not None
        with p.stdout:
            outs.append(p.stdout.read().split())
        p.wait()
    return outs


def _check_overlap(what: str, spans: list[list[str]]) -> None:
    """The loops' (start, end) on the monotonic clock, which every process shares: a rate over
    ``workers`` loops is theirs at once only if they all ran at the same time."""
    starts, ends = [float(a) for a, _ in spans], [float(b) for _, b in spans]
    if len(spans) > 1 and max(starts) >= min(ends):
        raise RuntimeError(
            f"the {what}'s {len(spans)} loops did not run at once (starts {starts}, ends "
            f"{ends}): its rate would be one loop's, not theirs together"
        )


# The ceiling's interpreter imports ctypes and ``_landlock`` alone: the seccomp loading below
# restates ``_child._load_prepared`` and ``_filter.pid_offsets`` in a few lines because those
# modules bring json, re, ast and contextlib, which cost 0.25-0.3 ms per fork by their size
# (docs/sandbox.md, "The design's ceiling").
CEILING_SCRIPT = r"""
import ctypes, os, sys, time
here, seconds, work, read, host_file, bare = sys.argv[1:7]
read, bpf = read.split(os.pathsep), bytes.fromhex(sys.stdin.read().strip())
sys.path.insert(0, here)
from _landlock import abi, make_ruleset, restrict_self
del sys.path[0]
libc = ctypes.CDLL(None, use_errno=True)
version = abi(libc) if bare == "0" else 0
ruleset = make_ruleset(libc, version, read, [work], [], [])[0] if version else -1

class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]

buf = ctypes.create_string_buffer(bpf, len(bpf))
offsets = [k + 4 for k in range(0, len(bpf), 8) if bpf[k + 4 : k + 8] == PLACEHOLDER]
prog = Prog(len(bpf) // 8, ctypes.cast(buf, ctypes.c_char_p))
ref = ctypes.byref(prog)

def confine():
    if ruleset >= 0:
        restrict_self(libc, ruleset)
    if bpf:
        word = os.getpid().to_bytes(4, "little")
        for k in offsets:
            buf[k : k + 4] = word
        if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ref, 0, 0):  # no_new_privs, filter
            os._exit(3)

def probe():
    # A layer is claimed when it was applied here and its refusals are seen: io_uring alone
    # is also refused by a container's own filter or by kernel.io_uring_disabled, and a host
    # file by other means, so neither refusal alone proves this process's layer.
    held = []
    confine()
    params = ctypes.create_string_buffer(120)
    uring = libc.syscall(425, 1, params) == -1 and ctypes.get_errno() == 1  # EPERM
    try:
        child = os.fork()  # a process: outside the allow-list (threads only)
    except PermissionError:
        forked = False
    else:
        if child == 0:
            os._exit(0)
        os.waitpid(child, 0)
        forked = True
    if bpf and uring and not forked:
        held.append("seccomp-allowlist")
    try:
        os.close(os.open(host_file, os.O_RDONLY))
    except PermissionError:
        if ruleset >= 0:
            held.append("landlock")
    return held

r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.write(w, " ".join(probe()).encode())
    os._exit(0)
os.close(w)
held = os.read(r, 4096).decode().split()
os.close(r)
os.waitpid(pid, 0)
inputs = [(j,) for j in range(32)]
expected = ",".join(str(j) for j in range(32)).encode()
compile("def f(x):\n    return x\n", "<warm>", "exec", dont_inherit=True)
start = time.monotonic()
n, wrong, end = 0, 0, time.perf_counter() + float(seconds)
t0 = os.times()
while time.perf_counter() < end:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        confine()
        g = {"__name__": "solution"}
        src = f"def f(x):\n    return x + {n % 97} - {n % 97}\n"
        exec(compile(src, "<program>", "exec", dont_inherit=True), g)
        fn = g["f"]
        os.write(w, ",".join([repr(fn(*a)) for a in inputs]).encode())
        os._exit(0)
    os.close(w)
    out = b""
    while chunk := os.read(r, 65536):
        out += chunk
    os.close(r)
    os.waitpid(pid, 0)
    wrong += out != expected
    n += 1
t = os.times()
print(n, sum(t[:4]) - sum(t0[:4]), wrong, start, time.monotonic(), *held)
"""


def design_ceiling(
    workers: int, seconds: float = 1.0, *, confined: bool = True
) -> tuple[float, float, tuple[str, ...]]:
    """(programs/s, CPU seconds per program, layers verified) of ``workers`` minimal confined
    fork-per-program loops at once: the least CPU a program costs in a design that runs it in a
    fresh fork under Landlock and the seccomp allow-list (see the module's docstring).
    ``confined=False``: the same loops with neither layer (nothing verified), which shows what
    the confinement itself costs a program."""
    from ._filter import PID_PLACEHOLDER, build_allowlist_bpf

    try:
        bpf = build_allowlist_bpf() if confined else ""
    except (ImportError, OSError):
        bpf = ""  # the layer is then missing from what the probe child verifies
    here = os.path.dirname(os.path.abspath(__file__))
    read = sorted(
        {p for p in (sys.prefix, sys.base_prefix, "/usr", "/lib", "/lib64") if os.path.isdir(p)}
    )
    work = tempfile.mkdtemp(prefix="rk-ceiling-")
    secret = os.path.join(work, "outside")
    os.mkdir(secret)
    with open(os.path.join(secret, "host-file"), "w") as fh:
        fh.write("the probe child must not read this")
    try:
        script = CEILING_SCRIPT.replace("PLACEHOLDER", repr(struct.pack("<I", PID_PLACEHOLDER)))
        args = [here, repr(seconds), os.path.join(work, "w"), os.pathsep.join(read)]
        os.mkdir(args[2])
        args += [os.path.join(secret, "host-file"), "0" if confined else "1"]
        cmd = [sys.executable, "-I", "-S", "-c", script, *args]
        procs = [
            subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            for _ in range(workers)
        ]
        t0 = time.perf_counter()
        outs = _collect(procs, bpf)
        elapsed = time.perf_counter() - t0
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if any(len(o) < 5 or o[2] != "0" for o in outs):
        raise RuntimeError("the ceiling's children returned wrong answers")
    _check_overlap("ceiling", [o[3:5] for o in outs])
    n = sum(int(o[0]) for o in outs)
    held = set.intersection(*(set(o[5:]) for o in outs))
    return n / elapsed, sum(float(o[1]) for o in outs) / max(n, 1), tuple(sorted(held))


def _tree_cpu(pids: list[int]) -> float:
    """CPU seconds of these processes and every descendant, reaped ones included."""
    tick, total, todo = os.sysconf("SC_CLK_TCK"), 0.0, list(pids)
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/stat") as fh:
                f = fh.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo += [int(k) for k in fh.read().split()]
        except (OSError, IndexError):
            continue
        total += sum(int(x) for x in f[11:15]) / tick  # utime stime cutime cstime
    return total


def trivial_workload(n_programs: int, n_tests: int) -> tuple[list[str], list[TestCase]]:
    """Programs that return their argument (each a distinct source), tests that all pass."""
    programs = [f"def f(x):\n    return x + {k % 97} - {k % 97}\n" for k in range(n_programs)]
    return programs, [TestCase(f"({j},)", f"{j}") for j in range(n_tests)]


@dataclass(frozen=True)
class FloorResult(JsonMixin):
    n_programs: int
    n_tests: int
    workers: int
    isolation: tuple[str, ...]
    programs_per_s: tuple[float, ...]  # one per round
    floor_forks_per_s: tuple[float, ...]  # one per round, measured just before
    ratio: float  # median over rounds of programs/s ÷ floor forks/s
    cpu_ms_per_program: float  # median: workers, their children and this process together
    floor_cpu_ms_per_fork: float  # median: parent and child of the floor's forks
    cpu_ratio: float  # floor CPU per fork ÷ sandbox CPU per program
    # The design's ceiling, in the same rounds (see the module's docstring)
    ceiling_programs_per_s: tuple[float, ...]
    ceiling_ratio: float  # median over rounds of the ceiling's programs/s ÷ floor forks/s
    ceiling_cpu_ms_per_program: float  # median
    ceiling_cpu_ratio: float  # floor CPU per fork ÷ ceiling CPU per program
    ceiling_layers: tuple[str, ...]  # the confinement its probe child verified
    # The same minimal loops with no confinement at all (``design_ceiling(confined=False)``)
    bare_programs_per_s: tuple[float, ...]
    bare_ratio: float
    bare_cpu_ms_per_program: float
    bare_cpu_ratio: float
    all_passed: bool
    load_average: float


def run_floor_bench(
    n_programs: int = 512,
    n_tests: int = 32,
    *,
    workers: int | None = None,
    repeats: int = 3,
    sandbox_kwargs: dict | None = None,
) -> FloorResult:
    """Alternate the floor and the sandbox ``repeats`` times; the sandbox runs with its default
    strict isolation unless ``sandbox_kwargs`` says otherwise."""
    n = workers or os.cpu_count() or 1
    programs, tests = trivial_workload(n_programs, n_tests)
    rates, floors, ratios, passed = [], [], [], True
    cpu, floor_cpu, ceilings, ceiling_cpu, bares, bare_cpu = [], [], [], [], [], []
    layers: set[str] | None = None  # what every round's probe verified
    with Sandbox(timeout_s=1.0, workers=n, **(sandbox_kwargs or {})) as sb:
        sb.run(programs[: 4 * n], tests, entry_point="f")  # warm: first forks, page cache
        assert sb._pool is not None
        for _ in range(repeats):
            floor, floor_cpu_per_fork = fork_floor(n, seconds=1.0)
            ceiling, ceiling_cpu_per_program, held = design_ceiling(n, seconds=1.0)
            layers = set(held) if layers is None else layers & set(held)
            ceilings.append(ceiling)
            ceiling_cpu.append(ceiling_cpu_per_program)
            bare, bare_cpu_per_program, _ = design_ceiling(n, seconds=1.0, confined=False)
            bares.append(bare)
            bare_cpu.append(bare_cpu_per_program)
            pids = sb._pool.worker_pids()
            c0, self0, t0 = _tree_cpu(pids), time.process_time(), time.perf_counter()
            table = sb.run(programs, tests, entry_point="f")
            rate = n_programs / (time.perf_counter() - t0)
            used = _tree_cpu(pids) - c0 + time.process_time() - self0
            passed = passed and bool(table.passed.all())
            rates.append(rate)
            floors.append(floor)
            ratios.append(rate / floor)
            cpu.append(used / n_programs)
            floor_cpu.append(floor_cpu_per_fork)
        isolation = sb.isolation
    with open("/proc/loadavg") as fh:
        load = float(fh.read().split()[0])
    return FloorResult(
        n_programs=n_programs,
        n_tests=n_tests,
        workers=n,
        isolation=isolation,
        programs_per_s=tuple(rates),
        floor_forks_per_s=tuple(floors),
        ratio=statistics.median(ratios),
        cpu_ms_per_program=statistics.median(cpu) * 1e3,
        floor_cpu_ms_per_fork=statistics.median(floor_cpu) * 1e3,
        cpu_ratio=statistics.median(floor_cpu) / statistics.median(cpu),
        ceiling_programs_per_s=tuple(ceilings),
        ceiling_ratio=statistics.median(c / f for c, f in zip(ceilings, floors)),
        ceiling_cpu_ms_per_program=statistics.median(ceiling_cpu) * 1e3,
        ceiling_cpu_ratio=statistics.median(floor_cpu) / statistics.median(ceiling_cpu),
        ceiling_layers=tuple(sorted(layers or ())),
        bare_programs_per_s=tuple(bares),
        bare_ratio=statistics.median(b / f for b, f in zip(bares, floors)),
        bare_cpu_ms_per_program=statistics.median(bare_cpu) * 1e3,
        bare_cpu_ratio=statistics.median(floor_cpu) / statistics.median(bare_cpu),
        all_passed=passed,
        load_average=load,
    )
