"""The covert channels between consecutive programs on one worker that stay open (docs/sandbox.md,
"Residual risks"), measured: what a receiver gets of what its sender encoded.

    python benchmarks/covert_channels.py [--confinement auto|landlock] [--pairs 60]
        [--period-ms 100]                          # prints one JSON document

- ``timing``: the sender ends at a phase it picks in a period; the receiver reads the clock as
  its module runs.  Reported: the median delay and its spread (median and 90th percentile of the
  absolute deviation), and the bits a program that this spread allows, log2(period / (2·p90)).
- ``pid_counter``: the sender starts and joins N threads (N < 2000), the receiver reads its pid;
  with ``pid-reset`` every step is the same, without it (Landlock: the host's counter) the step
  strays from N by the host's other forks in between.
- ``pipe_inode``: the sender makes and closes N pipes (pipefs numbers come from one counter per
  CPU for the whole host); the receiver makes one and reads its inode.  Reported: each N with
  the step the receiver saw (N + a constant when both ran on the same CPU).

Timing depends on the machine's load, which is printed beside the numbers.  The channels that
are closed are kept as tests instead (``tests/sandbox/test_covert.py``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import random
import statistics

from rewardkit.sandbox import Sandbox

TIMING_SENDER = """
import time
def f(x):
    t = time.time_ns()
    target = t - t % {P} + {V}  # the next moment at phase V: at most one period away
    if target <= t:
        target += {P}
    while time.time_ns() < target:
        pass
    return {V}
"""
TIMING_RECEIVER = """
import time
T0 = time.time_ns()
def f(x):
    return T0 % {P}
"""
PIPE_SENDER = """
import os
def f(x):
    for _ in range({N}):
        r, w = os.pipe()
        os.close(r)
        os.close(w)
    return {N}
"""
PIPE_RECEIVER = """
import os
def f(x):
    r, w = os.pipe()
    ino = os.fstat(r).st_ino
    os.close(r)
    os.close(w)
    return ino
"""


def _pairs(box: Sandbox, senders: list[str], receiver: str) -> list[int]:
    programs = [p for s in senders for p in (s, receiver)]
    cells = box._pool.execute(programs, list(range(len(programs))), ["(0,)"], "f")  # type: ignore[union-attr]
    got = {row: payload for row, _, kind, _, payload in cells if kind == "V"}
    return [int(got[2 * k + 1]) for k in range(len(senders))]


def timing(box: Sandbox, pairs: int, period_ns: int) -> dict:
    rng = random.Random(0)
    phases = [rng.randrange(period_ns) for _ in range(pairs)]
    senders = [TIMING_SENDER.replace("{P}", str(period_ns)).replace("{V}", str(v)) for v in phases]
    seen = _pairs(box, senders, TIMING_RECEIVER.replace("{P}", str(period_ns)))
    delay = [(r - v) % period_ns for r, v in zip(seen, phases, strict=True)]
    med = statistics.median(delay)
    dev = sorted(abs(d - med) for d in delay)
    p90 = dev[int(0.9 * (len(dev) - 1))]
    return {
        "period_ms": period_ns / 1e6,
        "pairs": pairs,
        "median_delay_ms": med / 1e6,
        "mad_ms": statistics.median(dev) / 1e6,
        "p90_abs_deviation_ms": p90 / 1e6,
        "bits_per_program": round(math.log2(period_ns / max(2 * p90, 1)), 1),
    }


def pipe_inode(box: Sandbox) -> dict:
    ns = [0, 1, 5, 40, 300, 1000, 3000]
    seen = _pairs(box, [PIPE_SENDER.replace("{N}", str(n)) for n in ns], PIPE_RECEIVER)
    steps = [b - a for a, b in itertools.pairwise(seen)]
    return {"n": ns[1:], "receiver_step": steps}


PID_SENDER = """
import threading
def f(x):
    for _ in range({N}):
        t = threading.Thread(target=int)
        t.start()
        t.join()
    return {N}
"""
PID_RECEIVER = "import os\ndef f(x):\n    return os.getpid()\n"


def pid_counter(box: Sandbox, pairs: int) -> dict:
    """Where the pid counter is not set back (no ``pid-reset``: Landlock, the host's counter):
    how far the receiver's pid step strays from its sender's N (the host's other forks)."""
    rng = random.Random(1)
    ns = [0] + [rng.randrange(2000) for _ in range(pairs)]
    seen = _pairs(box, [PID_SENDER.replace("{N}", str(n)) for n in ns], PID_RECEIVER)
    steps = [b - a for a, b in itertools.pairwise(seen)]
    noise = sorted(step - n for step, n in zip(steps, ns[1:], strict=True))
    med = statistics.median(noise)
    p90 = sorted(abs(x - med) for x in noise)[int(0.9 * (len(noise) - 1))]
    return {
        "reset": "pid-reset" in box.isolation,
        "pairs": pairs,
        "median_extra": med,
        "p90_abs_deviation": p90,
        "bits_per_program": round(math.log2(2000 / max(2 * p90, 1)), 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--confinement", default="auto", choices=["auto", "bwrap", "landlock"])
    ap.add_argument("--pairs", type=int, default=60)
    ap.add_argument("--period-ms", type=float, default=100.0)
    args = ap.parse_args()
    with Sandbox(timeout_s=2.0, memory_mb=256, workers=1, confinement=args.confinement) as box:
        out = {
            "confinement": args.confinement,
            "levels": list(box.isolation),
            "load_average": os.getloadavg()[0],
            "timing": timing(box, args.pairs, int(args.period_ms * 1e6)),
            "pipe_inode": pipe_inode(box),
            "pid_counter": pid_counter(box, args.pairs // 2),
        }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
