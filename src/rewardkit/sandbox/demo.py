"""The sandbox's section of ``rewardkit demo``: correct, wrong and hostile programs, their
statuses and the isolation levels in force (a few seconds)."""

from __future__ import annotations

import os

from .._plotting import bars_png, optional_figures
from .._results import Check, Section
from .core import Sandbox
from .table import Status, TestCase

__all__ = ["demo_section"]

TESTS = (TestCase("([3, 1, 2],)", "[1, 2, 3]"), TestCase("([],)", "[]"), TestCase("(1,", "[]"))
PROGRAMS = {  # name → (source, expected status of the first two cells)
    # A fake record for the current test is a malformed output ("PASS" is no literal), so
    # its cell is CRASH; the real record that follows is out of order: the child is killed.
    "correct": ("def sort(xs):\n    return sorted(xs)\n", Status.PASS),
    "wrong (reversed)": ("def sort(xs):\n    return sorted(xs)[::-1] + [0]\n", Status.FAIL),
    "syntax error": ("def sort(xs)\n    return xs\n", Status.SYNTAX),
    "raises": ("def sort(xs):\n    return xs[10]\n", Status.ERROR),
    "infinite loop": ("def sort(xs):\n    while True:\n        pass\n", Status.TIMEOUT),
    "memory bomb (1.5 GiB)": ("def sort(xs):\n    return bytearray(1536 * 2**20)\n", Status.MEMORY),
    "sys.exit(0)": ("import sys\ndef sort(xs):\n    sys.exit(0)\n", Status.ERROR),
    "os._exit(0)": ("import os\ndef sort(xs):\n    os._exit(0)\n", Status.CRASH),
    "always-equal object": (
        "class A:\n    def __eq__(self, o):\n        return True\ndef sort(xs):\n    return A()\n",
        Status.FAIL,
    ),
    "fake record on every fd": (
        "import os\ndef sort(xs):\n    for fd in range(64):\n        try:\n"
        '            os.write(fd, b\'[0, "V", 0.0, 0.0, "PASS"]\\n\')\n'
        "        except OSError:\n            pass\n    return None\n",
        (Status.CRASH, Status.CRASH),
    ),
}


def demo_section() -> Section:
    names = list(PROGRAMS)
    sources = [PROGRAMS[n][0] for n in names]
    with Sandbox(timeout_s=0.3, memory_mb=256) as sb:
        table = sb.run(sources, TESTS, entry_point="sort")
        again = sb.run(sources, TESTS, entry_point="sort")
    checks = []
    for row, name in enumerate(names):
        spec = PROGRAMS[name][1]
        want = [s.name for s in (spec if isinstance(spec, tuple) else (spec, spec))]
        got = [Status(int(s)).name for s in table.status[row, :2]]
        checks.append(Check(name, " ".join(want), " ".join(got), got == want))
    invalid = all(Status(int(s)) is Status.INVALID_TEST for s in table.status[:, 2])
    checks.append(
        Check(
            "test '(1,' is not a literal",
            "INVALID_TEST column",
            "yes" if invalid else "no",
            invalid,
        )
    )
    same = table.digest == again.digest
    checks.append(Check("same input, same table", "equal digests", "equal" if same else "differ",
                        same))  # fmt: skip
    # Strict (the default) confines with bubblewrap or Landlock under the seccomp allow-list.
    must: tuple[str, ...] = ("rlimits", "reads-confined", "seccomp-allowlist")
    must += ("uid-drop",) if os.geteuid() == 0 else ()
    checks.append(
        Check(
            "isolation levels",
            " + ".join(must) + " at least",
            ", ".join(table.isolation),
            all(lv in table.isolation for lv in must),
        )
    )
    artefact = {
        "isolation": list(table.isolation),
        "tests": [t.to_dict() for t in TESTS],
        "digest": table.digest,
        "rows": {
            n: {
                "status": [Status(int(s)).name for s in table.status[k]],
                "detail": list(table.detail[k]),
            }
            for k, n in enumerate(names)
        },
    }
    counts = {st.name: int((table.status == st).sum()) for st in Status}
    shown = [name for name, c in counts.items() if c]
    figures = optional_figures(
        lambda: {
            f"Statuses of the {table.status.size} cells ({len(names)} programs × {len(TESTS)} "
            "tests)": bars_png(
                [name.replace("_", "\n") for name in shown],  # INVALID_TEST on two lines
                {"cells": [counts[s] for s in shown]},
                title="Sandbox statuses, one per program / test cell",
                ylabel="cells",
            )
        }
    )
    return Section(
        "sandbox",
        "Code sandbox: correct, wrong and hostile programs",
        tuple(checks),
        {"sandbox.json": artefact},
        figures,
        "Each program runs against each test in a fresh, resource-limited child: wrong, "
        "crashing, looping, memory-hungry and cheating programs all get their own status, and "
        "the same input gives the same table.",
    )
