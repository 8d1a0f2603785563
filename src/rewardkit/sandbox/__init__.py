"""Code execution for generated programs and tests (SPEC §7): fast, safe execution tables.

    from rewardkit.sandbox import Sandbox, TestCase, Status, graded_correctness

    with Sandbox(timeout_s=2.0, memory_mb=512) as sb:
        table = sb.run(programs, tests, entry_point="solve")
    y = graded_correctness(table, gt_columns=[0, 1, 2])

See docs/sandbox.md for the design, the isolation levels and the measured speed.
"""

from __future__ import annotations

from .core import Sandbox, SandboxWarning
from .table import ExecutionTable, Status, TestCase, graded_correctness

__all__ = [
    "ExecutionTable",
    "Sandbox",
    "SandboxWarning",
    "Status",
    "TestCase",
    "graded_correctness",
]
